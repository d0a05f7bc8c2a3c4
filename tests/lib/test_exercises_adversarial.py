"""Every exercise checker is fair to every answer.

For every check_* in every module of rope_lib.exercises:
- odd answers (a hand list and hypothesis-generated ones: None, strings, dicts with lists inside,
  NaN, inf, huge ints, complex numbers, numpy scalars, empty, wrongly shaped, complex and meta
  tensors, objects) return a Feedback and are never called correct;
- the right answer, corrupted (made complex, a NaN or inf put in, truncated), is never correct;
- the right answer given as a list, tuple, numpy array or scalar, torch float32 / float64 or
  integer tensor is correct; on the meta device (which holds no values) it gets a Feedback.

The right answers are computed here from the formulas, independently of the checkers' own
expected-value helpers (the exercise inputs, e.g. rope_attention_inputs(), are taken from them).
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rope_lib.exercises as exercises
from rope_lib.exercises import Feedback

F64 = torch.float64
NAN, INF = float("nan"), float("inf")


def discover_checkers() -> dict:
    found = {}
    for info in sorted(pkgutil.iter_modules(exercises.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"rope_lib.exercises.{info.name}")
        for name, obj in vars(module).items():
            if (
                name.startswith("check_")
                and inspect.isfunction(obj)
                and obj.__module__ == module.__name__
            ):
                found[f"{info.name}.{name}"] = obj
    return found


CHECKERS = discover_checkers()


def judge(check, answer) -> Feedback:
    """Call a checker: it must return a Feedback (a raised exception fails the test)."""
    feedback = check(answer)
    assert isinstance(feedback, Feedback), type(feedback)
    assert isinstance(feedback.message, str) and feedback.message
    # the checkers' last-resort guard must not be what answered: the readers say what is wrong
    assert "could not check this answer" not in feedback.message, feedback
    return feedback


# ---------------------------------------------------------------- right answers, by hand


def _wavelengths():
    return [2 * math.pi * 10000 ** (2 * i / 64) for i in range(32)]


def _shift_block():
    a = 5 * 10000 ** (-2 / 8)
    return [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]


def _offset_dots():
    w = [10000 ** (-2 * i / 16) for i in range(8)]
    return [sum(math.cos(k * wi) for wi in w) for k in range(32)]


def _unfinished_pairs():
    return sum(2 * math.pi * 10000 ** (2 * i / 128) > 512 for i in range(64))  # 33


def _rotate(v, angle):
    x, y = v
    return [
        x * math.cos(angle) - y * math.sin(angle),
        x * math.sin(angle) + y * math.cos(angle),
    ]


def _closed_form_score():
    (q1, q2), (k1, k2), a = (0.8, 0.6), (-0.3, 1.1), (9 - 4) * 0.3
    return (q1 * k1 + q2 * k2) * math.cos(a) + (q1 * k2 - q2 * k1) * math.sin(a)


def _rope_attention():
    from rope_lib.exercises import rotation

    q, k, v, _ = rotation.rope_attention_inputs()
    d, seq = q.shape[-1], q.shape[-2]
    angle = torch.tensor(
        [[m * 10000 ** (-2 * i / d) for i in range(d // 2)] for m in range(seq)],
        dtype=F64,
    )

    def rot(x):
        x0, x1 = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = x0 * angle.cos() - x1 * angle.sin()
        out[..., 1::2] = x0 * angle.sin() + x1 * angle.cos()
        return out

    scores = rot(q) @ rot(k).transpose(-1, -2) / math.sqrt(d)
    return (scores.softmax(-1) @ v).tolist()


def _relative_angles():
    return [8 * 10000 ** (-2 * i / 8) for i in range(4)]


def _complex_rotation():
    return (3 + 4j) * complex(math.cos(0.5), math.sin(0.5))


def _complex_score():
    # q = 2 + i at m = 7, k = 1 - 3i at n = 3, theta = 0.2: (2 + i)(1 + 3i) e^(i 0.8)
    return ((-1 + 7j) * complex(math.cos(0.8), math.sin(0.8))).real


def _slow_pairs():
    return sum(8192 * 500000 ** (-2 * i / 128) < 2 * math.pi for i in range(64))  # 29


def _meta_layout_weights():
    from rope_lib.exercises import complex_rope

    w = complex_rope.meta_layout_weights().to(F64)
    order = [
        j for i in range(4) for j in (i, i + 4)
    ]  # half pair (i, i + 4) -> rows (2i, 2i + 1)
    return torch.cat([w[h * 8 : (h + 1) * 8][order] for h in range(2)]).tolist()


def _bfloat16_angle_error():
    return 9.0  # 5001 lies in [4096, 8192), where bfloat16 counts in steps of 32: 5001 -> 4992


def _geometric(n):
    return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]


def _twelve_head_slopes():
    return _geometric(8) + _geometric(16)[0::2][:4]


def _causal_bias():
    return [[-0.25 * (i - j) if j <= i else -INF for j in range(5)] for i in range(5)]


def _query_weights():
    w = [math.exp(-0.5 * (5 - j)) if j <= 5 else 0.0 for j in range(8)]
    return [x / sum(w) for x in w]


def _first_long_pair():
    return next(
        i for i in range(64) if 2 * math.pi * 10000 ** (2 * i / 128) > 4096
    )  # 46


def _yarn_frequencies():
    d, b, s, L = 64, 10000.0, 8.0, 2048
    low = math.floor(d * math.log(L / (32 * 2 * math.pi)) / (2 * math.log(b)))
    high = math.ceil(d * math.log(L / (1 * 2 * math.pi)) / (2 * math.log(b)))
    out = []
    for i in range(d // 2):
        theta = b ** (-2 * i / d)
        keep = 1 - min(max((i - low) / (high - low), 0.0), 1.0)  # 1 below low: kept
        out.append(keep * theta + (1 - keep) * theta / s)
    return out


def _llama3_pair_counts():
    lam = [2 * math.pi * 500000 ** (2 * i / 128) for i in range(64)]
    kept = sum(x < 8192 / 4 for x in lam)
    interpolated = sum(x > 8192 / 1 for x in lam)
    return (kept, 64 - kept - interpolated, interpolated)


def _exact_match():
    """Exact-match accuracy by hand: the share of rows whose digits are all equal."""

    def exact_match(predicted, expected):
        rows = list(zip(predicted.tolist(), expected.tolist()))
        return sum(p == e for p, e in rows) / len(rows)

    return exact_match


def _lab_results_folder():
    """The folder lesson 12 reads: ROPE_LAB_RESULTS (relative: from here, else from
    notebooks/), or the committed notebooks/lab_results."""
    import os
    from pathlib import Path

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    folder = Path(os.environ.get("ROPE_LAB_RESULTS") or notebooks / "lab_results")
    if not folder.is_absolute() and not folder.exists():
        folder = notebooks / folder
    return folder


def _lab_results() -> dict:
    import json

    return json.loads((_lab_results_folder() / "results.json").read_text())


def _lab_extension_accuracy() -> dict:
    """{method: passkey accuracy at 4L, averaged over depths, then seeds}, by hand."""
    results = _lab_results()
    n = str(4 * results["config"]["train_length"])
    return {
        method: np.mean(
            [np.mean(run["passkey"][n]) for run in results["scaling"][method].values()]
        )
        for method in results["config"]["methods"]
    }


def _lab_best_extensions() -> set:
    """The methods with the highest accuracy (dynamic NTK ties NTK: the same numbers)."""
    accuracy = _lab_extension_accuracy()
    top = max(accuracy.values())
    return {m for m, a in accuracy.items() if a >= top - 1e-9}


def _lab_best_extension() -> str:
    accuracy = _lab_extension_accuracy()
    return max(accuracy, key=accuracy.get)


#: How lesson 12 names the extensions that LAB_LABELS (lesson 15's names) has not.
LAB_METHOD_LABELS = {"linear": "PI", "dynamic": "dynamic NTK"}


def _names_a_best_extension(answer) -> bool:
    """Whether a string answer names one of the tied best extensions (any case, spaces,
    hyphens or underscores; its label or lesson 15's key for it)."""
    if not isinstance(answer, (str, np.str_)):
        return False
    squeeze = "".join(c for c in str(answer).lower() if c not in " -_.+")
    names = {}
    for labels in (LAB_LABELS, LAB_METHOD_LABELS):
        for key, label in labels.items():
            for name in (key, label):
                names["".join(c for c in name.lower() if c not in " -_.+")] = key
    aliases = {"pi": "linear", "dynamicntk": "dynamic"}
    method = names.get(squeeze)
    return aliases.get(method, method) in _lab_best_extensions()


LAB_LABELS = {
    "none": "NoPE",
    "sinusoidal": "Sinusoidal",
    "learned": "Learned",
    "rope": "RoPE",
    "alibi": "ALiBi",
    # lesson 15's methods (check_best_method), by the names its lesson shows
    "plain": "plain RoPE",
    "pi": "PI",
    "ntk": "NTK",
    "dynamic_ntk": "dynamic NTK",
    "yarn": "YaRN",
    "yarn_no_attention_factor": "YaRN, no attention factor",
    "llama3": "Llama 3",
}


def _llm_half_wk():
    """Layer 0's W_k of the model file in transformers' order: the rows of each of the 3
    key/value heads read as (32, 2), swapped, flattened (_reverse_permute_weights)."""
    from rope_lib.exercises.real_llm import file_wk

    w = file_wk()
    return w.reshape(3, 32, 2, 576).transpose(1, 2).reshape(192, 576).tolist()


def _llm_yarn_counts():
    """YaRN x4 on d = 64, b = 1e5, L = 8192: pair i turns 8192 / (2 pi 1e5^(2i/64))
    times within L; kept when i <= floor(the index that turns 32 times), divided by s
    when i >= ceil(the index that turns once), blended between (transformers' rounding)."""

    def index(turns):
        return 64 * math.log(8192 / (2 * math.pi * turns)) / (2 * math.log(1e5))

    low, high = math.floor(index(32)), math.ceil(index(1))
    return (low + 1, high - low - 1, 32 - high)


def _llm_best_method():
    """The method whose loss in the last bucket at 2L, averaged over the windows every
    method ran on (from the windows' own numbers, not the stored summary), is lowest, in
    the results lesson 15 reads."""
    from rope_lib.exercises.real_llm import load_results

    results = load_results()
    two_l = 2 * results["settings"]["training_length"]
    last = {}
    for key, unit in results["units"].items():
        method, _factor, length, window = key.split("/")
        if int(length) == two_l:
            last.setdefault(method, {})[window] = unit["bucket_loss"][-1]
    shared = set.intersection(*(set(w) for w in last.values()))
    return min(last, key=lambda m: sum(last[m][w] for w in shared) / len(shared))


def _new_factor_multipliers():
    from rope_lib.attention_study import read

    sweeps = read("smollm2.temperature")
    best = [sweeps[x]["best_past_L"]["attention_factor"] for x in ("x2", "x4")]
    k = sum((m - 1) * math.log(s) for m, s in zip(best, (2, 4))) / (
        math.log(2) ** 2 + math.log(4) ** 2
    )
    return [(0.1 * math.log(8) + 1) ** 2, (k * math.log(8) + 1) ** 2]


# kind: "yesno", "choices", "count", "number", "pair", "counts", "tensor", "complex_pair", "shapes",
# "function" (a function of the exercise's inputs), "name" (a string naming one choice),
# "diagnosis" (a pair: a direction word, then a count)
RIGHT = {
    "why_position.check_swapped_outputs": ("tensor", lambda: [2, 3]),
    "why_position.check_where_position_goes": (
        "choices",
        {"sinusoidal": "input", "learned": "input", "rope": "qk", "alibi": "scores"},
    ),
    "absolute.check_wavelengths": ("tensor", _wavelengths),
    "absolute.check_shift_block": ("tensor", _shift_block),
    "absolute.check_offset_dots": ("tensor", _offset_dots),
    "absolute.check_unfinished_pairs": ("count", _unfinished_pairs),
    "absolute.check_head_offsets": ("pair", lambda: (2, 0)),
    "rotation.check_rotated_query": ("tensor", lambda: _rotate((0.5, -1.0), 1.5)),
    "rotation.check_closed_form_score": ("number", _closed_form_score),
    "rotation.check_rope_attention": ("tensor", _rope_attention),
    "rotation.check_shifted_positions": ("pair", lambda: (14, 10)),
    "rotation.check_relative_angles": ("tensor", _relative_angles),
    # lesson 3: R(-m theta) and F^m grant the wish; lesson 4: p = 3/4 of d = 16 leaves
    # the two slowest pairs (6, 7) unrotated
    "rotation.check_wish_maps": ("tensor", lambda: [1, 3]),
    "rotation.check_unrotated_pairs": ("tensor", lambda: [6, 7]),
    # lesson 3, exercise 2: R_5^T R_2 = R_(2-5); lesson 4, exercise 1: 44 tokens are 7.003
    # turns of pair 0 (44 / 2 pi); exercise 5: batch 4, length 10, 8 heads of 64
    "rotation.check_transpose_index": ("count", 2 - 5),
    "rotation.check_repeat_offset": ("count", round(7 * 2 * math.pi)),
    "rotation.check_step_shapes": (
        "shapes",
        ((10, 64 // 2), (1, 1, 10, 64 // 2), (4, 8, 10, 64 // 2, 2)),
    ),
    "complex_rope.check_complex_rotation": ("complex_pair", _complex_rotation),
    "complex_rope.check_complex_score": ("number", _complex_score),
    "complex_rope.check_slow_pairs": ("count", _slow_pairs),
    "complex_rope.check_meta_layout_weights": ("tensor", _meta_layout_weights),
    "complex_rope.check_bfloat16_angle_error": ("number", _bfloat16_angle_error),
    # lesson 5: a common shift or phase cancels in q conj(k); a swap or a conjugate key
    # does not. The worked pair's arrow q k* = 0.3 - 1.35i sits at atan2(-1.35, 0.3) =
    # -1.352 rad: 13.52 tokens of 0.1 rad, so 14
    "complex_rope.check_score_changes": (
        "choices",
        {"shift": "same", "swap": "changes", "phase": "same", "conjugate": "changes"},
    ),
    "complex_rope.check_best_offset": (
        "count",
        lambda: round(-math.atan2(-1.35, 0.3) / 0.1),
    ),
    # lesson 6: module B (rotate_half with interleaved angles) is no rotation and returns
    # x at position 0; without the row permutation only m = n keeps its score
    "complex_rope.check_three_modules": (
        "choices",
        {"wrong": "b", "at position 0": "unchanged"},
    ),
    "complex_rope.check_unpermuted_scores": (
        "choices",
        {"m = n": "right", "n = 0": "wrong", "m - n = 1": "wrong"},
    ),
    "alibi.check_doubled_context": (
        "choices",
        {"head 1": "stay", "head 8": "between"},
    ),
    "alibi.check_twelve_head_slopes": ("tensor", _twelve_head_slopes),
    "alibi.check_causal_bias": ("tensor", _causal_bias),
    "alibi.check_query_weights": ("tensor", _query_weights),
    "context_extension.check_first_long_pair": ("count", _first_long_pair),
    "context_extension.check_ntk_base": (
        "number",
        lambda: 10000.0 * 8.0 ** (128 / 126),
    ),
    # lesson 9 (the wall and interpolation): predictions and decisions
    "context_extension.check_ntk_past_arc": ("tensor", lambda: list(range(46, 63))),
    "context_extension.check_ntk_past_arc_small": (
        "tensor",
        lambda: list(range(21, 31)),
    ),
    "context_extension.check_neighbour_angles": ("tensor", lambda: [0.25, 1.0]),
    # d = 64, b = 1e4, p = 0.5: the first 16 pairs keep the whole head's frequencies
    "todays_models.check_proportional_frequencies": (
        "tensor",
        lambda: [1e4 ** (-2 * i / 64) if i < 16 else 0.0 for i in range(32)],
    ),
    # 1 + 0.1 ln(1 + floor((16383 + 1) / 8192))
    "todays_models.check_nope_query_scale": ("number", lambda: 1 + 0.1 * math.log(3)),
    # 2 pi 1e4^(2i/256) > 512  <=>  i > 128 log(512 / 2 pi) / log(1e4) = 61.2: i = 62 .. 127
    "todays_models.check_local_slow_pairs": ("count", 66),
    # the latent (512) and the one shared rotated key (64)
    "todays_models.check_mla_cache_size": ("count", 512 + 64),
    # Llama 3.1 without original_max_position_embeddings: L = 131,072, 20 pairs faster
    "todays_models.check_broken_llama3_config": ("diagnosis", ("faster", 20)),
    # text 0, 1; a 2 x 3 grid at s = 2: t = 2, h = 2 + row, w = 2 + column; text again at
    # s + max(H, W) = 5
    "multimodal.check_position_ids": (
        "tensor",
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ],
    ),
    # 28 x 40 patches merged 2 x 2: a 14 x 20 grid at s = 10, text again at 10 + 20
    "multimodal.check_next_text_position": ("count", 30),
    # Qwen3-VL: t, h, w, t, h, w, ... while h and w last (4 each), then t
    "multimodal.check_interleaved_pair_axes": ("tensor", [0, 1, 2] * 4 + [0] * 4),
    # Pixtral counts columns (3 -> 6); DINOv3's centres in [-1, 1]: 2 * 3/16 = 2 * 6/32
    "multimodal.check_resized_offsets": ("tensor", [6.0, 0.375]),
    # lesson 12: the share of keys with every digit right; PI: theta_i / 4 for d = 32,
    # b = 1e4; in the results the lesson reads, the zero-shot extension with the best
    # passkey accuracy at 4L
    "lab.check_exact_match": ("function", _exact_match),
    "lab.check_pi_frequencies": (
        "tensor",
        lambda: [1e4 ** (-2 * i / 32) / 4 for i in range(16)],
    ),
    "lab.check_best_extension": ("name", _lab_best_extension),
    # lesson 15: the file's W_k in transformers' row order; YaRN's pairs on SmolLM2; the
    # method with the lowest loss in the last bucket at 2L in the results the lesson reads
    "real_llm.check_half_layout_wk": ("tensor", _llm_half_wk),
    "real_llm.check_yarn_pair_counts": ("counts", _llm_yarn_counts),
    "real_llm.check_best_method": ("name", _llm_best_method),
}

# lesson 10 (rope_lib.exercises.yarn): YaRN and its temperature
RIGHT |= {
    "yarn.check_yarn_frequencies": ("tensor", _yarn_frequencies),
    "yarn.check_logit_multiplier": ("number", lambda: (0.1 * math.log(16) + 1) ** 2),
    "yarn.check_entropy_direction": ("name", "down"),
    # (YaRN's 1/t at s = 8, SmolLM2's): squares of k ln 8 + 1, k = 0.1 and its fit
    "yarn.check_new_factor_multiplier": ("tensor", _new_factor_multipliers),
}
# lesson 11 (rope_lib.exercises.scaling_in_models): released models' scalings
RIGHT |= {
    "scaling_in_models.check_llama3_pair_counts": ("counts", _llama3_pair_counts),
    "scaling_in_models.check_rope_scaling_entry": ("pair", lambda: (8192, 4)),
    # Llama 3.1's shipped entry keeps pair 0 (wavelength 2 pi) and divides pair 63
    # (wavelength 2 pi 500000^(126/128), far past 8192) by its factor 8, at any length
    "scaling_in_models.check_llama3_short_prompt": ("pair", lambda: (1.0, 8.0)),
}
LAB_METHOD_LABELS |= {"down": "sharper"}  # lesson 10: another word the checker reads


def declared_right_answers() -> dict:
    """The checkers RIGHT does not list whose declaration states its answer as a plain
    number or yes/no (`expected=32`, read by as_count, as_number or as_yes_no): that
    literal is the right answer, nothing to compute independently. A computed answer
    (a tensor, a function of `given`, `cases`) needs its own entry in RIGHT."""
    from rope_lib.exercises import answers

    kinds = {answers.as_count: "count", answers.as_number: "number"}
    kinds[answers.as_yes_no] = "yesno"
    found = {}
    for key, check in CHECKERS.items():
        declared = getattr(check, "exercise", None)
        if key in RIGHT or declared is None or declared.given or declared.cases:
            continue
        value, kind = declared.expected, kinds.get(declared.read)
        plain = (
            isinstance(value, bool) if kind == "yesno" else type(value) in (int, float)
        )
        if kind is not None and plain and not declared.options:
            found[key] = (kind, value)
    return found


RIGHT |= declared_right_answers()


def right_value(key):
    kind, value = RIGHT[key]
    return kind, (value() if callable(value) else value)


def test_every_lesson_checker_has_a_right_answer_here():
    # a new lesson's checkers are tested on right answers too: a plain declared number or
    # yes/no is its own (declared_right_answers), anything computed is added to RIGHT
    assert set(CHECKERS) == set(RIGHT), sorted(set(CHECKERS) ^ set(RIGHT))


def test_the_hand_computed_right_answers_are_the_known_numbers():
    assert (
        _unfinished_pairs() == 33 and _slow_pairs() == 29 and _first_long_pair() == 46
    )
    assert _llama3_pair_counts() == (29, 6, 29)
    assert _closed_form_score() == pytest.approx(
        0.42 * math.cos(1.5) + 1.06 * math.sin(1.5)
    )
    assert torch.tensor(_wavelengths())[0] == pytest.approx(2 * math.pi)


# a wrong choice for each right one (lesson 0's places, lesson 8's changes)
SWAPPED_CHOICE = {"input": "qk", "qk": "input", "scores": "input"}
SWAPPED_CHOICE |= {"stay": "halve", "between": "stay"}
SWAPPED_CHOICE |= {
    "same": "changes",
    "changes": "same",
    "right": "wrong",
    "wrong": "right",
}
SWAPPED_CHOICE |= {"b": "a", "unchanged": "permuted"}


def right_variants(kind, value):
    """The same right answer in many types: (label, answer)."""
    if kind == "yesno":
        return [
            ("bool", value),
            ("np.bool_", np.bool_(value)),
            ("tensor", torch.tensor(value)),
            ("np 0-d", np.array(value)),
        ]
    if kind == "choices":
        return [
            ("dict", dict(value)),
            ("np.str_", {np.str_(k): np.str_(v) for k, v in value.items()}),
        ]
    if kind == "function":
        f = value

        class Scorer:
            def __call__(self, predicted, expected):
                return f(predicted, expected)

        return [
            ("python", f),
            ("float", lambda p, e: float(f(p, e))),
            ("np.float64", lambda p, e: np.float64(f(p, e))),
            ("torch", lambda p, e: (p == e).all(dim=1).double().mean()),
            ("torch float32", lambda p, e: (p == e).all(dim=-1).float().mean()),
            (
                "numpy",
                lambda p, e: np.mean(np.all(np.asarray(p) == np.asarray(e), axis=1)),
            ),
            ("tensor [1]", lambda p, e: torch.tensor([f(p, e)])),
            ("callable object", Scorer()),
        ]
    if kind == "name":
        return [
            ("str", value),
            ("np.str_", np.str_(value)),
            ("spaces", f" {value} "),
            ("upper", value.upper()),
            ("label", {**LAB_LABELS, **LAB_METHOD_LABELS}[value]),
            ("np 0-d", np.array(value)),
        ]
    if kind == "count":
        return [
            ("int", value),
            ("np.int64", np.int64(value)),
            ("np.int32", np.int32(value)),
            ("float", float(value)),
            ("np.float64", np.float64(value)),
            ("tensor int", torch.tensor(value)),
            ("tensor f32", torch.tensor(float(value))),
            ("tensor [1]", torch.tensor([value])),
            ("np 0-d", np.array(value)),
            ("tensor f64", torch.tensor(value, dtype=F64)),
        ]
    if kind == "number":
        return [
            ("float", value),
            ("np.float64", np.float64(value)),
            ("tensor f64", torch.tensor(value, dtype=F64)),
            ("tensor f32 [1]", torch.tensor([value], dtype=torch.float32)),
            ("np 0-d", np.array(value)),
            ("Fraction", Fraction(value)),
        ]
    if kind == "diagnosis":
        word, count = value
        return [
            ("tuple", (word, count)),
            ("list", [word, count]),
            ("np types", (np.str_(word), np.int64(count))),
            ("upper, spaces", (f" {word.upper()} ", count)),
            ("float count", (word, float(count))),
            ("0-d tensor count", (word, torch.tensor(count))),
        ]
    if kind == "shapes":
        return [
            ("tuples", value),
            ("lists", [list(s) for s in value]),
            ("torch.Size", tuple(torch.Size(s) for s in value)),
            ("tensors", [torch.tensor(s) for s in value]),
            ("numpy", [np.array(s) for s in value]),
            ("shape of", [torch.empty(s).shape for s in value]),
        ]
    if kind == "pair":
        a, b = value
        return [
            ("tuple", (a, b)),
            ("list", [a, b]),
            ("np.int64", (np.int64(a), np.int64(b))),
            ("np array", np.array([a, b])),
            ("tensor", torch.tensor([a, b])),
            ("floats", (float(a), float(b))),
            ("tensor f64", torch.tensor([a, b], dtype=F64)),
            ("0-d tensors", (torch.tensor(a), torch.tensor(b))),
        ]
    if kind == "counts":
        return [
            ("tuple", tuple(value)),
            ("list", list(value)),
            ("np", np.array(value)),
            ("tensor", torch.tensor(value)),
            ("np.int64", tuple(np.int64(v) for v in value)),
            ("floats", tuple(float(v) for v in value)),
        ]
    if kind == "complex_pair":
        pair = [value.real, value.imag]
        return [
            ("complex", value),
            ("np.complex128", np.complex128(value)),
            ("tensor complex", torch.tensor(value, dtype=torch.complex128)),
            ("tensor complex64 [1]", torch.tensor([value], dtype=torch.complex64)),
            ("list", pair),
            ("tuple", tuple(pair)),
            ("tensor f32", torch.tensor(pair)),
            ("np", np.array(pair)),
        ]
    t = torch.tensor(value, dtype=F64)
    return [
        ("list", t.tolist()),
        ("tuple", tuple(t.tolist())),
        ("numpy f64", t.numpy()),
        ("numpy f32", t.numpy().astype(np.float32)),
        ("tensor f32", t.float()),
        ("tensor f64", t),
        ("list of tensors", list(t.unbind(0))),
        ("strided view", torch.stack([t, t], -1)[..., 0]),
        ("requires_grad", t.clone().requires_grad_(True)),
    ]


RIGHT_CASES = [
    pytest.param(key, label, answer, id=f"{key}-{label}")
    for key in RIGHT
    for label, answer in right_variants(*right_value(key))
]


@pytest.mark.parametrize("key, label, answer", RIGHT_CASES)
def test_the_right_answer_in_any_type_is_correct(key, label, answer):
    feedback = judge(CHECKERS[key], answer)
    assert feedback.ok, feedback


# ---------------------------------------------------------------- the right answer, corrupted


def corrupted(kind, value):
    """Answers near the right one that must never be called correct: (label, answer)."""
    out = []
    if kind == "diagnosis":
        word, count = value
        other = "slower" if word == "faster" else "faster"
        return [
            ("other direction", (other, count)),
            ("count + 1", (word, count + 1)),
            ("count - 1", (word, count - 1)),
            ("count + 0.5", (word, count + 0.5)),
            ("nan count", (word, NAN)),
            ("swapped", (count, word)),
            ("word only", (word,)),
            ("count only", count),
            ("one string", f"{word} {count}"),
            ("dict", {word: count}),
        ]
    if kind in ("count", "number"):
        out += [
            ("complex", complex(value, 1.0)),
            ("complex, real part right", complex(value, 0.0)),
            ("np.complex128", np.complex128(value)),
            ("complex tensor", torch.tensor(complex(value, 0.5))),
            ("nan", NAN),
            ("inf", INF),
            ("-inf", -INF),
            ("tensor nan", torch.tensor(NAN)),
            ("bool", True),
            ("string", str(value)),
            ("list of two", [value, value]),
        ]
        if kind == "count":
            out += [
                ("plus 0.5", value + 0.5),
                ("plus 0.2", value + 0.2),
                ("tensor plus 0.5", torch.tensor(value + 0.5)),
                ("np plus 0.7", np.float64(value + 0.7)),
            ]
        elif abs(int(value) - value) > 1e-3 * abs(value):
            out += [("truncated", float(int(value)))]
    elif kind in ("pair", "counts"):
        v = list(value)
        half = [x + 0.5 for x in v]
        out += [
            ("plus halves", tuple(half)),
            (
                "(14.5, 10.2) style",
                tuple(x + 0.5 - 0.3 * (i % 2) for i, x in enumerate(v)),
            ),
            ("nan", tuple([NAN] + v[1:])),
            ("inf", tuple([INF] + v[1:])),
            ("complex", tuple(complex(x, 1) for x in v)),
            ("complex tensor", torch.tensor(v, dtype=torch.complex64)),
            ("one short", tuple(v[:-1])),
            ("one more", tuple(v + [0])),
            ("nested", [v]),
            ("strings", tuple(str(x) for x in v)),
            ("huge", tuple([10**400] + v[1:])),
        ]
    elif kind == "complex_pair":
        pair = [value.real, value.imag]
        out += [
            ("two complex numbers", torch.tensor(pair, dtype=torch.complex64)),
            ("nan", complex(NAN, value.imag)),
            ("inf", [INF, value.imag]),
            ("truncated", [float(int(x)) for x in pair]),
            ("pair of complex", [complex(x, 1) for x in pair]),
            ("string", str(value)),
        ]
    elif kind == "tensor":
        t = torch.tensor(value, dtype=F64)
        nan_t = t.clone()
        nan_t.view(-1)[0] = NAN
        inf_t = t.clone()
        inf_t.view(-1)[0] = INF
        out += [
            ("complex, real part right", t.to(torch.complex128)),
            ("complex", t.to(torch.complex128) + 0.5j),
            ("complex numpy", t.numpy().astype(np.complex128)),
            ("nan", nan_t),
            ("inf", inf_t),
            ("nan list", nan_t.tolist()),
            ("empty", t.flatten()[:0]),
            ("flattened", t.flatten() if t.dim() > 1 else t[:-1]),
            ("bfloat16 on meta", t.to(torch.bfloat16).to("meta")),
            ("extra dim", t[None].repeat(2, *[1] * t.dim())),
            ("as strings", [str(x) for x in t.flatten().tolist()]),
        ]
        trunc = torch.trunc(torch.nan_to_num(t, neginf=-1e9))
        if not torch.allclose(torch.nan_to_num(t, neginf=-1e9), trunc):
            out.append(("truncated", torch.where(torch.isinf(t), t, trunc)))
    elif kind == "yesno":
        out += [
            ("string", str(value)),
            ("int", int(value)),
            ("list", [value]),
            ("None", None),
            ("tensor pair", torch.tensor([value, value])),
        ]
    elif kind == "function":
        f = value

        def fails(*_):
            raise ValueError("no")

        out += [
            ("digit fraction", lambda p, e: (p == e).double().mean()),
            ("any digit", lambda p, e: (p == e).any(dim=1).double().mean()),
            ("over keys", lambda p, e: (p == e).all(dim=0).double().mean()),
            ("count", lambda p, e: (p == e).all(dim=1).sum()),
            ("per key", lambda p, e: (p == e).all(dim=1).double()),
            ("nan", lambda p, e: NAN),
            ("inf", lambda p, e: INF),
            ("complex", lambda p, e: complex(f(p, e), 0.0)),
            ("complex tensor", lambda p, e: torch.tensor(f(p, e) + 0.5j)),
            ("bool", lambda p, e: f(p, e) > 0.4),
            ("string", lambda p, e: str(f(p, e))),
            ("None", lambda p, e: None),
            ("raises", fails),
            ("off by 1e-3", lambda p, e: f(p, e) + 1e-3),
            ("rounded", lambda p, e: round(f(p, e))),
            (
                "the value, not the function",
                f(torch.tensor([[1, 2]]), torch.tensor([[1, 2]])),
            ),
        ]
    elif kind == "name":
        out += [
            ("list", [value]),
            ("tuple", (value,)),
            ("bytes", value.encode()),
            ("dict", {value: 1}),
            ("plural", value + "s"),
            ("empty", ""),
            ("numpy array", np.array([value])),
            ("other schemes", "rope" if value != "rope" else "alibi"),
            ("all of them", ", ".join(LAB_LABELS)),
        ]
        out += [(f"scheme {other}", other) for other in LAB_LABELS if other != value]
    elif kind == "choices":
        out += [
            ("list values", {k: [v] for k, v in value.items()}),
            ("tuple of pairs", tuple(value.items())),
            ("None values", dict.fromkeys(value)),
            ("nested dict", {k: {"place": v} for k, v in value.items()}),
            (
                "swapped",
                {k: SWAPPED_CHOICE[v] for k, v in value.items()},
            ),
        ]
    return out


CORRUPTED_CASES = [
    pytest.param(key, label, answer, id=f"{key}-{label}")
    for key in RIGHT
    for label, answer in corrupted(*right_value(key))
    # lesson 12's best extension may tie (dynamic NTK gives NTK's numbers): a tied
    # method's name is no corruption
    if not (key == "lab.check_best_extension" and _names_a_best_extension(answer))
]


@pytest.mark.parametrize("key, label, answer", CORRUPTED_CASES)
def test_a_corrupted_right_answer_is_never_correct(key, label, answer):
    feedback = judge(CHECKERS[key], answer)
    assert not feedback.ok, feedback


META_CASES = [
    pytest.param(key, id=key)
    for key in RIGHT
    if RIGHT[key][0] not in ("choices", "function", "name", "diagnosis")
]


@pytest.mark.parametrize("key", META_CASES)
def test_the_right_answer_on_the_meta_device_gets_feedback(key):
    kind, value = right_value(key)
    if kind == "complex_pair":
        value = [value.real, value.imag]
    if (
        kind == "shapes"
    ):  # three shapes of different lengths: each part on the meta device
        answer = [torch.tensor(s).to("meta") for s in value]
    else:
        answer = torch.tensor(value).to("meta")
    feedback = judge(CHECKERS[key], answer)
    assert not feedback.ok and "meta" in feedback.message, feedback


# ---------------------------------------------------------------- odd answers, by hand


class Weird:
    def __repr__(self):
        raise RuntimeError("repr fails too")

    def __float__(self):
        raise ValueError("no float")


def _cycle():
    a = [1.0]
    a.append(a)
    return a


ODD = [
    None,
    "",
    "abc",
    "33",
    "False",
    b"x",
    {},
    {"a": [1, 2]},
    {"rope": ["qk"]},
    [],
    [[]],
    [1.0, [2.0, 3.0]],
    [[1.0, 2.0], [3.0]],
    set(),
    frozenset({1}),
    object(),
    Weird(),
    _cycle(),
    NAN,
    INF,
    -INF,
    10**400,
    -(10**400),
    10**30,
    1j,
    complex(NAN, 0),
    complex(3, 4),
    np.float64(NAN),
    np.complex128(1 + 2j),
    np.True_,
    True,
    np.array(["a", "b"]),
    np.array([1, None], dtype=object),
    np.array([]),
    np.zeros((2, 0)),
    Ellipsis,
    (lambda: 0),
    type,
    int,
    range(3),
    slice(1, 2),
    torch.tensor(NAN),
    torch.empty(0),
    torch.empty(0, 3),
    torch.zeros(3, 3, 3),
    torch.tensor([1 + 1j]),
    torch.full((64,), NAN),
    torch.ones(2, 2, dtype=torch.complex64),
    torch.tensor([True, False]),
    torch.empty(3, device="meta"),
    torch.empty((), device="meta"),
    torch.tensor(INF, dtype=torch.bfloat16),
    torch.full((5, 5), -INF),
    np.full((8,), INF),
    [NAN, NAN],
    (NAN, NAN, NAN),
    [INF] * 32,
    [[NAN] * 16] * 16,
    [10**400, 1],
    torch.tensor([3.0, 4.0]).to(torch.complex64),
    Fraction(1, 3),
    -1,
    10**18,
    1e308 * 10,
    -0.0,
]

ODD_CASES = [
    pytest.param(key, i, id=f"{key}-odd{i}")
    for key in CHECKERS
    for i in range(len(ODD))
]


@pytest.mark.parametrize("key, index", ODD_CASES)
def test_an_odd_answer_gets_feedback_and_is_not_correct(key, index):
    feedback = judge(CHECKERS[key], ODD[index])
    assert not feedback.ok, feedback


# ---------------------------------------------------------------- odd answers, generated

nonfinite = st.sampled_from([NAN, INF, -INF])
huge = st.one_of(st.integers(min_value=2**1030), st.integers(max_value=-(2**1030)))
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4)


@st.composite
def odd_tensors(draw):
    shape = draw(shapes)
    kind = draw(st.sampled_from(["nan", "complex", "empty", "meta", "bool", "inf"]))
    dtype = draw(
        st.sampled_from([torch.float32, torch.float64, torch.bfloat16, torch.float16])
    )
    if kind == "empty":
        shape = shape + [0]
        return torch.zeros(shape, dtype=dtype)
    if kind == "meta":
        return torch.zeros(shape, dtype=dtype, device="meta")
    if kind == "bool":
        return torch.zeros(shape + [draw(st.integers(3, 5))], dtype=torch.bool)
    if kind == "complex":
        real = draw(st.floats(-10, 10, allow_nan=False))
        return torch.full(
            shape,
            complex(real, draw(st.floats(-10, 10, allow_nan=False))),
            dtype=torch.complex64,
        )
    fill = draw(st.floats(-100, 100, allow_nan=False))
    t = torch.full(shape, fill, dtype=dtype)
    t.view(-1)[:1] = (
        NAN if kind == "nan" else -INF if kind == "inf" and fill < 0 else INF
    )
    if t.numel() == 0:
        t = torch.full(shape + [1], NAN, dtype=dtype)
    return t


numpy_odd = st.one_of(
    nonfinite.map(np.float64),
    nonfinite.map(np.float32),
    st.complex_numbers(max_magnitude=1e6).map(np.complex128),
    st.sampled_from(
        [
            np.float16(NAN),
            np.array(NAN),
            np.array([NAN, 1.0]),
            np.array([[1, 2], [3]], dtype=object),
            np.array("seven"),
            np.zeros((0,)),
            np.ones((3, 3, 3, 3)) * NAN,
        ]
    ),
)

odd_answers = st.one_of(
    st.none(),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.dictionaries(
        st.text(max_size=4),
        st.lists(st.one_of(st.integers(), st.text(max_size=3)), max_size=3),
        max_size=4,
    ),
    nonfinite,
    huge,
    st.complex_numbers(allow_nan=True, allow_infinity=True).filter(
        lambda z: z.imag != 0 or math.isnan(z.real)
    ),
    st.lists(nonfinite, min_size=1, max_size=64),
    st.lists(
        st.lists(st.floats(allow_nan=False), min_size=1, max_size=3),
        min_size=2,
        max_size=3,
    ).filter(lambda rows: len({len(r) for r in rows}) > 1),  # ragged
    st.lists(
        st.complex_numbers(max_magnitude=10).filter(lambda z: z.imag != 0),
        min_size=2,
        max_size=40,
    ),
    st.tuples(st.floats(allow_nan=True), nonfinite),
    st.lists(huge, min_size=1, max_size=3),
    odd_tensors(),
    numpy_odd,
)


@pytest.mark.parametrize("key", list(CHECKERS))
@settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    max_examples=40,
)
@given(answer=odd_answers)
def test_generated_odd_answers_get_feedback_and_are_not_correct(key, answer):
    feedback = judge(CHECKERS[key], answer)
    assert not feedback.ok, feedback


