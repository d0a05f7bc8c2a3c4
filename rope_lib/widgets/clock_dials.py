"""The clock-dial widget: one dial per RoPE pair.

Pair i of a query or key is a complex number; at position m RoPE multiplies it by e^{i m theta_i},
theta_i = b ** (-2i / d): a clock hand at angle m theta_i. Moving the position slider turns
every hand at its own speed (pair 0 one radian per token, the last pair hardly at all); the
base control (10,000 as in LLaMA 1-2, 500,000 as in Llama 3) slows the slow hands further.
"""

from __future__ import annotations

import math

import torch

from .._checks import require_even
from ..figures.clock_dials import dial_centres, dial_label, draw_dials, relabel
from ..language import N_, _, _fig
from ..rotary import inv_frequencies, rope_angles
from .base import TIGHT_LINES, Control, LiveWidget

BASES = (10000.0, 500000.0)


class ClockDials(LiveWidget):
    """One dial per pair; the hand of pair i points at angle position * theta_i.

    ClockDials(head_dim=16, position=0, base=10000.0, max_position=4096)
    update(position=..., base=...) moves every hand; the readout lists each pair's angle in
    radians (unwrapped: position * theta_i) and in full turns, e.g. `pair 0 angle = 3.0000 rad`.
    """

    ROWS = (("position", "base"),)
    # one row of controls, the two readout lines under it, dials 270 px high: all of it
    # on the projector's screen
    READOUT = TIGHT_LINES
    FIGSIZE = (6.4, 2.7)
    SWEPT = ("position", "base")

    def __init__(
        self,
        head_dim: int = 16,
        position: int = 0,
        base: float = 10000.0,
        max_position: int = 4096,
    ):
        self.head_dim = require_even("head_dim", head_dim)
        self.n_pairs = head_dim // 2
        self.CONTROLS = (
            Control(
                "position", N_("position"), "int", 0, max_position,
                width="420px", label_width="62px",
            ),
            Control(
                "base", N_("base"), "choice", options=BASES, convert=float,
                option_label="{:,.0f}".format, width="200px", label_width="40px",
            ),
        )  # fmt: skip
        self._labelled_base = None
        super().__init__(position=position, base=base)

    @property
    def position(self) -> int:
        return self.values["position"]

    @property
    def base(self) -> float:
        return self.values["base"]

    def build(self, figure):
        columns = 4 if self.n_pairs > 4 else self.n_pairs
        # spread across the figure's width (its height sets the dials' size): room for
        # labels of about 11 pt
        self.centres = dial_centres(self.n_pairs, columns, dx=4.0)
        ax = figure.add_axes((0.0, 0.0, 1.0, 0.88))
        self.ax = ax
        self.hands = draw_dials(ax, self.centres)
        self.labels = [dial_label(ax, cx, cy + 1.5, "pair") for cx, cy in self.centres]
        self.turn_texts = [
            dial_label(ax, cx, cy - 1.12, "turns", color="0.25")
            for cx, cy in self.centres
        ]
        ax.set_xlim(self.centres[:, 0].min() - 1.9, self.centres[:, 0].max() + 1.9)
        ax.set_ylim(self.centres[:, 1].min() - 1.5, self.centres[:, 1].max() + 1.55)
        # an axes title, not a suptitle: savefig (static_png) draws the axes' animated artists
        self.title = ax.set_title(" ", pad=6)
        # blitting: the faces are drawn once; labels, hands and the title on top at each update
        return [*self.labels, *self.turn_texts, *self.hands, self.title]

    def angles(self) -> torch.Tensor:
        """position * theta_i for every pair, float32 [n_pairs] (as rope_lib computes them)."""
        return rope_angles(
            torch.tensor([self.position]), inv_frequencies(self.head_dim, self.base)
        )[0]

    def compute(self, v):
        return dict(
            angles=self.angles().to(torch.float64).numpy(),
            speeds=inv_frequencies(self.head_dim, self.base).numpy(),
        )

    def draw(self, s):
        for hand, (cx, cy), angle in zip(self.hands, self.centres, s["angles"]):
            hand.set_data(
                [cx, cx + 0.95 * math.cos(angle)], [cy, cy + 0.95 * math.sin(angle)]
            )
        if self._labelled_base != self.base:  # the labels change with the base only
            for i, ((cx, cy), label, speed) in enumerate(
                zip(self.centres, self.labels, s["speeds"])
            ):
                text = _fig("pair {i}: θ = {theta:.2g}").format(i=i, theta=speed)
                relabel(label, cx, cy + 1.5, text)
            self._labelled_base = self.base
        for (cx, cy), text, angle in zip(self.centres, self.turn_texts, s["angles"]):
            turns = _fig("{turns:.2f} turns").format(turns=angle / (2 * math.pi))
            relabel(text, cx, cy - 1.12, turns)
        self.title.set_text(
            _fig("position m = {position}, base = {base:,.0f}").format(
                position=self.position, base=self.base
            )
        )

    def readout_lines(self) -> list[str]:
        """The readout as plain text, one line per pair: its angle m theta_i in radians
        (unwrapped) and in full turns, e.g. `pair 0 angle = 3.0000 rad (0.4775 turns)`."""
        angles = self.angles().to(torch.float64).tolist()
        return [
            _("pair {i} angle = {angle:.4f} rad ({turns:.4f} turns)").format(
                i=i, angle=angle, turns=angle / (2 * math.pi)
            )
            for i, angle in enumerate(angles)
        ]

    def readout_html(self) -> str:
        """The readout beside the dials: every pair's angle m theta_i in radians, two lines."""
        angles = self.angles().to(torch.float64).tolist()
        half = (len(angles) + 1) // 2
        lines = []
        for start, stop in ((0, half), (half, len(angles))):
            if start < stop:
                values = ", ".join(f"{a:.4f}" for a in angles[start:stop])
                lines.append(
                    _("pairs {first}-{last}: {values} rad").format(
                        first=start, last=stop - 1, values=values
                    )
                )
        return TIGHT_LINES.format("m θ_i: " + "<br>".join(lines))
