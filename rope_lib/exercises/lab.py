"""Checkers for the extrapolation lab's exercises (lesson 12). Each takes one argument,
the answer, and returns a Feedback (never raises).

    from rope_lib.exercises import lab as ex
    ex.check_exact_match(exact_match)    # a passkey scorer: exact-match accuracy
    ex.check_pi_frequencies(pi_freq)     # PI's 16 frequencies for the lab's RoPE at 4L
    ex.check_best_extension(name)        # the best zero-shot extension at 4L (passkey)

The expected values come from first principles (the definition of exact match,
theta_i = b^(-2i/d) / s for Position Interpolation) or from the lab results the lesson
reads (rope_lib.lab.summary on rope_lib.lab.results.load_results()): the folder named by
the environment variable ROPE_LAB_RESULTS, or the committed notebooks/lab_results/. So
they hold on any run of the lab, whatever its seeds.
"""

from __future__ import annotations

import math

import torch

from ..lab import summary
from ..lab.experiments import METHODS
from ..lab.figures import LABELS
from ..lab.results import load_results
from ..language import N_, _
from ..scaling import rope_frequencies
from . import Mistake, NotYet, Word, compare_tensor, either, exercise
from .answers import as_choice, as_number, as_tensor, describe

# -------------------------------------------------------- exercise 1: exact match

# ((predicted, expected), exact-match accuracy): rows are 3-digit keys, as in the lab's
# passkeys; the teacher notes quote the first four
CASES = [
    (([[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]]), 1.0),
    (([[1, 2, 3], [4, 5, 7]], [[1, 2, 3], [4, 5, 6]]), 0.5),
    (([[1, 9, 9], [9, 5, 9]], [[1, 2, 3], [4, 5, 6]]), 0.0),
    (
        (
            [[3, 2, 1], [4, 5, 6], [7, 8, 0], [0, 0, 0]],
            [[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 0, 0]],
        ),
        0.5,
    ),
    (([[0, 0, 7], [1, 2, 3], [9, 9, 9]], [[0, 0, 0], [1, 2, 3], [9, 9, 8]]), 1 / 3),
]


def _rows(table) -> str:
    return str(table).replace(" ", "")


def _run(answer, name: str, predicted, expected) -> float:
    """What the learner's function gives on one case; raises NotYet when it is no
    function, fails, or gives no number."""
    if not callable(answer):
        raise NotYet(
            _("give the function itself, exact_match (no brackets): got {got}").format(
                got=describe(answer)
            )
        )
    case = {"predicted": _rows(predicted), "expected": _rows(expected)}
    try:
        result = answer(torch.tensor(predicted), torch.tensor(expected))
    except Exception as error:  # noqa: BLE001 - the learner's code: feedback for them
        if isinstance(error, RuntimeError) and "dtype" in str(error):
            raise NotYet(
                _(
                    "on {predicted} vs {expected} your function raised a "
                    "RuntimeError: torch takes no mean of booleans; turn the "
                    "booleans into numbers (.double()) before taking the mean"
                ).format(**case)
            ) from None
        raise NotYet(
            _(
                "on {predicted} vs {expected} your function raised {kind}: {error}"
            ).format(**case, kind=type(error).__name__, error=error)
        ) from None
    if result is None:
        raise NotYet(
            _(
                "your function returns None: return the fraction of rows with all "
                "digits right"
            )
        )
    try:
        return as_number(result, _("what your function returns"))
    except NotYet as problem:
        raise NotYet(
            _(
                "on {predicted} vs {expected}: {problem}. exact_match gives one "
                "number, the fraction of keys (rows) with every digit right"
            ).format(**case, problem=problem)
        ) from None


def _gives(predicted, expected, statistic):
    """Whether the learner's result is `statistic` of (predicted == expected)."""
    hits = torch.tensor(predicted) == torch.tensor(expected)
    return lambda got: math.isclose(got, float(statistic(hits)), abs_tol=1e-6)


