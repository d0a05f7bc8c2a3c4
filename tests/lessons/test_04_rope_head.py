"""Lesson 3 (the 2D rotation derivation of RoPE): the claims its story shows as short
printed checks, asserted here, and checks that left the story (widget arrows, RoPER).

Expected values are written out by hand (math.cos/math.sin, Python complex numbers, a
2x2 turn written here), never taken from the function under test. The worked pair is the
one the study notes print (note 002: q = (0.5, -1.0), k = (1.2, 0.3), theta 0.1, m = 2).

The 2D rotation (lesson 3): the 2D rotation derivation of RoPE (rope_lib.derivation, its widget, its exercises).

Expected values come from formulas written out here with math.cos / math.sin, from seed 002's
worked numbers, or from a complex-number rotation, never from the code under test.
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import matplotlib

# --- from test_lesson_rotation_2d.py --------------------------------------------

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib import derivation  # noqa: E402
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


def test_cos_only_version_loses_the_sine_term_and_the_conjugate_keeps_it():
    q, k, m, n, theta = (0.3, -1.1), (0.8, 0.4), 7, 3, 0.5
    exact = rope_score(q, k, m, n, theta)
    turn_by_offset = complex(math.cos(2.0), math.sin(2.0))  # e^(i (m - n) theta)
    with_conjugate = (complex(*q) * complex(*k).conjugate() * turn_by_offset).real
    cos_only = (q[0] * k[0] + q[1] * k[1]) * math.cos(2.0)
    cross = q[0] * k[1] - q[1] * k[0]
    assert with_conjugate == pytest.approx(exact, abs=1e-12)
    assert exact - cos_only == pytest.approx(cross * math.sin(2.0), abs=1e-12)
    assert abs(exact - cos_only) > 0.5


def test_head_score_is_the_sum_of_its_pairs_scores():
    torch.manual_seed(0)
    q8, k8 = torch.randn(2, 8, dtype=F64)
    m, n = 9, 4
    rotated = rope_lib.apply_rope(torch.stack([q8, k8]), torch.tensor([m, n]))
    pairs = sum(
        rope_score(
            q8[2 * i : 2 * i + 2], k8[2 * i : 2 * i + 2], m, n, 10000.0 ** (-2 * i / 8)
        )
        for i in range(4)
    )
    assert float(rotated[0] @ rotated[1]) == pytest.approx(pairs, abs=1e-10)


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


def turn_rows(x, positions, sign=1.0):
    """Row j of x turned by sign * positions[j] radians (one pair, theta = 1)."""
    return torch.stack(
        [
            torch.tensor(turn(sign * float(p), row), dtype=F64)
            for row, p in zip(x, positions)
        ]
    )


def attention_by_hand(q, k, v, positions, rotate_v=False, rotate_back=False):
    """One causal head of size 2 (one pair, theta = 1), every rotation written out."""
    scores = turn_rows(q, positions) @ turn_rows(k, positions).T / math.sqrt(2)
    future = torch.ones(len(q), len(q), dtype=torch.bool).triu(1)
    weights = scores.masked_fill(future, -math.inf).softmax(-1)
    out = weights @ (turn_rows(v, positions) if rotate_v else v)
    return (turn_rows(out, positions, -1.0) if rotate_back else out), weights


def test_roper_rotating_values_and_the_output_back_keeps_attention_relative():
    g = torch.Generator().manual_seed(5)
    q, k, v = torch.randn(3, 6, 2, dtype=F64, generator=g)
    pos = torch.arange(6)
    plain, _ = attention_by_hand(q, k, v, pos)
    assert torch.allclose(plain, attention_by_hand(q, k, v, pos + 100)[0], atol=1e-10)
    v_only = (
        (
            attention_by_hand(q, k, v, pos + 100, rotate_v=True)[0]
            - attention_by_hand(q, k, v, pos, rotate_v=True)[0]
        )
        .abs()
        .max()
    )
    assert v_only > 0.1  # rotating v alone stamps absolute positions
    roper, weights = attention_by_hand(q, k, v, pos, rotate_v=True, rotate_back=True)
    shifted = attention_by_hand(q, k, v, pos + 100, rotate_v=True, rotate_back=True)[0]
    assert torch.allclose(roper, shifted, atol=1e-10)
    # RoPER's output is sum_n a_mn R_(n-m) v_n: each value turned by its offset
    for m in range(6):
        expected = sum(
            weights[m, n] * torch.tensor(turn(n - m, v[n]), dtype=F64) for n in range(6)
        )
        assert torch.allclose(roper[m], expected, atol=1e-12)
    # the lesson's apply_rope version: positions -p turn the output back
    one = torch.tensor([1.0], dtype=F64)
    back = rope_lib.apply_rope(v, -pos, inv_freq=one)
    assert torch.allclose(back[3], torch.tensor(turn(-3, v[3]), dtype=F64))


def test_fast_pair_wraps_and_slow_pair_barely_moves():
    q, k = (0.5, -1.0), (1.2, 0.3)
    scale = math.hypot(*q) * math.hypot(*k)
    fast = [rope_score(q, k, d, 0, 1.0) for d in range(51)]
    slow = [rope_score(q, k, d, 0, 0.001) for d in range(51)]
    assert max(fast) - min(fast) > 1.9 * scale
    assert max(slow) - min(slow) < 0.06 * scale
    assert abs(fast[44] - fast[0]) < 0.03  # 44 rad is 7 turns and 0.018 rad


def test_slowest_pair_of_a_real_head_turns_less_than_half_a_radian_in_4096_tokens():
    slowest = 10000.0 ** (-126 / 128)
    assert float(rope_lib.inv_frequencies(128)[-1]) == pytest.approx(slowest, rel=1e-6)
    assert 4096 * slowest == pytest.approx(0.473, abs=5e-4)
    assert math.cos(4096 * slowest) > 0.89


def test_the_story_carries_no_test_machinery():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for machinery in ("inspect.", '.split(\'"""\')', '.replace("<b>"', "assert "):
        assert machinery not in code, machinery


matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from rope_lib.exercises import rotation as ex  # noqa: E402
from rope_lib.figures import rotation as figures  # noqa: E402
from rope_lib.figures import static_png  # noqa: E402
from rope_lib.widgets import rotation as w02  # noqa: E402


def rotate_by_hand(v, angle):
    """Counter-clockwise rotation of a 2-vector, written out."""
    x, y = v
    return (
        x * math.cos(angle) - y * math.sin(angle),
        x * math.sin(angle) + y * math.cos(angle),
    )


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


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


def test_closed_form_score_whole_head_and_broadcasting():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 8, generator=g, dtype=F64)
    thetas = [1.0, 0.1, 0.01, 0.001]
    m, n = 9, 4
    expected = sum(
        dot(
            rotate_by_hand(q[2 * i : 2 * i + 2].tolist(), m * t),
            rotate_by_hand(k[2 * i : 2 * i + 2].tolist(), n * t),
        )
        for i, t in enumerate(thetas)
    )
    got = derivation.closed_form_score(q, k, m, n, thetas)
    assert float(got) == pytest.approx(expected, abs=1e-10)
    # m as a tensor of offsets: one score per offset
    offsets = torch.arange(5)
    many = derivation.closed_form_score(q, k, offsets, 0, thetas)
    assert many.shape == (5,)
    for o in range(5):
        one = sum(
            dot(
                rotate_by_hand(q[2 * i : 2 * i + 2].tolist(), o * t),
                k[2 * i : 2 * i + 2].tolist(),
            )
            for i, t in enumerate(thetas)
        )
        assert float(many[o]) == pytest.approx(one, abs=1e-10)


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


