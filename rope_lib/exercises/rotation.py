"""Checkers for lesson 3 (the 2D rotation derivation of RoPE).

Each check_i(answer) returns a Feedback; the usual mistakes get their own message: rotating
clockwise, using degrees, swapping m and n, forgetting the sin term, rotating v, one angle per
coordinate instead of per pair.
"""

from __future__ import annotations

import math

import torch

from ..derivation import closed_form_score
from ..language import _
from ..rotary import apply_rope, inv_frequencies, rotation_2d
from . import Feedback, compare_tensor, correct, not_yet
from .answers import guarded, read_number, read_pair, read_tensor

# Exercise 1: rotate the query pair (0.5, -1.0) to position m = 3 with theta = 0.5.
EX1_Q = (0.5, -1.0)
EX1_M, EX1_THETA = 3, 0.5

# Exercise 2: the score from the closed form, without rotating.
EX2_Q, EX2_K = (0.8, 0.6), (-0.3, 1.1)
EX2_M, EX2_N, EX2_THETA = 9, 4, 0.3

# Exercise 4: the positions whose score the learner must reproduce.
EX4_M, EX4_N, EX4_MIN = 7, 3, 10

# Exercise 5: the relative angles of a d = 8 head at offset 8.
EX5_HEAD_DIM, EX5_OFFSET, EX5_BASE = 8, 8, 10000.0


def _rotate(vector, angle) -> torch.Tensor:
    return rotation_2d(angle) @ torch.tensor(vector, dtype=torch.float64)


def _close(answer: torch.Tensor, expected: torch.Tensor, atol: float = 1e-4) -> bool:
    return answer.shape == expected.shape and torch.allclose(
        answer, expected.to(answer.dtype), atol=atol
    )


def _as_vector(answer, name: str, size: int):
    """answer as a float64 tensor [size], or a Feedback saying why not."""
    vector = read_tensor(answer, name)
    if isinstance(vector, Feedback):
        return vector
    if vector.dim() != 1 or vector.numel() != size:
        return not_yet(
            _("{name} should hold {size} numbers, got shape {shape}").format(
                name=name, size=size, shape=tuple(vector.shape)
            )
        )
    return vector


@guarded
def check_rotated_query(answer) -> Feedback:
    """q = (0.5, -1.0) rotated to position m = 3 with theta = 0.5: R(m theta) q."""
    vector = _as_vector(answer, "q_rot", 2)
    if isinstance(vector, Feedback):
        return vector
    angle = EX1_M * EX1_THETA
    expected = _rotate(EX1_Q, angle)
    if _close(vector, expected):
        return correct(
            _(
                "q rotated counter-clockwise by m·theta = {angle} rad is "
                "({x:.4f}, {y:.4f})"
            ).format(angle=angle, x=float(expected[0]), y=float(expected[1]))
        )
    mistakes = [
        (
            _rotate(EX1_Q, -angle),
            _(
                "you rotated clockwise (by -m·theta). RoPE turns counter-clockwise: "
                "x' = x cos - y sin, y' = x sin + y cos. (q @ R, a row vector times R, "
                "is R^T q: clockwise too.)"
            ),
        ),
        (
            _rotate(EX1_Q, math.radians(angle)),
            _(
                "you treated m·theta = 1.5 as degrees. RoPE's angles are radians, "
                "and torch.cos / math.cos take radians: no conversion is needed."
            ),
        ),
        (
            _rotate(EX1_Q, math.degrees(angle)),
            _(
                "you converted 1.5 rad to degrees (85.94) and passed that to cos/sin, "
                "which expect radians: drop the conversion."
            ),
        ),
        (
            _rotate(EX1_Q, EX1_THETA),
            _(
                "you rotated by theta only: the angle is the position times the "
                "frequency, m·theta."
            ),
        ),
        (
            _rotate(EX1_Q, EX1_M),
            _(
                "you rotated by m only: the angle is the position times the frequency, "
                "m·theta."
            ),
        ),
        (
            torch.tensor(EX1_Q, dtype=torch.float64),
            _("that is q unchanged: rotate it by m·theta = 1.5 rad."),
        ),
        (
            _rotate(EX1_Q[::-1], angle),
            _(
                "you swapped q's two coordinates before rotating: "
                "the pair is (x, y) = (0.5, -1.0)."
            ),
        ),
    ]
    for wrong, message in mistakes:
        if _close(vector, wrong):
            return not_yet(message)
    problem = compare_tensor(vector, expected, "q_rot")
    return problem if problem is not None else correct(_("q rotated"))


def _score(q, k, offset, theta) -> float:
    return float(closed_form_score(torch.tensor(q), torch.tensor(k), offset, 0, theta))


