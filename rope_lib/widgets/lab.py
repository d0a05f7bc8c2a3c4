"""The extrapolation lab's results explorer: one model at a time, by window length.

    LabResultsWidget(results, model="rope", seed="all")

results is the dict of results.json (rope_lib.lab.results.load_results() reads the
folder the lesson reads; rope_lib.lab.summary reads it). The controls:
  model   a scheme's model trained at L (NoPE, sinusoidal, learned, RoPE, ALiBi), or the
          RoPE model extended zero-shot by a method at the matched factor s = n / L (PI,
          NTK, dynamic NTK, YaRN, Llama 3; at L itself s = 1: the plain RoPE model);
  seed    "all" (every seed a thin line, the text loss's mean a thick one) or one seed
          (drawn bold, the others faint).
The figure: the text loss by window length against the source's yardsticks (left), the
passkey accuracy by length, each seed a line (right). The readout: the passkey accuracy
at each length as the median seed and the range over the random seeds, "median [lowest-highest]"
(summary.spread; a threshold count would hide the graded values between), and the text
loss at the longest window (8L) against the entropy rate; with one seed chosen, that
seed's own passkey accuracies and text loss.

Every artist is created once; update() moves them and the base (LiveWidget) redraws by
blitting: both y ranges hold every number of the results, so no axis ever moves.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from ..lab import summary
from ..lab.figures import COLORS, LABELS
from ..lab.results import load_results
from ..language import N_, _, _fig
from .base import TIGHT_LINES, Control, LiveWidget

ALL = "all"
"""The seed control's value for every seed at once."""
#: The yardsticks drawn in the text panel (summary.yardsticks keys), grey, with a short
#: name and a line style.
YARDSTICKS = {
    "entropy_rate": (N_("entropy rate"), "-"),
    "current_word": (N_("current word only"), "--"),
    "unigram": (N_("word frequencies"), "-."),
    "uniform": (N_("uniform"), ":"),
}
FAINT = "#c8c8c8"


def model_label(name: str, translate=_) -> str:
    """How the model control and the figure name a model: a scheme's label, or
    "RoPE + <method>" for a zero-shot extension."""
    if name in ("none", "sinusoidal", "learned", "rope", "alibi"):
        return translate(LABELS[name])
    return f"RoPE + {translate(LABELS.get(name, name))}"


