"""The extrapolation lab's picture for the README (its lesson's figures are rope_lib.lab.figures).

thumbnail(): the mean text loss by window length of every scheme, trained at L, on the
results the lesson reads.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from ..lab import summary
from ..lab.figures import COLORS, LABELS
from ..lab.results import load_results
from ..language import _fig


def thumbnail() -> Figure:
    """The lab in one picture: mean text loss by window length of every scheme, trained
    at L, over the entropy rate (the best possible)."""
    results = load_results()
    config = results["config"]
    lengths = config["lengths"]
    figure = Figure(figsize=(4.0, 2.5), dpi=80)
    ax = figure.subplots()
    entropy = [summary.yardsticks(results, n)["entropy_rate"] for n in lengths]
    ax.plot(lengths, entropy, "-", color="0.6", lw=1, label=_fig("entropy rate"))
    for scheme in config["schemes"]:
        ax.plot(
            lengths,
            [summary.mean(summary.text_loss(results, scheme, n)) for n in lengths],
            "o-",
            color=COLORS[scheme],
            label=_fig(LABELS[scheme]),
            ms=3,
            lw=1.4,
        )
    ax.axvline(config["train_length"], color="k", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(_fig("window (tokens)"), fontsize=8)
    ax.set_ylabel(_fig("text loss (nats)"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, ncol=2, loc="upper left", frameon=False)
    figure.suptitle(_fig("train at L, test at 8L"), fontsize=10)
    figure.subplots_adjust(left=0.14, right=0.97, bottom=0.2, top=0.84)
    return figure
