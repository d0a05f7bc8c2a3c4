"""Partial rotary embeddings against Hugging Face transformers:

- rope_frequencies("proportional", ...) == ROPE_INIT_FUNCTIONS["proportional"] (Gemma
4's
  p-RoPE; also through Gemma4TextRotaryEmbedding + gemma4 apply_rotary_pos_emb);
- rope_frequencies("default", ..., partial_rotary_factor=p) == GPT-NeoX's
  compute_default_rope_parameters (the exponent's denominator is the rotated width);
- every other type with partial_rotary_factor == ROPE_INIT_FUNCTIONS[type];
- apply_rope(..., rotary_dim=r) == GPT-NeoX / Phi-3 (half layout) and GLM-4 (interleaved
  layout) apply_rotary_pos_emb, which rotate the first r coordinates and pass the rest.
"""

import math

import pytest
import torch
from transformers import (
    Gemma4TextConfig,
    Glm4Config,
    GPTNeoXConfig,
    LlamaConfig,
    Phi3Config,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.gemma4 import modeling_gemma4 as gemma4
from transformers.models.glm4 import modeling_glm4 as glm4
from transformers.models.gpt_neox import modeling_gpt_neox as gpt_neox
from transformers.models.phi3 import modeling_phi3 as phi3

import rope_lib

LARGEST = {}


def note(name, got, want):
    diff = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
    LARGEST[name] = max(LARGEST.get(name, 0.0), diff)


def llama_config(head_dim, **rope):
    return LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        head_dim=head_dim,
        max_position_embeddings=rope.pop("max_position_embeddings", 2048),
        rope_parameters=rope,
    )


