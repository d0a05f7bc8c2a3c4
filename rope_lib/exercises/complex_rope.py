"""Checkers for lessons 4 and 5 (RoPE in complex numbers; RoPE at scale).

from rope_lib.exercises import complex_rope as ex
ex.check_complex_rotation(answer)      # rotate one pair with a complex multiplication
ex.check_slow_pairs(answer)      # how many pairs never complete a turn within the training length
ex.check_meta_layout_weights(answer)      # turn a half-split (Hugging Face) W_k back into Meta's interleaved one
ex.check_bfloat16_angle_error(answer)      # the angle error when a position is stored in bfloat16
"""

from __future__ import annotations

import math

import torch

from ..language import _
from ..rotary import half_to_interleaved, interleaved_to_half
from . import Feedback, compare_tensor, correct, not_yet
from .answers import guarded, read_complex, read_count, read_number, read_tensor


def _missing(what: str):
    return not_yet(_("no answer yet: replace None with {what}").format(what=what))


# Exercise 1: the pair (3, 4), frequency theta = 0.1, position m = 5.
EX1_PAIR, EX1_THETA, EX1_POSITION = (3.0, 4.0), 0.1, 5


def _rotated(angle: float) -> torch.Tensor:
    a, b = EX1_PAIR
    return torch.tensor(
        [
            a * math.cos(angle) - b * math.sin(angle),
            a * math.sin(angle) + b * math.cos(angle),
        ]
    )


@guarded
def check_complex_rotation(answer):
    """The pair (3, 4) rotated by RoPE at position 5 with theta = 0.1: a complex number or [x', y']."""
    if answer is None:
        return _missing(_("the rotated pair, a complex number or [x', y']"))
    z = read_complex(answer, _("the rotated pair"))
    if isinstance(z, Feedback):
        return z
    pair = torch.tensor([z.real, z.imag], dtype=torch.float64)
    angle = EX1_THETA * EX1_POSITION

    def near(t):
        return torch.allclose(pair, t.to(torch.float64), atol=1e-3)

    if near(_rotated(angle)):
        return correct(
            _(
                "(3 + 4i) · e^(i·{angle}) = {x:.4f} + {y:.4f}i: the length stays 5, the "
                "angle grows by m·θ = {angle}"
            ).format(angle=angle, x=z.real, y=z.imag)
        )
    if near(_rotated(-angle)):
        return not_yet(
            _(
                "you turned the pair clockwise, by -m·θ: multiply by e^(+i m θ), not by "
                "its conjugate"
            )
        )
    if near(_rotated(EX1_THETA)):
        return not_yet(
            _("you turned the pair by θ = 0.1 only: the angle at position m is m·θ")
        )
    if near(_rotated(math.radians(angle))):
        return not_yet(
            _(
                "the angle looks like it was taken in degrees: torch.cos, torch.sin and "
                "torch.polar use radians"
            )
        )
    if near(_rotated(angle).flip(0)):
        return not_yet(
            _(
                "real and imaginary parts are swapped: the pair (x, y) is the complex "
                "number x + iy"
            )
        )
    if near(torch.tensor(EX1_PAIR)):
        return not_yet(_("that is the pair before the rotation"))
    length = float(pair.norm())
    if abs(length - 5.0) > 1e-3:
        return not_yet(
            _(
                "a rotation keeps the length |3 + 4i| = 5, yours has length {length:.4f}"
            ).format(length=length)
        )
    return not_yet(
        _(
            "the length is right but the angle is not: expected the angle of 3 + 4i "
            "plus {angle} rad"
        ).format(angle=angle)
    )


# Exercise 2: Llama 3's base, head_dim 128, training length 8192.
EX2_HEAD_DIM, EX2_BASE, EX2_LENGTH = 128, 500000.0, 8192


