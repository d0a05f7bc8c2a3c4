"""Frequencies for RoPE context extension, one function per method, as in Hugging Face
transformers' modeling_rope_utils (same parameter names, defaults and results).

Each returns (inv_freq, attention_factor): the [head_dim/2] frequencies to rotate by, and the
factor that multiplies cos and sin (so the attention logits get its square).

    default   theta_i = base ** (-2i/d)                           (RoFormer)
    linear    theta_i / s                                        (Position Interpolation, Chen et al. 2023)
    ntk       base -> base * s ** (d/(d-2))                       (NTK-aware scaling, bloc97 2023)
    dynamic   ntk with s' = s * seq_len / L - (s - 1), seq_len > L (dynamic NTK, emozilla 2023)
    yarn      ramp between theta_i / s and theta_i by wavelength,
              attention factor 0.1 ln(s) + 1                       (YaRN, Peng et al. 2023)
    llama3    wavelength cutoffs L/low_freq_factor, L/high_freq_factor (Meta, Llama 3.1, 2024)
    longrope  theta_i / lambda_i with searched per-pair factors    (LongRoPE, Ding et al. 2024)
"""

from __future__ import annotations

import math

import torch

from ._checks import require_even, require_positive_float
from .rotary import inv_frequencies

PARAMETERS = (
    "factor",
    "original_max_position_embeddings",
    "max_position_embeddings",
    "seq_len",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "truncate",
    "low_freq_factor",
    "high_freq_factor",
    "short_factor",
    "long_factor",
)


def _need(params: dict, name: str, rope_type: str):
    value = params.get(name)
    if value is None:
        raise ValueError(f"rope_type {rope_type!r} needs the parameter {name!r}, which is missing")
    return value


def _original_length(params: dict, rope_type: str) -> int:
    # transformers falls back to max_position_embeddings when original_... is not set
    value = params.get("original_max_position_embeddings") or params.get("max_position_embeddings")
    if value is None:
        raise ValueError(
            f"rope_type {rope_type!r} needs the parameter 'original_max_position_embeddings' "
            "(or 'max_position_embeddings'), which is missing"
        )
    return value


def wavelengths(inv_freq: torch.Tensor) -> torch.Tensor:
    """lambda_i = 2 pi / theta_i: how many tokens pair i needs for one full turn."""
    return 2 * math.pi / inv_freq


def _default(head_dim, base, params):
    return inv_frequencies(head_dim, base), 1.0


def _linear(head_dim, base, params):
    factor = require_positive_float("factor", _need(params, "factor", "linear"))
    return inv_frequencies(head_dim, base) / factor, 1.0


def _ntk(head_dim, base, params):
    factor = require_positive_float("factor", _need(params, "factor", "ntk"))
    return inv_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2))), 1.0


def _dynamic(head_dim, base, params):
    factor = require_positive_float("factor", _need(params, "factor", "dynamic"))
    max_len = _need(params, "max_position_embeddings", "dynamic")
    seq_len = max(params.get("seq_len") or max_len, max_len)
    scaled = factor * seq_len / max_len - (factor - 1)
    return inv_frequencies(head_dim, base * scaled ** (head_dim / (head_dim - 2))), 1.0


def yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's temperature: sqrt(1/t) = 0.1 * mscale * ln(s) + 1 for s > 1, else 1."""
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_attention_factor(factor: float, mscale=None, mscale_all_dim=None) -> float:
    """YaRN's attention factor: 0.1 ln(s) + 1, or, when a model gives mscale and mscale_all_dim
    (DeepSeek), yarn_get_mscale(s, mscale) / yarn_get_mscale(s, mscale_all_dim)."""
    if mscale and mscale_all_dim:
        return float(yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim))
    return yarn_get_mscale(factor)


