"""Reading results.json (experiments.py's layout): per-seed numbers, spreads, means.

Retrieval is reported per seed: the median and the range over seeds (`spread`), with the
uncertainty of one seed's value from its number of keys (`wilson_interval`). A mean alone
hides both; a count of seeds above a threshold hides graded values.
"""

from __future__ import annotations

import math

import numpy as np

from ..language import _


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
    results: dict, scheme: str = "rope", n=None, method=None, budget=None, base=None
) -> dict:
    """{seed: mean text loss in windows of n tokens}, chosen as in passkey(); a fine-tune's
    text loss is measured at 4L only. base: the RoPE model trained with that base
    (results["base_sweep"]), plain or extended zero-shot by `method`."""
    n = str(n or results["config"]["train_length"])
    out = {}
    for s in seeds(results):
        if base is not None:
            model = results["base_sweep"][str(base)][s]
            plain = method is None or method == "default"
            out[s] = (
                model["text"]["loss"][n]
                if plain
                else model["scaling"][method]["text"][n]
            )
        elif budget is not None:
            out[s] = results["finetune"][method][s][str(budget)]["text"]
        elif method is not None and method != "default":
            out[s] = results["scaling"][method][s]["text"][n]
        else:
            out[s] = results["schemes"][scheme][s]["text"]["loss"][n]
    return out


def copy_loss(
    results: dict, distance, scheme: str = "rope", n=None, method=None, at_start=False
) -> dict:
    """{seed: loss on a copy's second half, `distance` back, in windows of n tokens (4L by
    default)}; method: the RoPE model extended zero-shot at s = n / L; at_start: the first
    copy opening the window (4L only) instead of the second copy closing it."""
    n = str(n or 4 * results["config"]["train_length"])
    part = "copy_at_start" if at_start else "copy"
    out = {}
    for s in seeds(results):
        if method is not None and method != "default":
            out[s] = results["scaling"][method][s][part][n][str(distance)]
        else:
            out[s] = results["schemes"][scheme][s][part][n][str(distance)]
    return out


def finetune_runs(results: dict) -> dict:
    """{(method, control): {"text": [mean over seeds per budget], "passkey": [median seed
    per budget]}} at 4L, for the fine-tune sweep (control None) and its controls."""
    config = results["config"]
    n, budgets = str(4 * config["train_length"]), config["finetune"]["budgets"]
    parts = {None: results["finetune"], **results.get("finetune_controls", {})}
    out = {}
    for control, part in parts.items():
        for method, by_seed in part.items():
            out[method, control] = {
                "text": [
                    mean({k: v[str(b)]["text"] for k, v in by_seed.items()})
                    for b in budgets
                ],
                "passkey": [
                    spread(
                        {
                            k: float(np.mean(v[str(b)]["passkey"][n]))
                            for k, v in by_seed.items()
                        }
                    )[0]
                    for b in budgets
                ],
            }
    return out


def spread(by_seed: dict) -> tuple[float, float, float]:
    """(median, lowest, highest) of the values over the random seeds."""
    values = list(by_seed.values())
    return float(np.median(values)), float(min(values)), float(max(values))


def wilson_interval(p: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a share p measured on n independent trials (95 % with
    z = 1.96): how far one seed's accuracy over n keys may sit from its model's true one.
    (Wilson 1927; it stays inside [0, 1], unlike p +- z sqrt(p (1 - p) / n).)"""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(_("n must be a positive int, got {n!r}").format(n=n))
    if not 0 <= p <= 1:
        raise ValueError(_("p must be in [0, 1], got {p!r}").format(p=p))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean(by_seed: dict) -> float:
    return float(np.mean(list(by_seed.values())))


def yardsticks(results: dict, n) -> dict:
    """The source's yardsticks for windows of n tokens, averaged over every seed's source."""
    per_seed = [results["yardsticks"][s][str(n)] for s in seeds(results)]
    return {k: float(np.mean([y[k] for y in per_seed])) for k in per_seed[0]}
