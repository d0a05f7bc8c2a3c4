"""DeepSeek's YaRN temperature with mscale / mscale_all_dim, checked against transformers'
DeepSeek-V3 attention (multi-head latent attention) built from a tiny random config.

In DeepSeek-V3 each query/key head has qk_nope_head_dim coordinates that are NOT rotated and
qk_rope_head_dim coordinates that are (128 + 64 = 192). transformers puts YaRN's temperature in
two places:
- cos and sin get yarn_get_mscale(s, mscale) / yarn_get_mscale(s, mscale_all_dim): this reaches
  only the rotated coordinates, and their logits get its square;
- the softmax scale 1/sqrt(192) gets yarn_get_mscale(s, mscale_all_dim)**2: the whole head.
So the rotated part of a logit gets yarn_get_mscale(s, mscale)**2 and the other part only
yarn_get_mscale(s, mscale_all_dim)**2. With (mscale 1.0, mscale_all_dim 0.8, factor 40):
x1.8739 and x1.6773. Lesson 10 states this; these tests check it against transformers' module,
whose logits we record on their way into the softmax. (The course notes' YaRN section is where
this claim comes from; nothing here downloads anything.)
"""

import math

import pytest
import torch

from rope_lib import apply_rope, rope_frequencies

pytest.importorskip("transformers.models.deepseek_v3")
from transformers import DeepseekV3Config  # noqa: E402
from transformers.models.deepseek_v3 import modeling_deepseek_v3 as ds  # noqa: E402

FACTOR = 40.0
NOPE, ROPE, V = 12, 8, 6  # qk_nope_head_dim, qk_rope_head_dim, v_head_dim (tiny)
HEADS, HIDDEN, KV_RANK = 2, 32, 16
BASE, ORIGINAL = 10000.0, 4096


def mscale_by_hand(scale, mscale):
    """YaRN's sqrt(1/t) = 0.1 * mscale * ln(s) + 1 (s > 1), written out here."""
    return 0.1 * mscale * math.log(scale) + 1.0


def tiny_config(mscale, mscale_all_dim, rope_interleave=True):
    config = DeepseekV3Config(
        hidden_size=HIDDEN,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        q_lora_rank=None,
        kv_lora_rank=KV_RANK,
        qk_nope_head_dim=NOPE,
        qk_rope_head_dim=ROPE,
        v_head_dim=V,
        num_hidden_layers=1,
        intermediate_size=32,
        moe_intermediate_size=16,
        n_routed_experts=2,
        num_experts_per_tok=1,
        vocab_size=16,
        max_position_embeddings=int(FACTOR * ORIGINAL),
        rope_interleave=rope_interleave,
        rope_parameters={
            "rope_type": "yarn",
            "rope_theta": BASE,
            "factor": FACTOR,
            "original_max_position_embeddings": ORIGINAL,
            "mscale": mscale,
            "mscale_all_dim": mscale_all_dim,
        },
    )
    config._attn_implementation = "eager"
    return config


def run_attention(config, positions, monkeypatch, seed=0):
    """transformers' DeepSeek-V3 attention on random hidden states (float64).

    Returns the module, the hidden states, the logits it feeds to the softmax (recorded from
    its own eager attention function) and its query/key states."""
    torch.manual_seed(seed)
    attention = ds.DeepseekV3Attention(config, layer_idx=0).double().eval()
    rotary = ds.DeepseekV3RotaryEmbedding(config)
    hidden = torch.randn(1, len(positions), HIDDEN, dtype=torch.float64)
    position_ids = torch.as_tensor(positions).unsqueeze(0)
    cos, sin = rotary(hidden, position_ids)
    recorded = {}
    eager = ds.eager_attention_forward

    def recording(module, query, key, value, attention_mask, scaling, **kwargs):
        recorded.update(query=query, key=key, scaling=scaling)
        return eager(module, query, key, value, attention_mask, scaling, **kwargs)

    monkeypatch.setattr(ds, "eager_attention_forward", recording)
    with torch.no_grad():
        _, weights = attention(hidden, (cos, sin), attention_mask=None)
    q, k, scaling = recorded["query"], recorded["key"], recorded["scaling"]
    logits = q @ k.transpose(-1, -2) * scaling
    return attention, rotary, hidden, logits, weights, (q, k, scaling)


def unrotated_parts(attention, hidden):
    """The query/key halves before any rotation, computed from the module's weights here:
    q_pass [1, H, T, NOPE], q_rot [1, H, T, ROPE], k_nope [1, H, T, NOPE], k_rot [1, 1, T, ROPE]."""
    T = hidden.shape[1]
    with torch.no_grad():
        q = attention.q_proj(hidden).view(1, T, HEADS, NOPE + ROPE).transpose(1, 2)
        latent = attention.kv_a_proj_with_mqa(hidden)
        kv_latent, k_rot = latent[..., :KV_RANK], latent[..., KV_RANK:]
        kv = attention.kv_b_proj(attention.kv_a_layernorm(kv_latent))
        kv = kv.view(1, T, HEADS, NOPE + V).transpose(1, 2)
    return q[..., :NOPE], q[..., NOPE:], kv[..., :NOPE], k_rot.view(1, 1, T, ROPE)


