"""Checkers for lesson 6 (ALiBi: attention with linear biases).

    from rope_lib.exercises import alibi as ex
    ex.check_power_of_two_slopes(slopes)     # the slopes of an 8-head model, head 1 first
    ex.check_twelve_head_slopes(slopes)     # the slopes of a 12-head model (not a power of two), head 1 first
    ex.check_causal_bias(bias)       # the causal bias matrix [5, 5] of head 2 of 8
    ex.check_query_weights(weights)    # the attention of query 5 over keys 0..7, head slope 1/2, zero scores

Each expected value is computed here from the paper's formulas (Press, Smith and Lewis, 2022,
arXiv:2108.12409), independently of the learner's route; the likely mistakes (the linear slopes
of a common write-up, a forgotten non-power-of-two rule, a positive bias, a symmetric bias where a causal
one is needed) each get their own message.
"""

from __future__ import annotations

import math

import torch

from ..language import _
from . import Feedback, compare_tensor, correct, not_yet, same_values
from .answers import guarded, read_tensor


def _geometric(n: int) -> torch.Tensor:
    """2^(-8h/n) for h = 1..n, float64: the paper's slopes when n is a power of two."""
    h = torch.arange(1, n + 1, dtype=torch.float64)
    return 2.0 ** (-8.0 * h / n)


def _paper_slopes(n: int) -> torch.Tensor:
    """The rule of the paper's code: p = largest power of two <= n; the p-head slopes, then the
    odd-numbered ones (h = 1, 3, 5, ...) of the 2p-head sequence until there are n."""
    p = 1 << (n.bit_length() - 1)
    return torch.cat([_geometric(p), _geometric(2 * p)[0::2][: n - p]])


def _linear_slope_mistake(a: torch.Tensor, n: int):
    h = torch.arange(1, n + 1, dtype=torch.float64)
    for candidate in (0.1 * h, -0.1 * h, h / n, -h / n):
        if same_values(a, candidate) or same_values(a, candidate.flip(0)):
            return not_yet(
                _(
                    "these slopes grow linearly (like a common write-up's m*1, m*2, "
                    "... with m = -0.1): the paper's are geometric, each one 2^(-8/n) "
                    "times the one before, so that they cover short and long ranges "
                    "alike"
                )
            )
    return None


# Exercise 1 ---------------------------------------------------------------------------------
EX1_HEADS = 8


@guarded
def check_power_of_two_slopes(answer):
    """The slopes of an 8-head ALiBi model, head 1 first: 2^(-8h/8) = 1/2, 1/4, ..., 1/256."""
    if answer is None:
        return not_yet(_("replace `None` with a tensor of 8 slopes, head 1 first"))
    a = read_tensor(answer, _("slopes"))
    if isinstance(a, Feedback):
        return a
    expected = _geometric(EX1_HEADS)
    if a.shape != expected.shape:
        return _slopes_shape(expected, a)
    if same_values(a, expected):
        return _ex1_correct()
    mistake = _linear_slope_mistake(a, EX1_HEADS)
    if mistake is not None:
        return mistake
    if same_values(a, -expected):
        return not_yet(
            _(
                "the slopes are positive numbers; the minus sign belongs to the bias, "
                "-μ·(m - n), which is what pushes distant keys down"
            )
        )
    if same_values(a, expected.flip(0)):
        return not_yet(
            _(
                "right numbers, reversed order: in the paper head 1 has the steepest "
                "slope (1/2, the most local head) and head 8 the gentlest (1/256)"
            )
        )
    h = torch.arange(1, EX1_HEADS + 1, dtype=torch.float64)
    if same_values(a, 2.0 ** (-h / EX1_HEADS)):
        return not_yet(
            _(
                "the exponent is -8h/n: with 2^(-h/n) the slopes only fall from 0.917 "
                "to 0.5"
            )
        )
    if same_values(a, 2.0 ** (-8.0 * (h - 1) / EX1_HEADS)):
        return not_yet(
            _(
                "off by one head: h runs from 1 to n, so head 1's slope is 2^(-8/8) = "
                "1/2, not 1"
            )
        )
    if same_values(a, 2.0 ** (8.0 * h / EX1_HEADS)):
        return not_yet(
            _("the exponent must be negative: 2^(-8h/n) gives slopes below 1")
        )
    if same_values(a, torch.exp(-8.0 * h / EX1_HEADS)):
        return not_yet(
            _(
                "the base is 2, not e: 2^(-8h/n), so that the last head's slope is "
                "2^(-8) = 1/256"
            )
        )
    feedback = compare_tensor(a, expected, _("slopes"))
    if feedback is not None:
        return feedback
    return _ex1_correct()


