"""Lesson 11's widgets and figures, on the results of a real pretrained LLM
(SmolLM2-135M-Instruct, `python -m rope_lib.pretrained --out DIR`;
rope_lib.exercises.real_llm.load_results() reads the folder the lesson reads).

    LossCurveWidget(results, method="yarn", factor=2)
        Mean next-token loss against position, in buckets of positions, for one
        context-extension method applied zero-shot at factor s (windows of s L tokens): its
        mean over the text windows with the min..max band, the plain model on the same
        windows, and the yardstick (dashed), the plain model's mean loss inside L.
        Controls "method" and "factor s" (a method the run did not evaluate at that factor
        is said so, and its curve hidden).
    PairNormWidget(results, layer=12)
        The size (RMS over tokens and heads) of q and k in each frequency pair of one layer,
        against the pair's wavelength and L. Control "layer".

    loss_figure(results), pairs_figure(results), attention_figure(results): the static
    figures of the lesson; passkey_table(results): the passkey grid as lines of text.

Every live artist is created once; the axes hold every number the widget can show, so a
move only redraws the curves (rope_lib.widgets.Redrawer). A live figure is 6.4 x 2.6 in: with
one row of controls and a two-line readout it fits the projector's screen.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..exercises.real_llm import (
    METHOD_NAMES,
    load_results,
    shared_windows,
    window_losses,
)
from ..language import N_, _, _fig
from .base import TIGHT_LINES, Control, LiveWidget, cumulative_steps, moves
from .style import integer_ticks

#: One colour per method, the plain model in black.
METHOD_COLORS = {
    "plain": "#222222",
    "pi": "#9467bd",
    "ntk": "#8c564b",
    "dynamic_ntk": "#2ca02c",
    "yarn": "#d62728",
    "yarn_no_attention_factor": "#ff7f0e",
    "llama3": "#17becf",
}
#: The live figures' size (inches at dpi 100): under one row of controls and readout, on
#: the projector's screen (rope_lib.widgets.SCREEN_HEIGHT).
FIGSIZE = (6.4, 2.8)
Q_COLOR, K_COLOR = "#1f77b4", "#ff7f0e"


def _tokens(x, _pos=None) -> str:
    """Tick labels for positions: 8k for 8,192 and up, plain numbers below 1,000."""
    return f"{x / 1024:.0f}k" if x >= 1024 and x % 1024 == 0 else f"{x:.0f}"


def method_label(method: str, translate=_) -> str:
    """A method's name in the learner's language (`_fig` for figures)."""
    return translate(METHOD_NAMES.get(method, method))


class LossResults:
    """The loss part of results.json, window by window: for each method and factor, the
    mean loss per bucket of positions on each text window it ran on. A curve is the mean
    (and min, max) over a set of windows: the method's own, or the windows every method
    ran on (shared), where methods are compared on the same text."""

    def __init__(self, results: dict):
        settings = results["settings"]
        self.L = settings["training_length"]
        self.bucket = settings["bucket"]
        self.runs = window_losses(results)
        self.factors = sorted({f for (m, f) in self.runs if m != "plain"})
        methods = {m for (m, f) in self.runs if m != "plain"}
        self.methods = [m for m in METHOD_NAMES if m in methods] + sorted(
            methods - set(METHOD_NAMES)
        )

    def windows(self, method: str, factor: int) -> list[int]:
        """The windows a method ran on at a factor (plain RoPE: on that factor's
        windows)."""
        return sorted(self.runs.get((method, factor), {}))

    def shared(self, factor: int) -> list[int]:
        """The windows every method ran on at a factor."""
        return shared_windows(self.runs, factor)

    def curve(self, method: str, factor: int, windows=None) -> dict | None:
        """{"x", "mean", "min", "max", "windows"} of a method at a factor over `windows`
        (default: all it ran on); None when it ran on none of them."""
        runs = self.runs.get((method, factor), {})
        chosen = [w for w in (runs if windows is None else windows) if w in runs]
        if not chosen:
            return None
        table = np.array([runs[w] for w in sorted(chosen)], dtype=float)
        return {
            "x": self.bucket * (np.arange(table.shape[1]) + 0.5),
            "mean": table.mean(0),
            "min": table.min(0),
            "max": table.max(0),
            "windows": len(chosen),
        }

    def inside(self, curve: dict) -> float:
        """The mean of a curve's buckets inside L."""
        return float(np.mean(curve["mean"][: self.L // self.bucket]))

    def last(self, curve: dict) -> float:
        """The curve's last bucket (the farthest positions)."""
        return float(curve["mean"][-1])

    def yardstick(self, windows=None, factor: int | None = None) -> float:
        """The plain model's mean loss inside L on `windows` (default: the windows every
        method ran on) at a factor (default: the smallest)."""
        factor = self.factors[0] if factor is None else factor
        windows = self.shared(factor) if windows is None else windows
        return self.inside(self.curve("plain", factor, windows))

    def methods_at(self, factor: int) -> list[str]:
        """The methods evaluated at a factor (plain RoPE first)."""
        return ["plain"] + [m for m in self.methods if self.windows(m, factor)]

    def limits(self) -> tuple[float, float]:
        """The lowest and highest bucket of every window."""
        values = [x for runs in self.runs.values() for b in runs.values() for x in b]
        return float(np.min(values)), float(np.max(values))


def _mark_training_length(ax, L: int, top: float) -> None:
    ax.axvline(L, color="k", ls=":", lw=1, zorder=1)
    ax.text(L, top, " L", ha="left", va="top", fontsize=11, color="0.3")


class LossCurveWidget(LiveWidget):
    """Loss per position bucket of one method at one factor, against plain RoPE on the
    same windows and the plain model's loss inside L (dashed)."""

    # the controls and the two readout lines in one row, the figure under them
    BESIDE, READOUT_WIDTH, READOUT = "last row", "300px", TIGHT_LINES
    FIGSIZE = FIGSIZE

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
        ax.xaxis.set_major_formatter(FuncFormatter(_tokens))
        _mark_training_length(ax, data.L, high + pad)
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


class PairResults:
    """The pairs part of results.json: wavelengths, and q and k RMS per layer and pair."""

    def __init__(self, results: dict):
        pairs = results["pairs"]
        self.L = results["settings"]["training_length"]
        self.wavelength = np.asarray(pairs["wavelength"], dtype=float)
        self.q = np.asarray(pairs["q_rms"], dtype=float)  # [layers, pairs]
        self.k = np.asarray(pairs["k_rms"], dtype=float)
        self.slow = self.wavelength > self.L  # pairs that never turned once within L
        self.first_slow = (
            int(np.argmax(self.slow)) if self.slow.any() else len(self.slow)
        )

    @property
    def layers(self) -> int:
        return self.q.shape[0]

    def slow_share(self) -> np.ndarray:
        """Per layer: the share of sum_i |q_i| |k_i| (RMS sizes) in the slow pairs."""
        product = self.q * self.k
        return product[:, self.slow].sum(1) / product.sum(1)

    def largest(self) -> tuple[np.ndarray, np.ndarray]:
        """Per layer: the pair with the largest q, and with the largest k."""
        return self.q.argmax(1), self.k.argmax(1)


class PairNormWidget(LiveWidget):
    """One layer's q and k size per frequency pair (each relative to the layer's largest),
    with the pairs slower than L shaded."""

    ROWS = (("layer",),)
    BESIDE, READOUT_WIDTH, READOUT = "last row", "300px", TIGHT_LINES
    FIGSIZE = FIGSIZE

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


# ----------------------------------------------------------------------- static figures


def loss_figure(results: dict) -> Figure:
    """Mean loss per position bucket at each factor, every method evaluated there, on the
    windows they all ran on; plain RoPE in black; dotted: L; dashed: the plain model's
    loss inside L."""
    data = LossResults(results)
    figure = Figure(figsize=(6.4, 3.6), dpi=100)
    ratios = [f for f in data.factors]
    axes = figure.subplots(1, len(ratios), sharey=True, width_ratios=ratios)
    axes = np.atleast_1d(axes)
    low, high = data.limits()
    handles = {}
    for ax, factor in zip(axes, data.factors):
        shared = data.shared(factor)
        for method in data.methods_at(factor):
            curve = data.curve(method, factor, shared)
            (handles[method],) = ax.plot(
                curve["x"],
                curve["mean"],
                "o-",
                ms=3,
                lw=1.6 if method != "plain" else 1.3,
                color=METHOD_COLORS.get(method, "C0"),
                label=method_label(method, _fig),
            )
        ax.axhline(
            data.yardstick(shared, factor), color="0.45", ls="--", lw=1, zorder=1
        )
        _mark_training_length(ax, data.L, high + 0.05 * (high - low))
        ax.set_xlim(0, factor * data.L)
        ax.set_xticks(np.arange(0, factor * data.L + 1, data.L))
        ax.xaxis.set_major_formatter(FuncFormatter(_tokens))
        ax.set_title(_fig("every method at s = {factor}, plain RoPE black").format(
            factor=factor
        ))  # fmt: skip
        ax.set_xlabel(_fig("position (tokens)"))
    axes[0].set_ylabel(_fig("loss (nats)"))
    axes[0].set_ylim(low - 0.1, high + 0.1 * (high - low))
    figure.legend(
        handles=[handles[m] for m in ["plain", *data.methods] if m in handles],
        loc="lower center",
        ncol=4,
        fontsize=10,
        handlelength=1.4,
        columnspacing=0.9,
    )
    figure.subplots_adjust(left=0.09, right=0.96, top=0.92, bottom=0.3, wspace=0.06)
    return figure


def pairs_figure(results: dict) -> Figure:
    """Heatmap, layer by pair: each pair's share of the layer's sum of |q_i| |k_i|; the
    pairs slower than L right of the dashed line."""
    d = PairResults(results)
    product = d.q * d.k
    share = product / product.sum(1, keepdims=True)
    figure = Figure(figsize=(6.4, 3.4), dpi=100)
    ax = figure.subplots()
    image = ax.imshow(share, aspect="auto", cmap="viridis", origin="lower")
    ax.axvline(d.first_slow - 0.5, color="white", ls="--", lw=1.5)
    ax.set_xlabel(_fig("pair i (wavelength grows →)"))
    ax.set_ylabel(_fig("layer"))
    integer_ticks(ax.xaxis, ax.yaxis)
    ax.set_title(_fig("share of |q_i| |k_i| per layer; right of the line: λ > L"))
    figure.colorbar(image, ax=ax, pad=0.02)
    figure.subplots_adjust(left=0.1, right=0.98, top=0.9, bottom=0.15)
    return figure


class AttentionResults:
    """The decay and sinks parts of results.json."""

    def __init__(self, results: dict):
        decay, sinks = results["decay"], results["sinks"]
        self.edges = list(decay["edges"])
        self.weight = np.asarray(decay["mean_weight"], dtype=float)  # [layers, bins]
        self.uniform = np.asarray(decay["uniform"], dtype=float)
        self.first = np.asarray(sinks["first_token"], dtype=float)  # [layers]
        self.uniform_first = float(sinks["uniform_first_token"])
        self.probe = results["settings"]["probe"]

    def distances(self) -> np.ndarray:
        """The smallest distance of each bin (0, 1, 2, 4, ...)."""
        return np.asarray(self.edges[: self.weight.shape[1]], dtype=float)

    def ratio(self) -> np.ndarray:
        """Mean weight over layers against evenly spread attention, per distance bin."""
        return self.weight.mean(0) / self.uniform


def attention_figure(results: dict) -> Figure:
    """Left: mean attention weight against distance (mean over layers, and the spread of
    the layers), beside evenly spread attention. Right: the share of attention on the first
    token, by layer."""
    a = AttentionResults(results)
    figure = Figure(figsize=(6.4, 3.0), dpi=100)
    left, right = figure.subplots(1, 2, width_ratios=[1.15, 1])
    x = a.distances()[1:]  # distance 0, the token itself, is left out of a log axis
    left.fill_between(
        x, a.weight[:, 1:].min(0), a.weight[:, 1:].max(0), color="C0", alpha=0.2, lw=0
    )
    left.plot(x, a.weight[:, 1:].mean(0), "o-", color="C0", ms=3, label=_fig("model"))
    left.plot(x, a.uniform[1:], "--", color="0.4", label=_fig("spread evenly"))
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.xaxis.set_major_formatter(FuncFormatter(_tokens))
    left.set_xlabel(_fig("distance m - n (tokens)"))
    left.set_ylabel(_fig("mean weight"))
    left.set_title(_fig("by distance (band: layers)"))
    left.legend(loc="lower left", fontsize=10)
    layers = np.arange(len(a.first))
    right.bar(layers, a.first, color="C3", width=0.8)
    right.axhline(a.uniform_first, color="0.4", ls="--", lw=1)
    right.set_ylim(0, 1)
    integer_ticks(right.xaxis)
    right.set_xlabel(_fig("layer"))
    right.set_title(_fig("share on the first token"))
    figure.subplots_adjust(left=0.11, right=0.98, top=0.9, bottom=0.18, wspace=0.3)
    return figure


def passkey_rows(results: dict) -> list[tuple[str, int, dict]]:
    """(method, prompt length, {depth: share retrieved}) for every passkey group, shorter
    prompts first, then plain RoPE first and the methods in METHOD_NAMES' order."""
    order = {m: i for i, m in enumerate(METHOD_NAMES)}
    rows = []
    for key, group in results["passkey"]["summary"].items():
        method, _factor, length = key.split("/")
        shares = dict(zip(group["depths"], group["retrieved"]))
        rows.append((method, int(length), shares))
    return sorted(rows, key=lambda r: (r[1], order.get(r[0], len(order)), r[0]))


# ----------------------------------------------------------------------- for the tests


def _loss_steps() -> list[dict]:
    """A learner's session: every method (at factor 2, which every run has)."""
    methods = ("pi", "ntk", "dynamic_ntk", "yarn_no_attention_factor", "llama3", "yarn")
    return cumulative_steps(dict(method="yarn"), moves(("method", *methods, "pi")))


def _loss_widget() -> LossCurveWidget:
    """The widget as the lesson builds it, on the results the lesson reads."""
    return LossCurveWidget(load_results(), method="yarn")


def _pair_widget() -> PairNormWidget:
    return PairNormWidget(load_results(), layer=12)


WIDGETS = {
    "loss_curves": (_loss_widget, _loss_steps()),
    "pair_norms": (
        _pair_widget,
        cumulative_steps({"layer": 12}, moves(("layer", 0, 1, 5, 20, 29, 12))),
    ),
}


def thumbnail() -> Figure:
    """The lesson in one picture: plain RoPE breaks past L, YaRN holds."""
    data = LossResults(load_results())
    factor = data.factors[0]
    figure = Figure(figsize=(4.0, 2.5), dpi=80)
    ax = figure.subplots()
    for method in ("plain", "pi", "yarn"):
        curve = data.curve(method, factor, data.shared(factor))
        if curve is not None:
            ax.plot(
                curve["x"],
                curve["mean"],
                "o-",
                ms=2.5,
                lw=1.4,
                color=METHOD_COLORS[method],
                label=method_label(method, _fig),
            )
    ax.axvline(data.L, color="k", ls=":", lw=1)
    ax.set_xticks(np.arange(0, factor * data.L + 1, data.L))
    ax.xaxis.set_major_formatter(FuncFormatter(_tokens))
    ax.set_xlabel(_fig("position (tokens)"), fontsize=8)
    ax.set_ylabel(_fig("loss (nats)"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, loc="upper left", frameon=False)
    figure.suptitle(_fig("SmolLM2-135M past its training length"), fontsize=10)
    figure.subplots_adjust(left=0.14, right=0.97, bottom=0.2, top=0.84)
    return figure


__all__ = [
    "AttentionResults",
    "LossCurveWidget",
    "LossResults",
    "METHOD_COLORS",
    "PairNormWidget",
    "PairResults",
    "WIDGETS",
    "attention_figure",
    "loss_figure",
    "pairs_figure",
    "passkey_rows",
    "thumbnail",
]
