"""Read the position settings of a real model from its config dict, layer by layer.

A model's config.json says how its attention layers use RoPE, in one of two spellings:

- v4 (most config files on the Hub): `rope_theta` (the base b) and `rope_scaling` side
by
  side, `rope_scaling` a dict with `type` or `rope_type` ("linear", "dynamic", "yarn",
  "llama3", "longrope", ...) and that method's parameters, or null for plain RoPE;
  `partial_rotary_factor` (or GPT-NeoX's `rotary_pct`) beside them;
- v5 (Hugging Face transformers 5): one `rope_parameters` dict holding rope_type,
  rope_theta, partial_rotary_factor and the method's parameters, or one such dict per
  layer
  type ({"full_attention": {...}, "sliding_attention": {...}}).

Newer models also mix layers: Gemma 2/3/4 alternate local (sliding-window) and global
layers
with different bases; Gemma 4's global layers use p-RoPE ("proportional") on wider
heads;
Llama 4 (`no_rope_layers`), SmolLM3 (`no_rope_layers` / `no_rope_layer_interval`) and
Cohere Command A (Cohere2: its full-attention layers) have layers with no position
encoding
at all (NoPE); DeepSeek-V2/V3 rotate only `qk_rope_head_dim` coordinates of each head.

read_rope_config(config) returns one LayerRope per layer: what that layer does, with the
frequencies rope_frequencies gives for it (the same as transformers' for the same dict).
"""

from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, field

import torch

from ._checks import describe, require_positive_int
from .language import _
from .scaling import PARAMETERS, rope_frequencies

# Each config class's default base (rope_theta) when the dict gives none (transformers
# 5).
DEFAULT_BASES = {
    "llama4_text": 500000.0,
    "smollm3": 2000000.0,
    "qwen2_vl_text": 1000000.0,
    "qwen2_5_vl_text": 1000000.0,
    "qwen3_vl_text": 500000.0,
}
# Models whose plain ("default") RoPE honours partial_rotary_factor (their rotary
# class's
# compute_default_rope_parameters reads it, transformers 5.23). Llama, Mistral, Qwen2,
# Gemma
# and most others ignore it for "default" (every scaled type reads it).
PARTIAL_DEFAULT_MODELS = frozenset(
    """
    bamba deepseek_v4 diffusion_gemma dots3_note glm glm4 glm4_moe glm4_moe_lite glm4v
    glm4v_text glm4v_moe glm4v_moe_text gpt_neox gpt_neox_japanese laguna mellum
    mimo_v2_flash minimax_m2 nemotron persimmon phi phi3 phi4_multimodal qwen3_5
    qwen3_5_moe qwen3_next recurrent_gemma solar_open stablelm zaya
""".split()
)
# v4 type names that transformers renames
_RENAMED_TYPES = {"su": "longrope", "mrope": "default"}
# keys of a rope dict that are not frequency parameters
_NON_FREQUENCY_KEYS = {
    "rope_type",
    "type",
    "rope_theta",
    "partial_rotary_factor",
    "mrope_section",
    "mrope_interleaved",
}


@dataclass(frozen=True)
class LayerRope:
    """What one attention layer does with positions.

    layer:            layer index
    layer_type:       e.g. "full_attention", "sliding_attention", "chunked_attention"
                      (None
                      when the config does not name layer types)
    rope_type:        "default", "linear", "dynamic", "yarn", "llama3", "longrope",
                      "proportional"; None for a NoPE layer (no position encoding)
    base:             rope_theta (None for NoPE)
    head_dim:         width of each query/key head
    rotary_dim:       coordinates per head that get a rotation (2 * len(inv_freq); 0 for
                      NoPE). For "proportional" it is head_dim: the unrotated pairs are
                      there with frequency 0
    inv_freq:         [rotary_dim/2] float32 frequencies (None for NoPE)
    attention_factor: multiplies cos and sin (YaRN's and LongRoPE's factor)
    partial_rotary_factor: the share of the head the config asks to rotate
    params:           the rope parameters used (as rope_frequencies names them)
    mrope_section:    M-RoPE's [t, h, w] pairs, or None; mrope_interleaved: Qwen3-VL's
                      layout
    temperature:      for Llama 4's NoPE layers, {"floor_scale", "attn_scale"} of its
                      position-dependent query scaling; else None
    scheme:           "rope"; "none" (a NoPE layer of a RoPE model); "alibi" (BLOOM,
                      MPT, Falcon with alibi: a bias, no rotation); "learned" (absolute
                      position embeddings added to the input: GPT-2, OPT, MPT without
                      alibi)
    """

    layer: int
    layer_type: str | None
    rope_type: str | None
    base: float | None
    head_dim: int
    rotary_dim: int
    inv_freq: torch.Tensor | None
    attention_factor: float = 1.0
    partial_rotary_factor: float = 1.0
    params: dict = field(default_factory=dict)
    mrope_section: list | None = None
    mrope_interleaved: bool = False
    temperature: dict | None = None
    scheme: str = "rope"

    @property
    def uses_rope(self) -> bool:
        return self.rope_type is not None

    @property
    def position_pairs(self) -> int:
        """Pairs whose frequency is not 0: the pairs that actually carry position."""
        return 0 if self.inv_freq is None else int((self.inv_freq != 0).sum())


