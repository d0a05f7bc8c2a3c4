"""Lesson 8 (ALiBi): the claims its story shows as short printed checks, asserted here,
and the course notation in the lesson and its widget (query m, key n, slope mu_h).

Expected values are written out here: the paper's slopes 2^(-8h/H), softmax and
geometric sums by hand. The "common version" is the study notes' (note 003: linear
slopes m*1..m*H with m = -0.1, a symmetric |i - j|), rewritten as the lesson does.

ALiBi (lesson 8): the new library functions, the exercise checkers and the widget.

Expected values come from formulas written out here (the paper's slopes 2^(-8h/n), the geometric
distribution of a query's attention, softmax by hand), from PositionalSelfAttention's own bias code
path, or from numbers derived by hand; never from the function under test.
"""

from __future__ import annotations

import io
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

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "08_alibi.ipynb"


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


matplotlib.use("Agg")

import numpy as np  # noqa: E402

from rope_lib.exercises import alibi as ex  # noqa: E402
from rope_lib.figures import alibi as figures  # noqa: E402


def paper_slopes(n: int) -> list[float]:
    """Written out from the paper's code: p = largest power of two <= n, the p-head slopes, then
    every other slope of the 2p-head sequence (starting with its first)."""
    p = 1
    while 2 * p <= n:
        p *= 2
    first = [2.0 ** (-8.0 * h / p) for h in range(1, p + 1)]
    extra = [2.0 ** (-8.0 * h / (2 * p)) for h in range(1, 2 * p + 1)][0::2]
    return first + extra[: n - p]


# alibi_span ----------------------------------------------------------------------------------
def test_span_is_ln100_over_slope():
    spans = alibi_span(rope_lib.alibi_slopes(8))
    expected = torch.tensor([math.log(100) * 2.0**h for h in range(1, 9)])
    torch.testing.assert_close(spans, expected)
    assert spans.dtype == torch.float32
    assert (
        abs(float(alibi_span(0.5)) - 9.210340371976184) < 1e-5
    )  # ln(100) / 0.5 by hand
    assert abs(float(alibi_span(0.25, threshold=math.e)) - 4.0) < 1e-6  # ln(e) / 0.25


def test_span_keeps_float64_and_shape():
    slopes = torch.tensor([[0.5, 0.125]], dtype=torch.float64)
    spans = alibi_span(slopes, threshold=10.0)
    assert spans.dtype == torch.float64 and spans.shape == (1, 2)
    torch.testing.assert_close(
        spans, torch.tensor([[2 * math.log(10), 8 * math.log(10)]], dtype=torch.float64)
    )


def test_span_bias_reaches_minus_ln_threshold():
    # at the span, -slope * span = -ln(100): the key gets 1/100 of the weight of the diagonal
    for m in (0.5, 0.03125, 1 / 256):
        assert abs(-m * float(alibi_span(m)) + math.log(100)) < 1e-4


@pytest.mark.parametrize(
    "args, error, words",
    [
        ((0.0,), ValueError, "slopes"),
        ((torch.tensor([0.5, -0.1]),), ValueError, "slopes"),
        (("0.5",), TypeError, "slopes"),
        ((0.5, 1.0), ValueError, "threshold"),
        ((0.5, 0.5), ValueError, "threshold"),
    ],
)
def test_span_errors(args, error, words):
    with pytest.raises(error, match=words):
        alibi_span(*args)


# alibi_query_attention ------------------------------------------------------------------------
def test_query_attention_zero_scores_is_truncated_geometric():
    i, n = 6, 10
    for m in (0.5, 0.0625, 1 / 256):
        r = math.exp(-m)
        expected = [
            ((1 - r) * r ** (i - j) / (1 - r ** (i + 1))) if j <= i else 0.0
            for j in range(n)
        ]
        got = alibi_query_attention(torch.zeros(n, dtype=torch.float64), m, i)
        torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64))


