"""Lesson 10's live widget: the wavelength-cutoff explorer.

For a head of `head_dim` dimensions, RoPE base `base` and a trained length L, it shows
- each pair's wavelength lambda_i = 2 pi / theta_i against L (log scale), with the cutoffs
  L/alpha and L/beta, each pair colored by what the chosen method does to it: kept,
  divided by s or blended (rope_lib.figures.temperature.PAIR_NAMES);
- the fraction of its frequency each pair keeps (implied_ramp: the ramp gamma_i of YaRN and
  Llama 3, where Llama 3 calls it the smooth factor; NTK's curve; PI's zero);
- old against new frequencies for PI, NTK, YaRN and Llama 3 overlaid, the chosen one in bold.

alpha and beta are the cutoffs in turns per L: pairs that turn fewer than alpha times within L are
interpolated, more than beta times kept. They are YaRN's beta_slow and beta_fast and Llama 3's
low_freq_factor and high_freq_factor (Llama 3.1 ships 1 and 4, YaRN's paper 1 and 32).
All numbers come from rope_lib.scaling.

The lesson's still figures are in rope_lib.figures.context_extension and
rope_lib.figures.temperature.
"""

from __future__ import annotations

import matplotlib.colors
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from matplotlib.transforms import offset_copy

from ..extension_analysis import (
    first_pair_longer_than,
    implied_ramp,
    pair_regimes,
    wavelengths,
)
from ..figures.context_extension import REGIME_COLORS
from ..figures.style import integer_ticks
from ..figures.temperature import PAIR_NAMES
from ..language import N_, _, _fig, get_language
from ..scaling import rope_frequencies, yarn_correction_range
from .base import TIGHT_LINES, Control, LiveWidget, plain_text

METHODS = ("PI", "NTK", "YaRN", "Llama 3")
METHOD_COLORS = {
    "PI": "#9467bd",
    "NTK": "#8c564b",
    "YaRN": "#d62728",
    "Llama 3": "#17becf",
}
LENGTHS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
BASES = (1000.0, 10000.0, 50000.0, 100000.0, 500000.0, 1000000.0)
HEAD_DIMS = (16, 32, 64, 96, 128, 256)
# Fixed y ranges that hold every control setting, so that moving a slider redraws only the moving
# artists (blitting): wavelengths run from 2 pi (pair 0) to 2 pi 1e6^(254/256) ~ 5.6e6, the lines
# from L/beta >= 512/64 = 8 to s L <= 32 * 32768 ~ 1.05e6; new/old frequency from 1/32 to 1.
WAVE_YLIM = (3.0, 1.5e7)
FREQ_YLIM = (1 / 32 / 1.4, 1.4)


def method_frequencies(
    method: str,
    head_dim: int,
    base: float,
    factor: float,
    length: int,
    alpha: float,
    beta: float,
):
    """(inv_freq, attention_factor) of one of METHODS, through rope_frequencies: alpha and
    beta are YaRN's beta_slow and beta_fast, Llama 3's low and high_freq_factor."""
    cutoffs = {"original_max_position_embeddings": length}
    params = {
        "PI": ("linear", {}),
        "NTK": ("ntk", {}),
        "YaRN": ("yarn", dict(cutoffs, beta_fast=beta, beta_slow=alpha)),
        "Llama 3": (
            "llama3",
            dict(cutoffs, low_freq_factor=alpha, high_freq_factor=beta),
        ),
    }
    if method not in params:
        raise ValueError(
            _("method must be one of {methods}, got {method!r}").format(
                methods=METHODS, method=method
            )
        )
    rope_type, extra = params[method]
    return rope_frequencies(rope_type, head_dim, base, factor=factor, **extra)


