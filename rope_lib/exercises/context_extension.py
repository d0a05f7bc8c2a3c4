"""Checkers for lesson 9 (the wall and interpolation). Each returns a Feedback naming the
likely slip. Lesson 10's (YaRN, its temperature, Llama 3) are in rope_lib.exercises.yarn."""

from __future__ import annotations

import functools
import math

from ..extension_analysis import arc_reach, first_pair_longer_than
from ..language import N_
from ..rotary import inv_frequencies
from ..scaling import rope_frequencies
from . import Mistake, Word, either, exercise
from .answers import as_count, as_indices, as_number, as_pair

# The settings each exercise uses (the notebook prints them).
EX1 = {"head_dim": 128, "base": 10000.0, "L": 4096}
EX2 = {"head_dim": 128, "base": 10000.0, "factor": 8.0}


@functools.cache
def _corr_dim(two_pi: bool = True) -> int:
    theta = inv_frequencies(EX1["head_dim"], EX1["base"])
    return first_pair_longer_than(theta if two_pi else 2 * math.pi * theta, EX1["L"])


@exercise(
    read=as_count,
    name="corr_dim",
    options={"what": N_("a pair index")},
    expected=_corr_dim,
    mistakes=[
        Mistake(
            lambda i: i == _corr_dim() - 1,
            N_(
                "{value} is the last pair whose wavelength still fits into L; the "
                "question asks for the first one that exceeds it"
            ),
        ),
        Mistake(
            lambda i: i == 2 * _corr_dim(),
            N_(
                "{value} is a dimension index (2i); the question asks for the pair index i"
            ),
        ),
        Mistake(
            lambda i: i == _corr_dim(two_pi=False),
            N_(
                "you took the wavelength as 1/theta_i; one full turn is 2 pi radians, so "
                "lambda_i = 2 pi / theta_i"
            ),
        ),
        Mistake(
            EX1["head_dim"] // 2,
            N_(
                "{value} would mean no pair has a wavelength beyond L; check that you "
                "compare wavelengths 2 pi / theta_i (not frequencies) and theta_i = "
                "b^(-2i/d)"
            ),
        ),
        Mistake(
            0,
            N_(
                "{value} would mean every pair has a wavelength beyond L; check that you "
                "compare wavelengths 2 pi / theta_i (not frequencies) and theta_i = "
                "b^(-2i/d)"
            ),
        ),
    ],
    facts={"last": EX1["head_dim"] // 2 - 1, "L": EX1["L"]},
    otherwise=N_(
        "the first slow pair is the first i with 2 pi b^(2i/d) > L; got {value}, "
        "which is not it"
    ),
    right=N_(
        "pair {expected}: pairs {expected}..{last} never complete a turn within L = "
        "{L} tokens. Lesson 10 meets this index again as the upper end of YaRN's "
        "correction range."
    ),
)
def check_first_long_pair(answer):
    """The first pair whose wavelength exceeds the training length (a common recipe's
    step 1): corr_dim = min{i : 2 pi / theta_i > L} for d = 128, b = 10000, L = 4096."""


D2, B2, S2 = EX2["head_dim"], EX2["base"], EX2["factor"]
NTK_BASE = B2 * S2 ** (D2 / (D2 - 2))


@exercise(
    read=as_number,
    name=Word(N_("the new base")),
    expected=NTK_BASE,
    mistakes=[
        Mistake(
            B2 * S2,
            N_(
                "you multiplied the base by s; NTK-aware scaling multiplies it by "
                "s^(d/(d-2)), so that the LAST pair (exponent (d-2)/d) is divided by "
                "exactly s"
            ),
        ),
        Mistake(
            B2 * S2 ** ((D2 - 2) / D2),
            N_("the exponent is upside down: s^(d/(d-2)), not s^((d-2)/d)"),
        ),
        Mistake(
            either(NTK_BASE / B2, S2 ** (D2 / (D2 - 2))),
            N_("that is the multiplier s^(d/(d-2)); multiply the original base by it"),
        ),
        Mistake(
            B2 * 4.0 ** (D2 / (D2 - 2)),
            N_(
                "{value:.2f} is the base for s = 4, the factor of section 4; this "
                "exercise asks for s = 8"
            ),
        ),
    ],
    otherwise=N_("the new base should be b * s^(d/(d-2)); got {value:.4g}"),
    right=N_(
        "base' = {expected:.2f}. The last pair's frequency is now exactly theta/s, pair "
        "0's is unchanged."
    ),
)
def check_ntk_base(answer):
    """NTK-aware base for s = 8, d = 128, b = 10000."""


# --- lesson 9 (the wall and interpolation): predictions and decisions -----------------

#: NTK-aware scaling's slow pairs past their trained arc: the lesson's own setting (asked
#: before the numbers are shown) and exercise 5's.
NTK_ARC = {"head_dim": 128, "base": 10000.0, "L": 4096, "factor": 4.0}
EX5_ARC = {"head_dim": 64, "base": 10000.0, "L": 2048, "factor": 8.0}
EX3_ANGLES = {"head_dim": 128, "base": 10000.0, "factor": 4.0}
EX4_DYNAMIC = {"L": 2048, "factor": 2.0, "seq_len": 8192}


@functools.cache
def _past_arc(head_dim, base, L, factor, two_pi=True) -> frozenset:
    """The pairs NTK-aware scaling turns past their trained arc at s L (arc_reach > 1);
    with two_pi=False, the slip of a wavelength 1/theta_i: the slow pairs taken as those
    with 1/theta_i > L."""
    theta = inv_frequencies(head_dim, base)
    ntk, _unused = rope_frequencies("ntk", head_dim, base, factor=factor)
    past = arc_reach(theta, ntk, L, factor) > 1 + 1e-6
    if not two_pi:
        past &= 1 / theta.double() > L
    return frozenset(int(i) for i in past.nonzero().flatten())


def _slow(head_dim, base, L) -> frozenset:
    first = first_pair_longer_than(inv_frequencies(head_dim, base), L)
    return frozenset(range(first, head_dim // 2))


def _as_pairs(answer, name: str, head_dim: int):
    """Pair indices, read as as_indices over 0 .. head_dim - 1, so that dimension
    indices (up to head_dim - 1) are read and named by a mistake rather than refused."""
    return as_indices(answer, name, head_dim)


def _same_pair(a, b) -> bool:
    return all(abs(x - y) <= 1e-4 * abs(y) + 1e-9 for x, y in zip(a, b))


def _past_arc_checker(setting: dict, doc: str):
    d, b, L, s = setting["head_dim"], setting["base"], setting["L"], setting["factor"]

    def expected():
        return _past_arc(d, b, L, s)

    def facts(value, expected_set):
        slow = _slow(d, b, L)
        return {
            "first": min(slow),
            "last": d // 2 - 1,
            "n_slow": len(slow),
            "n": len(_past_arc(d, b, L, s)),
            "count": len(value),
            "top": d // 2,
        }

    def mistakes():
        past, slow = _past_arc(d, b, L, s), _slow(d, b, L)
        return [
            Mistake(
                lambda a: any(i >= d // 2 for i in a),
                N_(
                    "pair indices run from 0 to {last}; indices of {top} or more look "
                    "like dimension indices 2i: answer with the pair index i"
                ),
                first=True,
            ),
            Mistake(
                frozenset(),
                N_(
                    "none would be PI's answer (every slow pair divided by exactly s, "
                    "so its arc at sL is its arc at L). NTK divides pair i by "
                    "s^(2i/(d-2)), which is less than s for every pair but the last"
                ),
            ),
            Mistake(
                slow,
                N_(
                    "all {n_slow} slow pairs: almost. The last pair, i = {last}, is "
                    "divided by exactly s (s^((d-2)/(d-2)) = s), so at sL it reaches "
                    "exactly its trained arc, no further"
                ),
            ),
            Mistake(
                lambda a: bool(a - slow) and past <= a,
                N_(
                    "pairs below {first} went round the whole circle within L already: "
                    "at any length they meet no angle they have not seen. Keep only "
                    "slow pairs (wavelength 2 pi / theta_i > L)"
                ),
            ),
            Mistake(
                _past_arc(d, b, L, s, two_pi=False),
                N_(
                    "you took the wavelength as 1/theta_i; one full turn is 2 pi "
                    "radians, so the slow pairs are those with 2 pi / theta_i > L "
                    "(from pair {first})"
                ),
            ),
        ]

    @exercise(
        read=_as_pairs,
        name=Word(N_("pairs")),
        options={"head_dim": d},
        placeholder=N_("replace `None` with the pair indices (a list or a range)"),
        expected=expected,
        mistakes=mistakes,
        facts=facts,
        otherwise=N_(
            "not these {count} pairs. The slow pairs are {first}..{last} (wavelength "
            "2 pi / theta_i > L); NTK divides pair i by s^(2i/(d-2)): which of them "
            "are divided by less than s, so that s L theta'_i > L theta_i?"
        ),
        right=N_(
            "{n} of the {n_slow} slow pairs turn past the largest angle they "
            "reached in training; only the last one, divided by exactly s, stays inside"
        ),
    )
    def check(answer):
        pass

    check.__doc__ = doc
    return check


check_ntk_past_arc = _past_arc_checker(
    NTK_ARC,
    "Which pairs NTK-aware scaling turns past their trained arc at s L, for d = 128, "
    "b = 10000, L = 4096, s = 4 (the lesson's prediction).",
)
check_ntk_past_arc_small = _past_arc_checker(
    EX5_ARC,
    "The same for d = 64, b = 10000, L = 2048, s = 8 (exercise 5).",
)


@functools.cache
def _neighbour_angles() -> tuple:
    d, b, s = EX3_ANGLES["head_dim"], EX3_ANGLES["base"], EX3_ANGLES["factor"]
    pi, _unused = rope_frequencies("linear", d, b, factor=s)
    ntk, _unused = rope_frequencies("ntk", d, b, factor=s)
    return (float(pi[0]), float(ntk[0]))


@exercise(
    read=as_pair,
    name=Word(N_("the two angles")),
    placeholder=N_("replace `None` with a pair (PI's angle, NTK's angle), in radians"),
    expected=lambda: _neighbour_angles(),
    same=_same_pair,
    mistakes=[
        Mistake(
            either((4.0, 1.0), (4.0, 4.0)),
            N_(
                "PI divides the frequency by s, it does not multiply it: neighbours "
                "come closer, theta_0 / s = 1/4 radian"
            ),
        ),
        Mistake(
            (1.0, 0.25),
            N_("the two are swapped: the first number is PI's, the second NTK's"),
        ),
        Mistake(
            lambda v: all(
                math.isclose(x, math.degrees(r), rel_tol=0.01)
                for x, r in zip(v, (0.25, 1.0))
            ),
            N_(
                "those are degrees; the course measures angles in radians (theta_0 = 1 "
                "radian per token)"
            ),
        ),
        Mistake(
            (0.25, 0.25),
            N_(
                "NTK changes the base, and pair 0's frequency is b'^0 = 1 whatever the "
                "base: it keeps its angle between neighbours"
            ),
        ),
        Mistake(
            (1.0, 1.0),
            N_(
                "PI divides every pair's frequency by s, pair 0 included: positions m/s "
                "give neighbours 1/s radian apart in pair 0"
            ),
        ),
    ],
    otherwise=N_(
        "not ({value[0]:.4g}, {value[1]:.4g}). Pair 0 turns theta_0 = 1 radian per "
        "token; what does each method do to theta_0?"
    ),
    right=N_(
        "PI brings pair 0's neighbours to 1/s = 0.25 radian apart, NTK keeps "
        "them 1 radian apart: pair 0 keeps its resolution"
    ),
)
def check_neighbour_angles(answer):
    """Pair 0's angle between neighbouring tokens under PI and under NTK-aware scaling,
    s = 4, d = 128, b = 10000: (PI's, NTK's)."""


def _dynamic_factor(L, factor, seq_len) -> float:
    return 1 + factor * (seq_len / L - 1)


S4 = EX4_DYNAMIC
DYNAMIC_S = _dynamic_factor(S4["L"], S4["factor"], S4["seq_len"])


@exercise(
    read=as_number,
    name=Word(N_("the effective factor")),
    expected=DYNAMIC_S,
    mistakes=[
        Mistake(
            S4["seq_len"] / S4["L"],
            N_(
                "{value:g} is the length ratio seq_len / L; dynamic NTK uses "
                "s' = 1 + s (seq_len / L - 1): the configured factor is a slope"
            ),
        ),
        Mistake(
            S4["factor"],
            N_(
                "{value:g} is the configured factor; dynamic NTK recomputes s' from the "
                "length: s' = 1 + s (seq_len / L - 1)"
            ),
        ),
        Mistake(
            S4["factor"] * S4["seq_len"] / S4["L"],
            N_("almost: s' = s seq_len / L - (s - 1); you left out the - (s - 1)"),
        ),
        Mistake(
            S4["factor"] * (S4["seq_len"] / S4["L"] - 1),
            N_("almost: s' = 1 + s (seq_len / L - 1); you left out the 1"),
        ),
        Mistake(
            _dynamic_factor(S4["L"] * S4["factor"], S4["factor"], S4["seq_len"]),
            N_(
                "you took L as max_position_embeddings times the factor; for dynamic "
                "NTK, max_position_embeddings is the trained length L itself"
            ),
        ),
    ],
    otherwise=N_("s' should be 1 + s (seq_len / L - 1); got {value:.4g}"),
    right=N_(
        "s' = {expected:g}: the input is 4 L long, but each L past the first adds s = "
        "2, so the base grows as for NTK with factor {expected:g}, not 4"
    ),
)
def check_dynamic_factor(answer):
    """Dynamic NTK's effective factor for the config max_position_embeddings = 2048,
    rope_scaling = {"rope_type": "dynamic", "factor": 2.0}, on 8,192 tokens."""
