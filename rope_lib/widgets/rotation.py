"""The 2D-rotation lesson's widget and figures: rotate a query/key pair live.

RotatePairWidget draws q and k (faded) and their RoPE rotations q' = R((m+shift) theta) q and
k' = R((n+shift) theta) k (solid) on a plane with the unit circle, the arcs (m+shift) theta and
(n+shift) theta, and, beside it, the score q'.k' against the offset m - n. Its readout shows
q'.k' (from rope_lib.apply_rope), the closed form (rope_lib.derivation.closed_form_score) and
m - n; the slider "shift" moves both positions together and the score does not move. (The
shift has no letter: s is the course's scale factor.)
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from ..derivation import closed_form_score, from_polar
from ..language import N_, _, _fig
from ..rotary import apply_rope
from .base import TIGHT_LINES, Control, LiveWidget

Q_COLOR = "#1f77b4"
K_COLOR = "#d62728"
OFFSETS = np.arange(-20, 21)
# The score axis shows -top .. top with top the first of these at or above 1.1 |q||k| (the curve's
# amplitude is |q||k|): the limits and tick labels change only when |q||k| crosses a rung, so most
# slider moves redraw just the moving artists. The last rung covers |q| = |k| = 2.
SCORE_LIMITS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.5)

# name -> (description, kind, minimum, maximum, step, default)
CONTROLS = {
    "m": ("m", "int", 0, 20, 1, 5),
    "n": ("n", "int", 0, 20, 1, 2),
    "theta": (N_("theta"), "float", 0.0, 1.0, 0.01, 0.3),
    "q_len": ("|q|", "float", 0.2, 2.0, 0.05, 1.2),
    "q_angle": (N_("angle q"), "float", -3.14, 3.14, 0.01, -0.2),
    "k_len": ("|k|", "float", 0.2, 2.0, 0.05, 1.0),
    "k_angle": (N_("angle k"), "float", -3.14, 3.14, 0.01, 1.9),
    "shift": (N_("shift"), "int", 0, 30, 1, 0),
}


def _arc_points(start: float, sweep: float, radius: float, points: int = 64):
    """An arc from angle `start` turning by `sweep` (radians); past a full turn it spirals
    outwards a little, so that every turn stays visible."""
    t = np.linspace(0.0, 1.0, points)
    a = start + sweep * t
    r = radius + 0.06 * np.abs(sweep) * t / (2 * math.pi)
    return r * np.cos(a), r * np.sin(a)


class _Plane:
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
        self.arc_q.set_data(*_arc_points(phi_q, angle_q, 0.55))
        self.arc_k.set_data(*_arc_points(phi_k, angle_k, 0.35))
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
                label.set_position(_arc_label_position(phi, angle, radius, arrows))
                label.set_text(f"{_fig(name)}θ" if abs(angle) > 0.15 else "")


def _angle_gap(a: float, b: float) -> float:
    """The angle between directions a and b (radians, 0 .. pi)."""
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)


def _arc_label_position(
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


def _score_limit(q_len: float, k_len: float) -> float:
    """The score axis' half-height: the first of SCORE_LIMITS at or above 1.1 |q||k|."""
    needed = 1.1 * q_len * k_len
    return next(
        (top for top in SCORE_LIMITS if top >= needed - 1e-12), SCORE_LIMITS[-1]
    )


def _rotate_pairs(q: torch.Tensor, k: torch.Tensor, m: float, n: float, theta: float):
    """q at position m and k at position n, rotated by rope_lib.apply_rope with one frequency."""
    x = torch.stack([q, k])  # [seq = 2, head_dim = 2]
    out = apply_rope(
        x,
        torch.tensor([m, n], dtype=torch.float64),
        inv_freq=torch.tensor([theta], dtype=torch.float64),
    )
    return out[0], out[1]


