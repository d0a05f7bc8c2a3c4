"""Checkers for lesson 10 (RoPE for images and video: M-RoPE and 2D RoPE).

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

from ..language import _
from . import Feedback, compare_tensor, correct, not_yet, same_values
from .answers import guarded, read_count, read_pair, read_tensor

# Exercise 1 ---------------------------------------------------------------------------
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
    return torch.tensor(rows, dtype=torch.float64)


def _ex1_correct():
    return correct(
        _(
            "text 0, 1; the image at s = 2 gets t = 2, h = 2 + row, w = 2 + column; "
            "the text after it goes on at 2 + max(2, 3) = 5. "
            "rope_lib.mrope_position_ids([2, (1, 2, 3), 2]) and Qwen2-VL's "
            "get_rope_index give the same"
        )
    )


@guarded
def check_position_ids(answer):
    """M-RoPE ids [3, 10] (rows t, h, w) of 2 text tokens, an image of 2 x 3 patches
    (row by row) and 2 text tokens, as Qwen2-VL builds them."""
    if answer is None:
        return not_yet(
            _(
                "replace `None` with a [3, 10] tensor: rows t, h, w; one column per "
                "token"
            )
        )
    a = read_tensor(answer, _("ids"))
    if isinstance(a, Feedback):
        return a
    expected = _ids()
    if a.shape != expected.shape:
        if tuple(a.shape) == (10, 3):
            return not_yet(
                _("transposed: give 3 rows (t, h, w) of 10 ids, shape [3, 10]")
            )
        return not_yet(
            _("ids should have shape (3, 10) (rows t, h, w), got {shape}").format(
                shape=tuple(a.shape)
            )
        )
    if same_values(a, expected):
        return _ex1_correct()
    image = slice(EX1_BEFORE, EX1_BEFORE + EX1_ROWS * EX1_COLS)
    counted = EX1_BEFORE + EX1_ROWS * EX1_COLS
    if same_values(a, _ids(next_start=counted)):
        return not_yet(
            _(
                "the image is right, but the text after it starts at 2 + H·W = "
                "{counted}, as if every patch took a step. Qwen2-VL goes on at s + "
                "max(H, W) = 5: the image spans only max(H, W) = 3 positions on any "
                "axis"
            ).format(counted=counted)
        )
    if same_values(a, _ids(next_start=EX1_BEFORE + max(EX1_ROWS, EX1_COLS) - 1)):
        return not_yet(
            _(
                "the text after the image starts at 4, the image's largest id, so two "
                "tokens share position 4 on the w axis: start one further, at s + "
                "max(H, W) = 5"
            )
        )
    ordinary = torch.arange(10, dtype=torch.float64).expand(3, -1)
    if same_values(a, ordinary):
        return not_yet(
            _(
                "these are ordinary 1D positions 0..9 on every axis: only text tokens "
                "have t = h = w; an image patch at row r, column c gets t = s, h = s + "
                "r, w = s + c"
            )
        )
    if same_values(a[:, image], _ids(image_start_offset=False)[:, image]):
        return not_yet(
            _(
                "the image's ids start at 0: add the image's start s = 2 to t, h and w "
                "(t = 2, h = 2 + row, w = 2 + column)"
            )
        )
    if same_values(a, expected[[0, 2, 1]]):
        return not_yet(
            _("rows h and w are swapped: h follows the patch row, w the column")
        )
    if same_values(a[:, image], expected[:, image]) and not same_values(
        a[:, :2], expected[:, :2]
    ):
        return not_yet(
            _("the image is right; the first two text tokens are 0 and 1 on all rows")
        )
    if same_values(a[:, image], expected[:, image]):
        return not_yet(
            _(
                "the text and the image are right; the last two text tokens go on at "
                "s + max(H, W) = 5 and 6 on all three rows"
            )
        )
    feedback = compare_tensor(a, expected, _("ids"))
    if feedback is not None:
        return feedback
    return _ex1_correct()


# Exercise 2 ---------------------------------------------------------------------------
EX2_TEXT, EX2_ROWS, EX2_COLS, EX2_MERGE = 10, 28, 40, 2


@guarded
def check_next_text_position(answer):
    """10 text tokens, then an image of 28 x 40 patches that Qwen2-VL merges 2 x 2
    before the language model: the position of the first text token after the image."""
    if answer is None:
        return not_yet(_("replace `None` with one whole number: a position"))
    m = read_count(answer, _("the position"), what=_("a position"))
    if isinstance(m, Feedback):
        return m
    rows, cols = EX2_ROWS // EX2_MERGE, EX2_COLS // EX2_MERGE
    expected = EX2_TEXT + max(rows, cols)
    if m == expected:
        return correct(
            _(
                "merging gives a 14 x 20 grid of 280 tokens, but they span only "
                "max(14, 20) = 20 positions: the text goes on at {start} + 20 = "
                "{expected}"
            ).format(start=EX2_TEXT, expected=expected)
        )
    hints = {
        EX2_TEXT + rows * cols: _(
            "that counts every image token as a step (10 + 14·20): M-RoPE moves on by "
            "max(H, W), not by the number of tokens"
        ),
        EX2_TEXT + EX2_ROWS * EX2_COLS: _(
            "that counts every patch before merging as a step: first merge 2 x 2 (a 14 "
            "x 20 grid), then move on by max(H, W), not H·W"
        ),
        EX2_TEXT + max(EX2_ROWS, EX2_COLS): _(
            "right rule, but on the patches before merging: the language model sees a "
            "14 x 20 grid, so max(H, W) = 20"
        ),
        EX2_TEXT + max(rows, cols) - 1: _(
            "that is the image's largest id (10 + 19); the next token takes the "
            "position after it"
        ),
        EX2_TEXT + min(rows, cols): _(
            "the image spans max(H, W) positions, not min(H, W)"
        ),
        EX2_TEXT + rows * cols + 1: _(
            "that counts every image token as a step: M-RoPE moves on by max(H, W) "
            "after a grid"
        ),
    }
    if m in hints:
        return not_yet(hints[m])
    return not_yet(
        _(
            "not {m}: the text goes on at the image's start (10) plus max(H, W) of the "
            "merged grid"
        ).format(m=m)
    )


# Exercise 3 ---------------------------------------------------------------------------
EX3_PAIRS, EX3_SECTION = 16, (8, 4, 4)


def _interleaved_axes() -> torch.Tensor:
    out = []
    for i in range(EX3_PAIRS):
        if i % 3 == 1 and i < 3 * EX3_SECTION[1]:
            out.append(1)
        elif i % 3 == 2 and i < 3 * EX3_SECTION[2]:
            out.append(2)
        else:
            out.append(0)
    return torch.tensor(out, dtype=torch.float64)


@guarded
def check_interleaved_pair_axes(answer):
    """Qwen3-VL's interleaved M-RoPE for a head of 32 (16 pairs), mrope_section = [8, 4,
    4]: the axis each pair follows, 0 = t, 1 = h, 2 = w, pair 0 first."""
    if answer is None:
        return not_yet(_("replace `None` with 16 numbers, each 0 (t), 1 (h) or 2 (w)"))
    a = read_tensor(answer, _("axes"))
    if isinstance(a, Feedback):
        return a
    expected = _interleaved_axes()
    if a.shape != expected.shape:
        return not_yet(
            _("axes should have shape (16,) (one per pair), got {shape}").format(
                shape=tuple(a.shape)
            )
        )
    if same_values(a, expected):
        return correct(
            _(
                "t, h, w, t, h, w, ... for the first 3·4 = 12 pairs, then t for the "
                "rest: every axis gets fast and slow pairs. "
                "rope_lib.multimodal.mrope_pair_axes([8, 4, 4], interleaved=True) "
                "gives the same"
            )
        )
    contiguous = torch.tensor([0] * 8 + [1] * 4 + [2] * 4, dtype=torch.float64)
    if same_values(a, contiguous):
        return not_yet(
            _(
                "that is the contiguous split of Qwen2-VL (8 t pairs, then 4 h, then 4 "
                "w): Qwen3-VL interleaves them, t, h, w, t, h, w, ..."
            )
        )
    if same_values(a, torch.arange(EX3_PAIRS, dtype=torch.float64) % 3):
        return not_yet(
            _(
                "i % 3 for every pair gives h and w 5 pairs each; the section [8, 4, "
                "4] gives them 4: h and w only take pairs i < 3·4 = 12, the rest "
                "follow t"
            )
        )
    if same_values(a - 1, expected):
        return not_yet(_("numbered from 1: use 0 for t, 1 for h and 2 for w"))
    if sorted(a.tolist()) == sorted(expected.tolist()):
        return not_yet(
            _(
                "the right number of t, h and w pairs, in another order: pair i is h "
                "when i % 3 == 1, w when i % 3 == 2 (while i < 12), t otherwise"
            )
        )
    if not all(v in (0.0, 1.0, 2.0) for v in a.tolist()):
        return not_yet(_("each entry is an axis: 0 (t), 1 (h) or 2 (w)"))
    feedback = compare_tensor(a, expected, _("axes"))
    if feedback is not None:
        return feedback
    return correct(
        _("t, h, w, t, h, w, ... then t: every axis gets fast and slow pairs")
    )


# Exercise 4 ---------------------------------------------------------------------------
EX4_WIDTH, EX4_NEW_WIDTH, EX4_COLUMNS = 16, 32, 3


@guarded
def check_resized_offsets(answer):
    """Two objects 3 patch columns apart in an image 16 patches wide; the image is
    resized to 32 patches wide. The column offset each model rotates by afterwards:
    (Pixtral, DINOv3)."""
    if answer is None:
        return not_yet(
            _("replace `None` with two numbers: (Pixtral's offset, DINOv3's offset)")
        )
    pair = read_pair(answer, _("the offsets"), what=_("two numbers (Pixtral, DINOv3)"))
    if isinstance(pair, Feedback):
        return pair
    pixtral, dinov3 = pair
    columns = (
        EX4_COLUMNS * EX4_NEW_WIDTH // EX4_WIDTH
    )  # 6 columns apart after the resize
    want_pixtral, want_dinov3 = float(columns), 2.0 * columns / EX4_NEW_WIDTH

    def near(x, y):
        return abs(x - y) <= 1e-6 + 1e-4 * abs(y)

    if near(pixtral, want_pixtral) and near(dinov3, want_dinov3):
        return correct(
            _(
                "Pixtral counts patches: 3 becomes 6, so the score changes with the "
                "size. DINOv3 measures in [-1, 1]: 2·6/32 = 2·3/16 = 0.375, the same "
                "before and after"
            )
        )
    if near(dinov3, want_pixtral) and near(pixtral, want_dinov3):
        return not_yet(_("the two are swapped: give (Pixtral, DINOv3)"))
    if not near(pixtral, want_pixtral):
        if near(pixtral, EX4_COLUMNS):
            return not_yet(
                _(
                    "Pixtral's positions are integer rows and columns of the resized "
                    "image: the objects are now 6 columns apart, so its offset doubles"
                )
            )
        return not_yet(
            _(
                "Pixtral's offset is the number of columns between the two patches "
                "after the resize"
            )
        )
    if near(dinov3, columns / EX4_NEW_WIDTH):
        return not_yet(
            _(
                "6/32 measures in [0, 1]; DINOv3 maps the patch centres to [-1, 1], a "
                "width of 2: 2·6/32"
            )
        )
    if near(dinov3, 2.0 * columns / EX4_WIDTH):
        return not_yet(
            _("use the new width: 6 columns of an image 32 patches wide, 2·6/32")
        )
    if near(dinov3, columns):
        return not_yet(
            _(
                "DINOv3 does not count patches: its coordinates are patch centres "
                "scaled to [-1, 1]"
            )
        )
    return not_yet(
        _("DINOv3's coordinate of column c of W is 2(c + 1/2)/W - 1: subtract two")
    )
