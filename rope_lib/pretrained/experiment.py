"""SmolLM2-135M on real text, zero-shot (no fine-tune): past its training length, and inside.

    run(out_dir, quick=False, device="cpu", offset=0) -> results, also out_dir/results.json

SmolLM2-135M was trained on 8,192 tokens (L). Four parts, each made of units (one forward pass
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
         L, for about a tenth of the time.
passkey  Passkey retrieval (passkey.py): is the key said back by greedy decoding, by prompt
         length, depth of the key and method.
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
    summary       loss: {"<method>/x<factor>/<length>": {"windows": count, "mean", "std",
                         "min", "max": [per bucket, over the windows]}}
    passkey       {"units": {"<method>/x<factor>/<length>/depth<d>/trial<t>":
                         {"retrieved": bool, "key": int, "said": the greedy answer's text up
                          to its first wrong token, "tokens": prompt + answer, "seconds",
                          "cpu_seconds"}},
                   "summary": {"<method>/x<factor>/<length>": {"depths": [d ...],
                         "retrieved": [share of trials retrieved, per depth]}}}
    pairs         {"wavelength": [2 pi / theta_i, per pair i], "q_rms", "k_rms":
                   [per layer [per pair]], "seconds", "cpu_seconds"}  (theta_i = b^(-2i/d))
    decay         {"edges": distance bin edges (bin b: edges[b] <= m - n < edges[b+1]),
                   "mean_weight": [per layer [per bin]], "uniform": [per bin], "seconds",
                   "cpu_seconds"}
    sinks         {"first_token", "first_4_tokens": [per layer, mean over heads],
                   "first_token_by_head": [per layer [per head]], "uniform_first_token",
                   "uniform_first_4_tokens": what evenly spread attention gives, "from":
                   "decay" (the same pass)}
    seconds       the sum of the units' wall seconds per part (loss, passkey, pairs, decay,
                  sinks); cpu_seconds the same for the process's CPU time (all threads),
                  which a busy machine stretches less than the wall time
pairs, decay and sinks are means over the probe windows. Every part that has not run yet is
absent (a run in progress), or empty.

Resumable: a second run with the same --out skips the units already there (and drops those
its plan no longer has). The text's token ids are fingerprinted: a results.json made from
another text (another Python's documentation) or with other BASIS settings (another --offset)
is refused rather than mixed; a loss unit whose window begins elsewhere in the new plan (more
windows, or longer ones) is run again.
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import partial
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import torch

from .attention_maps import (
    attention_weights,
    decay_by_distance,
    sink_share,
    uniform_attention,
)
from .gguf import load_tokenizer, smollm2_path
from .model import Llama
from .pairs import pair_rms, wavelengths
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
}

ALL = list(METHODS)
EXTENDED = ["plain", "dynamic_ntk", "yarn"]
FULL = {
    "stages": [  # loss: windows of factor * L tokens, how many for each method
        {"factor": 2, "windows": dict.fromkeys(ALL, 1)},
        {
            "factor": 4,
            "windows": dict.fromkeys(EXTENDED, 1),
            "inside_L": ["dynamic_ntk"],  # 56 s instead of about 500: inside L
        },
    ],
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
units) in the committed run. Each more window adds about 32 minutes."""

QUICK = {
    "stages": [
        {"factor": 2, "windows": dict.fromkeys(ALL, 2)},
        {
            "factor": 4,
            "windows": dict.fromkeys(EXTENDED, 2),
            "inside_L": ["dynamic_ntk"],
        },
    ],
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
    the loss, "passkey_units" [method, factor, length, depth, trial]. windows: that many
    loss windows per method and factor instead of the plan's (more: a spread, and time)."""
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
            1 if method == "plain" else stage["factor"],
            L if method in stage.get("inside_L", ()) else L * stage["factor"],
            w,
        ]
        for stage in settings["stages"]
        for w in range(max(stage["windows"].values()))
        for method, count in stage["windows"].items()
        if w < count
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


def unit_key(method: str, factor: float, length: int, window: int) -> str:
    return f"{method}/x{factor}/{length}/window{window}"


def passkey_key(method, factor, length, depth, trial) -> str:
    return f"{method}/x{factor}/{length}/depth{depth}/trial{trial}"


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


def _rope_settings(
    method: str, factor, L: int, seq_len: int | None = None
) -> tuple[str, dict]:
    """(rope_type, params) of a method at a factor, with L as the training length (quick
    pretends a shorter one); seq_len: dynamic NTK's frequencies are those for seq_len
    tokens, whatever the length it reads (default: the length it reads)."""
    rope_type, params = METHODS[method]
    params = dict(params)
    if method != "plain":
        params["factor"] = float(factor)
        if rope_type == "dynamic":
            params["max_position_embeddings"] = L
            if seq_len is not None:
                params["seq_len"] = seq_len
        elif rope_type in ("yarn", "llama3"):
            params["original_max_position_embeddings"] = L
    return rope_type, params


