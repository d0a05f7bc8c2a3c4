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
    require_number,
    require_positive_float,
    require_positive_int,
)
from .language import _
from .rotary import pair_frequencies

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
            _(
                "rope_type {rope_type!r} needs the parameter {name!r}, which is missing"
            ).format(rope_type=rope_type, name=name)
        )
    return value


def _original_length(params: dict, rope_type: str) -> int:
    # transformers falls back to max_position_embeddings when original_... is not set
    value = params.get("original_max_position_embeddings") or params.get(
        "max_position_embeddings"
    )
    if value is None:
        raise ValueError(
            _(
                "rope_type {rope_type!r} needs the parameter "
                "'original_max_position_embeddings' (or "
                "'max_position_embeddings'), which is missing"
            ).format(rope_type=rope_type)
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
                _("seq_len must be a number or a one-element tensor, got {got}").format(
                    got=describe(value)
                )
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
                    _(
                        "{name} must be >= 0 (a number of turns; 0 means the default), got "
                        "{value}"
                    ).format(name=name, value=value)
                )
            checked[name] = value
    if "truncate" in params:
        require_bool_or_none("truncate", params["truncate"])
    checked["seq_len"] = _seq_len(params.get("seq_len"))
    return checked


def yarn_get_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's temperature: sqrt(1/t) = 0.1 * mscale * ln(s) + 1 for s > 1, else 1.

    scale: the factor s, a finite number > 0; mscale: a finite number. (Peng et al. 2023,
    arXiv:2309.00071: sqrt(1/t) = 0.1 ln(s) + 1.)"""
    scale = require_positive_float("scale", scale)
    mscale = require_number("mscale", mscale)
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_attention_factor(factor: float, mscale=None, mscale_all_dim=None) -> float:
    """YaRN's attention factor sqrt(1/t) = 0.1 ln(s) + 1 (Peng et al. 2023, arXiv:2309.00071),
    or, when a model gives mscale and mscale_all_dim
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
                _(
                    "mscale_all_dim makes 0.1 * mscale_all_dim * ln(factor) + 1 zero "
                    "(a division by zero), got mscale_all_dim={mscale_all_dim} with "
                    "factor={factor}"
                ).format(mscale_all_dim=mscale_all_dim, factor=factor)
            )
        return float(yarn_get_mscale(factor, mscale) / denominator)
    return yarn_get_mscale(factor)


def _check_log_base(base) -> float:
    base = require_positive_float("base", base)
    if base == 1:
        raise ValueError(
            _("base must differ from 1 (YaRN's bounds divide by ln(base)), got 1.0")
        )
    return base


def yarn_correction_dim(
    num_rotations: float, head_dim: int, base: float, original_length: int
) -> float:
    """The (fractional) pair index whose wavelength fits `num_rotations` times into the original
    length: solve L / lambda_i = num_rotations for i, with lambda_i = 2 pi base^(2i/d).

        i = d ln(L / (2 pi r)) / (2 ln base)     (Peng et al. 2023, arXiv:2309.00071)

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
    """Pairs below `low` turn more than beta_fast times within L (kept); pairs
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


def yarn_ramp(low: float, high: float, n_pairs: int) -> torch.Tensor:
    """YaRN's ramp gamma_i = 1 - clamp((i - low) / (high - low), 0, 1), float32 [n_pairs]
    (transformers' 1 - linear_ramp_factor, reversed bounds included: it only warns about those).
    Unchecked: rope_frequencies and extension_analysis.ramp_by_pair check the bounds."""
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    return 1 - torch.clamp(
        (torch.arange(n_pairs, dtype=torch.float32) - low) / (high - low), 0, 1
    )


# --- the frequency table, one function per rope_type (transformers' ROPE_INIT_FUNCTIONS) -----
# Each takes the rotated width d = int(head_dim * partial_rotary_factor), the base and the
# parameters its validator (ROPE_VALIDATION_FUNCTIONS, below) has checked and completed, and
# returns (inv_freq, attention_factor). All start from pair_frequencies: theta_i = base^(-2i/d).


def _default(d, base, params):
    """theta_i = base ** (-2i/d) (RoFormer, Su et al. 2021)."""
    return pair_frequencies(d, base), 1.0


def _linear(d, base, params):
    """theta_i / s (Position Interpolation, Chen et al. 2023, arXiv:2306.15595)."""
    return pair_frequencies(d, base) / params["factor"], 1.0


def _ntk(d, base, params):
    """theta_i with base * s ** (d / (d - 2)) for base (NTK-aware scaling, bloc97 2023)."""
    return pair_frequencies(d, base * params["factor"] ** (d / (d - 2))), 1.0


