"""Loss per position past the training length, on real text, zero-shot (no fine-tune).

    run(out_dir, quick=False, device="cpu") -> results, also written to out_dir/results.json

SmolLM2-135M was trained on 8,192 tokens (L). For each method below, at factor s, windows of
s * L tokens of Python's documentation are run through the model and the next-token loss of
every position is kept as the mean over buckets of positions (2,048 wide): the plain model's
loss should rise past L, the extension methods should hold it (or pay for it everywhere).
Plain RoPE runs on the same windows as the methods (FULL says which methods and how many
windows at each factor). Every method is set on the model with rope_frequencies' names
(METHODS); dynamic NTK recomputes its base for the window's length.

Resumable: each (method, factor, length, window) is one unit, written to results.json as soon
as it is done; a second run with the same --out skips the units already there. The text's
token ids are fingerprinted: a results.json made from another text (another Python's
documentation) is refused rather than mixed.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np
import torch

from .gguf import load_tokenizer, smollm2_path
from .model import Llama
from .text import documentation_tokens, text_source, text_windows

METHODS = {
    # name: (rope_type, parameters besides factor; L is filled in by Llama.set_rope)
    "plain": ("default", {}),
    "pi": ("linear", {}),  # Position Interpolation (Chen et al. 2023)
    "ntk": ("ntk", {}),  # NTK-aware base change (bloc97 2023)
    "dynamic_ntk": ("dynamic", {}),  # dynamic NTK (emozilla 2023)
    "yarn": (
        "yarn",
        {},
    ),  # YaRN with its attention factor 0.1 ln s + 1 (Peng et al. 2023)
    "yarn_no_attention_factor": ("yarn", {"attention_factor": 1.0}),
    "llama3": (
        "llama3",
        {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
    ),  # Llama 3.1
}

ALL = list(METHODS)
FULL = {
    "stages": [  # each stage: windows of factor * L tokens; plain RoPE runs in every stage
        {"factor": 2, "methods": ALL, "windows": 3},
        {
            "factor": 4,
            "methods": ["plain", "dynamic_ntk", "yarn", "llama3"],
            "windows": 1,
        },
    ],
    "bucket": 2048,
    "training_length": None,  # the model's own: 8,192
}
"""The full run, sized for about 45 minutes on 2 CPU cores. Measured cost per window
(transformers, 2 threads): about 70 s at 16,384 tokens; attention grows with the square of
the length, so about 4 minutes at 32,768 (estimated): 21 windows at 2x (25 min) and 4 at 4x
(about 15 min). Every method at 4x with 3 windows would take about 100 minutes."""

QUICK = {
    "stages": [{"factor": 2, "methods": ALL, "windows": 2}],
    "bucket": 16,
    "training_length": 32,
}
"""quick: 2 windows; the training length L is pretended to be 32 tokens (the frequencies
are set as if the model had been trained on 32), so that windows of 64 tokens exercise
every step of the full run in seconds. Its numbers say nothing about the model."""


def plan(quick: bool, training_length: int) -> dict:
    """The settings and the list of units [method, factor, length, window] to evaluate."""
    settings = json.loads(json.dumps(QUICK if quick else FULL))  # a deep copy
    L = settings["training_length"] = settings["training_length"] or training_length
    settings["units"] = [
        [method, 1 if method == "plain" else stage["factor"], L * stage["factor"], w]
        for stage in settings["stages"]
        for w in range(stage["windows"])
        for method in stage["methods"]
    ]
    return settings


def unit_key(method: str, factor: float, length: int, window: int) -> str:
    return f"{method}/x{factor}/{length}/window{window}"


def bucket_means(losses: torch.Tensor, bucket: int) -> list[float]:
    """Mean of losses [n] over consecutive buckets of `bucket` positions (the last may be
    shorter)."""
    return [
        float(losses[i : i + bucket].double().mean())
        for i in range(0, len(losses), bucket)
    ]


def _fingerprint(ids: torch.Tensor) -> str:
    return hashlib.sha256(ids.numpy().astype("<i4").tobytes()).hexdigest()[:16]


def _progress(total: int, quiet: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=quiet, unit="window", desc="loss by position")


def summarize(results: dict) -> dict:
    """For each (method, factor, length): per bucket, mean, std, min, max over windows."""
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


def _stored_units(results_path: Path, header: dict) -> dict:
    """The units already in results_path (a resumed run), if it was made with header."""
    if not results_path.is_file():
        return {}
    stored = json.loads(results_path.read_text())
    if {k: stored.get(k) for k in header} != header:
        raise ValueError(
            f"{results_path} was made with other settings or another text; "
            "choose another --out or delete it"
        )
    return stored.get("units", {})


def _rope_settings(method: str, factor, L: int) -> tuple[str, dict]:
    """(rope_type, params) of a method at a factor, with L as the training length (quick
    pretends a shorter one)."""
    rope_type, params = METHODS[method]
    params = dict(params)
    if method != "plain":
        params["factor"] = float(factor)
        if rope_type == "dynamic":
            params["max_position_embeddings"] = L
        elif rope_type in ("yarn", "llama3"):
            params["original_max_position_embeddings"] = L
    return rope_type, params


def run(out_dir, quick: bool = False, device: str = "cpu", quiet: bool = False) -> dict:
    """Evaluate every unit of plan(quick) not yet in out_dir/results.json; return results."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results_path = out / "results.json"
    path = smollm2_path()
    model = Llama.from_gguf(path).to(device)
    ids = documentation_tokens(load_tokenizer(path))
    settings = plan(quick, model.config.context_length)
    L = settings["training_length"]
    header = {
        "model": path.name,
        "source": text_source() | {"tokens": len(ids), "sha256_16": _fingerprint(ids)},
        "settings": {k: v for k, v in settings.items() if k != "units"},
        "quick": quick,
    }
    results = {**header, "units": _stored_units(results_path, header)}
    todo = [u for u in settings["units"] if unit_key(*u) not in results["units"]]
    windows = {
        L * stage["factor"]: text_windows(ids, L * stage["factor"], stage["windows"])
        for stage in settings["stages"]
    }
    bar = _progress(len(settings["units"]), quiet)
    bar.update(len(settings["units"]) - len(todo))
    start = time.perf_counter()
    for method, factor, length, window in todo:
        rope_type, params = _rope_settings(method, factor, L)
        model.set_rope(rope_type, **params)
        bar.set_postfix_str(f"{method} x{factor} {length}")
        tokens = windows[length][window].to(device)
        begun = time.perf_counter()
        with torch.inference_mode():
            losses = model.token_losses(tokens).cpu()
        results["units"][unit_key(method, factor, length, window)] = {
            "bucket_loss": bucket_means(losses, settings["bucket"]),
            "seconds": round(time.perf_counter() - begun, 1),
        }
        results["summary"] = summarize(results)
        tmp = results_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        tmp.replace(results_path)  # a reader never sees half a file
        bar.update(1)
    bar.close()
    results["summary"] = summarize(results)
    results_path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    results["wall_seconds"] = time.perf_counter() - start
    return results