def yarn_correction_dim(num_rotations: float, head_dim: int, base: float, original_length: int) -> float:
    """The (fractional) pair index whose wavelength fits `num_rotations` times into the original
    length: solve L / lambda_i = num_rotations for i, with lambda_i = 2 pi base^(2i/d)."""
    return (head_dim * math.log(original_length / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def yarn_correction_range(
    head_dim: int,
    base: float,
    original_length: int,
    beta_fast: float = 32,
    beta_slow: float = 1,
    truncate: bool = True,
) -> tuple[float, float]:
    """Pairs below `low` turn more than beta_fast times within L (kept: extrapolated); pairs
    above `high` turn less than beta_slow times (interpolated); in between they blend. With
    truncate the bounds are rounded outward to whole pairs. Clamped to [0, head_dim - 1] as
    transformers does."""
    low = yarn_correction_dim(beta_fast, head_dim, base, original_length)
    high = yarn_correction_dim(beta_slow, head_dim, base, original_length)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, head_dim - 1)


def yarn_ramp(low: float, high: float, n_pairs: int) -> torch.Tensor:
    """gamma-like ramp, 0 at pair `low` and below, 1 at `high` and above, linear between
    (float32 [n_pairs]). YaRN interpolates pair i by this much (1 = fully divided by s)."""
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    return torch.clamp((torch.arange(n_pairs, dtype=torch.float32) - low) / (high - low), 0, 1)


def _yarn(head_dim, base, params):
    original = _original_length(params, "yarn")
    factor = params.get("factor")
    if factor is None:
        factor = _need(params, "max_position_embeddings", "yarn") / original
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        attention_factor = yarn_attention_factor(factor, params.get("mscale"), params.get("mscale_all_dim"))
    truncate = params.get("truncate")
    low, high = yarn_correction_range(
        head_dim,
        base,
        original,
        params.get("beta_fast") or 32,
        params.get("beta_slow") or 1,
        True if truncate is None else truncate,
    )
    # Same float32 operations, in the same order, as transformers, so the results match exactly.
    pos_freqs = base ** (torch.arange(0, head_dim, 2).to(torch.float32) / head_dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    keep = 1 - yarn_ramp(low, high, head_dim // 2)  # 1: pair keeps its frequency
    return interpolation * (1 - keep) + extrapolation * keep, attention_factor


def _llama3(head_dim, base, params):
    factor = _need(params, "factor", "llama3")
    low_freq_factor = _need(params, "low_freq_factor", "llama3")
    high_freq_factor = _need(params, "high_freq_factor", "llama3")
    original = _original_length(params, "llama3")
    inv_freq = inv_frequencies(head_dim, base)
    wavelen = wavelengths(inv_freq)
    low_freq_wavelen, high_freq_wavelen = original / low_freq_factor, original / high_freq_factor
    # long wavelengths (> L / low_freq_factor) are interpolated, short ones (< L / high) kept
    scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(medium, blended, scaled), 1.0


def _longrope(head_dim, base, params):
    short_factor = _need(params, "short_factor", "longrope")
    long_factor = _need(params, "long_factor", "longrope")
    original = _original_length(params, "longrope")
    for name, value in (("short_factor", short_factor), ("long_factor", long_factor)):
        if len(value) != head_dim // 2:
            raise ValueError(f"{name} must have head_dim/2 = {head_dim // 2} entries, got {len(value)}")
    factor = params.get("factor")
    if factor is None:
        factor = _need(params, "max_position_embeddings", "longrope") / original
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    seq_len = params.get("seq_len")
    ext = torch.tensor(long_factor if seq_len and seq_len > original else short_factor, dtype=torch.float32)
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim
    return 1.0 / (ext * base**exponents), attention_factor


ROPE_FREQUENCY_FUNCTIONS = {
    "default": _default,
    "linear": _linear,
    "ntk": _ntk,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "llama3": _llama3,
    "longrope": _longrope,
}


def rope_frequencies(rope_type: str, head_dim: int, base: float = 10000.0, **params):
    """(inv_freq [head_dim/2] float32, attention_factor float) for a RoPE variant.

    rope_type is one of ROPE_FREQUENCY_FUNCTIONS; params are named as in transformers'
    rope_parameters (factor, original_max_position_embeddings, max_position_embeddings, seq_len,
    beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, truncate, low_freq_factor,
    high_freq_factor, short_factor, long_factor). Pass the result on:
        inv_freq, attention_factor = rope_frequencies("yarn", 128, factor=4, original_max_position_embeddings=4096)
        apply_rope(q, positions, inv_freq=inv_freq, attention_factor=attention_factor)
    """
    if rope_type not in ROPE_FREQUENCY_FUNCTIONS:
        raise ValueError(f"rope_type must be one of {list(ROPE_FREQUENCY_FUNCTIONS)}, got {rope_type!r}")
    require_even("head_dim", head_dim)
    if head_dim < 4 and rope_type in ("ntk", "dynamic"):
        raise ValueError(f"head_dim must be >= 4 for rope_type {rope_type!r} (d/(d-2)), got {head_dim}")
    base = require_positive_float("base", base)
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for rope_frequencies; expected names from {PARAMETERS}")
    return ROPE_FREQUENCY_FUNCTIONS[rope_type](head_dim, base, params)
