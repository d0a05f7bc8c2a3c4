"""Checkers for the lessons' exercises: each returns a Feedback that says what is right or,
specifically, what is off (a shape, a sign, a swapped layout, a factor), never just "wrong".

One module per topic (absolute.py, rotation.py, alibi.py, ...), so renumbering lessons touches
no module name; the notebooks call e.g.
    from rope_lib.exercises import rotation as ex
    ex.check_rotated_query(my_answer)

Every checker reads its answer with the readers in answers.py (by value: a list, a numpy
array, a tensor of any dtype or device, a numpy scalar), is wrapped in answers.guarded (it never
raises), and never calls a complex, NaN, inf or truncated answer correct.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def same_values(
    a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-6
) -> bool:
    """Same shape and allclose: how checkers match an answer against a value or a known mistake."""
    return a.shape == b.shape and bool(
        torch.allclose(a, b.to(a.dtype), rtol=rtol, atol=atol)
    )


def compare_tensor(
    answer, expected: torch.Tensor, name: str, *, atol: float = 1e-4, rtol: float = 1e-4
):
    """Feedback about the usual ways a tensor answer goes wrong, or None when it is right:
    not a tensor, wrong shape, NaNs, off by a sign, off by a constant factor, or just different
    (with the largest difference and where it is).

    A "not yet" Feedback is falsy, so test the result with `is not None`; never write
    `compare_tensor(...) or correct(...)`, which would call a wrong answer correct."""
    from .answers import read_tensor

    expected = expected.detach().to(torch.float64)
    answer = read_tensor(answer, name, finite=bool(torch.isfinite(expected).all()))
    if isinstance(answer, Feedback):
        return answer
    if tuple(answer.shape) != tuple(expected.shape):
        return not_yet(
            _("{name} should have shape {expected}, got {got}").format(
                name=name, expected=tuple(expected.shape), got=tuple(answer.shape)
            )
        )
    if torch.allclose(answer, expected, atol=atol, rtol=rtol):
        return None
    if torch.allclose(answer, -expected, atol=atol, rtol=rtol):
        return not_yet(
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
            return not_yet(
                _("{name} is off by a constant factor of {ratio:.4g}").format(
                    name=name, ratio=ratio
                )
            )
    diff = (answer - expected).abs()
    where = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    return not_yet(
        _(
            "{name} differs from the expected values by up to {diff:.4g} "
            "(at index {where})"
        ).format(name=name, diff=float(diff.max()), where=where)
    )
