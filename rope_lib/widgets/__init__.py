"""Live widgets for the lessons, one module per lesson, and what they share.

Every widget is a class with
    .figure     a matplotlib Figure whose artists are created once
    .controls   dict name -> ipywidgets control (sliders, dropdowns, buttons)
    .readout    an ipywidgets.HTML with the numbers the picture shows
    .update(**values)   recompute and change the artists in place (set_data and friends), then
                        draw; the controls call it, and so do the tests and the benchmark
    .widget()   the controls, the readout and the figure's canvas in one box, to display
In a notebook with `%matplotlib widget` (ipympl) the canvas redraws in place in the browser;
`static_png(figure)` gives the PNG shown beside it for readers without a kernel.
"""

from __future__ import annotations

import io


def static_png(figure, dpi: int = 80):
    """The figure as an IPython PNG image, for notebooks read without a kernel."""
    from IPython.display import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return Image(data=buffer.getvalue(), format="png")


def redraw(figure) -> None:
    """Draw the figure now. With ipympl this sends the new picture to the browser."""
    figure.canvas.draw_idle()
