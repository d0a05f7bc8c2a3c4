"""Rotary position embedding (RoPE), real-valued.

RoFormer (Su et al., 2021, arXiv:2104.09864) rotates each pair of a query or key vector by an angle
proportional to the token's position m:

    theta_i = base ** (-2i / d)                        (one frequency per pair, i = 0 .. d/2 - 1)
    [x'_a]   [cos(m theta_i)  -sin(m theta_i)] [x_a]
    [x'_b] = [sin(m theta_i)   cos(m theta_i)] [x_b]

so that <R_m q, R_n k> = <q, R_(n-m) k> depends on the offset m - n only.

Two memory layouts name which coordinates (a, b) form pair i:
- "interleaved": (2i, 2i+1). Meta's LLaMA reference, GPT-J, RoFormer and the seeds.
- "half":        (i, i + d/2). GPT-NeoX and Hugging Face's Llama (`rotate_half`).
They are the same rotation up to a fixed permutation of the coordinates (`interleaved_to_half`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import (
    require_even,
    require_float_dtype,
    require_positive_float,
    require_positive_int,
    require_tensor,
)

LAYOUTS = ("interleaved", "half")

# Size of one slab of x that _rotate works on at a time. A slab this size stays in the CPU's cache
# while its few elementwise operations run, so RoPE costs little more memory traffic than a copy.
_SLAB_BYTES = 1 << 20


def inv_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """The RoPE frequencies theta_i = base ** (-2i / head_dim), i = 0 .. head_dim/2 - 1 (float32).

    Pair 0 turns one radian per position (wavelength 2*pi tokens); the last pair turns about
    1/base radians per position. Computed as Hugging Face transformers and Meta's LLaMA do, in
    float32, so that results agree with theirs to the last bit.
    """
    require_even("head_dim", head_dim)
    base = require_positive_float("base", base)
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).to(torch.float32) / head_dim
    return 1.0 / (base**exponents)


def _angle_dtype(x_dtype: torch.dtype) -> torch.dtype:
    # Angles in float32 at least: bfloat16 has 8 bits of mantissa, so at position 1000 an angle
    # is only known to within about 4 radians. float64 inputs get float64 angles.
    return torch.float64 if x_dtype == torch.float64 else torch.float32


def rope_angles(positions: torch.Tensor, inv_freq: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """angles[..., i] = positions[...] * inv_freq[i], computed in `dtype` (float32 or float64)."""
    return positions.to(dtype).unsqueeze(-1) * inv_freq.to(dtype)


def _check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return layout


def _check_positions(positions, x: torch.Tensor) -> torch.Tensor:
    """positions must be [seq] or broadcastable to x.shape[:-1]; returns it as a tensor."""
    if not isinstance(positions, torch.Tensor):
        raise TypeError(f"positions must be a torch.Tensor, got {type(positions).__name__}")
    if positions.is_complex() or positions.dtype == torch.bool:
        raise TypeError(f"positions must hold integers or real numbers, got dtype {positions.dtype}")
    lead = x.shape[:-1]
    try:
        fits = torch.broadcast_shapes(positions.shape, lead) == lead
    except RuntimeError:
        fits = False
    if not fits:
        hint = ""
        if positions.dim() == 2 and x.dim() == 4 and positions.shape[0] == x.shape[0]:
            hint = " (for per-batch positions of x [batch, heads, seq, head_dim] pass positions[:, None, :])"
        raise ValueError(
            f"positions must have shape [seq] or be broadcastable to x.shape[:-1] = {tuple(lead)}, "
            f"got shape {tuple(positions.shape)}{hint}"
        )
    return positions


def _check_x(x) -> torch.Tensor:
    require_tensor("x", x)
    require_float_dtype("x", x)
    if x.dim() < 2:
        raise ValueError(f"x must be [..., seq, head_dim] (at least 2 dimensions), got shape {tuple(x.shape)}")
    if x.shape[-1] % 2:
        raise ValueError(f"head_dim (x.shape[-1]) must be even, got {x.shape[-1]}")
    return x


def _as_pairs_of_complex(t: torch.Tensor) -> torch.Tensor:
    """t [..., d] viewed as complex [..., d/2]: the pair (2i, 2i+1) is 2i + i*(2i+1)."""
    return torch.view_as_complex(t.unflatten(-1, (t.shape[-1] // 2, 2)))


def _complex_viewable(t: torch.Tensor) -> bool:
    # view_as_complex needs unit stride in the last dimension and even strides and offset elsewhere
    return t.stride(-1) == 1 and t.storage_offset() % 2 == 0 and all(st % 2 == 0 for st in t.stride()[:-1])


def _rotate_kernel(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
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
        x = x.contiguous()
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
            out_slab.copy_(torch.view_as_real(_as_pairs_of_complex(xs) * take(cis)).flatten(-2))
            continue
        c, s = take(cos), take(sin)
        target = out_slab if x.dtype == compute else torch.empty_like(xs)
        x_a, x_b, out_a, out_b = xs[..., :half], xs[..., half:], target[..., :half], target[..., half:]
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
        return _rotate_kernel(grad_out.contiguous(), cos, -sin, ctx.layout), None, None, None


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """_rotate_kernel, differentiable in x (the angles are constants)."""
    if torch.is_grad_enabled() and x.requires_grad:
        return _Rotation.apply(x, cos.detach(), sin.detach(), layout)
    return _rotate_kernel(x, cos, sin, layout)


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    *,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "interleaved",
    attention_factor: float = 1.0,
) -> torch.Tensor:
    """Rotate every pair of x by positions * inv_freq (RoFormer, eq. 14-15).

    x:          [..., seq, head_dim], e.g. [batch, heads, seq, head_dim]; any float dtype.
    positions:  [seq], or broadcastable to x.shape[:-1] (e.g. [batch, 1, seq] for per-batch
                positions). Integer or float: fractional positions are how Position
                Interpolation works (m -> m / s).
    inv_freq:   [head_dim/2] frequencies; default inv_frequencies(head_dim, base). Pass the
                first element of rope_frequencies(...) to use a scaled variant.
    layout:     "interleaved" pairs (2i, 2i+1); "half" pairs (i, i + head_dim/2).
    attention_factor: multiplies cos and sin (YaRN's sqrt(1/t)), so q.k gets its square.

    Returns a tensor of x's shape and dtype. Angles are computed in float32 (float64 for float64
    x), as transformers and Meta's reference do, whatever the input dtype.
    """
    _check_x(x)
    _check_layout(layout)
    positions = _check_positions(positions, x)
    attention_factor = require_positive_float("attention_factor", attention_factor)
    head_dim = x.shape[-1]
    if inv_freq is None:
        inv_freq = inv_frequencies(head_dim, base)
    else:
        require_tensor("inv_freq", inv_freq)
        if inv_freq.shape != (head_dim // 2,):
            raise ValueError(
                f"inv_freq must have shape [head_dim/2] = [{head_dim // 2}], got {tuple(inv_freq.shape)}"
            )
    angles = rope_angles(positions, inv_freq, _angle_dtype(x.dtype))
    cos, sin = angles.cos(), angles.sin()
    if attention_factor != 1.0:
        cos, sin = cos * attention_factor, sin * attention_factor
    return _rotate(x, cos, sin, layout)


def _check_pairs(x) -> torch.Tensor:
    require_tensor("x", x)
    if x.dim() < 1 or x.shape[-1] % 2:
        raise ValueError(f"x.shape[-1] must be even (pairs of coordinates), got shape {tuple(x.shape)}")
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

    `angle` may be a number or a tensor; the result has shape angle.shape + (2, 2).
    """
    a = torch.as_tensor(angle, dtype=torch.float64)
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
    columns (i, i + head_dim/2).
    """
    require_even("head_dim", head_dim)
    _check_layout(layout)
    if inv_freq is None:
        inv_freq = inv_frequencies(head_dim, base)
    blocks = rotation_2d(float(position) * inv_freq.to(torch.float64))
    matrix = torch.block_diag(*blocks)
    if layout == "half":
        order = interleaved_to_half(torch.arange(head_dim))
        matrix = matrix[order][:, order]
    return matrix


class RotaryEmbedding(nn.Module):
    """RoPE as a module with a cos/sin cache that grows on demand.

    What seed 001's `RoPE` module set out to do, with its two bugs fixed: the rotation is
    x'_a = x_a cos - x_b sin, x'_b = x_a sin + x_b cos (the seed's docstring had x cos - x sin),
    and `positions` may be [seq] or [batch, seq] (the seed's unsqueeze(0) broke the latter).

    forward(x, positions=None): x is [..., seq, head_dim] with the batch first when positions is
    [batch, seq]; positions defaults to 0 .. seq-1. Integer positions read the cache (grown by
    doubling when a position is past its end); float positions are computed directly.
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
        self.layout = _check_layout(layout)
        self.attention_factor = require_positive_float("attention_factor", attention_factor)
        require_positive_int("initial_cache", initial_cache)
        if inv_freq is None:
            inv_freq = inv_frequencies(head_dim, base)
        # Plain attributes, not buffers: module.to(torch.bfloat16) must not round the frequencies
        # or the cache (angles stay float32); the cache follows x to its device in forward.
        self.inv_freq = inv_freq.detach().to(torch.float32)
        self._grow(initial_cache, self.inv_freq.device)

    @property
    def cached_positions(self) -> int:
        return self.cos_cached.shape[0]

    def _grow(self, length: int, device) -> None:
        self.inv_freq = self.inv_freq.to(device)
        angles = rope_angles(torch.arange(length, device=device), self.inv_freq)
        self.cos_cached = angles.cos() * self.attention_factor
        self.sin_cached = angles.sin() * self.attention_factor

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        _check_x(x)
        if x.shape[-1] != 2 * self.inv_freq.shape[0]:
            raise ValueError(f"x.shape[-1] must be head_dim = {2 * self.inv_freq.shape[0]}, got {x.shape[-1]}")
        seq = x.shape[-2]
        if positions is None:
            positions = torch.arange(seq, device=x.device)
        require_tensor("positions", positions)
        if positions.dim() == 2:  # [batch, seq]: line the batch up with x's first dimension
            if positions.shape[0] not in (1, x.shape[0]) or positions.shape[1] != seq or x.dim() < 3:
                raise ValueError(
                    f"positions of shape [batch, seq] must match x's batch and seq, "
                    f"x.shape = {tuple(x.shape)}, got positions of shape {tuple(positions.shape)}"
                )
            positions = positions.reshape(positions.shape[0], *([1] * (x.dim() - 3)), seq)
        positions = _check_positions(positions, x)
        if positions.is_floating_point():
            angles = rope_angles(positions, self.inv_freq.to(x.device), _angle_dtype(x.dtype))
            cos, sin = angles.cos() * self.attention_factor, angles.sin() * self.attention_factor
        else:
            if positions.numel() and int(positions.min()) < 0:
                raise ValueError(f"integer positions must be >= 0, got minimum {int(positions.min())}")
            needed = int(positions.max()) + 1 if positions.numel() else 0
            if needed > self.cached_positions or self.cos_cached.device != x.device:
                self._grow(max(needed, 2 * self.cached_positions), x.device)
            cos, sin = self.cos_cached[positions], self.sin_cached[positions]
            if x.dtype == torch.float64:
                cos, sin = cos.double(), sin.double()
        return _rotate(x, cos, sin, self.layout)
