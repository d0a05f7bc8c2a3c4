"""The extrapolation lab's results explorer: choose schemes, a RoPE scaling method and a
factor; see mean loss against evaluation length (with the min..max over seeds).

    LabResultsWidget(results)       results: the dict of results.json

The lines are created once; update() changes their data and visibility, then redraws.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..lab.figures import COLORS, LABELS
from . import redraw


class LabResultsWidget:
    def __init__(
        self, results: dict, schemes=("rope", "alibi"), method="yarn", factor=None
    ):
        self.results = results
        config = results["config"]
        self.lengths = config["eval_lengths"]
        factor = str(factor or config["finetune"]["factor"])
        with plt.ioff():
            self.figure, self.ax = plt.subplots(figsize=(6.4, 3.4), dpi=80)
        if hasattr(self.figure.canvas, "header_visible"):
            self.figure.canvas.header_visible = False
        self.lines, self.bands = {}, {}
        for scheme in config["schemes"]:
            s = results["lm"][scheme]["summary"]
            (self.lines[scheme],) = self.ax.plot(
                self.lengths,
                [s[str(n)]["mean"] for n in self.lengths],
                "o-",
                color=COLORS[scheme],
                label=LABELS[scheme],
            )
            self.bands[scheme] = self.ax.fill_between(
                self.lengths,
                [s[str(n)]["min"] for n in self.lengths],
                [s[str(n)]["max"] for n in self.lengths],
                color=COLORS[scheme],
                alpha=0.2,
                lw=0,
            )
        (self.scaled,) = self.ax.plot(self.lengths, self.lengths, "s--", color="k")
        self.ax.axvline(config["train_length"], color="k", ls=":", lw=1)
        self.ax.set_xscale("log", base=2)
        self.ax.set_xticks(self.lengths, [str(n) for n in self.lengths])
        self.ax.set_xlabel("evaluation window (tokens)")
        self.ax.set_ylabel("mean loss (nats)")
        self.figure.tight_layout()
        import ipywidgets as w

        self.controls = {
            "schemes": w.SelectMultiple(
                options=config["schemes"],
                value=tuple(schemes),
                description="schemes",
                rows=5,
            ),
            "method": w.Dropdown(
                options=config["methods"], value=method, description="RoPE +"
            ),
            "factor": w.Dropdown(
                options=[str(f) for f in config["factors"]],
                value=factor,
                description="factor",
            ),
        }
        self.readout = w.HTML()
        for control in self.controls.values():
            control.observe(lambda change: self.update(), names="value")
        self.update()

    def update(self, **values) -> None:
        for name, value in values.items():
            self.controls[name].value = value
        chosen = set(self.controls["schemes"].value)
        for scheme, line in self.lines.items():
            line.set_visible(scheme in chosen)
            self.bands[scheme].set_visible(scheme in chosen)
        method, factor = self.controls["method"].value, self.controls["factor"].value
        s = self.results["rope_scaling"][method][factor]["summary"]
        means = [s[str(n)]["mean"] for n in self.lengths]
        self.scaled.set_ydata(means)
        self.scaled.set_label(f"RoPE + {method} x{factor} (0-shot)")
        self.ax.legend(fontsize=8, ncol=2, loc="upper left")
        longest = self.lengths[-1]
        self.readout.value = (
            f"at {longest} tokens: RoPE + {method} x{factor}: {means[-1]:.3f}; "
            + ", ".join(
                f"{LABELS[c]}: {self.results['lm'][c]['summary'][str(longest)]['mean']:.3f}"
                for c in self.controls["schemes"].value
            )
        )
        redraw(self.figure)

    def widget(self):
        import ipywidgets as w

        return w.VBox(
            [
                w.HBox(
                    [
                        self.controls["schemes"],
                        w.VBox([self.controls["method"], self.controls["factor"]]),
                    ]
                ),
                self.readout,
                self.figure.canvas,
            ]
        )

    def __repr__(self) -> str:
        return "LabResultsWidget: " + self.readout.value
