"""Lesson 14 (notebooks/14_multimodal_rope.ipynb): the lesson's own claims and numbers
against Hugging Face transformers (tiny random Qwen2-VL, Qwen2.5-VL and Qwen3-VL models,
Pixtral's and DINOv3's rotary embeddings; nothing downloaded), its two widgets, its
checkers and its teacher notes. tests/lib/test_multimodal.py and tests/lib/test_vision.py
compare the library functions themselves; here every expected value comes from
transformers or is typed in by hand."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from transformers import (  # noqa: E402
    DINOv3ViTConfig,
    PixtralVisionConfig,
    Qwen2_5_VLConfig,
    Qwen2VLConfig,
    Qwen3VLConfig,
)
from transformers.models.dinov3_vit import (  # noqa: E402
    modeling_dinov3_vit as hf_dinov3,
)
from transformers.models.pixtral import modeling_pixtral as hf_pixtral  # noqa: E402
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (  # noqa: E402
    Qwen2_5_VLModel,
)
from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel  # noqa: E402
from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLModel  # noqa: E402

from rope_lib.exercises import multimodal as ex  # noqa: E402
from rope_lib.figures.multimodal import thumbnail  # noqa: E402
from rope_lib.widgets import LIVE_TEXT  # noqa: E402
from rope_lib.widgets.multimodal import (  # noqa: E402
    MropeWidget,
    PatchScoreWidget,
    offset_map,
    patch_scores,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "14_multimodal_rope.ipynb"
NOTES = ROOT / "notebooks" / "teacher_notes" / "14_multimodal_rope.md"
F64 = torch.float64

# --------------------------------------------------------------------- tiny transformer
TEXT = dict(
    hidden_size=64,
    intermediate_size=64,
    num_hidden_layers=1,
    vocab_size=32,
    num_attention_heads=2,
    num_key_value_heads=2,
    head_dim=32,
    bos_token_id=None,
    eos_token_id=None,
    pad_token_id=None,
)


def tiny(config_class, model_class, section, base=1e6, head_dim=32, **vision):
    rope = {"rope_type": "default", "rope_theta": base, "mrope_section": list(section)}
    text = {
        **TEXT,
        "head_dim": head_dim,
        "hidden_size": 2 * head_dim,
        "rope_parameters": rope,
    }
    config = config_class(
        text_config=text,
        vision_config={
            "depth": 1,
            "hidden_size": 64,
            "num_heads": 2,
            "spatial_merge_size": 1,
            **vision,
        },
    )
    return model_class(config).eval()


@pytest.fixture(scope="module")
def qwen2():
    return tiny(Qwen2VLConfig, Qwen2VLModel, [4, 6, 6], embed_dim=32)


def hf_ids(model, segments, merge=1, video=None):
    """transformers' get_rope_index for text runs (ints) and grids (T, H, W)."""
    model.config.vision_config.spatial_merge_size = merge
    kind = 2 if video else 1
    types, grids = [], []
    for seg in segments:
        if isinstance(seg, int):
            types += [0] * seg
        else:
            types += [kind] * (seg[0] * seg[1] * seg[2] // merge**2)
            grids.append(list(seg))
    types = torch.tensor([types])
    kwargs = {"video_grid_thw" if video else "image_grid_thw": torch.tensor(grids)}
    if video:
        kwargs["second_per_grid_ts"] = torch.tensor([video] * len(grids))
    ids, _ = model.get_rope_index(torch.zeros_like(types), types, **kwargs)
    return ids[:, 0]


def turned_pairs(rotary, x, position):
    """The pairs a Qwen rotary embedding turns for a [3] position (sin != 0)."""
    _, sin = rotary(x, torch.tensor(position).view(3, 1, 1))
    n_pairs = x.shape[-1] // 2
    return (sin[0, 0, :n_pairs] != 0).nonzero().flatten().tolist()


# --------------------------------------------------------------------- M-RoPE claims


def test_the_lessons_example_ids_are_transformers(qwen2):
    # section 3: 3 text tokens, a 2 x 3 image, 3 text tokens (typed in from the lesson)
    want = [
        [0, 1, 2, 3, 3, 3, 3, 3, 3, 6, 7, 8],
        [0, 1, 2, 3, 3, 3, 4, 4, 4, 6, 7, 8],
        [0, 1, 2, 3, 4, 5, 3, 4, 5, 6, 7, 8],
    ]
    assert hf_ids(qwen2, [3, (1, 2, 3), 3]).tolist() == want


@pytest.mark.parametrize(
    "before,rows,cols,merge",
    [
        (3, 2, 3, 1),
        (5, 4, 2, 1),
        (1, 3, 3, 1),
        (10, 28, 40, 2),
        (4, 6, 2, 2),
        (0, 1, 5, 1),
    ],
)
def test_text_after_an_image_goes_on_at_start_plus_max_side(
    qwen2, before, rows, cols, merge
):
    ids = hf_ids(qwen2, [before, (1, rows, cols), 2], merge)
    first_after = before + rows * cols // merge**2
    h, w = rows // merge, cols // merge
    assert ids[:, first_after].tolist() == [before + max(h, w)] * 3
    if h * w > max(h, w):
        assert ids[0, first_after] != before + h * w  # the flat count is not the rule
    # the largest image id is s + max(H, W) - 1: the text after shares no id, leaves no
    # gap
    image = ids[:, before:first_after]
    assert image.max().item() + 1 == before + max(h, w)
    assert ids[1, before:first_after].max().item() == before + h - 1
    assert ids[2, before:first_after].max().item() == before + w - 1


def test_the_merged_example_and_exercise_2_are_transformers(qwen2):
    ids = hf_ids(qwen2, [10, (1, 28, 40), 5], merge=2)
    assert ids.shape[1] == 295 and ids.max().item() == 34  # section 3's printed numbers
    assert ids[0, 10 + 14 * 20].item() == 30  # exercise 2's answer
    assert ex.check_next_text_position(30).ok
    for wrong in (290, 50, 1130, 29, 24):
        assert not ex.check_next_text_position(wrong).ok


def test_exercise_1_solution_is_transformers(qwen2):
    solution = [
        [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
        [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
        [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
    ]
    assert hf_ids(qwen2, [2, (1, 2, 3), 2]).tolist() == solution
    assert ex.check_position_ids(solution).ok


def test_contiguous_sections_give_w_only_slow_pairs_in_qwen2_vl():
    # section 4: d = 128, [16, 24, 24], b = 1e6: which pairs Qwen2-VL turns per axis
    model = tiny(Qwen2VLConfig, Qwen2VLModel, [16, 24, 24], head_dim=128, embed_dim=32)
    rotary = model.language_model.rotary_emb
    x = torch.zeros(1, 1, 128)
    assert turned_pairs(rotary, x, [5, 0, 0]) == list(range(16))
    assert turned_pairs(rotary, x, [0, 5, 0]) == list(range(16, 40))
    assert turned_pairs(rotary, x, [0, 0, 5]) == list(range(40, 64))
    fastest_w = 1e6 ** (-80 / 128)
    assert rotary.inv_freq[40].item() == pytest.approx(fastest_w, rel=1e-6)
    assert fastest_w == pytest.approx(0.000178, abs=5e-7)  # printed 0.000178
    assert math.degrees(40 * fastest_w) < 0.5  # "less than half a degree"


def test_interleaved_sections_in_qwen3_vl():
    model = tiny(
        Qwen3VLConfig, Qwen3VLModel, [24, 20, 20], head_dim=128, out_hidden_size=64
    )
    rotary = model.language_model.rotary_emb
    x = torch.zeros(1, 1, 128)
    h = turned_pairs(rotary, x, [0, 1000, 0])
    w = turned_pairs(rotary, x, [0, 0, 1000])
    assert h == list(range(1, 60, 3)) and w == list(range(2, 60, 3))
    theta = 1e6 ** (-torch.arange(0, 128, 2, dtype=F64) / 128)
    assert theta[1].item() == pytest.approx(0.805842, abs=1e-6)  # printed h
    assert theta[2].item() == pytest.approx(0.649382, abs=1e-6)  # printed w


def test_exercise_3_solution_is_qwen3_vl_with_section_8_4_4():
    model = tiny(Qwen3VLConfig, Qwen3VLModel, [8, 4, 4], out_hidden_size=64)
    rotary = model.language_model.rotary_emb
    x = torch.zeros(1, 1, 32)
    axes = [0] * 16
    for a, pos in ((1, [0, 1000, 0]), (2, [0, 0, 1000])):
        for i in turned_pairs(rotary, x, pos):
            axes[i] = a
    assert axes == [0, 1, 2] * 4 + [0, 0, 0, 0]
    assert ex.check_interleaved_pair_axes(axes).ok


def test_qwen2_5_vl_time_ids_follow_seconds():
    # section 6: tokens_per_second = 2, the same 4 seconds at 2 fps (8 frames, 4 grid
    # steps of 1 s) and at 0.5 fps (2 frames, 1 step of 4 s), 2 x 2 tokens a frame
    model = tiny(
        Qwen2_5_VLConfig,
        Qwen2_5_VLModel,
        [4, 6, 6],
        out_hidden_size=64,
        tokens_per_second=2,
    )
    at_2fps = hf_ids(model, [1, (4, 2, 2), 1], video=1.0)
    at_half = hf_ids(model, [1, (1, 2, 2), 1], video=4.0)
    assert at_2fps[0, 1:-1:4].tolist() == [1, 3, 5, 7]
    assert at_half[0, 1:-1:4].tolist() == [1]
    # the text after a video goes on at s + max(H, W) in transformers 5, below the last
    # t
    assert at_2fps[:, -1].tolist() == [3, 3, 3] and at_half[:, -1].tolist() == [3, 3, 3]


# --------------------------------------------------------------------- 2D RoPE claims


def pixtral_scores(n, row, col, content):
    """Score of patch (row, col) with every patch, by transformers' Pixtral code."""
    config = PixtralVisionConfig(hidden_size=128, num_attention_heads=2, head_dim=64)
    rope = hf_pixtral.PixtralVisionRotaryEmbedding(config)
    h, w = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    ids = torch.stack([h.flatten(), w.flatten()], -1)
    x = content.float().expand(1, 1, n * n, 64).contiguous()
    cos, sin = rope(x, ids)
    rotated, _ = hf_pixtral.apply_rotary_pos_emb(x, x, cos, sin, unsqueeze_dim=0)
    rotated = rotated[0, 0].double()
    return (rotated @ rotated[row * n + col]).view(n, n)


def dinov3_scores(n, row, col, content):
    config = DINOv3ViTConfig(hidden_size=128, num_attention_heads=2, patch_size=4)
    rope = hf_dinov3.DINOv3ViTRopePositionEmbedding(config).eval()
    cos, sin = rope(torch.zeros(1, 3, 4 * n, 4 * n))
    x = content.float().expand(1, 1, n * n, 64).contiguous()
    rotated, _ = hf_dinov3.apply_rotary_pos_emb(x, x, cos, sin)
    rotated = rotated[0, 0].double()
    return (rotated @ rotated[row * n + col]).view(n, n)


@pytest.mark.parametrize("n,row,col", [(8, 3, 2), (8, 0, 7), (5, 4, 4), (12, 6, 1)])
def test_widget_scores_are_transformers_scores(n, row, col):
    content = torch.randn(
        64, generator=torch.Generator().manual_seed(n + row), dtype=F64
    )
    torch.testing.assert_close(
        patch_scores(n, row, col, "pixtral", content),
        pixtral_scores(n, row, col, content),
        rtol=1e-5,
        atol=1e-4,
    )
    torch.testing.assert_close(
        patch_scores(n, row, col, "dinov3", content),
        dinov3_scores(n, row, col, content),
        rtol=1e-5,
        atol=1e-4,
    )


def test_transformers_pixtral_score_depends_on_the_2d_offset_only():
    n = 8
    content = torch.randn(64, generator=torch.Generator().manual_seed(1), dtype=F64)
    pattern = offset_map(n, "pixtral", content)
    for row, col in ((0, 0), (3, 2), (7, 5), (4, 7)):
        window = pattern[n - 1 - row : 2 * n - 1 - row, n - 1 - col : 2 * n - 1 - col]
        torch.testing.assert_close(
            pixtral_scores(n, row, col, content), window, rtol=1e-5, atol=1e-4
        )


def column_angles(cos, sin, pair):
    return torch.atan2(sin[..., pair], cos[..., pair]).reshape(-1).double()


def test_resizing_doubles_pixtrals_offset_and_keeps_dinov3s():
    # section 9 and exercise 4: columns 4 -> 7 of 16 against 8 -> 14 of 32, every
    # column pair
    pix = hf_pixtral.PixtralVisionRotaryEmbedding(
        PixtralVisionConfig(hidden_size=128, num_attention_heads=2, head_dim=64)
    )
    dino = hf_dinov3.DINOv3ViTRopePositionEmbedding(
        DINOv3ViTConfig(hidden_size=128, num_attention_heads=2, patch_size=4)
    ).eval()
    printed = {}
    for width, (c1, c2) in ((16, (4, 7)), (32, (8, 14))):
        cols = torch.arange(width)
        hw = torch.stack([torch.zeros_like(cols), cols]).T
        pc, ps = pix(torch.zeros(1), hw)
        dc, ds = dino(torch.zeros(1, 3, 4, 4 * width))
        for pair in range(16, 32):  # the column pairs of both models
            p = column_angles(pc, ps, pair)
            d = column_angles(dc, ds, pair)
            printed[(width, pair)] = (
                float((p[c2] - p[c1]) % (2 * math.pi)),
                float((d[c2] - d[c1]) % (2 * math.pi)),
            )
    for pair in range(16, 32):
        p16, d16 = printed[(16, pair)]
        p32, d32 = printed[(32, pair)]
        assert d16 == pytest.approx(d32, abs=2e-5)
        theta = pix.inv_freq[pair].item()
        assert p16 == pytest.approx((3 * theta) % (2 * math.pi), abs=2e-5)
        assert p32 == pytest.approx((6 * theta) % (2 * math.pi), abs=2e-5)
    # the numbers the lesson prints, for the fastest column pair
    assert printed[(16, 16)][0] == pytest.approx(2.2497, abs=1e-4)
    assert printed[(32, 16)][0] == pytest.approx(4.4994, abs=1e-4)
    assert printed[(16, 16)][1] == pytest.approx(3 * math.pi / 4, abs=1e-4)
    coords16 = hf_dinov3.get_patches_center_coordinates(1, 16, torch.float64, "cpu")[
        :, 1
    ]
    coords32 = hf_dinov3.get_patches_center_coordinates(1, 32, torch.float64, "cpu")[
        :, 1
    ]
    assert (coords16[7] - coords16[4]).item() == pytest.approx(0.375)
    assert (coords32[14] - coords32[8]).item() == pytest.approx(0.375)
    assert ex.check_resized_offsets((6, 0.375)).ok


# --------------------------------------------------------------------- the widgets


def test_widgets_fit_the_projector_and_show_a_short_line():
    for factory in (MropeWidget, PatchScoreWidget):
        widget = factory()
        width, height = widget.figure.get_size_inches()
        assert width <= 6.4 + 1e-9 and height <= 3.3 + 1e-9 and widget.figure.dpi == 100
        box = widget.widget()
        assert repr(box) == LIVE_TEXT
        assert (
            len(box.children[0].children) >= 1
        )  # controls and readout in one row block
        matplotlib.pyplot.close(widget.figure)


def test_mrope_widget_shows_the_ids_and_the_pairs():
    widget = MropeWidget(rows=2, cols=3, token=5)
    s = widget._state
    assert s["token_ids"].tolist() == [3, 3, 5]  # row 0, column 2 at s = 3
    texts = [[t.get_text() for t in row] for row in widget.pair_texts]
    assert texts[0] == ["3"] * 10 + ["5"] * 6  # [4, 6, 6]: t, h, then w
    assert texts[1] == ["3", "3", "5"] * 5 + ["3"]  # [6, 5, 5] interleaved
    assert (
        "3 + max(H, W) = 6" in widget.readout.value
        and "3 + H·W = 9" in widget.readout.value
    )
    shown = [t.get_text() for t in widget.id_texts[2] if t.get_visible()]
    assert shown == ["0", "1", "2", "3", "4", "5", "3", "4", "5", "6", "7", "8"]
    widget.update(rows=3, cols=4, token=1)
    assert widget._state["next_text"] == 7 and widget._state["if_counted"] == 15
    assert [t.get_text() for t in widget.pair_texts[0]] == ["1"] * 16
    widget.update(rows=9, cols=0, token=99)  # clamped
    assert widget.values == {"rows": 3, "cols": 1, "token": 8}
    assert widget.controls["token"].max == 8
    matplotlib.pyplot.close(widget.figure)


def test_patch_widget_dots_stay_on_one_curve_as_the_query_moves():
    widget = PatchScoreWidget(patches=8, row=3, col=2)
    curve = dict(
        zip(widget.curve.get_xdata().tolist(), widget.curve.get_ydata().tolist())
    )
    for row, col in ((3, 2), (0, 0), (7, 7), (5, 1)):
        widget.update(row=row, col=col)
        xs, ys = widget.dots.get_data()
        for x, y in zip(xs.tolist(), ys.tolist()):
            assert y == pytest.approx(curve[x], rel=1e-9, abs=1e-9)
        assert widget.image.get_array()[row, col] == pytest.approx(widget.peak)
    widget.update(convention="dinov3", patches=16)
    assert "2/16" in widget.map_title.get_text()
    assert "0.125" in widget.readout.value
    matplotlib.pyplot.close(widget.figure)


def pixels(fig):
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize(
    "factory,move",
    [
        (MropeWidget, {"token": 7}),
        (PatchScoreWidget, {"col": 5}),
    ],
)
def test_blitted_update_equals_a_full_draw_and_leaves_the_figure_clean(factory, move):
    widget = factory()
    fig = widget.figure
    fig.canvas.draw()  # first display: background kept
    assert not fig.stale
    background = widget.redraw.background
    widget.update(**move)  # a blit: the background stays
    assert widget.redraw.background is background
    assert not fig.stale
    blitted = np.asarray(fig.canvas.buffer_rgba()).copy()
    assert np.array_equal(blitted, pixels(fig))
    matplotlib.pyplot.close(fig)


def test_widget_sweeps_and_thumbnail_run():
    for cls in (MropeWidget, PatchScoreWidget):
        widget = cls.example()
        for step in widget.sweep():
            widget.update(**step)
            widget.figure.canvas.draw()
        matplotlib.pyplot.close(widget.figure)
    figure = thumbnail()
    assert figure.get_size_inches()[0] <= 6.4


# --------------------------------------------------------------------- the checkers


@pytest.mark.parametrize(
    "answer",
    [
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ],
        np.array(
            [
                [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
                [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
                [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
            ],
            dtype=np.float32,
        ),
    ],
)
def test_check_position_ids_accepts_the_right_ids(answer):
    assert ex.check_position_ids(answer).ok
    assert ex.check_position_ids(torch.tensor(answer)).ok


def test_checkers_accept_right_answers_in_other_types():
    assert ex.check_next_text_position(np.int64(30)).ok
    assert ex.check_next_text_position(torch.tensor(30.0)).ok
    assert not ex.check_next_text_position(30.5).ok
    axes = [0, 1, 2] * 4 + [0] * 4
    assert ex.check_interleaved_pair_axes(np.array(axes)).ok
    assert ex.check_interleaved_pair_axes(torch.tensor(axes, dtype=torch.float32)).ok
    assert ex.check_resized_offsets([6.0, 0.375]).ok
    assert ex.check_resized_offsets(torch.tensor([6, 0.375])).ok
    assert not ex.check_resized_offsets((0.375, 6)).ok


def wrong_answers():
    """The mistakes the teacher notes list, each with the hint the notes quote."""
    ids = torch.tensor(
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ]
    )
    counted = ids.clone()
    counted[:, 8:] = torch.tensor([8, 9])
    from_zero = ids.clone()
    from_zero[:, 2:8] -= 2
    return [
        (ex.check_position_ids, counted),
        (ex.check_position_ids, from_zero),
        (ex.check_position_ids, torch.arange(10).expand(3, -1)),
        (ex.check_next_text_position, 290),
        (ex.check_next_text_position, 50),
        (ex.check_interleaved_pair_axes, [0] * 8 + [1] * 4 + [2] * 4),
        (ex.check_interleaved_pair_axes, [i % 3 for i in range(16)]),
        (ex.check_resized_offsets, (3, 0.375)),
        (ex.check_resized_offsets, (6, 6 / 32)),
    ]


def notes_section(name):
    parts = re.split(r"^## ", NOTES.read_text(encoding="utf-8"), flags=re.M)
    return next(p.split("\n", 1)[1] for p in parts[1:] if p.startswith(name))


def test_the_notes_misconceptions_are_the_checkers_hints():
    squash = " ".join
    quoted = [
        squash(h.split())
        for h in re.findall(
            r"checker\s+says\s+`([^`]+)`",
            notes_section("Misconceptions the checkers catch"),
        )
    ]
    messages = []
    for check, answer in wrong_answers():
        feedback = check(answer)
        assert not feedback.ok, (check.__name__, answer)
        messages.append(squash(feedback.message.split()))
    assert len(quoted) == len(messages)
    for hint in quoted:
        assert any(hint in m for m in messages), hint
    for message in messages:
        assert any(hint in message for hint in quoted), message


def test_the_notes_demo_settings_exist_in_the_widgets():
    settings = re.findall(r"`([^`=]+?) = ([^`]+)`", notes_section("Live demo"))
    assert len(settings) >= 8
    widgets = [
        MropeWidget(rows=2, cols=3, token=5),
        PatchScoreWidget(patches=8, row=3, col=2, convention="pixtral"),
    ]
    controls = {c.description: c for w in widgets for c in w.controls.values()}
    for name, value in settings:
        control = controls[name]
        value = value.strip()
        control.value = value if hasattr(control, "options") else int(value)
        assert str(control.value) == value
    for w in widgets:
        w.figure.canvas.draw()
        matplotlib.pyplot.close(w.figure)


# --------------------------------------------------------------------- the notebook


def cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def outputs(cell):
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))


def test_the_lesson_is_one_sitting_with_slides():
    nb = cells()
    words = sum(
        len("".join(c["source"]).split()) for c in nb if c["cell_type"] == "markdown"
    )
    assert len(nb) <= 60 and words <= 3000
    for cell in nb:
        # no slide_type: the cell continues its slide ("-" would hide it in the slideshow)
        assert cell["metadata"].get("slideshow", {}).get("slide_type", "-") in (
            "slide",
            "subslide",
            "fragment",
            "skip",
            "notes",
            "-",
        )
        assert cell["metadata"].get("slideshow", {}).get("slide_type") != "-"
    widget_cells = [c for c in nb if ".widget()" in "".join(c["source"])]
    assert len(widget_cells) == 2
    for cell in widget_cells:
        assert "nbval-ignore-output" in cell["metadata"]["tags"]
    for cell in nb:
        if cell["cell_type"] == "code":
            assert all(len(line) <= 88 for line in "".join(cell["source"]).splitlines())


def test_the_stored_checks_say_what_the_lesson_claims():
    text = "\n".join(outputs(c) for c in cells())
    assert "largest difference vs transformers' get_rope_index: 0" in text
    assert "pairs Qwen3-VL turns by h:          [1, 4, 7, 10, 13]" in text
    assert "mrope_pair_axes(..., interleaved) h: [1, 4, 7, 10, 13]" in text
    assert "text token (t = h = w = m) vs plain RoPE, largest difference: 0.0" in text
    assert "text after the image starts at 30 = 10 + max(14, 20)" in text
    for line in re.findall(r"largest difference: ([0-9.e+-]+)", text):
        assert float(line) < 1e-6
    assert (
        "64 query patches: largest difference from the one pattern below 1e-12" in text
    )
    assert (
        "width 16, columns 4 -> 7: Pixtral angle 2.2497 rad, DINOv3 angle 2.3562 rad"
        in text
    )
    assert (
        "width 32, columns 8 -> 14: Pixtral angle 4.4994 rad, DINOv3 angle 2.3562 rad"
        in text
    )
