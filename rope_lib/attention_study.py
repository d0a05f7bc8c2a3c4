"""Attention entropy, temperature and length, measured: the tables the lessons read.

    python -m rope_lib.attention_study --out DIR      DIR/results.json (about a minute)

Reads what is already measured and adds the cheap parts (attention_entropy has the
math):

random   softmax entropy of one random query over n random keys (d = 64), per sigma:
         mean and spread over trials against ln n - sigma^2 / 2 and ln n (uniform).
lab      the lab's committed RoPE models (notebooks/lab_results, seeds 0-4, L = 64):
         entropy and logit spread per layer and head at 16 .. 512 keys (8 L), plain and
         with PI and YaRN at factor 4 (s L = 256); the text loss by position over 8 L
         against the same models with keys more than L back hidden (the in-distribution
         reference, probes.banded), and fits of the excess loss to the FORMS.
smollm2  from the real-LLM run's results.json (python -m rope_lib.pretrained, whose loss
         units of experiment.ENTROPY carry the entropy): entropy per layer at 1k .. 32k
         keys (plain RoPE), PI's and YaRN's change of it, the temperature sweep (x2, x4)
         with its best t per 2,048-token bucket past L, log-n scaling's repair, and fits
         of plain RoPE's excess loss past L (over the sliding reference) per window.

Every number is rounded to 4 significant digits; the file has no timings or paths.

Reading the tables (what the lessons do; nothing is recomputed):

    load(folder=None)            results.json: the folder named by ROPE_ATTENTION_RESULTS,
                                 else the committed notebooks/attention_results
    read(topic, folder=None)     one topic, its lists as float numpy arrays: "random",
                                 "lab", "smollm2", "smollm2.entropy", "smollm2.temperature",
                                 "smollm2.logn", "smollm2.length"
"""

from __future__ import annotations

import argparse
import functools
import json
import math
from pathlib import Path

import numpy as np
import torch

from . import rope_frequencies
from .attention_entropy import (
    FORMS,
    best_multiplier,
    fit_length_curve,
    gaussian_logit_entropy,
    random_qk_entropy,
    yarn_temperature,
)
from .language import _

RANDOM = {
    "n": [16, 64, 256, 1024, 4096, 16384, 65536],
    "sigma": [0.5, 1.0, 2.0, 3.0],
    "head_dim": 64,
    "trials": 32,
}
LAB = {
    "seeds": [0, 1, 2, 3, 4],
    "points": [16, 32, 64, 96, 128, 192, 256, 384, 512],
    "queries": 8,
    "factor": 4,
    "bucket": 16,
}
COMMITTED = Path(__file__).resolve().parent.parent / "notebooks"
TOPICS = (
    "random",
    "lab",
    "smollm2",
    "smollm2.entropy",
    "smollm2.temperature",
    "smollm2.logn",
    "smollm2.length",
)
"""The topics read() gives: a top-level key of results.json, or key.subkey."""


def load(folder=None) -> dict:
    """results.json of `python -m rope_lib.attention_study` as a dict: from `folder`, else
    the folder named by the environment variable ROPE_ATTENTION_RESULTS, else the
    committed notebooks/attention_results."""
    from .results import results_folder

    if folder is None:
        folder = results_folder(
            "ROPE_ATTENTION_RESULTS", COMMITTED / "attention_results"
        )
    return _load_cached(str(Path(folder).resolve()))


@functools.cache
def _load_cached(folder: str) -> dict:
    from .results import load_results

    return load_results(folder)


def read(topic: str, folder=None) -> dict:
    """One topic of the results (TOPICS), a new dict each call: every list of numbers
    becomes a float numpy array ([seed][layer][point][head] for the lab, [layer][point]
    for SmolLM2's entropy, ...; None stays None), other values as stored."""
    if topic not in TOPICS:
        raise ValueError(
            _("topic must be one of {topics}, got {topic!r}").format(
                topics=TOPICS, topic=topic
            )
        )
    part = load(folder)
    for key in topic.split("."):
        part = part[key]
    return _arrays(part)


def _arrays(values):
    if isinstance(values, dict):
        return {k: _arrays(v) for k, v in values.items()}
    if isinstance(values, list):
        if values and all(isinstance(v, dict) for v in values):
            return [_arrays(v) for v in values]
        try:
            return np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return [_arrays(v) for v in values]
    return values


def _round(values, digits: int = 4):
    """Nested lists/arrays of floats to `digits` significant digits (None kept)."""
    if isinstance(values, dict):
        return {k: _round(v, digits) for k, v in values.items()}
    if isinstance(values, (list, tuple, np.ndarray)):
        return [_round(v, digits) for v in values]
    if values is None or isinstance(values, (bool, str, int)):
        return values
    return float(f"{float(values):.{digits}g}")


