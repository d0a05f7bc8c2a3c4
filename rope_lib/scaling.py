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
    proportional  p-RoPE: the first p*d/2 pairs keep base ** (-2i/d), the others
              get frequency 0, all divided by factor  (Gemma 4; Barbero et al. 2024)

Partial rotary (partial_rotary_factor = p, as transformers reads it): every type but
"proportional" computes its frequencies for the rotated width r = int(p * d) alone,
so its exponents are 2i/r (GPT-NeoX, Phi, GLM: r coordinates rotated, the rest passed
through, see apply_rope's rotary_dim). "proportional" keeps the whole head and the
denominator d: the rotated pairs turn exactly as they would in a fully rotated head,
the others not at all.
"""

from __future__ import annotations

import difflib
import math
import numbers
import warnings

import torch

from ._checks import (
    check_factor_list,
    describe,
    require_bool_or_none,
    require_even,
    require_finite,
    require_number,
    require_positive_float,
    require_positive_int,
    require_tensor,
)

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
    "partial_rotary_factor",
)


def _need(params: dict, name: str, rope_type: str):
    value = params.get(name)
    if value is None:
        raise ValueError(
            f"rope_type {rope_type!r} needs the parameter {name!r}, which is missing"
        )
    return value


def _original_length(params: dict, rope_type: str) -> int:
    # transformers falls back to max_position_embeddings when original_... is not set
    value = params.get("original_max_position_embeddings") or params.get(
        "max_position_embeddings"
    )
    if value is None:
        raise ValueError(
            f"rope_type {rope_type!r} needs the parameter 'original_max_position_embeddings' "
            "(or 'max_position_embeddings'), which is missing"
        )
    return value


def _seq_len(value):
    """seq_len as transformers takes it: an int, or a one-element tensor (dynamic NTK computes it
    from position ids as torch.max(position_ids) + 1)."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_complex() or value.dtype == torch.bool:
            raise ValueError(
                f"seq_len must be a number or a one-element tensor, got {describe(value)}"
            )
        value = value.item()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return require_positive_int(
            "seq_len", value, minimum=0
        )  # 0: not set, as in transformers
    return require_positive_float("seq_len", value)


def _check_params(params: dict) -> dict:
    """Each parameter's type and range (None means "not set", as in transformers)."""
    checked = dict(params)
    for name in ("factor", "low_freq_factor", "high_freq_factor", "attention_factor"):
        if params.get(name) is not None:
            checked[name] = require_positive_float(name, params[name])
    for name in ("original_max_position_embeddings", "max_position_embeddings"):
        if params.get(name) is not None:
            value = params[name]
            require_positive_float(
                name, value
            )  # a finite number > 0 (ints, as configs hold)
            checked[name] = (
                int(value) if isinstance(value, numbers.Integral) else float(value)
            )
    for name in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim"):
        if params.get(name) is not None:
            value = require_number(name, params[name])
            if name.startswith("beta") and value < 0:
                raise ValueError(
                    f"{name} must be >= 0 (a number of turns; 0 means the default), got {value}"
                )
            checked[name] = value
    if "truncate" in params:
        require_bool_or_none("truncate", params["truncate"])
    checked["seq_len"] = _seq_len(params.get("seq_len"))
    return checked


def _check_frequencies(name: str, inv_freq) -> torch.Tensor:
    """A real tensor of finite frequencies > 0 (radians per position)."""
    require_tensor(name, inv_freq)
    if inv_freq.is_complex() or inv_freq.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, got dtype {inv_freq.dtype}")
    require_finite(name, inv_freq)
    if (
        inv_freq.device.type != "meta"
        and inv_freq.numel()
        and not bool((inv_freq > 0).all())
    ):
        raise ValueError(
            f"{name} must be > 0 (radians per position), got {inv_freq.min().item()} among its values"
        )
    return inv_freq


def wavelengths(inv_freq: torch.Tensor) -> torch.Tensor:
    """lambda_i = 2 pi / theta_i: how many tokens pair i needs for one full turn.

    inv_freq: a tensor of finite frequencies > 0; the result has its shape (float32 at least)."""
    inv_freq = _check_frequencies("inv_freq", inv_freq)
    if not inv_freq.is_floating_point():
        inv_freq = inv_freq.to(torch.float32)
    return 2 * math.pi / inv_freq


def _exponent_frequencies(dim: int, base: float) -> torch.Tensor:
    """base ** (-2i/dim) for i = 0 .. ceil(dim/2) - 1, float32, as transformers
    computes them (an odd rotated width, e.g. int(20 * 0.25) = 5, gives ceil(5/2) = 3
    frequencies, with exponents over 5)."""
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).to(torch.float32) / dim
    return 1.0 / (base**exponents)