def test_query_attention_matches_softmax_by_hand():
    scores = [0.3, -1.2, 2.0, 0.1, 0.7, -0.4]
    i, m = 4, 0.25
    logits = [scores[j] - m * (i - j) for j in range(i + 1)]
    z = sum(math.exp(v) for v in logits)
    expected = [math.exp(v) / z for v in logits] + [0.0] * (len(scores) - i - 1)
    got = alibi_query_attention(torch.tensor(scores, dtype=torch.float64), m, i)
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float64))
    # causal=False: the future is biased by |i - j| like the past
    logits = [scores[j] - m * abs(i - j) for j in range(len(scores))]
    z = sum(math.exp(v) for v in logits)
    got = alibi_query_attention(
        torch.tensor(scores, dtype=torch.float64), m, i, causal=False
    )
    torch.testing.assert_close(
        got, torch.tensor([math.exp(v) / z for v in logits], dtype=torch.float64)
    )


def test_query_attention_matches_the_attention_block():
    # with q = k = 0 (zeroed qkv weights) the block's weights are position only; every row i of
    # every head must equal alibi_query_attention(zeros, slope_h, i)
    n_heads, seq = 12, 9
    block = rope_lib.PositionalSelfAttention(
        d_model=24, n_heads=n_heads, position="alibi"
    )
    with torch.no_grad():
        block.qkv.weight.zero_()
        _, weights = block(torch.randn(1, seq, 24), return_weights=True)
    slopes = torch.tensor(paper_slopes(n_heads))
    for i in range(seq):
        got = alibi_query_attention(torch.zeros(n_heads, seq), slopes, i)
        torch.testing.assert_close(got, weights[0, :, i, :])


def test_query_attention_dtype_and_broadcast():
    scores = torch.zeros(2, 3, 5, dtype=torch.bfloat16)
    got = alibi_query_attention(scores, torch.tensor([[0.5], [0.25]]), 2)
    assert got.dtype == torch.bfloat16 and got.shape == (2, 3, 5)
    assert torch.all(got[..., 3:] == 0)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(scores=[0.0, 1.0], slopes=0.5, query=0), TypeError, "scores"),
        (
            dict(scores=torch.zeros(4, dtype=torch.long), slopes=0.5, query=0),
            TypeError,
            "floating",
        ),
        (dict(scores=torch.zeros(4), slopes=0.5, query=4), ValueError, "query"),
        (dict(scores=torch.zeros(4), slopes=0.5, query=-1), ValueError, "query"),
        (
            dict(scores=torch.zeros(3, 4), slopes=torch.ones(2), query=1),
            ValueError,
            "broadcast",
        ),
    ],
)
def test_query_attention_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        alibi_query_attention(**kwargs)


# exercise checkers -----------------------------------------------------------------------------
def test_check_1():
    # the lesson's claim, measured: head 1's own weight stays (0.3935 at 128 and 256
    # tokens), head 8's falls to 0.62 times, clearly between halving and staying
    from rope_lib.alibi import alibi_query_attention

    def own(h, length):
        scores = torch.zeros(length, dtype=torch.float64)
        return float(alibi_query_attention(scores, 2.0**-h, length - 1)[-1])

    assert abs(own(1, 256) / own(1, 128) - 1) < 1e-12
    assert abs(own(1, 128) - (1 - math.exp(-0.5))) < 1e-12
    ratio = own(8, 256) / own(8, 128)
    assert 0.6 < ratio < 0.64 and ex.own_weight(8, 256) == own(8, 256)
    solution = {"head 1": "stay", "head 8": "between"}
    assert ex.check_doubled_context(solution).ok  # the worked solution
    assert f"{ratio:.2f} times" in ex.check_doubled_context(solution).message
    assert ex.check_doubled_context({" Head 1": "STAY ", "head 8": "between"}).ok
    said = {
        "halve": ex.check_doubled_context({**solution, "head 8": "halve"}),
        "stay": ex.check_doubled_context({**solution, "head 8": "stay"}),
        "head 1": ex.check_doubled_context({**solution, "head 1": "halve"}),
        "rise": ex.check_doubled_context({**solution, "head 8": "rise"}),
        "one": ex.check_doubled_context({"head 8": "between"}),
    }
    assert not any(f.ok for f in said.values())
    assert "no bias at all" in said["halve"].message
    assert "0.62 times" in said["halve"].message
    assert "1179 tokens" in said["stay"].message
    assert "head 1's span is 9 tokens" in said["head 1"].message
    assert "no weight can rise" in said["rise"].message
    assert "both heads" in said["one"].message
    assert "replace" in ex.check_doubled_context(None).message
    assert "use one of" in ex.check_doubled_context({**solution, "head 8": "x"}).message
    assert not ex.check_doubled_context("between").ok
    assert not ex.check_doubled_context({"head 1": 1, "head 8": "between"}).ok


