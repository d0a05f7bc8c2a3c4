"""Checkers for lesson 8 (ALiBi: attention with linear biases).

    from rope_lib.exercises import alibi as ex
    ex.check_doubled_context(answer)      # heads 1 and 8: own weight when L doubles
    ex.check_twelve_head_slopes(slopes)   # the slopes of a 12-head model, head 1 first
    ex.check_causal_bias(bias)            # the causal bias matrix [5, 5] of head 2 of 8
    ex.check_query_weights(weights)       # query 5's attention over keys 0..7, slope 1/2

Each expected value is computed here from the paper's formulas (Press, Smith and Lewis, 2022,
arXiv:2108.12409), independently of the learner's route; the likely mistakes (the linear slopes
of a common write-up, a forgotten non-power-of-two rule, a positive bias, a symmetric bias
where a causal one is needed) each get their own message.
"""

from __future__ import annotations

import math

import torch

from ..language import N_, _
from . import Mistake, Word, compare_tensor, either, exercise, same_values
from .answers import as_choices, as_tensor

F64 = torch.float64


def _geometric(n: int) -> torch.Tensor:
    """2^(-8h/n) for h = 1..n, float64: the paper's slopes when n is a power of two."""
    h = torch.arange(1, n + 1, dtype=F64)
    return 2.0 ** (-8.0 * h / n)


def _paper_slopes(n: int) -> torch.Tensor:
    """The rule of the paper's code: p = largest power of two <= n; the p-head slopes, then the
    odd-numbered ones (h = 1, 3, 5, ...) of the 2p-head sequence until there are n."""
    p = 1 << (n.bit_length() - 1)
    return torch.cat([_geometric(p), _geometric(2 * p)[0::2][: n - p]])


def _linear(n: int) -> either:
    """The linear slopes of a common write-up (m*1, m*2, ...), either order and sign."""
    h = torch.arange(1, n + 1, dtype=F64)
    lines = (0.1 * h, -0.1 * h, h / n, -h / n)
    return either(*lines, *(line.flip(0) for line in lines))


LINEAR = N_(
    "these slopes grow linearly (like a common write-up's m*1, m*2, ... with m = -0.1): "
    "the paper's are geometric, each one 2^(-8/n) times the one before, so that they "
    "cover short and long ranges alike"
)
SLOPES_SHAPE = N_("slopes should have shape {expected} (one per head), got {got}")
H8 = torch.arange(1, 9, dtype=F64)


# Exercise 1: the weight a query keeps on itself (content scores zero, the query last)
# when the context doubles, in heads 1 and 8 of an 8-head model.
DOUBLING = {"heads": (1, 8), "lengths": (128, 256)}
CHANGES = ("stay", "halve", "between", "rise")  # "between": falls, by less than half


def own_weight(head: int, length: int) -> float:
    """Content scores zero, query at position length - 1, head `head` of 8: the weight on
    the query's own position (float64)."""
    from ..alibi import alibi_query_attention, alibi_slopes

    slope = alibi_slopes(8).double()[head - 1]
    weights = alibi_query_attention(torch.zeros(length, dtype=F64), slope, length - 1)
    return float(weights[-1])


def _change(ratio: float) -> str:
    if abs(ratio - 1) < 1e-3:
        return "stay"
    if abs(ratio - 0.5) < 1e-3:
        return "halve"
    return "between" if 0.5 < ratio < 1 else "rise" if ratio > 1 else "falls more"


def _doubling_expected() -> dict:
    short, long = DOUBLING["lengths"]
    return {
        f"head {h}": _change(own_weight(h, long) / own_weight(h, short))
        for h in DOUBLING["heads"]
    }


def _read_changes(answer, name):
    return as_choices(answer, name, ("head 1", "head 8"), CHANGES)


def _doubling_facts(value, expected) -> dict:
    short, long = DOUBLING["lengths"]
    ratio = own_weight(8, long) / own_weight(8, short)
    return {"ratio": f"{ratio:.2f}", "short": short, "last": long - 1}


