"""The 2D-rotation lesson's plane and still figures.

PairPlane: the artists of one plane (unit circle, q and k faded, q' and k' solid, the arcs
m theta and n theta, labels), created once and moved by set(); the live widgets of lessons 3
and 5 draw on it too. rotate_qk turns q and k through rope_lib.apply_rope.
polar_rotation_figure (a vector turned by alpha), frequency_figure (one offset seen by a
fast and a slow pair) and thumbnail() (q and k turned by m theta and n theta).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ..derivation import closed_form_score, from_polar
from ..language import _fig
from ..rotary import apply_rope

Q_COLOR = "#1f77b4"


K_COLOR = "#d62728"


def arc_points(start: float, sweep: float, radius: float, points: int = 64):
    """An arc from angle `start` turning by `sweep` (radians); past a full turn it spirals
    outwards a little, so that every turn stays visible."""
    t = np.linspace(0.0, 1.0, points)
    a = start + sweep * t
    r = radius + 0.06 * np.abs(sweep) * t / (2 * math.pi)
    return r * np.cos(a), r * np.sin(a)


class PairPlane:
    """The artists of one plane: unit circle, q and k faded, q' and k' solid, two arcs, labels.
    Created once; set() moves them in place."""

    def __init__(
        self, ax, limit: float = 2.2, fontsize: float = 10, labels: bool = True
    ):
        self.ax = ax
        ax.set_aspect("equal")
        ax.set_xlim(-limit, limit)
        ax.set_ylim(-limit, limit)
        ax.axhline(0, color="0.85", lw=0.8, zorder=0)
        ax.axvline(0, color="0.85", lw=0.8, zorder=0)
        circle = np.linspace(0, 2 * math.pi, 200)
        ax.plot(np.cos(circle), np.sin(circle), color="0.6", lw=1, ls="--", zorder=0)
        kw = dict(angles="xy", scale_units="xy", scale=1, width=0.012, zorder=3)
        colors = [Q_COLOR, K_COLOR]
        self.original = ax.quiver(
            [0, 0], [0, 0], [1, 0], [0, 1], color=colors, alpha=0.3, **kw
        )
        self.rotated = ax.quiver([0, 0], [0, 0], [1, 0], [0, 1], color=colors, **kw)
        self.arc_q = Line2D([], [], color=Q_COLOR, lw=1.5)
        self.arc_k = Line2D([], [], color=K_COLOR, lw=1.5)
        ax.add_line(self.arc_q)
        ax.add_line(self.arc_k)
        self.labels = labels
        if labels:
            text = dict(fontsize=fontsize, ha="center", va="center", zorder=5)
            self.tip = {
                name: ax.text(0, 0, name, color=c, alpha=a, **text)
                for name, c, a in (
                    ("q", Q_COLOR, 0.5),
                    ("k", K_COLOR, 0.5),
                    ("q'", Q_COLOR, 1),
                    ("k'", K_COLOR, 1),
                )
            }
            small = dict(
                text,
                fontsize=fontsize * 0.85,
                bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8),
            )
            self.arc_label_q = ax.text(0, 0, "", color=Q_COLOR, **small)
            self.arc_label_k = ax.text(0, 0, "", color=K_COLOR, **small)
        # no ticks, no axis machinery to lay out on every redraw: just a frame
        ax.axis("off")
        ax.add_patch(
            Rectangle(
                (0, 0),
                1,
                1,
                transform=ax.transAxes,
                fill=False,
                lw=0.8,
                ec="0.3",
                clip_on=False,
            )
        )

    @property
    def moving(self):
        """The artists set() changes, for a Redrawer, in the order a full draw stacks them (by
        zorder: arcs, arrows, labels), so that a blit paints the same picture."""
        artists = [self.original, self.rotated, self.arc_q, self.arc_k]
        if self.labels:
            artists += [*self.tip.values(), self.arc_label_q, self.arc_label_k]
        return sorted(artists, key=lambda a: a.get_zorder())

    def set(
        self, q, k, q_rot, k_rot, angle_q: float, angle_k: float, names=("m", "n")
    ) -> None:
        """q, k, q_rot, k_rot: 2-vectors; angle_q, angle_k: the rotation angles in radians."""
        self.original.set_UVC([q[0], k[0]], [q[1], k[1]])
        self.rotated.set_UVC([q_rot[0], k_rot[0]], [q_rot[1], k_rot[1]])
        phi_q, phi_k = math.atan2(q[1], q[0]), math.atan2(k[1], k[0])
        self.arc_q.set_data(*arc_points(phi_q, angle_q, 0.55))
        self.arc_k.set_data(*arc_points(phi_k, angle_k, 0.35))
        if self.labels:
            for name, v in (("q", q), ("k", k), ("q'", q_rot), ("k'", k_rot)):
                length = math.hypot(v[0], v[1])
                self.tip[name].set_position(
                    (v[0] * (1 + 0.18 / length), v[1] * (1 + 0.18 / length))
                )
            arrows = [math.atan2(v[1], v[0]) for v in (q, k, q_rot, k_rot)]
            for label, phi, angle, radius, name in (
                (self.arc_label_q, phi_q, angle_q, 0.55, names[0]),
                (self.arc_label_k, phi_k, angle_k, 0.35, names[1]),
            ):
                label.set_position(arc_label_position(phi, angle, radius, arrows))
                label.set_text(f"{_fig(name)}θ" if abs(angle) > 0.15 else "")


def _angle_gap(a: float, b: float) -> float:
    """The angle between directions a and b (radians, 0 .. pi)."""
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


def arc_label_position(
    phi: float, angle: float, radius: float, arrows
) -> tuple[float, float]:
    """Where an arc's label goes: just outside the arc, at the point along it (middle first)
    farthest in angle from every arrow, so that the label sits off the arrows."""
    sweep = max(
        min(angle, 2 * math.pi), -2 * math.pi
    )  # a spiral past one turn: its first turn
    candidates = [phi + f * sweep for f in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)]
    best = max(
        candidates,
        key=lambda a: round(min(_angle_gap(a, arrow) for arrow in arrows), 2),
    )
    r = radius + 0.3
    return r * math.cos(best), r * math.sin(best)


def rotate_qk(q: torch.Tensor, k: torch.Tensor, m: float, n: float, theta: float):
    """q at position m and k at position n, rotated by rope_lib.apply_rope with one frequency."""
    x = torch.stack([q, k])  # [seq = 2, head_dim = 2]
    out = apply_rope(
        x,
        torch.tensor([m, n], dtype=torch.float64),
        inv_freq=torch.tensor([theta], dtype=torch.float64),
    )
    return out[0], out[1]


def thumbnail() -> Figure:
    """q and k (faded) rotated to q' and k' (solid), with their arcs m theta and n theta."""
    fig = Figure(figsize=(4, 2.5), dpi=80)
    ax = fig.add_axes([0.02, 0.02, 0.96, 0.86])
    plane = PairPlane(ax, limit=1.6, fontsize=9)
    q, k = from_polar(1.2, -0.2), from_polar(1.0, 1.9)
    theta, m, n = 0.3, 5, 2
    q_rot, k_rot = rotate_qk(q, k, m, n, theta)
    plane.set(
        q.tolist(), k.tolist(), q_rot.tolist(), k_rot.tolist(), m * theta, n * theta
    )
    ax.set_xlim(-2.4, 2.4)
    fig.suptitle(_fig("RoPE: q turns by mθ, k by nθ; q'·k' sees m - n"), fontsize=9)
    return fig


def polar_rotation_figure() -> Figure:
    """A vector (r cos phi, r sin phi) and the same vector turned counter-clockwise by alpha."""
    fig = Figure(figsize=(4.2, 3.6), dpi=80)
    ax = fig.add_axes([0.02, 0.02, 0.96, 0.9])
    r, phi, alpha = 1.0, 0.45, 0.8
    ax.set_aspect("equal")
    ax.set_xlim(-0.2, 1.75)
    ax.set_ylim(-0.15, 1.2)
    ax.axhline(0, color="0.7", lw=0.8)
    ax.axvline(0, color="0.7", lw=0.8)
    kw = dict(angles="xy", scale_units="xy", scale=1, width=0.012, color=Q_COLOR)
    for angle, faded in ((phi, {"alpha": 0.4}), (phi + alpha, {})):
        ax.quiver([0], [0], [r * math.cos(angle)], [r * math.sin(angle)], **kw, **faded)
    ax.plot(*arc_points(0, phi, 0.3), color="0.4", lw=1.2)
    ax.plot(*arc_points(phi, alpha, 0.45), color=Q_COLOR, lw=1.5)
    turned = phi + alpha / 2
    texts = (  # x, y, text, style
        (0.36 * math.cos(phi / 2), 0.36 * math.sin(phi / 2), "φ", dict(fontsize=12)),
        (0.55 * math.cos(turned), 0.55 * math.sin(turned), "α", dict(fontsize=12, color=Q_COLOR)),
        (0.93 * math.cos(phi) - 0.12, 0.93 * math.sin(phi) - 0.06,
         "(x, y) = (r cos φ, r sin φ)", dict(fontsize=9, va="top")),
        (r * math.cos(phi + alpha) + 0.06, r * math.sin(phi + alpha),
         "(x', y') = (r cos(φ+α), r sin(φ+α))", dict(fontsize=9, ha="left")),
    )  # fmt: skip
    for x, y, text, style in texts:
        ax.text(x, y, text, **{"va": "center", **style})
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(_fig("same length r, angle φ → φ + α"), fontsize=10)
    return fig


def _label_off(label, v, v_rot, gap: float = 0.45) -> None:
    """Move the faded vector's label off the turned one when they point almost the same way:
    the same radius, `gap` radians round on the far side from the turned vector."""
    phi, phi_rot = math.atan2(v[1], v[0]), math.atan2(v_rot[1], v_rot[0])
    turn = math.remainder(phi_rot - phi, 2 * math.pi)
    if abs(turn) >= gap:
        return
    x, y = label.get_position()
    radius = math.hypot(x, y)
    side = phi - math.copysign(gap, turn) if turn else phi - gap
    label.set_position((radius * math.cos(side), radius * math.sin(side)))


def frequency_figure(
    q, k, offset: int, thetas=(1.0, 0.01), max_offset: int = 60
) -> Figure:
    """The same offset m - n seen by a fast pair (large theta) and a slow pair (small theta):
    one plane per theta (k at position 0, q at position `offset`), then the score against the
    offset 0 .. max_offset for both."""
    q = torch.as_tensor(q, dtype=torch.float64)
    k = torch.as_tensor(k, dtype=torch.float64)
    fig = Figure(figsize=(6.4, 3.5), dpi=100)
    axes = fig.subplots(1, 3, gridspec_kw=dict(width_ratios=[1, 1, 1.25], wspace=0.12))
    styles = ("-", "--")
    for ax, theta in zip(axes[:2], thetas):
        plane = PairPlane(ax, limit=1.5, fontsize=12)
        q_rot, k_rot = rotate_qk(q, k, offset, 0, theta)
        plane.set(
            q.tolist(),
            k.tolist(),
            q_rot.tolist(),
            k_rot.tolist(),
            offset * theta,
            0.0,
            names=("Δ", "n"),
        )
        _label_off(plane.tip["q"], q, q_rot)
        score = float(q_rot @ k_rot)
        ax.set_title(
            f"θ = {theta:g}: {offset * theta:.3f} rad\nq'·k' = {score:.4f}",
            fontsize=12,
        )
    offsets = torch.arange(max_offset + 1)
    for theta, style in zip(thetas, styles):
        scores = closed_form_score(q, k, offsets, 0, theta)
        axes[2].plot(
            offsets.numpy(),
            scores.numpy(),
            style,
            marker="o",
            ms=2.5,
            lw=1,
            label=f"θ = {theta:g}",
        )
    axes[2].axvline(offset, color="0.15", lw=1.8, ls=":", zorder=3)
    axes[2].set_xlabel(_fig("offset m - n"))
    axes[2].set_ylabel("q'·k'")
    axes[2].legend(
        loc="upper center",
        bbox_to_anchor=(0.4, -0.25),
        ncol=2,
        fontsize=10,
        handlelength=1.6,
        columnspacing=0.8,
    )
    axes[2].set_title(
        _fig("score, m - n = {offset} dotted").format(offset=offset), fontsize=12
    )
    fig.subplots_adjust(left=0.01, right=0.985, top=0.8, bottom=0.3)
    box = axes[2].get_position()  # room for the score axis' labels
    axes[2].set_position((box.x0 + 0.07, box.y0, box.width - 0.07, box.height))
    return fig
