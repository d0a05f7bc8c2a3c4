"""M-RoPE (rope_lib.multimodal) against Hugging Face transformers' Qwen2-VL, Qwen2.5-VL
and
Qwen3-VL code: the text rotary embeddings (Qwen2VLRotaryEmbedding,
Qwen3VLTextRotaryEmbedding)
with apply_rotary_pos_emb, and the position ids (get_rope_index /
get_vision_position_ids)."""

import functools
from types import SimpleNamespace

import pytest
import torch
from transformers import Qwen2_5_VLTextConfig, Qwen2VLTextConfig, Qwen3VLTextConfig
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import (
    Qwen2_5_VLModel,
    Qwen2_5_VLRotaryEmbedding,
)
from transformers.models.qwen2_vl.modeling_qwen2_vl import (
    Qwen2VLModel,
    Qwen2VLRotaryEmbedding,
    apply_rotary_pos_emb,
)
from transformers.models.qwen3_vl.modeling_qwen3_vl import (
    Qwen3VLModel,
    Qwen3VLTextRotaryEmbedding,
)

import rope_lib
from rope_lib.multimodal import (
    apply_axial_rope,
    apply_mrope,
    mrope_pair_axes,
    mrope_position_ids,
)

LARGEST = {}  # largest difference seen per check, printed by test_zz_report


def note(name, got, want):
    diff = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
    LARGEST[name] = max(LARGEST.get(name, 0.0), diff)


def hf_rotary(kind, head_dim, section, base=10000.0, **rope):
    params = {
        "rope_type": "default",
        "rope_theta": base,
        "mrope_section": list(section),
        **rope,
    }
    if kind == "qwen3":
        params["mrope_interleaved"] = True
        config = Qwen3VLTextConfig(
            hidden_size=head_dim * 4,
            num_attention_heads=4,
            head_dim=head_dim,
            rope_parameters=params,
        )
        return Qwen3VLTextRotaryEmbedding(config)
    cls, emb = {
        "qwen2": (Qwen2VLTextConfig, Qwen2VLRotaryEmbedding),
        "qwen2_5": (Qwen2_5_VLTextConfig, Qwen2_5_VLRotaryEmbedding),
    }[kind]
    config = cls(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=4096,
        rope_parameters=params,
    )
    return emb(config)


def random_positions(batch, seq, generator):
    return torch.randint(0, 300, (3, batch, seq), generator=generator)


CASES = [
    ("qwen2", 128, [16, 24, 24], 1000000.0),
    ("qwen2", 16, [2, 3, 3], 10000.0),
    ("qwen2", 32, [8, 4, 4], 500.0),
    ("qwen2", 24, [0, 6, 6], 10000.0),
    ("qwen2_5", 128, [16, 24, 24], 1000000.0),
    ("qwen2_5", 8, [1, 2, 1], 10000.0),
    ("qwen3", 128, [24, 20, 20], 5000000.0),
    ("qwen3", 16, [2, 3, 3], 10000.0),
    ("qwen3", 64, [12, 10, 10], 10000.0),
    ("qwen3", 48, [10, 7, 7], 10000.0),
]


@pytest.mark.parametrize("kind,head_dim,section,base", CASES)
def test_apply_mrope_matches_qwen_rotary_embedding(kind, head_dim, section, base):
    g = torch.Generator().manual_seed(head_dim + len(kind))
    q = torch.randn(2, 3, 7, head_dim, generator=g)
    position_ids = random_positions(2, 7, g)
    rotary = hf_rotary(kind, head_dim, section, base)
    cos, sin = rotary(q, position_ids)
    want, _ = apply_rotary_pos_emb(q, q, cos, sin)
    got = apply_mrope(
        q, position_ids[:, :, None, :], section, interleaved=kind == "qwen3", base=base
    )
    note(f"apply_mrope vs {type(rotary).__name__}", got, want)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("kind", ["qwen2", "qwen3"])