@guarded
def check_closed_form_score(answer) -> Feedback:
    """The score q_m . k_n for q = (0.8, 0.6), k = (-0.3, 1.1), m = 9, n = 4, theta = 0.3."""
    if answer is None:
        return not_yet(_("score is still None: replace the placeholder with your code"))
    value = read_number(answer, "score")
    if isinstance(value, Feedback):
        return value
    (q1, q2), (k1, k2) = EX2_Q, EX2_K
    offset = EX2_M - EX2_N
    expected = _score(EX2_Q, EX2_K, offset, EX2_THETA)
    if abs(value - expected) < 1e-4:
        return correct(
            _("score = {score:.4f}: it depends on m - n = {offset} only").format(
                score=expected, offset=offset
            )
        )
    dot = q1 * k1 + q2 * k2
    a = offset * EX2_THETA
    mistakes = [
        (
            _score(EX2_Q, EX2_K, -offset, EX2_THETA),
            _(
                "you used n - m instead of m - n: the sin term changed sign. "
                "q turns by m·theta and k by n·theta, so the angle from k' to q' grows "
                "with m - n; the formula is (q1k1 + q2k2) cos((m-n)θ) + (q1k2 - q2k1) "
                "sin((m-n)θ) (check the sign of the sin term)."
            ),
        ),
        (
            dot * math.cos(a),
            _(
                "you kept only (q·k) cos((m-n)θ), as a common write-up's g does: the "
                "cross term (q1k2 - q2k1) sin((m-n)θ) is missing."
            ),
        ),
        (
            _score(EX2_Q, EX2_K, EX2_M + EX2_N, EX2_THETA),
            _("you used m + n: the score depends on the difference m - n."),
        ),
        (
            _score(EX2_Q, EX2_K, offset, math.radians(EX2_THETA)),
            _(
                "you converted theta to radians as if it were in degrees: theta = 0.3 "
                "is already in radians per position."
            ),
        ),
        (dot, _("that is q·k without rotation: the positions m and n are missing.")),
        (
            expected / math.sqrt(2),
            _(
                "you divided by sqrt(d) = sqrt(2): this exercise asks for the plain dot "
                "product q'·k' (attention divides by sqrt(head_dim) later)."
            ),
        ),
    ]
    for wrong, message in mistakes:
        if abs(value - wrong) < 1e-4:
            return not_yet(message)
    return not_yet(
        _(
            "score = {score:.4f} is off by {error:+.4f}; check each of the four products "
            "q1k1, q2k2, q1k2, q2k1 and the angle (m - n)·theta = 1.5"
        ).format(score=value, error=value - expected)
    )


def rope_attention_inputs():
    """q, k, v [batch 1, heads 2, seq 5, head_dim 4] (float64, fixed random values) and positions 0..4."""
    g = torch.Generator().manual_seed(2)
    q, k, v = (
        torch.randn(1, 2, 5, 4, generator=g, dtype=torch.float64) for _ in range(3)
    )
    return q, k, v, torch.arange(5)


def _attention(q, k, v):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return scores.softmax(-1) @ v


@guarded
def check_rope_attention(answer) -> Feedback:
    """Attention output with RoPE on q and k (not v), no mask, scores scaled by 1/sqrt(head_dim)."""
    if answer is None:
        return not_yet(_("out is still None: replace the placeholder with your code"))
    q, k, v, pos = rope_attention_inputs()
    rq, rk, rv = (apply_rope(t, pos) for t in (q, k, v))
    expected = _attention(rq, rk, v)
    answer = read_tensor(answer, "out")
    if isinstance(answer, Feedback):
        return answer
    shape_or_type = compare_tensor(answer, expected, "out")
    if shape_or_type is None:
        return correct(
            _("RoPE on q and k only: the values carry content, not position")
        )
    if answer.shape != expected.shape:
        return shape_or_type
    mistakes = [
        (
            _attention(rq, rk, rv),
            _(
                "you rotated v as well. RoPE goes on q and k only: their dot product is "
                "where positions meet. A rotated v would put absolute positions into the "
                "output."
            ),
        ),
        (
            apply_rope(expected, pos),
            _(
                "you rotated the attention output: rotate q and k before the dot "
                "product instead."
            ),
        ),
        (
            _attention(q, k, v),
            _(
                "nothing was rotated: apply rope_lib.apply_rope(q, positions) and the "
                "same to k."
            ),
        ),
        (
            _attention(rq, k, v),
            _(
                "only q was rotated: k needs its rotation too, or the score sees "
                "absolute m, not m - n."
            ),
        ),
        (
            _attention(q, rk, v),
            _(
                "only k was rotated: q needs its rotation too, or the score sees "
                "absolute n, not m - n."
            ),
        ),
        (
            _attention(apply_rope(q, -pos), apply_rope(k, -pos), v),
            _(
                "you rotated clockwise (negative angles): "
                "use apply_rope(x, positions) with the positions as they are."
            ),
        ),
        (
            rq @ rk.transpose(-1, -2) / math.sqrt(4) @ v,
            _("the softmax is missing: weights = softmax(scores, dim=-1)."),
        ),
        (
            (rq @ rk.transpose(-1, -2)).softmax(-1) @ v,
            _("the scores should be divided by sqrt(head_dim) = 2 before the softmax."),
        ),
    ]
    for wrong, message in mistakes:
        if _close(answer, wrong):
            return not_yet(message)
    return shape_or_type


