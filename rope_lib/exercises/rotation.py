"""Checkers for lessons 3 (the 2D rotation, derived) and 4 (from one pair to a whole head).

Each check_i(answer) returns a Feedback; the usual mistakes get their own message: rotating
clockwise, using degrees, R_m^T R_n read as R_(m-n), a map that scales or is not a power,
swapping m and n, forgetting the sin term, rotating v, one angle per coordinate instead of per
pair, a wrap-around missed, the fast pairs left unrotated instead of the slow ones.
"""

from __future__ import annotations

import functools
import math

import torch

from ..derivation import closed_form_score
from ..language import N_, _
from ..rotary import apply_rope, inv_frequencies, rotation_2d
from . import Mistake, NotYet, close, compare_tensor, exercise, near
from .answers import as_count, as_indices, as_number, as_pair, as_tensor

F64 = torch.float64


def _rotate(vector, angle) -> torch.Tensor:
    return rotation_2d(angle) @ torch.tensor(vector, dtype=F64)


def _as_vector(size: int):
    """A reader of `size` numbers, as a float64 tensor [size]."""

    def read(answer, name: str) -> torch.Tensor:
        vector = as_tensor(answer, name)
        if vector.dim() != 1 or vector.numel() != size:
            raise NotYet(
                _("{name} should hold {size} numbers, got shape {shape}").format(
                    name=name, size=size, shape=tuple(vector.shape)
                )
            )
        return vector

    return read


# Exercise 1: rotate the query pair (0.5, -1.0) to position m = 3 with theta = 0.5.
Q, ANGLE = (0.5, -1.0), 3 * 0.5


@exercise(
    read=_as_vector(2),
    name="q_rot",
    expected=lambda: _rotate(Q, ANGLE),
    same=close(atol=1e-4),
    mistakes=lambda: [
        Mistake(
            _rotate(Q, -ANGLE),
            N_(
                "you rotated clockwise (by -m·theta). RoPE turns counter-clockwise: x' = "
                "x cos - y sin, y' = x sin + y cos. (q @ R, a row vector times R, is R^T "
                "q: clockwise too.)"
            ),
        ),
        Mistake(
            _rotate(Q, math.radians(ANGLE)),
            N_(
                "you treated m·theta = 1.5 as degrees. RoPE's angles are radians, and "
                "torch.cos / math.cos take radians: no conversion is needed."
            ),
        ),
        Mistake(
            _rotate(Q, math.degrees(ANGLE)),
            N_(
                "you converted 1.5 rad to degrees (85.94) and passed that to cos/sin, "
                "which expect radians: drop the conversion."
            ),
        ),
        Mistake(
            _rotate(Q, 0.5),
            N_(
                "you rotated by theta only: the angle is the position times the "
                "frequency, m·theta."
            ),
        ),
        Mistake(
            _rotate(Q, 3),
            N_(
                "you rotated by m only: the angle is the position times the frequency, "
                "m·theta."
            ),
        ),
        Mistake(
            torch.tensor(Q, dtype=F64),
            N_("that is q unchanged: rotate it by m·theta = 1.5 rad."),
        ),
        Mistake(
            _rotate(Q[::-1], ANGLE),
            N_(
                "you swapped q's two coordinates before rotating: the pair is (x, y) = "
                "(0.5, -1.0)."
            ),
        ),
    ],
    right=lambda f: _(
        "q rotated counter-clockwise by m·theta = {angle} rad is ({x:.4f}, {y:.4f})"
    ).format(angle=ANGLE, x=float(_rotate(Q, ANGLE)[0]), y=float(_rotate(Q, ANGLE)[1])),
    right_when_close=N_("q rotated"),
)
def check_rotated_query(answer):
    """q = (0.5, -1.0) rotated to position m = 3 with theta = 0.5: R(m theta) q."""