class LabResultsWidget(LiveWidget):
    """Text loss and passkey accuracy by window length of one model (a scheme, or RoPE
    extended zero-shot by a method), every seed or one."""

    ROWS = (("model", "seed"),)
    BESIDE, READOUT = "below", TIGHT_LINES
    FIGSIZE = (6.4, 2.85)
    SWEPT = ("model", "seed")

    @classmethod
    def example(cls):
        """The widget on the results the lesson reads."""
        return cls(load_results())

    def __init__(self, results: dict, model: str = "rope", seed=ALL):
        self.results = results
        config = results["config"]
        self.L = config["train_length"]
        self.lengths = list(config["lengths"])
        self.seeds = summary.seeds(results)
        self.schemes = list(config["schemes"])
        self.methods = list(config["methods"])
        self.CONTROLS = (
            Control("model", N_("model"), "choice",
                    options=tuple(self.schemes + self.methods),
                    option_label=model_label, convert=str, width="250px",
                    label_width="48px"),
            Control("seed", N_("seed"), "choice", options=(ALL, *self.seeds),
                    option_label=self._seed_label, convert=str, width="190px",
                    label_width="60px"),
        )  # fmt: skip
        self._table = self._numbers()
        super().__init__(model=model, seed=seed)

    @staticmethod
    def _seed_label(seed: str) -> str:
        return _("all seeds") if seed == ALL else seed

    # ------------------------------------------------------------------ numbers
    def _per_seed(self, model: str, n: int) -> tuple[dict, dict]:
        """({seed: text loss}, {seed: passkey accuracy}) of a model at length n; a
        method at L is plain RoPE (s = 1)."""
        if model in self.schemes:
            scheme, method = model, None
        else:
            scheme, method = "rope", (model if n > self.L else None)
        return (
            summary.text_loss(self.results, scheme, n, method),
            summary.passkey(self.results, scheme, n, method),
        )

    def _numbers(self) -> dict:
        """Every model's per-seed numbers, once: {model: (text [seed][length], passkey
        [seed][length])} as arrays in the order of self.seeds and self.lengths."""
        table = {}
        for model in self.schemes + self.methods:
            pairs = [self._per_seed(model, n) for n in self.lengths]
            text = np.array([[p[0][s] for p in pairs] for s in self.seeds], float)
            key = np.array([[p[1][s] for p in pairs] for s in self.seeds], float)
            table[model] = (text, key)
        return table

    def compute(self, v):
        """The chosen model's numbers: per seed and length, the passkey accuracy's
        (median, lowest, highest) over the random seeds at each length, and the text loss at the
        longest window (the mean, or the seed's)."""
        text, key = self._table[v["model"]]
        last = self.lengths[-1]
        chosen = None if v["seed"] == ALL else self.seeds.index(v["seed"])
        return {
            "model": v["model"],
            "seed": v["seed"],
            "chosen": chosen,
            "text": text,
            "passkey": key,
            "text_mean": text.mean(axis=0),
            "spread": [
                summary.spread(dict(zip(self.seeds, column))) for column in key.T
            ],
            "last": last,
            "text_last": float(
                text[:, -1].mean() if chosen is None else text[chosen, -1]
            ),
            "text_range": (float(text[:, -1].min()), float(text[:, -1].max())),
            "entropy_rate": summary.yardsticks(self.results, last)["entropy_rate"],
        }

    # ------------------------------------------------------------------ drawing
    def build(self, figure):
        ax_text = figure.add_axes((0.085, 0.16, 0.40, 0.72))
        ax_key = figure.add_axes((0.585, 0.16, 0.40, 0.72))
        self.ax_text, self.ax_key = ax_text, ax_key
        for ax in (ax_text, ax_key):
            ax.axvline(self.L, color="k", ls=":", lw=1, zorder=1)
            ax.set_xscale("log", base=2)
            ax.set_xlim(self.lengths[0] / 1.2, self.lengths[-1] * 1.2)
            ax.set_xticks(self.lengths, [str(n) for n in self.lengths])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.tick_params(labelsize=9)
            ax.set_xlabel(_fig("window (tokens)"), fontsize=10)
        # the yardsticks (static) and one y range for every number the widget shows
        values = [t for text, _key in self._table.values() for t in text.flat]
        for key, (label, style) in YARDSTICKS.items():
            y = [summary.yardsticks(self.results, n)[key] for n in self.lengths]
            values += y
            ax_text.plot(self.lengths, y, style, color="0.6", lw=1, label=_fig(label))
        low, high = float(np.min(values)), float(np.max(values))
        bottom = low - 0.06 * (high - low or 1.0)
        # the top fifth holds the yardsticks' key, above every number
        ax_text.set_ylim(bottom, bottom + (high - bottom) / 0.8)
        ax_text.set_ylabel(_fig("text loss (nats)"), fontsize=10)
        ax_text.legend(
            loc="upper left",
            fontsize=7.5,
            ncol=2,
            frameon=False,
            handlelength=1.8,
            columnspacing=0.8,
            labelspacing=0.3,
            borderaxespad=0.2,
        )
        ax_key.set_ylim(-0.05, 1.05)
        ax_key.set_ylabel(_fig("passkey accuracy"), fontsize=10)
        ax_key.set_title(_fig("each seed a line"), fontsize=9)
        # the moving artists: a line per seed in each panel, the mean text loss, a title
        nothing = [np.nan] * len(self.lengths)
        self.text_lines, self.key_lines = [], []
        for ax, lines in ((ax_text, self.text_lines), (ax_key, self.key_lines)):
            for _seed in self.seeds:
                (line,) = ax.plot(self.lengths, nothing, "o-", ms=3, lw=1)
                lines.append(line)
        (self.mean_line,) = ax_text.plot(self.lengths, nothing, "-", lw=2.6)
        self.title = ax_text.set_title(" ", fontsize=10, loc="left")
        return [*self.text_lines, *self.key_lines, self.mean_line, self.title]

    def draw(self, s):
        color = COLORS.get(s["model"], "#444444")
        lines = zip(self.text_lines, self.key_lines, s["text"], s["passkey"])
        for i, (text_line, key_line, text, key) in enumerate(lines):
            text_line.set_ydata(text)
            key_line.set_ydata(key)
            if s["chosen"] is None:
                style = dict(color=color, alpha=0.55, lw=1.0, ms=3, zorder=2)
            elif i == s["chosen"]:
                style = dict(color=color, alpha=1.0, lw=2.2, ms=4.5, zorder=3)
            else:
                style = dict(color=FAINT, alpha=0.7, lw=0.8, ms=2, zorder=2)
            for line in (text_line, key_line):
                line.set(**style)
        self.mean_line.set_ydata(s["text_mean"])
        self.mean_line.set_color(color)
        self.mean_line.set_visible(s["chosen"] is None)
        # drawn in zorder, as a full draw would: the chosen seed on top
        self.redraw.moving = sorted(
            self._moving, key=lambda artist: artist.get_zorder()
        )
        name = model_label(s["model"], _fig)
        if s["chosen"] is None:
            title = _fig("{model}, {n} seeds").format(model=name, n=len(self.seeds))
        else:
            title = _fig("{model}, seed {seed}").format(model=name, seed=s["seed"])
        self.title.set_text(title)

    @property
    def _moving(self) -> list:
        return [*self.text_lines, *self.key_lines, self.mean_line, self.title]

    def readout_text(self) -> str:
        """Two lines. First the passkey accuracy over the random seeds at each length, in the
        order of the lengths (the figure's ticks): "median [lowest-highest]", e.g.
        "passkey: 1.00 [0.99-1.00] · 0.76 [0.50-0.85] · ..." (the
        lengths are left to the ticks: with them the line would not fit the readout's
        640 px). Then the text loss at the longest window against the entropy rate: the
        mean and range over the random seeds, or, with one seed chosen, that seed's passkey
        accuracies and text loss."""
        s = self.state
        n = len(self.seeds)
        spreads = " · ".join(
            f"{median:.2f} [{low:.2f}-{high:.2f}]" for median, low, high in s["spread"]
        )
        line1 = _("passkey: {spreads}").format(spreads=spreads)
        if s["chosen"] is None:
            low, high = s["text_range"]
            line2 = _(
                "text loss at {last}: {loss:.2f} (mean of {n} seeds, {low:.2f} to "
                "{high:.2f}); entropy rate {entropy:.2f}"
            ).format(
                last=s["last"],
                loss=s["text_last"],
                n=n,
                low=low,
                high=high,
                entropy=s["entropy_rate"],
            )
        else:
            accuracies = " · ".join(f"{a:.2f}" for a in s["passkey"][s["chosen"]])
            line2 = _(
                "seed {seed}: passkey {accuracies}; text loss at {last}: {loss:.2f} "
                "(entropy rate {entropy:.2f})"
            ).format(
                seed=s["seed"],
                accuracies=accuracies,
                last=s["last"],
                loss=s["text_last"],
                entropy=s["entropy_rate"],
            )
        return f"{line1}<br>{line2}"


__all__ = ["ALL", "LabResultsWidget", "model_label"]
