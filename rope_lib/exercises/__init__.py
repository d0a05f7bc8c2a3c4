"""Checkers for the lessons' exercises: each returns a Feedback that says what is right or,
specifically, what is off (a shape, a sign, a swapped layout, a factor), never just "wrong".

One module per topic (absolute.py, rotation.py, alibi.py, ...), so renumbering lessons touches
no module name; the notebooks call e.g.
    from rope_lib.exercises import rotation as ex
    ex.check_rotated_query(my_answer)

An exercise is declared as data, and one machinery (Exercise.judge) runs it:

    @exercise(
        read=as_tensor,                  # a reader of answers.py: any list, array, tensor...
        name=Word(N_("slopes")),         # what messages call the answer (a Word: translated)
        expected=SLOPES,                 # the value, or a function computing it
        placeholder=N_("replace `None` with a tensor of 8 slopes, head 1 first"),
        mistakes={                       # in order, message: a value, either(...) or a test
            N_("slopes should have shape {expected}, got {got}"): lambda a: a.shape != (8,),
            N_("the slopes are positive numbers; ..."): -SLOPES,
        },
        right=N_("1/2, 1/4, ..., 1/256: ..."),
    )
    def check_power_of_two_slopes(answer):
        '''The slopes of an 8-head ALiBi model, head 1 first.'''

Inside, "not yet" is an exception, NotYet: a reader raises it for an answer it cannot read,
judge for a known mistake; the checker (answers.guarded) turns it into the Feedback it returns,
so a checker never raises. Messages are msgids marked with N_, translated when shown and
formatted with the exercise's facts; every reader judges by value and never lets a complex,
NaN, inf or truncated answer through.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..language import _


@dataclass(frozen=True)
class Feedback:
    """The verdict on one answer. Shown in a notebook as one line starting with a mark."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return (_("Correct: ") if self.ok else _("Not yet: ")) + self.message


def correct(message: str) -> Feedback:
    return Feedback(True, message)


def not_yet(message: str) -> Feedback:
    return Feedback(False, message)


class NotYet(Exception):
    """Raised inside a checker when the answer is not right yet; str(error) says why."""


class Word(str):
    """A name to show translated (`Word(N_("slopes"))`); a plain str is shown as it is."""


class either(tuple):  # noqa: N801 - reads as a word in a mistake table
    """Mistake values with one message: `(either(a, b), message)` matches a or b."""

    def __new__(cls, *values):
        return super().__new__(cls, values)


def same_values(
    a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-6
) -> bool:
    """Same shape and allclose: how checkers match an answer against a value or a known mistake."""
    return a.shape == b.shape and bool(
        torch.allclose(a, b.to(a.dtype), rtol=rtol, atol=atol)
    )


def close(rtol: float = 1e-5, atol: float = 1e-8) -> Callable[[Any, Any], bool]:
    """same_values with other tolerances (torch.allclose's by default)."""
    return functools.partial(same_values, rtol=rtol, atol=atol)


def near(rtol: float = 1e-4, atol: float = 0.0) -> Callable[[float, float], bool]:
    """How two numbers match: |a - b| <= atol + rtol |b|."""
    return lambda a, b: abs(a - b) <= atol + rtol * abs(b)


def compare_tensor(
    answer, expected: torch.Tensor, name: str, *, atol: float = 1e-4, rtol: float = 1e-4
) -> None:
    """Return when answer is close to expected; else raise NotYet naming the usual way a
    tensor goes wrong: not a tensor, wrong shape, NaNs, off by a sign, off by a constant
    factor, or just different (with the largest difference and where it is)."""
    from .answers import as_tensor

    expected = expected.detach().to(torch.float64)
    answer = as_tensor(answer, name, finite=bool(torch.isfinite(expected).all()))
    if tuple(answer.shape) != tuple(expected.shape):
        raise NotYet(
            _("{name} should have shape {expected}, got {got}").format(
                name=name, expected=tuple(expected.shape), got=tuple(answer.shape)
            )
        )
    if torch.allclose(answer, expected, atol=atol, rtol=rtol):
        return
    if torch.allclose(answer, -expected, atol=atol, rtol=rtol):
        raise NotYet(
            _("{name} has the right size but the opposite sign everywhere").format(
                name=name
            )
        )
    flat = expected.flatten()
    pivot = int(flat.abs().argmax())
    if flat[pivot] != 0:
        ratio = float(answer.flatten()[pivot] / flat[pivot])
        if abs(ratio - 1) > 1e-3 and torch.allclose(
            answer, ratio * expected, atol=atol, rtol=rtol
        ):
            raise NotYet(
                _("{name} is off by a constant factor of {ratio:.4g}").format(
                    name=name, ratio=ratio
                )
            )
    diff = (answer - expected).abs()
    where = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    raise NotYet(
        _(
            "{name} differs from the expected values by up to {diff:.4g} "
            "(at index {where})"
        ).format(name=name, diff=float(diff.max()), where=where)
    )


