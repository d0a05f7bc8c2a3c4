"""How fast plain RoPE's loss rises past the training length L, read from the committed
attention study (notebooks/attention_results/results.json, python -m
rope_lib.attention_study) and fitted run by run.

    length_study(which)        "lab" or "smollm2": the excess loss per run and its fits

The excess loss of a bucket of positions is plain RoPE's mean loss there minus a
reference's, the same model that never looks further back than it did in training:

    lab      the lab's five RoPE models (notebooks/lab_results, seeds 0-4, L = 64), on
             positions 0 .. 8 L in buckets of 16, with keys more than L back hidden
             (probes.banded);
    smollm2  SmolLM2-135M (L = 8,192) on two stretches of text (windows) 1 L .. 4 L, in
             buckets of 2,048, against a sliding window of L keys.

Each run's excess past L is fitted (attention_entropy.fit_length_curve) against
x = the bucket's middle / L to every form of attention_entropy.FORMS:

    exponential  a + b e^(c x)     with b < 0, c < 0: it rises and levels off at a
    power        a + b x^c
    logarithmic  a + b ln x
    linear       a + b x

"Extrapolation decays exponentially with length" read as a statement about this curve:
the loss still to come, a - excess, shrinks like e^(c x) (the saturating exponential
fits best), or the excess grows like e^(c x) with c > 0 (a blow-up). The fits say which
form is nearer; whether the difference between forms exceeds the difference between
runs is what a lesson may conclude from.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .attention_entropy import FORMS, fit_length_curve
from .language import _
from .results import NOTEBOOKS, results_folder

COMMITTED = NOTEBOOKS / "attention_results"
"""The committed study; ROPE_ATTENTION_RESULTS names another folder."""

SMOLLM2_VOCABULARY = 49_152
"""SmolLM2-135M's vocabulary V (its GGUF's llama.vocab_size, lesson 15): a uniform guess
over it loses ln V = 10.80 nats per token, the loss of a model that reads nothing."""


def load_study(folder=None) -> dict:
    """The attention study's results.json (folder, else ROPE_ATTENTION_RESULTS, else
    the committed one)."""
    folder = Path(folder or results_folder("ROPE_ATTENTION_RESULTS", COMMITTED))
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def length_study(which: str, study: dict | None = None) -> dict:
    """Plain RoPE's excess loss past L for "lab" (per seed) or "smollm2" (per window),
    with every run fitted alone:

    {"L", "x": bucket middles / L, "excess": [run][bucket], "mean": over runs,
     "plain", "reference": [run][bucket] the two losses past L,
     "fits": {form: [fit_length_curve result per run]},
     "rmse": {form: [rmse per run]}, "best": [the form of least rmse, per run],
     "aic": {form: [n ln(rss / n) + 2 k per run]} (Akaike's criterion, k the form's
     parameters: a lower value is better after the penalty for an extra parameter),
     "mean_fits": {form: fit of the mean}, "runs": how many}.
    """
    if which not in ("lab", "smollm2"):
        raise ValueError(
            _("which must be 'lab' or 'smollm2', got {which!r}").format(which=which)
        )
    study = study if study is not None else load_study()
    part = study[which]
    fits = part["fits"] if which == "lab" else part["length"]
    loss = part["loss"] if which == "lab" else fits["loss"]
    L = part["L"]
    starts = np.asarray(loss["bucket_start"])
    past = starts >= L
    plain = np.asarray(loss["plain"], dtype=float)[:, past]
    reference = np.asarray(loss["reference"], dtype=float)[:, past]
    x = np.asarray(fits["x"], dtype=float)
    excess = np.asarray(fits["excess"], dtype=float)
    per_run = {
        form: [fit_length_curve(x, run, form) for run in excess] for form in FORMS
    }
    rmse = {form: [f["rmse"] for f in runs] for form, runs in per_run.items()}
    best = [min(FORMS, key=lambda form: rmse[form][r]) for r in range(len(excess))]
    return {
        "L": L,
        "x": x,
        "excess": excess,
        "mean": excess.mean(0),
        "plain": plain,
        "reference": reference,
        "fits": per_run,
        "rmse": rmse,
        "aic": {
            form: [len(x) * np.log(f["rmse"] ** 2) + 2 * f["parameters"] for f in runs]
            for form, runs in per_run.items()
        },
        "best": best,
        "mean_fits": {
            form: fit_length_curve(x, excess.mean(0), form) for form in FORMS
        },
        "runs": len(excess),
    }


def logit_spread_growth(study: dict | None = None) -> dict:
    """How much plain RoPE's attention logits spread out past L: the standard deviation of
    a query's logits over its keys at the longest measured point over the same at L.

    {"lab": float64 [seed, layer, head] at 8 L (the lab's five RoPE models, L = 64),
     "smollm2": float64 [layer] at 2 L (SmolLM2-135M, mean over heads, L = 8,192)}.
    Around 1 means the scores past L are no larger than in training (compare
    extension_analysis.extrapolation_sizes, a fit whose scores past L are free)."""
    study = study if study is not None else load_study()
    lab = study["lab"]
    # [seed, layer, point, head]
    spread = np.asarray(lab["logit_std"]["plain"], dtype=float)
    at_L = lab["points"].index(lab["L"])
    smol = study["smollm2"]
    points = smol["entropy"]["points"]
    smol_spread = np.asarray(smol["entropy"]["logit_std"], dtype=float)  # [layer, pt]
    L = smol["L"]
    at_2L = smol_spread[:, points.index(2 * L)]
    return {
        "lab": spread[:, :, -1] / spread[:, :, at_L],
        "smollm2": at_2L / smol_spread[:, points.index(L)],
    }


def curve(fit: dict, x) -> np.ndarray:
    """A fit_length_curve result evaluated at x: a + b f(x; c)."""
    f, _grid = FORMS[fit["form"]]
    return fit["a"] + fit["b"] * f(np.asarray(x, dtype=float), fit["c"])
