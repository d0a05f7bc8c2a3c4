"""Published models' position settings, typed in as data, and what they mean per pair.

Each entry of MODELS holds the position-related keys of one model's config.json (in the
v4 spelling most files on the Hugging Face Hub still use), the lengths it was trained at
and claims to serve, and where the numbers come from. Only the keys that matter for
positions are kept (head sizes, layer counts, rope keys, layer patterns), and nothing is
downloaded. For example:

    layers = read_rope_config(MODELS["Llama 3.1 8B"].config)   # one LayerRope per layer
    model_curves("Llama 3.1 8B")      # one wavelength curve per kind of layer

Every value was checked against a public copy of the model's config.json, model card or
paper; where a copy could not settle a value, the entry's source says so.

BLOOM and MPT use ALiBi (no rotation): their entries have config None and alibi_heads;
their "curve" is 1/mu_h per head, the distance at which a head's bias costs one logit.

LEFT_OUT names models the course chose not to type in, and why. describe_layers(layers) says
in one line per run of identical layers what read_rope_config found (in the reader's language).
layer_pattern(name) says what the frequencies do not show: sliding windows and their sizes,
chunked attention, the split of local and full layers, NoPE layers and M-RoPE sections, as
typed in each entry's `layers` (tests/lessons/test_13_todays_models.py checks them against
transformers' config classes).

llama4_attention_scale(positions, floor_scale, attn_scale) is the position-dependent
query scale Llama 4 puts on its NoPE layers (attn_temperature_tuning in transformers'
Llama4TextAttention).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import torch

from ._checks import require_positive_float, require_positive_int
from .alibi import alibi_slopes
from .configs import LayerRope, read_rope_config
from .extension_analysis import wavelengths
from .language import N_, _, _fig


@dataclass(frozen=True)
class ModelEntry:
    """One row of the model table.

    config:          the position-related keys of its config.json (None for ALiBi)
    trained_length:  L, the length the position settings start from: the config's
                     original_max_position_embeddings where it has one (the length the
                     scaling stretches; for Llama 4 Scout not a training length), else the
                     pretraining length its paper or card gives, else its
                     max_position_embeddings (the source says which)
    context_length:  L', the context the model (or its card) claims
    source:          where the numbers come from (Hub repo id of the config, model card,
                     paper), and what could not be checked
    alibi_heads:     number of heads, for ALiBi models (config is None then)
    note:            one line on what is special
    layers:          the layer pattern the frequencies do not show, as (kind, count, size)
                     groups, one per kind of layer, with how many layers have it (counts,
                     not the order: GPT-OSS alternates sliding and full layers, Gemma 3
                     and 4 repeat five sliding then one full): ("sliding", n, window),
                     ("full", n, None),
                     ("chunked", n, chunk size), ("nope", n, None) for layers without
                     positions, ("mrope", n, (t, h, w)) or ("mrope_interleaved", n,
                     (t, h, w)) for M-RoPE sections; () when every layer attends to the
                     whole context with the same positions (layer_pattern formats it)
    """

    config: dict | None
    trained_length: int
    context_length: int
    source: str
    alibi_heads: int | None = None
    note: str = ""
    layers: tuple = ()


_LLAMA4_TEXT = {
    "model_type": "llama4_text",
    "hidden_size": 5120,
    "head_dim": 128,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "num_hidden_layers": 48,
    "max_position_embeddings": 10485760,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "factor": 16.0,
        "high_freq_factor": 1.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "no_rope_layers": [0 if (i + 1) % 4 == 0 else 1 for i in range(48)],
    "attention_chunk_size": 8192,
    "attn_temperature_tuning": 4,
    "floor_scale": 8192,
    "attn_scale": 0.1,
}

# microsoft/Phi-4-mini-instruct's rope_scaling.long_factor (48 pairs: 96 rotated of 128)
_PHI4_MINI_LONG_FACTOR = [
    1, 1.118320672, 1.250641126, 1.398617824, 1.564103225, 1.74916897, 1.956131817,
    2.187582649, 2.446418898, 2.735880826, 3.059592084, 3.421605075, 3.826451687,
    4.279200023, 4.785517845, 5.351743533, 5.984965424, 6.693110555, 7.485043894,
    8.370679318, 9.36110372, 10.4687158, 11.70738129, 13.09260651, 14.64173252,
    16.37415215, 18.31155283, 20.47818807, 22.90118105, 25.61086418, 28.64115884,
    32.03, 32.1, 32.13, 32.23, 32.6, 32.61, 32.64, 32.66, 32.7, 32.71, 32.93, 32.97,
    33.28, 33.49, 33.5, 44.16, 47.77,
]  # fmt: skip

MODELS: dict[str, ModelEntry] = {
    "Llama 2 7B": ModelEntry(
        {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_hidden_layers": 32,
            "max_position_embeddings": 4096,
            "rope_scaling": None,
        },
        4096,
        4096,
        "meta-llama/Llama-2-7b-hf config.json (no rope_theta: the default 10,000; "
        "num_key_value_heads 32, left out here); Touvron et al. 2023, arXiv:2307.09288 "
        "(4k context)",
        note="plain RoPE, base 10,000",
    ),
    "Llama 3.1 8B": ModelEntry(
        {
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 32,
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        },
        8192,
        131072,
        "meta-llama/Llama-3.1-8B config.json (L: its original_max_position_embeddings)",
        note="llama3 scaling, factor 8",
    ),
    "Llama 3.2 1B": ModelEntry(
        {
            "model_type": "llama",
            "hidden_size": 2048,
            "head_dim": 64,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 16,
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 32.0,
                "high_freq_factor": 4.0,
                "low_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        },
        8192,
        131072,
        "meta-llama/Llama-3.2-1B config.json (L: its original_max_position_embeddings)",
        note="llama3 scaling, factor 32, head 64",
    ),
    "Llama 4 Scout Instruct": ModelEntry(
        {"model_type": "llama4", "text_config": _LLAMA4_TEXT},
        8192,
        10485760,
        "meta-llama/Llama-4-Scout-17B-16E-Instruct text_config, the 10M-token config, "
        "as quoted by several public copies (vLLM, Neuron and engine test fixtures: "
        "llama3 scaling, factor 16, low = high = 1, max_position_embeddings "
        "10,485,760). The base checkpoint meta-llama/Llama-4-Scout-17B-16E ships the "
        "256K setting instead (factor 8, high_freq_factor 4, max_position_embeddings "
        "262,144, in public copies labelled with it); the Hub files were not read "
        "here. L: original_max_position_embeddings, not a pretraining length: Meta's "
        "announcement (5 April 2025) says Scout was pre- and post-trained at 256K. "
        "no_rope_layers written out: every 4th layer 0 (NoPE); attention_chunk_size "
        "8192 on the RoPE layers (transformers' Llama4TextConfig defaults)",
        note="every 4th layer NoPE, with a query temperature",
        layers=(("chunked", 36, 8192), ("nope", 12, None)),
    ),
    "Mistral 7B": ModelEntry(
        {
            "model_type": "mistral",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 32,
            "max_position_embeddings": 32768,
            "rope_theta": 10000.0,
            "sliding_window": 4096,
        },
        8192,
        8192,
        "mistralai/Mistral-7B-v0.1 config.json; Jiang et al. 2023, arXiv:2310.06825, "
        "Table 1 (window_size 4096, context_len 8192); the config's "
        "max_position_embeddings 32768 is not a claimed context",
        note="plain RoPE, 4096-token sliding window",
        layers=(("sliding", 32, 4096),),
    ),
    "Mistral 7B v0.3": ModelEntry(
        {
            "model_type": "mistral",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 32,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "sliding_window": None,
        },
        32768,
        32768,
        "mistralai/Mistral-7B-v0.3 config.json, as quoted by public copies (rope_theta "
        "1e6, sliding_window null); its card: v0.2's 32k context plus a larger "
        "vocabulary. L: max_position_embeddings (no training length published)",
        note="base 1,000,000, no sliding window",
    ),
    "Mistral Nemo 12B": ModelEntry(
        {
            "model_type": "mistral",
            "hidden_size": 5120,
            "head_dim": 128,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 40,
            "max_position_embeddings": 1024000,
            "rope_theta": 1000000.0,
            "sliding_window": None,
        },
        131072,
        131072,
        "mistralai/Mistral-Nemo-Base-2407 config.json, as quoted by public copies "
        "(rope_theta 1e6, max_position_embeddings 1024000, head_dim 128 with width "
        "5120); its card and Mistral's announcement (18 July 2024): trained with a "
        "128k context window, which is L and L'",
        note="base 1,000,000, 128k context",
    ),
    "Qwen2.5 7B + YaRN": ModelEntry(
        {
            "model_type": "qwen2",
            "hidden_size": 3584,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "num_hidden_layers": 28,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "rope_scaling": {
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
                "type": "yarn",
            },
        },
        32768,
        131072,
        "Qwen/Qwen2.5-7B-Instruct config.json, with the rope_scaling its model card "
        "says to add for texts over 32,768 tokens (section 'Processing Long Texts')",
        note="static YaRN, factor 4",
    ),
    "Qwen3 8B + YaRN": ModelEntry(
        {
            "model_type": "qwen3",
            "hidden_size": 4096,
            "head_dim": 128,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "num_hidden_layers": 36,
            "max_position_embeddings": 40960,
            "rope_theta": 1000000.0,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 32768,
            },
        },
        32768,
        131072,
        "Qwen/Qwen3-8B config.json (rope_theta 1e6, max_position_embeddings 40960, "
        "no rope_scaling), with the rope_scaling its model card says to add for "
        "texts over 32,768 tokens (section 'Processing Long Texts'); Qwen Team 2025, "
        "arXiv:2505.09388",
        note="static YaRN, factor 4",
    ),
    "Qwen2-VL 7B": ModelEntry(
        {
            "model_type": "qwen2_vl",
            "hidden_size": 3584,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "num_hidden_layers": 28,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        },
        32768,
        32768,
        "Qwen/Qwen2-VL-7B-Instruct config.json; L and L' are its "
        "max_position_embeddings (the card states no training length)",
        note="M-RoPE: pairs split 16/24/24 over (t, h, w)",
        layers=(("mrope", 28, (16, 24, 24)),),
    ),
    "Qwen3-VL 30B-A3B": ModelEntry(
        {
            "model_type": "qwen3_vl_moe",
            "text_config": {
                "model_type": "qwen3_vl_moe_text",
                "hidden_size": 2048,
                "head_dim": 128,
                "num_attention_heads": 32,
                "num_key_value_heads": 4,
                "num_hidden_layers": 48,
                "max_position_embeddings": 262144,
                "rope_theta": 5000000,
                "rope_scaling": {
                    "mrope_interleaved": True,
                    "mrope_section": [24, 20, 20],
                    "rope_type": "default",
                },
            },
        },
        262144,
        262144,
        "Qwen/Qwen3-VL-30B-A3B-Instruct config.json (text_config); L and L' are its "
        "max_position_embeddings",
        note="interleaved M-RoPE 24/20/20, base 5,000,000",
        layers=(("mrope_interleaved", 48, (24, 20, 20)),),
    ),
    "DeepSeek-V3": ModelEntry(
        {
            "model_type": "deepseek_v3",
            "hidden_size": 7168,
            "num_attention_heads": 128,
            "num_hidden_layers": 61,
            "kv_lora_rank": 512,
            "q_lora_rank": 1536,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "max_position_embeddings": 163840,
            "rope_theta": 10000,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
        },
        4096,
        131072,
        "deepseek-ai/DeepSeek-V3 config.json; DeepSeek-AI 2024, arXiv:2412.19437 "
        "(4k pretraining, then YaRN to 32k and 128k); L' = the card's 128K context "
        "(max_position_embeddings 163840 = 40 x 4096)",
        note="MLA: 64 of 192 query/key coordinates rotated, YaRN factor 40",
    ),
    "GPT-OSS 20B": ModelEntry(
        {
            "model_type": "gpt_oss",
            "hidden_size": 2880,
            "head_dim": 64,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "num_hidden_layers": 24,
            "max_position_embeddings": 131072,
            "rope_theta": 150000,
            "rope_scaling": {
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "rope_type": "yarn",
                "truncate": False,
            },
            "sliding_window": 128,
            "layer_types": ["sliding_attention", "full_attention"] * 12,
        },
        4096,
        131072,
        "openai/gpt-oss-20b config.json, as quoted by public copies (initial_context_"
        "length 4096; gpt-oss-120b has the same rope keys on 36 layers); OpenAI 2025, "
        "gpt-oss-120b & gpt-oss-20b Model Card, arXiv:2508.10925 (banded 128-token "
        "windows alternating with dense layers, a learned attention sink per head, "
        "YaRN to 131,072). L: original_max_position_embeddings",
        note="YaRN x32 (truncate false); 128-token windows every other layer",
        layers=(("sliding", 12, 128), ("full", 12, None)),
    ),
    "Gemma 3 4B": ModelEntry(
        {
            "model_type": "gemma3",
            "text_config": {
                "model_type": "gemma3_text",
                "hidden_size": 2560,
                "head_dim": 256,
                "num_attention_heads": 8,
                "num_key_value_heads": 4,
                "num_hidden_layers": 34,
                "max_position_embeddings": 131072,
                "rope_theta": 1000000.0,
                "rope_local_base_freq": 10000.0,
                "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                "sliding_window": 1024,
                "sliding_window_pattern": 6,
            },
        },
        32768,
        131072,
        "google/gemma-3-4b-it config.json (text_config), as quoted by public copies; "
        "Gemma Team 2025, arXiv:2503.19786 (32k pretraining, global layers rescaled "
        "by 8 to 128k)",
        note="5 local (base 10k) : 1 global (base 1M, linear x8)",
        layers=(("sliding", 29, 1024), ("full", 5, None)),
    ),
    "Gemma 4 26B-A4B": ModelEntry(
        {
            "model_type": "gemma4",
            "text_config": {
                "model_type": "gemma4_text",
                "hidden_size": 2816,
                "head_dim": 256,
                "global_head_dim": 512,
                "num_attention_heads": 16,
                "num_key_value_heads": 8,
                "num_hidden_layers": 30,
                "max_position_embeddings": 262144,
                "sliding_window": 1024,
                "rope_parameters": {
                    "full_attention": {
                        "partial_rotary_factor": 0.25,
                        "rope_type": "proportional",
                        "rope_theta": 1000000.0,
                    },
                    "sliding_attention": {
                        "rope_type": "default",
                        "rope_theta": 10000.0,
                    },
                },
            },
        },
        262144,
        262144,
        "google/gemma-4-26B-A4B-it config.json (text_config), as quoted in public code "
        "(not read from the Hub here)",
        note="p-RoPE on 512-wide global heads: 64 of 256 pairs turn",
        layers=(("sliding", 25, 1024), ("full", 5, None)),
    ),
    "Pythia 1.4B (GPT-NeoX)": ModelEntry(
        {
            "model_type": "gpt_neox",
            "hidden_size": 2048,
            "num_attention_heads": 16,
            "num_hidden_layers": 24,
            "max_position_embeddings": 2048,
            "rotary_pct": 0.25,
            "rotary_emb_base": 10000,
        },
        2048,
        2048,
        "EleutherAI/pythia-1.4b config.json and the training config "
        "models/1.4B/pythia-1.4b.yml (seq-length 2048, rotary-pct 0.25); Biderman et "
        "al. 2023, arXiv:2304.01373",
        note="partial rotary: 32 of 128 coordinates",
    ),
    "GLM-4 9B": ModelEntry(
        {
            "model_type": "glm",
            "hidden_size": 4096,
            "head_dim": 128,
            "num_attention_heads": 32,
            "num_key_value_heads": 2,
            "num_hidden_layers": 40,
            "max_position_embeddings": 131072,
            "partial_rotary_factor": 0.5,
            "rope_theta": 5000000.0,
        },
        131072,
        131072,
        "THUDM/glm-4-9b-chat config.json, as quoted by public copies: rope_ratio 500, "
        "seq_length 131072; its modeling_chatglm.py turns pairs at base 10,000 x "
        "rope_ratio = 5,000,000 (GLM-4-9B-Chat-1M: rope_ratio 10000). Written here in "
        "transformers' glm keys. The base in the -hf conversion's own config.json "
        "could not be confirmed here (one unofficial copy quotes rope_theta 10000.0). "
        "Every value is "
        "the chat model's: L and L' are its seq_length (no training length "
        "published); the GLM-4-9B base model's card gives 8K, with a base not "
        "checked here",
        note="partial rotary: 64 of 128 coordinates, interleaved; base 5,000,000",
    ),
    "Phi-4-mini": ModelEntry(
        {
            "model_type": "phi3",
            "hidden_size": 3072,
            "num_attention_heads": 24,
            "num_key_value_heads": 8,
            "num_hidden_layers": 32,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "partial_rotary_factor": 0.75,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "type": "longrope",
                "short_factor": [1.0] * 48,
                "long_factor": _PHI4_MINI_LONG_FACTOR,
            },
        },
        4096,
        131072,
        "microsoft/Phi-4-mini-instruct config.json, as quoted by several public copies "
        "(the same 48 long_factor values in each); Microsoft 2025, arXiv:2503.01743. "
        "long_factor: pairs 0-31 a geometric ramp (ratio 1.1183) from 1 to 32.03, an "
        "NTK-like base change, then 32.1-33.5 and two tail values 44.16, 47.77. "
        "transformers' rotary class starts from short_factor (all 1: plain "
        "frequencies) and switches to long_factor once a text is longer than 4096 "
        "tokens; the attention factor sqrt(1 + ln 32 / ln 4096) = 1.190 scales cos "
        "and sin at every length, as in Microsoft's Phi-3 code. L: "
        "original_max_position_embeddings",
        note="partial rotary 0.75 (96 of 128) + LongRoPE",
    ),
    "BLOOM 176B (ALiBi)": ModelEntry(
        None,
        2048,
        2048,
        "bigscience/bloom config.json (n_head 112, n_layer 70); its model card and "
        "BigScience 2022, arXiv:2211.05100 (sequence length 2048)",
        alibi_heads=112,
        note="ALiBi, 112 heads (not a power of two)",
    ),
    "MPT 7B (ALiBi)": ModelEntry(
        None,
        2048,
        2048,
        "mosaicml/mpt-7b config.json (n_heads 32, max_seq_len 2048, attn_config alibi "
        "true, alibi_bias_max 8), checked against a public copy of mpt-7b-instruct's "
        "config, which has the same architecture",
        alibi_heads=32,
        note="ALiBi, 32 heads",
    ),
}

#: Models the table leaves out, and why.
LEFT_OUT = {
    "Phi-3 mini 128k": N_(
        "LongRoPE with 48 searched factors per list (short_factor, long_factor); the "
        "lists could not be checked against the published config here, so they are "
        "not typed in"
    ),
}


def model_layers(name: str):
    """read_rope_config of a model's config: one LayerRope per layer (RoPE only)."""
    entry = _entry(name)
    if entry.config is None:
        raise ValueError(
            _("{name!r} uses ALiBi: it has no rotary layers (see model_curves)").format(
                name=name
            )
        )
    with warnings.catch_warnings():
        # Llama 4 Scout ships low_freq_factor == high_freq_factor (one cut instead of
        # a ramp), which transformers and rope_lib warn about; the table reads it as
        # published
        warnings.filterwarnings("ignore", message="high_freq_factor must be greater")
        return read_rope_config(entry.config)


