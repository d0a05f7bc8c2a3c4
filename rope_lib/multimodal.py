"""RoPE over positions with several axes: multimodal RoPE (M-RoPE) for text, images and video.

A text token has one position m. An image patch has two (its row h and column w), a video
patch three (its frame t, h and w). Axial RoPE gives every pair i of the head one axis a(i)
and turns it by that coordinate:

    angle_i = p[a(i)] * theta_i            theta_i = base ** (-2i/d), p = (t, h, w)

Each axis then behaves as an ordinary RoPE on its own pairs, so the score of a query at p and
a key at p' depends on the offset p - p' only, axis by axis.

M-RoPE (Qwen2-VL, Wang et al. 2024, arXiv:2409.12191) splits the d/2 pairs by
`mrope_section` = [s_t, s_h, s_w] (s_t + s_h + s_w = d/2):
- contiguous (Qwen2-VL, Qwen2.5-VL): pairs 0 .. s_t-1 follow t, the next s_h follow h, the
  last s_w follow w; the slowest pairs therefore all belong to w;
- interleaved (Qwen3-VL): pair i follows h when i % 3 == 1 and i < 3 s_h, w when
  i % 3 == 2 and i < 3 s_w, t otherwise: t, h, w, t, h, w, ..., t, t. Every axis gets fast
  and slow pairs.
A text token has t = h = w = m, which makes M-RoPE on text exactly the ordinary 1D RoPE.

Position ids (Qwen2-VL's get_rope_index): text tokens count up from 0; an image or video of
grid (T, H, W) (after merging patches) starting at position s gets
t = s + grid step * time_interval, h = s + row, w = s + column. The text after it continues
at the largest id so far + 1 in Qwen's reference code (transformers 4.x get_rope_index, the
rule the checkpoints were released with: mrope_position_ids' default, rule="qwen"), and at
s + max(H, W) in transformers 5 (rule="transformers5"). The two agree after an image; after
a video whose time ids pass s + max(H, W), transformers 5 gives the text ids its frames
already used.
"""

from __future__ import annotations

import numbers
import warnings

import torch

from ._checks import (
    check_inv_freq,
    check_layout,
    check_positions,
    check_x,
    describe,
    require_int,
    require_positive_float,
    require_positive_int,
    require_real_tensor,
    require_same_device,
)
from .language import _
from .rotary import (
    _rotation_for,
    angle_dtype,
    pair_frequencies,
    rope_angles,
    rope_cos_sin,
)

MROPE_AXES = ("t", "h", "w")


def apply_axial_rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    pair_axes: torch.Tensor,
    *,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "half",
    attention_factor: float = 1.0,
) -> torch.Tensor:
    """Rotate pair i of x by positions[pair_axes[i]] * inv_freq[i] (axial RoPE):

        angle_i = p[a(i)] * theta_i,   a = pair_axes

    x:         [..., seq, head_dim], any float dtype, device and strides.
    positions: [A, ...]: one row per axis (A >= 1); each row follows apply_rope's rule for
               positions against x ([seq], or broadcastable to x.shape[:-1]).
    pair_axes: integer [head_dim/2], values in 0 .. A-1: the axis each pair follows.
    inv_freq:  [head_dim/2] frequencies (default inv_frequencies(head_dim, base)).
    layout:    "half" (pairs (i, i + d/2), as every model here uses) or "interleaved".
    attention_factor: multiplies cos and sin, as in apply_rope.

    The angles are computed and the pairs rotated as in apply_rope (rope_angles,
    rope_cos_sin, rotate_pairs), so dtype, device and gradient behaviour are apply_rope's.
    Returns a tensor of x's shape, dtype and device. (Heo et al. 2024, "Rotary Position
    Embedding for Vision Transformer", arXiv:2403.13298, for the axial form; Wang et al. 2024
    for M-RoPE.)
    """
    check_x(x)
    return axial_rope(x, positions, pair_axes, inv_freq, base, layout, attention_factor)


