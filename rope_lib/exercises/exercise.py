"""An exercise declared as data, and the one machinery (Exercise.judge) that runs it.

    @exercise(
        read=as_tensor,                  # a reader of answers.py: any list, array, tensor...
        name=Word(N_("slopes")),         # what messages call the answer (a Word: translated)
        expected=SLOPES,                 # the value, or a function computing it
        placeholder=N_("replace `None` with a tensor of 8 slopes, head 1 first"),
        mistakes=[                       # in order: a value, either(...) or a test; a message
            Mistake(lambda a: a.shape != (8,), N_("slopes should have shape ...")),
            Mistake(-SLOPES, N_("the slopes are positive numbers; ...")),
        ],
        right=N_("1/2, 1/4, ..., 1/256: ..."),
    )
    def check_power_of_two_slopes(answer):
        '''The slopes of an 8-head ALiBi model, head 1 first.'''

An exercise that needs the lesson's data (committed results, a model file) declares
`given`, a function computed once per check and handed to `expected`, `mistakes` and
`facts`, so that its reader reads only the answer. An exercise whose answer is a function
declares `cases`, [(args, want), ...]: the reader runs the answer on each case's args,
and each case is judged like an answer whose given is its args and whose expected value
is want, the first wrong case giving the verdict (learntools' FunctionProblem).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..language import _
from .answers import as_tensor, guarded
from .feedback import Feedback, NotYet, Word, correct, either


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


# A message: an msgid (marked with N_), formatted with the fields; or a function of the
# fields (a dict: "value", "expected" and the facts) returning the text.
Message = str | Callable[[dict], str]


@dataclass(frozen=True)
class Mistake:
    """A known mistake: `match` is a value (compared as the right value is, with `same`),
    an either(...) of values, or a test of the value; `message` what it gets. With
    first=True it is checked before the right value (a shape, a form to rule out first)."""

    match: Any
    message: Message
    first: bool = False


@dataclass(frozen=True)
class Exercise:
    """One exercise as data. judge(answer) returns the Feedback of a right answer and
    raises NotYet otherwise, in this order:

    1. None gets `placeholder` (if given);
    2. `given()`, if declared, is computed (the lesson's data);
    3. `read(answer, name, **options)` gives the value, or raises for what it cannot read
       (with `cases`: `read(answer, name, *args, **options)`, case by case);
    4. the first of the `first` mistakes that matches gets its message;
    5. a value `same` as `expected` gets `right`;
    6. the first of the other mistakes that matches gets its message;
    7. `otherwise`, if given, is the message; else `compare` (compare_tensor) raises, or
       lets a close value through with `right_when_close`.

    `expected`, `mistakes` (a list of Mistake) and `facts` may be functions, called with
    the given (or a case's args) when declared: expected(*given), mistakes(*given),
    facts(value, expected, *given). A message is formatted with the fields `value`,
    `expected` (for tensors: its shape, and `got` and `shape` the answer's) and `facts`."""

    read: Callable[..., Any]
    right: Message
    expected: Any = None
    name: str = "answer"
    placeholder: Message | None = None
    mistakes: Sequence[Mistake] | Callable[..., Sequence[Mistake]] = ()
    same: Callable[[Any, Any], bool] | None = None
    otherwise: Message | None = None
    compare: Callable[..., None] = compare_tensor
    right_when_close: Message | None = None
    facts: Mapping | Callable[..., Mapping] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    given: Callable[[], Any] | None = None
    cases: Sequence[tuple[tuple, Any]] = ()

    def judge(self, answer) -> Feedback:
        if answer is None and self.placeholder:
            raise NotYet(_say(self.placeholder, {"value": None}))
        name = _(self.name) if isinstance(self.name, Word) else self.name
        given = (self.given(),) if self.given is not None else ()
        if not self.cases:
            value = self.read(answer, name, **self.options)
            expected = self.expected
            return self._verdict(value, _call(expected, given), given, name)
        for args, want in self.cases:
            value = self.read(answer, name, *args, **self.options)
            feedback = self._verdict(value, want, tuple(args), name)
        return feedback

    def _verdict(self, value, expected, given: tuple, name: str) -> Feedback:
        same = self.same or _same_by_type(expected)
        mistakes = _call(self.mistakes, given)
        say = functools.partial(_say, fields=self._fields(value, expected, given))
        _first_match([m for m in mistakes if m.first], value, same, say)
        if same(value, expected):
            return correct(say(self.right))
        _first_match([m for m in mistakes if not m.first], value, same, say)
        if self.otherwise is not None:
            raise NotYet(say(self.otherwise))
        self.compare(value, expected, name)
        return correct(say(self.right_when_close or self.right))

    def _fields(self, value, expected, given: tuple) -> dict:
        fields = {"value": value, "expected": expected}
        if isinstance(value, torch.Tensor):
            fields["got"] = fields["shape"] = tuple(value.shape)
        if isinstance(expected, torch.Tensor):
            fields["expected"] = tuple(expected.shape)
        facts = self.facts
        if callable(facts):
            facts = facts(value, expected, *given)
        return fields | dict(facts)


def _call(declared, given: tuple):
    return declared(*given) if callable(declared) else declared


def _say(message: Message, fields: dict) -> str:
    return message(fields) if callable(message) else _(message).format(**fields)


def _first_match(mistakes, value, same, say) -> None:
    for mistake in mistakes:
        match = mistake.match
        if isinstance(match, either):
            hit = any(same(value, m) for m in match)
        else:
            hit = bool(match(value)) if callable(match) else same(value, match)
        if hit:
            raise NotYet(say(mistake.message))


def _same_by_type(expected) -> Callable[[Any, Any], bool]:
    if isinstance(expected, torch.Tensor):
        return same_values
    if isinstance(expected, float):
        return near()
    return lambda a, b: a == b


def exercise(**declaration):
    """Declare an exercise (the fields of Exercise) on a function whose name, signature and
    docstring are the checker's: it becomes that checker, returning a Feedback (see
    answers.guarded). The declaration stays readable as check.exercise."""
    declared = Exercise(**declaration)

    def checker(function):
        @functools.wraps(function)
        def check(answer):
            return declared.judge(answer)

        check.exercise = declared
        return guarded(check)

    return checker
