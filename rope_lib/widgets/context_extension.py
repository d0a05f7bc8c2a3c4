"""Lesson 7's live widget: the wavelength-cutoff explorer.

For a head of `head_dim` dimensions, RoPE base `base` and a trained length L, it shows
- each pair's wavelength lambda_i = 2 pi / theta_i against L (log scale), with the cutoffs
  L/alpha and L/beta, each pair colored by what the chosen method does to it: kept
  (extrapolated), divided by s (interpolated) or blended;
- the fraction of its frequency each pair keeps (implied_ramp: the ramp gamma_i of YaRN and
  Llama 3, where Llama 3 calls it the smooth factor; NTK's curve; PI's zero);
- old against new frequencies for PI, NTK, YaRN and Llama 3 overlaid, the chosen one in bold.

alpha and beta are the cutoffs in turns per L: pairs that turn fewer than alpha times within L are
interpolated, more than beta times kept. They are YaRN's beta_slow and beta_fast and Llama 3's
low_freq_factor and high_freq_factor (Llama 3.1 ships 1 and 4, YaRN's paper 1 and 32).
All numbers come from rope_lib.scaling.
"""

from __future__ import annotations

import re

import matplotlib.colors
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from matplotlib.transforms import offset_copy

from ..language import N_, _, _fig, get_language
from ..scaling import (
    REGIMES,
    first_pair_longer_than,
    implied_ramp,
    pair_regimes,
    rope_frequencies,
    wavelengths,
    yarn_correction_range,
)
from . import LIVE_SIZE, Redrawer, label_px, live_box, live_figure
from .style import integer_ticks

METHODS = ("PI", "NTK", "YaRN", "Llama 3")
#: What each regime of rope_lib.scaling.REGIMES is called in a legend.
REGIME_LABELS = {
    "extrapolated": N_("extrapolated"),
    "blended": N_("blended"),
    "interpolated": N_("interpolated"),
}
REGIME_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c")  # extrapolated, blended, interpolated
METHOD_COLORS = {
    "PI": "#9467bd",
    "NTK": "#8c564b",
    "YaRN": "#d62728",
    "Llama 3": "#17becf",
}
LENGTHS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
BASES = (1000.0, 10000.0, 50000.0, 100000.0, 500000.0, 1000000.0)
HEAD_DIMS = (16, 32, 64, 96, 128, 256)
# Width of each control's label (CSS px, 13 px text) in the 160 px the control gets
LABEL_PX = {
    "scale s": 52,
    "L": 14,
    "alpha": 40,
    "beta": 34,
    "base": 36,
    "head_dim": 66,
    "method": 52,
}


# The readout's HTML: ordinary text lines (a widget's HTML would space them 28 px apart)
TIGHT_LINES = '<div style="line-height: 1.3">{}</div>'
# Fixed y ranges that hold every control setting, so that moving a slider redraws only the moving
# artists (blitting): wavelengths run from 2 pi (pair 0) to 2 pi 1e6^(254/256) ~ 5.6e6, the lines
# from L/beta >= 512/64 = 8 to s L <= 32 * 32768 ~ 1.05e6; new/old frequency from 1/32 to 1.
WAVE_YLIM = (3.0, 1.5e7)
FREQ_YLIM = (1 / 32 / 1.4, 1.4)
DEFAULTS = {
    "scale s": 4.0,
    "L": 4096,
    "alpha": 1.0,
    "beta": 32.0,
    "base": 10000.0,
    "head_dim": 128,
    "method": "YaRN",
}


def method_frequencies(
    method: str,
    head_dim: int,
    base: float,
    factor: float,
    length: int,
    alpha: float,
    beta: float,
):
    """(inv_freq, attention_factor) of one of METHODS, through rope_frequencies."""
    if method == "PI":
        return rope_frequencies("linear", head_dim, base, factor=factor)
    if method == "NTK":
        return rope_frequencies("ntk", head_dim, base, factor=factor)
    if method == "YaRN":
        return rope_frequencies(
            "yarn",
            head_dim,
            base,
            factor=factor,
            original_max_position_embeddings=length,
            beta_fast=beta,
            beta_slow=alpha,
        )
    if method == "Llama 3":
        return rope_frequencies(
            "llama3",
            head_dim,
            base,
            factor=factor,
            original_max_position_embeddings=length,
            low_freq_factor=alpha,
            high_freq_factor=beta,
        )
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