def random_table(settings: dict = RANDOM) -> dict:
    """{"n", "sigma", "mean", "std": [sigma][n] over trials, "analytic": ln n -
    sigma^2 / 2, "uniform": ln n}."""
    table = {"mean": [], "std": [], "analytic": []}
    for sigma in settings["sigma"]:
        rows = [
            random_qk_entropy(
                n, settings["head_dim"], sigma, settings["trials"], seed=i
            )
            for i, n in enumerate(settings["n"])
        ]
        table["mean"].append([r.mean() for r in rows])
        table["std"].append([r.std() for r in rows])
        table["analytic"].append(
            [gaussian_logit_entropy(n, sigma) for n in settings["n"]]
        )
    table["uniform"] = [math.log(n) for n in settings["n"]]
    return {k: _round(v) for k, v in table.items()} | {
        "n": settings["n"],
        "sigma": settings["sigma"],
        "head_dim": settings["head_dim"],
        "trials": settings["trials"],
    }


def lab_table(folder=None, settings: dict = LAB) -> dict:
    """The lab's committed RoPE models, seed by seed (module docstring): {"points",
    "uniform": ln p, "L", "factor", "entropy" and "logit_std": {"plain", "pi", "yarn",
    "yarn_no_temperature": [seed][layer][point][head]} (the extended ones up to s L),
    "loss": {"bucket_start", "plain", "reference": [seed][bucket]}, "fits"}."""
    from .lab.probes import banded, loss_by_position, text_tokens, trained_model

    folder = Path(folder or COMMITTED / "lab_results")
    config = json.loads((folder / "results.json").read_text())["config"]
    L, s, points = config["train_length"], settings["factor"], settings["points"]
    out: dict = {"entropy": {}, "logit_std": {}, "loss": {"plain": [], "reference": []}}
    for seed in settings["seeds"]:
        model = trained_model(folder, seed, config=config)
        tokens = text_tokens(config, seed, points[-1])
        for name, rope, n in _lab_ropes(model.head_dim, L, s, points[-1]):
            model.set_rope(rope)
            try:
                stats = _lab_stats(model, tokens[:, :n], points, settings["queries"])
            finally:
                model.set_rope(None)
            for key, value in stats.items():
                out[key].setdefault(name, []).append(value)
        out["loss"]["plain"].append(_buckets(loss_by_position(model, tokens), settings))
        with banded(model, L):
            reference = loss_by_position(model, tokens)
        out["loss"]["reference"].append(_buckets(reference, settings))
    bucket = settings["bucket"]
    out["loss"]["bucket_start"] = list(range(0, points[-1] - 1, bucket))
    out["fits"] = excess_fits(out["loss"], L, bucket)
    return _round(out) | {
        "points": points,
        "uniform": _round([math.log(p) for p in points]),
        "L": L,
        "factor": s,
        "seeds": settings["seeds"],
    }


def _lab_ropes(head_dim: int, L: int, s: float, longest: int):
    """(name, rope for LabModel.set_rope, window length) for the lab's entropy table."""
    yarn = {"factor": float(s), "original_max_position_embeddings": L}
    return [
        ("plain", None, longest),
        ("pi", rope_frequencies("linear", head_dim, factor=float(s)), round(s * L)),
        ("yarn", rope_frequencies("yarn", head_dim, **yarn), round(s * L)),
        (
            "yarn_no_temperature",
            rope_frequencies("yarn", head_dim, attention_factor=1.0, **yarn),
            round(s * L),
        ),
    ]


def _lab_stats(model, tokens, points, queries) -> dict:
    from .lab.probes import entropy_by_length

    usable = [p for p in points if p <= tokens.shape[1]]
    stats = entropy_by_length(model, tokens, usable, queries)
    return {k: v.tolist() for k, v in stats.items()}


def _buckets(losses: torch.Tensor, settings: dict) -> list[float]:
    b = settings["bucket"]
    return [float(losses[i : i + b].mean()) for i in range(0, len(losses), b)]


def excess_fits(loss: dict, L: int, bucket: int) -> dict:
    """Fits of the excess loss (plain minus the reference, per bucket wholly past L,
    mean over the runs) against x = the bucket's middle / L, to every form of FORMS:
    {"x", "excess": [run][bucket], "mean", form: fit_length_curve's result on the mean,
    "rmse_per_run": {form: [each run fitted alone]}}."""
    starts = np.asarray(loss["bucket_start"])
    past = starts >= L
    excess = np.asarray(loss["plain"]) - np.asarray(loss["reference"])
    excess = excess[:, past]
    x = (starts[past] + bucket / 2) / L
    mean = excess.mean(0)
    fits = {form: fit_length_curve(x, mean, form) for form in FORMS}
    each = {
        form: [fit_length_curve(x, run, form)["rmse"] for run in excess]
        for form in FORMS
    }
    return {
        "x": x.tolist(),
        "excess": excess.tolist(),
        "mean": mean.tolist(),
        "rmse_per_run": each,
    } | fits


