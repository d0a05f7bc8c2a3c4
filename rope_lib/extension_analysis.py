"""Tools for the context-extension lesson: which angles each RoPE pair has seen, how much of its
original frequency a scaling method keeps, and the Position Interpolation paper's score argument.

rope_lib.scaling is the frequency table (rope_frequencies, as transformers computes it); this
module reads those frequencies back:

    wavelengths        lambda_i = 2 pi / theta_i
    angle_coverage     min(1, (L - 1) theta_i / (2 pi))                (Chen et al. 2023)
    implied_ramp       gamma_i = (theta'_i / theta_i - 1/s) / (1 - 1/s)  (Peng et al. 2023)
    ramp_by_pair, ramp_by_turns   YaRN's ramp, as its code and as its paper write it
    relative_score, fit_relative_score, interpolation_error_bound
                       a(Delta) = Re sum_j h_j e^{i Delta theta_j} and PI's Theorem 2.1
    discrimination_sum, first_negative_offset, base_lower_bound
                       B(m) = sum_i cos(m theta_i) and the smallest base with B >= 0 on
                       [0, L]                                         (Men et al. 2024)
"""

from __future__ import annotations

import math

import torch

from ._checks import (
    require_even,
    require_finite,
    require_number,
    require_positive_float,
    require_positive_int,
    require_tensor,
)
from .language import _
from .rotary import pair_frequencies
from .scaling import yarn_ramp


def check_frequencies(name: str, inv_freq) -> torch.Tensor:
    """A real tensor of finite frequencies > 0 (radians per position)."""
    require_tensor(name, inv_freq)
    if inv_freq.is_complex() or inv_freq.dtype == torch.bool:
        raise TypeError(
            _("{name} must hold real numbers, got dtype {inv_freq_dtype}").format(
                name=name, inv_freq_dtype=inv_freq.dtype
            )
        )
    require_finite(name, inv_freq)
    if (
        inv_freq.device.type != "meta"
        and inv_freq.numel()
        and not bool((inv_freq > 0).all())
    ):
        raise ValueError(
            _(
                "{name} must be > 0 (radians per position), got {inv_freq} among "
                "its values"
            ).format(name=name, inv_freq=inv_freq.min().item())
        )
    return inv_freq


def wavelengths(inv_freq: torch.Tensor) -> torch.Tensor:
    """lambda_i = 2 pi / theta_i: how many tokens pair i needs for one full turn.

    inv_freq: a tensor of finite frequencies > 0; the result has its shape (float32 at least).
    (Peng et al. 2023, arXiv:2309.00071, section 3: the wavelength of dimension d.)"""
    inv_freq = check_frequencies("inv_freq", inv_freq)
    if not inv_freq.is_floating_point():
        inv_freq = inv_freq.to(torch.float32)
    return 2 * math.pi / inv_freq


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
            _(
                "low must be <= high (the ramp falls from pair low to pair high), "
                "got low={low}, high={high}"
            ).format(low=low, high=high)
        )
    return yarn_ramp(low, high, n_pairs)


REGIMES = ("kept", "blended", "interpolated")


def angle_coverage(inv_freq: torch.Tensor, length: int) -> torch.Tensor:
    """Fraction of the circle that pair i sweeps over positions 0 .. length-1:

        coverage_i = min(1, (length - 1) * theta_i / (2 pi))

    1 means the pair has met every angle (its wavelength fits into the sequence); a pair with
    coverage < 1 has only seen an arc, and positions past `length` take it to angles it never
    saw during training. That is why RoPE does not extrapolate by itself (Chen et al. 2023,
    arXiv:2306.15595; Peng et al. 2023, arXiv:2309.00071)."""
    inv_freq = check_frequencies("inv_freq", inv_freq)
    length = require_positive_int("length", length)
    return torch.clamp(
        (length - 1) * inv_freq.to(torch.float64) / (2 * math.pi), max=1.0
    )


def first_pair_longer_than(inv_freq: torch.Tensor, length: float) -> int:
    """min{i : 2 pi / theta_i > length}: the first pair whose wavelength does not fit into
    `length` (len(inv_freq) when every wavelength fits). A common write-up of YaRN computes this
    cut-off as its first step ("corr_dim"); YaRN's upper correction bound with beta_slow = 1 is
    the same idea (Peng et al. 2023, arXiv:2309.00071). inv_freq: a 1-D tensor of frequencies
    > 0; length: a finite number > 0."""
    inv_freq = check_frequencies("inv_freq", inv_freq)
    if inv_freq.dim() != 1:
        raise ValueError(
            _("inv_freq must be 1-D [head_dim/2], got shape {inv_freq_shape}").format(
                inv_freq_shape=tuple(inv_freq.shape)
            )
        )
    length = require_positive_float("length", length)
    longer = (wavelengths(inv_freq.to(torch.float64)) > length).nonzero()
    return int(longer[0]) if len(longer) else int(inv_freq.shape[0])