# In the functions below `head_dim` is the rotated width,
# int(head_dim * partial_rotary_factor).
def _default(head_dim, base, params):
    return _exponent_frequencies(head_dim, base), 1.0


def _linear(head_dim, base, params):
    factor = require_positive_float("factor", _need(params, "factor", "linear"))
    return _exponent_frequencies(head_dim, base) / factor, 1.0


def _ntk(head_dim, base, params):
    factor = require_positive_float("factor", _need(params, "factor", "ntk"))
    scaled_base = base * factor ** (head_dim / (head_dim - 2))
    return _exponent_frequencies(head_dim, scaled_base), 1.0


def _dynamic(head_dim, base, params):
    factor = require_positive_float("factor", _need(params, "factor", "dynamic"))
    max_len = _need(params, "max_position_embeddings", "dynamic")
    seq_len = max(
        params.get("seq_len") or max_len, max_len
    )  # a tensor seq_len arrives as a number
    scaled = factor * seq_len / max_len - (factor - 1)
    scaled_base = base * scaled ** (head_dim / (head_dim - 2))
    return _exponent_frequencies(head_dim, scaled_base), 1.0


def yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's temperature: sqrt(1/t) = 0.1 * mscale * ln(s) + 1 for s > 1, else 1.

    scale: the factor s, a finite number > 0; mscale: a finite number."""
    scale = require_positive_float("scale", scale)
    mscale = require_number("mscale", mscale)
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_attention_factor(factor: float, mscale=None, mscale_all_dim=None) -> float:
    """YaRN's attention factor: 0.1 ln(s) + 1, or, when a model gives mscale and mscale_all_dim
    (DeepSeek), yarn_get_mscale(s, mscale) / yarn_get_mscale(s, mscale_all_dim).

    factor: s, a finite number > 0; mscale, mscale_all_dim: finite numbers or None (0 or None
    means not set, as in transformers)."""
    factor = require_positive_float("factor", factor)
    for name, value in (("mscale", mscale), ("mscale_all_dim", mscale_all_dim)):
        if value is not None:
            require_number(name, value)
    if mscale and mscale_all_dim:
        denominator = yarn_get_mscale(factor, mscale_all_dim)
        if denominator == 0:
            raise ValueError(
                f"mscale_all_dim makes 0.1 * mscale_all_dim * ln(factor) + 1 zero (a division by "
                f"zero), got mscale_all_dim={mscale_all_dim} with factor={factor}"
            )
        return float(yarn_get_mscale(factor, mscale) / denominator)
    return yarn_get_mscale(factor)


def _check_log_base(base) -> float:
    base = require_positive_float("base", base)
    if base == 1:
        raise ValueError(
            "base must differ from 1 (YaRN's bounds divide by ln(base)), got 1.0"
        )
    return base


def yarn_correction_dim(
    num_rotations: float, head_dim: int, base: float, original_length: int
) -> float:
    """The (fractional) pair index whose wavelength fits `num_rotations` times into the original
    length: solve L / lambda_i = num_rotations for i, with lambda_i = 2 pi base^(2i/d).

    num_rotations, original_length: finite numbers > 0; head_dim: an even int; base > 0, != 1."""
    num_rotations = require_positive_float("num_rotations", num_rotations)
    require_even("head_dim", head_dim)
    base = _check_log_base(base)
    original_length = require_positive_float("original_length", original_length)
    return (head_dim * math.log(original_length / (num_rotations * 2 * math.pi))) / (
        2 * math.log(base)
    )


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
    truncate the bounds are rounded outward to whole pairs (truncate=None: not rounded, as
    transformers reads an explicit None). Clamped to [0, head_dim - 1] as transformers does.
    beta_fast < beta_slow (reversed bounds) gives low > high; transformers warns and goes on,
    and so does this function (a UserWarning)."""
    require_bool_or_none("truncate", truncate)
    beta_fast = require_positive_float("beta_fast", beta_fast)
    beta_slow = require_positive_float("beta_slow", beta_slow)
    if beta_fast < beta_slow:
        warnings.warn(
            f"beta_fast must be greater than beta_slow (beta_fast turns mark the pairs kept, "
            f"beta_slow the pairs interpolated), got beta_fast={beta_fast}, beta_slow={beta_slow}",
            UserWarning,
            stacklevel=2,
        )
    low = yarn_correction_dim(beta_fast, head_dim, base, original_length)
    high = yarn_correction_dim(beta_slow, head_dim, base, original_length)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, head_dim - 1)


