"""2D axial RoPE (rope_lib.vision) against Hugging Face transformers' vision encoders:
PixtralVisionRotaryEmbedding + pixtral apply_rotary_pos_emb,
Qwen2VLVisionRotaryEmbedding +
apply_rotary_pos_emb_vision + vision_utils.get_vision_position_ids, and
DINOv3ViTRopePositionEmbedding + get_patches_center_coordinates + dinov3
apply_rotary_pos_emb
(class and register tokens left alone). Small random configs, no weights downloaded."""

import math

import pytest
import torch
from transformers import DINOv3ViTConfig, PixtralVisionConfig
from transformers.models.dinov3_vit import modeling_dinov3_vit as dinov3
from transformers.models.pixtral import modeling_pixtral as pixtral
from transformers.models.qwen2_vl import modeling_qwen2_vl as qwen2_vl
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
from transformers.vision_utils import get_vision_position_ids

import rope_lib
from rope_lib.vision import apply_2d_rope, axial_frequencies, patch_positions

LARGEST = {}


def note(name, got, want):
    diff = (got.double() - want.double()).abs().max().item()
    LARGEST[name] = max(LARGEST.get(name, 0.0), diff)


@pytest.mark.parametrize(
    "head_dim,base,rows,cols",
    [
        (64, 10000.0, 4, 6),
        (16, 10000.0, 3, 3),
        (32, 500.0, 7, 2),
        (8, 10000.0, 1, 5),
        (104, 1e6, 5, 5),
    ],
)
def test_pixtral_matches_transformers(head_dim, base, rows, cols):
    config = PixtralVisionConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        rope_parameters={"rope_type": "axial", "rope_theta": base},
    )
    rotary = pixtral.PixtralVisionRotaryEmbedding(config)
    g = torch.Generator().manual_seed(head_dim + rows)
    q = torch.randn(1, 2, rows * cols, head_dim, generator=g)
    # transformers' own grid: meshgrid of rows and columns, stacked per patch as (h, w)
    h, w = torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij")
    position_ids = torch.stack([h.flatten(), w.flatten()], dim=-1)
    cos, sin = rotary(q, position_ids)
    want, _ = pixtral.apply_rotary_pos_emb(q, q, cos, sin, unsqueeze_dim=0)
    positions = patch_positions(rows, cols, "pixtral")
    assert torch.equal(positions.T, position_ids)
    got = apply_2d_rope(q, positions, convention="pixtral", base=base)
    note("apply_2d_rope pixtral vs PixtralVisionRotaryEmbedding", got, want)
    torch.testing.assert_close(got, want)
    inv_freq, axes = axial_frequencies(head_dim, base, "pixtral")
    assert torch.equal(inv_freq, rotary.inv_freq)  # bit for bit
    assert axes.tolist() == [0] * (head_dim // 4) + [1] * (head_dim // 4)


@pytest.mark.parametrize(
    "head_dim,rows,cols,merge",
    [
        (16, 4, 6, 2),
        (32, 2, 2, 1),
        (80, 6, 4, 2),
        (8, 3, 6, 3),
    ],
)
def test_qwen2_vl_vision_matches_transformers(head_dim, rows, cols, merge):
    config = Qwen2VLVisionConfig(embed_dim=head_dim * 4, num_heads=4)
    rotary = qwen2_vl.Qwen2VLVisionRotaryEmbedding(config)
    position_ids = get_vision_position_ids(
        torch.tensor([[1, rows, cols]]), merge
    )  # [N, 2]
    positions = patch_positions(rows, cols, "qwen2_vl", merge_size=merge)
    assert torch.equal(positions.T, position_ids)
    g = torch.Generator().manual_seed(head_dim)
    q = torch.randn(
        rows * cols, 4, head_dim, generator=g
    )  # Qwen's vision layout [seq, heads, d]
    cos, sin = rotary(q, position_ids)
    want, _ = qwen2_vl.apply_rotary_pos_emb_vision(q, q, cos, sin)
    got = apply_2d_rope(q.transpose(0, 1), positions, convention="qwen2_vl").transpose(
        0, 1
    )
    note("apply_2d_rope qwen2_vl vs Qwen2VLVisionRotaryEmbedding", got, want)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize(
    "head_dim,patch,height,width,registers,base",
    [
        (16, 4, 16, 16, 4, 100.0),
        (32, 2, 10, 6, 0, 100.0),
        (64, 8, 24, 40, 2, 100.0),
        (24, 4, 8, 12, 1, 1000.0),
    ],
)
def test_dinov3_matches_transformers(head_dim, patch, height, width, registers, base):
    config = DINOv3ViTConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        patch_size=patch,
        image_size=height,
        num_register_tokens=registers,
        rope_theta=base,
    )
    rope = dinov3.DINOv3ViTRopePositionEmbedding(config).eval()
    cos, sin = rope(torch.zeros(1, 3, height, width))
    rows, cols = height // patch, width // patch
    n_prefix = 1 + registers
    g = torch.Generator().manual_seed(head_dim + registers)
    q = torch.randn(2, 2, n_prefix + rows * cols, head_dim, generator=g)
    want, _ = dinov3.apply_rotary_pos_emb(q, q, cos, sin)
    positions = patch_positions(rows, cols, "dinov3")
    coords = dinov3.get_patches_center_coordinates(
        rows, cols, torch.float32, torch.device("cpu")
    )
    assert torch.equal(positions.T, coords)
    got = apply_2d_rope(
        q, positions, convention="dinov3", base=base, n_prefix_tokens=n_prefix
    )
    note("apply_2d_rope dinov3 vs DINOv3ViTRopePositionEmbedding", got, want)
    # DINOv3 computes (2 pi coord) * f, rope_lib coord * (2 pi f): float32 rounding
    # apart
    torch.testing.assert_close(got, want)
    assert torch.equal(got[..., :n_prefix, :], q[..., :n_prefix, :])


