"""Checkers for lessons 5, 6 and 7 (RoPE in complex numbers; its layouts; RoPE at scale).

from rope_lib.exercises import complex_rope as ex
# lesson 5
ex.check_score_changes(answer)         # which changes of q, k, m, n change the score
ex.check_complex_rotation(answer)      # rotate one pair with a complex multiplication
ex.check_complex_score(answer)         # the score as one complex product
ex.check_best_offset(answer)           # the offset at which the worked pair scores most
# lesson 6
ex.check_three_modules(answer)         # which of three RoPE modules is no rotation
ex.check_meta_layout_weights(answer)   # a half-split (HF) W_k back in Meta's layout
ex.check_unpermuted_scores(answer)     # which scores survive a forgotten row permutation
# lesson 7
ex.check_slow_pairs(answer)            # pairs that never complete a turn in training
ex.check_bfloat16_angle_error(answer)  # the angle error of a bfloat16 position
"""

from __future__ import annotations

import cmath
import functools
import math

import numpy as np
import torch

from ..language import N_, _
from ..rotary import half_to_interleaved, interleaved_to_half
from . import Mistake, NotYet, Word, close, exercise, near
from .answers import as_choices, as_complex, as_count, as_number, as_tensor

F64 = torch.float64


def _missing(what: str) -> str:
    return _("no answer yet: replace None with {what}").format(what=what)


# Exercise 1: the pair (3, 4), frequency theta = 0.1, position m = 5.
PAIR, THETA, ANGLE = (3.0, 4.0), 0.1, 0.1 * 5


def _rotated(angle: float) -> torch.Tensor:
    a, b = PAIR
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([a * c - b * s, a * s + b * c], dtype=F64)


def _as_pair(answer, name: str) -> torch.Tensor:
    z = as_complex(answer, name)
    return torch.tensor([z.real, z.imag], dtype=F64)


@exercise(
    read=_as_pair,
    name=Word(N_("the rotated pair")),
    expected=_rotated(ANGLE),
    same=close(atol=1e-3),
    placeholder=lambda none: _missing(
        _("the rotated pair, a complex number or [x', y']")
    ),
    mistakes=[
        Mistake(
            _rotated(-ANGLE),
            N_(
                "you turned the pair clockwise, by -m·θ: multiply by e^(+i m θ), not by "
                "its conjugate"
            ),
        ),
        Mistake(
            _rotated(THETA),
            N_("you turned the pair by θ = 0.1 only: the angle at position m is m·θ"),
        ),
        Mistake(
            _rotated(math.radians(ANGLE)),
            N_(
                "the angle looks like it was taken in degrees: torch.cos, torch.sin and "
                "torch.polar use radians"
            ),
        ),
        Mistake(
            _rotated(ANGLE).flip(0),
            N_(
                "real and imaginary parts are swapped: the pair (x, y) is the complex "
                "number x + iy"
            ),
        ),
        Mistake(
            torch.tensor(PAIR, dtype=F64), N_("that is the pair before the rotation")
        ),
        Mistake(
            lambda pair: abs(float(pair.norm()) - 5.0) > 1e-3,
            N_(
                "a rotation keeps the length |3 + 4i| = 5, yours has length {length:.4f}"
            ),
        ),
    ],
    facts=lambda pair, expected: {
        "angle": ANGLE,
        "x": float(pair[0]),
        "y": float(pair[1]),
        "length": float(pair.norm()),
    },
    otherwise=N_(
        "the length is right but the angle is not: expected the angle of 3 + 4i plus "
        "{angle} rad"
    ),
    right=N_(
        "(3 + 4i) · e^(i·{angle}) = {x:.4f} + {y:.4f}i: the length stays 5, the angle "
        "grows by m·θ = {angle}"
    ),
)
def check_complex_rotation(answer):
    """The pair (3, 4) rotated by RoPE at position 5 with theta = 0.1: a complex number or
    [x', y']."""


# The score of q = 2 + i at m = 7 and k = 1 - 3i at n = 3, theta = 0.2 (lesson 5).
Q, K, M, N, THETA_S = 2 + 1j, 1 - 3j, 7, 3, 0.2
Q_M, K_N = Q * cmath.exp(1j * M * THETA_S), K * cmath.exp(1j * N * THETA_S)


