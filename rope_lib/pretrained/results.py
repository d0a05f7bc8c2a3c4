"""Reading a results folder of `python -m rope_lib.pretrained` (experiment.py gives the
schema of results.json): what lesson 15, its checkers, widgets and figures compute from it.

    load_results(folder=None)   results.json as a dict; by default from results_folder():
                                the folder named by ROPE_LLM_RESULTS, or the committed
                                notebooks/llm_results/
    LossResults(results)        the loss part, window by window: curves of a method at a
                                factor over chosen windows, the yardstick, last buckets
    PairResults(results)        q and k sizes per layer and pair, the slow pairs (λ > L)
    AttentionResults(results)   attention weight by distance, the first token's share
    text_windows(folder, other) the results of the folder and of a replication on another
                                stretch of the text (--offset), main one first
    past_L(results, factor)     one window's numbers at a factor: the yardstick, the
                                reference past L, each method's and probe's buckets
    windowed_curves(results)    plain RoPE with every offset below L (StreamingLLM, the
                                window alone, the sliding reference), bucket by bucket;
                                LossResults.windowed and .reference read them by window
    passkey_rows(results)       the passkey grid, row by row

Methods are compared on the windows they all ran on (shared_windows): another window is
another stretch of text, with its own loss. A probe (PROBES: the band test) is a loss unit
that tests an explanation, not a way to extend the context: it is never one of the methods
(tables, widgets, checkers); LossResults.curve reads it when asked by name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import results as _results
from ..language import N_, _

#: The committed results, read when ROPE_LLM_RESULTS is not set.
COMMITTED_RESULTS = _results.NOTEBOOKS / "llm_results"

#: The methods' names, for tables, widgets and checkers (translated with `_`, `_fig`).
METHOD_NAMES = {
    "plain": N_("plain RoPE"),
    "pi": "PI",
    "ntk": "NTK",
    "dynamic_ntk": N_("dynamic NTK"),
    "yarn": "YaRN",
    "yarn_no_attention_factor": N_("YaRN, no attention factor"),
    "llama3": "Llama 3",
    "pi_band": "band PI",  # the band test: PI on settings["band"]'s pairs only
    # its control: the same on settings["control_band"]'s light, slow pairs
    "pi_band_control": "band PI, 26-31",
}

#: Loss units that test an explanation rather than extend the context: left out of the
#: methods (window_losses, LossResults.methods, the loss widget, check_best_method).
PROBES = ("pi_band", "pi_band_control")


def temperature_study(method: str, factor: str) -> bool:
    """Is a loss unit ("method", "x<factor>") part of the temperature and log-n study
    (experiment.SWEEP_X2, SWEEP_X4, "logn"), read by attention_study, not a method's
    curve of lesson 15's tables and figures?"""
    from .experiment import SWEEP_X2, SWEEP_X4

    return (
        method in SWEEP_X2
        or method == "logn"
        or (factor == "x4" and method in SWEEP_X4)
    )


def results_folder() -> Path:
    """The folder of results.json the lesson reads: ROPE_LLM_RESULTS (a relative path is
    taken from the current folder, else from notebooks/, as the lesson resolves it from
    there), or the committed notebooks/llm_results/."""
    return _results.results_folder("ROPE_LLM_RESULTS", COMMITTED_RESULTS)


def load_results(folder=None) -> dict:
    """results.json of `python -m rope_lib.pretrained --out FOLDER` as a dict; by default
    from results_folder()."""
    return _results.load_results(folder if folder is not None else results_folder())


#: The committed replication on another stretch of the same text (--offset 50000).
COMMITTED_REPLICATION = COMMITTED_RESULTS / "offset50000"


def text_windows(folder, other=None) -> list[dict]:
    """[results of folder, results of other]: a run and its replication on another
    stretch of the text (another --offset), each of the two as the lesson reads it; other
    is left out when it has no results.json or is the same stretch of text as folder's
    (the same settings "offset")."""
    runs = [load_results(folder)]
    if other is not None and (Path(other) / "results.json").is_file():
        second = load_results(other)
        if second["settings"]["offset"] != runs[0]["settings"]["offset"]:
            runs.append(second)
    return runs


