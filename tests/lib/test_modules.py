"""The lessons' building blocks: sinusoids, the RoPE module, ALiBi tensors, the attention block."""

import math

import pytest
import torch

import rope_lib


def test_sinusoidal_encoding_is_the_papers_formula():
    pe = rope_lib.sinusoidal_encoding(50, 16)
    assert pe.shape == (50, 16) and pe.dtype == torch.float32
    for pos in (0, 1, 7, 49):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


@pytest.mark.parametrize("offset", [1, 5, 40])
def test_sinusoidal_shift_matrix_moves_every_position_by_the_offset(offset):
    pe = rope_lib.sinusoidal_encoding(100, 32).double()
    shift = rope_lib.sinusoidal.sinusoidal_shift_matrix(offset, 32)
    torch.testing.assert_close(
        pe[: 100 - offset] @ shift.T, pe[offset:], atol=1e-6, rtol=0
    )


def test_rotary_module_grows_its_cache_and_takes_per_batch_positions():
    torch.manual_seed(0)
    rope = rope_lib.RotaryEmbedding(16, initial_cache=4)
    x = torch.randn(2, 3, 6, 16)  # [batch, heads, seq, head_dim]
    positions = torch.tensor([[0, 1, 2, 3, 4, 5], [10, 11, 12, 13, 14, 15]])
    out = rope(x, positions)
    assert rope.cached_positions >= 16
    torch.testing.assert_close(out[0], rope_lib.apply_rope(x[0], positions[0]))
    torch.testing.assert_close(out[1], rope_lib.apply_rope(x[1], positions[1]))
    # seed 001's module took x [batch, seq, d] and positions [batch, seq]; that works too
    torch.testing.assert_close(
        rope(x[:, 0], positions), rope_lib.apply_rope(x[:, 0], positions)
    )
    # default positions 0..seq-1, float positions computed directly, both layouts
    torch.testing.assert_close(rope(x), rope_lib.apply_rope(x, torch.arange(6)))
    half = rope_lib.RotaryEmbedding(16, layout="half")
    fractional = torch.arange(6) / 4
    torch.testing.assert_close(
        half(x, fractional), rope_lib.apply_rope(x, fractional, layout="half")
    )


def test_learned_position_embedding_adds_its_rows():
    emb = rope_lib.LearnedPositionEmbedding(8, 4)
    x = torch.zeros(2, 5, 4)
    torch.testing.assert_close(emb(x), emb.table[:5].expand(2, 5, 4))
    assert emb.table.requires_grad


def test_alibi_bias_causal_and_symmetric():
    slopes = rope_lib.alibi_slopes(4)
    bias = rope_lib.alibi_bias(5, 4)
    sym = rope_lib.alibi_bias(5, 4, causal=False)
    for h in range(4):
        for i in range(5):
            for j in range(5):
                want = -slopes[h].item() * abs(i - j)
                assert sym[h, i, j].item() == pytest.approx(want)
                assert bias[h, i, j].item() == (want if j <= i else -math.inf)


def test_alibi_row_constant_form_gives_the_same_attention():
    torch.manual_seed(0)
    scores = torch.randn(8, 7, 7)
    causal = torch.ones(7, 7, dtype=torch.bool).triu(1)
    a = (scores + rope_lib.alibi_bias(7, 8)).softmax(-1)
    b = (
        (scores + rope_lib.alibi.alibi_key_bias(7, 8))
        .masked_fill(causal, -math.inf)
        .softmax(-1)
    )
    torch.testing.assert_close(a, b)


def test_alibi_slopes_for_twelve_heads_follow_the_papers_rule():
    # 8 slopes for 8 heads, then every other slope of the 16-head sequence: 2^-0.5, 2^-1.5, ...
    want = [2.0 ** (-h) for h in range(1, 9)] + [
        2.0 ** (-(2 * h + 1) / 2) for h in range(4)
    ]
    torch.testing.assert_close(rope_lib.alibi_slopes(12), torch.tensor(want))


def test_attention_without_positions_is_permutation_equivariant():
    torch.manual_seed(0)
    block = rope_lib.PositionalSelfAttention(16, 4, "none", causal=False)
    x = torch.randn(1, 6, 16)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    torch.testing.assert_close(block(x[:, perm]), block(x)[:, perm])


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned", "rope", "alibi"])
def test_attention_with_positions_is_not_permutation_equivariant(scheme):
    torch.manual_seed(0)
    block = rope_lib.PositionalSelfAttention(16, 4, scheme, causal=False)
    x = torch.randn(1, 6, 16)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    assert not torch.allclose(block(x[:, perm]), block(x)[:, perm], atol=1e-4)


def test_attention_with_rope_matches_scores_written_out():
    torch.manual_seed(0)
    block = rope_lib.PositionalSelfAttention(8, 2, "rope")
    x = torch.randn(1, 4, 8)
    _, weights = block(x, return_weights=True)
    q, k, _ = (x @ block.qkv.weight.T).view(1, 4, 3, 2, 4).permute(2, 0, 3, 1, 4)
    p = torch.arange(4)
    scores = (
        rope_lib.apply_rope(q, p) @ rope_lib.apply_rope(k, p).transpose(-1, -2) / 2.0
    )
    scores = scores.masked_fill(torch.ones(4, 4, dtype=torch.bool).triu(1), -math.inf)
    torch.testing.assert_close(weights, scores.softmax(-1))
    assert torch.all(weights.triu(1) == 0)


def test_attention_with_alibi_adds_the_bias():
    torch.manual_seed(0)
    block = rope_lib.PositionalSelfAttention(8, 2, "alibi")
    x = torch.randn(1, 5, 8)
    _, weights = block(x, return_weights=True)
    q, k, _ = (x @ block.qkv.weight.T).view(1, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
    scores = q @ k.transpose(-1, -2) / 2.0 + rope_lib.alibi_bias(5, 2)
    torch.testing.assert_close(weights, scores.softmax(-1))


def test_rotary_module_keeps_float32_angles_after_a_dtype_cast():
    # module.to(bfloat16) must not round the frequencies: at position 4000 a bfloat16 angle is
    # off by whole radians
    rope = rope_lib.RotaryEmbedding(64, initial_cache=4).to(torch.bfloat16)
    x = torch.randn(1, 2, 4, 64).to(torch.bfloat16)
    positions = torch.arange(4000, 4004)
    want = rope_lib.apply_rope(x.double(), positions)
    got = rope(x, positions)
    assert got.dtype == torch.bfloat16
    assert (got.double() - want).abs().max() < 0.05


@pytest.mark.parametrize("layout", rope_lib.LAYOUTS)
def test_gradients_flow_through_apply_rope(layout):
    # the gradient of a rotation is the inverse rotation; gradcheck compares with finite differences
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64, requires_grad=True)
    p = torch.arange(5)
    assert torch.autograd.gradcheck(
        lambda t: rope_lib.apply_rope(t, p, layout=layout), (x,)
    )
    assert torch.autograd.gradcheck(
        lambda t: rope_lib.apply_rope(t.transpose(0, 1), p, layout=layout), (x,)
    )


def test_attention_block_trains():
    torch.manual_seed(0)
    block = rope_lib.PositionalSelfAttention(16, 4, "rope")
    x = torch.randn(2, 6, 16)
    loss = block(x).pow(2).mean()
    loss.backward()
    assert block.qkv.weight.grad is not None and block.qkv.weight.grad.abs().sum() > 0
