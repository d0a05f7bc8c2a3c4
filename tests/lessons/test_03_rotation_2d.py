"""Lesson 3 (the 2D rotation, derived): the claims its story shows as short printed checks,
asserted here, and checks that left the story (widget arrows and pixels).

Expected values are written out by hand (math.cos/math.sin, a 2x2 turn written here), never
taken from the function under test. The worked pair is q = (0.5, -1.0), k = (1.2, 0.3),
theta 0.1, m = 2.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sp  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib import derivation  # noqa: E402
from rope_lib.exercises import rotation as ex  # noqa: E402
from rope_lib.figures import rotation as figures  # noqa: E402
from rope_lib.figures import static_png  # noqa: E402
from rope_lib.widgets import rotation as w02  # noqa: E402
from rope_lib.widgets.rotation import RotatePairWidget  # noqa: E402

F64 = torch.float64
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03_rotation_2d.ipynb"


def turn(angle: float, v) -> tuple[float, float]:
    """R(angle) v written out: counter-clockwise, radians."""
    x, y = float(v[0]), float(v[1])
    c, s = math.cos(angle), math.sin(angle)
    return (x * c - y * s, x * s + y * c)


def rope_score(q, k, m, n, theta) -> float:
    """q rotated to position m, k to position n, one pair, by hand."""
    qm, kn = turn(m * theta, q), turn(n * theta, k)
    return qm[0] * kn[0] + qm[1] * kn[1]


def rotate_by_hand(v, angle):
    """Counter-clockwise rotation of a 2-vector, written out."""
    x, y = v
    return (
        x * math.cos(angle) - y * math.sin(angle),
        x * math.sin(angle) + y * math.cos(angle),
    )


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def test_worked_pair_both_ways():
    q, k = torch.tensor([0.5, -1.0], dtype=F64), torch.tensor([1.2, 0.3], dtype=F64)
    turn_02 = rope_lib.rotation_2d(0.2)
    by_matrix = torch.stack([turn_02 @ q, turn_02 @ k])
    by_apply = rope_lib.apply_rope(
        torch.stack([q, k]),
        torch.tensor([2, 2]),
        inv_freq=torch.tensor([0.1], dtype=F64),
    )
    printed = torch.tensor([[0.6887, -0.8807], [1.1165, 0.5324]], dtype=F64)
    assert torch.allclose(by_matrix, printed, atol=5e-5)
    assert torch.allclose(by_apply, printed, atol=5e-5)
    # the same position for both: the score is the unrotated q.k = 0.6 - 0.3
    assert float(by_apply[0] @ by_apply[1]) == pytest.approx(0.3, abs=1e-12)


def test_score_is_a_function_of_the_offset_and_its_sign():
    q, k = (0.3, -1.1), (0.8, 0.4)
    theta = 0.5
    pairs = [(3, 0), (5, 2), (100, 97), (4000, 3997)]
    same_offset = [rope_score(q, k, m, n, theta) for m, n in pairs]
    assert max(same_offset) - min(same_offset) < 1e-9
    # offset -3 flips the sine term: q1 k2 - q2 k1 = 0.12 + 0.88 = 1.0 is not 0
    flipped = rope_score(q, k, 0, 3, theta)
    assert abs(flipped - same_offset[0]) == pytest.approx(2 * math.sin(1.5), abs=1e-9)
    # closed form and polar form, by hand
    dot, cross = q[0] * k[0] + q[1] * k[1], q[0] * k[1] - q[1] * k[0]
    closed = dot * math.cos(1.5) + cross * math.sin(1.5)
    assert same_offset[0] == pytest.approx(closed, abs=1e-12)
    phi_q, phi_k = math.atan2(q[1], q[0]), math.atan2(k[1], k[0])
    polar = math.hypot(*q) * math.hypot(*k) * math.cos(phi_q - phi_k + 1.5)
    assert same_offset[0] == pytest.approx(polar, abs=1e-12)
    # the library's closed form agrees, and the whole table is constant along diagonals
    pq, pk = torch.tensor(q, dtype=F64), torch.tensor(k, dtype=F64)
    library = float(derivation.closed_form_score(pq, pk, 3, 0, theta))
    assert library == pytest.approx(closed, abs=1e-12)
    one = torch.tensor([theta], dtype=F64)
    rows = rope_lib.apply_rope(pq.expand(6, 2), torch.arange(6), inv_freq=one)
    cols = rope_lib.apply_rope(pk.expand(6, 2), torch.arange(6), inv_freq=one)
    table = rows @ cols.T
    assert torch.allclose(table[1:, 1:], table[:-1, :-1], atol=1e-12)


def test_cos_only_version_loses_the_sine_term_and_is_symmetric():
    q, k, m, n, theta = (0.3, -1.1), (0.8, 0.4), 7, 3, 0.5
    exact = rope_score(q, k, m, n, theta)
    swapped = rope_score(q, k, n, m, theta)
    cos_only = (q[0] * k[0] + q[1] * k[1]) * math.cos(2.0)
    cross = q[0] * k[1] - q[1] * k[0]
    assert exact - cos_only == pytest.approx(cross * math.sin(2.0), abs=1e-12)
    assert cos_only - swapped == pytest.approx(cross * math.sin(2.0), abs=1e-12)
    assert abs(exact - swapped) > 1.0  # the true score sees the sign of m - n


def test_widget_keeps_the_score_under_a_shift_and_draws_the_rotation():
    probe = RotatePairWidget(m=7, n=4, theta=0.4, shift=0)
    before = probe.state["score"]
    probe.update(shift=25)
    assert probe.state["score"] == pytest.approx(before, abs=1e-10)
    tip = (probe.plane.rotated.U[0], probe.plane.rotated.V[0])
    expected = turn((7 + 25) * 0.4, probe.state["q"])
    assert tip == pytest.approx(expected, abs=1e-9)
    # the shift has no letter in the readout: s is the course's scale factor
    assert "query at m + shift = 32, key at n + shift = 29" in probe.readout.value
    assert probe.controls["shift"].description == "shift"
    matplotlib.pyplot.close(probe.figure)


def test_the_story_carries_no_test_machinery():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for machinery in ("inspect.", '.split(\'"""\')', '.replace("<b>"', "assert "):
        assert machinery not in code, machinery


