"""Read the position settings of a real model from its config dict, layer by layer.

A model's config.json says how its attention layers use RoPE, in one of two spellings:

- v4 (most config files on the Hub): `rope_theta` (the base b) and `rope_scaling` side by
  side, `rope_scaling` a dict with `type` or `rope_type` ("linear", "dynamic", "yarn",
  "llama3", "longrope", ...) and that method's parameters, or null for plain RoPE;
  `partial_rotary_factor` (or GPT-NeoX's `rotary_pct`) beside them;
- v5 (Hugging Face transformers 5): one `rope_parameters` dict holding rope_type, rope_theta,
  partial_rotary_factor and the method's parameters, or one such dict per layer type
  ({"full_attention": {...}, "sliding_attention": {...}}).

Newer models also mix layers: Gemma 2/3/4 alternate local (sliding-window) and global layers
with different bases; Gemma 4's global layers use p-RoPE ("proportional") on wider heads;
Llama 4 (`no_rope_layers`), SmolLM3 (`no_rope_layers` / `no_rope_layer_interval`) and Cohere
Command A (Cohere2: its full-attention layers) have layers with no position encoding at all
(NoPE); DeepSeek-V2/V3 rotate only `qk_rope_head_dim` coordinates of each head.

Each family's rules (transformers 5's config classes and rotary embeddings) are one row of
FAMILIES. read_rope_config(config) returns one LayerRope per layer: what that layer does, with
the frequencies rope_frequencies gives for it (the same as transformers' for the same dict).
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Callable

import torch

from ._checks import describe, require_positive_int
from .language import _
from .scaling import PARAMETERS, rope_frequencies

# Models whose plain ("default") RoPE honours partial_rotary_factor (their rotary class's
# compute_default_rope_parameters reads it, transformers 5.23). Llama, Mistral, Qwen2, Gemma
# and most others ignore it for "default" (every scaled type reads it).
PARTIAL_DEFAULT_MODELS = frozenset(
    """
    bamba deepseek_v4 diffusion_gemma dots3_note glm glm4 glm4_moe glm4_moe_lite glm4v
    glm4v_text glm4v_moe glm4v_moe_text gpt_neox gpt_neox_japanese laguna mellum
    mimo_v2_flash minimax_m2 nemotron persimmon phi phi3 phi4_multimodal qwen3_5
    qwen3_5_moe qwen3_next recurrent_gemma solar_open stablelm zaya
""".split()
)
# v4 type names that transformers renames for every model
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
# multimodal model types whose language model is read (from text_config)
_TEXT_MODELS = ("gemma3", "gemma4", "llama4", "qwen2_vl", "qwen2_5_vl", "qwen3_vl")


@dataclass(frozen=True)
class LayerRope:
    """What one attention layer does with positions.

    layer:            layer index
    layer_type:       e.g. "full_attention", "sliding_attention", "chunked_attention" (None
                      when the config does not name layer types)
    rope_type:        "default", "linear", "dynamic", "yarn", "llama3", "longrope",
                      "proportional"; None for a NoPE layer (no position encoding)
    base:             rope_theta (None for NoPE)
    head_dim:         width of each query/key head
    rotary_dim:       coordinates per head that get a rotation (2 * len(inv_freq); 0 for
                      NoPE). For "proportional" it is head_dim: the unrotated pairs are there
                      with frequency 0
    inv_freq:         [rotary_dim/2] float32 frequencies (None for NoPE)
    attention_factor: multiplies cos and sin (YaRN's and LongRoPE's factor)
    partial_rotary_factor: the share of the head the config asks to rotate
    params:           the rope parameters used (as rope_frequencies names them)
    mrope_section:    M-RoPE's [t, h, w] pairs, or None; mrope_interleaved: Qwen3-VL's layout
    temperature:      for Llama 4's NoPE layers, {"floor_scale", "attn_scale"} of its
                      position-dependent query scaling; else None
    scheme:           "rope"; "none" (a NoPE layer of a RoPE model); "alibi" (BLOOM, MPT,
                      Falcon with alibi: a bias, no rotation); "learned" (absolute position
                      embeddings added to the input: GPT-2, OPT, MPT without alibi)
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


