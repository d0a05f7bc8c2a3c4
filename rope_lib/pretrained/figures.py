"""The figures of a results folder, drawn from its results.json alone.

    python -m rope_lib.pretrained.figures DIR     -> DIR/loss_by_position.png, passkey.png,
                                                     pair_norms.png, attention_decay.png,
                                                     attention_sinks.png

Each figure is 6.4 in wide at dpi 100 (640 px: the projector's output area, in the course
style of rope_lib.figures.style) and reads its numbers from results.json (experiment.py's
module docstring gives its schema), so a lesson can draw the same figures from any folder.

Lesson 15's static figures, in the learner's language (rope_lib.language's `_fig`), read
through results.py:

    loss_figure(results)        mean loss per bucket at each factor, every method run there
    pairs_figure(results)       each pair's share of sum_i |q_i| |k_i|, layer by pair
    attention_figure(results)   attention by distance, and the first token's share by layer
    decay_figure(results)       attention by layer and distance against an even share, the
                                first token left out (heatmap), beside the first token's
                                share by layer
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..figures.style import course_style, integer_ticks, legend_below
from ..language import _fig
from .results import (
    METHOD_NAMES,
    PROBES,
    AttentionResults,
    LossResults,
    PairResults,
    method_label,
)

#: One colour per method, the plain model in black.
METHOD_COLORS = {
    "plain": "#222222",
    "pi": "#9467bd",
    "ntk": "#8c564b",
    "dynamic_ntk": "#2ca02c",
    "yarn": "#d62728",
    "yarn_no_attention_factor": "#ff7f0e",
    "llama3": "#17becf",
    "pi_band": "#bcbd22",
}
DIAGNOSTIC = PROBES
"""Loss units that test an explanation rather than extend the context (results.PROBES):
loss_figure leaves them out unless asked (methods=...)."""
WIDTH = 6.4  # inches at dpi 100: the projector's output area


def _figure(rows=1, cols=1, height=3.6, **kwargs):
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=(WIDTH, height), dpi=100, **kwargs)


def plot_passkey(results: dict):
    """Passkey retrieval: one row per (method, length), one column per depth of the key;
    green retrieved, red not (the share of trials when there are several), blank: not run."""
    summary = results["passkey"]["summary"]
    names = sorted(
        summary, key=lambda n: (int(n.split("/")[2]), n.split("/")[0] != "plain")
    )
    depths = sorted({d for name in names for d in summary[name]["depths"]})
    table = np.full((len(names), len(depths)), np.nan)
    for i, name in enumerate(names):
        for depth, share in zip(summary[name]["depths"], summary[name]["retrieved"]):
            table[i, depths.index(depth)] = share
    fig, ax = _figure(height=1.3 + 0.42 * len(names))
    ax.imshow(table, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    for (i, j), value in np.ndenumerate(table):
        if not np.isnan(value):
            text = "yes" if value == 1 else "no" if value == 0 else f"{value:.0%}"
            ax.text(j, i, text, ha="center", va="center")
    rows = []
    for name in names:
        method, factor, length = name.split("/")
        scale = "" if method == "plain" else f" {factor}"
        rows.append(f"{METHOD_NAMES[method]}{scale}, {int(length):,} tokens")
    ax.set_yticks(range(len(names)), rows)
    ax.set_xticks(range(len(depths)), [f"{d:.0%}" for d in depths])
    L = results["settings"]["training_length"]
    ax.set_xlabel(f"depth of the key in the filler (L = {L:,})")
    fig.suptitle("passkey said back by greedy decoding?")
    fig.tight_layout()
    return fig


def plot_pairs(results: dict):
    """The size of q and of k per frequency pair (RMS over tokens and heads) for every layer,
    as two heat maps (layers x pairs, log colour scale); dashed: the first pair whose
    wavelength 2 pi / theta_i exceeds L (it never turns once within the training length)."""
    from matplotlib.colors import LogNorm

    pairs = results["pairs"]
    q, k = np.array(pairs["q_rms"]), np.array(pairs["k_rms"])
    L = results["settings"]["training_length"]
    slow = np.nonzero(np.array(pairs["wavelength"]) > L)[0]
    norm = LogNorm(vmin=min(q.min(), k.min()), vmax=max(q.max(), k.max()))
    fig, axes = _figure(1, 2, height=3.9, sharey=True)
    for ax, values, name in zip(axes, (q, k), ("q", "k")):
        image = ax.imshow(values, norm=norm, aspect="auto", origin="lower")
        if len(slow):
            ax.axvline(slow[0] - 0.5, color="w", ls="--", lw=1.5)
        ax.set_title(f"size of {name} per pair")
        ax.set_xlabel("pair i (fast → slow)")
    axes[0].set_ylabel("layer")
    fig.colorbar(image, ax=axes, label="RMS of |pair|", fraction=0.05, pad=0.03)
    fig.suptitle(f"dashed: right of it, wavelength 2π/θ_i > L = {L:,}", fontsize=11)
    fig.subplots_adjust(left=0.1, right=0.83, bottom=0.16, top=0.82, wspace=0.08)
    return fig


def plot_decay(results: dict, layers=None):
    """Mean attention weight by distance (log-spaced bins, keys after the sinks), for a
    few layers and the mean over layers, against attention spread evenly."""
    decay = results["decay"]
    weights = np.array(decay["mean_weight"])
    edges = np.array(decay["edges"])
    centers = np.sqrt(np.maximum(edges[:-1], 0.5) * edges[1:])  # geometric, 0 -> 0.7
    n_layers = len(weights)
    layers = layers or [0, n_layers // 2, n_layers - 1]
    fig, ax = _figure(height=3.9)
    for layer in layers:
        ax.plot(centers, weights[layer], "o-", ms=3, label=f"layer {layer}")
    ax.plot(centers, weights.mean(0), "k-", lw=2.4, label="mean of the layers")
    ax.plot(centers, decay["uniform"], "k:", label="attention spread evenly")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("distance m - n (tokens)")
    ax.set_ylabel("mean attention weight")
    ax.set_title("attention by distance on real text (heads averaged)")
    legend_below(ax, ncol=3, fontsize=9)
    fig.tight_layout()
    return fig


def plot_sinks(results: dict):
    """The share of attention on the first token (and the first 4) per layer, heads
    averaged, with what evenly spread attention would put there."""
    sinks = results["sinks"]
    first = np.array(sinks["first_token"])
    layers = np.arange(len(first))
    fig, ax = _figure(height=3.6)
    ax.bar(layers, sinks["first_4_tokens"], color="#aec7e8", label="first 4 tokens")
    ax.bar(layers, first, color="#1f77b4", label="first token")
    ax.axhline(sinks["uniform_first_token"], color="k", ls=":", lw=1.2)
    ax.set_xlabel("layer (dotted: the first token's share if attention were even)")
    ax.set_ylabel("share of attention")
    ax.set_ylim(0, 1)
    ax.set_title("attention sinks: weight on the first token(s)")
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig


# --- lesson 15's static figures ----------------------------------------------------------


def token_label(x, _pos=None) -> str:
    """Tick labels for positions: 8k for 8,192 and up, plain numbers below 1,000."""
    return f"{x / 1024:.0f}k" if x >= 1024 and x % 1024 == 0 else f"{x:.0f}"


def mark_training_length(ax, L: int, top: float) -> None:
    ax.axvline(L, color="k", ls=":", lw=1, zorder=1)
    ax.text(L, top, " L", ha="left", va="top", fontsize=11, color="0.3")


def loss_figure(results: dict, methods=None) -> Figure:
    """Mean loss per position bucket at each factor, every method evaluated there (or the
    methods named; by default all but DIAGNOSTIC), on the windows they all ran on; plain
    RoPE in black; dotted: L; dashed: the plain model's loss inside L."""
    data = LossResults(results)
    chosen = set(data.methods) - set(DIAGNOSTIC) if methods is None else set(methods)
    figure = Figure(figsize=(6.4, 3.6), dpi=100)
    ratios = [f for f in data.factors]
    axes = figure.subplots(1, len(ratios), sharey=True, width_ratios=ratios)
    axes = np.atleast_1d(axes)
    low, high = data.limits()
    handles = {}
    for ax, factor in zip(axes, data.factors):
        shared = data.shared(factor)
        probes = [p for p in data.probes if p in chosen and data.windows(p, factor)]
        for method in data.methods_at(factor) + probes:
            if method != "plain" and method not in chosen:
                continue
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
        mark_training_length(ax, data.L, high + 0.05 * (high - low))
        ax.set_xlim(0, factor * data.L)
        ax.set_xticks(np.arange(0, factor * data.L + 1, data.L))
        ax.xaxis.set_major_formatter(FuncFormatter(token_label))
        ax.set_title(_fig("s = {factor}, windows of {factor}L").format(factor=factor))
        ax.set_xlabel(_fig("position (tokens)"))
    axes[0].set_ylabel(_fig("loss (nats)"))
    axes[0].set_ylim(low - 0.1, high + 0.1 * (high - low))
    figure.legend(
        handles=[
            handles[m] for m in ["plain", *data.methods, *data.probes] if m in handles
        ],
        loc="lower center",
        ncol=4,
        fontsize=10,
        handlelength=1.4,
        columnspacing=0.9,
    )
    figure.subplots_adjust(left=0.09, right=0.96, top=0.92, bottom=0.3, wspace=0.12)
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
    left.xaxis.set_major_formatter(FuncFormatter(token_label))
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


