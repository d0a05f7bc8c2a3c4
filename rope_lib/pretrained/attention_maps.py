"""Explicit attention weights, how they fall with distance, and where the sinks are.

The forward pass (model.py) never forms the weights: scaled_dot_product_attention fuses them
away. Here they are written out for probing, on windows of a few thousand tokens:

    A_h = softmax(q_h k_g(h)^T / sqrt(d) + causal mask)      [n_heads, n, n], rows sum to 1

Long-term decay. Su et al. 2021 (RoFormer, arXiv:2104.09864, section 3.4.3) show that RoPE's
bound on |q_m . k_n| falls as the distance m - n grows. decay_by_distance measures what a
trained model does: the mean weight A[m, m - delta] over heads and queries, in log-spaced
bins of the distance delta, beside what attention spread evenly (1 / (m + 1) on each of the
m + 1 keys a causal query sees, uniform_attention) gives at the same distances.

Attention sinks. Xiao et al. 2023 ("Efficient Streaming Language Models with Attention
Sinks", arXiv:2309.17453) found that trained models put much of their attention on the first
token(s), whatever they say. sink_share measures the share of each query's weight that lands
on the first tokens. Both measures leave out the first SINK_TOKENS keys (decay) or queries
(sinks): the decay would otherwise be the sinks seen again at every distance.

A sink still deflates the decay: a query that puts 90% of its weight on token 0 has 10% left
for every distance. without_first_token takes token 0 out and spreads each query's weight
over the other keys again (w / (1 - w_0)), so that decay_by_distance of it, against the
same measure of evenly spread attention, compares layers whose sinks differ.
"""

from __future__ import annotations

import math

import torch

SINK_TOKENS = 4
"""The first keys counted as possible sinks; decay_by_distance leaves them out."""


def attention_weights(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d) + causal mask): q [batch, H, n, d], k [batch, G, n, d]
    with G dividing H (query head h reads key head h // (H / G)) -> [batch, H, n, n]."""
    for name, x in (("q", q), ("k", k)):
        if not isinstance(x, torch.Tensor) or x.dim() != 4:
            raise ValueError(
                f"{name} must be a 4-D tensor [batch, heads, n, d], got {x!r:.60}"
            )
    H, G = q.shape[1], k.shape[1]
    if H % G or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        raise ValueError(
            "q and k must share batch, n and d, and k's heads must divide q's, got "
            f"q {tuple(q.shape)} and k {tuple(k.shape)}"
        )
    k = k.repeat_interleave(H // G, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    n = q.shape[2]
    future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(-1)


def distance_edges(n: int) -> list[int]:
    """Bin edges 0, 1, 2, 4, 8, ... up to n: bin b holds distances edges[b] <= delta <
    edges[b + 1] (the first bin is delta = 0, the token itself)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    edges = [0, 1]
    while edges[-1] < n:
        edges.append(min(2 * edges[-1], n))
    return edges


def decay_by_distance(weights: torch.Tensor) -> dict:
    """Mean attention weight by distance bin, weights [..., n, n] (rows: queries).

    Averages A[m, m - delta] over every leading index (batch, heads) and every query m,
    for the keys m - delta >= SINK_TOKENS. Returns {"edges": distance_edges(n - SINK_TOKENS),
    "mean_weight": [per bin]}; decay_by_distance(uniform_attention(n)) is the baseline.
    """
    if not isinstance(weights, torch.Tensor) or weights.dim() < 2:
        raise ValueError(f"weights must be a tensor [..., n, n], got {weights!r:.60}")
    n = weights.shape[-1]
    if weights.shape[-2] != n or n < SINK_TOKENS + 2:
        raise ValueError(
            f"weights must be square [..., n, n] with n >= {SINK_TOKENS + 2}, got "
            f"{tuple(weights.shape)}"
        )
    summed = weights.reshape(-1, n, n).double().sum(0)  # over batch and heads
    copies = weights.numel() // (n * n)
    m = torch.arange(n, device=weights.device)
    distance = m[:, None] - m[None, :]
    keep = (distance >= 0) & (m[None, :] >= SINK_TOKENS)
    edges = distance_edges(n - SINK_TOKENS)  # the longest distance kept: n - 1 - SINK
    bins = torch.bucketize(
        distance[keep], torch.tensor(edges, device=m.device), right=True
    )
    bins, size = bins - 1, len(edges) - 1
    total = torch.bincount(bins, weights=summed[keep], minlength=size)
    count = torch.bincount(bins, minlength=size) * copies
    return {"edges": edges, "mean_weight": (total / count).tolist()}


def uniform_attention(n: int) -> torch.Tensor:
    """Causal attention spread evenly, the baseline of the measures: A[m, n'] = 1 / (m + 1)
    for n' <= m, float64 [n, n]."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    rows = torch.arange(1, n + 1, dtype=torch.float64)[:, None]
    return torch.ones(n, n, dtype=torch.float64).tril() / rows


def without_first_token(weights: torch.Tensor) -> torch.Tensor:
    """Attention weights [..., n, n] with key 0 removed and each query's weights
    renormalised over the others: w'[m, j] = w[m, j] / sum_(j' >= 1) w[m, j'] for j >= 1,
    w'[m, 0] = 0 (query 0, which sees token 0 alone, gets a row of zeros). The sums are
    taken in float64; the result has weights' dtype."""
    if not isinstance(weights, torch.Tensor) or weights.dim() < 2:
        raise ValueError(f"weights must be a tensor [..., n, n], got {weights!r:.60}")
    if weights.shape[-1] != weights.shape[-2] or weights.shape[-1] < 2:
        raise ValueError(
            f"weights must be square [..., n, n] with n >= 2, got {tuple(weights.shape)}"
        )
    rest = weights[..., 1:].sum(-1, keepdim=True, dtype=torch.float64)
    scale = torch.where(rest > 0, 1 / rest, torch.zeros_like(rest)).to(weights.dtype)
    out = weights * scale
    out[..., 0] = 0
    return out


def sink_share(weights: torch.Tensor, first: int = 1) -> torch.Tensor:
    """Share of each query's weight on the first `first` keys, averaged over the queries
    m >= SINK_TOKENS: weights [..., n, n] -> [...] (e.g. one value per head)."""
    if (
        isinstance(first, bool)
        or not isinstance(first, int)
        or not 1 <= first <= SINK_TOKENS
    ):
        raise ValueError(f"first must be an int from 1 to {SINK_TOKENS}, got {first!r}")
    if not isinstance(weights, torch.Tensor) or weights.dim() < 2:
        raise ValueError(f"weights must be a tensor [..., n, n], got {weights!r:.60}")
    if weights.shape[-1] != weights.shape[-2] or weights.shape[-1] <= SINK_TOKENS:
        raise ValueError(
            f"weights must be square [..., n, n] with n > {SINK_TOKENS}, got "
            f"{tuple(weights.shape)}"
        )
    return weights[..., SINK_TOKENS:, :first].sum(-1).mean(-1)
