"""The ALiBi lesson's live widget: the slopes, one head's bias matrix, and where one query looks.

    AlibiWidget(heads=8, head=4, query=31, seq_len=32, scores="zeros")

Three panels, their artists created once and changed in place by update(), which redraws by
blitting (rope_lib.widgets.Redrawer): the axes, labels and tick labels are drawn once into a
background and only what moves is drawn on top. Only a change of the number of heads or of the
sequence length moves static parts (the x ranges and their tick labels) and draws everything again.
  slopes      a bar per head (log2 scale: geometric slopes fall on a straight line), the chosen
              head highlighted;
  bias        the chosen head's causal bias matrix -mu_h * (m - n) (query position m, key
              position n, slope mu_h: the course's notation), the masked future in gray, the
              query's row marked;
  attention   the weights the query at position m puts on each key n, for content scores that
              are all zero (position alone) or random (seeded), with the head's effective span.

The lesson's still figures are here too, each drawn from numbers the lesson computes:
one_query_figure (content scores, the bias line and the attention of one query),
slopes_figure (log2 of the slopes for several head counts), bias_matrices_figure (every
head's causal bias on one colour scale), symmetric_bias_figure (the encoder's -mu_h |m - n|),
reach_figure (a query's weight on the key Delta back, and its cumulative reach),
decay_comparison_figure (RoPE's long-term decay bound against ALiBi's exp(-mu_h Delta)) and
attention_maps_figure (the attention maps of a freshly initialised ALiBi block).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, MaxNLocator
from matplotlib.transforms import offset_copy

from ..alibi import alibi_bias, alibi_query_attention, alibi_slopes, alibi_span
from ..language import N_, _, _fig
from .base import TIGHT_LINES, Control, LiveWidget, cumulative_steps, moves
from .style import integer_ticks, legend_below

MAX_HEADS = 16
MAX_SEQ_LEN = 128
SCORES = (N_("zeros"), N_("random"))
HEAD_COLOR, OTHER_COLOR, SPAN_COLOR = "#d62728", "#9bb7d4", "#2ca02c"


def _random_scores(seed: int = 0) -> torch.Tensor:
    """Content scores q_m . k_n / sqrt(d) of one query against MAX_SEQ_LEN keys: standard normal."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(MAX_SEQ_LEN, generator=generator)


