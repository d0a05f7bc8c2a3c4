"""Live widgets for the lessons, one module per lesson, and what they share.

Every widget is a class with
    .figure     a matplotlib Figure whose artists are created once
    .controls   dict name -> ipywidgets control (sliders, dropdowns, buttons)
    .readout    an ipywidgets.HTML with the numbers the picture shows
    .update(**values)   recompute and change the artists in place (set_data and friends), then
                        draw; the controls call it, and so do the tests and the benchmark
    .widget()   the controls, the readout and the figure's canvas in one box, to display
In a notebook with `%matplotlib widget` (ipympl) the canvas redraws in place in the browser;
`static_png(figure)` gives the PNG shown beside it for readers without a kernel; `show_png(figure)`
shows a finished figure as a PNG and closes it.
"""

from __future__ import annotations

import io


def static_png(figure, dpi: int = 80):
    """The figure as an IPython PNG image, for notebooks read without a kernel."""
    from IPython.display import Image

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return Image(data=buffer.getvalue(), format="png")


def show_png(figure, dpi: int = 80) -> None:
    """Show a finished (not live) figure in a notebook as a plain PNG, then close it, so that
    it reads without a kernel and no widget canvas is left behind under `%matplotlib widget`."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    display(static_png(figure, dpi))
    plt.close(figure)


def redraw(figure) -> None:
    """Draw the figure now. With ipympl this sends the new picture to the browser."""
    figure.canvas.draw_idle()


class Redrawer:
    """Redraw a figure in place, drawing only what moves (blitting).

    The static parts (axes, ticks, labels, legends) are rendered once into a background; each
    call restores it and draws the moving artists on top: a few milliseconds instead of the tens
    a full draw costs, most of it text. With ipympl, canvas.blit() sends the changed pixels to
    the browser. Call with full=True after a change that moves static parts (axis limits, tick
    labels, a title's text): everything is drawn again and the new background kept.

        redraw = Redrawer(figure, [line, arrow, heatmap])   # once, after building the figure
        line.set_data(x, y); redraw()                       # each update

    The moving artists are drawn in list order, on top of the background: list them lowest
    zorder first, and include any frame or tick they overlap, so that a blit paints exactly what
    a full draw would (the lessons' tests compare the two pixel for pixel).
    """

    def __init__(self, figure, moving):
        self.figure = figure
        self.moving = list(moving)
        for artist in self.moving:
            artist.set_animated(True)  # left out of full draws: drawn by _draw_moving instead
        self.background = None
        self._canvas = figure.canvas
        figure.canvas.mpl_connect("draw_event", self._on_draw)

    def _draw_moving(self):
        for artist in self.moving:
            self.figure.draw_artist(artist)

    def _on_draw(self, event):
        # A full draw (first display, resize, full=True): keep the static background, then put
        # the moving artists on top so the picture is complete. savefig (static_png) draws the
        # animated artists itself, at its own dpi: that render is no background for the canvas.
        if event.canvas.is_saving():
            return
        if event.canvas is self._canvas:
            self.background = self._canvas.copy_from_bbox(self.figure.bbox)
        self._draw_moving()

    def __call__(self, full: bool = False) -> None:
        canvas = self.figure.canvas
        if full or self.background is None or canvas is not self._canvas:
            # draw_idle, not draw: Agg draws at once; ipympl asks the browser, which asks back for
            # a full draw once the canvas is on the page (drawing before that leaves it blank).
            self._canvas, self.background = canvas, None
            canvas.draw_idle()
            return
        canvas.restore_region(self.background)
        self._draw_moving()
        canvas.blit(self.figure.bbox)
        # Drawn: otherwise pyplot's after-each-message hook would redraw the whole stale figure.
        self.figure.stale = False
