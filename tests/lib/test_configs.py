"""rope_lib.configs.read_rope_config against Hugging Face transformers' config classes:
for
the same config dict, transformers' config class (AutoConfig.for_model) and the model's
own
rotary embedding class give, per layer, the frequencies, attention factor and NoPE flags
that
read_rope_config must give. Small made-up dicts in the v4 spelling (rope_theta +
rope_scaling with type/rope_type) and the v5 one (rope_parameters, possibly per layer
type),
shaped like the real models' config.json files (no download)."""

import copy
import importlib
import math
import warnings

import pytest
import torch
from transformers import AutoConfig

from rope_lib.configs import read_rope_config
from rope_lib.models import describe_layers

LARGEST = {}

SMALL = {
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 64,
    "vocab_size": 128,
}

CONFIGS = {
    "llama2 (v4, no scaling)": {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "rope_theta": 10000.0,
        "rope_scaling": None,
        "max_position_embeddings": 4096,
    },
    "llama3.1 (v4 llama3)": {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "rope_theta": 500000.0,
        "max_position_embeddings": 131072,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    "llama (v4 'type': linear)": {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "rope_scaling": {"type": "linear", "factor": 2.0},
    },
    "llama (v4 dynamic)": {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "max_position_embeddings": 2048,
        "rope_scaling": {"type": "dynamic", "factor": 4.0},
    },
    "llama (v5)": {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "rope_parameters": {
            "rope_type": "yarn",
            "rope_theta": 10000.0,
            "factor": 4.0,
            "original_max_position_embeddings": 1024,
        },
    },
    "mistral (v4)": {
        "model_type": "mistral",
        "num_hidden_layers": 1,
        "rope_theta": 1e6,
        "head_dim": 32,
    },
    "qwen2 yarn (v4 'type')": {
        "model_type": "qwen2",
        "num_hidden_layers": 1,
        "rope_theta": 1e6,
        "max_position_embeddings": 32768,
        "rope_scaling": {
            "type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 32768,
        },
    },
    "qwen2_vl (v4 mrope, outer dict)": {
        "model_type": "qwen2_vl",
        "num_hidden_layers": 2,
        "rope_theta": 1e6,
        "max_position_embeddings": 32768,
        "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]},
        "text_config": {"model_type": "qwen2_vl_text", **SMALL, "num_hidden_layers": 2},
    },
    "qwen3_vl_text (v5)": {
        "model_type": "qwen3_vl_text",
        "num_hidden_layers": 1,
        "head_dim": 16,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 5e6,
            "mrope_section": [2, 3, 3],
            "mrope_interleaved": True,
        },
    },
    "deepseek_v3 (v4 yarn + mscale)": {
        "model_type": "deepseek_v3",
        "num_hidden_layers": 1,
        "qk_rope_head_dim": 16,
        "qk_nope_head_dim": 32,
        "v_head_dim": 16,
        "kv_lora_rank": 32,
        "q_lora_rank": 48,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "n_group": 2,
        "topk_group": 1,
        "max_position_embeddings": 163840,
        "rope_theta": 10000.0,
        "rope_scaling": {
            "type": "yarn",
            "factor": 40,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32,
            "beta_slow": 1,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
    },
    "phi3 128k (v4 longrope, top-level original)": {
        "model_type": "phi3",
        "num_hidden_layers": 1,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {
            "type": "longrope",
            "short_factor": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7],
            "long_factor": [1.0, 2.0, 4.0, 8.0, 9.0, 10.0, 11.0, 12.0],
        },
    },
    "phi4-mini-like (partial 0.75, longrope)": {
        "model_type": "phi3",
        "num_hidden_layers": 1,
        "hidden_size": 128,
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "partial_rotary_factor": 0.75,
        "rope_theta": 10000.0,
        "rope_scaling": {
            "type": "longrope",
            "short_factor": [1.0] * 12,
            "long_factor": [1.0 + i for i in range(12)],
        },
    },
    "gemma3_text (v4 linear + local base)": {
        "model_type": "gemma3_text",
        "num_hidden_layers": 8,
        "head_dim": 32,
        "rope_theta": 1e6,
        "rope_local_base_freq": 10000.0,
        "sliding_window_pattern": 6,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    },
    "gemma3_text (v5 per layer type)": {
        "model_type": "gemma3_text",
        "num_hidden_layers": 4,
        "head_dim": 16,
        "layer_types": ["sliding_attention", "full_attention"] * 2,
        "rope_parameters": {
            "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default", "rope_theta": 5e4},
        },
    },
    "gemma3 (v4, outer dict)": {
        "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text",
            **SMALL,
            "num_hidden_layers": 7,
            "head_dim": 16,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "rope_local_base_freq": 10000.0,
            "sliding_window_pattern": 6,
        },
    },
    "gemma4_text (defaults: p-RoPE global)": {
        "model_type": "gemma4_text",
        "num_hidden_layers": 6,
        "head_dim": 16,
        "global_head_dim": 64,
    },
    "gemma4_text (v5 explicit)": {
        "model_type": "gemma4_text",
        "num_hidden_layers": 3,
        "head_dim": 16,
        "global_head_dim": 32,
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            "full_attention": {
                "rope_type": "proportional",
                "rope_theta": 1e6,
                "partial_rotary_factor": 0.5,
            },
        },
    },
    "llama4_text (no_rope_layers default)": {
        "model_type": "llama4_text",
        "num_hidden_layers": 8,
        "head_dim": 16,
        "rope_theta": 500000.0,
        "rope_scaling": {
            "factor": 16.0,
            "high_freq_factor": 1.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
    },
    "llama4_text (explicit no_rope_layers)": {
        "model_type": "llama4_text",
        "num_hidden_layers": 4,
        "head_dim": 16,
        "no_rope_layers": [1, 0, 1, 0],
        "attn_temperature_tuning": False,
    },
    "smollm3 (interval)": {
        "model_type": "smollm3",
        "num_hidden_layers": 8,
        "no_rope_layer_interval": 4,
        "rope_theta": 2e6,
    },
    "smollm3 (explicit list, sliding)": {
        "model_type": "smollm3",
        "num_hidden_layers": 3,
        "no_rope_layers": [1, 1, 0],
        "use_sliding_window": True,
        "sliding_window": 128,
    },
    "cohere2 (pattern 4)": {
        "model_type": "cohere2",
        "num_hidden_layers": 8,
        "rope_theta": 50000.0,
        "sliding_window_pattern": 4,
    },
    "gpt_neox (v4 rotary_pct)": {
        "model_type": "gpt_neox",
        "num_hidden_layers": 2,
        "rotary_pct": 0.25,
        "rotary_emb_base": 10000,
    },
    "gpt_neox (defaults)": {
        "model_type": "gpt_neox",
        "num_hidden_layers": 1,
        "hidden_size": 128,
    },
    "glm4 (default partial 0.5)": {
        "model_type": "glm4",
        "num_hidden_layers": 1,
        "head_dim": 32,
        "rope_theta": 10000.0,
    },
    "glm4 (v5 partial inside)": {
        "model_type": "glm4",
        "num_hidden_layers": 1,
        "head_dim": 32,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 5e5,
            "partial_rotary_factor": 0.25,
        },
    },
    "llama with partial (ignored by default)": {
        "model_type": "llama",
        "num_hidden_layers": 1,
        "partial_rotary_factor": 0.5,
    },
}