def _dynamic(d, base, params):
    """_ntk with s' = s * seq_len / L - (s - 1) once seq_len > L (dynamic NTK, emozilla 2023)."""
    factor, length = params["factor"], params["max_position_embeddings"]
    # a tensor arrives as a number
    seq_len = max(params.get("seq_len") or length, length)
    scaled = factor * seq_len / length - (factor - 1)
    return pair_frequencies(d, base * scaled ** (d / (d - 2))), 1.0


def _yarn(d, base, params):
    """(1 - gamma_i) theta_i / s + gamma_i theta_i, gamma_i YaRN's ramp between the pairs that
    turn beta_fast and beta_slow times within L; attention factor 0.1 ln(s) + 1
    (Peng et al. 2023, arXiv:2309.00071)."""
    low, high = yarn_correction_range(
        d,
        base,
        params["original_max_position_embeddings"],
        params.get("beta_fast") or 32,
        params.get("beta_slow") or 1,
        # as transformers: an explicit None rounds nothing
        params.get("truncate", True),
    )
    theta, interpolated = (
        pair_frequencies(d, base),
        pair_frequencies(d, base, scale=params["factor"]),  # theta_i / s
    )
    gamma = yarn_ramp(low, high, d // 2)  # 1: the pair keeps its frequency
    inv_freq = interpolated * (1 - gamma) + theta * gamma
    return inv_freq, params["attention_factor"]


def _llama3(d, base, params):
    """theta_i / s for wavelengths above L / low_freq_factor, theta_i below L /
    high_freq_factor, a blend by L / lambda_i between (Meta, Llama 3.1, 2024)."""
    factor, low, high = (
        params[k] for k in ("factor", "low_freq_factor", "high_freq_factor")
    )
    length = params["original_max_position_embeddings"]
    theta = pair_frequencies(d, base)
    wavelength = 2 * math.pi / theta
    scaled = torch.where(wavelength > length / low, theta / factor, theta)
    smooth = (length / wavelength - low) / (high - low)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelength < length / high) * ~(wavelength > length / low)
    return torch.where(medium, blended, scaled), 1.0


def _longrope(d, base, params):
    """theta_i / lambda_i with searched per-pair factors lambda: long_factor past L, else
    short_factor (LongRoPE, Ding et al. 2024, arXiv:2402.13753)."""
    seq_len = params.get("seq_len")
    long = seq_len and seq_len > params["original_max_position_embeddings"]
    factors = params["long_factor"] if long else params["short_factor"]
    scale = torch.tensor(factors, dtype=torch.float32)
    return pair_frequencies(d, base, scale=scale), params["attention_factor"]