def _unit(results: dict, method: str, factor, length: int, window: int = 0) -> dict:
    return results["units"][f"{method}/x{factor}/{length}/window{window}"]


def _head_mean(unit: dict) -> np.ndarray:
    """A loss unit's entropy, mean over heads: [layer][point]."""
    return np.asarray(unit["entropy"]["entropy"]).mean(-1)


def smollm2_entropy(results: dict) -> dict:
    """Plain RoPE's entropy and logit spread per layer (mean over heads) at each point,
    from its longest pass, and what PI, YaRN and YaRN without its attention factor at x2
    change (method - plain, [layer][point], points up to 2 L)."""
    L = results["settings"]["training_length"]
    passes = [results["units"].get(f"plain/x1/{n}/window0", {}) for n in (4 * L, 2 * L)]
    measured = [unit for unit in passes if "entropy" in unit]
    if not measured:
        return None  # not measured yet
    plain = measured[0]  # the 4L pass's, or a 2L pass's (a run cut short)
    points = plain["entropy"]["points"]
    out = {
        "points": points,
        "uniform": [math.log(p) for p in points],
        "plain": _head_mean(plain),
        "plain_by_head": plain["entropy"]["entropy"],
        "logit_std": np.asarray(plain["entropy"]["logit_std"]).mean(-1),
        "change": {},
    }
    for method in ("pi", "yarn", "yarn_no_attention_factor", "logn"):
        factor = 1 if method == "logn" else 2
        unit = results["units"].get(f"{method}/x{factor}/{2 * L}/window0", {})
        if "entropy" not in unit:
            continue
        n = min(len(unit["entropy"]["points"]), len(points))
        out["change"][method] = _head_mean(unit)[:, :n] - out["plain"][:, :n]
    return out


def sweep_losses(results: dict, factor: int) -> dict:
    """The temperature sweep at a factor, on the windows of 2 L: {attention factor m:
    [mean loss per bucket]}; YaRN's own m at x4 is read from its 4 L pass."""
    from .pretrained.experiment import METHODS

    L, bucket = results["settings"]["training_length"], results["settings"]["bucket"]
    own = yarn_temperature(factor)["attention_factor"]
    names = ["yarn_no_attention_factor", "yarn"] + [
        m for m in METHODS if m.startswith("yarn_af")
    ]
    out = {}
    for name in names:
        for length in (2 * L, factor * L):
            key = f"{name}/x{factor}/{length}/window0"
            if key in results["units"]:
                m = METHODS[name][1].get("attention_factor", own)
                out[round(m, 4)] = results["units"][key]["bucket_loss"][
                    : 2 * L // bucket
                ]
                break
    return dict(sorted(out.items()))


def temperature_table(results: dict, factor: int) -> dict:
    """The best logit multiplier 1/t at a factor (best_multiplier over the sweep), for
    the mean loss past L, for each bucket past L (the spread) and inside L, against
    YaRN's (0.1 ln s + 1)^2; "slope": the k of sqrt(1/t) = k ln s + 1 that the best
    past L gives (YaRN's: 0.1). {"attention_factor": swept m, "loss": [m][bucket],
    ...}."""
    bucket = results["settings"]["bucket"]
    first = results["settings"]["training_length"] // bucket  # the first bucket past L
    losses = sweep_losses(results, factor)
    m = np.array(list(losses))
    table = np.array(list(losses.values()))  # [m][bucket]
    multipliers = m**2
    if len(m) < 3:
        return {"attention_factor": m, "loss": table, "yarn": yarn_temperature(factor)}
    per_bucket = [
        best_multiplier(multipliers, table[:, b]) for b in range(first, len(table[0]))
    ]
    best = best_multiplier(multipliers, table[:, first:].mean(1))
    return {
        "attention_factor": m,
        "loss": table,
        "first_bucket_past_L": first,
        # YaRN's rule sqrt(1/t) = k ln s + 1 with k = 0.1; the k the best t gives here
        "slope": (best["attention_factor"] - 1) / math.log(factor),
        "slope_by_bucket": [
            (b["attention_factor"] - 1) / math.log(factor) for b in per_bucket
        ],
        "best_past_L": best_multiplier(multipliers, table[:, first:].mean(1)),
        "best_inside_L": best_multiplier(multipliers, table[:, :first].mean(1)),
        "best_by_bucket": per_bucket,
        "yarn": yarn_temperature(factor),
    }


