"""ALiBi: attention with linear biases (Press, Smith and Lewis, 2022, arXiv:2108.12409).

No position vectors at all: each head h adds -slope_h * (i - j) to the score of query i and key j,
so attention fades linearly (in the logits) with distance, at a rate that differs per head.
Slopes are geometric: for n heads (a power of two) slope_h = 2 ** (-8h / n), h = 1 .. n.
"""

from __future__ import annotations

import math

import torch

from ._checks import as_real_float64, require_bool, require_number, require_positive_int
from .language import _


def _power_of_two_slopes(n: int) -> list[float]:
    start = 2.0 ** (-8.0 / n)  # = 2 ** -(2 ** -(log2(n) - 3)) in the paper's code
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """The paper's per-head slopes, float32 [n_heads], for any n_heads >= 1.

    A power of two n: 2^(-8/n), 2^(-16/n), ..., 2^(-8). Otherwise, with p the largest power of two
    below n: the p slopes for p heads, then every other slope of the 2p-head sequence until there
    are n (the rule in the paper's released code, followed by BLOOM and MPT). Press et al. 2022,
    "Train Short, Test Long" (arXiv:2108.12409), section 3.
    """
    require_positive_int("n_heads", n_heads)
    p = 2 ** math.floor(math.log2(n_heads))
    slopes = _power_of_two_slopes(p) + _power_of_two_slopes(2 * p)[0::2][: n_heads - p]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(seq_len: int, n_heads: int, causal: bool = True) -> torch.Tensor:
    """bias[h, i, j] = -slope_h * |i - j|, float32 [n_heads, seq_len, seq_len].

    causal=True (decoders, as in the paper): entries with j > i, the future, are -inf, so the bias
    doubles as the causal mask. causal=False gives the symmetric variant used by encoders.
    (Press et al. 2022, arXiv:2108.12409: softmax(q_i K^T + m [-(i-1), ..., 0]).)
    """
    require_positive_int("seq_len", seq_len)
    require_bool("causal", causal)
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
    attention, while this one needs no [seq, seq] tensor (BLOOM's build_alibi_tensor; Press et
    al. 2022, arXiv:2108.12409).
    """
    require_positive_int("seq_len", seq_len)
    return alibi_slopes(n_heads)[:, None, None] * torch.arange(
        seq_len, dtype=torch.float32
    )


def alibi_span(slopes, threshold: float = 100.0) -> torch.Tensor:
    """The effective span of a head: the distance at which its bias reaches -ln(threshold).

        span_h = ln(threshold) / slope_h

    At that distance a key gets 1/threshold of the weight that the query's own position gets
    (when both have the same content score), and with zero content scores and a long past, the
    share of attention at distance >= span is exp(-slope * span) = 1/threshold. The default, 100,
    gives the distance beyond which a head keeps only 1% of its attention. slopes: a number or a
    tensor (e.g. alibi_slopes(n)); returns a float32 (or float64, for float64 input) tensor of
    the same shape. ALiBi: Press, Smith and Lewis, 2022, arXiv:2108.12409.
    """
    if isinstance(slopes, bool) or not isinstance(slopes, (int, float, torch.Tensor)):
        raise TypeError(
            _("slopes must be a number or a torch.Tensor, got {slopes}").format(
                slopes=type(slopes).__name__
            )
        )
    dtype = (
        torch.float64
        if isinstance(slopes, torch.Tensor) and slopes.dtype == torch.float64
        else torch.float32
    )
    slopes = as_real_float64("slopes", slopes)
    if slopes.device.type != "meta" and not bool((slopes > 0).all()):
        raise ValueError(
            _("slopes must all be > 0, got {slopes}").format(slopes=slopes.tolist())
        )
    slopes = slopes.to(dtype)
    threshold = require_number("threshold", threshold)
    if not threshold > 1:
        raise ValueError(
            _("threshold must be a number > 1, got {threshold!r}").format(
                threshold=threshold
            )
        )
    return math.log(threshold) / slopes


def _check_scores(scores) -> None:
    """scores: a floating-point tensor [..., seq_len], seq_len >= 1."""
    if not isinstance(scores, torch.Tensor):
        raise TypeError(
            _("scores must be a torch.Tensor, got {scores}").format(
                scores=type(scores).__name__
            )
        )
    if scores.ndim < 1 or scores.shape[-1] < 1:
        raise ValueError(
            _(
                "scores must have shape [..., seq_len] with seq_len >= 1, got "
                "{scores_shape}"
            ).format(scores_shape=tuple(scores.shape))
        )
    if not scores.is_floating_point():
        raise TypeError(
            _("scores must have a floating-point dtype, got {scores_dtype}").format(
                scores_dtype=scores.dtype
            )
        )


def alibi_query_attention(
    scores: torch.Tensor, slopes, query: int, causal: bool = True
) -> torch.Tensor:
    """The attention one query pays to every key under ALiBi, for given content scores.

        weights[..., j] = softmax_j( scores[..., j] - slope * |query - j| ),  keys j > query
                          masked (weight 0) when causal=True

    scores: [..., seq_len], the content scores q_i . k_j / sqrt(head_dim) of the query at
    position `query` (all zeros: what position alone does). slopes: a number, or a tensor that
    broadcasts against scores.shape[:-1] (e.g. alibi_slopes(n) with scores [n, seq_len]).
    Returns the weights, same shape and dtype as scores (computed in float32 or better).
    ALiBi: Press, Smith and Lewis, 2022, arXiv:2108.12409.
    """
    _check_scores(scores)
    seq_len = scores.shape[-1]
    require_positive_int("query", query, minimum=0)
    if query >= seq_len:
        raise ValueError(
            _(
                "query must be a position in 0 .. seq_len - 1 = {value}, got {query}"
            ).format(value=seq_len - 1, query=query)
        )
    require_bool("causal", causal)
    work = torch.float64 if scores.dtype == torch.float64 else torch.float32
    slopes = as_real_float64("slopes", slopes).to(device=scores.device, dtype=work)
    try:
        slopes = slopes[..., None].expand(
            *torch.broadcast_shapes(slopes.shape, scores.shape[:-1]), 1
        )
    except RuntimeError:
        raise ValueError(
            _(
                "slopes of shape {slopes_shape} do not broadcast against "
                "scores.shape[:-1] = {scores_shape}"
            ).format(
                slopes_shape=tuple(slopes.shape), scores_shape=tuple(scores.shape[:-1])
            )
        ) from None
    keys = torch.arange(seq_len, device=scores.device)
    logits = scores.to(work) - slopes * (query - keys).abs().to(work)
    if causal:
        logits = logits.masked_fill(keys > query, float("-inf"))
    return logits.softmax(dim=-1).to(scores.dtype)
