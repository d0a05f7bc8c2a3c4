"""The lessons' still figures, one module per topic, in the course's one style.

    from rope_lib.figures import show_png, static_png
    from rope_lib.figures import rotation as figures     # a lesson's own figures

Each rope_lib.figures.<topic> module draws finished (not live) matplotlib Figures from the
numbers its lesson computes, and `thumbnail()`, the lesson's picture in the README (when it
has one): scripts/make_images.py draws the thumbnail of the first rope_lib.figures or
rope_lib.widgets topic a lesson imports. The live widgets (rope_lib.widgets.<topic>) draw
with the same helpers (the planes, dials and colours defined here).

`show_png(figure)` shows a finished figure as a PNG and closes it; `static_png(figure)` is
the PNG of a live widget's figure, stored beside it for readers without a kernel.
Importing this package applies the course's figure style (rope_lib.figures.style: 12 pt
text, 13 pt titles, 11 pt tick labels, dpi 100); `course_style()` is the same as a context
manager.
"""

from __future__ import annotations

import io

from .style import DPI, apply_course_style, course_style

apply_course_style()


def static_png(figure, dpi: int = DPI):
    """The figure as an IPython PNG image, for notebooks read without a kernel."""
    from IPython.display import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return Image(data=buffer.getvalue(), format="png")


def show_png(figure, dpi: int = DPI) -> None:
    """Show a finished (not live) figure in a notebook as a plain PNG, then close it, so that
    it reads without a kernel and no widget canvas is left behind under `%matplotlib widget`."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    display(static_png(figure, dpi))
    plt.close(figure)


__all__ = ["course_style", "show_png", "static_png"]