@guarded
def check_shifted_positions(answer) -> Feedback:
    """Positions (m2, n2), both >= 10, whose score equals that of (m, n) = (7, 3) for every q, k, theta."""
    if answer is None:
        return not_yet(
            _("positions is still None: replace the placeholder with a pair (m2, n2)")
        )
    what = _("a pair of integers (m2, n2)")
    pair = read_pair(answer, "positions", whole=True, what=what)
    if isinstance(pair, Feedback):
        return pair
    m2, n2 = pair
    if min(m2, n2) < EX4_MIN:
        return not_yet(
            _("both positions must be at least {min}, got ({m2}, {n2})").format(
                min=EX4_MIN, m2=m2, n2=n2
            )
        )
    offset = EX4_M - EX4_N
    if m2 - n2 == offset:
        return correct(
            _(
                "({m2}, {n2}) has m - n = {offset}, like (7, 3): the same score for "
                "every q, k and theta"
            ).format(m2=m2, n2=n2, offset=offset)
        )
    if n2 - m2 == offset:
        return not_yet(
            _(
                "you swapped m and n: ({m2}, {n2}) has m - n = {diff}, not {offset}. The "
                "score is not symmetric: the sin term (q1k2 - q2k1) sin((m-n)θ) changes "
                "sign when m and n swap."
            ).format(m2=m2, n2=n2, diff=m2 - n2, offset=offset)
        )
    if m2 + n2 == EX4_M + EX4_N:
        return not_yet(
            _("you kept m + n fixed: the score depends on the difference m - n.")
        )
    if n2 != 0 and m2 * EX4_N == n2 * EX4_M:
        return not_yet(
            _(
                "you kept the ratio m / n: the score depends on the difference m - n, "
                "not the ratio."
            )
        )
    return not_yet(
        _(
            "({m2}, {n2}) has m - n = {diff}; (7, 3) has m - n = {offset}. Shift both "
            "by the same amount."
        ).format(m2=m2, n2=n2, diff=m2 - n2, offset=offset)
    )


@guarded
def check_relative_angles(answer) -> Feedback:
    """The relative angles (m - n) theta_i of the 4 pairs of a d = 8 head (base 10000) at m - n = 8."""
    if answer is None:
        return not_yet(
            _("angles is still None: replace the placeholder with your code")
        )
    angles = read_tensor(answer, "angles")
    if isinstance(angles, Feedback):
        return angles
    if angles.dim() > 1 and angles.numel() == angles.shape[-1]:
        angles = angles.flatten()  # e.g. [[...]]: one row of angles
    d, offset, base = EX5_HEAD_DIM, EX5_OFFSET, EX5_BASE
    expected = offset * inv_frequencies(d, base).to(torch.float64)
    if _close(angles, expected, atol=1e-5):
        return correct(
            _(
                "pair 0 turns a full radian per position, the last pair 1000 times slower"
            )
        )
    i = torch.arange(d // 2, dtype=torch.float64)
    mistakes = [
        (
            expected.repeat_interleave(2),
            _(
                "you gave one angle per coordinate (8 numbers): RoPE has one angle per "
                "pair, d/2 = 4 of them; coordinates 2i and 2i+1 share pair i's angle."
            ),
        ),
        (
            offset * base ** (-torch.arange(d, dtype=torch.float64) / d),
            _(
                "you used one frequency per coordinate, base^(-j/d) for j = 0..7: the "
                "pairs use base^(-2i/d), i = 0..3."
            ),
        ),
        (
            offset * base ** (-i / d),
            _(
                "the exponent is -2i/d, not -i/d: with d = 8 the frequencies are "
                "1, 0.1, 0.01, 0.001."
            ),
        ),
        (
            offset * base ** (2 * i / d),
            _(
                "the exponent has the wrong sign: theta_i = base^(-2i/d) shrinks as i "
                "grows."
            ),
        ),
        (
            expected.flip(0),
            _(
                "the order is reversed: pair 0 (the first two coordinates) has the "
                "highest frequency, theta_0 = 1."
            ),
        ),
        (torch.rad2deg(expected), _("those are degrees: RoPE's angles are radians.")),
        (
            inv_frequencies(d, base).to(torch.float64),
            _("those are the frequencies theta_i: multiply by the offset m - n = 8."),
        ),
    ]
    for wrong, message in mistakes:
        if _close(angles, wrong, atol=1e-5):
            return not_yet(message)
    two_pi = 2 * math.pi
    if angles.shape == expected.shape:
        if _close(angles, torch.remainder(expected, two_pi), atol=1e-5) or _close(
            angles, torch.remainder(expected + math.pi, two_pi) - math.pi, atol=1e-5
        ):
            return not_yet(
                _(
                    "you reduced the angles modulo 2π: as rotations they are the same, "
                    "but the question asks for the angle (m - n)·θ_i itself, which grows "
                    "with the offset (pair 0 turns 8 rad, more than one full turn)"
                )
            )
    problem = compare_tensor(angles, expected, "angles", atol=1e-5)
    return problem if problem is not None else correct(_("angles"))
