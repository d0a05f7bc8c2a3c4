"""Checkers for lesson 10 (YaRN and its temperature). Each returns a Feedback naming the
likely slip. (Lesson 11's, on released models' scalings, are in scaling_in_models.py.)

    check_entropy_direction     which way multiplying the logits by 1/t > 1 moves H
    check_new_factor_multiplier the logit multiplier at s = 8: YaRN's rule, SmolLM2's fit
    check_yarn_frequencies      YaRN's inv_freq built by hand
    check_logit_multiplier      what YaRN's attention factor does to the logits
"""

from __future__ import annotations

import functools
import math

import torch

from ..attention_entropy import slope_multiplier, temperature_slope
from ..extension_analysis import ramp_by_pair, ramp_by_turns
from ..language import N_, _
from ..rotary import inv_frequencies
from ..scaling import rope_frequencies, yarn_correction_range, yarn_get_mscale
from . import Mistake, Word, close, compare_tensor, either, exercise, near
from .answers import as_choice, as_number, as_numbers, as_tensor

# The settings each exercise uses (the notebook prints them).
EX3 = {"head_dim": 64, "base": 10000.0, "factor": 8.0, "L": 2048}
EX4 = {"factor": 16.0}
#: exercise 2: a factor nobody swept
NEW_FACTOR = 8.0


# ------------------------------------------------ the direction of the temperature

DIRECTIONS = ("down", "up", "unchanged")


def _read_direction(answer, name: str) -> str:
    """'down', 'up' or 'unchanged', from a word a learner may use for it."""
    words = {
        "down": ("down", "lower", "lowers", "decreases", "decrease", "falls", "smaller",
                 "sharper", "sharpens", "less", "-"),
        "up": ("up", "higher", "raises", "increases", "increase", "rises", "larger",
               "flatter", "flattens", "more", "+"),
        "unchanged": ("unchanged", "same", "none", "no change", "0", "stays"),
    }  # fmt: skip
    aliases = {w: key for key, ws in words.items() for w in (*ws, _(key))}
    unknown = N_("answer with one of {names} (a string), got {got}")
    return as_choice(answer, name, aliases, names=list(DIRECTIONS), unknown=unknown)


@exercise(
    read=_read_direction,
    name=Word(N_("the direction")),
    expected="down",
    placeholder=N_("replace `None` with 'down', 'up' or 'unchanged'"),
    mistakes=[
        Mistake(
            "up",
            N_(
                "multiplying the logits by 1/t > 1 widens their spread (sigma becomes "
                "sigma/t): the largest logits pull further ahead, the weights "
                "concentrate, and H falls, for 8 keys as for 1,024. 'Up' is what "
                "DIVIDING the logits by 0.1 ln s + 1 would do: sqrt(1/t) = 0.1 ln s + 1 "
                "makes t < 1, not t = 0.1 ln s + 1"
            ),
        ),
        Mistake(
            "unchanged",
            N_(
                "the weights p_j = exp(x_j)/Z do not change when a constant is ADDED "
                "to every logit; multiplying them changes their spread, and the entropy "
                "with it. Static YaRN multiplies them at every length, "
                "8 tokens included: it has no switch at L"
            ),
        ),
    ],
    right=N_(
        "down: 1/t > 1 stretches the logits, the largest keys take more of the weight, "
        "attention sharpens. YaRN uses it to undo the flattening interpolation causes"
    ),
)
def check_entropy_direction(answer):
    """Which way the attention entropy moves when the logits are multiplied by YaRN's
    1/t = (0.1 ln s + 1)^2 > 1: 'down', 'up' or 'unchanged'."""


# ------------------------------------------- the logit multiplier at a new factor


@functools.cache
def _new_factor() -> tuple:
    """(YaRN's 1/t at NEW_FACTOR, SmolLM2's fit's 1/t there, the fitted slope k)."""
    from ..attention_study import read

    sweeps = read("smollm2.temperature")
    factors = [float(name.lstrip("x")) for name in sweeps]
    best = [sweeps[name]["best_past_L"]["attention_factor"] for name in sweeps]
    k = temperature_slope(factors, best)
    return (
        slope_multiplier(0.1, NEW_FACTOR),
        slope_multiplier(k, NEW_FACTOR),
        k,
    )


def _close_pair(got, want, rtol: float = 0.01) -> bool:
    return all(math.isclose(g, w, rel_tol=rtol) for g, w in zip(got, want))