def past_L(results: dict, factor: int = 2) -> dict:
    """One run's loss numbers at a factor, on the windows every method ran on (the same
    text for all): {"yardstick": plain RoPE inside L, "reference": the sliding reference
    per bucket past L, "inside": {method: mean inside L}, "past": {method or probe:
    [bucket past L]}, "windowed": {"streaming", "window_only": buckets past L}}."""
    data = LossResults(results)
    shared, first = data.shared(factor), data.L // data.bucket
    out = {
        "yardstick": data.yardstick(shared),
        "reference": data.reference(factor, shared),
        "inside": {},
        "past": {},
        "windowed": {},
    }
    for method in data.methods_at(factor) + data.probes:
        curve = data.curve(method, factor, shared)
        if curve is not None and len(curve["mean"]) > first:
            out["inside"][method] = data.inside(curve)
            out["past"][method] = curve["mean"][first:]
    for name in ("streaming", "window_only"):
        curve = data.windowed(name, shared)
        if curve is not None:
            out["windowed"][name] = curve["loss"][first:]
    return out


def method_label(method: str, translate=_) -> str:
    """A method's name in the learner's language (`_fig` for figures)."""
    return translate(METHOD_NAMES.get(method, method))


def window_losses(results: dict, probes: bool = False) -> dict:
    """{(method, factor): {window: [mean loss per bucket]}} from results['units'] (keys
    "method/x{factor}/{length}/window{w}"); plain RoPE, which runs on the windows of every
    factor, is filed under each factor it ran at (by its window length). A method run
    inside L only at a factor (a window of L, not s L) has a curve that ends at L. The
    probes (PROBES) only with probes=True."""
    L = results["settings"]["training_length"]
    runs: dict = {}
    for key, unit in results["units"].items():
        method, factor, length, window = key.split("/")
        if method in PROBES and not probes:
            continue
        if temperature_study(method, factor):
            continue  # the temperature and log-n study (attention_study), not a curve
        factor = int(length) // L if method == "plain" else int(factor[1:])
        window = int(window.removeprefix("window"))
        runs.setdefault((method, factor), {})[window] = unit["bucket_loss"]
    return runs


def shared_windows(runs: dict, factor: int) -> list[int]:
    """The windows every method ran on at a factor: where they can be compared."""
    sets = [set(w) for (m, f), w in runs.items() if f == factor]
    return sorted(set.intersection(*sets)) if sets else []


def last_buckets(results: dict, factor: int = 2) -> dict:
    """Each method's loss in the last bucket at a factor, the mean over the windows every
    method ran on (so that all are compared on the same text)."""
    runs = window_losses(results)
    shared = shared_windows(runs, factor)
    return {
        m: float(np.mean([w[i][-1] for i in shared]))
        for (m, f), w in runs.items()
        if f == factor
    }