@exercise(
    read=_run,
    cases=CASES,
    same=lambda got, want: math.isclose(got, want, abs_tol=1e-6),
    placeholder=N_(
        "replace `None` with your function exact_match(predicted, expected)"
    ),
    mistakes=lambda p, e: [
        Mistake(
            _gives(p, e, lambda hits: hits.double().mean()),
            N_(
                "on {predicted} vs {expected} you give {got:.3g}, the fraction of "
                "right digits; exact match counts a key only when all its digits are "
                "right: {want:.3g}"
            ),
        ),
        Mistake(
            _gives(p, e, lambda hits: hits.any(dim=1).double().mean()),
            N_(
                "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}: "
                "a key with one right digit does not count; use .all(dim=1), not "
                ".any(dim=1)"
            ),
        ),
        Mistake(
            _gives(p, e, lambda hits: hits.all(dim=1).sum()),
            N_(
                "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}: "
                "{got:.3g} is how many keys are right; divide by the number of keys "
                "({keys})"
            ),
        ),
        Mistake(
            _gives(p, e, lambda hits: hits.all(dim=0).double().mean()),
            N_(
                "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}: "
                "dim=0 runs down the keys (one digit place of every key); a key is a "
                "row, so take .all(dim=1)"
            ),
        ),
    ],
    facts=lambda got, want, p, e: {
        "predicted": _rows(p),
        "expected": _rows(e),
        "got": got,
        "want": want,
        "keys": len(p),
    },
    otherwise=N_(
        "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}"
    ),
    right=N_(
        "a key counts only when every digit is right, as in the papers' passkey tables"
    ),
)
def check_exact_match(answer):
    """answer: a function exact_match(predicted, expected) of two [n, k] integer tensors
    that returns the fraction of rows (keys) with every digit right."""


# -------------------------------------------------------- exercise 2: PI frequencies

# the lab's RoPE: heads of 32 dimensions (d_model 64, 2 heads), base 10^4, L = 64; PI
# reads 4L = 256 tokens with s = 4
HEAD_DIM, BASE, FACTOR, L, MODEL_WIDTH = 32, 10000.0, 4, 64, 64
PAIRS = HEAD_DIM // 2


def _theta(d: int = HEAD_DIM, two: float = 2.0, base: float = BASE, n: int = PAIRS):
    """base^(-two * i / d) for i = 0 .. n - 1, float64."""
    i = torch.arange(n, dtype=torch.float64)
    return base ** (-two * i / d)


def _divided_by(s: int):
    return lambda a: _(
        "you divided by {s}; PI's factor is the new window over the training length: "
        "s = 256 / 64 = 4"
    ).format(s=s)


def _compare(a, expected, name):
    try:
        compare_tensor(a, expected, name)
    except NotYet as problem:
        raise NotYet(
            _("{problem}; expected theta_i = 10000^(-2i/32) / 4").format(
                problem=problem
            )
        ) from None


def _scaled(rope_type: str, **extra) -> torch.Tensor:
    """The lab's frequencies under another method at the same s (what a slip gives)."""
    extra |= {"factor": float(FACTOR), "original_max_position_embeddings": L}
    return rope_frequencies(rope_type, HEAD_DIM, BASE, **extra)[0].to(torch.float64)


