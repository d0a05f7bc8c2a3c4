"""The fast path of rotary.apply_rope: rotate_pairs' 2x2 rotation, arranged for memory traffic.

rotate_pairs states the rotation in three lines; written that way, a float32 x costs a stack (or
a cat) and a cast per call, and a low-precision x is cast whole before and after. This module
computes the same numbers with less memory traffic: bit for bit in the interleaved layout; in
the half layout addcmul_ may fuse a product into the sum (one rounding fewer), so an element
may differ by a few units in the last place (tests/lib/test_fast_rotation.py states the bound).
benchmarks/bench_rope.py times it against the three lines and against Meta's and
transformers' reference code:

- interleaved, float32: pair (2i, 2i+1) read as the complex number x_2i + i x_2i+1 and
  multiplied by cos + i sin in one pass, straight into the output (Meta's form);
- every other case: slab by slab along x's longest leading dimension, each slab small enough
  (_SLAB_BYTES) to stay in the CPU's cache while its few elementwise operations and casts run.

The kernel writes into preallocated outputs, which autograd cannot trace, so a gradient for x
goes through _Rotation (the gradient of a rotation by theta is the rotation by -theta).
"""

from __future__ import annotations

import torch

# Size of one slab of x worked on at a time: it stays in the CPU's cache while the elementwise
# operations run, so RoPE costs little more memory traffic than a copy.
_SLAB_BYTES = 1 << 20


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


def _rotate_slab(xs, cos, sin, cis, out_slab, layout, x_dtype):
    """One slab: xs (already in the angle dtype) rotated into out_slab."""
    if layout == "interleaved":
        out_slab.copy_(torch.view_as_real(_as_pairs_of_complex(xs) * cis).flatten(-2))
        return
    half = xs.shape[-1] // 2
    target = out_slab if x_dtype == xs.dtype else torch.empty_like(xs)
    x_a, x_b = xs[..., :half], xs[..., half:]
    torch.mul(x_a, cos, out=target[..., :half]).addcmul_(x_b, sin, value=-1)
    torch.mul(x_b, cos, out=target[..., half:]).addcmul_(x_a, sin)
    if target is not out_slab:
        out_slab.copy_(target)


def _rotate_kernel(x, cos, sin, layout: str) -> torch.Tensor:
    """x's pairs rotated by (cos, sin) [..., head_dim/2] (broadcastable), computed in cos.dtype
    and returned in x.dtype."""
    compute = cos.dtype
    if layout == "interleaved" and not _complex_viewable(x):
        # a fresh copy: x.contiguous() would return x itself when only its offset is odd
        x = x.clone(memory_format=torch.contiguous_format)
    cos = cos.reshape((1,) * (x.dim() - cos.dim()) + tuple(cos.shape))
    sin = sin.reshape(cos.shape)
    out = torch.empty_like(x)
    cis = torch.complex(cos, sin) if layout == "interleaved" else None
    if cis is not None and x.dtype == compute:  # one pass, no slabs needed
        torch.mul(_as_pairs_of_complex(x), cis, out=_as_pairs_of_complex(out))
        return out

    dim = max(range(x.dim() - 1), key=lambda d: x.shape[d])
    bytes_per_step = x.numel() // max(x.shape[dim], 1) * cos.element_size()
    step = max(1, _SLAB_BYTES // max(bytes_per_step, 1))
    for start in range(0, x.shape[dim], step):
        length = min(step, x.shape[dim] - start)

        def take(t):  # this slab's angles (a broadcast dimension stays whole)
            return t if t is None or t.shape[dim] == 1 else t.narrow(dim, start, length)

        _rotate_slab(
            x.narrow(dim, start, length).to(compute),
            take(cos),
            take(sin),
            take(cis),
            out.narrow(dim, start, length),
            layout,
            x.dtype,
        )
    return out


class _Rotation(torch.autograd.Function):
    """Autograd for the kernel: the gradient of a rotation by theta is the rotation by -theta."""

    @staticmethod
    def forward(ctx, x, cos, sin, layout):
        ctx.save_for_backward(cos, sin)
        ctx.layout = layout
        return _rotate_kernel(x, cos, sin, layout)

    @staticmethod
    def backward(ctx, grad_out):
        cos, sin = ctx.saved_tensors
        grad_x = _rotate_kernel(grad_out.contiguous(), cos, -sin, ctx.layout)
        return grad_x, None, None, None


def rotate_fast(x, cos, sin, layout: str) -> torch.Tensor:
    """rotary.rotate_pairs(x, cos, sin, layout) for angles that need no gradient (x may need
    one)."""
    if torch.is_grad_enabled() and x.requires_grad:
        return _Rotation.apply(x, cos, sin, layout)
    return _rotate_kernel(x, cos, sin, layout)
