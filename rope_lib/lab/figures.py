"""The lab's figures, drawn from results.json alone (the lesson and the CLI share them).

text_figure      text loss by window length, every scheme, each seed a dot, the yardsticks
passkey_figure   retrieval by length, one panel per scheme, one line per seed
copy_figure      the copy loss by distance in a 4L window, schemes and extensions
scaling_figure   the RoPE model extended zero-shot: text loss and retrieval by length
finetune_figure  the fine-tune sweep at 4L: retrieval and text loss by budget
"""

from __future__ import annotations

from pathlib import Path

from ..language import N_, _, _fig
from . import summary
from .data import COPY_NO_LOOK_BACK, COPY_UNIFORM

COLORS = {
    "none": "#7f7f7f",
    "sinusoidal": "#1f77b4",
    "learned": "#9467bd",
    "rope": "#d62728",
    "alibi": "#2ca02c",
    "default": "#d62728",
    "linear": "#ff7f0e",
    "ntk": "#8c564b",
    "dynamic": "#e377c2",
    "yarn": "#17becf",
    "llama3": "#bcbd22",
    "banded": "#2ca02c",
}
#: How schemes and methods are named in legends and titles (English; shown through `_`).
LABELS = {
    "none": "NoPE",
    "sinusoidal": N_("sinusoidal"),
    "learned": N_("learned"),
    "rope": "RoPE",
    "alibi": "ALiBi",
    "default": N_("plain RoPE"),
    "linear": "PI",
    "ntk": "NTK",
    "dynamic": N_("dynamic NTK"),
    "yarn": "YaRN",
    "llama3": "Llama 3",
    "yarn_no_temperature": N_("YaRN, no temperature"),
}
#: The fine-tune controls (results["finetune_controls"]), as tables name them.
CONTROLS = {"text_only": N_("text only"), "low_lr": N_("rate 2e-4")}
YARDSTICKS = {
    "entropy_rate": (N_("entropy rate (the best possible)"), "-"),
    "current_word": (N_("current word only"), "--"),
    "unigram": (N_("word frequencies"), "-."),
    "uniform": (N_("uniform"), ":"),
}
WIDTH = 6.4
"""Inches: the width of a lesson's output area on the projector."""


def label(name: str, control: str | None = None) -> str:
    """A scheme's or method's name (LABELS), with a fine-tune control's (CONTROLS) when
    given, in the learner's language: what a printed table calls a model or a run."""
    text = _(LABELS.get(name, name))
    if control is None:
        return text
    return _("{name} ({control})").format(name=text, control=_(CONTROLS[control]))


def _axes(rows=1, cols=1, height=3.4):
    import matplotlib.pyplot as plt

    return plt.subplots(
        rows,
        cols,
        figsize=(WIDTH, height),
        dpi=100,
        squeeze=False,
        layout="constrained",
    )


