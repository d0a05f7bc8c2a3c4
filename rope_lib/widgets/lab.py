"""The extrapolation lab's results explorer: choose schemes, a RoPE scaling method and a
factor; see mean loss against the evaluation window (with the min..max over seeds).

    LabResultsWidget(results, schemes=("rope", "alibi"), method="yarn", factor=None)

results is the dict of results.json (rope_lib.exercises.lab.load_results() reads the
folder the lesson reads). The controls:
  schemes   one button per trained scheme (in its line's colour when shown): click to
            show or hide the scheme's mean loss and its min..max band over seeds;
  RoPE +    a RoPE scaling method applied at evaluation, zero-shot (the dashed line);
  factor    its factor s.
Every artist is created once; update() changes data, visibility and the title, then
redraws by blitting (rope_lib.widgets.Redrawer): the axes, ticks and labels never move
(the y range holds every number of the results), so only the curves are drawn again.
"""

from __future__ import annotations

import ipywidgets as w
import numpy as np
import traitlets
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from ..lab.figures import COLORS, LABELS
from ..language import N_, _, _fig
from . import label_px
from .base import TIGHT_LINES, Control, LiveWidget, cumulative_steps, moves

OFF_COLOR, OFF_TEXT = "#e6e6e6", "#606060"


class SchemeButtons(w.HBox):
    """A row of buttons, one per scheme, each on (filled in the scheme's colour) or off;
    .value is the tuple of schemes that are on, in the order of the options, and can be
    observed and set like any control's value."""

    value = traitlets.Tuple()
    description = traitlets.Unicode(N_("schemes"))

    def __init__(self, options, value=()):
        self.options = tuple(options)
        self.buttons = {}
        for name in self.options:
            button = w.Button(description=_(LABELS.get(name, name)), tooltip=name)
            button.layout = w.Layout(width="auto", height="28px", margin="0 3px 0 0")
            button.on_click(lambda _button, name=name: self._toggle(name))
            self.buttons[name] = button
        label = w.Label(_("schemes"), layout=w.Layout(width="62px"))
        super().__init__([label, *self.buttons.values()])
        self.description = _("schemes")
        self.observe(self._paint, names="value")
        self.value = tuple(name for name in self.options if name in value)
        self._paint()

    @property
    def _options_labels(self) -> tuple:
        """The option names, as a SelectMultiple's (what a demo script sets)."""
        return self.options

    @property
    def _options_values(self) -> tuple:
        return self.options

    @traitlets.validate("value")
    def _known(self, proposal):
        unknown = set(proposal["value"]) - set(self.options)
        if unknown:
            raise traitlets.TraitError(
                f"schemes must be among {self.options}, got {sorted(unknown)}"
            )
        return tuple(name for name in self.options if name in proposal["value"])

    def _toggle(self, name: str) -> None:
        on = set(self.value) ^ {name}
        self.value = tuple(n for n in self.options if n in on)

    def _paint(self, change=None) -> None:
        for name, button in self.buttons.items():
            on = name in self.value
            button.style.button_color = COLORS.get(name, "#444444") if on else OFF_COLOR
            button.style.text_color = "white" if on else OFF_TEXT
            button.style.font_weight = "bold" if on else "normal"


