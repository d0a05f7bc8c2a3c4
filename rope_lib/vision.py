"""2D axial RoPE for image patches (vision transformers).

A patch at row h and column w has two coordinates. 2D axial RoPE gives half of the head's
pairs to h and half to w and rotates each by its own coordinate (apply_axial_rope):

    angle_i = h * phi_i   for the pairs of the row axis,
    angle_i = w * phi_i   for the pairs of the column axis,

so the score between two patches depends on their offset (dh, dw) only. Models differ in the
frequencies phi_i, in which pairs go to which axis, and in what a coordinate is:

    "pixtral"   (Mistral's Pixtral-12B vision encoder): theta_j = base ** (-2j/d) for
                j < d/2, rows get the even ones theta_0, theta_2, ... (pairs 0 .. d/4-1),
                columns the odd ones theta_1, theta_3, ... (pairs d/4 .. d/2-1); integer
                (row, column); base 10000.
    "qwen2_vl"  (Qwen2-VL / Qwen2.5-VL vision tower): both axes get base ** (-4j/d),
                j < d/4, rows on pairs 0 .. d/4-1, columns on the rest; integer
                (row, column); base 10000.
    "dinov3"    (Meta's DINOv3, Simeoni et al. 2025): the same split and frequencies as
                qwen2_vl, but a coordinate is the patch centre scaled to [-1, 1] (whatever
                the image size) and the frequencies count turns per unit:
                phi_j = 2 pi base ** (-4j/d); base 100. Class and register tokens in front
                of the patches are not rotated.

All three use the half layout (pairs (i, i + d/2)) in Hugging Face transformers.
"""

from __future__ import annotations

import math

import torch

from ._checks import (
    describe,
    require_float_tensor,
    require_int,
    require_positive_float,
    require_positive_int,
    require_real_tensor,
)
from .language import _
from .multimodal import axial_rope
from .rotary import angle_dtype, pair_frequencies

VISION_CONVENTIONS = ("pixtral", "qwen2_vl", "dinov3")
VISION_BASES = {"pixtral": 10000.0, "qwen2_vl": 10000.0, "dinov3": 100.0}


def _check_convention(convention) -> str:
    if not isinstance(convention, str) or convention not in VISION_CONVENTIONS:
        raise ValueError(
            _(
                "convention must be one of {vision_conventions}, got {convention!r}"
            ).format(vision_conventions=VISION_CONVENTIONS, convention=convention)
        )
    return convention


def _check_head_dim(head_dim) -> int:
    head_dim = require_positive_int("head_dim", head_dim)
    if head_dim % 4:
        raise ValueError(
            _(
                "head_dim must be a multiple of 4 (2D RoPE gives d/4 pairs to each "
                "axis), got {head_dim}"
            ).format(head_dim=head_dim)
        )
    return head_dim


