"""Checkers for the lessons' exercises: each returns a Feedback that says what is right or,
specifically, what is off (a shape, a sign, a swapped layout, a factor), never just "wrong".

One module per topic (absolute.py, rotation.py, alibi.py, ...), so renumbering lessons touches
no module name; the notebooks call e.g.
    from rope_lib.exercises import rotation as ex
    ex.check_rotated_query(my_answer)

The machinery, in three files that import only downwards:
    feedback.py   Feedback, NotYet (the "not yet" raised inside a checker), Word, either
    answers.py    the readers (as_tensor, as_count, as_choice, ...) and guarded
    exercise.py   Exercise, Mistake and the @exercise declaration (see its docstring),
                  compare_tensor and the comparisons same_values, close, near

Inside, "not yet" is an exception, NotYet: a reader raises it for an answer it cannot read,
judge for a known mistake; the checker (answers.guarded) turns it into the Feedback it
returns. Messages are msgids marked with N_, translated when shown and formatted with the
exercise's facts; every reader judges by value and never lets a complex, NaN, inf or
truncated answer through.
"""

from .exercise import (
    Exercise,
    Mistake,
    close,
    compare_tensor,
    exercise,
    near,
    same_values,
)
from .feedback import Feedback, NotYet, Word, correct, either, not_yet

__all__ = [
    "Exercise",
    "Feedback",
    "Mistake",
    "NotYet",
    "Word",
    "close",
    "compare_tensor",
    "correct",
    "either",
    "exercise",
    "near",
    "not_yet",
    "same_values",
]