def _pair_mistakes() -> list:
    yarn, fit, k = _new_factor()
    return [
        Mistake(
            lambda v: _close_pair(v, (fit, yarn)),
            N_("the two are swapped: YaRN's rule first, then SmolLM2's fit"),
        ),
        Mistake(
            lambda v: _close_pair(v, (math.sqrt(yarn), math.sqrt(fit))),
            N_(
                "those are the attention factors sqrt(1/t) = k ln s + 1, which multiply "
                "cos and sin; the logits get their squares"
            ),
        ),
        Mistake(
            lambda v: (
                _close_pair(v, (1 / yarn, 1 / fit))
                or _close_pair(v, (1 / math.sqrt(yarn), 1 / math.sqrt(fit)))
            ),
            N_(
                "inverted: the temperature t is below 1, so the logits' multiplier 1/t "
                "is above 1"
            ),
        ),
        Mistake(
            lambda v: _close_pair(v, (yarn, yarn)),
            lambda f: _(
                "the second number is SmolLM2's own rule: sqrt(1/t) = k ln s + 1 with "
                "the slope k fitted to its sweep (about {k:.3f}), not YaRN's 0.1"
            ).format(k=k),
        ),
        Mistake(
            lambda v: math.isclose(
                v[0], (0.1 * math.log10(NEW_FACTOR) + 1) ** 2, rel_tol=0.01
            ),  # fmt: skip
            N_("use the natural logarithm ln s (math.log), not log10"),
        ),
    ]


@exercise(
    read=lambda answer, name: as_numbers(answer, name, 2, what=N_("two numbers")),
    name=Word(N_("the multipliers")),
    expected=lambda: _new_factor()[:2],
    same=_close_pair,
    placeholder=N_("replace `None` with two numbers: (YaRN's 1/t, SmolLM2's 1/t)"),
    mistakes=lambda: _pair_mistakes(),
    otherwise=lambda f: _(
        "at s = {s:g}: YaRN's rule gives (0.1 ln s + 1)^2, SmolLM2's fit (k ln s + 1)^2 "
        "with its slope k; got {value}"
    ).format(s=NEW_FACTOR, value=tuple(round(v, 4) for v in f["value"])),
    right=lambda f: _(
        "YaRN's rule says logits x {yarn:.3f} at s = {s:g}; SmolLM2's fit of the same "
        "form (k = {k:.3f}) says x {fit:.3f}, but that is an extrapolation of a weak "
        "fit: two factors, a flat-bottomed loss, and nobody swept s = {s:g}. Only a "
        "measurement at s = {s:g} could tell the two apart"
    ).format(
        yarn=_new_factor()[0], fit=_new_factor()[1], k=_new_factor()[2], s=NEW_FACTOR
    ),
)
def check_new_factor_multiplier(answer):
    """(YaRN's logit multiplier 1/t at s = 8, the one SmolLM2's fitted slope gives)."""