class AlibiWidget(LiveWidget):
    """Choose the number of heads, a head, a query position and a sequence length; see the slopes,
    the head's bias matrix and the query's attention over the past."""

    CONTROLS = (
        Control("heads", N_("heads"), "int", 1, MAX_HEADS),
        Control("head", N_("head"), "int", 1, lambda v: v["heads"]),
        Control("query", N_("query m"), "int", 0, lambda v: v["seq_len"] - 1),
        Control("seq_len", N_("seq len"), "int", 2, MAX_SEQ_LEN),
        Control("scores", N_("scores"), "choice", options=SCORES, option_label=_),
    )
    # the controls in a column left of the figure: long sliders, and the picture on the
    # projector's screen with them
    ROWS = (("heads",), ("head",), ("seq_len",), ("query",), ("scores",))
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    CLAMP = True

    def __init__(
        self,
        heads: int = 8,
        head: int = 4,
        query: int = 31,
        seq_len: int = 32,
        scores: str = "zeros",
    ):
        self.random_scores = _random_scores(0)
        self._bias_cache = {}  # (seq_len, heads) -> every head's bias: new on full redraws
        super().__init__(
            heads=heads, head=head, query=query, seq_len=seq_len, scores=scores
        )

    # ------------------------------------------------------------------ the figure, once
    def build(self, figure):
        # fixed panel positions (figure fractions, 425 x 330 px): no layout engine at each draw.
        # Above, the bias matrix (square: 0.26 x 425 = 0.335 x 330 px) with its colour bar
        # and the slopes; below, across, where the query looks.
        self.ax_bias = figure.add_axes((0.2, 0.56, 0.26, 0.34))
        ax_cbar = figure.add_axes((0.47, 0.56, 0.016, 0.34))
        self.ax_slopes = figure.add_axes((0.73, 0.56, 0.24, 0.34))
        self.ax_attn = figure.add_axes((0.2, 0.14, 0.77, 0.22))
        self._build_slopes(self.ax_slopes)
        self._build_bias(self.ax_bias, ax_cbar)
        self._build_attention(self.ax_attn)
        # few tick labels (text is most of the cost of a redraw); heads, keys and queries at
        # integers
        for axis in (
            self.ax_slopes.xaxis,
            self.ax_bias.xaxis,
            self.ax_bias.yaxis,
            self.ax_attn.xaxis,
            self.ax_attn.yaxis,
        ):
            axis.set_major_locator(
                MaxNLocator(nbins=4, integer=axis is not self.ax_attn.yaxis)
            )
        self.ax_slopes.xaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))
        # blitting: what changes at every step is drawn on top of a background drawn once. Per
        # panel in the order of a normal draw (zorder: y axis 1.5 < bars, image, lines < spines
        # < title), so that a blitted picture is the same as a plain full draw (but for the
        # pixel where each of the bias panel's y ticks meets the image's edge). Spines move
        # where moving artists touch them (the bars' feet, the image, the zero weights and the
        # span line), since a normal draw puts the frame on top; the attention panel's y axis
        # moves because its range follows the largest weight (its tick labels change at most
        # steps). The colour bar is static: its range changes with the head count and length.
        return [
            *self.bars,
            *self.ax_slopes.spines.values(),
            self.image,
            self.row_line,
            *self.ax_bias.spines.values(),
            self.bias_title,
            self.ax_attn.yaxis,
            self.zero_line,
            self.attn_line,
            self.span_line,
            *self.ax_attn.spines.values(),
            self.attn_title,
        ]

    def _build_slopes(self, ax):
        # one bar per possible head, hidden beyond the chosen head count; drawn on a log2 axis
        # by hand (bars from log2 = -9 up to log2(slope), fixed ticks) because a log-scale axis
        # recomputes its many ticks at every draw
        self.floor = -9.0
        self.bars = ax.bar(
            np.arange(1, MAX_HEADS + 1),
            np.ones(MAX_HEADS),
            bottom=self.floor,
            width=0.7,
            color=OTHER_COLOR,
        )
        ax.set_ylim(self.floor, 0.0)
        ax.set_yticks([0, -2, -4, -6, -8], ["1", "1/4", "1/16", "1/64", "1/256"])
        ax.set_xlabel(_fig("head h"))
        ax.set_title(_fig("slope μ_h"))

    def _build_bias(self, ax, ax_cbar):
        # bias matrix of the chosen head; NaN (the masked future) drawn in gray. One colour
        # range for every head (that of the steepest head, for this head count and length) and
        # a colour bar: steep heads go dark within a few keys, gentle heads stay bright.
        cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
        self.image = ax.imshow(
            np.zeros((2, 2)), cmap=cmap, interpolation="nearest", aspect="equal"
        )
        (self.row_line,) = ax.plot([], [], color=HEAD_COLOR, lw=1.4)
        ax.set_xlabel(_fig("key n"))
        ax.set_ylabel(_fig("query m"))
        self.bias_title = ax.set_title(" ")
        self.colorbar = self.figure.colorbar(self.image, cax=ax_cbar)
        ax_cbar.tick_params(labelsize=10, length=2, pad=2)
        ax_cbar.yaxis.set_major_locator(MaxNLocator(nbins=3, integer=True))

    def _build_attention(self, ax):
        # attention of the query over the keys (gray dashed: the same head with zero scores;
        # green dotted: the key at distance span from the query)
        (self.zero_line,) = ax.plot([], [], color="0.6", lw=1.2, ls="--")
        (self.attn_line,) = ax.plot(
            [], [], color=HEAD_COLOR, lw=1.5, marker="o", ms=2.5
        )
        self.span_line = ax.axvline(0.0, color=SPAN_COLOR, lw=1.6, ls=":")
        ax.set_xlabel(_fig("key n"))
        ax.set_ylabel(_fig("weight"))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%.3f"))
        fixed_ylabel(ax, "0.000")
        self.attn_title = ax.set_title(" ")

    # ------------------------------------------------------------------ state and math
    def compute(self, v):
        slopes = alibi_slopes(v["heads"])
        slope = float(slopes[v["head"] - 1])
        n, i = v["seq_len"], v["query"]
        scores = self.random_scores[:n] if v["scores"] == "random" else torch.zeros(n)
        weights = alibi_query_attention(scores, slope, i)
        zero_weights = alibi_query_attention(torch.zeros(n), slope, i)
        span = float(alibi_span(slope))
        distance = i - torch.arange(n)
        within = float(weights[(distance >= 0) & (distance < span)].sum())
        return {
            "slopes": slopes,
            "slope": slope,
            "span": span,
            "bias": self._all_biases(n, v["heads"])[0][v["head"] - 1].clone(),
            "weights": weights,
            "zero_weights": zero_weights,
            "within_span": within,
        }

    def _all_biases(self, n: int, heads: int):
        """alibi_bias(n, heads) and the same as a float array with NaN for the masked future
        (what the image shows), computed once per (seq_len, heads)."""
        key = (n, heads)
        if key not in self._bias_cache:
            bias = alibi_bias(n, heads)
            image = bias.numpy().copy()
            image[~np.isfinite(image)] = np.nan
            self._bias_cache = {key: (bias, image)}  # keep only the latest
        return self._bias_cache[key]

    # ------------------------------------------------------------------ drawing
    def static_key(self, s):
        return (self.values["heads"], self.values["seq_len"])

    def draw_static(self, s):
        # the x ranges (and the bias image's size) change: static parts move
        n_heads, n = self.static_key(s)
        self.ax_slopes.set_xlim(0.4, n_heads + 0.6)
        self.ax_bias.set_xlim(-0.5, n - 0.5)
        self.ax_bias.set_ylim(n - 0.5, -0.5)
        self.ax_attn.set_xlim(-0.5, n - 0.5)
        # one colour range for all heads: the steepest head's, so heads look different
        low = -float(s["slopes"].max()) * (n - 1)
        self.image.set_clim(low if low < 0 else -1.0, 0.0)

    def draw(self, s):
        v = self.values
        n_heads, head, n, i = v["heads"], v["head"], v["seq_len"], v["query"]
        for h, bar in enumerate(self.bars, start=1):
            visible = h <= n_heads
            bar.set_visible(visible)
            if visible:
                bar.set_height(math.log2(float(s["slopes"][h - 1])) - self.floor)
                bar.set_color(HEAD_COLOR if h == head else OTHER_COLOR)
        self.image.set_data(self._all_biases(n, n_heads)[1][head - 1])
        self.image.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
        self.row_line.set_data([-0.5, i + 0.5], [i, i])
        self.bias_title.set_text(
            _fig("head {head}: -{slope:.4g}·(m - n)").format(
                head=head, slope=s["slope"]
            )
        )
        keys = np.arange(n)
        weights = s["weights"].numpy()
        self.attn_line.set_data(keys, weights)
        self.zero_line.set_data(keys, s["zero_weights"].numpy())
        self.zero_line.set_visible(v["scores"] != "zeros")
        edge = i - s["span"]
        self.span_line.set_xdata([edge, edge])
        self.span_line.set_visible(edge >= -0.5)
        top = float(max(weights.max(), s["zero_weights"].max()))
        self.ax_attn.set_ylim(
            0.0, 1.12 * top
        )  # its y axis is a moving artist: no full draw
        self.attn_title.set_text(_fig("query m = {query}").format(query=i))

    def readout_text(self) -> str:
        """The readout: three short lines (HTML, lines joined by <br>)."""
        v, s = self.values, self.state
        lines = (
            _("head {head} of {heads}, query m = {query} of seq len {seq_len}").format(
                head=v["head"], heads=v["heads"], query=v["query"], seq_len=v["seq_len"]
            ),
            _("slope = {slope:.4f}, span = {span:.4f}").format(
                slope=s["slope"], span=s["span"]
            ),
            _("weight on n = m: {weight:.4f}, within the span = {within:.4f}").format(
                weight=float(s["weights"][v["query"]]), within=s["within_span"]
            ),
        )
        return "<br>".join(lines)


