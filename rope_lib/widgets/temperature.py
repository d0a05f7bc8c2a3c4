"""Lesson 10's temperature widget: one query's attention over n keys, and its entropy.

The query's n logits are sigma * z_j with z_j fixed N(0, 1) draws
(rope_lib.attention_entropy.gaussian_logits: random q and k give Gaussian logits), then
multiplied by the logit multiplier 1/t (YaRN's temperature: 1/t > 1 sharpens). Two panels:
- the attention weights p_j = softmax(logits)_j sorted from the largest down, against the
  uniform 1/n;
- the entropy H = -sum_j p_j ln p_j against n, at the spread sigma / t, beside ln n
  (uniform weights), ln n - (sigma / t)^2 / 2 (the large-n formula) and the entropy at
  1/t = 1 (faint), the chosen n marked.
All numbers come from rope_lib.attention_entropy; the lesson's still figures are in
rope_lib.figures.temperature.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..attention_entropy import gaussian_logits, softmax_entropy
from ..language import N_, _, _fig
from .base import TIGHT_LINES, Control, LiveWidget, plain_text

KEYS = tuple(2**k for k in range(4, 15))  # 16 .. 16384
# fixed axes that hold every setting: moving a slider redraws only the moving artists
RANK_LIMITS = (0.8, 2.0e4)
WEIGHT_LIMITS = (1e-7, 1.5)
ENTROPY_LIMITS = (0.0, 10.2)


def _spread(values: dict) -> float:
    """The logits' standard deviation after the multiplier: sigma / t."""
    return float(values["sigma"]) * float(values["multiplier"])


class TemperatureWidget(LiveWidget):
    """Controls: "n" (keys), "multiplier" (1/t), "sigma" (the logits' spread)."""

    CONTROLS = (
        Control("n", N_("keys n"), "select", options=KEYS, default=1024),
        Control("multiplier", "1/t", "float", 0.5, 2.5, 0.05, default=1.0),
        Control("sigma", "σ", "float", 0.5, 3.0, 0.25, default=1.5),
    )
    ROWS = (("n", "multiplier"), ("sigma",))
    CONTROL_SIZE = ("300px", "58px")
    READOUT = TIGHT_LINES
    FIGSIZE = (6.4, 2.5)
    SWEPT = ("n", "multiplier", "sigma")

    # --- figure, built once ---------------------------------------------------------------
    def build(self, fig):
        self.ax_weights, self.ax_entropy = fig.subplots(
            1, 2, gridspec_kw=dict(left=0.11, right=0.98, bottom=0.18, top=0.88,
                                   wspace=0.32)
        )  # fmt: skip
        ax = self.ax_weights
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(*RANK_LIMITS)
        ax.set_ylim(*WEIGHT_LIMITS)
        ax.set_title(_fig("weights, largest first"))
        ax.set_xlabel(_fig("key rank"))
        (self.weights,) = ax.plot([], [], color="#d62728", lw=1.8)
        self.uniform = ax.axhline(1.0, color="0.4", lw=1, ls="--", label="1/n")
        ax.legend(loc="upper right", frameon=False, fontsize=10)

        ax = self.ax_entropy
        ax.set_xscale("log", base=2)
        ax.set_xlim(KEYS[0] / 1.3, KEYS[-1] * 1.3)
        ax.set_ylim(*ENTROPY_LIMITS)
        ax.set_xticks([16, 256, 4096])
        ax.set_xticklabels(["16", "256", "4096"])
        ax.set_title(_fig("entropy (nats)"))
        ax.set_xlabel(_fig("keys n"))
        n = np.array(KEYS, dtype=float)
        ax.plot(n, np.log(n), color="0.4", lw=1, ls="--", label="ln n")
        (self.formula,) = ax.plot([], [], color="#1f77b4", lw=1, ls=":",
                                  label="ln n − (σ/t)²/2")  # fmt: skip
        (self.plain,) = ax.plot([], [], color="#d62728", lw=1, alpha=0.45,
                                label=_fig("entropy at 1/t = 1"))  # fmt: skip
        (self.curve,) = ax.plot([], [], color="#d62728", lw=1.8, label=_fig("entropy"))
        (self.point,) = ax.plot([], [], "o", color="#d62728", ms=7)
        ax.legend(loc="upper left", frameon=False, fontsize=10)
        self.logits = gaussian_logits(KEYS[-1])
        moving = [self.weights, self.uniform, self.formula, self.plain, self.curve]
        return moving + [self.point]

    # --- the numbers ------------------------------------------------------------------------
    def compute(self, v):
        spread = _spread(v)
        n = int(v["n"])
        # the entropy at every n of the slider, at this spread and at 1/t = 1
        curve = [float(softmax_entropy(spread * self.logits[:k])) for k in KEYS]
        sigma = float(v["sigma"])
        plain = [float(softmax_entropy(sigma * self.logits[:k])) for k in KEYS]
        p = torch.softmax(spread * self.logits[:n], 0)
        return {
            "n": n,
            "spread": spread,
            "entropy": curve[KEYS.index(n)],
            "curve": np.array(curve),
            "plain": np.array(plain),
            "weights": torch.sort(p, descending=True).values.numpy(),
            "uniform": math.log(n),
            "formula": math.log(n) - spread**2 / 2,
            "top": float(p.max()),
        }

    # --- drawing: change the artists in place -----------------------------------------------
    def draw(self, st):
        n = st["n"]
        self.weights.set_data(np.arange(1, n + 1), np.maximum(st["weights"], 1e-12))
        self.uniform.set_ydata([1 / n, 1 / n])
        keys = np.array(KEYS, dtype=float)
        formula = np.log(keys) - st["spread"] ** 2 / 2
        shown = formula > 0  # at or below 0 the formula is no estimate
        self.formula.set_data(keys[shown], formula[shown])
        self.plain.set_data(keys, st["plain"])
        self.curve.set_data(keys, st["curve"])
        self.point.set_data([n], [st["entropy"]])

    # --- the readout ------------------------------------------------------------------------
    def readout_text(self) -> str:
        st = self.state
        formula = (
            f"{st['formula']:.2f}"
            if st["formula"] > 0
            else _("no estimate (σ/t too large)")
        )
        line1 = _(
            "n = {n}, logits &times; {multiplier:.2f} (t = {t:.2f}): spread "
            "σ/t = {spread:.2f}; largest weight {top:.3f}"
        ).format(
            n=st["n"],
            multiplier=float(self.values["multiplier"]),
            t=1 / float(self.values["multiplier"]),
            spread=st["spread"],
            top=st["top"],
        )
        line2 = _(
            "entropy H = {entropy:.2f} nats; ln n = {uniform:.2f}; "
            "ln n &minus; (σ/t)&sup2;/2 = {formula}"
        ).format(entropy=st["entropy"], uniform=st["uniform"], formula=formula)
        return f"{line1}<br>{line2}"

    def readout_line(self) -> str:
        """The readout as one plain-text line (for print and tests)."""
        # TRANSLATORS: joins the readout's two lines into one; keep a plain space in it: a
        # lesson wraps this line with textwrap, which breaks only at plain spaces, so a
        # translation whose lines are wide (Chinese) writes no-break spaces inside them
        return plain_text(self.readout_text()).replace("\n", _("; "))


__all__ = ["KEYS", "TemperatureWidget"]
