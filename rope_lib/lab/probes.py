"""Probes of the lab's trained RoPE models: why a model trained at L fails past it.

    model = trained_model(folder, seed)            # the committed checkpoint, evaluated
    banded(model, window)                          # a context manager: keys <= window back
    scores_by_offset(model, tokens)                # q.k / sqrt(d) by the offset m - n
    band_probe(model, config, seed)                # results.json's scores, keys <= L back
    capped(model, cap)                             # a context manager: offsets > cap at cap
    cap_probe(model, config, seed)                 # the same scores, every key, offsets < L
    pi_on_pairs(model, config, seed, pairs)        # PI on a band of pairs only
    pair_sizes(model, tokens)                      # |q_i|, |k_i| per layer and pair
    pair_group_excess(groups)                      # one group of pairs divided by s

The account tested here (Chen et al. 2023, "Extending Context Window of Large Language
Models via Positional Interpolation", arXiv:2306.15595, section 2.3 and Figure 2; Xiao et
al. 2024, StreamingLLM; Han et al. 2024, LM-Infinite): past L a query meets keys at offsets,
so at angles m theta_i, that training never showed it. Their scores are not bounded by
anything learned, and those keys take attention from the ones that matter, even when the
token that matters is near. The probes: hide the keys more than L back (a band, `banded`):
if the loss returns to its value at L, the far keys were the trouble; the scores by offset,
seen (< L) against unseen (>= L); and which pairs carry the size of q and k (a pair whose
|q_i| |k_i| is small cannot matter, whatever its angle). The band hides both the unseen
offsets and the number of far keys; the cap (`capped`, ReRoPE's clipped offsets, Su 2023;
LM-Infinite's distance ceiling) keeps every key but scores a key more than L - 1 back as if
it were L - 1 back, so no pair meets an angle it did not meet in training: what the cap
brings back, the unseen angles broke; what it leaves, the number of keys.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

import numpy as np
import torch

from ..language import N_, _
from ..pretrained.pairs import band_interpolated, pair_rms
from ..scaling import rope_frequencies
from .data import MarkovSource
from .experiments import job_tag
from .train import (
    build_model,
    evaluate_copy,
    evaluate_passkey,
    evaluate_text,
    load_checkpoint,
)


def trained_model(folder, seed, scheme: str = "rope", config: dict | None = None):
    """The model of `scheme` and `seed` trained by a lab run whose results are in `folder`
    (folder/checkpoints/<scheme>_seed<seed>.pt, made with the folder's results.json config),
    in eval mode. FileNotFoundError, saying how to make it, when it is not there."""
    import json

    folder = Path(folder)
    if config is None:
        config = json.loads((folder / "results.json").read_text())["config"]
    path = folder / "checkpoints" / f"{scheme}_seed{seed}.pt"
    model = build_model(scheme, config["model"], int(seed))
    if (
        not path.is_file()
        or load_checkpoint(path, model, job_tag(config, scheme, int(seed))) is None
    ):
        raise FileNotFoundError(
            _(
                "no checkpoint of {scheme} seed {seed} made with this run's "
                "settings at {path}: run `python -m rope_lib.lab --out {folder}` "
                "(make experiments)"
            ).format(scheme=scheme, seed=seed, path=path, folder=folder)
        )
    return model


def text_tokens(config: dict, seed, n: int) -> torch.Tensor:
    """The text windows of n tokens the lab scores a model of `seed` on, as the model
    reads them (evaluate_text's sequences, results.json's numbers, less the last target):
    int64 [text_sequences, n]."""
    rng = np.random.default_rng([int(seed), 3, n])
    source = MarkovSource(int(seed))
    return torch.from_numpy(source.sample(rng, config["text_sequences"], n + 1)[:, :n])


@torch.no_grad()
def band_probe(model, config: dict, seed) -> dict:
    """The model read with every key more than L back hidden (banded(model, L)), on the
    data the lab scores it on (the same sequences as results.json's): {"text": loss by
    chunk of L in the 8L window, "copy": {distance: loss} in 4L windows, "passkey":
    [exact match per depth] at 2L}."""
    with banded(model, config["train_length"]):
        return _probe_scores(model, config, seed)


@torch.no_grad()
def cap_probe(model, config: dict, seed) -> dict:
    """band_probe's scores with every key kept and every offset beyond L - 1 scored at
    L - 1 (capped(model, L - 1)): the same data, the same keys as plain RoPE, and only
    the angles training showed."""
    L = config["train_length"]
    with capped(model, L - 1):
        return _probe_scores(model, config, seed)


@torch.no_grad()
def _probe_scores(model, config: dict, seed) -> dict:
    L, seed = config["train_length"], int(seed)
    source = MarkovSource(seed)
    text = evaluate_text(
        model, source, seed, [8 * L], config["text_sequences"], None, L
    )
    copy = evaluate_copy(
        model,
        source,
        seed,
        4 * L,
        config["copy_distances"][str(4 * L)],
        config["copy_sequences"],
    )
    keys = evaluate_passkey(
        model, source, seed, [2 * L], config["passkey_depths"], config["passkey_keys"]
    )
    return {"text": text["loss_by_chunk"], "copy": copy, "passkey": keys[str(2 * L)]}


MEASURES = {
    "text": N_("text, last L of 8L"),
    "copy": N_("copy 8 back, 4L"),
    "key_far": N_("passkey 2L, depth 0"),
    "key_near": N_("passkey 2L, depth 1"),
}
"""band_summary's measures, as a table names them."""


def band_summary(results: dict, bands: dict, *others: dict) -> dict:
    """{measure of MEASURES: ({seed: with all keys}, {seed: with the band}, ...)}: the
    last chunk of L of the text at 8L, the copy 8 tokens back at 4L, the passkey at 2L at
    the first and the last depth; all keys from results.json, the band from bands[seed]
    (band_probe), then one column per probe in `others` (e.g. cap_probe's, per seed)."""
    rope, L = results["schemes"]["rope"], results["config"]["train_length"]

    def pair(read_all, read_band):
        return (
            {k: read_all(rope[k]) for k in bands},
            *({k: read_band(probe[k]) for k in bands} for probe in (bands, *others)),
        )

    return {
        "text": pair(lambda r: r["text"]["loss_by_chunk"][-1], lambda b: b["text"][-1]),
        "copy": pair(lambda r: r["copy"][str(4 * L)]["8"], lambda b: b["copy"]["8"]),
        "key_far": pair(
            lambda r: r["passkey"][str(2 * L)][0], lambda b: b["passkey"][0]
        ),
        "key_near": pair(
            lambda r: r["passkey"][str(2 * L)][-1], lambda b: b["passkey"][-1]
        ),
    }


@torch.no_grad()
def pi_on_pairs(model, config: dict, seed, pairs) -> list[float]:
    """Position Interpolation on the pairs first <= i < stop only (pairs = (first, stop)),
    the model's own frequencies elsewhere: the text loss at L with s = 4 (its cost where
    nothing needed extending), and at 4L and 8L with s = n / L."""
    L = config["train_length"]
    theta = rope_frequencies("default", model.head_dim, model.base)[0]
    losses = []
    for n, s in ((L, 4), (4 * L, 4), (8 * L, 8)):
        inv_freq = band_interpolated(theta, list(pairs), s)
        losses.append(text_loss_with(model, config, seed, n, (inv_freq, 1.0)))
    return losses


@torch.no_grad()
def text_loss_with(model, config: dict, seed, n: int, rope) -> float:
    """Mean text loss of the model in windows of n tokens (results.json's sequences), its
    RoPE set to `rope` = (inv_freq, attention_factor) for the occasion."""
    source, seed = MarkovSource(int(seed)), int(seed)
    model.set_rope(rope)
    try:
        return evaluate_text(model, source, seed, [n], config["text_sequences"])[
            "loss"
        ][str(n)]
    finally:
        model.set_rope(None)


@contextlib.contextmanager
def banded(model, window: int | None):
    """Within the block, every attention layer of `model` sees only the last `window` keys
    (None: all). With window = L, no query meets an offset it did not meet in training."""
    model.set_window(window)
    try:
        yield model
    finally:
        model.set_window(None)


@contextlib.contextmanager
def capped(model, cap: int):
    """Within the block, every attention layer of the RoPE `model` keeps every key but
    scores a key more than `cap` back as if it were `cap` back: q_m . R((m - n) theta) k_n
    for m - n <= cap, q_m . R(cap theta) k_n beyond (Su 2023's ReRoPE without its
    interpolation; the distance ceiling of Han et al. 2024, LM-Infinite). With cap = L - 1
    no pair meets an angle it did not meet in training, and no key is hidden."""
    if model.position != "rope":
        raise ValueError(
            _("capped needs a RoPE model, this one has position={position!r}").format(
                position=model.position
            )
        )
    for block in model.blocks:
        block.attn.forward = _capped_forward(block.attn, int(cap))
    try:
        yield model
    finally:
        for block in model.blocks:
            del block.attn.forward


def _capped_forward(attn, cap: int):
    """attn's forward with the offsets beyond `cap` scored at `cap` (see capped)."""

    def forward(x, positions=None, return_weights=False):
        batch, seq, d_model = x.shape
        q, k, v = attn._qkv(x, None)
        at_cap = torch.full((seq,), cap, device=x.device)
        q_far = attn._qkv(x, at_cap)[0]  # every query rotated at cap
        k_far = attn._qkv(x, torch.zeros_like(at_cap))[1]  # every key at 0
        offset = torch.arange(seq, device=x.device)
        offset = offset[:, None] - offset[None, :]
        scores = torch.where(
            offset <= cap, q @ k.transpose(-1, -2), q_far @ k_far.transpose(-1, -2)
        ) / math.sqrt(attn.head_dim)
        weights = scores.masked_fill(offset < 0, float("-inf")).softmax(-1)
        out = attn.out((weights @ v).transpose(1, 2).reshape(batch, seq, d_model))
        return (out, weights) if return_weights else out

    return forward


def _layer_inputs(model, tokens: torch.Tensor) -> list[torch.Tensor]:
    """The input of each block's attention (after its LayerNorm), one forward pass."""
    inputs = []
    hooks = [
        block.attn.register_forward_pre_hook(lambda _, args: inputs.append(args[0]))
        for block in model.blocks
    ]
    try:
        with torch.no_grad():
            model(tokens)
    finally:
        for hook in hooks:
            hook.remove()
    return inputs


@torch.no_grad()
def scores_by_offset(model, tokens: torch.Tensor) -> dict:
    """The attention scores q_m . k_n / sqrt(d) of every layer and head, by offset m - n,
    on tokens [batch, n] read as the model reads them (its current RoPE setting).

    Returns {"mean", "max": [layers, heads, n]}: per offset, the mean score over the
    queries that see it (rows m >= offset) and the batch, and the largest one."""
    out = {"mean": [], "max": []}
    n = tokens.shape[1]
    for block, x in zip(model.blocks, _layer_inputs(model, tokens)):
        q, k = block.attn.query_key(x)
        scores = (q @ k.transpose(-1, -2)) / q.shape[-1] ** 0.5  # [batch, heads, n, n]
        # scores[..., m, m - offset] for every offset: diagonals below the main one
        diagonals = [scores.diagonal(-offset, -2, -1) for offset in range(n)]
        out["mean"].append([d.mean((0, -1)) for d in diagonals])
        out["max"].append([d.amax((0, -1)) for d in diagonals])
    return {
        key: torch.stack([torch.stack(row, -1) for row in value])
        for key, value in out.items()
    }


@torch.no_grad()
def pair_sizes(model, tokens: torch.Tensor) -> dict:
    """{"q", "k": [layers, pairs]}: sqrt(mean |q_i|^2) and the same for k, per layer and
    frequency pair i (pair_rms), on tokens [batch, n]: which pairs carry the scores."""
    sizes = {"q": [], "k": []}
    for block, x in zip(model.blocks, _layer_inputs(model, tokens)):
        q, k = block.attn.query_key(x)
        sizes["q"].append(pair_rms(q))
        sizes["k"].append(pair_rms(k))
    return {key: torch.stack(value) for key, value in sizes.items()}


@torch.no_grad()
def entropy_by_length(model, tokens: torch.Tensor, points, queries: int) -> dict:
    """The attention entropy and logit spread of every layer and head by the number of
    keys a query sees (attention_entropy.attention_stats at each point of points, the
    `queries` queries before it), on tokens [batch, n] read as the model reads them (its
    current RoPE setting): {"entropy", "logit_std": float64 [layers, points, heads]}."""
    from ..attention_entropy import attention_stats

    stats = [
        attention_stats(*block.attn.query_key(x), points, queries)
        for block, x in zip(model.blocks, _layer_inputs(model, tokens))
    ]
    return {
        name: np.stack([layer[name] for layer in stats])
        for name in ("entropy", "logit_std")
    }


@torch.no_grad()
def loss_by_position(model, tokens: torch.Tensor) -> torch.Tensor:
    """The next-token loss at each position m (predicting token m + 1), float64 [n - 1],
    the mean over the batch of tokens [batch, n]."""
    logits = model(tokens)[:, :-1]
    losses = torch.nn.functional.cross_entropy(
        logits.transpose(1, 2), tokens[:, 1:], reduction="none"
    )
    return losses.double().mean(0)


@torch.no_grad()
def pair_group_excess(
    groups: dict, seeds=range(5), factor: float = 4.0, folder=None, config=None
):
    """The controlled test of "the trouble sits in the slow pairs": zero-shot, divide the
    frequencies of one group of pairs only by `factor` (the others as trained) and read
    the text loss by position over 8 L, minus the same model's loss with keys more than
    L back hidden (banded: the in-distribution reference).

    groups: {name: pair indices, or None for plain RoPE}; folder: a lab run's (default:
    the committed notebooks/lab_results), config: its results.json's. Returns {"bucket_start": the
    first position of each bucket of 16 past L, "excess": {name: float64 [seed, bucket]},
    "wavelengths": lambda_i = 2 pi / theta_i of the models' pairs, in tokens, "L"}.
    """
    import json

    from ..results import NOTEBOOKS

    folder = Path(folder or NOTEBOOKS / "lab_results")
    if config is None:
        config = json.loads((folder / "results.json").read_text())["config"]
    L = config["train_length"]
    size = 16
    out = {name: [] for name in groups}
    for seed in seeds:
        model = trained_model(folder, seed, config=config)
        tokens = text_tokens(config, seed, 8 * L)
        theta = rope_frequencies("default", model.head_dim, model.base)[0]

        def buckets(loss):
            return np.array(
                [float(loss[i : i + size].mean()) for i in range(L, len(loss), size)]
            )

        with banded(model, L):
            reference = buckets(loss_by_position(model, tokens))
        for name, pairs in groups.items():
            inv_freq = theta.clone()
            if pairs is not None:
                inv_freq[list(pairs)] /= factor
            model.set_rope(None if pairs is None else (inv_freq, 1.0))
            try:
                out[name].append(buckets(loss_by_position(model, tokens)) - reference)
            finally:
                model.set_rope(None)
    return {
        "bucket_start": list(range(L, 8 * L - 1, size)),
        "excess": {name: np.stack(rows) for name, rows in out.items()},
        "wavelengths": (2 * np.pi / theta.double()).numpy(),
        "L": L,
    }
