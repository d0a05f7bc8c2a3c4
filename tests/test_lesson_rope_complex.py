"""Lesson 4 (RoPE in complex numbers): the corrections it makes, checked without
rope_lib where possible, and the shape of the notebook (goals, exercises, summary, line
widths).

Claims corrected here come from the study notes the course was planned from: note 001's
module (docstring `x*cos - x*sin`, "stabilizes training", "stack works and cat does
not"), note 000's "slicing copies, view does not", and the pair written q_[2i:2i+1].
"""

import json
import math
from pathlib import Path

import torch

import rope_lib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "04_rope_complex.ipynb"


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
    # view_as_complex on the pairs is a view too (lesson 4, step 2)
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
    assert first.startswith("# Lesson 4 · ")
    assert "By the end you will be able to" in first
    assert "".join(nb[-1]["source"]).startswith("## Summary")
    sources = "\n".join("".join(c["source"]) for c in nb if c["cell_type"] == "code")
    assert "ex.check_complex_rotation(answer)" in sources
    assert "ex.check_meta_layout_weights(answer)" in sources
    # the lesson was split: lesson 5's exercises are not here
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