@dataclass(frozen=True)
class Family:
    """How transformers 5 reads one model_type's config where it departs from the plain rules.

    base:           rope_theta when the config gives none
    base_keys:      the keys that give the base, first one present wins
    partial:        partial_rotary_factor when the config gives none (GLM 0.5, GPT-NeoX 0.25)
    partial_keys:   the keys that give it, first one set wins (GPT-NeoX: rotary_pct)
    partial_default: plain ("default") RoPE honours partial_rotary_factor too
    renamed:        rope types the family's config class renames (Phi-3: yarn -> longrope)
    sliding_every:  every n-th layer is full attention, the others sliding (Gemma 3/4,
                    Cohere2); pattern_key: the config key that may change n (None: fixed)
    last_full:      the last layer is always full attention (Gemma 4)
    rope_flags:     no_rope_layers says which layers have RoPE (Llama 4, SmolLM3);
                    empty_flags: an empty list means the default (else an error)
    flag_types:     layer types from those flags: f(cfg, flags) -> list
    rope_only_on:   only this layer type has RoPE (Cohere2: "sliding_attention")
    wide_full:      full-attention layers have heads of config["global_head_dim"] (default
                    this number; Gemma 4)
    parameters:     f(cfg, rope_scaling, rope_parameters, theta) -> {layer type: rope dict}
                    for families that build them their own way (Gemma 3, Gemma 4)
    mrope_section:  M-RoPE's default [t, h, w] (Qwen2-VL, Qwen2.5-VL, Qwen3-VL);
                    mrope_interleaved: Qwen3-VL's layout
    temperature:    Llama 4's attention temperature tuning on NoPE layers
    scheme:         "alibi" or "learned" (no RoPE), or f(cfg) -> one of them or None
    """

    base: float = 10000.0
    base_keys: tuple = ("rope_theta",)
    partial: float | None = None
    partial_keys: tuple = ("partial_rotary_factor",)
    partial_default: bool = False
    renamed: dict = field(default_factory=dict)
    sliding_every: int | None = None
    pattern_key: str | None = None
    last_full: bool = False
    rope_flags: bool = False
    empty_flags: bool = True
    flag_types: Callable | None = None
    rope_only_on: str | None = None
    wide_full: int | None = None
    parameters: Callable | None = None
    mrope_section: tuple | None = None
    mrope_interleaved: bool = False
    temperature: bool = False
    scheme: str | Callable | None = None


def _gemma3_parameters(cfg: dict, rope_scaling, rope_parameters, theta) -> dict:
    params = copy.deepcopy(rope_parameters) if rope_parameters is not None else {}
    full = params.get("full_attention") or {"rope_type": "default"}
    if rope_scaling is not None:
        full.update(rope_scaling)
    full.setdefault("rope_theta", theta if theta is not None else 1_000_000.0)
    local = params.get("sliding_attention") or {"rope_type": "default"}
    local_theta = cfg.get("rope_local_base_freq")
    local.setdefault("rope_theta", local_theta if local_theta is not None else 10_000.0)
    return {"full_attention": full, "sliding_attention": local}


def _gemma4_parameters(cfg: dict, rope_scaling, rope_parameters, theta) -> dict:
    if rope_parameters is not None:
        return copy.deepcopy(rope_parameters)
    return {
        "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
        "full_attention": {
            "rope_type": "proportional",
            "partial_rotary_factor": 0.25,
            "rope_theta": 1_000_000.0,
        },
    }


def _llama4_types(cfg: dict, flags: list) -> list:
    return ["chunked_attention" if flag else "full_attention" for flag in flags]


def _smollm3_types(cfg: dict, flags: list) -> list:
    sliding = (
        cfg.get("use_sliding_window", False) and cfg.get("sliding_window") is not None
    )
    return [
        "sliding_attention" if sliding and not flag else "full_attention"
        for flag in flags
    ]


def _mpt_scheme(cfg: dict) -> str:
    return "alibi" if (cfg.get("attn_config") or {}).get("alibi", True) else "learned"


def _falcon_scheme(cfg: dict) -> str | None:
    return "alibi" if cfg.get("alibi") else None