# Lesson 3, exercise 2: R_5^T R_2 = R_j for every theta; j = n - m = 2 - 5.
@exercise(
    read=as_count,
    name="j",
    options={"what": N_("the index of R_j")},
    expected=2 - 5,
    placeholder=N_("j is still None: replace the placeholder with a whole number"),
    mistakes=[
        Mistake(
            5 - 2,
            N_(
                "that is m - n. R_m^T = R(-m theta), so R_m^T R_n = R((n - m) theta) = "
                "R_(n-m): with m = 5 and n = 2, j = 2 - 5."
            ),
        ),
        Mistake(
            5 + 2,
            N_(
                "you added the positions: R_m^T undoes R_m (it is R_(-m)), so the angles "
                "subtract, j = n - m."
            ),
        ),
        Mistake(
            -(5 + 2),
            N_(
                "both turned back? Only R_5 is transposed: R_5^T = R_(-5), R_2 stays, "
                "j = -5 + 2."
            ),
        ),
        Mistake(
            5 * 2,
            N_(
                "angles of rotations add when the matrices multiply; they never multiply."
            ),
        ),
    ],
    facts=lambda value, expected: {"value": value},
    otherwise=N_(
        "R_5^T R_2 = R_{value} would turn by {value}·theta; R_5^T turns back by 5·theta "
        "and R_2 turns on by 2·theta"
    ),
    right=N_(
        "R_5^T R_2 = R_(2-5) = R_(-3): the key's rotation minus the query's, n - m"
    ),
)
def check_transpose_index(answer):
    """j with R_5^T R_2 = R_j for every theta (R_m = R(m theta))."""


# Lesson 3, exercise 3: which position maps make the score see m - n only.
# R(-m theta) and F^m; not 1.1^m R(m theta), not R(m^2 theta)
WISH_MAPS = frozenset({1, 3})


@exercise(
    read=lambda answer, name: as_indices(answer, name, 4),
    name="maps",
    expected=WISH_MAPS,
    same=lambda a, b: a == b,
    placeholder=N_(
        "maps is still None: replace it with the numbers of the maps, e.g. [0, 2]"
    ),
    mistakes=[
        Mistake(
            frozenset({1}),
            N_(
                "map 3 grants the wish too: F^T = F and F F = I, so (F^m)^T F^n = "
                "F^(n-m) depends on n - m only. It is useless (it only sees whether "
                "n - m is even): that, not the wish, is why step 3 drops it."
            ),
        ),
        Mistake(
            frozenset({3}),
            N_(
                "map 1 grants the wish: R(-m theta) is RoPE with the frequency -theta; "
                "R(-m theta)^T R(-n theta) = R(-(n-m) theta) sees n - m only."
            ),
        ),
        Mistake(
            frozenset({0, 1, 3}),
            N_(
                "map 0 scales: 1.1^m R(m theta) has R_m^T R_m = 1.21^m I, which changes "
                "with m, so two tokens at the same offset score differently (step 1: "
                "R_m must keep lengths)."
            ),
        ),
        Mistake(
            frozenset({1, 2, 3}),
            N_(
                "map 2 turns by m^2 theta: R_m^T R_n = R((n^2 - m^2) theta), and "
                "n^2 - m^2 is not a function of n - m (step 2: R_m must be R_1^m)."
            ),
        ),
        Mistake(
            frozenset({0, 1, 2, 3}),
            N_(
                "not every map: try the spread of the score at one offset, "
                "derivation.offset_dependence, on maps 0 and 2."
            ),
        ),
    ],
    facts=lambda value, expected: {"value": sorted(value)},
    otherwise=N_(
        "not {value}. For each map, ask whether R_m^T R_n depends on n - m only: "
        "R(a)^T R(b) = R(b - a), and a reflection F has F^T = F and F F = I."
    ),
    right=N_(
        "maps 1 and 3: a rotation either way round keeps the wish, and so does a "
        "reflection, which only sees whether the offset is even"
    ),
)
def check_wish_maps(answer):
    """Which of the maps 0: 1.1^m R(m theta), 1: R(-m theta), 2: R(m^2 theta), 3: F^m make
    the score a function of m - n for every q and k."""


# Exercise 4 of lesson 3: the score from the closed form, without rotating.
(Q1, Q2), (K1, K2), M, N, THETA = (0.8, 0.6), (-0.3, 1.1), 9, 4, 0.3


def _score(offset, theta=THETA) -> float:
    q, k = torch.tensor((Q1, Q2)), torch.tensor((K1, K2))
    return float(closed_form_score(q, k, offset, 0, theta))


