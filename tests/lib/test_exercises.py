"""The exercise machinery (rope_lib.exercises.Exercise) and the exercise written in its
declared form to show what a new one costs: lesson 5's check_complex_score, the score of
q = 2 + i at m = 7 and k = 1 - 3i at n = 3 with theta = 0.2 as Re[q_m conj(k_n)].

The numbers are computed here with Python's complex type, not taken from the checker.
"""

from __future__ import annotations

import cmath
import inspect
import math
from fractions import Fraction

import numpy as np
import pytest
import torch

from rope_lib.exercises import (
    Exercise,
    Feedback,
    Mistake,
    NotYet,
    Word,
    compare_tensor,
    either,
    exercise,
)
from rope_lib.exercises import complex_rope as ex
from rope_lib.exercises.answers import as_number, as_tensor
from rope_lib.language import N_, language

Q_M = (2 + 1j) * cmath.exp(1j * 7 * 0.2)
K_N = (1 - 3j) * cmath.exp(1j * 3 * 0.2)
SCORE = (Q_M * K_N.conjugate()).real  # -5.71820


def test_the_score_is_the_dot_product_of_the_rotated_pairs():
    dot = Q_M.real * K_N.real + Q_M.imag * K_N.imag
    assert SCORE == pytest.approx(dot) == pytest.approx(-5.71820, abs=1e-5)


@pytest.mark.parametrize(
    "answer",
    [
        SCORE,
        [SCORE],
        (SCORE,),
        np.float64(SCORE),
        np.float32(SCORE),
        np.array([SCORE]),
        [[SCORE]],
        torch.tensor(SCORE, dtype=torch.float32),
        torch.tensor([SCORE], dtype=torch.float64),
        Fraction(SCORE),
        # the other order of the conjugate has the same real part
        (Q_M.conjugate() * K_N).real,
    ],
)
def test_the_right_score_in_any_form_is_correct(answer):
    feedback = ex.check_complex_score(answer)
    assert feedback.ok, feedback
    assert f"{SCORE:.4f}" in feedback.message


MISTAKES = [
    ((Q_M * K_N).real, "without the conjugate the angles add"),
    ((Q_M * K_N.conjugate()).imag, "that is the imaginary part"),
    (
        ((2 + 1j) * (1 + 3j) * cmath.exp(-0.8j)).real,
        "the positions are swapped",
    ),
    (2 * 1 + 1 * -3, "that is q·k before the rotation"),
    (Q_M * K_N.conjugate(), "that is the complex product itself"),
    (torch.tensor(Q_M * K_N.conjugate()), "that is the complex product itself"),
    (complex(SCORE, 0), "that is the complex product itself"),
    (None, "replace `None` with one real number"),
    (3.0, "not 3.0000: rotate q = 2 + i"),
]


@pytest.mark.parametrize("answer, start", MISTAKES)
def test_each_known_mistake_gets_its_message_in_both_languages(answer, start):
    feedback = ex.check_complex_score(answer)
    assert not feedback.ok and feedback.message.startswith(start), feedback
    with language("zh"):
        chinese = ex.check_complex_score(answer)
    assert not chinese.ok and chinese.message != feedback.message
    assert any("\u4e00" <= c <= "\u9fff" for c in chinese.message), chinese


def test_the_mistakes_are_distinct_numbers():
    values = [v for v, _ in MISTAKES[:4]] + [SCORE]
    assert min(abs(a - b) for i, a in enumerate(values) for b in values[i + 1 :]) > 0.1


@pytest.mark.parametrize(
    "answer",
    [
        "abc",
        {"score": SCORE},
        object(),
        [SCORE, SCORE],
        float("nan"),
        float("inf"),
        -math.inf,
        10**400,
        True,
        np.array([np.nan]),
        torch.tensor(SCORE, device="meta"),
        torch.tensor([SCORE], dtype=torch.complex64, device="meta"),
        [],
        Feedback(True, "right"),
    ],
)
def test_garbage_gets_feedback_and_is_never_correct(answer):
    feedback = ex.check_complex_score(answer)
    assert isinstance(feedback, Feedback) and not feedback.ok
    assert "could not check this answer" not in feedback.message


def test_the_checker_keeps_its_name_signature_and_declaration():
    check = ex.check_complex_score
    assert check.__name__ == "check_complex_score" and check.__module__ == ex.__name__
    assert list(inspect.signature(check).parameters) == ["answer"]
    assert "theta = 0.2" in check.__doc__
    assert isinstance(check.exercise, Exercise)


# ---------------------------------------------------------------- the machinery itself


def _toy(**changes):
    declared = {
        "read": as_number,
        "name": "x",
        "expected": 2.0,
        "placeholder": N_("set x"),
        "mistakes": [
            Mistake(lambda x: x < 0, "negative", first=True),
            Mistake(4.0, "four"),
            Mistake(either(1.0, 3.0), "one or three"),
            Mistake(lambda x: x > 9, "big"),
        ],
        "otherwise": "{value:g} is not {expected:g}",
        "right": "two",
    } | changes

    @exercise(**declared)
    def check_toy(answer):
        """A toy."""

    return check_toy


