"""Checkers for lesson 7 (context extension). Each returns a Feedback naming the likely slip."""

from __future__ import annotations

import math

import numpy as np
import torch

from ..language import _
from ..rotary import inv_frequencies
from ..scaling import (
    first_pair_longer_than,
    pair_regimes,
    ramp_by_pair,
    rope_frequencies,
    yarn_correction_range,
    yarn_get_mscale,
)
from . import Feedback, compare_tensor, correct, not_yet
from .answers import (
    describe,
    guarded,
    read_count,
    read_indices,
    read_number,
    read_numbers,
    read_tensor,
)

# The settings each exercise uses (the notebook prints them).
EX1 = {"head_dim": 128, "base": 10000.0, "L": 4096}
EX2 = {"head_dim": 128, "base": 10000.0, "factor": 8.0}
EX3 = {"head_dim": 64, "base": 10000.0, "factor": 8.0, "L": 2048}
EX4 = {"factor": 16.0}
EX5 = {
    "head_dim": 128,
    "base": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "L": 8192,
}


def _close(a, b, rtol=1e-4):
    return abs(a - b) <= rtol * abs(b)


@guarded
def check_first_long_pair(answer) -> object:
    """The first pair whose wavelength exceeds the training length (a common recipe's
    step 1):
    corr_dim = min{i : 2 pi / theta_i > L} for d = 128, b = 10000, L = 4096."""
    value = read_count(answer, "corr_dim", what=_("a pair index"))
    if isinstance(value, Feedback):
        return value
    d, b, L = EX1["head_dim"], EX1["base"], EX1["L"]
    expected = first_pair_longer_than(inv_frequencies(d, b), L)
    if value == expected:
        return correct(
            _(
                "corr_dim = {expected}: pairs {expected}..{last} never complete a turn "
                "within L = {L} tokens. It is also the upper end of YaRN's correction "
                "range (beta_slow = 1)."
            ).format(expected=expected, last=d // 2 - 1, L=L)
        )
    if value == expected - 1:
        return not_yet(
            _(
                "{value} is the last pair whose wavelength still fits into L; corr_dim "
                "is the first one that exceeds it"
            ).format(value=value)
        )
    if value == 2 * expected:
        return not_yet(
            _(
                "{value} is a dimension index (2i); the question asks for the pair "
                "index i"
            ).format(value=value)
        )
    no_two_pi = first_pair_longer_than(
        2 * math.pi * inv_frequencies(d, b), L
    )  # wavelength taken as 1/theta
    if value == no_two_pi:
        return not_yet(
            _(
                "you took the wavelength as 1/theta_i; one full turn is 2 pi radians, "
                "so lambda_i = 2 pi / theta_i"
            )
        )
    if value == d // 2:
        return not_yet(
            _(
                "{value} would mean no pair has a wavelength beyond L; check that you "
                "compare wavelengths 2 pi / theta_i (not frequencies) and theta_i = "
                "b^(-2i/d)"
            ).format(value=value)
        )
    if value == 0:
        return not_yet(
            _(
                "{value} would mean every pair has a wavelength beyond L; check that "
                "you compare wavelengths 2 pi / theta_i (not frequencies) and theta_i "
                "= b^(-2i/d)"
            ).format(value=value)
        )
    return not_yet(
        _(
            "corr_dim should be the first i with 2 pi b^(2i/d) > L; got {value}, which "
            "is not it"
        ).format(value=value)
    )


@guarded
def check_ntk_base(answer) -> object:
    """NTK-aware base for s = 8, d = 128, b = 10000."""
    value = read_number(answer, _("the new base"))
    if isinstance(value, Feedback):
        return value
    d, b, s = EX2["head_dim"], EX2["base"], EX2["factor"]
    expected = b * s ** (d / (d - 2))
    if _close(value, expected):
        return correct(
            _(
                "base' = {expected:.2f}. The last pair's frequency is now exactly "
                "theta/s, pair 0's is unchanged."
            ).format(expected=expected)
        )
    if _close(value, b * s):
        return not_yet(
            _(
                "you multiplied the base by s; NTK-aware scaling multiplies it by "
                "s^(d/(d-2)), so that the LAST pair (exponent (d-2)/d) is divided by "
                "exactly s"
            )
        )
    if _close(value, b * s ** ((d - 2) / d)):
        return not_yet(_("the exponent is upside down: s^(d/(d-2)), not s^((d-2)/d)"))
    if _close(value, expected / b) or _close(value, s ** (d / (d - 2))):
        return not_yet(
            _("that is the multiplier s^(d/(d-2)); multiply the original base by it")
        )
    return not_yet(
        _("the new base should be b * s^(d/(d-2)); got {value:.4g}").format(value=value)
    )


def yarn_by_hand(
    head_dim,
    base,
    factor,
    original_length,
    beta_fast=32,
    beta_slow=1,
    truncate=True,
    invert=False,
):
    """YaRN's frequencies from its pieces (used by check_yarn_frequencies to recognise typical slips)."""
    theta = inv_frequencies(head_dim, base)
    low, high = yarn_correction_range(
        head_dim, base, original_length, beta_fast, beta_slow, truncate
    )
    gamma = ramp_by_pair(low, high, head_dim // 2)  # 1: keep, 0: divide by s
    if invert:
        gamma = 1 - gamma
    return theta / factor * (1 - gamma) + theta * gamma


@guarded
def check_yarn_frequencies(answer) -> object:
    """YaRN's inv_freq for d = 64, b = 10000, s = 8, L = 2048, built from its pieces."""
    d, b, s, L = EX3["head_dim"], EX3["base"], EX3["factor"], EX3["L"]
    expected = rope_frequencies(
        "yarn", d, b, factor=s, original_max_position_embeddings=L
    )[0]
    answer = read_tensor(answer, "inv_freq")
    if isinstance(answer, Feedback):
        return answer
    problem = compare_tensor(answer, expected, "inv_freq", atol=1e-9, rtol=1e-5)
    if problem is None:
        return correct(
            _(
                "pairs 0..8 keep theta_i, pairs 21..31 get theta_i / 8, and 9..20 "
                "blend linearly in between"
            )
        )
    if tuple(answer.shape) != tuple(expected.shape):
        return problem
    theta = inv_frequencies(d, b)
    candidates = [
        (
            yarn_by_hand(d, b, s, L, invert=True),
            _(
                "the ramp is the wrong way round: high-frequency pairs (small i, short "
                "wavelengths) must KEEP theta_i and low-frequency pairs (large i) get "
                "theta_i / s"
            ),
        ),
        (
            yarn_by_hand(d, b, 1 / s, L),
            _(
                "the interpolated pairs were multiplied by s; interpolation divides "
                "the frequency by s"
            ),
        ),
        (
            yarn_by_hand(d, b, s, L, truncate=False),
            _(
                "almost: yarn_correction_range rounds the bounds outward to whole "
                "pairs by default (truncate=True); you used the unrounded bounds"
            ),
        ),
        (
            theta / s,
            _(
                "that is Position Interpolation (every pair divided by s); YaRN keeps "
                "the fast pairs"
            ),
        ),
        (
            theta,
            _(
                "those are the original frequencies; the slow pairs still need "
                "dividing by s"
            ),
        ),
    ]
    for candidate, message in candidates:
        if torch.allclose(answer, candidate.to(torch.float64), rtol=1e-5, atol=1e-9):
            return not_yet(message)
    return problem


@guarded
def check_logit_multiplier(answer) -> object:
    """What multiplies the attention logits q'.k' under YaRN with s = 16 (no mscale_all_dim)."""
    value = read_number(answer, _("the logit multiplier"))
    if isinstance(value, Feedback):
        return value
    s = EX4["factor"]
    factor = yarn_get_mscale(s)
    expected = factor**2
    if _close(value, expected):
        return correct(
            _(
                "(0.1 ln 16 + 1)^2 = {expected:.4f}: cos and sin are scaled by "
                "{factor:.4f}, and q' and k' each carry it"
            ).format(expected=expected, factor=factor)
        )
    if _close(value, factor):
        return not_yet(
            _(
                "{factor:.4f} multiplies cos and sin, i.e. each of q' and k'; the dot "
                "product q'.k' carries it twice"
            ).format(factor=factor)
        )
    if _close(value, 1 / expected) or _close(value, 1 / factor):
        return not_yet(
            _(
                "inverted: YaRN sharpens attention (logits grow), sqrt(1/t) = 0.1 ln s "
                "+ 1 > 1"
            )
        )
    log10_factor = 0.1 * math.log10(s) + 1
    if _close(value, log10_factor**2) or _close(value, log10_factor):
        return not_yet(_("use the natural logarithm ln s (math.log), not log10"))
    return not_yet(
        _(
            "sqrt(1/t) = 0.1 ln s + 1 multiplies cos and sin; what does q'.k' get? got "
            "{value:.4g}"
        ).format(value=value)
    )


_REGIMES = ("kept", "blended", "interpolated")


def _llama3_regimes(base: float) -> list:
    """The pair indices (kept, blended, interpolated) of Llama 3.1's scaling."""
    p = EX5
    old = inv_frequencies(p["head_dim"], base)
    new = rope_frequencies(
        "llama3",
        p["head_dim"],
        base,
        factor=p["factor"],
        low_freq_factor=p["low_freq_factor"],
        high_freq_factor=p["high_freq_factor"],
        original_max_position_embeddings=p["L"],
    )[0]
    r = pair_regimes(old, new, p["factor"])
    return [frozenset((r == k).nonzero().flatten().tolist()) for k in range(3)]


def _span(indices) -> str:
    return f"{min(indices)}..{max(indices)}" if indices else _("none")


def _is_collection(part) -> bool:
    if isinstance(part, (torch.Tensor, np.ndarray)):
        return part.ndim > 0
    return isinstance(part, (list, tuple, range, set, frozenset))


def _read_llama3_answer(answer):
    """(counts, index sets or None) from (kept, blended, interpolated) given as three
    counts, three collections of pair indices, or a dict with those keys; or a
    Feedback."""
    what = _("(kept, blended, interpolated) counts")
    n_pairs = EX5["head_dim"] // 2
    if isinstance(answer, dict):
        keys = {k.strip().lower(): v for k, v in answer.items() if isinstance(k, str)}
        missing = [k for k in _REGIMES if k not in keys]
        if missing:
            return not_yet(
                _("the dict needs the keys {keys}; no {missing}").format(
                    keys=list(_REGIMES), missing=missing
                )
            )
        parts = [keys[k] for k in _REGIMES]
    else:
        counts = read_numbers(answer, _("counts"), 3, whole=True, what=what)
        if not isinstance(counts, Feedback):
            return counts, None
        three = isinstance(answer, (list, tuple)) and len(answer) == 3
        if not three or not any(map(_is_collection, answer)):
            return counts
        parts = list(answer)
    counts, sets = [], []
    for name, part in zip(_REGIMES, parts):
        count = read_count(
            part, name, what=_("the number of {name} pairs").format(name=name)
        )
        if not isinstance(count, Feedback):
            counts.append(count)
            sets.append(None)
            continue
        indices = read_indices(part, name, n_pairs)
        if isinstance(indices, Feedback):
            got = describe(part)
            return not_yet(
                _("{name}: give a count or the pair indices; got {got}").format(
                    name=name, got=got
                )
            )
        counts.append(len(indices))
        sets.append(indices)
    return tuple(counts), (sets if all(x is not None for x in sets) else None)


@guarded
def check_llama3_pair_counts(answer) -> object:
    """(kept, blended, interpolated) pair counts for Llama 3.1's scaling: three counts,
    or the three sets of pair indices (lists, ranges, masks), or a dict with the keys
    kept, blended, interpolated."""
    p = EX5
    read = _read_llama3_answer(answer)
    if isinstance(read, Feedback):
        return read
    counts, sets = read
    expected_sets = _llama3_regimes(p["base"])
    expected = tuple(len(x) for x in expected_sets)
    kept, blended, interpolated = expected_sets
    if sets is not None:
        if sets == expected_sets:
            return correct(
                _(
                    "kept pairs {kept} (wavelengths under {short:.0f}), blended "
                    "{blended}, divided by 8: {interpolated}"
                ).format(
                    kept=_span(kept),
                    short=p["L"] / p["high_freq_factor"],
                    blended=_span(blended),
                    interpolated=_span(interpolated),
                )
            )
        if sets[0] == interpolated and sets[2] == kept:
            return not_yet(
                _(
                    "kept and interpolated are swapped: the fast pairs (small i, short "
                    "wavelengths, pairs {kept}) are kept, the slow ones "
                    "({interpolated}) are divided by s"
                ).format(kept=_span(kept), interpolated=_span(interpolated))
            )
        for name, got, want in zip(_REGIMES, sets, expected_sets):
            if got != want:
                return not_yet(
                    _(
                        "the {name} pairs should be {want} ({n_want} pairs), got "
                        "{n_got} pairs ({got})"
                    ).format(
                        name=name,
                        want=_span(want),
                        n_want=len(want),
                        n_got=len(got),
                        got=_span(got),
                    )
                )
    if counts == expected:
        numbers = {
            "kept": expected[0],
            "short": p["L"] / p["high_freq_factor"],
            "interpolated": expected[2],
            "long": p["L"] / p["low_freq_factor"],
            "blended": expected[1],
        }
        if expected[0] != expected[2]:
            return correct(
                _(
                    "{kept} pairs have wavelengths under L/high_freq_factor = "
                    "{short:.0f} and are kept, {interpolated} have wavelengths over "
                    "L/low_freq_factor = {long:.0f} and are divided by 8, {blended} "
                    "blend"
                ).format(**numbers)
            )
        # the counts cannot tell kept from interpolated: say which pairs are which
        return correct(
            _(
                "{kept} pairs have wavelengths under L/high_freq_factor = {short:.0f} "
                "and are kept, {interpolated} have wavelengths over L/low_freq_factor "
                "= {long:.0f} and are divided by 8, {blended} blend. Kept and "
                "interpolated are both {kept} here, so the counts alone cannot show "
                "which is which: check that your kept pairs are the fast ones, i = "
                "{kept_pairs} (the interpolated are {interpolated_pairs}), or answer "
                "with the pair indices ({example}) to have them checked"
            ).format(
                **numbers,
                kept_pairs=_span(kept),
                interpolated_pairs=_span(interpolated),
                example="{'kept': ..., 'blended': ..., 'interpolated': ...}",
            )
        )
    if sum(counts) != p["head_dim"] // 2:
        return not_yet(
            _(
                "the three counts should add up to head_dim/2 = {pairs} pairs, got "
                "{total}"
            ).format(pairs=p["head_dim"] // 2, total=sum(counts))
        )
    if counts == tuple(len(x) for x in _llama3_regimes(10000.0)):
        return not_yet(_("that is for base 10,000; Llama 3 uses rope_theta = 500,000"))
    if counts == (expected[0] + expected[1], 0, expected[2]) or counts == (
        expected[0],
        0,
        expected[1] + expected[2],
    ):
        return not_yet(
            _(
                "some pairs between the two cutoffs blend (wavelengths between L/4 and "
                "L/1)"
            )
        )
    return not_yet(
        _(
            "count the pairs by wavelength against L/high_freq_factor and "
            "L/low_freq_factor; got {counts}"
        ).format(counts=counts)
    )