def test_check_2():
    def geometric(n):
        return 2.0 ** (-8.0 * torch.arange(1, n + 1) / n)

    solution = torch.cat([geometric(8), geometric(16)[0::2][:4]])  # the worked solution
    assert ex.check_twelve_head_slopes(solution).ok
    assert ex.check_twelve_head_slopes(paper_slopes(12)).ok
    assert "not a power of" in ex.check_twelve_head_slopes(geometric(12)).message
    assert "first 12" in ex.check_twelve_head_slopes(geometric(16)[:12]).message
    assert (
        "[0::2]"
        in ex.check_twelve_head_slopes(
            torch.cat([geometric(8), geometric(16)[1::2][:4]])
        ).message
    )
    assert (
        "another order" in ex.check_twelve_head_slopes(solution.sort().values).message
    )
    assert "linear" in ex.check_twelve_head_slopes(0.1 * torch.arange(1, 13)).message
    assert "positive" in ex.check_twelve_head_slopes(-solution).message


def test_check_3():
    m = 2.0 ** (-8 * 2 / 8)
    i = torch.arange(5)[:, None]
    j = torch.arange(5)[None, :]
    solution = (
        (-m * (i - j)).float().masked_fill(j > i, float("-inf"))
    )  # the worked solution
    assert ex.check_causal_bias(solution).ok
    assert "symmetric" in ex.check_causal_bias(-m * (i - j).abs().float()).message
    assert (
        "positive"
        in ex.check_causal_bias(
            (m * (i - j)).float().masked_fill(j > i, float("-inf"))
        ).message
    )
    assert "positive" in ex.check_causal_bias(m * (i - j).abs().float()).message
    assert "transposed" in ex.check_causal_bias(solution.T).message
    assert (
        "are 0"
        in ex.check_causal_bias((-m * (i - j)).float().masked_fill(j > i, 0.0)).message
    )
    assert (
        "factor 2"
        in ex.check_causal_bias(
            (-0.5 * (i - j)).float().masked_fill(j > i, float("-inf"))
        ).message
    )
    assert (
        "row-constant"
        in ex.check_causal_bias(
            (m * j).float().expand(5, 5).masked_fill(j > i, float("-inf"))
        ).message
    )
    assert "head 2 only" in ex.check_causal_bias(torch.zeros(8, 5, 5)).message


def test_check_4():
    j = torch.arange(8)
    solution = (
        (-0.5 * (5 - j)).float().masked_fill(j > 5, float("-inf")).softmax(-1)
    )  # worked solution
    assert ex.check_query_weights(solution).ok
    # hand-derived: query's own key gets (1 - r) / (1 - r^6), r = e^-0.5
    r = math.exp(-0.5)
    assert abs(float(solution[5]) - (1 - r) / (1 - r**6)) < 1e-6
    symmetric = (-0.5 * (5 - j).abs()).float().softmax(-1)
    assert "without" in ex.check_query_weights(symmetric).message
    positive = (0.5 * (5 - j)).float().masked_fill(j > 5, float("-inf")).softmax(-1)
    assert "wrong sign" in ex.check_query_weights(positive).message
    uniform = torch.zeros(8).masked_fill(j > 5, float("-inf")).softmax(-1)
    assert "missing" in ex.check_query_weights(uniform).message
    unnormalized = torch.exp(-0.5 * (5 - j).float()).masked_fill(j > 5, 0.0)
    assert "divide by the sum" in ex.check_query_weights(unnormalized).message
    assert "shape" in ex.check_query_weights(torch.ones(6)).message


