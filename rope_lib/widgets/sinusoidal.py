"""The sinusoidal encoding of two positions and their dot product (the sinusoidal lesson).

EncodingExplorer: sliders for the position m, the offset Delta, d_model (d) and base (b).
The top panel shows the vectors PE(m) and PE(m + Delta) coordinate by coordinate; the
bottom panel shows the curve PE(m).PE(m + Delta) = sum_i cos(Delta theta_i), with
theta_i = b**(-2i/d), against Delta, and a marker at the chosen Delta placed from the two
vectors themselves: moving m never moves the marker off the curve (the dot product depends
on Delta only), and the curve is mirror-symmetric (Delta and -Delta give the same number).

The keyword names of update() and of the controls stay p (the position m) and k (the
offset Delta); every label the learner sees uses the course notation (README, Notation).

Drawing: the axes, ticks and titles are static and drawn once (rope_lib.widgets.Redrawer);
each update draws only the two vectors, the curve and the two markers on top. The axis
limits depend on d_model only (the bottom one is fixed to fit the curve for every base the
slider offers), so only a change of d_model redraws everything.
"""

from __future__ import annotations

import numpy as np

from ..figures.style import integer_ticks
from ..language import N_, _, _fig
from ..sinusoidal import sinusoidal_at, sinusoidal_offset_dot
from .base import TIGHT_LINES, Control, LiveWidget

K_MAX = 64  # the offset slider's range, -K_MAX .. K_MAX
CURVE_K = 128  # the dot-product curve is drawn for Delta in -CURVE_K .. CURVE_K
BASE_EXPONENTS = (
    1.0,
    5.0,
    0.25,
)  # the base slider: 10**1 .. 10**5 in steps of 10**0.25


def _slider_bases():
    low, high, step = BASE_EXPONENTS
    return 10.0 ** np.arange(low, high + step / 2, step)