# ---------------------------------------------------------------- derivation


def test_from_polar():
    v = derivation.from_polar(2.0, math.pi / 3)
    assert v.dtype == F64
    assert torch.allclose(v, torch.tensor([1.0, math.sqrt(3)], dtype=F64))
    batch = derivation.from_polar([1.0, 2.0], [0.0, math.pi / 2])
    assert torch.allclose(
        batch, torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=F64), atol=1e-12
    )


def test_seed_002_worked_pair():
    # seed 002: q = (0.5, -1.0), k = (1.2, 0.3), theta = 0.1, m = 2 -> q' = (0.6887, -0.8807), k' = (1.1165, 0.5324)
    seed_q, seed_k = (0.6887, -0.8807), (1.1165, 0.5324)
    q_rot = rotate_by_hand((0.5, -1.0), 0.2)
    k_rot = rotate_by_hand((1.2, 0.3), 0.2)
    assert all(abs(a - b) < 5e-5 for a, b in zip(q_rot, seed_q))
    assert all(abs(a - b) < 5e-5 for a, b in zip(k_rot, seed_k))
    # and the library functions the lesson uses agree with the seed
    x = torch.tensor([[0.5, -1.0], [1.2, 0.3]], dtype=F64)
    out = rope_lib.apply_rope(
        x, torch.tensor([2, 2]), inv_freq=torch.tensor([0.1], dtype=F64)
    )
    assert torch.allclose(out, torch.tensor([seed_q, seed_k], dtype=F64), atol=5e-5)
    # same position: the score is q.k = 0.6 - 0.3
    assert float(derivation.closed_form_score(x[0], x[1], 2, 2, 0.1)) == pytest.approx(
        0.3, abs=1e-12
    )