# widget -----------------------------------------------------------------------------------------
def test_widget_update_changes_the_artists():
    w = widgets.AlibiWidget()
    w.update(heads=12, head=10, seq_len=40, query=30, scores="zeros")
    slopes = paper_slopes(12)
    for h, bar in enumerate(w.bars, start=1):
        assert bar.get_visible() == (h <= 12)
        if h <= 12:
            assert abs(bar.get_y() + bar.get_height() - math.log2(slopes[h - 1])) < 1e-6
    colors = [tuple(bar.get_facecolor()) for bar in w.bars[:12]]
    assert (
        colors[9] != colors[0] and len(set(colors)) == 2
    )  # head 10 alone is highlighted

    m = slopes[9]  # 2^-1.5
    data = np.ma.filled(w.image.get_array(), np.nan)
    assert data.shape == (40, 40)
    ii, jj = np.meshgrid(np.arange(40), np.arange(40), indexing="ij")
    expected = np.where(jj <= ii, -m * (ii - jj), np.nan)
    np.testing.assert_allclose(data, expected, rtol=1e-5, atol=1e-6)
    # one colour range for every head: the steepest head's (head 9 of 12, slope 2^-0.5)
    assert np.allclose(w.image.get_clim(), (-(2.0**-0.5) * 39, 0.0))
    w.update(head=1)
    assert np.allclose(w.image.get_clim(), (-(2.0**-0.5) * 39, 0.0))
    w.update(head=10)

    x, y = w.attn_line.get_data()
    r = math.exp(-m)
    geometric = [
        ((1 - r) * r ** (30 - j) / (1 - r**31)) if j <= 30 else 0.0 for j in range(40)
    ]
    np.testing.assert_allclose(x, np.arange(40))
    np.testing.assert_allclose(y, geometric, rtol=1e-5, atol=1e-7)
    assert (
        abs(w.ax_attn.get_ylim()[1] - 1.12 * max(geometric)) < 1e-6
    )  # the y range follows the top weight
    span = math.log(100) / m
    assert abs(w.span_line.get_xdata()[0] - (30 - span)) < 1e-4
    assert w.span_line.get_visible()
    assert (
        f"slope = {m:.4f}" in w.readout.value
        and f"span = {span:.4f}" in w.readout.value
    )


def test_widget_random_scores_and_readout():
    w = widgets.AlibiWidget(heads=8, head=4, query=20, seq_len=24, scores="random")
    scores = torch.randn(
        widgets.MAX_SEQ_LEN, generator=torch.Generator().manual_seed(0)
    )[:24].double()
    logits = [float(scores[j]) - 0.0625 * (20 - j) for j in range(21)]
    z = sum(math.exp(v) for v in logits)
    expected = [math.exp(v) / z for v in logits] + [0.0] * 3
    np.testing.assert_allclose(w.attn_line.get_ydata(), expected, rtol=1e-5, atol=1e-7)
    assert w.zero_line.get_visible()
    assert "slope = 0.0625" in w.readout.value and "span = 73.6827" in w.readout.value
    assert not w.span_line.get_visible()  # 20 - 73.7 < 0: no key that far back
    assert "rope-readout" in w.readout._dom_classes


def test_widget_clamps_and_syncs_controls():
    w = widgets.AlibiWidget(heads=16, head=14, seq_len=100, query=90)
    w.update(heads=4, seq_len=10)
    assert w.values["head"] == 4 and w.values["query"] == 9
    assert w.controls["head"].max == 4 and w.controls["head"].value == 4
    assert w.controls["query"].max == 9 and w.controls["query"].value == 9
    w.controls["head"].value = 1  # moving a control redraws through update()
    assert w.values["head"] == 1
    assert (
        abs(w.bars[0].get_height() - (math.log2(2.0**-2) + 9)) < 1e-9
    )  # 4 heads: m_1 = 2^-2
    descriptions = {name: c.description for name, c in w.controls.items()}
    assert descriptions == {
        "heads": "heads",
        "head": "head",
        "query": "query m",
        "seq_len": "seq len",
        "scores": "scores",
    }
    assert (
        w.colorbar.mappable is w.image
    )  # the colour bar reads the bias image's fixed range
    with pytest.raises(ValueError, match="scores"):
        w.update(scores="ones")


def test_widget_sweep_and_thumbnail():
    w = widgets.AlibiWidget.example()
    steps = list(w.sweep())
    assert len(steps) == 34
    seen = {key: set() for key in ("heads", "head", "query", "seq_len", "scores")}
    for step in steps:
        w.update(**step)
        for key, value in w.values.items():
            seen[key].add(value)
    assert seen["scores"] == {"zeros", "random"}
    # every control reaches both ends of its range (the head's and the query's follow the
    # example's 8 heads and 32 positions)
    assert {1, widgets.MAX_HEADS} <= seen["heads"] and {1, 8} <= seen["head"]
    assert {0, 31} <= seen["query"] and {2, widgets.MAX_SEQ_LEN} <= seen["seq_len"]
    assert len(seen["heads"]) >= 4 and len(seen["seq_len"]) >= 4
    figure = figures.thumbnail()
    assert tuple(figure.get_size_inches()) == (4.0, 2.5)