#: Names of the config's layer types in the reader's language (the English keeps the
#: config's own id; other types are shown as the config spells them).
LAYER_TYPE_NAMES = {
    "sliding_attention": N_("sliding_attention"),
    "full_attention": N_("full_attention"),
    "chunked_attention": N_("chunked_attention"),
}


def describe_layers(layers: list[LayerRope]) -> list[str]:
    """One short line per run of identical layers, in the reader's language, e.g.
    'layers 0-4 sliding_attention: default, base 10000, rotates 256 of 256' (in Chinese
    '第 0–4 层（滑动窗口）：default，底数 10000，……')."""
    lines = []

    def text(layer):
        kind = layer.layer_type or ""
        if layer.scheme == "alibi":
            return kind, _("ALiBi (a linear bias on the scores, no rotation)")
        if layer.scheme == "learned":
            return kind, _("learned absolute positions (added to the input)")
        if not layer.uses_rope:
            return kind, _("no position encoding (NoPE)")
        base = f"{layer.base:g}" if layer.base is not None else "?"
        what = _("{rope_type}, base {base}, rotates {rotary_dim} of {head_dim}").format(
            rope_type=layer.rope_type,
            base=base,
            rotary_dim=layer.rotary_dim,
            head_dim=layer.head_dim,
        )
        if layer.position_pairs != layer.rotary_dim // 2:
            what += _(" ({pairs} pairs with frequency > 0)").format(
                pairs=layer.position_pairs
            )
        if not math.isclose(layer.attention_factor, 1.0):
            what += _(", attention factor {factor:.4f}").format(
                factor=layer.attention_factor
            )
        return kind, what

    start = 0
    for i in range(1, len(layers) + 1):
        if i < len(layers) and text(layers[i]) == text(layers[start]):
            continue
        kind, what = text(layers[start])
        if kind:
            name = LAYER_TYPE_NAMES.get(kind)
            kind = _(name) if name else kind
        if i - 1 == start:
            template = (
                _("layer {first} {layer_type}: {what}")
                if kind
                else _("layer {first}: {what}")
            )
        else:
            template = (
                _("layers {first}-{last} {layer_type}: {what}")
                if kind
                else _("layers {first}-{last}: {what}")
            )
        lines.append(
            template.format(first=start, last=i - 1, layer_type=kind, what=what)
        )
        start = i
    return lines