@exercise(
    read=as_tensor,
    name="inv_freq",
    expected=_theta() / FACTOR,
    placeholder=N_("replace `None` with a tensor of the 16 frequencies, i = 0 first"),
    mistakes=lambda: [
        Mistake(
            lambda a: a.shape != (PAIRS,) and a.numel() == HEAD_DIM,
            N_(
                "inv_freq should have shape (16,), got {shape}: one frequency per pair "
                "of coordinates, i = 0..15"
            ),
        ),
        Mistake(
            lambda a: a.shape == (PAIRS // 2,),
            N_(
                "inv_freq should have shape (16,), got {shape}: 8 frequencies are a head "
                "of 16 dimensions; the lab's heads have 32 (d_model 64, 2 heads)"
            ),
        ),
        Mistake(
            lambda a: a.shape != (PAIRS,),
            N_("inv_freq should have shape (16,), got {shape}"),
        ),
        Mistake(
            _theta() * FACTOR,
            N_(
                "you multiplied by s; PI slows every pair down: divide theta_i by s = 4"
            ),
        ),
        Mistake(
            _theta(),
            N_(
                "these are the unscaled frequencies; PI divides each by s = 256 / 64 = 4"
            ),
        ),
        Mistake(_theta() / 2, _divided_by(2)),
        Mistake(_theta() / 8, _divided_by(8)),
        Mistake(
            either(_theta(d=PAIRS) / FACTOR, _theta(d=PAIRS)),
            N_(
                "you used d = 16, the number of frequencies; d is the head dimension, 32, "
                "so theta_i = 10000^(-2i/32), i = 0..15"
            ),
        ),
        Mistake(
            either(_theta(d=MODEL_WIDTH) / FACTOR, _theta(d=MODEL_WIDTH)),
            N_(
                "that is 10000^(-i/32): as if d were 64 (the model's width) or the 2 of "
                "2i were missing; d is the head dimension, 32, and i counts pairs: "
                "theta_i = 10000^(-2i/32)"
            ),
        ),
        Mistake(
            _theta().flip(0) / FACTOR,
            N_(
                "the right values in reverse order: theta_0 / 4 = 1/4 (the fastest "
                "pair) comes first"
            ),
        ),
        Mistake(
            _theta(base=BASE * FACTOR ** (HEAD_DIM / (HEAD_DIM - 2))),
            N_(
                "that is NTK's base change (base 10000 * 4^(32/30)); Position "
                "Interpolation keeps the base and divides every theta_i by s"
            ),
        ),
        Mistake(
            _scaled("yarn"),
            N_(
                "those are YaRN's frequencies (it keeps the fast pairs); Position "
                "Interpolation divides every theta_i by s, the fast ones too"
            ),
        ),
        Mistake(
            _scaled("llama3", low_freq_factor=1.0, high_freq_factor=4.0),
            N_(
                "those are Llama 3's frequencies (it keeps the fast pairs); Position "
                "Interpolation divides every theta_i by s, the fast ones too"
            ),
        ),
        Mistake(
            either(2 * math.pi * FACTOR / _theta(), 2 * math.pi / _theta()),
            N_(
                "those are wavelengths (2 pi / frequency, in tokens); give the "
                "frequencies theta_i / s themselves"
            ),
        ),
    ],
    compare=_compare,
    right=N_(
        "every theta_i divided by s = 4: position m turns like m/4 did in training"
    ),
    right_when_close=N_("every theta_i divided by s = 4"),
)
def check_pi_frequencies(answer):
    """The lab model's 16 RoPE frequencies (head_dim d = 32, base b = 10000) under
    Position Interpolation from L = 64 to 4L = 256: theta_i / s with s = 4."""


# -------------------------------------------------------- exercise 3: best extension


def _lab_results() -> dict:
    """load_results(), or NotYet naming the command that makes them."""
    try:
        results = load_results()
        for part in ("schemes", "scaling", "yardsticks"):
            if part not in results:
                raise KeyError(part)
        for key in ("seeds", "train_length", "lengths", "schemes", "methods"):
            if key not in results["config"]:
                raise KeyError(key)
    except (OSError, KeyError, TypeError, ValueError) as error:
        raise NotYet(
            _(
                "the lab results could not be read ({kind}): run "
                "`python -m rope_lib.lab --out DIR` and set ROPE_LAB_RESULTS=DIR"
            ).format(kind=type(error).__name__)
        ) from None
    return results


def _top(by_method: dict, sign: int = 1) -> frozenset:
    """Every method with the highest value (sign=-1: the lowest): dynamic NTK ties NTK."""
    top = max(sign * v for v in by_method.values())
    return frozenset(m for m, v in by_method.items() if sign * v >= top - 1e-9)


def _extensions() -> dict:
    """The given of exercise 3: every method's mean passkey accuracy by length past L and
    its text loss at 4L, from the results the lesson reads."""
    results = _lab_results()
    config = results["config"]
    L = config["train_length"]
    by_length = {
        n: {
            m: summary.mean(summary.passkey(results, "rope", n, m))
            for m in config["methods"]
        }
        for n in config["lengths"]
        if n > L
    }
    text4 = {
        m: summary.mean(summary.text_loss(results, "rope", 4 * L, m))
        for m in config["methods"]
    }
    return {"results": results, "L": L, "by_length": by_length, "text4": text4}


def _extension_facts(method: str, best: frozenset, given: dict) -> dict:
    L, at4 = given["L"], given["by_length"][4 * given["L"]]
    spread = summary.spread(summary.passkey(given["results"], "rope", 4 * L, method))
    ties = [m for m in at4 if m in best and m != method]
    return {
        "name": _(LABELS.get(method, method)),
        "accuracy": at4[method],
        "n4": 4 * L,
        "low": spread[1],
        "high": spread[2],
        "ties": ", ".join(_(LABELS.get(m, m)) for m in ties),
    }


def _best_at(factor: int, given: dict):
    n = factor * given["L"]
    by_length = given["by_length"]
    return lambda method: n in by_length and method in _top(by_length[n])


def _extension_right(fields) -> str:
    message = _(
        "{name}: mean passkey accuracy {accuracy:.2f} at 4L = {n4} tokens, its seeds "
        "from {low:.2f} to {high:.2f}"
    ).format(**fields)
    if fields["ties"]:
        message += _(" (tied with {ties}: the same numbers)").format(**fields)
    return message


PLAIN = "default"  # the RoPE model with no extension, the baseline


def _read_method(answer, name: str) -> str:
    """The method (one of METHODS) an answer names: its id or its label, in English or
    the learner's language; plain RoPE and the position schemes get their own word."""
    aliases = {a: m for m in METHODS for a in (m, LABELS[m], _(LABELS[m]))}
    aliases |= {"position interpolation": "linear", "pi": "linear", "ntk aware": "ntk"}
    aliases |= {"dynamic ntk": "dynamic", "dynamic ntk aware": "dynamic"}
    plain = N_(
        "{got} is the RoPE model with no extension, the baseline; the question asks "
        "which method extends it best: one of {names}"
    )
    scheme = N_(
        "{got} is a position scheme; the question asks for a zero-shot extension of "
        "the RoPE model: one of {names}"
    )
    baseline = ("default", "plain", "plain rope", "rope", _(LABELS[PLAIN]))
    near = {w: plain for w in baseline}
    near |= {w: scheme for w in ("none", "nope", "sinusoidal", "learned", "alibi")}
    near |= {_(LABELS[s]): scheme for s in ("sinusoidal", "learned")}
    unknown = N_(
        'answer with one of {names} (the names in config["methods"]), got {got}'
    )
    names = list(METHODS)
    return as_choice(answer, name, aliases, names=names, unknown=unknown, near=near)


@exercise(
    given=_extensions,
    read=_read_method,
    name=Word(N_("the method")),
    expected=lambda given: _top(given["by_length"][4 * given["L"]]),
    same=lambda method, best: method in best,
    placeholder=N_("replace `None` with a method's name, e.g. 'linear'"),
    mistakes=lambda given: [
        Mistake(
            lambda method: method in _top(given["by_length"][4 * given["L"]], -1),
            N_(
                "{name} has the LOWEST mean passkey accuracy at 4L = {n4} tokens "
                "({accuracy:.2f}): the question asks for the highest (max, not min)"
            ),
        ),
        Mistake(
            _best_at(2, given),
            N_(
                "{name} is the best at 2L, but at 4L = {n4} tokens its mean passkey "
                "accuracy is {accuracy:.2f}; one method does better there"
            ),
        ),
        Mistake(
            _best_at(8, given),
            N_(
                "{name} is the best at 8L, but at 4L = {n4} tokens its mean passkey "
                "accuracy is {accuracy:.2f}; one method does better there"
            ),
        ),
        Mistake(
            lambda method: method in _top(given["text4"], -1),
            N_(
                "{name} has the lowest text loss at 4L, but the question is about "
                "retrieval: its mean passkey accuracy there is {accuracy:.2f}, and one "
                "method does better"
            ),
        ),
    ],
    facts=_extension_facts,
    otherwise=N_(
        "{name} has mean passkey accuracy {accuracy:.2f} at 4L = {n4} tokens; one "
        'method does better: compare summary.mean(summary.passkey(results, "rope", '
        "4 * L, method)) for each method"
    ),
    right=_extension_right,
)
def check_best_extension(answer):
    """The zero-shot extension of the RoPE model (a name of config["methods"], e.g.
    "yarn") with the highest mean passkey accuracy over all seeds at 4L, in the results
    the lesson reads (load_results())."""