def logn_table(results: dict) -> dict:
    """Log-n scaling on plain RoPE past L, per bucket of the 2 L window: plain, log-n,
    YaRN x2 and the sliding reference's losses, and the share of the break log-n
    repairs, (plain - logn) / (plain - reference)."""
    L, bucket = results["settings"]["training_length"], results["settings"]["bucket"]
    first, last = L // bucket, 2 * L // bucket
    if f"logn/x1/{2 * L}/window0" not in results["units"]:
        return None
    sliding = _sliding(results, 4 * L)
    reference = [sliding[b] for b in range(first, last)]
    rows = {
        "plain": _unit(results, "plain", 1, 4 * L)["bucket_loss"][first:last],
        "logn": _unit(results, "logn", 1, 2 * L)["bucket_loss"][first:last],
        "yarn": _unit(results, "yarn", 2, 2 * L)["bucket_loss"][first:last],
        "reference": reference,
    }
    plain, ref = np.array(rows["plain"]), np.array(reference)
    repaired = {
        name: (plain - np.array(rows[name])) / (plain - ref)
        for name in ("logn", "yarn")
    }
    return rows | {"buckets": list(range(first, last)), "repaired": repaired}


def _sliding(results: dict, length: int, window: int = 0) -> dict:
    unit = results["windowed"]["units"][f"sliding/{length}/window{window}"]
    return dict(zip(unit["buckets"], unit["bucket_loss"]))


def length_fits(runs: list[dict]) -> dict:
    """Plain RoPE's excess loss over the sliding reference per bucket past L of its 4 L
    window, one run per results.json (another --offset: another stretch of text), fitted
    to each form of FORMS against x = the bucket's middle / L (excess_fits), and the
    logit spread's growth: plain's logit_std at the last point / at L, per layer."""
    L, bucket = runs[0]["settings"]["training_length"], runs[0]["settings"]["bucket"]
    first, last = L // bucket, 4 * L // bucket
    loss = {"plain": [], "reference": []}
    for results in runs:
        sliding = _sliding(results, 4 * L)
        plain = _unit(results, "plain", 1, 4 * L)["bucket_loss"]
        loss["plain"].append(plain[first:last])
        loss["reference"].append([sliding[b] for b in range(first, last)])
    loss["bucket_start"] = [b * bucket for b in range(first, last)]
    return excess_fits(loss, L, bucket) | {"loss": loss}


def smollm2_table(folder=None, others=("offset50000",)) -> dict:
    """The SmolLM2 parts (module docstring) from folder/results.json (default: the
    committed notebooks/llm_results); the length fits also on folder/<other>."""
    from .pretrained.results import load_results

    folder = Path(folder or COMMITTED / "llm_results")
    results = load_results(folder)
    runs = [results] + [
        load_results(folder / name)
        for name in others
        if (folder / name / "results.json").is_file()
    ]
    return _round(
        {
            "L": results["settings"]["training_length"],
            "bucket": results["settings"]["bucket"],
            "entropy": smollm2_entropy(results),
            "temperature": {f"x{s}": temperature_table(results, s) for s in (2, 4)},
            "logn": logn_table(results),
            "length": length_fits(runs),
        }
    )


def run(out_dir, lab_folder=None, llm_folder=None) -> dict:
    """Every table (random, lab, smollm2) into out_dir/results.json; returns them."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    results = {
        "random": random_table(),
        "lab": lab_table(lab_folder),
        "smollm2": smollm2_table(llm_folder),
    }
    text = json.dumps(_plain(results), indent=1, sort_keys=True) + "\n"
    (out / "results.json").write_text(text)
    return results


def _plain(values):
    """numpy arrays and scalars as lists and floats, for json."""
    if isinstance(values, dict):
        return {str(k): _plain(v) for k, v in values.items()}
    if isinstance(values, (list, tuple)):
        return [_plain(v) for v in values]
    if isinstance(values, np.ndarray):
        return _plain(values.tolist())
    if isinstance(values, np.generic):
        return values.item()
    return values


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m rope_lib.attention_study", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", required=True, help="folder for results.json")
    parser.add_argument("--lab", help="the lab's results folder (default: committed)")
    parser.add_argument(
        "--llm", help="the real-LLM results folder (default: committed)"
    )
    args = parser.parse_args(argv)
    run(args.out, args.lab, args.llm)
    print(f"results in {Path(args.out) / 'results.json'}")


if __name__ == "__main__":
    main()
