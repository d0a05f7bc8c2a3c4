"""Lesson 2's live widget: a learned position table, trained on short sequences only.

LearnedTableWidget(optimizer="Adam", L=10, steps=300, m=12) trains a 16-row table
(rope_lib.sinusoidal.train_learned_table: d_model 8, random start of size 0.5 so that the
start shows) on sequences of L tokens, and shows it after `steps` steps:
  left    the table, one row per position (the vector added to the token at position m),
          with the training length L and the end of the table; past row 15 there is no row;
  right   how far each row has moved from its start: rows 0 .. L-1 move, rows L .. 15 take
          part in no forward pass and stay where they started (SGD, Adam) or shrink towards
          zero (AdamW's weight decay); row m is marked in both.
The readout says what the model adds at position m. A new L or optimizer trains again
(about 0.2 s, kept for the next visit); steps and m only pick a stored table.

The lesson's still figures are in rope_lib.figures.learned.
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from ..figures.style import integer_ticks
from ..language import N_, _, _fig
from ..sinusoidal import TABLE_OPTIMIZERS, train_learned_table
from .base import TIGHT_LINES, Control, LiveWidget, plain_text

ROWS_IN_TABLE, D_MODEL, INIT_STD = 16, 8, 0.5
MAX_STEPS, WEIGHT_DECAY = 300, 0.1
SHOWN = 20  # positions on the y axis: the table's 16 rows and 4 it does not have
TRAINED, UNREACHED, PICK = "#1f77b4", "#ff7f0e", "#d62728"
LIMIT = 1.6  # the colour range: -LIMIT .. LIMIT


class LearnedTableWidget(LiveWidget):
    """Controls optimizer, L (training length), steps and m (a position); .state holds
    table ([16, 8], after `steps` steps), moved ([16]: distance of each row from its start)
    and kept (the share of their start length rows L .. 15 keep)."""

    CONTROLS = (
        Control("optimizer", N_("optimizer"), "choice", options=tuple(TABLE_OPTIMIZERS),
                default="Adam"),
        Control("L", "L", "int", 1, ROWS_IN_TABLE, default=10),
        Control("steps", N_("steps"), "int", 0, MAX_STEPS, 10, default=MAX_STEPS),
        Control("m", "m", "int", 0, SHOWN - 1, default=12),
    )  # fmt: skip
    ROWS = (("optimizer",), ("L",), ("steps",), ("m",))
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    SWEPT = ("steps", "m", "L", "optimizer")
    # a new L trains a table again (about 0.2 s): three lengths, short to the whole table
    SWEEP_VALUES = {"L": (4, 10, 16)}

    def __init__(self, **values):
        self._trained = {}  # (optimizer, L) -> every step's table
        super().__init__(**values)

    # ------------------------------------------------------------------ the figure, once
    def build(self, figure):
        ax_table = figure.add_axes((0.13, 0.07, 0.36, 0.79))
        ax_moved = figure.add_axes((0.56, 0.07, 0.41, 0.79), sharey=ax_table)
        self.image = ax_table.imshow(
            np.zeros((ROWS_IN_TABLE, D_MODEL)), cmap="RdBu_r", vmin=-LIMIT, vmax=LIMIT,
            extent=(-0.5, D_MODEL - 0.5, ROWS_IN_TABLE - 0.5, -0.5), aspect="auto",
            interpolation="nearest",
        )  # fmt: skip
        ax_table.set_xlim(-0.5, D_MODEL - 0.5)
        # past the table: no row at all
        ax_table.add_patch(Rectangle((-0.5, ROWS_IN_TABLE - 0.5), D_MODEL,
                                     SHOWN - ROWS_IN_TABLE, fc="0.9", ec="0.5",
                                     hatch="//", lw=0))  # fmt: skip
        ax_table.text(D_MODEL / 2 - 0.5, ROWS_IN_TABLE + 1.5, _fig("no row"),
                      ha="center", va="center", fontsize=11,
                      bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))  # fmt: skip
        ax_table.axhline(ROWS_IN_TABLE - 0.5, color="black", lw=1.2)
        ax_table.set_xticks([0, D_MODEL - 1])
        ax_table.set_xlabel(_fig("coordinate"), labelpad=1)
        ax_table.xaxis.set_label_position("top")
        ax_table.xaxis.tick_top()
        ax_table.set_ylabel(_fig("position m"), labelpad=2)
        integer_ticks(ax_table.yaxis, nbins=5)
        self.line_L = ax_table.axhline(0, color=UNREACHED, lw=2.2)
        self.pick = Rectangle((-0.5, 0), D_MODEL, 1, fill=False, ec=PICK, lw=2.2,
                              clip_on=False)  # fmt: skip
        ax_table.add_patch(self.pick)

        self.bars = ax_moved.barh(np.arange(ROWS_IN_TABLE), np.zeros(ROWS_IN_TABLE),
                                  height=0.75, color=TRAINED)  # fmt: skip
        ax_moved.set_xlim(0, 3.6)
        ax_moved.set_xticks([0, 1, 2, 3])
        ax_moved.xaxis.tick_top()
        ax_moved.set_xlabel(_fig("moved from its start"), labelpad=3)
        ax_moved.xaxis.set_label_position("top")
        ax_moved.tick_params(axis="y", labelleft=False)
        ax_moved.axhline(ROWS_IN_TABLE - 0.5, color="black", lw=1.2)
        self.line_L2 = ax_moved.axhline(0, color=UNREACHED, lw=2.2)
        (self.marker,) = ax_moved.plot([], [], "<", color=PICK, ms=9, clip_on=False)
        self.label_L = ax_moved.text(3.5, 0, "", ha="right", va="bottom", fontsize=11,
                                     color=UNREACHED)  # fmt: skip
        ax_table.set_ylim(SHOWN - 0.5, -0.5)  # shared with the bars: set after them
        self.ax_table, self.ax_moved = ax_table, ax_moved
        return [self.image, self.line_L, self.pick, *self.bars, self.line_L2,
                self.marker, self.label_L]  # fmt: skip

    # ------------------------------------------------------------------ numbers
    def tables(self, optimizer: str, L: int):
        """Every step's table for this optimizer and training length (trained once)."""
        key = (optimizer, L)
        if key not in self._trained:
            self._trained[key] = train_learned_table(
                L, MAX_STEPS, optimizer, max_len=ROWS_IN_TABLE, d_model=D_MODEL,
                weight_decay=WEIGHT_DECAY, init_std=INIT_STD,
            ).numpy()  # fmt: skip
        return self._trained[key]

    def compute(self, v):
        tables = self.tables(v["optimizer"], v["L"])
        table, start = tables[v["steps"]], tables[0]
        moved = np.linalg.norm(table - start, axis=1)
        L = v["L"]
        unreached = slice(L, ROWS_IN_TABLE)
        kept = (
            float(np.linalg.norm(table[unreached]) / np.linalg.norm(start[unreached]))
            if L < ROWS_IN_TABLE
            else None
        )
        return dict(table=table, moved=moved, kept=kept)

    # ------------------------------------------------------------------ drawing
    def draw(self, s):
        v = self.values
        L, m = v["L"], v["m"]
        self.image.set_data(s["table"])
        for row, (bar, moved) in enumerate(zip(self.bars, s["moved"])):
            bar.set_width(moved)
            bar.set_color(TRAINED if row < L else UNREACHED)
        for line in (self.line_L, self.line_L2):
            line.set_ydata([L - 0.5, L - 0.5])
        self.label_L.set_y(L - 0.5)
        self.label_L.set_text(f"L = {L}" if L < ROWS_IN_TABLE else "")
        self.pick.set_y(m - 0.5)
        moved = s["moved"][m] if m < ROWS_IN_TABLE else 0.0
        self.marker.set_data([moved + 0.12], [m])

    def readout_lines(self) -> list[str]:
        """The readout as plain text, one line per line (for print)."""
        return plain_text(self.readout_text()).splitlines()

    def readout_text(self):
        v, s = self.values, self.state
        L, m = v["L"], v["m"]
        lines = [
            _("{optimizer}, {steps} steps on sequences of L = {L} tokens").format(
                optimizer=v["optimizer"], steps=v["steps"], L=L
            )
        ]
        if m >= ROWS_IN_TABLE:
            lines.append(
                _("<b>position {m}: no row</b> (the table has {rows})").format(
                    m=m, rows=ROWS_IN_TABLE
                )
            )
        elif m < L:
            lines.append(
                _("<b>row {m}: trained</b>, moved {moved:.3f}").format(
                    m=m, moved=s["moved"][m]
                )
            )
        else:
            lines.append(
                _("<b>row {m}: never trained</b>, moved {moved:.3f}").format(
                    m=m, moved=s["moved"][m]
                )
            )
        if s["kept"] is not None:
            lines.append(
                _("rows {L}..{last} keep {kept:.3f} of their start").format(
                    L=L, last=ROWS_IN_TABLE - 1, kept=s["kept"]
                )
            )
        return "<br>".join(lines)


# ---------------------------------------------------------------------- still figures


__all__ = [
    "LearnedTableWidget",
]
