"""Lesson 14's picture, and the colours of the three position axes (t, h, w).

thumbnail(): the (t, h, w) ids of text, a 2 x 3 image and text; AXIS_COLORS, TEXT_COLOR and
tint() colour the live widgets (rope_lib.widgets.multimodal) too.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from ..language import _fig
from ..multimodal import mrope_position_ids

AXIS_COLORS = ("#4c72b0", "#dd8452", "#55a868")  # t, h, w


TEXT_COLOR = "#d9d9d9"


def tint(color, amount):
    """color mixed with white: amount 0 = white, 1 = the color."""
    rgb = np.array(to_rgb(color))
    return tuple(1 - amount * (1 - rgb))


def thumbnail() -> Figure:
    """Lesson 14 in one picture: the (t, h, w) ids of text, a 2 x 3 image and text."""
    figure = Figure(figsize=(4.0, 2.5), dpi=80)
    ax = figure.subplots()
    ids = mrope_position_ids([3, (1, 2, 3), 3]).numpy()
    n = ids.shape[1]
    colors = np.empty((3, n, 3))
    for r in range(3):
        for j in range(n):
            colors[r, j] = (
                tint(AXIS_COLORS[r], 0.45) if 3 <= j < 9 else to_rgb(TEXT_COLOR)
            )
            ax.text(j, r, str(ids[r, j]), ha="center", va="center", fontsize=8)
    ax.imshow(colors, interpolation="nearest", aspect="auto")
    ax.set_yticks([0, 1, 2], ["t", "h", "w"])
    ax.set_xticks([1, 6, 10], [_fig("text"), _fig("image 2×3"), _fig("text")])
    ax.tick_params(length=0, labelsize=8)
    figure.suptitle(_fig("M-RoPE: three position ids per token"), fontsize=10)
    figure.subplots_adjust(left=0.1, right=0.97, bottom=0.15, top=0.82)
    return figure