def fixed_ylabel(ax, widest: str) -> None:
    """Put ax's y label where matplotlib would beside tick labels as wide as `widest`, as a
    static text: the y axis is redrawn at every step (its range follows the data), its label
    need not be, and the automatic placement measures every tick label."""
    figure = ax.figure
    ylabel, tick = ax.yaxis.label, ax.yaxis.get_major_ticks()[0]
    width, _height, _descent = (
        figure.canvas.get_renderer().get_text_width_height_descent(
            widest, tick.label1.get_fontproperties(), ismath=False
        )
    )
    # left of the axes by tick length + pad + label width + labelpad
    offset = (
        tick.get_tick_padding()
        + tick.get_pad()
        + width * 72 / figure.dpi
        + ax.yaxis.labelpad
    )
    ylabel.set_visible(False)
    ax.yaxis.set_label_coords(0.0, 0.5)  # hidden: no automatic placement
    ax.text(
        0.0,
        0.5,
        ylabel.get_text(),
        transform=offset_copy(ax.transAxes, figure, x=-offset, units="points"),
        rotation=90,
        rotation_mode="anchor",
        ha="center",
        va="bottom",
        fontproperties=ylabel.get_fontproperties(),
    )


def _steps() -> list[dict]:
    """30 updates like a learner's session: mostly query, head and scores (blitted), with a few
    changes of the sequence length and of the number of heads (7 full redraws), every control
    through its range."""
    m = moves(
        ("query", 24, 16, 8, 0), ("head", 1, 3, 6, 8), ("seq_len", 128),
        ("query", 127, 96, 64), ("scores", "random"), ("head", 1, 4, 8), ("heads", 12),
        ("head", 10, 12), ("query", 100, 40), ("scores", "zeros"), ("seq_len", 64),
        ("query", 63),
    )  # fmt: skip
    m += [{"heads": 16, "head": 16}, {"head": 9}, {"head": 2}, {"heads": 1, "head": 1}]
    m += [{"seq_len": 8, "query": 5}, dict(heads=8, head=4, seq_len=32, query=31)]
    start = dict(heads=8, head=4, query=31, seq_len=32, scores="zeros")
    return cumulative_steps(start, m)


