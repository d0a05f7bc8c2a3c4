"""Training and evaluation of the lab's models, with checkpoints so that a run resumes.

    model = build_model(position, model_config, seed)        # a LabModel, weights from seed
    losses = train(model, source, seed=..., steps=..., batch=..., length=..., lr=...)
                                                             # AdamW, warm-up + cosine decay
    evaluate_lm(model, source, seed, lengths, n_sequences)   # mean loss per window length
    evaluate_passkey(model, source, seed, lengths, depths, n_keys)  # exact-match grid
    save_checkpoint(path, model, losses, tag), load_checkpoint(path, model)

evaluate_lm and evaluate_passkey take rope_for_length(length) -> (inv_freq, attention_factor)
or None to evaluate a RoPE model with scaled frequencies (rope_frequencies) per length.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .data import (
    DIGIT0,
    KEY,
    KEY_DIGITS,
    VOCAB_SIZE,
    MarkovSource,
    passkey_accuracy,
    passkey_batch,
    passkey_predictions,
    training_batch,
)
from .model import LabModel


def build_model(position: str, model_config: dict, seed: int) -> LabModel:
    """A fresh LabModel, its weights drawn from `seed`."""
    torch.manual_seed(seed)
    return LabModel(VOCAB_SIZE, position, **model_config)


def answer_weights(targets: torch.Tensor, weight: float) -> torch.Tensor:
    """Per-target loss weights [batch, seq]: `weight` on the passkey answer (digit targets in
    the last KEY_DIGITS positions), 1 elsewhere."""
    w = torch.ones(targets.shape, dtype=torch.float32)
    tail = targets[:, -KEY_DIGITS:]
    w[:, -KEY_DIGITS:] = torch.where((tail >= DIGIT0) & (tail < KEY), weight, 1.0)
    return w


def train(
    model: LabModel,
    source: MarkovSource,
    *,
    seed: int,
    steps: int,
    batch: int,
    length: int,
    lr: float,
    warmup: int = 30,
    answer_weight: float = 8.0,
    progress=None,
) -> list[float]:
    """Train with AdamW and a cosine decay; the data stream is drawn from `seed` alone.
    The passkey answers (the last KEY_DIGITS targets of a passkey sequence) count
    `answer_weight` times in the loss: they are 2 tokens in 64, and a tiny model trained for a
    few hundred steps otherwise never learns to look them up.
    Returns the training loss of every step. `progress` (a tqdm bar) is advanced per step."""
    rng = np.random.default_rng([seed, 2, length])
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return 0.1 + 0.9 * 0.5 * (
            1 + math.cos(math.pi * (step - warmup) / (steps - warmup))
        )

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    model.train()
    losses = []
    for _ in range(steps):
        tokens = training_batch(source, rng, batch, length)
        logits = model(tokens[:, :-1])
        targets = tokens[:, 1:]
        loss = F.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), reduction="none"
        )
        loss = (loss * answer_weights(targets, answer_weight).flatten()).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
            progress.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    model.eval()
    return losses


@torch.no_grad()
def evaluate_lm(
    model: LabModel,
    source: MarkovSource,
    seed: int,
    lengths,
    n_sequences: int,
    rope_for_length=None,
    chunk: int | None = None,
) -> dict:
    """{"loss": {length: mean loss}, "loss_by_chunk": [...]}: the mean next-token loss over
    whole windows of each length (ALiBi's Figure 1 measure), on text drawn from a stream
    that depends on `seed` and the length only, so every model sees the same windows.
    loss_by_chunk: at the longest length, the mean loss over consecutive chunks of `chunk`
    positions (where in the window the loss grows). rope_for_length(length) -> (inv_freq,
    attention_factor) or None sets a RoPE model's frequencies per evaluated length."""
    model.eval()
    out, by_chunk = {}, []
    for length in lengths:
        rng = np.random.default_rng([seed, 3, length])
        tokens = torch.from_numpy(source.sample(rng, n_sequences, length + 1))
        if rope_for_length is not None:
            model.set_rope(rope_for_length(length))
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(
            logits.flatten(0, 1), tokens[:, 1:].flatten(), reduction="none"
        ).view(n_sequences, length)
        out[str(length)] = float(loss.mean())
        if length == max(lengths) and chunk:
            by_chunk = [float(c) for c in loss.mean(0).view(-1, chunk).mean(1)]
    if rope_for_length is not None:
        model.set_rope(None)
    return {"loss": out, "loss_by_chunk": by_chunk}


@torch.no_grad()
def evaluate_passkey(
    model: LabModel,
    source: MarkovSource,
    seed: int,
    lengths,
    depths,
    n_keys: int,
    rope_for_length=None,
) -> list[list[float]]:
    """Exact-match passkey accuracy [len(lengths)][len(depths)]: n_keys keys per cell, drawn
    from a stream that depends on `seed`, the length and the depth only."""
    model.eval()
    grid = []
    for length in lengths:
        if rope_for_length is not None:
            model.set_rope(rope_for_length(length))
        row = []
        for j, depth in enumerate(depths):
            rng = np.random.default_rng([seed, 4, length, j])
            tokens, digits, answer_at = passkey_batch(
                source, rng, n_keys, length, depth
            )
            predicted = passkey_predictions(model(tokens), answer_at)
            row.append(passkey_accuracy(predicted, digits))
        grid.append(row)
    if rope_for_length is not None:
        model.set_rope(None)
    return grid


def save_checkpoint(path: Path, model: LabModel, losses: list[float], tag=None) -> None:
    """Write the weights, the training losses and the configuration `tag` atomically (a
    partial file never counts: it is written aside, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"state_dict": model.state_dict(), "losses": losses, "tag": tag}, tmp)
    tmp.replace(path)


def load_checkpoint(path: Path, model: LabModel) -> list[float]:
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["state_dict"])
    model.eval()
    return list(state["losses"])