@exercise(
    read=_read_changes,
    expected=_doubling_expected,
    placeholder=N_('replace `None` with a dict {{"head 1": ..., "head 8": ...}}'),
    facts=_doubling_facts,
    mistakes=[
        Mistake(
            lambda a: {"head 1", "head 8"} - set(a),
            N_('answer for both heads: the dict needs "head 1" and "head 8"'),
        ),
        Mistake(
            lambda a: "rise" in a.values(),
            N_(
                "more keys only add positive terms to the softmax's denominator, "
                "e^(-μΔ) for each new key: no weight can rise"
            ),
        ),
        Mistake(
            lambda a: a["head 8"] == "halve",
            N_(
                "head 8 would halve only with no bias at all (the same weight on every "
                "key). Its new keys, {short} to {last} tokens back, each weigh "
                "e^(-Δ/256) ≤ e^(-1/2) of the query's own weight, less than the old "
                "ones, so they add less than the old total: the weight falls to "
                "{ratio} times"
            ),
        ),
        Mistake(
            lambda a: a["head 8"] == "stay",
            N_(
                "head 8's span is about 1179 tokens: its new keys, {short} to {last} "
                "tokens back, still weigh e^(-Δ/256) > e^(-1) ≈ 0.37 of the query's own "
                "weight, so they add much to the softmax's denominator"
            ),
        ),
        Mistake(
            lambda a: a["head 1"] != "stay",
            N_(
                "head 1's span is 9 tokens: a key {short} tokens back weighs e^(-64) of "
                "the query's own weight, so the new keys change the denominator by "
                "nothing visible, and the weight on itself stays 1 - e^(-1/2) ≈ 0.39"
            ),
        ),
    ],
    right=N_(
        "head 1 stays at 1 - e^(-1/2) ≈ 0.39 (the new keys are far past its "
        "span); head 8's weight falls to {ratio} times, not 0.5: the new keys, further "
        "back, each weigh less than the old ones"
    ),
)
def check_doubled_context(answer):
    """8 heads, content scores zero, the query last: when the context doubles from 128 to
    256 tokens, does the weight on the query's own position stay, halve, fall by less
    than half (between) or rise, in head 1 and in head 8?"""


def _sorted(t: torch.Tensor) -> torch.Tensor:
    return t.sort(descending=True).values


SLOPES_12 = _paper_slopes(12)


@exercise(
    read=as_tensor,
    name=Word(N_("slopes")),
    expected=SLOPES_12,
    placeholder=N_("replace `None` with a tensor of 12 slopes, head 1 first"),
    mistakes=[
        Mistake(lambda a: a.shape != (12,), SLOPES_SHAPE),
        Mistake(_linear(12), LINEAR),
        Mistake(
            _geometric(12),
            N_(
                "that is 2^(-8h/12), the power-of-two formula applied to 12 heads. 12 is "
                "not a power of two: take the 8 slopes of an 8-head model, then the 4 "
                "slopes of the 16-head sequence that fall in between them (2^-0.5, "
                "2^-1.5, 2^-2.5, 2^-3.5)"
            ),
        ),
        Mistake(
            _geometric(16)[:12],
            N_(
                "these are the first 12 slopes of a 16-head model, so the gentle slopes "
                "2^-6.5 .. 2^-8 are missing: keep all 8 slopes of the 8-head model, then "
                "add 4 from the 16-head sequence"
            ),
        ),
        Mistake(
            torch.cat([_geometric(8), _geometric(16)[1::2][:4]]),
            N_(
                "the last four repeat slopes you already have (2^-1 .. 2^-4): from the "
                "16-head sequence take the odd-numbered ones, [0::2] in Python, which are "
                "the new values 2^-0.5, 2^-1.5, ..."
            ),
        ),
        Mistake(
            -SLOPES_12,
            N_("the slopes are positive numbers; the minus sign belongs to the bias"),
        ),
        Mistake(
            lambda a: same_values(_sorted(a), _sorted(SLOPES_12)),
            N_(
                "the right 12 values in another order: the rule keeps the 8-head slopes "
                "first, then the 4 new ones (2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5); BLOOM's "
                "head h expects exactly that slope"
            ),
        ),
    ],
    right=N_(
        "the 8-head slopes 2^-1 .. 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5: the same as "
        "rope_lib.alibi_slopes(12) and BLOOM's build_alibi_tensor"
    ),
)
def check_twelve_head_slopes(answer):
    """The slopes of a 12-head ALiBi model (BLOOM's rule for n not a power of two), head 1
    first."""


# Exercise 3: head 2 of 8 (slope 1/4), 5 tokens; rows are queries m, columns keys n.
M5, N5 = torch.arange(5, dtype=F64)[:, None], torch.arange(5, dtype=F64)[None, :]
PAST, FUTURE = N5 <= M5, N5 > M5
BIAS = torch.where(PAST, -0.25 * (M5 - N5), torch.tensor(-math.inf, dtype=F64))
SYMMETRIC = -0.25 * (M5 - N5).abs()