def _check_scaled(inv_freq, scaled_inv_freq, factor):
    """implied_ramp's arguments: two frequency tensors of one shape and a factor s != 1."""
    factor = require_positive_float("factor", factor)
    if factor == 1.0:
        raise ValueError(
            _(
                "factor must differ from 1 (with s = 1 every method keeps every "
                "frequency), got 1.0"
            )
        )
    inv_freq = check_frequencies("inv_freq", inv_freq)
    scaled_inv_freq = check_frequencies("scaled_inv_freq", scaled_inv_freq)
    if inv_freq.shape != scaled_inv_freq.shape:
        raise ValueError(
            _(
                "scaled_inv_freq must have the shape of inv_freq {inv_freq_shape}, "
                "got {scaled_inv_freq_shape}"
            ).format(
                inv_freq_shape=tuple(inv_freq.shape),
                scaled_inv_freq_shape=tuple(scaled_inv_freq.shape),
            )
        )
    return inv_freq, scaled_inv_freq, factor


def implied_ramp(
    inv_freq: torch.Tensor, scaled_inv_freq: torch.Tensor, factor: float
) -> torch.Tensor:
    """The ramp gamma_i that a set of scaled frequencies implies, read back from them:
    scaled_i = (1 - gamma_i) * theta_i / s + gamma_i * theta_i, so

        gamma_i = (scaled_i / theta_i - 1/s) / (1 - 1/s)

    1: the pair keeps its frequency (kept), 0: its frequency is divided by s
    (interpolated, as Position Interpolation does for all pairs), between: blended. For YaRN
    this is ramp_by_pair (Peng et al. 2023, "NTK-by-parts": h(theta) = (1-gamma) theta/s + gamma theta);
    for Llama 3 it is its `smooth` factor; for NTK-aware scaling it falls from 1 (pair 0) to 0
    (the last pair) (float64 [head_dim/2])."""
    inv_freq, scaled_inv_freq, factor = _check_scaled(inv_freq, scaled_inv_freq, factor)
    ratio = scaled_inv_freq.to(torch.float64) / inv_freq.to(torch.float64)
    return (ratio - 1 / factor) / (1 - 1 / factor)


def pair_regimes(
    inv_freq: torch.Tensor,
    scaled_inv_freq: torch.Tensor,
    factor: float,
    tol: float = 1e-4,
) -> torch.Tensor:
    """Per pair, an index into REGIMES: 0 "kept" (frequency kept, implied_ramp >= 1-tol),
    2 "interpolated" (frequency divided by s, implied_ramp <= tol), 1 "blended" (in between).
    int64 [head_dim/2]. (Peng et al. 2023, arXiv:2309.00071, "NTK-by-parts": gamma = 1 keeps
    theta_i, gamma = 0 gives theta_i / s.)"""
    tol = require_number("tol", tol)
    if not 0 <= tol < 0.5:
        raise ValueError(_("tol must be in [0, 0.5), got {tol}").format(tol=tol))
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
    inv_freq = check_frequencies("inv_freq", inv_freq)
    original_length = require_positive_float("original_length", original_length)
    alpha, beta = require_number("alpha", alpha), require_number("beta", beta)
    if not beta > alpha:
        raise ValueError(
            _("beta must be > alpha, got alpha={alpha}, beta={beta}").format(
                alpha=alpha, beta=beta
            )
        )
    ratio = original_length / wavelengths(inv_freq.to(torch.float64))
    return torch.clamp((ratio - alpha) / (beta - alpha), 0.0, 1.0)


def _check_score_inputs(h, distances, inv_freq):
    """h (None: not given), distances and inv_freq of the score functions, checked."""
    if h is not None:
        require_tensor("h", h)
    require_tensor("distances", distances)
    inv_freq = check_frequencies("inv_freq", inv_freq)
    if inv_freq.dim() != 1:
        raise ValueError(
            _("inv_freq must be 1-D [head_dim/2], got shape {inv_freq_shape}").format(
                inv_freq_shape=tuple(inv_freq.shape)
            )
        )
    if h is not None and tuple(h.shape) != tuple(inv_freq.shape):
        raise ValueError(
            _(
                "h must have the shape of inv_freq {inv_freq_shape}, got {h_shape}"
            ).format(inv_freq_shape=tuple(inv_freq.shape), h_shape=tuple(h.shape))
        )
    if distances.is_complex() or distances.dtype == torch.bool:
        raise TypeError(
            _("distances must hold real numbers, got dtype {distances_dtype}").format(
                distances_dtype=distances.dtype
            )
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
            _(
                "targets must have the shape of distances {distances_shape}, got "
                "{targets_shape}"
            ).format(
                distances_shape=tuple(distances.shape),
                targets_shape=tuple(targets.shape),
            )
        )
    ridge = require_number("ridge", ridge)
    if ridge < 0:
        raise ValueError(_("ridge must be >= 0, got {ridge}").format(ridge=ridge))
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


