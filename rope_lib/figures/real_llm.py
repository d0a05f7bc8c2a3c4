"""Lesson 15's picture for the README (its figures are rope_lib.pretrained.figures).

thumbnail(): plain RoPE breaks past L, YaRN holds, on the results the lesson reads.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from ..language import _fig
from ..pretrained.figures import METHOD_COLORS, token_label
from ..pretrained.results import LossResults, load_results, method_label


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
    ax.xaxis.set_major_formatter(FuncFormatter(token_label))
    ax.set_xlabel(_fig("position (tokens)"), fontsize=8)
    ax.set_ylabel(_fig("loss (nats)"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, loc="upper left", frameon=False)
    figure.suptitle(_fig("SmolLM2-135M past its training length"), fontsize=10)
    figure.subplots_adjust(left=0.14, right=0.97, bottom=0.2, top=0.84)
    return figure