class LossResults:
    """The loss part of results.json, window by window: for each method and factor, the
    mean loss per bucket of positions on each text window it ran on. A curve is the mean
    (and min, max) over a set of windows: the method's own, or the windows every method
    ran on (shared), where methods are compared on the same text. The probes (PROBES,
    listed in .probes) are not methods: curve() and windows() read them by name, nothing
    else counts them. windowed() and reference() read plain RoPE with every offset below
    L (results["windowed"]) on the same windows, bucket by bucket."""

    def __init__(self, results: dict):
        settings = results["settings"]
        self.L = settings["training_length"]
        self.bucket = settings["bucket"]
        self.runs = window_losses(results)
        self.factors = sorted({f for (m, f) in self.runs if m != "plain"})
        methods = {m for (m, f) in self.runs if m != "plain"}
        self.methods = [m for m in METHOD_NAMES if m in methods] + sorted(
            methods - set(METHOD_NAMES)
        )
        every = window_losses(results, probes=True)
        self.probe_runs = {k: v for k, v in every.items() if k[0] in PROBES}
        self.probes = [m for m in PROBES if any(k[0] == m for k in self.probe_runs)]
        self.windowed_runs = windowed_curves(results)

    def _runs(self, method: str, factor: int) -> dict:
        key = (method, factor)
        return self.runs.get(key) or self.probe_runs.get(key) or {}

    def windows(self, method: str, factor: int) -> list[int]:
        """The windows a method (or probe) ran on at a factor (plain RoPE: on that
        factor's windows)."""
        return sorted(self._runs(method, factor))

    def shared(self, factor: int) -> list[int]:
        """The windows every method ran on at a factor."""
        return shared_windows(self.runs, factor)

    def curve(self, method: str, factor: int, windows=None) -> dict | None:
        """{"x", "mean", "min", "max", "windows"} of a method at a factor over `windows`
        (default: all it ran on); None when it ran on none of them. A probe too."""
        runs = self._runs(method, factor)
        chosen = [w for w in (runs if windows is None else windows) if w in runs]
        if not chosen:
            return None
        table = np.array([runs[w] for w in sorted(chosen)], dtype=float)
        return {
            "x": self.bucket * (np.arange(table.shape[1]) + 0.5),
            "mean": table.mean(0),
            "min": table.min(0),
            "max": table.max(0),
            "windows": len(chosen),
        }

    def inside(self, curve: dict) -> float:
        """The mean of a curve's buckets inside L."""
        return float(np.mean(curve["mean"][: self.L // self.bucket]))

    def last(self, curve: dict) -> float:
        """The curve's last bucket (the farthest positions)."""
        return float(curve["mean"][-1])

    def yardstick(self, windows=None, factor: int | None = None) -> float:
        """The plain model's mean loss inside L on `windows` (default: the windows every
        method ran on) at a factor (default: the smallest)."""
        factor = self.factors[0] if factor is None else factor
        windows = self.shared(factor) if windows is None else windows
        return self.inside(self.curve("plain", factor, windows))

    def methods_at(self, factor: int) -> list[str]:
        """The methods evaluated at a factor (plain RoPE first)."""
        return ["plain"] + [m for m in self.methods if self.windows(m, factor)]

    def windowed(self, name: str, windows) -> dict | None:
        """{"bucket": bucket indices, "loss": mean over `windows`} of a windowed unit
        ("streaming", "window_only", "sliding"), at the buckets' absolute positions (the
        same buckets as a curve's); None unless it ran on every one of the windows (the
        same text as the curves it is compared with)."""
        chosen = [self.windowed_runs.get((name, w)) for w in windows]
        if not chosen or None in chosen:
            return None
        if any(not np.array_equal(c["bucket"], chosen[0]["bucket"]) for c in chosen):
            return None
        return {
            "bucket": chosen[0]["bucket"],
            "loss": np.mean([c["loss"] for c in chosen], axis=0),
        }

    def reference(self, factor: int, windows) -> np.ndarray | None:
        """The in-distribution reference past L (the PI paper's sliding windows,
        results["windowed"]): plain RoPE on windows of L tokens, every position read with
        L/2 to L tokens before it, all at offsets seen in training. One value per bucket
        from L to factor L, the mean over `windows`; None unless the run has it for each
        of these buckets and windows."""
        sliding = self.windowed("sliding", windows)
        wanted = np.arange(self.L // self.bucket, factor * self.L // self.bucket)
        if sliding is None or not np.isin(wanted, sliding["bucket"]).all():
            return None
        where = {int(b): i for i, b in enumerate(sliding["bucket"])}
        return np.array([sliding["loss"][where[int(b)]] for b in wanted])

    def limits(self) -> tuple[float, float]:
        """The lowest and highest bucket of every window."""
        values = [x for runs in self.runs.values() for b in runs.values() for x in b]
        return float(np.min(values)), float(np.max(values))


class PairResults:
    """The pairs part of results.json: wavelengths, and q and k RMS per layer and pair."""

    def __init__(self, results: dict):
        pairs = results["pairs"]
        self.L = results["settings"]["training_length"]
        self.wavelength = np.asarray(pairs["wavelength"], dtype=float)
        self.q = np.asarray(pairs["q_rms"], dtype=float)  # [layers, pairs]
        self.k = np.asarray(pairs["k_rms"], dtype=float)
        self.slow = self.wavelength > self.L  # pairs that never turned once within L
        self.first_slow = (
            int(np.argmax(self.slow)) if self.slow.any() else len(self.slow)
        )

    @property
    def layers(self) -> int:
        return self.q.shape[0]

    def slow_share(self) -> np.ndarray:
        """Per layer: the share of sum_i |q_i| |k_i| (RMS sizes) in the slow pairs."""
        product = self.q * self.k
        return product[:, self.slow].sum(1) / product.sum(1)

    def share(self) -> np.ndarray:
        """[layers, pairs]: each pair's share of the layer's sum_i |q_i| |k_i|."""
        product = self.q * self.k
        return product / product.sum(1, keepdims=True)

    def largest(self) -> tuple[np.ndarray, np.ndarray]:
        """Per layer: the pair with the largest q, and with the largest k."""
        return self.q.argmax(1), self.k.argmax(1)


class AttentionResults:
    """The decay and sinks parts of results.json."""

    def __init__(self, results: dict):
        decay, sinks = results["decay"], results["sinks"]
        self.decay = decay
        self.edges = list(decay["edges"])
        self.weight = np.asarray(decay["mean_weight"], dtype=float)  # [layers, bins]
        self.uniform = np.asarray(decay["uniform"], dtype=float)
        self.first = np.asarray(sinks["first_token"], dtype=float)  # [layers]
        self.uniform_first = float(sinks["uniform_first_token"])
        self.probe = results["settings"]["probe"]

    def distances(self) -> np.ndarray:
        """The smallest distance of each bin (0, 1, 2, 4, ...)."""
        return np.asarray(self.edges[: self.weight.shape[1]], dtype=float)

    def ratio(self) -> np.ndarray:
        """Mean weight over layers against evenly spread attention, per distance bin."""
        return self.weight.mean(0) / self.uniform

    def ratio_without_first(self) -> np.ndarray | None:
        """[layers, bins]: the weight by distance with token 0 removed and each query
        renormalised, against evenly spread attention treated the same way (a sink no
        longer deflates it); None for a results.json made before it was measured."""
        decay = self.decay
        if "mean_weight_without_first" not in decay:
            return None
        weight = np.asarray(decay["mean_weight_without_first"], dtype=float)
        return weight / np.asarray(decay["uniform_without_first"], dtype=float)


def windowed_curves(results: dict) -> dict:
    """{(name, window): {"x": bucket centres (positions), "bucket": bucket indices,
    "loss": mean loss per bucket}} for the windowed units (experiment.py): "streaming",
    "window_only" from position 0, "sliding" from L on, at the buckets' absolute positions
    (the same buckets as a loss unit's on that window)."""
    bucket = results["settings"]["bucket"]
    curves = {}
    for key, unit in results.get("windowed", {}).get("units", {}).items():
        name, _length, window = key.split("/")
        loss = np.asarray(unit["bucket_loss"], dtype=float)
        index = np.asarray(unit.get("buckets", range(len(loss))))
        curves[(name, int(window.removeprefix("window")))] = {
            "x": bucket * (index + 0.5),
            "bucket": index,
            "loss": loss,
        }
    return curves


def passkey_rows(results: dict) -> list[tuple[str, int, dict]]:
    """(method, prompt length, {depth: share retrieved}) for every passkey group, shorter
    prompts first, then plain RoPE first and the methods in METHOD_NAMES' order."""
    order = {m: i for i, m in enumerate(METHOD_NAMES)}
    rows = []
    for key, group in results["passkey"]["summary"].items():
        method, _factor, length = key.split("/")
        shares = dict(zip(group["depths"], group["retrieved"]))
        rows.append((method, int(length), shares))
    return sorted(rows, key=lambda r: (r[1], order.get(r[0], len(order)), r[0]))
