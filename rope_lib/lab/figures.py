"""The lab's figures, drawn from results.json alone (the lesson and the CLI share them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..language import N_, _fig

COLORS = {
    "none": "#7f7f7f",
    "sinusoidal": "#1f77b4",
    "learned": "#9467bd",
    "rope": "#d62728",
    "alibi": "#2ca02c",
}
#: How each scheme is named in legends, titles and buttons (English; shown through `_`).
LABELS = {
    "none": "NoPE",
    "sinusoidal": N_("sinusoidal"),
    "learned": N_("learned"),
    "rope": "RoPE",
    "alibi": "ALiBi",
}


def plot_lm(results: dict, ax=None, schemes=None):
    """Mean loss over the window against window length, one line per scheme, with the
    min..max over seeds as a band; the training length marked."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig_unused, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    lengths = results["config"]["eval_lengths"]
    for scheme in schemes or results["config"]["schemes"]:
        s = results["lm"][scheme]["summary"]
        mean = [s[str(n)]["mean"] for n in lengths]
        low = [s[str(n)]["min"] for n in lengths]
        high = [s[str(n)]["max"] for n in lengths]
        ax.plot(lengths, mean, "o-", color=COLORS[scheme], label=_fig(LABELS[scheme]))
        ax.fill_between(lengths, low, high, color=COLORS[scheme], alpha=0.2, lw=0)
    ax.axvline(results["config"]["train_length"], color="k", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_xlabel(_fig("evaluation window (tokens); dotted: training length L"))
    ax.set_ylabel(_fig("mean loss (nats)"))
    ax.legend(fontsize=8, ncol=2)
    return ax


def plot_passkey(results: dict, panels, titles=None):
    """One heatmap per panel (lengths x depths, mean exact-match accuracy over seeds).
    panels: list of (kind, name) with kind "scheme" (zero-shot, trained at L) or
    ("zero_shot" | "finetuned", method) for the RoPE scaling runs."""
    import matplotlib.pyplot as plt

    config = results["config"]
    lengths, depths = config["passkey_lengths"], config["passkey_depths"]
    # at most four panels a row, so the figure stays 6.4 in wide (the projector's output area)
    ncols = min(4, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(6.4, 2.2 * nrows + 0.3),
        dpi=100,
        squeeze=False,
        layout="constrained",
    )
    flat = list(axes.flat)
    for ax in flat[len(panels) :]:
        ax.set_visible(False)
    for k, (ax, (kind, name)) in enumerate(zip(flat, panels)):
        if kind == "scheme":
            grid = results["passkey"][name]["summary"]["mean"]
            title = _fig(LABELS[name])
        else:
            grid = results["finetune"][name][kind]["passkey"]["mean"]
            if kind == "finetuned":
                title = _fig("{method} FT").format(method=name)
            else:
                title = _fig("{method} 0-shot").format(method=name)
        image = ax.imshow(np.array(grid), vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_title(titles[k] if titles else title, fontsize=9)
        ax.set_xticks(range(len(depths)), [f"{d:g}" for d in depths], fontsize=7)
        first_column = k % ncols == 0
        ax.set_yticks(
            range(len(lengths)), [str(n) for n in lengths] if first_column else []
        )
        if first_column:
            ax.set_ylabel(_fig("length"))
        ax.set_xlabel(_fig("depth"), fontsize=8)
    fig.colorbar(image, ax=flat[: len(panels)], shrink=0.8, label=_fig("accuracy"))
    return fig


def plot_scaling(results: dict, factor: str, ax=None):
    """RoPE model, every scaling method at one factor (zero-shot): loss against length."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig_unused, ax = plt.subplots(figsize=(6.4, 3.4), dpi=100)
    lengths = results["config"]["eval_lengths"]
    for method in results["config"]["methods"]:
        s = results["rope_scaling"][method][factor]["summary"]
        ax.plot(lengths, [s[str(n)]["mean"] for n in lengths], "o-", label=method)
    ax.axvline(results["config"]["train_length"], color="k", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.set_xlabel(_fig("evaluation window (tokens)"))
    ax.set_ylabel(_fig("mean loss (nats)"))
    ax.set_title(
        _fig("RoPE model, scaled at evaluation, factor {factor}").format(factor=factor),
        fontsize=10,
    )
    ax.legend(fontsize=8, ncol=3)
    return ax


def save_figures(results: dict, out: Path) -> None:
    """lm.png, passkey.png, scaling.png in `out` (PNG, 100 dpi)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    ax = plot_lm(results)
    ax.figure.tight_layout()
    ax.figure.savefig(out / "lm.png")
    plt.close(ax.figure)
    panels = [("scheme", s) for s in results["config"]["schemes"]]
    panels += [("zero_shot", "linear"), ("finetuned", "linear"), ("finetuned", "yarn")]
    fig = plot_passkey(results, panels)
    fig.savefig(out / "passkey.png")
    plt.close(fig)
    factor = str(results["config"]["finetune"]["factor"])
    ax = plot_scaling(results, factor)
    ax.figure.tight_layout()
    ax.figure.savefig(out / "scaling.png")
    plt.close(ax.figure)
