"""Checkers for the extrapolation lab's exercises (lesson 8). Each takes one argument,
the answer, and returns a Feedback (never raises).

    from rope_lib.exercises import lab as ex
    ex.check_exact_match(exact_match)    # a passkey scorer: exact-match accuracy
    ex.check_pi_frequencies(pi_freq)     # PI's 16 frequencies for the lab's RoPE at 4L
    ex.check_learned_seeds(seeds)        # which seeds' NoPE model retrieves at 2L
    ex.check_best_extension(name)        # the best zero-shot extension at 4L (passkey)

The expected values come from first principles (the definition of exact match,
theta_i = b^(-2i/d) / s for Position Interpolation) or from the lab results the lesson
reads (rope_lib.lab.summary on load_results()): the folder named by the environment
variable ROPE_LAB_RESULTS, or the committed notebooks/lab_results/. So they hold on any
run of the lab, whatever its seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from .. import results as _results
from ..language import N_, _
from . import NotYet, Word, compare_tensor, either, exercise
from .answers import _values, as_number, as_tensor, describe, sorted_set, whole_numbers

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


def _seed_list(seeds) -> str:
    """Seeds as the learner would write them: [0, 3]."""
    return "[" + ", ".join(str(s) for s in sorted(seeds, key=int)) + "]"


def _learned_at(results: dict, scheme: str, n: int, above=None) -> frozenset:
    """Seeds (ints) whose `scheme` model is above LEARNED at length n (`above`: a
    test of the accuracy instead)."""
    from ..lab import summary

    above = above or (lambda accuracy: accuracy > summary.LEARNED)
    by_seed = summary.passkey(results, scheme, n)
    return frozenset(int(s) for s, accuracy in by_seed.items() if above(accuracy))


# -------------------------------------------------------- exercise 3: learned seeds

SEEDS_EXPECTED = N_("a list of whole numbers such as [0, 3]")


def _seed_item(item):
    """One element of a seeds answer: digit strings are seeds too (the keys of
    summary.passkey's dict are strings)."""
    if isinstance(item, (str, np.str_)):
        text = str(item).strip()
        if text.isdigit():
            return int(text)
        raise NotYet(
            _("{item} is not a seed: seeds are whole numbers such as 0 or 3").format(
                item=describe(item)
            )
        )
    return item


def _as_seeds(answer, name: str) -> tuple[frozenset, bool]:
    """(the answer as a set of whole numbers, whether it was one number, not a
    collection); raises NotYet for anything else."""
    expected = _(SEEDS_EXPECTED)
    if isinstance(answer, (str, np.str_, bytes)):
        raise NotYet(
            _("{name} should be {expected}, even for one seed; got {got}").format(
                name=name, expected=expected, got=describe(answer)
            )
        )
    if isinstance(answer, np.ndarray) and answer.dtype.kind in "US":
        answer = answer.tolist()
    if isinstance(answer, (set, frozenset)):
        answer = sorted_set([_seed_item(item) for item in answer], name, expected)
    elif isinstance(answer, (list, tuple)):
        answer = [_seed_item(item) for item in answer]
    t = _values(answer, name, expected)
    if t.is_complex():
        raise NotYet(
            _("{name} should be {expected}, got complex numbers").format(
                name=name, expected=expected
            )
        )
    if t.dtype == torch.bool:
        raise NotYet(
            _(
                "{name} should be {expected}; True / False are a yes/no: keep the "
                "seeds themselves, [s for s, ok in zip(seeds, mask) if ok]"
            ).format(name=name, expected=expected)
        )
    if t.dim() > 1:
        raise NotYet(
            _("{name} should be {expected}: a flat list, got shape {shape}").format(
                name=name, expected=expected, shape=tuple(t.shape)
            )
        )
    seeds = whole_numbers(t, name, expected)
    if len(set(seeds)) != len(seeds):
        raise NotYet(
            _("{name} should be {expected}: each seed once, got {got}").format(
                name=name, expected=expected, got=seeds
            )
        )
    return frozenset(seeds), t.dim() == 0


def _read_seeds(answer, name: str) -> dict:
    """The answer as a set of seeds, with the facts of the results the lesson reads:
    every run seed's NoPE accuracy at 2L and the sets known mistakes give."""
    from ..lab import summary

    results = _lab_results()
    config = results["config"]
    L = config["train_length"]
    run = [int(s) for s in summary.seeds(results)]
    accuracy = summary.passkey(results, "none", 2 * L)
    k, n, among = summary.learned(accuracy)
    mean = summary.mean(accuracy)
    facts = {
        "L": L,
        "n2": 2 * L,
        "run": _seed_list(run),
        "k": k,
        "n": n,
        "mean": mean,
        "expected_set": _learned_at(results, "none", 2 * L),
        "among": among,
    }
    if isinstance(answer, Mapping):
        keys = {str(key) for key in answer}
        if keys and keys == set(summary.seeds(results)):
            raise NotYet(
                _(
                    "that is every seed's accuracy (a dict); keep only those seeds "
                    "above 0.9: [s for s, a in accuracy.items() if a > summary.LEARNED]"
                )
            )
        raise NotYet(
            _("{name} should be {expected}, not a dict: list(...) of its seeds").format(
                name=name, expected=_(SEEDS_EXPECTED)
            )
        )
    seeds, scalar = _as_seeds(answer, name)
    if scalar:
        (value,) = seeds
        if value == k and seeds != facts["expected_set"]:
            raise NotYet(
                _(
                    "{value} is how many seeds learned; the question asks which: a "
                    "list of their seeds, e.g. [0, 3] (an empty list if none)"
                ).format(value=value)
            )
        raise NotYet(
            _("{name} should be {expected}, even for one seed: [{value}]").format(
                name=name, expected=_(SEEDS_EXPECTED), value=value
            )
        )
    return {**facts, "seeds": seeds, "results": results, "run_set": frozenset(run)}


def _read_seeds_any(answer, name: str) -> dict:
    """_read_seeds, with a number that is the mean accuracy recognised (a float the set
    reader would reject as not whole)."""
    from ..lab import summary

    if not isinstance(answer, (str, bytes, Mapping, list, tuple, set, frozenset)):
        try:
            value = as_number(answer, name)
        except NotYet:
            value = None
        if value is not None and value != math.floor(value):
            results = _lab_results()
            L = results["config"]["train_length"]
            mean = summary.mean(summary.passkey(results, "none", 2 * L))
            if abs(value - mean) < 5e-3:
                raise NotYet(
                    _(
                        "{value:.3g} is the mean accuracy over all seeds; the question "
                        "asks which seeds are above 0.9, each seed on its own"
                    ).format(value=value)
                )
    return _read_seeds(answer, name)


def _slip(read, scheme: str, n: int, above=None) -> bool:
    return read["seeds"] == _learned_at(read["results"], scheme, n, above)


def _positions(read) -> bool:
    """Places in the list of seeds instead of seed numbers (a run on seeds 5, 6)."""
    from ..lab import summary

    run = summary.seeds(read["results"])
    places = {i for i, s in enumerate(run) if int(s) in read["expected_set"]}
    return read["run_set"] != set(range(len(run))) and read["seeds"] == places


def _learned_seeds_mistakes() -> dict:
    from ..lab import summary

    def at_length(factor):
        return lambda read: (
            factor * read["L"] in read["results"]["config"]["lengths"]
            and _slip(read, "none", factor * read["L"])
        )

    def other_scheme(read) -> bool:
        return any(
            _slip(read, scheme, 2 * read["L"])
            for scheme in read["results"]["config"]["schemes"]
            if scheme != "none"
        )

    return {
        N_(
            "those are places in the list of seeds, counted from 0; "
            "give the seed numbers themselves (this run's seeds are {run})"
        ): _positions,
        N_("seeds {unknown} were not run: this run's seeds are {run}"): (
            lambda read: bool(read["seeds"] - read["run_set"])
        ),
        N_(
            "a seed at exactly 0.9 has not learned: LEARNED means above 0.9 (>, not >=)"
        ): (
            lambda read: _slip(
                read, "none", 2 * read["L"], lambda a: a >= summary.LEARNED
            )
        ),
        N_(
            "not every seed: the mean over all seeds is {mean:.2f}, but seeds "
            "differ and a mean hides it; judge each seed on its own"
        ): (
            lambda read: (
                read["seeds"] == read["run_set"] and read["mean"] > summary.LEARNED
            )
        ),
        N_(
            "the mean over all seeds is {mean:.2f}, below 0.9, yet {k} of {n} seeds "
            "are above it on their own: judge each seed, not the mean"
        ): (lambda read: not read["seeds"] and read["mean"] <= summary.LEARNED),
        N_(
            "you listed no seed, yet {k} of {n} seeds are above 0.9 at 2L = {n2} "
            "tokens: look at each seed's accuracy there"
        ): (lambda read: not read["seeds"]),
        N_(
            "those are seeds that learned at L = {L} tokens, the training "
            "length; the question asks about 2L = {n2}"
        ): at_length(1),
        N_(
            "those are seeds that learned at 4L; the question asks about 2L = "
            "{n2} tokens"
        ): at_length(4),
        N_(
            "those are seeds that learned at 8L; the question asks about 2L = "
            "{n2} tokens"
        ): at_length(8),
        N_(
            "those are seeds of another scheme's model (RoPE's or another's); the "
            'question asks about NoPE, scheme "none"'
        ): other_scheme,
    }


def _seeds_facts(read, none) -> dict:
    return {
        **{k: v for k, v in read.items() if k not in ("results",)},
        "value": _seed_list(read["seeds"]),
        "expected": _seed_list(read["expected_set"]),
        "unknown": _seed_list(read["seeds"] - read["run_set"]),
        "missing": _seed_list(read["expected_set"] - read["seeds"]),
        "extra": _seed_list(read["seeds"] - read["expected_set"]),
    }


def _seeds_right(read) -> str:
    facts = _seeds_facts(read, None)
    if not read["expected_set"]:
        return _(
            "right, none: no NoPE seed is above 0.9 at 2L = {n2} tokens in these results"
        ).format(**facts)
    if read["expected_set"] == read["run_set"]:
        return _(
            "seeds {expected}: all {n} NoPE models find the key at 2L = {n2} tokens "
            "(accuracy {among:.2f}), with no position signal at all"
        ).format(**facts)
    return _(
        "seeds {expected}: {k} of {n} NoPE models find the key at 2L = {n2} tokens "
        "(accuracy {among:.2f} among them); the others do not: with no position "
        "signal, whether retrieval survives past L depends on the seed"
    ).format(**facts)


def _seeds_otherwise(read) -> str:
    """Not the right seeds, and no known slip: what is extra, what is missing."""
    facts = _seeds_facts(read, None)
    extra = read["seeds"] - read["expected_set"]
    missing = read["expected_set"] - read["seeds"]
    if extra and missing:
        problem = _("{extra} should not be there and {missing} is missing").format(
            **facts
        )
    elif extra:
        problem = _("{extra} should not be there").format(**facts)
    else:
        problem = _("{missing} is missing").format(**facts)
    return _(
        "not these: {k} of {n} seeds are above 0.9 at 2L = {n2} tokens; in your list "
        '{problem}: compare summary.passkey(results, "none", 2 * L) seed by seed'
    ).format(**facts, problem=problem)


@exercise(
    read=_read_seeds_any,
    name=Word(N_("your list of seeds")),
    expected=None,
    placeholder=N_(
        "replace `None` with the NoPE seeds above 0.9 at 2L, as a list ([] if none)"
    ),
    same=lambda read, none: read["seeds"] == read["expected_set"],
    mistakes=_learned_seeds_mistakes,
    facts=_seeds_facts,
    otherwise=_seeds_otherwise,
    right=_seeds_right,
)
def check_learned_seeds(answer):
    """Seeds (ints, any order) whose NoPE model ("none") learned retrieval at 2L:
    summary.passkey(results, "none", 2 * L)[seed] > summary.LEARNED, in the results the
    lesson reads (load_results())."""


# -------------------------------------------------------- exercise 4: best extension

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
    k, n, _among = summary.learned(summary.passkey(results, "rope", 4 * L, method))
    best = _best(at4)
    return {
        "method": method,
        "name": _(LABELS.get(method, method)),
        "accuracy": at4[method],
        "n4": 4 * L,
        "L": L,
        "k": k,
        "n": n,
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
        "{name}: mean passkey accuracy {accuracy:.2f} at 4L = {n4} tokens, {k} of {n} "
        "seeds above 0.9"
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
