"""SmolLM2-135M on real text, zero-shot (no fine-tune): past its training length, and inside.

    run(out_dir, quick=False, device="cpu", offset=0) -> results, also out_dir/results.json

SmolLM2-135M was trained on 8,192 tokens (L). Five parts, each made of units (one forward pass
or a few) that are written to results.json as soon as each is done:

loss     For each method (METHODS) at factor s, windows of s * L tokens of Python's
         documentation go through the model; the next-token loss of every position is kept
         as its mean over buckets of 2,048 positions. Plain RoPE should break past L, the
         extension methods hold the loss (or pay for it everywhere). Window w begins at the
         same token at every factor (settings "window_starts"), so a method whose
         frequencies do not depend on the window's length (all but dynamic NTK, which
         recomputes its base for the length) runs once, on its longest window: the model is
         causal, and the first 2L positions of a 4L window have the 2L window's losses.
         Plain RoPE (factor 1 at every length) is the one method that runs at two lengths:
         its 4L forward gives its 2L curve too. A method listed in a stage's "inside_L"
         runs over the first L tokens of its window only, with the frequencies it has on
         the whole window (dynamic NTK's base is the one for s L tokens): its cost inside
         L, for about a tenth of the time. Static NTK at x4 runs there too: dynamic NTK x4
         over 4L has NTK's frequencies at factor 13, and this is its matched control.
         The band test ("pi_band", x2): plain RoPE but for the pairs settings "band"
         (20-25: the largest q and k in the pair probe, wavelengths 8.4k-51k tokens, 1 to
         6 rad within L), whose frequencies are divided by 2: PI on those pairs only.
         Its negative control ("pi_band_control", x2): the same on settings
         "control_band" (26-31: as many pairs, a quarter of the size of q and k, at most
         0.7 rad of new angle at 2L). add_units (--only) adds it to an older run.
windowed Why plain RoPE breaks past L, tested with plain RoPE whose every offset stays
         below L: "streaming" (StreamingLLM, Xiao et al. 2024: each query sees the first
         `sinks` = 4 tokens and the most recent L - 4 keys, at cache positions < L) on
         2L tokens; its control "window_only" (the most recent L keys, no sinks) on 1.25L;
         "sliding", the PI paper's evaluation: windows of L tokens ending every L/2 from
         1.5L to 4L on the 4L window, each scoring its last L/2 positions, so that every
         position past L has L/2 to L tokens of context, all at offsets seen in training:
         the in-distribution reference, bucket by bucket, on the same text.
passkey  Passkey retrieval (passkey.py): is the key said back by greedy decoding, by prompt
         length, depth of the key and method.
study    The attention study, in the loss units (attention_study reads them): the loss
         units of ENTROPY's methods also measure, on their own forward pass, each
         layer's and head's attention entropy and logit spread for the 32 queries before
         each point of settings "entropy" (attention_entropy.attention_stats); the
         temperature sweep (YaRN's frequencies with other attention factors m, logits
         times m^2 = 1/t: SWEEP_X2 at x2, SWEEP_X4 at x4 on 2L windows) and log-n scaling
         ("logn": plain RoPE, query m times max(1, ln(m + 1) / ln L)). They stay out of
         lesson 15's curves (results.temperature_study).
pairs    The size of q and k per frequency pair, by layer (pairs.py), on windows of 2,048
         tokens, plain RoPE.
decay    Mean attention weight by distance, by layer, and sinks: the share of attention on
sinks    the first token(s), by layer and head (attention_maps.py), same windows, one pass.

FULL and QUICK below say what is run. --quick pretends L = 32 and uses tiny sizes: every step
of the full run in under a minute, numbers that say nothing about the model.

results.json (keys sorted; "x2" is the factor, window w the w-th window of that length):
    model, quick, source {text, licence, python, tokens, sha256_16}   what was run, on what
    settings      FULL or QUICK as run, with training_length, offset and window_starts (the
                  first token of each window, of every length) filled in
    units         loss: {"<method>/x<factor>/<length>/window<w>":
                         {"bucket_loss": [mean loss per bucket of positions], "seconds",
                          "cpu_seconds"}}
                  (plain RoPE is "plain/x1/...": it runs on every stage's windows; a unit
                  read from a longer window's forward pass says so, "from": that unit's key,
                  with 0 seconds)
                  (pi_band is the band test, "ntk/x4/<L>/..." static NTK x4 inside L)
                  a unit of ENTROPY's methods also has "entropy": {"points": [p ...],
                  "entropy", "logit_std": [layer][point][head]} (its pass's first key)
    summary       loss: {"<method>/x<factor>/<length>": {"windows": count, "mean", "std",
                         "min", "max": [per bucket, over the windows]}}
    windowed      {"units": {"<name>/<length>/window<w>": {"bucket_loss", "seconds",
                         "cpu_seconds"}}}: "streaming/<2L>/...", "window_only/<1.25L>/..."
                   as a loss unit's buckets (from position 0); "sliding/<4L>/...": also
                   "buckets": [the bucket indices b it scores, L / bucket (4) to the last],
                   "bucket_loss" per such bucket, at its absolute position in the 4L window
                   (compare with a loss unit's bucket_loss[b]), "ends": [each window's end]
    passkey       {"units": {"<method>/x<factor>/<length>/depth<d>/trial<t>":
                         {"retrieved": bool, "key": int, "said": the greedy answer's text up
                          to its first wrong token, "tokens": prompt + answer, "seconds",
                          "cpu_seconds"}},
                   "summary": {"<method>/x<factor>/<length>": {"depths": [d ...],
                         "retrieved": [share of trials retrieved, per depth]}}}
    pairs         {"wavelength": [2 pi / theta_i, per pair i], "q_rms", "k_rms":
                   [per layer [per pair]], "seconds", "cpu_seconds"}  (theta_i = b^(-2i/d))
    decay         {"edges": distance bin edges (bin b: edges[b] <= m - n < edges[b+1]),
                   "mean_weight": [per layer [per bin]], "uniform": [per bin],
                   "mean_weight_without_first": [per layer [per bin]], the same with token
                   0 removed and each query's weights renormalised over the other keys
                   (attention_maps.without_first_token), "uniform_without_first": [per bin]
                   its even-spread baseline, computed the same way, "seconds", "cpu_seconds"}
    sinks         {"first_token", "first_4_tokens": [per layer, mean over heads],
                   "first_token_by_head": [per layer [per head]], "uniform_first_token",
                   "uniform_first_4_tokens": what evenly spread attention gives, "from":
                   "decay" (the same pass)}
    seconds       the sum of the units' wall seconds per part (loss, passkey, windowed,
                  pairs, decay, sinks); cpu_seconds the same for the process's CPU time (all threads),
                  which a busy machine stretches less than the wall time
pairs, decay and sinks are means over the probe windows. Every part that has not run yet is
absent (a run in progress), or empty.

Resumable: a second run with the same --out skips the units already there (and drops those
its plan no longer has). The text's token ids are fingerprinted: a results.json made from
another text (another Python's documentation) or with other BASIS settings (another --offset)
is refused rather than mixed; a loss unit whose window begins elsewhere in the new plan (more
windows, or longer ones) is run again, and so are the band test when the band changed, the
windowed units when settings "windowed" changed, and decay when it lacks a field (FIELDS).
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, NamedTuple

import numpy as np
import torch

from .. import rope_frequencies
from ..attention_entropy import attention_stats
from .attention_maps import (
    attention_weights,
    decay_by_distance,
    sink_share,
    uniform_attention,
    without_first_token,
)
from .gguf import load_tokenizer, smollm2_path
from .model import Llama, Window
from .pairs import band_interpolated, pair_rms, wavelengths
from .passkey import greedy_answer, passkey_number, passkey_prompt
from .text import documentation_tokens, text_source, text_windows, window_starts

METHODS = {
    # name: (rope_type, parameters besides factor; L is filled in by Llama.set_rope)
    "plain": ("default", {}),
    "pi": ("linear", {}),  # Position Interpolation (Chen et al. 2023)
    "ntk": ("ntk", {}),  # NTK-aware base change (bloc97 2023)
    "dynamic_ntk": ("dynamic", {}),  # dynamic NTK (emozilla 2023)
    "yarn": ("yarn", {}),  # with its attention factor 0.1 ln s + 1 (Peng et al. 2023)
    "yarn_no_attention_factor": ("yarn", {"attention_factor": 1.0}),
    "llama3": (
        "llama3",
        {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
    ),  # Llama 3.1
    # the band test: plain RoPE but PI on the pairs settings["band"] only
    # (pairs.band_interpolated: not a rope_frequencies type)
    "pi_band": ("band", {}),
    # its negative control: the same halving on pairs settings["control_band"] (26-31),
    # which carry little of |q||k| and meet little new angle past L
    "pi_band_control": ("band", {"band": "control_band"}),
    # the temperature sweep: YaRN's frequencies with another attention factor m (cos and
    # sin times m, logits times m^2 = 1/t); YaRN's own is 1.0693 at x2, 1.1386 at x4
    "yarn_af1.14": ("yarn", {"attention_factor": 1.14}),
    "yarn_af1.21": ("yarn", {"attention_factor": 1.21}),
    "yarn_af1.28": ("yarn", {"attention_factor": 1.28}),
    # log-n scaling, no frequency change: plain RoPE, query m times max(1, ln(m+1)/ln L)
    # (Qwen's use_logn_attn; Model.set_logn)
    "logn": ("logn", {}),
}

FACTORLESS = ("plain", "logn")
"""Methods whose frequencies have no factor: their units are "x1" at every length."""

SWEEP_X2 = ["yarn_af1.14", "yarn_af1.21"]
"""The x2 temperature sweep besides YaRN's own factor (1.0693) and 1 (no factor)."""
ALL = [m for m in METHODS if m not in ("yarn_af1.28",)]
EXTENDED = ["plain", "dynamic_ntk", "yarn"]
SWEEP_X4 = ["yarn_no_attention_factor", "yarn_af1.21", "yarn_af1.28"]
"""The x4 temperature sweep, on windows of 2L (length 2): YaRN's own attention factor
there is read from yarn/x4's 4L pass (its first 2L positions)."""
ENTROPY = [
    "plain",
    "pi",
    "yarn/x2",
    "yarn_no_attention_factor",
    "yarn_af1.14",
    "yarn_af1.21",
    "yarn_af1.28",
    "logn",
]
"""The methods ("name", at every factor, or "name/x<factor>") whose loss units also
measure the attention entropy (settings "entropy"): YaRN x4's 4L pass does not."""


