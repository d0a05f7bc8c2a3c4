"""Exercise checkers for lesson 0 (why position)."""

from __future__ import annotations

import functools

import torch

from ..language import N_, _
from . import Mistake, Word, either, exercise
from .answers import as_choices, as_indices

WHERE = {"sinusoidal": "input", "learned": "input", "rope": "qk", "alibi": "scores"}
_PLACES = {
    "input": N_("added to the token embeddings before attention"),
    "qk": N_("a rotation of the queries and keys"),
    "scores": N_("a bias added to the attention scores"),
}


SWAP = (2, 3)
"""Exercise 1: tokens 2 and 3 of a 6-token input are swapped in the causal block."""
N_TOKENS = 6


@functools.cache
def changed_outputs(seed: int = 0) -> frozenset:
    """The positions whose output moves when tokens 2 and 3 of 6 are swapped, measured on
    a causal, position-free block with random weights (its own generator: the caller's
    random numbers are left alone)."""
    from ..attention import PositionalSelfAttention

    with torch.random.fork_rng():
        torch.manual_seed(seed)
        block = PositionalSelfAttention(16, 4, position="none", causal=True)
        x = torch.randn(1, N_TOKENS, 16)
    order = list(range(N_TOKENS))
    order[SWAP[0]], order[SWAP[1]] = order[SWAP[1]], order[SWAP[0]]
    with torch.no_grad():
        out, out_swapped = block(x)[0], block(x[:, order])[0]
    moved = (out - out_swapped).abs().amax(dim=-1) > 1e-5
    return frozenset(int(i) for i in moved.nonzero().flatten())


@exercise(
    read=as_indices,
    name=Word(N_("positions")),
    options={"size": N_TOKENS},
    expected=lambda: changed_outputs(),
    placeholder=N_("replace `None` with the positions whose output changes (a list)"),
    mistakes=[
        Mistake(
            frozenset(range(N_TOKENS)),
            N_(
                "not all of them: positions 0 and 1 see only tokens 0 and 1, which the "
                "swap does not touch, so their queries, keys and values are the same"
            ),
        ),
        Mistake(
            frozenset(range(2, N_TOKENS)),
            N_(
                "positions 4 and 5 see tokens 0 to 4 and 0 to 5: both swapped tokens "
                "are in that set, so their query sees the same keys and values, only "
                "listed in another order, and the weighted sum is the same"
            ),
        ),
        Mistake(
            frozenset(),
            N_(
                "some do change: position 2 now holds the old token 3, so both its "
                "query and the set it sees (tokens 0, 1 and the old 3) are new"
            ),
        ),
        Mistake(
            frozenset({N_TOKENS - 1}),
            N_(
                "the last position sees all six tokens, the swapped two included: the "
                "same set, listed in another order, so its output stays. Look at the "
                "positions that see one of the two tokens but not both, or that hold one"
            ),
        ),
        Mistake(
            either(frozenset({2}), frozenset({3})),
            N_(
                "only one of the two: position 3 sees the same set of tokens as before "
                "(0 to 3), but its own query is now the old token 2, so its output "
                "differs; position 2 sees a new set"
            ),
        ),
    ],
    otherwise=N_(
        "not these positions. For each position m, which tokens does its query see "
        "(0 to m), and is that set, or the query itself, changed by the swap?"
    ),
    right=N_(
        "positions 2 and 3 hold a new token, so their queries changed (and "
        "position 2 sees a new set); positions 0 and 1 never see the swapped tokens; 4 "
        "and 5 see both, the same set in another order"
    ),
)
def check_swapped_outputs(answer):
    """In the causal, position-free block, tokens 2 and 3 of 6 are swapped: which
    positions' outputs change?"""


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