# a config.json gives the model's sizes too
CONFIGS = {k: (v if "text_config" in v else {**SMALL, **v}) for k, v in CONFIGS.items()}


def transformers_config(config):
    d = copy.deepcopy(config)
    model_type = d.pop("model_type")
    if "text_config" in d:
        outer = AutoConfig.for_model(model_type, **d)
        return outer.text_config
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AutoConfig.for_model(model_type, **d)


def transformers_layers(config):
    """Per layer (inv_freq or None for NoPE, attention factor) from transformers'
    own code."""
    hf = transformers_config(config)
    family = hf.model_type.removesuffix("_text")
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    cls = next(
        getattr(module, n)
        for n in dir(module)
        if n.endswith("RotaryEmbedding") and "Vision" not in n
    )
    rotary = cls(hf)
    layer_types = getattr(hf, "layer_types", None) or [None] * hf.num_hidden_layers
    out = []
    for i, layer_type in enumerate(layer_types[: hf.num_hidden_layers]):
        if family in ("llama4", "smollm3") and not hf.no_rope_layers[i]:
            out.append((None, None))
            continue
        if family == "cohere2" and layer_type != "sliding_attention":
            out.append((None, None))
            continue
        if hasattr(rotary, f"{layer_type}_inv_freq"):
            out.append(
                (
                    getattr(rotary, f"{layer_type}_inv_freq"),
                    getattr(rotary, f"{layer_type}_attention_scaling"),
                )
            )
        else:
            out.append((rotary.inv_freq, rotary.attention_scaling))
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_read_rope_config_matches_transformers(name):
    config = CONFIGS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = transformers_layers(config)
    got = read_rope_config(copy.deepcopy(config))
    assert len(got) == len(want)
    for layer, (inv_freq, factor) in zip(got, want):
        if inv_freq is None:
            assert (
                not layer.uses_rope and layer.inv_freq is None and layer.rotary_dim == 0
            )
            continue
        assert layer.uses_rope
        torch.testing.assert_close(layer.inv_freq, inv_freq, rtol=0, atol=0)
        assert math.isclose(layer.attention_factor, factor, rel_tol=1e-12)
        assert layer.rotary_dim == 2 * inv_freq.shape[0]
        diff = (layer.inv_freq.double() - inv_freq.double()).abs().max().item()
        LARGEST["read_rope_config vs config class + rotary embedding"] = max(
            LARGEST.get("read_rope_config vs config class + rotary embedding", 0.0),
            diff,
        )


