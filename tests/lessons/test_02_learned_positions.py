"""Lesson 2 (notebooks/02_learned_positions.ipynb): the claims about learned tables.

Source-note map (maintainers only): note 003's learned listing (a zero-initialised
nn.Parameter [1, L, d_model], `x += pos_encoding[:, :seq_len, :]`) and its "shorter
inputs are truncated or padded"; note 000's "slicing copies, view does not"; issue 9's
"unreached rows stay at their random initial values" (true without weight decay only).
Expected values come from the optimizers' update rules written out here.

Absolute positions (lessons 1 and 2): the library functions it added, its exercise checkers and its widget.

Expected values come from the formulas written out here with the math module (sin, cos, sums in
plain Python), not from the functions under test.
"""

import io
import math
import re

import matplotlib
import pytest
import torch

from rope_lib import LearnedPositionEmbedding


def test_a_shorter_input_reads_the_first_rows_unchanged():
    torch.manual_seed(0)
    learned = LearnedPositionEmbedding(max_len=16, d_model=8)
    for n in (1, 5, 10, 16):
        x = torch.randn(3, n, 8, dtype=torch.float64)
        out = learned(x.float())
        assert out.shape == (3, n, 8)
        rows = learned.table[:n].detach().double().expand(3, n, 8)
        assert torch.allclose(out.double() - x, rows, atol=1e-6)
        assert torch.equal(learned(torch.zeros(1, n, 8))[0], learned.table[:n])


def test_a_basic_slice_is_a_view_and_a_list_index_is_a_copy():
    table = torch.zeros(1, 16, 8)
    rows = table[:, :10, :]
    assert rows.data_ptr() == table.data_ptr() and rows._base is table
    rows[0, 3, 0] = 1.0
    assert table[0, 3, 0].item() == 1.0
    picked = table[:, [0, 3], :]
    picked[0, 1, 0] = 5.0
    assert table[0, 3, 0].item() == 1.0 and picked._base is None


def test_gradients_flow_through_the_slice_into_the_rows_it_covers_only():
    table = torch.zeros(1, 16, 8, requires_grad=True)
    (torch.ones(2, 10, 8) + table[:, :10, :]).sum().backward()
    assert torch.equal(table.grad[0, :10], torch.full((10, 8), 2.0))
    assert torch.equal(table.grad[0, 10:], torch.zeros(6, 8))


def test_the_listing_slices_past_its_end_quietly_and_fails_at_the_addition():
    table = torch.zeros(1, 16, 8)
    assert table[:, :17, :].shape == (1, 16, 8)
    with pytest.raises(RuntimeError, match="17.*16"):
        torch.zeros(2, 17, 8) + table[:, :17, :]
    with pytest.raises(ValueError, match="max_len = 16"):
        LearnedPositionEmbedding(16, 8)(torch.zeros(2, 17, 8))