def _measures_entropy(settings: dict, method: str, factor) -> bool:
    names = settings["entropy"]["methods"]
    return method in names or f"{method}/x{factor}" in names


FULL = {
    "stages": [  # loss: windows of factor * L tokens, how many for each method
        {"factor": 2, "windows": dict.fromkeys(ALL, 1)},
        {
            "factor": 4,
            "windows": dict.fromkeys(EXTENDED + ["ntk"], 1),
            # 56 s instead of about 500: inside L. Static NTK x4 is dynamic NTK x4's
            # matched control there (dynamic NTK over 4L has NTK's frequencies at 13)
            "inside_L": ["dynamic_ntk", "ntk"],
        },
        {"factor": 4, "length": 2, "windows": dict.fromkeys(SWEEP_X4, 1)},
    ],
    "entropy": {  # in the loss units of ENTROPY: query counts p, queries before each
        "methods": ENTROPY,
        "points": [1024, 2048, 4096, 6144, 8192, 10240, 12288, 14336, 16384]
        + [20480, 24576, 28672, 32768],
        "queries": 32,
    },
    "band": [20, 26],  # pi_band: pairs 20-25, lambda 8.4k-51k tokens, the largest q, k
    # pi_band_control: pairs 26-31 (lambda 73k-438k tokens), as many pairs, a quarter of
    # the size of q and k, at most 0.7 rad of new angle at 2L
    "control_band": [26, 32],
    "windowed": {  # plain RoPE, every offset below L; lengths in multiples of L
        "lengths": {"streaming": 2, "window_only": 1.25, "sliding": 4},
        "sinks": 4,
        "windows": 1,
    },
    "bucket": 2048,
    "training_length": None,  # the model's own: 8,192
    "passkey": {
        "stages": [  # prompt lengths in tokens, depths of the key; the methods at factor 2
            {"length": 8192, "methods": ["plain"], "depths": [0.1, 0.5, 0.9]},
            {"length": 12288, "methods": EXTENDED, "depths": [0.1, 0.9]},
        ],
        "factor": 2,
        "trials": 1,
    },
    "probe": {"length": 2048, "windows": 2},  # pairs, decay, sinks
    "offset": 0,
}
"""The full run: one text window per method and factor (--windows N for more, and a
spread). rope_lib's forward (2 threads, at par with transformers') measured on this
project's idle 2-core machine (AMD EPYC, AVX2): 8,192 tokens in 43-56 s (a passkey
prompt), 12,288 in 90-98 s, 16,384 in 131-181 s and 32,768 in 453-553 s: the attention
grows as n^2, and at 16,384 tokens it is already most of the work. The plan: 6 forwards
of 2L (the methods; plain RoPE's 2L curve comes from its 4L forward), 2 of 4L (plain
RoPE, YaRN), dynamic NTK at x4 over L tokens (its loss past L at 4L would cost 8 more
minutes), 9 passkey prompts (3 of L, 6 of 1.5L) and the probes: 44 minutes (2,646 s of
units) in the committed run. The units that explain the break add about 14 minutes
(_cost, idle): the band test (a 2L forward, ~160 s), static NTK x4 inside L (~54 s),
StreamingLLM on 2L (a masked forward, ~210 s), the window alone on 1.25L (~90 s), the
sliding reference (6 forwards of L, ~325 s); the decay probe runs again for its fields
without the first token (~65 s). Masked forwards timed at 8,192 tokens on the busy
machine (benchmarks/bench_windowed.py, 2 threads, CPU seconds): plain 63, the window
alone 77, StreamingLLM 82. From scratch about 58 minutes with one two-thread job.

The attention study (attention_study reads it) adds 6 forwards of 2L: the temperature
sweep (YaRN's frequencies with attention factors 1.14, 1.21 at x2; 1, 1.21, 1.28 at x4,
on 2L windows: YaRN's own factor comes from the yarn units, 1 at x2 from
yarn_no_attention_factor) and log-n scaling, about 15 minutes at two threads; the entropy
probe costs 8.5 % of an 8,192-token forward (5.7 of 67 CPU seconds, one thread) and rides
on the loss units of ENTROPY. One thread per forward does more per core than two: a 2L
forward took 194-207 CPU seconds with one thread (busy machine, entropy probe taken off)
against 267-324 with two, so --jobs 2 (make llm-experiments) runs two one-thread units
side by side: the whole plan, about 5,600 one-thread CPU seconds, in about 47 minutes on
two idle cores if each job keeps one-thread speed (estimated, not timed idle)."""