def axial_rope(x, positions, pair_axes, inv_freq, base, layout, attention_factor):
    """apply_axial_rope for an x its caller has checked: the other arguments are checked here,
    once, then the formula."""
    check_layout(layout)
    rows = _check_axis_rows(positions, x)
    pair_axes = _check_pair_axes(pair_axes, len(rows), x)
    dtype = angle_dtype(x.dtype)
    if inv_freq is None:
        base = require_positive_float("base", base)
        inv_freq = pair_frequencies(x.shape[-1], base, dtype=dtype, device=x.device)
    else:
        inv_freq = check_inv_freq("inv_freq", inv_freq, x.shape[-1] // 2, x.device)
    attention_factor = require_positive_float("attention_factor", attention_factor)

    zero = torch.zeros((), dtype=inv_freq.dtype, device=inv_freq.device)
    # angle_i = p[a(i)] * theta_i: each axis' positions turn the pairs that follow that axis
    angles = sum(
        rope_angles(row, torch.where(pair_axes == a, inv_freq, zero), dtype)
        for a, row in enumerate(rows)
    )
    cos, sin = rope_cos_sin(angles, None, dtype, attention_factor)
    return _rotation_for(cos, sin)(x, cos, sin, layout)


def _check_axis_rows(positions, x: torch.Tensor) -> list:
    """positions [A, ...] as A rows, each read by the library's rule for positions."""
    require_real_tensor("positions", positions)
    if positions.dim() < 1 or positions.shape[0] < 1:
        raise ValueError(
            _(
                "positions must be [n_axes, ...] with one row per axis, got shape "
                "{positions_shape}"
            ).format(positions_shape=tuple(positions.shape))
        )
    return [
        check_positions(positions[a], x, name=f"positions[{a}]")
        for a in range(positions.shape[0])
    ]


def _check_pair_axes(pair_axes, n_axes: int, x: torch.Tensor) -> torch.Tensor:
    n_pairs = x.shape[-1] // 2
    require_real_tensor("pair_axes", pair_axes)
    if pair_axes.is_floating_point() or tuple(pair_axes.shape) != (n_pairs,):
        raise ValueError(
            _(
                "pair_axes must be an integer tensor of shape [head_dim/2] = "
                "[{n_pairs}], got {pair_axes_dtype} {pair_axes_shape}"
            ).format(
                n_pairs=n_pairs,
                pair_axes_dtype=pair_axes.dtype,
                pair_axes_shape=tuple(pair_axes.shape),
            )
        )
    if (
        pair_axes.device.type != "meta"
        and n_pairs
        and (int(pair_axes.min()) < 0 or int(pair_axes.max()) >= n_axes)
    ):
        raise ValueError(
            _(
                "pair_axes must hold axis numbers 0 .. {value} (positions has "
                "{n_axes} rows), got values from {low} to {high}"
            ).format(
                value=n_axes - 1,
                n_axes=n_axes,
                low=int(pair_axes.min()),
                high=int(pair_axes.max()),
            )
        )
    return require_same_device("pair_axes", pair_axes, x.device)


def _check_section(mrope_section) -> list[int]:
    if isinstance(mrope_section, torch.Tensor):
        mrope_section = mrope_section.tolist()
    if not isinstance(mrope_section, (list, tuple)) or len(mrope_section) != 3:
        raise ValueError(
            _("mrope_section must be 3 numbers of pairs [t, h, w], got {got}").format(
                got=describe(mrope_section)
            )
        )
    section = [
        require_int(f"mrope_section[{i}]", v) for i, v in enumerate(mrope_section)
    ]
    for i, v in enumerate(section):
        if v < 0:
            raise ValueError(
                _(
                    "mrope_section[{i}] must be >= 0 (a number of pairs), got {v}"
                ).format(i=i, v=v)
            )
    return section


def mrope_pair_axes(
    mrope_section, *, interleaved: bool = False, n_pairs: int | None = None
):
    """The axis a(i) (0 = t, 1 = h, 2 = w) that each pair follows in M-RoPE, int64 [n_pairs]
    (Wang et al. 2024, arXiv:2409.12191).

    mrope_section = [s_t, s_h, s_w], numbers of pairs (Qwen2-VL: [16, 24, 24] for d = 128;
    Qwen3-VL: [24, 20, 20]); n_pairs defaults to their sum (= head_dim/2).
    - contiguous (interleaved=False; Qwen2-VL, Qwen2.5-VL): [t]*s_t + [h]*s_h + [w]*s_w, as
      transformers' `freq.split(mrope_section)` takes chunk i from axis i % 3; the sections
      must add up to n_pairs (torch.split needs it);
    - interleaved (Qwen3-VL): pair i is h if i % 3 == 1 and i < 3 s_h, w if i % 3 == 2 and
      i < 3 s_w, else t (transformers' Qwen3VLTextRotaryEmbedding.recomposition_frequencies,
      which reads only s_h and s_w: a sum other than n_pairs is accepted, with a warning).
    """
    section = _check_section(mrope_section)
    if not isinstance(interleaved, bool):
        raise TypeError(
            _("interleaved must be True or False, got {got}").format(
                got=describe(interleaved)
            )
        )
    n_pairs = (
        sum(section) if n_pairs is None else require_positive_int("n_pairs", n_pairs)
    )
    if not interleaved:
        if sum(section) != n_pairs:
            raise ValueError(
                _(
                    "mrope_section must add up to head_dim/2 = {n_pairs} pairs, got "
                    "{section} (sum {value})"
                ).format(n_pairs=n_pairs, section=section, value=sum(section))
            )
        return torch.repeat_interleave(torch.arange(3), torch.tensor(section))
    if sum(section) != n_pairs:
        warnings.warn(
            f"mrope_section {section} adds up to {sum(section)} pairs, not head_dim/2 = "
            f"{n_pairs}; as in transformers the t axis takes every pair h and w do not",
            UserWarning,
            stacklevel=2,
        )
    i = torch.arange(n_pairs)
    axes = torch.zeros(n_pairs, dtype=torch.int64)
    axes[(i % 3 == 1) & (i < 3 * section[1])] = 1
    axes[(i % 3 == 2) & (i < 3 * section[2])] = 2
    return axes


def apply_mrope(
    x: torch.Tensor,
    positions: torch.Tensor,
    mrope_section,
    *,
    interleaved: bool = False,
    inv_freq: torch.Tensor | None = None,
    base: float = 10000.0,
    layout: str = "half",
    attention_factor: float = 1.0,
) -> torch.Tensor:
    """Multimodal RoPE (Wang et al. 2024, arXiv:2409.12191): rotate x by 3D positions
    (t, h, w), pairs split by mrope_section.

        angle_i = p[a(i)] * theta_i,   a = mrope_pair_axes(mrope_section, interleaved=...)

    x:             [..., seq, head_dim] (e.g. [batch, heads, seq, head_dim]).
    positions:     [3, ...]: rows t, h and w, each [seq] or broadcastable to x.shape[:-1]
                   (e.g. [3, batch, 1, seq]); mrope_position_ids builds them. [1, ...] gives
                   every axis the same id, as transformers does for text-only input.
    mrope_section: [s_t, s_h, s_w] pairs, adding up to head_dim/2.
    interleaved:   False: Qwen2-VL / Qwen2.5-VL (contiguous sections); True: Qwen3-VL.
    inv_freq, base, attention_factor: as in apply_rope (inv_freq from rope_frequencies for a
                   scaled variant).
    layout:        "half" by default: Qwen's code pairs (i, i + d/2) (rotate_half).

    Matches transformers' Qwen2VLRotaryEmbedding / Qwen3VLTextRotaryEmbedding followed by
    apply_rotary_pos_emb. Returns a tensor of x's shape, dtype and device.
    """
    check_x(x)
    require_real_tensor("positions", positions)
    if positions.dim() < 2 or positions.shape[0] not in (1, 3):
        raise ValueError(
            _(
                "positions must be [3, ...] (rows t, h, w), or [1, ...] for one id "
                "on every axis, got shape {positions_shape}"
            ).format(positions_shape=tuple(positions.shape))
        )
    if positions.shape[0] == 1:
        positions = positions.expand(3, *positions.shape[1:])
    axes = mrope_pair_axes(
        mrope_section, interleaved=interleaved, n_pairs=x.shape[-1] // 2
    )
    return axial_rope(x, positions, axes, inv_freq, base, layout, attention_factor)


def _check_segment(i: int, segment):
    if isinstance(segment, numbers.Integral) and not isinstance(segment, bool):
        if segment < 0:
            raise ValueError(
                _(
                    "segments[{i}] (a number of text tokens) must be >= 0, got "
                    "{segment}"
                ).format(i=i, segment=segment)
            )
        return int(segment)
    if isinstance(segment, torch.Tensor):
        segment = segment.tolist()
    if isinstance(segment, (list, tuple)) and len(segment) == 3:
        grid = tuple(
            require_int(f"segments[{i}][{j}]", v) for j, v in enumerate(segment)
        )
        for j, v in enumerate(grid):
            if v < 1:
                raise ValueError(
                    _("segments[{i}][{j}] (a grid size) must be >= 1, got {v}").format(
                        i=i, j=j, v=v
                    )
                )
        return grid
    raise TypeError(
        _(
            "segments[{i}] must be an int (text tokens) or a grid (T, H, W), got {got}"
        ).format(i=i, got=describe(segment))
    )


def _check_time_interval(time_interval) -> float:
    if isinstance(time_interval, torch.Tensor):
        if time_interval.numel() != 1:
            raise ValueError(
                _(
                    "time_interval must be one number, got a tensor of shape "
                    "{time_interval_shape}"
                ).format(time_interval_shape=tuple(time_interval.shape))
            )
        time_interval = time_interval.item()
    if isinstance(time_interval, bool) or not isinstance(time_interval, numbers.Real):
        raise TypeError(
            _("time_interval must be a number, got {got}").format(
                got=describe(time_interval)
            )
        )
    if not (time_interval >= 0 and time_interval != float("inf")):
        raise ValueError(
            _("time_interval must be a finite number >= 0, got {time_interval}").format(
                time_interval=time_interval
            )
        )
    return time_interval


def _grid_ids(i, grid, start, merge, time_interval, device) -> torch.Tensor:
    """[3, T * H/m * W/m] ids of one grid starting at `start`, in frame, row, column order."""
    frames, rows, cols = grid[0], grid[1] // merge, grid[2] // merge
    if rows < 1 or cols < 1:
        raise ValueError(
            _(
                "segments[{i}] = {grid}: H and W must be at least "
                "spatial_merge_size = {merge}"
            ).format(i=i, grid=grid, merge=merge)
        )
    t = (torch.arange(frames, device=device) * time_interval).long() + start
    h = torch.arange(rows, device=device) + start
    w = torch.arange(cols, device=device) + start
    grid_t, grid_h, grid_w = torch.meshgrid(t, h, w, indexing="ij")
    return torch.stack([grid_t, grid_h, grid_w], dim=0).reshape(3, -1)


#: The rules mrope_position_ids knows for where the text after a grid starts.
MROPE_ID_RULES = ("qwen", "transformers5")


def _check_rule(rule) -> str:
    """rule, one of MROPE_ID_RULES."""
    if not isinstance(rule, str):
        raise TypeError(
            _("rule must be a string, one of {mrope_id_rules}, got {got}").format(
                mrope_id_rules=list(MROPE_ID_RULES), got=describe(rule)
            )
        )
    if rule not in MROPE_ID_RULES:
        raise ValueError(
            _("rule must be one of {mrope_id_rules}, got {rule!r}").format(
                mrope_id_rules=list(MROPE_ID_RULES), rule=rule
            )
        )
    return rule


def _grid_advance(segment, merge: int, time_interval: float, rule: str) -> int:
    """How far the segment after a grid (T, H, W) starts past the grid's start s, by `rule`
    (mrope_position_ids' docstring)."""
    side = max(segment[1], segment[2]) // merge
    if rule == "transformers5":  # s + max(H, W) / m
        return side
    # "qwen": the largest id so far + 1 (t's, h's or w's); the last grid step's t computed
    # as _grid_ids computes it
    last_t = int((torch.arange(segment[0])[-1:] * time_interval).long())
    return max(last_t, side - 1) + 1


def mrope_position_ids(
    segments,
    *,
    spatial_merge_size: int = 1,
    time_interval: float = 1.0,
    device=None,
    rule: str = "qwen",
) -> torch.Tensor:
    """M-RoPE position ids (rows t, h, w) for text and image/video grids, int64 [3, seq]
    (Wang et al. 2024, arXiv:2409.12191).

    segments: a list whose items are an int n (n text tokens) or a grid (T, H, W) (an image,
              T = 1, or a video) in patches, as transformers' image_grid_thw /
              video_grid_thw. E.g. [4, (1, 4, 6), 3]: 4 text tokens, an image of 4 x 6
              patches, 3 text tokens.
    spatial_merge_size: patches merged per side before the language model (Qwen2-VL: 2);
              the grid then has T x H/m x W/m tokens.
    time_interval: grid-step spacing in position units (Qwen2.5-VL: tokens_per_second *
              seconds per grid step; 1 for Qwen2-VL); grid step k (temporal_patch_size = 2
              frames) gets t = s + int(k * interval).
    rule:     where the segment after a grid starts:
              "qwen" (default): at the largest id so far + 1, as Qwen's reference code does
              (transformers 4.x Qwen2VLForConditionalGeneration.get_rope_index, `st_idx =
              llm_pos_ids_list[-1].max() + 1`; vLLM's MRotaryEmbedding does the same): the
              rule the Qwen2-VL / Qwen2.5-VL checkpoints were released with;
              "transformers5": at s + max(H, W) / m, as transformers 5's
              Qwen2VLModel.get_rope_index does (checked against 5.23). After an image
              (T = 1) both give s + max(H, W) / m; after a video whose time ids reach
              s + max(H, W) / m or more, "transformers5" gives the following text ids its
              frames already used on t.

    A text run starting at s gets s, s+1, ... on all three rows; a grid starting at s gets
    t = s + int(k * time_interval), h = s + row, w = s + column, tokens in grid step, row,
    column order. (Qwen3-VL splits a video into grid steps with timestamp text between them:
    pass each step as its own (1, H, W); both rules then agree.) The id of the next
    generated token is ids.max() + 1 under either rule.
    """
    if not isinstance(segments, (list, tuple)):
        raise TypeError(
            _("segments must be a list of ints and (T, H, W) grids, got {got}").format(
                got=describe(segments)
            )
        )
    merge = require_positive_int("spatial_merge_size", spatial_merge_size)
    time_interval = _check_time_interval(time_interval)
    rule = _check_rule(rule)
    pieces = []
    start = 0
    for i, segment in enumerate(segments):
        segment = _check_segment(i, segment)
        if isinstance(segment, int):  # text: s, s+1, ... on every row
            ids = torch.arange(segment, device=device).view(1, -1).expand(3, -1)
            pieces.append(ids + start)
            start += segment
        else:
            pieces.append(_grid_ids(i, segment, start, merge, time_interval, device))
            start += _grid_advance(segment, merge, time_interval, rule)
    if not pieces:
        return torch.zeros(3, 0, dtype=torch.int64, device=device)
    return torch.cat(pieces, dim=1)