@pytest.mark.parametrize(
    "m, n, theta",
    [(5, 2, 0.1), (2, 5, 0.1), (0, 0, 1.0), (40, 11, 0.7), (1000, 997, 0.01)],
)
def test_closed_form_score_one_pair(m, n, theta):
    q, k = (0.5, -1.0), (1.2, 0.3)
    expected = dot(rotate_by_hand(q, m * theta), rotate_by_hand(k, n * theta))
    got = derivation.closed_form_score(list(q), list(k), m, n, theta)
    assert got.dtype == F64 and got.shape == ()
    assert float(got) == pytest.approx(expected, abs=1e-10)


def test_closed_form_score_depends_on_offset_only():
    q, k = torch.tensor([0.3, 0.9]), torch.tensor([-1.1, 0.4])
    base = float(derivation.closed_form_score(q, k, 3, 0, 0.5))
    for s in (1, 17, 1000):
        assert float(
            derivation.closed_form_score(q, k, 3 + s, s, 0.5)
        ) == pytest.approx(base, abs=1e-9)
    # the sign of m - n matters when q and k are not parallel
    assert abs(float(derivation.closed_form_score(q, k, 0, 3, 0.5)) - base) > 0.1


def test_closed_form_score_errors():
    with pytest.raises(ValueError, match="q must be"):
        derivation.closed_form_score(torch.zeros(3), torch.zeros(3), 1, 0, 0.1)
    with pytest.raises(ValueError, match="same last dimension"):
        derivation.closed_form_score(torch.zeros(2), torch.zeros(4), 1, 0, 0.1)
    with pytest.raises(ValueError, match="theta must be"):
        derivation.closed_form_score(
            torch.zeros(4), torch.zeros(4), 1, 0, torch.ones(3)
        )


def test_polar_score_is_length_times_cosine_of_angle_between():
    ql, qa, kl, ka, m, n, theta = 1.5, 0.4, 0.8, -1.0, 7, 3, 0.25
    q_rot = rotate_by_hand((ql * math.cos(qa), ql * math.sin(qa)), m * theta)
    k_rot = rotate_by_hand((kl * math.cos(ka), kl * math.sin(ka)), n * theta)
    assert float(derivation.polar_score(ql, qa, kl, ka, m, n, theta)) == pytest.approx(
        dot(q_rot, k_rot), abs=1e-12
    )


def test_rotation_from_polar():
    polar = derivation.rotation_from_polar()
    r, phi, alpha, x, y = polar.symbols
    assert sp.simplify(polar.x_rotated - (x * sp.cos(alpha) - y * sp.sin(alpha))) == 0
    assert sp.simplify(polar.y_rotated - (x * sp.sin(alpha) + y * sp.cos(alpha))) == 0
    expected = sp.Matrix(
        [[sp.cos(alpha), -sp.sin(alpha)], [sp.sin(alpha), sp.cos(alpha)]]
    )
    assert sp.simplify(polar.matrix - expected) == sp.zeros(2, 2)
    # the polar and the expanded forms are the same expression
    assert sp.simplify(polar.x_rotated_polar - polar.x_rotated_expanded) == 0


def test_score_derivation():
    d = derivation.score_derivation()
    q1, q2, k1, k2, m, n, theta = d.symbols
    assert d.difference == 0
    assert len(d.expanded.args) == 8
    # the product before expansion equals the dot product of the rotated vectors, numerically
    values = {q1: 0.5, q2: -1.0, k1: 1.2, k2: 0.3, m: 5, n: 2, theta: 0.1}
    hand = dot(rotate_by_hand((0.5, -1.0), 0.5), rotate_by_hand((1.2, 0.3), 0.2))
    assert float(d.product.subs(values)) == pytest.approx(hand, abs=1e-12)
    assert float(d.closed_form.subs(values)) == pytest.approx(hand, abs=1e-12)
    assert sp.simplify(d.grouped_simplified[q1 * k1] - sp.cos((m - n) * theta)) == 0
    assert sp.simplify(d.grouped_simplified[q2 * k2] - sp.cos((m - n) * theta)) == 0
    assert sp.simplify(d.grouped_simplified[q1 * k2] - sp.sin((m - n) * theta)) == 0
    assert sp.simplify(d.grouped_simplified[q2 * k1] + sp.sin((m - n) * theta)) == 0


# ---------------------------------------------------------------- widget