#: The kinds of layer a curve's label names (a config's layer_type without "_attention").
LAYER_KINDS = {
    "all": N_("all"),
    "full": N_("full"),
    "sliding": N_("sliding"),
    "chunked": N_("chunked"),
}


def model_curves(name: str) -> list[dict]:
    """What to draw for one model: one dict per kind of layer,

        {"label",
         "layers" (how many),
         "x" (pair i / number of pairs, or head h / H for ALiBi),
         "y" (wavelength 2 pi / theta_i in tokens; inf for a frequency-0 pair;
              1/mu_h for ALiBi),
         "kind" ("rope", "nope" or "alibi")}.

    Layers with the same frequencies are one curve."""
    entry = _entry(name)
    if entry.config is None:
        return [_alibi_curve(entry.alibi_heads)]
    groups: dict = {}
    for layer in model_layers(name):
        if not layer.uses_rope:
            key = ("nope",)
        else:
            key = (layer.layer_type, tuple(layer.inv_freq.tolist()))
        if key in groups:
            groups[key]["layers"] += 1
        else:
            groups[key] = _layer_curve(layer)
    for group in groups.values():
        group["label"] = _fig("{label} (x{layers} layers)").format(
            label=group["label"], layers=group["layers"]
        )
    return list(groups.values())