def _slope_factor(a: torch.Tensor) -> float | None:
    """The one factor between a's past entries and the bias's, when there is one (not 1)."""
    if not (torch.isinf(a[FUTURE]).all() and torch.isfinite(a[PAST]).all()):
        return None
    off_diagonal = PAST & ~torch.eye(5, dtype=torch.bool)
    r = a[off_diagonal] / BIAS[off_diagonal]
    uniform = torch.allclose(r, r[0].expand_as(r), rtol=1e-4)
    return float(r[0]) if uniform and abs(float(r[0]) - 1) > 1e-3 else None


def _past_is(a: torch.Tensor, values: torch.Tensor) -> bool:
    return same_values(a[PAST], values[PAST])


@exercise(
    read=as_tensor,
    name=Word(N_("bias")),
    options={
        "finite": False,
        "nan_hint": N_(
            "0 * inf somewhere? build the -inf entries with masked_fill or where"
        ),
    },
    expected=BIAS,
    placeholder=N_(
        "replace `None` with a [5, 5] tensor: rows are queries m, columns keys n"
    ),
    mistakes=[
        Mistake(
            lambda a: a.dim() == 3 and a.shape[-2:] == (5, 5),
            N_("give head 2 only, a [5, 5] matrix, not all heads {shape}"),
        ),
        Mistake(
            lambda a: a.shape != (5, 5),
            N_("bias should have shape {expected}, got {got}"),
        ),
        Mistake(
            SYMMETRIC,
            N_(
                "this is the symmetric bias -μ·|m - n| (a common write-up's), with no "
                "mask: the future keys n > m get a finite score, so a decoder could look "
                "ahead; put -inf there"
            ),
        ),
        Mistake(
            -SYMMETRIC,
            N_(
                "the bias is positive and there is no mask: distant keys would be "
                "favoured and the future visible. It is -μ·(m - n) for n <= m and -inf "
                "for n > m"
            ),
        ),
        Mistake(
            BIAS.T,
            N_(
                "transposed: rows are queries m and columns keys n, so the -inf (the "
                "future, n > m) goes above the diagonal"
            ),
        ),
        Mistake(
            lambda a: torch.isinf(a[FUTURE]).all() and _past_is(a, -BIAS),
            N_(
                "the bias is positive: +μ·(m - n) would make the query prefer distant "
                "keys. ALiBi subtracts: -μ·(m - n)"
            ),
        ),
        Mistake(
            lambda a: (
                _past_is(a, BIAS) and same_values(a[FUTURE], torch.zeros(10, dtype=F64))
            ),
            N_(
                "the past is right, but the future entries (n > m) are 0: that gives "
                "them a higher score than any past key. Use -inf there (softmax turns it "
                "into weight 0)"
            ),
        ),
        Mistake(
            lambda a: _past_is(a, BIAS) and not torch.isinf(a[FUTURE]).all(),
            N_("the past is right; the future entries (n > m) must all be -inf"),
        ),
        Mistake(
            lambda a: _past_is(a, 0.25 * N5.expand(5, 5)),
            N_(
                "this is the row-constant form slope * j (what BLOOM uses; it gives the "
                "same softmax). Here, write the distance form -μ·(m - n)"
            ),
        ),
        Mistake(
            lambda a: _slope_factor(a) is not None,
            lambda f: _(
                "the pattern is right but the slope is off by a factor {factor:.4g}: "
                "head 2 of 8 has slope 2^(-8*2/8) = 1/4 (head 1 is 1/2; heads count "
                "from 1)"
            ).format(factor=_slope_factor(f["value"])),
        ),
        Mistake(
            lambda a: not (torch.isinf(a[FUTURE]).all() and (a[FUTURE] < 0).all()),
            N_("the future entries (n > m) must all be -inf"),
        ),
    ],
    compare=lambda a, expected, name: compare_tensor(
        a[PAST], expected[PAST], _("the past entries (n <= m)")
    ),
    right=N_(
        "0 on the diagonal, -1/4 per step to the left, -inf to the right: "
        "rope_lib.alibi_bias(5, 8)[1] gives the same"
    ),
)
def check_causal_bias(answer):
    """The causal ALiBi bias of head 2 of 8 (slope 1/4) for 5 tokens: [5, 5], rows =
    queries m, columns = keys n, -μ·(m - n) for n <= m and -inf for n > m."""


# Exercise 4: query 5 over keys 0..7, slope 1/2, every content score 0.
D = 5 - torch.arange(8, dtype=F64)  # the distance m - n to each key
KEYS_PAST = D >= 0
LOGITS = -0.5 * D