def axial_frequencies(
    head_dim: int,
    base: float | None = None,
    convention: str = "pixtral",
    *,
    dtype: torch.dtype = torch.float32,
):
    """(inv_freq [head_dim/2], pair_axes [head_dim/2] int64) of a 2D RoPE convention.

    pair_axes[i] is 0 when pair i follows the row (h), 1 for the column (w); inv_freq[i] is
    its frequency in radians per unit of position (phi_i, module docstring). base: None for
    the convention's own (VISION_BASES). float32 by default, with the same operations as
    transformers' PixtralVisionRotaryEmbedding, Qwen2VLVisionRotaryEmbedding and
    DINOv3ViTRopePositionEmbedding (DINOv3's factor 2 pi is folded in here);
    dtype=torch.float64 computes in float64 throughout.
    """
    convention = _check_convention(convention)
    head_dim = _check_head_dim(head_dim)
    base = (
        VISION_BASES[convention]
        if base is None
        else require_positive_float("base", base)
    )
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(
            _("dtype must be torch.float32 or torch.float64, got {got}").format(
                got=describe(dtype)
            )
        )
    quarter = head_dim // 4
    if convention == "pixtral":
        theta = pair_frequencies(head_dim, base, dtype=dtype)
        inv_freq = torch.cat([theta[0::2], theta[1::2]])
    elif convention == "qwen2_vl":  # base ** (-4j/d): each axis as a head of width d/2
        per_axis = pair_frequencies(head_dim // 2, base, dtype=dtype)
        inv_freq = torch.cat([per_axis, per_axis])
    else:
        if dtype == torch.float32:  # DINOv3's own expression, bit for bit
            exponents = torch.arange(0, 1, 4 / head_dim, dtype=torch.float32)[:quarter]
        else:
            exponents = torch.arange(quarter, dtype=dtype) * 4 / head_dim
        per_axis = 1 / base**exponents
        inv_freq = 2 * math.pi * torch.cat([per_axis, per_axis])
    axes = torch.arange(2).repeat_interleave(quarter)
    return inv_freq, axes


def patch_positions(
    n_rows: int,
    n_cols: int,
    convention: str = "pixtral",
    *,
    merge_size: int = 1,
    device=None,
):
    """The 2D positions (h, w) of an n_rows x n_cols patch grid, [2, n_rows * n_cols], rows
    (h) then columns (w), patches in row-major order (as Pixtral and DINOv3 flatten them).

    "pixtral", "qwen2_vl": integer (row, column), int64. merge_size (qwen2_vl only): list
    the patches window by window, merge_size x merge_size patches at a time, as Qwen2-VL's
    vision tower does before merging them (2 in Qwen2-VL; the ids of a patch stay the same).
    "dinov3": patch centres (row + 1/2) / n_rows and (column + 1/2) / n_cols mapped to
    [-1, 1], float32, as DINOv3's get_patches_center_coordinates (no training-time
    augmentation).
    """
    convention = _check_convention(convention)
    n_rows = require_positive_int("n_rows", n_rows)
    n_cols = require_positive_int("n_cols", n_cols)
    if convention == "dinov3":
        rows = torch.arange(0.5, n_rows, dtype=torch.float32, device=device) / n_rows
        cols = torch.arange(0.5, n_cols, dtype=torch.float32, device=device) / n_cols
        grid = torch.stack(torch.meshgrid(rows, cols, indexing="ij"), dim=0).reshape(
            2, -1
        )
        return 2.0 * grid - 1.0
    merge = require_positive_int("merge_size", merge_size)
    if merge != 1 and convention != "qwen2_vl":
        raise ValueError(
            _("merge_size must be 1 for convention {convention!r}, got {merge}").format(
                convention=convention, merge=merge
            )
        )
    if n_rows % merge or n_cols % merge:
        raise ValueError(
            _(
                "n_rows and n_cols must be multiples of merge_size = {merge}, got "
                "{n_rows} x {n_cols}"
            ).format(merge=merge, n_rows=n_rows, n_cols=n_cols)
        )
    rows = torch.arange(n_rows, device=device)
    cols = torch.arange(n_cols, device=device)
    grid = torch.stack(torch.meshgrid(rows, cols, indexing="ij"), dim=0)
    blocks = grid.reshape(2, n_rows // merge, merge, n_cols // merge, merge).transpose(
        2, 3
    )
    return blocks.reshape(2, -1)


def apply_2d_rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    *,
    convention: str = "pixtral",
    base: float | None = None,
    layout: str = "half",
    n_prefix_tokens: int = 0,
) -> torch.Tensor:
    """2D axial RoPE of image patches: rotate the row pairs by h and the column pairs by w,

        angle_i = h * phi_i (row pairs),   angle_i = w * phi_i (column pairs)

    (Heo et al. 2024, arXiv:2403.13298; the conventions in the module docstring).

    x:          [..., seq, head_dim], head_dim a multiple of 4; seq = n_prefix_tokens +
                number of patches.
    positions:  [2, ...]: rows h and w of each patch, each [n_patches] or broadcastable to
                x[..., n_prefix_tokens:, :].shape[:-1]; patch_positions builds them.
    convention: "pixtral", "qwen2_vl" or "dinov3" (see the module docstring);
    base:       None for the convention's own (10000, 10000, 100).
    layout:     "half" (as transformers) or "interleaved".
    n_prefix_tokens: tokens in front of the patches that keep no position (DINOv3's class
                token and registers: 1 + num_register_tokens); they pass through unchanged.

    Matches transformers' Pixtral, Qwen2-VL vision and DINOv3 rotary embeddings with their
    apply_rotary_pos_emb. Returns a tensor of x's shape, dtype and device.
    """
    require_float_tensor("x", x)
    if x.dim() < 2:
        raise ValueError(
            _("x must be [..., seq, head_dim], got shape {x_shape}").format(
                x_shape=tuple(x.shape)
            )
        )
    convention = _check_convention(convention)
    inv_freq, axes = axial_frequencies(
        x.shape[-1], base, convention, dtype=angle_dtype(x.dtype)
    )
    n_prefix = require_int("n_prefix_tokens", n_prefix_tokens)
    if not 0 <= n_prefix <= x.shape[-2]:
        raise ValueError(
            _(
                "n_prefix_tokens must be between 0 and seq = {x_shape_seq}, got "
                "{n_prefix}"
            ).format(x_shape_seq=x.shape[-2], n_prefix=n_prefix)
        )
    require_real_tensor("positions", positions)
    if positions.dim() < 2 or positions.shape[0] != 2:
        raise ValueError(
            _(
                "positions must be [2, ...] (rows h and w), got shape {positions_shape}"
            ).format(positions_shape=tuple(positions.shape))
        )
    patches = x[..., n_prefix:, :]
    rotated = axial_rope(patches, positions, axes, inv_freq, None, layout, 1.0)
    if n_prefix == 0:
        return rotated
    return torch.cat([x[..., :n_prefix, :], rotated], dim=-2)