def _slopes_shape(expected: torch.Tensor, a: torch.Tensor) -> Feedback:
    return not_yet(
        _("slopes should have shape {expected} (one per head), got {got}").format(
            expected=tuple(expected.shape), got=tuple(a.shape)
        )
    )


def _ex1_correct() -> Feedback:
    return correct(
        _(
            "1/2, 1/4, ..., 1/256: a geometric sequence whose ratio, 1/2, is also its "
            "first term. rope_lib.alibi_slopes(8) gives the same."
        )
    )


# Exercise 2 ---------------------------------------------------------------------------------
EX2_HEADS = 12


@guarded
def check_twelve_head_slopes(answer):
    """The slopes of a 12-head ALiBi model (BLOOM's rule for n not a power of two), head 1 first."""
    if answer is None:
        return not_yet(_("replace `None` with a tensor of 12 slopes, head 1 first"))
    a = read_tensor(answer, _("slopes"))
    if isinstance(a, Feedback):
        return a
    expected = _paper_slopes(EX2_HEADS)
    if a.shape != expected.shape:
        return _slopes_shape(expected, a)
    if same_values(a, expected):
        return _ex2_correct()
    mistake = _linear_slope_mistake(a, EX2_HEADS)
    if mistake is not None:
        return mistake
    if same_values(a, _geometric(EX2_HEADS)):
        return not_yet(
            _(
                "that is 2^(-8h/12), the power-of-two formula applied to 12 heads. 12 "
                "is not a power of two: take the 8 slopes of an 8-head model, then the "
                "4 slopes of the 16-head sequence that fall in between them (2^-0.5, "
                "2^-1.5, 2^-2.5, 2^-3.5)"
            )
        )
    if same_values(a, _geometric(16)[:EX2_HEADS]):
        return not_yet(
            _(
                "these are the first 12 slopes of a 16-head model, so the gentle "
                "slopes 2^-6.5 .. 2^-8 are missing: keep all 8 slopes of the 8-head "
                "model, then add 4 from the 16-head sequence"
            )
        )
    if same_values(a, torch.cat([_geometric(8), _geometric(16)[1::2][:4]])):
        return not_yet(
            _(
                "the last four repeat slopes you already have (2^-1 .. 2^-4): from the "
                "16-head sequence take the odd-numbered ones, [0::2] in Python, which "
                "are the new values 2^-0.5, 2^-1.5, ..."
            )
        )
    if same_values(a, -expected):
        return not_yet(
            _("the slopes are positive numbers; the minus sign belongs to the bias")
        )
    if same_values(
        a.sort(descending=True).values, expected.sort(descending=True).values
    ):
        return not_yet(
            _(
                "the right 12 values in another order: the rule keeps the 8-head "
                "slopes first, then the 4 new ones (2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5); "
                "BLOOM's head h expects exactly that slope"
            )
        )
    feedback = compare_tensor(a, expected, _("slopes"))
    if feedback is not None:
        return feedback
    return _ex2_correct()


def _ex2_correct() -> Feedback:
    return correct(
        _(
            "the 8-head slopes 2^-1 .. 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5: the "
            "same as rope_lib.alibi_slopes(12) and BLOOM's build_alibi_tensor"
        )
    )


# Exercise 3 ---------------------------------------------------------------------------------
EX3_SEQ, EX3_HEADS, EX3_HEAD = 5, 8, 2  # head 2 of 8: slope 1/4


def _ex3_expected() -> torch.Tensor:
    slope = 2.0 ** (-8.0 * EX3_HEAD / EX3_HEADS)
    i = torch.arange(EX3_SEQ, dtype=torch.float64)[:, None]
    j = torch.arange(EX3_SEQ, dtype=torch.float64)[None, :]
    return torch.where(
        j <= i, -slope * (i - j), torch.tensor(float("-inf"), dtype=torch.float64)
    )