_QWEN_VL = Family(base=1_000_000.0, mrope_section=(16, 24, 24))
_GLM = Family(partial=0.5)
_LEARNED = Family(scheme="learned")
_ROWS = {
    "llama4_text": Family(
        base=500_000.0, rope_flags=True, flag_types=_llama4_types, temperature=True
    ),
    "smollm3": Family(
        base=2_000_000.0, rope_flags=True, empty_flags=False, flag_types=_smollm3_types
    ),
    "qwen2_vl_text": _QWEN_VL,
    "qwen2_5_vl_text": _QWEN_VL,
    "qwen3_vl_text": Family(
        base=500_000.0, mrope_section=(24, 20, 20), mrope_interleaved=True
    ),
    "gemma3_text": Family(
        sliding_every=6,
        pattern_key="sliding_window_pattern",
        parameters=_gemma3_parameters,
    ),
    "gemma4_text": Family(
        sliding_every=6, last_full=True, wide_full=512, parameters=_gemma4_parameters
    ),
    "cohere2": Family(
        sliding_every=4,
        pattern_key="sliding_window_pattern",
        rope_only_on="sliding_attention",
    ),
    "gpt_neox": Family(
        base_keys=("rotary_emb_base", "rope_theta"),
        partial=0.25,
        partial_keys=("partial_rotary_factor", "rotary_pct"),
    ),
    "glm": _GLM,
    "glm4": _GLM,
    "phi3": Family(renamed={"yarn": "longrope"}),
    "bloom": Family(scheme="alibi"),
    "mpt": Family(scheme=_mpt_scheme),
    "falcon": Family(scheme=_falcon_scheme),
    **{
        name: _LEARNED
        for name in ("gpt2", "opt", "gpt_bigcode", "gpt_neo", "biogpt", "xglm")
    },
}
# One row per model_type with a rule of its own; any other model_type reads as Family().
FAMILIES = {
    name: dataclasses.replace(
        _ROWS.get(name, Family()), partial_default=name in PARTIAL_DEFAULT_MODELS
    )
    for name in sorted(set(_ROWS) | PARTIAL_DEFAULT_MODELS)
}


def _text_part(config: dict) -> tuple[dict, str]:
    """(the language model's part of a multimodal config, its model_type): text_config with
    the rope keys of the outer dict as a fallback (older Qwen2-VL files keep them at the top)."""
    text = config.get("text_config")
    if not isinstance(text, dict):
        cfg = dict(config)
    else:
        cfg = dict(text)
        for key in (
            "rope_scaling",
            "rope_parameters",
            "rope_theta",
            "max_position_embeddings",
        ):
            if cfg.get(key) is None and config.get(key) is not None:
                cfg[key] = config[key]
        if "model_type" not in cfg and "model_type" in config:
            cfg["model_type"] = f"{config['model_type']}_text"
    model_type = cfg.get("model_type", "")
    return cfg, f"{model_type}_text" if model_type in _TEXT_MODELS else model_type


def _get_int(cfg: dict, name: str, default=None):
    value = cfg.get(name, default)
    if value is None:
        return None
    return require_positive_int(f"config[{name!r}]", value)


def _first_int(cfg: dict, names):
    for name in names:
        if cfg.get(name) is not None:
            return _get_int(cfg, name)
    return None


def _sizes(cfg: dict) -> tuple[int, int]:
    """(number of layers, head_dim) from the config's own names for them."""
    n_layers = _first_int(cfg, ("num_hidden_layers", "n_layer", "n_layers"))
    if n_layers is None:
        raise ValueError(_("config must give 'num_hidden_layers', which is missing"))
    n_heads = _first_int(cfg, ("num_attention_heads", "n_head", "n_heads"))
    head_dim = _get_int(cfg, "head_dim")
    if head_dim is None:
        hidden = _first_int(cfg, ("hidden_size", "d_model", "n_embd"))
        if hidden is None or n_heads is None:
            raise ValueError(
                _(
                    "config must give 'head_dim', or 'hidden_size' and "
                    "'num_attention_heads'"
                )
            )
        head_dim = hidden // n_heads
    return n_layers, head_dim