class LabResultsWidget(LiveWidget):
    """Mean loss against evaluation window for the chosen schemes (bands: min..max over
    seeds), and RoPE with a scaling method applied zero-shot (dashed)."""

    # the scheme buttons, then method, factor and the two readout lines in one row, the
    # figure under them: all of it on the projector's screen
    ROWS = (("schemes",), ("method", "factor"))
    BESIDE, READOUT_WIDTH, READOUT = "last row", "335px", TIGHT_LINES
    FIGSIZE = (6.4, 2.8)

    def __init__(
        self, results: dict, schemes=("rope", "alibi"), method="yarn", factor=None
    ):
        self.results = results
        config = results["config"]
        self.lengths = list(config["eval_lengths"])
        self.L = config["train_length"]
        self.schemes = list(config["schemes"])
        self.methods = list(config["methods"])
        self.factors = [str(f) for f in config["factors"]]
        factor = str(factor or config["finetune"]["factor"])
        if factor not in self.factors:
            factor = self.factors[0]
        self.CONTROLS = (
            Control("schemes", N_("schemes"), "schemes", convert=tuple),
            Control("method", "RoPE +", "choice", options=tuple(self.methods)),
            Control("factor", N_("factor"), "choice", options=tuple(self.factors),
                    convert=str),
        )  # fmt: skip
        super().__init__(schemes=schemes, method=method, factor=factor)

    def make_control(self, control, description):
        if control.kind == "schemes":
            return SchemeButtons(self.schemes, self.values["schemes"])
        return super().make_control(control, description)

    def control_size(self, control, description):
        if control.name == "method":
            return "190px", "58px"
        if control.name == "factor":
            px = label_px(description)
            return ("130px" if px <= 50 else f"{80 + px}px"), f"{max(50, px)}px"
        return None  # the scheme buttons size themselves

    def check(self, v):
        """The schemes: known ones, in the order of the buttons."""
        unknown = set(v["schemes"]) - set(self.schemes)
        if unknown:
            raise ValueError(
                f"schemes must be among {tuple(self.schemes)}, got {sorted(unknown)}"
            )
        v["schemes"] = tuple(name for name in self.schemes if name in v["schemes"])

    # ------------------------------------------------------------------ numbers
    def _summary(self, scheme: str) -> dict:
        return self.results["lm"][scheme]["summary"]

    def _scaled_summary(self, method: str, factor: str) -> dict:
        return self.results["rope_scaling"][method][factor]["summary"]

    def compute(self, v):
        """What the picture shows: the chosen schemes, the dashed line's mean losses."""
        s = self._scaled_summary(v["method"], v["factor"])
        return {
            "schemes": v["schemes"],
            "method": v["method"],
            "factor": v["factor"],
            "scaled": [s[str(n)]["mean"] for n in self.lengths],
        }

    # ------------------------------------------------------------------ drawing
    def build(self, figure):
        ax = figure.add_axes((0.095, 0.17, 0.655, 0.72))
        # one y range for every number the widget can show: no axis ever moves
        values = []
        for scheme in self.schemes:
            for entry in self._summary(scheme).values():
                values += [entry["min"], entry["max"]]
        for by_factor in self.results["rope_scaling"].values():
            for scaled in by_factor.values():
                values += [e["mean"] for e in scaled["summary"].values()]
        low, high = float(np.min(values)), float(np.max(values))
        pad = 0.08 * (high - low or 1.0)
        ax.set_ylim(low - pad, high + pad)
        ax.axvline(self.L, color="k", ls=":", lw=1, zorder=1)
        ax.set_xscale("log", base=2)
        ax.set_xlim(self.lengths[0] / 1.25, self.lengths[-1] * 1.25)
        ax.set_xticks(self.lengths, [str(n) for n in self.lengths])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel(
            _fig("evaluation window (tokens); dotted: L = {L}").format(L=self.L)
        )
        ax.set_ylabel(_fig("mean loss (nats)"))
        self.ax = ax
        self._build_curves(ax)
        # bands under lines, the dashed line on top, then the title: a full draw's order
        return [*self.bands.values(), *self.lines.values(), self.scaled, self.title]

    def _build_curves(self, ax) -> None:
        self.lines, self.bands = {}, {}
        for scheme in self.schemes:
            s = self._summary(scheme)
            self.bands[scheme] = ax.fill_between(
                self.lengths,
                [s[str(n)]["min"] for n in self.lengths],
                [s[str(n)]["max"] for n in self.lengths],
                color=COLORS[scheme],
                alpha=0.2,
                lw=0,
            )
            (self.lines[scheme],) = ax.plot(
                self.lengths,
                [s[str(n)]["mean"] for n in self.lengths],
                "o-",
                color=COLORS[scheme],
            )
        (self.scaled,) = ax.plot(self.lengths, self.lengths, "s--", color="k", lw=1.4)
        self.title = ax.set_title(" ")
        # the key, right of the axes (static: the scheme buttons say what is shown)
        keys = [
            Line2D([], [], color=COLORS[c], marker="o", label=_fig(LABELS[c]))
            for c in self.schemes
        ]
        keys.append(
            Line2D([], [], color="k", ls="--", marker="s", label=_fig("RoPE scaled"))
        )
        self.figure.legend(
            handles=keys,
            loc="upper left",
            bbox_to_anchor=(0.765, 0.9),
            handlelength=1.6,
        )

    def draw(self, s):
        for scheme in self.schemes:
            shown = scheme in s["schemes"]
            self.lines[scheme].set_visible(shown)
            self.bands[scheme].set_visible(shown)
        self.scaled.set_ydata(s["scaled"])
        self.title.set_text(
            _fig("dashed: {method}, zero-shot").format(
                method=self._method_label(s, _fig)
            )
        )

    def _method_label(self, s: dict, translate=_) -> str:
        """The dashed line's name; translate: `_` for the readout, `_fig` for the
        figure."""
        if s["method"] == "default":
            return translate(N_("RoPE, no scaling"))
        return f"RoPE + {s['method']} ×{s['factor']}"

    def readout_text(self) -> str:
        """Two lines: the dashed line at L and at the longest window; every shown scheme
        at the longest window."""
        s = self.state
        first, last = self.lengths[0], self.lengths[-1]
        label = self._method_label(s)
        if s["method"] == "default":
            label = _("{label} (factor ×{factor} unused)").format(
                label=label, factor=s["factor"]
            )
        line1 = _(
            "{label}: {first_loss:.2f} at {first} tokens, {last_loss:.2f} at {last}"
        ).format(
            label=label,
            first_loss=s["scaled"][0],
            first=first,
            last_loss=s["scaled"][-1],
            last=last,
        )
        shown = [
            f"{_(LABELS[c])} {self._summary(c)[str(last)]['mean']:.2f}"
            for c in s["schemes"]
        ]
        line2 = _("at {last}: {shown}").format(
            last=last,
            shown=" · ".join(shown)
            if shown
            else _("no scheme shown (click a scheme button)"),
        )
        return f"{line1}<br>{line2}"


