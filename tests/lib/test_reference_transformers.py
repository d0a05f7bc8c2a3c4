"""rope_lib against Hugging Face transformers, the implementation most models run through."""

import math

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.llama.modeling_llama import (
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
)

import rope_lib


def llama_config(
    head_dim=64, base=10000.0, max_position_embeddings=2048, **rope_parameters
):
    rope_parameters = {"rope_type": "default", "rope_theta": base, **rope_parameters}
    return LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=rope_parameters,
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    "head_dim,base,seq", [(64, 10000.0, 300), (128, 500000.0, 2048), (16, 10000.0, 7)]
)
def test_half_layout_matches_llama_rotary_embedding(dtype, head_dim, base, seq):
    torch.manual_seed(0)
    q = torch.randn(2, 4, seq, head_dim).to(dtype)
    k = torch.randn(2, 2, seq, head_dim).to(dtype)
    position_ids = torch.arange(seq)[None].expand(2, seq)
    cos, sin = LlamaRotaryEmbedding(llama_config(head_dim, base))(q, position_ids)
    want_q, want_k = apply_rotary_pos_emb(q, k, cos, sin)
    got_q = rope_lib.apply_rope(q, torch.arange(seq), base=base, layout="half")
    got_k = rope_lib.apply_rope(k, torch.arange(seq), base=base, layout="half")
    assert got_q.dtype == dtype
    if dtype == torch.float32:
        torch.testing.assert_close(got_q, want_q)
        torch.testing.assert_close(got_k, want_k)
    else:
        # transformers rounds cos and sin to the input dtype before multiplying; rope_lib keeps them
        # in float32 and rounds once, at the end. Both are within a few units in the last place.
        eps = torch.finfo(dtype).eps
        truth = rope_lib.apply_rope(
            q.double(), torch.arange(seq), base=base, layout="half"
        )
        assert (got_q.double() - truth).abs().max() <= (
            want_q.double() - truth
        ).abs().max() + eps
        torch.testing.assert_close(
            got_q.float(), want_q.float(), atol=8 * eps, rtol=4 * eps
        )


def test_half_layout_with_per_batch_positions_and_scaling_matches_transformers():
    torch.manual_seed(1)
    config = llama_config(
        32,
        10000.0,
        256,
        rope_type="yarn",
        factor=4.0,
        original_max_position_embeddings=256,
    )
    q = torch.randn(3, 2, 5, 32)
    position_ids = torch.tensor(
        [[0, 1, 2, 3, 4], [100, 101, 102, 103, 104], [900, 901, 902, 903, 904]]
    )
    cos, sin = LlamaRotaryEmbedding(config)(q, position_ids)
    want, _ = apply_rotary_pos_emb(q, q, cos, sin)
    inv_freq, factor = rope_lib.rope_frequencies(
        "yarn", 32, factor=4.0, original_max_position_embeddings=256
    )
    got = rope_lib.apply_rope(
        q,
        position_ids[:, None, :],
        inv_freq=inv_freq,
        layout="half",
        attention_factor=factor,
    )
    torch.testing.assert_close(got, want)


def hf_frequencies(
    rope_type, head_dim, base, max_position_embeddings=2048, seq_len=None, **params
):
    config = llama_config(
        head_dim, base, max_position_embeddings, rope_type=rope_type, **params
    )
    return ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)


