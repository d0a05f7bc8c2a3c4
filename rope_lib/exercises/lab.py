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

import json
import math
import os
from pathlib import Path

import numpy as np
import torch

from ..language import _
from . import Feedback, compare_tensor, correct, not_yet, same_values
from .answers import describe, guarded, read_number, read_tensor

#: The committed results, read when ROPE_LAB_RESULTS is not set.
COMMITTED_RESULTS = Path(__file__).resolve().parents[2] / "notebooks" / "lab_results"


def results_folder() -> Path:
    """The folder of results.json the lesson reads: ROPE_LAB_RESULTS (a relative path is
    taken from the current folder, else from notebooks/, as the lesson resolves it from
    there), or the committed notebooks/lab_results/."""
    name = os.environ.get("ROPE_LAB_RESULTS")
    if not name:
        return COMMITTED_RESULTS
    folder = Path(name)
    if not folder.is_absolute() and not folder.exists():
        folder = COMMITTED_RESULTS.parent / folder
    return folder


def load_results(folder=None) -> dict:
    """results.json of the lab (python -m rope_lib.lab --out FOLDER) as a dict; by
    default from results_folder()."""
    folder = Path(folder) if folder is not None else results_folder()
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


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


@guarded
def check_exact_match(answer):
    """answer: a function exact_match(predicted, expected) of two [n, k] integer tensors
    that returns the fraction of rows (keys) with every digit right."""
    if answer is None:
        return not_yet(
            _("replace `None` with your function exact_match(predicted, expected)")
        )
    if not callable(answer):
        return not_yet(
            _("give the function itself, exact_match (no brackets): got {got}").format(
                got=describe(answer)
            )
        )
    for predicted, expected, want in CASES:
        p, e = torch.tensor(predicted), torch.tensor(expected)
        # the example every message below quotes
        case = {"predicted": _rows(predicted), "expected": _rows(expected)}
        try:
            result = answer(p.clone(), e.clone())
        except Exception as error:  # noqa: BLE001 - any failure is feedback for the learner
            if isinstance(error, RuntimeError) and "dtype" in str(error):
                return not_yet(
                    _(
                        "on {predicted} vs {expected} your function raised "
                        "RuntimeError ({error}...): turn the booleans into numbers "
                        "(.double()) before taking the mean"
                    ).format(**case, error=str(error)[:60])
                )
            return not_yet(
                _(
                    "on {predicted} vs {expected} your function raised {kind}: {error}"
                ).format(**case, kind=type(error).__name__, error=error)
            )
        if result is None:
            return not_yet(
                _(
                    "your function returns None: return the fraction of rows with all "
                    "digits right"
                )
            )
        got = read_number(result, _("what your function returns"))
        if isinstance(got, Feedback):
            return not_yet(
                _(
                    "on {predicted} vs {expected}: {problem}. exact_match gives one "
                    "number, the fraction of keys (rows) with every digit right"
                ).format(**case, problem=got.message)
            )
        if math.isclose(got, want, abs_tol=1e-6):
            continue
        digits = float((p == e).double().mean())
        right_rows = int((p == e).all(dim=1).sum())
        any_digit = float((p == e).any(dim=1).double().mean())
        if math.isclose(got, digits, abs_tol=1e-6):
            return not_yet(
                _(
                    "on {predicted} vs {expected} you give {got:.3g}, the fraction of "
                    "right digits; exact match counts a key only when all its digits "
                    "are right: {want:.3g}"
                ).format(**case, got=got, want=want)
            )
        if math.isclose(got, any_digit, abs_tol=1e-6):
            return not_yet(
                _(
                    "on {predicted} vs {expected} you give {got:.3g}, expected "
                    "{want:.3g}: a key with one right digit does not count; use "
                    ".all(dim=1), not .any(dim=1)"
                ).format(**case, got=got, want=want)
            )
        if math.isclose(got, right_rows, abs_tol=1e-6):
            return not_yet(
                _(
                    "on {predicted} vs {expected} you give {got:.3g}, expected "
                    "{want:.3g}: {got:.3g} is how many keys are right; divide by the "
                    "number of keys ({keys})"
                ).format(**case, got=got, want=want, keys=len(predicted))
            )
        return not_yet(
            _(
                "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}"
            ).format(**case, got=got, want=want)
        )
    return correct(
        _(
            "a key counts only when every digit is right, as in the papers' passkey "
            "tables"
        )
    )


# -------------------------------------------------------- exercise 2: PI frequencies

HEAD_DIM, BASE, FACTOR, MODEL_WIDTH = 16, 10000.0, 4, 64


