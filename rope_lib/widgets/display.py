"""How a live widget is shown: its figure, its canvas, its controls' layout, and redrawing.

live_figure(figsize)   a pyplot figure for a widget, not shown by the cell that makes it
canvas_widget(figure)  the figure's canvas without header, toolbar or footer (ipympl), or a PNG
live_box(rows, readout, figure, beside=...)   controls, readout and canvas in one LiveBox,
                       in one of four LAYOUTS; a LiveBox stores LIVE_TEXT as its text output
label_px, compact      the size of a control's label, and of a control in a compact row
Redrawer               redraw in place, drawing only what moves (blitting)
"""

from __future__ import annotations

from ..figures import static_png
from ..figures.style import DPI, LIVE_SIZE
from ..language import N_, _

#: The plain-text output a widget cell stores (what a reader without a kernel sees), in
#: English; a LiveBox stores it in the current language (`_(LIVE_TEXT)`).
LIVE_TEXT = N_("Live widget: drag the sliders (run this cell in JupyterLab to use it)")


def live_figure(figsize=LIVE_SIZE, dpi: int = DPI):
    """A new figure for a live widget: pyplot's (so that ipympl gives it a canvas widget),
    not shown by the cell that makes it (ioff), at most LIVE_SIZE."""
    import matplotlib.pyplot as plt

    width, height = figsize
    if width > LIVE_SIZE[0] + 1e-9 or height > LIVE_SIZE[1] + 1e-9:
        raise ValueError(
            f"a live figure is at most {LIVE_SIZE} in, got figsize={figsize}"
        )
    with plt.ioff():
        return plt.figure(figsize=figsize, dpi=dpi)


def canvas_widget(figure):
    """The figure's canvas ready to sit in a LiveBox: under ipympl the canvas itself, with no
    header ("Figure 1"), toolbar or footer and a fixed size; under any other backend an
    Output that shows the picture once as a PNG."""
    import ipywidgets as w

    canvas = figure.canvas
    if isinstance(canvas, w.DOMWidget):  # ipympl
        canvas.header_visible = False
        canvas.footer_visible = False
        canvas.toolbar_visible = False
        canvas.resizable = False
        canvas.capture_scroll = False
        return canvas
    from IPython.display import display

    out = w.Output()
    with out:
        display(static_png(figure))
    return out


def _live_box(children):
    """A LiveBox of these children (the class is made once, on first use: ipywidgets is
    imported only when a widget is shown)."""
    global _LIVE_BOX
    if _LIVE_BOX is None:
        _LIVE_BOX = _live_box_class()
    return _LIVE_BOX(children)


def _live_box_class():
    import ipywidgets as w

    class LiveBox(w.VBox):
        """A VBox whose stored plain-text output is LIVE_TEXT instead of the widget repr."""

        def _repr_mimebundle_(self, **kwargs):
            bundle = super()._repr_mimebundle_(**kwargs)
            if bundle is not None:
                bundle["text/plain"] = _(LIVE_TEXT)
            return bundle

        def __repr__(self) -> str:
            return _(LIVE_TEXT)

    return LiveBox


_LIVE_BOX = None


#: The projector's output area (CSS px at 1280x720, 150% zoom, file browser closed) and the
#: height of the notebook's part of the screen under JupyterLab's bars: a live widget, its
#: controls and its picture together, fits SCREEN_WIDTH x SCREEN_HEIGHT.
SCREEN_WIDTH, SCREEN_HEIGHT = 673, 359
#: Controls beside the figure (beside="side"): the gap between the column and the canvas
#: (ipympl's canvas keeps 4 px of its own on each side: CANVAS_MARGINS in all), so that
#: column + SIDE_GAP + figure + CANVAS_MARGINS <= SCREEN_WIDTH.
SIDE_GAP, CANVAS_MARGINS = 0, 8
#: In a side column a slider's value box is as wide as its text (ipywidgets gives it at
#: least 72 px, a third of the column): the track keeps the room. A style sheet in the
#: widget itself (an HTML widget), scoped to its own class, so that it travels with the
#: widget and touches nothing else on the page.
SIDE_CSS = (
    "<style>.rope-side .widget-readout, .rope-side .jupyter-widget-readout "
    "{min-width: 32px; max-width: 64px;}</style>"
)


