"""Checkers for lesson 14 (RoPE for images and video: M-RoPE and 2D RoPE).

    from rope_lib.exercises import multimodal as ex
    ex.check_position_ids(ids)             # [3, 10] ids: 2 text, a 2 x 3 image, 2 text
    ex.check_next_text_position(m)         # the text after a merged 28 x 40 image
    ex.check_interleaved_pair_axes(axes)   # the axis (0 t, 1 h, 2 w) of 16 pairs
    ex.check_resized_offsets(pair)         # (Pixtral, DINOv3) offset after a resize

Each expected value is computed here from the rules themselves (Qwen2-VL's
get_rope_index, Qwen3-VL's interleaved sections, Pixtral's integer and DINOv3's
normalised patch coordinates), not from rope_lib; the likely mistakes each get their own
message."""

from __future__ import annotations

import torch

from ..language import N_
from . import Mistake, Word, exercise, near, same_values
from .answers import as_count, as_pair, as_tensor

F64 = torch.float64

# Exercise 1: 2 text tokens, an image of 2 x 3 patches at s = 2, then 2 text tokens.
EX1_BEFORE, EX1_ROWS, EX1_COLS, EX1_AFTER = 2, 2, 3, 2


def _ids(
    image_start_offset: bool = True, next_start: int | None = None
) -> torch.Tensor:
    """[3, 10] float64: text 0, 1; a 2 x 3 image at s = 2 (t = s, h = s + row, w = s +
    col); then text from next_start (the rule: s + max(H, W) = 5)."""
    s = EX1_BEFORE
    shift = s if image_start_offset else 0
    rows = [list(range(s)) for _ in range(3)]
    for r in range(EX1_ROWS):
        for c in range(EX1_COLS):
            rows[0].append(shift)
            rows[1].append(shift + r)
            rows[2].append(shift + c)
    start = s + max(EX1_ROWS, EX1_COLS) if next_start is None else next_start
    for j in range(EX1_AFTER):
        for axis in range(3):
            rows[axis].append(start + j)
    return torch.tensor(rows, dtype=F64)


IDS, IMAGE = _ids(), slice(EX1_BEFORE, EX1_BEFORE + EX1_ROWS * EX1_COLS)
COUNTED = EX1_BEFORE + EX1_ROWS * EX1_COLS


def _image_is(a: torch.Tensor, ids: torch.Tensor) -> bool:
    return same_values(a[:, IMAGE], ids[:, IMAGE])


@exercise(
    read=as_tensor,
    name=Word(N_("ids")),
    expected=IDS,
    placeholder=N_(
        "replace `None` with a [3, 10] tensor: rows t, h, w; one column per token"
    ),
    mistakes=[
        Mistake(
            lambda a: tuple(a.shape) == (10, 3),
            N_("transposed: give 3 rows (t, h, w) of 10 ids, shape [3, 10]"),
        ),
        Mistake(
            lambda a: a.shape != IDS.shape,
            N_("ids should have shape (3, 10) (rows t, h, w), got {shape}"),
        ),
        Mistake(
            _ids(next_start=COUNTED),
            N_(
                "the image is right, but the text after it starts at 2 + H·W = {counted}, "
                "as if every patch took a step. Qwen2-VL goes on at s + max(H, W) = 5: the "
                "image spans only max(H, W) = 3 positions on any axis"
            ),
        ),
        Mistake(
            _ids(next_start=EX1_BEFORE + max(EX1_ROWS, EX1_COLS) - 1),
            N_(
                "the text after the image starts at 4, the image's largest id, so two "
                "tokens share position 4 on the w axis: start one further, at s + max(H, "
                "W) = 5"
            ),
        ),
        Mistake(
            torch.arange(10, dtype=F64).expand(3, -1),
            N_(
                "these are ordinary 1D positions 0..9 on every axis: only text tokens have "
                "t = h = w; an image patch at row r, column c gets t = s, h = s + r, w = s "
                "+ c"
            ),
        ),
        Mistake(
            lambda a: _image_is(a, _ids(image_start_offset=False)),
            N_(
                "the image's ids start at 0: add the image's start s = 2 to t, h and w (t = "
                "2, h = 2 + row, w = 2 + column)"
            ),
        ),
        Mistake(
            IDS[[0, 2, 1]],
            N_("rows h and w are swapped: h follows the patch row, w the column"),
        ),
        Mistake(
            lambda a: _image_is(a, IDS) and not same_values(a[:, :2], IDS[:, :2]),
            N_("the image is right; the first two text tokens are 0 and 1 on all rows"),
        ),
        Mistake(
            lambda a: _image_is(a, IDS),
            N_(
                "the text and the image are right; the last two text tokens go on at s + "
                "max(H, W) = 5 and 6 on all three rows"
            ),
        ),
    ],
    facts={"counted": COUNTED},
    right=N_(
        "text 0, 1; the image at s = 2 gets t = 2, h = 2 + row, w = 2 + column; the text "
        "after it goes on at 2 + max(2, 3) = 5. rope_lib.mrope_position_ids([2, (1, 2, "
        "3), 2]) and Qwen2-VL's get_rope_index give the same"
    ),
)
def check_position_ids(answer):
    """M-RoPE ids [3, 10] (rows t, h, w) of 2 text tokens, an image of 2 x 3 patches
    (row by row) and 2 text tokens, as Qwen2-VL builds them."""