def _alibi_curve(heads: int) -> dict:
    """1/mu_h per head: the distance at which head h's bias costs one logit."""
    slopes = alibi_slopes(heads).double()
    return {
        "label": _fig("ALiBi, {heads} heads: 1/mu_h").format(heads=heads),
        "layers": None,
        "x": (torch.arange(heads, dtype=torch.float64) + 0.5) / heads,
        "y": 1.0 / slopes,
        "kind": "alibi",
    }


def _layer_curve(layer: LayerRope) -> dict:
    """The wavelength curve lambda_i = 2 pi / theta_i of one layer (none for NoPE)."""
    if not layer.uses_rope:
        return {"label": "NoPE", "layers": 1, "x": None, "y": None, "kind": "nope"}
    kind = layer.layer_type.replace("_attention", "") if layer.layer_type else "all"
    label = _fig("{kind}: base {base:g}, {turning}/{head_dim} dims turn").format(
        kind=_fig(LAYER_KINDS.get(kind, kind)),
        base=layer.base,
        turning=2 * layer.position_pairs,
        head_dim=layer.head_dim,
    )
    inv_freq = layer.inv_freq.double()
    y = torch.full_like(inv_freq, math.inf)
    turning = inv_freq > 0
    y[turning] = wavelengths(inv_freq[turning])
    # pairs over the whole head: a partial rotary head's unrotated coordinates are not
    # pairs here (they have no frequency at all)
    x = (torch.arange(inv_freq.numel(), dtype=torch.float64) + 0.5) / (
        layer.head_dim // 2
    )
    return {"label": label, "layers": 1, "x": x, "y": y, "kind": "rope"}


