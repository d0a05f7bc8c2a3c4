"""LiveWidget: the one base class of the lessons' live widgets.

A widget declares its controls as a table and writes its numbers and its drawing:

    class Turn(LiveWidget):
        CONTROLS = (
            Control("m", "m", "int", 0, 20, default=5),
            Control("theta", N_("theta"), "float", 0.0, 1.0, 0.01, default=0.3),
        )
        ROWS = (("m", "theta"),)
        SWEPT = ("m", "theta")               # the main controls: what a sweep moves

        def build(self, figure):             # once: create the artists
            ax = figure.add_axes((0.1, 0.15, 0.85, 0.75))
            (self.line,) = ax.plot([], [])
            return [self.line]                # the moving artists, for the Redrawer

        def compute(self, v):                 # the numbers the picture shows: .state
            return {"angle": v["m"] * v["theta"]}

        def draw(self, s):                    # move the artists (set_data and friends)
            self.line.set_data([0, math.cos(s["angle"])], [0, math.sin(s["angle"])])

        def readout_text(self):               # the readout: HTML lines joined by <br>
            return f"m θ = {self.state['angle']:.4f}"

The base does the rest, once for every widget: the values (defaults from the table, an
unknown name is a ValueError, ints and floats as the table says, a choice checked against
its options, each value clamped into its control's range when CLAMP is set, a range that
follows another control given as a function of the values), the ipywidgets controls (the
label translated, sized for the projector, each calling update() when it moves), the
controls kept in step with the values when update() is called from code, redrawing in
place (rope_lib.widgets.Redrawer: a full draw only when `static_key(state)` changes, after
`draw_static(state)`), the readout, `widget()` (ROWS of controls, the readout, the canvas:
a LiveBox, whose stored text output is a short line) and a one-line `repr`.

`state` is a dict (`w.state["score"]`); calling it (`w.state()`) gives the same dict.

Registration and sweeps. A LiveWidget subclass defined in rope_lib.widgets registers
itself when its module is imported (REGISTRY, by class name; rope_lib.widgets.registry()
imports them all): the benchmark (benchmarks/bench_widgets.py), scripts and tests find
every widget there, with no list to extend. `Widget.example()` builds it as its lesson
first shows it (`cls()`, or on the committed results for the lab's and the LLM's). Every
widget names at least one main control in SWEPT (a TypeError otherwise), and
`widget.sweep(n)` yields settings for update(), deterministic and cheap to draw: each main
control in turn takes its values (`spread`: n values evenly over its slider's positions,
both ends included, or every option of a choice; SWEEP_VALUES[name] instead when the
class lists special moves), the other controls at the widget's values. One frame per
value: a static site draws a widget's flipbook from it at build time (`sweep_values(n)`:
the values per main control), and the benchmark and the tests time and check the same
frames.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..figures.style import LIVE_SIZE
from ..language import _
from .display import Redrawer, compact, label_px, live_box, live_figure

#: A readout of several lines, 1.3 high (a widget's HTML would space them 28 px apart):
#: with its figure the widget fits the projector's 480 px.
TIGHT_LINES = '<div style="line-height: 1.3">{}</div>'
#: The kinds of Control that are sliders.
SLIDER_KINDS = ("int", "float", "log", "select")
#: What plain_text() writes for the readouts' HTML entities.
ENTITIES = (("&rarr;", "->"), ("&middot;", "*"), ("&times;", "×"), ("&gt;", ">"))
_UNCHANGED = object()  # the static key before the first draw
#: The sweep's values per main control (LiveWidget.sweep): n points of its range.
SWEEP_POINTS = 8

#: Every lesson widget by class name: a LiveWidget subclass defined in rope_lib.widgets
#: registers itself (LiveWidget.__init_subclass__). rope_lib.widgets.registry() imports
#: every widget module first, so that all of them are here.
REGISTRY: dict[str, type] = {}


@dataclass(frozen=True)
class Control:
    """One row of a widget's control table.

    kind: "int" / "float" (a slider), "log" (FloatLogSlider: low, high, step are powers of
    ten), "select" (SelectionSlider of options), "choice" (Dropdown of options: a value
    outside them is a ValueError), or the widget's own (see LiveWidget.make_control).
    high may be a function of the values (a range that follows another control).
    label: the description, a message id (N_) translated when the control is built;
    option_label(value): the name a Dropdown shows for an option.
    """

    name: str
    label: str
    kind: str = "int"
    low: float = 0
    high: float | Callable[[dict], float] = 1
    step: float | None = None
    options: tuple = ()
    default: Any = None
    option_label: Callable[[Any], str] | None = None
    readout_format: str | None = None
    width: str | None = None
    label_width: str | None = None
    convert: Callable[[Any], Any] | None = None

    def top(self, values: dict):
        """The upper end of the range for these values."""
        return self.high(values) if callable(self.high) else self.high

    def value_of(self, value):
        """The value as the widget keeps it: an int or float for a slider, a known option
        for a choice."""
        if self.convert is not None:
            value = self.convert(value)
        elif self.kind == "int":
            value = int(value)
        elif self.kind in ("float", "log"):
            value = float(value)
        if self.kind == "choice" and value not in self.options:
            raise ValueError(
                _("{name} must be one of {options}, got {value!r}").format(
                    name=self.name, options=self.options, value=value
                )
            )
        return value

    def clamped(self, values: dict) -> int:
        """The (int) value kept inside [low, top]."""
        return int(min(max(values[self.name], self.low), self.top(values)))


class State(dict):
    """The numbers the picture shows: a dict that also answers a call (`w.state()`)."""

    def __call__(self) -> State:
        return self


def plain_text(text: str) -> str:
    """A readout's HTML as plain text: lines for <br>, no tags, entities written out."""
    text = text.replace("<br>", "\n")
    for entity, plain in ENTITIES:
        text = text.replace(entity, plain)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def spread(control: Control, values: dict, n: int = SWEEP_POINTS) -> list:
    """The values a sweep gives a control: every option of a choice or a select (each is a
    case of its own), else n values evenly over the positions of its slider (fewer when it
    has fewer), both ends included: from low to its top for these values, in steps of
    `step` (1 for an int, 0.1 for a float without one, as ipywidgets; for "log" the step
    of the exponent)."""
    if n < 2:
        raise ValueError(
            _("n must be >= 2 (a sweep takes both ends of a range), got n={n}").format(
                n=n
            )
        )
    if control.kind in ("choice", "select"):
        return list(control.options)
    low, top = control.low, control.top(values)
    step = control.step or (1 if control.kind == "int" else 0.1)
    count = int((top - low) / step + 1e-9) + 1
    grid = [round(low + i * step, 10) for i in range(count)]
    if control.kind == "log":
        grid = [round(10.0**g, 10) for g in grid]
    elif control.kind == "int":
        grid = [int(g) for g in grid]
    if len(grid) <= n:
        return grid
    picks = sorted({round(i * (len(grid) - 1) / (n - 1)) for i in range(n)})
    return [grid[i] for i in picks]