QUICK = {
    "stages": [
        {"factor": 2, "windows": dict.fromkeys(ALL, 2)},
        {
            "factor": 4,
            "windows": dict.fromkeys(EXTENDED + ["ntk"], 2),
            "inside_L": ["dynamic_ntk", "ntk"],
        },
        {"factor": 4, "length": 2, "windows": dict.fromkeys(SWEEP_X4, 2)},
    ],
    "entropy": {
        "methods": ENTROPY,
        "points": [8, 16, 24, 32, 40, 48, 64, 96, 128],
        "queries": 4,
    },
    "band": [20, 26],
    "control_band": [26, 32],
    "windowed": {
        "lengths": {"streaming": 2, "window_only": 1.25, "sliding": 4},
        "sinks": 4,
        "windows": 1,
    },
    "bucket": 16,
    "training_length": 32,
    "passkey": {
        "stages": [
            {"length": 128, "methods": ["plain"], "depths": [0.25, 0.75]},
            {"length": 160, "methods": EXTENDED, "depths": [0.25, 0.75]},
        ],
        "factor": 2,
        "trials": 1,
    },
    "probe": {"length": 64, "windows": 1},
    "offset": 0,
}
"""quick: the training length L is pretended to be 32 tokens (the frequencies are set as if
the model had been trained on 32), so that windows of 64 and 128 tokens exercise every
step of the full plan."""


def plan(
    quick: bool, training_length: int, offset: int = 0, windows: int | None = None
) -> dict:
    """The settings and the lists of units: "units" [method, factor, length, window] for
    the loss, "passkey_units" [method, factor, length, depth, trial], "windowed_units"
    [name, length, window]. windows: that many loss (and windowed) windows per method and
    factor instead of the plan's (more: a spread, and time)."""
    if windows is not None and (
        isinstance(windows, bool) or not isinstance(windows, int) or windows < 1
    ):
        raise ValueError(f"windows must be a positive int or None, got {windows!r}")
    settings = json.loads(json.dumps(QUICK if quick else FULL))  # a deep copy
    L = settings["training_length"] = settings["training_length"] or training_length
    settings["offset"] = offset
    for stage in settings["stages"]:
        for method, count in stage["windows"].items():
            stage["windows"][method] = windows or count
    settings["units"] = [
        [
            method,
            1 if method in FACTORLESS else stage["factor"],
            L if method in stage.get("inside_L", ()) else _stage_length(stage, L),
            w,
        ]
        for stage in settings["stages"]
        for w in range(max(stage["windows"].values()))
        for method, count in stage["windows"].items()
        if w < count
    ]
    windowed = settings["windowed"]
    windowed["windows"] = windows or windowed["windows"]
    settings["windowed_units"] = [
        [name, round(L * multiple), w]
        for w in range(windowed["windows"])
        for name, multiple in windowed["lengths"].items()
    ]
    keys = settings["passkey"]
    settings["passkey_units"] = [
        [method, 1 if method == "plain" else keys["factor"], stage["length"], depth, t]
        for stage in keys["stages"]
        for method in stage["methods"]
        for depth in stage["depths"]
        for t in range(keys["trials"])
    ]
    return settings