def discrimination_sum(
    offsets, head_dim: int = 128, base: float = 10000.0
) -> torch.Tensor:
    """Men et al.'s token-discrimination sum at each offset m (float64, offsets' shape):

        B(m) = sum_{i=0}^{d/2-1} cos(m theta_i),   theta_i = base^(-2i/d)

    For a query q and a key k = q + noise, against a random key, RoPE gives the similar key
    an expected score larger by 2 sigma^2 B(m) at offset m (Men et al. 2024, "Base of RoPE
    Bounds Context Length", arXiv:2405.14591, Theorem 1): while B(m) > 0 a similar token
    still gets more attention than a random one; B decays, oscillating, as m grows."""
    head_dim = require_even("head_dim", require_positive_int("head_dim", head_dim, 2))
    base = require_positive_float("base", base)
    m = torch.as_tensor(offsets, dtype=torch.float64)
    require_finite("offsets", m)
    theta = pair_frequencies(head_dim, base, dtype=torch.float64)
    return torch.cos(m.unsqueeze(-1) * theta).sum(-1)


_BLOCK = 256  # offsets per block of first_negative_offset


def first_negative_offset(length: int, head_dim: int = 128, base: float = 10000.0):
    """The smallest integer offset m in [0, length] with B(m) < 0 (discrimination_sum), or
    None when B(m) >= 0 on the whole range.

    B is summed by blocks of offsets m = a + j, 0 <= j < 256, with the angle-addition
    formula cos((a + j) theta_i) = cos(a theta_i) cos(j theta_i) - sin(a theta_i) sin(j
    theta_i): a block's sums over i are then one matrix product instead of 256 d/2 cosines
    (the same B to about 1e-12; the brute force of tests/lessons/test_09 agrees)."""
    length = require_positive_int("length", length)
    head_dim = require_even("head_dim", require_positive_int("head_dim", head_dim, 2))
    base = require_positive_float("base", base)
    theta = pair_frequencies(head_dim, base, dtype=torch.float64)
    j = torch.arange(_BLOCK, dtype=torch.float64).unsqueeze(-1) * theta
    within = torch.cat([torch.cos(j), torch.sin(j)], dim=-1).T  # (d, block)
    start, blocks = 0, 1
    while start <= length:
        a = start + _BLOCK * torch.arange(blocks, dtype=torch.float64)
        a = a.unsqueeze(-1) * theta
        sums = (torch.cat([torch.cos(a), -torch.sin(a)], dim=-1) @ within).reshape(-1)
        below = (sums[: length + 1 - start] < 0).nonzero()
        if below.numel():
            return start + int(below[0])
        start, blocks = start + _BLOCK * blocks, 2 * blocks  # most bases fail early
    return None


def base_lower_bound(
    context_length: int, head_dim: int = 128, *, points_per_decade: int = 100
) -> float:
    """Men et al. (2024)'s lower bound on RoPE's base for a context length L: the smallest
    base b with

        B(m) = sum_{i=0}^{d/2-1} cos(m b^(-2i/d)) >= 0   for every integer 0 <= m <= L,

    so that a similar token gets more attention than a random one at every offset of the
    context (discrimination_sum; Men et al. 2024, "Base of RoPE Bounds Context Length",
    arXiv:2405.14591, section 4 and Table 1). B is not monotone in b (a base above the bound
    can fail again), so the bases are tried in order on the grid
    b = 10^(k / points_per_decade), k = 0, 1, ...: every grid base below the result has an
    offset m <= L with B(m) < 0. The result therefore depends on the grid in its second
    digit; read it to one or two significant digits."""
    context_length = require_positive_int("context_length", context_length)
    points = require_positive_int("points_per_decade", points_per_decade)
    k = 0
    while (
        first_negative_offset(context_length, head_dim, 10.0 ** (k / points))
        is not None
    ):
        k += 1
    return 10.0 ** (k / points)