# Exercise 2: 10 text tokens, then 28 x 40 patches merged 2 x 2 (a 14 x 20 grid).
TEXT, ROWS, COLS, MERGE = 10, 28, 40, 2
GRID_ROWS, GRID_COLS = ROWS // MERGE, COLS // MERGE


@exercise(
    read=as_count,
    name=Word(N_("the position")),
    options={"what": N_("a position")},
    expected=TEXT + max(GRID_ROWS, GRID_COLS),
    placeholder=N_("replace `None` with one whole number: a position"),
    mistakes=[
        Mistake(
            TEXT + GRID_ROWS * GRID_COLS,
            N_(
                "that counts every image token as a step (10 + 14·20): M-RoPE moves on by "
                "max(H, W), not by the number of tokens"
            ),
        ),
        Mistake(
            TEXT + ROWS * COLS,
            N_(
                "that counts every patch before merging as a step: first merge 2 x 2 (a 14 "
                "x 20 grid), then move on by max(H, W), not H·W"
            ),
        ),
        Mistake(
            TEXT + max(ROWS, COLS),
            N_(
                "right rule, but on the patches before merging: the language model sees a "
                "14 x 20 grid, so max(H, W) = 20"
            ),
        ),
        Mistake(
            TEXT + max(GRID_ROWS, GRID_COLS) - 1,
            N_(
                "that is the image's largest id (10 + 19); the next token takes the "
                "position after it"
            ),
        ),
        Mistake(
            TEXT + min(GRID_ROWS, GRID_COLS),
            N_("the image spans max(H, W) positions, not min(H, W)"),
        ),
        Mistake(
            TEXT + GRID_ROWS * GRID_COLS + 1,
            N_(
                "that counts every image token as a step: M-RoPE moves on by max(H, W) "
                "after a grid"
            ),
        ),
    ],
    facts=lambda m, expected: {"start": TEXT, "m": m},
    otherwise=N_(
        "not {m}: the text goes on at the image's start (10) plus max(H, W) of the "
        "merged grid"
    ),
    right=N_(
        "merging gives a 14 x 20 grid of 280 tokens, but they span only max(14, 20) = "
        "20 positions: the text goes on at {start} + 20 = {expected}"
    ),
)
def check_next_text_position(answer):
    """10 text tokens, then an image of 28 x 40 patches that Qwen2-VL merges 2 x 2
    before the language model: the position of the first text token after the image."""


# Exercise 3: Qwen3-VL's interleaved sections [8, 4, 4] over 16 pairs.
AXES = torch.tensor(
    [
        1 if i % 3 == 1 and i < 12 else 2 if i % 3 == 2 and i < 12 else 0
        for i in range(16)
    ],
    dtype=F64,
)


