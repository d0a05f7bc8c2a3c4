"""Rotary position embedding (RoPE), real-valued.

RoFormer (Su et al., 2021, arXiv:2104.09864) rotates each pair of a query or key vector by an angle
proportional to the token's position m:

    theta_i = base ** (-2i / d)                        (one frequency per pair, i = 0 .. d/2 - 1)
    [x'_a]   [cos(m theta_i)  -sin(m theta_i)] [x_a]
    [x'_b] = [sin(m theta_i)   cos(m theta_i)] [x_b]

so that <R_m q, R_n k> = <q, R_(n-m) k> depends on the offset m - n only.

Two memory layouts name which coordinates (a, b) form pair i:
- "interleaved": (2i, 2i+1). Meta's LLaMA reference, GPT-J, RoFormer.
- "half":        (i, i + d/2). GPT-NeoX and Hugging Face's Llama (`rotate_half`).
They are the same rotation up to a fixed permutation of the coordinates (`interleaved_to_half`).
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    _describe,
    check_inv_freq,
    check_positions,
    require_even,
    require_float_tensor,
    require_int,
    require_number,
    require_positive_float,
    require_positive_int,
    require_tensor,
)
from ._checks import (
    as_real_float64 as _as_real_float64,
)

LAYOUTS = ("interleaved", "half")

# Size of one slab of x that _rotate works on at a time. A slab this size stays in the CPU's cache
# while its few elementwise operations run, so RoPE costs little more memory traffic than a copy.
_SLAB_BYTES = 1 << 20


def inv_frequencies(
    head_dim: int,
    base: float = 10000.0,
    *,
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor:
    """The RoPE frequencies theta_i = base ** (-2i / head_dim), i = 0 .. head_dim/2 - 1.

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
            f"dtype must be a floating-point torch.dtype, got {_describe(dtype)}"
        )
    work = torch.float64 if dtype == torch.float64 else torch.float32
    exponents = (
        torch.arange(0, head_dim, 2, dtype=torch.int64, device=device).to(work)
        / head_dim
    )
    return (1.0 / (base**exponents)).to(dtype)


_DEFAULT_INV_FREQ: dict = {}