# ------------------------------------------------------------------ YaRN by hand


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
    """YaRN's frequencies from its pieces (used by check_yarn_frequencies to recognise
    typical slips)."""
    theta = inv_frequencies(head_dim, base)
    low, high = yarn_correction_range(
        head_dim, base, original_length, beta_fast, beta_slow, truncate
    )
    gamma = ramp_by_pair(low, high, head_dim // 2)  # 1: keep, 0: divide by s
    if invert:
        gamma = 1 - gamma
    return theta / factor * (1 - gamma) + theta * gamma


D3, B3, S3, L3 = EX3["head_dim"], EX3["base"], EX3["factor"], EX3["L"]


def _paper_ramp(theta):
    """YaRN with the paper's ramp, linear in the turns (the slip of check_yarn_frequencies)."""
    gamma = ramp_by_turns(theta, L3, alpha=1.0, beta=32.0)
    return ((1 - gamma) * theta / S3 + gamma * theta).to(theta.dtype)


@functools.cache
def _yarn():
    """The expected frequencies and the known mistakes of check_yarn_frequencies."""
    theta = inv_frequencies(D3, B3)
    expected = rope_frequencies(
        "yarn", D3, B3, factor=S3, original_max_position_embeddings=L3
    )
    return expected[0], [
        Mistake(
            yarn_by_hand(D3, B3, S3, L3, invert=True),
            N_(
                "the ramp is the wrong way round: high-frequency pairs (small i, short "
                "wavelengths) must KEEP theta_i and low-frequency pairs (large i) get "
                "theta_i / s"
            ),
        ),
        Mistake(
            yarn_by_hand(D3, B3, 1 / S3, L3),
            N_(
                "the interpolated pairs were multiplied by s; interpolation divides the "
                "frequency by s"
            ),
        ),
        Mistake(
            yarn_by_hand(D3, B3, S3, L3, truncate=False),
            N_(
                "almost: yarn_correction_range rounds the bounds outward to whole pairs "
                "by default (truncate=True); you used the unrounded bounds"
            ),
        ),
        Mistake(
            yarn_by_hand(D3, B3, 4.0, L3),
            N_(
                "the slow pairs are divided by 4, the lesson's s; this exercise has "
                "s = 8 (the correction range 8..21 is right)"
            ),
        ),
        Mistake(
            yarn_by_hand(D3, B3, S3, 4096),
            N_(
                "those are the frequencies for L = 4096, the lesson's length; this "
                "exercise has L = 2048, which moves the correction range to 8..21"
            ),
        ),
        Mistake(
            _paper_ramp(theta),
            N_(
                "that is the paper's ramp, linear in the turns r_i; the code (and this "
                "exercise) ramps linearly in the pair index between yarn_correction_range's "
                "bounds: use ramp_by_pair"
            ),
        ),
        Mistake(
            theta / S3,
            N_(
                "that is Position Interpolation (every pair divided by s); YaRN keeps "
                "the fast pairs"
            ),
        ),
        Mistake(
            theta,
            N_(
                "those are the original frequencies; the slow pairs still need dividing "
                "by s"
            ),
        ),
        Mistake(
            lambda v: (
                v.shape == theta.shape
                and torch.allclose(v[:8], theta[:8].to(v.dtype))
                and not math.isclose(theta[-1] / v[-1], S3, rel_tol=1e-3)
            ),
            lambda f: _(
                "the fast pairs are right, but the slowest pair is divided by {got:.4g}; "
                "this exercise's s is 8"
            ).format(got=float(theta[-1] / f["value"][-1])),
        ),
    ]


@exercise(
    read=as_tensor,
    name="answer",
    expected=lambda: _yarn()[0],
    same=close(rtol=1e-5, atol=1e-9),
    compare=functools.partial(compare_tensor, atol=1e-9, rtol=1e-5),
    mistakes=lambda: _yarn()[1],
    right=N_(
        "pairs 0..8 keep theta_i, pairs 21..31 get theta_i / 8, and 9..20 blend linearly "
        "in between"
    ),
)
def check_yarn_frequencies(answer):
    """YaRN's inv_freq for d = 64, b = 10000, s = 8, L = 2048, built from its pieces."""


MSCALE = yarn_get_mscale(EX4["factor"])
LOG10_MSCALE = 0.1 * math.log10(EX4["factor"]) + 1


@exercise(
    read=as_number,
    name=Word(N_("the logit multiplier")),
    expected=MSCALE**2,
    same=near(rtol=2e-3),  # 1.63 (two decimals) is right
    mistakes=[
        Mistake(
            MSCALE,
            N_(
                "{factor:.4f} multiplies cos and sin, i.e. each of q' and k'; the dot "
                "product q'.k' carries it twice"
            ),
        ),
        Mistake(
            either(1 / MSCALE**2, 1 / MSCALE),
            N_(
                "inverted: YaRN sharpens attention (logits grow), sqrt(1/t) = 0.1 ln s + "
                "1 > 1"
            ),
        ),
        Mistake(
            either(yarn_get_mscale(4.0) ** 2, yarn_get_mscale(4.0)),
            N_(
                "{value:.4f} is YaRN's number at s = 4, the lesson's example; this "
                "exercise has s = 16: put ln 16 in the rule"
            ),
        ),
        Mistake(
            either(LOG10_MSCALE**2, LOG10_MSCALE),
            N_("use the natural logarithm ln s (math.log), not log10"),
        ),
    ],
    facts={"factor": MSCALE},
    otherwise=N_(
        "sqrt(1/t) = 0.1 ln s + 1 multiplies cos and sin; what does q'.k' get? got "
        "{value:.4g}"
    ),
    right=N_(
        "(0.1 ln 16 + 1)^2 = {expected:.4f}: cos and sin are scaled by {factor:.4f}, and "
        "q' and k' each carry it"
    ),
)
def check_logit_multiplier(answer):
    """What multiplies the attention logits q'.k' under YaRN with s = 16 (no
    mscale_all_dim)."""
