"""Checkers for lesson 10 (YaRN, its temperature, and today's scalings). Each returns a
Feedback naming the likely slip.

    check_entropy_direction     which way multiplying the logits by 1/t > 1 moves H
    check_new_factor_multiplier the logit multiplier at s = 8: YaRN's rule, SmolLM2's fit
    check_rope_scaling_entry    what a rope_scaling entry says: L, and the divisor at 2L
    check_yarn_frequencies      YaRN's inv_freq built by hand
    check_logit_multiplier      what YaRN's attention factor does to the logits
    check_llama3_pair_counts    Llama 3.1's kept / blended / divided pairs
"""

from __future__ import annotations

import functools
import math

from ..attention_entropy import slope_multiplier, temperature_slope
from ..extension_analysis import pair_regimes, ramp_by_pair
from ..language import N_, _
from ..rotary import inv_frequencies
from ..scaling import rope_frequencies, yarn_correction_range, yarn_get_mscale
from . import Mistake, Word, close, compare_tensor, either, exercise
from .answers import as_choice, as_groups, as_number, as_numbers, as_tensor

# The settings each exercise uses (the notebook prints them).
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
#: exercise 2: a factor nobody swept; exercise 3: the rope_scaling entry
NEW_FACTOR = 8.0
ENTRY = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}


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
                "concentrate, and H falls (ln n - sigma^2/2 gets smaller). 'Up' is what "
                "DIVIDING the logits by 0.1 ln s + 1 would do: sqrt(1/t) = 0.1 ln s + 1 "
                "makes t < 1, not t = 0.1 ln s + 1"
            ),
        ),
        Mistake(
            "unchanged",
            N_(
                "the weights p_j = exp(x_j)/Z do not change when a constant is ADDED "
                "to every logit; multiplying them changes their spread, and the entropy "
                "with it (ln n - sigma^2/2)"
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


# ------------------------------------------------------- a rope_scaling entry

ENTRY_L = ENTRY["original_max_position_embeddings"]
ENTRY_S = ENTRY["factor"]


@exercise(
    read=lambda answer, name: as_numbers(answer, name, 2, what=N_("two numbers")),
    name=Word(N_("the answer")),
    expected=(float(ENTRY_L), ENTRY_S),
    same=lambda got, want: tuple(got) == tuple(want),
    placeholder=N_("replace `None` with two numbers: (L, the divisor at 2L)"),
    mistakes=[
        Mistake(
            lambda v: v[0] == ENTRY_S * ENTRY_L,
            N_(
                "{value[0]:.0f} = factor x original_max_position_embeddings is the "
                "length the entry stretches the model to; the length it was trained at "
                "is original_max_position_embeddings"
            ),
        ),
        Mistake(
            lambda v: v[0] == ENTRY_L and v[1] == 2,
            N_(
                "static YaRN divides the slow pairs by the configured factor at EVERY "
                "length, 2L included: 4, not the length ratio 2 (static YaRN never "
                "looks at the length)"
            ),
        ),
        Mistake(
            lambda v: v[0] == ENTRY_L and v[1] == 1,
            N_(
                "the entry does not switch on at L: its frequencies and its attention "
                "factor apply at every length, below and past L"
            ),
        ),
    ],
    otherwise=N_(
        "read the entry: L is original_max_position_embeddings, and static YaRN divides "
        "the slow pairs by factor at every length; got {value}"
    ),
    right=N_(
        "L = 8192. At 16,384 tokens the slow pairs are divided by 4 (the entry's factor, "
        "at every length): they sweep only half their trained arcs, and the logits are "
        "multiplied by 1.30 all the same"
    ),
)
def check_rope_scaling_entry(answer):
    """For rope_scaling {rope_type yarn, factor 4, original_max_position_embeddings
    8192}: (the trained length L, what the slow pairs' frequencies are divided by at 2L)."""


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
            yarn_by_hand(D3, B3, S3, 4096),
            N_(
                "those are the frequencies for L = 4096, the lesson's length; this "
                "exercise has L = 2048, which moves the correction range to 8..21"
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
    ]


@exercise(
    read=as_tensor,
    name="inv_freq",
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


_REGIMES = ("kept", "blended", "interpolated")


@functools.cache
def _llama3_regimes(base: float) -> tuple:
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
    return tuple(frozenset((r == k).nonzero().flatten().tolist()) for k in range(3))


def _span(indices) -> str:
    return f"{min(indices)}..{max(indices)}" if indices else _("none")


def _right_regimes(read, regimes) -> bool:
    counts, sets = read
    if sets is not None:
        return sets == regimes
    return counts == tuple(map(len, regimes))


def _llama3_right(fields) -> str:
    read = fields["value"]
    kept, blended, interpolated = _llama3_regimes(EX5["base"])
    p = EX5
    if read[1] is not None:
        return _(
            "kept pairs {kept} (wavelengths under {short:.0f}), blended {blended}, "
            "divided by 8: {interpolated}"
        ).format(
            kept=_span(kept),
            short=p["L"] / p["high_freq_factor"],
            blended=_span(blended),
            interpolated=_span(interpolated),
        )
    numbers = {
        "kept": len(kept),
        "short": p["L"] / p["high_freq_factor"],
        "interpolated": len(interpolated),
        "long": p["L"] / p["low_freq_factor"],
        "blended": len(blended),
    }
    if len(kept) != len(interpolated):
        return _(
            "{kept} pairs have wavelengths under L/high_freq_factor = {short:.0f} and "
            "are kept, {interpolated} have wavelengths over L/low_freq_factor = "
            "{long:.0f} and are divided by 8, {blended} blend"
        ).format(**numbers)
    # the counts cannot tell kept from interpolated: say which pairs are which
    return _(
        "{kept} pairs have wavelengths under L/high_freq_factor = {short:.0f} and are "
        "kept, {interpolated} have wavelengths over L/low_freq_factor = {long:.0f} and "
        "are divided by 8, {blended} blend. Kept and interpolated are both {kept} here, "
        "so the counts alone cannot show which is which: check that your kept pairs are "
        "the fast ones, i = {kept_pairs} (the interpolated are {interpolated_pairs}), or "
        "answer with the pair indices ({example}) to have them checked"
    ).format(
        **numbers,
        kept_pairs=_span(kept),
        interpolated_pairs=_span(interpolated),
        example="{'kept': ..., 'blended': ..., 'interpolated': ...}",
    )


def _swapped(read) -> bool:
    kept, _blended, interpolated = _llama3_regimes(EX5["base"])
    sets = read[1]
    return sets is not None and sets[0] == interpolated and sets[2] == kept


def _wrong_set(fields) -> str:
    read = fields["value"]
    for name, got, want in zip(_REGIMES, read[1], _llama3_regimes(EX5["base"])):
        if got != want:
            return _(
                "the {name} pairs should be {want} ({n_want} pairs), got {n_got} pairs "
                "({got})"
            ).format(
                name=name,
                want=_span(want),
                n_want=len(want),
                n_got=len(got),
                got=_span(got),
            )
    raise AssertionError("no wrong set")  # unreachable: the sets are not right


def _no_blend(read) -> bool:
    kept, blended, interpolated = map(len, _llama3_regimes(EX5["base"]))
    return read[0] in (
        (kept + blended, 0, interpolated),
        (kept, 0, blended + interpolated),
    )


@exercise(
    read=as_groups,
    name=Word(N_("counts")),
    options={
        "groups": _REGIMES,
        "size": EX5["head_dim"] // 2,
        "what": N_("(kept, blended, interpolated) counts"),
    },
    expected=lambda: _llama3_regimes(EX5["base"]),
    same=_right_regimes,
    mistakes=[
        Mistake(
            _swapped,
            lambda f: _(
                "kept and interpolated are swapped: the fast pairs (small i, short "
                "wavelengths, pairs {kept}) are kept, the slow ones ({interpolated}) are "
                "divided by s"
            ).format(
                kept=_span(_llama3_regimes(EX5["base"])[0]),
                interpolated=_span(_llama3_regimes(EX5["base"])[2]),
            ),
        ),
        Mistake(lambda read: read[1] is not None, _wrong_set),
        Mistake(
            lambda read: sum(read[0]) != EX5["head_dim"] // 2,
            lambda f: _(
                "the three counts should add up to head_dim/2 = {pairs} pairs, got {total}"
            ).format(pairs=EX5["head_dim"] // 2, total=sum(f["value"][0])),
        ),
        Mistake(
            lambda read: read[0] == tuple(map(len, _llama3_regimes(10000.0))),
            N_("that is for base 10,000; Llama 3 uses rope_theta = 500,000"),
        ),
        Mistake(
            _no_blend,
            N_(
                "some pairs between the two cutoffs blend (wavelengths between L/4 and L/1)"
            ),
        ),
    ],
    otherwise=lambda f: _(
        "count the pairs by wavelength against L/high_freq_factor and L/low_freq_factor; "
        "got {counts}"
    ).format(counts=f["value"][0]),
    right=_llama3_right,
)
def check_llama3_pair_counts(answer):
    """(kept, blended, interpolated) pair counts for Llama 3.1's scaling: three counts,
    or the three sets of pair indices (lists, ranges, masks), or a dict with the keys
    kept, blended, interpolated."""