class WavelengthCutoffExplorer:
    """Controls: "scale s", "L", "alpha", "beta", "base", "head_dim", "method"."""

    def __init__(self, **values):
        self.values = dict(DEFAULTS)
        unknown = set(values) - set(DEFAULTS)
        if unknown:
            raise ValueError(
                f"unknown control(s) {sorted(unknown)}; expected {list(DEFAULTS)}"
            )
        self.values.update(values)
        self._build_figure()
        self.controls = self._build_controls()
        import ipywidgets as w

        self.readout = w.HTML()
        self.readout.add_class("rope-readout")
        self.update()

    # --- figure, built once ---------------------------------------------------------------
    def _build_figure(self):
        fig = live_figure(LIVE_SIZE)
        self.figure = fig
        # 640 x 330 px: three panels under a two-row legend; each panel's title names its y axis
        gs = fig.add_gridspec(
            1, 3, left=0.075, right=0.985, bottom=0.15, top=0.70, wspace=0.42
        )
        self.ax_wave, self.ax_keep, self.ax_freq = (
            fig.add_subplot(gs[0, i]) for i in range(3)
        )
        # Fixed positions for the axis labels, few ticks: matplotlib then skips measuring every
        # tick label on every draw (most of a redraw's cost). Pairs tick at integers.
        # (a CJK font's taller tick labels need the label a little lower)
        label_y = -0.12 if get_language() == "en" else -0.14
        for ax in (self.ax_wave, self.ax_keep, self.ax_freq):
            ax.xaxis.set_label_coords(0.5, label_y)
            integer_ticks(ax.xaxis, nbins=4)

        ax = self.ax_wave
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(numticks=8))  # every decade of WAVE_YLIM
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(
            LogLocator(numticks=4)
        )  # every other decade: 10^1, 10^3, ...
        ax.set_xlabel(_fig("pair i"))
        ax.set_ylim(*WAVE_YLIM)
        self.wave_points = ax.scatter([], [], s=14, zorder=3)
        self.line_L = ax.axhline(1.0, color="black", lw=1.5)  # L
        self.line_alpha = ax.axhline(1.0, color="gray", lw=1, ls="--")  # L / alpha
        self.line_beta = ax.axhline(1.0, color="gray", lw=1, ls="--")  # L / beta
        self.line_new = ax.axhline(1.0, color="black", lw=1, ls=":")  # s L
        ax.set_title(_fig("wavelength (tokens)"))
        # the changing part as a short moving label on the L line (text is the costly part of a draw)
        self.label_L = ax.text(
            0.02,
            1.0,
            "",
            transform=offset_copy(ax.get_yaxis_transform(), fig, y=2, units="points"),
            ha="left",
            va="bottom",
            fontsize=11,
            bbox=dict(
                boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8
            ),  # over nearby lines
        )

        ax = self.ax_keep
        ax.set_xlabel(_fig("pair i"))
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

        ax = self.ax_freq
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=2, numticks=7))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(
            FuncFormatter(lambda y, _pos: "1" if y >= 1 else f"1/{1 / y:.3g}")
        )
        ax.yaxis.set_major_locator(LogLocator(base=2, numticks=4))  # 1, 1/4, 1/16
        ax.set_xlabel(_fig("pair i"))
        ax.set_ylim(*FREQ_YLIM)
        # the guides thin and gray, under the methods: PI's line (1/s for every pair) lies on the
        # 1/s guide and must stay visible, so it is dashed with markers and drawn above it
        self.guide_same = ax.axhline(
            1.0, color="0.55", lw=0.8, ls=":", zorder=1
        )  # unchanged
        self.guide_div = ax.axhline(
            1.0, color="0.55", lw=0.8, ls=":", zorder=1
        )  # divided by s
        self.method_lines = {}
        for method in METHODS:
            style = (
                dict(ls="--", marker="s", ms=3, markevery=4) if method == "PI" else {}
            )
            (self.method_lines[method],) = ax.plot(
                [], [], color=METHOD_COLORS[method], label=method, **style
            )
        ax.set_title(_fig("new / old freq."))
        # one legend for the whole figure, above the panels: what each pair gets, the methods,
        # and the guide lines of the left panel
        regime_handles = [
            Line2D([], [], ls="", marker="o", color=c, label=_fig(REGIME_LABELS[r]))
            for r, c in zip(REGIMES, REGIME_COLORS)
        ]
        guide_handles = [
            Line2D([], [], color="black", lw=1.5, label="L"),
            Line2D([], [], color="gray", lw=1, ls="--", label="L/α, L/β"),
            Line2D([], [], color="black", lw=1, ls=":", label="sL"),
        ]
        handles = regime_handles + guide_handles + list(self.method_lines.values())
        fig.legend(
            handles=handles,
            loc="upper center",
            ncol=5,
            frameon=False,
            fontsize=11,
            handlelength=1.6,
            columnspacing=1.0,
            handletextpad=0.4,
            borderaxespad=0.2,
        )
        # Everything above is static except these, redrawn on top of a saved background each update;
        # only a new head_dim (the x range of all three panels) redraws the whole figure.
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
        self.redraw = Redrawer(fig, self._moving)
        self._regime_rgba = matplotlib.colors.to_rgba_array(REGIME_COLORS)
        self._drawn_head_dim = (
            None  # the head_dim the static parts (x limits, ticks) show
        )

    def _build_controls(self):
        import ipywidgets as w

        # 160 px per control: four fit a row of the projector's 673 px output area
        style = {"description_width": "60px"}
        layout = w.Layout(width="160px")
        v = self.values
        controls = {
            "scale s": w.FloatSlider(
                value=v["scale s"],
                min=1.5,
                max=32,
                step=0.5,
                description=_("scale s"),
                style=style,
                layout=layout,
            ),
            "L": w.SelectionSlider(
                options=LENGTHS,
                value=v["L"],
                description="L",
                style=style,
                layout=layout,
            ),
            "alpha": w.FloatSlider(
                value=v["alpha"],
                min=0.25,
                max=3,
                step=0.25,
                description="alpha",
                style=style,
                layout=layout,
            ),
            "beta": w.FloatSlider(
                value=v["beta"],
                min=4,
                max=64,
                step=1,
                description="beta",
                style=style,
                layout=layout,
            ),
            "base": w.SelectionSlider(
                options=BASES,
                value=v["base"],
                description=_("base"),
                style=style,
                layout=layout,
            ),
            "head_dim": w.SelectionSlider(
                options=HEAD_DIMS,
                value=v["head_dim"],
                description=_("head_dim"),
                style=style,
                layout=layout,
            ),
            "method": w.Dropdown(
                options=METHODS,
                value=v["method"],
                description=_("method"),
                style=style,
                layout=layout,
            ),
        }
        for name, control in controls.items():
            # each label only as wide as its text: the slider's track keeps the rest
            width = LABEL_PX[name] if control.description == name else None
            width = width or label_px(control.description)
            control.style.description_width = f"{width}px"
            control.observe(
                lambda change, name=name: self.update(**{name: change["new"]}),
                names="value",
            )
        return controls

    # --- update: recompute, change artists in place -----------------------------------------
    def update(self, **values):
        unknown = set(values) - set(DEFAULTS)
        if unknown:
            raise ValueError(
                f"unknown control(s) {sorted(unknown)}; expected {list(DEFAULTS)}"
            )
        v = {**self.values, **values}
        s, L, alpha, beta = (
            float(v["scale s"]),
            int(v["L"]),
            float(v["alpha"]),
            float(v["beta"]),
        )
        base, d, method = float(v["base"]), int(v["head_dim"]), v["method"]
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if not beta > alpha:
            raise ValueError(f"beta must be > alpha, got alpha={alpha}, beta={beta}")
        self.values = v  # only valid values are kept

        old, _unused = rope_frequencies("default", d, base)
        new = {m: method_frequencies(m, d, base, s, L, alpha, beta) for m in METHODS}
        chosen, attention_factor = new[method]
        regimes = pair_regimes(old, chosen, s)
        keep = implied_ramp(old, chosen, s).numpy()
        colors = self._regime_rgba[
            regimes.numpy()
        ]  # RGBA rows: no color-name parsing per point
        pairs = np.arange(d // 2)
        wave = wavelengths(old).numpy()

        self.wave_points.set_offsets(np.column_stack([pairs, wave]))
        self.wave_points.set_color(colors)
        self.line_L.set_ydata([L, L])
        self.line_alpha.set_ydata([L / alpha] * 2)
        self.line_beta.set_ydata([L / beta] * 2)
        self.line_new.set_ydata([s * L] * 2)
        self.label_L.set_y(L)
        self.label_L.set_text(f"L = {L}")

        self.keep_line.set_data(pairs, keep)
        self.keep_points.set_offsets(np.column_stack([pairs, keep]))
        self.keep_points.set_color(colors)
        self.label_method.set_text(f"{method}:")

        old_np = old.numpy()
        for m, line in self.method_lines.items():
            line.set_data(pairs, new[m][0].numpy() / old_np)
            bold = m == method
            line.set_linewidth(2.8 if bold else 1.2)
            line.set_alpha(1.0 if bold else 0.6)
            line.set_zorder(3 if bold else 2)
        self.guide_div.set_ydata([1 / s, 1 / s])
        # The Redrawer draws its artists in list order: sort them like matplotlib does (by zorder,
        # ties in creation order), so that the bold line is on top.
        self.redraw.moving = sorted(
            self._moving, key=lambda artist: artist.get_zorder()
        )

        low, high = yarn_correction_range(d, base, L, beta, alpha)
        counts = [int((regimes == k).sum()) for k in range(3)]
        blended = pairs[regimes.numpy() == 1]
        blend_text = f"{blended.min()}..{blended.max()}" if len(blended) else _("none")
        if method == "YaRN":
            # the pairs YaRN blends, by its own rounding of the cutoffs
            band = _("YaRN's correction range = {low}..{high}").format(
                low=low, high=high
            )
        elif method == "Llama 3":
            # the pairs whose wavelength lies between L/beta and L/alpha
            band = _("Llama 3's smooth band = {pairs}").format(pairs=blend_text)
        else:
            band = _("{method} treats every pair alike").format(method=method)
        line1 = _(
            "<b>{method}</b>, s = {s:.2f}, L = {L} &rarr; s&middot;L = {sL:.0f}; "
            "attention factor = {factor:.4f} (logits &times; {logits:.4f})"
        ).format(
            method=method,
            s=s,
            L=L,
            sL=s * L,
            factor=attention_factor,
            logits=attention_factor**2,
        )
        line2 = _(
            "extrapolated = {extrapolated}, blended = {blended}, "
            "interpolated = {interpolated}; {band}; "
            "first pair with wavelength &gt; L = {first}"
        ).format(
            extrapolated=counts[0],
            blended=counts[1],
            interpolated=counts[2],
            band=band,
            first=first_pair_longer_than(old, L),
        )
        # lines 1.3 high, not the 28 px of a widget row: with its figure the widget
        # fits the projector's 480 px
        self.readout.value = TIGHT_LINES.format(f"{line1}<br>{line2}")
        self.state = {
            "inv_freq": old,
            "new": {m: f for m, (f, _unused) in new.items()},
            "regimes": regimes,
            "attention_factor": attention_factor,
            "correction_range": (low, high),
        }
        full = d != self._drawn_head_dim
        if full:
            for ax in (self.ax_wave, self.ax_keep, self.ax_freq):
                ax.set_xlim(-1, d // 2)
            self._drawn_head_dim = d
        self.redraw(full=full)

    def readout_text(self) -> str:
        """The readout as plain text (for print and tests)."""
        text = self.readout.value.replace("<br>", "\n")
        for entity, plain in (
            ("&rarr;", "->"),
            ("&middot;", "*"),
            ("&times;", "x"),
            ("&gt;", ">"),
        ):
            text = text.replace(entity, plain)
        return re.sub(r"<[^>]+>", "", text)

    def widget(self):
        """Two rows of controls, the readout (two lines) under them, the figure below."""
        c = self.controls
        rows = [
            [c["method"], c["scale s"], c["L"], c["base"]],
            [c["head_dim"], c["alpha"], c["beta"]],
        ]
        return live_box(
            rows, self.readout, self.figure, readout_width="640px", beside="below"
        )


def _steps():
    steps = []
    for s in (2.0, 8.0, 16.0, 32.0, 4.0):
        steps.append({"scale s": s})
    for L in (512, 2048, 16384, 32768, 4096):
        steps.append({"L": L})
    for a in (0.5, 2.0, 1.0):
        steps.append({"alpha": a})
    for b in (8.0, 64.0, 32.0):
        steps.append({"beta": b})
    for base in (1000.0, 500000.0, 1000000.0, 10000.0):
        steps.append({"base": base})
    for d in (16, 64, 256, 96, 128):
        steps.append({"head_dim": d})
    for m in ("PI", "NTK", "Llama 3", "YaRN", "NTK"):
        steps.append({"method": m})
    return steps


WIDGETS = {"wavelength_cutoffs": (WavelengthCutoffExplorer, _steps())}


def thumbnail():
    """Wavelength of each pair against L, colored by what YaRN does to it."""
    from matplotlib.figure import Figure

    old, _unused = rope_frequencies("default", 128)
    yarn, _unused = rope_frequencies(
        "yarn", 128, factor=4.0, original_max_position_embeddings=4096
    )
    regimes = pair_regimes(old, yarn, 4.0).numpy()
    fig = Figure(figsize=(4, 2.5), dpi=80)
    ax = fig.add_subplot(1, 1, 1)
    pairs = np.arange(64)
    ax.scatter(
        pairs, wavelengths(old).numpy(), c=np.array(REGIME_COLORS)[regimes], s=10
    )
    ax.axhline(4096, color="black", lw=1)
    ax.text(1, 4096 * 1.4, "L = 4096", fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel(_fig("pair i"), fontsize=8)
    ax.set_ylabel(_fig("wavelength"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(_fig("YaRN: keep, blend, interpolate"), fontsize=9)
    handles = [
        Line2D(
            [],
            [],
            ls="",
            marker="o",
            color=c,
            label=_fig(REGIME_LABELS[r]),
            markersize=4,
        )
        for r, c in zip(REGIMES, REGIME_COLORS)
    ]
    ax.legend(handles=handles, fontsize=7, loc="lower right", frameon=False)
    fig.tight_layout()
    return fig


__all__ = [
    "METHODS",
    "WIDGETS",
    "WavelengthCutoffExplorer",
    "method_frequencies",
    "thumbnail",
]
