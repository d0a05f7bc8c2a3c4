"""Checkers for lessons 1 and 2 (sinusoidal and learned position encodings).

    from rope_lib.exercises import absolute as ex
    ex.check_wavelengths(wavelengths)    # the wavelength of every pair, d_model = 64
    ex.check_shift_block(block)          # the 2x2 block of M_k for pair i = 1, k = 5, d_model = 8
    ex.check_offset_dots(dots)           # PE(m)·PE(m+Δ) for Δ = 0..31, d_model = 16
    ex.check_unfinished_pairs(count)     # pairs that never finish a turn in 512 positions
    ex.check_head_offsets(pair)          # the offsets heads A = M_1 M_1 and A = M_1^T attend to

Each expected value is computed here from the formula, independently of the learner's route.
"""

from __future__ import annotations

import functools
import math

import torch

from ..language import N_, _
from ..sinusoidal import sinusoidal_encoding
from . import Mistake, NotYet, Word, either, exercise
from .answers import as_count, as_pair, as_tensor

F64 = torch.float64
TWO_PI = 2 * math.pi

# Exercise 1: d_model = 64, base = 10000; pairs i = 0 .. 31.
I32 = torch.arange(32, dtype=F64)
WAVELENGTHS = TWO_PI * 10000.0 ** (2 * I32 / 64)


@exercise(
    read=as_tensor,
    name="wavelengths",
    expected=WAVELENGTHS,
    placeholder=N_(
        "replace `None` with a tensor of 32 wavelengths, one per pair (i = 0 .. 31)"
    ),
    mistakes=[
        Mistake(
            lambda a: a.numel() == 64,
            N_(
                "you gave {d} numbers, one per coordinate; the sin and cos of a pair "
                "share one frequency, so there are d_model/2 = {pairs} wavelengths"
            ),
        ),
        Mistake(
            lambda a: a.shape != (32,),
            N_("wavelengths should have shape {expected} (one per pair), got {got}"),
        ),
        Mistake(
            WAVELENGTHS / TWO_PI,
            N_(
                "these are base**(2i/d_model), the divisor in the formula (what a common "
                "write-up calls the period T_i); one full turn takes 2*pi radians, so "
                "the wavelength is 2*pi times that"
            ),
        ),
        Mistake(
            either(1 / WAVELENGTHS, TWO_PI / WAVELENGTHS, 1 / (WAVELENGTHS / TWO_PI)),
            N_(
                "these are frequencies (how fast a pair turns), not wavelengths; "
                "wavelength = 2*pi / frequency"
            ),
        ),
        Mistake(
            WAVELENGTHS.flip(0),
            N_(
                "right numbers, reversed order: pair i = 0 is the fastest (wavelength 2*pi)"
            ),
        ),
        Mistake(
            TWO_PI * 10000.0 ** (I32 / 64),
            N_("the exponent is 2i/d_model (i counts pairs), not i/d_model"),
        ),
        Mistake(
            TWO_PI * 10000.0 ** (2 * (I32 + 1) / 64),
            N_(
                "off by one pair: the pairs start at i = 0, whose wavelength is exactly "
                "2*pi"
            ),
        ),
        Mistake(
            360 * 10000.0 ** (2 * I32 / 64),
            N_(
                "you used 360 (degrees) for one turn; the angles m·θ_i are in radians, "
                "so use 2*pi"
            ),
        ),
    ],
    facts={"d": 64, "pairs": 32, "first": TWO_PI, "last": float(WAVELENGTHS[-1])},
    right=N_(
        "the wavelengths run from 2*pi = {first:.4f} to {last:.1f} tokens (2*pi * "
        "10000**(62/64), just short of 2*pi * 10000)"
    ),
)
def check_wavelengths(answer):
    """Wavelengths (tokens per full turn) of the d_model/2 = 32 pairs, d_model = 64, base =
    10000."""


# Exercise 2: d_model = 8, pair 1 (theta_1 = 0.1), shift k = 5.
THETA_1 = 10000.0 ** (-2 / 8)
ANGLE = 5 * THETA_1


def _block(angle: float) -> torch.Tensor:
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, s], [-s, c]], dtype=F64)


def _either_way(block: torch.Tensor) -> either:
    return either(block, block.T)