def _as_score(answer, name: str) -> float:
    """One real number; a complex one is the product itself, before its real part."""
    if isinstance(answer, torch.Tensor):
        product = answer.is_complex()
    else:
        product = isinstance(answer, (complex, np.ndarray, np.generic))
        product = product and np.iscomplexobj(answer)
    if product:
        raise NotYet(
            _("that is the complex product itself; the score is its real part (.real)")
        )
    return as_number(answer, name)


@exercise(
    read=_as_score,
    name=Word(N_("the score")),
    expected=(Q_M * K_N.conjugate()).real,
    same=near(rtol=0, atol=1e-4),
    placeholder=N_("replace `None` with one real number: the score q'·k'"),
    mistakes=[
        Mistake(
            (Q_M * K_N).real,
            N_(
                "without the conjugate the angles add: Re[q_m k_n] turns by (m + n)θ. The "
                "score is Re[q_m · conj(k_n)], where the angles subtract"
            ),
        ),
        Mistake(
            (Q_M * K_N.conjugate()).imag,
            N_(
                "that is the imaginary part; the dot product of two pairs is the real part "
                "of q_m · conj(k_n)"
            ),
        ),
        Mistake(
            (Q * K.conjugate() * cmath.exp(-1j * (M - N) * THETA_S)).real,
            N_(
                "the positions are swapped: the query sits at m = 7 and the key at n = 3, "
                "so the relative angle is (m - n)θ = +0.8 rad"
            ),
        ),
        Mistake(
            (Q * K.conjugate()).real,
            N_(
                "that is q·k before the rotation (Re[q · conj(k)] = -1): turn q by mθ and k "
                "by nθ first"
            ),
        ),
        Mistake(
            (Q * K * cmath.exp(1j * (M - N) * THETA_S)).real,
            N_(
                "you dropped the conjugate: Re[q k e^(i(m - n)θ)] is not the dot product. "
                "The score is Re[q · conj(k) · e^(i(m - n)θ)], with conj(1 - 3i) = 1 + 3i"
            ),
        ),
        Mistake(
            (Q * K.conjugate() * cmath.exp(1j * (M + N) * THETA_S)).real,
            N_(
                "you turned by (m + n)θ = 2.0 rad: the conjugate flips the key's angle, so "
                "the angles subtract and only (m - n)θ = 0.8 rad is left"
            ),
        ),
    ],
    otherwise=N_(
        "not {value:.4f}: rotate q = 2 + i by e^(i·7·0.2) and k = 1 - 3i by "
        "e^(i·3·0.2), then take the real part of q_m · conj(k_n)"
    ),
    right=N_(
        "Re[q_m · conj(k_n)] = Re[(2 + i)(1 + 3i) e^(i·0.8)] = {expected:.4f}: only the "
        "offset m - n = 4 is left in the angle"
    ),
)
def check_complex_score(answer):
    """The score q'·k' of the pair q = (2, 1) at position m = 7 and the pair k = (1, -3)
    at n = 3, theta = 0.2: Re[q e^(imθ) · conj(k e^(inθ))], one real number."""


# Exercise 2: Llama 3's base, head_dim 128 (64 pairs), training length 8192.
def _pairs_below_one_turn(base: float, turn: float = 2 * math.pi) -> int:
    theta = base ** (-2 * torch.arange(64, dtype=F64) / 128)
    return int((8192 * theta < turn).sum())


SLOW = _pairs_below_one_turn(500000.0)


@exercise(
    read=as_count,
    name=Word(N_("the answer")),
    options={"what": N_("a count of pairs")},
    expected=SLOW,
    placeholder=lambda none: _missing(_("the number of pairs, an integer")),
    mistakes=[
        Mistake(
            64 - SLOW,
            N_(
                "that is the number of pairs that DO complete a turn; the question asks "
                "for those that do not"
            ),
        ),
        Mistake(
            _pairs_below_one_turn(10000.0),
            N_("that is the count for base 10,000; this model uses base 500,000"),
        ),
        Mistake(
            _pairs_below_one_turn(500000.0, turn=1.0),
            N_(
                "you compared the angle L·θ_i with 1 radian; one full turn is 2π radians"
            ),
        ),
        Mistake(
            lambda n: abs(n - SLOW) == 1,
            N_(
                "off by one: count the pairs i with 8192·θ_i / (2π) < 1, i from 0 to 63"
            ),
        ),
        Mistake(
            lambda n: not 0 <= n <= 64,
            N_("there are only {pairs} pairs in a head of size {head_dim}"),
        ),
    ],
    facts={
        "n": SLOW,
        "pairs": 64,
        "first": 64 - SLOW,
        "last": 63,
        "length": 8192,
        "head_dim": 128,
    },
    otherwise=N_(
        "not quite: compute the turns 8192·θ_i / (2π) for every pair and count those "
        "below 1"
    ),
    right=N_(
        "{n} of the {pairs} pairs (pairs {first} to {last}) never finish one turn in "
        "{length} tokens: within the training length they only ever see part of their "
        "circle"
    ),
)
def check_slow_pairs(answer):
    """How many of the 64 pairs (head_dim 128, base 500,000) turn less than once within
    8192 tokens."""


