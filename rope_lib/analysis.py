"""What RoPE does over many positions: decay, turns, precision and cost (RoPE at scale,
lesson 7; lessons 6 and 8 use it too).

- long_term_decay_bound: RoFormer's bound on the relative score against distance (Su et al. 2021,
  arXiv:2104.09864, section 3.4.3, Fig. 2).
- pair_turns: how many full turns each pair makes within a length (the failure modes of RoPE: fast
  pairs wrap hundreds of times, slow pairs never complete one turn).
- angle_error: how far angles computed in a low-precision dtype are from the exact ones.
- rope_cost_per_token: FLOPs and bytes RoPE adds per token, against the attention it sits in.
- UnsqueezeBugRoPE: a RoPE module as a common write-up gives it, kept with its bug so a lesson can
  show it.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import (
    as_real_float64,
    require_even,
    require_float_tensor,
    require_positive_float,
    require_positive_int,
)
from .language import _
from .rotary import pair_frequencies


def _exact_frequencies(head_dim: int, base: float, device=None) -> torch.Tensor:
    """theta_i = base ** (-2i / head_dim) in float64: the reference the float32 ones approximate."""
    return pair_frequencies(head_dim, base, dtype=torch.float64, device=device)


def long_term_decay_bound(
    distances, head_dim: int = 128, base: float = 10000.0
) -> torch.Tensor:
    """RoFormer's relative upper bound, float64, one value per distance r = m - n.

        S_j(r) = sum_{k=0}^{j-1} e^{i r theta_k},     j = 1 .. d/2
        bound(r) = (1 / (d/2)) * sum_{j=1}^{d/2} |S_j(r)|

    By Abel summation (RoFormer eq. 36-37), for any q and k with h_i = q_[2i:2i+1] conj(k_[2i:2i+1])
    (pair i read as a complex number) and h_{d/2} = 0:

        |q_m . k_n| = |sum_i h_i e^{i r theta_i}| <= max_i |h_{i+1} - h_i| * (d/2) * bound(r)

    (see decay_bound_constant). At r = 0 every S_j = j, so bound(0) = (d/2 + 1) / 2; it falls as the
    distance grows (RoFormer Fig. 2, d = 128). theta_k are the exact float64 frequencies.
    """
    require_even("head_dim", head_dim)
    base = require_positive_float("base", base)
    r = as_real_float64("distances", distances)
    phases = r.unsqueeze(-1) * _exact_frequencies(head_dim, base, r.device)
    partial_sums = torch.cumsum(
        torch.polar(torch.ones_like(phases), phases), dim=-1
    )  # S_1 .. S_{d/2}
    return partial_sums.abs().mean(dim=-1)


def decay_bound_constant(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """max_i |h_{i+1} - h_i| with h_i = q_i conj(k_i) over interleaved pairs and h_{d/2} = 0.

    q, k: [..., head_dim] real vectors (pairs (2i, 2i+1)); returns [...] float64. Multiplied by
    (head_dim/2) * long_term_decay_bound(r) it bounds |(R_m q) . (R_n k)| for r = m - n
    (RoFormer, Su et al. 2021, section 3.4.3).
    """
    require_float_tensor("q", q)
    require_float_tensor("k", k)
    if q.shape != k.shape or q.shape[-1] % 2:
        raise ValueError(
            _(
                "q and k must have the same shape with an even last dimension, got "
                "{q_shape} and {k_shape}"
            ).format(q_shape=tuple(q.shape), k_shape=tuple(k.shape))
        )
    qc = torch.view_as_complex(q.to(torch.float64).unflatten(-1, (-1, 2)).contiguous())
    kc = torch.view_as_complex(k.to(torch.float64).unflatten(-1, (-1, 2)).contiguous())
    h = qc * kc.conj()
    h = torch.cat([h, torch.zeros_like(h[..., :1])], dim=-1)  # h_{d/2} = 0
    return (h[..., 1:] - h[..., :-1]).abs().amax(dim=-1)


def pair_turns(length: float, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """Full turns pair i makes from position 0 to position `length`: length * theta_i / (2 pi).

    float64 [head_dim/2]. Above 1: the pair wraps (many positions share its angle); well below 1:
    within that length the pair barely moves, so it tells nearby positions apart hardly at all.
    (theta_i = base ** (-2i/d), RoFormer, Su et al. 2021, eq. 15.)
    """
    require_even("head_dim", head_dim)
    base = require_positive_float("base", base)
    length = require_positive_float("length", length)
    return length * _exact_frequencies(head_dim, base) / (2 * math.pi)


def angle_error(
    positions, head_dim: int, base: float = 10000.0, dtype=torch.bfloat16
) -> torch.Tensor:
    """|angle computed in `dtype` - exact angle| in radians, float64 [len(positions), head_dim/2].

    The low-precision path is what a model gets when everything has been cast to `dtype`:
    positions.to(dtype) * inv_frequencies(head_dim, base).to(dtype), the product rounded to `dtype`.
    The exact angle is position * base ** (-2i/head_dim) in float64. bfloat16 keeps 8 significant
    bits, so an integer position between 2048 and 4096 is rounded to a multiple of 16: pair 0
    (1 rad per position) is then off by up to 8 radians. (Why transformers and Meta's LLaMA
    compute the angles in float32: m theta_i with theta_i = base ** (-2i/d), RoFormer eq. 15.)
    """
    require_even("head_dim", head_dim)
    base = require_positive_float("base", base)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            _("dtype must be a floating-point torch.dtype, got {dtype!r}").format(
                dtype=dtype
            )
        )
    as_real_float64("positions", positions)
    positions = torch.as_tensor(positions)
    if positions.dim() != 1:
        raise ValueError(
            _("positions must be 1-D, got shape {positions_shape}").format(
                positions_shape=tuple(positions.shape)
            )
        )
    low = (
        positions.to(dtype)[:, None]
        * pair_frequencies(head_dim, base).to(dtype)[None, :]
    )
    exact = (
        positions.to(torch.float64)[:, None]
        * _exact_frequencies(head_dim, base)[None, :]
    )
    return (low.to(torch.float64) - exact).abs()


def rope_cost_per_token(
    head_dim: int,
    n_heads: int,
    n_kv_heads: int | None = None,
    context: int = 4096,
    bytes_per_value: int = 2,
) -> dict:
    """Analytic cost of one new token in one attention layer, RoPE against attention (no timing).

    RoPE: each of the d/2 pairs of a vector is one complex multiplication by a cached
    cos + i sin, 4 multiplications and 2 additions: 6 FLOPs per pair, 3d per vector. Rotating the
    token's query (n_heads vectors) and key (n_kv_heads vectors) costs 3d (n_heads + n_kv_heads)
    FLOPs; with n_kv_heads = n_heads that is 6d per head.
    Attention: per query head, q . k_j for `context` keys (2d FLOPs each) and the weighted sum of
    `context` values (2d each): 4 * context * d per head.
    Bytes: RoPE reads and writes the rotated vectors and reads d cos/sin values; attention reads
    the cached keys and values, 2 * context * d * n_kv_heads values.
    Returns a dict with rope_flops, attention_flops, flops_ratio, rope_bytes, attention_bytes,
    bytes_ratio (ratios are RoPE / attention). (RoFormer, Su et al. 2021, section 3.4.2, gives
    the same pairwise form as the efficient way to compute the rotation.)
    """
    require_even("head_dim", head_dim)
    require_positive_int("n_heads", n_heads)
    n_kv_heads = (
        n_heads
        if n_kv_heads is None
        else require_positive_int("n_kv_heads", n_kv_heads)
    )
    require_positive_int("context", context)
    require_positive_int("bytes_per_value", bytes_per_value)
    rope_flops = 3 * head_dim * (n_heads + n_kv_heads)
    attention_flops = 4 * context * head_dim * n_heads
    rope_bytes = (2 * head_dim * (n_heads + n_kv_heads) + head_dim) * bytes_per_value
    attention_bytes = 2 * context * head_dim * n_kv_heads * bytes_per_value
    return {
        "rope_flops": rope_flops,
        "attention_flops": attention_flops,
        "flops_ratio": rope_flops / attention_flops,
        "rope_bytes": rope_bytes,
        "attention_bytes": attention_bytes,
        "bytes_ratio": rope_bytes / attention_bytes,
    }


class UnsqueezeBugRoPE(nn.Module):
    """A common write-up's RoPE module, rewritten with the same behaviour, bugs included. Do not use it:
    use rope_lib.RotaryEmbedding, which fixes both problems.

    1. Its docstring gives the rule as out = x * cos - x * sin. That is not a rotation: it
       mixes a coordinate with itself. The code (below) does the right thing, pair (a, b) ->
       (a cos - b sin, a sin + b cos); the docstring is what is wrong.
    2. forward(x, token_positions) looks up cos/sin [*positions.shape, d/2] and then adds a
       leading dimension with unsqueeze(0). With token_positions [seq] that gives [1, seq, d/2],
       which broadcasts against x [batch, (heads,) seq, d/2]. With token_positions [batch, seq]
       (as its own docstring promises) it gives [1, batch, seq, d/2]: against
       x [batch, seq, d] the output silently gains a dimension, against x [batch, heads, seq, d]
       batch lines up with heads, which raises when the sizes differ and rotates by the wrong
       positions when they are equal.
    """

    def __init__(self, theta: float, d_k: int, max_seq_len: int):
        super().__init__()
        require_even("d_k", d_k)
        freqs = 1.0 / (theta ** (torch.arange(0, d_k, 2).float() / d_k))
        angles = torch.outer(torch.arange(max_seq_len).float(), freqs)
        self.register_buffer("cos_cache", angles.cos(), persistent=False)
        self.register_buffer("sin_cache", angles.sin(), persistent=False)

    def forward(self, x: torch.Tensor, token_positions: torch.Tensor) -> torch.Tensor:
        cos = self.cos_cache[token_positions].unsqueeze(
            0
        )  # the bug: assumes token_positions is [seq]
        sin = self.sin_cache[token_positions].unsqueeze(0)
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack(
            [even * cos - odd * sin, even * sin + odd * cos], dim=-1
        ).flatten(-2)
