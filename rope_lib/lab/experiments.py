"""The lab's experiments: one job per (scheme, seed), run side by side, resumable.

    run(out_dir, seed=0, seeds=5, quick=False, workers=2) -> results, also out_dir/results.json

Every scheme in SCHEMES is trained at length L on the data mixture (data.MIX), then
evaluated past L, at 2L, 4L and 8L:
- text: the mean loss per window length, and by chunk of L at 8L, against the source's
  yardsticks (data.MarkovSource.yardsticks);
- passkey: exact-match accuracy per length and depth of the key;
- copy: the loss on an induction copy's second half by the distance back to its first
  (windows of L and of 4L).
The RoPE model is then extended without training (zero-shot), each method at the matched
factor s = n / L for a window of n tokens: PI ("linear"), NTK, dynamic NTK (with factor 1,
so that its effective factor at n is n / L too: it is NTK then, measured equal), YaRN and
Llama 3, scored on text, passkey and copies, and on text inside L at s = 4 (what a method
costs where no extension was needed). Last, a fine-tune at 4L for plain RoPE (the control),
PI and YaRN at factor 4: one constant-rate run per method, scored after each budget of
config["finetune"]["budgets"] steps (0: the zero-shot model).

A job writes out_dir/jobs/<scheme>_seed<s>.json when done and its trained model in
out_dir/checkpoints/; a second run skips the finished jobs and retrains nothing it has, so
an interrupted run continues. Jobs run in `workers` processes of one thread each.

results.json:
  config                       make_config(...)
  yardsticks[seed][n]          MarkovSource(seed).yardsticks(n) for n in lengths
  schemes[scheme][seed]        {"train_loss_last", "text": {"loss": {n}, "loss_by_chunk"},
                                "passkey": {n: [accuracy per depth]},
                                "copy": {n: {distance: loss}}}
  scaling[method][seed]        {"text": {n}, "passkey": {n: [per depth]},
                                "copy": {4L: {distance: loss}}, "inside_L": loss at L, s=4}
  finetune[method][seed][k]    after k steps: {"text": loss at 4L, "passkey": {L: [...],
                                4L: [...]}}
  timing                       {"wall_seconds", "job_cpu_seconds": {job: seconds}}
"""

from __future__ import annotations

import json
import multiprocessing
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import torch

from ..scaling import rope_frequencies
from .data import KEY_DIGITS, MIX, SPAN, VOCAB_SIZE, MarkovSource
from .model import SCHEMES
from .train import (
    build_model,
    evaluate_copy,
    evaluate_passkey,
    evaluate_text,
    load_checkpoint,
    save_checkpoint,
    train,
)

METHODS = ("linear", "ntk", "dynamic", "yarn", "llama3")
"""RoPE extensions evaluated zero-shot (rope_frequencies names), each at s = n / L."""
FINETUNE_METHODS = ("default", "linear", "yarn")
"""Fine-tuned at 4L: plain RoPE (direct fine-tuning, the control), PI, YaRN."""


def make_config(seed: int = 0, seeds: int = 5, quick: bool = False) -> dict:
    """Everything that defines a run; stored in results.json and in every job's tag."""
    L = 64
    config = {
        "seed": seed,
        "seeds": list(range(seed, seed + (1 if quick else seeds))),
        "quick": quick,
        "train_length": L,
        "model": {"d_model": 64, "n_layers": 3, "n_heads": 2, "max_len": 8 * L},
        "vocab_size": VOCAB_SIZE,
        "key_digits": KEY_DIGITS,
        "span": SPAN,
        "mix": MIX,
        "answer_weight": 8.0,
        "train": {"steps": 1100, "batch": 32, "lr": 2e-3, "warmup": 30},
        "finetune": {
            "factor": 4,
            "budgets": [0, 25, 50, 100, 200],
            "batch": 8,
            "lr": 1e-3,
            "warmup": 10,
        },
        "lengths": [L, 2 * L, 4 * L, 8 * L],
        "text_sequences": 16,
        "passkey_depths": [0.0, 0.25, 0.5, 0.75, 1.0],
        "passkey_keys": 20,
        "copy_distances": {str(L): [8, 24, 56], str(4 * L): [8, 24, 56, 120, 248]},
        "copy_sequences": 16,
        "schemes": list(SCHEMES),
        "methods": list(METHODS),
        "finetune_methods": list(FINETUNE_METHODS),
    }
    if quick:
        config["train"]["steps"] = 60
        config["finetune"]["budgets"] = [0, 5, 10]
        config["lengths"] = [L, 2 * L, 4 * L]
        config["text_sequences"] = config["copy_sequences"] = 8
        config["passkey_keys"] = 8
        config["passkey_depths"] = [0.0, 0.5, 1.0]
    return config


