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

The lesson's still figures are in rope_lib.figures.alibi.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.ticker import FormatStrFormatter, MaxNLocator

from ..alibi import alibi_bias, alibi_query_attention, alibi_slopes, alibi_span
from ..figures.style import fixed_ylabel
from ..language import N_, _, _fig
from .base import TIGHT_LINES, Control, LiveWidget

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
        Control("heads", N_("heads"), "int", 1, MAX_HEADS, default=8),
        Control("head", N_("head"), "int", 1, lambda v: v["heads"], default=4),
        Control("query", N_("query m"), "int", 0, lambda v: v["seq_len"] - 1, default=31),
        Control("seq_len", N_("seq len"), "int", 2, MAX_SEQ_LEN, default=32),
        Control("scores", N_("scores"), "choice", options=SCORES, option_label=_,
                default="zeros"),
    )  # fmt: skip
    # the controls in a column left of the figure: long sliders, and the picture on the
    # projector's screen with them
    ROWS = (("heads",), ("head",), ("seq_len",), ("query",), ("scores",))
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    CLAMP = True
    SWEPT = ("query", "head", "heads", "seq_len", "scores")

    def __init__(self, figure=None, **values):
        self.random_scores = _random_scores(0)
        self._bias_cache = {}  # (seq_len, heads) -> every head's bias: new on full redraws
        super().__init__(figure, **values)

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
