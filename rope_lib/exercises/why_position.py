"""Exercise checkers for lesson 0 (why position)."""

from __future__ import annotations

from ..language import N_, _
from . import Feedback, correct, not_yet
from .answers import guarded, read_choices, read_yes_no

WHERE = {"sinusoidal": "input", "learned": "input", "rope": "qk", "alibi": "scores"}
_PLACES = {
    "input": N_("added to the token embeddings before attention"),
    "qk": N_("a rotation of the queries and keys"),
    "scores": N_("a bias added to the attention scores"),
}


@guarded
def check_swap_last_token(answer) -> Feedback:
    """Does swapping tokens 0 and 1 change the causal, position-free block's output at the last token?"""
    if answer is None:
        return not_yet(
            _("set answer to True (it changes) or False (it stays the same)")
        )
    answer = read_yes_no(answer, "answer")
    if isinstance(answer, Feedback):
        return answer
    if answer:
        return not_yet(
            _(
                "the last token sees every earlier token, and without positions attention "
                "is a weighted sum over a set: swapping two tokens it sees only reorders "
                "the terms of that sum"
            )
        )
    return correct(
        _(
            "the last query attends to the same set of keys and values, just listed in "
            "another order"
        )
    )


@guarded
def check_where_position_goes(answer) -> Feedback:
    """Where does each scheme put position: 'input', 'qk' or 'scores'?"""
    answer = read_choices(answer, "answer", WHERE, _PLACES)
    if isinstance(answer, Feedback):
        return answer
    missing = sorted(set(WHERE) - set(answer))
    if missing:
        return not_yet(_("give a place for {missing} too").format(missing=missing))
    wrong = {k: v for k, v in answer.items() if k in WHERE and v != WHERE[k]}
    if wrong:
        scheme, place = next(iter(wrong.items()))
        return not_yet(
            _("{scheme} is not {place}; {n} of 4 places are off").format(
                scheme=repr(scheme), place=_(_PLACES[place]), n=len(wrong)
            )
        )
    return correct(
        _(
            "add to the input (sinusoidal, learned), rotate q and k (RoPE), bias the "
            "scores (ALiBi)"
        )
    )