def _default_inv_freq(
    head_dim: int, base, dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """inv_frequencies(head_dim, base, dtype=dtype, device=device), kept for the next call (a
    few small kernels less per apply_rope). Internal: callers must not modify the result."""
    base = require_positive_float("base", base)
    key = (head_dim, base, dtype, device)
    inv_freq = _DEFAULT_INV_FREQ.get(key)
    if inv_freq is None:
        inv_freq = inv_frequencies(head_dim, base, dtype=dtype, device=device)
        if len(_DEFAULT_INV_FREQ) > 64:
            _DEFAULT_INV_FREQ.clear()
        _DEFAULT_INV_FREQ[key] = inv_freq
    return inv_freq


def _angle_dtype(x_dtype: torch.dtype) -> torch.dtype:
    # Angles in float32 at least: bfloat16 has 8 bits of mantissa, so at position 1000 an angle
    # is only known to within about 4 radians. float64 inputs get float64 angles.
    return torch.float64 if x_dtype == torch.float64 else torch.float32


def rope_angles(
    positions: torch.Tensor, inv_freq: torch.Tensor, dtype=torch.float32
) -> torch.Tensor:
    """angles[..., i] = positions[...] * inv_freq[i], computed in `dtype` (float32 or float64),
    on positions' device."""
    return positions.to(dtype).unsqueeze(-1) * inv_freq.to(
        device=positions.device, dtype=dtype
    )


def _check_layout(layout: str) -> str:
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return layout


def _check_positions(positions, x: torch.Tensor) -> torch.Tensor:
    """The library's one rule for positions (see rope_lib._checks.check_positions)."""
    return check_positions(positions, x)


def _check_x(x, name: str = "x") -> torch.Tensor:
    require_float_tensor(name, x)
    if x.dim() < 2:
        raise ValueError(
            f"{name} must be [..., seq, head_dim] (at least 2 dimensions), got shape {tuple(x.shape)}"
        )
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim ({name}.shape[-1]) must be even, got {x.shape[-1]}")
    return x


def _as_pairs_of_complex(t: torch.Tensor) -> torch.Tensor:
    """t [..., d] viewed as complex [..., d/2]: the pair (2i, 2i+1) is 2i + i*(2i+1)."""
    return torch.view_as_complex(t.unflatten(-1, (t.shape[-1] // 2, 2)))


def _complex_viewable(t: torch.Tensor) -> bool:
    # view_as_complex needs unit stride in the last dimension and even strides and offset elsewhere
    return (
        t.stride(-1) == 1
        and t.storage_offset() % 2 == 0
        and all(st % 2 == 0 for st in t.stride()[:-1])
    )


def _rotate_kernel(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor:
    """Rotate the pairs of x by the angles whose cos and sin are given.

    cos, sin: [..., head_dim/2], broadcastable to x.shape[:-1] + (head_dim/2,), float32 or float64.
    The rotation runs in cos.dtype and the result is cast back to x.dtype.

        interleaved: (x_2i + i x_2i+1) * (cos + i sin), one complex multiplication per pair
        half:        out[:h] = x[:h] cos - x[h:] sin,  out[h:] = x[h:] cos + x[:h] sin

    Speed: a float32 interleaved rotation is one pass, written straight into the output. The
    other cases need a few elementwise passes (and a cast for low-precision x), so they go slab by
    slab along x's longest leading dimension, each slab small enough to stay in the CPU cache.
    """
    compute = cos.dtype
    half = x.shape[-1] // 2
    if layout == "interleaved" and not _complex_viewable(x):
        # a fresh copy: x.contiguous() would return x itself when only its offset is odd
        x = x.clone(memory_format=torch.contiguous_format)
    cos = cos.reshape((1,) * (x.dim() - cos.dim()) + tuple(cos.shape))
    sin = sin.reshape(cos.shape)
    out = torch.empty_like(x)

    if layout == "interleaved":
        cis = torch.complex(cos, sin)
        if x.dtype == compute:
            torch.mul(_as_pairs_of_complex(x), cis, out=_as_pairs_of_complex(out))
            return out

    dim = max(range(x.dim() - 1), key=lambda d: x.shape[d])
    bytes_per_step = x.numel() // max(x.shape[dim], 1) * cos.element_size()
    step = max(1, _SLAB_BYTES // max(bytes_per_step, 1))
    for start in range(0, x.shape[dim], step):
        x_slab = x.narrow(dim, start, min(step, x.shape[dim] - start))
        out_slab = out.narrow(dim, start, x_slab.shape[dim])

        def take(t):  # the angles for this slab (a broadcast dimension stays whole)
            return t if t.shape[dim] == 1 else t.narrow(dim, start, x_slab.shape[dim])

        xs = x_slab.to(compute)
        if layout == "interleaved":
            out_slab.copy_(
                torch.view_as_real(_as_pairs_of_complex(xs) * take(cis)).flatten(-2)
            )
            continue
        c, s = take(cos), take(sin)
        target = out_slab if x.dtype == compute else torch.empty_like(xs)
        x_a, x_b, out_a, out_b = (
            xs[..., :half],
            xs[..., half:],
            target[..., :half],
            target[..., half:],
        )
        torch.mul(x_a, c, out=out_a).addcmul_(x_b, s, value=-1)
        torch.mul(x_b, c, out=out_b).addcmul_(x_a, s)
        if target is not out_slab:
            out_slab.copy_(target)
    return out


class _Rotation(torch.autograd.Function):
    """Autograd for the rotation: the kernel writes into preallocated outputs, which autograd
    cannot trace, and the gradient of a rotation by theta is the rotation by -theta."""

    @staticmethod
    def forward(ctx, x, cos, sin, layout):
        ctx.save_for_backward(cos, sin)
        ctx.layout = layout
        return _rotate_kernel(x, cos, sin, layout)

    @staticmethod
    def backward(ctx, grad_out):
        cos, sin = ctx.saved_tensors
        return (
            _rotate_kernel(grad_out.contiguous(), cos, -sin, ctx.layout),
            None,
            None,
            None,
        )


def _rotate_autograd(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor:
    """The same rotation in plain differentiable operations: used when the angles need a gradient
    (an inv_freq, positions or attention factor that requires grad)."""
    xs = x.to(cos.dtype)
    half = x.shape[-1] // 2
    if layout == "interleaved":
        x_a, x_b = xs[..., 0::2], xs[..., 1::2]
        out = torch.stack(
            [x_a * cos - x_b * sin, x_b * cos + x_a * sin], dim=-1
        ).flatten(-2)
    else:
        x_a, x_b = xs[..., :half], xs[..., half:]
        out = torch.cat([x_a * cos - x_b * sin, x_b * cos + x_a * sin], dim=-1)
    return out.to(x.dtype)


def _rotate(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str
) -> torch.Tensor:
    """_rotate_kernel, differentiable in x, and in the angles when they require grad."""
    if torch.is_grad_enabled():
        if cos.requires_grad or sin.requires_grad:
            return _rotate_autograd(x, cos, sin, layout)
        if x.requires_grad:
            return _Rotation.apply(x, cos, sin, layout)
    return _rotate_kernel(x, cos, sin, layout)


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
    """Rotate every pair of x by positions * inv_freq (RoFormer, eq. 14-15).

    x:          [..., seq, head_dim], e.g. [batch, heads, seq, head_dim]; any float dtype, any
                device and strides (a slice, a transposed view, an odd storage offset).
    positions:  integer or real (fractional positions are how Position Interpolation works,
                m -> m / s), finite, on any device (moved to x's). Its shape:
                - [seq]: shared by every batch and head;
                - exactly x.dim() - 1 dimensions: broadcast against x.shape[:-1] as usual, e.g.
                  [batch, 1, seq] for per-batch positions of x [batch, heads, seq, head_dim];
                - between: e.g. [batch, seq] for x [batch, heads, seq, head_dim] is read
                  batch-first when only that fits, right-aligned (per head) when only that fits,
                  and refused (ValueError) when both fit, as when batch == heads: write
                  positions[:, None, :] for per-batch, positions[None] for per-head.
    inv_freq:   [head_dim/2] frequencies; default inv_frequencies(head_dim, base) (in float64
                for float64 x). Pass the first element of rope_frequencies(...) to use a scaled
                variant. A gradient flows to it when it requires one.
    layout:     "interleaved" pairs (2i, 2i+1); "half" pairs (i, i + head_dim/2).
    attention_factor: multiplies cos and sin (YaRN's sqrt(1/t)), so q.k gets its square.
    rotary_dim: rotate only the first rotary_dim coordinates of each head (an even
                int, 0 .. head_dim; default: all), in the given layout within them
                (half: pairs (i, i + rotary_dim/2)), and pass the rest through
                unchanged: partial rotary as GPT-NeoX, Phi and GLM do
                (r = int(head_dim * partial_rotary_factor)). inv_freq is then
                [rotary_dim/2], by default inv_frequencies(rotary_dim, base).

    Returns a tensor of x's shape, dtype and device. Angles are computed in float32 (float64,
    from float64 frequencies, for float64 x), as transformers and Meta's reference do, whatever
    the input dtype.
    """
    _check_x(x)
    _check_layout(layout)
    if rotary_dim is not None:
        rotary_dim = require_int("rotary_dim", rotary_dim)
        if rotary_dim % 2 or not 0 <= rotary_dim <= x.shape[-1]:
            raise ValueError(
                "rotary_dim must be an even number of coordinates between 0 and "
                f"head_dim = {x.shape[-1]}, got {rotary_dim}"
            )
        if rotary_dim == 0:  # nothing rotated: still check what came
            _check_positions(positions, x)
            require_positive_float("attention_factor", attention_factor)
            return x.clone()
        if rotary_dim < x.shape[-1]:
            rotated = apply_rope(
                x[..., :rotary_dim],
                positions,
                inv_freq=inv_freq,
                base=base,
                layout=layout,
                attention_factor=attention_factor,
            )
            return torch.cat([rotated, x[..., rotary_dim:]], dim=-1)
    positions = _check_positions(positions, x)
    attention_factor = require_positive_float("attention_factor", attention_factor)
    head_dim = x.shape[-1]
    compute = _angle_dtype(x.dtype)
    if inv_freq is None:
        inv_freq = _default_inv_freq(head_dim, base, compute, x.device)
    else:
        inv_freq = check_inv_freq("inv_freq", inv_freq, head_dim // 2, x.device)
    angles = rope_angles(positions, inv_freq, compute)
    cos, sin = angles.cos(), angles.sin()
    if attention_factor != 1.0:
        cos, sin = cos * attention_factor, sin * attention_factor
    return _rotate(x, cos, sin, layout)


def _check_pairs(x) -> torch.Tensor:
    require_tensor("x", x)
    if x.dim() < 1 or x.shape[-1] % 2:
        raise ValueError(
            f"x.shape[-1] must be even (pairs of coordinates), got shape {tuple(x.shape)}"
        )
    return x


def interleaved_to_half(x: torch.Tensor) -> torch.Tensor:
    """Reorder the last dimension from pairs (2i, 2i+1) to pairs (i, i + d/2).

    [x0, x1, x2, x3, ...] -> [x0, x2, x4, ..., x1, x3, x5, ...]. Applying it to the rows of W_q
    and W_k turns an interleaved-RoPE model into a half-RoPE model with the same scores.
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
    shape angle.shape + (2, 2), on angle's device.
    """
    a = _as_real_float64("angle", angle)
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
    _check_layout(layout)
    if isinstance(position, torch.Tensor):
        if position.numel() != 1:
            raise ValueError(
                f"position must be one number, got a tensor of shape {tuple(position.shape)}"
            )
        position = _as_real_float64("position", position).item()
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
    follows the same rule as apply_rope ([seq] shared; exactly x.dim() - 1 dimensions broadcast
    as usual; [batch, seq] for x [batch, heads, seq, head_dim] is per-batch, and refused as
    ambiguous when batch == heads: write positions[:, None, :]). Integer positions >= 0 read the
    cache (grown by doubling when a position is past its end); float or negative positions are
    computed directly. One cache per device and angle dtype (float32, or float64 for float64 x,
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
        self.layout = _check_layout(layout)
        self.attention_factor = require_positive_float(
            "attention_factor", attention_factor
        )
        self.initial_cache = require_positive_int("initial_cache", initial_cache)
        if inv_freq is None:
            inv_freq64 = inv_frequencies(head_dim, base, dtype=torch.float64)
            inv_freq = inv_frequencies(head_dim, base)
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
        angles = rope_angles(
            torch.arange(length, device=device), self._frequencies(device, dtype), dtype
        )
        table = (
            angles.cos() * self.attention_factor,
            angles.sin() * self.attention_factor,
        )
        self._cache[key] = table
        return table

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        _check_x(x)
        head_dim = 2 * self.inv_freq.shape[0]
        if x.shape[-1] != head_dim:
            raise ValueError(
                f"x.shape[-1] must be head_dim = {head_dim}, got {x.shape[-1]}"
            )
        seq = x.shape[-2]
        if positions is None:
            positions = torch.arange(seq, device=x.device)
        positions = _check_positions(positions, x)
        compute = _angle_dtype(x.dtype)
        direct = (
            positions.is_floating_point()
            or x.device.type == "meta"
            or (positions.numel() and int(positions.min()) < 0)
        )
        if direct:
            angles = rope_angles(
                positions, self._frequencies(x.device, compute), compute
            )
            cos, sin = angles.cos(), angles.sin()
            if self.attention_factor != 1.0:
                cos, sin = cos * self.attention_factor, sin * self.attention_factor
        else:
            needed = int(positions.max()) + 1 if positions.numel() else 0
            table_cos, table_sin = self._table(needed, x.device, compute)
            cos, sin = table_cos[positions], table_sin[positions]
        return _rotate(x, cos, sin, self.layout)
