"""ALiBi: attention with linear biases (Press, Smith and Lewis, 2022, arXiv:2108.12409).

No position vectors at all: each head h adds -slope_h * (i - j) to the score of query i and key j,
so attention fades linearly (in the logits) with distance, at a rate that differs per head.
Slopes are geometric: for n heads (a power of two) slope_h = 2 ** (-8h / n), h = 1 .. n.
"""

from __future__ import annotations

import math

import torch

from ._checks import require_positive_int


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)  # = 2 ** -(2 ** -(log2(n) - 3)) in the paper's code
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The paper's per-head slopes, float32 [n_heads], for any n_heads >= 1.

    A power of two n: 2^(-8/n), 2^(-16/n), ..., 2^(-8). Otherwise, with p the largest power of two
    below n: the p slopes for p heads, then every other slope of the 2p-head sequence until there
    are n (the rule in the paper's released code, followed by BLOOM and MPT).
    """
    require_positive_int("n_heads", n_heads)
    p = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(p) + _power_of_two_slopes(2 * p)[0::2][: n_heads - p]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(seq_len: int, n_heads: int, causal: bool = True) -> torch.Tensor:
    """bias[h, i, j] = -slope_h * |i - j|, float32 [n_heads, seq_len, seq_len].

    causal=True (decoders, as in the paper): entries with j > i, the future, are -inf, so the bias
    doubles as the causal mask. causal=False gives the symmetric variant used by encoders.
    """
    require_positive_int("seq_len", seq_len)
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__}")
    pos = torch.arange(seq_len)
    distance = (pos[:, None] - pos[None, :]).abs().to(torch.float32)
    bias = -alibi_slopes(n_heads)[:, None, None] * distance
    if causal:
        bias = bias.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
    return bias


def alibi_key_bias(seq_len: int, n_heads: int) -> torch.Tensor:
    """The row-constant form implementations use: slope_h * j, float32 [n_heads, 1, seq_len].

    It differs from alibi_bias(causal=True) by slope_h * i in row i, a constant per row, and
    softmax ignores a constant added to a whole row; so under a causal mask both give the same
    attention, while this one needs no [seq, seq] tensor (BLOOM's build_alibi_tensor).
    """
    require_positive_int("seq_len", seq_len)
    return alibi_slopes(n_heads)[:, None, None] * torch.arange(seq_len, dtype=torch.float32)