def _theta(d: int = HEAD_DIM, two: float = 2.0, base: float = BASE) -> torch.Tensor:
    i = torch.arange(HEAD_DIM // 2, dtype=torch.float64)
    return base ** (-two * i / d)


@guarded
def check_pi_frequencies(answer):
    """The lab model's 8 RoPE frequencies (head_dim d = 16, base b = 10000) under
    Position Interpolation from L = 64 to 4L = 256: theta_i / s."""
    a = read_tensor(answer, "inv_freq")
    if isinstance(a, Feedback):
        return a
    theta = _theta()
    if tuple(a.shape) != tuple(theta.shape):
        if a.numel() == 2 * theta.numel():
            return not_yet(
                _(
                    "inv_freq should have shape (8,), got {shape}: one frequency per "
                    "pair of coordinates, i = 0..7"
                ).format(shape=tuple(a.shape))
            )
        return not_yet(
            _("inv_freq should have shape (8,), got {shape}").format(
                shape=tuple(a.shape)
            )
        )
    if same_values(a, theta / FACTOR):
        return correct(
            _(
                "every theta_i divided by s = 4: position m turns like m/4 did in "
                "training"
            )
        )
    if same_values(a, theta * FACTOR):
        return not_yet(
            _("you multiplied by s; PI slows every pair down: divide theta_i by s = 4")
        )
    if same_values(a, theta):
        return not_yet(
            _("these are the unscaled frequencies; PI divides each by s = 256 / 64 = 4")
        )
    for s in (2, 8):
        if same_values(a, theta / s):
            return not_yet(
                _(
                    "you divided by {s}; PI's factor is the new window over the "
                    "training length: s = 256 / 64 = 4"
                ).format(s=s)
            )
    if same_values(a, _theta(d=MODEL_WIDTH) / FACTOR):
        return not_yet(
            _(
                "you used d = 64, the model's width; RoPE rotates each head: d = 16, "
                "the head dimension"
            )
        )
    if same_values(a, _theta(two=1.0) / FACTOR):
        return not_yet(_("the exponent is -2i/d (i counts pairs): theta_i = b^(-2i/d)"))
    if same_values(a, theta.flip(0) / FACTOR):
        return not_yet(
            _(
                "the right values in reverse order: theta_0 / 4 = 1/4 (the fastest "
                "pair) comes first"
            )
        )
    ntk_base = BASE * FACTOR ** (HEAD_DIM / (HEAD_DIM - 2))
    if same_values(a, _theta(base=ntk_base)):
        return not_yet(
            _(
                "that is NTK's base change; Position Interpolation divides every "
                "theta_i by s"
            )
        )
    problem = compare_tensor(a, theta / FACTOR, "inv_freq")
    if problem is not None:
        return not_yet(
            _("{problem}; expected theta_i = 10000^(-2i/16) / 4").format(
                problem=problem.message
            )
        )
    return correct(_("every theta_i divided by s = 4"))


# -------------------------------------------------------- exercise 3: best scheme


def _scheme_name(answer, names):
    """The scheme key an answer names (a key of results['lm'] or its label, any case),
    or a Feedback."""
    from ..lab.figures import LABELS

    if answer is None:
        return not_yet(_("replace `None` with a scheme name, e.g. 'rope'"))
    if isinstance(answer, np.ndarray) and answer.ndim == 0 and answer.dtype.kind == "U":
        answer = str(answer)  # a 0-d numpy string is the string
    one = isinstance(answer, (list, tuple, set, frozenset)) and len(answer) == 1
    if one or (
        isinstance(answer, np.ndarray) and answer.ndim >= 1 and answer.size == 1
    ):
        return not_yet(_("give one name (a string), not a collection of names"))
    if not isinstance(answer, (str, np.str_)):
        return not_yet(
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
        return not_yet(
            _(
                "answer with one of {names} (the keys of results['lm']), got {got}"
            ).format(names=sorted(names), got=describe(answer))
        )
    return aliases[text]


@guarded
def check_best_scheme(answer):
    """The scheme (a key of results['lm'], e.g. 'rope') with the lowest mean loss at the
    longest evaluation window, in the results the lesson reads (load_results())."""
    try:
        results = load_results()
        lengths = results["config"]["eval_lengths"]
        first, longest = str(min(lengths)), str(max(lengths))
        means = {s: v["summary"][longest]["mean"] for s, v in results["lm"].items()}
        at_first = {s: v["summary"][first]["mean"] for s, v in results["lm"].items()}
    except (OSError, KeyError, TypeError, ValueError) as error:
        return not_yet(
            _(
                "the lab results could not be read ({kind}): run "
                "`python -m rope_lib.lab --out DIR` and set ROPE_LAB_RESULTS=DIR"
            ).format(kind=type(error).__name__)
        )
    name = _scheme_name(answer, means)
    if isinstance(name, Feedback):
        return name
    best = min(means, key=means.get)
    if name == best:
        return correct(
            _("{name}: mean loss {loss:.3f} at {longest} tokens").format(
                name=best, loss=means[best], longest=longest
            )
        )
    said = {"name": name, "loss": means[name], "longest": longest}
    if name == min(at_first, key=at_first.get):
        return not_yet(
            _(
                "{name} is the best at {first} tokens (the training length), but "
                "{name} has mean loss {loss:.3f} at {longest} tokens; one scheme does "
                "better at the longest window"
            ).format(**said, first=first)
        )
    if name == max(means, key=means.get):
        return not_yet(
            _(
                "{name} has mean loss {loss:.3f} at {longest} tokens, the highest: the "
                "question asks for the lowest (min, not max); one scheme does better"
            ).format(**said)
        )
    return not_yet(
        _(
            "{name} has mean loss {loss:.3f} at {longest} tokens; one scheme does "
            "better: compare results['lm'][name]['summary']['{longest}']['mean']"
        ).format(**said)
    )