def live_box(
    rows, readout, figure, readout_width: str = "200px", beside: str = "controls"
):
    """Controls, readout and figure in one LiveBox.

    rows: lists of controls, one list per row. beside says where the readout (readout_width
    wide) goes and where the canvas is:
      "controls"   right of all the rows, the canvas below (one to three rows);
      "last row"   at the end of the last row, the canvas below;
      "below"      one short line under the rows, the canvas below;
      "side"       the rows, then the readout, in one column readout_width wide, left of
                   the canvas: a tall figure and long sliders on the projector's 480 px.
    """
    if beside not in LAYOUTS:
        raise ValueError(
            f'beside must be "controls", "last row", "below" or "side", got {beside!r}'
        )
    most = 12 if beside == "side" else 3
    if not 1 <= len(rows) <= most:
        raise ValueError(
            f"a live widget with beside={beside!r} has 1 to {most} rows of controls, "
            f"got {len(rows)}"
        )
    readout.layout.width = readout_width
    readout.layout.margin = "0 0 0 8px"
    rows = [list(row) for row in rows]
    return LAYOUTS[beside](rows, readout, figure, readout_width)


def _control_rows(rows):
    """The rows of controls, one HBox each, in a VBox."""
    import ipywidgets as w

    return w.VBox([w.HBox(row, layout=_row_layout()) for row in rows])


def _row_layout():
    import ipywidgets as w

    return w.Layout(flex_flow="row nowrap", align_items="center")


def _beside_controls(rows, readout, figure, readout_width):
    """The readout right of all the rows, the canvas below."""
    import ipywidgets as w

    top = w.HBox([_control_rows(rows), readout], layout=_row_layout())
    return _live_box([top, canvas_widget(figure)])


def _in_last_row(rows, readout, figure, readout_width):
    """The readout at the end of the last row, the canvas below."""
    rows[-1].append(readout)
    return _live_box([_control_rows(rows), canvas_widget(figure)])


def _below(rows, readout, figure, readout_width):
    """The readout one short line under the rows, the canvas below."""
    readout.layout.margin = "0"
    return _live_box([_control_rows(rows), readout, canvas_widget(figure)])


def _side(rows, readout, figure, readout_width):
    """The rows and the readout in one column readout_width wide, left of the canvas."""
    import ipywidgets as w

    readout.layout.margin = "4px 0 0 4px"
    readout.layout.width = "auto"
    column = w.VBox(
        [_control_rows(rows), readout],
        layout=w.Layout(
            width=readout_width, flex="0 0 auto", overflow="hidden", margin="0"
        ),
    )
    canvas = canvas_widget(figure)
    canvas.layout.margin = f"0 0 0 {SIDE_GAP}px"
    side = w.HBox(
        [column, canvas], layout=w.Layout(align_items="flex-start", margin="0")
    )
    style = w.HTML(SIDE_CSS, layout=w.Layout(height="0px", margin="0"))
    box = _live_box([side, style])
    box.add_class("rope-side")
    return box


#: live_box's layouts, by its `beside` argument.
LAYOUTS = {
    "controls": _beside_controls,
    "last row": _in_last_row,
    "below": _below,
    "side": _side,
}


def label_px(text: str) -> int:
    """About the width (CSS px) of a control's label in 13 px text: a CJK character is a
    square, a Latin letter about 8 px."""
    return 2 + sum(13 if ord(c) >= 0x2E80 else 8 for c in text)


def compact(control, width: str, description_width: str):
    """Size a control for a compact row: its total width and its description's width."""
    control.layout.width = width
    control.style.description_width = description_width
    return control


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

    The Redrawer decides when the figure is drawn: it takes over the figure's stale callback
    (pyplot's, which asks for a full draw whenever any artist changes), and after every draw,
    full or blitted, it leaves the figure clean. Otherwise drawing a moving axis (its ticks
    mark the axes stale while they are laid out) would ask for another full draw after each
    one, forever: a widget that redraws while nobody touches it. A change made from a notebook
    cell (a new title, say) still shows: the figure is stale when the cell ends, and pyplot
    draws stale figures then.
    """

    def __init__(self, figure, moving):
        self.figure = figure
        self.moving = list(moving)
        for artist in self.moving:
            artist.set_animated(
                True
            )  # left out of full draws: drawn by _draw_moving instead
        self.background = None
        self._canvas = figure.canvas
        # the widget's update() ends with a call to this Redrawer: no automatic draw requests
        figure.stale_callback = None
        figure.canvas.mpl_connect("draw_event", self._on_draw)

    def _draw_moving(self):
        for artist in self.moving:
            self.figure.draw_artist(artist)
        self._clean()

    def _clean(self):
        """Everything is drawn: nothing is stale (drawing an axis marks its axes stale)."""
        for artist in self.moving:
            if artist.axes is not None:
                artist.axes.stale = False
        self.figure.stale = False

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


__all__ = [
    "CANVAS_MARGINS",
    "LAYOUTS",
    "LIVE_TEXT",
    "SCREEN_HEIGHT",
    "SCREEN_WIDTH",
    "SIDE_CSS",
    "SIDE_GAP",
    "Redrawer",
    "canvas_widget",
    "compact",
    "label_px",
    "live_box",
    "live_figure",
]
