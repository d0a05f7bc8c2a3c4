"""Checkers for lesson 7 (the wall and interpolation). Each returns a Feedback naming the
likely slip. Lesson 8's (YaRN, its temperature, Llama 3) are in rope_lib.exercises.yarn."""

from __future__ import annotations

import functools
import math

from ..extension_analysis import first_pair_longer_than
from ..language import N_
from ..rotary import inv_frequencies
from . import Mistake, Word, either, exercise
from .answers import as_count, as_number

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
                "{value} is the last pair whose wavelength still fits into L; corr_dim is "
                "the first one that exceeds it"
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
        "corr_dim should be the first i with 2 pi b^(2i/d) > L; got {value}, which is "
        "not it"
    ),
    right=N_(
        "corr_dim = {expected}: pairs {expected}..{last} never complete a turn within L = "
        "{L} tokens. It is also the upper end of YaRN's correction range (beta_slow = 1)."
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
    ],
    otherwise=N_("the new base should be b * s^(d/(d-2)); got {value:.4g}"),
    right=N_(
        "base' = {expected:.2f}. The last pair's frequency is now exactly theta/s, pair "
        "0's is unchanged."
    ),
)
def check_ntk_base(answer):
    """NTK-aware base for s = 8, d = 128, b = 10000."""