@pytest.mark.parametrize(
    "rope",
    [
        {"rope_type": "linear", "factor": 4.0},
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024},
    ],
)
def test_apply_mrope_with_scaled_frequencies_matches_transformers(kind, rope):
    head_dim, section = 32, ([4, 6, 6] if kind == "qwen2" else [6, 5, 5])
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, 2, 9, head_dim, generator=g)
    position_ids = random_positions(1, 9, g) * 10
    rotary = hf_rotary(kind, head_dim, section, 10000.0, **rope)
    cos, sin = rotary(q, position_ids)
    want, _ = apply_rotary_pos_emb(q, q, cos, sin)
    params = {k: v for k, v in rope.items() if k != "rope_type"}
    inv_freq, factor = rope_lib.rope_frequencies(
        rope["rope_type"], head_dim, 10000.0, **params
    )
    got = apply_mrope(
        q,
        position_ids[:, :, None, :],
        section,
        interleaved=kind == "qwen3",
        inv_freq=inv_freq,
        attention_factor=factor,
    )
    note(f"apply_mrope (scaled) vs {type(rotary).__name__}", got, want)
    torch.testing.assert_close(got, want)


def reference_mrope(x, positions, axes, base):
    """float64 by hand: pair i (i, i + d/2) turned by positions[axes[i]] *
    base**(-2i/d)."""
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions.double()[axes].T * theta  # [seq, d/2]
    a, b = x[..., : d // 2].double(), x[..., d // 2 :].double()
    return torch.cat(
        [a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()], -1
    )


@pytest.mark.parametrize("interleaved", [False, True])
def test_apply_mrope_float64_stays_float64_and_matches_hand_reference(interleaved):
    torch.manual_seed(0)
    x = torch.randn(2, 5, 24, dtype=torch.float64)
    positions = torch.randint(0, 5000, (3, 5))
    section = [4, 4, 4]
    got = apply_mrope(x, positions, section, interleaved=interleaved, base=10000.0)
    assert got.dtype == torch.float64
    axes = mrope_pair_axes(section, interleaved=interleaved)
    want = reference_mrope(x, positions, axes, 10000.0)
    note("apply_mrope float64 vs hand reference", got, want)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_text_tokens_get_ordinary_rope():
    torch.manual_seed(1)
    x = torch.randn(2, 3, 11, 32)
    m = torch.arange(11) + 5
    for interleaved, section in ((False, [4, 6, 6]), (True, [6, 5, 5])):
        got = apply_mrope(x, m.expand(3, -1), section, interleaved=interleaved)
        torch.testing.assert_close(
            got, rope_lib.apply_rope(x, m, layout="half"), rtol=0, atol=0
        )


def test_interleaved_layout_is_the_half_layout_permuted():
    torch.manual_seed(2)
    x = torch.randn(4, 6, 16)
    positions = torch.randint(0, 50, (3, 6))
    half = apply_mrope(x, positions, [2, 3, 3])
    inter = apply_mrope(
        rope_lib.half_to_interleaved(x), positions, [2, 3, 3], layout="interleaved"
    )
    torch.testing.assert_close(rope_lib.half_to_interleaved(half), inter)


def test_score_depends_on_the_3d_offset_only():
    torch.manual_seed(3)
    q, k = torch.randn(1, 32), torch.randn(1, 32)
    p1, p2 = torch.tensor([[4], [7], [2]]), torch.tensor([[1], [3], [9]])
    shift = torch.tensor([[100], [-3], [40]])
    for interleaved, section in ((False, [4, 6, 6]), (True, [6, 5, 5])):

        def score(a, b, section=section, interleaved=interleaved):
            qa = apply_mrope(q, a, section, interleaved=interleaved)
            kb = apply_mrope(k, b, section, interleaved=interleaved)
            return (qa * kb).sum()

        torch.testing.assert_close(
            score(p1, p2), score(p1 + shift, p2 + shift), atol=1e-4, rtol=0
        )


def test_pair_axes_of_the_published_sections():
    qwen2 = mrope_pair_axes([16, 24, 24])
    assert qwen2.tolist() == [0] * 16 + [1] * 24 + [2] * 24
    qwen3 = mrope_pair_axes([24, 20, 20], interleaved=True)
    assert qwen3[:6].tolist() == [0, 1, 2, 0, 1, 2] and qwen3[60:].tolist() == [
        0,
        0,
        0,
        0,
    ]
    assert [int((qwen3 == a).sum()) for a in range(3)] == [24, 20, 20]


# --- position ids
# --------------------------------------------------------------------------


def hf_rope_index(
    kind, segments, merge, tokens_per_second=1, second_per_grid=None, video=False
):
    """transformers' own get_rope_index, run on a config holder (no weights needed)."""
    model_cls = {
        "qwen2": Qwen2VLModel,
        "qwen2_5": Qwen2_5_VLModel,
        "qwen3": Qwen3VLModel,
    }[kind]
    holder = SimpleNamespace(
        config=SimpleNamespace(
            vision_config=SimpleNamespace(
                spatial_merge_size=merge, tokens_per_second=tokens_per_second
            )
        ),
    )
    holder.get_vision_position_ids = functools.partial(
        model_cls.get_vision_position_ids, holder
    )
    types, grids = [], []
    for seg in segments:
        if isinstance(seg, int):
            types += [0] * seg
        else:
            types += [2 if video else 1] * (seg[0] * seg[1] * seg[2] // merge**2)
            grids.append(list(seg))
    ids = torch.zeros(1, len(types), dtype=torch.long)
    mm = torch.tensor([types])
    grid = torch.tensor(grids) if grids else None
    kwargs = {"video_grid_thw": grid} if video else {"image_grid_thw": grid}
    if kind == "qwen2_5" and second_per_grid is not None:
        kwargs["second_per_grid_ts"] = torch.tensor(
            [second_per_grid] * max(len(grids), 1)
        )
    position_ids, _ = model_cls.get_rope_index(holder, ids, mm, **kwargs)
    return position_ids[:, 0]


ID_CASES = [
    ("qwen2", [4, (1, 4, 6), 3], 1),
    ("qwen2", [5, (1, 8, 4), 2, (1, 2, 2), 1], 2),
    ("qwen2", [(1, 6, 6), 7], 2),
    ("qwen2", [3, (1, 3, 5)], 1),
    ("qwen2_5", [2, (1, 4, 4), 2], 2),
    ("qwen3", [1, (1, 10, 4), 6, (1, 4, 4), 2], 2),
]


@pytest.mark.parametrize("rule", ["qwen", "transformers5"])
@pytest.mark.parametrize("kind,segments,merge", ID_CASES)
def test_position_ids_match_get_rope_index(kind, segments, merge, rule):
    # after images (T = 1) the two rules agree: s + max(H, W) / m is the largest id + 1
    got = mrope_position_ids(segments, spatial_merge_size=merge, rule=rule)
    want = hf_rope_index(kind, segments, merge)
    note("mrope_position_ids vs get_rope_index", got, want)
    assert torch.equal(got, want)


@pytest.mark.parametrize(
    "grid,second_per_grid,tps",
    [((3, 4, 4), 0.5, 2), ((4, 2, 6), 2.0, 25), ((2, 4, 2), 1.3, 3)],
)
def test_video_position_ids_match_qwen2_5_vl(grid, second_per_grid, tps):
    segments = [3, grid, 2]
    got = mrope_position_ids(
        segments,
        spatial_merge_size=2,
        time_interval=tps * second_per_grid,
        rule="transformers5",
    )
    want = hf_rope_index("qwen2_5", segments, 2, tps, second_per_grid, video=True)
    note("mrope_position_ids (video) vs Qwen2.5-VL get_rope_index", got, want)
    assert torch.equal(got, want)
    # Qwen's rule (transformers 4.x get_rope_index: st_idx = llm_pos_ids_list[-1].max()
    # + 1): the same ids up to the end of the video, then the largest of them + 1
    qwen = mrope_position_ids(
        segments, spatial_merge_size=2, time_interval=tps * second_per_grid
    )
    end = 3 + grid[0] * (grid[1] // 2) * (grid[2] // 2)
    assert torch.equal(qwen[:, :end], want[:, :end])
    after = int(want[:, :end].max()) + 1 + torch.arange(2)
    assert torch.equal(qwen[:, end:], after.expand(3, 2))


def test_video_position_ids_match_qwen2_vl_frames():
    segments = [2, (3, 4, 6), 4]
    got = mrope_position_ids(segments, spatial_merge_size=2, rule="transformers5")
    want = hf_rope_index("qwen2", segments, 2, video=True)
    assert torch.equal(got, want)
    # grid steps t = 2, 3, 4 stay below s + max(H, W) / m = 2 + 3: the rules agree
    assert torch.equal(mrope_position_ids(segments, spatial_merge_size=2), want)


def test_the_two_video_rules_on_the_lessons_example():
    # lesson 14, section 6: 1 text token, 4 grid steps of 2 x 2 at 2 ids per step, 2
    # text tokens. t = 1, 3, 5, 7; h, w in 1..2. transformers 5: s + max(H, W) = 3;
    # Qwen's reference code: the largest id (7) + 1 = 8
    segments, interval = [1, (4, 2, 2), 2], 2.0
    qwen = mrope_position_ids(segments, time_interval=interval)
    hf5 = mrope_position_ids(segments, time_interval=interval, rule="transformers5")
    assert qwen[:, -2:].tolist() == [[8, 9]] * 3
    assert hf5[:, -2:].tolist() == [[3, 4]] * 3
    assert torch.equal(qwen[:, :-2], hf5[:, :-2])
    # a video on the meta device: the rule needs no values
    meta = mrope_position_ids(segments, time_interval=interval, device="meta")
    assert meta.shape == qwen.shape and meta.device.type == "meta"


def test_worked_example_by_hand():
    # 2 text tokens, a 2 x 3 image, 1 text token: the image starts at 2 and takes
    # h = 2..3, w = 2..4; the text after it continues at 2 + max(2, 3) = 5.
    ids = mrope_position_ids([2, (1, 2, 3), 1])
    assert ids.tolist() == [
        [0, 1, 2, 2, 2, 2, 2, 2, 5],
        [0, 1, 2, 2, 2, 3, 3, 3, 5],
        [0, 1, 2, 3, 4, 2, 3, 4, 5],
    ]


def test_pipeline_ids_then_rotation_matches_qwen2_vl():
    segments = [3, (1, 4, 6), 5]
    ids = mrope_position_ids(segments, spatial_merge_size=2)
    q = torch.randn(1, 2, ids.shape[1], 64, generator=torch.Generator().manual_seed(9))
    rotary = hf_rotary("qwen2", 64, [8, 12, 12], 1000000.0)
    cos, sin = rotary(q, hf_rope_index("qwen2", segments, 2)[:, None, :])
    want, _ = apply_rotary_pos_emb(q, q, cos, sin)
    got = apply_mrope(q, ids, [8, 12, 12], base=1000000.0)
    torch.testing.assert_close(got, want)


# --- contract
# -------------------------------------------------------------------------------


def test_meta_device_and_odd_strides():
    x = torch.empty(2, 3, 5, 16, device="meta")
    out = apply_mrope(x, torch.zeros(3, 5, dtype=torch.long, device="meta"), [2, 3, 3])
    assert out.device.type == "meta" and out.shape == x.shape
    base = torch.randn(5, 3, 2, 17)[..., 1:]  # a non-contiguous view with an odd offset
    xt = base.transpose(0, 2)
    positions = torch.randint(0, 9, (3, 5))
    want = apply_mrope(xt.contiguous(), positions, [2, 3, 3])
    torch.testing.assert_close(
        apply_mrope(xt, positions, [2, 3, 3]), want, rtol=0, atol=0
    )


def test_bfloat16_keeps_dtype_and_is_close():
    torch.manual_seed(5)
    x = torch.randn(2, 9, 32)
    positions = torch.randint(0, 200, (3, 9))
    got = apply_mrope(x.bfloat16(), positions, [4, 6, 6])
    assert got.dtype == torch.bfloat16
    want = apply_mrope(x.double(), positions, [4, 6, 6])
    assert (got.double() - want).abs().max() <= 4 * torch.finfo(torch.bfloat16).eps * 4


def test_gradient_flows():
    x = torch.randn(3, 16, dtype=torch.float64, requires_grad=True)
    positions = torch.randint(0, 20, (3, 3))
    assert torch.autograd.gradcheck(
        lambda t: apply_mrope(t, positions, [2, 3, 3]), (x,)
    )


@pytest.mark.parametrize(
    "call,name",
    [
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(3, 4), [2, 3, 2]),
            "mrope_section",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(2, 4), [2, 3, 3]),
            "positions",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(4), [2, 3, 3]),
            "positions",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(3, 5), [2, 3, 3]),
            "positions[0]",
        ),
        (
            lambda: apply_mrope(
                torch.randn(4, 16), torch.full((3, 4), float("nan")), [2, 3, 3]
            ),
            "positions[0]",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 15), torch.zeros(3, 4), [2, 3, 3]),
            "head_dim",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(3, 4), [2, 3]),
            "mrope_section",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(3, 4), [2, -1, 7]),
            "mrope_section[1]",
        ),
        (
            lambda: apply_mrope(torch.randn(4, 16), torch.zeros(3, 4), [2.0, 3, 3]),
            "mrope_section[0]",
        ),
        (
            lambda: apply_mrope(
                torch.arange(16.0).long(), torch.zeros(3, 4), [2, 3, 3]
            ),
            "x",
        ),
        (
            lambda: apply_mrope(
                torch.randn(4, 16), torch.zeros(3, 4), [2, 3, 3], layout="neox"
            ),
            "layout",
        ),
        (
            lambda: apply_mrope(
                torch.randn(4, 16), torch.zeros(3, 4), [2, 3, 3], inv_freq=torch.ones(5)
            ),
            "inv_freq",
        ),
        (lambda: mrope_position_ids([3, (1, 0, 2)]), "segments[1][1]"),
        (lambda: mrope_position_ids([3, "image"]), "segments[1]"),
        (lambda: mrope_position_ids([-1]), "segments[0]"),
        (
            lambda: mrope_position_ids([(1, 2, 2)], spatial_merge_size=0),
            "spatial_merge_size",
        ),
        (lambda: mrope_position_ids([(1, 2, 2)], spatial_merge_size=4), "segments[0]"),
        (
            lambda: mrope_position_ids([(2, 2, 2)], time_interval=float("nan")),
            "time_interval",
        ),
        (lambda: mrope_position_ids("text"), "segments"),
        (lambda: mrope_position_ids([2], rule="Qwen"), "rule"),
        (lambda: mrope_position_ids([2], rule="transformers4"), "rule"),
        (lambda: mrope_position_ids([2], rule=None), "rule"),
        (lambda: mrope_position_ids([2], rule=5), "rule"),
        (
            lambda: apply_axial_rope(
                torch.randn(4, 8), torch.zeros(2, 4), torch.tensor([0, 1, 2, 0])
            ),
            "pair_axes",
        ),
    ],
)
def test_wrong_input_names_the_argument(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


def test_interleaved_section_with_another_sum_warns_as_transformers_accepts_it():
    with pytest.warns(UserWarning, match="mrope_section"):
        axes = mrope_pair_axes([1, 3, 3], interleaved=True, n_pairs=12)
    want = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0]
    assert axes.tolist() == want


def test_zz_report(capsys):
    with capsys.disabled():
        for name, diff in sorted(LARGEST.items()):
            print(f"\n  largest difference, {name}: {diff:.3g}", end="")
    assert LARGEST, "the reference tests above ran first"
