"""Absolute position encodings: the original Transformer's sinusoids and a learned table.

Vaswani et al. (2017, "Attention Is All You Need", section 3.5):

    PE[pos, 2i]   = sin(pos / base ** (2i / d_model))
    PE[pos, 2i+1] = cos(pos / base ** (2i / d_model))

Each column pair (2i, 2i+1) is a point on a circle turning at frequency base ** (-2i/d_model), so
PE[pos + k] is PE[pos] rotated pair by pair by k times those frequencies: a linear map M_k that
does not depend on pos (sinusoidal_shift_matrix). That property is the bridge to RoPE.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import require_even, require_positive_float, require_positive_int
from .rotary import rotation_2d


def _frequencies(d_model: int, base: float) -> torch.Tensor:
    """w_i = base ** (-2i / d_model) in float64 (the same numbers as inv_frequencies, more digits)."""
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def sinusoidal_encoding(seq_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """The sinusoidal table, float32 [seq_len, d_model]: column 2i = sin(pos * w_i),
    column 2i+1 = cos(pos * w_i), w_i = base ** (-2i / d_model). Angles in float64."""
    require_positive_int("seq_len", seq_len)
    require_even("d_model", d_model)
    base = require_positive_float("base", base)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _frequencies(d_model, base)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2).to(torch.float32)


def sinusoidal_shift_matrix(offset: float, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """M_k with PE[pos + k] = M_k @ PE[pos] for every pos, float64 [d_model, d_model].

    For the pair (sin a, cos a), a = pos * w, shifting by k gives (sin(a + kw), cos(a + kw)) =
    [[cos kw, sin kw], [-sin kw, cos kw]] @ (sin a, cos a): a rotation by -k w in the (sin, cos)
    coordinates. M_k is block-diagonal with one such block per pair.
    """
    require_even("d_model", d_model)
    base = require_positive_float("base", base)
    return torch.block_diag(*rotation_2d(-float(offset) * _frequencies(d_model, base)))


class LearnedPositionEmbedding(nn.Module):
    """A trainable table of max_len position vectors, added to the token embeddings (BERT, GPT-2).

    forward(x) adds rows 0 .. seq-1 to x [batch, seq, d_model]. Past max_len there is no row to
    read: it raises a ValueError saying so, since the table has simply never seen such a position.
    """

    def __init__(self, max_len: int, d_model: int, init_std: float = 0.02):
        super().__init__()
        require_positive_int("max_len", max_len)
        require_positive_int("d_model", d_model)
        self.max_len = max_len
        self.table = nn.Parameter(torch.randn(max_len, d_model) * init_std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq = x.shape[-2]
        if seq > self.max_len:
            raise ValueError(
                f"x has seq = {seq} positions, but the learned table has only max_len = {self.max_len} "
                "rows: positions past the training length have no embedding"
            )
        return x + self.table[:seq]
