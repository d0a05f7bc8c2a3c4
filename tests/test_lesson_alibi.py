"""Lesson 6 (ALiBi): the claims its story shows as short printed checks, asserted here,
and the course notation in the lesson and its widget (query m, key n, slope mu_h).

Expected values are written out here: the paper's slopes 2^(-8h/H), softmax and
geometric sums by hand. The "common version" is the study notes' (note 003: linear
slopes m*1..m*H with m = -0.1, a symmetric |i - j|), rewritten as the lesson does.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib.alibi import alibi_query_attention, alibi_span  # noqa: E402
from rope_lib.widgets import alibi as widgets  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "06_alibi.ipynb"


def linear_alibi_bias(seq_len: int, num_heads: int, c: float = -0.1) -> torch.Tensor:
    coefficient = c * torch.arange(1, num_heads + 1)
    position = torch.arange(seq_len)
    distance = (position[:, None] - position[None, :]).abs()
    return coefficient[:, None, None] * distance


def test_common_linear_version_against_the_paper():
    linear = linear_alibi_bias(100, 8)
    assert torch.allclose(linear[0, 0, -3:], torch.tensor([-9.7, -9.8, -9.9]))
    assert torch.equal(linear[0], linear[0].T)  # the future is biased like the past
    # spans ln(100)/slope: linear 0.1 -> 46.05 tokens at most; paper 1/256 -> 1178.9
    assert float(alibi_span(torch.tensor(0.1))) == pytest.approx(math.log(100) / 0.1)
    paper = rope_lib.alibi_slopes(8)
    assert torch.equal(paper, torch.tensor([2.0**-h for h in range(1, 9)]))
    assert float(alibi_span(paper[-1])) == pytest.approx(256 * math.log(100), rel=1e-6)


def test_symmetric_bias_is_harmless_with_a_mask_and_leaks_without_one():
    torch.manual_seed(1)
    L = 12
    content = torch.randn(8, L, L)
    future = torch.ones(L, L, dtype=torch.bool).triu(1)
    symmetric = rope_lib.alibi_bias(L, 8, causal=False)
    masked = (content + symmetric).masked_fill(future, -math.inf).softmax(-1)
    causal = (content + rope_lib.alibi_bias(L, 8)).softmax(-1)
    assert torch.allclose(masked, causal, atol=1e-7)
    # zero content, no mask: query 0 of head 1 (slope 1/2) spreads over keys 0..11
    r = math.exp(-0.5)
    future_mass = sum(r**delta for delta in range(1, L))
    leak = (symmetric[0, 0]).softmax(-1)[1:].sum()
    assert float(leak) == pytest.approx(future_mass / (1 + future_mass), abs=1e-6)
    assert float(leak) > 0.6


def test_row_constant_key_bias_is_the_causal_bias_but_not_the_encoder_one():
    L = 7
    torch.manual_seed(2)
    content = torch.randn(8, L, L)
    past = torch.ones(L, L, dtype=torch.bool).tril()
    slopes = torch.tensor([2.0**-h for h in range(1, 9)])
    key_bias = slopes[:, None, None] * torch.arange(L)[None, None, :]  # mu_h * n
    assert torch.allclose(rope_lib.alibi.alibi_key_bias(L, 8), key_bias)
    with_key = (content + key_bias).masked_fill(~past, -math.inf).softmax(-1)
    full = (content + rope_lib.alibi_bias(L, 8)).softmax(-1)
    assert torch.allclose(with_key, full, atol=1e-6)
    encoder = (content + rope_lib.alibi_bias(L, 8, causal=False)).softmax(-1)
    assert (content + key_bias).softmax(-1).sub(encoder).abs().max() > 0.1


def test_recency_and_span_shares_are_geometric():
    slopes = rope_lib.alibi_slopes(8).double()
    m = 4095
    zeros = torch.zeros(8, m + 1, dtype=torch.float64)
    weights = alibi_query_attention(zeros, slopes, m)
    for h in range(8):
        r = math.exp(-float(slopes[h]))
        last_ten = (1 - r**10) / (1 - r ** (m + 1))
        assert float(weights[h, -10:].sum()) == pytest.approx(last_ten, abs=1e-9)
        D = math.ceil(math.log(100) / float(slopes[h]))
        beyond = (r**D - r ** (m + 1)) / (1 - r ** (m + 1))  # keys at distance >= D
        assert float(weights[h, : m + 1 - D].sum()) == pytest.approx(beyond, abs=1e-9)
        assert beyond == pytest.approx(r**D, abs=1e-6) and beyond < 0.01
    assert float(weights[0, -10:].sum()) == pytest.approx(1 - math.exp(-5), abs=1e-9)


def test_twelve_heads_follow_the_rule_not_the_formula():
    rule = [2.0**-h for h in range(1, 9)] + [2.0 ** -(h - 0.5) for h in range(1, 5)]
    slopes = rope_lib.alibi_slopes(12).double()
    assert torch.allclose(slopes, torch.tensor(rule).double())
    naive = torch.tensor([2.0 ** (-8 * h / 12) for h in range(1, 13)]).double()
    assert (torch.tensor(rule).double() - naive).abs().max() > 0.6


def test_widget_speaks_the_course_notation():
    w = widgets.AlibiWidget(heads=8, head=4, query=120, seq_len=128, scores="random")
    text = w.readout_text()
    assert "query m = 120" in text and "weight on n = m:" in text
    assert "slope = 0.0625" in text
    assert w.controls["query"].description == "query m"
    assert w.ax_bias.get_xlabel() == "key n" and w.ax_bias.get_ylabel() == "query m"
    assert w.ax_attn.get_xlabel() == "key n"
    assert w.bias_title.get_text() == "head 4: -0.0625·(m - n)"
    assert not re.search(r"\b[ij]\b", text)
    matplotlib.pyplot.close(w.figure)


def test_lesson_uses_the_course_notation_and_no_test_machinery():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]

    def joined(kind):
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == kind)

    prose, code = joined("markdown"), joined("code")
    # positions m, n, offset Delta, slope mu_h: no i, j positions, no m_h, no distance d
    old_names = (
        r"(?<!\w)m_h",
        r"\bi\s*-\s*j\b",
        r"\bj \\le i\b",
        r"\$m\s*\\cdot\s*d\$",
    )
    for old in old_names:
        assert not re.search(old, prose), old
    assert r"\mu_h" in prose and r"\Delta" in prose
    assert "assert " not in code and "inspect." not in code