# A message: an msgid (marked with N_), or a function of the value returning the text.
Message = str | Callable[[Any], str]


@dataclass(frozen=True)
class Exercise:
    """One exercise as data. judge(answer) returns the Feedback of a right answer and
    raises NotYet otherwise, in this order:

    1. None gets `placeholder` (if given);
    2. `read(answer, name, **options)` gives the value, or raises for what it cannot read;
    3. the first of `before` that matches gets its message;
    4. a value `same` as `expected` gets `right`;
    5. the first of `mistakes` that matches gets its message;
    6. `otherwise`, if given, is the message; else `compare` (compare_tensor with
       `tolerance`) raises, or lets a close value through with `right_when_close`.

    before and mistakes are tables {message: a value (compared with `like`, by default
    `same`), an either(...) of values, or a test of the value}; mistakes may be a
    function building its table when first needed. A message is an msgid, translated and
    formatted with the fields `value`, `expected` (for tensors: its shape, and `got` and
    `shape` the answer's), and `facts` (a dict, or a function of value and expected); or
    a function of the value that returns the text."""

    read: Callable[..., Any]
    expected: Any
    right: Message
    name: str = "answer"
    placeholder: Message | None = None
    mistakes: Mapping[Message, Any] | Callable[[], Mapping[Message, Any]] = field(
        default_factory=dict
    )
    before: Mapping[Message, Any] = field(default_factory=dict)
    same: Callable[[Any, Any], bool] | None = None
    like: Callable[[Any, Any], bool] | None = None
    otherwise: Message | None = None
    compare: Callable[..., None] = compare_tensor
    tolerance: Mapping[str, float] = field(default_factory=dict)
    right_when_close: Message | None = None
    facts: Mapping | Callable[[Any, Any], Mapping] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    def judge(self, answer) -> Feedback:
        if answer is None and self.placeholder:
            raise NotYet(_say(self.placeholder, None, {}))
        name = _(self.name) if isinstance(self.name, Word) else self.name
        value = self.read(answer, name, **self.options)
        expected = self.expected() if callable(self.expected) else self.expected
        same = self.same or _same_by_type(expected)
        like = self.like or same
        say = functools.partial(_say, value=value, fields=self._fields(value, expected))
        self._mistake(self.before, value, like, say)
        if same(value, expected):
            return correct(say(self.right))
        mistakes = self.mistakes() if callable(self.mistakes) else self.mistakes
        self._mistake(mistakes, value, like, say)
        if self.otherwise is not None:
            raise NotYet(say(self.otherwise))
        self.compare(value, expected, name, **self.tolerance)
        return correct(say(self.right_when_close or self.right))

    @staticmethod
    def _mistake(mistakes, value, like, say) -> None:
        for message, match in mistakes.items():
            if _matches(match, value, like):
                raise NotYet(say(message))

    def _fields(self, value, expected) -> dict:
        fields = {"value": value, "expected": expected}
        if isinstance(value, torch.Tensor):
            fields["got"] = fields["shape"] = tuple(value.shape)
        if isinstance(expected, torch.Tensor):
            fields["expected"] = tuple(expected.shape)
        facts = self.facts(value, expected) if callable(self.facts) else self.facts
        return fields | dict(facts)


def _say(message: Message, value, fields: dict) -> str:
    return message(value) if callable(message) else _(message).format(**fields)


def _matches(match, value, like) -> bool:
    if isinstance(match, either):
        return any(like(value, m) for m in match)
    return bool(match(value)) if callable(match) else like(value, match)


def _same_by_type(expected) -> Callable[[Any, Any], bool]:
    if isinstance(expected, torch.Tensor):
        return same_values
    if isinstance(expected, float):
        return near()
    return lambda a, b: a == b


def exercise(**declaration):
    """Declare an exercise (the fields of Exercise) on a function whose name, signature and
    docstring are the checker's: it becomes that checker, returning a Feedback, never
    raising. The declaration stays readable as check.exercise."""
    from .answers import guarded  # answers imports Feedback and NotYet from here

    declared = Exercise(**declaration)

    def checker(function):
        @functools.wraps(function)
        def check(answer):
            return declared.judge(answer)

        check.exercise = declared
        return guarded(check)

    return checker