# widget: blitting ---------------------------------------------------------------------------------
def canvas_pixels(figure) -> np.ndarray:
    return np.asarray(figure.canvas.buffer_rgba()).copy()


def full_draw_counter(figure) -> list:
    """A one-element list counting full draws (a blit emits no draw_event)."""
    count = [0]
    figure.canvas.mpl_connect(
        "draw_event", lambda event: count.__setitem__(0, count[0] + 1)
    )
    return count


def test_widget_blits_only_when_static_parts_stay():
    w = widgets.AlibiWidget(heads=8, head=4, query=31, seq_len=32)
    full = full_draw_counter(w.figure)
    for values in (
        {"query": 5},
        {"head": 1},
        {"scores": "random"},
        {"query": 0, "head": 8},
    ):
        w.update(**values)
    assert (
        full[0] == 0
    )  # query, head and scores only blit (the y range too: its axis is redrawn)
    w.update(seq_len=64)
    assert (
        full[0] == 1
        and w.ax_attn.get_xlim() == (-0.5, 63.5)
        and w.ax_bias.get_ylim() == (63.5, -0.5)
    )
    w.update(heads=12)
    assert full[0] == 2 and w.ax_slopes.get_xlim() == (0.4, 12.6)
    w.update(heads=12, seq_len=64, query=3)  # the same static parts: blit
    assert full[0] == 2


def test_widget_blitted_canvas_equals_a_full_draw():
    w = widgets.AlibiWidget.example()
    steps = list(w.sweep())
    full = full_draw_counter(w.figure)
    previous = (w.values["heads"], w.values["seq_len"])
    expected_full, checked = 0, []
    for k, step in enumerate(steps):
        before = full[0]
        w.update(**step)
        is_full = (step["heads"], step["seq_len"]) != previous  # the x ranges change
        previous = (step["heads"], step["seq_len"])
        assert full[0] - before == int(is_full), k
        expected_full += is_full
        # the sweep: query (0-7) and head (8-15) blit; heads (16-23) and seq_len (24-31)
        # redraw everything, and so does scores' first frame (32: seq_len back to 32)
        if k in (0, 5, 12, 16, 20, 27, 32, 33):
            blitted = canvas_pixels(w.figure)
            w.figure.canvas.draw()  # everything from scratch, for the same state
            assert np.array_equal(blitted, canvas_pixels(w.figure)), k
            checked.append(is_full)
            full[0] -= 1
    assert expected_full == full[0] == 17 and True in checked and False in checked


def test_widget_blitted_picture_is_the_plain_picture():
    # the picture without any blitting machinery: every artist drawn by one normal draw, in zorder
    w = widgets.AlibiWidget(heads=12, head=10, query=60, seq_len=128, scores="random")
    w.update(head=3, query=100)  # a blit
    blitted = canvas_pixels(w.figure)
    moving, w.redraw.moving = w.redraw.moving, []
    for artist in moving:
        artist.set_animated(False)
    w.figure.canvas.draw()
    plain = canvas_pixels(w.figure)
    for artist in moving:
        artist.set_animated(True)
    w.redraw.moving = moving
    differ = np.any(blitted != plain, axis=-1)
    # the only difference: the bias panel's y tick marks where they meet its left edge (a normal
    # draw puts the ticks on the image, the blit puts the image on the ticks), a pixel each
    rows, cols = np.nonzero(differ)
    assert differ.sum() <= len(w.ax_bias.get_yticks())
    x0 = w.ax_bias.get_window_extent().x0
    assert np.all(np.abs(cols - x0) <= 1.5)
    w.redraw(full=True)


