"""The lab's two experiments, run for several seeds, with resume and a results.json.

    run(out_dir, seed=0, quick=False) -> results (dict), also written to out_dir/results.json

1. Language modelling past the training length (ALiBi's Figure 1 in miniature): one model per
   scheme in SCHEMES, trained at length L, its mean loss measured over windows of L .. 8L.
   For the RoPE models, every scaling method of rope_frequencies at factors 2, 4, 8, applied
   at evaluation without any training (zero-shot).
2. Passkey retrieval: exact-match accuracy over a grid of lengths x depths, for every scheme,
   and for RoPE with PI and YaRN at factor 4 zero-shot and after a short fine-tune at 4L (as
   Position Interpolation's and YaRN's papers do), with "plain" RoPE fine-tuned as the control.

Each configuration is trained for seeds seed, seed+1, seed+2 (one seed with quick=True);
results.json keeps every seed's numbers and their mean, standard deviation, min and max.
Every trained model is saved in out_dir/checkpoints/ (with its configuration); a second run
loads what is there and trains only what is missing, so an interrupted run continues.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch

from ..scaling import rope_frequencies
from .data import KEY_DIGITS, VOCAB_SIZE, MarkovSource
from .model import SCHEMES
from .train import (
    build_model,
    evaluate_lm,
    evaluate_passkey,
    save_checkpoint,
    train,
)

METHODS = ("default", "linear", "ntk", "dynamic", "yarn", "llama3")
"""RoPE scaling methods evaluated zero-shot (rope_frequencies names; "default" = none)."""
FINETUNE_METHODS = ("default", "linear", "yarn")
"""RoPE models fine-tuned at FINETUNE_FACTOR x L: plain RoPE (the control), PI, YaRN."""
FACTORS = (2, 4, 8)
FINETUNE_FACTOR = 4


def make_config(seed: int = 0, quick: bool = False) -> dict:
    """Everything that defines a run; stored in results.json and in every checkpoint."""
    L = 64
    config = {
        "seed": seed,
        "seeds": [seed] if quick else [seed, seed + 1, seed + 2],
        "quick": quick,
        "train_length": L,
        "model": {"d_model": 64, "n_layers": 2, "n_heads": 4, "max_len": 8 * L},
        "vocab_size": VOCAB_SIZE,
        "key_digits": KEY_DIGITS,
        "train": {"steps": 500, "batch": 32, "lr": 3e-3},
        "finetune": {"steps": 60, "batch": 8, "lr": 1e-3, "factor": FINETUNE_FACTOR},
        "eval_lengths": [L, 2 * L, 4 * L, 8 * L],
        "lm_sequences": 16,
        "passkey_lengths": [L, 2 * L, 4 * L, 8 * L],
        "passkey_depths": [0.0, 0.25, 0.5, 0.75, 1.0],
        "passkey_keys": 16,
        "schemes": list(SCHEMES),
        "methods": list(METHODS),
        "factors": list(FACTORS),
        "finetune_methods": list(FINETUNE_METHODS),
    }
    if quick:
        config["train"]["steps"] = 120
        config["finetune"]["steps"] = 20
        config["eval_lengths"] = config["passkey_lengths"] = [L, 2 * L, 4 * L]
        config["lm_sequences"] = config["passkey_keys"] = 8
        config["passkey_depths"] = [0.0, 0.5, 1.0]
        config["factors"] = [2, 4]
    return config


def rope_scaling(method: str, factor: float, head_dim: int, L: int):
    """rope_for_length(length) -> (inv_freq, attention_factor) for a scaling method at a
    fixed factor; "dynamic" recomputes its base for each evaluated length, as it does when a
    model generates (transformers' dynamic NTK)."""
    params = {"factor": float(factor), "original_max_position_embeddings": L}
    if method == "default":
        return lambda length: None
    if method == "linear" or method == "ntk":
        fixed = rope_frequencies(method, head_dim, factor=float(factor))
        return lambda length: fixed
    if method == "dynamic":
        return lambda length: rope_frequencies(
            "dynamic",
            head_dim,
            factor=float(factor),
            max_position_embeddings=L,
            seq_len=length,
        )
    if method == "llama3":
        params.update(low_freq_factor=1.0, high_freq_factor=4.0)
    fixed = rope_frequencies(method, head_dim, **params)
    return lambda length: fixed


def summarize(per_seed: dict):
    """mean, std (over seeds, ddof=0), min, max of per-seed numbers, elementwise for nested
    dicts ({length: value}) and lists (grids)."""
    values = list(per_seed.values())
    first = values[0]
    if isinstance(first, dict):
        return {k: summarize({s: v[k] for s, v in per_seed.items()}) for k in first}
    array = np.array(values, dtype=np.float64)
    stats = {
        "mean": array.mean(0),
        "std": array.std(0),
        "min": array.min(0),
        "max": array.max(0),
    }
    return {
        k: (v.tolist() if isinstance(v, np.ndarray) else float(v))
        for k, v in stats.items()
    }


def _progress(total: int, quiet: bool):
    from tqdm.auto import tqdm

    return tqdm(
        total=total, unit="step", disable=quiet or total == 0, dynamic_ncols=True
    )


def _train_or_load(path: Path, model, tag: dict, bar, desc: str, **train_args):
    """Load the checkpoint at `path` when it was made with the same configuration `tag`,
    else train the model and save it. Returns (losses, trained_now)."""
    if path.exists():
        state = torch.load(path, map_location="cpu", weights_only=False)
        if state.get("tag") == tag:
            model.load_state_dict(state["state_dict"])
            model.eval()
            return list(state["losses"]), False
    bar.set_description(desc)
    losses = train(model, progress=bar, **train_args)
    save_checkpoint(path, model, losses, tag)
    return losses, True


def run(out_dir, seed: int = 0, quick: bool = False, quiet: bool = False) -> dict:
    """Train and evaluate everything (see module docstring); write results.json and figures.
    Returns the results, with results["trained"] = the models trained in this call."""
    out = Path(out_dir)
    lab = _Lab(make_config(seed, quick), out / "checkpoints")
    started = time.perf_counter()
    with _progress(lab.steps_to_train(), quiet) as lab.bar:
        for s in lab.config["seeds"]:
            source = MarkovSource(s)
            for scheme in SCHEMES:
                model = lab.base_model(scheme, source, s)
                if scheme == "rope":
                    lab.zero_shot_scaling(model, source, s)
                    lab.fine_tunes(model, source, s)
    results = lab.results()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(
        json.dumps(results, indent=1, sort_keys=True) + "\n"
    )
    from .figures import save_figures

    save_figures(results, out)
    results["trained"] = lab.trained
    results["wall_seconds"] = time.perf_counter() - started
    return results


class _Lab:
    """One run's state: its configuration, checkpoints, progress bar and the numbers so far."""

    def __init__(self, config: dict, checkpoints: Path):
        self.config, self.checkpoints = config, checkpoints
        self.L, self.mc = config["train_length"], config["model"]
        self.head_dim = self.mc["d_model"] // self.mc["n_heads"]
        self.tr, self.ft = config["train"], config["finetune"]
        self.bar = None
        self.trained: list = []
        self.lm, self.passkey, self.scaling, self.finetuned = {}, {}, {}, {}

    def tag(self, kind: str, name: str, s: int) -> dict:
        """What a checkpoint was made with: a checkpoint with another tag is retrained."""
        return {
            "kind": kind,
            "name": name,
            "seed": s,
            "model": self.mc,
            "L": self.L,
            "train": self.tr,
            "finetune": self.ft if kind == "finetune" else None,
        }

    def steps_to_train(self) -> int:
        """Training steps of the models whose checkpoint is missing (for the progress bar)."""
        todo = 0
        for s in self.config["seeds"]:
            for scheme in SCHEMES:
                path = self.checkpoints / f"{scheme}_seed{s}.pt"
                todo += self.tr["steps"] * (
                    not _cached(path, self.tag("base", scheme, s))
                )
            for method in FINETUNE_METHODS:
                path = self.checkpoints / f"ft_{method}_seed{s}.pt"
                todo += self.ft["steps"] * (
                    not _cached(path, self.tag("finetune", method, s))
                )
        return todo

    def base_model(self, scheme: str, source, s: int):
        """Experiment 1 and 2 for one scheme: train (or load) at L, evaluate past L."""
        config, tr = self.config, self.tr
        model = build_model(scheme, self.mc, s)
        losses, new = _train_or_load(
            self.checkpoints / f"{scheme}_seed{s}.pt",
            model,
            self.tag("base", scheme, s),
            self.bar,
            f"train {scheme} (seed {s})",
            source=source,
            seed=s,
            steps=tr["steps"],
            batch=tr["batch"],
            length=self.L,
            lr=tr["lr"],
        )
        self.trained += [f"{scheme}_seed{s}"] * new
        result = evaluate_lm(
            model,
            source,
            s,
            config["eval_lengths"],
            config["lm_sequences"],
            chunk=self.L,
        )
        result["train_loss_last"] = float(np.mean(losses[-20:]))
        self.lm.setdefault(scheme, {})[str(s)] = result
        self.passkey.setdefault(scheme, {})[str(s)] = evaluate_passkey(
            model,
            source,
            s,
            config["passkey_lengths"],
            config["passkey_depths"],
            config["passkey_keys"],
        )
        return model

    def zero_shot_scaling(self, model, source, s: int) -> None:
        """Experiment 1 for the RoPE model: every scaling method at every factor, untrained."""
        for method in METHODS:
            for factor in self.config["factors"]:
                scaled = rope_scaling(method, factor, self.head_dim, self.L)
                r = evaluate_lm(
                    model,
                    source,
                    s,
                    self.config["eval_lengths"],
                    self.config["lm_sequences"],
                    rope_for_length=scaled,
                )
                by_factor = self.scaling.setdefault(method, {})
                by_factor.setdefault(str(factor), {})[str(s)] = r["loss"]

    def fine_tunes(self, model, source, s: int) -> None:
        """Experiment 2's fine-tunes: each method zero-shot, then after a short fine-tune."""
        ft = self.ft
        rope_state = {k: v.clone() for k, v in model.state_dict().items()}
        for method in FINETUNE_METHODS:
            scaled = rope_scaling(method, ft["factor"], self.head_dim, self.L)
            entry = self.finetuned.setdefault(
                method, {"zero_shot": {}, "finetuned": {}}
            )
            model.load_state_dict(rope_state)
            entry["zero_shot"][str(s)] = self.scaled_eval(model, source, s, scaled)
            model.set_rope(scaled(ft["factor"] * self.L))
            _, new = _train_or_load(
                self.checkpoints / f"ft_{method}_seed{s}.pt",
                model,
                self.tag("finetune", method, s),
                self.bar,
                f"fine-tune rope+{method} at {ft['factor']}L (seed {s})",
                source=source,
                seed=s,
                steps=ft["steps"],
                batch=ft["batch"],
                length=ft["factor"] * self.L,
                lr=ft["lr"],
                warmup=5,
            )
            self.trained += [f"ft_{method}_seed{s}"] * new
            model.set_rope(None)
            entry["finetuned"][str(s)] = self.scaled_eval(model, source, s, scaled)

    def scaled_eval(self, model, source, s, scaled) -> dict:
        config = self.config
        return _scaled_eval(
            model,
            source,
            s,
            config,
            scaled,
            config["eval_lengths"],
            config["passkey_lengths"],
            config["passkey_depths"],
        )

    def results(self) -> dict:
        """Every seed's numbers and their summaries, as results.json holds them."""
        return {
            "config": self.config,
            "lm": {
                k: {
                    "per_seed": v,
                    "summary": summarize({s: r["loss"] for s, r in v.items()}),
                    "chunks": summarize({s: r["loss_by_chunk"] for s, r in v.items()}),
                }
                for k, v in self.lm.items()
            },
            "passkey": {
                k: {"per_seed": v, "summary": summarize(v)}
                for k, v in self.passkey.items()
            },
            "rope_scaling": {
                m: {
                    f: {"per_seed": v, "summary": summarize(v)}
                    for f, v in by_factor.items()
                }
                for m, by_factor in self.scaling.items()
            },
            "finetune": {
                m: {when: _finetune_summary(v) for when, v in e.items()}
                for m, e in self.finetuned.items()
            },
        }


def _finetune_summary(per_seed: dict) -> dict:
    return {
        "per_seed": per_seed,
        "lm": summarize({s: r["loss"] for s, r in per_seed.items()}),
        "passkey": summarize({s: r["passkey"] for s, r in per_seed.items()}),
    }


def _cached(path: Path, tag: dict) -> bool:
    if not path.exists():
        return False
    return torch.load(path, map_location="cpu", weights_only=False).get("tag") == tag


def _scaled_eval(model, source, s, config, scaled, lengths, pk_lengths, depths) -> dict:
    lm = evaluate_lm(
        model, source, s, lengths, config["lm_sequences"], rope_for_length=scaled
    )
    grid = evaluate_passkey(
        model,
        source,
        s,
        pk_lengths,
        depths,
        config["passkey_keys"],
        rope_for_length=scaled,
    )
    return {"loss": lm["loss"], "passkey": grid}
