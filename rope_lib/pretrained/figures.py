"""The figures of a results folder, drawn from its results.json alone.

    python -m rope_lib.pretrained.figures DIR     -> DIR/loss_by_position.png, passkey.png,
                                                     pair_norms.png, attention_decay.png,
                                                     attention_sinks.png

Each figure is 6.4 in wide at dpi 100 (640 px: the projector's output area, in the course
style of rope_lib.widgets.style) and reads its numbers from results.json (experiment.py's
module docstring gives its schema), so a lesson can draw the same figures from any folder.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ..widgets.style import course_style, legend_below

COLORS = {
    "plain": "#7f7f7f",
    "pi": "#9467bd",
    "ntk": "#8c564b",
    "dynamic_ntk": "#2ca02c",
    "yarn": "#d62728",
    "yarn_no_attention_factor": "#ff9896",
    "llama3": "#1f77b4",
}
LABELS = {
    "plain": "plain RoPE",
    "pi": "PI",
    "ntk": "NTK-aware",
    "dynamic_ntk": "dynamic NTK",
    "yarn": "YaRN",
    "yarn_no_attention_factor": "YaRN, no attention factor",
    "llama3": "Llama 3",
}
WIDTH = 6.4  # inches at dpi 100: the projector's output area


def _figure(rows=1, cols=1, height=3.6, **kwargs):
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=(WIDTH, height), dpi=100, **kwargs)


def plot_loss(results: dict):
    """Mean loss per bucket of positions, one panel per length (2x, 4x if run), one line
    per method with its min..max over windows as a band; the training length L dotted."""
    settings = results["settings"]
    L, bucket = settings["training_length"], settings["bucket"]
    lengths = [L * stage["factor"] for stage in settings["stages"]]
    fig, axes = _figure(1, len(lengths), height=3.9, sharey=True, squeeze=False)
    for ax, length, stage in zip(axes[0], lengths, settings["stages"]):
        for method in [m for m in COLORS if m in stage["windows"]]:
            factor = 1 if method == "plain" else stage["factor"]
            s = results["summary"].get(f"{method}/x{factor}/{length}")
            if s is None:  # a run in progress
                continue
            x = (np.arange(len(s["mean"])) + 0.5) * bucket / 1000
            color = COLORS[method]
            ax.plot(x, s["mean"], "o-", ms=3, color=color, label=LABELS[method])
            ax.fill_between(x, s["min"], s["max"], color=color, alpha=0.2, lw=0)
        ax.axvline(L / 1000, color="k", ls=":", lw=1)
        ax.set_title(f"windows of {length:,} tokens ({stage['factor']}L); dotted: L")
        ax.set_xlabel("position (thousands of tokens)")
    axes[0, 0].set_ylabel("mean loss (nats)")
    axes[0, 0].legend(loc="upper left", ncol=2, fontsize=10)
    fig.tight_layout()
    return fig


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
        rows.append(f"{LABELS[method]}{scale}, {int(length):,} tokens")
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


FIGURES = {
    "loss_by_position.png": plot_loss,
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