@exercise(
    read=as_number,
    name="score",
    expected=lambda: _score(M - N),
    same=near(rtol=0, atol=1e-4),
    placeholder=N_("score is still None: replace the placeholder with your code"),
    mistakes=lambda: [
        Mistake(
            _score(N - M),
            N_(
                "you used n - m instead of m - n: the sin term changed sign. q turns by "
                "m·theta and k by n·theta, so the angle from k' to q' grows with m - n; "
                "the formula is (q1k1 + q2k2) cos((m-n)θ) + (q1k2 - q2k1) sin((m-n)θ) "
                "(check the sign of the sin term)."
            ),
        ),
        Mistake(
            (Q1 * K1 + Q2 * K2) * math.cos((M - N) * THETA),
            N_(
                "you kept only (q·k) cos((m-n)θ), the cos-only slip of section 6: the "
                "cross term (q1k2 - q2k1) sin((m-n)θ) is missing."
            ),
        ),
        Mistake(
            _score(M + N),
            N_("you used m + n: the score depends on the difference m - n."),
        ),
        Mistake(
            _score(M - N, math.radians(THETA)),
            N_(
                "you converted theta to radians as if it were in degrees: theta = 0.3 is "
                "already in radians per position."
            ),
        ),
        Mistake(
            Q1 * K1 + Q2 * K2,
            N_("that is q·k without rotation: the positions m and n are missing."),
        ),
        Mistake(
            _score(M - N) / math.sqrt(2),
            N_(
                "you divided by sqrt(d) = sqrt(2): this exercise asks for the plain dot "
                "product q'·k' (attention divides by sqrt(head_dim) later)."
            ),
        ),
    ],
    facts=lambda value, expected: {"score": value, "error": value - expected},
    otherwise=N_(
        "score = {score:.4f} is off by {error:+.4f}; check each of the four products "
        "q1k1, q2k2, q1k2, q2k1 and the angle (m - n)·theta = 1.5"
    ),
    right=lambda f: _(
        "score = {score:.4f}: it depends on m - n = {offset} only"
    ).format(score=_score(M - N), offset=M - N),
)
def check_closed_form_score(answer):
    """The score q_m . k_n for q = (0.8, 0.6), k = (-0.3, 1.1), m = 9, n = 4, theta = 0.3."""


# Lesson 4, exercise 3: RoPE inside attention.
def rope_attention_inputs():
    """q, k, v [batch 1, heads 2, seq 5, head_dim 4] (float64, fixed random values) and
    positions 0..4."""
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 5, 4, generator=g, dtype=F64) for _ in range(3))
    return q, k, v, torch.arange(5)


def _attention(q, k, v):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return scores.softmax(-1) @ v


@functools.cache
def _attention_table():
    """The expected output and the known mistakes of check_rope_attention."""
    q, k, v, pos = rope_attention_inputs()
    rq, rk, rv = (apply_rope(t, pos) for t in (q, k, v))
    expected = _attention(rq, rk, v)
    return expected, [
        Mistake(
            _attention(rq, rk, rv),
            N_(
                "you rotated v as well. RoPE goes on q and k only: their dot product is "
                "where positions meet. A rotated v would put absolute positions into the "
                "output."
            ),
        ),
        Mistake(
            apply_rope(expected, pos),
            N_(
                "you rotated the attention output: rotate q and k before the dot "
                "product instead."
            ),
        ),
        Mistake(
            _attention(q, k, v),
            N_(
                "nothing was rotated: apply rope_lib.apply_rope(q, positions) and the "
                "same to k."
            ),
        ),
        Mistake(
            _attention(rq, k, v),
            N_(
                "only q was rotated: k needs its rotation too, or the score sees "
                "absolute m, not m - n."
            ),
        ),
        Mistake(
            _attention(q, rk, v),
            N_(
                "only k was rotated: q needs its rotation too, or the score sees "
                "absolute n, not m - n."
            ),
        ),
        Mistake(
            _attention(apply_rope(q, -pos), apply_rope(k, -pos), v),
            N_(
                "you rotated clockwise (negative angles): use apply_rope(x, positions) "
                "with the positions as they are."
            ),
        ),
        Mistake(
            rq @ rk.transpose(-1, -2) / math.sqrt(4) @ v,
            N_("the softmax is missing: weights = softmax(scores, dim=-1)."),
        ),
        *(
            Mistake(
                (rq @ rk.transpose(-1, -2) / math.sqrt(4)).softmax(dim) @ v,
                N_(
                    "the softmax ran over the wrong axis: each query's weights over the "
                    "keys must sum to 1, so take softmax(dim=-1), along the last axis of "
                    "the scores [batch, heads, query, key]."
                ),
            )
            for dim in (-2, 1)
        ),
        Mistake(
            (rq @ rk.transpose(-1, -2)).softmax(-1) @ v,
            N_(
                "the scores should be divided by sqrt(head_dim) = 2 before the softmax."
            ),
        ),
    ]


