"""Lesson 13's still figures: the wavelength of each pair of a real model.

draw_model (one model's curves on an axes, or moved in place: the live widget
rope_lib.widgets.todays_models draws with it), static_figure (one model, finished) and
partial_frequencies_figure (Gemma 4's p-RoPE against GPT-NeoX's partial rotary, pair by
pair: two meanings of "partial"); wavelength_bounds (a model's smallest and largest finite
wavelength).
"""

from __future__ import annotations

import math

import numpy as np

from ..language import _, _fig
from ..models import MODELS, model_curves

CURVE_COLORS = ("#1f77b4", "#d62728")


INF_ROW = 3e9  # where pairs of frequency 0 (infinite wavelength) are drawn


YLIM = (0.7, 1.2e10)


DEFAULT_MODEL = "Gemma 4 26B-A4B"


def draw_model(ax, name: str, lines=None):
    """Draw one model's curves on ax (or move the given artists): returns the artists
    and a short readout. lines: the dict returned by a previous call, to update in
    place."""
    entry = MODELS[name]
    curves = [c for c in model_curves(name) if c["kind"] != "nope"]
    nope = [c for c in model_curves(name) if c["kind"] == "nope"]
    if lines is None:
        lines = {
            "curves": [
                ax.plot([], [], "o-", ms=3, lw=1.2, color=c)[0] for c in CURVE_COLORS
            ],
            "infinite": [ax.plot([], [], "x", ms=5, color=c)[0] for c in CURVE_COLORS],
            "L": ax.axhline(1.0, color="black", lw=1.3),
            "L2": ax.axhline(1.0, color="black", lw=1.0, ls="--"),
        }
    slow, slow_long = [], []
    for k in range(2):
        line, inf_line = lines["curves"][k], lines["infinite"][k]
        if k >= len(curves):
            line.set_data([], [])
            inf_line.set_data([], [])
            line.set_label("_none")
            continue
        c = curves[k]
        x, y = c["x"].numpy(), c["y"].numpy()
        finite = np.isfinite(y)
        line.set_data(x[finite], y[finite])
        inf_line.set_data(x[~finite], np.full((~finite).sum(), INF_ROW))
        line.set_label(c["label"])
        if c["kind"] == "rope":
            slow.append(int((y > entry.trained_length).sum()))
            slow_long.append(int((y > entry.context_length).sum()))
    lines["L"].set_ydata([entry.trained_length] * 2)
    lines["L2"].set_ydata([entry.context_length] * 2)
    return lines, _model_readout(name, curves, nope, slow, slow_long)


def _counts(slow: list) -> str:
    """One count per kind of RoPE layer: "57 and 100", or "32"."""
    if len(slow) == 2:
        return _("{first} and {second}").format(first=slow[0], second=slow[1])
    return " and ".join(str(s) for s in slow)


def _model_readout(
    name: str, curves: list, nope: list, slow: list, slow_long: list
) -> str:
    """The short readout of draw_model: ALiBi's 1/mu_h, or the pairs of the drawn
    (scaled) frequencies slower than L (where the settings start) and than L' (the
    claimed context; for a model trained further with these frequencies, the pairs that
    never finished a turn in training are the ones slower than its last training
    length, not than L)."""
    entry = MODELS[name]
    if curves and curves[0]["kind"] == "alibi":
        return _("{name}: 1/mu_h from {low:.2f} to {high:.1f} tokens; L = {L}").format(
            name=name,
            low=float(curves[0]["y"].min()),
            high=float(curves[0]["y"].max()),
            L=entry.trained_length,
        )
    numbers = dict(
        name=name,
        L=entry.trained_length,
        L2=entry.context_length,
        counts=_counts(slow),
        long=_counts(slow_long),
    )
    if nope:
        return _(
            "{name}: L = {L:,}, L' = {L2:,}; pairs slower than L: {counts}, "
            "than L': {long}; NoPE layers: {layers}"
        ).format(layers=nope[0]["layers"], **numbers)
    return _(
        "{name}: L = {L:,}, L' = {L2:,}; pairs slower than L: {counts}, than L': {long}"
    ).format(**numbers)


def style_axes(ax):
    ax.set_yscale("log")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(*YLIM)
    ticks = [1e1, 1e3, 1e5, 1e7, INF_ROW]
    ax.set_yticks(ticks, ["10", "10³", "10⁵", "10⁷", "∞"])
    ax.minorticks_off()
    ax.set_xlabel(_fig("pair i / (d/2)   (ALiBi: head h / H)"))
    ax.set_ylabel(_fig("wavelength (tokens)"))


def static_figure(name: str = DEFAULT_MODEL):
    """A finished figure of one model (for show_png)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    style_axes(ax)
    lines, _readout = draw_model(ax, name)
    ax.set_title(name)
    handles = [h for h in lines["curves"] if h.get_label() != "_none"]
    handles += [lines["L"], lines["L2"]]
    lines["L"].set_label(
        _fig("L = {L:,} (settings start here)").format(L=MODELS[name].trained_length)
    )
    lines["L2"].set_label(
        _fig("L' = {L2:,} (claimed)").format(L2=MODELS[name].context_length)
    )
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=1,
        fontsize=10,
    )
    fig.set_size_inches(6.4, 3.3 + 0.22 * len(handles))
    fig.tight_layout()
    return fig


def _power_of_ten(x: float) -> str:
    """A base written as the lesson writes it: 1e6 for 1,000,000, else as %g."""
    exponent = round(math.log10(x))
    return f"1e{exponent}" if 10.0**exponent == x else f"{x:g}"


def partial_frequencies_figure(proportional, partial, base: float, p: float):
    """Two meanings of "partial" on a head of d = 2 * len(proportional) dimensions, pair
    by pair on a log scale: Gemma 4's p-RoPE (`proportional`: plain RoPE's b^(-2i/d) for
    its first pairs, then frequency 0, drawn as crosses at 1e-9) against GPT-NeoX's
    partial rotary (`partial`: its r/2 frequencies b^(-2i/r))."""
    from matplotlib.figure import Figure

    proportional, partial = np.asarray(proportional), np.asarray(partial)
    d, kept = 2 * len(proportional), int((proportional > 0).sum())
    pairs = np.arange(d // 2)
    fig = Figure(figsize=(6.4, 3.0), dpi=100)
    ax = fig.subplots()
    ax.semilogy(pairs[:kept], proportional[:kept], "o", ms=3,
                label=_fig("proportional (p-RoPE): b^(-2i/d)"))  # fmt: skip
    ax.semilogy(pairs[kept:], np.full(d // 2 - kept, 1e-9), "x", ms=3, color="C0",
                label=_fig("proportional: frequency 0 (drawn at 1e-9)"))  # fmt: skip
    ax.semilogy(np.arange(len(partial)), partial, "s", ms=3,
                label=_fig("GPT-NeoX partial: b^(-2i/r)"))  # fmt: skip
    ax.set_xlabel(_fig("pair i"))
    ax.set_ylabel(_fig("theta_i (rad / token)"))
    title = _fig("d = {d}, b = {b}, p = {p}: two meanings of 'partial'")
    ax.set_title(title.format(d=d, b=_power_of_ten(base), p=p))
    ax.legend(fontsize=9, loc="center right")
    fig.tight_layout()
    return fig


def wavelength_bounds(name: str) -> tuple[float, float]:
    """Smallest and largest finite wavelength of a model (for tests of the fixed y
    range)."""
    values = [
        float(v)
        for c in model_curves(name)
        if c["y"] is not None
        for v in c["y"]
        if math.isfinite(float(v))
    ]
    return min(values), max(values)
