"""Live widgets for the lessons, one module per topic, each module only its widget classes.

Every widget is a subclass of rope_lib.widgets.base.LiveWidget: it declares its controls as a
table of Control rows (name, label, kind, range, default=...) and writes its numbers
(compute) and its drawing (build, draw); the base keeps the values, clamps and checks them,
builds and syncs the controls, redraws in place and fills the readout. A widget has
    .figure     a matplotlib Figure whose artists are created once (at most 6.4 x 3.3 in at
                dpi 100; with its controls above it or in a column beside it, the whole
                widget fits the projector's SCREEN_WIDTH x SCREEN_HEIGHT CSS px, what
                JupyterLab shows of a notebook at 1280x720 and 150% zoom)
    .controls   dict name -> ipywidgets control (sliders, dropdowns, buttons)
    .readout    an ipywidgets.HTML with the numbers the picture shows
    .update(**values)   recompute and change the artists in place, then draw; the controls
                        call it, and so do the tests and the benchmark
    .widget()   the controls, the readout and the canvas in one LiveBox, to display
    .sweep(n)   settings for update() that move each main control (SWEPT) across its range:
                one frame per value, what a static site draws as the widget's flipbook
A widget registers itself by subclassing: `registry()` is every lesson widget by class name
(the benchmark, scripts/make_images.py and the tests read it), and `Widget.example()` builds
one as its lesson first shows it.

In a notebook with `%matplotlib widget` (ipympl) the canvas redraws in place in the browser;
the still figures, the README thumbnails and `show_png` / `static_png` are in rope_lib.figures.
The display machinery (live_box's layouts, the canvas, Redrawer) is rope_lib.widgets.display.
A LiveBox stores a short plain-text line as its text output (LIVE_TEXT), not the widget repr:
that line is what GitHub, nbviewer and a not-yet-run notebook show.

Adding a widget: a LiveWidget subclass in rope_lib/widgets/<topic>.py with CONTROLS, ROWS and
SWEPT; its still figures and its thumbnail() in rope_lib/figures/<topic>.py.
"""

from __future__ import annotations

import importlib
import pkgutil

from ..figures.style import LIVE_SIZE, MAX_WIDTH, course_style
from .base import REGISTRY, Control, LiveWidget
from .display import (
    CANVAS_MARGINS,
    LIVE_TEXT,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    SIDE_CSS,
    SIDE_GAP,
    Redrawer,
    canvas_widget,
    compact,
    label_px,
    live_box,
    live_figure,
)


def registry() -> dict[str, type[LiveWidget]]:
    """Every lesson widget by class name: imports each widget module (a widget registers
    itself by subclassing LiveWidget), then returns the registry."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(REGISTRY.items()))


__all__ = [
    "CANVAS_MARGINS",
    "LIVE_SIZE",
    "LIVE_TEXT",
    "MAX_WIDTH",
    "SCREEN_HEIGHT",
    "SCREEN_WIDTH",
    "SIDE_CSS",
    "SIDE_GAP",
    "Control",
    "LiveWidget",
    "Redrawer",
    "canvas_widget",
    "compact",
    "course_style",
    "label_px",
    "live_box",
    "live_figure",
    "registry",
]