def make_readout():
    """The readout: an ipywidgets.HTML of class rope-readout."""
    import ipywidgets as w

    readout = w.HTML("")
    readout.add_class("rope-readout")
    return readout


def slider(control: Control, value, description: str, values: dict):
    """An ipywidgets control for one row of the table."""
    import ipywidgets as w

    c = control
    if c.kind in ("int", "float"):
        cls = w.IntSlider if c.kind == "int" else w.FloatSlider
        step = {} if c.step is None else {"step": c.step}
        return cls(
            value=value, min=c.low, max=c.top(values), **step, description=description
        )
    if c.kind == "log":
        fmt = {} if c.readout_format is None else {"readout_format": c.readout_format}
        return w.FloatLogSlider(
            value=value,
            base=10,
            min=c.low,
            max=c.high,
            step=c.step,
            description=description,
            **fmt,
        )
    options = c.options
    if c.option_label is not None:
        options = [(c.option_label(option), option) for option in options]
    cls = w.SelectionSlider if c.kind == "select" else w.Dropdown
    return cls(options=options, value=value, description=description)


class LiveWidget:
    """The base of every lesson widget (module docstring).

    Class attributes: CONTROLS (the table), ROWS (control names per row of widget()),
    CONTROL_SIZE (a control's width and its label's), READOUT_WIDTH and BESIDE (see
    live_box), READOUT ("{}" or TIGHT_LINES), CLAMP (keep values in their ranges), FIGSIZE
    (the live figure's size in inches, at most LIVE_SIZE), SWEPT (the main controls, at
    least one: what sweep() moves) and SWEEP_VALUES (name -> the values a main control's
    sweep takes instead of spread's, for special moves).

    With BESIDE = "side" the controls and the readout stand in one column READOUT_WIDTH
    wide, left of a figure at most (SCREEN_WIDTH - that - SIDE_GAP) px wide: every control
    is as wide as the column (one per row, unless a row holds several), and the labels of
    the controls that do not set their own label_width share the widest label's width, so
    that the slider tracks line up and stay long.
    """

    CONTROLS: tuple[Control, ...] = ()
    ROWS: tuple[tuple[str, ...], ...] = ()
    CONTROL_SIZE = ("200px", "78px")
    READOUT_WIDTH = "640px"
    BESIDE = "below"
    READOUT = "{}"
    CLAMP = False
    FIGSIZE = LIVE_SIZE
    SWEPT: tuple[str, ...] = ()
    SWEEP_VALUES: dict[str, tuple] = {}

    def __init_subclass__(cls, **kwargs):
        """Register a lesson widget (a class in rope_lib.widgets): it must name its main
        controls (SWEPT), what its sweep moves."""
        super().__init_subclass__(**kwargs)
        if not cls.__module__.startswith(f"{__package__}."):
            return
        if not cls.SWEPT:
            raise TypeError(f"{cls.__name__} must name its main controls in SWEPT")
        REGISTRY[cls.__name__] = cls

    @classmethod
    def example(cls) -> LiveWidget:
        """The widget as its lesson first shows it (a widget of a lesson's data loads the
        committed results): where a sweep, the benchmark and the tests start."""
        return cls()

    def __init__(self, figure=None, **values):
        self.values = {c.name: c.default for c in self.CONTROLS}
        self.values = self._checked(values)
        self._syncing = False
        self._state = State()
        self._static_key = _UNCHANGED
        self.figure = live_figure(self.FIGSIZE) if figure is None else figure
        self.redraw = Redrawer(self.figure, self.build(self.figure))
        self.controls = {c.name: self._control(c) for c in self.CONTROLS}
        for name, control in self.controls.items():
            control.observe(self._updater(name), names="value")
        self.readout = make_readout()
        self.update()

    # --- what a widget writes --------------------------------------------------------------
    def build(self, figure) -> list:
        """Create the artists once; return the moving ones (lowest zorder first)."""
        raise NotImplementedError

    def compute(self, v: dict) -> dict:
        """The numbers the picture shows for the values v (the widget's state)."""
        return {}

    def draw(self, s: dict) -> None:
        """Move the artists to the state s (set_data and friends), no drawing."""
        raise NotImplementedError

    def static_key(self, s: dict):
        """What the static parts (axis ranges, ticks) depend on: a new key redraws all."""
        return None

    def draw_static(self, s: dict) -> None:
        """Change the static parts for a new static_key (limits, ticks, titles)."""

    def check(self, v: dict) -> None:
        """Raise ValueError for values that do not go together."""

    def readout_text(self) -> str:
        """The readout: HTML lines joined by <br>."""
        raise NotImplementedError

    def readout_html(self) -> str:
        """What the readout shows."""
        return self.READOUT.format(self.readout_text())

    def make_control(self, control: Control, description: str):
        """The ipywidgets control of one table row (override for a kind of one's own)."""
        return slider(control, self.values[control.name], description, self.values)

    def control_size(self, control: Control, description: str):
        """(width, label width) of a control; None: as it comes."""
        if self.BESIDE == "side":
            return self._side_size(control)
        return (
            control.width or self.CONTROL_SIZE[0],
            control.label_width or self.CONTROL_SIZE[1],
        )

    def _side_size(self, control: Control):
        """In a side column: the column's width shared by the controls of its row, and a
        slider's label as wide as the widest slider label of the table (in the current
        language), so that the tracks line up; a dropdown's label as wide as its text."""
        row = next((r for r in self.ROWS if control.name in r), (control.name,))
        column = int(self.READOUT_WIDTH.removesuffix("px")) - 4
        width = control.width or f"{column // len(row) - 4}px"
        if control.label_width:
            return width, control.label_width
        if control.kind in SLIDER_KINDS:
            sliders = [c for c in self.CONTROLS if c.kind in SLIDER_KINDS]
            widest = max(label_px(_(c.label)) for c in sliders if not c.label_width)
            return width, f"{widest}px"
        return width, f"{label_px(_(control.label))}px"

    # --- the sweep ----------------------------------------------------------------------
    def sweep_values(self, n: int = SWEEP_POINTS) -> dict[str, list]:
        """The values the sweep gives each main control (SWEPT, in order): SWEEP_VALUES'
        when the class lists them, else spread(control, values, n)."""
        controls = {c.name: c for c in self.CONTROLS}
        return {
            name: list(self.SWEEP_VALUES.get(name, ()))
            or spread(controls[name], self.values, n)
            for name in self.SWEPT
        }

    def sweep(self, n: int = SWEEP_POINTS) -> Iterator[dict]:
        """Settings for update() that move each main control across its range in turn, the
        others at the values the widget has now: one frame per value of sweep_values(n)."""
        start = dict(self.values)
        for name, values in self.sweep_values(n).items():
            for value in values:
                yield {**start, name: value}

    # --- what the base does ----------------------------------------------------------------
    @property
    def state(self) -> State:
        """The numbers the picture shows (after the last update)."""
        return self._state

    def update(self, **values) -> None:
        """Take new values (None: unchanged), recompute, move the artists, redraw in place."""
        self.values = self._checked(values)
        self._sync_controls()
        self._state = State(self.compute(self.values))
        key = self.static_key(self._state)
        full = key != self._static_key
        if full:
            self._static_key = key
            self.draw_static(self._state)
        self.draw(self._state)
        self.readout.value = self.readout_html()
        self.redraw(full=full)

    def widget(self):
        """The controls (ROWS), the readout and the canvas in one LiveBox, to display."""
        rows = [[self.controls[name] for name in row] for row in self.ROWS]
        return live_box(
            rows,
            self.readout,
            self.figure,
            readout_width=self.READOUT_WIDTH,
            beside=self.BESIDE,
        )

    def __repr__(self) -> str:
        lines = plain_text(self.readout.value).splitlines()
        return f"{type(self).__name__}: " + "; ".join(lines)

    def _checked(self, values: dict) -> dict:
        """The new values: known names, converted, clamped, checked together."""
        values = {k: value for k, value in values.items() if value is not None}
        unknown = set(values) - set(self.values)
        if unknown:
            raise ValueError(
                _("update() takes {value}; unknown control(s) {unknown}").format(
                    value=", ".join(self.values), unknown=sorted(unknown)
                )
            )
        v = {**self.values, **values}
        for c in self.CONTROLS:
            v[c.name] = c.value_of(v[c.name])
        if self.CLAMP:
            for dependent in (
                False,
                True,
            ):  # fixed ranges first, then those following them
                for c in self.CONTROLS:
                    if c.kind == "int" and callable(c.high) == dependent:
                        v[c.name] = c.clamped(v)
        self.check(v)
        return v

    def _control(self, c: Control):
        description = _(c.label)
        control = self.make_control(c, description)
        size = self.control_size(c, description)
        return control if size is None else compact(control, *size)

    def _updater(self, name: str):
        """A control's observer: update(name=new value), unless the widget is moving its
        own controls."""

        def handler(change):
            if not self._syncing:
                self.update(**{name: change["new"]})

        return handler

    def _sync_controls(self) -> None:
        """Move the controls to the values without calling update() again: first the
        ranges that follow other controls (ipywidgets clamps a value into its slider's
        range), then the values (but a select control's value that none of its options
        holds, set from code)."""
        self._syncing = True
        try:
            for c in self.CONTROLS:
                if callable(c.high):
                    self.controls[c.name].max = c.top(self.values)
            for c in self.CONTROLS:
                value, control = self.values[c.name], self.controls[c.name]
                if c.kind == "select" and value not in c.options:
                    continue
                if control.value != value:
                    control.value = value
        finally:
            self._syncing = False


__all__ = [
    "REGISTRY",
    "SWEEP_POINTS",
    "Control",
    "LiveWidget",
    "State",
    "TIGHT_LINES",
    "make_readout",
    "plain_text",
    "spread",
]