def decay_figure(results: dict) -> Figure:
    """Left: a heatmap, layer by distance m - n (log bins from 1), of the mean attention
    weight with the first token left out and each query renormalised, over what evenly
    spread attention gives the same way (AttentionResults.ratio_without_first): red more
    than an even share, blue less, on a log scale centred on 1. Right: the first token's
    share of attention by layer, on the same rows. 6.4 in wide at dpi 100 (640 px)."""
    from matplotlib.colors import LogNorm

    a = AttentionResults(results)
    ratio = a.ratio_without_first()
    if ratio is None:
        raise ValueError(
            "results['decay'] has no mean_weight_without_first: run "
            "python -m rope_lib.pretrained again on this folder to measure it"
        )
    ratio = ratio[:, 1:]  # distance 0 (the query itself) left out
    distances = a.distances()[1:]
    layers = np.arange(ratio.shape[0])
    figure = Figure(figsize=(6.4, 3.7), dpi=100)
    left = figure.add_axes((0.09, 0.14, 0.5, 0.77))
    scale = figure.add_axes((0.605, 0.14, 0.022, 0.77))
    right = figure.add_axes((0.74, 0.14, 0.23, 0.77), sharey=left)
    image = left.imshow(
        ratio,
        norm=LogNorm(vmin=1 / 32, vmax=32),
        cmap="RdBu_r",
        aspect="auto",
        origin="lower",
        extent=(-0.5, len(distances) - 0.5, -0.5, len(layers) - 0.5),
    )
    left.set_xticks(range(len(distances))[::2])
    left.set_xticklabels([token_label(d) for d in distances[::2]], fontsize=9)
    left.set_xlabel(_fig("distance m - n (tokens)"), fontsize=10)
    left.set_ylabel(_fig("layer"), fontsize=10)
    left.set_title(_fig("attention / even share, first token left out"), fontsize=10)
    integer_ticks(left.yaxis)
    left.tick_params(labelsize=9)
    bar = figure.colorbar(image, cax=scale)
    bar.set_ticks([1 / 16, 1 / 4, 1, 4, 16])
    bar.set_ticklabels(["1/16", "1/4", "1", "4", "16"], fontsize=9)
    right.barh(layers, a.first, color="C3", height=0.8)
    right.axvline(a.uniform_first, color="0.4", ls="--", lw=1)
    right.set_xlim(0, 1)
    right.set_xticks([0, 0.5, 1])
    right.tick_params(labelsize=9)
    right.set_xlabel(_fig("share"), fontsize=10)
    right.set_title(_fig("on the first token"), fontsize=10)
    return figure


FIGURES = {
    "loss_by_position.png": loss_figure,
    "passkey.png": plot_passkey,
    "pair_norms.png": plot_pairs,
    "attention_decay.png": plot_decay,
    "attention_sinks.png": plot_sinks,
}


def save_figures(folder) -> list[Path]:
    """Draw every figure of FIGURES from folder/results.json into folder (PNG, dpi 100)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    results = json.loads((folder / "results.json").read_text())
    saved = []
    with course_style():
        for name, plot in FIGURES.items():
            fig = plot(results)
            fig.savefig(folder / name, dpi=100, metadata={"Software": None})
            plt.close(fig)
            saved.append(folder / name)
    return saved


if __name__ == "__main__":
    for path in save_figures(sys.argv[1]):
        print(path)
