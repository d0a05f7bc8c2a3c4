"""The checkers of lessons 0-5 (why_position, absolute, rotation, complex_rope) and the
answer readers behind every checker (answers.py) speak Chinese after set_language("zh"):
every message is translated, keeps its numbers, and set_language("en") gives back the
English word for word.

The numbers the tests look for are computed here from the exercises' formulas (or by
torch), not taken from the checkers.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from rope_lib.exercises import absolute, answers, complex_rope, rotation, why_position
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
    (why_position.check_swap_last_token, answer)
    for answer in (None, True, False, "no", 3)
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
    (absolute.check_previous_token_head, [torch.zeros(16, 16), torch.eye(16)]),
    (rotation.check_rotated_query, [[0.5, -1.0], _rotated((0.5, -1.0), 1.5)]),
    (rotation.check_closed_form_score, [0.0, [1, 2]]),
    (rotation.check_rope_attention, [torch.ones(1, 2, 5, 4)]),
    (rotation.check_shifted_positions, [(14, 10), (10, 14), (5, 1), (10.5, 3)]),
    (rotation.check_relative_angles, [torch.ones(4), torch.ones(8)]),
    (complex_rope.check_complex_rotation, [[4, 3], [1, 1], _rotated((3, 4), 0.5)]),
    (complex_rope.check_slow_pairs, [29, 35, 200]),
    (complex_rope.check_meta_layout_weights, [complex_rope.meta_layout_weights()]),
    (complex_rope.check_bfloat16_angle_error, [9.0, 0.0, 3.0, -9.0]),
]:
    CASES += [(check, answer) for answer in [*ODD, *answers_]]


def _id(case):
    check, answer = case
    return f"{check.__module__.rsplit('.', 1)[1]}.{check.__name__}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
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


def test_the_numbers_survive_the_translation():
    with language("zh"):
        # lesson 1: the wavelengths run from 2*pi to 2*pi * 10000**(62/64)
        message = absolute.check_wavelengths(_wavelengths()).message
        assert f"{2 * math.pi:.4f}" in message
        assert f"{2 * math.pi * 10000 ** (62 / 64):.1f}" in message
        # lesson 5: bfloat16 rounds 5001 to a multiple of 32
        stored = int(torch.tensor(5001.0).to(torch.bfloat16).item())
        error = abs(stored - 5001)
        feedback = complex_rope.check_bfloat16_angle_error(float(error))
        assert feedback.ok and str(stored) in feedback.message
        assert f"{error} 弧度" in feedback.message
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
