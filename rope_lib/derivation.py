"""The 2D rotation derivation of RoPE (lessons 3 and 4): why a position must rotate a pair,
and why rotating q by m*theta and k by n*theta makes their dot product depend on the offset
m - n only.

The wish (RoFormer, Su et al. 2021, section 3.4.1): a score (R_m q) . (R_n k) = q^T R_m^T R_n k
that is a function of q, k and m - n for every q and k, i.e. R_m^T R_n depends on n - m only,
with R_0 = I. Then n = m gives R_m^T R_m = I (R_m keeps lengths), n = m + 1 gives
R_(m+1) = R_m R_1 (so R_m = R_1^m), and R_1, a 2x2 orthogonal matrix, is a rotation R(theta)
or a reflection (which only sees whether m - n is even): R_m = R(m theta), and
R_m^T R_n = R_(n-m). `offset_dependence` measures the wish numerically for any position map;
`rotation_identities` checks R(theta)^m = R(m theta) and R(a)^T R(b) = R(b - a) in sympy.

RoFormer (Su et al., 2021, arXiv:2104.09864, section 3.2 and eq. 13-16) rotates a 2D pair
q = (q1, q2) at position m by the angle m*theta (counter-clockwise, radians):

    q_m = (q1 cos(m theta) - q2 sin(m theta),  q1 sin(m theta) + q2 cos(m theta))

and k = (k1, k2) at position n by n*theta. Multiplying out and using
cos a cos b + sin a sin b = cos(a - b) and sin a cos b - cos a sin b = sin(a - b):

    q_m . k_n = (q1 k1 + q2 k2) cos((m - n) theta) + (q1 k2 - q2 k1) sin((m - n) theta)
              = |q| |k| cos(phi_q - phi_k + (m - n) theta)          (polar form)

A head of even size d is d/2 such pairs, pair i with its own frequency theta_i, and its score is
the sum of the pairs' scores (`closed_form_score`).

The sympy helpers (`rotation_from_polar`, `score_derivation`) import sympy when called, so the
rest of rope_lib does not need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._checks import as_real_float64, require_positive_int, require_tensor
from .language import _
from .rotary import inv_frequencies


def from_polar(length, angle) -> torch.Tensor:
    """The 2D vector (length cos(angle), length sin(angle)), float64, shape [..., 2].

    `angle` is in radians, measured counter-clockwise from the x axis: (r cos a, r sin a), the
    polar form RoFormer's 2D derivation starts from (Su et al. 2021, section 3.4.1).
    """
    r = as_real_float64("length", length)
    a = as_real_float64("angle", angle)
    if r.device != a.device:
        a = a.to(r.device)
    return torch.stack(torch.broadcast_tensors(r * a.cos(), r * a.sin()), -1)


def closed_form_score(q, k, m, n, theta) -> torch.Tensor:
    """The RoPE score <R_m q, R_n k> without rotating anything (RoFormer, section 3.2):

        sum_i (q_a k_a + q_b k_b) cos((m - n) theta_i) + (q_a k_b - q_b k_a) sin((m - n) theta_i)

    over the pairs (a, b) = (2i, 2i+1) (the interleaved layout). For one pair this is
    (q1 k1 + q2 k2) cos((m - n) theta) + (q1 k2 - q2 k1) sin((m - n) theta).

    q, k:   [..., d] with d even (d = 2 for one pair), broadcastable to each other.
    m, n:   the query's and the key's positions: numbers or tensors broadcastable to q.shape[:-1].
    theta:  the frequency of each pair in radians per position: a number or a [d/2] tensor.
    Returns the scores, shape broadcast(q, k, m, n).shape[:-1], float64.
    """
    q = as_real_float64("q", q)
    k = as_real_float64("k", k).to(q.device)
    for name, x in (("q", q), ("k", k)):
        if x.dim() < 1 or x.shape[-1] % 2:
            raise ValueError(
                _(
                    "{name} must be [..., d] with d even (pairs), got shape {x_shape}"
                ).format(name=name, x_shape=tuple(x.shape))
            )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            _(
                "q and k must have the same last dimension, got {q_shape_last} and "
                "{k_shape_last}"
            ).format(q_shape_last=q.shape[-1], k_shape_last=k.shape[-1])
        )
    half = q.shape[-1] // 2
    theta = as_real_float64("theta", theta).to(q.device)
    if theta.dim() > 1 or (theta.dim() == 1 and theta.shape[0] != half):
        raise ValueError(
            _(
                "theta must be a number or a [d/2] = [{half}] tensor, got shape "
                "{theta_shape}"
            ).format(half=half, theta_shape=tuple(theta.shape))
        )
    offset = as_real_float64("m", m).to(q.device) - as_real_float64("n", n).to(q.device)
    angle = offset.unsqueeze(-1) * theta  # [..., d/2]
    qa, qb = q[..., 0::2], q[..., 1::2]
    ka, kb = k[..., 0::2], k[..., 1::2]
    per_pair = (qa * ka + qb * kb) * angle.cos() + (qa * kb - qb * ka) * angle.sin()
    return per_pair.sum(-1)


def polar_score(q_length, q_angle, k_length, k_angle, m, n, theta) -> torch.Tensor:
    """The one-pair RoPE score in polar form: |q| |k| cos(phi_q - phi_k + (m - n) theta), float64.

    q' points at phi_q + m theta and k' at phi_k + n theta; a dot product is the product of the
    lengths times the cosine of the angle between, and that angle only sees m - n (RoFormer,
    Su et al. 2021, section 3.4.1).
    """
    names = ("q_length", "q_angle", "k_length", "k_angle", "m", "n", "theta")
    args = [
        as_real_float64(name, v)
        for name, v in zip(names, (q_length, q_angle, k_length, k_angle, m, n, theta))
    ]
    ql, qa, kl, ka, m, n, theta = args
    return ql * kl * torch.cos(qa - ka + (m - n) * theta)


def _check_steps_inputs(Q, K, n_heads) -> tuple[int, int, int]:
    """(batch, len, d_head) of rope_by_steps' Q and K [batch, len, n_heads * d_head]."""
    require_tensor("Q", Q)
    require_tensor("K", K)
    require_positive_int("n_heads", n_heads)
    if Q.dim() != 3 or Q.shape != K.shape:
        raise ValueError(
            _(
                "Q and K must both be [batch, len, d_model], got {q_shape} and "
                "{k_shape}"
            ).format(q_shape=tuple(Q.shape), k_shape=tuple(K.shape))
        )
    batch, length, d_model = Q.shape
    if d_model % n_heads or (d_model // n_heads) % 2:
        raise ValueError(
            _(
                "d_model / n_heads must be an even integer, got d_model={d_model}, "
                "n_heads={n_heads}"
            ).format(d_model=d_model, n_heads=n_heads)
        )
    return batch, length, d_model // n_heads


def rope_by_steps(
    Q: torch.Tensor, K: torch.Tensor, n_heads: int, base: float = 10000.0
) -> dict:
    """RoPE in six steps, as a common "how to rotate" write-up lists them, one tensor per step,
    for reading the shapes.

    Q, K: projected queries and keys, [batch, len, n_heads * d_head]. Returns a dict (in step
    order) whose last entries "Q_rot", "K_rot" equal apply_rope(...) on the head-split tensors
    and "scores" = Q_rot K_rot^T / sqrt(d_head):

      1. "Q", "K"        view as heads and move heads forward: [batch, n_heads, len, d_head]
      2. "freqs"         theta_i = base ** (-2i / d_head):      [d_head/2]
      3. "angles"        outer(positions, freqs) = m theta_i:   [len, d_head/2]
                         "cos", "sin" broadcast-ready:          [1, 1, len, d_head/2]
      4. "Q_pairs"       view the last dim as pairs (x, y):     [batch, n_heads, len, d_head/2, 2]
                         (a view works on the transposed Q: only the last, contiguous dim is split)
      5. "Q_rot", "K_rot" x cos - y sin, x sin + y cos, stacked back and viewed as d_head
      6. "scores"        Q_rot K_rot^T / sqrt(d_head):          [batch, n_heads, len, len]

    (RoFormer, Su et al. 2021, eq. 14-16; the pairs interleaved, as in Meta's LLaMA.)
    """
    batch, length, d_head = _check_steps_inputs(Q, K, n_heads)
    steps = {}
    # 1. heads
    Qh = Q.view(batch, length, n_heads, d_head).transpose(1, 2)
    Kh = K.view(batch, length, n_heads, d_head).transpose(1, 2)
    steps["Q"], steps["K"] = Qh, Kh
    # 2. one frequency per pair, shared by every token, head and layer
    freqs = inv_frequencies(d_head, base).to(Q.dtype)
    steps["freqs"] = freqs
    # 3. one angle per (position, pair)
    positions = torch.arange(length, dtype=Q.dtype)
    angles = torch.outer(positions, freqs)
    steps["angles"] = angles
    cos = angles.cos().unsqueeze(0).unsqueeze(0)
    sin = angles.sin().unsqueeze(0).unsqueeze(0)
    steps["cos"], steps["sin"] = cos, sin
    # 4. pairs
    Qp = Qh.view(batch, n_heads, length, d_head // 2, 2)
    Kp = Kh.view(batch, n_heads, length, d_head // 2, 2)
    steps["Q_pairs"], steps["K_pairs"] = Qp, Kp
    # 5. rotate each pair counter-clockwise by m theta_i
    Qx, Qy = Qp[..., 0], Qp[..., 1]
    Kx, Ky = Kp[..., 0], Kp[..., 1]
    Q_rot = torch.stack([Qx * cos - Qy * sin, Qx * sin + Qy * cos], dim=-1)
    K_rot = torch.stack([Kx * cos - Ky * sin, Kx * sin + Ky * cos], dim=-1)
    steps["Q_rot"] = Q_rot.view(batch, n_heads, length, d_head)
    steps["K_rot"] = K_rot.view(batch, n_heads, length, d_head)
    # 6. scores
    steps["scores"] = (
        steps["Q_rot"] @ steps["K_rot"].transpose(-2, -1) / math.sqrt(d_head)
    )
    return steps


@dataclass(frozen=True)
class PolarRotation:
    """sympy expressions for rotating (x, y) = (r cos phi, r sin phi) by alpha."""

    symbols: tuple  # (r, phi, alpha, x, y)
    x_rotated_polar: object  # r cos(phi + alpha)
    y_rotated_polar: object  # r sin(phi + alpha)
    x_rotated_expanded: object  # angle-sum formula applied
    y_rotated_expanded: object
    x_rotated: object  # x cos(alpha) - y sin(alpha)
    y_rotated: object  # x sin(alpha) + y cos(alpha)
    matrix: object  # [[cos alpha, -sin alpha], [sin alpha, cos alpha]]


def rotation_from_polar() -> PolarRotation:
    """Derive the 2D rotation matrix from polar coordinates, with sympy.

    A vector (x, y) = (r cos phi, r sin phi) turned counter-clockwise by alpha keeps its length
    and points at phi + alpha: (r cos(phi + alpha), r sin(phi + alpha)). The angle-sum formulas
    give r cos phi cos alpha - r sin phi sin alpha = x cos alpha - y sin alpha, and likewise
    y' = x sin alpha + y cos alpha: the matrix [[cos, -sin], [sin, cos]] (RoFormer, Su et al.
    2021, eq. 13).
    """
    import sympy as sp

    r = sp.Symbol("r", positive=True)
    phi, alpha, x, y = sp.symbols("phi alpha x y", real=True)
    xp = r * sp.cos(phi + alpha)
    yp = r * sp.sin(phi + alpha)
    xe = sp.expand_trig(xp)
    ye = sp.expand_trig(yp)
    to_xy = {r * sp.cos(phi): x, r * sp.sin(phi): y}
    xr = sp.expand(xe).subs(to_xy)
    yr = sp.expand(ye).subs(to_xy)
    matrix = sp.Matrix([[xr.coeff(x), xr.coeff(y)], [yr.coeff(x), yr.coeff(y)]])
    return PolarRotation((r, phi, alpha, x, y), xp, yp, xe, ye, xr, yr, matrix)


@dataclass(frozen=True)
class ScoreDerivation:
    """The expansion of q_m . k_n, one sympy expression per step."""

    symbols: tuple  # (q1, q2, k1, k2, m, n, theta)
    q_m: object  # sympy Matrix [2, 1]: R(m theta) q
    k_n: object  # R(n theta) k
    product: object  # q_m . k_n as written: two products of sums
    expanded: object  # the eight terms
    grouped: dict  # {q1*k1: ..., q2*k2: ..., q1*k2: ..., q2*k1: ...}: coefficient of each product
    grouped_simplified: (
        dict  # the same coefficients after the angle-difference formulas
    )
    closed_form: object  # (q1 k1 + q2 k2) cos((m - n) theta) + (q1 k2 - q2 k1) sin((m - n) theta)
    difference: object  # simplify(product - closed_form): 0 when the derivation holds


def score_derivation() -> ScoreDerivation:
    """Expand the rotated dot product symbolically and simplify it to the closed form (sympy).

    Steps (as a common derivation writes them): rotate q by m theta and k by n theta; multiply out the two
    products of sums into eight terms; group them by q1 k1, q2 k2, q1 k2, q2 k1; each group's
    coefficient is cos(m theta - n theta) or +-sin(m theta - n theta) by the angle-difference
    formulas; so the score is the closed form, and `difference` simplifies to 0 (RoFormer, Su et
    al. 2021, section 3.4.1).
    """
    import sympy as sp

    q1, q2, k1, k2, theta = sp.symbols("q1 q2 k1 k2 theta", real=True)
    m, n = sp.symbols("m n", integer=True)

    def rot(angle):
        return sp.Matrix(
            [[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]]
        )

    q_m = rot(m * theta) * sp.Matrix([q1, q2])
    k_n = rot(n * theta) * sp.Matrix([k1, k2])
    product = sp.Add(q_m[0] * k_n[0], q_m[1] * k_n[1], evaluate=False)
    expanded = sp.expand(q_m[0] * k_n[0] + q_m[1] * k_n[1])
    grouped = {}
    for pair in (q1 * k1, q2 * k2, q1 * k2, q2 * k1):
        a, b = pair.as_ordered_factors()
        grouped[pair] = expanded.coeff(a).coeff(b)
    simplified = {pair: sp.trigsimp(c) for pair, c in grouped.items()}
    closed = (q1 * k1 + q2 * k2) * sp.cos((m - n) * theta) + (
        q1 * k2 - q2 * k1
    ) * sp.sin((m - n) * theta)
    difference = sp.simplify(sp.expand_trig(expanded - closed))
    return ScoreDerivation(
        (q1, q2, k1, k2, m, n, theta),
        q_m,
        k_n,
        product,
        expanded,
        grouped,
        simplified,
        closed,
        difference,
    )


def latex_lines(lhs: str, expression, per_line: int = 2) -> str:
    """LaTeX for "lhs = expression" with a few of the sum's terms per line, so that a long sympy
    sum (score_derivation's product, expanded form or closed form) fits a notebook's width:
    an aligned block, each line starting with its term's sign."""
    import sympy as sp

    terms = [sp.latex(term) for term in expression.args]
    signed = [t if t.startswith("-") else "+ " + t for t in terms]
    signed[0] = terms[0]
    lines = [" ".join(signed[i : i + per_line]) for i in range(0, len(terms), per_line)]
    return (
        r"\begin{aligned} " + lhs + " ={}& " + r" \\ & ".join(lines) + r" \end{aligned}"
    )


def offset_dependence(
    position_map, q, k, offset: int = 3, starts=range(8), key_map=None
) -> float:
    """How much the score of a position map moves when both positions move together.

    position_map(m) is the 2x2 matrix R_m that position m applies to a pair; the score of a
    query q at m and a key k at n is (R_m q) . (R_n k) = q^T R_m^T R_n k. Returns the spread
    (max - min) of that score over (m, n) = (s + offset, s) for s in `starts`: 0 up to
    rounding when the score sees only m - n, which holds for every q and k exactly when
    R_m^T R_n depends on n - m only (the wish of RoFormer, Su et al. 2021, section 3.4.1,
    that forces R_m = R(m theta) when queries and keys share one map). A float.

    key_map(n), if given, is the keys' own map B_n (the query keeps position_map A_m): then
    the score is q^T A_m^T B_n k, and A_m = (M^-m)^T, B_n = M^n grant the wish for any
    invertible M (xPos, Sun et al. 2022, takes M = R(theta) / zeta: a rotation with a decay).
    A nonzero spread rules a map out; a zero one, for one q, k and offset, only fits the wish.
    """
    q = as_real_float64("q", q)
    k = as_real_float64("k", k)
    key_map = position_map if key_map is None else key_map
    scores = [float((position_map(s + offset) @ q) @ (key_map(s) @ k)) for s in starts]
    return max(scores) - min(scores)


@dataclass(frozen=True)
class RotationIdentities:
    """sympy checks of the two facts lesson 3's derivation ends with."""

    symbols: tuple  # (theta, a, b)
    times: int
    power_gap: object  # R(theta)^times - R(times theta), simplified: the zero matrix
    transpose_product: object  # R(a)^T R(b), each entry simplified
    transpose_expected: object  # R(b - a)


def rotation_identities(times: int = 5) -> RotationIdentities:
    """R(theta)^times = R(times theta) (turning m times by theta is turning by m theta), and
    R(a)^T R(b) = R(b - a) (so R_m^T R_n = R_(n-m): the score q^T R_m^T R_n k sees n - m only),
    derived with sympy (RoFormer, Su et al. 2021, section 3.4.1 and eq. 16)."""
    import sympy as sp

    theta, a, b = sp.symbols("theta a b", real=True)

    def rot(angle):
        return sp.Matrix(
            [[sp.cos(angle), -sp.sin(angle)], [sp.sin(angle), sp.cos(angle)]]
        )

    gap = (rot(theta) ** times - rot(times * theta)).applyfunc(
        lambda e: sp.simplify(sp.expand_trig(e))
    )
    product = (rot(a).T * rot(b)).applyfunc(lambda e: sp.simplify(sp.trigsimp(e)))
    return RotationIdentities((theta, a, b), times, gap, product, rot(b - a))