def _pairs_below_one_turn(base: float, length: float, turn: float = 2 * math.pi) -> int:
    i = torch.arange(EX2_HEAD_DIM // 2, dtype=torch.float64)
    theta = base ** (-2 * i / EX2_HEAD_DIM)
    return int((length * theta < turn).sum())


@guarded
def check_slow_pairs(answer):
    """How many of the 64 pairs (head_dim 128, base 500,000) turn less than once within 8192 tokens."""
    if answer is None:
        return _missing(_("the number of pairs, an integer"))
    answer = read_count(answer, _("the answer"), what=_("a count of pairs"))
    if isinstance(answer, Feedback):
        return answer
    expected = _pairs_below_one_turn(EX2_BASE, EX2_LENGTH)
    n_pairs = EX2_HEAD_DIM // 2
    if answer == expected:
        return correct(
            _(
                "{n} of the {pairs} pairs (pairs {first} to {last}) never finish one "
                "turn in {length} tokens: within the training length they only ever see "
                "part of their circle"
            ).format(
                n=expected,
                pairs=n_pairs,
                first=n_pairs - expected,
                last=n_pairs - 1,
                length=EX2_LENGTH,
            )
        )
    if answer == n_pairs - expected:
        return not_yet(
            _(
                "that is the number of pairs that DO complete a turn; the question asks "
                "for those that do not"
            )
        )
    if answer == _pairs_below_one_turn(10000.0, EX2_LENGTH):
        return not_yet(
            _("that is the count for base 10,000; this model uses base 500,000")
        )
    if answer == _pairs_below_one_turn(EX2_BASE, EX2_LENGTH, turn=1.0):
        return not_yet(
            _("you compared the angle L·θ_i with 1 radian; one full turn is 2π radians")
        )
    if abs(answer - expected) == 1:
        return not_yet(
            _("off by one: count the pairs i with 8192·θ_i / (2π) < 1, i from 0 to 63")
        )
    if not 0 <= answer <= n_pairs:
        return not_yet(
            _("there are only {pairs} pairs in a head of size {head_dim}").format(
                pairs=n_pairs, head_dim=EX2_HEAD_DIM
            )
        )
    return not_yet(
        _(
            "not quite: compute the turns 8192·θ_i / (2π) for every pair and count those "
            "below 1"
        )
    )


# Exercise 3: a half-split (Hugging Face) key projection with 2 heads of size 8, d_model 16.
EX3_HEADS, EX3_HEAD_DIM, EX3_D_MODEL = 2, 8, 16


def meta_layout_weights() -> torch.Tensor:
    """W_k of a half-split model, [heads * head_dim, d_model] = [16, 16], rows grouped by head."""
    generator = torch.Generator().manual_seed(3)
    return torch.randn(EX3_HEADS * EX3_HEAD_DIM, EX3_D_MODEL, generator=generator)


def _per_head_rows(weight: torch.Tensor, permute) -> torch.Tensor:
    heads = weight.reshape(EX3_HEADS, EX3_HEAD_DIM, EX3_D_MODEL)
    return permute(heads.transpose(-1, -2)).transpose(-1, -2).reshape(weight.shape)


@guarded
def check_meta_layout_weights(answer):
    """W_k for the interleaved (Meta) layout that gives the same scores as meta_layout_weights()."""
    if answer is None:
        return _missing(_("the interleaved W_k, a (16, 16) tensor"))
    w_half = meta_layout_weights()
    expected = _per_head_rows(w_half, half_to_interleaved)
    answer = read_tensor(answer, _("W_k (interleaved)"))
    if isinstance(answer, Feedback):
        return answer
    if tuple(answer.shape) == tuple(expected.shape):
        w_half, expected = w_half.to(torch.float64), expected.to(torch.float64)
        if torch.allclose(answer, expected):
            return correct(
                _(
                    "within each head, rows (i, i + 4) of the half layout became rows "
                    "(2i, 2i + 1): same scores, Meta's layout"
                )
            )
        if torch.allclose(answer, w_half):
            return not_yet(
                _("this is the half-split matrix unchanged; its rows must be reordered")
            )
        if torch.allclose(answer, _per_head_rows(w_half, interleaved_to_half)):
            return not_yet(
                _(
                    "you applied interleaved_to_half, the other direction: going from "
                    "half to interleaved needs half_to_interleaved"
                )
            )
        if torch.allclose(answer, half_to_interleaved(w_half.T).T):
            return not_yet(
                _(
                    "you reordered all 16 rows as one block; the pairs live inside each "
                    "head, so reorder each head's 8 rows separately"
                )
            )
        if torch.allclose(answer, half_to_interleaved(w_half)):
            return not_yet(
                _(
                    "you reordered the columns (the d_model inputs); RoPE pairs the "
                    "output features, the rows of W_k"
                )
            )
        if torch.allclose(
            answer,
            half_to_interleaved(w_half.reshape(EX3_HEADS, EX3_HEAD_DIM, -1)).reshape(
                w_half.shape
            ),
        ):
            return not_yet(
                _(
                    "you reordered the columns within each head's block; reorder the "
                    "rows (output features) instead"
                )
            )
    problem = compare_tensor(
        answer, expected, _("W_k (interleaved)")
    )  # a Feedback (falsy), or None when right
    return (
        problem
        if problem is not None
        else correct(_("same scores as the half-split model, in Meta's layout"))
    )


# Exercise 4: position 5001 stored in bfloat16, pair 0 (theta = 1 rad per token).
EX4_POSITION = 5001


@guarded
def check_bfloat16_angle_error(answer):
    """By how many radians is pair 0's angle off at position 5001 when the position is a bfloat16?"""
    if answer is None:
        return _missing(_("the error in radians, one positive number"))
    answer = read_number(answer, _("the error"))
    if isinstance(answer, Feedback):
        return answer
    stored = torch.tensor(float(EX4_POSITION)).to(torch.bfloat16).item()
    expected = abs(
        stored - EX4_POSITION
    )  # theta_0 = 1, so the angle is off by as much as the position
    half = abs(
        torch.tensor(float(EX4_POSITION)).to(torch.float16).item() - EX4_POSITION
    )

    def near(value):
        return abs(answer - value) < 1e-3

    if near(expected):
        nearby = torch.arange(EX4_POSITION - 80, EX4_POSITION + 80)
        alike = nearby[nearby.to(torch.bfloat16).to(torch.int64) == int(stored)]
        low = 2 ** math.floor(
            math.log2(EX4_POSITION)
        )  # bfloat16 keeps 8 significant bits
        if stored > EX4_POSITION:
            message = _(
                "bfloat16 stores {position} as {stored:.0f} (between {low} and {high} it "
                "can only count in steps of {step}), so pair 0 is turned {error:.0f} rad "
                "too far, and every position from {first} to {last} gets the same "
                "rotation"
            )
        else:
            message = _(
                "bfloat16 stores {position} as {stored:.0f} (between {low} and {high} it "
                "can only count in steps of {step}), so pair 0 is turned {error:.0f} rad "
                "too little, and every position from {first} to {last} gets the same "
                "rotation"
            )
        return correct(
            message.format(
                position=EX4_POSITION,
                stored=stored,
                low=low,
                high=2 * low,
                step=low // 128,
                error=expected,
                first=int(alike.min()),
                last=int(alike.max()),
            )
        )
    if near(-expected):
        return not_yet(
            _("right size, but give the error as a positive number of radians")
        )
    if near(expected / (2 * math.pi)):
        return not_yet(_("that is the error in turns; the question asks for radians"))
    if near(expected - 2 * math.pi):
        return not_yet(
            _(
                "that is the error folded onto the dial (minus one full turn); give the "
                "error in the angle m·θ itself"
            )
        )
    if near(stored):
        return not_yet(
            _(
                "that is the position bfloat16 stores; the question asks how far the "
                "angle moves because of it"
            )
        )
    if near(half):
        return not_yet(
            _(
                "that is float16's rounding (it keeps 11 significant bits); bfloat16 "
                "keeps only 8"
            )
        )
    if near(0.0):
        return not_yet(
            _(
                "bfloat16 stores whole numbers exactly only up to 256; try "
                "torch.tensor({position}.0).to(torch.bfloat16)"
            ).format(position=EX4_POSITION)
        )
    return not_yet(
        _(
            "not quite: store {position} in bfloat16, compare with {position}, and "
            "multiply by pair 0's frequency θ_0 = 1"
        ).format(position=EX4_POSITION)
    )