def _rope_flags(cfg: dict, family: Family, n_layers: int):
    """Llama 4 and SmolLM3: no_rope_layers[i] is 1 for a layer WITH RoPE, 0 for NoPE."""
    if not family.rope_flags:
        return None
    flags = cfg.get("no_rope_layers")
    interval = _get_int(cfg, "no_rope_layer_interval", 4)
    if not flags:  # Llama 4 also replaces an empty list by the default
        if not family.empty_flags and flags is not None:
            raise ValueError(
                _(
                    "config['no_rope_layers'] is empty: it must give 0 or 1 for each "
                    "layer"
                )
            )
        flags = [int((i + 1) % interval != 0) for i in range(n_layers)]
    if len(flags) < n_layers:
        raise ValueError(
            _(
                "config['no_rope_layers'] must give 0 or 1 for each of the "
                "{n_layers} layers, got {n_flags} entries"
            ).format(n_layers=n_layers, n_flags=len(flags))
        )
    return [bool(f) for f in flags[:n_layers]]


def _layer_types(cfg: dict, family: Family, n_layers: int, flags) -> list:
    types = cfg.get("layer_types")
    if types is not None:
        if not isinstance(types, (list, tuple)) or len(types) < n_layers:
            raise ValueError(
                _(
                    "config['layer_types'] must list a type for each of the {n_layers} "
                    "layers, got {got}"
                ).format(n_layers=n_layers, got=describe(types))
            )
        types = list(types[:n_layers])
        if family.last_full and types and types[-1] != "full_attention":
            warnings.warn(
                "Gemma 4's last layer is always full_attention (as transformers forces)"
            )
            types[-1] = "full_attention"
        return types
    if family.sliding_every is not None:
        pattern = family.sliding_every
        if family.pattern_key is not None:
            pattern = cfg.get(family.pattern_key, pattern)
        pattern = require_positive_int("config['sliding_window_pattern']", pattern)
        return [
            "sliding_attention" if (i + 1) % pattern else "full_attention"
            for i in range(n_layers)
        ]
    if family.flag_types is not None:
        return family.flag_types(cfg, flags or [True] * n_layers)
    return [None] * n_layers


def _first_set(cfg: dict, keys, default, *, present: bool = False):
    """The value of the first key in `keys` that is set (present: that is in cfg at all)."""
    for key in keys:
        if (key in cfg) if present else (cfg.get(key) is not None):
            return cfg[key]
    return default


def _standard_parameters(cfg: dict, family: Family, layer_types: list) -> dict:
    """{layer type (or None): rope dict or None}, as transformers standardises them."""
    rope_scaling = cfg.get("rope_scaling")
    rope_parameters = cfg.get("rope_parameters")
    theta = _first_set(cfg, family.base_keys, None, present=True)
    partial = _first_set(cfg, family.partial_keys, family.partial)
    if family.parameters is not None:
        return family.parameters(cfg, rope_scaling, rope_parameters, theta)
    params = rope_scaling or rope_parameters
    params = copy.deepcopy(params) if params is not None else {}
    if not isinstance(params, dict):
        raise TypeError(
            _(
                "config['rope_scaling'/'rope_parameters'] must be a dict, got {got}"
            ).format(got=describe(params))
        )
    names = {t for t in layer_types if t is not None}
    nested = [key for key in params if key in names]
    groups = {key: params[key] for key in nested} if nested else {None: params}
    for group in groups.values():
        if group is not None:
            _complete_group(
                group, cfg, family, family.base if theta is None else theta, partial
            )
    return groups


def _complete_group(group: dict, cfg: dict, family: Family, theta, partial) -> None:
    """One rope dict completed in place as transformers' config classes do."""
    group.setdefault("rope_theta", theta)
    if partial is not None:
        group.setdefault("partial_rotary_factor", partial)
    rope_type = group.setdefault("rope_type", group.get("type", "default"))
    rope_type = _RENAMED_TYPES.get(rope_type, rope_type)
    group["rope_type"] = family.renamed.get(rope_type, rope_type)
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


def _frequencies(group: dict, head_dim: int, cfg: dict, family: Family):
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
    if partial is not None and (rope_type != "default" or family.partial_default):
        params["partial_rotary_factor"] = partial
    inv_freq, attention_factor = rope_frequencies(
        rope_type, head_dim, group["rope_theta"], **params
    )
    return inv_freq, float(attention_factor), params


