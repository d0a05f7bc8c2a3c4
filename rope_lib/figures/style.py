"""The course's one figure style: legible on a classroom projector.

The target screen is a projector at 1280x720 with 150% browser zoom: an output area about
640 CSS px wide and 480 px high. At figure dpi 100 one point is 1.39 px, so

    base text 12 pt (17 px), titles 13 pt, tick labels 11 pt (15 px), legends 11 pt,

and a figure fits unscaled when it is at most 6.4 in (640 px) wide. A live (ipympl) figure is
at most 6.4 x 3.3 in, so that with two rows of controls it fits 480 px of height.

The style is applied when rope_lib.figures (or rope_lib.widgets) is imported
(`apply_course_style()`), and is also a context manager for a single figure:

    with course_style():
        fig, ax = plt.subplots()

Helpers: `integer_ticks(axis)` (an axis of positions, heads or pairs ticks at integers
only), `legend_below(ax, ...)` (a legend under the axes, off the title and the curves),
`fixed_ylabel(ax, widest)` (a y label placed once, for an axis redrawn at every step).
"""

from __future__ import annotations

import matplotlib
from matplotlib.ticker import MaxNLocator
from matplotlib.transforms import offset_copy

#: Figure sizes (inches at dpi 100): the widest figure that fits the projector's output area,
#: and the largest live figure that fits beside its controls.
MAX_WIDTH = 6.4
LIVE_SIZE = (6.4, 3.3)
DPI = 100

COURSE_RC = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.figsize": LIVE_SIZE,
    "font.size": 12,
    "axes.titlesize": 13,
    "figure.titlesize": 13,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "legend.title_fontsize": 11,
    "legend.frameon": False,
    "axes.titlepad": 5.0,
    "axes.labelpad": 3.0,
    "lines.linewidth": 1.6,
    "lines.markersize": 5.0,
    "image.cmap": "viridis",
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
}


def apply_course_style() -> None:
    """Set the course style for every figure made from now on (rope_lib.figures does this
    when it is imported)."""
    matplotlib.rcParams.update(COURSE_RC)


def course_style():
    """The course style for the figures made inside a `with` block only."""
    return matplotlib.rc_context(COURSE_RC)


def integer_ticks(*axes, nbins: int | str = "auto") -> None:
    """Ticks at integers only (positions, heads, pairs, coordinates: no tick at 2.5)."""
    for axis in axes:
        axis.set_major_locator(MaxNLocator(nbins=nbins, integer=True))


def legend_below(ax, ncol: int = 2, **kwargs):
    """A legend under the axes (below its x label), so that it covers neither the title nor
    a curve."""
    kwargs.setdefault("loc", "upper center")
    kwargs.setdefault("bbox_to_anchor", (0.5, -0.22))
    return ax.legend(ncol=ncol, **kwargs)


def fixed_ylabel(ax, widest: str) -> None:
    """Put ax's y label where matplotlib would beside tick labels as wide as `widest`, as a
    static text: the y axis is redrawn at every step (its range follows the data), its label
    need not be, and the automatic placement measures every tick label."""
    figure = ax.figure
    ylabel, tick = ax.yaxis.label, ax.yaxis.get_major_ticks()[0]
    width, _height, _descent = (
        figure.canvas.get_renderer().get_text_width_height_descent(
            widest, tick.label1.get_fontproperties(), ismath=False
        )
    )
    # left of the axes by tick length + pad + label width + labelpad
    offset = (
        tick.get_tick_padding()
        + tick.get_pad()
        + width * 72 / figure.dpi
        + ax.yaxis.labelpad
    )
    ylabel.set_visible(False)
    ax.yaxis.set_label_coords(0.0, 0.5)  # hidden: no automatic placement
    ax.text(
        0.0,
        0.5,
        ylabel.get_text(),
        transform=offset_copy(ax.transAxes, figure, x=-offset, units="points"),
        rotation=90,
        rotation_mode="anchor",
        ha="center",
        va="bottom",
        fontproperties=ylabel.get_fontproperties(),
    )


__all__ = [
    "COURSE_RC",
    "DPI",
    "LIVE_SIZE",
    "MAX_WIDTH",
    "apply_course_style",
    "course_style",
    "fixed_ylabel",
    "integer_ticks",
    "legend_below",
]