def train_on_ten_tokens(optimizer_class, steps=50, init=None, **options):
    torch.manual_seed(0)
    learned = LearnedPositionEmbedding(max_len=16, d_model=8)
    if init is not None:
        with torch.no_grad():
            learned.table.copy_(init)
    start = learned.table.detach().clone()
    optimizer = optimizer_class(learned.parameters(), **options)
    target = torch.randn(4, 10, 8)
    for _ in range(steps):
        loss = (learned(torch.zeros(4, 10, 8)) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return start, learned.table.detach()


@pytest.mark.parametrize(
    "optimizer_class, options",
    [
        (torch.optim.SGD, dict(lr=0.1)),
        (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
        (torch.optim.Adam, dict(lr=0.01)),
    ],
)
def test_without_weight_decay_unreached_rows_keep_their_start(optimizer_class, options):
    start, end = train_on_ten_tokens(optimizer_class, **options)
    assert torch.equal(end[10:], start[10:])
    assert not torch.equal(end[:10], start[:10])


def test_adamw_shrinks_unreached_rows_by_one_minus_lr_wd_per_step():
    lr, wd, steps = 0.01, 0.1, 50
    start, end = train_on_ten_tokens(
        torch.optim.AdamW, steps=steps, lr=lr, weight_decay=wd
    )
    factor = (1 - lr * wd) ** steps  # decoupled decay, zero Adam step
    expected = start[10:].double() * factor
    assert torch.allclose(end[10:].double(), expected, rtol=1e-5, atol=0)
    assert factor == pytest.approx(math.exp(steps * math.log1p(-lr * wd)))


def test_coupled_weight_decay_also_pulls_unreached_rows_towards_zero():
    start, end = train_on_ten_tokens(torch.optim.Adam, lr=0.01, weight_decay=0.1)
    assert (end[10:].norm(dim=1) < start[10:].norm(dim=1)).all()
    start, end = train_on_ten_tokens(torch.optim.SGD, lr=0.1, weight_decay=0.1)
    assert torch.allclose(end[10:], start[10:] * (1 - 0.1 * 0.1) ** 50, rtol=1e-5)


def test_a_zero_initialised_table_keeps_zeros_in_unreached_rows_even_with_decay():
    start, end = train_on_ten_tokens(
        torch.optim.AdamW, init=torch.zeros(16, 8), lr=0.01, weight_decay=0.1
    )
    assert torch.equal(start, torch.zeros(16, 8))
    assert torch.equal(end[10:], torch.zeros(6, 8))
    assert not torch.equal(end[:10], torch.zeros(10, 8))


def test_the_long_run_decay_factor_quoted_in_the_lesson():
    # lr 6e-4, weight decay 0.1, 100,000 steps at a constant rate: about e^-6
    factor = (1 - 6e-4 * 0.1) ** 100_000
    assert factor == pytest.approx(math.exp(-6), rel=2e-3)
    assert f"{factor:.4f}" == "0.0025"


matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import PIL.Image  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import rope_lib  # noqa: E402
import rope_lib.figures  # noqa: E402
import rope_lib.widgets  # noqa: E402
from rope_lib.exercises import absolute as ex  # noqa: E402
from rope_lib.figures.sinusoidal import thumbnail  # noqa: E402
from rope_lib.sinusoidal import (  # noqa: E402
    offset_head_attends_to,
    sinusoidal_at,
    sinusoidal_offset_dot,
    train_offset_head,
)
from rope_lib.widgets.sinusoidal import EncodingExplorer  # noqa: E402


def pe_by_hand(pos: float, d: int, base: float = 10000.0) -> list[float]:
    """Vaswani et al. 2017, section 3.5, one coordinate at a time."""
    out = []
    for i in range(d // 2):
        angle = pos / base ** (2 * i / d)
        out += [math.sin(angle), math.cos(angle)]
    return out


def dot(u, v) -> float:
    return sum(a * b for a, b in zip(u, v))


# --- library ---------------------------------------------------------------------------------


@pytest.mark.parametrize("pos", [0.0, 3.0, -7.5, 123.25, 1e5])
@pytest.mark.parametrize("d, base", [(8, 10000.0), (16, 100.0), (6, 10.0)])
def test_sinusoidal_at_is_the_formula_at_any_real_position(pos, d, base):
    got = sinusoidal_at(pos, d, base)
    assert got.dtype == torch.float64 and got.shape == (d,)
    assert torch.allclose(
        got, torch.tensor(pe_by_hand(pos, d, base), dtype=torch.float64), atol=1e-9
    )


def test_sinusoidal_at_agrees_with_the_table_and_keeps_leading_shape():
    positions = torch.tensor([[0, 5], [17, 99]])
    got = sinusoidal_at(positions, 32)
    assert got.shape == (2, 2, 32)
    table = rope_lib.sinusoidal_encoding(100, 32)
    assert torch.allclose(got[1, 0].float(), table[17], atol=1e-6)
    assert torch.allclose(got[1, 1].float(), table[99], atol=1e-6)


@pytest.mark.parametrize("p", [0, 11, 250])
@pytest.mark.parametrize("k", [0, 1, 4, -9, 37])
def test_offset_dot_is_the_dot_product_of_two_rows_for_any_start(p, k):
    d, base = 12, 10000.0
    expected = dot(pe_by_hand(p, d, base), pe_by_hand(p + k, d, base))
    assert float(sinusoidal_offset_dot(k, d, base)) == pytest.approx(expected, abs=1e-9)


def test_offset_dot_shapes_and_special_values():
    ks = torch.arange(-5, 6)
    values = sinusoidal_offset_dot(ks, 20)
    assert values.shape == (11,) and values.dtype == torch.float64
    assert float(values[5]) == pytest.approx(10.0)  # k = 0: |PE|^2 = d/2
    assert torch.allclose(values, values.flip(0))  # even in k
    # d = 2: a single pair of frequency 1, so the dot product is cos(k)
    assert float(sinusoidal_offset_dot(2.5, 2)) == pytest.approx(math.cos(2.5))
    with pytest.raises(ValueError, match="d_model"):
        sinusoidal_offset_dot(1, 7)


def brute_force_attends_to(table, A):
    n = table.shape[0]
    out = []
    for m in range(n):
        scores = [dot(table[m].tolist(), (A @ table[j]).tolist()) for j in range(m + 1)]
        out.append(max(range(m + 1), key=lambda j: scores[j]))
    return out


def test_offset_head_attends_to_matches_a_brute_force_argmax():
    torch.manual_seed(0)
    table = torch.randn(9, 4, dtype=torch.float64)
    A = torch.randn(4, 4, dtype=torch.float64)
    assert offset_head_attends_to(table, A).tolist() == brute_force_attends_to(table, A)


def test_the_shift_matrix_is_an_exact_previous_token_head_and_its_transpose_is_not():
    table = rope_lib.sinusoidal_encoding(500, 16)
    m = torch.arange(500)
    for offset in (1, 3):
        looks = offset_head_attends_to(
            table, rope_lib.sinusoidal.sinusoidal_shift_matrix(offset, 16)
        )
        assert looks[offset:].tolist() == (m[offset:] - offset).tolist()
    looks = offset_head_attends_to(
        table, rope_lib.sinusoidal.sinusoidal_shift_matrix(1, 16).T
    )
    assert looks.tolist() == m.tolist()  # looks ahead, masked, lands on itself


def test_offset_head_attends_to_rejects_a_wrong_matrix():
    with pytest.raises(ValueError, match=r"A must be a tensor of shape \(8, 8\)"):
        offset_head_attends_to(torch.zeros(5, 8), torch.zeros(4, 4))
    with pytest.raises(ValueError, match="table must be a 2-D tensor"):
        offset_head_attends_to(torch.zeros(5), torch.zeros(4, 4))


def test_train_offset_head_fits_the_training_range_only_and_is_deterministic():
    table = rope_lib.sinusoidal_encoding(256, 16)
    A = train_offset_head(table, offset=1, train_len=32)
    short = train_offset_head(table, offset=1, train_len=32, steps=20)
    assert torch.equal(
        short, train_offset_head(table, offset=1, train_len=32, steps=20)
    )
    looks = brute_force_attends_to(table[:32].double(), A)
    assert looks[1:] == list(range(31))  # every training query is right
    looks = offset_head_attends_to(table, A)
    past = (looks[32:] == torch.arange(31, 255)).double().mean()
    assert past < 0.9  # and it does not carry over


def test_train_offset_head_rejects_bad_arguments():
    table = rope_lib.sinusoidal_encoding(16, 8)
    with pytest.raises(ValueError, match="offset"):
        train_offset_head(table, offset=16, train_len=16)
    with pytest.raises(ValueError, match="train_len"):
        train_offset_head(table, offset=1, train_len=20)


# --- exercise checkers ----------------------------------------------------------------------


def test_exercise_1():
    i = torch.arange(32, dtype=torch.float64)
    solution = 2 * math.pi * 10000 ** (2 * i / 64)
    assert ex.check_wavelengths(solution).ok
    assert ex.check_wavelengths(
        rope_lib.extension_analysis.wavelengths(rope_lib.inv_frequencies(64))
    ).ok
    assert "2*pi times" in ex.check_wavelengths(10000 ** (2 * i / 64)).message
    assert "frequencies" in ex.check_wavelengths(10000 ** (-2 * i / 64)).message
    assert "reversed" in ex.check_wavelengths(solution.flip(0)).message
    assert "2i/d_model" in ex.check_wavelengths(2 * math.pi * 10000 ** (i / 64)).message
    assert (
        "off by one pair"
        in ex.check_wavelengths(2 * math.pi * 10000 ** (2 * (i + 1) / 64)).message
    )
    assert "degrees" in ex.check_wavelengths(360 * 10000 ** (2 * i / 64)).message
    assert "one per coordinate" in ex.check_wavelengths(torch.ones(64)).message
    assert "shape" in ex.check_wavelengths(torch.ones(5)).message
    assert "None" in ex.check_wavelengths(None).message
    assert repr(ex.check_wavelengths(solution)).startswith("Correct: ")


def test_exercise_2():
    b = 5 * 0.1
    solution = torch.tensor([[math.cos(b), math.sin(b)], [-math.sin(b), math.cos(b)]])
    assert ex.check_shift_block(solution).ok
    # the notebook's library route gives the same block
    assert ex.check_shift_block(
        rope_lib.sinusoidal.sinusoidal_shift_matrix(5, 8)[2:4, 2:4]
    ).ok
    assert "(sin, cos)" in ex.check_shift_block(solution.T).message
    r = math.radians(b)
    assert (
        "degrees"
        in ex.check_shift_block(
            torch.tensor([[math.cos(r), math.sin(r)], [-math.sin(r), math.cos(r)]])
        ).message
    )
    assert (
        "pair 0"
        in ex.check_shift_block(
            torch.tensor([[math.cos(5), math.sin(5)], [-math.sin(5), math.cos(5)]])
        ).message
    )
    assert (
        "Δ = 1"
        in ex.check_shift_block(
            torch.tensor(
                [[math.cos(0.1), math.sin(0.1)], [-math.sin(0.1), math.cos(0.1)]]
            )
        ).message
    )
    assert "shape (2, 2)" in ex.check_shift_block(torch.eye(3)).message


def test_exercise_3():
    rows = [pe_by_hand(40 + k, 16) for k in range(32)]
    solution = torch.tensor([dot(rows[0], row) for row in rows])
    assert ex.check_offset_dots(solution).ok
    table = rope_lib.sinusoidal_encoding(
        100, 16
    ).double()  # the notebook's worked solution
    assert ex.check_offset_dots(table[40 + torch.arange(32)] @ table[40]).ok
    assert "cosine similarities" in ex.check_offset_dots(solution / 8).message
    assert "twice" in ex.check_offset_dots(2 * solution).message
    k = torch.arange(32, dtype=torch.float64)[:, None]
    w = 10000 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    assert "summed sin" in ex.check_offset_dots(torch.sin(k * w).sum(1)).message
    assert "table" in ex.check_offset_dots(torch.zeros(32, 16)).message
    assert "shape" in ex.check_offset_dots(torch.zeros(31)).message


def test_exercise_4():
    # by hand: 2*pi*10000**(i/64) > 512  <=>  i > 64*log(512/(2*pi))/log(10000) = 30.58, so i = 31..63
    assert ex.check_unfinished_pairs(33).ok
    assert ex.check_unfinished_pairs(torch.tensor(33)).ok
    assert (
        "2*pi" in ex.check_unfinished_pairs(20).message
    )  # 10000**(i/64) > 512 <=> i > 43.35
    assert "DO finish" in ex.check_unfinished_pairs(31).message
    assert "coordinates" in ex.check_unfinished_pairs(66).message
    assert "between 0 and 64" in ex.check_unfinished_pairs(100).message
    assert (
        "sum it" in ex.check_unfinished_pairs(torch.ones(64, dtype=torch.bool)).message
    )
    assert "whole number" in ex.check_unfinished_pairs(32.5).message


def _offsets_by_hand(a: list[list[float]]) -> set[int]:
    """The offsets m - argmax_{n <= m} PE(m)^T A PE(n) over m = 2 .. 199, the table and
    the scores written out with math.sin / math.cos (d = 16, base 10000)."""
    rates = [10000 ** (-2 * i / 16) for i in range(8)]
    pe = [[f(p * w) for w in rates for f in (math.sin, math.cos)] for p in range(200)]
    seen = set()
    for m in range(2, 200):
        left = [sum(pe[m][r] * a[r][c] for r in range(16)) for c in range(16)]
        scores = [sum(x * y for x, y in zip(left, pe[n])) for n in range(m + 1)]
        seen.add(m - max(range(m + 1), key=scores.__getitem__))
    return seen


def test_exercise_5_head_offsets():
    # M_1 by hand: each (sin, cos) pair turned forward by one step of its rate
    m1 = [[0.0] * 16 for _ in range(16)]
    for i in range(8):
        c, s = math.cos(10000 ** (-2 * i / 16)), math.sin(10000 ** (-2 * i / 16))
        m1[2 * i][2 * i], m1[2 * i][2 * i + 1] = c, s
        m1[2 * i + 1][2 * i], m1[2 * i + 1][2 * i + 1] = -s, c
    m2 = [
        [sum(m1[r][k] * m1[k][c] for k in range(16)) for c in range(16)]
        for r in range(16)
    ]
    m1t = [list(col) for col in zip(*m1)]
    assert _offsets_by_hand(m1) == {1}  # the lesson's exact head, the yardstick
    assert _offsets_by_hand(m2) == {2} and _offsets_by_hand(m1t) == {0}
    assert ex.check_head_offsets((2, 0)).ok
    assert ex.check_head_offsets(torch.tensor([2, 0])).ok
    assert "M_2" in ex.check_head_offsets((1, 0)).message
    assert "causal mask hides" in ex.check_head_offsets((2, -1)).message
    assert "other way" in ex.check_head_offsets((2, 1)).message
    assert "swapped" in ex.check_head_offsets((0, 2)).message
    assert not ex.check_head_offsets((3, 3)).ok
    assert "whole" in ex.check_head_offsets((2.5, 0)).message


# --- widget ---------------------------------------------------------------------------------


def readout_number(html: str, label: str) -> float:
    match = re.search(re.escape(label) + r" = (-?\d+\.\d+)", html)
    assert match, html
    return float(match.group(1))


def test_widget_update_moves_every_artist_to_the_formula():
    w = EncodingExplorer()
    w.update(p=37, k=-6, d_model=12, base=100.0)
    x, y = w.line_p.get_data()
    assert list(x) == list(range(12))
    assert y == pytest.approx(pe_by_hand(37, 12, 100.0), abs=1e-9)
    assert w.line_pk.get_data()[1] == pytest.approx(pe_by_hand(31, 12, 100.0), abs=1e-9)

    forward = dot(pe_by_hand(37, 12, 100.0), pe_by_hand(31, 12, 100.0))
    backward = dot(pe_by_hand(37, 12, 100.0), pe_by_hand(43, 12, 100.0))
    mx, my = w.marker.get_data()
    assert list(mx) == [-6] and my[0] == pytest.approx(forward)
    ox, oy = w.mirror.get_data()
    assert list(ox) == [6] and oy[0] == pytest.approx(backward)
    assert forward == pytest.approx(backward)  # the lesson's symmetry, by hand

    ks, curve = w.curve.get_data()
    expected = [sum(math.cos(k / 100.0 ** (2 * i / 12)) for i in range(6)) for k in ks]
    assert curve == pytest.approx(expected, abs=1e-9)
    assert readout_number(w.readout.value, "PE(m)·PE(m+Δ)") == pytest.approx(
        forward, abs=1e-4
    )
    assert readout_number(w.readout.value, "PE(m)·PE(m−Δ)") == pytest.approx(
        backward, abs=1e-4
    )
    assert "rope-readout" in w.readout._dom_classes
    plt.close(w.figure)


def test_widget_controls_drive_update_and_have_descriptions():
    w = EncodingExplorer()
    w.controls["p"].value = 150
    assert w.values["p"] == 150
    assert w.line_p.get_data()[1] == pytest.approx(pe_by_hand(150, 32), abs=1e-9)
    assert all(control.description for control in w.controls.values())
    with pytest.raises(ValueError, match="update"):
        w.update(q=1)
    plt.close(w.figure)


def test_widget_registry_sweep_and_thumbnail():
    assert rope_lib.widgets.registry()["EncodingExplorer"] is EncodingExplorer
    w = EncodingExplorer.example()
    steps = list(w.sweep())
    assert len(steps) == 32
    for step in steps:
        w.update(**step)
    for name in ("p", "k", "d_model", "base"):
        assert any(name in step for step in steps)
    plt.close(w.figure)
    fig = thumbnail()
    assert isinstance(fig, matplotlib.figure.Figure)
    plt.close(fig)


def test_train_offset_head_is_adam_as_torch_optim_does_it():
    table = rope_lib.sinusoidal_encoding(40, 8).double()
    rows, future = table[:24], torch.ones(24, 24, dtype=torch.bool).triu(1)
    A = torch.zeros(8, 8, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([A], lr=0.05)
    for _ in range(50):
        scores = (rows @ A @ rows.T).masked_fill(future, float("-inf"))
        loss = torch.nn.functional.cross_entropy(scores[2:], torch.arange(22))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    got = train_offset_head(table, offset=2, train_len=24, steps=50, lr=0.05)
    assert torch.allclose(got, A.detach(), atol=1e-8)


def test_widget_readout_for_an_offset_beyond_the_drawn_curve():
    w = EncodingExplorer(d_model=8)
    w.update(p=3, k=300)
    expected = sum(math.cos(300 / 10000 ** (2 * i / 8)) for i in range(4))
    assert readout_number(w.readout.value, "Σ_i cos(Δ·θ_i)") == pytest.approx(
        expected, abs=1e-4
    )
    assert readout_number(w.readout.value, "PE(m)·PE(m+Δ)") == pytest.approx(
        expected, abs=1e-4
    )
    plt.close(w.figure)


def test_an_answer_that_is_not_numbers_gets_feedback_not_a_crash():
    for check in (
        ex.check_wavelengths,
        ex.check_shift_block,
        ex.check_offset_dots,
        ex.check_head_offsets,
    ):
        feedback = check("abc")
        assert not feedback.ok and feedback.message


# --- widget drawing: blitting ---------------------------------------------------------------


def canvas_pixels(fig):
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def test_widget_blitted_picture_equals_a_full_draw_of_the_same_state():
    w = EncodingExplorer()
    fig = w.figure
    previous = canvas_pixels(fig)
    # slider moves of p, k and base are blitted; the d_model move redraws everything
    for step in (
        dict(p=90),
        dict(k=-40),
        dict(base=10.0),
        dict(d_model=64),
        dict(p=5),
        dict(k=64),
    ):
        w.update(**step)
        blitted = canvas_pixels(fig)
        assert not np.array_equal(blitted, previous), step  # the picture did move
        fig.canvas.draw()
        assert np.array_equal(blitted, canvas_pixels(fig)), (
            step
        )  # and it is the complete picture
        previous = blitted
    plt.close(fig)


def test_widget_redraws_everything_only_when_d_model_changes(monkeypatch):
    w = EncodingExplorer.example()
    steps = list(w.sweep())
    full_draws = []
    draw = type(w.figure.canvas).draw
    monkeypatch.setattr(
        type(w.figure.canvas),
        "draw",
        lambda canvas: (full_draws.append(1), draw(canvas)),
    )
    d_changes = 0
    for step in steps:
        before = len(full_draws)
        d_before = w.values["d_model"]
        w.update(**step)
        changed = w.values["d_model"] != d_before
        d_changes += changed
        assert len(full_draws) - before == int(changed), step
    assert d_changes == 9  # the sweep's 8 values of d_model, then back to 32
    plt.close(w.figure)


@pytest.mark.parametrize("d", [4, 8, 32])
def test_widget_fixed_limits_hold_the_curve_for_every_base_of_the_slider(d):
    w = EncodingExplorer(d_model=d)
    limits = w.ax_dot.get_ylim()
    slider = w.controls["base"]
    exponent = slider.min
    while exponent <= slider.max + 1e-9:
        base = 10.0**exponent
        w.update(base=base)
        assert w.ax_dot.get_ylim() == limits  # static: not redrawn for a base move
        curve = [
            sum(math.cos(k / base ** (2 * i / d)) for i in range(d // 2))
            for k in range(-128, 129)
        ]
        assert (
            limits[0] < min(curve)
            and max(curve) == pytest.approx(d / 2)
            and d / 2 < limits[1]
        )
        exponent += slider.step
    assert w.ax_vec.get_xlim() == (-0.5, d - 0.5)
    w.update(d_model=d + 4)
    assert w.ax_vec.get_xlim() == (-0.5, d + 3.5)
    assert list(w.ax_dot.get_yticks()) == [0, (d + 4) / 4, (d + 4) / 2]
    plt.close(w.figure)


def test_widget_limits_hold_the_curve_for_a_base_set_from_code():
    w = EncodingExplorer(d_model=8)
    for base in (1.5, 2.0, 3.0, 1e6):
        w.update(base=base)
        curve = [
            sum(math.cos(k / base ** (2 * i / 8)) for i in range(4))
            for k in range(-128, 129)
        ]
        low, high = w.ax_dot.get_ylim()
        assert low < min(curve) and max(curve) < high
        blitted = canvas_pixels(w.figure)
        w.figure.canvas.draw()
        assert np.array_equal(blitted, canvas_pixels(w.figure))
    plt.close(w.figure)


def test_static_png_shows_the_moving_artists_and_leaves_the_live_picture_intact():
    w = EncodingExplorer()
    png = rope_lib.figures.static_png(
        w.figure, dpi=80
    ).data  # dpi 80, not the figure's 100
    image = np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB")).astype(int)

    def near(rgb):
        return (np.abs(image - np.array(rgb)).sum(-1) < 40).sum()

    assert near((31, 119, 180)) > 50  # tab:blue, PE(p)
    assert near((255, 127, 14)) > 50  # tab:orange, PE(p + k)
    assert near((44, 160, 44)) > 200  # tab:green, the curve
    assert near((214, 39, 40)) > 20  # tab:red, the marker
    # the next blit uses the live background, not the smaller saved render
    w.update(p=60)
    blitted = canvas_pixels(w.figure)
    w.figure.canvas.draw()
    assert np.array_equal(blitted, canvas_pixels(w.figure))
    plt.close(w.figure)


def test_checkers_read_answers_by_value_and_hint_at_a_zero_matrix():
    for count in (
        33,
        np.int64(33),
        np.int32(33),
        33.0,
        np.float64(33.0),
        torch.tensor(33),
        torch.tensor([33.0]),
    ):
        assert ex.check_unfinished_pairs(count).ok, count
    for wrong in (
        33.5,
        np.float32(33.25),
        float("nan"),
        float("inf"),
        10**400,
        complex(33, 0),
        True,
        "33",
    ):
        feedback = ex.check_unfinished_pairs(wrong)
        assert not feedback.ok and feedback.message, wrong
    i = torch.arange(32, dtype=torch.float64)
    solution = 2 * math.pi * 10000 ** (2 * i / 64)
    assert (
        ex.check_wavelengths(solution.numpy()).ok
        and ex.check_wavelengths(tuple(solution.tolist())).ok
    )
    assert "complex" in ex.check_wavelengths(solution.to(torch.complex128)).message
    assert "meta" in ex.check_wavelengths(solution.to("meta")).message


def test_what_a_learned_table_learns_depends_on_the_task_for_every_seed():
    # lesson 2, 3(c): a table trained for the previous token is arbitrary codes, one
    # trained for the recent past is smooth (its leading component changes sign once)
    from rope_lib.sinusoidal import position_similarity, train_position_head

    for seed in range(5):
        _, prev, prev_pcs = position_similarity(
            train_position_head("previous", seed=seed)
        )
        _, near, near_pcs = position_similarity(
            train_position_head("recent", seed=seed)
        )
        assert abs(prev[1]) < 0.25 and near[1] > 0.6, seed
        assert near[1] > near[4] > near[8], seed
        signs = [int((c[1:, 0] * c[:-1, 0] < 0).sum()) for c in (prev_pcs, near_pcs)]
        assert signs[0] >= 10 and signs[1] == 1, (seed, signs)


def test_the_32_training_rows_are_nearly_collinear():
    sv = torch.linalg.svdvals(sinusoidal_at(torch.arange(32), 16))
    assert sv[6] > 1 and sv[7] < 0.1 and (sv[9:] < 1e-4).all()


def test_train_position_head_rejects_an_unknown_task():
    from rope_lib.sinusoidal import train_position_head

    with pytest.raises(ValueError, match="task"):
        train_position_head("next")