def ramp_by_pair(low: float, high: float, n_pairs: int) -> torch.Tensor:
    """YaRN's ramp gamma_i as its code computes it, linear in the pair index (float32 [n_pairs]):

        gamma_i = 1 - clamp((i - low) / (high - low), 0, 1)

    1 at pair `low` and below (the pair keeps theta_i), 0 at `high` and above (theta_i / s),
    linear between; theta'_i = (1 - gamma_i) theta_i / s + gamma_i theta_i. transformers calls
    1 - gamma_i `linear_ramp_factor`. (Peng et al. 2023, arXiv:2309.00071; ramp_by_turns is the
    paper's form of the same ramp.) low <= high: finite numbers; n_pairs: an int >= 0."""
    low = require_number("low", low)
    high = require_number("high", high)
    n_pairs = require_positive_int("n_pairs", n_pairs, minimum=0)
    if low > high:
        raise ValueError(
            f"low must be <= high (the ramp falls from pair low to pair high), got low={low}, high={high}"
        )
    return _ramp(low, high, n_pairs)


def _ramp(low: float, high: float, n_pairs: int) -> torch.Tensor:
    # transformers' linear_ramp_factor, reversed bounds included (it only warns about those)
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    return 1 - torch.clamp(
        (torch.arange(n_pairs, dtype=torch.float32) - low) / (high - low), 0, 1
    )