WIDGETS = {"alibi": (AlibiWidget, _steps())}


def thumbnail() -> Figure:
    """The ALiBi lesson in one picture: the 8 geometric slopes and where each head's attention goes."""
    figure = Figure(figsize=(4.0, 2.5), dpi=80)
    ax_slopes, ax_attn = figure.subplots(1, 2, gridspec_kw={"width_ratios": (1, 1.4)})
    slopes = alibi_slopes(8)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, 8))
    ax_slopes.bar(np.arange(1, 9), slopes.numpy(), color=colors)
    ax_slopes.set_yscale("log", base=2)
    ax_slopes.set_title(_fig("slopes $2^{-h}$"), fontsize=9)
    ax_slopes.set_xlabel(_fig("head"), fontsize=8)
    ax_slopes.set_xticks([1, 4, 8])
    n = 64
    weights = alibi_query_attention(torch.zeros(8, n), slopes, n - 1)
    for h in range(8):
        ax_attn.plot(np.arange(n), weights[h].numpy(), color=colors[h], lw=1.2)
    ax_attn.set_yscale("log")
    ax_attn.set_ylim(1e-4, 1.0)
    ax_attn.set_title(_fig("query {query}: attention").format(query=n - 1), fontsize=9)
    ax_attn.set_xlabel(_fig("key n"), fontsize=8)
    for ax in (ax_slopes, ax_attn):
        ax.tick_params(labelsize=7)
    figure.suptitle(_fig("ALiBi: a distance penalty per head"), fontsize=10)
    figure.subplots_adjust(left=0.12, right=0.97, bottom=0.18, top=0.78, wspace=0.35)
    return figure


# ---------------------------------------------------------------------- still figures
def _inverse(slope) -> str:
    """A slope 2^-k written as 1/2^k, as the lesson's titles write it."""
    return f"1/{round(1 / float(slope))}"


def _head_colors(n_heads: int = 8):
    return plt.get_cmap("viridis")(np.linspace(0, 0.9, n_heads))