def test_dinov3_frequencies_equal_the_models():
    for head_dim in (16, 24, 64, 128):
        config = DINOv3ViTConfig(hidden_size=head_dim * 2, num_attention_heads=2)
        rope = dinov3.DINOv3ViTRopePositionEmbedding(config)
        inv_freq, _ = axial_frequencies(head_dim, 100.0, "dinov3")
        want = 2 * math.pi * torch.cat([rope.inv_freq, rope.inv_freq])
        assert torch.equal(inv_freq, want)


def hand_reference(x, hw, phi, axes):
    """float64 by hand: pair i (i, i + d/2) turned by hw[axes[i]] * phi[i]."""
    d = x.shape[-1]
    angle = hw.double()[axes].T * phi.double()
    a, b = x[..., : d // 2].double(), x[..., d // 2 :].double()
    return torch.cat(
        [a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()], -1
    )


@pytest.mark.parametrize("convention", ["pixtral", "qwen2_vl", "dinov3"])
def test_float64_stays_float64(convention):
    torch.manual_seed(0)
    x = torch.randn(3, 12, 16, dtype=torch.float64)
    hw = patch_positions(3, 4, convention)
    got = apply_2d_rope(x, hw, convention=convention)
    assert got.dtype == torch.float64
    phi, axes = axial_frequencies(16, None, convention, dtype=torch.float64)
    want = hand_reference(x, hw, phi, axes)
    note(f"apply_2d_rope {convention} float64 vs hand reference", got, want)
    torch.testing.assert_close(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("convention", ["pixtral", "qwen2_vl"])
def test_score_depends_on_the_2d_offset_only(convention):
    torch.manual_seed(1)
    q, k = (
        torch.randn(1, 32, dtype=torch.float64),
        torch.randn(1, 32, dtype=torch.float64),
    )

    def score(p, r):
        qp = apply_2d_rope(q, torch.tensor(p).view(2, 1), convention=convention)
        kr = apply_2d_rope(k, torch.tensor(r).view(2, 1), convention=convention)
        return (qp * kr).sum()

    torch.testing.assert_close(score([3, 1], [0, 5]), score([13, 8], [10, 12]))
    # a different offset gives a different score
    assert abs(score([3, 1], [0, 5]) - score([3, 1], [5, 0])) > 1e-6


def test_interleaved_layout_is_the_half_layout_permuted():
    torch.manual_seed(2)
    x = torch.randn(2, 6, 16)
    hw = patch_positions(2, 3)
    half = apply_2d_rope(x, hw)
    inter = apply_2d_rope(rope_lib.half_to_interleaved(x), hw, layout="interleaved")
    torch.testing.assert_close(rope_lib.half_to_interleaved(half), inter)


def test_meta_device_bfloat16_and_views():
    out = apply_2d_rope(
        torch.empty(2, 7, 16, device="meta"),
        patch_positions(2, 3, device="meta"),
        n_prefix_tokens=1,
    )
    assert out.device.type == "meta" and out.shape == (2, 7, 16)
    x = torch.randn(6, 2, 17)[..., 1:].transpose(0, 1)  # non-contiguous, odd offset
    hw = patch_positions(2, 3)
    torch.testing.assert_close(
        apply_2d_rope(x, hw), apply_2d_rope(x.contiguous(), hw), rtol=0, atol=0
    )
    low = apply_2d_rope(x.bfloat16(), hw)
    assert low.dtype == torch.bfloat16
    assert (low.double() - apply_2d_rope(x.double(), hw)).abs().max() < 0.05


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: apply_2d_rope(torch.randn(6, 18), patch_positions(2, 3)), "head_dim"),
        (
            lambda: apply_2d_rope(
                torch.randn(6, 16), patch_positions(2, 3), convention="rope2d"
            ),
            "convention",
        ),
        (lambda: apply_2d_rope(torch.randn(6, 16), torch.zeros(3, 6)), "positions"),
        (
            lambda: apply_2d_rope(torch.randn(6, 16), patch_positions(2, 2)),
            "positions[0]",
        ),
        (
            lambda: apply_2d_rope(
                torch.randn(6, 16), patch_positions(2, 3), n_prefix_tokens=7
            ),
            "n_prefix_tokens",
        ),
        (
            lambda: apply_2d_rope(torch.randn(6, 16), patch_positions(2, 3), base=0.0),
            "base",
        ),
        (lambda: apply_2d_rope(torch.randn(6, 16).long(), patch_positions(2, 3)), "x"),
        (lambda: patch_positions(0, 3), "n_rows"),
        (lambda: patch_positions(2, 3, "qwen2_vl", merge_size=2), "merge_size"),
        (lambda: patch_positions(2, 2, "pixtral", merge_size=2), "merge_size"),
        (
            lambda: axial_frequencies(16, convention="pixtral", dtype=torch.int32),
            "dtype",
        ),
    ],
)
def test_wrong_input_names_the_argument(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


def test_zz_report(capsys):
    with capsys.disabled():
        for name, diff in sorted(LARGEST.items()):
            print(f"\n  largest difference, {name}: {diff:.3g}", end="")
    assert LARGEST