def cutoff_legend(figure, slot, method_lines):
    """One legend for the explorer's whole figure, centred in its grid slot: what each
    pair gets (kept, blended, divided by s), the guide lines of the wavelength panel,
    and the methods."""
    regime_handles = [
        Line2D([], [], ls="", marker="o", color=c, label=_fig(name))
        for name, c in zip(PAIR_NAMES, REGIME_COLORS)
    ]
    guide_handles = [
        Line2D([], [], color="black", lw=1.5, label="L"),
        Line2D([], [], color="gray", lw=1, ls="--", label="L/α, L/β"),
        Line2D([], [], color="black", lw=1, ls=":", label="sL"),
    ]
    handles = regime_handles + guide_handles + list(method_lines)
    box = slot.get_position(figure)
    return figure.legend(
        handles=handles,
        loc="center",
        bbox_to_anchor=(box.x0 + box.width / 2 - 0.03, box.y0 + box.height / 2),
        ncol=2,
        frameon=False,
        fontsize=9.5,
        handlelength=1.2,
        columnspacing=0.7,
        handletextpad=0.3,
        labelspacing=0.25,
        borderaxespad=0.0,
    )


def _band(method: str, state: dict) -> str:
    """What the chosen method blends, in words."""
    if method == "YaRN":
        # the pairs YaRN blends, by its own rounding of the cutoffs
        low, high = state["correction_range"]
        return _("YaRN's correction range = {low}..{high}").format(low=low, high=high)
    if method == "Llama 3":
        # the pairs whose wavelength lies between L/beta and L/alpha
        blended = np.nonzero(state["regimes"].numpy() == 1)[0]
        pairs = f"{blended.min()}..{blended.max()}" if len(blended) else _("none")
        return _("Llama 3's smooth band = {pairs}").format(pairs=pairs)
    return _("{method} treats every pair alike").format(method=method)