# ---------------------------------------------------------------- generated near-right answers


@pytest.mark.parametrize("key", [k for k in RIGHT if RIGHT[k][0] == "tensor"])
@settings(max_examples=25)
@given(
    imag=st.floats(-5, 5, allow_nan=False), where=st.integers(0, 10**6), bad=nonfinite
)
def test_generated_complex_or_nonfinite_right_answers_are_not_correct(
    key, imag, where, bad
):
    _, value = right_value(key)
    t = torch.tensor(value, dtype=F64)
    assert not judge(CHECKERS[key], t + 1j * imag).ok
    spoiled = t.clone()
    flat = spoiled.view(-1)
    index = where % flat.numel()
    if flat[index] == bad:  # the causal bias already holds -inf there
        bad = NAN
    flat[index] = bad
    assert not judge(CHECKERS[key], spoiled).ok


@pytest.mark.parametrize(
    "key", [k for k in RIGHT if RIGHT[k][0] in ("count", "pair", "counts")]
)
@settings(max_examples=25)
@given(fraction=st.floats(0.01, 0.99))
def test_generated_non_whole_counts_are_not_truncated_to_right(key, fraction):
    kind, value = right_value(key)
    if kind == "count":
        answers = [
            value + fraction,
            value - fraction,
            np.float32(value + fraction),
            torch.tensor(value + fraction),
        ]
    else:
        v = list(value)
        answers = [
            tuple([v[0] + fraction] + v[1:]),
            tuple(v[:-1] + [v[-1] - fraction]),
            torch.tensor([x + fraction for x in v], dtype=F64),
        ]
    for answer in answers:
        assert not judge(CHECKERS[key], answer).ok, answer