def model_summary(name: str, *, nope: bool = True) -> str:
    """One short line: rope type, base and rotated / head width of each kind of layer,
    then (with nope=True) the NoPE layers, joined by " | "; "ALiBi, n heads" for ALiBi
    models. The lengths L and L' are the entry's trained_length and context_length.
    nope=False leaves the NoPE count out, for a table whose layer_pattern column already
    says it ("NoPE x12")."""
    entry = _entry(name)
    if entry.config is None:
        return _("ALiBi, {heads} heads").format(heads=entry.alibi_heads)
    layers = model_layers(name)
    kinds = []
    for layer in layers:
        if not layer.uses_rope:
            continue
        pairs = layer.position_pairs
        text = f"{layer.rope_type} b={layer.base:g} {pairs * 2}/{layer.head_dim}"
        if text not in kinds:
            kinds.append(text)
    count = sum(not layer.uses_rope for layer in layers)
    if count and nope:
        kinds.append(
            _("NoPE {nope}/{layers} layers").format(nope=count, layers=len(layers))
        )
    return " | ".join(kinds)


#: How layer_pattern writes each kind of group (translated when shown).
PATTERN_TEXT = {
    "sliding": N_("SWA {size} x{count}"),
    "full": N_("full x{count}"),
    "chunked": N_("chunk {size} x{count}"),
    "nope": N_("NoPE x{count}"),
    "mrope": N_("M-RoPE {t}/{h}/{w}"),
    # interleaved sections (Qwen3-VL): pairs t, h, w repeated, then the rest of t
    "mrope_interleaved": N_("M-RoPE thw x{hw}, t x{rest}"),
}