@pytest.mark.parametrize(
    "head_dim,base,p,factor",
    [
        (512, 1e6, 0.25, 1.0),  # Gemma 4's global layers
        (64, 1e6, 0.25, 2.0),
        (128, 10000.0, 0.5, 1.0),
        (16, 10000.0, 1.0, 1.0),
        (256, 1e6, 0.0, 1.0),  # nothing rotated: every frequency 0
        (48, 500.0, 0.3, 8.0),  # p * d/2 = 7.2 pairs -> 7
        (96, 1e4, 0.75, 0.5),
    ],
)
def test_proportional_matches_rope_init_functions(head_dim, base, p, factor):
    config = llama_config(
        head_dim,
        rope_type="proportional",
        rope_theta=base,
        partial_rotary_factor=p,
        factor=factor,
    )
    want, want_factor = ROPE_INIT_FUNCTIONS["proportional"](config)
    got, got_factor = rope_lib.rope_frequencies(
        "proportional", head_dim, base, partial_rotary_factor=p, factor=factor
    )
    note('rope_frequencies("proportional") vs ROPE_INIT_FUNCTIONS', got, want)
    assert got.shape == (head_dim // 2,)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert got_factor == want_factor
    rotated = int(p * head_dim // 2)
    assert bool((got[rotated:] == 0).all()) and bool((got[:rotated] > 0).all())


def test_proportional_denominator_is_the_whole_head_and_defaults():
    got, _ = rope_lib.rope_frequencies(
        "proportional", 64, 10000.0, partial_rotary_factor=0.5
    )
    want = 10000.0 ** (
        -torch.arange(0, 32, 2, dtype=torch.float64) / 64
    )  # /64, not /32
    torch.testing.assert_close(got[:16].double(), want, rtol=1e-6, atol=0)
    # no partial_rotary_factor: transformers uses 1.0 (every pair rotated, plain RoPE)
    plain, _ = rope_lib.rope_frequencies("proportional", 64, 10000.0)
    torch.testing.assert_close(
        plain, rope_lib.inv_frequencies(64, 10000.0), rtol=0, atol=0
    )


def test_gemma4_global_layer_matches_transformers():
    config = Gemma4TextConfig(
        hidden_size=64,
        num_attention_heads=2,
        head_dim=16,
        global_head_dim=64,
        num_hidden_layers=6,
        intermediate_size=32,
        vocab_size=100,
    )
    rotary = gemma4.Gemma4TextRotaryEmbedding(config)
    q = torch.randn(1, 2, 9, 64, generator=torch.Generator().manual_seed(0))
    position_ids = (torch.arange(9) * 37)[None]
    cos, sin = rotary(q, position_ids, "full_attention")
    want = gemma4.apply_rotary_pos_emb(q, cos, sin)
    inv_freq, factor = rope_lib.rope_frequencies(
        "proportional", 64, 1e6, partial_rotary_factor=0.25
    )
    got = rope_lib.apply_rope(
        q, position_ids[0], inv_freq=inv_freq, layout="half", attention_factor=factor
    )
    note("apply_rope(proportional) vs Gemma4TextRotaryEmbedding", got, want)
    torch.testing.assert_close(got, want)
    # the unrotated pairs pass through: coordinates i and i + 32 for i >= 8
    assert torch.equal(got[..., 8:32], q[..., 8:32]) and torch.equal(
        got[..., 40:], q[..., 40:]
    )


@pytest.mark.parametrize(
    "hidden,heads,p,base",
    [
        (256, 4, 0.25, 10000.0),  # Pythia: head 64, 16 rotated
        (512, 4, 0.5, 10000.0),  # GLM-style half
        (512, 4, 0.75, 250000.0),
        (80, 4, 0.25, 10000.0),  # head 20 -> int(5): 3 frequencies with denominator 5
        (96, 2, 1.0, 10000.0),
        (192, 2, 0.4, 10000.0),  # head 96 -> 38
    ],
)
def test_default_partial_matches_gpt_neox(hidden, heads, p, base):
    config = GPTNeoXConfig(
        hidden_size=hidden,
        num_attention_heads=heads,
        rotary_pct=p,
        rotary_emb_base=base,
    )
    want = gpt_neox.GPTNeoXRotaryEmbedding(config).inv_freq
    head_dim = hidden // heads
    got, factor = rope_lib.rope_frequencies(
        "default", head_dim, base, partial_rotary_factor=p
    )
    note('rope_frequencies("default", partial) vs GPTNeoXRotaryEmbedding', got, want)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert factor == 1.0


def test_default_and_proportional_differ_in_the_denominator():
    neox, _ = rope_lib.rope_frequencies(
        "default", 64, 10000.0, partial_rotary_factor=0.25
    )
    prop, _ = rope_lib.rope_frequencies(
        "proportional", 64, 10000.0, partial_rotary_factor=0.25
    )
    # same number of rotated pairs, but GPT-NeoX spreads them from 1 to 10000^(-14/16),
    # p-RoPE keeps the full head's first 8 frequencies (down to 10000^(-14/64))
    assert neox.shape == (8,) and int((prop > 0).sum()) == 8
    torch.testing.assert_close(
        neox[-1].double(),
        torch.tensor(10000.0 ** (-14 / 16), dtype=torch.float64),
        rtol=1e-6,
        atol=0,
    )
    torch.testing.assert_close(
        prop[7].double(),
        torch.tensor(10000.0 ** (-14 / 64), dtype=torch.float64),
        rtol=1e-6,
        atol=0,
    )


SCALED = [
    ("linear", {"factor": 4.0}),
    ("dynamic", {"factor": 2.0}),
    ("yarn", {"factor": 8.0, "original_max_position_embeddings": 512}),
    (
        "yarn",
        {
            "factor": 4.0,
            "original_max_position_embeddings": 1024,
            "beta_fast": 16.0,
            "mscale": 1.0,
            "mscale_all_dim": 0.5,
        },
    ),
    (
        "llama3",
        {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 512,
        },
    ),
]


@pytest.mark.parametrize("rope_type,params", SCALED)
@pytest.mark.parametrize("head_dim,p", [(64, 0.5), (128, 0.25), (96, 0.75)])
def test_scaled_types_accept_partial_rotary_factor_as_transformers(
    rope_type, params, head_dim, p
):
    config = llama_config(
        head_dim,
        rope_type=rope_type,
        rope_theta=10000.0,
        partial_rotary_factor=p,
        **params,
    )
    want, want_factor = ROPE_INIT_FUNCTIONS[rope_type](config)
    got, got_factor = rope_lib.rope_frequencies(
        rope_type,
        head_dim,
        10000.0,
        partial_rotary_factor=p,
        max_position_embeddings=2048,
        **params,
    )
    note(f'rope_frequencies("{rope_type}", partial) vs ROPE_INIT_FUNCTIONS', got, want)
    assert got.shape == want.shape == (int(head_dim * p) // 2,)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    assert math.isclose(got_factor, want_factor, rel_tol=1e-12)


@pytest.mark.parametrize("head_dim,p", [(64, 0.5), (128, 0.25)])
def test_longrope_accepts_partial_rotary_factor_as_transformers(head_dim, p):
    n = int(head_dim * p) // 2
    params = {
        "short_factor": [1.0 + 0.1 * i for i in range(n)],
        "long_factor": [2.0 + 0.3 * i for i in range(n)],
        "original_max_position_embeddings": 512,
    }
    config = llama_config(
        head_dim,
        rope_type="longrope",
        rope_theta=10000.0,
        partial_rotary_factor=p,
        **params,
    )
    for seq_len in (None, 4096):
        want, want_factor = ROPE_INIT_FUNCTIONS["longrope"](config, seq_len=seq_len)
        got, got_factor = rope_lib.rope_frequencies(
            "longrope",
            head_dim,
            10000.0,
            partial_rotary_factor=p,
            seq_len=seq_len,
            max_position_embeddings=2048,
            **params,
        )
        note('rope_frequencies("longrope", partial) vs ROPE_INIT_FUNCTIONS', got, want)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        assert math.isclose(got_factor, want_factor, rel_tol=1e-12)


def test_ntk_with_partial_uses_the_rotated_width_like_dynamic():
    # static NTK with factor F + 1 equals dynamic NTK (factor F) at twice the trained
    # length
    config = llama_config(
        64,
        rope_type="dynamic",
        rope_theta=10000.0,
        partial_rotary_factor=0.5,
        factor=3.0,
        max_position_embeddings=1024,
    )
    want, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, seq_len=2048)
    got, _ = rope_lib.rope_frequencies(
        "ntk", 64, 10000.0, partial_rotary_factor=0.5, factor=4.0
    )
    torch.testing.assert_close(got, want, rtol=2e-6, atol=0)


# --- apply_rope(..., rotary_dim=r)
# ------------------------------------------------------------


@pytest.mark.parametrize(
    "hidden,heads,p", [(256, 4, 0.25), (512, 4, 0.5), (96, 2, 1.0)]
)
def test_rotary_dim_matches_gpt_neox(hidden, heads, p):
    config = GPTNeoXConfig(hidden_size=hidden, num_attention_heads=heads, rotary_pct=p)
    rotary = gpt_neox.GPTNeoXRotaryEmbedding(config)
    head_dim = hidden // heads
    g = torch.Generator().manual_seed(hidden)
    q = torch.randn(2, heads, 11, head_dim, generator=g)
    position_ids = torch.stack([torch.arange(11), torch.arange(11) + 500])
    cos, sin = rotary(q, position_ids)
    want, _ = gpt_neox.apply_rotary_pos_emb(q, q, cos, sin)
    r = int(head_dim * p)
    got = rope_lib.apply_rope(q, position_ids[:, None, :], rotary_dim=r, layout="half")
    note("apply_rope(rotary_dim) vs GPT-NeoX apply_rotary_pos_emb", got, want)
    torch.testing.assert_close(got, want)
    assert torch.equal(got[..., r:], q[..., r:])


@pytest.mark.parametrize("head_dim,p", [(32, 0.5), (128, 0.5), (64, 0.25)])
def test_rotary_dim_matches_glm4_interleaved(head_dim, p):
    config = Glm4Config(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        partial_rotary_factor=p,
        rope_theta=10000.0,
    )
    rotary = glm4.Glm4RotaryEmbedding(config)
    q = torch.randn(
        1, 2, 13, head_dim, generator=torch.Generator().manual_seed(head_dim)
    )
    position_ids = (torch.arange(13) * 7)[None]
    cos, sin = rotary(q, position_ids)
    want, _ = glm4.apply_rotary_pos_emb(q, q, cos, sin)
    r = int(head_dim * p)
    got = rope_lib.apply_rope(q, position_ids[0], rotary_dim=r, layout="interleaved")
    note("apply_rope(rotary_dim, interleaved) vs GLM-4 apply_rotary_pos_emb", got, want)
    torch.testing.assert_close(got, want)


def test_rotary_dim_matches_phi3_partial_longrope():
    head_dim, p = 64, 0.75
    n = int(head_dim * p) // 2
    rope = {
        "rope_type": "longrope",
        "short_factor": [1.0 + 0.05 * i for i in range(n)],
        "long_factor": [1.5 + 0.2 * i for i in range(n)],
    }
    config = Phi3Config(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        original_max_position_embeddings=1024,
        partial_rotary_factor=p,
        rope_parameters=rope,
    )
    rotary = phi3.Phi3RotaryEmbedding(config)
    q = torch.randn(1, 2, 5, head_dim, generator=torch.Generator().manual_seed(1))
    position_ids = (torch.arange(5) * 100)[None]
    cos, sin = rotary(q, position_ids)
    want, _ = phi3.apply_rotary_pos_emb(q, q, cos, sin)
    inv_freq, factor = rope_lib.rope_frequencies(
        "longrope",
        head_dim,
        10000.0,
        partial_rotary_factor=p,
        max_position_embeddings=4096,
        original_max_position_embeddings=1024,
        short_factor=rope["short_factor"],
        long_factor=rope["long_factor"],
    )
    got = rope_lib.apply_rope(
        q,
        position_ids[0],
        inv_freq=inv_freq,
        rotary_dim=2 * n,
        layout="half",
        attention_factor=factor,
    )
    note("apply_rope(rotary_dim, longrope) vs Phi-3 apply_rotary_pos_emb", got, want)
    torch.testing.assert_close(got, want)


def test_rotary_dim_contract():
    x = torch.randn(2, 3, 6, 16, dtype=torch.float64)
    positions = torch.arange(6)
    full = rope_lib.apply_rope(x, positions, rotary_dim=16)
    torch.testing.assert_close(full, rope_lib.apply_rope(x, positions), rtol=0, atol=0)
    part = rope_lib.apply_rope(x, positions, rotary_dim=8)
    assert part.dtype == torch.float64
    torch.testing.assert_close(
        part[..., :8], rope_lib.apply_rope(x[..., :8], positions)
    )
    assert torch.equal(part[..., 8:], x[..., 8:])
    assert torch.equal(rope_lib.apply_rope(x, positions, rotary_dim=0), x)
    meta = rope_lib.apply_rope(
        torch.empty(2, 6, 16, device="meta"), positions, rotary_dim=4
    )
    assert meta.device.type == "meta" and meta.shape == (2, 6, 16)
    view = torch.randn(6, 3, 17)[..., 1:].transpose(0, 1)  # odd offset, transposed
    torch.testing.assert_close(
        rope_lib.apply_rope(view, positions, rotary_dim=8),
        rope_lib.apply_rope(view.contiguous(), positions, rotary_dim=8),
    )


@pytest.mark.parametrize(
    "call,name",
    [
        (
            lambda: rope_lib.apply_rope(
                torch.randn(4, 16), torch.arange(4), rotary_dim=5
            ),
            "rotary_dim",
        ),
        (
            lambda: rope_lib.apply_rope(
                torch.randn(4, 16), torch.arange(4), rotary_dim=18
            ),
            "rotary_dim",
        ),
        (
            lambda: rope_lib.apply_rope(
                torch.randn(4, 16), torch.arange(4), rotary_dim=4.0
            ),
            "rotary_dim",
        ),
        (
            lambda: rope_lib.apply_rope(
                torch.randn(4, 16),
                torch.arange(4),
                rotary_dim=8,
                inv_freq=torch.ones(8),
            ),
            "inv_freq",
        ),
        (
            lambda: rope_lib.rope_frequencies("default", 64, partial_rotary_factor=1.5),
            "partial_rotary_factor",
        ),
        (
            lambda: rope_lib.rope_frequencies(
                "default", 64, partial_rotary_factor="half"
            ),
            "partial_rotary_factor",
        ),
        (
            lambda: rope_lib.rope_frequencies(
                "proportional", 64, partial_rotary_factor=-0.5
            ),
            "partial_rotary_factor",
        ),
        (lambda: rope_lib.rope_frequencies("proportional", 64, factor=0.0), "factor"),
    ],
)
def test_wrong_input_names_the_argument(call, name):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    assert name in str(info.value)


def test_a_rotated_width_of_zero_warns_and_rotates_nothing():
    # transformers accepts it (int(64 * 0.01) = 0 coordinates: empty frequencies)
    config = llama_config(
        64, rope_type="linear", rope_theta=1e4, partial_rotary_factor=0.01, factor=2.0
    )
    want, _ = ROPE_INIT_FUNCTIONS["linear"](config)
    with pytest.warns(UserWarning, match="partial_rotary_factor"):
        got, _ = rope_lib.rope_frequencies(
            "linear", 64, partial_rotary_factor=0.01, factor=2.0
        )
    assert got.shape == want.shape == (0,)
    x = torch.randn(3, 64)
    assert torch.equal(rope_lib.apply_rope(x, torch.arange(3), rotary_dim=0), x)


def test_zz_report(capsys):
    with capsys.disabled():
        for name, diff in sorted(LARGEST.items()):
            print(f"\n  largest difference, {name}: {diff:.3g}", end="")
    assert LARGEST