@pytest.fixture
def widget():
    w = w02.RotatePairWidget()
    yield w
    plt.close(w.figure)


def readout_numbers(w):
    text = w.readout.value
    return (
        float(re.search(r"q'·k' = (-?\d+\.\d{4})", text).group(1)),
        float(re.search(r"closed form = (-?\d+\.\d{4})", text).group(1)),
        int(re.search(r"m - n = (-?\d+)", text).group(1)),
    )


def test_widget_contract(widget):
    descriptions = [c.description for c in widget.controls.values()]
    assert descriptions == [
        "m",
        "n",
        "theta",
        "|q|",
        "angle q",
        "|k|",
        "angle k",
        "shift",
    ]
    assert "rope-readout" in widget.readout._dom_classes
    assert isinstance(widget.figure, Figure)
    box = widget.widget()

    def shown(node):  # every widget drawn inside node, nested boxes included
        yield node
        for child in getattr(node, "children", ()):
            yield from shown(child)

    assert any(part is widget.readout for part in shown(box))


def test_widget_update_moves_artists(widget):
    ql, qa, kl, ka, m, n, theta = 1.5, 0.4, 0.8, -1.0, 7, 3, 0.25
    widget.update(
        m=m, n=n, theta=theta, q_len=ql, q_angle=qa, k_len=kl, k_angle=ka, shift=0
    )
    q_tip = (ql * math.cos(qa + m * theta), ql * math.sin(qa + m * theta))
    k_tip = (kl * math.cos(ka + n * theta), kl * math.sin(ka + n * theta))
    rotated = widget.plane.rotated
    assert rotated.U[0] == pytest.approx(q_tip[0], abs=1e-9) and rotated.V[
        0
    ] == pytest.approx(q_tip[1], abs=1e-9)
    assert rotated.U[1] == pytest.approx(k_tip[0], abs=1e-9) and rotated.V[
        1
    ] == pytest.approx(k_tip[1], abs=1e-9)
    original = widget.plane.original
    assert original.U[0] == pytest.approx(ql * math.cos(qa)) and original.V[
        1
    ] == pytest.approx(kl * math.sin(ka))
    # the arc m theta runs from q's direction to q''s direction
    xs, ys = widget.plane.arc_q.get_data()
    assert math.atan2(ys[0], xs[0]) == pytest.approx(qa)
    assert math.atan2(ys[-1], xs[-1]) == pytest.approx(qa + m * theta)
    xs, ys = widget.plane.arc_k.get_data()
    assert math.atan2(ys[-1], xs[-1]) == pytest.approx(ka + n * theta)
    # readout: q'.k' = |q||k| cos(angle between)
    expected = ql * kl * math.cos(qa + m * theta - ka - n * theta)
    score, closed, offset = readout_numbers(widget)
    assert score == pytest.approx(round(expected, 4), abs=1e-9)
    assert closed == pytest.approx(round(expected, 4), abs=1e-9)
    assert offset == 4
    # the score curve and the marker
    curve = widget.curve.get_ydata()
    for o in (-20, 0, 4, 20):
        assert curve[o + 20] == pytest.approx(
            ql * kl * math.cos(qa - ka + o * theta), abs=1e-9
        )
    mx, my = widget.marker.get_data()
    assert mx[0] == 4 and my[0] == pytest.approx(expected, abs=1e-9)


def test_widget_shift_keeps_the_score(widget):
    widget.update(m=6, n=1, theta=0.3, shift=0)
    before = readout_numbers(widget)
    tip_before = (widget.plane.rotated.U[0], widget.plane.rotated.V[0])
    widget.update(shift=17)
    after = readout_numbers(widget)
    assert after == before
    q = widget.state["q"].tolist()
    tip = rotate_by_hand(q, (6 + 17) * 0.3)
    assert (widget.plane.rotated.U[0], widget.plane.rotated.V[0]) != pytest.approx(
        tip_before
    )
    assert widget.plane.rotated.U[0] == pytest.approx(
        tip[0]
    ) and widget.plane.rotated.V[0] == pytest.approx(tip[1])
    assert "query at m + shift = 23, key at n + shift = 18" in widget.readout.value


