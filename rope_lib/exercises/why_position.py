"""Exercise checkers for lesson 0 (why position)."""

from __future__ import annotations

from ..language import N_, _
from . import Mistake, exercise
from .answers import as_choices, as_yes_no

WHERE = {"sinusoidal": "input", "learned": "input", "rope": "qk", "alibi": "scores"}
_PLACES = {
    "input": N_("added to the token embeddings before attention"),
    "qk": N_("a rotation of the queries and keys"),
    "scores": N_("a bias added to the attention scores"),
}


@exercise(
    read=as_yes_no,
    expected=False,
    placeholder=N_("set answer to True (it changes) or False (it stays the same)"),
    mistakes=[
        Mistake(
            True,
            N_(
                "the last token sees every earlier token, and without positions "
                "attention is a weighted sum over a set: swapping two tokens it sees "
                "only reorders the terms of that sum"
            ),
        ),
    ],
    right=N_(
        "the last query attends to the same set of keys and values, just listed in "
        "another order"
    ),
)
def check_swap_last_token(answer):
    """Does swapping tokens 0 and 1 change the causal, position-free block's output at the
    last token?"""


def _wrong(places: dict) -> dict:
    return {k: v for k, v in places.items() if v != WHERE[k]}


def _one_wrong(fields: dict) -> str:
    wrong = _wrong(fields["value"])
    scheme, place = next(iter(wrong.items()))
    return _("{scheme} is not {place}; {n} of 4 places are off").format(
        scheme=repr(scheme), place=_(_PLACES[place]), n=len(wrong)
    )


@exercise(
    read=lambda answer, name: as_choices(answer, name, WHERE, _PLACES),
    expected=WHERE,
    mistakes=[
        Mistake(
            lambda places: set(WHERE) - set(places),
            lambda f: _("give a place for {missing} too").format(
                missing=sorted(set(WHERE) - set(f["value"]))
            ),
        ),
        Mistake(_wrong, _one_wrong),
    ],
    right=N_(
        "add to the input (sinusoidal, learned), rotate q and k (RoPE), bias the scores "
        "(ALiBi)"
    ),
)
def check_where_position_goes(answer):
    """Where does each scheme put position: 'input', 'qk' or 'scores'?"""