# Exercise 3: a half-split (Hugging Face) key projection, 2 heads of size 8, d_model 16.
def meta_layout_weights() -> torch.Tensor:
    """W_k of a half-split model, [heads * head_dim, d_model] = [16, 16], rows grouped by
    head."""
    generator = torch.Generator().manual_seed(3)
    return torch.randn(16, 16, generator=generator)


def _per_head_rows(weight: torch.Tensor, permute) -> torch.Tensor:
    heads = weight.reshape(2, 8, 16)
    return permute(heads.transpose(-1, -2)).transpose(-1, -2).reshape(weight.shape)


def _columns_permuted(*weights: torch.Tensor):
    """A test: are the answer's columns those of one of `weights`, in another order?"""

    def test(value) -> bool:
        value = torch.as_tensor(value).to(F64)
        for w in weights:
            if value.shape != w.shape:
                continue
            gap = (value[:, :, None] - w[:, None, :]).abs().amax(dim=0)
            nearest = gap.min(dim=1)
            one_each = len(set(nearest.indices.tolist())) == len(nearest.indices)
            if one_each and (nearest.values < 1e-4).all():
                return True
        return False

    return test


@functools.cache
def _layouts():
    """The expected W_k and the known mistakes of check_meta_layout_weights."""
    w = meta_layout_weights().to(F64)
    expected = _per_head_rows(w, half_to_interleaved)
    return expected, [
        Mistake(
            w, N_("this is the half-split matrix unchanged; its rows must be reordered")
        ),
        Mistake(
            _per_head_rows(w, interleaved_to_half),
            N_(
                "you applied interleaved_to_half, the other direction: going from half "
                "to interleaved needs half_to_interleaved"
            ),
        ),
        Mistake(
            half_to_interleaved(w.T).T,
            N_(
                "you reordered all 16 rows as one block; the pairs live inside each "
                "head, so reorder each head's 8 rows separately"
            ),
        ),
        Mistake(
            _columns_permuted(w, expected),
            N_(
                "you reordered the columns (the d_model inputs); RoPE pairs the output "
                "features, so reorder the rows of W_k, head by head"
            ),
        ),
    ]


@exercise(
    read=as_tensor,
    name=Word(N_("W_k (interleaved)")),
    expected=lambda: _layouts()[0],
    same=close(),
    placeholder=lambda none: _missing(_("the interleaved W_k, a (16, 16) tensor")),
    mistakes=lambda: _layouts()[1],
    right=N_(
        "within each head, rows (i, i + 4) of the half layout became rows (2i, 2i + 1): "
        "same scores, Meta's layout"
    ),
    right_when_close=N_("same scores as the half-split model, in Meta's layout"),
)
def check_meta_layout_weights(answer):
    """W_k for the interleaved (Meta) layout that gives the same scores as
    meta_layout_weights()."""


# Exercise 4: position 5001 stored in bfloat16; pair 0 turns 1 rad per token.
POSITION = 5001
STORED = torch.tensor(float(POSITION)).to(torch.bfloat16).item()
ERROR = abs(STORED - POSITION)  # theta_0 = 1: the angle is off as much as the position


def _bfloat16_right(fields) -> str:
    nearby = torch.arange(POSITION - 80, POSITION + 80)
    alike = nearby[nearby.to(torch.bfloat16).to(torch.int64) == int(STORED)]
    low = 2 ** math.floor(math.log2(POSITION))  # bfloat16 keeps 8 significant bits
    if STORED > POSITION:
        message = _(
            "bfloat16 stores {position} as {stored:.0f} (between {low} and {high} it can "
            "only count in steps of {step}), so pair 0 is turned {error:.0f} rad too far, "
            "and every position from {first} to {last} gets the same rotation"
        )
    else:
        message = _(
            "bfloat16 stores {position} as {stored:.0f} (between {low} and {high} it can "
            "only count in steps of {step}), so pair 0 is turned {error:.0f} rad too "
            "little, and every position from {first} to {last} gets the same rotation"
        )
    return message.format(
        position=POSITION,
        stored=STORED,
        low=low,
        high=2 * low,
        step=low // 128,
        error=ERROR,
        first=int(alike.min()),
        last=int(alike.max()),
    )


