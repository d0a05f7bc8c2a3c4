"""Lesson 10's still figures on attention entropy and temperature, drawn from the committed
measurements (rope_lib.attention_study.read) and numbers the lesson computes.

thumbnail()                 the README's picture of lesson 10: entropy against n, random
                            logits and SmolLM2's layers, beside ln n
entropy_length_figure       entropy against the number of keys n: random q and k (per
                            sigma, against ln n - sigma^2/2) and SmolLM2 per layer
spread_figure               the logits' spread against n: random q and k, SmolLM2 per layer
entropy_change_figure       what PI and YaRN (with and without its factor) change in
                            SmolLM2's entropy inside L, layer by layer
sweep_figure                the temperature sweep: text loss past L against 1/t, per factor

PAIR_NAMES names what YaRN (or Llama 3) does to a pair: kept, blended, divided by s.
"""

from __future__ import annotations

import numpy as np

from ..language import N_, _fig

#: What YaRN and Llama 3 do to a pair, in the order of rope_lib's regimes (0, 1, 2).
PAIR_NAMES = (N_("kept"), N_("blended"), N_("divided by s"))
COLORS = {
    "pi": "#9467bd",
    "yarn_no_attention_factor": "#ff7f0e",
    "yarn": "#d62728",
    "logn": "#2ca02c",
}
METHOD_LABELS = {
    "pi": "PI",
    "yarn_no_attention_factor": N_("YaRN without its factor"),
    "yarn": "YaRN",
    "logn": N_("log-n scaling"),
}


def _figure(size):
    from matplotlib.figure import Figure

    return Figure(figsize=size, dpi=100)