def read_rope_config(config: dict) -> list[LayerRope]:
    """One LayerRope per layer of the model whose config dict (config.json) this is.

    Reads the v4 spelling (rope_theta + rope_scaling with type/rope_type) and the v5 one
    (rope_parameters, possibly keyed by layer type), the text part of multimodal configs
    (text_config), and the per-model rules of transformers 5 (FAMILIES) for: layer types and
    NoPE layers (Llama 4, SmolLM3, Cohere2, Gemma 3/4), local bases (Gemma 3's
    rope_local_base_freq), p-RoPE and wider global heads (Gemma 4's global_head_dim), partial
    rotation (partial_rotary_factor; GPT-NeoX's rotary_pct, 0.25 by default; GLM's 0.5 by
    default), DeepSeek's qk_rope_head_dim, Phi-3's renamed types and its top-level
    original_max_position_embeddings. The frequencies are rope_frequencies' for each layer
    (RoFormer's theta_i = base ** (-2i/d) and its scaled variants), equal to those of
    transformers' config class and rotary embedding for the same dict.
    """
    if not isinstance(config, dict):
        raise TypeError(
            _("config must be a dict (a model's config.json), got {got}").format(
                got=describe(config)
            )
        )
    cfg, model_type = _text_part(config)
    family = FAMILIES.get(model_type, Family())
    n_layers, head_dim = _sizes(cfg)
    scheme = family.scheme(cfg) if callable(family.scheme) else family.scheme
    if scheme is not None:
        return [
            _nope_layer(i, None, head_dim, None, scheme=scheme) for i in range(n_layers)
        ]
    rope_width = head_dim
    if cfg.get("qk_rope_head_dim") is not None:  # DeepSeek-V2/V3 (MLA)
        rope_width = _get_int(cfg, "qk_rope_head_dim")
        head_dim = rope_width + (_get_int(cfg, "qk_nope_head_dim", 0) or 0)
    flags = _rope_flags(cfg, family, n_layers)
    layer_types = _layer_types(cfg, family, n_layers, flags)
    groups = _standard_parameters(cfg, family, layer_types)
    temperature = _temperature(cfg, family)
    cache = {}
    layers = []
    for i, layer_type in enumerate(layer_types):
        group = groups.get(layer_type) if None not in groups else groups[None]
        width = rope_width
        if family.wide_full is not None and layer_type == "full_attention":
            width = _get_int(cfg, "global_head_dim", family.wide_full)
        layer_head = head_dim if width == rope_width else width
        if (
            group is None
            or (flags is not None and not flags[i])
            or (family.rope_only_on not in (None, layer_type))
        ):
            layers.append(_nope_layer(i, layer_type, layer_head, temperature))
            continue
        if (layer_type, width) not in cache:
            cache[layer_type, width] = _frequencies(group, width, cfg, family)
        layers.append(
            _rope_layer(
                i, layer_type, layer_head, group, family, cache[layer_type, width]
            )
        )
    return layers


def _temperature(cfg: dict, family: Family) -> dict | None:
    """Llama 4's position-dependent query scaling on its NoPE layers, when the config has it on."""
    if not (family.temperature and cfg.get("attn_temperature_tuning", True)):
        return None
    return {
        "floor_scale": cfg.get("floor_scale", 8192),
        "attn_scale": cfg.get("attn_scale", 0.1),
    }


def _nope_layer(i, layer_type, head_dim, temperature, scheme="none") -> LayerRope:
    return LayerRope(
        layer=i,
        layer_type=layer_type,
        rope_type=None,
        base=None,
        head_dim=head_dim,
        rotary_dim=0,
        inv_freq=None,
        temperature=temperature,
        scheme=scheme,
    )


def _rope_layer(i, layer_type, head_dim, group, family, frequencies) -> LayerRope:
    inv_freq, attention_factor, params = frequencies
    partial = group.get("partial_rotary_factor")
    section = None
    if family.mrope_section is not None:
        section = list(group.get("mrope_section", family.mrope_section))
    return LayerRope(
        layer=i,
        layer_type=layer_type,
        rope_type=group["rope_type"],
        base=float(group["rope_theta"]),
        head_dim=head_dim,
        rotary_dim=2 * inv_freq.shape[0],
        inv_freq=inv_freq,
        attention_factor=attention_factor,
        partial_rotary_factor=1.0 if partial is None else float(partial),
        params=dict(params),
        mrope_section=section,
        mrope_interleaved=family.mrope_interleaved,
    )