@exercise(
    read=as_number,
    name=Word(N_("the error")),
    expected=ERROR,
    same=near(rtol=0, atol=1e-3),
    placeholder=lambda none: _missing(_("the error in radians, one positive number")),
    mistakes=[
        Mistake(
            -ERROR, N_("right size, but give the error as a positive number of radians")
        ),
        Mistake(
            ERROR / (2 * math.pi),
            N_("that is the error in turns; the question asks for radians"),
        ),
        Mistake(
            ERROR - 2 * math.pi,
            N_(
                "that is the error folded onto the dial (minus one full turn); give the "
                "error in the angle m·θ itself"
            ),
        ),
        Mistake(
            STORED,
            N_(
                "that is the position bfloat16 stores; the question asks how far the "
                "angle moves because of it"
            ),
        ),
        Mistake(
            abs(torch.tensor(float(POSITION)).to(torch.float16).item() - POSITION),
            N_(
                "that is float16's rounding (it keeps 11 significant bits); bfloat16 "
                "keeps only 8"
            ),
        ),
        Mistake(
            0.0,
            N_(
                "bfloat16 stores whole numbers exactly only up to 256; try "
                "torch.tensor({position}.0).to(torch.bfloat16)"
            ),
        ),
    ],
    facts={"position": POSITION},
    otherwise=N_(
        "not quite: store {position} in bfloat16, compare with {position}, and multiply "
        "by pair 0's frequency θ_0 = 1"
    ),
    right=_bfloat16_right,
)
def check_bfloat16_angle_error(answer):
    """By how many radians is pair 0's angle off at position 5001 when the position is a
    bfloat16?"""


# Lesson 5, exercise 1: four changes to a query/key pair; which change the score
# Re[q e^(imθ) · conj(k e^(inθ))] = Re[q k* e^(i(m-n)θ)]?
CHANGES = ("shift", "swap", "phase", "conjugate")
SAME_OR_NOT = ("same", "changes")


def _read_changes(answer, name):
    return as_choices(answer, name, CHANGES, SAME_OR_NOT)


@exercise(
    read=_read_changes,
    name=Word(N_("the answer")),
    expected={
        "shift": "same",
        "swap": "changes",
        "phase": "same",
        "conjugate": "changes",
    },
    same=lambda a, b: a == b,
    placeholder=N_(
        'replace `None` with a dict: "same" or "changes" for each of the four'
    ),
    mistakes=[
        Mistake(
            lambda a: set(CHANGES) - set(a),
            N_(
                'answer all four: the dict needs "shift", "swap", "phase" and '
                '"conjugate", each "same" or "changes"'
            ),
            first=True,
        ),
        Mistake(
            lambda a: a["shift"] == "changes",
            N_(
                "shift: only m - n enters Re[q k* e^(i(m - n)θ)], and moving both "
                "positions by 100 keeps m - n"
            ),
        ),
        Mistake(
            lambda a: a["phase"] == "changes",
            N_(
                "phase: an extra angle φ on both, q e^(iφ) · conj(k e^(iφ)) = q k*, "
                "cancels exactly as the two positions' common part does"
            ),
        ),
        Mistake(
            lambda a: a["swap"] == "same",
            N_(
                "swap: n - m = -Δ turns q k* the other way, Re[q k* e^(-iΔθ)]; that is "
                "a different number unless q k* is real (the score is not symmetric in Δ)"
            ),
        ),
        Mistake(
            lambda a: a["conjugate"] == "same",
            N_(
                "conjugate: turning the key by e^(-inθ) makes the angles add, "
                "q e^(imθ) · conj(k e^(-inθ)) = q k* e^(i(m + n)θ): the score now "
                "depends on m + n, not on the offset"
            ),
        ),
    ],
    right=N_(
        "only the offset survives: a common shift or a common phase cancels in "
        "q · conj(k); swapping m and n turns by -Δθ, and a key turned by -nθ adds the "
        "angles"
    ),
)
def check_score_changes(answer):
    """For each change (shift both positions by 100; swap m and n; multiply q and k by
    the same e^(iφ); rotate the key by the conjugate e^(-inθ)): does the score stay the
    same or change?"""


