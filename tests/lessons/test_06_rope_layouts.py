"""Lesson 6 (three implementations, one rotation): the rule every implementation must compute,
the popular module's problems and the fix, views and copies, stack and cat, the two layouts and
the row permutation, each checked without rope_lib where possible; its three checkers; its
figure; and the shape of the notebook.

Claims corrected here come from the study notes the course was planned from: note 001's
module (docstring `x*cos - x*sin`, "stabilizes training", `unsqueeze(0)` with batched
positions, "d_k is d_model", "stack works and cat does not") and note 000's "slicing copies,
view does not".
"""

import json
import math
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch

import rope_lib
from rope_lib import analysis
from rope_lib.exercises import complex_rope as ex

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "06_rope_layouts.ipynb"


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


def rule(x, positions, layout, base=10000.0):
    """Section 1's rule with Python floats: [seq, d] lists -> float64 tensor."""
    d = len(x[0])
    out = []
    for row, m in zip(x, positions):
        new = list(row)
        for i in range(d // 2):
            a_at, b_at = (
                (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
            )
            angle = m * base ** (-2 * i / d)
            a, b = row[a_at], row[b_at]
            new[a_at] = a * math.cos(angle) - b * math.sin(angle)
            new[b_at] = a * math.sin(angle) + b * math.cos(angle)
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


# ---------------------------------------------------------- the rule, two layouts
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_apply_rope_is_the_rule(layout):
    torch.manual_seed(0)
    x = torch.randn(6, 10, dtype=torch.float64)
    positions = [0, 1, 5, 17, 100, 3001]
    torch.testing.assert_close(
        rope_lib.apply_rope(x, torch.tensor(positions), layout=layout),
        rule(x.tolist(), positions, layout),
    )


def test_interleaved_to_half_is_the_picture():
    assert rope_lib.interleaved_to_half(torch.arange(8)).tolist() == [
        0, 2, 4, 6, 1, 3, 5, 7,
    ]  # fmt: skip
    assert rope_lib.half_to_interleaved(torch.arange(8)).tolist() == [
        0, 4, 1, 5, 2, 6, 3, 7,
    ]  # fmt: skip


def test_layout_figure_and_thumbnail():
    from rope_lib.figures import layouts

    fig = layouts.layout_figure(8)
    assert fig.get_size_inches()[0] <= 6.4
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "$x_6$" in texts and "interleaved_to_half" in texts
    width, height = layouts.thumbnail().get_size_inches()
    assert width == pytest.approx(4.0) and height < 2.6


# ---------------------------------------------------------- the popular module
def test_docstring_rule_is_not_a_rotation_and_rope_keeps_lengths():
    angle = math.pi / 4
    pair = torch.tensor([1.0, 0.0])
    docstring_rule = pair * math.cos(angle) - pair * math.sin(angle)
    assert torch.allclose(docstring_rule, torch.zeros(2), atol=1e-7)  # (1, 0) -> (0, 0)
    torch.manual_seed(2)
    x = torch.randn(9, 32, dtype=torch.float64)
    rotated = rope_lib.apply_rope(x, torch.arange(9))
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))


def test_module_is_right_for_seq_positions_and_wrong_for_batched():
    torch.manual_seed(1)
    module = analysis.UnsqueezeBugRoPE(10000.0, 8, 64)
    x = torch.randn(2, 3, 5, 8)
    torch.testing.assert_close(
        module(x, torch.arange(5)), rope_lib.apply_rope(x, torch.arange(5))
    )
    positions = torch.tensor([[0, 1, 2, 3, 4], [9, 10, 11, 12, 13]])
    assert module(torch.randn(2, 5, 8), positions).shape == (1, 2, 5, 8)
    with pytest.raises(RuntimeError):
        module(x, positions)  # batch 2 against 3 heads
    two_heads = torch.randn(2, 2, 5, 8)
    wrong = module(two_heads, positions)  # runs, rotates head h by sequence h
    right = rope_lib.apply_rope(two_heads, positions[:, None, :])
    assert wrong.shape == right.shape and (wrong - right).abs().max() > 0.5
    fixed = rope_lib.RotaryEmbedding(8)(x, positions)
    torch.testing.assert_close(fixed, rope_lib.apply_rope(x, positions[:, None, :]))