class WavelengthCutoffExplorer(LiveWidget):
    """Controls: "scale s", "L", "alpha", "beta", "base", "head_dim", "method"."""

    CONTROLS = (
        Control("method", N_("method"), "choice", options=METHODS, default="YaRN"),
        Control("scale s", N_("scale s"), "float", 1.5, 32, 0.5, default=4.0),
        Control("L", "L", "select", options=LENGTHS, default=4096),
        Control("base", N_("base"), "select", options=BASES, default=10000.0),
        Control("head_dim", N_("head_dim"), "select", options=HEAD_DIMS, default=128),
        Control("alpha", "alpha", "float", 0.25, 3, 0.25, default=1.0),
        Control("beta", "beta", "float", 4, 64, 1, default=32.0),
    )
    # the controls in a column left of the figure, a short readout under them: long
    # sliders, and the three panels on the projector's screen with them
    ROWS = tuple((c.name,) for c in CONTROLS)
    BESIDE, READOUT_WIDTH, READOUT = "side", "242px", TIGHT_LINES
    FIGSIZE = (4.15, 3.3)
    SWEPT = ("method", "scale s", "L", "head_dim", "base", "alpha", "beta")

    def check(self, v):
        if not v["beta"] > v["alpha"]:
            raise ValueError(
                _("beta must be > alpha, got alpha={alpha}, beta={beta}").format(
                    alpha=v["alpha"], beta=v["beta"]
                )
            )

    # --- figure, built once ---------------------------------------------------------------
    def build(self, fig):
        # 415 x 330 px: three panels and the legend in a 2 x 2 grid; each panel's title
        # names its y axis
        gs = fig.add_gridspec(
            2,
            2,
            left=0.13,
            right=0.975,
            bottom=0.155,
            top=0.92,
            wspace=0.42,
            hspace=0.9,
        )
        self.ax_wave, self.ax_keep, self.ax_freq = (
            fig.add_subplot(gs[i // 2, i % 2]) for i in range(3)
        )
        self.legend_slot = gs[1, 1]
        # Fixed positions for the axis labels, few ticks: matplotlib then skips measuring
        # every tick label on every draw (most of a redraw's cost). Pairs tick at integers.
        # (a CJK font's taller tick labels need the label a little lower)
        label_y = -0.3 if get_language() == "en" else -0.33
        for ax in (self.ax_wave, self.ax_keep, self.ax_freq):
            ax.xaxis.set_label_coords(0.5, label_y)
            integer_ticks(ax.xaxis, nbins=4)
            ax.set_xlabel(_fig("pair i"))
        self._build_wave(self.ax_wave)
        self._build_keep(self.ax_keep)
        self._build_freq(self.ax_freq)
        cutoff_legend(fig, self.legend_slot, self.method_lines.values())
        # Everything above is static except these, redrawn on top of a saved background each
        # update; only a new head_dim (the x range of all three panels) redraws the whole
        # figure.
        self._moving = [
            self.line_L,
            self.line_alpha,
            self.line_beta,
            self.line_new,
            self.wave_points,
            self.label_L,
            self.keep_line,
            self.keep_points,
            self.label_method,
            self.guide_div,
            *self.method_lines.values(),
        ]
        self._regime_rgba = matplotlib.colors.to_rgba_array(REGIME_COLORS)
        return self._moving

    def _build_wave(self, ax):
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())
        # every other decade of WAVE_YLIM: 10^1, 10^3, ...
        ax.yaxis.set_major_locator(LogLocator(numticks=4))
        ax.set_ylim(*WAVE_YLIM)
        self.wave_points = ax.scatter([], [], s=14, zorder=3)
        self.line_L = ax.axhline(1.0, color="black", lw=1.5)  # L
        # the cutoffs drawn over L (L / alpha = L at YaRN's alpha = 1): dashes on black
        cutoff = dict(color="0.6", lw=1.2, ls="--", zorder=2.5)
        self.line_alpha = ax.axhline(1.0, **cutoff)  # L / alpha
        self.line_beta = ax.axhline(1.0, **cutoff)  # L / beta
        self.line_new = ax.axhline(1.0, color="black", lw=1, ls=":")  # s L
        ax.set_title(_fig("wavelength (tokens)"))
        # the changing part as a short moving label on the L line (text is the costly part
        # of a draw), on white over nearby lines
        self.label_L = ax.text(
            0.02,
            1.0,
            "",
            transform=offset_copy(
                ax.get_yaxis_transform(), ax.figure, y=2, units="points"
            ),
            ha="left",
            va="bottom",
            fontsize=11,
            bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8),
        )

    def _build_keep(self, ax):
        ax.set_ylim(-0.05, 1.05)
        (self.keep_line,) = ax.plot([], [], color="gray", lw=1)
        self.keep_points = ax.scatter([], [], s=14, zorder=3)
        title = ax.set_title(_fig("freq. kept"), x=0.68, y=1.0)
        # "<method>:" in front of the static title, as a short moving text
        self.label_method = ax.annotate(
            "",
            xy=(0, 0),
            xycoords=title,
            xytext=(-3, 0),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=matplotlib.rcParams["axes.titlesize"],
        )

    def _build_freq(self, ax):
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(
            FuncFormatter(lambda y, _pos: "1" if y >= 1 else f"1/{1 / y:.3g}")
        )
        ax.yaxis.set_major_locator(LogLocator(base=2, numticks=4))  # 1, 1/4, 1/16
        ax.set_ylim(*FREQ_YLIM)
        # the guides thin and gray, under the methods: PI's line (1/s for every pair) lies on
        # the 1/s guide and must stay visible, so it is dashed with markers and drawn above it
        guide = dict(color="0.55", lw=0.8, ls=":", zorder=1)
        self.guide_same = ax.axhline(1.0, **guide)  # unchanged
        self.guide_div = ax.axhline(1.0, **guide)  # divided by s
        self.method_lines = {}
        for method in METHODS:
            style = (
                dict(ls="--", marker="s", ms=3, markevery=4) if method == "PI" else {}
            )
            (self.method_lines[method],) = ax.plot(
                [], [], color=METHOD_COLORS[method], label=method, **style
            )
        ax.set_title(_fig("new / old freq."))

    # --- the numbers ------------------------------------------------------------------------
    def compute(self, v):
        s, L, alpha, beta = float(v["scale s"]), int(v["L"]), v["alpha"], v["beta"]
        base, d, method = float(v["base"]), int(v["head_dim"]), v["method"]
        old, _unused = rope_frequencies("default", d, base)
        new = {m: method_frequencies(m, d, base, s, L, alpha, beta) for m in METHODS}
        chosen, attention_factor = new[method]
        regimes = pair_regimes(old, chosen, s)
        return {
            "inv_freq": old,
            "new": {m: f for m, (f, _unused) in new.items()},
            "regimes": regimes,
            "attention_factor": attention_factor,
            "correction_range": yarn_correction_range(d, base, L, beta, alpha),
            "keep": implied_ramp(old, chosen, s).numpy(),
        }

    # --- drawing: change the artists in place -----------------------------------------------
    def static_key(self, s):
        return int(self.values["head_dim"])

    def draw_static(self, s):
        for ax in (self.ax_wave, self.ax_keep, self.ax_freq):
            ax.set_xlim(-1, int(self.values["head_dim"]) // 2)

    def draw(self, st):
        v = self.values
        s, L, method = float(v["scale s"]), int(v["L"]), v["method"]
        # RGBA rows: no color-name parsing per point
        colors = self._regime_rgba[st["regimes"].numpy()]
        old = st["inv_freq"].numpy()
        pairs = np.arange(len(old))
        self.wave_points.set_offsets(
            np.column_stack([pairs, wavelengths(st["inv_freq"]).numpy()])
        )
        self.wave_points.set_color(colors)
        self.line_L.set_ydata([L, L])
        self.line_alpha.set_ydata([L / v["alpha"]] * 2)
        self.line_beta.set_ydata([L / v["beta"]] * 2)
        self.line_new.set_ydata([s * L] * 2)
        self.label_L.set_y(L)
        self.label_L.set_text(f"L = {L}")
        self.keep_line.set_data(pairs, st["keep"])
        self.keep_points.set_offsets(np.column_stack([pairs, st["keep"]]))
        self.keep_points.set_color(colors)
        self.label_method.set_text(f"{method}:")
        for m, line in self.method_lines.items():
            line.set_data(pairs, st["new"][m].numpy() / old)
            bold = m == method
            line.set_linewidth(2.8 if bold else 1.2)
            line.set_alpha(1.0 if bold else 0.6)
            line.set_zorder(3 if bold else 2)
        self.guide_div.set_ydata([1 / s, 1 / s])
        # The Redrawer draws its artists in list order: sort them like matplotlib does (by
        # zorder, ties in creation order), so that the bold line is on top.
        self.redraw.moving = sorted(
            self._moving, key=lambda artist: artist.get_zorder()
        )

    # --- the readout ------------------------------------------------------------------------
    def _counts(self) -> list[int]:
        """How many pairs are kept, blended, divided by s."""
        return [int((self.state["regimes"] == k).sum()) for k in range(3)]

    def readout_html(self) -> str:
        """The readout in the column beside the figure: short lines."""
        v, st = self.values, self.state
        counts = self._counts()
        lines = (
            _(
                "<b>{method}</b>: s&middot;L = {sL:.0f}, attention factor {factor:.4f}"
            ).format(
                method=v["method"],
                sL=float(v["scale s"]) * int(v["L"]),
                factor=st["attention_factor"],
            ),
            _("kept {kept}, blended {blended}, divided by s {divided}").format(
                kept=counts[0], blended=counts[1], divided=counts[2]
            ),
            _band(v["method"], self.state),
            _("first pair with wavelength &gt; L: {first}").format(
                first=first_pair_longer_than(st["inv_freq"], int(v["L"]))
            ),
        )
        return TIGHT_LINES.format("<br>".join(lines))

    def readout_text(self) -> str:
        """The readout as plain text, two lines (for print and tests): what the compact
        readout says, and the scale s, L and the logits' factor."""
        v, st = self.values, self.state
        s, L, factor = float(v["scale s"]), int(v["L"]), st["attention_factor"]
        counts = self._counts()
        line1 = _(
            "<b>{method}</b>, s = {s:.2f}, L = {L} &rarr; s&middot;L = {sL:.0f}; "
            "attention factor = {factor:.4f} (logits &times; {logits:.4f})"
        ).format(
            method=v["method"], s=s, L=L, sL=s * L, factor=factor, logits=factor**2
        )
        line2 = _(
            "kept = {kept}, blended = {blended}, divided by s = {divided}; {band}; "
            "first pair with wavelength &gt; L = {first}"
        ).format(
            kept=counts[0],
            blended=counts[1],
            divided=counts[2],
            band=_band(v["method"], st),
            first=first_pair_longer_than(st["inv_freq"], L),
        )
        return plain_text(f"{line1}<br>{line2}")


__all__ = ["METHODS", "WavelengthCutoffExplorer", "method_frequencies"]
