"""Lesson 15's widgets, on the results of a real pretrained LLM (SmolLM2-135M-Instruct,
`python -m rope_lib.pretrained --out DIR`; rope_lib.pretrained.results reads the folder the
lesson reads, rope_lib.pretrained.figures draws the static figures).

    LossCurveWidget(results, method="yarn", factor=2)
        Mean next-token loss against position, in buckets of positions, for one
        context-extension method applied zero-shot at factor s (windows of s L tokens): its
        mean over the text windows with the min..max band, the plain model on the same
        windows, and the yardstick (dashed), the plain model's mean loss inside L.
        Controls "method" and "factor s" (a method the run did not evaluate at that factor
        is said so, and its curve hidden; one it ran inside L only, there, ends at L).
    PairNormWidget(results, layer=12)
        The size (RMS over tokens and heads) of q and k in each frequency pair of one layer,
        against the pair's wavelength and L. Control "layer".

Every live artist is created once; the axes hold every number the widget can show, so a
move only redraws the curves (rope_lib.widgets.Redrawer). A live figure is 6.4 x 2.8 in: with
one row of controls and a two-line readout it fits the projector's screen.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter

from ..figures.style import integer_ticks
from ..language import N_, _, _fig
from ..pretrained.figures import METHOD_COLORS, mark_training_length, token_label
from ..pretrained.results import LossResults, PairResults, load_results, method_label
from .base import TIGHT_LINES, Control, LiveWidget

#: The live figures' size (inches at dpi 100): under one row of controls and readout, on
#: the projector's screen (rope_lib.widgets.SCREEN_HEIGHT).
FIGSIZE = (6.4, 2.8)
Q_COLOR, K_COLOR = "#1f77b4", "#ff7f0e"


class LossCurveWidget(LiveWidget):
    """Loss per position bucket of one method at one factor, against plain RoPE on the
    same windows and the plain model's loss inside L (dashed)."""

    # the controls and the two readout lines in one row, the figure under them
    BESIDE, READOUT_WIDTH, READOUT = "last row", "300px", TIGHT_LINES
    FIGSIZE = FIGSIZE
    SWEPT = ("method",)

    @classmethod
    def example(cls):
        """The widget on the results the lesson reads."""
        return cls(load_results())

    def __init__(self, results: dict, method: str = "yarn", factor: int | None = None):
        self.data = LossResults(results)
        factors = tuple(self.data.factors)
        factor = factors[0] if factor is None else factor
        method_control = Control(
            "method", N_("method"), "choice", options=tuple(self.data.methods),
            option_label=method_label,
        )  # fmt: skip
        factor_control = Control(
            "factor", N_("factor s"), "choice", options=factors, convert=int
        )
        # a run at one factor only (the committed one): no factor control to move
        several = len(factors) > 1
        self.CONTROLS = (
            (method_control, factor_control) if several else (method_control,)
        )
        self.ROWS = (("method", "factor"),) if several else (("method",),)
        self.factor = factor
        values = dict(method=method, factor=factor) if several else dict(method=method)
        super().__init__(**values)

    def control_size(self, control, description):
        if control.name == "method":
            return ("250px" if len(self.ROWS[0]) > 1 else "330px"), "62px"
        return "110px", "70px"

    # ------------------------------------------------------------------ numbers
    def compute(self, v):
        data = self.data
        factor = v.get("factor", self.factor)
        curve = data.curve(v["method"], factor)
        # plain RoPE and the yardstick on the same windows as the method
        own = data.windows(v["method"], factor) or data.shared(factor)
        plain = data.curve("plain", factor, own)
        return {
            "method": v["method"],
            "factor": factor,
            "curve": curve,
            "plain": plain,
            "inside": None if curve is None else data.inside(curve),
            "last": None if curve is None else data.last(curve),
            # run over the first L tokens only (its curve ends at L)
            "inside_only": curve is not None and curve["x"][-1] < data.L,
            "plain_last": data.last(plain),
            "yardstick": data.inside(plain),
            "end": factor * data.L,
        }

    # ------------------------------------------------------------------ drawing
    def build(self, figure):
        data = self.data
        ax = figure.add_axes((0.1, 0.18, 0.87, 0.72))
        low, high = data.limits()
        pad = 0.06 * (high - low or 1.0)
        ax.set_ylim(low - pad, high + pad)
        longest = max(f for f in data.factors) * data.L
        ax.set_xlim(0, longest)
        ax.set_xticks(np.arange(0, longest + 1, data.L))
        ax.xaxis.set_major_formatter(FuncFormatter(token_label))
        mark_training_length(ax, data.L, high + pad)
        self.dashed = ax.axhline(0, color="0.45", ls="--", lw=1, zorder=1)
        ax.set_xlabel(_fig("position (tokens)"))
        ax.set_ylabel(_fig("loss (nats)"))
        self.ax = ax
        self.band = ax.fill_between([0, 1], [0, 0], [0, 0], alpha=0.2, lw=0)
        (self.plain_line,) = ax.plot([], [], "o-", color="#222222", ms=3, lw=1.4)
        (self.line,) = ax.plot([], [], "o-", ms=4, lw=2)
        self.title = ax.set_title(" ")
        return [self.dashed, self.band, self.plain_line, self.line, self.title]

    def draw(self, s):
        curve, plain = s["curve"], s["plain"]
        color = METHOD_COLORS.get(s["method"], "C3")
        self.dashed.set_ydata([s["yardstick"]] * 2)
        self.plain_line.set_data(plain["x"], plain["mean"])
        shown = curve is not None
        self.line.set_visible(shown)
        self.band.set_visible(shown)
        if shown:
            self.line.set_data(curve["x"], curve["mean"])
            self.line.set_color(color)
            # the band's outline: forward along max, back along min
            x = np.concatenate([curve["x"], curve["x"][::-1]])
            y = np.concatenate([curve["max"], curve["min"][::-1]])
            self.band.set_verts([np.column_stack([x, y])])
            self.band.set_facecolor(color)
        self.title.set_text(
            _fig("{method} ×{factor} and plain RoPE (black)").format(
                method=method_label(s["method"], _fig), factor=s["factor"]
            )
        )

    def readout_text(self) -> str:
        s = self.state
        label = method_label(s["method"])
        if s["curve"] is None:
            line1 = _("{label} was not run at ×{factor}").format(
                label=label, factor=s["factor"]
            )
        elif s["inside_only"]:
            line1 = _("{label} ×{factor}: {inside:.2f} inside L (run inside L only)")
            line1 = line1.format(label=label, factor=s["factor"], inside=s["inside"])
        else:
            line1 = _(
                "{label} ×{factor}: {inside:.2f} inside L, {last:.2f} at the end"
            ).format(
                label=label, factor=s["factor"], inside=s["inside"], last=s["last"]
            )
        line2 = _("plain RoPE {plain:.2f} at the end; dashed {yardstick:.2f}").format(
            plain=s["plain_last"], yardstick=s["yardstick"]
        )
        return f"{line1}<br>{line2}"