def _yarn(head_dim, base, params):
    if head_dim % 2:
        raise ValueError(
            "yarn needs an even rotated width int(head_dim * partial_rotary_factor), "
            "got "
            f"{head_dim} (transformers' ramp has head_dim // 2 entries and fails)"
        )
    original = _original_length(params, "yarn")
    factor = params.get("factor")
    if factor is None:
        factor = _need(params, "max_position_embeddings", "yarn") / original
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        attention_factor = yarn_attention_factor(
            factor, params.get("mscale"), params.get("mscale_all_dim")
        )
    # transformers: config.rope_parameters.get("truncate", True), so an explicit None rounds nothing
    truncate = params.get("truncate", True)
    _check_log_base(base)
    low, high = yarn_correction_range(
        head_dim,
        base,
        original,
        params.get("beta_fast") or 32,
        params.get("beta_slow") or 1,
        truncate,
    )
    # Same float32 operations, in the same order, as transformers, so the results match exactly.
    pos_freqs = base ** (torch.arange(0, head_dim, 2).to(torch.float32) / head_dim)
    extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
    gamma = _ramp(low, high, head_dim // 2)  # 1: pair keeps its frequency
    return interpolation * (1 - gamma) + extrapolation * gamma, attention_factor


def _llama3(head_dim, base, params):
    factor = _need(params, "factor", "llama3")
    low_freq_factor = _need(params, "low_freq_factor", "llama3")
    high_freq_factor = _need(params, "high_freq_factor", "llama3")
    original = _original_length(params, "llama3")
    if high_freq_factor <= low_freq_factor:
        warnings.warn(
            f"high_freq_factor must be greater than low_freq_factor (as transformers warns), got "
            f"high_freq_factor={high_freq_factor}, low_freq_factor={low_freq_factor}",
            UserWarning,
            stacklevel=3,
        )
    inv_freq = _exponent_frequencies(head_dim, base)
    wavelen = wavelengths(inv_freq)
    low_freq_wavelen, high_freq_wavelen = (
        original / low_freq_factor,
        original / high_freq_factor,
    )
    # long wavelengths (> L / low_freq_factor) are interpolated, short ones (< L / high) kept
    scaled = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth = (original / wavelen - low_freq_factor) / (
        high_freq_factor - low_freq_factor
    )
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    return torch.where(medium, blended, scaled), 1.0


def _longrope(head_dim, base, params):
    short_factor = _need(params, "short_factor", "longrope")
    long_factor = _need(params, "long_factor", "longrope")
    original = _original_length(params, "longrope")
    n_pairs = (head_dim + 1) // 2
    for name, value in (("short_factor", short_factor), ("long_factor", long_factor)):
        if isinstance(value, (list, tuple)) and len(value) != n_pairs:
            raise ValueError(
                f"{name} must have one entry per rotated pair, int(head_dim * "
                f"partial_rotary_factor) / 2 = {n_pairs}, got {len(value)}"
            )
    short_factor = check_factor_list("short_factor", short_factor, n_pairs)
    long_factor = check_factor_list("long_factor", long_factor, n_pairs)
    factor = params.get("factor")
    if factor is None:
        factor = _need(params, "max_position_embeddings", "longrope") / original
    attention_factor = params.get("attention_factor")
    if attention_factor is None:
        attention_factor = (
            1.0
            if factor <= 1.0
            else math.sqrt(1 + math.log(factor) / math.log(original))
        )
    seq_len = params.get("seq_len")
    ext = torch.tensor(
        long_factor if seq_len and seq_len > original else short_factor,
        dtype=torch.float32,
    )
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim
    return 1.0 / (ext * base**exponents), attention_factor


def _proportional(head_dim, base, params, partial_rotary_factor):
    """Gemma 4's p-RoPE: the first int(p * d/2) pairs keep base ** (-2i/d) (the whole
    head's denominator), the other pairs get frequency 0; everything divided by factor
    (default 1). Barbero et al. 2024 ("Round and Round We Go! What makes Rotary
    Positional Encodings useful?", arXiv:2410.06205) found the slowest pairs carry
    meaning rather than position and proposed rotating only the fast ones. As
    transformers' ROPE_INIT_FUNCTIONS["proportional"]."""
    factor = params.get("factor")
    factor = 1.0 if factor is None else factor
    p = 1.0 if partial_rotary_factor is None else partial_rotary_factor
    rotated = int(p * head_dim // 2)
    exponents = torch.arange(0, 2 * rotated, 2, dtype=torch.int64).to(torch.float32)
    exponents = exponents / head_dim
    inv_freq = 1.0 / (base**exponents)
    if head_dim // 2 > rotated:
        inv_freq = torch.cat([inv_freq, torch.zeros(head_dim // 2 - rotated)])
    return inv_freq / factor, 1.0


ROPE_FREQUENCY_FUNCTIONS = {
    "default": _default,
    "linear": _linear,
    "ntk": _ntk,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "llama3": _llama3,
    "longrope": _longrope,
    "proportional": _proportional,
}


def _check_partial(value) -> float:
    """partial_rotary_factor: a number in [0, 1] (wider fails in transformers)."""
    value = require_number("partial_rotary_factor", value)
    if not 0 <= value <= 1:
        raise ValueError(
            "partial_rotary_factor must be between 0 and 1 (the share of each head "
            f"that is rotated), got {value}"
        )
    return value


def rope_frequencies(rope_type: str, head_dim: int, base: float = 10000.0, **params):
    """(inv_freq float32, attention_factor float) for a RoPE variant.

    rope_type is one of ROPE_FREQUENCY_FUNCTIONS; params are named as in transformers'
    rope_parameters (factor, original_max_position_embeddings, max_position_embeddings, seq_len,
    beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, truncate, low_freq_factor,
    high_freq_factor, short_factor, long_factor, partial_rotary_factor). Pass the result
    on:
        inv_freq, attention_factor = rope_frequencies("yarn", 128, factor=4, original_max_position_embeddings=4096)
        apply_rope(q, positions, inv_freq=inv_freq, attention_factor=attention_factor)

    partial_rotary_factor = p (default: not set, the whole head): every type but
    "proportional" computes its frequencies for the rotated width r = int(p * head_dim)
    as if the head were r wide (theta_i = base ** (-2i/r), GPT-NeoX's partial rotary),
    giving ceil(r/2) frequencies; rotate with
    apply_rope(..., rotary_dim=2 * len(inv_freq)).
    "proportional" (Gemma 4's p-RoPE) returns head_dim/2 frequencies:
    base ** (-2i/head_dim) for the first int(p * head_dim / 2) pairs, 0 for the rest.
    A rotated width of 0 gives no frequencies (transformers accepts it and rotates
    nothing) with a warning.
    """
    if not isinstance(rope_type, str) or rope_type not in ROPE_FREQUENCY_FUNCTIONS:
        raise ValueError(
            f"rope_type must be one of {list(ROPE_FREQUENCY_FUNCTIONS)}, got {rope_type!r}"
        )
    partial = params.pop("partial_rotary_factor", None)
    if partial is not None:
        partial = _check_partial(partial)
    head_dim = require_positive_int("head_dim", head_dim)
    width = head_dim
    if partial is not None and rope_type != "proportional":
        width = int(head_dim * partial)
    if width == head_dim:
        require_even("head_dim", head_dim)
    if width in (1, 2) and rope_type in ("ntk", "dynamic"):
        name = "head_dim"
        if width != head_dim:
            name = "int(head_dim * partial_rotary_factor)"
        raise ValueError(
            f"{name} must be >= 4 for rope_type {rope_type!r} (d/(d-2)), got {width}"
        )
    base = require_positive_float("base", base)
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, PARAMETERS, n=1)
            if close:
                hints.append(f"{name!r} -> {close[0]!r}?")
        hint = f" (did you mean {', '.join(hints)})" if hints else ""
        raise ValueError(
            f"params must be named as in transformers' rope_parameters {PARAMETERS}, "
            f"got unknown {unknown}{hint}"
        )
    checked = _check_params(params)
    if rope_type == "proportional":
        return _proportional(head_dim, base, checked, partial)
    if width == 0:
        warnings.warn(
            f"partial_rotary_factor={partial} rotates int({head_dim} * {partial}) = 0 "
            "coordinates: no frequencies, no position (transformers does the same)",
            UserWarning,
            stacklevel=2,
        )
        return torch.zeros(0), 1.0
    return ROPE_FREQUENCY_FUNCTIONS[rope_type](width, base, checked)


# ---------------------------------------------------------------------------------------------
# Tools for the context-extension lesson: which angles a pair has seen, how much of its
# original frequency a method keeps, and the Position Interpolation paper's score argument.
# ---------------------------------------------------------------------------------------------

REGIMES = ("extrapolated", "blended", "interpolated")


def angle_coverage(inv_freq: torch.Tensor, length: int) -> torch.Tensor:
    """Fraction of the circle that pair i sweeps over positions 0 .. length-1:

        coverage_i = min(1, (length - 1) * theta_i / (2 pi))

    1 means the pair has met every angle (its wavelength fits into the sequence); a pair with
    coverage < 1 has only seen an arc, and positions past `length` take it to angles it never
    saw during training. That is why RoPE does not extrapolate by itself (Chen et al. 2023,
    arXiv:2306.15595; Peng et al. 2023, arXiv:2309.00071)."""
    inv_freq = _check_frequencies("inv_freq", inv_freq)
    length = require_positive_int("length", length)
    return torch.clamp(
        (length - 1) * inv_freq.to(torch.float64) / (2 * math.pi), max=1.0
    )


def first_pair_longer_than(inv_freq: torch.Tensor, length: float) -> int:
    """min{i : 2 pi / theta_i > length}: the first pair whose wavelength does not fit into
    `length` (len(inv_freq) when every wavelength fits). A common write-up of YaRN computes this
    cut-off as its first step ("corr_dim"); YaRN's upper correction bound with beta_slow = 1 is
    the same idea. inv_freq: a 1-D tensor of frequencies > 0; length: a finite number > 0."""
    inv_freq = _check_frequencies("inv_freq", inv_freq)
    if inv_freq.dim() != 1:
        raise ValueError(
            f"inv_freq must be 1-D [head_dim/2], got shape {tuple(inv_freq.shape)}"
        )
    length = require_positive_float("length", length)
    longer = (wavelengths(inv_freq.to(torch.float64)) > length).nonzero()
    return int(longer[0]) if len(longer) else int(inv_freq.shape[0])


def implied_ramp(
    inv_freq: torch.Tensor, scaled_inv_freq: torch.Tensor, factor: float
) -> torch.Tensor:
    """The ramp gamma_i that a set of scaled frequencies implies, read back from them:
    scaled_i = (1 - gamma_i) * theta_i / s + gamma_i * theta_i, so

        gamma_i = (scaled_i / theta_i - 1/s) / (1 - 1/s)

    1: the pair keeps its frequency (it is extrapolated), 0: its frequency is divided by s
    (interpolated, as Position Interpolation does for all pairs), between: blended. For YaRN
    this is ramp_by_pair (Peng et al. 2023, "NTK-by-parts": h(theta) = (1-gamma) theta/s + gamma theta);
    for Llama 3 it is its `smooth` factor; for NTK-aware scaling it falls from 1 (pair 0) to 0
    (the last pair) (float64 [head_dim/2])."""
    factor = require_positive_float("factor", factor)
    if factor == 1.0:
        raise ValueError(
            "factor must differ from 1 (with s = 1 every method keeps every frequency), got 1.0"
        )
    inv_freq = _check_frequencies("inv_freq", inv_freq)
    scaled_inv_freq = _check_frequencies("scaled_inv_freq", scaled_inv_freq)
    if inv_freq.shape != scaled_inv_freq.shape:
        raise ValueError(
            f"scaled_inv_freq must have the shape of inv_freq {tuple(inv_freq.shape)}, "
            f"got {tuple(scaled_inv_freq.shape)}"
        )
    ratio = scaled_inv_freq.to(torch.float64) / inv_freq.to(torch.float64)
    return (ratio - 1 / factor) / (1 - 1 / factor)


def pair_regimes(
    inv_freq: torch.Tensor,
    scaled_inv_freq: torch.Tensor,
    factor: float,
    tol: float = 1e-4,
) -> torch.Tensor:
    """Per pair, an index into REGIMES: 0 "extrapolated" (frequency kept, implied_ramp >= 1-tol),
    2 "interpolated" (frequency divided by s, implied_ramp <= tol), 1 "blended" (in between).
    int64 [head_dim/2]."""
    tol = require_number("tol", tol)
    if not 0 <= tol < 0.5:
        raise ValueError(f"tol must be in [0, 0.5), got {tol}")
    gamma = implied_ramp(inv_freq, scaled_inv_freq, factor)
    regimes = torch.ones_like(gamma, dtype=torch.int64)
    regimes[gamma >= 1 - tol] = 0
    regimes[gamma <= tol] = 2
    return regimes


def ramp_by_turns(
    inv_freq: torch.Tensor, original_length: float, alpha: float, beta: float
) -> torch.Tensor:
    """The YaRN paper's ramp as a function of r = L / lambda_i (turns of pair i within L):

        gamma(r) = 0 if r < alpha,  1 if r > beta,  (r - alpha) / (beta - alpha) otherwise

    (Peng et al. 2023, arXiv:2309.00071, "NTK-by-parts"; alpha = 1, beta = 32 for LLaMA). Llama 3's
    `smooth` is this ramp with alpha = low_freq_factor, beta = high_freq_factor. (YaRN's code,
    and transformers, ramp linearly in the pair index between the rounded bounds instead, see
    ramp_by_pair; both agree on which pairs are kept and which are divided by s.) float64."""
    inv_freq = _check_frequencies("inv_freq", inv_freq)
    original_length = require_positive_float("original_length", original_length)
    alpha, beta = require_number("alpha", alpha), require_number("beta", beta)
    if not beta > alpha:
        raise ValueError(f"beta must be > alpha, got alpha={alpha}, beta={beta}")
    ratio = original_length / wavelengths(inv_freq.to(torch.float64))
    return torch.clamp((ratio - alpha) / (beta - alpha), 0.0, 1.0)


def _check_score_inputs(h, distances, inv_freq):
    """h (None: not given), distances and inv_freq of the score functions, checked."""
    if h is not None:
        require_tensor("h", h)
    require_tensor("distances", distances)
    inv_freq = _check_frequencies("inv_freq", inv_freq)
    if inv_freq.dim() != 1:
        raise ValueError(
            f"inv_freq must be 1-D [head_dim/2], got shape {tuple(inv_freq.shape)}"
        )
    if h is not None and tuple(h.shape) != tuple(inv_freq.shape):
        raise ValueError(
            f"h must have the shape of inv_freq {tuple(inv_freq.shape)}, got {tuple(h.shape)}"
        )
    if distances.is_complex() or distances.dtype == torch.bool:
        raise TypeError(
            f"distances must hold real numbers, got dtype {distances.dtype}"
        )
    require_finite("distances", distances)
    return h, distances, inv_freq


def relative_score(
    h: torch.Tensor, distances: torch.Tensor, inv_freq: torch.Tensor
) -> torch.Tensor:
    """RoPE's attention score as a function of the offset Delta = m - n alone:

        a(Delta) = Re sum_j h_j exp(i Delta theta_j)

    where h_j = q_j conj(k_j) is built from pair j of the query and key read as complex numbers
    (Chen et al. 2023, arXiv:2306.15595, eq. 3). h: complex [head_dim/2]; float64 result."""
    h, distances, inv_freq = _check_score_inputs(h, distances, inv_freq)
    angles = distances.to(torch.float64).unsqueeze(-1) * inv_freq.to(torch.float64)
    h = h.to(torch.complex128)
    return (h.real * torch.cos(angles) - h.imag * torch.sin(angles)).sum(-1)


def fit_relative_score(
    distances: torch.Tensor,
    targets: torch.Tensor,
    inv_freq: torch.Tensor,
    ridge: float = 1e-8,
) -> torch.Tensor:
    """Coefficients h (complex128 [head_dim/2]) of a score function a(Delta) = relative_score(h, Delta)
    fitted to `targets` at `distances` by ridge-regularised least squares:
    minimise sum (a(Delta) - target)^2 + ridge * |h|^2. A stand-in for training: the fit only
    constrains a(Delta) where there are data (Chen et al. 2023, fig. 2)."""
    _, distances, inv_freq = _check_score_inputs(None, distances, inv_freq)
    require_tensor("targets", targets)
    if tuple(targets.shape) != tuple(distances.shape):
        raise ValueError(
            f"targets must have the shape of distances {tuple(distances.shape)}, got {tuple(targets.shape)}"
        )
    ridge = require_number("ridge", ridge)
    if ridge < 0:
        raise ValueError(f"ridge must be >= 0, got {ridge}")
    angles = distances.to(torch.float64).unsqueeze(-1) * inv_freq.to(torch.float64)
    design = torch.cat([torch.cos(angles), -torch.sin(angles)], dim=-1)
    n = design.shape[-1]
    gram = design.T @ design + ridge * torch.eye(n, dtype=torch.float64)
    solution = torch.linalg.solve(gram, design.T @ targets.to(torch.float64))
    return torch.complex(solution[: n // 2], solution[n // 2 :])


def interpolation_error_bound(
    h: torch.Tensor, inv_freq: torch.Tensor, distances: torch.Tensor
) -> torch.Tensor:
    """How far a(Delta) can be from the straight line through a(D1) and a(D2), D1 = floor(Delta),
    D2 = D1 + 1 (Chen et al. 2023, Theorem 2.1):

        |a(Delta) - a_linear(Delta)| <= (Delta - D1)(D2 - Delta) / 2 * max|a''| <= (Delta - D1)(D2 - Delta) / 2 * sum_j |h_j| theta_j^2

    The paper goes on with sum_j |h_j| theta_j^2 <= max_j |h_j| sum_j theta_j^2 and replaces
    sum_j theta_j^2 by d / (4 ln c) (c = base), an estimate of the sum by an integral, giving
    d max|h| (Delta - D1)(D2 - Delta) / (8 ln c). This function keeps the exact sum. It is not tighter
    than the paper's estimate: the integral misses part of the sum, so the exact sum is slightly
    larger (for d = 128, c = 10000: sum_j theta_j^2 = 3.998 against d / (4 ln c) = 3.474).
    Between integers of the trained range the score therefore stays close to scores the model
    has seen; nothing similar holds for s past L (extrapolation). float64."""
    h, distances, inv_freq = _check_score_inputs(h, distances, inv_freq)
    s = distances.to(torch.float64)
    s1 = torch.floor(s)
    curvature = (h.abs().to(torch.float64) * inv_freq.to(torch.float64) ** 2).sum()
    return (s - s1) * (s1 + 1 - s) / 2 * curvature