def extension(method: str, head_dim: int, L: int, factor: float | None = None):
    """rope_for_length(n) -> (inv_freq, attention_factor) of a RoPE extension at length n,
    with the factor s = n / L (never below 1) unless `factor` fixes it. "dynamic" has factor
    1 and recomputes its base from n (transformers' dynamic NTK), "default" is plain RoPE."""

    def rope_for_length(n: int):
        s = float(factor or max(n / L, 1.0))
        if method == "default":
            return rope_frequencies("default", head_dim)
        if method in ("linear", "ntk"):
            return rope_frequencies(method, head_dim, factor=s)
        if method == "dynamic":
            return rope_frequencies(
                "dynamic", head_dim, factor=1.0, max_position_embeddings=L, seq_len=n
            )
        extra = (
            {"low_freq_factor": 1.0, "high_freq_factor": 4.0}
            if method == "llama3"
            else {}
        )
        return rope_frequencies(
            method, head_dim, factor=s, original_max_position_embeddings=L, **extra
        )

    return rope_for_length


class _Job:
    """One scheme and one seed: train (or load) the model at L, evaluate it; for RoPE, the
    zero-shot extensions and the fine-tune sweeps too."""

    def __init__(self, config: dict, scheme: str, seed: int, out: Path, queue=None):
        self.config, self.scheme, self.seed, self.queue = config, scheme, seed, queue
        self.L = config["train_length"]
        self.head_dim = config["model"]["d_model"] // config["model"]["n_heads"]
        self.source = MarkovSource(seed)
        self.checkpoint = out / "checkpoints" / f"{scheme}_seed{seed}.pt"

    def tick(self, n: int = 1) -> None:
        if self.queue is not None:
            self.queue.put(n)

    def evaluate(self, model, rope_for_length=None, lengths=None) -> dict:
        c, s = self.config, self.seed
        lengths = lengths or c["lengths"]
        return {
            "text": evaluate_text(
                model,
                self.source,
                s,
                lengths,
                c["text_sequences"],
                rope_for_length,
                self.L,
            ),
            "passkey": evaluate_passkey(
                model,
                self.source,
                s,
                lengths,
                c["passkey_depths"],
                c["passkey_keys"],
                rope_for_length,
            ),
        }

    def copies(self, model, lengths, rope_for_length=None) -> dict:
        c = self.config
        return {
            str(n): evaluate_copy(
                model,
                self.source,
                self.seed,
                n,
                c["copy_distances"][str(n)],
                c["copy_sequences"],
                rope_for_length,
            )
            for n in lengths
        }

    def run(self) -> dict:
        c, tr = self.config, self.config["train"]
        model = build_model(self.scheme, c["model"], self.seed)
        tag = job_tag(c, self.scheme, self.seed)
        losses = load_checkpoint(self.checkpoint, model, tag)
        if losses is None:
            losses = train(
                model,
                self.source,
                seed=self.seed,
                steps=tr["steps"],
                batch=tr["batch"],
                length=self.L,
                lr=tr["lr"],
                warmup=tr["warmup"],
                answer_weight=c["answer_weight"],
                after_step=lambda n: self.tick(),
            )
            save_checkpoint(self.checkpoint, model, losses, tag)
        else:
            self.tick(tr["steps"])
        result = self.evaluate(model)
        result["train_loss_last"] = sum(losses[-50:]) / len(losses[-50:])
        result["copy"] = self.copies(model, [self.L, 4 * self.L])
        if self.scheme == "rope":
            result["scaling"] = {m: self.zero_shot(model, m) for m in METHODS}
            base = {k: v.clone() for k, v in model.state_dict().items()}
            result["finetune"] = {}
            for method in FINETUNE_METHODS:
                model.load_state_dict(base)
                result["finetune"][method] = self.fine_tune(model, method)
            model.set_rope(None)
        return result

    def zero_shot(self, model, method: str) -> dict:
        L, rope = self.L, extension(method, self.head_dim, self.L)
        longer = [n for n in self.config["lengths"] if n > L]
        r = self.evaluate(model, rope, longer)
        return {
            "text": r["text"]["loss"],
            "passkey": r["passkey"],
            "copy": self.copies(model, [4 * L], rope),
            "inside_L": evaluate_text(
                model,
                self.source,
                self.seed,
                [L],
                self.config["text_sequences"],
                extension(method, self.head_dim, L, factor=4),
            )["loss"][str(L)],
        }

    def fine_tune(self, model, method: str) -> dict:
        """One constant-rate fine-tune at 4L with the method's frequencies at factor 4,
        scored after each budget."""
        ft, L = self.config["finetune"], self.L
        n = ft["factor"] * L
        model.set_rope(extension(method, self.head_dim, L, factor=ft["factor"])(n))
        budgets, scores = ft["budgets"], {}

        def score(step: int) -> None:
            if step in budgets:
                r = self.evaluate(model, lengths=[L, n])
                scores[str(step)] = {
                    "text": r["text"]["loss"][str(n)],
                    "passkey": r["passkey"],
                }

        score(0)
        train(
            model,
            self.source,
            seed=self.seed + 1000,
            steps=max(budgets),
            batch=ft["batch"],
            length=n,
            lr=ft["lr"],
            warmup=ft["warmup"],
            answer_weight=self.config["answer_weight"],
            constant=True,
            after_step=lambda step: (self.tick(), score(step)),
        )
        return scores


