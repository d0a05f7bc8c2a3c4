"""The ALiBi lesson's still figures, each drawn from numbers the lesson computes.

one_query_figure (content scores, the bias line and the attention of one query),
slopes_figure (log2 of the slopes for several head counts), bias_matrices_figure (every
head's causal bias on one colour scale), symmetric_bias_figure (the encoder's -mu_h |m - n|),
reach_figure (a query's weight on the key Delta back, and its cumulative reach),
decay_comparison_figure (RoPE's long-term decay bound against ALiBi's exp(-mu_h Delta)),
attention_maps_figure (the attention maps of a freshly initialised ALiBi block), and
thumbnail() (the 8 geometric slopes and where each head's attention goes).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.figure import Figure

from ..alibi import alibi_query_attention, alibi_slopes
from ..language import _fig
from .style import integer_ticks, legend_below


def thumbnail() -> Figure:
    """The ALiBi lesson in one picture: the 8 geometric slopes and where each head's attention goes."""
    figure = Figure(figsize=(4.0, 2.5), dpi=80)
    ax_slopes, ax_attn = figure.subplots(1, 2, gridspec_kw={"width_ratios": (1, 1.4)})
    slopes = alibi_slopes(8)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, 8))
    ax_slopes.bar(np.arange(1, 9), slopes.numpy(), color=colors)
    ax_slopes.set_yscale("log", base=2)
    ax_slopes.set_title(_fig("slopes $2^{-h}$"), fontsize=9)
    ax_slopes.set_xlabel(_fig("head"), fontsize=8)
    ax_slopes.set_xticks([1, 4, 8])
    n = 64
    weights = alibi_query_attention(torch.zeros(8, n), slopes, n - 1)
    for h in range(8):
        ax_attn.plot(np.arange(n), weights[h].numpy(), color=colors[h], lw=1.2)
    ax_attn.set_yscale("log")
    ax_attn.set_ylim(1e-4, 1.0)
    ax_attn.set_title(_fig("query {query}: attention").format(query=n - 1), fontsize=9)
    ax_attn.set_xlabel(_fig("key n"), fontsize=8)
    for ax in (ax_slopes, ax_attn):
        ax.tick_params(labelsize=7)
    figure.suptitle(_fig("ALiBi: a distance penalty per head"), fontsize=10)
    figure.subplots_adjust(left=0.12, right=0.97, bottom=0.18, top=0.78, wspace=0.35)
    return figure


def _inverse(slope) -> str:
    """A slope 2^-k written as 1/2^k, as the lesson's titles write it."""
    return f"1/{round(1 / float(slope))}"


def _head_colors(n_heads: int = 8):
    return plt.get_cmap("viridis")(np.linspace(0, 0.9, n_heads))


def one_query_figure(
    content, bias_row, without, with_alibi, m: int, mu: float
) -> Figure:
    """One query m of one head with slope mu: its content scores q_m . k_n / sqrt(d)
    (left), the bias -mu (m - n) (middle), and the softmax with the bias (red) against the
    softmax of the content alone (gray bars, right)."""
    fig = Figure(figsize=(6.4, 3.0), dpi=100, layout="constrained")
    axes = fig.subplots(1, 3)
    n = np.arange(len(content))
    axes[0].bar(n, np.asarray(content), color="tab:blue")
    axes[0].set_title(_fig("content q·k/√d"))
    axes[1].bar(n, np.asarray(bias_row), color="tab:purple")
    axes[1].set_title(_fig("bias, μ = {mu}").format(mu=mu))
    axes[2].bar(n, np.asarray(without), color="0.75", label=_fig("content only"))
    axes[2].plot(n, np.asarray(with_alibi), "o-", color="tab:red", ms=3,
                 label=_fig("content + bias"))  # fmt: skip
    axes[2].set_title(_fig("attention, m = {m}").format(m=m))
    fig.legend(
        *axes[2].get_legend_handles_labels(), loc="outside lower center", ncols=2
    )
    for ax in axes:
        ax.set_xlabel(_fig("key n"))
        integer_ticks(ax.xaxis)
    return fig


def slopes_figure(head_counts=(8, 12, 16)) -> Figure:
    """log2 of alibi_slopes(H) against the head h, one line per head count: a power of two
    gives a straight line; 12 heads take the 8-head slopes and 4 of the 16-head ones."""
    fig = Figure(figsize=(6.4, 2.8), dpi=100)
    ax = fig.subplots()
    for H, marker, size in zip(head_counts, ("o", "s", "^"), (10, 5, 5)):
        ax.plot(np.arange(1, H + 1), np.log2(alibi_slopes(H).numpy()), marker=marker,
                ms=size, mfc="none" if H == head_counts[0] else None, ls="-", lw=0.8,
                label=_fig("{H} heads").format(H=H))  # fmt: skip
    ax.set_xlabel(_fig("head h"))
    ax.set_ylabel(_fig("log2(slope μ_h)"))
    ax.set_title(_fig("12 heads = the 8-head slopes + 4 of the 16-head ones"))
    ax.legend(frameon=False)
    integer_ticks(ax.xaxis)
    fig.tight_layout()
    return fig