def _text_part(config: dict) -> dict:
    """The language model's part of a multimodal config (its text_config), with the rope
    keys of the outer dict as a fallback (older Qwen2-VL files keep them at the top)."""
    text = config.get("text_config")
    if not isinstance(text, dict):
        return dict(config)
    merged = dict(text)
    for key in (
        "rope_scaling",
        "rope_parameters",
        "rope_theta",
        "max_position_embeddings",
    ):
        if merged.get(key) is None and config.get(key) is not None:
            merged[key] = config[key]
    if "model_type" not in merged and "model_type" in config:
        merged["model_type"] = f"{config['model_type']}_text"
    return merged


def _get_int(cfg: dict, name: str, default=None):
    value = cfg.get(name, default)
    if value is None:
        return None
    return require_positive_int(f"config[{name!r}]", value)


def _layer_types(cfg: dict, model_type: str, n_layers: int, rope_flags) -> list:
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, (list, tuple)) or len(types) < n_layers:
            raise ValueError(
                "config['layer_types'] must list a type for each of the "
                f"{n_layers} layers, "
                f"got {describe(types)}"
            )
        types = list(types[:n_layers])
        if model_type == "gemma4_text" and types and types[-1] != "full_attention":
            warnings.warn(
                "Gemma 4's last layer is always full_attention (as transformers forces)"
            )
            types[-1] = "full_attention"
        return types
    if model_type in ("gemma3_text", "gemma4_text", "cohere2"):
        default = {"gemma3_text": 6, "gemma4_text": 6, "cohere2": 4}[model_type]
        pattern = (
            cfg.get("sliding_window_pattern", default)
            if model_type != "gemma4_text"
            else 6
        )
        pattern = require_positive_int("config['sliding_window_pattern']", pattern)
        return [
            "sliding_attention" if (i + 1) % pattern else "full_attention"
            for i in range(n_layers)
        ]
    if model_type == "llama4_text":
        return [
            "chunked_attention" if flag else "full_attention" for flag in rope_flags
        ]
    if model_type == "smollm3":
        sliding = (
            cfg.get("use_sliding_window", False)
            and cfg.get("sliding_window") is not None
        )
        return [
            "sliding_attention" if sliding and not flag else "full_attention"
            for flag in rope_flags
        ]
    return [None] * n_layers


def _rope_flags(cfg: dict, model_type: str, n_layers: int):
    """Llama 4 and SmolLM3: no_rope_layers[i] is 1 for a layer WITH RoPE, 0 for NoPE."""
    if model_type not in ("llama4_text", "smollm3"):
        return None
    flags = cfg.get("no_rope_layers")
    interval = _get_int(cfg, "no_rope_layer_interval", 4)
    if not flags:  # Llama 4 also replaces an empty list by the default
        if model_type == "smollm3" and flags is not None:
            raise ValueError(
                "config['no_rope_layers'] is empty: it must give 0 or 1 for each layer"
            )
        flags = [int((i + 1) % interval != 0) for i in range(n_layers)]
    if len(flags) < n_layers:
        raise ValueError(
            "config['no_rope_layers'] must give 0 or 1 for each of the "
            f"{n_layers} layers, "
            f"got {len(flags)} entries"
        )
    return [bool(f) for f in flags[:n_layers]]


