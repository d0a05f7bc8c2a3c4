"""Lessons 9 and 11: still figures drawn from numbers the lesson computes.

coverage_figure (the share of its circle each pair has swept within L and within sL),
ramp_figure (YaRN's ramp as the paper writes it and as the code computes it), and
length_figure (the loss past L, fitted), divisor_figure (lesson 11: what each method divides
each pair's frequency by), and thumbnail() (each pair's wavelength against
L: a full turn within L, or only an arc); the colours of what YaRN does to a pair
(REGIME_COLORS: kept, blended, divided by s), which the live explorer
(rope_lib.widgets.context_extension) draws with.
"""

from __future__ import annotations

import numpy as np

from ..extension_analysis import (
    wavelengths,
)
from ..language import N_, _fig
from ..scaling import rope_frequencies

REGIME_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c")  # kept, blended, divided by s


def thumbnail():
    """Lesson 9 in one picture: each pair's wavelength against L, the pairs that turned a
    full circle within L apart from the slow ones, which past L meet angles never seen."""
    from matplotlib.figure import Figure

    old, _unused = rope_frequencies("default", 128)
    lam = wavelengths(old).numpy()
    slow = lam > 4096
    fig = Figure(figsize=(4, 2.5), dpi=80)
    ax = fig.add_subplot(1, 1, 1)
    pairs = np.arange(64)
    for mask, color, label in (
        (~slow, REGIME_COLORS[0], _fig("a full turn within L")),
        (slow, REGIME_COLORS[2], _fig("only an arc within L")),
    ):
        ax.scatter(pairs[mask], lam[mask], color=color, s=10, label=label)
    ax.axhline(4096, color="black", lw=1)
    ax.text(1, 4096 * 1.4, "L = 4096", fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel(_fig("pair i"), fontsize=8)
    ax.set_ylabel(_fig("wavelength"), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(_fig("The wall: the slow pairs past L"), fontsize=9)
    ax.legend(fontsize=7, loc="lower right", frameon=False)
    fig.tight_layout()
    return fig


def coverage_figure(seen, later, L: int, s: float):
    """The share of its circle each pair has swept within L tokens (blue) and within s*L
    (red: the angles that are new past L), from angle_coverage."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 2.8), dpi=100)
    ax = fig.subplots()
    pairs = np.arange(len(seen))
    label = _fig("covered within {tokens} tokens (new angles in red)")
    ax.bar(pairs, np.asarray(later), color="#d62728",
           label=label.format(tokens=int(s * L)))  # fmt: skip
    ax.bar(pairs, np.asarray(seen), color="#1f77b4",
           label=_fig("covered within L = {L} tokens").format(L=L))  # fmt: skip
    ax.set_xlabel(_fig("pair i"))
    ax.set_ylabel(_fig("fraction of the circle"))
    ax.set_ylim(0, 1.45)
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    ax.set_title(_fig("Fast pairs have seen every angle; slow pairs only an arc"))
    fig.tight_layout()
    return fig


def ramp_figure(paper_gamma, code_gamma, low: int, high: int):
    """YaRN's ramp gamma_i (the share of its frequency pair i keeps) as the paper writes it
    (linear in the turns r = L/lambda) and as the code computes it (linear in the pair
    index), with the correction range low..high shaded."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 2.6), dpi=100)
    ax = fig.subplots()
    pairs = np.arange(len(paper_gamma))
    ax.plot(pairs, np.asarray(paper_gamma), label=_fig("paper: linear in r = L/lambda"))
    ax.plot(pairs, np.asarray(code_gamma), "--",
            label=_fig("code: linear in the pair index"))  # fmt: skip
    label = _fig("correction range {low}..{high}").format(low=low, high=high)
    ax.axvspan(low, high, color="orange", alpha=0.15, label=label)
    ax.set_xlabel(_fig("pair i"))
    ax.set_ylabel(_fig("gamma (fraction kept)"))
    ax.legend()
    fig.tight_layout()
    return fig


FORM_STYLES = {
    "exponential": ("#d62728", "-"),
    "power": ("#9467bd", "--"),
    "logarithmic": ("#8c564b", ":"),
    "linear": ("#7f7f7f", "-."),
}
#: The forms' names in a figure's legend (marked for translation; the keys are code).
FORM_LABELS = {
    "exponential": N_("exponential"),
    "power": N_("power"),
    "logarithmic": N_("logarithmic"),
    "linear": N_("linear"),
}


def length_figure(smollm2: dict, lab: dict, seed: int = 0, wavelengths=()):
    """Plain RoPE's excess loss past L (its loss minus an in-distribution reference that
    never looks further back than L: the zero line) against the length in units of L.
    Left SmolLM2-135M, both stretches of text (dots) and each form of
    attention_entropy.FORMS fitted to their mean (lines); right the lab's model of one
    seed (L = 64), its own fits, and dotted lines at the wavelengths lambda_i / L of its
    slow pairs (`wavelengths`, in tokens) that fall inside the plot. The arguments are
    rope_lib.length_decay.length_study's results."""
    from matplotlib.figure import Figure

    from ..length_decay import curve

    fig = Figure(figsize=(6.4, 3.0), dpi=100)
    axes = fig.subplots(1, 2)
    titles = (
        _fig("SmolLM2-135M, 2 stretches of text"),
        _fig("the lab, seed {seed} (L = 64)").format(seed=seed),
    )
    panels = (
        (smollm2, smollm2["excess"], smollm2["mean_fits"]),
        (lab, lab["excess"][seed : seed + 1],
         {form: fits[seed] for form, fits in lab["fits"].items()}),
    )  # fmt: skip
    for ax, (study, runs, fits), title in zip(axes, panels, titles):
        x = np.asarray(study["x"])
        for run in runs:
            ax.plot(x, run, "o", ms=2.5, color="#1f77b4", alpha=0.7)
        dense = np.linspace(x.min(), x.max(), 200)
        for form, (color, ls) in FORM_STYLES.items():
            ax.plot(dense, curve(fits[form], dense), ls=ls,
                    color=color, lw=1.3, label=_fig(FORM_LABELS[form]))  # fmt: skip
        ax.axhline(0, color="black", lw=1)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(_fig("position / L"))
    top = axes[1].get_ylim()[1]
    for i, wavelength in enumerate(np.asarray(wavelengths, dtype=float)):
        where = wavelength / lab["L"]
        if x.min() <= where <= x.max():
            axes[1].axvline(where, color="#555555", ls=":", lw=1)
            axes[1].text(where, top, rf" $\lambda_{{{i}}}$", fontsize=8, va="top")
    axes[0].set_ylabel(_fig("loss above the reference (nats)"))
    axes[0].text(1.05, 0.25, _fig("reference"), fontsize=8)
    axes[1].legend(fontsize=8, loc="lower right", frameon=False)
    fig.tight_layout()
    return fig


#: What each method is called in divisor_figure's legend, and how it is drawn.
DIVISOR_STYLES = {  # the names alone stay as they are in every language
    "PI": ("#7f7f7f", "-", None),
    "NTK": ("#9467bd", "--", None),
    "YaRN": ("#1f77b4", "-", None),
    "Llama 3": ("#17becf", "-.", N_("Llama 3 (bounds 1 and 4)")),
    "LongRoPE": ("#d62728", ":", N_("LongRoPE (made-up long_factor)")),
}


def divisor_figure(theta, scaled: dict, L: int, s: float):
    """What each method divides pair i's frequency by, theta_i / theta'_i, against the
    pair's wavelength lambda_i = 2 pi / theta_i (Peng et al. 2023, Figure 1's idea): 1 keeps
    the pair, s is Position Interpolation's division. `scaled` maps a DIVISOR_STYLES key to
    the method's new frequencies theta'_i."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.0), dpi=100)
    ax = fig.subplots()
    lam = wavelengths(theta).numpy()
    for name, new in scaled.items():
        color, style, label = DIVISOR_STYLES[name]
        divisor = (theta / new).numpy()
        label = _fig(label) if label else {"NTK": "NTK-aware"}.get(name, name)
        ax.plot(lam, divisor, style, color=color, lw=2, label=label)
    ax.axvline(L, color="black", lw=1)
    ax.text(L * 1.1, 1.05, f"L = {L}", fontsize=8)
    ax.axhline(s, color="black", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel(_fig("wavelength of pair i (tokens)"))
    ax.set_ylabel(_fig("divisor $\\theta_i/\\theta'_i$"))
    ax.set_title(_fig("What each method divides pair i's frequency by"), fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left")
    fig.tight_layout()
    return fig