@exercise(
    read=as_tensor,
    name="out",
    expected=lambda: _attention_table()[0],
    same=close(atol=1e-4),
    placeholder=N_("out is still None: replace the placeholder with your code"),
    mistakes=lambda: _attention_table()[1],
    right=N_("RoPE on q and k only: the values carry content, not position"),
)
def check_rope_attention(answer):
    """Attention output with RoPE on q and k (not v), no mask, scores scaled by
    1/sqrt(head_dim)."""


# Lesson 3, exercise 5: positions (m2, n2), both >= 10, with the score of (7, 3).
@exercise(
    read=as_pair,
    name="positions_pair",
    options={"whole": True, "what": N_("a pair of integers (m2, n2)")},
    expected=7 - 3,
    same=lambda pair, offset: pair[0] - pair[1] == offset,
    placeholder=N_(
        "positions_pair is still None: replace the placeholder with a pair (m2, n2)"
    ),
    mistakes=[
        Mistake(
            lambda pair: min(pair) < 10,
            N_("both positions must be at least {min}, got ({m2}, {n2})"),
            first=True,
        ),
        Mistake(
            lambda pair: pair[1] - pair[0] == 4,
            N_(
                "you swapped m and n: ({m2}, {n2}) has m - n = {diff}, not {offset}. The "
                "score is not symmetric: the sin term (q1k2 - q2k1) sin((m-n)θ) changes "
                "sign when m and n swap."
            ),
        ),
        Mistake(
            lambda pair: sum(pair) == 7 + 3,
            N_("you kept m + n fixed: the score depends on the difference m - n."),
        ),
        Mistake(
            lambda pair: pair[1] != 0 and pair[0] * 3 == pair[1] * 7,
            N_(
                "you kept the ratio m / n: the score depends on the difference m - n, "
                "not the ratio."
            ),
        ),
    ],
    facts=lambda pair, offset: {
        "m2": pair[0],
        "n2": pair[1],
        "diff": pair[0] - pair[1],
        "offset": offset,
        "min": 10,
    },
    otherwise=N_(
        "({m2}, {n2}) has m - n = {diff}; (7, 3) has m - n = {offset}. Shift both by the "
        "same amount."
    ),
    right=N_(
        "({m2}, {n2}) has m - n = {offset}, like (7, 3): the same score for every q, k "
        "and theta"
    ),
)
def check_shifted_positions(answer):
    """Positions (m2, n2), both >= 10, whose score equals that of (m, n) = (7, 3) for every
    q, k, theta."""


# Lesson 4, exercise 2: the relative angles of a d = 8 head (base 10000) at offset 8.
I4 = torch.arange(4, dtype=F64)


def _angles(answer, name: str) -> torch.Tensor:
    angles = as_tensor(answer, name)
    if angles.dim() > 1 and angles.numel() == angles.shape[-1]:
        angles = angles.flatten()  # e.g. [[...]]: one row of angles
    return angles


def _reduced(angles: torch.Tensor) -> bool:
    """The angles reduced modulo 2π (to [0, 2π) or [-π, π))."""
    expected, same = _relative(), close(atol=1e-5)
    return same(angles, torch.remainder(expected, 2 * math.pi)) or same(
        angles, torch.remainder(expected + math.pi, 2 * math.pi) - math.pi
    )


def _relative() -> torch.Tensor:
    return 8 * inv_frequencies(8, 10000.0).to(F64)


@exercise(
    read=_angles,
    name="angles",
    expected=_relative,
    same=close(atol=1e-5),
    compare=functools.partial(compare_tensor, atol=1e-5),
    placeholder=N_("angles is still None: replace the placeholder with your code"),
    mistakes=lambda: [
        Mistake(
            _relative().repeat_interleave(2),
            N_(
                "you gave one angle per coordinate (8 numbers): RoPE has one angle per "
                "pair, d/2 = 4 of them; coordinates 2i and 2i+1 share pair i's angle."
            ),
        ),
        Mistake(
            8 * 10000.0 ** (-torch.arange(8, dtype=F64) / 8),
            N_(
                "you used one frequency per coordinate, base^(-j/d) for j = 0..7: the "
                "pairs use base^(-2i/d), i = 0..3."
            ),
        ),
        Mistake(
            8 * 10000.0 ** (-I4 / 8),
            N_(
                "the exponent is -2i/d, not -i/d: with d = 8 the frequencies are 1, 0.1, "
                "0.01, 0.001."
            ),
        ),
        Mistake(
            8 * 10000.0 ** (2 * I4 / 8),
            N_(
                "the exponent has the wrong sign: theta_i = base^(-2i/d) shrinks as i "
                "grows."
            ),
        ),
        Mistake(
            _relative().flip(0),
            N_(
                "the order is reversed: pair 0 (the first two coordinates) has the "
                "highest frequency, theta_0 = 1."
            ),
        ),
        Mistake(
            torch.rad2deg(_relative()),
            N_("those are degrees: RoPE's angles are radians."),
        ),
        Mistake(
            _relative() / 8,
            N_("those are the frequencies theta_i: multiply by the offset m - n = 8."),
        ),
        Mistake(
            _reduced,
            N_(
                "you reduced the angles modulo 2π: as rotations they are the same, but "
                "the question asks for the angle (m - n)·θ_i itself, which grows with "
                "the offset (pair 0 turns 8 rad, more than one full turn)"
            ),
        ),
    ],
    right=N_(
        "pair 0 turns a full radian per position, the last pair 1000 times slower"
    ),
    right_when_close=N_("angles"),
)
def check_relative_angles(answer):
    """The relative angles (m - n) theta_i of the 4 pairs of a d = 8 head (base 10000) at
    m - n = 8."""


