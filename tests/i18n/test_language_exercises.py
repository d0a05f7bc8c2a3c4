"""The checkers of lessons 0-7 (why_position, absolute, rotation, complex_rope) and the
answer readers behind every checker (answers.py) speak Chinese after set_language("zh"):
every message is translated, keeps its numbers, and set_language("en") gives back the
English word for word.

The numbers the tests look for are computed here from the exercises' formulas (or by
torch), not taken from the checkers.

The checkers of lessons 8-14 (alibi, context_extension, yarn, lab, todays_models,
multimodal) speak Chinese after set_language("zh"): every message is translated, keeps
its numbers, and set_language("en") gives back the English word for word.

The numbers the tests look for are computed here from the exercises' formulas, not taken
from the checkers.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch

from rope_lib import rope_frequencies
from rope_lib.exercises import (
    absolute,
    alibi,
    answers,
    complex_rope,
    context_extension,
    lab,
    multimodal,
    rotation,
    todays_models,
    why_position,
)
from rope_lib.exercises import scaling_in_models as released
from rope_lib.exercises import yarn as yarn_exercises
from rope_lib.lab.results import load_results
from rope_lib.language import language

CJK = re.compile(r"[\u4e00-\u9fff]")
#: English words of the templates; none may be left in a Chinese message.
ENGLISH = re.compile(
    r"\b(the|should|got|you|your|is|are|not|replace|with|of|one|numbers?|pairs?)\b"
)


def _wavelengths():
    i = torch.arange(32, dtype=torch.float64)
    return 2 * math.pi * 10000 ** (2 * i / 64)


def _rotated(pair, angle):
    x, y = pair
    return [
        x * math.cos(angle) - y * math.sin(angle),
        x * math.sin(angle) + y * math.cos(angle),
    ]


#: (checker, answer) pairs that reach many branches: placeholders, odd types, known
#: mistakes, right answers.
ODD = [None, "abc", [1, [2, 3]], {"a": 1}, object(), float("nan"), 2.5, True, [1, 2, 3]]
CASES = [
    (why_position.check_swapped_outputs, answer)
    for answer in (
        None,
        [2, 3],
        [],
        [5],
        [2, 3, 4, 5],
        range(6),
        [3],
        [1, 2],
        "no",
        [9],
    )
] + [
    (why_position.check_where_position_goes, answer)
    for answer in (
        [1],
        {"rope": "qk"},
        {"rope": 3},
        {"rope": "x"},
        {"sinusoidal": "qk", "learned": "input", "rope": "qk", "alibi": "scores"},
    )
]
for check, answers_ in [
    (
        absolute.check_wavelengths,
        [_wavelengths(), _wavelengths() / (2 * math.pi), torch.ones(64), torch.ones(5)],
    ),
    (absolute.check_shift_block, [torch.ones(3), torch.eye(2) * 7]),
    (absolute.check_offset_dots, [torch.ones(32, 8), torch.ones(5)]),
    (absolute.check_unfinished_pairs, [33, 100, 31, torch.ones(3)]),
    (absolute.check_head_offsets, [(1, 0), (2, -1), (2, 1), (0, 2), (3, 3)]),
    (rotation.check_rotated_query, [[0.5, -1.0], _rotated((0.5, -1.0), 1.5)]),
    (rotation.check_closed_form_score, [0.0, [1, 2]]),
    (rotation.check_rope_attention, [torch.ones(1, 2, 5, 4)]),
    (rotation.check_shifted_positions, [(14, 10), (10, 14), (5, 1), (10.5, 3)]),
    (rotation.check_relative_angles, [torch.ones(4), torch.ones(8)]),
    (complex_rope.check_complex_rotation, [[4, 3], [1, 1], _rotated((3, 4), 0.5)]),
    (complex_rope.check_slow_pairs, [29, 35, 200]),
    (complex_rope.check_meta_layout_weights, [complex_rope.meta_layout_weights()]),
    (complex_rope.check_bfloat16_angle_error, [9.0, 0.0, 3.0, -9.0]),
    (
        complex_rope.check_score_changes,
        [
            {
                "shift": "same",
                "swap": "changes",
                "phase": "same",
                "conjugate": "changes",
            },
            {"shift": "changes", "swap": "same", "phase": "same", "conjugate": "same"},
            {"shift": "same"},
        ],
    ),
    (complex_rope.check_best_offset, [14, 13, 49, 0, 30, 99]),
    (
        complex_rope.check_three_modules,
        [
            {"wrong": "b", "at position 0": "unchanged"},
            {"wrong": "a", "at position 0": "zero"},
            {"wrong": "none", "at position 0": "permuted"},
        ],
    ),
    (
        complex_rope.check_unpermuted_scores,
        [
            {"m = n": "right", "n = 0": "wrong", "m - n = 1": "wrong"},
            {"m = n": "wrong", "n = 0": "right", "m - n = 1": "right"},
        ],
    ),
]:
    CASES += [(check, answer) for answer in [*ODD, *answers_]]


def _id(case):
    check, answer = case
    return f"{check.__module__.rsplit('.', 1)[1]}.{check.__name__}"


def test_the_numbers_survive_the_translation():
    with language("zh"):
        # lesson 1: the wavelengths run from 2*pi to 2*pi * 10000**(62/64)
        message = absolute.check_wavelengths(_wavelengths()).message
        assert f"{2 * math.pi:.4f}" in message
        assert f"{2 * math.pi * 10000 ** (62 / 64):.1f}" in message
        # lesson 7: bfloat16 rounds 5001 to a multiple of 32
        stored = int(torch.tensor(5001.0).to(torch.bfloat16).item())
        error = abs(stored - 5001)
        feedback = complex_rope.check_bfloat16_angle_error(float(error))
        assert feedback.ok and str(stored) in feedback.message
        assert f"{error} rad" in feedback.message
        assert ("少转" if stored < 5001 else "多转") in feedback.message
        # lesson 3: a wrong score is quoted with its signed distance from the right one
        angle = (9 - 4) * 0.3
        (q1, q2), (k1, k2) = (0.8, 0.6), (-0.3, 1.1)
        score = (q1 * k1 + q2 * k2) * math.cos(angle) + (q1 * k2 - q2 * k1) * math.sin(
            angle
        )
        message = rotation.check_closed_form_score(0.25).message
        assert "0.2500" in message and f"{0.25 - score:+.4f}" in message
        # a count that is not whole keeps its value
        message = absolute.check_unfinished_pairs(33.5).message
        assert "33.5" in message and "整数" in message


def test_the_readers_speak_chinese():
    with language("zh"):
        meta = answers.read_tensor(torch.ones(2, device="meta"), "t")
        assert "meta" in meta.message and CJK.search(meta.message)
        assert answers.describe(np.ones(3)).startswith("一个形状为 (3,)")
        indices = answers.read_indices([1, 2, 99], "idx", 8)
        assert "0 和 7" in indices.message and "8 个元素" in indices.message
        hint = answers.read_tensor([float("nan")], "t", nan_hint="a hint").message
        assert hint == "t 含有 NaN：a hint"
        # an empty `what` is shown empty, not as gettext's catalog header
        empty = answers.read_count(2.5, "n", what="").message
        assert "Content-Type" not in empty and "2.5" in empty
    assert answers.describe(np.ones(3)) == "a numpy array of shape (3,), dtype float64"


f64 = torch.float64


def _theta(d: int, base: float) -> torch.Tensor:
    """theta_i = base^(-2i/d), i = 0 .. d/2 - 1."""
    return base ** (-torch.arange(0, d, 2, dtype=f64) / d)


def _geometric(n: int) -> torch.Tensor:
    return 2.0 ** (-8.0 * torch.arange(1, n + 1, dtype=f64) / n)


def _lab_results() -> dict:
    return load_results()


def _cases() -> list:
    """(checker, answer): right answers, the known slips and odd answers of every
    checker."""
    slopes12 = torch.cat([_geometric(8), _geometric(16)[0::2][:4]])
    m5, n5 = torch.arange(5)[:, None], torch.arange(5)[None, :]
    causal = (-0.25 * (m5 - n5)).to(f64).masked_fill(n5 > m5, float("-inf"))
    keys = torch.arange(8, dtype=f64)
    past = torch.where(
        keys <= 5, torch.exp(-0.5 * (5 - keys)), torch.zeros(8, dtype=f64)
    )
    symmetric = torch.exp(-0.5 * (5 - keys).abs())
    yarn = yarn_exercises.yarn_by_hand
    mscale = 0.1 * math.log(16) + 1
    lab_theta = _theta(32, 10000.0)
    p_rope = torch.cat([_theta(64, 10000.0)[:16], torch.zeros(16, dtype=f64)])
    llama4 = 1 + 0.1 * math.log(1 + (16383 + 1) // 8192)
    ids = torch.tensor(
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ]
    )
    axes = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 0]

    def exact_match(predicted, expected):
        return (predicted == expected).all(dim=1).double().mean()

    def digit_fraction(predicted, expected):
        return (predicted == expected).double().mean()

    def raises(predicted, expected):
        raise KeyError("oops")

    def down_the_keys(predicted, expected):
        return (predicted == expected).all(dim=0).double().mean()

    def how_many(predicted, expected):
        return (predicted == expected).all(dim=1).sum()

    odd = [None, "abc", [1, [2, 3]], float("nan"), 2.5]
    table = {
        alibi.check_doubled_context: [
            {"head 1": "stay", "head 8": "between"},
            {"head 1": "stay", "head 8": "halve"},
            {"head 1": "stay", "head 8": "stay"},
            {"head 1": "halve", "head 8": "between"},
            {"head 1": "rise", "head 8": "between"},
            {"head 8": "between"},
            {"head 1": "x", "head 8": "between"},
        ],
        alibi.check_twelve_head_slopes: [
            slopes12,
            _geometric(12),
            _geometric(16)[:12],
            slopes12.sort().values,
        ],
        alibi.check_causal_bias: [
            causal,
            causal.T,
            -0.25 * (m5 - n5).abs().to(f64),
            causal.masked_fill(n5 > m5, 0.0),
            2 * causal,
            causal.expand(8, 5, 5),
        ],
        alibi.check_query_weights: [
            past / past.sum(),
            symmetric / symmetric.sum(),
            past,
            (-0.5 * (5 - keys)).masked_fill(keys > 5, float("-inf")),
            torch.ones(3),
        ],
        context_extension.check_first_long_pair: [46, 45, 92, 0, 64, 10],
        context_extension.check_ntk_base: [
            10000 * 8 ** (128 / 126),
            80000.0,
            10000 * 8 ** (126 / 128),
            3.0,
        ],
        yarn_exercises.check_yarn_frequencies: [
            yarn(64, 10000.0, 8.0, 2048),
            yarn(64, 10000.0, 8.0, 2048, invert=True),
            yarn(64, 10000.0, 8.0, 2048, truncate=False),
            _theta(64, 10000.0) / 8,
            torch.ones(3),
        ],
        yarn_exercises.check_logit_multiplier: [
            mscale**2,
            mscale,
            1 / mscale,
            1.2965,
            7.0,
        ],
        released.check_llama3_pair_counts: [
            (29, 6, 29),
            (35, 0, 29),
            (1, 2, 3),
            (41, 9, 14),
            (20, 10, 34),
            {"kept": range(0, 29), "blended": range(29, 35), "interpolated": 0},
            {
                "kept": range(0, 29),
                "blended": range(29, 35),
                "interpolated": range(35, 64),
            },
            {
                "kept": range(35, 64),
                "blended": range(29, 35),
                "interpolated": range(29),
            },
            {
                "kept": range(0, 28),
                "blended": range(28, 35),
                "interpolated": range(35, 64),
            },
            {"kept": 29},
        ],
        # lesson 10's new checkers
        yarn_exercises.check_entropy_direction: ["down", "up", "unchanged", "sideways"],
        yarn_exercises.check_new_factor_multiplier: [
            ((0.1 * math.log(8) + 1) ** 2, (0.1 * math.log(8) + 1) ** 2),
            (0.1 * math.log(8) + 1, 1.1),
            (1.5, 1.2),
        ],
        released.check_rope_scaling_entry: [(8192, 4), (32768, 4), (8192, 2)],
        released.check_llama3_short_prompt: [(1, 8), (1, 1), (8, 8), (8, 1), (2, 3)],
        lab.check_exact_match: [
            exact_match,
            digit_fraction,
            raises,
            down_the_keys,
            how_many,
            lambda p, e: (p == e).all(dim=1).mean(),  # a mean of booleans
            lambda p, e: None,
            3,
        ],
        lab.check_pi_frequencies: [
            lab_theta / 4,
            lab_theta * 4,
            lab_theta,
            lab_theta / 2,
            (lab_theta / 4).repeat_interleave(2),
            _theta(16, 10000.0) / 4,  # a head of 16 dimensions
            10000.0 ** (-torch.arange(16, dtype=f64) / 8) / 4,  # d = 16
            _theta(64, 10000.0)[:16] / 4,  # d = 64
            (10000.0 * 4 ** (32 / 30)) ** (-torch.arange(0, 32, 2, dtype=f64) / 32),
            2 * math.pi / (lab_theta / 4),
            lab_theta.flip(0) / 4,
            lab_theta / 4 + 0.01,
        ],
        lab.check_best_extension: [
            *_lab_results()["config"]["methods"],
            "YaRN",
            "Llama 3",
            "rope",
            "plain RoPE",
            "alibi",
            "NoPE",
            "T5 bias",
            ["yarn"],
            3,
        ],
        todays_models.check_proportional_frequencies: [
            p_rope,
            _theta(32, 10000.0),
            p_rope[:16],
            _theta(64, 10000.0),
            p_rope.flip(0),
        ],
        todays_models.check_nope_query_scale: [llama4, llama4**2, 5.0],
        todays_models.check_local_slow_pairs: [66, 57, 62, 3],
        todays_models.check_broken_llama3_config: [
            ("faster", 20),
            ("slower", 20),
            ("same", 0),
            ("faster", 29),
            ("faster", 44),
            ("faster", 14),
            ("faster", 7),
            "x",
            ("up", 3),
        ],
        todays_models.check_mla_cache_size: [576, 512, 512 + 128 * 64, 17],
        multimodal.check_position_ids: [ids, ids.T, torch.arange(10).expand(3, -1)],
        multimodal.check_next_text_position: [30, 290, 1130, 50, 7],
        multimodal.check_interleaved_pair_axes: [
            axes,
            [0] * 8 + [1] * 4 + [2] * 4,
            [i % 3 for i in range(16)],
            [a + 1 for a in axes],
        ],
        multimodal.check_resized_offsets: [(6, 0.375), (0.375, 6), (3, 0.375), (6, 6)],
    }
    return [
        (check, answer) for check, answers in table.items() for answer in answers + odd
    ]


LATER_CASES = _cases()


@pytest.mark.parametrize(
    "case", CASES + LATER_CASES, ids=[_id(c) for c in CASES + LATER_CASES]
)
def test_every_message_is_chinese_and_english_comes_back(case):
    check, answer = case
    english = repr(check(answer))
    with language("zh"):
        chinese = repr(check(answer))
    assert english.startswith(("Correct: ", "Not yet: ")), english
    assert chinese.startswith(("正确：", "还不对：")), chinese
    assert CJK.search(chinese[4:]), chinese
    assert not ENGLISH.search(chinese), chinese
    assert repr(check(answer)) == english  # English again after the block
    assert not CJK.search(english), english


def test_the_numbers_of_lessons_6_to_11_survive_the_translation():
    with language("zh"):
        # lesson 8: each step back multiplies the weight by e^(-1/2); the query's own
        # key gets 1 / sum_k e^(-k/2), k = 0..5
        keys = torch.arange(8, dtype=f64)
        weights = torch.where(keys <= 5, torch.exp(-0.5 * (5 - keys)), 0 * keys)
        feedback = alibi.check_query_weights(weights / weights.sum())
        own = 1 / sum(math.exp(-k / 2) for k in range(6))
        assert feedback.ok
        assert f"{math.exp(-0.5):.4f}" in feedback.message
        assert f"{own:.4f}" in feedback.message
        # ... and a weight row that does not sum to 1 is quoted with its sum
        message = alibi.check_query_weights(2 * weights / weights.sum()).message
        assert "2.0000" in message and "归一化" in message
        # lesson 9: NTK's base and YaRN's logit multiplier
        base = 10000 * 8 ** (128 / 126)
        feedback = context_extension.check_ntk_base(base)
        assert feedback.ok and f"{base:.2f}" in feedback.message
        mscale = 0.1 * math.log(16) + 1
        feedback = yarn_exercises.check_logit_multiplier(mscale**2)
        assert f"{mscale**2:.4f}" in feedback.message
        assert f"{mscale:.4f}" in feedback.message
        # Llama 3.1: kept = wavelength under 8192 / 4, interpolated = over 8192
        wavelengths = 2 * math.pi / _theta(128, 500000.0)
        kept = int((wavelengths < 2048).sum())
        interpolated = int((wavelengths > 8192).sum())
        blended = 64 - kept - interpolated
        feedback = released.check_llama3_pair_counts((kept, blended, interpolated))
        assert feedback.ok, feedback.message
        assert f"{kept} 个维度对" in feedback.message
        assert f"0..{kept - 1}" in feedback.message
        assert f"{64 - interpolated}..63" in feedback.message
        # lesson 12: the scorer's slip is quoted with both fractions
        message = lab.check_exact_match(lambda p, e: (p == e).double().mean()).message
        assert "0.833" in message and "0.5" in message
        assert "[[1,2,3],[4,5,7]]" in message and "精确匹配" in message
        # the best extension's accuracy at 4L
        results = _lab_results()
        best = _best_extension_by_hand(results)
        feedback = lab.check_best_extension(best)
        assert feedback.ok, feedback.message
        assert f"{_extension_accuracy(results)[best]:.2f}" in feedback.message
        # lesson 13: MLA caches 512 + 64 numbers against 128 * (192 + 128)
        feedback = todays_models.check_mla_cache_size(576)
        assert feedback.ok
        assert "576" in feedback.message and str(128 * (192 + 128)) in feedback.message
        # lesson 14: the text after a 14 x 20 grid goes on at 10 + 20
        feedback = multimodal.check_next_text_position(30)
        assert feedback.ok and "30" in feedback.message
        message = multimodal.check_next_text_position(7).message
        assert message.startswith("不是 7")


def _extension_accuracy(results: dict) -> dict:
    n = str(4 * results["config"]["train_length"])
    return {
        m: np.mean([np.mean(r["passkey"][n]) for r in results["scaling"][m].values()])
        for m in results["config"]["methods"]
    }


def _best_extension_by_hand(results: dict) -> str:
    accuracy = _extension_accuracy(results)
    return max(accuracy, key=accuracy.get)


def test_the_lab_results_message_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(tmp_path / "missing"))
    check = lab.check_best_extension
    with language("zh"):
        message = check("yarn").message
    assert "FileNotFoundError" in message
    assert "python -m rope_lib.lab --out DIR" in message and "读不到" in message
    assert "could not be read" in check("yarn").message
    # results of another layout (the old lab's) are no results to judge by
    (tmp_path / "results.json").write_text(json.dumps({"config": {}, "lm": {}}))
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(tmp_path))
    assert "KeyError" in check("yarn").message


def test_an_extension_may_be_named_by_its_chinese_label():
    from rope_lib.lab.figures import LABELS
    from rope_lib.language import _

    with language("zh"):
        label = _(LABELS["dynamic"])
        assert CJK.search(label), label
        message = lab.check_best_extension(label).message
    assert message.startswith(label)
    # in English the Chinese label is no method's name
    assert "got" in lab.check_best_extension(label).message


# --- lesson 12's checkers on hand-made results: every slip named, in both languages -----

LAB_SCHEMES = ["none", "sinusoidal", "learned", "rope", "alibi"]
LAB_METHODS = ["linear", "ntk", "dynamic", "yarn", "llama3"]


def _made_results(seeds, passkey=None, scaling=None, text4=None, L=64) -> dict:
    """A results.json in the lab's layout. passkey: {scheme: {seed: accuracies at L,
    2L, 4L, 8L}} (0 where not given); scaling: {method: accuracies at 2L, 4L, 8L} for
    every seed; text4: {method: text loss at 4L}."""
    lengths = [L, 2 * L, 4 * L, 8 * L]
    passkey, scaling, text4 = passkey or {}, scaling or {}, text4 or {}
    yardsticks = {"entropy_rate": 0.8, "current_word": 2.8, "unigram": 3.1}
    results = {
        "config": {
            "seeds": list(seeds),
            "train_length": L,
            "lengths": lengths,
            "schemes": LAB_SCHEMES,
            "methods": LAB_METHODS,
        },
        "yardsticks": {
            str(s): {str(n): dict(yardsticks, uniform=3.2) for n in lengths}
            for s in seeds
        },
        "schemes": {},
        "scaling": {},
    }
    for scheme in LAB_SCHEMES:
        results["schemes"][scheme] = {
            str(s): {
                "text": {"loss": {str(n): 1.0 for n in lengths}},
                "passkey": {
                    str(n): [a] * 5
                    for n, a in zip(lengths, passkey.get(scheme, {}).get(s, [0.0] * 4))
                },
            }
            for s in seeds
        }
    for method in LAB_METHODS:
        accuracy = scaling.get(method, [0.0] * 3)
        results["scaling"][method] = {
            str(s): {
                "text": {str(n): text4.get(method, 2.0) for n in lengths[1:]},
                "passkey": {str(n): [a] * 5 for n, a in zip(lengths[1:], accuracy)},
            }
            for s in seeds
        }
    return results


def _judge(check, answer) -> tuple:
    """(ok, English message, Chinese message), the Chinese one checked for English."""
    english = check(answer)
    with language("zh"):
        chinese = check(answer)
    assert english.ok == chinese.ok
    assert CJK.search(chinese.message) and not ENGLISH.search(chinese.message), chinese
    assert not CJK.search(english.message), english
    return english.ok, english.message, chinese.message


def _use(results: dict, tmp_path, monkeypatch) -> None:
    folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(results))
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(folder))


def test_best_extension_checker_names_each_slip(tmp_path, monkeypatch):
    # mean passkey accuracy at 2L, 4L, 8L: YaRN is best at 4L, Llama 3 at 2L and 8L,
    # PI lowest; NTK (and dynamic NTK, the same numbers) the lowest text loss at 4L
    scaling = {
        "linear": [0.3, 0.1, 0.0],
        "ntk": [0.8, 0.5, 0.2],
        "dynamic": [0.8, 0.5, 0.2],
        "yarn": [0.9, 0.8, 0.5],
        "llama3": [0.95, 0.7, 0.6],
    }
    text4 = {"ntk": 1.0, "dynamic": 1.0, "yarn": 1.2}
    _use(_made_results(range(3), scaling=scaling, text4=text4), tmp_path, monkeypatch)
    check = lab.check_best_extension
    for right in ["yarn", "YaRN", " yarn ", "RoPE + YaRN", np.str_("yarn")]:
        ok, message, chinese = _judge(check, right)
        assert ok and "YaRN: mean passkey accuracy 0.80 at 4L = 256" in message
        # every made seed has 0.80 at 4L: the range is that one value
        assert "its seeds from 0.80 to 0.80" in message
        assert "从 0.80 到 0.80" in chinese
    slips = {
        "PI has the LOWEST mean passkey accuracy": "linear",
        "LOWEST mean passkey accuracy at 4L = 256 tokens (0.10)": "PI",
        "Llama 3 is the best at 2L": "llama3",
        "Llama 3 is the best at 2L, but at 4L": "Llama 3",
        "NTK has the lowest text loss at 4L": "ntk",
        "dynamic NTK has the lowest text loss": "dynamic",
        "the RoPE model with no extension": "rope",
        "no extension, the baseline": "plain RoPE",
        "is a position scheme": "alibi",
        "'NoPE' is a position scheme": "NoPE",
        "(the names in config[\"methods\"]), got 'T5 bias'": "T5 bias",
        "give one name": ["yarn"],
        "(a string), got 3": 3,
        "e.g. 'linear'": None,
    }
    for hint, answer in slips.items():
        ok, message, _chinese = _judge(check, answer)
        assert not ok and hint in message, (hint, message)
    # the best at 8L only; and a tie: NTK and dynamic NTK best, both right
    scaling["llama3"] = [0.85, 0.7, 0.6]
    _use(_made_results(range(3), scaling=scaling), tmp_path, monkeypatch)
    assert "Llama 3 is the best at 8L" in _judge(check, "llama3")[1]
    scaling.update(ntk=[0.8, 0.9, 0.2], dynamic=[0.8, 0.9, 0.2])
    _use(_made_results(range(3), scaling=scaling), tmp_path, monkeypatch)
    for name, other in [("ntk", "dynamic NTK"), ("dynamic", "NTK")]:
        ok, message, chinese = _judge(check, name)
        assert ok and f"(tied with {other}: the same numbers)" in message, message
    assert not _judge(check, "yarn")[0]


def test_exact_match_checker_names_the_slip():
    right = lab.check_exact_match(lambda p, e: (p == e).all(dim=1).double().mean())
    assert right.ok
    slips = {
        "fraction of right digits": lambda p, e: (p == e).double().mean(),
        "not .any(dim=1)": lambda p, e: (p == e).any(dim=1).double().mean(),
        "how many keys are right": lambda p, e: (p == e).all(dim=1).sum(),
        "a key is a row, so take .all(dim=1)": lambda p, e: (
            (p == e).all(dim=0).double().mean()
        ),
        "booleans into numbers": lambda p, e: (p == e).all(dim=1).mean(),
        "one number": lambda p, e: (p == e).all(dim=1).double(),
        "returns None": lambda p, e: None,
        "raised KeyError": lambda p, e: {}["x"],
        "the function itself": 0.5,
    }
    for hint, answer in slips.items():
        ok, message, _chinese = _judge(lab.check_exact_match, answer)
        assert not ok and hint in message, (hint, message)
    # every case holds 3-digit keys, as the lab's passkeys
    assert all(len(row) == 3 for (p, e), _ in lab.CASES for row in p + e)


def test_pi_checker_names_the_slip():
    theta = _theta(32, 10000.0)
    assert lab.check_pi_frequencies(theta / 4).ok
    assert lab.check_pi_frequencies((theta / 4).float().tolist()).ok
    i = torch.arange(16, dtype=f64)
    slips = {
        "you multiplied by s": theta * 4,
        "unscaled": theta,
        "you divided by 8": theta / 8,
        "you divided by 2": theta / 2,
        "d = 16, the number of frequencies": 10000.0 ** (-2 * i / 16) / 4,
        "as if d were 64 (the model's width) or the 2 of 2i were missing": (
            10000.0 ** (-i / 32) / 4
        ),
        "reverse order": theta.flip(0) / 4,
        "one frequency per pair": (theta / 4).repeat_interleave(2),
        "a head of 16 dimensions": _theta(16, 10000.0) / 4,
        "NTK's base change": (10000.0 * 4 ** (32 / 30)) ** (-2 * i / 32),
        "YaRN's frequencies": rope_frequencies(
            "yarn", 32, factor=4.0, original_max_position_embeddings=64
        )[0],
        "Llama 3's frequencies": rope_frequencies(
            "llama3",
            32,
            factor=4.0,
            original_max_position_embeddings=64,
            low_freq_factor=1.0,
            high_freq_factor=4.0,
        )[0],
        "wavelengths": 2 * math.pi / (theta / 4),
        "expected theta_i = 10000^(-2i/32) / 4": theta / 4 + 0.01,
        "16 frequencies": None,
    }
    for hint, answer in slips.items():
        ok, message, _chinese = _judge(lab.check_pi_frequencies, answer)
        assert not ok and hint in message, (hint, message)