def _softmax_of(weights: torch.Tensor) -> torch.Tensor:
    return weights / weights.sum()


WEIGHTS = _softmax_of(
    torch.where(KEYS_PAST, torch.exp(LOGITS), torch.zeros(8, dtype=F64))
)


def _unnormalized(a: torch.Tensor) -> bool:
    total = float(a.sum())
    return (
        total > 0
        and not math.isclose(total, 1.0, rel_tol=1e-4)
        and same_values(a / a.sum(), WEIGHTS)
    )


@exercise(
    read=as_tensor,
    name=Word(N_("weights")),
    options={
        "finite": False,
        "nan_hint": N_("a row of all -inf? only keys n > 5 should be masked"),
    },
    expected=WEIGHTS,
    placeholder=N_("replace `None` with a tensor of 8 weights, one per key n = 0..7"),
    mistakes=[
        Mistake(
            lambda a: a.shape != (8,),
            N_("weights should have shape {expected} (one per key), got {got}"),
            first=True,
        ),
        Mistake(
            lambda a: (
                torch.isinf(a).any()
                and (a[~KEYS_PAST] == -math.inf).all()
                and same_values(a[KEYS_PAST], LOGITS[KEYS_PAST])
            ),
            N_(
                "these are the masked scores (logits) -μ·(m - n) with -inf for the "
                "future: right so far, but the weights are softmax(scores + bias) over "
                "the keys: apply the softmax (it turns -inf into weight 0)"
            ),
            first=True,
        ),
        Mistake(
            lambda a: torch.isinf(a).any(),
            N_(
                "weights are probabilities between 0 and 1; -inf belongs to the scores "
                "before the softmax, not to the weights: the weights are "
                "softmax(scores + bias) over the keys: apply the softmax"
            ),
            first=True,
        ),
        Mistake(
            either(LOGITS, torch.where(KEYS_PAST, LOGITS, torch.zeros(8, dtype=F64))),
            N_(
                "these are the scores -μ·(m - n), not weights: mask n > 5 with -inf, "
                "then the weights are softmax(scores + bias) over the keys: apply the "
                "softmax"
            ),
            first=True,
        ),
        Mistake(
            -0.5 * D.abs(),
            N_(
                "these are the symmetric scores -μ·|m - n|: mask the future keys n > 5 "
                "with -inf, then the weights are softmax(scores + bias) over the keys: "
                "apply the softmax"
            ),
            first=True,
        ),
        Mistake(
            lambda a: (a < 0).any() or (a > 1).any(),
            N_(
                "weights are probabilities between 0 and 1; these look like scores: the "
                "weights are softmax(scores + bias) over the keys: apply the softmax"
            ),
            first=True,
        ),
        Mistake(
            _softmax_of(torch.exp(-0.5 * D.abs())),
            N_(
                "keys 6 and 7 are in the future of query 5 and get weight here: you used "
                "|m - n| without the causal mask (the symmetric, encoder variant). Mask "
                "n > m with -inf before the softmax"
            ),
        ),
        Mistake(
            _softmax_of(
                torch.where(KEYS_PAST, torch.exp(-LOGITS), torch.zeros(8, dtype=F64))
            ),
            N_(
                "the weights grow with distance: the bias has the wrong sign, it is "
                "-μ·(m - n)"
            ),
        ),
        Mistake(
            _softmax_of(KEYS_PAST.to(F64)),
            N_(
                "all past keys get 1/6: the bias is missing, this is what zero scores "
                "give without ALiBi"
            ),
        ),
        Mistake(
            _unnormalized,
            lambda f: _(
                "the shape is right but the weights sum to {total:.4f}: divide by the "
                "sum (softmax normalizes exp(score + bias) over the keys)"
            ).format(total=float(f["value"].sum())),
        ),
        Mistake(
            lambda a: (a[~KEYS_PAST].abs() > 1e-6).any(),
            N_("keys n = 6 and 7 are in the future of query 5 and must get weight 0"),
        ),
    ],
    facts={"ratio": math.exp(-0.5), "own": float(WEIGHTS[5])},
    right=N_(
        "each step back multiplies the weight by e^(-1/2) = {ratio:.4f}; the query's own "
        "key gets {own:.4f}. rope_lib.alibi_query_attention(torch.zeros(8), 0.5, 5) gives "
        "the same"
    ),
)
def check_query_weights(answer):
    """The attention weights [8] of the query at position 5 over keys n = 0..7 for a head
    with slope 1/2, in a causal model, when every content score q.k/sqrt(d) is 0."""