def test_frequencies_over_the_width_give_later_heads_slow_pairs():
    per_head = [10000.0 ** (-2 * i / 8) for i in range(4)]
    over_width = [10000.0 ** (-2 * i / 16) for i in range(8)]
    assert per_head[0] == 1.0 and over_width[4] == pytest.approx(0.01)
    assert max(over_width[4:]) < min(per_head[:2])


# ---------------------------------------------------------- views, stack and cat
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


def test_stack_is_rope_and_cat_is_the_same_rope_in_the_half_order():
    torch.manual_seed(0)
    q = torch.randn(7, 12, dtype=torch.float64)
    positions = torch.arange(7)
    stacked = module_rope(q, positions, "stack")
    torch.testing.assert_close(
        stacked, rule(q.tolist(), positions.tolist(), "interleaved")
    )
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
    assert math.isclose(score(5, 2, "cat"), score(503, 500, "cat"), rel_tol=1e-9)


# ---------------------------------------------------------- the row permutation
def test_row_permutation_keeps_every_score_and_moves_the_bias_too():
    torch.manual_seed(5)
    d_model, head = 16, 8
    w_q, w_k = torch.randn(2, d_model, d_model, dtype=torch.float64)
    b_q = torch.randn(d_model, dtype=torch.float64)
    x = torch.randn(6, d_model, dtype=torch.float64)
    order = [0, 2, 4, 6, 1, 3, 5, 7]  # interleaved -> half, per head
    rows = order + [head + j for j in order]
    pos = torch.arange(6)

    def scores(wq, bq, wk, layout):
        q = (x @ wq.T + bq).view(6, 2, head).transpose(0, 1)
        k = (x @ wk.T).view(6, 2, head).transpose(0, 1)
        q, k = (
            rope_lib.apply_rope(q, pos, layout=layout),
            rope_lib.apply_rope(k, pos, layout=layout),
        )
        return q @ k.transpose(-1, -2)

    interleaved = scores(w_q, b_q, w_k, "interleaved")
    torch.testing.assert_close(
        scores(w_q[rows], b_q[rows], w_k[rows], "half"), interleaved
    )
    assert (scores(w_q[rows], b_q, w_k[rows], "half") - interleaved).abs().max() > 0.1
    # without the permutation only the diagonal (m = n) survives (exercise 3)
    unpermuted = scores(w_q, b_q, w_k, "half")
    same = (unpermuted - interleaved).abs() < 1e-9
    assert same.diagonal(dim1=-2, dim2=-1).all()
    assert same.sum() == 2 * 6


# ---------------------------------------------------------- checkers
def test_three_modules_checker_and_the_modules_themselves():
    torch.manual_seed(7)
    x = torch.randn(5, 8, dtype=torch.float64)
    pos, zero = torch.arange(5), torch.zeros(5, dtype=torch.long)
    torch.testing.assert_close(
        ex.module_c(x, pos), rule(x.tolist(), range(5), "interleaved")
    )
    torch.testing.assert_close(
        ex.module_a(x, pos),
        rule(x.tolist(), range(5), "interleaved")[:, [0, 2, 4, 6, 1, 3, 5, 7]],
    )
    b = ex.module_b(x, pos)
    assert not torch.allclose(b.norm(dim=-1), x.norm(dim=-1))  # no rotation
    assert torch.equal(ex.module_b(x, zero), x)  # unchanged at position 0
    assert torch.equal(ex.module_a(x, zero), x[:, [0, 2, 4, 6, 1, 3, 5, 7]])
    right = {"wrong": "b", "at position 0": "unchanged"}
    assert ex.check_three_modules(right).ok
    assert ex.check_three_modules({"Wrong": "B", "at position 0": "Unchanged"}).ok
    for wrong, words in [
        ({"wrong": "a", "at position 0": "unchanged"}, "half order"),
        ({"wrong": "c", "at position 0": "unchanged"}, "Meta's complex form"),
        ({"wrong": "none", "at position 0": "unchanged"}, "different angles"),
        ({"wrong": "b", "at position 0": "permuted"}, "that is A at position 0"),
        ({"wrong": "b", "at position 0": "zero"}, "not zeros"),
        ({"wrong": "b"}, "answer both"),
    ]:
        feedback = ex.check_three_modules(wrong)
        assert not feedback.ok and words in feedback.message, (wrong, feedback)
    assert not ex.check_three_modules({"wrong": "d", "at position 0": "zero"}).ok