def test_config_dict_is_not_modified():
    config = CONFIGS["gemma3_text (v4 linear + local base)"]
    before = copy.deepcopy(config)
    read_rope_config(config)
    assert config == before


def test_what_each_layer_does_by_hand():
    llama4 = read_rope_config(CONFIGS["llama4_text (no_rope_layers default)"])
    assert [layer.uses_rope for layer in llama4] == [True, True, True, False] * 2
    assert llama4[3].temperature == {"floor_scale": 8192, "attn_scale": 0.1}
    assert llama4[0].rope_type == "llama3" and llama4[0].base == 500000.0

    gemma3 = read_rope_config(CONFIGS["gemma3_text (v4 linear + local base)"])
    assert [layer.base for layer in gemma3] == [1e4] * 5 + [1e6] + [1e4] * 2
    assert [layer.rope_type for layer in gemma3][4:7] == [
        "default",
        "linear",
        "default",
    ]

    gemma4 = read_rope_config(CONFIGS["gemma4_text (defaults: p-RoPE global)"])
    glob = gemma4[5]
    assert (glob.rope_type, glob.head_dim, glob.rotary_dim, glob.position_pairs) == (
        "proportional",
        64,
        64,
        8,
    )
    assert (gemma4[0].head_dim, gemma4[0].rotary_dim) == (16, 16)

    neox = read_rope_config(CONFIGS["gpt_neox (v4 rotary_pct)"])[0]
    assert (neox.head_dim, neox.rotary_dim, neox.partial_rotary_factor) == (16, 4, 0.25)

    deepseek = read_rope_config(CONFIGS["deepseek_v3 (v4 yarn + mscale)"])[0]
    assert (deepseek.head_dim, deepseek.rotary_dim) == (48, 16)
    assert deepseek.attention_factor == 1.0  # mscale / mscale_all_dim = 1

    cohere = read_rope_config(CONFIGS["cohere2 (pattern 4)"])
    assert [layer.uses_rope for layer in cohere] == [True, True, True, False] * 2

    qwen3 = read_rope_config(CONFIGS["qwen3_vl_text (v5)"])[0]
    assert qwen3.mrope_section == [2, 3, 3] and qwen3.mrope_interleaved
    qwen2 = read_rope_config(CONFIGS["qwen2_vl (v4 mrope, outer dict)"])[0]
    assert qwen2.mrope_section == [2, 1, 1] and not qwen2.mrope_interleaved
    assert qwen2.rope_type == "default" and qwen2.base == 1e6

    llama = read_rope_config(CONFIGS["llama with partial (ignored by default)"])[0]
    assert llama.rotary_dim == 16 and llama.partial_rotary_factor == 0.5