def test_rope_by_steps_matches_complex_rotation():
    g = torch.Generator().manual_seed(3)
    batch, length, heads, d_head = 2, 5, 3, 8
    Q = torch.randn(batch, length, heads * d_head, generator=g, dtype=F64)
    K = torch.randn(batch, length, heads * d_head, generator=g, dtype=F64)
    steps = derivation.rope_by_steps(Q, K, heads)
    assert list(steps) == [
        "Q",
        "K",
        "freqs",
        "angles",
        "cos",
        "sin",
        "Q_pairs",
        "K_pairs",
        "Q_rot",
        "K_rot",
        "scores",
    ]
    assert steps["Q"].shape == (batch, heads, length, d_head)
    assert steps["angles"].shape == (length, d_head // 2)
    assert steps["cos"].shape == (1, 1, length, d_head // 2)
    assert steps["Q_pairs"].shape == (batch, heads, length, d_head // 2, 2)
    assert steps["scores"].shape == (batch, heads, length, length)

    # independent: pairs as complex numbers times e^{i m theta_i}, theta_i = 10000^(-2i/d)
    freqs = torch.tensor(
        [10000.0 ** (-2 * i / d_head) for i in range(d_head // 2)], dtype=F64
    )
    phase = torch.polar(
        torch.ones(length, d_head // 2, dtype=F64),
        torch.arange(length, dtype=F64)[:, None] * freqs,
    )

    def reference(X):
        heads_view = X.reshape(batch, length, heads, d_head).permute(0, 2, 1, 3)
        pairs = torch.view_as_complex(
            heads_view.reshape(batch, heads, length, d_head // 2, 2).contiguous()
        )
        return torch.view_as_real(pairs * phase).reshape(batch, heads, length, d_head)

    q_ref, k_ref = reference(Q), reference(K)
    assert torch.allclose(steps["Q_rot"], q_ref, atol=1e-12)
    assert torch.allclose(steps["K_rot"], k_ref, atol=1e-12)
    assert torch.allclose(
        steps["scores"], q_ref @ k_ref.transpose(-1, -2) / math.sqrt(d_head), atol=1e-12
    )


def test_rope_by_steps_errors():
    with pytest.raises(ValueError, match="even"):
        derivation.rope_by_steps(torch.zeros(1, 2, 9), torch.zeros(1, 2, 9), 3)
    with pytest.raises(ValueError, match="Q and K"):
        derivation.rope_by_steps(torch.zeros(1, 2, 8), torch.zeros(1, 3, 8), 2)
    with pytest.raises(TypeError, match="n_heads"):
        derivation.rope_by_steps(torch.zeros(1, 2, 8), torch.zeros(1, 2, 8), 2.0)


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


def test_static_figures():
    thumb = figures.thumbnail()
    assert isinstance(thumb, Figure)
    assert tuple(thumb.get_size_inches()) == pytest.approx((4, 2.5))
    assert isinstance(figures.polar_rotation_figure(), Figure)
    fig = figures.frequency_figure(
        [0.5, -1.0], [1.2, 0.3], 6, thetas=(1.0, 0.001), max_offset=50
    )
    fast_title = fig.axes[0].get_title()
    expected = dot(rotate_by_hand((0.5, -1.0), 6.0), (1.2, 0.3))
    assert f"q'·k' = {expected:.4f}" in fast_title


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


def attention_in_complex_numbers(q, k, v, rotate_q=True, rotate_k=True, rotate_v=False):
    """softmax(q' k'^T / sqrt(d)) v with the rotations done as complex multiplications."""
    d = q.shape[-1]
    freqs = torch.tensor([10000.0 ** (-2 * i / d) for i in range(d // 2)], dtype=F64)
    seq = q.shape[-2]
    phase = torch.polar(
        torch.ones(seq, d // 2, dtype=F64),
        torch.arange(seq, dtype=F64)[:, None] * freqs,
    )

    def rot(x):
        return torch.view_as_real(
            torch.view_as_complex(x.unflatten(-1, (d // 2, 2)).contiguous()) * phase
        ).flatten(-2)

    q = rot(q) if rotate_q else q
    k = rot(k) if rotate_k else k
    v = rot(v) if rotate_v else v
    return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1) @ v


def test_check_3():
    q, k, v, positions = ex.rope_attention_inputs()
    assert q.shape == k.shape == v.shape == (1, 2, 5, 4)
    assert torch.equal(positions, torch.arange(5))
    # the worked solution
    q_rot, k_rot = rope_lib.apply_rope(q, positions), rope_lib.apply_rope(k, positions)
    out = (q_rot @ k_rot.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(dim=-1) @ v
    assert ex.check_rope_attention(out)
    assert ex.check_rope_attention(attention_in_complex_numbers(q, k, v))
    assert (
        "rotated v"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, rotate_v=True)
        ).message
    )
    assert (
        "nothing was rotated"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, False, False)
        ).message
    )
    assert (
        "only q"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, True, False)
        ).message
    )
    assert (
        "only k"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, False, True)
        ).message
    )
    assert (
        "sqrt(head_dim)"
        in ex.check_rope_attention(
            (q_rot @ k_rot.transpose(-1, -2)).softmax(-1) @ v
        ).message
    )
    assert "shape" in ex.check_rope_attention(out[0]).message
    assert "still None" in ex.check_rope_attention(None).message


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


def test_check_5():
    hand = torch.tensor(
        [8 * 10000.0 ** (-2 * i / 8) for i in range(4)], dtype=F64
    )  # 8, 0.8, 0.08, 0.008
    assert torch.allclose(hand, torch.tensor([8.0, 0.8, 0.08, 0.008], dtype=F64))
    assert ex.check_relative_angles(
        8 * rope_lib.inv_frequencies(8)
    )  # the worked solution
    assert ex.check_relative_angles(hand.tolist())
    assert (
        "per coordinate" in ex.check_relative_angles(hand.repeat_interleave(2)).message
    )
    assert (
        "-2i/d"
        in ex.check_relative_angles(
            torch.tensor([8 * 10000.0 ** (-i / 8) for i in range(4)])
        ).message
    )
    assert (
        "wrong sign"
        in ex.check_relative_angles(
            torch.tensor([8 * 10000.0 ** (2 * i / 8) for i in range(4)])
        ).message
    )
    assert "reversed" in ex.check_relative_angles(hand.flip(0)).message
    assert "degrees" in ex.check_relative_angles(hand * 180 / math.pi).message
    assert "multiply by the offset" in ex.check_relative_angles(hand / 8).message
    assert "still None" in ex.check_relative_angles(None).message


def test_an_unrecognised_wrong_answer_is_not_called_correct():
    # answers that match none of the anticipated mistakes fall through to the generic comparison
    assert not ex.check_rotated_query([0.123, 0.456]).ok
    assert "differs" in ex.check_rotated_query([0.123, 0.456]).message
    assert not ex.check_relative_angles([0.5, 0.25, 0.125, 0.0625]).ok


def test_checkers_never_truncate_and_hint_at_angles_reduced_mod_two_pi():
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
    hand = torch.tensor([8 * 10000.0 ** (-2 * i / 8) for i in range(4)], dtype=F64)
    assert (
        "modulo 2π"
        in ex.check_relative_angles(torch.remainder(hand, 2 * math.pi)).message
    )
    wrapped = (
        torch.remainder(hand + math.pi, 2 * math.pi) - math.pi
    )  # (-pi, pi]: 8 -> 1.7168
    assert "modulo 2π" in ex.check_relative_angles(wrapped).message
    # a complex answer whose real part is right is not a real answer
    q_rot = torch.tensor(rotate_by_hand((0.5, -1.0), 1.5), dtype=F64)
    assert not ex.check_rotated_query(q_rot.to(torch.complex128)).ok
    assert (
        ex.check_rotated_query(q_rot.numpy()).ok
        and ex.check_rotated_query(q_rot.float()).ok
    )
    assert "NaN" in ex.check_closed_form_score(float("nan")).message