def job_tag(config: dict, scheme: str, seed: int) -> dict:
    """What a job's result and checkpoint were made with: another tag is made again."""
    keep = {k: v for k, v in config.items() if k not in ("seed", "seeds")}
    return {"scheme": scheme, "seed": seed, "config": keep}


def job_steps(config: dict, scheme: str) -> int:
    """Training steps of a job (for the progress bar)."""
    ft = len(FINETUNE_METHODS) * max(config["finetune"]["budgets"])
    return config["train"]["steps"] + (ft if scheme == "rope" else 0)


def _run_job(config, scheme, seed, out, queue) -> tuple[str, dict, float]:
    torch.set_num_threads(1)
    started = time.process_time()
    result = _Job(config, scheme, seed, Path(out), queue).run()
    return f"{scheme}_seed{seed}", result, time.process_time() - started


def run(
    out_dir,
    seed: int = 0,
    seeds: int = 5,
    quick: bool = False,
    workers: int = 2,
    quiet: bool = False,
) -> dict:
    """Run every job that is not done yet (see module docstring); write results.json and the
    figures. Returns the results, with results["trained"] = the jobs run in this call."""
    from tqdm.auto import tqdm

    out = Path(out_dir)
    (out / "jobs").mkdir(parents=True, exist_ok=True)
    config = make_config(seed, seeds, quick)
    started = time.perf_counter()
    done, todo = {}, []
    order = sorted(SCHEMES, key=lambda s: s != "rope")  # the long jobs first
    for s in config["seeds"]:
        for scheme in order:
            path = out / "jobs" / f"{scheme}_seed{s}.json"
            saved = json.loads(path.read_text()) if path.exists() else None
            if saved and saved["tag"] == job_tag(config, scheme, s):
                done[f"{scheme}_seed{s}"] = saved
            else:
                todo.append((scheme, s))
    todo.sort(key=lambda job: job[0] != "rope")
    total = sum(job_steps(config, scheme) for scheme, _ in todo)
    context = multiprocessing.get_context("spawn")
    with (
        tqdm(
            total=total, unit="step", disable=quiet or not todo, dynamic_ncols=True
        ) as bar,
        context.Manager() as manager,
        ProcessPoolExecutor(max(1, workers), mp_context=context) as pool,
    ):
        queue = manager.Queue()
        pending = {
            pool.submit(_run_job, config, scheme, s, str(out), queue)
            for scheme, s in todo
        }
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            while not queue.empty():
                bar.update(queue.get())
            for future in finished:
                name, result, cpu = future.result()
                scheme, s = name.rsplit("_seed", 1)
                saved = {
                    "tag": job_tag(config, scheme, int(s)),
                    "result": result,
                    "cpu_seconds": cpu,
                }
                (out / "jobs" / f"{name}.json").write_text(json.dumps(saved) + "\n")
                done[name] = saved
                bar.set_postfix_str(f"done {name}", refresh=False)
    results = collect(config, done)
    results["timing"] = {
        "wall_seconds": time.perf_counter() - started,
        "job_cpu_seconds": {k: v["cpu_seconds"] for k, v in sorted(done.items())},
    }
    (out / "results.json").write_text(
        json.dumps(results, indent=1, sort_keys=True) + "\n"
    )
    from .figures import save_figures

    save_figures(results, out)
    results["trained"] = [f"{scheme}_seed{s}" for scheme, s in todo]
    return results


def collect(config: dict, done: dict) -> dict:
    """results.json's layout (module docstring) from the jobs' results."""
    results = {
        "config": config,
        "yardsticks": {
            str(s): {str(n): MarkovSource(s).yardsticks(n) for n in config["lengths"]}
            for s in config["seeds"]
        },
        "schemes": {},
        "scaling": {},
        "finetune": {},
    }
    for s in config["seeds"]:
        for scheme in SCHEMES:
            r = dict(done[f"{scheme}_seed{s}"]["result"])
            for part in ("scaling", "finetune"):
                for method, value in r.pop(part, {}).items():
                    results[part].setdefault(method, {})[str(s)] = value
            results["schemes"].setdefault(scheme, {})[str(s)] = r
    return results