def _results() -> dict:
    from ..exercises.lab import load_results

    return load_results()


def _steps() -> list[dict]:
    """20 updates like a learner's session: every scheme button on and off, every
    method, factors 2 and 4 (in every run of the lab, also a --quick one)."""
    m = moves(
        ("schemes", ("rope",), ("rope", "alibi")), ("method", "linear"), ("factor", "2"),
        ("method", "ntk", "dynamic"), ("factor", "4"), ("method", "llama3", "default"),
        ("schemes", ("none", "alibi"), ()),
    )  # fmt: skip
    m += [{"method": "yarn", "factor": "2"}]
    every = ("none", "sinusoidal", "learned", "rope", "alibi")
    m += moves(
        ("schemes", ("sinusoidal",), ("sinusoidal", "learned"), every),
        ("factor", "4"), ("method", "linear"), ("schemes", ("learned", "rope")),
        ("method", "yarn"), ("schemes", ("rope", "alibi", "sinusoidal")),
    )  # fmt: skip
    start = dict(schemes=("rope", "alibi", "sinusoidal"), method="yarn", factor="4")
    return cumulative_steps(start, m)


def _explorer() -> LabResultsWidget:
    """The widget as the lesson builds it, on the results the lesson reads."""
    return LabResultsWidget(
        _results(), schemes=("rope", "alibi", "sinusoidal"), method="yarn"
    )


WIDGETS = {"lab_results": (_explorer, _steps())}


def thumbnail() -> Figure:
    """The lab in one picture: mean loss against evaluation window, trained at L."""
    results = _results()
    config = results["config"]
    lengths = config["eval_lengths"]
    figure = Figure(figsize=(4.0, 2.5), dpi=80)
    ax = figure.subplots()
    for scheme in config["schemes"]:
        s = results["lm"][scheme]["summary"]
        ax.plot(
            lengths,
            [s[str(n)]["mean"] for n in lengths],
            "o-",
            color=COLORS[scheme],
            label=_fig(LABELS[scheme]),
            ms=3,
            lw=1.4,
        )
    ax.axvline(config["train_length"], color="k", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(n) for n in lengths])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(_fig("evaluation window (tokens)"), fontsize=8)
    ax.set_ylabel(_fig("mean loss"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, ncol=2, loc="upper left", frameon=False)
    figure.suptitle(_fig("train at L, test at 8L"), fontsize=10)
    figure.subplots_adjust(left=0.14, right=0.97, bottom=0.2, top=0.84)
    return figure