def _standard_parameters(cfg: dict, model_type: str, layer_types: list) -> dict:
    """{layer type (or None): rope dict or None}, as transformers standardises them."""
    rope_scaling = cfg.get("rope_scaling")
    rope_parameters = cfg.get("rope_parameters")
    theta = cfg.get("rope_theta")
    partial = cfg.get("partial_rotary_factor")
    if model_type == "gpt_neox":
        theta = cfg.get("rotary_emb_base", theta)
        partial = cfg.get("rotary_pct", 0.25) if partial is None else partial
    if model_type in ("glm", "glm4") and partial is None:
        partial = 0.5
    names = {t for t in layer_types if t is not None}

    if model_type == "gemma3_text":
        params = copy.deepcopy(rope_parameters) if rope_parameters is not None else {}
        full = params.get("full_attention") or {"rope_type": "default"}
        if rope_scaling is not None:
            full.update(rope_scaling)
        full.setdefault("rope_theta", theta if theta is not None else 1_000_000.0)
        local = params.get("sliding_attention") or {"rope_type": "default"}
        local_theta = cfg.get("rope_local_base_freq")
        local.setdefault(
            "rope_theta", local_theta if local_theta is not None else 10_000.0
        )
        return {"full_attention": full, "sliding_attention": local}
    if model_type == "gemma4_text":
        if rope_parameters is None:
            return {
                "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
                "full_attention": {
                    "rope_type": "proportional",
                    "partial_rotary_factor": 0.25,
                    "rope_theta": 1_000_000.0,
                },
            }
        return copy.deepcopy(rope_parameters)

    params = rope_scaling or rope_parameters
    params = copy.deepcopy(params) if params is not None else {}
    if not isinstance(params, dict):
        raise TypeError(
            "config['rope_scaling'/'rope_parameters'] must be a dict, got "
            f"{describe(params)}"
        )
    if theta is None:
        theta = DEFAULT_BASES.get(model_type, 10000.0)
    nested = [key for key in params if key in names]
    groups = {key: params[key] for key in nested} if nested else {None: params}
    for group in groups.values():
        if group is None:
            continue
        group.setdefault("rope_theta", theta)
        if partial is not None:
            group.setdefault("partial_rotary_factor", partial)
        group.setdefault("rope_type", group.get("type", "default"))
        group["rope_type"] = _RENAMED_TYPES.get(group["rope_type"], group["rope_type"])
        if model_type == "phi3" and group["rope_type"] == "yarn":
            group["rope_type"] = "longrope"  # Phi-3's config class renames it
        if group["rope_type"] in ("llama3", "yarn", "longrope"):
            if cfg.get("original_max_position_embeddings") is not None:
                # a top-level value wins (Phi-3 keeps its pretraining length there)
                group["original_max_position_embeddings"] = cfg[
                    "original_max_position_embeddings"
                ]
            elif cfg.get("max_position_embeddings") is not None:
                group.setdefault(
                    "original_max_position_embeddings", cfg["max_position_embeddings"]
                )
    return groups


def _frequencies(group: dict, head_dim: int, cfg: dict, model_type: str):
    rope_type = group["rope_type"]
    params = {
        key: value
        for key, value in group.items()
        if key in PARAMETERS and key != "partial_rotary_factor"
    }
    unknown = sorted(set(group) - set(PARAMETERS) - _NON_FREQUENCY_KEYS)
    if unknown:
        warnings.warn(
            f"ignoring rope parameters rope_lib does not know: {unknown}", UserWarning
        )
    if cfg.get("max_position_embeddings") is not None:
        params.setdefault("max_position_embeddings", cfg["max_position_embeddings"])
    partial = group.get("partial_rotary_factor")
    if partial is not None and (
        rope_type != "default" or model_type in PARTIAL_DEFAULT_MODELS
    ):
        params["partial_rotary_factor"] = partial
    inv_freq, attention_factor = rope_frequencies(
        rope_type, head_dim, group["rope_theta"], **params
    )
    return inv_freq, float(attention_factor), params


# Models without RoPE: ALiBi (a bias on the scores) or learned absolute positions.
_ALIBI_MODELS = {"bloom"}
_LEARNED_MODELS = {"gpt2", "opt", "gpt_bigcode", "gpt_neo", "biogpt", "xglm"}


def _other_scheme(cfg: dict, model_type: str):
    if model_type in _ALIBI_MODELS:
        return "alibi"
    if model_type == "mpt":
        attn = cfg.get("attn_config") or {}
        return "alibi" if attn.get("alibi", True) else "learned"
    if model_type == "falcon" and cfg.get("alibi"):
        return "alibi"
    if model_type in _LEARNED_MODELS:
        return "learned"
    return None


def _first_int(cfg: dict, names):
    for name in names:
        if cfg.get(name) is not None:
            return _get_int(cfg, name)
    return None


