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


def ramp_by_pair(low: float, high: float, n_pairs: int) -> torch.Tensor:
    """YaRN's ramp gamma_i as its code computes it, linear in the pair index (float32 [n_pairs]):

        gamma_i = 1 - clamp((i - low) / (high - low), 0, 1)

    1 at pair `low` and below (the pair keeps theta_i), 0 at `high` and above (theta_i / s),
    linear between; theta'_i = (1 - gamma_i) theta_i / s + gamma_i theta_i. transformers calls
    1 - gamma_i `linear_ramp_factor`. (Peng et al. 2023, arXiv:2309.00071; ramp_by_turns is the
    paper's form of the same ramp.)"""
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    return 1 - torch.clamp((torch.arange(n_pairs, dtype=torch.float32) - low) / (high - low), 0, 1)


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
    gamma = ramp_by_pair(low, high, head_dim // 2)  # 1: pair keeps its frequency
    return interpolation * (1 - gamma) + extrapolation * gamma, attention_factor


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
        raise ValueError(f"params must be named as in transformers' rope_parameters {PARAMETERS}, got unknown {unknown}")
    return ROPE_FREQUENCY_FUNCTIONS[rope_type](head_dim, base, params)


# ---------------------------------------------------------------------------------------------
# Tools for lesson 05 (context extension): which angles a pair has seen, how much of its
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
    if length < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    return torch.clamp((length - 1) * inv_freq.to(torch.float64) / (2 * math.pi), max=1.0)


def first_pair_longer_than(inv_freq: torch.Tensor, length: float) -> int:
    """min{i : 2 pi / theta_i > length}: the first pair whose wavelength does not fit into
    `length` (len(inv_freq) when every wavelength fits). This is the cut-off of seed 002's
    step 1 ("corr_dim"); YaRN's upper correction bound with beta_slow = 1 is the same idea."""
    longer = (wavelengths(inv_freq.to(torch.float64)) > length).nonzero()
    return int(longer[0]) if len(longer) else int(inv_freq.shape[0])


def implied_ramp(inv_freq: torch.Tensor, scaled_inv_freq: torch.Tensor, factor: float) -> torch.Tensor:
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
        raise ValueError("factor must differ from 1 (with s = 1 every method keeps every frequency)")
    if inv_freq.shape != scaled_inv_freq.shape:
        raise ValueError(
            f"scaled_inv_freq must have the shape of inv_freq {tuple(inv_freq.shape)}, "
            f"got {tuple(scaled_inv_freq.shape)}"
        )
    ratio = scaled_inv_freq.to(torch.float64) / inv_freq.to(torch.float64)
    return (ratio - 1 / factor) / (1 - 1 / factor)


def pair_regimes(
    inv_freq: torch.Tensor, scaled_inv_freq: torch.Tensor, factor: float, tol: float = 1e-4
) -> torch.Tensor:
    """Per pair, an index into REGIMES: 0 "extrapolated" (frequency kept, implied_ramp >= 1-tol),
    2 "interpolated" (frequency divided by s, implied_ramp <= tol), 1 "blended" (in between).
    int64 [head_dim/2]."""
    gamma = implied_ramp(inv_freq, scaled_inv_freq, factor)
    regimes = torch.ones_like(gamma, dtype=torch.int64)
    regimes[gamma >= 1 - tol] = 0
    regimes[gamma <= tol] = 2
    return regimes


def ramp_by_turns(inv_freq: torch.Tensor, original_length: float, alpha: float, beta: float) -> torch.Tensor:
    """The YaRN paper's ramp as a function of r = L / lambda_i (turns of pair i within L):

        gamma(r) = 0 if r < alpha,  1 if r > beta,  (r - alpha) / (beta - alpha) otherwise

    (Peng et al. 2023, arXiv:2309.00071, "NTK-by-parts"; alpha = 1, beta = 32 for LLaMA). Llama 3's
    `smooth` is this ramp with alpha = low_freq_factor, beta = high_freq_factor. (YaRN's code,
    and transformers, ramp linearly in the pair index between the rounded bounds instead, see
    ramp_by_pair; both agree on which pairs are kept and which are divided by s.) float64."""
    if not beta > alpha:
        raise ValueError(f"beta must be > alpha, got alpha={alpha}, beta={beta}")
    ratio = original_length / wavelengths(inv_freq.to(torch.float64))
    return torch.clamp((ratio - alpha) / (beta - alpha), 0.0, 1.0)


def relative_score(h: torch.Tensor, distances: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """RoPE's attention score as a function of the distance s = m - n alone:

        a(s) = Re sum_j h_j exp(i s theta_j)

    where h_j = q_j conj(k_j) is built from pair j of the query and key read as complex numbers
    (Chen et al. 2023, arXiv:2306.15595, eq. 3). h: complex [head_dim/2]; float64 result."""
    angles = distances.to(torch.float64).unsqueeze(-1) * inv_freq.to(torch.float64)
    h = h.to(torch.complex128)
    return (h.real * torch.cos(angles) - h.imag * torch.sin(angles)).sum(-1)


def fit_relative_score(
    distances: torch.Tensor, targets: torch.Tensor, inv_freq: torch.Tensor, ridge: float = 1e-8
) -> torch.Tensor:
    """Coefficients h (complex128 [head_dim/2]) of a score function a(s) = relative_score(h, s)
    fitted to `targets` at `distances` by ridge-regularised least squares:
    minimise sum (a(s) - target)^2 + ridge * |h|^2. A stand-in for training: the fit only
    constrains a(s) where there are data (Chen et al. 2023, fig. 2)."""
    angles = distances.to(torch.float64).unsqueeze(-1) * inv_freq.to(torch.float64)
    design = torch.cat([torch.cos(angles), -torch.sin(angles)], dim=-1)
    n = design.shape[-1]
    gram = design.T @ design + ridge * torch.eye(n, dtype=torch.float64)
    solution = torch.linalg.solve(gram, design.T @ targets.to(torch.float64))
    return torch.complex(solution[: n // 2], solution[n // 2 :])


def interpolation_error_bound(h: torch.Tensor, inv_freq: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
    """How far a(s) can be from the straight line through a(s1) and a(s2), s1 = floor(s),
    s2 = s1 + 1 (Chen et al. 2023, Theorem 2.1):

        |a(s) - a_linear(s)| <= (s - s1)(s2 - s) / 2 * max|a''| <= (s - s1)(s2 - s) / 2 * sum_j |h_j| theta_j^2

    The paper bounds sum_j |h_j| theta_j^2 further by max_j |h_j| * d / (4 ln c) (c = base), giving
    d max|h| (s - s1)(s2 - s) / (8 ln c); this function keeps the sum, which is tighter and exact.
    Between integers of the trained range the score therefore stays close to scores the model
    has seen; nothing similar holds for s past L (extrapolation). float64."""
    s = distances.to(torch.float64)
    s1 = torch.floor(s)
    curvature = (h.abs().to(torch.float64) * inv_freq.to(torch.float64) ** 2).sum()
    return (s - s1) * (s1 + 1 - s) / 2 * curvature