def test_widget_controls_and_update_stay_in_sync(widget):
    widget.update(m=9)
    assert widget.controls["m"].value == 9
    widget.controls["n"].value = 4  # as a slider drag would
    assert widget.values["n"] == 4
    assert readout_numbers(widget)[2] == 5
    with pytest.raises(ValueError, match="unknown control"):
        widget.update(phase=1)


def canvas_pixels(fig):
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def count_full_draws(fig):
    events = []
    fig.canvas.mpl_connect("draw_event", events.append)
    return events


def test_widget_blits_the_same_picture_as_a_full_draw(widget):
    fig = widget.figure
    full_draws = count_full_draws(fig)
    # slider moves that leave the axes alone: blitted, no full draw
    for step in (
        {"m": 11},
        {"theta": 0.62, "shift": 9},
        {"q_angle": 2.5, "k_angle": -2.9},
    ):
        widget.update(**step)
        blitted = canvas_pixels(fig)
        assert not full_draws
        fig.canvas.draw()  # everything from scratch, same state
        full_draws.clear()
        assert np.array_equal(blitted, canvas_pixels(fig)), step
    # a longer q needs a taller score axis: a full redraw, and then the same picture too
    widget.update(q_len=2.0, k_len=2.0)
    assert len(full_draws) == 1
    blitted = canvas_pixels(fig)
    fig.canvas.draw()
    assert np.array_equal(blitted, canvas_pixels(fig))
    # and the blit really drew the new state: the old picture differs
    before = canvas_pixels(fig)
    widget.update(m=2)
    assert not np.array_equal(before, canvas_pixels(fig))


def test_widget_score_axis_fits_the_curve(widget):
    fig = widget.figure
    full_draws = count_full_draws(fig)
    for q_len, k_len in ((1.2, 1.0), (0.2, 0.2), (2.0, 2.0), (1.0, 1.05), (0.65, 0.65)):
        widget.update(q_len=q_len, k_len=k_len)
        lo, hi = widget.ax_score.get_ylim()
        amplitude = q_len * k_len  # the curve |q||k| cos(...) reaches +-|q||k|
        assert lo == -hi
        assert 1.1 * amplitude <= hi + 1e-12  # the whole curve, with a margin
        assert hi <= 2.5 * amplitude  # and not lost in a far too tall axis
    assert full_draws  # the limits moved, so the static background was redrawn
    # angles, positions, theta and shift never change the limits: no full redraw
    full_draws.clear()
    limits = widget.ax_score.get_ylim()
    for step in (
        {"m": 0},
        {"n": 20},
        {"theta": 1.0},
        {"q_angle": 3.14},
        {"k_angle": -3.14},
        {"shift": 30},
    ):
        widget.update(**step)
    assert widget.ax_score.get_ylim() == limits and not full_draws


def test_widget_static_png_shows_the_moving_artists(widget):
    from PIL import Image

    widget.update(m=8, n=3, theta=0.4)
    png = np.asarray(
        Image.open(io.BytesIO(static_png(widget.figure, dpi=100).data)).convert("RGB")
    )
    widget.figure.canvas.draw()
    drawn = canvas_pixels(widget.figure)[..., :3]
    assert png.shape == drawn.shape
    assert np.array_equal(png, drawn)
    # gold marker and solid blue/red arrows are there
    gold = (png[..., 0] > 230) & (png[..., 1] > 180) & (png[..., 2] < 60)
    solid_q = np.all(png == (0x1F, 0x77, 0xB4), axis=-1)
    solid_k = np.all(png == (0xD6, 0x27, 0x28), axis=-1)
    assert gold.sum() > 10 and solid_q.sum() > 20 and solid_k.sum() > 20
    # faded q and k drawn once, not twice over (alpha 0.3 of the colour on white)
    faded_k = np.round(255 - 0.3 * (255 - np.array([0xD6, 0x27, 0x28])))
    assert (np.abs(png - faded_k).max(axis=-1) <= 1).sum() > 20
    # saving (at any dpi) leaves the blitting background alone: the next blit has no ghosts
    static_png(widget.figure, dpi=40)
    widget.update(m=15, q_angle=2.0)
    blitted = canvas_pixels(widget.figure)
    widget.figure.canvas.draw()
    assert np.array_equal(blitted, canvas_pixels(widget.figure))


