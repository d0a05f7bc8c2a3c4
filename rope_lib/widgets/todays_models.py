"""Lesson 13's live widget: pick a real model, see the wavelength of each of its pairs.

x is the pair index as a share of the head (pair i / (d/2)), so heads of 64, 128, 256 or
512 dimensions share one axis; y is the wavelength 2 pi / theta_i in tokens (log scale),
with a row at the top for pairs of frequency 0 (they never turn: Gemma 4's p-RoPE). The
horizontal lines are the training length L and the claimed context L'. A model with two
kinds of layers (local and global) draws two curves; NoPE layers are counted in the
legend. ALiBi models (BLOOM, MPT) draw 1/mu_h per head instead: the distance at which
that head's bias costs one logit. All numbers come from rope_lib.models (read by
read_rope_config).

The widget draws with rope_lib.figures.todays_models (draw_model), where the lesson's still
figures are too.
"""

from __future__ import annotations

from ..figures.todays_models import CURVE_COLORS, DEFAULT_MODEL, draw_model, style_axes
from ..language import N_, _
from ..models import MODELS
from .base import TIGHT_LINES, Control, LiveWidget


class ModelWavelengthExplorer(LiveWidget):
    """Controls: "model" (a dropdown of rope_lib.models.MODELS)."""

    CONTROLS = (
        Control(
            "model", N_("model"), "choice", options=tuple(MODELS), default=DEFAULT_MODEL
        ),
    )
    ROWS = (("model",),)
    # the model and the readout in a column left of the figure: all of it on the
    # projector's screen
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    SWEPT = ("model",)

    def __init__(self, model: str = DEFAULT_MODEL):
        super().__init__(model=model)

    @property
    def model(self) -> str:
        return self.values["model"]

    def build(self, figure):
        ax = figure.add_axes((0.19, 0.17, 0.78, 0.71))
        style_axes(ax)
        self.ax = ax
        self.lines, _readout = draw_model(ax, self.model)
        self.title = ax.set_title(" ")
        return [
            *self.lines["curves"],
            *self.lines["infinite"],
            self.lines["L"],
            self.lines["L2"],
            self.title,
        ]

    def draw(self, s):
        self.lines, self.text = draw_model(self.ax, self.model, self.lines)
        self.title.set_text(self.model)

    def readout_html(self) -> str:
        # the curves' labels sit in the readout, in their colours (no legend over the
        # curves)
        keys = "".join(
            f'<br><span style="color:{color}">&#9632;</span> {line.get_label()}'
            for line, color in zip(self.lines["curves"], CURVE_COLORS)
            if line.get_label() != "_none"
        )
        return TIGHT_LINES.format(f"{self.text}{keys}<br>" + _("solid: L, dashed: L'"))

    def readout_text(self) -> str:
        """The readout as plain text (what the static figure's caption prints)."""
        labels = [
            line.get_label()
            for line in self.lines["curves"]
            if line.get_label() != "_none"
        ]
        return "\n".join([self.text, *labels])