def decomposition(attention, hidden, positions, layout):
    """Plain logits (no YaRN temperature anywhere, softmax scale 1/sqrt(NOPE + ROPE)), split
    into the part from the unrotated coordinates and the part from the rotated ones."""
    q_pass, q_rot, k_nope, k_rot = unrotated_parts(attention, hidden)
    inv_freq, _ = rope_frequencies(
        "yarn", ROPE, BASE, factor=FACTOR, original_max_position_embeddings=ORIGINAL
    )
    pos = torch.as_tensor(positions)
    q_r = apply_rope(q_rot, pos, inv_freq=inv_freq, layout=layout)
    k_r = apply_rope(k_rot, pos, inv_freq=inv_freq, layout=layout)
    scale = 1 / math.sqrt(NOPE + ROPE)
    plain_nope = q_pass @ k_nope.transpose(-1, -2) * scale
    plain_rot = q_r @ k_r.transpose(-1, -2) * scale
    return plain_nope, plain_rot


POSITIONS = [0, 1, 2, 5, 9, 17, 40, 100]
# transformers computes cos and sin in float32 (then casts them to the module's float64): the
# rotated part of a logit (about 1 in size here) carries float32 rounding, about 1e-7.
ATOL = 1e-6


def test_the_two_multipliers_by_hand():
    rotated = mscale_by_hand(FACTOR, 1.0) ** 2
    others = mscale_by_hand(FACTOR, 0.8) ** 2
    assert round(rotated, 4) == 1.8739
    assert round(others, 4) == 1.6773
    # cos and sin carry the ratio; its square times the softmax multiplier is the rotated part's
    on_cos_sin = mscale_by_hand(FACTOR, 1.0) / mscale_by_hand(FACTOR, 0.8)
    assert round(on_cos_sin, 4) == 1.0570
    assert math.isclose(on_cos_sin**2 * others, rotated, rel_tol=1e-12)


def test_transformers_puts_the_ratio_on_cos_sin_and_mscale_all_dim_on_the_softmax():
    config = tiny_config(1.0, 0.8)
    rotary = ds.DeepseekV3RotaryEmbedding(config)
    attention = ds.DeepseekV3Attention(config, layer_idx=0)
    assert math.isclose(
        rotary.attention_scaling,
        mscale_by_hand(FACTOR, 1.0) / mscale_by_hand(FACTOR, 0.8),
    )
    softmax_multiplier = attention.scaling * math.sqrt(NOPE + ROPE)
    assert math.isclose(softmax_multiplier, mscale_by_hand(FACTOR, 0.8) ** 2)
    # rope_lib's frequencies and attention factor for the rotated part are transformers'
    inv_freq, factor = rope_frequencies(
        "yarn",
        ROPE,
        BASE,
        factor=FACTOR,
        original_max_position_embeddings=ORIGINAL,
        mscale=1.0,
        mscale_all_dim=0.8,
    )
    assert torch.equal(inv_freq, rotary.inv_freq)
    assert math.isclose(factor, rotary.attention_scaling)


@pytest.mark.parametrize(
    "rope_interleave, layout", [(True, "interleaved"), (False, "half")]
)
def test_logits_are_1_8739_rotated_plus_1_6773_unrotated(
    rope_interleave, layout, monkeypatch
):
    config = tiny_config(1.0, 0.8, rope_interleave)
    attention, _, hidden, logits, weights, (q, k, scaling) = run_attention(
        config, POSITIONS, monkeypatch
    )
    plain_nope, plain_rot = decomposition(attention, hidden, POSITIONS, layout)
    rotated, others = mscale_by_hand(FACTOR, 1.0) ** 2, mscale_by_hand(FACTOR, 0.8) ** 2
    # both parts are material, so a wrong multiplier on either one would show
    assert plain_nope.abs().mean() > 0.05 and plain_rot.abs().mean() > 0.05

    expected = rotated * plain_rot + others * plain_nope
    assert torch.allclose(logits, expected, rtol=0, atol=ATOL)
    # each part on its own, read from transformers' query/key states (nope first, then rope)
    nope_part = q[..., :NOPE] @ k[..., :NOPE].transpose(-1, -2) * scaling
    rot_part = q[..., NOPE:] @ k[..., NOPE:].transpose(-1, -2) * scaling
    assert torch.allclose(nope_part, others * plain_nope, rtol=1e-6, atol=1e-9)
    assert torch.allclose(rot_part, rotated * plain_rot, rtol=0, atol=ATOL)
    # the naive reading, "the whole head gets yarn_get_mscale(s, mscale)^2", is off
    naive = rotated * (plain_rot + plain_nope)
    assert (logits - naive).abs().max() > 0.01
    # and the softmax transformers returns is the softmax of our decomposition
    assert torch.allclose(weights, torch.softmax(expected, dim=-1), rtol=0, atol=ATOL)


def test_deepseek_v3_config_mscale_equal_moves_everything_into_the_softmax(monkeypatch):
    # DeepSeek-V3's shipped config: mscale = mscale_all_dim = 1. cos/sin are left alone and
    # both parts of the head get the same 1.8739.
    config = tiny_config(1.0, 1.0)
    attention, rotary, hidden, logits, _, _ = run_attention(
        config, POSITIONS, monkeypatch
    )
    assert rotary.attention_scaling == 1.0
    plain_nope, plain_rot = decomposition(attention, hidden, POSITIONS, "interleaved")
    both = mscale_by_hand(FACTOR, 1.0) ** 2
    assert torch.allclose(logits, both * (plain_rot + plain_nope), rtol=0, atol=ATOL)
