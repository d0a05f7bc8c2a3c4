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

The controls (config["controls"]), each a test of an explanation the lesson gives:
- the fine-tune of plain RoPE and PI again, on text only (no passkeys, no copies: the PI
  paper fine-tuned on generic text), and at a lower rate (2e-4, pre-training's last);
- YaRN without its temperature (attention factor 1), zero-shot;
- every copy scored at a second placement, the first copy opening the window (the same
  distance, read near the window's start instead of at its end);
- a RoPE model trained with another base (500: its slowest pair turns once in about 33 L,
  as LLaMA's does in 27 L, against 552 L with 10,000), evaluated plain and zero-shot.

A job writes out_dir/jobs/<scheme>_seed<s>.json when done and its trained model in
out_dir/checkpoints/; a second run skips the finished jobs and retrains nothing it has, so
an interrupted run continues. Jobs run in `workers` processes of one thread each.

results.json:
  config                       make_config(...)
  yardsticks[seed][n]          MarkovSource(seed).yardsticks(n) for n in lengths
  schemes[scheme][seed]        {"train_loss_last", "text": {"loss": {n}, "loss_by_chunk"},
                                "passkey": {n: [accuracy per depth]},
                                "copy": {n: {distance: loss}},
                                "copy_at_start": {4L: {distance: loss}}}
  scaling[method][seed]        {"text": {n}, "passkey": {n: [per depth]},
                                "copy": {4L: {distance: loss}}, "copy_at_start": {4L: ...},
                                "inside_L": loss at L, s=4}; methods: config["methods"]
                                and config["controls"]["zero_shot"]
  finetune[method][seed][k]    after k steps: {"text": loss at 4L, "passkey": {L: [...],
                                4L: [...]}}
  finetune_controls[control][method][seed][k]   the same, for each control fine-tune
  base_sweep[base][seed]       a RoPE model trained with that base: as schemes[...], and
                                "scaling": {method: as scaling[method][seed]}
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
TEXT_ONLY = {"text": 1.0, "passkey": 0.0, "copy": 0.0}
"""The mixture of the text-only fine-tune."""


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
        "controls": {
            "finetune": {"text_only": {"mix": TEXT_ONLY}, "low_lr": {"lr": 2e-4}},
            "finetune_methods": ["default", "linear"],
            "zero_shot": ["yarn_no_temperature"],
            "base": 500.0,
        },
    }
    if quick:
        config["train"]["steps"] = 60
        config["finetune"]["budgets"] = [0, 5, 10]
        config["lengths"] = [L, 2 * L, 4 * L]
        config["text_sequences"] = config["copy_sequences"] = 8
        config["passkey_keys"] = 8
        config["passkey_depths"] = [0.0, 0.5, 1.0]
    return config


_EXTRA = {
    "llama3": {"low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "yarn_no_temperature": {"attention_factor": 1.0},
}


def extension(
    method: str,
    head_dim: int,
    L: int,
    factor: float | None = None,
    base: float = 10000.0,
):
    """rope_for_length(n) -> (inv_freq, attention_factor) of a RoPE extension at length n,
    with the factor s = n / L (never below 1) unless `factor` fixes it. "dynamic" has factor
    1 and recomputes its base from n (transformers' dynamic NTK), "default" is plain RoPE,
    "yarn_no_temperature" YaRN with attention factor 1."""

    def rope_for_length(n: int):
        s = float(factor or max(n / L, 1.0))
        if method == "default":
            return rope_frequencies("default", head_dim, base)
        if method in ("linear", "ntk"):
            return rope_frequencies(method, head_dim, base, factor=s)
        if method == "dynamic":
            return rope_frequencies(
                "dynamic",
                head_dim,
                base,
                factor=1.0,
                max_position_embeddings=L,
                seq_len=n,
            )
        return rope_frequencies(
            method.removesuffix("_no_temperature"),
            head_dim,
            base,
            factor=s,
            original_max_position_embeddings=L,
            **_EXTRA.get(method, {}),
        )

    return rope_for_length


BASE_JOB = "rope_base"
"""Jobs named rope_base<b>: a RoPE model trained with base b (config["controls"]["base"])."""


class _Job:
    """One scheme and one seed: train (or load) the model at L, evaluate it; for RoPE, the
    zero-shot extensions, the fine-tune sweeps and their controls too; for a rope_base<b>
    job, a RoPE model of base b, evaluated plain and zero-shot."""

    def __init__(self, config: dict, scheme: str, seed: int, out: Path, queue=None):
        self.config, self.scheme, self.seed, self.queue = config, scheme, seed, queue
        self.L = config["train_length"]
        self.head_dim = config["model"]["d_model"] // config["model"]["n_heads"]
        self.base = 10000.0
        self.model_config = dict(config["model"])
        if scheme.startswith(BASE_JOB):
            self.base = self.model_config["base"] = config["controls"]["base"]
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

    def copies(self, model, lengths, rope_for_length=None, at_start=False) -> dict:
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
                at_start,
            )
            for n in lengths
        }

    def trained(self):
        """The model trained at L (from its checkpoint when there is one)."""
        c, tr = self.config, self.config["train"]
        model = build_model(
            "rope" if self.base_job else self.scheme, self.model_config, self.seed
        )
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
        return model, losses

    @property
    def base_job(self) -> bool:
        return self.scheme.startswith(BASE_JOB)

    def run(self) -> dict:
        c = self.config
        model, losses = self.trained()
        result = self.evaluate(model)
        result["train_loss_last"] = sum(losses[-50:]) / len(losses[-50:])
        result["copy"] = self.copies(model, [self.L, 4 * self.L])
        result["copy_at_start"] = self.copies(model, [4 * self.L], at_start=True)
        if self.scheme == "rope" or self.base_job:
            methods = [*METHODS, *c["controls"]["zero_shot"]]
            result["scaling"] = {m: self.zero_shot(model, m) for m in methods}
        if self.scheme == "rope":
            result.update(self.fine_tunes(model))
        return result

    def fine_tunes(self, model) -> dict:
        """The fine-tune sweep ("finetune") and its controls ("finetune_controls"), each
        from the model trained at L."""
        base = {k: v.clone() for k, v in model.state_dict().items()}
        controls = self.config["controls"]
        out = {"finetune": {}, "finetune_controls": {}}
        for method in FINETUNE_METHODS:
            model.load_state_dict(base)
            out["finetune"][method] = self.fine_tune(model, method)
        for name, change in controls["finetune"].items():
            out["finetune_controls"][name] = {}
            for method in controls["finetune_methods"]:
                model.load_state_dict(base)
                scores = self.fine_tune(model, method, **change)
                out["finetune_controls"][name][method] = scores
        model.load_state_dict(base)
        model.set_rope(None)
        return out

    def zero_shot(self, model, method: str) -> dict:
        L, rope = self.L, extension(method, self.head_dim, self.L, base=self.base)
        longer = [n for n in self.config["lengths"] if n > L]
        r = self.evaluate(model, rope, longer)
        return {
            "text": r["text"]["loss"],
            "passkey": r["passkey"],
            "copy": self.copies(model, [4 * L], rope),
            "copy_at_start": self.copies(model, [4 * L], rope, at_start=True),
            "inside_L": evaluate_text(
                model,
                self.source,
                self.seed,
                [L],
                self.config["text_sequences"],
                extension(method, self.head_dim, L, factor=4, base=self.base),
            )["loss"][str(L)],
        }

    def fine_tune(self, model, method: str, lr=None, mix=None) -> dict:
        """One constant-rate fine-tune at 4L with the method's frequencies at factor 4,
        scored after each budget; lr and mix: a control's (default: config["finetune"]'s
        rate and data.MIX)."""
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
            lr=lr or ft["lr"],
            warmup=ft["warmup"],
            answer_weight=self.config["answer_weight"],
            constant=True,
            mix=mix,
            after_step=lambda step: (self.tick(), score(step)),
        )
        return scores


