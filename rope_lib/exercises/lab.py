"""Checkers for the extrapolation lab's exercises.

    from rope_lib.exercises import lab as ex
    ex.check_exact_match(my_function)        # a passkey scorer: exact-match accuracy
    ex.check_pi_frequencies(inv_freq)        # PI's frequencies for the lab model at 4L
    ex.check_best_scheme(name, results)      # the scheme with the lowest loss at 8L

The expected values are computed here from first principles (the definition of exact match,
theta_i = b^(-2i/d) / s for Position Interpolation) or read from the learner's own results.
"""

from __future__ import annotations

import math

import torch

from . import correct, not_yet, same_values


def _as_float64(answer, name: str):
    try:
        return torch.as_tensor(answer).detach().to(torch.float64), None
    except (TypeError, ValueError, RuntimeError):
        return None, not_yet(
            f"{name} should be a tensor (or a list of numbers), "
            f"got {type(answer).__name__}"
        )


CASES = [  # (predicted, expected, exact-match accuracy)
    ([[1, 2], [3, 4]], [[1, 2], [3, 4]], 1.0),
    ([[1, 2], [3, 5]], [[1, 2], [3, 4]], 0.5),
    ([[1, 9], [9, 4]], [[1, 2], [3, 4]], 0.0),
    ([[2, 1], [4, 3], [5, 6], [7, 8]], [[1, 2], [3, 4], [5, 6], [7, 8]], 0.5),
]


def check_exact_match(function):
    """function(predicted [n, k], expected [n, k]) -> the fraction of rows with every digit right."""
    if function is None:
        return not_yet(
            "replace `None` with your function exact_match(predicted, expected)"
        )
    for predicted, expected, want in CASES:
        try:
            got = float(function(torch.tensor(predicted), torch.tensor(expected)))
        except Exception as error:  # noqa: BLE001 - any failure is feedback for the learner
            return not_yet(f"your function raised {type(error).__name__}: {error}")
        if math.isclose(got, want, abs_tol=1e-9):
            continue
        digits = float(
            (torch.tensor(predicted) == torch.tensor(expected)).double().mean()
        )
        if math.isclose(got, digits, abs_tol=1e-9):
            return not_yet(
                f"on {predicted} vs {expected} you give {got:.2f}, the fraction of right digits; "
                f"exact match counts a key only when all its digits are right: {want:.2f}"
            )
        return not_yet(
            f"on {predicted} vs {expected} you give {got:.3g}, expected {want:.3g}"
        )
    return correct(
        "a key counts only when every digit is right, as in the papers' passkey tables"
    )


HEAD_DIM, BASE, FACTOR = 16, 10000.0, 4


def check_pi_frequencies(answer):
    """The lab model's 8 RoPE frequencies (head_dim 16, base 10000) under Position
    Interpolation from L = 64 to 4L = 256."""
    if answer is None:
        return not_yet("replace `None` with a tensor of 8 frequencies")
    a, problem = _as_float64(answer, "inv_freq")
    if problem is not None:
        return problem
    i = torch.arange(HEAD_DIM // 2, dtype=torch.float64)
    theta = BASE ** (-2 * i / HEAD_DIM)
    if a.shape != theta.shape:
        return not_yet(
            f"inv_freq should have shape {tuple(theta.shape)}, got {tuple(a.shape)}"
        )
    if same_values(a, theta / FACTOR):
        return correct(
            "every theta_i divided by s = 4: position m turns like m/4 did in training"
        )
    if same_values(a, theta * FACTOR):
        return not_yet(
            "you multiplied by s; PI slows every pair down: divide theta_i by s = 4"
        )
    if same_values(a, theta):
        return not_yet(
            "these are the unscaled frequencies; PI divides each by s = 256 / 64"
        )
    return not_yet("expected theta_i = 10000^(-2i/16) / 4 for i = 0..7")


def check_best_scheme(answer, results: dict):
    """The scheme (a name of results["lm"]) with the lowest mean loss at the longest window."""
    longest = str(max(results["config"]["eval_lengths"]))
    means = {s: v["summary"][longest]["mean"] for s, v in results["lm"].items()}
    best = min(means, key=means.get)
    if answer not in means:
        return not_yet(f"answer with one of {sorted(means)}, got {answer!r}")
    if answer == best:
        return correct(f"{best}: mean loss {means[best]:.3f} at {longest} tokens")
    return not_yet(
        f"{answer} has mean loss {means[answer]:.3f} at {longest} tokens; one scheme does "
        f"better: compare results['lm'][name]['summary']['{longest}']['mean']"
    )