@exercise(
    read=as_tensor,
    name=Word(N_("axes")),
    expected=AXES,
    placeholder=N_("replace `None` with 16 numbers, each 0 (t), 1 (h) or 2 (w)"),
    mistakes=[
        Mistake(
            lambda a: a.shape != (16,),
            N_("axes should have shape (16,) (one per pair), got {shape}"),
        ),
        Mistake(
            torch.tensor([0] * 8 + [1] * 4 + [2] * 4, dtype=F64),
            N_(
                "that is the contiguous split of Qwen2-VL (8 t pairs, then 4 h, then 4 w): "
                "Qwen3-VL interleaves them, t, h, w, t, h, w, ..."
            ),
        ),
        Mistake(
            torch.arange(16, dtype=F64) % 3,
            N_(
                "i % 3 for every pair gives h and w 5 pairs each; the section [8, 4, 4] "
                "gives them 4: h and w only take pairs i < 3·4 = 12, the rest follow t"
            ),
        ),
        Mistake(
            lambda a: same_values(a - 1, AXES),
            N_("numbered from 1: use 0 for t, 1 for h and 2 for w"),
        ),
        Mistake(
            lambda a: sorted(a.tolist()) == sorted(AXES.tolist()),
            N_(
                "the right number of t, h and w pairs, in another order: pair i is h when i "
                "% 3 == 1, w when i % 3 == 2 (while i < 12), t otherwise"
            ),
        ),
        Mistake(
            lambda a: not all(v in (0.0, 1.0, 2.0) for v in a.tolist()),
            N_("each entry is an axis: 0 (t), 1 (h) or 2 (w)"),
        ),
    ],
    right=N_(
        "t, h, w, t, h, w, ... for the first 3·4 = 12 pairs, then t for the rest: every "
        "axis gets fast and slow pairs. rope_lib.multimodal.mrope_pair_axes([8, 4, 4], "
        "interleaved=True) gives the same"
    ),
    right_when_close=N_(
        "t, h, w, t, h, w, ... then t: every axis gets fast and slow pairs"
    ),
)
def check_interleaved_pair_axes(answer):
    """Qwen3-VL's interleaved M-RoPE for a head of 32 (16 pairs), mrope_section = [8, 4,
    4]: the axis each pair follows, 0 = t, 1 = h, 2 = w, pair 0 first."""


# Exercise 4: objects 3 patch columns apart; the image resized from 16 to 32 patches wide.
COLUMNS = 3 * 32 // 16  # 6 columns apart after the resize
PIXTRAL, DINOV3 = float(COLUMNS), 2.0 * COLUMNS / 32
close_to = near(rtol=1e-4, atol=1e-6)


@exercise(
    read=as_pair,
    name=Word(N_("the offsets")),
    options={"what": N_("two numbers (Pixtral, DINOv3)")},
    expected=(PIXTRAL, DINOV3),
    same=lambda pair, want: close_to(pair[0], want[0]) and close_to(pair[1], want[1]),
    placeholder=N_(
        "replace `None` with two numbers: (Pixtral's offset, DINOv3's offset)"
    ),
    mistakes=[
        Mistake(
            lambda pair: close_to(pair[1], PIXTRAL) and close_to(pair[0], DINOV3),
            N_("the two are swapped: give (Pixtral, DINOv3)"),
        ),
        Mistake(
            lambda pair: not close_to(pair[0], PIXTRAL) and close_to(pair[0], 3),
            N_(
                "Pixtral's positions are integer rows and columns of the resized image: "
                "the objects are now 6 columns apart, so its offset doubles"
            ),
        ),
        Mistake(
            lambda pair: not close_to(pair[0], PIXTRAL),
            N_(
                "Pixtral's offset is the number of columns between the two patches after "
                "the resize"
            ),
        ),
        Mistake(
            lambda pair: close_to(pair[1], COLUMNS / 32),
            N_(
                "6/32 measures in [0, 1]; DINOv3 maps the patch centres to [-1, 1], a "
                "width of 2: 2·6/32"
            ),
        ),
        Mistake(
            lambda pair: close_to(pair[1], 2.0 * COLUMNS / 16),
            N_("use the new width: 6 columns of an image 32 patches wide, 2·6/32"),
        ),
        Mistake(
            lambda pair: close_to(pair[1], COLUMNS),
            N_(
                "DINOv3 does not count patches: its coordinates are patch centres scaled to "
                "[-1, 1]"
            ),
        ),
    ],
    otherwise=N_(
        "DINOv3's coordinate of column c of W is 2(c + 1/2)/W - 1: subtract two"
    ),
    right=N_(
        "Pixtral counts patches: 3 becomes 6, so the score changes with the size. DINOv3 "
        "measures in [-1, 1]: 2·6/32 = 2·3/16 = 0.375, the same before and after"
    ),
)
def check_resized_offsets(answer):
    """Two objects 3 patch columns apart in an image 16 patches wide; the image is
    resized to 32 patches wide. The column offset each model rotates by afterwards:
    (Pixtral, DINOv3)."""