# Lesson 4, exercise 1: an offset in 30..60 where the fast pair (theta = 1) repeats offset 0.
def _past_turn(offset: int) -> float:
    """How far offset * 1 rad is from the nearest whole number of turns (radians); NaN for
    an offset too large to be a float."""
    if abs(offset) > 1e15:
        return math.nan
    return abs(math.remainder(offset, 2 * math.pi))


@exercise(
    read=as_count,
    name="offset",
    options={"what": N_("between 30 and 60")},
    expected=44,
    same=lambda a, b: a == b,
    placeholder=N_("offset is still None: replace the placeholder with a whole number"),
    mistakes=[
        Mistake(
            lambda v: not 30 <= v <= 60,
            N_("the offset should be between 30 and 60, got {value}"),
            first=True,
        ),
        Mistake(
            38,
            N_(
                "6 turns are 6 · 2π = 37.70 rad: offset 38 is 0.30 rad past, and the "
                "fast pair's score there differs visibly. Look for a multiple of 2π "
                "closer to a whole number."
            ),
        ),
        Mistake(
            31,
            N_(
                "5 turns are 31.42 rad: offset 31 is 0.42 rad short of it. Which "
                "multiple of 2π lies closest to a whole number?"
            ),
        ),
        Mistake(
            50,
            N_(
                "8 turns are 50.27 rad: offset 50 is 0.27 rad short. 7 turns, 43.98 "
                "rad, lie closer to a whole number."
            ),
        ),
        Mistake(
            57,
            N_("9 turns are 56.55 rad: offset 57 is 0.45 rad past."),
        ),
    ],
    facts=lambda value, expected: {"value": value, "gap": _past_turn(value)},
    otherwise=N_(
        "offset {value} turns the fast pair {gap:.2f} rad away from a whole number of "
        "turns; find the multiple of 2π = 6.2832 closest to a whole number"
    ),
    right=N_(
        "44 rad is 7 turns and 0.0177 rad: the fast pair sees offset 44 almost as offset "
        "0, and cannot tell them apart on its own"
    ),
)
def check_repeat_offset(answer):
    """An offset between 30 and 60 that the pair with theta = 1 sees almost as offset 0."""


# Lesson 4, exercise 4: p-RoPE with p = 3/4 on a d = 16 head: which pairs stay unrotated.
@exercise(
    read=lambda answer, name: as_indices(answer, name, 16),
    name="pairs",
    expected=frozenset({6, 7}),
    same=lambda a, b: a == b,
    placeholder=N_(
        "pairs is still None: replace the placeholder with the pair indices"
    ),
    mistakes=[
        Mistake(
            lambda a: any(i >= 8 for i in a),
            N_(
                "a head of d = 16 has 8 pairs, i = 0..7; indices of 8 or more look like "
                "coordinates: answer with pair indices"
            ),
            first=True,
        ),
        Mistake(
            frozenset({0, 1}),
            N_(
                "those are the fastest pairs: they build the sharp positional patterns "
                "(previous token, same token). p-RoPE leaves the slowest pairs, the "
                "semantic channels, unrotated."
            ),
        ),
        Mistake(
            frozenset({7}),
            N_(
                "a quarter of 8 pairs is 2 pairs, not one: rotate 6, leave the 2 slowest."
            ),
        ),
        Mistake(
            frozenset(range(6)),
            N_(
                "those are the 6 pairs p-RoPE rotates (p = 3/4 of 8); the question asks "
                "for the ones it leaves alone."
            ),
        ),
        Mistake(
            frozenset(range(2, 8)),
            N_(
                "6 pairs left alone is 3/4 of the head: p = 3/4 is the share that is "
                "rotated, so 2 pairs stay unrotated."
            ),
        ),
    ],
    facts=lambda value, expected: {"value": sorted(value)},
    otherwise=N_(
        "not {value}: p = 3/4 rotates 6 of the 8 pairs and leaves 2 alone; which two "
        "pairs turn least over a context?"
    ),
    right=N_(
        "pairs 6 and 7, the slowest: they barely turn over a context, and p-RoPE lets "
        "them carry content with no rotation at all"
    ),
)
def check_unrotated_pairs(answer):
    """The pairs p-RoPE (p = 3/4) leaves unrotated in a d = 16 head (base 10000)."""