def thumbnail():
    """Entropy against the number of keys: random logits (sigma = 1), SmolLM2's layers
    (mean and range) and ln n."""
    from ..attention_study import read

    random, smol = read("random"), read("smollm2.entropy")
    fig = _figure((4, 2.5))
    fig.set_dpi(80)
    ax = fig.add_subplot(1, 1, 1)
    n = random["n"]
    ax.plot(n, random["uniform"], "k--", lw=1, label="ln n")
    ax.plot(n, random["mean"][1], "o-", ms=3, color="#1f77b4",
            label=_fig("random q, k"))  # fmt: skip
    points, layers = smol["points"], smol["plain"]
    ax.fill_between(points, layers.min(0), layers.max(0), color="#d62728", alpha=0.2)
    ax.plot(points, layers.mean(0), color="#d62728", label="SmolLM2")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(_fig("keys n"), fontsize=8)
    ax.set_ylabel(_fig("entropy (nats)"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(_fig("Attention entropy against length"), fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left")
    fig.tight_layout()
    return fig


def entropy_length_figure(random: dict, smollm2: dict, L: int):
    """Left: random q and k, the entropy's mean over trials at each n for each sigma
    (dots) against ln n - sigma^2/2 (lines) and ln n. Right: SmolLM2's entropy per layer
    (thin, mean over heads) and their mean (bold) against n, with L marked."""
    fig = _figure((6.4, 3.0))
    left, right = fig.subplots(1, 2, sharey=True)
    n = random["n"]
    for sigma, mean, analytic in zip(
        random["sigma"], random["mean"], random["analytic"]
    ):
        (dots,) = left.plot(n, mean, "o", ms=4)
        left.plot(
            n, analytic, "-", lw=1, color=dots.get_color(), label=f"σ = {sigma:g}"
        )
    left.plot(n, random["uniform"], "k--", lw=1, label="ln n")
    left.set_title(_fig("random q, k"))
    left.set_ylabel(_fig("entropy (nats)"))
    left.legend(fontsize=8.5, frameon=False, loc="upper left")
    points, layers = smollm2["points"], smollm2["plain"]
    for row in layers:
        right.plot(points, row, color="0.6", lw=0.6)
    right.plot(points, layers.mean(0), color="#d62728", lw=2.2,
               label=_fig("mean of 30 layers"))  # fmt: skip
    right.plot(points, smollm2["uniform"], "k--", lw=1, label="ln n")
    right.axvline(L, color="black", lw=1, ls=":")
    right.text(L * 1.05, 0.4, "L", fontsize=11)
    right.set_title("SmolLM2-135M")
    right.legend(fontsize=8.5, frameon=False, loc="upper left")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel(_fig("keys n"))
    fig.tight_layout()
    return fig


def spread_figure(smollm2: dict, random_n, random_std, sigma: float, L: int):
    """The standard deviation of a query's logits over its keys against n: SmolLM2 per
    layer (thin, mean over heads; mean bold) and random q and k at spread sigma."""
    fig = _figure((6.4, 2.8))
    ax = fig.subplots()
    points, layers = smollm2["points"], smollm2["logit_std"]
    for row in layers:
        ax.plot(points, row, color="0.6", lw=0.6)
    ax.plot(points, layers.mean(0), color="#d62728", lw=2.2,
            label=_fig("SmolLM2, mean of 30 layers"))  # fmt: skip
    ax.plot(random_n, random_std, "o-", color="#1f77b4",
            label=_fig("random q, k (σ = {sigma:g})").format(sigma=sigma))  # fmt: skip
    ax.axvline(L, color="black", lw=1, ls=":")
    ax.text(L * 1.05, 0.3, "L", fontsize=11)
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(_fig("keys n"))
    ax.set_ylabel(_fig("logit spread (std)"))
    ax.legend(fontsize=9, frameon=False, loc="upper left")
    fig.tight_layout()
    return fig


def entropy_change_figure(
    change: dict, methods=("pi", "yarn_no_attention_factor", "yarn")
):
    """What each method changes in SmolLM2's entropy at factor 2, per layer: the mean
    over the lengths inside L (method minus plain RoPE, nats), zero marked."""
    fig = _figure((6.4, 2.8))
    ax = fig.subplots()
    for method in methods:
        values = change[method]
        ax.plot(np.arange(len(values)), values, "o-", ms=3.5, color=COLORS[method],
                label=_fig(METHOD_LABELS[method]))  # fmt: skip
    ax.axhline(0, color="black", lw=1)
    ax.set_xlabel(_fig("layer"))
    ax.set_ylabel(_fig("entropy change (nats)"))
    ax.legend(fontsize=9, frameon=False, ncol=3, loc="upper left")
    fig.tight_layout()
    return fig


def sweep_figure(sweeps: dict):
    """The temperature sweep, one panel per factor ("x2", "x4"): the text loss in each
    2,048-token bucket past L (gray dots) and their mean (black dots), each less its
    lowest swept point, against the logit multiplier 1/t; the parabola in ln(1/t) fitted to the mean
    (best_multiplier's), YaRN's 1/t (red) and the parabola's lowest (dashed)."""
    fig = _figure((6.4, 2.9))
    axes = fig.subplots(1, len(sweeps), sharey=True)
    for ax, (name, sweep) in zip(np.atleast_1d(axes), sweeps.items()):
        multipliers = sweep["attention_factor"] ** 2
        first = int(sweep["first_bucket_past_L"])
        past = sweep["loss"][:, first:]
        for j, column in enumerate(past.T):
            label = _fig("each 2,048-token bucket") if j == 0 else None
            ax.plot(multipliers, column - column.min(), "o", color="0.6", ms=3,
                    label=label)  # fmt: skip
        mean = past.mean(1)
        # the parabola in ln(1/t) that best_multiplier fits to the mean, and its points
        u = np.log(multipliers)
        fitted = np.poly1d(np.polyfit(u, mean, 2))
        grid = np.linspace(u.min(), u.max(), 100)
        ax.plot(np.exp(grid), fitted(grid) - mean.min(), color="black", lw=1.5,
                label=_fig("parabola fit"))  # fmt: skip
        ax.plot(multipliers, mean - mean.min(), "o", color="black", ms=6,
                label=_fig("their mean"))  # fmt: skip
        ax.axvline(sweep["yarn"]["logit_multiplier"], color="#d62728", lw=1.5,
                   label=_fig("YaRN's 1/t"))  # fmt: skip
        ax.axvline(sweep["best_past_L"]["logit_multiplier"], color="black", lw=1,
                   ls="--", label=_fig("parabola's lowest"))  # fmt: skip
        ax.set_title(_fig("factor s = {s}").format(s=name.lstrip("x")))
        ax.set_xlabel(_fig("logit multiplier 1/t"))
    np.atleast_1d(axes)[0].set_ylabel(_fig("loss above the lowest point"))
    np.atleast_1d(axes)[0].legend(fontsize=8.5, frameon=False, loc="upper center")
    fig.tight_layout()
    return fig


__all__ = [
    "PAIR_NAMES",
    "entropy_change_figure",
    "entropy_length_figure",
    "spread_figure",
    "sweep_figure",
    "thumbnail",
]
