"""Reading results.json (experiments.py's layout): per-seed numbers, k of n seeds, means.

Retrieval is bimodal across seeds (a model learns to look back, or it does not), so it is
reported as "k of n seeds above LEARNED" with the accuracy among those seeds, and per seed;
never as a mean alone.
"""

from __future__ import annotations

import numpy as np

LEARNED = 0.9
"""A seed "learned" retrieval at a length when its exact-match accuracy there is above this."""


def seeds(results: dict) -> list[str]:
    return [str(s) for s in results["config"]["seeds"]]


def passkey(
    results: dict, scheme: str = "rope", n=None, method=None, budget=None
) -> dict:
    """{seed: exact-match accuracy at length n, averaged over the depths}: of a scheme's model
    (method None), of the RoPE model extended zero-shot by `method`, or, with a budget, of
    the RoPE model fine-tuned at 4L by `method` for `budget` steps."""
    n = str(n or results["config"]["train_length"])
    out = {}
    for s in seeds(results):
        if budget is not None:
            grid = results["finetune"][method][s][str(budget)]["passkey"]
        elif method is not None and method != "default":
            grid = results["scaling"][method][s]["passkey"]
        else:
            grid = results["schemes"][scheme][s]["passkey"]
        out[s] = float(np.mean(grid[n]))
    return out


def text_loss(
    results: dict, scheme: str = "rope", n=None, method=None, budget=None
) -> dict:
    """{seed: mean text loss in windows of n tokens}, chosen as in passkey(); a fine-tune's
    text loss is measured at 4L only."""
    n = str(n or results["config"]["train_length"])
    out = {}
    for s in seeds(results):
        if budget is not None:
            out[s] = results["finetune"][method][s][str(budget)]["text"]
        elif method is not None and method != "default":
            out[s] = results["scaling"][method][s]["text"][n]
        else:
            out[s] = results["schemes"][scheme][s]["text"]["loss"][n]
    return out


def copy_loss(
    results: dict, distance, scheme: str = "rope", n=None, method=None
) -> dict:
    """{seed: loss on a copy's second half, `distance` back, in windows of n tokens (4L by
    default)}; method: the RoPE model extended zero-shot at s = n / L."""
    n = str(n or 4 * results["config"]["train_length"])
    out = {}
    for s in seeds(results):
        if method is not None and method != "default":
            out[s] = results["scaling"][method][s]["copy"][n][str(distance)]
        else:
            out[s] = results["schemes"][scheme][s]["copy"][n][str(distance)]
    return out


def learned(by_seed: dict, threshold: float = LEARNED) -> tuple[int, int, float | None]:
    """(k, n, accuracy among the k): how many seeds are above the threshold."""
    good = [v for v in by_seed.values() if v > threshold]
    return len(good), len(by_seed), (float(np.mean(good)) if good else None)


def mean(by_seed: dict) -> float:
    return float(np.mean(list(by_seed.values())))


def yardsticks(results: dict, n) -> dict:
    """The source's yardsticks for windows of n tokens, averaged over every seed's source."""
    per_seed = [results["yardsticks"][s][str(n)] for s in seeds(results)]
    return {k: float(np.mean([y[k] for y in per_seed])) for k in per_seed[0]}