@exercise(
    read=as_tensor,
    name=Word(N_("the block")),
    expected=_block(ANGLE),
    placeholder=N_("replace `None` with a 2x2 tensor"),
    mistakes=[
        Mistake(
            lambda a: a.shape != (2, 2),
            N_("the block should have shape (2, 2), got {got}"),
        ),
        Mistake(
            _block(ANGLE).T,
            N_(
                "this is the textbook rotation [[cos, -sin], [sin, cos]], written for a "
                "pair ordered (cos, sin); the encoding stores the pair as (sin, cos), "
                "column 2i first, so the signs of the sines swap (your matrix maps PE(m) "
                "to PE(m - 5))"
            ),
        ),
        Mistake(
            _either_way(_block(math.radians(ANGLE))),
            N_("the angle Δ·θ_1 = {angle:.4f} is in radians; you used degrees"),
        ),
        Mistake(
            _either_way(_block(5 * 1.0)),
            N_(
                "you used pair 0's frequency θ_0 = 1; pair 1 (columns 2 and 3) turns at "
                "θ_1 = 10000**(-2/8) = 0.1"
            ),
        ),
        Mistake(
            _either_way(_block(THETA_1)),
            N_(
                "that is the block for a shift of Δ = 1; for Δ = {k} the angle is "
                "Δ·θ_1 = {angle:.4f}"
            ),
        ),
        Mistake(
            _block(5 * 10000.0 ** (-1 / 8)),
            N_(
                "the frequency of pair i is base**(-2i/d_model); you used "
                "base**(-i/d_model)"
            ),
        ),
    ],
    facts={"angle": ANGLE, "k": 5},
    right=N_(
        "rotating the (sin, cos) pair by Δ·θ_1 = {angle:.4f} rad; no m appears anywhere, "
        "which is why one fixed matrix M_k shifts every position"
    ),
)
def check_shift_block(answer):
    """The 2x2 block B with (PE[m+5, 2], PE[m+5, 3]) = B @ (PE[m, 2], PE[m, 3]) for
    d_model = 8."""


# Exercise 3: d_model = 16, offsets Δ = 0 .. 31.
DELTAS = torch.arange(32, dtype=F64)[:, None]
THETA_16 = 10000.0 ** (-torch.arange(0, 16, 2, dtype=F64) / 16)
DOTS = torch.cos(DELTAS * THETA_16).sum(-1)


@exercise(
    read=as_tensor,
    name="dots",
    expected=DOTS,
    placeholder=N_("replace `None` with a tensor of 32 dot products, for Δ = 0 .. 31"),
    mistakes=[
        Mistake(
            lambda a: a.dim() == 2,
            N_(
                "you gave a {shape} table; sum over the coordinates to get one number "
                "per offset Δ (shape ({k},))"
            ),
        ),
        Mistake(
            lambda a: a.shape != (32,),
            N_(
                "dots should have shape {expected}, one number per Δ = 0 .. {last}, got "
                "{got}"
            ),
        ),
        Mistake(
            DOTS / 8,
            N_(
                "these are cosine similarities (divided by |PE|^2 = d_model/2 = 8); the "
                "exercise asks for the raw dot product, which is 8 at Δ = 0"
            ),
        ),
        Mistake(
            2 * DOTS,
            N_(
                "twice too large: each pair gives ONE term cos(Δ·θ_i) (sin*sin + "
                "cos*cos), not two"
            ),
        ),
        Mistake(
            torch.sin(DELTAS * THETA_16).sum(-1),
            N_(
                "you summed sin(Δ·θ_i); sin(a) sin(b) + cos(a) cos(b) = cos(a - b), so "
                "each pair gives cos(Δ·θ_i)"
            ),
        ),
        Mistake(
            torch.cos(DELTAS * 10000.0 ** (-torch.arange(8, dtype=F64) / 16)).sum(-1),
            N_(
                "the frequencies are base**(-2i/d_model), i = 0 .. 7; you used "
                "base**(-i/d_model)"
            ),
        ),
        Mistake(
            lambda a: abs(float(a[0]) - 8) > 1e-3,
            lambda f: _(
                "check Δ = 0 first: PE(m).PE(m) = |PE(m)|^2 = d_model/2 = {norm:g}, you "
                "have {got:.4f}"
            ).format(norm=8.0, got=float(f["value"][0])),
        ),
    ],
    facts={"k": 32, "last": 31},
    right=lambda f: _(
        "from {first:.4f} at Δ = 0 down to {last:.4f} at Δ = 31: one number per offset, "
        "whatever m you started from"
    ).format(first=float(DOTS[0]), last=float(DOTS[-1])),
)
def check_offset_dots(answer):
    """PE(m)·PE(m+Δ) for Δ = 0, 1, ..., 31 with d_model = 16, base = 10000 (a tensor of 32
    numbers)."""


# Exercise 4: d_model = 128 (64 pairs), base = 10000, training length L = 512.
I64 = torch.arange(64, dtype=F64)
LAMBDAS = TWO_PI * 10000.0 ** (2 * I64 / 128)
UNFINISHED = int((LAMBDAS > 512).sum())


def _one_count(answer, name: str, **options) -> int:
    if isinstance(answer, torch.Tensor) and answer.numel() > 1:
        raise NotYet(
            _(
                "give one number, the count; you gave a tensor of shape {shape} (a "
                "boolean mask? then sum it)"
            ).format(shape=tuple(answer.shape))
        )
    return as_count(answer, name, **options)


