"""Lesson 5's live widget: RoPE in the complex plane.

ComplexPlaneWidget(m=10, n=8, theta=0.1) reads a query pair q and a key pair k as complex
numbers (the lesson's worked pair: q = 0.5 - 1.0i, k = 1.2 + 0.3i) and turns them the way
Meta's LLaMA code does: rope_lib.apply_rotary_emb multiplies q by e^{i m theta} and k by
e^{i n theta}. Two planes:
  left    q and k faded, q' = q e^{i m theta} and k' = k e^{i n theta} solid, with the arcs
          m theta and n theta (the 2D-rotation lesson's plane, rope_lib.widgets.rotation);
  right   the one complex number the score is made of, q' conj(k') = q conj(k)
          e^{i (m - n) theta}: faded at m = n, solid now, with the arc (m - n) theta; its
          real part, marked on the real axis, is the score q'.k'.
Move m and n by the same amount: the left arrows turn, the right one stays. The readout
gives q', k', their product and the score, next to rope_lib.derivation.closed_form_score.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from ..derivation import closed_form_score
from ..figures.rotation import PairPlane, arc_label_position, arc_points
from ..language import N_, _, _fig
from ..llama import apply_rotary_emb
from ..rotary import rope_angles
from .base import TIGHT_LINES, Control, LiveWidget

#: The worked pair of lessons 3 and 5, as (x, y): q = 0.5 - 1.0i, k = 1.2 + 0.3i.
Q, K = (0.5, -1.0), (1.2, 0.3)
PRODUCT_COLOR = "#2ca02c"
LIMIT = 1.75  # both planes show -LIMIT .. LIMIT (|q| |k| = 1.38 for the worked pair)


def rotate(q, k, m: int, n: int, theta: float):
    """q turned to position m and k to position n, one pair of frequency theta, by
    rope_lib.apply_rotary_emb (Meta's form): float64 2-vectors (q', k')."""
    angles = rope_angles(
        torch.tensor([m, n]), torch.tensor([theta]), dtype=torch.float64
    )
    table = torch.polar(torch.ones_like(angles), angles)  # e^{i m θ}, e^{i n θ}
    # the sequence holds q at its first position, k at its second: [batch, seq, heads, 2]
    x = torch.tensor([q, k], dtype=torch.float64)[None, :, None, :]
    rotated, _unused = apply_rotary_emb(x, x, table)
    return rotated[0, 0, 0], rotated[0, 1, 0]


def _complex(v: torch.Tensor) -> complex:
    return complex(float(v[0]), float(v[1]))


def _signed(z: complex) -> str:
    """a + bi with four decimals and the sign of b written out: 0.6887 - 0.8807i."""
    sign = "-" if z.imag < 0 else "+"
    return f"{z.real:.4f} {sign} {abs(z.imag):.4f}i"


class ComplexPlaneWidget(LiveWidget):
    """Controls m, n (positions) and theta (the pair's frequency); .state holds q_rot,
    k_rot (complex), product = q_rot * conj(k_rot), score (its real part) and closed
    (rope_lib.derivation.closed_form_score)."""

    CONTROLS = (
        Control("m", "m", "int", 0, 30, default=10),
        Control("n", "n", "int", 0, 30, default=8),
        Control("theta", N_("theta"), "float", 0.02, 1.0, 0.02, default=0.1),
    )
    ROWS = (("m",), ("n",), ("theta",))
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 2.75)
    SWEPT = ("m", "n", "theta")

    def __init__(self, q=Q, k=K, **values):
        self.q, self.k = tuple(map(float, q)), tuple(map(float, k))
        super().__init__(**values)

    def build(self, figure):
        # two square planes side by side (425 x 275 px), fixed positions
        ax_turn = figure.add_axes((0.01, 0.02, 0.47, 0.74))
        ax_score = figure.add_axes((0.52, 0.02, 0.47, 0.74))
        self.plane = PairPlane(ax_turn, limit=LIMIT, fontsize=11)
        ax_turn.set_title(r"$q\,e^{im\theta}$,  $k\,e^{in\theta}$", fontsize=13)
        self._build_product(ax_score)
        return [*self.plane.moving, *self._product_moving]

    def _build_product(self, ax):
        ax.set_aspect("equal")
        ax.set_xlim(-LIMIT, LIMIT)
        ax.set_ylim(-LIMIT, LIMIT)
        ax.axhline(0, color="0.6", lw=0.9, zorder=0)
        ax.axvline(0, color="0.85", lw=0.8, zorder=0)
        radius = math.hypot(*self.q) * math.hypot(*self.k)
        circle = np.linspace(0, 2 * math.pi, 200)
        ax.plot(radius * np.cos(circle), radius * np.sin(circle), color="0.7", lw=1,
                ls="--", zorder=0)  # fmt: skip
        start = (
            _complex(torch.tensor(self.q)) * _complex(torch.tensor(self.k)).conjugate()
        )
        kw = dict(angles="xy", scale_units="xy", scale=1, width=0.014, zorder=3)
        ax.quiver([0], [0], [start.real], [start.imag], color=PRODUCT_COLOR, alpha=0.3,
                  **kw)  # fmt: skip
        self.start = start
        self.arrow = ax.quiver([0], [0], [1], [0], color=PRODUCT_COLOR, **kw)
        self.arc = Line2D([], [], color=PRODUCT_COLOR, lw=1.5)
        ax.add_line(self.arc)
        self.arc_label = ax.text(0, 0, "", color=PRODUCT_COLOR, ha="center", va="center",
                                 fontsize=10, zorder=5,
                                 bbox=dict(boxstyle="round,pad=0.1", fc="white",
                                           ec="none", alpha=0.8))  # fmt: skip
        self.drop = Line2D([], [], color="black", lw=1, ls=":", zorder=2)
        ax.add_line(self.drop)
        (self.mark,) = ax.plot([], [], "o", color="black", mfc="gold", ms=8, zorder=4)
        self.mark_label = ax.text(0, 0, "", ha="center", va="top", fontsize=11, zorder=5,
                                  bbox=dict(boxstyle="round,pad=0.1", fc="white",
                                            ec="none", alpha=0.8))  # fmt: skip
        ax.text(-LIMIT * 0.92, 0.06, "Re", ha="left", va="bottom", fontsize=10,
                color="0.4")  # fmt: skip
        ax.set_title(
            r"$q'\,\overline{k'} = q\,\overline{k}\,e^{i(m-n)\theta}$", fontsize=13
        )
        ax.axis("off")
        ax.add_patch(Rectangle((0, 0), 1, 1, transform=ax.transAxes, fill=False, lw=0.8,
                               ec="0.3", clip_on=False))  # fmt: skip
        self._product_moving = [self.arc, self.drop, self.arrow, self.mark,
                                self.arc_label, self.mark_label]  # fmt: skip

    def compute(self, v):
        m, n, theta = v["m"], v["n"], v["theta"]
        q_rot, k_rot = rotate(self.q, self.k, m, n, theta)
        product = _complex(q_rot) * _complex(k_rot).conjugate()
        closed = closed_form_score(
            torch.tensor(self.q), torch.tensor(self.k), m, n, theta
        )
        return dict(
            q_rot=_complex(q_rot),
            k_rot=_complex(k_rot),
            product=product,
            score=float(q_rot @ k_rot),
            closed=float(closed),
            offset=m - n,
        )

    def draw(self, s):
        v, theta = self.values, self.values["theta"]
        q_rot, k_rot = s["q_rot"], s["k_rot"]
        self.plane.set(self.q, self.k, (q_rot.real, q_rot.imag), (k_rot.real, k_rot.imag),
                       v["m"] * theta, v["n"] * theta)  # fmt: skip
        z = s["product"]
        self.arrow.set_UVC([z.real], [z.imag])
        turn = s["offset"] * theta
        start = math.atan2(self.start.imag, self.start.real)
        self.arc.set_data(*arc_points(start, turn, 0.45))
        arrows = [start, math.atan2(z.imag, z.real)]
        self.arc_label.set_position(arc_label_position(start, turn, 0.45, arrows))
        self.arc_label.set_text("(m−n)θ" if abs(turn) > 0.15 else "")
        self.drop.set_data([z.real, z.real], [z.imag, 0.0])
        self.mark.set_data([z.real], [0.0])
        below = -0.12 if z.imag >= 0 else 0.32
        self.mark_label.set_position((z.real, below))
        self.mark_label.set_va("top" if z.imag >= 0 else "bottom")
        self.mark_label.set_text(_fig("score {score:.3f}").format(score=z.real))

    def readout_text(self):
        s = self.state
        return "<br>".join(
            [
                "q' = q·e^(imθ) = " + _signed(s["q_rot"]),
                "k' = k·e^(inθ) = " + _signed(s["k_rot"]),
                "q'·conj(k') = " + _signed(s["product"]),
                _("<b>score = Re = {score:.4f}</b>").format(score=s["product"].real),
                _("closed form = {closed:.4f}, m - n = {offset}").format(
                    closed=s["closed"], offset=s["offset"]
                ),
            ]
        )


__all__ = ["ComplexPlaneWidget", "rotate"]