def bias_matrices_figure(bias) -> Figure:
    """Every head's causal bias matrix ([heads, L, L], alibi_bias) on one colour scale, the
    masked future (-inf) in gray; 8 heads in two rows of four."""
    bias = np.asarray(bias)
    heads, L = bias.shape[0], bias.shape[-1]
    cmap = plt.get_cmap("viridis").with_extremes(bad="#d9d9d9")
    slopes = alibi_slopes(heads)
    fig = Figure(figsize=(6.4, 3.8), dpi=100)
    axes = fig.subplots(2, math.ceil(heads / 2))
    for h, ax in enumerate(axes.flat):
        shown = np.where(np.isfinite(bias[h]), bias[h], np.nan)
        image = ax.imshow(shown, cmap=cmap, vmin=-float(slopes[0]) * (L - 1), vmax=0.0,
                          interpolation="nearest")  # fmt: skip
        ax.set_title(f"μ = {_inverse(slopes[h])}")
        ax.set_xticks([0, L - 1])
        ax.set_yticks([0, L - 1])
    fig.colorbar(image, ax=axes, fraction=0.025, label=_fig("bias"))
    fig.supxlabel(_fig("key n"))
    fig.supylabel(_fig("query m"))
    return fig


def symmetric_bias_figure(symmetric, heads=(0, 3, 7)) -> Figure:
    """The encoder's symmetric bias -mu_h |m - n| ([heads, L, L], alibi_bias with
    causal=False) of a few heads, on the colour scale of the steepest head."""
    symmetric = np.asarray(symmetric)
    L = symmetric.shape[-1]
    steepest = float(alibi_slopes(symmetric.shape[0])[0])
    fig = Figure(figsize=(6.4, 2.4), dpi=100)
    axes = fig.subplots(1, len(heads))
    for ax, h in zip(axes, heads):
        image = ax.imshow(symmetric[h], cmap="viridis", vmin=-steepest * (L - 1), vmax=0,
                          interpolation="nearest")  # fmt: skip
        ax.set_title(_fig("head {h}, causal=False").format(h=h + 1))
        ax.set_xlabel(_fig("key n"))
    axes[0].set_ylabel(_fig("query m"))
    fig.colorbar(image, ax=axes, fraction=0.03)
    return fig


def reach_figure(weights, shown: int = 2000) -> Figure:
    """A query's weights over its past ([heads, m + 1], alibi_query_attention), by distance:
    the weight on the key Delta back (log scale, the first `shown` distances, left) and the
    attention within distance Delta (right)."""
    weights = torch.as_tensor(weights)
    fig = Figure(figsize=(6.4, 3.2), dpi=100, layout="constrained")
    left, right = fig.subplots(1, 2)
    colors = _head_colors(weights.shape[0])
    dist = np.arange(weights.shape[-1])
    for h in range(weights.shape[0]):
        w = weights[h].flip(0).numpy()  # by distance Delta = 0, 1, 2, ...
        left.plot(dist[:shown], w[:shown], color=colors[h],
                  label=_fig("head {h}").format(h=h + 1))  # fmt: skip
        right.plot(dist, np.cumsum(w), color=colors[h])
    left.set_yscale("log")
    left.set_ylim(1e-6, 1)
    left.set_xlabel(_fig("distance Δ = m - n"))
    left.set_ylabel(_fig("weight (log scale)"))
    left.set_title(_fig("weight on the key Δ back"))
    fig.legend(loc="outside right center", frameon=False)
    right.set_xscale("log")
    right.set_xlabel(_fig("distance Δ (log scale)"))
    right.set_ylabel(_fig("attention within distance Δ"))
    right.set_title(_fig("cumulative: reach"))
    return fig


def decay_comparison_figure(
    delta, rope_rel, slopes, heads=(0, 3, 7), d: int = 128
) -> Figure:
    """RoPE's long-term decay bound relative to its value at 0 (black) against ALiBi's
    factor exp(-mu_h Delta) on the weight for a few heads, over the distances `delta`."""
    delta = torch.as_tensor(delta)
    colors = _head_colors(len(slopes))
    fig = Figure(figsize=(6.4, 3.2), dpi=100)
    ax = fig.subplots()
    ax.plot(delta.numpy(), np.asarray(rope_rel), color="black", lw=1.2,
            label=_fig("RoPE: bound(Δ) / bound(0), d = {d}").format(d=d))  # fmt: skip
    for h in heads:
        label = _fig("ALiBi head {h}: exp(-μΔ), μ = {mu}")
        ax.plot(delta.numpy(), torch.exp(-slopes[h] * delta).numpy(), color=colors[h],
                lw=1.2, label=label.format(h=h + 1, mu=_inverse(slopes[h])))  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1.2)
    ax.set_xlim(0, int(delta[-1]))
    ax.set_xlabel(_fig("distance Δ"))
    ax.set_ylabel(_fig("relative size (log scale)"))
    legend_below(ax, ncol=2)
    fig.tight_layout()
    return fig


def attention_maps_figure(attn, heads=(0, 2, 5, 7), size: int = 48) -> Figure:
    """The attention maps ([batch, heads, m, n]) of a few heads of an ALiBi block, the
    first `size` queries and keys of batch item 0, on one colour scale."""
    attn = torch.as_tensor(attn)
    slopes = alibi_slopes(attn.shape[1])
    fig = Figure(figsize=(6.4, 2.4), dpi=100, layout="constrained")
    axes = fig.subplots(1, len(heads))
    for ax, h in zip(axes, heads):
        frame = attn[0, h, :size, :size].numpy()
        image = ax.imshow(
            frame, cmap="magma", vmin=0, vmax=0.5, interpolation="nearest"
        )
        title = _fig("head {h}\nμ = {mu}").format(h=h + 1, mu=_inverse(slopes[h]))
        ax.set_title(title)
        ax.set_xlabel(_fig("key n"))
    axes[0].set_ylabel(_fig("query m"))
    fig.colorbar(image, ax=axes, shrink=0.8, label=_fig("weight"))
    return fig
