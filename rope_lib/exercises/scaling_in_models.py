"""Checkers for lesson 11 (long context in released models). Each returns a Feedback
naming the likely slip.

    check_rope_scaling_entry    what a rope_scaling entry says: L, and the divisor at 2L
    check_llama3_pair_counts    Llama 3.1's kept / blended / divided pairs
    check_llama3_short_prompt   what Llama 3.1's shipped entry does to a 1,000-token prompt
"""

from __future__ import annotations

import functools
import math

from ..extension_analysis import pair_regimes
from ..language import N_, _
from ..rotary import inv_frequencies
from ..scaling import rope_frequencies
from . import Mistake, Word, exercise
from .answers import as_groups, as_numbers

#: exercise 1: a rope_scaling entry one adds to a model
ENTRY = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
#: exercise 2: Llama 3.1's scaling, as the lesson states it
EX5 = {
    "head_dim": 128,
    "base": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "L": 8192,
}
#: exercise 3: Llama 3.1-8B's config.json as shipped (the rope entries, and the head)
LLAMA31 = {
    "rope_theta": 500000.0,
    "head_dim": 128,
    "max_position_embeddings": 131072,
    "rope_scaling": {
        "factor": 8.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}
PROMPT = 1000  # tokens: far below L


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
            lambda read: read[0] == (36, 10, 18),
            N_(
                "those are the counts at lesson 10's setting (base 10,000, L = 4096) with "
                "beta = 4; Llama 3.1 has base 500,000 and L = 8192"
            ),
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


# ------------------------------------- Llama 3.1's shipped entry on a short prompt


@functools.cache
def _short_prompt() -> tuple:
    """(pair 0's divisor, pair 63's divisor) under Llama 3.1's shipped entry, as
    transformers' llama3 rope type computes them (it never reads the prompt's length)."""
    scaling = {k: v for k, v in LLAMA31["rope_scaling"].items() if k != "rope_type"}
    old = inv_frequencies(LLAMA31["head_dim"], LLAMA31["rope_theta"])
    new, _factor = rope_frequencies(
        "llama3", LLAMA31["head_dim"], LLAMA31["rope_theta"], **scaling
    )
    divisor = (old / new).tolist()
    return round(divisor[0], 6), round(divisor[-1], 6)


def _pair_is(v, want) -> bool:
    return all(math.isclose(g, w, rel_tol=1e-3) for g, w in zip(v, want))


@exercise(
    read=lambda answer, name: as_numbers(answer, name, 2, what=N_("two numbers")),
    name=Word(N_("the divisors")),
    expected=lambda: _short_prompt(),
    same=_pair_is,
    placeholder=N_("replace `None` with two numbers: (pair 0's divisor, pair 63's)"),
    mistakes=[
        Mistake(
            lambda v: _pair_is(v, (1.0, 1.0)),
            N_(
                "the llama3 rope type never reads the prompt's length: the model "
                "divides its slow pairs by factor = 8 at 1,000 tokens too, and at every "
                "other length"
            ),
        ),
        Mistake(
            lambda v: _pair_is(v, (8.0, 8.0)),
            N_(
                "that is Position Interpolation: Llama 3 keeps pair 0, whose wavelength "
                "2 pi = 6.3 tokens is far under L/high_freq_factor = 2048"
            ),
        ),
        Mistake(
            lambda v: _pair_is(v, (8.0, 1.0)),
            N_(
                "swapped: pair 0 is the fastest pair (kept), pair 63 the slowest "
                "(divided by 8)"
            ),
        ),
        Mistake(
            lambda v: _pair_is(v, (1.0, 0.125)),
            N_(
                "0.125 is the ratio new/old; the question asks for the divisor old/new, "
                "8"
            ),
        ),
        Mistake(
            lambda v: _pair_is(v, (1.0, 4.0)),
            N_(
                "high_freq_factor = 4 only places a bound of the ramp (wavelength "
                "L/4); the slow pairs are divided by factor = 8"
            ),
        ),
    ],
    otherwise=N_(
        "compare each pair's wavelength with L/high_freq_factor = 2048 (kept below) and "
        "L/low_freq_factor = 8192 (divided by factor above); got {value}"
    ),
    right=N_(
        "(1, 8): pair 0 is kept, pair 63 is divided by 8, at 1,000 tokens as at 100,000. "
        "The model was trained with this entry, so that is the right thing to do"
    ),
)
def check_llama3_short_prompt(answer):
    """Llama 3.1-8B's shipped rope_scaling on a 1,000-token prompt: (what pair 0's
    frequency is divided by, what pair 63's is divided by)."""
