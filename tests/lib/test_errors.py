"""Wrong input gets a ValueError or TypeError whose message names the argument."""

import pytest
import torch

import rope_lib

x = torch.randn(2, 4, 6, 8)
p = torch.arange(6)

CASES = [
    (
        "odd head_dim in x",
        lambda: rope_lib.apply_rope(torch.randn(2, 6, 7), p),
        ValueError,
        "head_dim",
    ),
    (
        "x not a tensor",
        lambda: rope_lib.apply_rope([[1.0, 2.0]], torch.arange(1)),
        TypeError,
        "x",
    ),
    (
        "integer x",
        lambda: rope_lib.apply_rope(
            torch.ones(3, 4, dtype=torch.int64), torch.arange(3)
        ),
        TypeError,
        "x",
    ),
    (
        "positions too long",
        lambda: rope_lib.apply_rope(x, torch.arange(7)),
        ValueError,
        "positions",
    ),
    (
        "positions [heads, seq] (read as [batch, seq]) with batch != heads",
        lambda: rope_lib.apply_rope(torch.randn(3, 2, 6, 8), torch.zeros(2, 6)),
        ValueError,
        "positions[None]",
    ),
    (
        "positions a list",
        lambda: rope_lib.apply_rope(x, list(range(6))),
        TypeError,
        "positions",
    ),
    (
        "unknown layout",
        lambda: rope_lib.apply_rope(x, p, layout="neox"),
        ValueError,
        "layout",
    ),
    (
        "inv_freq wrong shape",
        lambda: rope_lib.apply_rope(x, p, inv_freq=torch.ones(3)),
        ValueError,
        "inv_freq",
    ),
    (
        "negative attention_factor",
        lambda: rope_lib.apply_rope(x, p, attention_factor=-1.0),
        ValueError,
        "attention_factor",
    ),
    ("odd head_dim", lambda: rope_lib.inv_frequencies(7), ValueError, "head_dim"),
    ("zero base", lambda: rope_lib.inv_frequencies(8, 0.0), ValueError, "base"),
    ("odd d_model", lambda: rope_lib.sinusoidal_encoding(4, 5), ValueError, "d_model"),
    ("zero seq_len", lambda: rope_lib.sinusoidal_encoding(0, 4), ValueError, "seq_len"),
    ("odd dim", lambda: rope_lib.precompute_freqs_cis(7, 4), ValueError, "dim"),
    ("float end", lambda: rope_lib.precompute_freqs_cis(8, 4.5), TypeError, "end"),
    (
        "xk with another seq",
        lambda: rope_lib.apply_rotary_emb(
            torch.randn(1, 4, 2, 8),
            torch.randn(1, 3, 1, 8),
            rope_lib.precompute_freqs_cis(8, 4),
        ),
        ValueError,
        "xk",
    ),
    (
        "freqs_cis too long",
        lambda: rope_lib.apply_rotary_emb(
            torch.randn(1, 4, 2, 8),
            torch.randn(1, 4, 1, 8),
            rope_lib.precompute_freqs_cis(8, 9),
        ),
        ValueError,
        "freqs_cis",
    ),
    (
        "xq with 3 dims",
        lambda: rope_lib.apply_rotary_emb(
            torch.randn(4, 2, 8),
            torch.randn(4, 1, 8),
            rope_lib.precompute_freqs_cis(8, 4),
        ),
        ValueError,
        "xq",
    ),
    (
        "odd pairs to half",
        lambda: rope_lib.interleaved_to_half(torch.randn(3, 5)),
        ValueError,
        "x.shape[-1]",
    ),
    ("zero heads", lambda: rope_lib.alibi_slopes(0), ValueError, "n_heads"),
    ("float heads", lambda: rope_lib.alibi_slopes(2.0), TypeError, "n_heads"),
    ("alibi zero heads", lambda: rope_lib.alibi_bias(4, 0), ValueError, "n_heads"),
    (
        "alibi causal not bool",
        lambda: rope_lib.alibi_bias(4, 2, causal="yes"),
        TypeError,
        "causal",
    ),
    (
        "unknown rope_type",
        lambda: rope_lib.rope_frequencies("ntk-by-parts", 64),
        ValueError,
        "rope_type",
    ),
    (
        "missing factor",
        lambda: rope_lib.rope_frequencies("linear", 64),
        ValueError,
        "factor",
    ),
    (
        "missing max length",
        lambda: rope_lib.rope_frequencies("dynamic", 64, factor=2.0),
        ValueError,
        "max_position_embeddings",
    ),
    (
        "missing original length",
        lambda: rope_lib.rope_frequencies("yarn", 64, factor=2.0),
        ValueError,
        "original_max_position_embeddings",
    ),
    (
        "missing high_freq_factor",
        lambda: rope_lib.rope_frequencies(
            "llama3",
            64,
            factor=8.0,
            low_freq_factor=1.0,
            original_max_position_embeddings=8192,
        ),
        ValueError,
        "high_freq_factor",
    ),
    (
        "missing long_factor",
        lambda: rope_lib.rope_frequencies(
            "longrope", 4, short_factor=[1, 1], original_max_position_embeddings=8
        ),
        ValueError,
        "long_factor",
    ),
    (
        "misspelt parameter",
        lambda: rope_lib.rope_frequencies("linear", 64, factr=2.0),
        ValueError,
        "factr",
    ),
    (
        "odd head_dim in rope_frequencies",
        lambda: rope_lib.rope_frequencies("default", 63),
        ValueError,
        "head_dim",
    ),
    (
        "rotary module odd head_dim",
        lambda: rope_lib.RotaryEmbedding(9),
        ValueError,
        "head_dim",
    ),
    (
        "rotary module wrong batch",
        lambda: rope_lib.RotaryEmbedding(8)(x, torch.zeros(3, 6, dtype=torch.long)),
        ValueError,
        "positions",
    ),
    (
        "learned past max_len",
        lambda: rope_lib.LearnedPositionEmbedding(4, 8)(torch.randn(1, 5, 8)),
        ValueError,
        "max_len",
    ),
    (
        "attention heads do not divide",
        lambda: rope_lib.PositionalSelfAttention(10, 3),
        ValueError,
        "d_model",
    ),
    (
        "attention unknown scheme",
        lambda: rope_lib.PositionalSelfAttention(8, 2, "relative"),
        ValueError,
        "position",
    ),
]


@pytest.mark.parametrize("name,call,error,mentions", CASES, ids=[c[0] for c in CASES])
def test_wrong_input_is_named_in_the_error(name, call, error, mentions):
    with pytest.raises(error) as info:
        call()
    assert mentions in str(info.value)
    assert "got" in str(info.value) or "missing" in str(info.value)
