"""RoPE in complex numbers, with the contract of Meta's LLaMA reference (llama/model.py).

Each pair (x_2i, x_2i+1) is read as the complex number z = x_2i + i x_2i+1; rotating it by the
angle m theta_i is one multiplication by e^{i m theta_i} (Euler: cos + i sin). For two such
numbers, Re[(q e^{im theta}) conj(k e^{in theta})] = Re[q conj(k) e^{i(m-n) theta}], the score
depends on m - n only (RoFormer, Su et al. 2021, section 3.2).
"""

from __future__ import annotations

import torch

from ._checks import (
    check_x,
    require_even,
    require_finite,
    require_positive_float,
    require_positive_int,
    require_same_device,
    require_tensor,
)
from .language import _
from .rotary import pair_frequencies, rope_angles


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0) -> torch.Tensor:
    """e^{i t theta_k} for t = 0 .. end-1 and k = 0 .. dim/2-1: complex64 [end, dim/2].

    theta_k = theta ** (-2k / dim); computed as Meta's reference does (float32 angles, then
    torch.polar with modulus 1). dim: even int >= 2; end: int >= 0; theta: finite number > 0.
    """
    require_even("dim", dim)
    end = require_positive_int("end", end, minimum=0)
    theta = require_positive_float("theta", theta)
    angles = rope_angles(torch.arange(end), pair_frequencies(dim, theta))
    return torch.polar(torch.ones_like(angles), angles)


def apply_rotary_emb(xq: torch.Tensor, xk: torch.Tensor, freqs_cis: torch.Tensor):
    """Rotate queries and keys by freqs_cis, as Meta's LLaMA `apply_rotary_emb` (Touvron et al.
    2023; RoFormer, Su et al. 2021, section 3.2):

        (x_2i + i x_2i+1) * e^{i m theta_i}   for every pair of every head

    xq: [batch, seq, n_heads, head_dim]; xk: [batch, seq, n_kv_heads, head_dim] (grouped-query
    attention: fewer key heads is fine); freqs_cis: complex [seq, head_dim/2], usually
    precompute_freqs_cis(head_dim, max_len)[start:start + seq]. Returns (xq_out, xk_out) with the
    shapes and dtypes of xq and xk; pairs are interleaved, (2i, 2i+1). Any float dtype, strides
    and device (freqs_cis follows each of them); complex128 freqs_cis gives a float64 rotation.
    """
    for name, x in (("xq", xq), ("xk", xk)):
        check_x(x, name)
        if x.dim() != 4:
            raise ValueError(
                _(
                    "{name} must be [batch, seq, heads, head_dim], got shape {x_shape}"
                ).format(name=name, x_shape=tuple(x.shape))
            )
    require_tensor("freqs_cis", freqs_cis)
    if xk.shape[:2] != xq.shape[:2] or xk.shape[-1] != xq.shape[-1]:
        raise ValueError(
            _(
                "xk must share batch, seq and head_dim with xq {xq_shape}, got "
                "{xk_shape}"
            ).format(xq_shape=tuple(xq.shape), xk_shape=tuple(xk.shape))
        )
    seq, head_dim = xq.shape[1], xq.shape[-1]
    if not freqs_cis.is_complex() or freqs_cis.shape != (seq, head_dim // 2):
        raise ValueError(
            _(
                "freqs_cis must be complex [seq, head_dim/2] = [{seq}, {value}], "
                "got {freqs_cis_dtype} {freqs_cis_shape}"
            ).format(
                seq=seq,
                value=head_dim // 2,
                freqs_cis_dtype=freqs_cis.dtype,
                freqs_cis_shape=tuple(freqs_cis.shape),
            )
        )
    require_finite("freqs_cis", torch.view_as_real(freqs_cis.resolve_conj()))
    return tuple(
        _times_cis(x, require_same_device("freqs_cis", freqs_cis, x.device))
        for x in (xq, xk)
    )


def _times_cis(x: torch.Tensor, freqs_cis: torch.Tensor) -> torch.Tensor:
    """Meta's three lines: each pair as a complex number, one multiplication by
    e^{i m theta_i}, and back to pairs. The product runs in freqs_cis's precision (float32
    parts for complex64, as Meta's `.float()`; float64 parts for complex128); the result
    has x's dtype (Meta's `type_as`)."""
    real = torch.float64 if freqs_cis.dtype == torch.complex128 else torch.float32
    pairs = x.to(real).reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
    if not pairs.is_contiguous() or pairs.storage_offset() % 2:
        pairs = pairs.clone(
            memory_format=torch.contiguous_format
        )  # view_as_complex's rule
    # [seq, head_dim/2] -> [1, seq, 1, head_dim/2], Meta's reshape_for_broadcast
    cis = freqs_cis.resolve_conj().to(pairs.dtype.to_complex())[None, :, None, :]
    return torch.view_as_real(torch.view_as_complex(pairs) * cis).flatten(3).to(x.dtype)