class EncodingExplorer(LiveWidget):
    """Live view of PE(m), PE(m + Delta) and their dot product (module docstring)."""

    CONTROLS = (
        Control("p", N_("position m"), "int", 0, 200),
        Control("k", N_("offset Δ"), "int", -K_MAX, K_MAX),
        Control("d_model", "d_model", "int", 4, 128, 4),
        Control("base", N_("base"), "log", *BASE_EXPONENTS, readout_format=".0f"),
    )
    ROWS = (("p",), ("k",), ("d_model",), ("base",))
    BESIDE, READOUT_WIDTH, READOUT = "side", "250px", TIGHT_LINES
    FIGSIZE = (4.05, 3.3)
    SWEPT = ("p", "k", "d_model", "base")

    def __init__(
        self, p: int = 20, k: int = 5, d_model: int = 32, base: float = 10000.0
    ):
        self.curve_k = np.arange(-CURVE_K, CURVE_K + 1)
        self._curve_for = None
        self._bottom_for = {}  # d_model -> the lowest point of the curve over the slider's bases
        super().__init__(p=p, k=k, d_model=d_model, base=base)

    def build(self, figure):
        # A fixed layout, one panel over the other (405 x 330 px): constrained layout would
        # be recomputed at every draw (about 70 ms here).
        self.ax_vec = figure.add_axes((0.12, 0.64, 0.85, 0.27))
        self.ax_dot = figure.add_axes((0.12, 0.15, 0.85, 0.24))
        # Few texts, no legend boxes: text dominates the draw time (the tests and the benchmark
        # draw with Agg), so the colour key sits in the titles.
        ax = self.ax_vec
        (self.line_p,) = ax.plot([], [], "o-", color="tab:blue", ms=4, lw=0.8)
        (self.line_pk,) = ax.plot([], [], "s-", color="tab:orange", ms=3.5, lw=0.8)
        ax.set_ylim(-1.15, 1.15)
        ax.set_yticks([-1, 0, 1])
        ax.axhline(0, color="0.7", lw=0.6)
        integer_ticks(ax.xaxis, nbins=5)
        ax.set_xlabel(_fig("coordinate j"))
        ax.set_title(_fig("PE(m) blue, PE(m+Δ) orange"))

        ax = self.ax_dot
        (self.curve,) = ax.plot(
            self.curve_k, np.zeros(self.curve_k.shape), color="tab:green", lw=1.4
        )
        (self.marker,) = ax.plot([0], [0], "o", color="tab:red", ms=7)
        (self.mirror,) = ax.plot([0], [0], "o", mfc="none", mec="tab:red", ms=10)
        self.top = ax.axhline(0, color="0.6", lw=0.8, ls=":")
        ax.axhline(0, color="0.7", lw=0.6)
        ax.set_xlim(-CURVE_K, CURVE_K)
        ax.set_xticks(np.arange(-CURVE_K, CURVE_K + 1, 64))
        ax.set_xlabel(_fig("offset Δ"))
        ax.set_title(_fig("PE(m)·PE(m+Δ) against Δ"))
        # Drawn on top of a static background at each update; everything else is drawn only
        # when d_model (the x range, the y range and their ticks) changes.
        return [self.line_p, self.line_pk, self.curve, self.marker, self.mirror]

    def check(self, v):
        if v["d_model"] % 2:
            raise ValueError(
                _("d_model must be even, got {d_model}").format(d_model=v["d_model"])
            )

    def compute(self, v):
        p, k, d, base = v["p"], v["k"], v["d_model"], v["base"]
        vectors = sinusoidal_at([p, p + k, p - k], d, base).numpy()
        if self._curve_for != (d, base):  # the curve depends on d_model and base only
            self._curve = sinusoidal_offset_dot(self.curve_k, d, base).numpy()
            self._curve_for = (d, base)
        inside = abs(k) <= CURVE_K
        closed = (
            self._curve[k + CURVE_K] if inside else sinusoidal_offset_dot(k, d, base)
        )
        return dict(
            vectors=vectors,
            curve=self._curve,
            forward=float(vectors[0] @ vectors[1]),
            backward=float(vectors[0] @ vectors[2]),
            closed=float(closed),
            # limits that fit the curve for every base of the slider, so that moving the
            # base only redraws the curve; a base set from code whose curve dips lower
            # widens them
            bottom=min(self._bottom(d), float(self._curve.min()) - 0.05 * d),
        )

    def static_key(self, s):
        return (self.values["d_model"], s["bottom"])

    def draw_static(self, s):
        d = self.values["d_model"]
        self.ax_vec.set_xlim(-0.5, d - 0.5)
        self.top.set_ydata([d / 2, d / 2])
        self.ax_dot.set_ylim(s["bottom"], 0.58 * d)
        self.ax_dot.set_yticks([0, d / 4, d / 2])

    def draw(self, s):
        j, k = np.arange(self.values["d_model"]), self.values["k"]
        self.line_p.set_data(j, s["vectors"][0])
        self.line_pk.set_data(j, s["vectors"][1])
        self.curve.set_ydata(s["curve"])
        self.marker.set_data([k], [s["forward"]])
        self.mirror.set_data([-k], [s["backward"]])

    def readout_text(self):
        s, p = self.state, self.values["p"]
        square = float(s["vectors"][0] @ s["vectors"][0])
        return (
            f"<b>PE(m)·PE(m+Δ) = {s['forward']:.4f}</b><br>"
            f"PE(m)·PE(m−Δ) = {s['backward']:.4f}<br>"
            f"Σ_i cos(Δ·θ_i) = {s['closed']:.4f}<br>"
            f"m = {p}: |PE(m)|² = {square:.4f} = d/2"
        )

    def _bottom(self, d: int) -> float:
        """The bottom y limit for d_model d: below the curve's lowest point for every slider
        base."""
        if d not in self._bottom_for:
            lowest = min(
                float(sinusoidal_offset_dot(self.curve_k, d, b).min())
                for b in _slider_bases()
            )
            self._bottom_for[d] = min(-0.1 * d, lowest - 0.05 * d)
        return self._bottom_for[d]