@pytest.mark.parametrize(
    "config,scheme",
    [
        (
            {"model_type": "bloom", "n_layer": 3, "n_head": 4, "hidden_size": 64},
            "alibi",
        ),
        (
            {
                "model_type": "mpt",
                "n_layers": 2,
                "n_heads": 4,
                "d_model": 64,
                "attn_config": {"alibi": True},
            },
            "alibi",
        ),
        ({"model_type": "gpt2", "n_layer": 2, "n_head": 4, "n_embd": 64}, "learned"),
    ],
)
def test_models_without_rope(config, scheme):
    hf = AutoConfig.for_model(**config)
    assert not getattr(
        hf, "rope_parameters", None
    )  # transformers keeps no RoPE for them
    layers = read_rope_config(config)
    assert len(layers) == hf.num_hidden_layers
    assert all(layer.scheme == scheme and not layer.uses_rope for layer in layers)
    assert layers[0].head_dim == 16


def test_describe_layers_groups_runs():
    lines = describe_layers(read_rope_config(CONFIGS["cohere2 (pattern 4)"]))
    assert (
        lines[0]
        == "layers 0-2 sliding_attention: default, base 50000, rotates 16 of 16"
    )
    assert lines[1] == "layer 3 full_attention: no position encoding (NoPE)"
    assert len(lines) == 4
    gemma4 = describe_layers(
        read_rope_config(CONFIGS["gemma4_text (defaults: p-RoPE global)"])
    )
    assert gemma4[-1] == (
        "layer 5 full_attention: proportional, base 1e+06, rotates 64 of 64 "
        "(8 pairs with frequency > 0)"
    )


@pytest.mark.parametrize(
    "config,name",
    [
        ([1, 2], "config"),
        (
            {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4},
            "num_hidden_layers",
        ),
        ({"model_type": "llama", "num_hidden_layers": 2}, "head_dim"),
        (
            {
                "model_type": "llama",
                "num_hidden_layers": 2,
                "head_dim": 16,
                "rope_scaling": {"type": "linear"},
            },
            "factor",
        ),
        (
            {
                "model_type": "llama",
                "num_hidden_layers": 2,
                "head_dim": 16,
                "rope_scaling": {"type": "stretch", "factor": 2.0},
            },
            "rope_type",
        ),
        (
            {
                "model_type": "gemma3_text",
                "num_hidden_layers": 4,
                "head_dim": 16,
                "layer_types": ["full_attention"],
            },
            "layer_types",
        ),
        (
            {
                "model_type": "llama4_text",
                "num_hidden_layers": 4,
                "head_dim": 16,
                "no_rope_layers": [1, 0],
            },
            "no_rope_layers",
        ),
        (
            {"model_type": "llama", "num_hidden_layers": 0, "head_dim": 16},
            "num_hidden_layers",
        ),
    ],
)
def test_wrong_config_names_the_problem(config, name):
    with pytest.raises((ValueError, TypeError)) as info:
        read_rope_config(config)
    assert name in str(info.value)


def test_zz_report(capsys):
    with capsys.disabled():
        for name, diff in sorted(LARGEST.items()):
            print(f"\n  largest difference, {name}: {diff:.3g}", end="")
    assert LARGEST