def _stage_length(stage: dict, L: int) -> int:
    """A stage's window: its "length" times L (default: its factor times L)."""
    return round(L * stage.get("length", stage["factor"]))


def unit_key(method: str, factor: float, length: int, window: int) -> str:
    return f"{method}/x{factor}/{length}/window{window}"


def passkey_key(method, factor, length, depth, trial) -> str:
    return f"{method}/x{factor}/{length}/depth{depth}/trial{trial}"


def windowed_key(name: str, length: int, window: int) -> str:
    return f"{name}/{length}/window{window}"


def bucket_means(losses: torch.Tensor, bucket: int) -> list[float]:
    """Mean of losses [n] over consecutive buckets of `bucket` positions (the last may be
    shorter)."""
    return [
        float(losses[i : i + bucket].double().mean())
        for i in range(0, len(losses), bucket)
    ]


def summarize(results: dict) -> dict:
    """Loss: for each (method, factor, length), per bucket, mean, std, min, max over
    windows."""
    groups: dict[str, list] = {}
    for key, unit in results["units"].items():
        method, factor, length, _ = key.split("/")
        groups.setdefault(f"{method}/{factor}/{length}", []).append(unit["bucket_loss"])
    summary = {}
    for name, rows in sorted(groups.items()):
        table = np.array(rows, dtype=float)
        summary[name] = {
            "windows": len(rows),
            "mean": table.mean(0).round(4).tolist(),
            "std": table.std(0).round(4).tolist(),
            "min": table.min(0).round(4).tolist(),
            "max": table.max(0).round(4).tolist(),
        }
    return summary


def summarize_passkey(units: dict) -> dict:
    """For each (method, factor, length): the depths and the share retrieved at each."""
    groups: dict[str, dict] = {}
    for key, unit in units.items():
        method, factor, length, depth, _ = key.split("/")
        depth = float(depth.removeprefix("depth"))
        group = groups.setdefault(f"{method}/{factor}/{length}", {})
        group.setdefault(depth, []).append(unit["retrieved"])
    return {
        name: {
            "depths": sorted(by_depth),
            "retrieved": [float(np.mean(by_depth[d])) for d in sorted(by_depth)],
        }
        for name, by_depth in sorted(groups.items())
    }


def _significant(values, digits: int = 4):
    """Nested lists of floats rounded to `digits` significant digits, for results.json."""
    if isinstance(values, list):
        return [_significant(v, digits) for v in values]
    return float(f"{values:.{digits}g}")


def _fingerprint(ids: torch.Tensor) -> str:
    return hashlib.sha256(ids.numpy().astype("<i4").tobytes()).hexdigest()[:16]


def band_setting(method: str) -> str | None:
    """The settings key of a band method's pairs ("band" for the band test,
    "control_band" for its control); None for a method that is no band test."""
    rope_type, params = METHODS[method]
    return params.get("band", "band") if rope_type == "band" else None


def _band(settings: dict, method: str):
    """The pairs [first, stop) a band method divides (settings["band"] otherwise)."""
    return settings.get(band_setting(method) or "band", settings["band"])


def _rope_settings(
    method: str, factor, L: int, seq_len: int | None = None, band=None, config=None
) -> tuple[str, dict]:
    """(rope_type, params) of a method at a factor, with L as the training length (quick
    pretends a shorter one); seq_len: dynamic NTK's frequencies are those for seq_len
    tokens, whatever the length it reads (default: the length it reads). The band test
    (rope_type "band") needs its band and the model's config (head_dim, rope_base): its
    params are explicit frequencies, {"inv_freq": ...} (Llama.set_rope)."""
    rope_type, params = METHODS[method]
    if rope_type == "logn":
        return "default", {"logn_length": L}
    if rope_type == "band":
        inv_freq, _ = rope_frequencies("default", config.head_dim, config.rope_base)
        return "default", {"inv_freq": band_interpolated(inv_freq, band, factor)}
    params = dict(params)
    if method not in FACTORLESS:
        params["factor"] = float(factor)
        if rope_type == "dynamic":
            params["max_position_embeddings"] = L
            if seq_len is not None:
                params["seq_len"] = seq_len
        elif rope_type in ("yarn", "llama3"):
            params["original_max_position_embeddings"] = L
    return rope_type, params


def method_frequencies(
    method: str, factor, training_length: int, head_dim: int, base: float, band=None
) -> torch.Tensor:
    """The frequencies theta'_i (float32 [head_dim/2]) a method of METHODS uses at a factor
    for a model of head_dim and base trained on training_length tokens, set as the
    experiment sets them (dynamic NTK: on factor * training_length tokens); for any model,
    e.g. the lab's (32, 10,000, L = 64). With pairs.reach_table: the per-pair reach."""
    config = SimpleNamespace(head_dim=head_dim, rope_base=base)
    seq_len = round(factor * training_length)
    rope_type, params = _rope_settings(
        method, factor, training_length, seq_len, band, config
    )
    if "inv_freq" in params:
        return params["inv_freq"]
    params.pop("logn_length", None)  # log-n scaling leaves the frequencies alone
    return rope_frequencies(rope_type, head_dim, base, **params)[0]