ROPE_CASES = [
    ("linear", 128, 10000.0, {"factor": 2.0}, {}),
    ("linear", 64, 500000.0, {"factor": 8.0}, {}),
    (
        "dynamic",
        128,
        10000.0,
        {"factor": 2.0},
        {"seq_len": 1000},
    ),  # below max: no change
    ("dynamic", 128, 10000.0, {"factor": 2.0}, {"seq_len": 2048}),
    ("dynamic", 128, 10000.0, {"factor": 2.0}, {"seq_len": 8000}),  # above max
    ("dynamic", 64, 500000.0, {"factor": 4.0}, {"seq_len": 20000}),
    (
        "yarn",
        128,
        10000.0,
        {"factor": 4.0, "original_max_position_embeddings": 4096},
        {},
    ),
    (
        "yarn",
        64,
        10000.0,
        {
            "factor": 16.0,
            "original_max_position_embeddings": 2048,
            "beta_fast": 16,
            "beta_slow": 2,
        },
        {},
    ),
    (
        "yarn",
        128,
        10000.0,
        {"factor": 4.0, "original_max_position_embeddings": 4096, "truncate": False},
        {},
    ),
    (
        "yarn",
        64,
        10000.0,
        {
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
        {},
    ),
    (
        "yarn",
        64,
        10000.0,
        {
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 0.707,
            "mscale_all_dim": 1.0,
        },
        {},
    ),
    (
        "yarn",
        128,
        10000.0,
        {
            "factor": 2.0,
            "original_max_position_embeddings": 4096,
            "attention_factor": 1.5,
        },
        {},
    ),
    (
        "llama3",
        128,
        500000.0,
        {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        {},
    ),
    (
        "llama3",
        64,
        10000.0,
        {
            "factor": 4.0,
            "low_freq_factor": 2.0,
            "high_freq_factor": 8.0,
            "original_max_position_embeddings": 1024,
        },
        {},
    ),
]


@pytest.mark.parametrize("rope_type,head_dim,base,params,extra", ROPE_CASES)
def test_rope_frequencies_match_transformers(rope_type, head_dim, base, params, extra):
    want_freq, want_factor = hf_frequencies(
        rope_type, head_dim, base, **extra, **params
    )
    max_len = {"max_position_embeddings": 2048} if rope_type == "dynamic" else {}
    got_freq, got_factor = rope_lib.rope_frequencies(
        rope_type, head_dim, base, **params, **extra, **max_len
    )
    torch.testing.assert_close(got_freq, want_freq)
    assert got_factor == pytest.approx(want_factor, rel=1e-12)


@pytest.mark.parametrize("seq_len", [None, 1000, 4096, 4097, 20000])
def test_longrope_short_and_long_match_transformers(seq_len):
    head_dim = 32
    short = [1.0 + 0.05 * i for i in range(head_dim // 2)]
    long = [1.0 + 0.9 * i for i in range(head_dim // 2)]
    params = {
        "short_factor": short,
        "long_factor": long,
        "original_max_position_embeddings": 4096,
    }
    config = llama_config(head_dim, 10000.0, 131072, rope_type="longrope", **params)
    want_freq, want_factor = ROPE_INIT_FUNCTIONS["longrope"](
        config, "cpu", seq_len=seq_len
    )
    got_freq, got_factor = rope_lib.rope_frequencies(
        "longrope",
        head_dim,
        10000.0,
        max_position_embeddings=131072,
        seq_len=seq_len,
        **params,
    )
    torch.testing.assert_close(got_freq, want_freq)
    assert got_factor == pytest.approx(want_factor, rel=1e-12)
    # The factor defaults to max / original = 32: sqrt(1 + ln 32 / ln 4096)
    assert got_factor == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))


def test_default_matches_llama_rotary_embedding_inv_freq():
    for head_dim, base in [(64, 10000.0), (128, 500000.0), (8, 10.0)]:
        rotary = LlamaRotaryEmbedding(llama_config(head_dim, base))
        got, factor = rope_lib.rope_frequencies("default", head_dim, base)
        torch.testing.assert_close(got, rotary.inv_freq)
        assert factor == 1.0 == rotary.attention_scaling


def test_static_ntk_equals_dynamic_ntk_at_the_matching_length():
    # dynamic NTK's base is base * (s * seq/L - (s - 1)) ** (d/(d-2)); at seq = L the bracket is 1,
    # at seq = 2L with s = 3 it is 4: static NTK with factor 4.
    want, _ = hf_frequencies("dynamic", 128, 10000.0, 2048, seq_len=4096, factor=3.0)
    got, _ = rope_lib.rope_frequencies("ntk", 128, 10000.0, factor=4.0)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("n_heads", list(range(1, 41)) + [48, 64, 80, 96, 112, 128])
def test_alibi_slopes_match_bloom(n_heads):
    seq = 6
    alibi = build_alibi_tensor(
        torch.ones(1, seq), n_heads, torch.float32
    )  # [heads, 1, seq] = slope * j
    torch.testing.assert_close(alibi[:, 0, 1], rope_lib.alibi_slopes(n_heads))
    torch.testing.assert_close(alibi, rope_lib.alibi.alibi_key_bias(seq, n_heads))


# --- edges where transformers accepts (or only warns about) an odd input: do what it does -----


def _yarn_config(**extra):
    return llama_config(
        64,
        max_position_embeddings=8192,
        rope_type="yarn",
        factor=4.0,
        original_max_position_embeddings=2048,
        **extra,
    )


@pytest.mark.parametrize("truncate", [None, True, False])
def test_yarn_truncate_none_true_false_match_transformers(truncate):
    # transformers reads rope_parameters.get("truncate", True): an explicit None rounds nothing
    want, _ = ROPE_INIT_FUNCTIONS["yarn"](
        _yarn_config(truncate=truncate, beta_fast=20, beta_slow=1.5), "cpu"
    )
    got, _ = rope_lib.rope_frequencies(
        "yarn",
        64,
        factor=4.0,
        original_max_position_embeddings=2048,
        truncate=truncate,
        beta_fast=20,
        beta_slow=1.5,
    )
    assert torch.equal(got, want)


def test_yarn_reversed_betas_warn_and_match_transformers():
    want, want_factor = ROPE_INIT_FUNCTIONS["yarn"](
        _yarn_config(beta_fast=1.0, beta_slow=32.0), "cpu"
    )
    with pytest.warns(UserWarning, match="beta_fast"):
        got, factor = rope_lib.rope_frequencies(
            "yarn",
            64,
            factor=4.0,
            original_max_position_embeddings=2048,
            beta_fast=1.0,
            beta_slow=32.0,
        )
    assert torch.equal(got, want) and factor == want_factor


def test_llama3_low_above_high_warns_and_matches_transformers():
    config = llama_config(
        64,
        max_position_embeddings=8192,
        rope_type="llama3",
        factor=8.0,
        low_freq_factor=4.0,
        high_freq_factor=1.0,
        original_max_position_embeddings=2048,
    )
    want, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    with pytest.warns(UserWarning, match="high_freq_factor"):
        got, _ = rope_lib.rope_frequencies(
            "llama3",
            64,
            factor=8.0,
            low_freq_factor=4.0,
            high_freq_factor=1.0,
            original_max_position_embeddings=2048,
        )
    assert torch.equal(torch.nan_to_num(got), torch.nan_to_num(want))


@pytest.mark.parametrize(
    "seq_len", [torch.tensor(5000), torch.tensor([3000]), torch.tensor(100)]
)
def test_dynamic_ntk_takes_a_tensor_seq_len_as_transformers_does(seq_len):
    config = llama_config(
        64, max_position_embeddings=2048, rope_type="dynamic", factor=4.0
    )
    want, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=seq_len.reshape(()))
    got, _ = rope_lib.rope_frequencies(
        "dynamic", 64, factor=4.0, max_position_embeddings=2048, seq_len=seq_len
    )
    assert torch.equal(got, want)
