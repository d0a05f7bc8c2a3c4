"""Checkers for the extrapolation lab's exercises (lesson 8). Each takes one argument,
the answer, and returns a Feedback (never raises).

    from rope_lib.exercises import lab as ex
    ex.check_exact_match(exact_match)    # a passkey scorer: exact-match accuracy
    ex.check_pi_frequencies(pi_freq)     # PI's 16 frequencies for the lab's RoPE at 4L
    ex.check_best_extension(name)        # the best zero-shot extension at 4L (passkey)

The expected values come from first principles (the definition of exact match,
theta_i = b^(-2i/d) / s for Position Interpolation) or from the lab results the lesson
reads (rope_lib.lab.summary on load_results()): the folder named by the environment
variable ROPE_LAB_RESULTS, or the committed notebooks/lab_results/. So they hold on any
run of the lab, whatever its seeds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from .. import results as _results
from ..language import N_, _
from . import NotYet, Word, compare_tensor, either, exercise
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

# (predicted, expected, exact-match accuracy): rows are 3-digit keys, as in the lab's
# passkeys; the teacher notes quote the first four
CASES = [
    ([[1, 2, 3], [4, 5, 6]], [[1, 2, 3], [4, 5, 6]], 1.0),
    ([[1, 2, 3], [4, 5, 7]], [[1, 2, 3], [4, 5, 6]], 0.5),
    ([[1, 9, 9], [9, 5, 9]], [[1, 2, 3], [4, 5, 6]], 0.0),
    (
        [[3, 2, 1], [4, 5, 6], [7, 8, 0], [0, 0, 0]],
        [[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 0, 0]],
        0.5,
    ),
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
        N_(
            "on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}: "
            "dim=0 runs down the keys (one digit place of every key); a key is a row, "
            "so take .all(dim=1)"
        ): _gives(lambda hits: hits.all(dim=0).double().mean()),
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


def _scaled(rope_type: str) -> torch.Tensor:
    from ..scaling import rope_frequencies

    extra = {"original_max_position_embeddings": L}
    if rope_type == "llama3":
        extra.update(low_freq_factor=1.0, high_freq_factor=4.0)
    inv_freq, _factor = rope_frequencies(
        rope_type, HEAD_DIM, BASE, factor=float(FACTOR), **extra
    )
    return inv_freq.to(torch.float64)


@exercise(
    read=as_tensor,
    name="inv_freq",
    expected=_theta() / FACTOR,
    placeholder=N_("replace `None` with a tensor of the 16 frequencies, i = 0 first"),
    mistakes=lambda: {
        N_(
            "inv_freq should have shape (16,), got {shape}: one frequency per pair "
            "of coordinates, i = 0..15"
        ): (lambda a: a.shape != (PAIRS,) and a.numel() == HEAD_DIM),
        N_(
            "inv_freq should have shape (16,), got {shape}: 8 frequencies are a head "
            "of 16 dimensions; the lab's heads have 32 (d_model 64, 2 heads)"
        ): (lambda a: a.shape == (PAIRS // 2,)),
        N_("inv_freq should have shape (16,), got {shape}"): (
            lambda a: a.shape != (PAIRS,)
        ),
        N_(
            "you multiplied by s; PI slows every pair down: divide theta_i by s = 4"
        ): _theta() * FACTOR,
        N_(
            "these are the unscaled frequencies; PI divides each by s = 256 / 64 = 4"
        ): _theta(),
        _divided_by(2): _theta() / 2,
        _divided_by(8): _theta() / 8,
        N_(
            "you used d = 16, the number of frequencies; d is the head dimension, 32, "
            "so theta_i = 10000^(-2i/32), i = 0..15"
        ): either(_theta(d=PAIRS) / FACTOR, _theta(d=PAIRS)),
        N_(
            "that is 10000^(-i/32): as if d were 64 (the model's width) or the 2 of "
            "2i were missing; d is the head dimension, 32, and i counts pairs: "
            "theta_i = 10000^(-2i/32)"
        ): either(_theta(d=MODEL_WIDTH) / FACTOR, _theta(d=MODEL_WIDTH)),
        N_(
            "the right values in reverse order: theta_0 / 4 = 1/4 (the fastest "
            "pair) comes first"
        ): _theta().flip(0) / FACTOR,
        N_(
            "that is NTK's base change (base 10000 * 4^(32/30)); Position "
            "Interpolation keeps the base and divides every theta_i by s"
        ): _theta(base=BASE * FACTOR ** (HEAD_DIM / (HEAD_DIM - 2))),
        N_(
            "those are YaRN's frequencies (it keeps the fast pairs); Position "
            "Interpolation divides every theta_i by s, the fast ones too"
        ): _scaled("yarn"),
        N_(
            "those are Llama 3's frequencies (it keeps the fast pairs); Position "
            "Interpolation divides every theta_i by s, the fast ones too"
        ): _scaled("llama3"),
        N_(
            "those are wavelengths (2 pi / frequency, in tokens); give the "
            "frequencies theta_i / s themselves"
        ): either(2 * math.pi * FACTOR / _theta(), 2 * math.pi / _theta()),
    },
    compare=_compare,
    right=N_(
        "every theta_i divided by s = 4: position m turns like m/4 did in training"
    ),
    right_when_close=N_("every theta_i divided by s = 4"),
)
def check_pi_frequencies(answer):
    """The lab model's 16 RoPE frequencies (head_dim d = 32, base b = 10000) under
    Position Interpolation from L = 64 to 4L = 256: theta_i / s with s = 4."""


# -------------------------------------------------------- the results the lesson reads


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


# -------------------------------------------------------- exercise 3: best extension

SCHEME_WORDS = {"none", "nope", "sinusoidal", "learned", "rope", "alibi"}
PLAIN_WORDS = {"default", "plain", "plainrope", "rope"}


def _squeeze(text: str) -> str:
    """Lower case without spaces, hyphens, underscores, dots or a "rope +" prefix."""
    text = str(text).strip().lower()
    for prefix in ("rope+", "rope +", "rope + "):
        if text.startswith(prefix) and len(text) > len(prefix):
            text = text[len(prefix) :]
    return "".join(c for c in text if c not in " -_.+")


def _method_key(answer, methods) -> str:
    """The method (a name of config["methods"]) an answer names: its name or its label
    (any case, spaces or hyphens, English or the learner's language); raises NotYet."""
    from ..lab.figures import LABELS

    if isinstance(answer, np.ndarray) and answer.ndim == 0 and answer.dtype.kind == "U":
        answer = str(answer)
    one = isinstance(answer, (list, tuple, set, frozenset)) and len(answer) == 1
    if one or (
        isinstance(answer, np.ndarray) and answer.ndim >= 1 and answer.size == 1
    ):
        raise NotYet(_("give one name (a string), not a collection of names"))
    if not isinstance(answer, (str, np.str_)):
        raise NotYet(
            _("answer with one of {names} (a string), got {got}").format(
                names=list(methods), got=describe(answer)
            )
        )
    text = _squeeze(answer)
    aliases = {}
    for m in methods:
        for alias in (m, LABELS.get(m, m), _(LABELS.get(m, m))):
            aliases[_squeeze(alias)] = m
    if "linear" in methods:
        aliases.update({"positioninterpolation": "linear", "pi": "linear"})
    if "dynamic" in methods:
        aliases.update({"dynamicntk": "dynamic", "dynamicntkaware": "dynamic"})
    if "ntk" in methods:
        aliases["ntkaware"] = "ntk"
    if text in aliases:
        return aliases[text]
    plain = LABELS["default"]
    if text in PLAIN_WORDS or text == _squeeze(_(plain)):
        raise NotYet(
            _(
                "{got} is the RoPE model with no extension, the baseline; the question "
                "asks which method extends it best: one of {names}"
            ).format(got=describe(answer), names=list(methods))
        )
    schemes = SCHEME_WORDS | {_squeeze(_(LABELS[s])) for s in ("sinusoidal", "learned")}
    if text in schemes:
        raise NotYet(
            _(
                "{got} is a position scheme; the question asks for a zero-shot "
                "extension of the RoPE model: one of {names}"
            ).format(got=describe(answer), names=list(methods))
        )
    raise NotYet(
        _(
            'answer with one of {names} (the names in config["methods"]), got {got}'
        ).format(names=list(methods), got=describe(answer))
    )


def _mean_passkey(results, n, method) -> float:
    from ..lab import summary

    return summary.mean(summary.passkey(results, "rope", n, method))


def _best(by_method: dict) -> frozenset:
    """Every method with the highest value (dynamic NTK ties NTK at matched factors)."""
    top = max(by_method.values())
    return frozenset(m for m, v in by_method.items() if v >= top - 1e-9)


def _read_extension(answer, name: str) -> dict:
    """The named method, with every method's mean passkey accuracy by length."""
    from ..lab import summary
    from ..lab.figures import LABELS

    results = _lab_results()
    config = results["config"]
    methods = list(config["methods"])
    method = _method_key(answer, methods)
    L = config["train_length"]
    longer = [n for n in config["lengths"] if n > L]
    by_length = {n: {m: _mean_passkey(results, n, m) for m in methods} for n in longer}
    at4 = by_length[4 * L]
    text4 = {
        m: summary.mean(summary.text_loss(results, "rope", 4 * L, m)) for m in methods
    }
    _median, low, high = summary.spread(summary.passkey(results, "rope", 4 * L, method))
    best = _best(at4)
    return {
        "method": method,
        "name": _(LABELS.get(method, method)),
        "accuracy": at4[method],
        "n4": 4 * L,
        "L": L,
        "low": low,
        "high": high,
        "by_length": by_length,
        "at4": at4,
        "text4": text4,
        "best": best,
        "ties": ", ".join(
            _(LABELS.get(m, m)) for m in methods if m in best and m != method
        ),
        "lowest": frozenset(m for m, v in at4.items() if v <= min(at4.values()) + 1e-9),
    }


def _best_at(factor: int):
    def test(read) -> bool:
        n = factor * read["L"]
        return n in read["by_length"] and read["method"] in _best(read["by_length"][n])

    return test


def _extension_right(read) -> str:
    message = _(
        "{name}: mean passkey accuracy {accuracy:.2f} at 4L = {n4} tokens, its seeds "
        "from {low:.2f} to {high:.2f}"
    ).format(**read)
    if read["ties"]:
        message += _(" (tied with {ties}: the same numbers)").format(**read)
    return message


@exercise(
    read=_read_extension,
    name=Word(N_("the method")),
    expected=None,
    placeholder=N_("replace `None` with a method's name, e.g. 'linear'"),
    same=lambda read, none: read["method"] in read["best"],
    mistakes={
        N_(
            "{name} has the LOWEST mean passkey accuracy at 4L = {n4} tokens "
            "({accuracy:.2f}): the question asks for the highest (max, not min)"
        ): (lambda read: read["method"] in read["lowest"]),
        N_(
            "{name} is the best at 2L, but at 4L = {n4} tokens its mean passkey "
            "accuracy is {accuracy:.2f}; one method does better there"
        ): _best_at(2),
        N_(
            "{name} is the best at 8L, but at 4L = {n4} tokens its mean passkey "
            "accuracy is {accuracy:.2f}; one method does better there"
        ): _best_at(8),
        N_(
            "{name} has the lowest text loss at 4L, but the question is about "
            "retrieval: its mean passkey accuracy there is {accuracy:.2f}, and one "
            "method does better"
        ): (
            lambda read: (
                read["text4"][read["method"]] <= min(read["text4"].values()) + 1e-9
            )
        ),
    },
    facts=lambda read, none: {k: v for k, v in read.items()},
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