def one_query_figure(
    content, bias_row, without, with_alibi, m: int, mu: float
) -> Figure:
    """One query m of one head with slope mu: its content scores q_m . k_n / sqrt(d)
    (left), the bias -mu (m - n) (middle), and the softmax with the bias (red) against the
    softmax of the content alone (gray bars, right)."""
    fig = Figure(figsize=(6.4, 3.0), dpi=100, layout="constrained")
    axes = fig.subplots(1, 3)
    n = np.arange(len(content))
    axes[0].bar(n, np.asarray(content), color="tab:blue")
    axes[0].set_title(_fig("content q·k/√d"))
    axes[1].bar(n, np.asarray(bias_row), color="tab:purple")
    axes[1].set_title(_fig("bias, μ = {mu}").format(mu=mu))
    axes[2].bar(n, np.asarray(without), color="0.75", label=_fig("content only"))
    axes[2].plot(n, np.asarray(with_alibi), "o-", color="tab:red", ms=3,
                 label=_fig("content + bias"))  # fmt: skip
    axes[2].set_title(_fig("attention, m = {m}").format(m=m))
    fig.legend(
        *axes[2].get_legend_handles_labels(), loc="outside lower center", ncols=2
    )
    for ax in axes:
        ax.set_xlabel(_fig("key n"))
        integer_ticks(ax.xaxis)
    return fig


def slopes_figure(head_counts=(8, 12, 16)) -> Figure:
    """log2 of alibi_slopes(H) against the head h, one line per head count: a power of two
    gives a straight line; 12 heads take the 8-head slopes and 4 of the 16-head ones."""
    fig = Figure(figsize=(6.4, 2.8), dpi=100)
    ax = fig.subplots()
    for H, marker, size in zip(head_counts, ("o", "s", "^"), (10, 5, 5)):
        ax.plot(np.arange(1, H + 1), np.log2(alibi_slopes(H).numpy()), marker=marker,
                ms=size, mfc="none" if H == head_counts[0] else None, ls="-", lw=0.8,
                label=_fig("{H} heads").format(H=H))  # fmt: skip
    ax.set_xlabel(_fig("head h"))
    ax.set_ylabel(_fig("log2(slope μ_h)"))
    ax.set_title(_fig("12 heads = the 8-head slopes + 4 of the 16-head ones"))
    ax.legend(frameon=False)
    integer_ticks(ax.xaxis)
    fig.tight_layout()
    return fig


def bias_matrices_figure(bias) -> Figure:
    """Every head's causal bias matrix ([heads, L, L], alibi_bias) on one colour scale, the
    masked future (-inf) in gray; 8 heads in two rows of four."""
    bias = np.asarray(bias)
    heads, L = bias.shape[0], bias.shape[-1]
    cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
    slopes = alibi_slopes(heads)
    fig = Figure(figsize=(6.4, 3.8), dpi=100)
    axes = fig.subplots(2, math.ceil(heads / 2))
    for h, ax in enumerate(axes.flat):
        shown = np.where(np.isfinite(bias[h]), bias[h], np.nan)
        image = ax.imshow(shown, cmap=cmap, vmin=-float(slopes[0]) * (L - 1), vmax=0.0,
                          interpolation="nearest")  # fmt: skip
        ax.set_title(f"μ = {_inverse(slopes[h])}")
        ax.set_xticks([0, L - 1])
        ax.set_yticks([0, L - 1])
    fig.colorbar(image, ax=axes, fraction=0.025, label=_fig("bias"))
    fig.supxlabel(_fig("key n"))
    fig.supylabel(_fig("query m"))
    return fig


def symmetric_bias_figure(symmetric, heads=(0, 3, 7)) -> Figure:
    """The encoder's symmetric bias -mu_h |m - n| ([heads, L, L], alibi_bias with
    causal=False) of a few heads, on the colour scale of the steepest head."""
    symmetric = np.asarray(symmetric)
    L = symmetric.shape[-1]
    steepest = float(alibi_slopes(symmetric.shape[0])[0])
    fig = Figure(figsize=(6.4, 2.4), dpi=100)
    axes = fig.subplots(1, len(heads))
    for ax, h in zip(axes, heads):
        image = ax.imshow(symmetric[h], cmap="viridis", vmin=-steepest * (L - 1), vmax=0,
                          interpolation="nearest")  # fmt: skip
        ax.set_title(_fig("head {h}, causal=False").format(h=h + 1))
        ax.set_xlabel(_fig("key n"))
    axes[0].set_ylabel(_fig("query m"))
    fig.colorbar(image, ax=axes, fraction=0.03)
    return fig