class RotatePairWidget(LiveWidget):
    """Rotate a query/key pair live: q at position m + shift, k at n + shift, one frequency theta.

    RotatePairWidget(figure=None, **values); values are the keys of CONTROLS (m, n, theta,
    q_len, q_angle, k_len, k_angle, shift; angles in radians). After update(), .state holds
    q, k, q_rot, k_rot, score (q'.k' from apply_rope) and closed (the closed form).
    """

    CONTROLS = tuple(
        Control(name, label, kind, lo, hi, step, default=default)
        for name, (label, kind, lo, hi, step, default) in CONTROLS.items()
    )
    # the controls in a column left of the figure: long sliders, and the picture on the
    # projector's screen with them
    ROWS = tuple((name,) for name in ("m", "n", "shift", "theta", "q_len", "q_angle",
                                      "k_len", "k_angle"))  # fmt: skip
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)

    def build(self, figure):
        # fixed positions (425 x 330 px): a square plane, the score beside it
        ax_plane = figure.add_axes((0.01, 0.08, 0.52, 0.68))
        ax_score = figure.add_axes((0.645, 0.2, 0.315, 0.56))
        self.plane = _Plane(ax_plane, fontsize=12)
        ax_plane.set_title(_fig("q, k faded; q', k' solid"))
        ax_score.set_title(_fig("q'·k' against m - n"), fontsize=11)
        ax_score.set_xlabel("m - n")
        ax_score.axhline(0, color="0.85", lw=0.8, zorder=0)
        ax_score.set_xlim(OFFSETS[0] - 0.5, OFFSETS[-1] + 0.5)
        ax_score.set_xticks([-20, -10, 0, 10, 20])
        ax_score.yaxis.set_major_locator(MaxNLocator(5))
        (self.curve,) = ax_score.plot(
            OFFSETS, np.zeros(len(OFFSETS)), "-o", color="0.4", ms=2.5, lw=1
        )
        (self.marker,) = ax_score.plot(
            [0], [0], "o", color="black", ms=8, mfc="gold", zorder=4
        )
        self.ax_plane, self.ax_score = ax_plane, ax_score
        # blitting: the axes, titles and ticks are drawn once; each update draws only these
        # (the score panel's frame too: the curve's end markers touch it, and a full draw puts
        # the frame over the curve, under the marker)
        return [*self.plane.moving, self.curve, *ax_score.spines.values(), self.marker]

    def compute(self, v):
        theta = v["theta"]
        m, n = v["m"] + v["shift"], v["n"] + v["shift"]
        q = from_polar(v["q_len"], v["q_angle"])
        k = from_polar(v["k_len"], v["k_angle"])
        q_rot, k_rot = _rotate_pairs(q, k, m, n, theta)
        score = float(q_rot @ k_rot)
        closed = float(closed_form_score(q, k, m, n, theta))
        return dict(
            q=q, k=k, q_rot=q_rot, k_rot=k_rot, score=score, closed=closed, m=m, n=n
        )

    def static_key(self, s):
        # new limits of the score axis: its tick labels change too
        return _score_limit(self.values["q_len"], self.values["k_len"])

    def draw_static(self, s):
        top = self.static_key(s)
        self.ax_score.set_ylim(-top, top)

    def draw(self, s):
        v, theta = self.values, self.values["theta"]
        self.plane.set(
            s["q"].tolist(),
            s["k"].tolist(),
            s["q_rot"].tolist(),
            s["k_rot"].tolist(),
            s["m"] * theta,
            s["n"] * theta,
            names=(N_("(m+shift)"), N_("(n+shift)")) if v["shift"] else ("m", "n"),
        )
        offsets = torch.as_tensor(OFFSETS)
        self.curve.set_ydata(
            closed_form_score(s["q"], s["k"], offsets, 0, theta).numpy()
        )
        self.marker.set_data([v["m"] - v["n"]], [s["score"]])

    def readout_text(self):
        s = self.state
        return _(
            "<b>q'·k' = {score:.4f}</b>, closed form = {closed:.4f}, "
            "m - n = {offset}; query at m + shift = {m}, key at n + shift = {n}"
        ).format(
            score=s["score"],
            closed=s["closed"],
            offset=self.values["m"] - self.values["n"],
            m=s["m"],
            n=s["n"],
        )


def _steps():
    """30 update() calls that move every control through its range (for the benchmark)."""
    steps = []
    names = list(CONTROLS)
    for i in range(30):
        name = names[i % len(names)]
        kind, lo, hi = CONTROLS[name][1:4]
        fraction = (i // len(names) + 1) / 4  # 0.25, 0.5, 0.75, 1.0
        value = lo + fraction * (hi - lo)
        steps.append({name: int(round(value)) if kind == "int" else round(value, 2)})
    return steps


WIDGETS = {"rotate_pair": (RotatePairWidget, _steps())}


def thumbnail() -> Figure:
    """q and k (faded) rotated to q' and k' (solid), with their arcs m theta and n theta."""
    fig = Figure(figsize=(4, 2.5), dpi=80)
    ax = fig.add_axes([0.02, 0.02, 0.96, 0.86])
    plane = _Plane(ax, limit=1.6, fontsize=9)
    q, k = from_polar(1.2, -0.2), from_polar(1.0, 1.9)
    theta, m, n = 0.3, 5, 2
    q_rot, k_rot = _rotate_pairs(q, k, m, n, theta)
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
    ax.plot(*_arc_points(0, phi, 0.3), color="0.4", lw=1.2)
    ax.plot(*_arc_points(phi, alpha, 0.45), color=Q_COLOR, lw=1.5)
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


def frequency_figure(
    q, k, offset: int, thetas=(1.0, 0.01), max_offset: int = 60
) -> Figure:
    """The same offset m - n seen by a fast pair (large theta) and a slow pair (small theta):
    one plane per theta (k at position 0, q at position `offset`), then the score against the
    offset 0 .. max_offset for both."""
    q = torch.as_tensor(q, dtype=torch.float64)
    k = torch.as_tensor(k, dtype=torch.float64)
    fig = Figure(figsize=(6.4, 3.6), dpi=100)
    axes = fig.subplots(1, 3, gridspec_kw=dict(width_ratios=[1, 1, 1.5]))
    styles = ("-", "--")
    for ax, theta in zip(axes[:2], thetas):
        plane = _Plane(ax, limit=1.7, fontsize=11)
        q_rot, k_rot = _rotate_pairs(q, k, offset, 0, theta)
        plane.set(
            q.tolist(), k.tolist(), q_rot.tolist(), k_rot.tolist(), offset * theta, 0.0
        )
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
    axes[2].axvline(offset, color="0.6", lw=0.8, ls=":")
    axes[2].set_xlabel(_fig("offset m - n"))
    axes[2].set_ylabel("q'·k'")
    axes[2].legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
    axes[2].set_title(
        _fig("score, m - n = {offset} dotted").format(offset=offset), fontsize=12
    )
    fig.tight_layout()
    fig.subplots_adjust(top=0.8)  # room for the two-line titles over the square planes
    return fig