def test_widget_sweep_stays_in_range_and_the_readout_agrees():
    w = w02.RotatePairWidget.example()
    steps = list(w.sweep())
    controls = {c.name: c for c in w02.RotatePairWidget.CONTROLS}
    assert len(steps) == 32 and all(set(step) == set(controls) for step in steps)
    try:
        for step in steps:
            for name, value in step.items():
                assert controls[name].low <= value <= controls[name].high
            w.update(**step)
            assert readout_numbers(w)[0] == pytest.approx(
                readout_numbers(w)[1], abs=1e-4
            )
    finally:
        plt.close(w.figure)


# ---------------------------------------------------------------- exercises


def test_check_1():
    q = torch.tensor([0.5, -1.0], dtype=F64)
    assert ex.check_rotated_query(
        rope_lib.rotation_2d(3 * 0.5) @ q
    )  # the worked solution
    assert ex.check_rotated_query(list(rotate_by_hand((0.5, -1.0), 1.5)))
    assert not ex.check_rotated_query(None)
    assert (
        "clockwise" in ex.check_rotated_query(rotate_by_hand((0.5, -1.0), -1.5)).message
    )
    assert "clockwise" in ex.check_rotated_query(q @ rope_lib.rotation_2d(1.5)).message
    assert (
        "degrees"
        in ex.check_rotated_query(
            rotate_by_hand((0.5, -1.0), math.radians(1.5))
        ).message
    )
    assert (
        "85.94"
        in ex.check_rotated_query(
            rotate_by_hand((0.5, -1.0), math.degrees(1.5))
        ).message
    )
    assert (
        "theta only" in ex.check_rotated_query(rotate_by_hand((0.5, -1.0), 0.5)).message
    )
    assert "m only" in ex.check_rotated_query(rotate_by_hand((0.5, -1.0), 3)).message
    assert "unchanged" in ex.check_rotated_query(q).message
    assert "2 numbers" in ex.check_rotated_query(torch.zeros(3)).message


def test_check_2():
    (q1, q2), (k1, k2), m, n, theta = (0.8, 0.6), (-0.3, 1.1), 9, 4, 0.3
    angle = (m - n) * theta
    solution = (q1 * k1 + q2 * k2) * math.cos(angle) + (q1 * k2 - q2 * k1) * math.sin(
        angle
    )
    assert ex.check_closed_form_score(solution)
    # the same number by rotating
    assert ex.check_closed_form_score(
        dot(rotate_by_hand((q1, q2), m * theta), rotate_by_hand((k1, k2), n * theta))
    )
    assert ex.check_closed_form_score(torch.tensor(solution))

    def closed(a):
        return (q1 * k1 + q2 * k2) * math.cos(a) + (q1 * k2 - q2 * k1) * math.sin(a)

    assert "n - m" in ex.check_closed_form_score(closed(-angle)).message
    assert (
        "cross term"
        in ex.check_closed_form_score((q1 * k1 + q2 * k2) * math.cos(angle)).message
    )
    assert "m + n" in ex.check_closed_form_score(closed((m + n) * theta)).message
    assert (
        "degrees"
        in ex.check_closed_form_score(closed((m - n) * math.radians(theta))).message
    )
    assert "without rotation" in ex.check_closed_form_score(q1 * k1 + q2 * k2).message
    assert "sqrt(d)" in ex.check_closed_form_score(solution / math.sqrt(2)).message
    assert "still None" in ex.check_closed_form_score(None).message
    assert "off by" in ex.check_closed_form_score(solution + 0.5).message


def test_check_4():
    assert ex.check_shifted_positions((14, 10))  # the worked solution
    assert ex.check_shifted_positions((1004, 1000))
    assert "swapped" in ex.check_shifted_positions((10, 14)).message
    assert (
        "m + n" in ex.check_shifted_positions((5, 5)).message
        or "at least" in ex.check_shifted_positions((5, 5)).message
    )
    assert "at least 10" in ex.check_shifted_positions((7, 3)).message
    assert "ratio" in ex.check_shifted_positions((28, 12)).message
    assert "pair of integers" in ex.check_shifted_positions(14).message
    assert "m - n = 5" in ex.check_shifted_positions((15, 10)).message