def layer_pattern(name: str) -> list[str]:
    """What a model's frequencies do not show, one short line per group of layers (in
    the reader's language): e.g. ["SWA 128 x12", "full x12"] for GPT-OSS 20B (sliding
    windows of 128 tokens on 12 layers, full attention on 12), ["chunk 8192 x36",
    "NoPE x12"] for Llama 4 Scout, ["M-RoPE 16/24/24"] for Qwen2-VL (pairs per t, h, w
    axis), ["M-RoPE thw x20, t x4"] for Qwen3-VL's interleaved 24/20/20 (pairs t, h, w
    twenty times over, then 4 more t). [] when every layer attends
    to the whole context with the same positions. The groups are the entry's typed-in
    `layers`."""
    lines = []
    for kind, count, size in _entry(name).layers:
        if kind == "mrope_interleaved" and size[1] == size[2] <= size[0]:
            t, hw = size[0], size[1]
            lines.append(_(PATTERN_TEXT[kind]).format(hw=hw, rest=t - hw))
        elif kind.startswith("mrope"):
            t, h, w = size
            sections = PATTERN_TEXT["mrope"]
            lines.append(_(sections).format(t=t, h=h, w=w))
        else:
            lines.append(_(PATTERN_TEXT[kind]).format(size=size, count=count))
    return lines