def reach_figure(weights, shown: int = 2000) -> Figure:
    """A query's weights over its past ([heads, m + 1], alibi_query_attention), by distance:
    the weight on the key Delta back (log scale, the first `shown` distances, left) and the
    attention within distance Delta (right)."""
    weights = torch.as_tensor(weights)
    fig = Figure(figsize=(6.4, 3.2), dpi=100, layout="constrained")
    left, right = fig.subplots(1, 2)
    colors = _head_colors(weights.shape[0])
    dist = np.arange(weights.shape[-1])
    for h in range(weights.shape[0]):
        w = weights[h].flip(0).numpy()  # by distance Delta = 0, 1, 2, ...
        left.plot(dist[:shown], w[:shown], color=colors[h],
                  label=_fig("head {h}").format(h=h + 1))  # fmt: skip
        right.plot(dist, np.cumsum(w), color=colors[h])
    left.set_yscale("log")
    left.set_ylim(1e-6, 1)
    left.set_xlabel(_fig("distance Δ = m - n"))
    left.set_ylabel(_fig("weight (log scale)"))
    left.set_title(_fig("weight on the key Δ back"))
    fig.legend(loc="outside right center", frameon=False)
    right.set_xscale("log")
    right.set_xlabel(_fig("distance Δ (log scale)"))
    right.set_ylabel(_fig("attention within distance Δ"))
    right.set_title(_fig("cumulative: reach"))
    return fig


def decay_comparison_figure(
    delta, rope_rel, slopes, heads=(0, 3, 7), d: int = 128
) -> Figure:
    """RoPE's long-term decay bound relative to its value at 0 (black) against ALiBi's
    factor exp(-mu_h Delta) on the weight for a few heads, over the distances `delta`."""
    delta = torch.as_tensor(delta)
    colors = _head_colors(len(slopes))
    fig = Figure(figsize=(6.4, 3.2), dpi=100)
    ax = fig.subplots()
    ax.plot(delta.numpy(), np.asarray(rope_rel), color="black", lw=1.2,
            label=_fig("RoPE: bound(Δ) / bound(0), d = {d}").format(d=d))  # fmt: skip
    for h in heads:
        label = _fig("ALiBi head {h}: exp(-μΔ), μ = {mu}")
        ax.plot(delta.numpy(), torch.exp(-slopes[h] * delta).numpy(), color=colors[h],
                lw=1.2, label=label.format(h=h + 1, mu=_inverse(slopes[h])))  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1.2)
    ax.set_xlim(0, int(delta[-1]))
    ax.set_xlabel(_fig("distance Δ"))
    ax.set_ylabel(_fig("relative size (log scale)"))
    legend_below(ax, ncol=2)
    fig.tight_layout()
    return fig


def attention_maps_figure(attn, heads=(0, 2, 5, 7), size: int = 48) -> Figure:
    """The attention maps ([batch, heads, m, n]) of a few heads of an ALiBi block, the
    first `size` queries and keys of batch item 0, on one colour scale."""
    attn = torch.as_tensor(attn)
    slopes = alibi_slopes(attn.shape[1])
    fig = Figure(figsize=(6.4, 2.4), dpi=100, layout="constrained")
    axes = fig.subplots(1, len(heads))
    for ax, h in zip(axes, heads):
        frame = attn[0, h, :size, :size].numpy()
        image = ax.imshow(
            frame, cmap="magma", vmin=0, vmax=0.5, interpolation="nearest"
        )
        title = _fig("head {h}\nμ = {mu}").format(h=h + 1, mu=_inverse(slopes[h]))
        ax.set_title(title)
        ax.set_xlabel(_fig("key n"))
    axes[0].set_ylabel(_fig("query m"))
    fig.colorbar(image, ax=axes, shrink=0.8, label=_fig("weight"))
    return fig
