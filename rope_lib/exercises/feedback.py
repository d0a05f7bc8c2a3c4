"""What a checker says: a Feedback, and NotYet, the exception that carries a "not yet"
from wherever it is found (a reader, a known mistake) to the checker's answer.

    Feedback(ok, message)   the verdict; shown as one line starting with a mark
    NotYet(message)         raised for an answer that is not right yet
    Word(N_("slopes"))      a name shown translated (a plain str is shown as it is)
    either(a, b)            mistake values that share one message
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """Mistake values with one message: `Mistake(either(a, b), message)` matches a or b."""

    def __new__(cls, *values):
        return super().__new__(cls, values)