def test_widget_static_png_shows_the_moving_parts_and_blitting_goes_on():
    from PIL import Image

    from rope_lib.figures import static_png

    w = widgets.AlibiWidget(heads=8, head=4, query=120, seq_len=128, scores="random")
    png = np.asarray(
        Image.open(io.BytesIO(static_png(w.figure).data)).convert("RGB")
    ).astype(int)
    assert png.shape[:2] == w.figure.canvas.get_width_height()[::-1]
    red = (
        np.abs(png - [214, 39, 40]).sum(-1) < 60
    )  # HEAD_COLOR: the head's bar, the row, the weights
    height = png.shape[0]
    for ax in (w.ax_slopes, w.ax_bias, w.ax_attn):
        box = ax.get_window_extent()
        panel = red[
            height - int(box.y1) : height - int(box.y0), int(box.x0) : int(box.x1)
        ]
        assert panel.sum() > 20
    # the titles and the attention panel's y tick labels (moving artists) are in the picture
    for text in (w.bias_title, w.attn_title, *w.ax_attn.yaxis.get_ticklabels()[1:3]):
        box = text.get_window_extent()
        ink = png[
            height - int(box.y1) : height - int(box.y0), int(box.x0) : int(box.x1)
        ]
        assert (ink.sum(-1) < 300).sum() > 10, text.get_text()
    # after the savefig, blitting still gives the full draw's picture
    w.update(head=1, query=30)
    blitted = canvas_pixels(w.figure)
    w.figure.canvas.draw()
    assert np.array_equal(blitted, canvas_pixels(w.figure))


def test_readout_names_every_control_it_depends_on():
    # moving "heads" can keep the chosen head's slope; the readout must still change
    from rope_lib.widgets.alibi import AlibiWidget

    w = AlibiWidget()
    w.update(heads=8, head=4)
    before = w.readout.value
    w.update(heads=11)
    assert w.readout.value != before and "head 4 of 11" in w.readout.value
    w.update(seq_len=125)
    assert "seq len 125" in w.readout.value


def test_check_4_hints_at_scores_given_instead_of_weights():
    j = torch.arange(8)
    masked_logits = (
        (-0.5 * (5 - j)).double().masked_fill(j > 5, float("-inf"))
    )  # no softmax
    feedback = ex.check_query_weights(masked_logits)
    assert (
        not feedback.ok
        and "softmax" in feedback.message
        and "must get weight 0" not in feedback.message
    )
    unmasked = (-0.5 * (5 - j)).double()
    assert "softmax" in ex.check_query_weights(unmasked).message
    symmetric = (-0.5 * (5 - j).abs()).double()
    assert "softmax" in ex.check_query_weights(symmetric).message
    solution = (-0.5 * (5 - j)).double().masked_fill(j > 5, float("-inf")).softmax(-1)
    assert (
        ex.check_query_weights(solution.tolist()).ok
        and ex.check_query_weights(solution.numpy()).ok
    )
    assert not ex.check_query_weights(solution.to(torch.complex128)).ok
    assert "NaN" in ex.check_query_weights(torch.full((8,), float("nan"))).message


def test_checkers_read_lists_with_infinities_and_refuse_complex_slopes():
    bias = [
        [-0.25 * (i - j) if j <= i else float("-inf") for j in range(5)]
        for i in range(5)
    ]
    assert ex.check_causal_bias(bias).ok and ex.check_causal_bias(np.array(bias)).ok
    slopes = ex.SLOPES_12.tolist()
    assert ex.check_twelve_head_slopes(tuple(slopes)).ok
    assert not ex.check_twelve_head_slopes(
        torch.tensor(slopes, dtype=torch.complex64)
    ).ok
    assert (
        "meta"
        in ex.check_twelve_head_slopes(torch.tensor(slopes, device="meta")).message
    )


def test_rope_bound_is_not_monotonic_and_an_aligned_key_scores_its_full_size():
    # lesson 8, "Against RoPE's long-term decay": a bound that falls on average, not the score
    from rope_lib import apply_rope
    from rope_lib.analysis import long_term_decay_bound

    bound = long_term_decay_bound(torch.arange(0, 1025), head_dim=128)
    assert int((bound[1:] > bound[:-1]).sum()) > 100
    q = torch.randn(
        128, dtype=torch.float64, generator=torch.Generator().manual_seed(8)
    )
    for delta in (1, 100, 1000, 5000):
        k = apply_rope(q[None], torch.tensor([delta]))[0]
        score = apply_rope(q[None], torch.tensor([delta]))[0] @ k
        assert abs(score / (q.norm() * k.norm()) - 1) < 1e-12