def _cost(length: int, window: Window | None = None) -> float:
    """A forward pass's seconds, about, on 2 idle threads here: n (a + b n) for the linear
    layers and the attention, fitted to 160 s at 16,384 tokens and 530 s at 32,768 (it
    gives 54 s at 8,192, measured 53; for the progress bar's ETA). With a window (a
    masked forward, model.Window): n a + c K, K the query-key scores its blocks form,
    about n min(n, block + recent), a block with sinks outside its window counted 1.5
    times (its query and keys are twice as wide)."""
    if window is None:
        return length * (3.4e-3 + 3.9e-7 * length)
    scores = 0.0
    for a in range(0, length, window.block):
        e, lo = min(a + window.block, length), max(0, a - window.recent + 1)
        wide = window.sinks and e - 1 - window.recent >= 0
        scores += (e - a) * (e - lo + window.sinks * wide) * (1.5 if wide else 1.0)
    return length * 3.4e-3 + MASKED_SECONDS_PER_SCORE * scores


MASKED_SECONDS_PER_SCORE = 1.0e-6
"""_cost's c: seconds per query-key score of a masked forward, all layers and heads (a
fused causal forward: 2 b = 7.8e-7 per score), from 8,192-token forwards timed on the busy
machine (benchmarks/bench_windowed.py): the window alone 1.22 times the plain forward's
CPU seconds, StreamingLLM 1.30 times, scaled to the plain forward's 54 idle seconds."""


# --- the parts: each function computes one unit ----------------------------------------------


def loss_unit(model, tokens, bucket: int, keys: dict, entropy=None) -> dict:
    """{key: {"bucket_loss"}} for keys {length: key}: one forward pass over tokens (the
    longest length), each length's buckets from its first positions. The model is causal
    and a static method's frequencies do not depend on the window's length, so the first
    n positions of a longer window have exactly the losses of a window of n tokens (up to
    float round-off, tests/lib/test_pretrained.py).

    entropy: settings "entropy" ({"points", "queries"}) to measure, on the same forward
    pass, each layer's attention entropy and logit spread at every point up to the
    window's length (attention_entropy.attention_stats): the first key's value gets
    "entropy": {"points", "entropy", "logit_std": [layer][point][head]}."""
    stats = {}
    device = model.embedding.weight.device
    if entropy is None:
        losses = model.token_losses(tokens.to(device)).cpu()
    else:
        points = [p for p in entropy["points"] if p <= len(tokens)]

        def probe(layer, q, k):
            stats[layer] = attention_stats(q, k, points, entropy["queries"])

        with model.observing(probe):
            losses = model.token_losses(tokens.to(device)).cpu()
    values = {
        key: {"bucket_loss": bucket_means(losses[: length - 1], bucket)}
        for length, key in keys.items()
    }
    if stats:
        layers = [stats[i] for i in sorted(stats)]
        values[next(iter(keys.values()))]["entropy"] = {"points": points} | {
            name: _significant([layer[name].tolist() for layer in layers])
            for name in ("entropy", "logit_std")
        }
    return values


def windowed_unit(model, tokens, bucket: int, window: Window) -> dict:
    """{"bucket_loss"}: one forward pass over tokens, each query attending to its window's
    keys only (model.Window: StreamingLLM's sinks and recent keys, or a sliding window)."""
    losses = model.token_losses(tokens.to(model.embedding.weight.device), window=window)
    return {"bucket_loss": bucket_means(losses.cpu(), bucket)}