def test_the_wish_rules_out_scaling_and_non_powers_and_reflections_see_parity():
    q, k = torch.tensor([0.5, -1.0], dtype=F64), torch.tensor([1.2, 0.3], dtype=F64)

    def by_hand(angle):
        c, s = math.cos(angle), math.sin(angle)
        return torch.tensor([[c, -s], [s, c]], dtype=F64)

    rope = derivation.offset_dependence(lambda m: by_hand(0.1 * m), q, k, offset=3)
    assert rope < 1e-12
    scaled = derivation.offset_dependence(
        lambda m: 1.1**m * by_hand(0.1 * m), q, k, offset=3
    )
    squared = derivation.offset_dependence(lambda m: by_hand(0.1 * m * m), q, k)
    assert scaled > 1.0 and squared > 1.0  # the printed 2.5526 and 2.7507
    # by hand: the scaled scores at (3, 0) and (10, 7) differ by the factor 1.1^14
    score_30 = 1.1**3 * float((by_hand(0.3) @ q) @ k)
    score_107 = 1.1**17 * float((by_hand(1.0) @ q) @ (by_hand(0.7) @ k))
    assert score_107 / score_30 == pytest.approx(1.1**14, rel=1e-9)
    # a reflection grants the wish but only sees the parity of the offset
    F = torch.tensor([[1.0, 0.0], [0.0, -1.0]], dtype=F64)
    reflect = derivation.offset_dependence(
        lambda m: torch.linalg.matrix_power(F, m), q, k, offset=3
    )
    assert reflect == 0.0
    even, odd = 0.5 * 1.2 + (-1.0) * 0.3, 0.5 * 1.2 + 1.0 * 0.3
    scores = [float((torch.linalg.matrix_power(F, d) @ q) @ k) for d in range(6)]
    assert scores == pytest.approx([even, odd] * 3, abs=1e-15)
    assert torch.linalg.det(F) == -1 and torch.linalg.det(
        by_hand(0.1)
    ) == pytest.approx(1)