def llama4_attention_scale(positions, floor_scale: int = 8192, attn_scale: float = 0.1):
    """Llama 4's query scale on its NoPE layers (attn_temperature_tuning):

        scale(m) = 1 + attn_scale * ln(1 + floor((m + 1) / floor_scale))

    for the token at position m (counted from 0): 1 for the first floor_scale - 1
    tokens, then growing like the log of the position, so that attention without
    positions does not flatten out over millions of tokens (Nakanishi 2025,
    "Scalable-Softmax Is Superior for Attention", arXiv:2501.19399). The query (not the
    key) is multiplied, so the logits q.k get the scale once. transformers'
    Llama4TextAttention does the same."""
    floor_scale = require_positive_int("floor_scale", floor_scale)
    attn_scale = require_positive_float("attn_scale", attn_scale)
    m = torch.as_tensor(positions)
    if m.is_floating_point() or m.is_complex():
        raise TypeError(
            _("positions must be integer token positions, got dtype {m_dtype}").format(
                m_dtype=m.dtype
            )
        )
    steps = torch.div(m.double() + 1.0, floor_scale, rounding_mode="floor")
    return torch.log1p(steps) * attn_scale + 1.0


def _entry(name: str) -> ModelEntry:
    if name not in MODELS:
        if name in LEFT_OUT:
            raise ValueError(
                _("{name!r} is not in the table: {reason}").format(
                    name=name, reason=_(LEFT_OUT[name])
                )
            )
        raise ValueError(
            _("name must be one of {models}, got {name!r}").format(
                models=list(MODELS), name=name
            )
        )
    return MODELS[name]


__all__ = [
    "LEFT_OUT",
    "MODELS",
    "ModelEntry",
    "layer_pattern",
    "llama4_attention_scale",
    "model_curves",
    "model_layers",
    "model_summary",
]