# Lesson 5, exercise 4: the worked pair q = 0.5 - 1.0i, k = 1.2 + 0.3i, θ = 0.1. The score
# |q||k| cos(Δθ + arg(q k*)) is largest where Δθ cancels arg(q k*) = -1.352 rad.
QW, KW, THETA_W = 0.5 - 1.0j, 1.2 + 0.3j, 0.1
OFFSETS = range(0, 63)  # one turn of this pair: 2π/0.1 = 62.8 tokens


def _worked_score(offset: int) -> float:
    return (QW * KW.conjugate() * cmath.exp(1j * offset * THETA_W)).real


BEST = max(OFFSETS, key=_worked_score)
PHASE = cmath.phase(QW * KW.conjugate())


@exercise(
    read=as_count,
    name=Word(N_("the offset")),
    options={"what": N_("a whole number of tokens")},
    expected=BEST,
    placeholder=lambda none: _missing(_("the offset Δ, a whole number")),
    mistakes=[
        Mistake(
            lambda n: not 0 <= n <= 62,
            N_("the question asks for an offset from 0 to 62 (one turn of this pair)"),
        ),
        Mistake(
            0,
            N_(
                "at Δ = 0 the score is the plain q·k = Re[q k*] = 0.3; the green arrow "
                "q k* points down at -1.352 rad, so turning it helps"
            ),
        ),
        Mistake(
            BEST - 1,
            N_(
                "Δθ = 1.352 rad gives Δ = 13.52, which is nearer 14 than 13: the score "
                "at 14 is a little larger"
            ),
        ),
        Mistake(
            round((2 * math.pi + PHASE) / THETA_W),
            N_(
                "that turns the green arrow the wrong way: it sits at -1.352 rad, and "
                "e^(iΔθ) turns it counter-clockwise, so Δθ = +1.352 brings it to the "
                "real axis"
            ),
        ),
    ],
    facts={
        "phase": PHASE,
        "best": BEST,
        "score": _worked_score(BEST),
        "top": abs(QW * KW.conjugate()),
    },
    otherwise=N_(
        "not {value}: the score is |q k*| cos(Δθ + arg(q k*)), with arg(q k*) = "
        "{phase:.3f} rad; it is largest where Δθ cancels that angle"
    ),
    right=N_(
        "Δ = {best}: Δθ = {best}·0.1 nearly cancels arg(q k*) = {phase:.3f} rad, so the "
        "green arrow lies on the real axis and the score is {score:.4f}, close to its "
        "ceiling |q||k| = {top:.4f}"
    ),
)
def check_best_offset(answer):
    """The offset Δ in 0..62 at which the worked pair (q = 0.5 - 1.0i, k = 1.2 + 0.3i,
    θ = 0.1) scores highest."""


# Lesson 6, exercise 1: three RoPE modules (the code is in the notebook, and here). Two are
# rotations, in one layout or the other; one is not.
def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat([-second, first], dim=-1)


def _angles(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0):
    d = x.shape[-1]
    freqs = 1.0 / base ** (torch.arange(0, d, 2, dtype=F64) / d)
    return torch.outer(positions.to(F64), freqs).to(x.dtype)  # [seq, d/2]


