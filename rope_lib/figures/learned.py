"""Lesson 2's still figures, drawn from numbers the lesson computes.

unseen_arcs_figure (slow pairs past the training length land on arcs training never
showed), best_match_figure (how close PE(m) comes to a training position) and
previous_token_figure (a head trained on L positions against the exact one).
"""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.figure import Figure

from ..extension_analysis import wavelengths
from ..language import N_, _fig
from ..rotary import inv_frequencies
from ..sinusoidal import sinusoidal_at


def unseen_arcs_figure(d: int = 16, L: int = 32, pairs=(0, 2, 3, 4), until: int = 8):
    """Pair i of PE(m) as a point on its circle: positions 0 .. L-1 (training, blue) and
    L .. until*L - 1 (orange). Fast pairs go round within L; slow ones only along a short
    arc, and past L they move onto parts of the circle training never showed."""
    angles = np.linspace(0, 2 * np.pi, 200)
    lam = wavelengths(inv_frequencies(d)).double()
    train = sinusoidal_at(torch.arange(L), d).numpy()
    new = sinusoidal_at(torch.arange(L, until * L), d).numpy()
    fig = Figure(figsize=(6.4, 2.6), dpi=100, layout="constrained")
    axes = fig.subplots(1, len(pairs))
    for ax, i in zip(axes, pairs):
        ax.plot(np.cos(angles), np.sin(angles), color="0.85", lw=1)
        cos, sin = 2 * i + 1, 2 * i
        label = _fig("positions {start}..{end}").format(start=L, end=until * L - 1)
        ax.plot(new[:, cos], new[:, sin], ".", color="tab:orange", ms=3, label=label)
        label = _fig("positions 0..{end} (training)").format(end=L - 1)
        ax.plot(train[:, cos], train[:, sin], ".", color="tab:blue", ms=4, label=label)
        title = _fig("pair {i}\nwavelength {wavelength:.0f}")
        ax.set_title(title.format(i=i, wavelength=float(lam[i])))
        ax.set_aspect("equal")
        ax.axis("off")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig


def best_match_figure(best, L: int):
    """best[m]: the best cosine match of PE(m) among the training positions 0 .. L-1."""
    fig = Figure(figsize=(6.4, 2.6), dpi=100, layout="tight")
    ax = fig.subplots()
    ax.plot(np.asarray(best), lw=1)
    ax.axvline(L, color="tab:red", ls="--", lw=1)
    ax.text(L + 5, 0.45, f"L = {L}", color="tab:red")
    ax.set_xlabel(_fig("position m"))
    ax.set_ylabel(_fig("best cosine match"))
    ax.set_title(_fig("how close is PE(m) to some training position?"))
    return fig


def previous_token_figure(m, looks_trained, looks_exact, L: int):
    """The key each query m attends to: the head trained on positions 0 .. L-1 and the
    exact A = M_1, against the target m - 1."""
    m = np.asarray(m)
    fig = Figure(figsize=(6.4, 3), dpi=100, layout="tight")
    ax = fig.subplots()
    ax.plot(m, m - 1, color="0.8", lw=4, label=_fig("target n = m - 1"))
    ax.plot(m, np.asarray(looks_trained), ".", ms=3, color="tab:orange",
            label=_fig("trained A"))  # fmt: skip
    ax.plot(m, np.asarray(looks_exact), ".", ms=1.5, color="tab:blue",
            label=_fig("exact A = M_1"))  # fmt: skip
    ax.axvline(L, color="tab:red", ls="--", lw=1)
    ax.set_xlabel(_fig("query position m"))
    ax.set_ylabel(_fig("key n it attends to"))
    ax.legend()
    return fig


#: Titles of learned_rows_figure's rows, by the task of train_position_head.
TASK_TITLES = {
    "previous": N_("task: the previous token"),
    "recent": N_("task: the recent past"),
}


def learned_rows_figure(similarities: dict, components: dict):
    """What a learned position table learns, one row per task: left, the cosine similarity
    of rows m and n (similarities[task], [L, L]); right, the first two principal components
    of the rows against the position (components[task], [L, >= 2])."""
    fig = Figure(figsize=(6.4, 4.6), dpi=100, layout="constrained")
    axes = fig.subplots(len(similarities), 2, width_ratios=[1, 1.6])
    for row, task in zip(axes, similarities):
        image = row[0].imshow(
            np.asarray(similarities[task]), cmap="RdBu_r", vmin=-1, vmax=1
        )
        row[0].set_title(_fig(TASK_TITLES[task]), fontsize=10)
        row[0].set_ylabel(_fig("position m"))
        pcs = np.asarray(components[task])
        for k, color in ((0, "tab:blue"), (1, "tab:orange")):
            row[1].plot(pcs[:, k], ".-", lw=1, ms=3, color=color,
                        label=_fig("component {k}").format(k=k + 1))  # fmt: skip
        row[1].axhline(0, color="0.7", lw=0.8)
        row[1].set_ylabel(_fig("value"))
    axes[-1][0].set_xlabel(_fig("position n"))
    axes[-1][1].set_xlabel(_fig("position m"))
    axes[-1][1].legend(fontsize=8, loc="upper left")
    fig.colorbar(image, ax=axes, shrink=0.6, label=_fig("cosine"))
    return fig