@pytest.mark.parametrize(
    "answer, ok, message",
    [
        (2, True, "two"),
        (2.00001, True, "two"),
        (None, False, "set x"),
        (-2, False, "negative"),
        (4, False, "four"),
        (3, False, "one or three"),
        (1.0, False, "one or three"),
        (10, False, "big"),
        (5, False, "5 is not 2"),
        ("2", False, "x should be one number, got text, not numbers (drop the quotes)"),
    ],
)
def test_judge_goes_placeholder_read_before_right_mistakes_otherwise(
    answer, ok, message
):
    feedback = _toy()(answer)
    assert (feedback.ok, feedback.message) == (ok, message)


def test_a_first_mistake_is_checked_before_the_right_value():
    check = _toy(mistakes=[Mistake(lambda x: x == 2, "too early", first=True)])
    assert check(2).message == "too early"


def test_a_crash_in_a_declaration_is_raised_under_tests(monkeypatch):
    # a checker's bug must not hide as a learner's feedback: under pytest (and with
    # ROPE_STRICT_CHECKERS=1) guarded raises it
    check = _toy(mistakes=[Mistake(math.log, "boom")])  # log(-5) raises in rope_lib
    with pytest.raises(ValueError, match="math domain error"):
        check(-5)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.delenv("ROPE_STRICT_CHECKERS", raising=False)
    feedback = check(-5)  # a learner sees "could not check", never a traceback
    assert not feedback.ok and "could not check this answer (ValueError)" in (
        feedback.message
    )
    monkeypatch.setenv("ROPE_STRICT_CHECKERS", "1")
    with pytest.raises(ValueError):
        check(-5)


def test_a_crash_in_the_learners_code_is_feedback_under_tests():
    class Odd(float):  # the learner's own object: its error is theirs
        def __float__(self):
            raise ArithmeticError("the learner's bug")

    check = _toy(read=lambda answer, name: float(answer) + 0.0)
    feedback = check(Odd(2.0))
    assert not feedback.ok and "ArithmeticError" in feedback.message
    # the learner's function, run on cases, raises inside the learner's code too
    from rope_lib.exercises import lab

    feedback = lab.check_exact_match(lambda p, e: 1 / 0)
    assert not feedback.ok and "ZeroDivisionError: division by zero" in feedback.message


def test_given_is_computed_once_and_handed_to_expected_mistakes_and_facts():
    calls = []

    def given():
        calls.append(1)
        return {"want": 2.0, "wrong": 4.0}

    @exercise(
        given=given,
        read=as_number,
        expected=lambda g: g["want"],
        mistakes=lambda g: [Mistake(g["wrong"], "{value:g} is {seen:g}")],
        facts=lambda value, expected, g: {"seen": g["wrong"]},
        otherwise="no",
        right="two",
    )
    def check_given(answer):
        """Given."""

    assert check_given(2).message == "two" and calls == [1]
    assert check_given(4).message == "4 is 4" and calls == [1, 1]
    assert check_given(5).message == "no"


def test_cases_judge_a_function_case_by_case():
    @exercise(
        read=lambda answer, name, x: as_number(answer(x), name),
        cases=[((1,), 2.0), ((3,), 6.0)],
        mistakes=lambda x: [Mistake(float(x), "on {x}: that is x itself")],
        facts=lambda got, want, x: {"x": x},
        otherwise="on {x}: {value:g}, not {expected:g}",
        right="twice x",
    )
    def check_double(answer):
        """Double."""

    assert check_double(lambda x: 2 * x).message == "twice x"
    assert check_double(lambda x: x).message == "on 1: that is x itself"
    assert check_double(lambda x: x * x + 1).message == "on 3: 10, not 6"


def test_a_word_name_is_translated_and_a_plain_name_is_not():
    with language("zh"):
        word = _toy(name=Word(N_("the score")))("abc").message
        plain = _toy(name="the score")("abc").message
    assert word.startswith("分数") and plain.startswith("the score")


def test_tensor_fallback_compares_and_lets_a_close_value_through():
    expected = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)

    @exercise(
        read=as_tensor,
        name="t",
        expected=expected,
        mistakes=[Mistake(lambda t: t.shape != (3,), "{got} is not {expected}")],
        right="exact",
        right_when_close="close",
    )
    def check_t(answer):
        """t."""

    assert check_t([1, 2, 3]).message == "exact"
    assert check_t([1, 2, 3.00035]).message == "close"
    assert check_t([1, 2]).message == "(2,) is not (3,)"
    assert check_t([-1, -2, -3]).message == (
        "t has the right size but the opposite sign everywhere"
    )
    assert check_t([2, 4, 6]).message == "t is off by a constant factor of 2"


def test_compare_tensor_raises_when_off_and_returns_nothing_when_close():
    expected = torch.tensor([1.0, 2.0])
    assert compare_tensor([1.0, 2.0], expected, "t") is None
    with pytest.raises(NotYet, match="t should have shape"):
        compare_tensor([1.0], expected, "t")
    with pytest.raises(NotYet, match="differs from the expected values by up to 1"):
        compare_tensor([1.0, 3.0], expected, "t")
