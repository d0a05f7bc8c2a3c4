"""Lesson 0's exercise checkers: the worked solutions pass, the likely mistakes get specific feedback."""

import torch

import rope_lib
from rope_lib.exercises import why_position as ex


def test_exercise_1_solution_is_what_the_block_does():
    # the lesson's own block: swapping tokens 2 and 3 of 6 moves outputs 2 and 3 only,
    # with a margin: the moved outputs differ by far more than round-off, the others not
    torch.manual_seed(3)
    block = rope_lib.PositionalSelfAttention(16, 4, "none", causal=True)
    x = torch.randn(1, 6, 16)
    with torch.no_grad():
        moved = (block(x)[0] - block(x[:, [0, 1, 3, 2, 4, 5]])[0]).abs().amax(dim=-1)
    assert moved[[0, 1, 4, 5]].max() < 1e-5 < 1e-2 < moved[[2, 3]].min()
    changed = [m for m in range(6) if moved[m] > 1e-5]
    assert changed == [2, 3] and ex.changed_outputs() == frozenset(changed)
    assert ex.check_swapped_outputs(changed).ok


def test_exercise_1_slips_get_their_reason():
    said = {
        "all": ex.check_swapped_outputs(list(range(6))),
        "from 2 on": ex.check_swapped_outputs([2, 3, 4, 5]),
        "none": ex.check_swapped_outputs([]),
        "last": ex.check_swapped_outputs([5]),
        "one": ex.check_swapped_outputs([3]),
        "other": ex.check_swapped_outputs([1, 2, 3]),
    }
    assert not any(f.ok for f in said.values())
    assert "positions 0 and 1 see only tokens 0 and 1" in said["all"].message
    assert "only listed in another order" in said["from 2 on"].message
    assert "position 2 now holds the old token 3" in said["none"].message
    assert "the same set" in said["last"].message
    assert "its own query is now the old token 2" in said["one"].message
    assert "which tokens does its query see" in said["other"].message
    assert "positions whose output" in ex.check_swapped_outputs(None).message
    assert "between 0 and 5" in ex.check_swapped_outputs([6]).message


def test_exercise_2_feedback_names_the_wrong_scheme():
    solution = {
        "sinusoidal": "input",
        "learned": "input",
        "rope": "qk",
        "alibi": "scores",
    }
    assert ex.check_where_position_goes(solution).ok
    feedback = ex.check_where_position_goes({**solution, "rope": "input"})
    assert (
        not feedback
        and "'rope' is not added to the token embeddings" in feedback.message
    )
    assert (
        "alibi"
        in ex.check_where_position_goes(
            {"sinusoidal": "input", "learned": "input", "rope": "qk"}
        ).message
    )
    assert (
        "use one of"
        in ex.check_where_position_goes({**solution, "alibi": "values"}).message
    )
    assert repr(ex.check_where_position_goes(solution)).startswith("Correct: ")


def test_answers_are_read_by_value_not_type():
    import numpy as np

    for right in ([3, 2], {2, 3}, (2, 3), np.array([2, 3]), torch.tensor([2.0, 3.0])):
        assert ex.check_swapped_outputs(right).ok, right
    mask = torch.tensor([False, False, True, True, False, False])
    assert ex.check_swapped_outputs(mask).ok
    for wrong in ("2, 3", [2.5, 3], [[2, 3]], torch.tensor([True, True])):
        assert not ex.check_swapped_outputs(wrong).ok, wrong
    solution = {
        "sinusoidal": "input",
        "learned": "input",
        "rope": "qk",
        "alibi": "scores",
    }
    assert ex.check_where_position_goes(
        {"Sinusoidal": " Input", "learned": "input", "RoPE": "QK", "alibi": "scores"}
    ).ok
    assert ex.check_where_position_goes(
        {np.str_(k): np.str_(v) for k, v in solution.items()}
    ).ok
    feedback = ex.check_where_position_goes(
        {**solution, "rope": ["qk"]}
    )  # a list inside the dict
    assert not feedback.ok and "one place" in feedback.message
    assert not ex.check_where_position_goes(list(solution.items())).ok