def read_rope_config(config: dict) -> list[LayerRope]:
    """One LayerRope per layer of the model whose config dict (config.json) this is.

    Reads the v4 spelling (rope_theta + rope_scaling with type/rope_type) and the v5 one
    (rope_parameters, possibly keyed by layer type), the text part of multimodal configs
    (text_config), and the per-model rules of transformers 5 for: layer types and NoPE
    layers (Llama 4, SmolLM3, Cohere2, Gemma 3/4), local bases (Gemma 3's
    rope_local_base_freq), p-RoPE and wider global heads (Gemma 4's global_head_dim),
    partial rotation (partial_rotary_factor; GPT-NeoX's rotary_pct, 0.25 by default;
    GLM's
    0.5 by default), DeepSeek's qk_rope_head_dim, Phi-3's renamed types and its
    top-level
    original_max_position_embeddings. The frequencies are rope_frequencies' for each
    layer,
    equal to those of transformers' config class and rotary embedding for the same dict.
    """
    if not isinstance(config, dict):
        raise TypeError(
            f"config must be a dict (a model's config.json), got {describe(config)}"
        )
    cfg = _text_part(config)
    model_type = cfg.get("model_type", "")
    if model_type in (
        "gemma3",
        "gemma4",
        "llama4",
        "qwen2_vl",
        "qwen2_5_vl",
        "qwen3_vl",
    ):
        model_type = f"{model_type}_text"
    n_layers = _first_int(cfg, ("num_hidden_layers", "n_layer", "n_layers"))
    if n_layers is None:
        raise ValueError("config must give 'num_hidden_layers', which is missing")
    n_heads = _first_int(cfg, ("num_attention_heads", "n_head", "n_heads"))
    head_dim = _get_int(cfg, "head_dim")
    if head_dim is None:
        hidden = _first_int(cfg, ("hidden_size", "d_model", "n_embd"))
        if hidden is None or n_heads is None:
            raise ValueError(
                "config must give 'head_dim', or 'hidden_size' and "
                "'num_attention_heads'"
            )
        head_dim = hidden // n_heads
    scheme = _other_scheme(cfg, model_type)
    if scheme is not None:
        return [
            LayerRope(i, None, None, None, head_dim, 0, None, scheme=scheme)
            for i in range(n_layers)
        ]
    rope_width = head_dim
    if cfg.get("qk_rope_head_dim") is not None:  # DeepSeek-V2/V3 (MLA)
        rope_width = _get_int(cfg, "qk_rope_head_dim")
        head_dim = rope_width + (_get_int(cfg, "qk_nope_head_dim", 0) or 0)

    flags = _rope_flags(cfg, model_type, n_layers)
    layer_types = _layer_types(cfg, model_type, n_layers, flags or [True] * n_layers)
    groups = _standard_parameters(cfg, model_type, layer_types)
    temperature = None
    if model_type == "llama4_text" and cfg.get("attn_temperature_tuning", True):
        temperature = {
            "floor_scale": cfg.get("floor_scale", 8192),
            "attn_scale": cfg.get("attn_scale", 0.1),
        }
    mrope_default = {
        "qwen2_vl_text": [16, 24, 24],
        "qwen2_5_vl_text": [16, 24, 24],
        "qwen3_vl_text": [24, 20, 20],
    }.get(model_type)

    cache = {}
    layers = []
    for i, layer_type in enumerate(layer_types):
        group = groups.get(layer_type) if None not in groups else groups[None]
        nope = (
            group is None
            or (flags is not None and not flags[i])
            or (model_type == "cohere2" and layer_type != "sliding_attention")
        )
        width = rope_width
        if model_type == "gemma4_text" and layer_type == "full_attention":
            width = _get_int(cfg, "global_head_dim", 512)
        layer_head = head_dim if width == rope_width else width
        if nope:
            layers.append(
                LayerRope(
                    i,
                    layer_type,
                    None,
                    None,
                    layer_head,
                    0,
                    None,
                    temperature=temperature if model_type == "llama4_text" else None,
                    scheme="none",
                )
            )
            continue
        key = (layer_type, width)
        if key not in cache:
            cache[key] = _frequencies(group, width, cfg, model_type)
        inv_freq, attention_factor, params = cache[key]
        partial = group.get("partial_rotary_factor")
        layers.append(
            LayerRope(
                i,
                layer_type,
                group["rope_type"],
                float(group["rope_theta"]),
                layer_head,
                2 * inv_freq.shape[0],
                inv_freq,
                attention_factor,
                1.0 if partial is None else float(partial),
                dict(params),
                list(group.get("mrope_section", mrope_default))
                if mrope_default
                else None,
                model_type == "qwen3_vl_text",
            )
        )
    return layers


def describe_layers(layers: list[LayerRope]) -> list[str]:
    """One short line per run of identical layers, e.g.
    'layers 0-4 sliding_attention: default, base 10000, rotates 256 of 256'."""
    lines = []

    def text(layer):
        kind = f" {layer.layer_type}" if layer.layer_type else ""
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
        span = (
            _("layer {first}").format(first=start)
            if i - 1 == start
            else _("layers {first}-{last}").format(first=start, last=i - 1)
        )
        lines.append(f"{span}{kind}: {what}")
        start = i
    return lines