# ---------------------------------------------------------------- the readers themselves


def test_readers_read_values_whatever_their_type():
    from rope_lib.exercises import answers as a

    for count in (
        7,
        np.int8(7),
        np.uint64(7),
        7.0,
        np.float16(7),
        torch.tensor(7, dtype=torch.bfloat16),
        torch.tensor([[7]]),
        np.array([7.0]),
        [7],
        (7.0,),
    ):
        assert a.read_count(count, "n") == 7, count
    assert a.read_count(10**400, "n") == 10**400  # exact, never through a float
    for wrong in (
        7.5,
        NAN,
        INF,
        True,
        np.True_,
        "7",
        complex(7, 0),
        torch.tensor([7, 7]),
        None,
        {},
        Weird(),
    ):
        assert isinstance(a.read_count(wrong, "n"), Feedback), wrong
    assert (
        a.read_number(Fraction(1, 4), "x") == 0.25
        and a.read_number(torch.tensor([0.5]), "x") == 0.5
    )
    for wrong in (
        NAN,
        -INF,
        10**400,
        1j,
        np.complex64(1),
        "0.5",
        np.bool_(True),
        torch.empty(0),
    ):
        assert isinstance(a.read_number(wrong, "x"), Feedback), wrong
    for yes in (True, np.True_, torch.tensor(True), np.array([True])):
        assert a.read_yes_no(yes, "b") is True
    for wrong in (
        1,
        "True",
        None,
        torch.tensor([True, False]),
        torch.tensor(True, device="meta"),
    ):
        assert isinstance(a.read_yes_no(wrong, "b"), Feedback), wrong
    assert a.read_pair((np.int64(3), torch.tensor(4)), "p", whole=True) == (3, 4)
    assert isinstance(a.read_pair((3.5, 4), "p", whole=True), Feedback)
    assert (
        a.read_complex([3, 4], "z") == 3 + 4j
        and a.read_complex(torch.tensor([3 + 4j]), "z") == 3 + 4j
    )
    assert isinstance(a.read_complex(torch.tensor([1j, 2j]), "z"), Feedback)
    t = a.read_tensor([torch.tensor([1, 2]), np.array([3.0, 4.0])], "t")
    assert t.dtype == F64 and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert a.read_tensor(torch.tensor([-INF, 0.0]), "t", finite=False).tolist() == [
        -INF,
        0.0,
    ]
    for wrong in (
        [[1.0], [2.0, 3.0]],
        [1.0, "2"],
        torch.tensor([1 + 0j]),
        [NAN],
        [INF],
        _cycle(),
        {"a": 1},
    ):
        assert isinstance(a.read_tensor(wrong, "t"), Feedback), wrong
    assert a.read_indices(range(3), "k", 8) == frozenset({0, 1, 2})
    assert a.read_indices(torch.arange(8) >= 6, "k", 8) == frozenset({6, 7})
    assert isinstance(a.read_indices([8], "k", 8), Feedback) and isinstance(
        a.read_indices([0.5], "k", 8), Feedback
    )
    assert a.read_choices({"A": " X "}, "d", ["a"], ["x"]) == {"a": "x"}
    assert isinstance(a.read_choices({"a": ["x"]}, "d", ["a"], ["x"]), Feedback)
    for odd in (
        Weird(),
        _cycle(),
        10**400,
        torch.empty(2, device="meta"),
        np.array([1, None], dtype=object),
    ):
        assert isinstance(a.describe(odd), str)


def test_guarded_turns_a_crash_into_feedback_and_keeps_the_name():
    from rope_lib.exercises.answers import guarded

    @guarded
    def check_something(answer):
        """Docstring."""
        raise ZeroDivisionError

    feedback = check_something(1)
    assert (
        isinstance(feedback, Feedback)
        and not feedback.ok
        and "ZeroDivisionError" in feedback.message
    )
    assert (
        check_something.__name__ == "check_something"
        and check_something.__doc__ == "Docstring."
    )
    assert list(inspect.signature(check_something).parameters) == ["answer"]
