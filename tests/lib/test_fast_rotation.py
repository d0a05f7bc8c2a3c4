"""The fast path (rope_lib._fast_rotation.rotate_fast) against the plain three lines
(rope_lib.rotary.rotate_pairs): the claim of their docstrings, in both layouts and three dtypes,
on contiguous and non-contiguous inputs, forward and backward.

Tolerances:
- "interleaved": bit for bit. The kernel multiplies complex numbers, which ATen computes as
  x_a cos - x_b sin and x_a sin + x_b cos with one rounding per product and one per sum, as
  the three lines do.
- "half": the kernel's addcmul_ may fuse the second product into the sum (a fused multiply-add
  on CPUs that have one), which skips one rounding. With unit roundoff u (2^-24 for float32,
  2^-53 for float64), p = x_a cos and q = x_b sin, the plain result is fl(fl(p) - fl(q)) and
  the fused one fl(fl(p) - q): they differ by at most u|q| before the last rounding and by u
  times each result after it, so by at most 3u (|p| + |q|) <= 3u (|x_a| + |x_b|) for
  |cos|, |sin| <= 1 (the same for the second coordinate). bfloat16 x is rotated in float32
  and rounded once at the end (unit roundoff 2^-8): the float32 bound, plus 2^-8 times each
  result's magnitude.
"""

from __future__ import annotations

import pytest
import torch

from rope_lib._fast_rotation import rotate_fast
from rope_lib.rotary import _pairs, inv_frequencies, rope_cos_sin, rotate_pairs

DTYPES = [torch.float32, torch.bfloat16, torch.float64]
LAYOUTS = ["interleaved", "half"]
UNIT_ROUNDOFF = {
    torch.float32: 2.0**-24,
    torch.float64: 2.0**-53,
    torch.bfloat16: 2.0**-8,
}


def _inputs(kind: str, dtype: torch.dtype) -> torch.Tensor:
    """x [batch, heads, seq, head_dim] of one memory arrangement."""
    shape = (2, 3, 40, 16)
    torch.manual_seed(0)
    if kind == "contiguous":
        return torch.randn(shape, dtype=torch.float64).to(dtype)
    if kind == "transposed":  # [batch, seq, heads, d] seen as [batch, heads, seq, d]
        return torch.randn(2, 40, 3, 16, dtype=torch.float64).to(dtype).transpose(1, 2)
    if kind == "odd offset":  # storage offset 1: no complex view of the pairs
        flat = torch.randn(1 + 2 * 3 * 40 * 16, dtype=torch.float64).to(dtype)
        return flat[1:].view(shape)
    if kind == "sliced":  # every other sequence row, a window of the last dimension
        wide = torch.randn(2, 3, 80, 20, dtype=torch.float64).to(dtype)
        return wide[:, :, ::2, 2:18]
    # large enough for the slab loop to take several slabs
    return torch.randn(2, 8, 600, 128, dtype=torch.float64).to(dtype)


def _cos_sin(x: torch.Tensor):
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = inv_frequencies(x.shape[-1], dtype=compute)
    positions = torch.arange(x.shape[-2]) * 37  # angles far past 2 pi
    return rope_cos_sin(positions, inv_freq, compute)


def _bound(x, fast, plain, layout) -> torch.Tensor:
    """The largest difference the half layout's fused kernel may show (module docstring)."""
    x_a, x_b = _pairs(x.to(torch.float64).abs(), layout)
    size = x_a + x_b
    bound = 3 * UNIT_ROUNDOFF[torch.float32] * torch.cat([size, size], dim=-1)
    if x.dtype == torch.float64:
        return bound * UNIT_ROUNDOFF[torch.float64] / UNIT_ROUNDOFF[torch.float32]
    if x.dtype == torch.bfloat16:
        magnitude = fast.to(torch.float64).abs() + plain.to(torch.float64).abs()
        bound = bound + UNIT_ROUNDOFF[torch.bfloat16] * magnitude
    return bound


def _assert_same_rotation(fast, plain, x, layout):
    assert fast.dtype == plain.dtype == x.dtype and fast.shape == plain.shape == x.shape
    if layout == "interleaved":
        assert torch.equal(fast, plain)
        return
    difference = (fast.to(torch.float64) - plain.to(torch.float64)).abs()
    excess = difference - _bound(x, fast, plain, layout)
    assert excess.max().item() <= 0, excess.max().item()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "kind", ["contiguous", "transposed", "odd offset", "sliced", "several slabs"]
)
def test_fast_rotation_gives_the_plain_rotations_numbers(dtype, layout, kind):
    x = _inputs(kind, dtype)
    cos, sin = _cos_sin(x)
    fast = rotate_fast(x, cos, sin, layout)
    plain = rotate_pairs(x, cos, sin, layout)
    _assert_same_rotation(fast, plain, x, layout)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_fast_rotations_gradient_is_the_plain_rotations(dtype, layout):
    """The kernel's backward (a rotation by -theta) against autograd through the three lines."""
    x = _inputs("transposed", dtype)
    cos, sin = _cos_sin(x)
    grad_out = _inputs("sliced", dtype)
    grads = []
    for rotate in (rotate_fast, rotate_pairs):
        leaf = x.detach().requires_grad_(True)
        rotate(leaf, cos, sin, layout).backward(grad_out)
        grads.append(leaf.grad)
    # the gradient is grad_out rotated by -theta: the same bound, read on grad_out
    _assert_same_rotation(grads[0], grads[1], grad_out, layout)


def test_apply_rope_takes_the_plain_rotation_when_the_angles_need_a_gradient():
    import rope_lib

    x = _inputs("contiguous", torch.float32)
    inv_freq = inv_frequencies(16).requires_grad_(True)
    out = rope_lib.apply_rope(x, torch.arange(40), inv_freq=inv_freq, layout="half")
    out.sum().backward()
    assert inv_freq.grad is not None and inv_freq.grad.abs().sum() > 0
    cos, sin = rope_cos_sin(torch.arange(40), inv_freq.detach())
    assert torch.equal(out.detach(), rotate_pairs(x, cos, sin, "half"))