def job_tag(config: dict, scheme: str, seed: int) -> dict:
    """What a job's result and checkpoint were made with: another tag is made again."""
    keep = {k: v for k, v in config.items() if k not in ("seed", "seeds")}
    return {"scheme": scheme, "seed": seed, "config": keep}


def job_names(config: dict) -> list[str]:
    """Every job of a run's seed, the longest first: RoPE (with its fine-tunes), the RoPE
    model of another base, then the other schemes."""
    base = f"{BASE_JOB}{config['controls']['base']:g}"
    return ["rope", base, *(s for s in SCHEMES if s != "rope")]


def job_steps(config: dict, scheme: str) -> int:
    """Training steps of a job (for the progress bar)."""
    controls = config["controls"]
    runs = len(FINETUNE_METHODS) + len(controls["finetune"]) * len(
        controls["finetune_methods"]
    )
    ft = runs * max(config["finetune"]["budgets"])
    return config["train"]["steps"] + (ft if scheme == "rope" else 0)


def _run_job(config, scheme, seed, out, queue) -> tuple[str, dict, float]:
    torch.set_num_threads(1)
    started = time.process_time()
    result = _Job(config, scheme, seed, Path(out), queue).run()
    return f"{scheme}_seed{seed}", result, time.process_time() - started


def _saved_jobs(config: dict, out: Path) -> tuple[dict, list]:
    """(the finished jobs' saved results by name, the (scheme, seed) jobs still to run,
    the longest first)."""
    done, todo = {}, []
    for s in config["seeds"]:
        for scheme in job_names(config):
            path = out / "jobs" / f"{scheme}_seed{s}.json"
            saved = json.loads(path.read_text()) if path.exists() else None
            if saved and saved["tag"] == job_tag(config, scheme, s):
                done[f"{scheme}_seed{s}"] = saved
            else:
                todo.append((scheme, s))
    todo.sort(key=lambda job: job_names(config).index(job[0]))
    return done, todo


def _run_jobs(config: dict, out: Path, done: dict, todo: list, workers, quiet) -> None:
    """Run the jobs of `todo` in `workers` processes, each saved to out/jobs/ (and added
    to `done`) as soon as it finishes."""
    from tqdm.auto import tqdm

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
    out = Path(out_dir)
    (out / "jobs").mkdir(parents=True, exist_ok=True)
    config = make_config(seed, seeds, quick)
    started = time.perf_counter()
    done, todo = _saved_jobs(config, out)
    _run_jobs(config, out, done, todo, workers, quiet)
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
        "finetune_controls": {},
        "base_sweep": {},
    }
    base = job_names(config)[1]
    for s in config["seeds"]:
        for scheme in SCHEMES:
            r = dict(done[f"{scheme}_seed{s}"]["result"])
            for part in ("scaling", "finetune", "finetune_controls"):
                for method, value in r.pop(part, {}).items():
                    results[part].setdefault(method, {})[str(s)] = value
            results["schemes"].setdefault(scheme, {})[str(s)] = r
        sweep = results["base_sweep"].setdefault(base.removeprefix(BASE_JOB), {})
        sweep[str(s)] = done[f"{base}_seed{s}"]["result"]
    for control, by_seed in results["finetune_controls"].items():  # method, then seed
        results["finetune_controls"][control] = {
            m: {s: methods[m] for s, methods in by_seed.items()}
            for m in config["controls"]["finetune_methods"]
        }
    return results
