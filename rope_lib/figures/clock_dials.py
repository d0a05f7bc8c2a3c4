"""The clock dials of lesson 7: one dial per RoPE pair, a hand at angle m theta_i.

draw_dials (the faces and one hand per dial), dial_centres, dial_label and relabel (labels
as outlines, text_path, in label_font): the live widget (rope_lib.widgets.clock_dials) and
thumbnail() (four pairs at position 5) draw with them.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.font_manager import FontProperties
from matplotlib.patches import PathPatch
from matplotlib.textpath import TextPath
from matplotlib.transforms import Affine2D

from ..language import _fig, cjk_font, get_language
from ..rotary import inv_frequencies

_CIRCLE = np.linspace(0.0, 2.0 * math.pi, 97)


LABEL_SIZE = 0.36  # data units: about 10 pt in the live figure (a dial's radius is 1)


def dial_centres(
    n_pairs: int, columns: int, dx: float = 3.5, dy: float = 3.25
) -> np.ndarray:
    return np.array(
        [((i % columns) * dx, -(i // columns) * dy) for i in range(n_pairs)],
        dtype=float,
    )


def label_font() -> FontProperties:
    """The dials' label font: DejaVu Sans, after the CJK font when figures speak Chinese
    (the language's `_fig` gives Chinese words only when that font exists)."""
    font = cjk_font() if get_language() != "en" else None
    return FontProperties(family=[font, "DejaVu Sans"] if font else "DejaVu Sans")


def text_path(x: float, y: float, text: str, size: float = LABEL_SIZE):
    """`text` as a filled outline in data units, centred on x, top at y.

    The dials label themselves with outlines rather than Text artists: a path draws as fast as a
    line, while each Text is laid out and rasterised glyph by glyph on every draw (most of the
    drawing time with 17 labels)."""
    path = TextPath((0, 0), text, size=size, prop=label_font())
    lo, hi = (
        path.vertices.min(axis=0),
        path.vertices.max(axis=0),
    )  # control points: quick, close enough
    return Affine2D().translate(x - (lo[0] + hi[0]) / 2, y - hi[1]).transform_path(path)


def dial_label(
    ax, x: float, y: float, text: str, color="black", size: float = LABEL_SIZE
):
    """A label of the dials: `text` as an outline (text_path), centred on x, top at y."""
    return ax.add_patch(PathPatch(text_path(x, y, text, size), lw=0, fc=color))


def relabel(label, x: float, y: float, text: str) -> None:
    """Give a dial_label new text (the live dials relabel at every step)."""
    label.set_path(text_path(x, y, text))


def draw_dials(ax, centres: np.ndarray):
    """The static part of the dials (faces, ticks at angle 0) and one hand per dial."""
    hands = []
    for cx, cy in centres:
        ax.plot(cx + np.cos(_CIRCLE), cy + np.sin(_CIRCLE), color="0.55", lw=1.2)
        ax.plot(
            [cx + 0.88, cx + 1.0], [cy, cy], color="0.3", lw=1.5
        )  # angle 0 (position 0)
        ax.plot([cx], [cy], "o", color="0.25", ms=3)
        (hand,) = ax.plot(
            [cx, cx + 1.0], [cy, cy], color="tab:red", lw=2.2, solid_capstyle="round"
        )
        hands.append(hand)
    ax.set_aspect("equal")
    ax.axis("off")
    return hands


def thumbnail():
    """Four RoPE pairs as clock hands at position 5: fast pairs far round, slow ones hardly moved."""
    head_dim, position = 8, 5
    with plt.ioff():
        figure = plt.figure(figsize=(4, 2.5), dpi=80)
    ax = figure.add_axes([0.02, 0.1, 0.96, 0.72])
    centres = dial_centres(4, 4)
    speeds = inv_frequencies(head_dim).numpy()
    hands = draw_dials(ax, centres)
    for hand, (cx, cy), s in zip(hands, centres, speeds):
        dial_label(ax, cx, cy + 1.55, f"θ = {s:.3g}", size=0.34)
        hand.set_data(
            [cx, cx + 0.95 * math.cos(position * s)],
            [cy, cy + 0.95 * math.sin(position * s)],
        )
    ax.set_xlim(-1.3, centres[-1, 0] + 1.3)
    ax.set_ylim(-1.1, 1.65)
    figure.suptitle(_fig("RoPE: each pair is a complex number"), fontsize=10)
    figure.text(
        0.5,
        0.04,
        _fig("turned by e^(i m θ) at position m = {position}").format(
            position=position
        ),
        ha="center",
        fontsize=9,
    )
    return figure
