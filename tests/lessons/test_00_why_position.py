"""Lesson 0's exercise checkers: the worked solutions pass, the likely mistakes get specific feedback."""

import torch

import rope_lib
from rope_lib.exercises import why_position as ex


def test_exercise_1_solution_is_what_the_block_does():
    torch.manual_seed(3)
    block = rope_lib.PositionalSelfAttention(16, 4, "none", causal=True)
    x = torch.randn(1, 6, 16)
    changes = not torch.allclose(
        block(x)[0, -1], block(x[:, [1, 0, 2, 3, 4, 5]])[0, -1], atol=1e-6
    )
    assert ex.check_swap_last_token(changes).ok and changes is False
    assert "order" in ex.check_swap_last_token(True).message
    assert (
        not ex.check_swap_last_token(None)
        and "True" in ex.check_swap_last_token(None).message
    )
    assert "True or False" in ex.check_swap_last_token("no").message


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

    for no in (False, np.False_, torch.tensor(False), np.array(False)):
        assert ex.check_swap_last_token(no).ok, no
    for wrong in (
        0,
        "False",
        [False],
        torch.tensor([False, False]),
        torch.tensor(False, device="meta"),
    ):
        assert not ex.check_swap_last_token(wrong).ok, wrong
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