@guarded
def check_causal_bias(answer):
    """The causal ALiBi bias of head 2 of 8 (slope 1/4) for 5 tokens: [5, 5], rows = queries m,
    columns = keys n, -μ·(m - n) for n <= m and -inf for n > m."""
    if answer is None:
        return not_yet(
            _("replace `None` with a [5, 5] tensor: rows are queries m, columns keys n")
        )
    a = read_tensor(
        answer,
        _("bias"),
        finite=False,
        nan_hint=_(
            "0 * inf somewhere? build the -inf entries with masked_fill or where"
        ),
    )
    if isinstance(a, Feedback):
        return a
    expected = _ex3_expected()
    if a.shape != expected.shape:
        if a.dim() == 3 and a.shape[-2:] == expected.shape:
            return not_yet(
                _("give head 2 only, a [5, 5] matrix, not all heads {shape}").format(
                    shape=tuple(a.shape)
                )
            )
        return not_yet(
            _("bias should have shape {expected}, got {got}").format(
                expected=tuple(expected.shape), got=tuple(a.shape)
            )
        )
    slope = 0.25
    if same_values(a, expected):
        return _ex3_correct()
    past = torch.ones(EX3_SEQ, EX3_SEQ, dtype=torch.bool).tril()
    future = ~past
    symmetric = -slope * (
        torch.arange(EX3_SEQ)[:, None] - torch.arange(EX3_SEQ)[None, :]
    ).abs().to(torch.float64)
    if same_values(a, symmetric):
        return not_yet(
            _(
                "this is the symmetric bias -μ·|m - n| (a common write-up's), with no "
                "mask: the future keys n > m get a finite score, so a decoder could "
                "look ahead; put -inf there"
            )
        )
    if same_values(a, -symmetric):
        return not_yet(
            _(
                "the bias is positive and there is no mask: distant keys would be "
                "favoured and the future visible. It is -μ·(m - n) for n <= m and -inf "
                "for n > m"
            )
        )
    if same_values(a, expected.T):
        return not_yet(
            _(
                "transposed: rows are queries m and columns keys n, so the -inf (the "
                "future, n > m) goes above the diagonal"
            )
        )
    if torch.isinf(a[future]).all() and same_values(a[past], -expected[past]):
        return not_yet(
            _(
                "the bias is positive: +μ·(m - n) would make the query prefer distant "
                "keys. ALiBi subtracts: -μ·(m - n)"
            )
        )
    if same_values(a[past], expected[past]) and same_values(
        a[future], torch.zeros_like(a[future])
    ):
        return not_yet(
            _(
                "the past is right, but the future entries (n > m) are 0: that gives "
                "them a higher score than any past key. Use -inf there (softmax turns "
                "it into weight 0)"
            )
        )
    if same_values(a[past], expected[past]) and not torch.isinf(a[future]).all():
        return not_yet(
            _("the past is right; the future entries (n > m) must all be -inf")
        )
    key_form = slope * torch.arange(EX3_SEQ, dtype=torch.float64)[None, :].expand(
        EX3_SEQ, EX3_SEQ
    )
    if same_values(a[past], key_form[past]):
        return not_yet(
            _(
                "this is the row-constant form slope * j (what BLOOM uses; it gives "
                "the same softmax). Here, write the distance form -μ·(m - n)"
            )
        )
    if torch.isinf(a[future]).all() and torch.isfinite(a[past]).all():
        off_diagonal = past & ~torch.eye(EX3_SEQ, dtype=torch.bool)
        r = a[off_diagonal] / expected[off_diagonal]
        if (
            torch.allclose(r, r[0].expand_as(r), rtol=1e-4)
            and abs(float(r[0]) - 1) > 1e-3
        ):
            return not_yet(
                _(
                    "the pattern is right but the slope is off by a factor "
                    "{factor:.4g}: head 2 of 8 has slope 2^(-8*2/8) = 1/4 (head 1 is "
                    "1/2; heads count from 1)"
                ).format(factor=float(r[0]))
            )
    if not (torch.isinf(a[future]).all() and (a[future] < 0).all()):
        return not_yet(_("the future entries (n > m) must all be -inf"))
    feedback = compare_tensor(a[past], expected[past], _("the past entries (n <= m)"))
    if feedback is not None:
        return feedback
    return _ex3_correct()


def _ex3_correct() -> Feedback:
    return correct(
        _(
            "0 on the diagonal, -1/4 per step to the left, -inf to the right: "
            "rope_lib.alibi_bias(5, 8)[1] gives the same"
        )
    )


# Exercise 4 ---------------------------------------------------------------------------------
EX4_SEQ, EX4_QUERY, EX4_SLOPE = 8, 5, 0.5


def _ex4_expected() -> torch.Tensor:
    """softmax over the past with zero content scores: exp(-m d) normalized, a truncated geometric."""
    j = torch.arange(EX4_SEQ, dtype=torch.float64)
    d = EX4_QUERY - j
    w = torch.where(d >= 0, torch.exp(-EX4_SLOPE * d), torch.zeros_like(d))
    return w / w.sum()


