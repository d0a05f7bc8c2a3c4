"""A whole RoPE head (lesson 4): the block-diagonal rotation R_m as a picture.

R_m, for a head of size d, holds the 2x2 block R(m theta_i) of pair i on its diagonal and
zeros elsewhere, with theta_i = b^(-2i/d) (RoFormer, Su et al. 2021, eq. 15). The picture
shows it as a grid of coloured entries (red positive, blue negative), so that the blocks,
the zeros between them, and the fast pairs' large turns against the slow pairs' near-identity
are seen at once. `block_rotation_figure` draws it; `thumbnail()` is the README's picture.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ..language import _fig
from ..rotary import rotation_matrix


def _draw_block(ax, position: int, head_dim: int, base: float, values: bool) -> None:
    R = rotation_matrix(position, head_dim, base).numpy()
    ax.imshow(R, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks([])
    ax.set_yticks([])
    for i in range(head_dim // 2):  # a frame around each pair's 2x2 block
        ax.add_patch(
            _square(2 * i - 0.5, 2 * i - 0.5, 2, lw=1.2),
        )
    if values:
        for r in range(head_dim):
            for c in range(head_dim):
                if abs(R[r, c]) > 0:
                    ax.text(
                        c, r, f"{round(float(R[r, c]), 2) + 0.0:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if abs(R[r, c]) > 0.6 else "black",
                    )  # fmt: skip


def _square(x: float, y: float, size: float, lw: float):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), size, size, fill=False, ec="0.2", lw=lw)


def block_rotation_figure(
    position: int = 2, head_dim: int = 8, base: float = 10000.0
) -> Figure:
    """R_m of a head (m = position), entry by entry: the 2x2 block R(m theta_i) of each pair
    on the diagonal, zeros elsewhere; pair 0 (top left) turns fastest."""
    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    ax = fig.add_axes([0.02, 0.02, 0.6, 0.86])
    _draw_block(ax, position, head_dim, base, values=True)
    ax.set_title(
        _fig("R_m for m = {m}, d = {d}: one 2×2 block per pair").format(
            m=position, d=head_dim
        ),
        fontsize=12,
        loc="left",
    )
    text = fig.add_axes([0.64, 0.02, 0.35, 0.86])
    text.axis("off")
    theta = [base ** (-2 * i / head_dim) for i in range(head_dim // 2)]
    lines = [_fig("pair i: angle m·θ_i")] + [
        f"{i}: {position} × {t:g} = {position * t:g} rad" for i, t in enumerate(theta)
    ]
    text.text(0.0, 0.95, "\n".join(lines), va="top", fontsize=11, linespacing=1.6)
    text.text(
        0.0,
        0.2,
        _fig("zeros off the blocks:\nthe pairs never mix"),
        va="top",
        fontsize=11,
    )
    return fig


def thumbnail() -> Figure:
    """R_m of a d = 8 head at m = 2: four blocks, the fast pair turned, the slow ones not."""
    fig = Figure(figsize=(4, 2.5), dpi=80)
    ax = fig.add_axes([0.25, 0.02, 0.5, 0.8])
    _draw_block(ax, 2, 8, 10000.0, values=False)
    fig.suptitle(_fig("a head's R_m: one rotation per pair"), fontsize=9)
    return fig
