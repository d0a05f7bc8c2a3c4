"""A small multi-head self-attention block whose position scheme is a parameter.

    scores[h, i, j] = q_i . k_j / sqrt(head_dim)  (+ ALiBi bias)  (+ causal mask)
    out_i           = sum_j softmax_j(scores[h, i, :]) v_j,  heads concatenated, then W_o

position = "none"        nothing: the block is permutation-equivariant
           "sinusoidal"  sinusoidal encoding added to the input (Vaswani et al. 2017)
           "learned"     a LearnedPositionEmbedding added to the input (BERT, GPT-2)
           "rope"        q and k rotated by apply_rope (RoFormer); any rope_frequencies result
           "alibi"       -slope_h |i - j| added to the scores (Press et al. 2022)

In a full model the additive schemes sit once, at the embedding layer; here they sit at the
block's input so that one block can show every scheme.

Two ways to compute the same thing: with return_weights=True the scores and the softmax are
written out (lessons show the weights); otherwise the block calls
torch.nn.functional.scaled_dot_product_attention (RoPE rotates q and k first, ALiBi passes its
bias, with the causal mask folded in, as a float mask). For the default positions 0 .. seq-1
the block keeps its tables (RoPE's cos and sin of the default frequencies, the sinusoids, the
ALiBi bias) per (length, device, dtype, and the setting they depend on: base, causal); with a
`module.rope` pair the cos and sin ([seq, head_dim/2]) are computed on every call.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from ._checks import (
    check_layout,
    check_positions,
    require_bool,
    require_float_tensor,
    require_positive_float,
    require_positive_int,
    require_rope_pair,
)
from .alibi import alibi_slopes
from .language import _
from .rotary import _rotation_for, angle_dtype, inv_frequencies, rope_cos_sin
from .sinusoidal import LearnedPositionEmbedding, sinusoids

POSITION_SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")

_CACHE_ENTRIES = 4  # tables kept per block (a few sequence lengths, devices or dtypes)


class PositionalSelfAttention(nn.Module):
    """Multi-head self-attention with a chosen position scheme.

    PositionalSelfAttention(d_model, n_heads, position="rope", *, causal=True, max_len=512,
                            rope=None, base=10000.0, layout="interleaved")
    rope: an (inv_freq, attention_factor) pair from rope_frequencies, for scaled variants; it may
    be replaced at any time (module.rope = ...), e.g. to evaluate a trained block with scaling.
    forward(x [batch, seq, d_model], positions=None, return_weights=False)
    positions: None (0 .. seq-1), [seq] shared by the batch, or [batch, seq]; integer, or real
    for "rope" and "sinusoidal"; "learned" needs integers in 0 .. max_len-1, "sinusoidal"
    positions >= 0. Returns out [batch, seq, d_model] (and the attention weights
    [batch, heads, seq, seq]). Works on x's device and dtype.
    window: None, or w >= 1 (set it at any time, module.window = w): query i sees only the
    keys j with 0 <= i - j < w, a band (sliding-window attention, as in Mistral 7B; a probe
    of how far back a model may look). Needs causal=True.
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
            raise ValueError(
                _(
                    "d_model must be divisible by n_heads = {n_heads}, got {d_model}"
                ).format(n_heads=n_heads, d_model=d_model)
            )
        if not isinstance(position, str) or position not in POSITION_SCHEMES:
            raise ValueError(
                _(
                    "position must be one of {position_schemes}, got {position!r}"
                ).format(position_schemes=POSITION_SCHEMES, position=position)
            )
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        if position == "rope" and self.head_dim % 2:
            raise ValueError(
                _(
                    "head_dim = d_model / n_heads must be even for RoPE, got {head_dim}"
                ).format(head_dim=self.head_dim)
            )
        if position in ("sinusoidal",) and d_model % 2:
            raise ValueError(
                _(
                    "d_model must be even for sinusoidal encodings, got {d_model}"
                ).format(d_model=d_model)
            )
        self.position = position
        self.causal = require_bool("causal", causal)
        self.max_len = require_positive_int("max_len", max_len)
        self.base = require_positive_float("base", base)
        self.layout = check_layout(layout)
        if rope is not None:
            require_rope_pair("rope", rope, self.head_dim)
        self.rope = rope
        self.window: int | None = None
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)
        if position == "learned":
            self.learned = LearnedPositionEmbedding(max_len, d_model)
        if position == "alibi":
            self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)
        self._tables: dict = {}

    # --- cached tables for the default positions 0 .. seq-1 ------------------------------------

    def _cached(self, key: tuple, build):
        """build(), kept under `key` (the table's kind, length, device, dtype and setting) for
        the next call; the oldest of _CACHE_ENTRIES tables goes first."""
        value = self._tables.get(key)
        if value is None:
            value = build()
            if len(self._tables) >= _CACHE_ENTRIES:
                self._tables.pop(next(iter(self._tables)))
            self._tables[key] = value
        return value

    def _alibi_bias(self, positions: torch.Tensor | None, seq: int, x: torch.Tensor):
        """-slope_h |p_i - p_j| (and -inf where j > i when causal): [batch or 1, heads, seq, seq]."""

        def build(pos):
            pos = pos.to(angle_dtype(x.dtype))
            distance = (pos[..., :, None] - pos[..., None, :]).abs()
            slopes = self.slopes.to(device=x.device, dtype=distance.dtype)[
                :, None, None
            ]
            bias = -slopes * distance.unsqueeze(-3)
            if self.causal:
                future = torch.ones(seq, seq, dtype=torch.bool, device=x.device).triu(1)
                bias = bias.masked_fill(future, float("-inf"))
            bias = bias.to(x.dtype)
            # 4 dimensions: with a 3-dimensional mask sdpa leaves its fused CPU kernel (2x slower)
            return bias if bias.dim() == 4 else bias.unsqueeze(0)

        if positions is None:
            key = ("alibi", seq, x.device, x.dtype, self.causal)
            return self._cached(key, lambda: build(torch.arange(seq, device=x.device)))
        return build(positions)

    # --- forward -----------------------------------------------------------------------------

    def _check_positions(self, positions, x: torch.Tensor):
        """The library's rule for positions (check_positions, against x [batch, seq, d_model]:
        [seq] or [batch, seq]), as [batch or 1, seq], plus what the table schemes need."""
        if positions is None:
            return None
        positions = check_positions(positions, x).expand(-1, x.shape[1])
        if self.position == "learned" and positions.is_floating_point():
            raise TypeError(
                _(
                    "positions must be integers for position='learned' (rows of the "
                    "table), got dtype {positions_dtype}"
                ).format(positions_dtype=positions.dtype)
            )
        if (
            self.position in ("learned", "sinusoidal")
            and positions.numel()
            and positions.device.type != "meta"
        ):
            low, high = int(positions.min()), positions.max().item()
            if low < 0:
                raise ValueError(
                    _(
                        "positions must be >= 0 for position={position!r} (a table starts "
                        "at position 0), got minimum {low}"
                    ).format(position=self.position, low=low)
                )
            if self.position == "learned" and high >= self.max_len:
                raise ValueError(
                    _(
                        "positions must be < max_len = {max_len} for position='learned' "
                        "(the table has no row past it), got maximum {high}"
                    ).format(max_len=self.max_len, high=high)
                )
        return positions

    def forward(
        self,
        x: torch.Tensor,
        positions: torch.Tensor | None = None,
        return_weights: bool = False,
    ):
        require_float_tensor("x", x)
        if x.dim() != 3:
            raise ValueError(
                _("x must be [batch, seq, d_model], got shape {x_shape}").format(
                    x_shape=tuple(x.shape)
                )
            )
        batch, seq, d_model = x.shape
        if d_model != self.d_model:
            raise ValueError(
                _("x.shape[-1] must be d_model = {d_model}, got {d_model_2}").format(
                    d_model=self.d_model, d_model_2=d_model
                )
            )
        require_bool("return_weights", return_weights)
        positions = self._check_positions(positions, x)

        q, k, v = self._qkv(x, positions)
        bias = None
        if self.position == "alibi":
            bias = self._alibi_bias(positions, seq, x)  # [batch or 1, heads, seq, seq]
        heads, weights = self._attend(q, k, v, bias, return_weights)
        out = self.out(heads.transpose(1, 2).reshape(batch, seq, d_model))
        return (out, weights) if return_weights else out

    def query_key(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(q, k) [batch, heads, seq, head_dim] as the scores use them (RoPE: rotated), for
        x [batch, seq, d_model] at the default positions: what a probe of the scores reads."""
        require_float_tensor("x", x)
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                _("x must be [batch, seq, d_model = {d_model}], got {x_shape}").format(
                    d_model=self.d_model, x_shape=tuple(x.shape)
                )
            )
        q, k, _v = self._qkv(x, None)
        return q, k

    def _qkv(self, x: torch.Tensor, positions):
        """q, k, v [batch, heads, seq, head_dim], positions added (or q and k rotated)."""
        batch, seq, _ = x.shape
        x = self._add_positions(x, positions)  # sinusoidal, learned: at the input
        qkv = (
            self.qkv(x)
            .view(batch, seq, 3, self.n_heads, self.head_dim)
            .permute(2, 0, 3, 1, 4)
        )
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.position == "rope":  # q and k rotated in one pass
            cos, sin = self._rope_cos_sin(positions, x)
            q, k = _rotation_for(cos, sin)(qkv[:2], cos, sin, self.layout)
        return q, k, v

    def _add_positions(self, x: torch.Tensor, positions) -> torch.Tensor:
        """x + PE (sinusoidal) or x + the learned rows; x itself for the other schemes."""
        if self.position == "learned":
            return self.learned(x, positions)
        if self.position != "sinusoidal":
            return x
        seq, d_model = x.shape[1], x.shape[2]
        if positions is not None:
            return x + sinusoids(positions, d_model, self.base).to(x.dtype)
        table = self._cached(
            ("sinusoidal", seq, x.device, x.dtype, self.base),
            lambda: sinusoids(
                torch.arange(seq, device=x.device), d_model, self.base
            ).to(x.dtype),
        )
        return x + table

    def _rope_cos_sin(self, positions, x: torch.Tensor):
        """a cos(m theta_i), a sin(m theta_i), shaped for q and k stacked as
        [2, batch, heads, seq, head_dim]. The default frequencies at the default positions
        0 .. seq-1 are kept per (seq, device, dtype, base); with self.rope = (inv_freq, a) they
        are computed on every call ([seq, head_dim/2] costs little next to the attention, and
        a replaced or modified pair is read as it is now)."""
        seq = x.shape[1]
        if positions is None and self.rope is None:
            key = ("rope", seq, x.device, x.dtype, self.base)
            return self._cached(
                key, lambda: self._cos_sin(torch.arange(seq, device=x.device), x)
            )
        if positions is None:
            positions = torch.arange(seq, device=x.device)
        else:
            positions = positions.reshape(1, -1, 1, seq)  # [1, batch or 1, 1, seq]
        return self._cos_sin(positions, x)

    def _cos_sin(self, positions, x: torch.Tensor):
        """rope_cos_sin for self.rope = (inv_freq, a), or for the default frequencies
        theta_i = base ** (-2i / head_dim) and a = 1."""
        dtype = angle_dtype(x.dtype)
        if self.rope is None:
            inv_freq = inv_frequencies(
                self.head_dim, self.base, dtype=dtype, device=x.device
            )
            factor = 1.0
        else:
            inv_freq, factor = require_rope_pair("rope", self.rope, self.head_dim)
        return rope_cos_sin(positions, inv_freq.to(x.device), dtype, factor)

    def _band(self, seq: int, q: torch.Tensor) -> torch.Tensor | None:
        """The additive mask of self.window (0 inside the band, -inf elsewhere), or None."""
        if self.window is None:
            return None
        window = require_positive_int("window", self.window)
        if not self.causal:
            raise ValueError(_("window needs causal=True, got causal=False"))
        offset = torch.arange(seq, device=q.device)
        offset = offset[:, None] - offset[None, :]
        inside = (offset >= 0) & (offset < window)
        zero = torch.zeros((), dtype=q.dtype, device=q.device)
        return torch.where(inside, zero, float("-inf")).expand(1, 1, seq, seq)

    def _attend(self, q, k, v, bias, return_weights: bool):
        """softmax(q k^T / sqrt(head_dim) + bias, causal) v, and the weights when asked for
        (written out); otherwise torch's fused scaled_dot_product_attention."""
        seq = q.shape[-2]
        band = self._band(seq, q)
        if band is not None:  # the band holds the causal mask
            bias = band if bias is None else bias + band
        if not return_weights:
            if bias is not None:
                return F.scaled_dot_product_attention(q, k, v, attn_mask=bias), None
            causal = self.causal and seq > 0
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal), None
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        if bias is not None:
            scores = scores + bias  # the causal mask is folded into the bias
        elif self.causal:
            future = torch.ones(seq, seq, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        weights = scores.softmax(dim=-1)
        return weights @ v, weights
