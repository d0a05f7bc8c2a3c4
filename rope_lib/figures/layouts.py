"""Lesson 6's picture: which coordinates of a head RoPE pairs up, in its two layouts, and
the permutation between them.

layout_figure(head_dim) draws two rows of coordinate boxes. Top, the interleaved layout
(Meta's LLaMA, GPT-J): pair i is coordinates (2i, 2i + 1). Bottom, the half layout (GPT-NeoX,
Hugging Face): pair i is coordinates (i, i + d/2). Each box is coloured by its pair, and a
line joins each coordinate to the slot rope_lib.interleaved_to_half moves it to. The two
members of a pair are joined by an arc: short in the top row, half a head long in the bottom.
thumbnail() is the same picture for the README.
"""

from __future__ import annotations

import matplotlib
import torch
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ..language import _fig
from ..rotary import interleaved_to_half
from .style import MAX_WIDTH


def _row(ax, y: float, labels, pairs, colors, fontsize: float) -> None:
    for slot, (label, pair) in enumerate(zip(labels, pairs)):
        ax.add_patch(
            FancyBboxPatch(
                (slot - 0.38, y - 0.3),
                0.76,
                0.6,
                boxstyle="round,pad=0.02",
                facecolor=colors[pair],
                edgecolor="0.25",
                lw=1,
            )
        )
        ax.text(slot, y, label, ha="center", va="center", fontsize=fontsize)


def _arc(ax, a: int, b: int, y: float, up: bool, color) -> None:
    """An arc from slot a to slot b, above (up) or below row y."""
    t = torch.linspace(0, 1, 40)
    height = 0.18 + 0.07 * abs(b - a)
    xs = a + (b - a) * t
    ys = y + (1 if up else -1) * (0.32 + height * torch.sin(torch.pi * t))
    ax.plot(xs, ys, color=color, lw=1.6)


def layout_figure(head_dim: int = 8, fontsize: float = 12, width: float = MAX_WIDTH):
    """The interleaved (top) and half (bottom) layouts of a head of size head_dim, boxes
    coloured by pair, lines showing where interleaved_to_half moves each coordinate."""
    half = head_dim // 2
    order = interleaved_to_half(
        torch.arange(head_dim)
    ).tolist()  # slot j <- x[order[j]]
    cmap = matplotlib.colormaps["tab10"]
    colors = [cmap(i % 10) for i in range(half)]
    fig = Figure(figsize=(width, width * 0.52), layout="constrained")
    ax = fig.add_subplot()
    top, bottom = 2.0, 0.0
    _row(
        ax,
        top,
        [f"$x_{j}$" for j in range(head_dim)],
        [j // 2 for j in range(head_dim)],
        colors,
        fontsize,
    )
    _row(
        ax,
        bottom,
        [f"$x_{order[j]}$" for j in range(head_dim)],
        [order[j] // 2 for j in range(head_dim)],
        colors,
        fontsize,
    )
    for i in range(half):
        _arc(ax, 2 * i, 2 * i + 1, top, True, colors[i])
        _arc(ax, i, i + half, bottom, False, colors[i])
    for slot, source in enumerate(order):
        ax.annotate(
            "",
            xy=(slot, bottom + 0.34),
            xytext=(source, top - 0.34),
            arrowprops=dict(arrowstyle="-|>", color=colors[source // 2], lw=1.3),
        )
    ax.text(
        -0.55,
        top + 0.95,
        _fig("interleaved: pair i = (2i, 2i + 1)"),
        fontsize=fontsize,
        ha="left",
        va="center",
    )
    ax.text(
        -0.55,
        bottom - 1.25,
        _fig("half: pair i = (i, i + d/2)"),
        fontsize=fontsize,
        ha="left",
        va="center",
    )
    ax.text(
        (head_dim - 1) / 2,
        (top + bottom) / 2,
        "interleaved_to_half",
        fontsize=fontsize - 1,
        ha="center",
        va="center",
        color="0.2",
        family="monospace",
        bbox=dict(facecolor="white", edgecolor="0.6", pad=2),
    )
    ax.set_xlim(-0.6, head_dim - 0.4)
    ax.set_ylim(bottom - 1.5, top + 1.2)
    ax.set_axis_off()
    return fig


def thumbnail() -> Figure:
    """Lesson 6 in one picture: the two layouts of a head of 8 and the permutation."""
    return layout_figure(8, fontsize=9, width=4.0)