def test_meta_layout_weights_checker():
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
    per_head = W_half.view(16, 2, 8)[
        :, :, rope_lib.half_to_interleaved(torch.arange(8))
    ]
    assert "columns" in ex.check_meta_layout_weights(per_head.reshape(16, 16)).message
    both = answer[:, torch.randperm(16, generator=torch.Generator().manual_seed(0))]
    assert "columns" in ex.check_meta_layout_weights(both).message
    assert "shape" in ex.check_meta_layout_weights(W_half[:8]).message
    assert not ex.check_meta_layout_weights("W").ok
    for form in (answer.tolist(), answer.numpy(), answer.double()):
        assert ex.check_meta_layout_weights(form).ok
    assert not ex.check_meta_layout_weights(answer.to(torch.complex64)).ok
    assert "no answer yet" in ex.check_meta_layout_weights(None).message


def test_unpermuted_scores_checker():
    right = {"m = n": "right", "n = 0": "wrong", "m - n = 1": "wrong"}
    assert ex.check_unpermuted_scores(right).ok
    for key, words in [
        ("m = n", "(R_m q)·(R_m k) = q·k"),
        ("n = 0", "only m = 0"),
        ("m - n = 1", "never paired"),
    ]:
        wrong = dict(right)
        wrong[key] = "wrong" if right[key] == "right" else "right"
        feedback = ex.check_unpermuted_scores(wrong)
        assert not feedback.ok and words in feedback.message, (key, feedback)
    assert "all three" in ex.check_unpermuted_scores({"m = n": "right"}).message
    assert not ex.check_unpermuted_scores(np.array([1])).ok


# ---------------------------------------------------------- the lesson as written
def test_claims_are_stated_and_answered():
    text = markdown()
    paragraph = next(p for p in text.split("\n\n") if "stabilize training" in p)
    assert "none of the RoPE papers claims it" in paragraph
    nb = cells()
    for heading in ("`torch.stack` or `torch.cat`?", "Slices are views, not copies"):
        index = next(i for i, c in enumerate(nb) if heading in "".join(c["source"]))
        after = []  # the check: the code cells right after it, one of them printing
        for cell in nb[index + 1 :]:
            if cell["cell_type"] != "code":
                break
            after.append(cell)
        assert after and any(c["outputs"] for c in after)
    # the right idea first: section 1 states the rule before any module is read
    first = next(i for i, c in enumerate(nb) if "## 1 · " in "".join(c["source"]))
    module = next(
        i for i, c in enumerate(nb) if "UnsqueezeBugRoPE" in "".join(c["source"])
    )
    assert first < module
    assert "row permutation" in text


def test_goals_exercises_summary():
    nb = cells()
    first = "".join(nb[0]["source"])
    assert first.startswith("# Lesson 6 · Three implementations, one rotation")
    assert "By the end you will be able to" in first and "Lesson 5" in first
    last = "".join(nb[-1]["source"])
    assert last.startswith("## Summary") and "Next, lesson 7 · RoPE at scale" in last
    sources = "\n".join("".join(c["source"]) for c in nb if c["cell_type"] == "code")
    for name in (
        "check_three_modules",
        "check_meta_layout_weights",
        "check_unpermuted_scores",
    ):
        assert f"ex.{name}(answer)" in sources
    assert "check_complex_rotation" not in sources and "check_slow_pairs" not in sources
    numbers = [
        int(h.split("Exercise ")[1].split(" ")[0])
        for c in nb
        for h in "".join(c["source"]).splitlines()
        if h.startswith("### Exercise ")
    ]
    assert numbers == [1, 2, 3]
    sections = [
        int(line[3])
        for c in nb
        if c["cell_type"] == "markdown"
        for line in "".join(c["source"]).splitlines()
        if line.startswith("## ") and line[3].isdigit()
    ]
    assert sections == list(range(1, 9))
    pngs = [
        o for c in nb for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    assert len(pngs) >= 1


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