def sliding_unit(model, tokens, L: int, bucket: int) -> dict:
    """The in-distribution reference past L (the PI paper's sliding-window evaluation):
    windows of L tokens ending at 1.5L, 2L, ... len(tokens), each scoring its last L/2
    targets, so that each position m >= L - 1 of tokens is scored once, with L/2 to L - 1
    tokens of context, at offsets seen in training. {"buckets": the buckets b of
    positions (bucket b: b * bucket <= m < (b + 1) * bucket) from L on, "bucket_loss":
    their mean losses, as a loss unit's buckets of the same window, "ends"}."""
    losses = torch.full((len(tokens) - 1,), float("nan"))  # by query position m
    ends = list(range(L + L // 2, len(tokens) + 1, L // 2))
    device = model.embedding.weight.device
    for end in ends:
        scored = model.token_losses(tokens[end - L : end].to(device)).cpu()
        losses[end - L // 2 - 1 : end - 1] = scored[-(L // 2) :]
    first = -(-L // bucket)  # the first bucket that begins at L or later
    means = bucket_means(losses[first * bucket :], bucket)
    return {
        "buckets": list(range(first, first + len(means))),
        "bucket_loss": means,
        "ends": ends,
    }


def passkey_unit(model, tokenizer, length: int, depth: float, key: int) -> dict:
    prompt, answer = passkey_prompt(tokenizer, length, depth, key)
    said = greedy_answer(model, prompt, answer)
    return {
        "retrieved": torch.equal(said, answer),
        "key": key,
        "said": tokenizer.decode(said),
        "tokens": len(prompt) + len(answer),
    }


def _mean_over_windows(model, windows, measure) -> list:
    """[measure(q, k) for every layer], averaged over the windows."""
    per_window = [
        [measure(q, k) for _, q, k in model.layer_qk(tokens)] for tokens in windows
    ]
    return _significant(np.mean(np.array(per_window, dtype=float), 0).tolist())


def pairs_unit(model, windows) -> dict:
    config, layout = model.config, model.layout
    sizes = _mean_over_windows(
        model,
        windows,
        lambda q, k: [pair_rms(q, layout).tolist(), pair_rms(k, layout).tolist()],
    )
    return {
        "pairs": {
            "wavelength": _significant(wavelengths(config.head_dim, config.rope_base)),
            "q_rms": [layer[0] for layer in sizes],
            "k_rms": [layer[1] for layer in sizes],
        }
    }


def attention_unit(model, windows) -> dict:
    """Decay and sinks from one pass: each layer's attention weights are formed once."""

    def measure(q, k):
        weights = attention_weights(q, k)
        return (
            decay_by_distance(weights)["mean_weight"],
            sink_share(weights)[0].tolist(),
            float(sink_share(weights, 4).mean()),
            decay_by_distance(without_first_token(weights))["mean_weight"],
        )

    per_window = [
        [measure(q, k) for _, q, k in model.layer_qk(tokens)] for tokens in windows
    ]

    def mean(part: int) -> list:
        table = [[layer[part] for layer in window] for window in per_window]
        return _significant(np.mean(np.array(table, dtype=float), 0).tolist())

    uniform = uniform_attention(windows[0].shape[-1])
    by_head = mean(1)
    uniform_without_first = decay_by_distance(without_first_token(uniform))
    return {
        "decay": {
            "edges": decay_by_distance(uniform)["edges"],
            "mean_weight": mean(0),
            "uniform": _significant(decay_by_distance(uniform)["mean_weight"]),
            "mean_weight_without_first": mean(3),
            "uniform_without_first": _significant(uniform_without_first["mean_weight"]),
        },
        "sinks": {
            "first_token": _significant(np.mean(by_head, 1).tolist()),
            "first_4_tokens": mean(2),
            "first_token_by_head": by_head,
            "uniform_first_token": _significant(float(sink_share(uniform))),
            "uniform_first_4_tokens": _significant(float(sink_share(uniform, 4))),
        },
    }


PROBES = ("pairs", "decay", "sinks")
"""The parts measured on the probe windows: pairs in one pass, decay and sinks in another."""


# --- the run ----------------------------------------------------------------------------------


BASIS = ("training_length", "bucket", "offset", "probe")
"""The settings a unit's value depends on, besides its key and its window's start: a
results.json made with others is refused; one made with other lists of units (a cut plan)
is resumed, without the loss units whose window now begins elsewhere."""


def _stored(results_path: Path, header: dict, settings: dict) -> dict:
    """The units that results_path already holds (a resumed run) and that the plan in
    settings still has, if results_path was made from the same model, text and BASIS."""
    if not results_path.is_file():
        return {}
    stored = json.loads(results_path.read_text())
    same = [stored.get(k) == header[k] for k in ("model", "source", "quick")]
    same += [stored["settings"].get(k) == settings[k] for k in BASIS]
    if not all(same):
        raise ValueError(
            f"{results_path} was made with other settings or another text; "
            "choose another --out or delete it"
        )
    before, now = stored["settings"].get("window_starts", []), settings["window_starts"]
    moved = {w for w in range(len(now)) if w >= len(before) or before[w] != now[w]}
    old = stored["settings"]
    kept = {  # the settings the band test's and the windowed units' values depend on
        name: old.get(name) == settings.get(name) for name in ("band", "control_band")
    } | {
        "windowed": _but_count(old.get("windowed")) == _but_count(settings["windowed"]),
    }
    loss = {
        unit_key(*u)
        for u in settings["units"]
        if u[3] not in moved and kept.get(band_setting(u[0]), True)
    }
    loss -= _without_entropy(stored.get("units", {}), old.get("entropy"), settings)
    windowed = {
        windowed_key(*u)
        for u in settings["windowed_units"]
        if u[2] not in moved and kept["windowed"]
    }
    keys = {passkey_key(*u) for u in settings["passkey_units"]}
    return {part: stored[part] for part in PROBES if _complete(stored, part)} | {
        "units": _kept(stored, "units", loss),
        "passkey": {"units": _kept(stored.get("passkey", {}), "units", keys)},
        "windowed": {"units": _kept(stored.get("windowed", {}), "units", windowed)},
    }


def _without_entropy(units: dict, before: dict | None, settings: dict) -> set:
    """The stored loss units of settings "entropy"'s methods that lack the entropy this
    plan measures (none yet, or other points): they run again, and the units read from
    the same pass with them."""
    now = settings["entropy"]
    same = before is not None and all(
        before.get(k) == now[k] for k in ("points", "queries")
    )
    missing = {
        key
        for key, unit in units.items()
        if _measures_entropy(settings, key.split("/")[0], key.split("/")[1][1:])
        and "from" not in unit
        and not (same and "entropy" in unit)
    }
    return missing | {k for k, u in units.items() if u.get("from") in missing}


def _but_count(windowed: dict | None) -> dict | None:
    """Settings "windowed" without its count of windows (which moves no unit)."""
    return windowed and {k: v for k, v in windowed.items() if k != "windows"}


def _kept(stored: dict, part: str, keys: set) -> dict:
    return {k: v for k, v in stored.get(part, {}).items() if k in keys}


FIELDS = {"decay": ("mean_weight_without_first", "uniform_without_first")}
"""Fields of a probe part that an older results.json may lack: the part is run again."""


def _complete(stored: dict, part: str) -> bool:
    return part in stored and all(f in stored[part] for f in FIELDS.get(part, ()))


class Unit(NamedTuple):
    """One unit of work, one forward pass or a few: compute() -> {key: value} for every
    key of keys, stored as store[key]; the first key carries the seconds."""

    store: dict
    keys: tuple[str, ...]
    cost: float  # about its seconds on an idle machine (the progress bar's weight)
    rope: tuple[str, dict]  # the rope settings it runs with (_rope_settings)
    compute: Callable[[], dict]


def _write(results: dict, results_path: Path) -> None:
    results["summary"] = summarize(results)
    results["passkey"]["summary"] = summarize_passkey(results["passkey"]["units"])
    parts = {
        "loss": list(results["units"].values()),
        "passkey": list(results["passkey"]["units"].values()),
        "windowed": list(results["windowed"]["units"].values()),
    } | {part: [results[part]] for part in PROBES if part in results}
    for name in ("seconds", "cpu_seconds"):
        results[name] = {
            part: round(sum(unit.get(name, 0.0) for unit in units), 1)
            for part, units in parts.items()
        }
    tmp = results_path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    tmp.replace(results_path)  # a reader never sees half a file


def _loss_units(settings, results, model, ids) -> list[Unit]:
    """The loss units: one forward pass per method, factor and window at the longest length
    it runs at; a method whose frequencies do not depend on the length (every one but
    dynamic NTK) reads its shorter lengths from that pass's first positions. Dynamic NTK at
    factor s has the frequencies it has on s L tokens, on a shorter window too
    ("inside_L")."""
    L, bucket = settings["training_length"], settings["bucket"]
    longest, count = _span(settings)
    passes: dict = {}  # (method, factor, window[, length]) -> {length: key}
    for method, factor, n, w in settings["units"]:
        static = METHODS[method][0] != "dynamic"
        group = (method, factor, w) if static else (method, factor, w, n)
        passes.setdefault(group, {})[n] = unit_key(method, factor, n, w)
    units = []
    for (method, factor, w, *_), keys in passes.items():
        n = max(keys)
        tokens = text_windows(ids, n, count, span=longest)[w]
        keys = dict(sorted(keys.items(), reverse=True))  # the longest first
        measure = None
        if _measures_entropy(settings, method, factor):
            measure = settings["entropy"]
        compute = partial(loss_unit, model, tokens, bucket, keys, measure)
        band = _band(settings, method)
        rope = _rope_settings(method, factor, L, factor * L, band, model.config)
        store = results["units"]
        units.append(Unit(store, tuple(keys.values()), _cost(n), rope, compute))
    return units


def _span(settings) -> tuple[int, int]:
    """(span, count): every text window of every length begins where count windows of
    span tokens would (text.window_starts), span the longest length of the plan."""
    L, windowed = settings["training_length"], settings["windowed"]
    lengths = [_stage_length(s, L) for s in settings["stages"]]
    lengths += [round(L * x) for x in windowed["lengths"].values()]
    counts = [max(s["windows"].values()) for s in settings["stages"]]
    return max(lengths), max(counts + [windowed["windows"]])


def _windowed_units(settings, results, model, ids) -> list[Unit]:
    """Plain RoPE with every offset below L: StreamingLLM (sinks + the recent L - sinks
    keys), its control without sinks (the recent L keys), and the sliding reference."""
    L, bucket = settings["training_length"], settings["bucket"]
    sinks = settings["windowed"]["sinks"]
    windows = {
        "streaming": Window(L - sinks, sinks),
        "window_only": Window(L),
    }
    span, count = _span(settings)
    units = []
    for name, n, w in settings["windowed_units"]:
        tokens = text_windows(ids, n, count, span=span)[w]
        if name == "sliding":
            compute = partial(sliding_unit, model, tokens, L, bucket)
            cost = _cost(L) * (2 * n // L - 2)
        else:
            compute = partial(windowed_unit, model, tokens, bucket, windows[name])
            cost = _cost(n, windows[name])
        key = windowed_key(name, n, w)
        compute = partial(_keyed, key, compute)
        store = results["windowed"]["units"]
        units.append(Unit(store, (key,), cost, ("default", {}), compute))
    return units


def _keyed(key: str, compute: Callable[[], dict]) -> dict:
    return {key: compute()}


def _todo(settings, results, model, tokenizer, ids) -> list[Unit]:
    """The units of the plan in settings that results does not hold yet, cheapest first
    (an interrupted run then has the most units)."""
    probe, offset = settings["probe"], settings["offset"]
    device = model.embedding.weight.device
    windows = [
        w.to(device) for w in text_windows(ids, probe["length"], probe["windows"])
    ]
    cost, plain = _cost(probe["length"]) * probe["windows"], ("default", {})
    units = [
        Unit(results, ("pairs",), cost, plain, partial(pairs_unit, model, windows)),
        Unit(
            results,
            ("decay", "sinks"),
            2 * cost,
            plain,
            partial(attention_unit, model, windows),
        ),
    ]
    units += _loss_units(settings, results, model, ids)
    units += _windowed_units(settings, results, model, ids)
    for method, factor, n, depth, trial in settings["passkey_units"]:
        # the same key for every method; another --offset draws other keys
        number = passkey_number(f"{offset}/{n}/{depth}/{trial}")
        key = passkey_key(method, factor, n, depth, trial)

        def compute(n=n, depth=depth, number=number, key=key):
            return {key: passkey_unit(model, tokenizer, n, depth, number)}

        store = results["passkey"]["units"]
        L, band = settings["training_length"], _band(settings, method)
        rope = _rope_settings(method, factor, L, None, band, model.config)
        units.append(Unit(store, (key,), _cost(n), rope, compute))
    missing = (u for u in units if any(key not in u.store for key in u.keys))
    return sorted(missing, key=lambda u: u.cost)


def run(
    out_dir,
    quick: bool = False,
    device: str = "cpu",
    quiet: bool = False,
    offset: int = 0,
    windows: int | None = None,
    jobs: int = 1,
) -> dict:
    """Evaluate every unit of plan(quick) not yet in out_dir/results.json; return results.

    offset: the text is read from its token `offset` on, wrapping around to its start, so
    that every window is another stretch of the same documentation. windows: that many
    loss windows per method and factor (plan). jobs: units run in that many processes
    side by side, each with torch's threads / jobs threads (a forward pass scales poorly
    past one thread here: two one-thread jobs do about 1.4 times the work of one
    two-thread job); the costliest first, so that none is left alone at the end.
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be an int >= 0, got {offset!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be an int >= 1, got {jobs!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    basis = (quick, device, offset, windows)
    model, tokenizer, ids, settings, header = _setup(*basis)
    results = {"units": {}, "passkey": {"units": {}}, "windowed": {"units": {}}}
    results.update(_stored(results_path, header, settings) | header)
    todo = _todo(settings, results, model, tokenizer, ids)
    start = time.perf_counter()
    if jobs > 1 and len(todo) > 1:
        threads = max(1, torch.get_num_threads() // jobs)
        _evaluate_side_by_side(todo, results, results_path, quiet, jobs, basis, threads)
    else:
        _evaluate(todo, model, results, results_path, quiet)
    results["wall_seconds"] = time.perf_counter() - start
    return results


def _setup(quick: bool, device: str, offset: int, windows):
    """(model, tokenizer, ids, settings, header) of a run: the same in every job."""
    path = smollm2_path()
    model = Llama.from_gguf(path).to(device)
    tokenizer = load_tokenizer(path)
    text = documentation_tokens(tokenizer)
    ids = torch.roll(text, -(offset % len(text)))
    settings = plan(quick, model.config.context_length, offset, windows)
    settings["window_starts"] = window_starts(len(ids), *_span(settings))
    header = {
        "model": path.name,
        "source": text_source()
        | {"tokens": len(text), "sha256_16": _fingerprint(text)},
        "settings": {k: v for k, v in settings.items() if not k.endswith("units")},
        "quick": quick,
    }
    return model, tokenizer, ids, settings, header


def _compute(unit: Unit, model) -> dict:
    """{key: value} for each of the unit's keys, run with its rope settings; the first
    key carries the seconds, the others say where they came from."""
    rope_type, params = unit.rope
    params = dict(params)
    model.set_logn(params.pop("logn_length", None))
    model.set_rope(rope_type, **params)
    begun, cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        values = unit.compute()
    spent = {
        "seconds": round(time.perf_counter() - begun, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
    }
    stored = {}
    for key in unit.keys:
        stored[key] = values[key] | spent
        spent = {"seconds": 0.0, "cpu_seconds": 0.0, "from": unit.keys[0]}
    return stored


def _bar(todo: list[Unit], quiet: bool):
    from tqdm.auto import tqdm

    return tqdm(
        total=sum(unit.cost for unit in todo),
        disable=quiet,
        desc="SmolLM2 experiments",
        bar_format="{l_bar}{bar}| [{elapsed}<{remaining}] {postfix}",
    )


def _evaluate(todo: list[Unit], model, results, results_path: Path, quiet: bool):
    """Run the units in order, each with its rope settings, writing results.json after
    each; a progress bar weighted by the units' costs."""
    bar = _bar(todo, quiet)
    for unit in todo:
        bar.set_postfix_str(unit.keys[0])
        for key, value in _compute(unit, model).items():
            unit.store[key] = value
        _write(results, results_path)
        bar.update(unit.cost)
    bar.close()
    _write(results, results_path)


_JOB: dict = {}
"""A job process's own model and units (_job_start), by their first key."""


def _job_start(basis: tuple, threads: int) -> None:
    torch.set_num_threads(threads)
    model, tokenizer, ids, settings, _header = _setup(*basis)
    empty = {"units": {}, "passkey": {"units": {}}, "windowed": {"units": {}}}
    _JOB["model"] = model
    _JOB["units"] = {
        u.keys[0]: u for u in _todo(settings, empty, model, tokenizer, ids)
    }


def _job_unit(key: str) -> dict:
    return _compute(_JOB["units"][key], _JOB["model"])


def _evaluate_side_by_side(todo, results, results_path, quiet, jobs, basis, threads):
    """_evaluate with the units spread over `jobs` processes (spawned: each loads the
    model and makes the same plan), the costliest first; results.json is written by
    this process after each unit, as _evaluate does."""
    import multiprocessing

    by_key = {unit.keys[0]: unit for unit in todo}
    order = sorted(by_key, key=lambda k: -by_key[k].cost)
    bar = _bar(todo, quiet)
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, _job_start, (basis, threads)) as pool:
        for stored in pool.imap_unordered(_job_unit, order):
            unit = by_key[next(iter(stored))]
            for key, value in stored.items():
                unit.store[key] = value
            _write(results, results_path)
            bar.set_postfix_str(unit.keys[0])
            bar.update(unit.cost)
    bar.close()
    _write(results, results_path)


def _same_stage(a: dict, b: dict) -> bool:
    """Do two stages of a plan read the same windows (factor and length)?"""
    return (a["factor"], a.get("length")) == (b["factor"], b.get("length"))


def add_units(out_dir, methods, device: str = "cpu", quiet: bool = False) -> dict:
    """Run only the loss units of `methods` (e.g. ["pi_band_control"]) that
    out_dir/results.json lacks, on the windows, offset and text it was made with, and add
    them (and their summary, and the settings they depend on) to it: every number already
    there stays as it is. For a probe added to the plan after a run (python -m
    rope_lib.pretrained --out DIR --only METHOD ...), without running again what a plan
    change would (the attention study, say)."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"methods must be names of METHODS, got {unknown}")
    path = Path(out_dir) / "results.json"
    results = json.loads(path.read_text())
    old = results["settings"]
    windows = max(max(s["windows"].values()) for s in old["stages"])
    basis = (results["quick"], device, old["offset"], windows)
    model, _, ids, settings, header = _setup(*basis)
    same = [results[k] == header[k] for k in ("model", "source", "quick")]
    if not all(same) or settings["window_starts"] != old["window_starts"]:
        raise ValueError(f"{path} was made from another model, text or windows")
    units = [
        u
        for u in _loss_units(settings, results, model, ids)
        if u.keys[0].split("/")[0] in methods and u.keys[0] not in results["units"]
    ]
    for unit in units:
        if not quiet:
            print(f"{unit.keys[0]}: about {unit.cost:.0f} s on two idle threads")
        results["units"].update(_compute(unit, model))
    for method in methods:
        name = band_setting(method)
        if name is not None:
            old[name] = settings[name]
        for before in old["stages"]:  # the stored run's stages (an older plan: fewer)
            now = [s for s in settings["stages"] if _same_stage(s, before)]
            if now and method in now[0]["windows"]:
                before["windows"][method] = now[0]["windows"][method]
    results["summary"] = summarize(results)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    return results