def _cost(length: int) -> float:
    """A forward pass's seconds, about, on 2 idle threads here: n (a + b n) for the linear
    layers and the attention, fitted to 160 s at 16,384 tokens and 530 s at 32,768 (it
    gives 54 s at 8,192, measured 53; for the progress bar's ETA)."""
    return length * (3.4e-3 + 3.9e-7 * length)


# --- the parts: each function computes one unit ----------------------------------------------


def loss_unit(model, tokens, bucket: int, keys: dict) -> dict:
    """{key: {"bucket_loss"}} for keys {length: key}: one forward pass over tokens (the
    longest length), each length's buckets from its first positions. The model is causal
    and a static method's frequencies do not depend on the window's length, so the first
    n positions of a longer window have exactly the losses of a window of n tokens (up to
    float round-off, tests/test_pretrained.py)."""
    losses = model.token_losses(tokens.to(model.embedding.weight.device)).cpu()
    return {
        key: {"bucket_loss": bucket_means(losses[: length - 1], bucket)}
        for length, key in keys.items()
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
        )

    per_window = [
        [measure(q, k) for _, q, k in model.layer_qk(tokens)] for tokens in windows
    ]

    def mean(part: int) -> list:
        table = [[layer[part] for layer in window] for window in per_window]
        return _significant(np.mean(np.array(table, dtype=float), 0).tolist())

    uniform = uniform_attention(windows[0].shape[-1])
    by_head = mean(1)
    return {
        "decay": {
            "edges": decay_by_distance(uniform)["edges"],
            "mean_weight": mean(0),
            "uniform": _significant(decay_by_distance(uniform)["mean_weight"]),
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
    loss = {unit_key(*u) for u in settings["units"] if u[3] not in moved}
    keys = {passkey_key(*u) for u in settings["passkey_units"]}
    passkey = stored.get("passkey", {}).get("units", {})
    return {part: stored[part] for part in PROBES if part in stored} | {
        "units": {k: v for k, v in stored.get("units", {}).items() if k in loss},
        "passkey": {"units": {k: v for k, v in passkey.items() if k in keys}},
    }


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
    longest = max(L * s["factor"] for s in settings["stages"])
    count = max(max(s["windows"].values()) for s in settings["stages"])
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
        compute = partial(loss_unit, model, tokens, bucket, keys)
        rope = _rope_settings(method, factor, L, seq_len=factor * L)
        store = results["units"]
        units.append(Unit(store, tuple(keys.values()), _cost(n), rope, compute))
    return units


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
    for method, factor, n, depth, trial in settings["passkey_units"]:
        # the same key for every method; another --offset draws other keys
        number = passkey_number(f"{offset}/{n}/{depth}/{trial}")
        key = passkey_key(method, factor, n, depth, trial)

        def compute(n=n, depth=depth, number=number, key=key):
            return {key: passkey_unit(model, tokenizer, n, depth, number)}

        store = results["passkey"]["units"]
        rope = _rope_settings(method, factor, settings["training_length"])
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
) -> dict:
    """Evaluate every unit of plan(quick) not yet in out_dir/results.json; return results.

    offset: the text is read from its token `offset` on, wrapping around to its start, so
    that every window is another stretch of the same documentation. windows: that many
    loss windows per method and factor (plan).
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be an int >= 0, got {offset!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    path = smollm2_path()
    model = Llama.from_gguf(path).to(device)
    tokenizer = load_tokenizer(path)
    text = documentation_tokens(tokenizer)
    ids = torch.roll(text, -(offset % len(text)))
    settings = plan(quick, model.config.context_length, offset, windows)
    L = settings["training_length"]
    stages = settings["stages"]
    settings["window_starts"] = window_starts(
        len(ids),
        max(L * s["factor"] for s in stages),
        max(max(s["windows"].values()) for s in stages),
    )
    header = {
        "model": path.name,
        "source": text_source()
        | {"tokens": len(text), "sha256_16": _fingerprint(text)},
        "settings": {k: v for k, v in settings.items() if not k.endswith("units")},
        "quick": quick,
    }
    results = {"units": {}, "passkey": {"units": {}}}
    results.update(_stored(results_path, header, settings) | header)
    todo = _todo(settings, results, model, tokenizer, ids)
    from tqdm.auto import tqdm

    bar = tqdm(
        total=sum(unit.cost for unit in todo),
        disable=quiet,
        desc="SmolLM2 experiments",
        bar_format="{l_bar}{bar}| [{elapsed}<{remaining}] {postfix}",
    )
    start = time.perf_counter()
    for unit in todo:
        rope_type, params = unit.rope
        model.set_rope(rope_type, **params)
        bar.set_postfix_str(unit.keys[0])
        begun, cpu = time.perf_counter(), time.process_time()
        with torch.inference_mode():
            values = unit.compute()
        spent = {
            "seconds": round(time.perf_counter() - begun, 1),
            "cpu_seconds": round(time.process_time() - cpu, 1),
        }
        for key in unit.keys:
            unit.store[key] = values[key] | spent
            spent = {"seconds": 0.0, "cpu_seconds": 0.0, "from": unit.keys[0]}
        _write(results, results_path)
        bar.update(unit.cost)
    bar.close()
    _write(results, results_path)
    results["wall_seconds"] = time.perf_counter() - start
    return results