def _proportional(head_dim, base, params):
    """Gemma 4's p-RoPE: the first int(p * d/2) pairs keep base ** (-2i/d) (the whole head's
    denominator), the other pairs get frequency 0; everything divided by factor (default 1).
    Barbero et al. 2024 ("Round and Round We Go! What makes Rotary Positional Encodings
    useful?", arXiv:2410.06205) found the slowest pairs carry meaning rather than position and
    proposed rotating only the fast ones. As transformers' ROPE_INIT_FUNCTIONS["proportional"]."""
    p = params.get("partial_rotary_factor")
    rotated = int((1.0 if p is None else p) * head_dim // 2)
    inv_freq = pair_frequencies(head_dim, base)[:rotated]
    if head_dim // 2 > rotated:
        inv_freq = torch.cat([inv_freq, torch.zeros(head_dim // 2 - rotated)])
    factor = params.get("factor")
    return inv_freq / (1.0 if factor is None else factor), 1.0


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


# --- the checks, one validator per rope_type (transformers' ROPE_VALIDATION_FUNCTIONS) --------
# Each takes the rotated width, the base and the parameters (each already checked for its type
# and range by _check_params) and returns them completed with what its function reads.


def _requires(*names):
    def validate(d, base, params, rope_type):
        for name in names:
            _need(params, name, rope_type)
        return params

    return validate


def _validate_yarn(d, base, params, rope_type="yarn"):
    if d % 2:
        raise ValueError(
            _(
                "yarn needs an even rotated width int(head_dim * "
                "partial_rotary_factor), got {d} (transformers' ramp has head_dim "
                "// 2 entries and fails)"
            ).format(d=d)
        )
    params = dict(
        params, original_max_position_embeddings=_original_length(params, "yarn")
    )
    if params.get("factor") is None:
        length = _need(params, "max_position_embeddings", "yarn")
        params["factor"] = length / params["original_max_position_embeddings"]
    if params.get("attention_factor") is None:
        params["attention_factor"] = yarn_attention_factor(
            params["factor"], params.get("mscale"), params.get("mscale_all_dim")
        )
    _check_log_base(base)
    return params


def _validate_llama3(d, base, params, rope_type="llama3"):
    params = _requires("factor", "low_freq_factor", "high_freq_factor")(
        d, base, params, "llama3"
    )
    params = dict(
        params, original_max_position_embeddings=_original_length(params, "llama3")
    )
    low, high = params["low_freq_factor"], params["high_freq_factor"]
    if high <= low:
        warnings.warn(
            f"high_freq_factor must be greater than low_freq_factor (as transformers warns), got "
            f"high_freq_factor={high}, low_freq_factor={low}",
            UserWarning,
            stacklevel=3,
        )
    return params


def _validate_longrope(d, base, params, rope_type="longrope"):
    params = _requires("short_factor", "long_factor")(d, base, params, "longrope")
    original = _original_length(params, "longrope")
    params = dict(params, original_max_position_embeddings=original)
    n_pairs = (d + 1) // 2
    for name in ("short_factor", "long_factor"):
        value = params[name]
        if isinstance(value, (list, tuple)) and len(value) != n_pairs:
            raise ValueError(
                _(
                    "{name} must have one entry per rotated pair, int(head_dim * "
                    "partial_rotary_factor) / 2 = {n_pairs}, got {n_value}"
                ).format(name=name, n_pairs=n_pairs, n_value=len(value))
            )
        params[name] = check_factor_list(name, value, n_pairs)
    if params.get("factor") is None:
        params["factor"] = (
            _need(params, "max_position_embeddings", "longrope") / original
        )
    if params.get("attention_factor") is None:
        factor = params["factor"]
        params["attention_factor"] = (
            1.0
            if factor <= 1.0
            else math.sqrt(1 + math.log(factor) / math.log(original))
        )
    return params


ROPE_VALIDATION_FUNCTIONS = {
    "default": _requires(),
    "linear": _requires("factor"),
    "ntk": _requires("factor"),
    "dynamic": _requires("factor", "max_position_embeddings"),
    "yarn": _validate_yarn,
    "llama3": _validate_llama3,
    "longrope": _validate_longrope,
    "proportional": _requires(),
}


def _check_partial(value) -> float:
    """partial_rotary_factor: a number in [0, 1] (wider fails in transformers)."""
    value = require_number("partial_rotary_factor", value)
    if not 0 <= value <= 1:
        raise ValueError(
            _(
                "partial_rotary_factor must be between 0 and 1 (the share of each "
                "head that is rotated), got {value}"
            ).format(value=value)
        )
    return value


def _check_names(params: dict) -> None:
    unknown = sorted(set(params) - set(PARAMETERS))
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, PARAMETERS, n=1)
        if close:
            hints.append(f"{name!r} -> {close[0]!r}?")
    hint = _(" (did you mean {hints})").format(hints=", ".join(hints)) if hints else ""
    raise ValueError(
        _(
            "params must be named as in transformers' rope_parameters "
            "{parameters}, got unknown {unknown}{hint}"
        ).format(parameters=PARAMETERS, unknown=unknown, hint=hint)
    )


def _check_call(rope_type, head_dim, base, params: dict):
    """rope_frequencies' arguments checked: (rotated width, base, checked params)."""
    if not isinstance(rope_type, str) or rope_type not in ROPE_FREQUENCY_FUNCTIONS:
        raise ValueError(
            _(
                "rope_type must be one of {rope_frequency_functions}, got {rope_type!r}"
            ).format(
                rope_frequency_functions=list(ROPE_FREQUENCY_FUNCTIONS),
                rope_type=rope_type,
            )
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
        name = (
            "head_dim" if width == head_dim else "int(head_dim * partial_rotary_factor)"
        )
        raise ValueError(
            _(
                "{name} must be >= 4 for rope_type {rope_type!r} (d/(d-2)), got {width}"
            ).format(name=name, rope_type=rope_type, width=width)
        )
    base = require_positive_float("base", base)
    _check_names(params)
    checked = _check_params(params)
    checked["partial_rotary_factor"] = partial
    return width, base, checked


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
    width, base, params = _check_call(rope_type, head_dim, base, dict(params))
    if rope_type == "proportional":
        return _proportional(head_dim, base, params)
    if width == 0:
        partial = params["partial_rotary_factor"]
        warnings.warn(
            f"partial_rotary_factor={partial} rotates int({head_dim} * {partial}) = 0 "
            "coordinates: no frequencies, no position (transformers does the same)",
            UserWarning,
            stacklevel=2,
        )
        return torch.zeros(0), 1.0
    params = ROPE_VALIDATION_FUNCTIONS[rope_type](width, base, params, rope_type)
    return ROPE_FREQUENCY_FUNCTIONS[rope_type](width, base, params)