# ----------------------------------------------------------------------- pair norms


class PairNormWidget(LiveWidget):
    """One layer's q and k size per frequency pair (each relative to the layer's largest),
    with the pairs slower than L shaded."""

    ROWS = (("layer",),)
    BESIDE, READOUT_WIDTH, READOUT = "last row", "300px", TIGHT_LINES
    FIGSIZE = FIGSIZE
    SWEPT = ("layer",)

    @classmethod
    def example(cls):
        """The widget on the results the lesson reads."""
        return cls(load_results())

    def __init__(self, results: dict, layer: int = 12):
        self.data = PairResults(results)
        self.CONTROLS = (
            Control("layer", N_("layer"), "int", 0, self.data.layers - 1, 1,
                    default=layer),
        )  # fmt: skip
        super().__init__(layer=layer)

    def control_size(self, control, description):
        return "330px", "62px"

    def compute(self, v):
        d, layer = self.data, v["layer"]
        q, k = d.q[layer], d.k[layer]
        return {
            "layer": layer,
            "q": q / q.max(),
            "k": k / k.max(),
            "largest_q": int(q.argmax()),
            "largest_k": int(k.argmax()),
            "slow_share": float(d.slow_share()[layer]),
        }

    def build(self, figure):
        d = self.data
        ax = figure.add_axes((0.11, 0.18, 0.87, 0.7))
        pairs = np.arange(len(d.wavelength))
        ax.set_xlim(-0.7, len(pairs) - 0.3)
        ax.set_ylim(0, 1.12)
        ax.axvspan(d.first_slow - 0.5, len(pairs) - 0.3, color="0.9", zorder=0)
        ax.text(
            d.first_slow - 0.3,
            1.1,
            _fig("wavelength > L"),
            ha="left",
            va="top",
            fontsize=11,
            color="0.3",
        )
        integer_ticks(ax.xaxis)
        ax.set_xlabel(_fig("pair i (wavelength grows →)"))
        ax.set_ylabel(_fig("size / largest"))
        (self.q_line,) = ax.plot(
            pairs, pairs * 0.0, "o-", color=Q_COLOR, ms=4, lw=1.4, label="q"
        )
        (self.k_line,) = ax.plot(
            pairs, pairs * 0.0, "s--", color=K_COLOR, ms=3, lw=1.2, label="k"
        )
        ax.legend(loc="upper left", ncol=2, handlelength=1.6)
        self.title = ax.set_title(" ")
        return [self.q_line, self.k_line, self.title]

    def draw(self, s):
        self.q_line.set_ydata(s["q"])
        self.k_line.set_ydata(s["k"])
        self.title.set_text(_fig("layer {layer} of {layers}").format(
            layer=s["layer"], layers=self.data.layers
        ))  # fmt: skip

    def readout_text(self) -> str:
        s, d = self.state, self.data
        line1 = _("largest q in pair {q}, largest k in pair {k}").format(
            q=s["largest_q"], k=s["largest_k"]
        )
        line2 = _("{slow} slow pairs (λ > L): {share:.0%} of Σ|q_i||k_i|").format(
            slow=int(d.slow.sum()), share=s["slow_share"]
        )
        return f"{line1}<br>{line2}"


# ----------------------------------------------------------------------- for the tests


__all__ = [
    "LossCurveWidget",
    "PairNormWidget",
]