def base_pass_scan(
    context_length: int,
    head_dim: int = 128,
    *,
    points_per_decade: int = 100,
    decades: float = 1.0,
) -> dict:
    """Which bases pass Men et al.'s criterion (B(m) >= 0 for every integer 0 <= m <= L,
    discrimination_sum) on the grid b = 10^(k / points_per_decade), from base_lower_bound
    (the first grid base that passes) up to `decades` decades above it:

        {"bound": the first passing grid base (base_lower_bound),
         "bases": the grid bases tried (float64 tensor), "passes": bool tensor beside it,
         "share": the fraction of those bases that pass,
         "all_pass_from": the smallest grid base from which every base of the scan passes}

    The passing bases are not a half-line: just above the bound they come in narrow
    windows, with failing bases between them, and only some way higher (about 3x the
    bound for d = 128 at 4k-128k tokens) does every base pass. So the bound is a scale,
    not a threshold above which any base satisfies the criterion."""
    context_length = require_positive_int("context_length", context_length)
    points = require_positive_int("points_per_decade", points_per_decade)
    decades = require_positive_float("decades", decades)
    bound = base_lower_bound(context_length, head_dim, points_per_decade=points)
    first = round(math.log10(bound) * points)
    steps = torch.arange(
        first, first + round(decades * points) + 1, dtype=torch.float64
    )
    bases = 10.0 ** (steps / points)
    passes = torch.tensor(
        [
            first_negative_offset(context_length, head_dim, float(b)) is None
            for b in bases
        ]
    )
    failing = (~passes).nonzero()
    last_fail = int(failing[-1]) if failing.numel() else -1
    if last_fail == len(bases) - 1:
        all_pass_from = None
    else:
        all_pass_from = float(bases[last_fail + 1])
    return {
        "bound": bound,
        "bases": bases,
        "passes": passes,
        "share": float(passes.double().mean()),
        "all_pass_from": all_pass_from,
    }


def arc_reach(
    inv_freq: torch.Tensor,
    scaled_inv_freq: torch.Tensor,
    original_length: float,
    factor: float,
) -> torch.Tensor:
    """How far past its trained arc pair i turns at the new length s L, as a ratio:

        reach_i = min(s L theta'_i, 2 pi) / min(L theta_i, 2 pi)

    L theta_i is the largest angle pair i reached in training (capped at a full turn: a
    pair that went all the way round has seen every angle), s L theta'_i the largest it
    reaches over s L positions with the scaled frequencies. 1: nothing new; above 1: the
    pair meets angles it never saw. PI gives exactly 1 for every slow pair; NTK-aware
    scaling, theta'_i = theta_i s^(-2i/(d-2)), gives s^(1 - 2i/(d-2)) > 1 for every slow
    pair but the last (capped at the circle): YaRN's critique of it (Peng et al. 2023,
    arXiv:2309.00071, section 3.2). float64 [head_dim/2]."""
    inv_freq, scaled_inv_freq, factor = _check_scaled(inv_freq, scaled_inv_freq, factor)
    original_length = require_positive_float("original_length", original_length)
    turn = 2 * math.pi
    trained = torch.clamp(original_length * inv_freq.to(torch.float64), max=turn)
    new = torch.clamp(
        factor * original_length * scaled_inv_freq.to(torch.float64), max=turn
    )
    return new / trained


def extrapolation_sizes(
    inv_freq: torch.Tensor, length: int, seeds=(0, 1, 2), ridges=(1e-8, 1e-4, 1e-2)
) -> dict:
    """Chen et al.'s stand-in for training (2023, arXiv:2306.15595, Figure 2), seed by
    seed and ridge by ridge: fit_relative_score to random targets in [-1, 1] at the
    integer offsets 0..L, then the largest |a(Delta)| on [0, L] (steps of 0.5) and on
    [L, 2L] (extrapolation), and the fit's rms error on the training offsets.

    The fit leaves a(Delta) past L unconstrained: |a| <= sum_j |h_j| everywhere, and how
    large it gets depends on what limits |h| (the ridge), not on the data. Returns
    {"inside", "beyond", "train_rms": float64 [seed, ridge], "seeds", "ridges"}."""
    length = require_positive_int("length", length)
    train = torch.arange(0, length + 1, dtype=torch.float64)
    inside = torch.linspace(0, length, 2 * length + 1, dtype=torch.float64)
    beyond = torch.linspace(length, 2 * length, 2 * length + 1, dtype=torch.float64)
    out = {"inside": [], "beyond": [], "train_rms": []}
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        targets = torch.rand(length + 1, generator=gen, dtype=torch.float64) * 2 - 1
        rows = {key: [] for key in out}
        for ridge in ridges:
            h = fit_relative_score(train, targets, inv_freq, ridge=ridge)
            residual = relative_score(h, train, inv_freq) - targets
            rows["inside"].append(relative_score(h, inside, inv_freq).abs().max())
            rows["beyond"].append(relative_score(h, beyond, inv_freq).abs().max())
            rows["train_rms"].append(residual.pow(2).mean().sqrt())
        for key, row in rows.items():
            out[key].append(torch.stack(row))
    return {key: torch.stack(value) for key, value in out.items()} | {
        "seeds": list(seeds),
        "ridges": list(ridges),
    }