def _lengths_axis(ax, results):
    lengths = results["config"]["lengths"]
    ax.axvline(results["config"]["train_length"], color="k", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.minorticks_off()


def draw_yardsticks(ax, results, lengths=None):
    """The source's yardsticks at each window length, as grey lines."""
    lengths = lengths or results["config"]["lengths"]
    for key, (label, style) in YARDSTICKS.items():
        values = [summary.yardsticks(results, n)[key] for n in lengths]
        ax.plot(lengths, values, style, color="0.55", lw=1, label=_fig(label))


def _seeds_and_mean(ax, xs, per_x, name: str, dots: bool = False) -> None:
    """per_x[j] = {seed: y at xs[j]}: each seed as faint dots (or a thin line), the mean
    over seeds as a line with markers, labelled with the scheme or method `name`."""
    for s in per_x[0]:
        style = {"marker": ".", "ls": "none"} if dots else {"lw": 0.6}
        ax.plot(xs, [v[s] for v in per_x], color=COLORS[name], alpha=0.5, **style)
    means = [summary.mean(v) for v in per_x]
    ax.plot(xs, means, "o-", color=COLORS[name], label=_fig(LABELS[name]))


def text_figure(results: dict, schemes=None):
    """Mean text loss by window length for each scheme (each seed a dot, the mean a line),
    over the yardsticks; the training length dotted."""
    fig, axes = _axes(height=3.6)
    ax = axes[0, 0]
    lengths = results["config"]["lengths"]
    draw_yardsticks(ax, results)
    for scheme in schemes or results["config"]["schemes"]:
        per_length = [summary.text_loss(results, scheme, n) for n in lengths]
        _seeds_and_mean(ax, lengths, per_length, scheme, dots=True)
    _lengths_axis(ax, results)
    ax.set_xlabel(_fig("window (tokens); dotted: training length L"))
    ax.set_ylabel(_fig("text loss (nats)"))
    ax.legend(fontsize=7, ncol=3, loc="upper left")
    return fig


def passkey_figure(results: dict, schemes=None):
    """Retrieval (exact match, mean over depths) by length: a panel per scheme, a line per
    seed (retrieval is graded: read each seed, not a count above a threshold)."""
    schemes = schemes or results["config"]["schemes"]
    cols = min(3, len(schemes))
    rows = -(-len(schemes) // cols)
    fig, axes = _axes(rows, cols, height=2.0 * rows + 0.4)
    L = results["config"]["train_length"]
    lengths = results["config"]["lengths"]
    for ax in axes.flat[len(schemes) :]:
        ax.set_visible(False)
    for ax, scheme in zip(axes.flat, schemes):
        per_length = [summary.passkey(results, scheme, n) for n in lengths]
        for s in summary.seeds(results):
            ax.plot(
                lengths,
                [v[s] for v in per_length],
                "o-",
                ms=3,
                lw=1,
                color=COLORS[scheme],
                alpha=0.7,
            )
        ax.set_title(_fig(LABELS[scheme]), fontsize=9)
        _lengths_axis(ax, results)
        ax.set_ylim(-0.05, 1.05)
        ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel(_fig("passkey accuracy"))
    fig.supxlabel(_fig("window (tokens); L = {L}").format(L=L), fontsize=9)
    return fig


def copy_figure(results: dict, schemes=("none", "alibi", "rope"), methods=None):
    """Loss on the copy's second half by distance to the first copy, in a 4L window: the
    base models of `schemes` and the RoPE model extended zero-shot (s = 4) by `methods`;
    grey: a uniform guess over the digits, and the best guess without looking back."""
    methods = results["config"]["methods"] if methods is None else methods
    fig, axes = _axes(height=3.4)
    ax = axes[0, 0]
    n = 4 * results["config"]["train_length"]
    distances = results["config"]["copy_distances"][str(n)]
    ax.axhline(COPY_UNIFORM, color="0.55", ls=":", lw=1, label=_fig("uniform guess"))
    ax.axhline(
        COPY_NO_LOOK_BACK, color="0.55", ls="--", lw=1, label=_fig("no look-back")
    )
    curves = [(s, None, "o-") for s in schemes] + [("rope", m, "s--") for m in methods]
    for scheme, method, style in curves:
        values = [
            summary.mean(summary.copy_loss(results, d, scheme, n, method))
            for d in distances
        ]
        name = method or scheme
        ax.plot(
            distances, values, style, ms=4, color=COLORS[name], label=_fig(LABELS[name])
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(distances, [str(d) for d in distances])
    ax.minorticks_off()
    ax.set_xlabel(
        _fig("distance back to the first copy (tokens), window {n}").format(n=n)
    )
    ax.set_ylabel(_fig("copy loss (nats)"))
    ax.legend(fontsize=7, ncol=3, loc="upper left")
    return fig


def scaling_figure(results: dict, methods=None):
    """The RoPE model extended zero-shot at s = n / L: text loss (left, with the yardsticks)
    and retrieval (right) by window length, plain RoPE for comparison."""
    methods = [
        "default",
        *(results["config"]["methods"] if methods is None else methods),
    ]
    fig, axes = _axes(1, 2, height=3.2)
    lengths = results["config"]["lengths"]
    draw_yardsticks(axes[0, 0], results)
    for method in methods:
        text = [
            summary.mean(
                summary.text_loss(
                    results, "rope", n, None if n == lengths[0] else method
                )
            )
            for n in lengths
        ]
        key = [
            summary.mean(
                summary.passkey(results, "rope", n, None if n == lengths[0] else method)
            )
            for n in lengths
        ]
        for ax, values in zip(axes[0], (text, key)):
            ax.plot(
                lengths,
                values,
                "o-",
                ms=4,
                color=COLORS[method],
                label=_fig(LABELS[method]),
            )
    for ax in axes[0]:
        _lengths_axis(ax, results)
        ax.set_xlabel(_fig("window (tokens)"))
        ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel(_fig("text loss (nats)"))
    yardsticks = axes[0, 0].get_legend_handles_labels()
    axes[0, 0].legend(*(part[: len(YARDSTICKS)] for part in yardsticks), fontsize=6)
    axes[0, 1].set_ylabel(_fig("passkey accuracy"))
    axes[0, 1].set_ylim(-0.05, 1.05)
    axes[0, 1].legend(fontsize=7, loc="lower left")
    return fig


def finetune_figure(results: dict):
    """The fine-tune sweep at 4L: retrieval at 4L (left) and text loss at 4L (right) by
    steps of fine-tuning, each method's seeds as thin lines and their mean thick."""
    fig, axes = _axes(1, 2, height=3.0)
    budgets = results["config"]["finetune"]["budgets"]
    n = results["config"]["finetune"]["factor"] * results["config"]["train_length"]
    for method in results["config"]["finetune_methods"]:
        key = [summary.passkey(results, "rope", n, method, b) for b in budgets]
        text = [summary.text_loss(results, "rope", n, method, b) for b in budgets]
        for ax, per_budget in zip(axes[0], (key, text)):
            _seeds_and_mean(ax, budgets, per_budget, method)
    for ax in axes[0]:
        ax.set_xlabel(_fig("fine-tuning steps at {n} tokens").format(n=n))
        ax.tick_params(labelsize=7)
    axes[0, 0].set_ylabel(_fig("passkey accuracy at {n}").format(n=n))
    axes[0, 0].set_ylim(-0.05, 1.05)
    axes[0, 1].set_ylabel(_fig("text loss at {n}").format(n=n))
    axes[0, 0].legend(fontsize=7, loc="lower right")
    return fig


def mechanism_figure(results: dict, bands: dict, scores):
    """Why plain RoPE fails past L. Left: text loss by chunk of L in the 8L window, as
    trained (results.json) and with every key more than L back hidden (bands[seed]["text"],
    probes.band_probe), each seed thin, the mean thick, over two yardsticks. Right: the
    mean attention score by offset m - n of one model (scores: probes.scores_by_offset's
    "mean" [layers, heads, n]), a line per layer (mean over heads), unseen offsets shaded."""
    fig, axes = _axes(1, 2, height=3.1)
    ax, L = axes[0, 0], results["config"]["train_length"]
    seeds = summary.seeds(results)
    chunks = [
        {s: results["schemes"]["rope"][s]["text"]["loss_by_chunk"][j] for s in seeds}
        for j in range(len(bands[seeds[0]]["text"]))
    ]
    banded = [{s: bands[s]["text"][j] for s in seeds} for j in range(len(chunks))]
    xs = [L * (j + 1) for j in range(len(chunks))]
    last = results["config"]["lengths"][-1]
    for key in ("entropy_rate", "current_word"):
        label, style = YARDSTICKS[key]
        value = summary.yardsticks(results, last)[key]
        ax.axhline(value, ls=style, color="0.55", lw=1, label=_fig(label))
    for per_x, name, label in (
        (chunks, "default", LABELS["default"]),
        (banded, "banded", N_("keys < L back only")),
    ):
        for s in seeds:
            ax.plot(xs, [v[s] for v in per_x], color=COLORS[name], lw=0.6, alpha=0.5)
        means = [summary.mean(v) for v in per_x]
        ax.plot(xs, means, "o-", ms=3, color=COLORS[name], label=_fig(label))
    ax.set_xlabel(_fig("position in the 8L window"), fontsize=9)
    ax.set_ylabel(_fig("text loss (nats)"), fontsize=9)
    ax.legend(fontsize=6, loc="upper left")
    ax = axes[0, 1]
    mean = scores.mean(1)  # over heads: [layers, n]
    n = mean.shape[-1]
    ax.axvspan(L, n, color="0.9", lw=0)
    ax.text(
        L * 1.15,
        0.97,
        _fig("never seen"),
        transform=ax.get_xaxis_transform(),
        va="top",
        fontsize=8,
        color="0.35",
    )
    for layer, row in enumerate(mean):
        ax.plot(
            range(1, n),
            row[1:].tolist(),
            lw=0.7,
            label=_fig("layer {k}").format(k=layer + 1),
        )
    ax.set_xscale("log")
    ax.set_xlim(1, n)
    ax.set_xlabel(_fig("offset m - n (tokens)"), fontsize=9)
    ax.set_ylabel(_fig("mean score q·k/√d"), fontsize=9)
    ax.legend(fontsize=6, loc="lower left")
    for ax in axes[0]:
        ax.tick_params(labelsize=7)
    return fig


FIGURES = {
    "text": text_figure,
    "passkey": passkey_figure,
    "copy": copy_figure,
    "scaling": scaling_figure,
    "finetune": finetune_figure,
}


def save_figures(results: dict, out: Path) -> None:
    """<name>.png in `out` for every figure in FIGURES (100 dpi)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    for name, draw in FIGURES.items():
        fig = draw(results)
        fig.savefig(Path(out) / f"{name}.png")
        plt.close(fig)