def module_a(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Even and odd coordinates, rotated, joined with torch.cat."""
    angles = _angles(x, positions)
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)


def module_b(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """x * cos + rotate_half(x) * sin, with each angle repeated twice in a row."""
    angles = _angles(x, positions).repeat_interleave(2, dim=-1)  # θ0, θ0, θ1, θ1, ...
    return x * angles.cos() + _rotate_half(x) * angles.sin()


def module_c(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Pairs (2i, 2i + 1) as complex numbers, times e^(i m θ_i)."""
    angles = _angles(x, positions)
    pairs = torch.view_as_complex(x.to(F64).reshape(*x.shape[:-1], -1, 2).contiguous())
    turned = pairs * torch.polar(torch.ones_like(angles, dtype=F64), angles.to(F64))
    return torch.view_as_real(turned).flatten(-2).to(x.dtype)


MODULES = ("a", "b", "c", "none")
AT_ZERO = ("unchanged", "zero", "permuted")


def _read_modules(answer, name):
    read = as_choices(answer, name, ("wrong",), MODULES)
    read |= as_choices(answer, name, ("at position 0",), AT_ZERO)
    return read


@exercise(
    read=_read_modules,
    name=Word(N_("the answer")),
    expected={"wrong": "b", "at position 0": "unchanged"},
    same=lambda a, b: a == b,
    placeholder=N_('replace `None` with a dict {{"wrong": ..., "at position 0": ...}}'),
    mistakes=[
        Mistake(
            lambda a: {"wrong", "at position 0"} - set(a),
            N_('answer both: the dict needs "wrong" and "at position 0"'),
            first=True,
        ),
        Mistake(
            lambda a: a["wrong"] == "a",
            N_(
                "A is a rotation: torch.cat lists the same rotated pairs in the half "
                "order, q and k alike, so every score q'·k' is the interleaved one"
            ),
        ),
        Mistake(
            lambda a: a["wrong"] == "c",
            N_(
                "C is Meta's complex form: pairs (2i, 2i + 1) as complex numbers, each "
                "multiplied by e^(i m θ_i): the reference rotation"
            ),
        ),
        Mistake(
            lambda a: a["wrong"] == "none",
            N_(
                "one of them is no rotation: B's angles come in the interleaved order "
                "(θ0, θ0, θ1, θ1, ...), but rotate_half pairs coordinate i with "
                "i + d/2, so the two members of a pair turn by different angles"
            ),
        ),
        Mistake(
            lambda a: a["at position 0"] == "permuted",
            N_(
                "that is A at position 0 (cat lists x in the half order). B keeps x's "
                "order: at m = 0, cos = 1 and sin = 0 in every slot, so "
                "x·1 + rotate_half(x)·0 = x"
            ),
        ),
        Mistake(
            lambda a: a["at position 0"] == "zero",
            N_(
                "at m = 0 every angle is 0: cos = 1 and sin = 0, so B returns "
                "x·1 + rotate_half(x)·0 = x, not zeros"
            ),
        ),
    ],
    right=N_(
        "B pairs coordinates (i, i + d/2) but turns them by angles listed for pairs "
        "(2i, 2i + 1); at position 0 it returns x unchanged, like a right module, so a "
        "test at position 0 alone cannot catch it"
    ),
)
def check_three_modules(answer):
    """Which of module_a, module_b, module_c is not a rotation, and what does it return at
    position 0?"""


# Lesson 6, exercise 3: a half-layout checkpoint run by interleaved code without the row
# permutation. Which scores are still the trained model's?
SCORE_PLACES = ("m = n", "n = 0", "m - n = 1")
RIGHT_OR_WRONG = ("right", "wrong")


def _read_places(answer, name):
    return as_choices(answer, name, SCORE_PLACES, RIGHT_OR_WRONG)


@exercise(
    read=_read_places,
    name=Word(N_("the answer")),
    expected={"m = n": "right", "n = 0": "wrong", "m - n = 1": "wrong"},
    same=lambda a, b: a == b,
    placeholder=N_(
        'replace `None` with a dict {{"m = n": ..., "n = 0": ..., "m - n = 1": ...}}'
    ),
    mistakes=[
        Mistake(
            lambda a: set(SCORE_PLACES) - set(a),
            N_('answer all three: the dict needs "m = n", "n = 0" and "m - n = 1"'),
            first=True,
        ),
        Mistake(
            lambda a: a["m = n"] == "wrong",
            N_(
                "at m = n both vectors turn by the same R_m, and (R_m q)·(R_m k) = q·k "
                "in any layout: the diagonal of the scores is the trained one"
            ),
        ),
        Mistake(
            lambda a: a["n = 0"] == "right",
            N_(
                "at n = 0 the key is left alone, but the query is still turned by R_m, "
                "and which coordinates R_m turns together depends on the layout: only "
                "m = 0 in that column is right"
            ),
        ),
        Mistake(
            lambda a: a["m - n = 1"] == "right",
            N_(
                "offset 1 turns each pair by θ_i, but the interleaved code turns "
                "coordinates (2i, 2i + 1) together, which the trained model never "
                "paired: the turn lands on the wrong coordinates"
            ),
        ),
    ],
    right=N_(
        "only the diagonal m = n survives: there the rotations cancel in any layout; "
        "every other score turns the wrong coordinates together"
    ),
)
def check_unpermuted_scores(answer):
    """A half-layout W_q, W_k run by interleaved RoPE without permuting their rows: which
    scores (m = n, n = 0, m - n = 1) are still the trained model's?"""
