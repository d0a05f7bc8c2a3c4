"""Checkers for the extrapolation lab's exercises. Each takes one argument, the answer.

    from rope_lib.exercises import lab as ex
    ex.check_exact_match(exact_match)  # a passkey scorer: exact-match accuracy
    ex.check_pi_frequencies(pi_freq)   # PI's frequencies for the lab model at 4L
    ex.check_best_scheme(answer)       # the lowest loss at the longest window

The expected values come from first principles (the definition of exact match,
theta_i = b^(-2i/d) / s for Position Interpolation) or from the lab results the lesson
reads: the folder named by the environment variable ROPE_LAB_RESULTS, or the committed
notebooks/lab_results/ (load_results()).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from .. import results as _results
from ..language import N_, _
from . import NotYet, compare_tensor, exercise
from .answers import as_number, as_tensor, describe

#: The committed results, read when ROPE_LAB_RESULTS is not set.
COMMITTED_RESULTS = _results.NOTEBOOKS / "lab_results"


def results_folder() -> Path:
    """The folder of results.json the lesson reads: ROPE_LAB_RESULTS (a relative path is
    taken from the current folder, else from notebooks/, as the lesson resolves it from
    there), or the committed notebooks/lab_results/."""
    return _results.results_folder("ROPE_LAB_RESULTS", COMMITTED_RESULTS)


def load_results(folder=None) -> dict:
    """results.json of the lab (python -m rope_lib.lab --out FOLDER) as a dict; by
    default from results_folder()."""
    return _results.load_results(folder if folder is not None else results_folder())


# -------------------------------------------------------- exercise 1: exact match

# (predicted, expected, exact-match accuracy); the teacher notes quote the first four
CASES = [
    ([[1, 2], [3, 4]], [[1, 2], [3, 4]], 1.0),
    ([[1, 2], [3, 5]], [[1, 2], [3, 4]], 0.5),
    ([[1, 9], [9, 4]], [[1, 2], [3, 4]], 0.0),
    ([[2, 1], [4, 3], [5, 6], [7, 8]], [[1, 2], [3, 4], [5, 6], [7, 8]], 0.5),
    ([[0, 0, 7], [1, 2, 3], [9, 9, 9]], [[0, 0, 0], [1, 2, 3], [9, 9, 8]], 1 / 3),
]


def _rows(table) -> str:
    return str(table).replace(" ", "")


def _first_wrong(answer, name: str):
    """Run the learner's function on every case: None when all are right, else the
    first wrong one (the messages' fields, p, e, got); raises NotYet when it fails."""
    if not callable(answer):
        raise NotYet(
            _("give the function itself, exact_match (no brackets): got {got}").format(
                got=describe(answer)
            )
        )
    for predicted, expected, want in CASES:
        p, e = torch.tensor(predicted), torch.tensor(expected)
        case = {"predicted": _rows(predicted), "expected": _rows(expected)}
        try:
            result = answer(p.clone(), e.clone())
        except Exception as error:  # noqa: BLE001 - any failure is feedback for the learner
            if isinstance(error, RuntimeError) and "dtype" in str(error):
                raise NotYet(
                    _(
                        "on {predicted} vs {expected} your function raised "
                        "RuntimeError ({error}...): turn the booleans into numbers "
                        "(.double()) before taking the mean"
                    ).format(**case, error=str(error)[:60])
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
            got = as_number(result, _("what your function returns"))
        except NotYet as problem:
            raise NotYet(
                _(
                    "on {predicted} vs {expected}: {problem}. exact_match gives one "
                    "number, the fraction of keys (rows) with every digit right"
                ).format(**case, problem=problem)
            ) from None
        if not math.isclose(got, want, abs_tol=1e-6):
            return {**case, "p": p, "e": e, "got": got, "want": want, "keys": len(p)}
    return None


def _gives(statistic):
    """Whether the wrong case's result is `statistic` of (p == e)."""
    return lambda c: math.isclose(
        c["got"], float(statistic(c["p"] == c["e"])), abs_tol=1e-6
    )


@exercise(
    read=_first_wrong,
    expected=None,
    same=lambda wrong, none: wrong is None,
    placeholder=N_(
        "replace `None` with your function exact_match(predicted, expected)"
    ),
    mistakes={
        N_(
            "on {predicted} vs {expected} you give {got:.3g}, the fraction of right "
            "digits; exact match counts a key only when all its digits are right: "
            "{want:.3g}"
        ): _gives(lambda hits: hits.double().mean()),
        N_(
            "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}: a "
            "key with one right digit does not count; use .all(dim=1), not "
            ".any(dim=1)"
        ): _gives(lambda hits: hits.any(dim=1).double().mean()),
        N_(
            "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}: "
            "{got:.3g} is how many keys are right; divide by the number of keys "
            "({keys})"
        ): _gives(lambda hits: hits.all(dim=1).sum()),
    },
    facts=lambda wrong, none: wrong or {},
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

HEAD_DIM, BASE, FACTOR, MODEL_WIDTH = 16, 10000.0, 4, 64


def _theta(d: int = HEAD_DIM, two: float = 2.0, base: float = BASE) -> torch.Tensor:
    i = torch.arange(HEAD_DIM // 2, dtype=torch.float64)
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
            _("{problem}; expected theta_i = 10000^(-2i/16) / 4").format(
                problem=problem
            )
        ) from None


@exercise(
    read=as_tensor,
    name="inv_freq",
    expected=_theta() / FACTOR,
    mistakes={
        N_(
            "inv_freq should have shape (8,), got {shape}: one frequency per pair "
            "of coordinates, i = 0..7"
        ): (lambda a: a.shape != (8,) and a.numel() == 16),
        N_("inv_freq should have shape (8,), got {shape}"): (lambda a: a.shape != (8,)),
        N_(
            "you multiplied by s; PI slows every pair down: divide theta_i by s = 4"
        ): _theta() * FACTOR,
        N_(
            "these are the unscaled frequencies; PI divides each by s = 256 / 64 = 4"
        ): _theta(),
        _divided_by(2): _theta() / 2,
        _divided_by(8): _theta() / 8,
        N_(
            "you used d = 64, the model's width; RoPE rotates each head: d = 16, "
            "the head dimension"
        ): _theta(d=MODEL_WIDTH) / FACTOR,
        N_("the exponent is -2i/d (i counts pairs): theta_i = b^(-2i/d)"): _theta(
            two=1.0
        )
        / FACTOR,
        N_(
            "the right values in reverse order: theta_0 / 4 = 1/4 (the fastest "
            "pair) comes first"
        ): _theta().flip(0) / FACTOR,
        N_(
            "that is NTK's base change; Position Interpolation divides every "
            "theta_i by s"
        ): _theta(base=BASE * FACTOR ** (HEAD_DIM / (HEAD_DIM - 2))),
    },
    compare=_compare,
    right=N_(
        "every theta_i divided by s = 4: position m turns like m/4 did in training"
    ),
    right_when_close=N_("every theta_i divided by s = 4"),
)
def check_pi_frequencies(answer):
    """The lab model's 8 RoPE frequencies (head_dim d = 16, base b = 10000) under
    Position Interpolation from L = 64 to 4L = 256: theta_i / s."""


# -------------------------------------------------------- exercise 3: best scheme


def _scheme_name(answer, names):
    """The scheme key an answer names (a key of results['lm'] or its label, any case);
    raises NotYet."""
    from ..lab.figures import LABELS

    if answer is None:
        raise NotYet(_("replace `None` with a scheme name, e.g. 'rope'"))
    if isinstance(answer, np.ndarray) and answer.ndim == 0 and answer.dtype.kind == "U":
        answer = str(answer)  # a 0-d numpy string is the string
    one = isinstance(answer, (list, tuple, set, frozenset)) and len(answer) == 1
    if one or (
        isinstance(answer, np.ndarray) and answer.ndim >= 1 and answer.size == 1
    ):
        raise NotYet(_("give one name (a string), not a collection of names"))
    if not isinstance(answer, (str, np.str_)):
        raise NotYet(
            _("answer with one of {names} (a string), got {got}").format(
                names=sorted(names), got=describe(answer)
            )
        )
    text = str(answer).strip().lower()
    aliases = {name.lower(): name for name in names}
    aliases.update({LABELS[n].lower(): n for n in names if n in LABELS})
    # and the label in the learner's language, as the lesson's figures show it
    aliases.update({_(LABELS[n]).lower(): n for n in names if n in LABELS})
    if text not in aliases:
        raise NotYet(
            _(
                "answer with one of {names} (the keys of results['lm']), got {got}"
            ).format(names=sorted(names), got=describe(answer))
        )
    return aliases[text]


def _read_scheme(answer, name: str) -> dict:
    """The named scheme with the mean losses of every scheme at the first and the
    longest window, from the results the lesson reads."""
    try:
        results = load_results()
        lengths = results["config"]["eval_lengths"]
        first, longest = str(min(lengths)), str(max(lengths))
        means = {s: v["summary"][longest]["mean"] for s, v in results["lm"].items()}
        at_first = {s: v["summary"][first]["mean"] for s, v in results["lm"].items()}
    except (OSError, KeyError, TypeError, ValueError) as error:
        raise NotYet(
            _(
                "the lab results could not be read ({kind}): run "
                "`python -m rope_lib.lab --out DIR` and set ROPE_LAB_RESULTS=DIR"
            ).format(kind=type(error).__name__)
        ) from None
    scheme = _scheme_name(answer, means)
    return {
        "name": scheme,
        "loss": means[scheme],
        "first": first,
        "longest": longest,
        "means": means,
        "at_first": at_first,
    }


def _best(losses: dict) -> str:
    return min(losses, key=losses.get)


@exercise(
    read=_read_scheme,
    expected=None,
    same=lambda read, none: read["name"] == _best(read["means"]),
    mistakes={
        N_(
            "{name} is the best at {first} tokens (the training length), but {name} "
            "has mean loss {loss:.3f} at {longest} tokens; one scheme does better at "
            "the longest window"
        ): (lambda read: read["name"] == _best(read["at_first"])),
        N_(
            "{name} has mean loss {loss:.3f} at {longest} tokens, the highest: the "
            "question asks for the lowest (min, not max); one scheme does better"
        ): (lambda read: read["name"] == max(read["means"], key=read["means"].get)),
    },
    facts=lambda read, none: read,
    otherwise=N_(
        "{name} has mean loss {loss:.3f} at {longest} tokens; one scheme does better: "
        "compare results['lm'][name]['summary']['{longest}']['mean']"
    ),
    right=N_("{name}: mean loss {loss:.3f} at {longest} tokens"),
)
def check_best_scheme(answer):
    """The scheme (a key of results['lm'], e.g. 'rope') with the lowest mean loss at the
    longest evaluation window, in the results the lesson reads (load_results())."""
