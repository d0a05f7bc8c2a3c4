"""A small multi-head self-attention block whose position scheme is a parameter.

    scores[h, i, j] = q_i . k_j / sqrt(head_dim)  (+ ALiBi bias)  (+ causal mask)
    out_i           = sum_j softmax_j(scores[h, i, :]) v_j,  heads concatenated, then W_o

position = "none"        nothing: the block is permutation-equivariant
           "sinusoidal"  sinusoidal_encoding added to the input (Vaswani et al. 2017)
           "learned"     a LearnedPositionEmbedding added to the input (BERT, GPT-2)
           "rope"        q and k rotated by apply_rope (RoFormer); any rope_frequencies result
           "alibi"       -slope_h |i - j| added to the scores (Press et al. 2022)

In a full model the additive schemes sit once, at the embedding layer; here they sit at the
block's input so that one block can show every scheme. Written for clarity, for lessons and for
training tiny models, not for speed.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import require_positive_int
from .alibi import alibi_slopes
from .rotary import _check_layout, apply_rope
from .sinusoidal import LearnedPositionEmbedding, sinusoidal_encoding

POSITION_SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")


class PositionalSelfAttention(nn.Module):
    """Multi-head self-attention with a chosen position scheme.

    PositionalSelfAttention(d_model, n_heads, position="rope", *, causal=True, max_len=512,
                            rope=None, base=10000.0, layout="interleaved")
    rope: an (inv_freq, attention_factor) pair from rope_frequencies, for scaled variants.
    forward(x [batch, seq, d_model], positions [seq] = 0..seq-1, return_weights=False)
    returns out [batch, seq, d_model] (and the attention weights [batch, heads, seq, seq]).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        position: str = "rope",
        *,
        causal: bool = True,
        max_len: int = 512,
        rope: tuple[torch.Tensor, float] | None = None,
        base: float = 10000.0,
        layout: str = "interleaved",
    ):
        super().__init__()
        require_positive_int("d_model", d_model)
        require_positive_int("n_heads", n_heads)
        if d_model % n_heads:
            raise ValueError(f"d_model must be divisible by n_heads = {n_heads}, got {d_model}")
        if position not in POSITION_SCHEMES:
            raise ValueError(f"position must be one of {POSITION_SCHEMES}, got {position!r}")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        if position == "rope" and self.head_dim % 2:
            raise ValueError(f"head_dim = d_model / n_heads must be even for RoPE, got {self.head_dim}")
        self.position, self.causal, self.max_len, self.base = position, causal, max_len, base
        self.layout = _check_layout(layout)
        self.rope = rope
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        if position == "learned":
            self.learned = LearnedPositionEmbedding(max_len, d_model)
        if position == "alibi":
            self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None, return_weights: bool = False):
        batch, seq, d_model = x.shape
        if d_model != self.d_model:
            raise ValueError(f"x.shape[-1] must be d_model = {self.d_model}, got {d_model}")
        if positions is None:
            positions = torch.arange(seq)
        if self.position == "sinusoidal":
            table = sinusoidal_encoding(int(positions.max()) + 1, d_model, self.base)
            x = x + table[positions].to(x.dtype)
        elif self.position == "learned":
            x = self.learned(x)

        q, k, v = self.qkv(x).view(batch, seq, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if self.position == "rope":
            inv_freq, factor = self.rope if self.rope is not None else (None, 1.0)
            kwargs = dict(inv_freq=inv_freq, base=self.base, layout=self.layout, attention_factor=factor)
            q, k = apply_rope(q, positions, **kwargs), apply_rope(k, positions, **kwargs)

        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        if self.position == "alibi":
            distance = (positions[:, None] - positions[None, :]).abs().to(scores.dtype)
            scores = scores - self.slopes[:, None, None] * distance
        if self.causal:
            future = torch.ones(seq, seq, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = self.out((weights @ v).transpose(1, 2).reshape(batch, seq, d_model))
        return (out, weights) if return_weights else out
