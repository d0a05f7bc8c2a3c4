"""Lesson 5 (RoPE in complex numbers): the corrections it makes, checked without
rope_lib where possible, and the shape of the notebook (goals, exercises, summary, line
widths).

Claims corrected here come from the study notes the course was planned from: note 001's
module (docstring `x*cos - x*sin`, "stabilizes training", "stack works and cat does
not"), note 000's "slicing copies, view does not", and the pair written q_[2i:2i+1].

RoPE in complex numbers (lessons 5 and 7): rope_lib.analysis, the clock-dial widget, the checkers.
"""

import json
import math
from pathlib import Path

import matplotlib
import torch

import rope_lib

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "05_rope_complex.ipynb"


def cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def markdown():
    return "\n".join(
        "".join(c["source"]) for c in cells() if c["cell_type"] == "markdown"
    )


def stream_lines(nb_cells):
    for i, cell in enumerate(nb_cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                for line in "".join(output["text"]).splitlines():
                    yield i, line


def rotate_by_hand(x, positions, base=10000.0):
    """RoPE on pairs (2i, 2i+1) with Python floats: [seq, d] lists -> float64 tensor."""
    d = len(x[0])
    out = []
    for row, m in zip(x, positions):
        new = []
        for i in range(d // 2):
            angle = m * base ** (-2 * i / d)
            a, b = row[2 * i], row[2 * i + 1]
            c, s = math.cos(angle), math.sin(angle)
            new += [a * c - b * s, a * s + b * c]
        out.append(new)
    return torch.tensor(out, dtype=torch.float64)


def module_rope(x, positions, join, base=10000.0):
    """The popular module's arithmetic (even/odd slices), joined by stack or by cat."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions.to(torch.float64)[:, None] * theta
    even, odd = x[..., 0::2], x[..., 1::2]
    out1 = even * angles.cos() - odd * angles.sin()
    out2 = even * angles.sin() + odd * angles.cos()
    if join == "stack":
        return torch.stack([out1, out2], dim=-1).flatten(-2)
    return torch.cat([out1, out2], dim=-1)


# ---------------------------------------------------------- torch.stack vs torch.cat
def test_stack_is_rope_and_cat_is_the_same_rope_in_the_half_order():
    torch.manual_seed(0)
    q = torch.randn(7, 12, dtype=torch.float64)
    positions = torch.arange(7)
    stacked = module_rope(q, positions, "stack")
    torch.testing.assert_close(stacked, rotate_by_hand(q.tolist(), positions.tolist()))
    catted = module_rope(q, positions, "cat")
    # cat lists the first coordinate of every pair, then the second: (i, i + d/2) pairs
    half_order = [2 * i for i in range(6)] + [2 * i + 1 for i in range(6)]
    torch.testing.assert_close(catted, stacked[:, half_order])
    assert not torch.allclose(catted, stacked)


def test_cat_gives_the_same_scores_and_keeps_the_relative_property():
    torch.manual_seed(1)
    q = torch.randn(1, 16, dtype=torch.float64)
    k = torch.randn(1, 16, dtype=torch.float64)

    def score(m, n, join):
        q_m = module_rope(q, torch.tensor([m]), join)
        k_n = module_rope(k, torch.tensor([n]), join)
        return (q_m @ k_n.T).item()

    for m, n in [(0, 0), (5, 2), (40, 37), (100, 3)]:
        assert math.isclose(
            score(m, n, "cat"), score(m, n, "stack"), rel_tol=1e-12, abs_tol=1e-12
        )
    # only the offset matters with cat too
    assert math.isclose(score(5, 2, "cat"), score(503, 500, "cat"), rel_tol=1e-9)


# ---------------------------------------------------------- slices are views
def test_basic_slices_are_views_and_list_indexing_copies():
    x = torch.arange(8.0)
    even = x[0::2]
    assert even.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert even.stride() == (2,)
    even[1] = -1.0
    assert x[2].item() == -1.0  # written through the view
    picked = x[[0, 2, 4, 6]]
    picked[0] = 99.0
    assert x[0].item() != 99.0  # a copy
    # view_as_complex on the pairs is a view too (lesson 5, step 2)
    y = torch.arange(16.0).reshape(2, 8)
    assert torch.view_as_complex(y.reshape(2, 4, 2)).data_ptr() == y.data_ptr()


# ---------------------------------------------------------- the docstring formula
def test_docstring_rule_is_not_a_rotation_and_rope_keeps_lengths():
    angle = math.pi / 4
    pair = torch.tensor([1.0, 0.0])
    docstring_rule = pair * math.cos(angle) - pair * math.sin(angle)
    assert torch.allclose(docstring_rule, torch.zeros(2), atol=1e-7)  # (1, 0) -> (0, 0)
    torch.manual_seed(2)
    x = torch.randn(9, 32, dtype=torch.float64)
    rotated = rope_lib.apply_rope(x, torch.arange(9))
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))


# ---------------------------------------------------------- the worked example
def test_worked_example_number_by_hand_and_in_the_notebook():
    z = complex(28, 29) * complex(math.cos(0.01), math.sin(0.01))
    assert f"{z.real:.4f}{z.imag:+.4f}j" == "27.7086+29.2785j"
    outputs = "\n".join(line for _, line in stream_lines(cells()))
    assert "27.7086+29.2785j" in outputs
    assert "tensor([27.7086, 29.2785])" in outputs


# ---------------------------------------------------------- the lesson as written
def test_pair_is_written_as_two_coordinates():
    text = markdown()
    assert "2i:2i+1]" not in text.replace(" ", "")
    assert "q[2*i : 2*i + 2]" in text
    q = list(range(10))
    assert len(q[2 * 3 : 2 * 3 + 1]) == 1 and len(q[2 * 3 : 2 * 3 + 2]) == 2


def test_claims_are_stated_and_answered():
    text = markdown()
    # "stabilizes training": stated as a claim, with the answer next to it
    paragraph = next(p for p in text.split("\n\n") if "stabilize training" in p)
    assert "no evidence" in paragraph
    # cat vs stack and slices vs copies are discussed, each with a check cell after it
    nb = cells()
    for heading in ("`torch.stack` or `torch.cat`?", "Slices are views, not copies"):
        index = next(i for i, c in enumerate(nb) if heading in "".join(c["source"]))
        assert nb[index + 1]["cell_type"] == "code" and nb[index + 1]["outputs"]


def test_goals_exercises_summary():
    nb = cells()
    first = "".join(nb[0]["source"])
    assert first.startswith("# Lesson 5 · ")
    assert "By the end you will be able to" in first
    assert "".join(nb[-1]["source"]).startswith("## Summary")
    sources = "\n".join("".join(c["source"]) for c in nb if c["cell_type"] == "code")
    assert "ex.check_complex_rotation(answer)" in sources
    assert "ex.check_meta_layout_weights(answer)" in sources
    # the lesson was split: lesson 7's exercises are not here
    assert "check_slow_pairs" not in sources
    assert "check_bfloat16_angle_error" not in sources


def test_printed_and_code_lines_fit_88_characters():
    nb = cells()
    long_output = [(i, line) for i, line in stream_lines(nb) if len(line) > 88]
    assert long_output == []
    long_code = [
        (i, line)
        for i, c in enumerate(nb)
        if c["cell_type"] == "code"
        for line in "".join(c["source"]).splitlines()
        if len(line) > 88
    ]
    assert long_code == []


matplotlib.use("Agg")

import pytest  # noqa: E402

from rope_lib import analysis  # noqa: E402
from rope_lib.exercises import complex_rope as ex  # noqa: E402
from rope_lib.figures import clock_dials as dial_figures  # noqa: E402
from rope_lib.widgets import clock_dials as lw  # noqa: E402


# ------------------------------------------------------------------ long_term_decay_bound
def reference_bound(r, d, base=10000.0):
    """RoFormer's (1/(d/2)) sum_j |S_j|, S_j = sum_{k<j} e^{i r theta_k}, with plain Python loops."""
    thetas = [base ** (-2 * k / d) for k in range(d // 2)]
    total, partial = 0.0, 0j
    for theta in thetas:
        partial += complex(math.cos(r * theta), math.sin(r * theta))
        total += abs(partial)
    return total / (d // 2)


@pytest.mark.parametrize("d,base", [(128, 10000.0), (16, 10000.0), (64, 500000.0)])
def test_long_term_decay_bound_matches_a_loop(d, base):
    distances = [0, 1, 3, 10, 77, 256, 1000]
    got = analysis.long_term_decay_bound(torch.tensor(distances), d, base)
    want = torch.tensor(
        [reference_bound(r, d, base) for r in distances], dtype=torch.float64
    )
    torch.testing.assert_close(got, want)


def test_long_term_decay_bound_at_zero_and_its_decay():
    # at r = 0 every S_j = j: mean of 1..64 = 32.5
    assert analysis.long_term_decay_bound(
        torch.tensor([0]), 128
    ).item() == pytest.approx(32.5)
    bound = analysis.long_term_decay_bound(torch.arange(0, 257), 128)
    assert bound[0] > bound[10] > bound[100] > bound[256]
    assert bound[250] < 0.25 * bound[0]


def test_decay_bound_really_bounds_the_rope_score():
    torch.manual_seed(0)
    d = 32
    q, k = (
        torch.randn(8, d, dtype=torch.float64),
        torch.randn(8, d, dtype=torch.float64),
    )
    r = torch.arange(0, 300)
    bound = analysis.long_term_decay_bound(r, d)
    constant = analysis.decay_bound_constant(q, k)
    for i in range(8):
        # score computed independently: rotate q by R_r via the block-diagonal matrix
        scores = torch.stack(
            [rope_lib.rotation_matrix(int(m), d) @ q[i] @ k[i] for m in r]
        ).abs()
        assert torch.all(scores <= constant[i] * (d / 2) * bound + 1e-9)


def test_decay_bound_constant_by_hand():
    # d = 4: q pairs 1+0i, 0+1i; k pairs 1+0i, 1+0i -> h = [1, i]; h_2 = 0
    q = torch.tensor([1.0, 0.0, 0.0, 1.0])
    k = torch.tensor([1.0, 0.0, 1.0, 0.0])
    # |h1 - h0| = |i - 1| = sqrt(2), |h2 - h1| = |0 - i| = 1
    assert analysis.decay_bound_constant(q, k).item() == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="same shape"):
        analysis.decay_bound_constant(q, k[:2])


# ------------------------------------------------------------------ pair_turns
def test_pair_turns_known_numbers():
    turns = analysis.pair_turns(4096, 128, 10000.0)
    assert turns.shape == (64,)
    assert turns[0].item() == pytest.approx(4096 / (2 * math.pi))  # theta_0 = 1
    assert turns[63].item() == pytest.approx(
        4096 * 10000.0 ** (-126 / 128) / (2 * math.pi)
    )
    assert (
        int((turns < 1).sum()) == 18
    )  # 4096 theta_i < 2 pi  <=>  i > 64 ln(4096/2pi)/ln(1e4) = 45.01
    with pytest.raises(ValueError, match="head_dim"):
        analysis.pair_turns(100, 7)


# ------------------------------------------------------------------ angle_error
def test_angle_error_bfloat16_positions_and_products():
    err = analysis.angle_error(torch.tensor([3001, 4100, 100]), 8, dtype=torch.bfloat16)
    assert err.shape == (3, 4)
    # bfloat16 rounds 3001 to 3008 (steps of 16 in [2048, 4096)) and 4100 to 4096 (steps of 32)
    assert err[0, 0].item() == pytest.approx(7.0)
    assert err[1, 0].item() == pytest.approx(4.0)
    # position 100 is exact, theta_0 = 1 exact: no error on pair 0
    assert err[2, 0].item() == 0.0
    # pair 1: theta_1 = 0.1 in bfloat16 is 0.10009765625; 100 * that = 10.009765625 -> bfloat16 10.0
    assert err[2, 1].item() == pytest.approx(
        abs(10.0 - 100 * 10000.0 ** (-2 / 8)), abs=1e-6
    )


def test_angle_error_float32_is_small():
    err = analysis.angle_error(torch.arange(0, 4096, 97), 128, dtype=torch.float32)
    assert err.max().item() < 1e-3


# ------------------------------------------------------------------ rope_cost_per_token
def test_rope_cost_per_token_formulas():
    c = analysis.rope_cost_per_token(head_dim=128, n_heads=1, context=4096)
    assert c["rope_flops"] == 6 * 128  # 6d per head for q and k
    assert c["attention_flops"] == 4 * 4096 * 128
    assert c["flops_ratio"] == pytest.approx(1.5 / 4096)
    g = analysis.rope_cost_per_token(
        head_dim=128, n_heads=32, n_kv_heads=8, context=1000, bytes_per_value=2
    )
    assert g["rope_flops"] == 3 * 128 * 40
    assert g["attention_flops"] == 4 * 1000 * 128 * 32
    assert g["attention_bytes"] == 2 * 1000 * 128 * 8 * 2
    assert g["rope_bytes"] == (2 * 128 * 40 + 128) * 2


# ------------------------------------------------------------------ UnsqueezeBugRoPE
def test_seed001_module_is_right_for_seq_positions_and_wrong_for_batched():
    torch.manual_seed(1)
    module = analysis.UnsqueezeBugRoPE(10000.0, 8, 64)
    x = torch.randn(2, 3, 5, 8)
    torch.testing.assert_close(
        module(x, torch.arange(5)), rope_lib.apply_rope(x, torch.arange(5))
    )
    positions = torch.tensor([[0, 1, 2, 3, 4], [9, 10, 11, 12, 13]])
    assert module(torch.randn(2, 5, 8), positions).shape == (
        1,
        2,
        5,
        8,
    )  # silent extra dimension
    with pytest.raises(RuntimeError):
        module(x, positions)  # batch 2 against 3 heads
    fixed = rope_lib.RotaryEmbedding(8)(x, positions)
    torch.testing.assert_close(fixed, rope_lib.apply_rope(x, positions[:, None, :]))


# ------------------------------------------------------------------ widget
def test_widget_update_moves_every_hand_to_the_independent_angle():
    w = lw.ClockDials(head_dim=16)
    for position, base in [(100, 10000.0), (3001, 500000.0), (7, 10000.0)]:
        w.update(position=position, base=base)
        for i, hand in enumerate(w.hands):
            cx, cy = w.centres[i]
            angle = position * base ** (-2 * i / 16)
            xs, ys = hand.get_data()
            assert xs[0] == pytest.approx(cx) and ys[0] == pytest.approx(cy)
            assert xs[1] - cx == pytest.approx(0.95 * math.cos(angle), abs=2e-3)
            assert ys[1] - cy == pytest.approx(0.95 * math.sin(angle), abs=2e-3)
        assert f"position m = {position}" in w.title.get_text()
        assert (
            w.controls["position"].value == position
            and w.controls["base"].value == base
        )
    import matplotlib.pyplot as plt

    plt.close(w.figure)


def test_widget_readout_is_parseable_and_correct():
    import re

    w = lw.ClockDials(head_dim=16, position=100)
    assert "rope-readout" in w.readout._dom_classes

    def angles(html):  # "m θ_i: pairs 0-3: a, b, c, d rad<br>pairs 4-7: e, f, g, h rad"
        rows = re.findall(r"pairs (\d+)-(\d+): ([-\d., ]+) rad", html)
        return [float(v) for _, _, values in rows for v in values.split(", ")]

    found = angles(w.readout.value)
    assert len(found) == 8 and w.readout.value.count("<br>") == 1
    assert found[0] == pytest.approx(100.0, abs=1e-4)
    assert found[1] == pytest.approx(100 * 10000 ** (-2 / 16), abs=1e-3)
    # the controls drive update: moving the slider changes the hands
    before = w.hands[1].get_data()[0][1]
    w.controls["position"].value = 101
    assert w.hands[1].get_data()[0][1] != before
    assert angles(w.readout.value)[0] == pytest.approx(101.0, abs=1e-4)
    w.controls["base"].value = 500000.0
    assert angles(w.readout.value)[7] == pytest.approx(
        101 * 500000 ** (-14 / 16), abs=1e-4
    )
    for control in w.controls.values():
        assert control.description


def test_widget_sweep_and_thumbnail():
    w = lw.ClockDials.example()
    steps = list(w.sweep())
    assert len(steps) == 10
    for step in steps:
        w.update(**step)
    assert {s.get("base") for s in steps if "base" in s} == set(lw.BASES)
    assert max(s["position"] for s in steps) == w.controls["position"].max
    figure = dial_figures.thumbnail()
    width, height = figure.get_size_inches()
    assert (width, height) == (4, 2.5)


# ------------------------------------------------------------------ checkers
def test_check_1_solution_and_mistakes():
    # the notebook's worked solution
    z = torch.tensor(3.0 + 4.0j)
    answer = z * torch.polar(torch.tensor(1.0), torch.tensor(5 * 0.1))
    assert ex.check_complex_rotation(answer).ok
    # (3 + 4i) e^{0.5 i}, written out
    expected = [
        3 * math.cos(0.5) - 4 * math.sin(0.5),
        3 * math.sin(0.5) + 4 * math.cos(0.5),
    ]
    assert ex.check_complex_rotation(expected).ok
    assert ex.check_complex_rotation(complex(*expected)).ok
    mistakes = {
        "clockwise": [
            3 * math.cos(0.5) + 4 * math.sin(0.5),
            -3 * math.sin(0.5) + 4 * math.cos(0.5),
        ],
        "θ = 0.1 only": [
            3 * math.cos(0.1) - 4 * math.sin(0.1),
            3 * math.sin(0.1) + 4 * math.cos(0.1),
        ],
        "degrees": [
            3 * math.cos(math.radians(0.5)) - 4 * math.sin(math.radians(0.5)),
            3 * math.sin(math.radians(0.5)) + 4 * math.cos(math.radians(0.5)),
        ],
        "swapped": expected[::-1],
        "before the rotation": [3.0, 4.0],
        "length": [1.0, 1.0],
        "shape": [1.0, 2.0, 3.0],
    }
    for words, wrong in mistakes.items():
        feedback = ex.check_complex_rotation(wrong)
        assert not feedback.ok and words in feedback.message, (words, feedback)
    assert not ex.check_complex_rotation(None).ok


def test_check_2_solution_and_mistakes():
    turns = analysis.pair_turns(8192, 128, base=500000.0)
    assert ex.check_slow_pairs(int((turns < 1).sum())).ok
    # by hand: i > 64 ln(8192 / 2 pi) / ln(500000) = 34.98 -> pairs 35..63
    assert ex.check_slow_pairs(29).ok
    assert "DO complete" in ex.check_slow_pairs(35).message
    assert (
        "10,000" in ex.check_slow_pairs(14).message
    )  # i > 64 ln(8192/2pi)/ln(1e4) = 49.8 -> 14 pairs
    assert (
        "2π" in ex.check_slow_pairs(20).message
    )  # 8192 theta_i < 1 -> i > 43.9 -> 20 pairs
    assert "off by one" in ex.check_slow_pairs(30).message
    assert "whole number" in ex.check_slow_pairs(2.5).message
    assert "only 64" in ex.check_slow_pairs(65).message


def test_check_3_solution_and_mistakes():
    W_half = ex.meta_layout_weights()
    order = rope_lib.half_to_interleaved(torch.arange(8))
    answer = W_half.view(2, 8, 16)[:, order, :].reshape(16, 16)
    assert ex.check_meta_layout_weights(answer).ok
    # the answer really gives the same scores: half model vs interleaved model, per head
    torch.manual_seed(2)
    x = torch.randn(6, 16)
    k_half = (x @ W_half.T).view(6, 2, 8).transpose(0, 1)
    k_int = (x @ answer.T).view(6, 2, 8).transpose(0, 1)
    s_half = rope_lib.apply_rope(k_half, torch.arange(6), layout="half")
    s_int = rope_lib.apply_rope(k_int, torch.arange(6), layout="interleaved")
    torch.testing.assert_close(
        s_half @ s_half.transpose(-1, -2), s_int @ s_int.transpose(-1, -2)
    )

    other_way = W_half.view(2, 8, 16)[
        :, rope_lib.interleaved_to_half(torch.arange(8)), :
    ].reshape(16, 16)
    assert "other direction" in ex.check_meta_layout_weights(other_way).message
    assert "unchanged" in ex.check_meta_layout_weights(W_half).message
    whole = W_half[rope_lib.half_to_interleaved(torch.arange(16))]
    assert "each head" in ex.check_meta_layout_weights(whole).message
    columns = W_half[:, rope_lib.half_to_interleaved(torch.arange(16))]
    assert "columns" in ex.check_meta_layout_weights(columns).message
    assert "shape" in ex.check_meta_layout_weights(W_half[:8]).message
    assert not ex.check_meta_layout_weights("W").ok


def test_check_4_solution_and_mistakes():
    stored = torch.tensor(5001.0).to(torch.bfloat16).item()
    answer = abs(stored - 5001) * 1.0
    feedback = ex.check_bfloat16_angle_error(answer)
    assert (
        feedback.ok
        and "4976 to 5008" in feedback.message
        and "steps of 32" in feedback.message
    )
    # by hand: 8 significant bits, so steps of 32 in [4096, 8192); 5001 -> 156 * 32 = 4992, 9 rad off
    assert ex.check_bfloat16_angle_error(9).ok
    assert "positive" in ex.check_bfloat16_angle_error(-9.0).message
    assert "turns" in ex.check_bfloat16_angle_error(9 / (2 * math.pi)).message
    assert "dial" in ex.check_bfloat16_angle_error(9 - 2 * math.pi).message
    assert "stores" in ex.check_bfloat16_angle_error(4992).message
    assert (
        "float16" in ex.check_bfloat16_angle_error(1.0).message
    )  # float16: steps of 4 there, 5001 -> 5000
    assert "256" in ex.check_bfloat16_angle_error(0).message
    assert not ex.check_bfloat16_angle_error("nine").ok


def test_checkers_say_when_there_is_no_answer_yet():
    for check in (
        ex.check_complex_rotation,
        ex.check_slow_pairs,
        ex.check_meta_layout_weights,
        ex.check_bfloat16_angle_error,
    ):
        feedback = check(None)
        assert not feedback.ok and "no answer yet" in feedback.message


def test_checkers_read_answers_by_value():
    import numpy as np

    W_half = ex.meta_layout_weights()
    order = rope_lib.half_to_interleaved(torch.arange(8))
    answer = W_half.view(2, 8, 16)[:, order, :].reshape(16, 16)
    for form in (answer.tolist(), answer.numpy(), answer.double()):
        assert ex.check_meta_layout_weights(form).ok
    assert not ex.check_meta_layout_weights(answer.to(torch.complex64)).ok
    for count in (np.int64(29), torch.tensor(29), np.array(29), 29.0):
        assert ex.check_slow_pairs(count).ok, count
    for wrong in (29.5, float("nan"), float("inf"), complex(29, 0), np.True_):
        assert not ex.check_slow_pairs(wrong).ok, wrong
    z = (3 + 4j) * complex(math.cos(0.5), math.sin(0.5))
    for form in (z, np.complex128(z), torch.tensor([z]), np.array([z.real, z.imag])):
        assert ex.check_complex_rotation(form).ok, form
    assert not ex.check_complex_rotation(
        torch.tensor([z.real, z.imag], dtype=torch.complex64)
    ).ok
    assert (
        not ex.check_bfloat16_angle_error(complex(9, 0)).ok
        and ex.check_bfloat16_angle_error(np.float32(9)).ok
    )