@exercise(
    read=_one_count,
    name=Word(N_("the count")),
    options={"what": N_("a number of pairs")},
    expected=UNFINISHED,
    placeholder=N_("replace `None` with a whole number (how many pairs)"),
    mistakes=[
        Mistake(
            int((LAMBDAS / TWO_PI > 512).sum()),
            N_(
                "you compared base**(2i/d_model) with L; the wavelength is 2*pi times that"
            ),
        ),
        Mistake(
            int((LAMBDAS <= 512).sum()),
            N_(
                "that counts the pairs that DO finish a turn within 512 tokens; the "
                "question asks for the others"
            ),
        ),
        Mistake(
            2 * UNFINISHED,
            N_(
                "that counts coordinates (sin and cos columns); the question counts pairs"
            ),
        ),
        Mistake(
            int((TWO_PI * 10000.0 ** (I64 / 128) > 512).sum()),
            N_("the exponent is 2i/d_model with i = 0 .. 63, not i/d_model"),
        ),
        Mistake(
            lambda n: not 0 <= n <= 64,
            N_(
                "there are only {pairs} pairs, so the count is between 0 and {pairs}; "
                "got {n}"
            ),
        ),
    ],
    facts=lambda n, expected: {"n": n, "first": 64 - n, "length": 512, "pairs": 64},
    otherwise=N_(
        "{n} is not it: compute the wavelength 2*pi * 10000**(2i/128) of each pair i = "
        "0 .. 63 and count those above {length}"
    ),
    right=N_(
        "{n} of the 64 pairs (i = {first} .. 63) have wavelengths over {length} tokens: "
        "during training they only ever visit an arc of their circle, and positions past "
        "512 take them onto arcs no weight was fitted to"
    ),
)
def check_unfinished_pairs(answer):
    """How many of the 64 pairs (d_model = 128, base = 10000) have a wavelength longer than
    the training length L = 512, so that training never shows them a full turn? An int."""


# Lesson 2's exercise 2: d_model = 16, every query m = 2 .. 2047 (m = 1 has one key less).
M = torch.arange(2, 2048)


@functools.cache
def _head_offsets() -> tuple[int, int]:
    """The offset m - n that heads A = M_1 M_1 and A = M_1^T attend to, from the table and
    the shift written out here (PE[m + 1] = M_1 PE[m], one 2x2 block per pair)."""
    table = sinusoidal_encoding(2048, 16, 10000.0).to(F64)
    theta = 10000.0 ** (-torch.arange(8, dtype=F64) / 8)
    m1 = torch.zeros(16, 16, dtype=F64)
    for i, t in enumerate(theta.tolist()):  # (sin, cos) -> (sin(a + t), cos(a + t))
        c, s = math.cos(t), math.sin(t)
        m1[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, s], [-s, c]])
    assert torch.allclose(table[:-1] @ m1.T, table[1:], atol=1e-6)  # the shift, checked
    offsets = []
    for a in (m1 @ m1, m1.T):
        scores = table @ a @ table.T
        scores = scores.masked_fill(
            torch.ones_like(scores, dtype=torch.bool).triu(1), -math.inf
        )
        looks = M - scores.argmax(-1)[M]
        assert (looks == looks[0]).all(), "a head that changes its offset with m"
        offsets.append(int(looks[0]))
    return tuple(offsets)


@exercise(
    read=lambda answer, name: as_pair(answer, name, whole=True),
    name=Word(N_("the answer")),
    expected=lambda: _head_offsets(),
    same=lambda got, want: tuple(int(v) for v in got) == tuple(want),
    placeholder=N_(
        "replace `None` with two whole numbers: (offset for M_1 M_1, offset for M_1^T)"
    ),
    mistakes=[
        Mistake(
            lambda v: v[0] == 1,
            N_(
                "M_1 M_1 shifts by one step twice: it is M_2, and s(m, n) = PE(m).PE(n + 2) "
                "is largest at n = m - 2, an offset of 2"
            ),
        ),
        Mistake(
            lambda v: v[1] == -1,
            N_(
                "M_1^T does point one step AHEAD, at n = m + 1, but the causal mask hides "
                "that key: among the keys n <= m it may see, which one scores highest?"
            ),
        ),
        Mistake(
            lambda v: v[1] == 1,
            N_(
                "M_1^T is the shift the other way, M_-1: s(m, n) = PE(m + 1).PE(n), which "
                "compares the query's NEXT position with the keys, not its previous one"
            ),
        ),
        Mistake(
            lambda v: tuple(v) == (0, 2),
            N_(
                "the two are swapped: the first is M_1 M_1's offset, the second M_1^T's"
            ),
        ),
    ],
    otherwise=N_(
        "got {value}: build each A, score s(m, n) = PE(m)^T A PE(n) over the keys n <= m "
        "and read m - argmax (offset_head_attends_to does it)"
    ),
    right=N_(
        "M_1 M_1 = M_2 attends two tokens back at every position; M_1^T wants the key "
        "one step ahead, which the mask hides, and the query itself (offset 0) wins. A "
        "fixed matrix reads a fixed offset, one step per factor of M_1"
    ),
)
def check_head_offsets(answer):
    """The offsets m - n that two position-only causal heads attend to, s(m, n) =
    PE[m] @ A @ PE[n] over keys n <= m (d_model = 16, base = 10000, m < 2048):
    (A = M_1 M_1, A = M_1^T). A pair of whole numbers."""
