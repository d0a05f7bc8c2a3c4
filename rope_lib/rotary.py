"""Rotary position embedding (RoPE), real-valued.

RoFormer (Su et al., 2021, arXiv:2104.09864) rotates each pair of a query or key vector by an angle
proportional to the token's position m:

    theta_i = base ** (-2i / d)                        (one frequency per pair, i = 0 .. d/2 - 1)
    [x'_a]   [cos(m theta_i)  -sin(m theta_i)] [x_a]
    [x'_b] = [sin(m theta_i)   cos(m theta_i)] [x_b]

so that <R_m q, R_n k> = <q, R_(n-m) k> depends on the offset m - n only. In code, as in the
paper: pair_frequencies (theta_i, the one formula; inv_frequencies is it checked), rope_angles
(m theta_i), rope_cos_sin (their cos and sin), rotate_pairs (the 2x2 rotation); apply_rope is
those lines. When no gradient flows to the angles, apply_rope rotates with
_fast_rotation.rotate_fast instead: the same numbers (bit for bit in the interleaved layout,
within a few units in the last place in the half layout) with less memory traffic
(tests/lib/test_fast_rotation.py checks them, benchmarks/bench_rope.py times both).

Two memory layouts name which coordinates (a, b) form pair i:
- "interleaved": (2i, 2i+1). Meta's LLaMA reference, GPT-J, RoFormer.
- "half":        (i, i + d/2). GPT-NeoX and Hugging Face's Llama (`rotate_half`).
They are the same rotation up to a fixed permutation of the coordinates (`interleaved_to_half`).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    LAYOUTS,
    as_real_float64,
    check_inv_freq,
    check_layout,
    check_positions,
    check_x,
    describe,
    require_even,
    require_int,
    require_number,
    require_positive_float,
    require_positive_int,
    require_tensor,
)
from ._fast_rotation import rotate_fast
from .language import _

__all__ = [
    "LAYOUTS",
    "RotaryEmbedding",
    "angle_dtype",
    "apply_rope",
    "half_to_interleaved",
    "interleaved_to_half",
    "inv_frequencies",
    "pair_frequencies",
    "rope_angles",
    "rope_cos_sin",
    "rotate_pairs",
    "rotation_2d",
    "rotation_matrix",
]


def pair_frequencies(
    width: int,
    base: float,
    *,
    scale=None,
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor:
    """theta_i = base ** (-2i / width) for i = 0 .. ceil(width/2) - 1: the one frequency formula
    of the library (RoFormer eq. 15; Vaswani et al. 2017, section 3.5, for the sinusoids).

    Every variant starts from it (rope_frequencies' table, the sinusoids, the vision
    conventions, the analysis tools); inv_frequencies is this formula with its arguments
    checked, _cached_pair_frequencies this formula kept for the next call.
    Computed as Hugging Face transformers and Meta's LLaMA do, 1 / base ** (2i / width) in float32
    (float64 throughout for dtype=torch.float64), so results agree with theirs to the last bit.
    Unchecked: the public callers check width and base. An odd width (a partial rotary width such
    as int(20 * 0.25) = 5) gives ceil(width/2) frequencies, as transformers does. scale (a number
    or a tensor of per-pair factors s_i) gives theta_i / s_i, computed as
    1 / (s_i * base ** (2i / width)), transformers' order of operations for YaRN and LongRoPE.
    """
    work = torch.float64 if dtype == torch.float64 else torch.float32
    exponents = (
        torch.arange(0, width, 2, dtype=torch.int64, device=device).to(work) / width
    )
    powers = base**exponents  # base ** (2i / width)
    return (1.0 / (powers if scale is None else scale * powers)).to(dtype)


def inv_frequencies(
    head_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor:
    """pair_frequencies(head_dim, base), checked: the RoPE frequencies
    theta_i = base ** (-2i / head_dim), i = 0 .. head_dim/2 - 1 (RoFormer, Su et al. 2021,
    eq. 15), the public entry (transformers calls them inv_freq).

    Pair 0 turns one radian per position (wavelength 2*pi tokens); the last pair turns about
    1/base radians per position. float32 by default, computed as Hugging Face transformers and
    Meta's LLaMA do, so that results agree with theirs to the last bit; dtype=torch.float64
    computes them in float64 throughout (what apply_rope uses for float64 x). device: where to
    build them (x's device).
    """
    require_even("head_dim", head_dim)
    base = require_positive_float("base", base)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(
            _("dtype must be a floating-point torch.dtype, got {got}").format(
                got=describe(dtype)
            )
        )
    return pair_frequencies(head_dim, base, dtype=dtype, device=device)


def angle_dtype(x_dtype: torch.dtype) -> torch.dtype:
    """The dtype angles are computed in for an x of x_dtype: float64 for float64 x, else float32.

    Never lower: bfloat16 has 8 bits of mantissa, so at position 1000 an angle would only be
    known to within about 4 radians."""
    return torch.float64 if x_dtype == torch.float64 else torch.float32


def rope_angles(
    positions: torch.Tensor, inv_freq: torch.Tensor, dtype=torch.float32
) -> torch.Tensor:
    """angles[..., i] = m * theta_i (positions[...] * inv_freq[i]), computed in `dtype`
    (float32 or float64), on positions' device (RoFormer eq. 15)."""
    return positions.to(dtype).unsqueeze(-1) * inv_freq.to(
        device=positions.device, dtype=dtype
    )


def rope_cos_sin(
    positions: torch.Tensor,
    inv_freq: torch.Tensor | None = None,
    dtype: torch.dtype = torch.float32,
    attention_factor: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) of the angles m theta_i, each times the attention factor a:

        cos_i = a cos(m theta_i),   sin_i = a sin(m theta_i)

    what rotate_pairs takes (RoFormer, Su et al. 2021, eq. 34; a is YaRN's sqrt(1/t), Peng et
    al. 2023, arXiv:2309.00071, so q.k gets a^2). positions with inv_freq [d/2]: the angles are
    rope_angles(positions, inv_freq, dtype), [*positions.shape, d/2]; inv_freq None: `positions`
    are the angles already, in `dtype` (axial RoPE sums them over its axes). Unchecked.
    """
    angles = positions if inv_freq is None else rope_angles(positions, inv_freq, dtype)
    cos, sin = angles.cos(), angles.sin()
    if attention_factor != 1.0:
        cos, sin = cos * attention_factor, sin * attention_factor
    return cos, sin


def _pairs(x: torch.Tensor, layout: str):
    """(x_a, x_b): the first and second coordinates of every pair."""
    if layout == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def _join(x_a: torch.Tensor, x_b: torch.Tensor, layout: str) -> torch.Tensor:
    """The inverse of _pairs."""
    if layout == "interleaved":
        return torch.stack([x_a, x_b], dim=-1).flatten(-2)
    return torch.cat([x_a, x_b], dim=-1)


def rotate_pairs(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "interleaved"
) -> torch.Tensor:
    """Rotate every pair (x_a, x_b) of x by the angle whose cos and sin are given:

        x'_a = x_a cos - x_b sin
        x'_b = x_a sin + x_b cos

    (RoFormer, Su et al. 2021, eq. 13, pair by pair.)
    cos, sin: [..., head_dim/2], broadcastable to x.shape[:-1] + (head_dim/2,), float32 or
    float64; the rotation runs in cos.dtype and the result has x's dtype. Unchecked (the public
    entries check). Differentiable in x and in the angles.
    """
    x_a, x_b = _pairs(x.to(cos.dtype), layout)
    return _join(x_a * cos - x_b * sin, x_a * sin + x_b * cos, layout).to(x.dtype)


def _rotation_for(cos: torch.Tensor, sin: torch.Tensor):
    """The function that rotates by (cos, sin): _fast_rotation.rotate_fast, rotate_pairs'
    numbers arranged for the CPU cache (bit for bit interleaved, within a few units in the last
    place in the half layout: tests/lib/test_fast_rotation.py), unless a gradient must flow to the
    angles (the kernel differentiates in x only); then rotate_pairs itself.
    benchmarks/bench_rope.py times both."""
    if torch.is_grad_enabled() and (cos.requires_grad or sin.requires_grad):
        return rotate_pairs
    return rotate_fast


_PAIR_FREQUENCIES_CACHE: dict = {}


def _cached_pair_frequencies(width: int, base: float, dtype, device) -> torch.Tensor:
    """pair_frequencies(width, base), cached: kept per (width, base, dtype, device) for the next
    call (a few small kernels less per apply_rope). Callers must not modify the result."""
    key = (width, base, dtype, device)
    inv_freq = _PAIR_FREQUENCIES_CACHE.get(key)
    if inv_freq is None:
        if len(_PAIR_FREQUENCIES_CACHE) > 64:
            _PAIR_FREQUENCIES_CACHE.clear()
        inv_freq = pair_frequencies(width, base, dtype=dtype, device=device)
        _PAIR_FREQUENCIES_CACHE[key] = inv_freq
    return inv_freq


def _check_rotary_dim(rotary_dim, head_dim: int) -> int:
    if rotary_dim is None:
        return head_dim
    rotary_dim = require_int("rotary_dim", rotary_dim)
    if rotary_dim % 2 or not 0 <= rotary_dim <= head_dim:
        raise ValueError(
            _(
                "rotary_dim must be an even number of coordinates between 0 and "
                "head_dim = {head_dim}, got {rotary_dim}"
            ).format(head_dim=head_dim, rotary_dim=rotary_dim)
        )
    return rotary_dim


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    *,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "interleaved",
    attention_factor: float = 1.0,
    rotary_dim: int | None = None,
) -> torch.Tensor:
    """Rotate every pair of x by positions * inv_freq (RoFormer, Su et al. 2021, eq. 14-15):

        theta_i = base ** (-2i/d),   x'_a = x_a cos(m theta_i) - x_b sin(m theta_i),
                                     x'_b = x_a sin(m theta_i) + x_b cos(m theta_i)

    x:          [..., seq, head_dim], e.g. [batch, heads, seq, head_dim]; any float dtype, any
                device and strides (a slice, a transposed view, an odd storage offset).
    positions:  integer or real (fractional positions are how Position Interpolation works,
                m -> m / s), finite, on any device (moved to x's). Its shape, by rank only:
                - [seq]: shared by every batch and head;
                - [batch, seq] with x [batch, heads, seq, head_dim]: one row per batch,
                  always (as transformers reads position_ids);
                - anything else broadcasts against x.shape[:-1] as usual, e.g.
                  [batch, heads, seq], or [1, heads, seq] for one row per head.
    inv_freq:   [head_dim/2] frequencies; default inv_frequencies(head_dim, base) (in float64
                for float64 x). Pass the first element of rope_frequencies(...) to use a scaled
                variant. A gradient flows to it when it requires one.
    layout:     "interleaved" pairs (2i, 2i+1); "half" pairs (i, i + head_dim/2).
    attention_factor: multiplies cos and sin (YaRN's sqrt(1/t)), so q.k gets its square.
    rotary_dim: rotate only the first rotary_dim coordinates of each head (an even int,
                0 .. head_dim; default: all), in the given layout within them (half: pairs
                (i, i + rotary_dim/2)), and pass the rest through unchanged: partial rotary as
                GPT-NeoX, Phi and GLM do (r = int(head_dim * partial_rotary_factor)). inv_freq
                is then [rotary_dim/2], by default inv_frequencies(rotary_dim, base).

    Returns a tensor of x's shape, dtype and device. Angles are computed in float32 (float64 for
    float64 x), as transformers and Meta's reference do, whatever the input dtype.
    """
    check_x(x)
    check_layout(layout)
    r = _check_rotary_dim(rotary_dim, x.shape[-1])
    positions = check_positions(positions, x)
    attention_factor = require_positive_float("attention_factor", attention_factor)
    if r == 0:  # nothing rotated
        return x.clone()
    dtype = angle_dtype(x.dtype)
    if inv_freq is None:  # theta_i = base ** (-2i / r)
        base = require_positive_float("base", base)
        inv_freq = _cached_pair_frequencies(r, base, dtype, x.device)
    else:
        inv_freq = check_inv_freq("inv_freq", inv_freq, r // 2, x.device)

    # a cos(m theta_i), a sin(m theta_i)
    cos, sin = rope_cos_sin(positions, inv_freq, dtype, attention_factor)
    rotate = _rotation_for(cos, sin)  # rotate_pairs, or the same numbers faster
    if r == x.shape[-1]:
        return rotate(x, cos, sin, layout)
    # partial rotary: rotate the first r coordinates, pass the others through
    return torch.cat([rotate(x[..., :r], cos, sin, layout), x[..., r:]], dim=-1)


def _check_pairs(x) -> torch.Tensor:
    require_tensor("x", x)
    if x.dim() < 1 or x.shape[-1] % 2:
        raise ValueError(
            _(
                "x.shape[-1] must be even (pairs of coordinates), got shape {x_shape}"
            ).format(x_shape=tuple(x.shape))
        )
    return x


def interleaved_to_half(x: torch.Tensor) -> torch.Tensor:
    """Reorder the last dimension from pairs (2i, 2i+1) to pairs (i, i + d/2).

    [x0, x1, x2, x3, ...] -> [x0, x2, x4, ..., x1, x3, x5, ...]. Applying it to the rows of W_q
    and W_k turns an interleaved-RoPE model into a half-RoPE model with the same scores:
    out[i] = x[2i], out[d/2 + i] = x[2i + 1] (llama.cpp's convert_hf_to_gguf.py permutes
    checkpoints the other way; GPT-NeoX, Black et al. 2022, uses the half layout).
    """
    _check_pairs(x)
    return x.unflatten(-1, (x.shape[-1] // 2, 2)).transpose(-1, -2).flatten(-2)


def half_to_interleaved(x: torch.Tensor) -> torch.Tensor:
    """Inverse of interleaved_to_half: [x0, x2, ..., x1, x3, ...] -> [x0, x1, x2, x3, ...]."""
    _check_pairs(x)
    return x.unflatten(-1, (2, x.shape[-1] // 2)).transpose(-1, -2).flatten(-2)


def rotation_2d(angle) -> torch.Tensor:
    """The 2x2 rotation [[cos a, -sin a], [sin a, cos a]] (counter-clockwise by a), float64.

    `angle` may be a number, a list of numbers or a real tensor (radians, finite); the result has
    shape angle.shape + (2, 2), on angle's device. RoFormer's 2D case (Su et al. 2021, eq. 13).
    """
    a = as_real_float64("angle", angle)
    c, s = a.cos(), a.sin()
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


def rotation_matrix(
    position: float,
    head_dim: int,
    base: float = 10000.0,
    *,
    inv_freq: torch.Tensor | None = None,
    layout: str = "interleaved",
) -> torch.Tensor:
    """The block-diagonal matrix R_m of RoFormer eq. 15, [head_dim, head_dim], float64.

    R_m x == apply_rope(x, m) for a vector x. In the interleaved layout the 2x2 blocks
    rotation_2d(m theta_i) sit on the diagonal; in the half layout the same entries sit at rows and
    columns (i, i + head_dim/2). position: a finite number (or a one-element tensor); inv_freq:
    [head_dim/2], default inv_frequencies(head_dim, base) computed in float64.
    """
    require_even("head_dim", head_dim)
    check_layout(layout)
    if isinstance(position, torch.Tensor):
        if position.numel() != 1:
            raise ValueError(
                _(
                    "position must be one number, got a tensor of shape "
                    "{position_shape}"
                ).format(position_shape=tuple(position.shape))
            )
        position = as_real_float64("position", position).item()
    position = require_number("position", position)
    if inv_freq is None:
        inv_freq = inv_frequencies(head_dim, base, dtype=torch.float64)
    else:
        require_tensor("inv_freq", inv_freq)
        inv_freq = check_inv_freq("inv_freq", inv_freq, head_dim // 2, inv_freq.device)
    blocks = rotation_2d(position * inv_freq.detach().to(torch.float64))
    matrix = torch.block_diag(*blocks)
    if layout == "half":
        order = interleaved_to_half(torch.arange(head_dim, device=matrix.device))
        matrix = matrix[order][:, order]
    return matrix


class RotaryEmbedding(nn.Module):
    """RoPE as a module with a cos/sin cache that grows on demand.

    A common write-up's `RoPE` module does this with two bugs, fixed here: the rotation is
    x'_a = x_a cos - x_b sin, x'_b = x_a sin + x_b cos (its docstring had x cos - x sin), and
    `positions` may be [seq] or [batch, seq] (its unsqueeze(0) broke the latter).

    forward(x, positions=None): x is [..., seq, head_dim]; positions defaults to 0 .. seq-1 and
    follows apply_rope's rule, by rank only ([seq] shared; [batch, seq] for x
    [batch, heads, seq, head_dim] one row per batch, whatever the sizes; anything else
    broadcast against x.shape[:-1]). It computes what apply_rope computes (RoFormer eq. 14-15,
    x'_a = x_a cos(m theta_i) - x_b sin(m theta_i), x'_b = x_a sin(m theta_i) + x_b cos(m theta_i)).
    Integer positions >= 0 read the cache (grown by doubling when a position is past its end);
    float or negative positions are computed directly. One cache per device and angle dtype (float32, or float64 for float64 x,
    from float64 frequencies); growing it swaps cos and sin together, so threads may share a
    module.
    """

    def __init__(
        self,
        head_dim: int,
        base: float = 10000.0,
        *,
        inv_freq: torch.Tensor | None = None,
        attention_factor: float = 1.0,
        layout: str = "interleaved",
        initial_cache: int = 256,
    ):
        super().__init__()
        require_even("head_dim", head_dim)
        base = require_positive_float("base", base)
        self.layout = check_layout(layout)
        self.attention_factor = require_positive_float(
            "attention_factor", attention_factor
        )
        self.initial_cache = require_positive_int("initial_cache", initial_cache)
        if inv_freq is None:
            inv_freq64 = pair_frequencies(head_dim, base, dtype=torch.float64)
            inv_freq = pair_frequencies(head_dim, base)
        else:
            require_tensor("inv_freq", inv_freq)
            inv_freq = check_inv_freq(
                "inv_freq", inv_freq, head_dim // 2, inv_freq.device
            ).detach()
            inv_freq64 = inv_freq.to(torch.float64)
        # Plain attributes, not buffers: module.to(torch.bfloat16) must not round the frequencies
        # or the cache (angles stay float32); the cache follows x to its device in forward.
        self.inv_freq = inv_freq.to(torch.float32)
        self._inv_freq64 = inv_freq64
        # (device, angle dtype) -> (cos, sin): a tuple replaced in one assignment
        self._cache: dict = {}
        self._table(self.initial_cache, self.inv_freq.device, torch.float32)

    @property
    def cached_positions(self) -> int:
        """How many positions the float32 cache on the frequencies' device holds."""
        cos, _ = self._cache.get((self.inv_freq.device, torch.float32), (None, None))
        return 0 if cos is None else cos.shape[0]

    def _frequencies(self, device, dtype) -> torch.Tensor:
        return (self._inv_freq64 if dtype == torch.float64 else self.inv_freq).to(
            device
        )

    def _table(self, needed: int, device, dtype):
        """(cos, sin) covering positions 0 .. needed-1 on `device` in `dtype`, grown if needed."""
        key = (torch.device(device), dtype)
        table = self._cache.get(key)  # one read: cos and sin always belong together
        if table is not None and table[0].shape[0] >= needed:
            return table
        have = 0 if table is None else table[0].shape[0]
        length = max(needed, 2 * have, self.initial_cache)
        table = rope_cos_sin(
            torch.arange(length, device=device),
            self._frequencies(device, dtype),
            dtype,
            self.attention_factor,
        )
        self._cache[key] = table
        return table

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        check_x(x)
        head_dim = 2 * self.inv_freq.shape[0]
        if x.shape[-1] != head_dim:
            raise ValueError(
                _(
                    "x.shape[-1] must be head_dim = {head_dim}, got {x_shape_last}"
                ).format(head_dim=head_dim, x_shape_last=x.shape[-1])
            )
        seq = x.shape[-2]
        if positions is None:
            positions = torch.arange(seq, device=x.device)
        positions = check_positions(positions, x)
        compute = angle_dtype(x.dtype)
        direct = (
            positions.is_floating_point()
            or x.device.type == "meta"
            or (positions.numel() and int(positions.min()) < 0)
        )
        if direct:
            cos, sin = rope_cos_sin(
                positions,
                self._frequencies(x.device, compute),
                compute,
                self.attention_factor,
            )
        else:
            needed = int(positions.max()) + 1 if positions.numel() else 0
            table_cos, table_sin = self._table(needed, x.device, compute)
            cos, sin = table_cos[positions], table_sin[positions]
        return _rotation_for(cos, sin)(x, cos, sin, self.layout)
