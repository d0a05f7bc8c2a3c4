"""The 2D-rotation lesson's widget: rotate a query/key pair live.

RotatePairWidget draws q and k (faded) and their RoPE rotations q' = R((m+shift) theta) q and
k' = R((n+shift) theta) k (solid) on a plane with the unit circle, the arcs (m+shift) theta and
(n+shift) theta, and, beside it, the score q'.k' against the offset m - n. Its readout shows
q'.k' (from rope_lib.apply_rope), the closed form (rope_lib.derivation.closed_form_score) and
m - n; the slider "shift" moves both positions together and the score does not move. (The
shift has no letter: s is the course's scale factor.) The plane is rope_lib.figures.rotation's
PairPlane, which the lesson's still figures draw too.
"""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.ticker import MaxNLocator

from ..derivation import closed_form_score, from_polar
from ..figures.rotation import PairPlane, rotate_qk
from ..language import N_, _, _fig
from .base import TIGHT_LINES, Control, LiveWidget

OFFSETS = np.arange(-20, 21)
# The score axis shows -top .. top with top the first of these at or above 1.1 |q||k| (the curve's
# amplitude is |q||k|): the limits and tick labels change only when |q||k| crosses a rung, so most
# slider moves redraw just the moving artists. The last rung covers |q| = |k| = 2.
SCORE_LIMITS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.5)


def _score_limit(q_len: float, k_len: float) -> float:
    """The score axis' half-height: the first of SCORE_LIMITS at or above 1.1 |q||k|."""
    needed = 1.1 * q_len * k_len
    return next(
        (top for top in SCORE_LIMITS if top >= needed - 1e-12), SCORE_LIMITS[-1]
    )


class RotatePairWidget(LiveWidget):
    """Rotate a query/key pair live: q at position m + shift, k at n + shift, one frequency theta.

    RotatePairWidget(figure=None, **values); values are the keys of CONTROLS (m, n, theta,
    q_len, q_angle, k_len, k_angle, shift; angles in radians). After update(), .state holds
    q, k, q_rot, k_rot, score (q'.k' from apply_rope) and closed (the closed form).
    """

    CONTROLS = (
        Control("m", "m", "int", 0, 20, 1, default=5),
        Control("n", "n", "int", 0, 20, 1, default=2),
        Control("theta", N_("theta"), "float", 0.0, 1.0, 0.01, default=0.3),
        Control("q_len", "|q|", "float", 0.2, 2.0, 0.05, default=1.2),
        Control("q_angle", N_("angle q"), "float", -3.14, 3.14, 0.01, default=-0.2),
        Control("k_len", "|k|", "float", 0.2, 2.0, 0.05, default=1.0),
        Control("k_angle", N_("angle k"), "float", -3.14, 3.14, 0.01, default=1.9),
        Control("shift", N_("shift"), "int", 0, 30, 1, default=0),
    )
    # the controls in a column left of the figure: long sliders, and the picture on the
    # projector's screen with them
    ROWS = tuple((name,) for name in ("m", "n", "shift", "theta", "q_len", "q_angle",
                                      "k_len", "k_angle"))  # fmt: skip
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    # the positions, the frequency, and the shift that moves both and leaves the score
    SWEPT = ("m", "n", "theta", "shift")

    def build(self, figure):
        # fixed positions (425 x 330 px): a square plane, the score beside it
        ax_plane = figure.add_axes((0.01, 0.08, 0.52, 0.68))
        ax_score = figure.add_axes((0.645, 0.2, 0.315, 0.56))
        self.plane = PairPlane(ax_plane, fontsize=12)
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
        q_rot, k_rot = rotate_qk(q, k, m, n, theta)
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