@guarded
def check_query_weights(answer):
    """The attention weights [8] of the query at position 5 over keys n = 0..7 for a head with
    slope 1/2, in a causal model, when every content score q.k/sqrt(d) is 0."""
    if answer is None:
        return not_yet(
            _("replace `None` with a tensor of 8 weights, one per key n = 0..7")
        )
    a = read_tensor(
        answer,
        _("weights"),
        finite=False,
        nan_hint=_("a row of all -inf? only keys n > 5 should be masked"),
    )
    if isinstance(a, Feedback):
        return a
    expected = _ex4_expected()
    if a.shape != expected.shape:
        return not_yet(
            _("weights should have shape {expected} (one per key), got {got}").format(
                expected=tuple(expected.shape), got=tuple(a.shape)
            )
        )
    scores = _ex4_scores(a)
    if scores is not None:
        return scores
    if same_values(a, expected):
        return _ex4_correct(expected)
    j = torch.arange(EX4_SEQ, dtype=torch.float64)
    d = EX4_QUERY - j
    symmetric = torch.exp(-EX4_SLOPE * d.abs())
    if same_values(a, symmetric / symmetric.sum()):
        return not_yet(
            _(
                "keys 6 and 7 are in the future of query 5 and get weight here: you "
                "used |m - n| without the causal mask (the symmetric, encoder "
                "variant). Mask n > m with -inf before the softmax"
            )
        )
    past = d >= 0
    positive = torch.where(past, torch.exp(EX4_SLOPE * d), torch.zeros_like(d))
    if same_values(a, positive / positive.sum()):
        return not_yet(
            _(
                "the weights grow with distance: the bias has the wrong sign, it is "
                "-μ·(m - n)"
            )
        )
    uniform = past.to(torch.float64) / past.sum()
    if same_values(a, uniform):
        return not_yet(
            _(
                "all past keys get 1/6: the bias is missing, this is what zero scores "
                "give without ALiBi"
            )
        )
    if (
        a.sum() > 0
        and not math.isclose(float(a.sum()), 1.0, rel_tol=1e-4)
        and same_values(a / a.sum(), expected)
    ):
        return not_yet(
            _(
                "the shape is right but the weights sum to {total:.4f}: divide by the "
                "sum (softmax normalizes exp(score + bias) over the keys)"
            ).format(total=float(a.sum()))
        )
    if (a[~past].abs() > 1e-6).any():
        return not_yet(
            _("keys n = 6 and 7 are in the future of query 5 and must get weight 0")
        )
    feedback = compare_tensor(a, expected, _("weights"))
    if feedback is not None:
        return feedback
    return _ex4_correct(expected)


def _ex4_scores(a: torch.Tensor):
    """A Feedback when `a` holds scores (logits) rather than weights, else None."""
    j = torch.arange(EX4_SEQ, dtype=torch.float64)
    d = EX4_QUERY - j
    past = d >= 0
    logits = -EX4_SLOPE * d
    if torch.isinf(a).any():
        if (a[~past] == float("-inf")).all() and same_values(a[past], logits[past]):
            return not_yet(
                _(
                    "these are the masked scores (logits) -μ·(m - n) with -inf for the "
                    "future: right so far, but the weights are softmax(scores + bias) "
                    "over the keys: apply the softmax (it turns -inf into weight 0)"
                )
            )
        return not_yet(
            _(
                "weights are probabilities between 0 and 1; -inf belongs to the scores "
                "before the softmax, not to the weights: the weights are "
                "softmax(scores + bias) over the keys: apply the softmax"
            )
        )
    unmasked = torch.where(past, logits, torch.zeros_like(logits))
    if same_values(a, logits) or same_values(a, unmasked):
        return not_yet(
            _(
                "these are the scores -μ·(m - n), not weights: mask n > 5 with -inf, "
                "then the weights are softmax(scores + bias) over the keys: apply the "
                "softmax"
            )
        )
    if same_values(a, -EX4_SLOPE * d.abs()):
        return not_yet(
            _(
                "these are the symmetric scores -μ·|m - n|: mask the future keys n > 5 "
                "with -inf, then the weights are softmax(scores + bias) over the keys: "
                "apply the softmax"
            )
        )
    if (a < 0).any() or (a > 1).any():
        return not_yet(
            _(
                "weights are probabilities between 0 and 1; these look like scores: "
                "the weights are softmax(scores + bias) over the keys: apply the "
                "softmax"
            )
        )
    return None


def _ex4_correct(expected):
    return correct(
        _(
            "each step back multiplies the weight by e^(-1/2) = {ratio:.4f}; the "
            "query's own key gets {own:.4f}. "
            "rope_lib.alibi_query_attention(torch.zeros(8), 0.5, 5) gives the same"
        ).format(ratio=math.exp(-0.5), own=float(expected[EX4_QUERY]))
    )