def test_rotation_identities_and_the_order_of_r_m_transpose_r_n():
    ids = derivation.rotation_identities(times=5)
    assert ids.power_gap == sp.zeros(2, 2)
    assert sp.simplify(ids.transpose_product - ids.transpose_expected) == sp.zeros(2, 2)
    # numerically, by hand: R(3 theta)^T R(7 theta) = R(4 theta), not R(-4 theta)
    theta = 0.1

    def turn_matrix(a):
        return torch.tensor(
            [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=F64
        )

    product = turn_matrix(3 * theta).T @ turn_matrix(7 * theta)
    assert torch.allclose(product, turn_matrix(4 * theta), atol=1e-14)
    wrong = (product - turn_matrix(-4 * theta)).abs().max().item()
    assert wrong == pytest.approx(2 * math.sin(0.4), abs=1e-12)  # the printed 0.7788
    assert torch.allclose(
        rope_lib.rotation_2d(1.1) @ rope_lib.rotation_2d(0.4),
        rope_lib.rotation_2d(1.5),
        atol=1e-14,
    )


def test_check_transpose_index():
    assert ex.check_transpose_index(2 - 5)
    assert ex.check_transpose_index(-3.0)
    assert "m - n" in ex.check_transpose_index(3).message
    assert "added" in ex.check_transpose_index(7).message
    assert "Only R_5" in ex.check_transpose_index(-7).message
    assert "never multiply" in ex.check_transpose_index(10).message
    assert "would turn by 1·theta" in ex.check_transpose_index(1).message
    assert "still None" in ex.check_transpose_index(None).message
    assert "whole" in ex.check_transpose_index(-3.5).message


def test_check_wish_maps():
    assert ex.check_wish_maps([1, 3]) and ex.check_wish_maps({3, 1})
    assert ex.check_wish_maps(torch.tensor([False, True, False, True]))
    assert "map 3 grants" in ex.check_wish_maps([1]).message
    assert "map 1 grants" in ex.check_wish_maps([3]).message
    assert "map 0 scales" in ex.check_wish_maps([0, 1, 3]).message
    assert "m^2" in ex.check_wish_maps([1, 2, 3]).message
    assert "not every map" in ex.check_wish_maps(range(4)).message
    assert "not [2]" in ex.check_wish_maps([2]).message
    assert "still None" in ex.check_wish_maps(None).message
    assert "outside" in ex.check_wish_maps([5]).message


def test_an_unrecognised_wrong_answer_is_not_called_correct():
    assert not ex.check_rotated_query([0.123, 0.456]).ok
    assert "differs" in ex.check_rotated_query([0.123, 0.456]).message
    assert not ex.check_transpose_index(12).ok
    assert not ex.check_wish_maps([0]).ok


def test_checkers_never_truncate():
    for wrong in (
        (14.5, 10.2),
        [14.5, 10.5],
        torch.tensor([14.5, 10.2]),
        (float("nan"), 10),
        ("14", "10"),
    ):
        feedback = ex.check_shifted_positions(wrong)
        assert not feedback.ok, wrong
    assert "whole" in ex.check_shifted_positions((14.5, 10.2)).message
    for right in (
        (np.int64(14), np.int64(10)),
        np.array([14, 10]),
        torch.tensor([14.0, 10.0]),
        [14.0, 10.0],
    ):
        assert ex.check_shifted_positions(right).ok, right
    # a complex answer whose real part is right is not a real answer
    q_rot = torch.tensor(rotate_by_hand((0.5, -1.0), 1.5), dtype=F64)
    assert not ex.check_rotated_query(q_rot.to(torch.complex128)).ok
    assert (
        ex.check_rotated_query(q_rot.numpy()).ok
        and ex.check_rotated_query(q_rot.float()).ok
    )
    assert "NaN" in ex.check_closed_form_score(float("nan")).message


def test_static_figures():
    thumb = figures.thumbnail()
    assert isinstance(thumb, Figure)
    assert tuple(thumb.get_size_inches()) == pytest.approx((4, 2.5))
    assert isinstance(figures.polar_rotation_figure(), Figure)


def test_separate_maps_grant_the_wish_for_any_invertible_matrix():
    # q_m = (M^-m)^T q, k_n = M^n k: q^T M^-m M^n k = q^T M^(n-m) k (xPos's form, cell 3)
    q = torch.tensor([0.5, -1.0], dtype=torch.float64)
    k = torch.tensor([1.2, 0.3], dtype=torch.float64)
    c, s = math.cos(0.1), math.sin(0.1)
    M = 1.1 * torch.tensor([[c, -s], [s, c]], dtype=torch.float64)  # not orthogonal
    query_map = lambda m: torch.linalg.matrix_power(torch.linalg.inv(M), m).T  # noqa: E731
    key_map = lambda n: torch.linalg.matrix_power(M, n)  # noqa: E731
    for offset in (3, -2, 0):
        assert (
            derivation.offset_dependence(query_map, q, k, offset, key_map=key_map)
            < 1e-12
        )
    # one scaled map for both breaks it (step 1), as the notebook prints
    scaled = lambda m: 1.1**m * rope_lib.rotation_2d(0.1 * m)  # noqa: E731
    assert derivation.offset_dependence(scaled, q, k, 3) > 1


def test_latex_lines_puts_each_term_with_its_sign():
    steps = derivation.score_derivation()
    text = derivation.latex_lines(r"q_m \cdot k_n", steps.expanded)
    assert text.startswith(r"\begin{aligned} q_m \cdot k_n ={}& ")
    assert text.count(r"\\") == len(steps.expanded.args) // 2 - 1  # two terms a line
    one = derivation.latex_lines("s", steps.closed_form, per_line=1)
    assert one.count(r"\\") == len(steps.closed_form.args) - 1


def test_text_answer_to_the_index_names_it_once():
    message = ex.check_transpose_index("3").message
    assert "the index of R_j, a whole number" in message
    assert message.count("a whole number") == 1