# Lesson 4, exercise 5: the shapes of rope_by_steps' angles, cos and Q_pairs for batch 4,
# length 10, 8 heads of d_head 64.
SHAPES_RIGHT = ((10, 32), (1, 1, 10, 32), (4, 8, 10, 32, 2))


def _read_shapes(answer, name: str) -> tuple:
    """Three shapes (angles, cos, Q_pairs), each a sequence of whole numbers (a list, a
    tuple, a torch.Size or a 1-D tensor)."""
    cannot = NotYet(
        _(
            "{name} should be three shapes (angles, cos, Q_pairs), each a list of "
            "whole numbers, e.g. ([1, 2], [1, 2, 3, 4], [1, 2, 3, 4, 5])"
        ).format(name=name)
    )
    if isinstance(answer, (str, bytes, torch.Tensor)):
        raise cannot
    try:
        parts = list(answer)
    except Exception:
        raise cannot from None
    if len(parts) != 3 or any(isinstance(part, (str, bytes)) for part in parts):
        raise cannot
    shapes = []
    for part in parts:
        sizes = as_tensor(part, name)  # a meta tensor, NaN, text: said by as_tensor
        if sizes.dim() != 1 or sizes.is_complex() or (sizes != sizes.round()).any():
            raise cannot
        shapes.append(tuple(int(x) for x in sizes.tolist()))
    return tuple(shapes)


@exercise(
    read=_read_shapes,
    name="shapes",
    expected=SHAPES_RIGHT,
    same=lambda a, b: a == b,
    placeholder=N_(
        "shapes is still None: replace it with three shapes, (angles, cos, Q_pairs)"
    ),
    mistakes=[
        Mistake(
            lambda v: 64 in v[0] or 64 in v[1] or v[2][-2:-1] == (64,),
            N_(
                "one angle per pair, not per coordinate: d_head = 64 is 32 pairs, so the "
                "last axis of angles and cos, and the pair axis of Q_pairs, is 32."
            ),
            first=True,
        ),
        Mistake(
            lambda v: v[2][:3] == (4, 10, 8),
            N_(
                "step 1 moves the heads before the length: Q is [batch, n_heads, len, "
                "d_head] = [4, 8, 10, 64], so Q_pairs is [4, 8, 10, 32, 2]."
            ),
        ),
        Mistake(
            lambda v: len(v[0]) > 2,
            N_(
                "the angles depend only on the position and the pair: one table "
                "[len, d_head/2] serves every sequence and every head."
            ),
        ),
        Mistake(
            lambda v: v[1] == (10, 32),
            N_(
                "cos is unsqueezed twice, [1, 1, len, d_head/2], so that it broadcasts "
                "over batch and heads."
            ),
        ),
        Mistake(
            lambda v: v[1] == (4, 8, 10, 32),
            N_(
                "cos needs no copy per sequence and head: ones in those places "
                "broadcast, [1, 1, 10, 32]."
            ),
        ),
    ],
    facts=lambda value, expected: {
        "angles": list(value[0]),
        "cos": list(value[1]),
        "pairs": list(value[2]),
    },
    otherwise=N_(
        "you gave angles {angles}, cos {cos}, Q_pairs {pairs}. Batch 4, length 10, "
        "8 heads, and d_head = 64 makes 32 pairs; check each axis against section 2's "
        "printout."
    ),
    right=N_(
        "angles [10, 32], cos [1, 1, 10, 32], Q_pairs [4, 8, 10, 32, 2]: one angle per "
        "position and pair, broadcast over batch and heads"
    ),
)
def check_step_shapes(answer):
    """The shapes of angles, cos and Q_pairs in rope_by_steps for batch 4, length 10,
    8 heads of d_head 64."""
