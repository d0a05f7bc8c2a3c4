"""Training and evaluation of the lab's models, with checkpoints so that a run resumes.

    model = build_model(position, model_config, seed)     # a LabModel, weights from seed
    losses = train(model, source, seed=..., steps=..., batch=..., length=..., lr=...)
    evaluate_text(model, source, seed, lengths, n_sequences)     # mean loss per length
    evaluate_passkey(model, source, seed, lengths, depths, n_keys)   # exact-match grid
    evaluate_copy(model, source, seed, length, distances, n_sequences)  # loss by distance
    save_checkpoint(path, model, losses, tag), load_checkpoint(path, model)

The evaluations take rope_for_length(length) -> (inv_freq, attention_factor) or None, to
evaluate a RoPE model with scaled frequencies (rope_frequencies) chosen per length. Their
data streams depend on the seed, the kind and the length only, so every model and every
method is scored on the same sequences.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .data import (
    DIGIT0,
    KEY_DIGITS,
    VOCAB_SIZE,
    MarkovSource,
    copy_batch,
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


def answer_weights(answers: torch.Tensor, weight: float) -> torch.Tensor:
    """Per-token loss weights: `weight` on the answers (the tokens only a look-back
    predicts), 1 elsewhere."""
    return 1.0 + (weight - 1.0) * answers.float()


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
    constant: bool = False,
    mix: dict | None = None,
    progress=None,
    after_step=None,
) -> list[float]:
    """Train with AdamW on the data mixture (data.MIX), the data stream drawn from `seed`
    alone; the learning rate warms up for `warmup` steps, then decays along a cosine to a
    tenth (or stays, with constant=True: a fine-tune whose every prefix is a shorter one).
    The answers count `answer_weight` times in the loss: they are 3 to 5 tokens in 64, and
    without the weight a tiny model learns the text long before it learns to look back.
    mix: the batch's fractions of text, passkeys and copies (default data.MIX).
    after_step(n) is called after step n (1-based), e.g. to evaluate at budgets; `progress`
    (a tqdm bar) advances per step. Returns the training loss of every step."""
    rng = np.random.default_rng([seed, 2, length])
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        if constant:
            return 1.0
        return 0.1 + 0.45 * (1 + math.cos(math.pi * (step - warmup) / (steps - warmup)))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    losses = []
    for step in range(steps):
        model.train()
        tokens, answers = training_batch(source, rng, batch, length + 1, mix)
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(
            logits.flatten(0, 1), tokens[:, 1:].flatten(), reduction="none"
        )
        loss = (loss * answer_weights(answers[:, 1:], answer_weight).flatten()).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        if progress is not None:
            progress.update(1)
        if after_step is not None:
            model.eval()
            after_step(step + 1)
    model.eval()
    return losses


class _Scaled:
    """Within the block, a RoPE model uses rope_for_length(length) (nothing if None)."""

    def __init__(self, model, rope_for_length, length):
        self.model, self.rope = model, rope_for_length and rope_for_length(length)
        self.scaled = rope_for_length is not None

    def __enter__(self):
        if self.scaled:
            self.model.set_rope(self.rope)

    def __exit__(self, *exc):
        if self.scaled:
            self.model.set_rope(None)


def _losses(model, tokens) -> torch.Tensor:
    """Next-token losses [batch, length - 1] of a batch of sequences."""
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")


@torch.no_grad()
def evaluate_text(
    model,
    source,
    seed: int,
    lengths,
    n_sequences: int,
    rope_for_length=None,
    chunk=None,
) -> dict:
    """{"loss": {length: mean loss}, "loss_by_chunk": [...]}: the mean next-token loss over
    text windows of each length (ALiBi's Figure 1 measure); loss_by_chunk: at the longest
    length, the mean over consecutive chunks of `chunk` positions (where the loss grows)."""
    model.eval()
    out, by_chunk = {}, []
    for length in lengths:
        rng = np.random.default_rng([seed, 3, length])
        tokens = torch.from_numpy(source.sample(rng, n_sequences, length + 1))
        with _Scaled(model, rope_for_length, length):
            loss = _losses(model, tokens)
        out[str(length)] = float(loss.mean())
        if length == max(lengths) and chunk:
            by_chunk = [float(c) for c in loss.mean(0).view(-1, chunk).mean(1)]
    return {"loss": out, "loss_by_chunk": by_chunk}


@torch.no_grad()
def evaluate_passkey(
    model, source, seed: int, lengths, depths, n_keys: int, rope_for_length=None
) -> dict:
    """{length: [exact-match accuracy per depth]}: n_keys passkeys per cell."""
    model.eval()
    grid = {}
    for length in lengths:
        row = []
        with _Scaled(model, rope_for_length, length):
            for j, depth in enumerate(depths):
                rng = np.random.default_rng([seed, 4, length, j])
                tokens, _ = passkey_batch(source, rng, n_keys, length, depth)
                expected = tokens[:, -KEY_DIGITS:] - DIGIT0
                row.append(
                    passkey_accuracy(passkey_predictions(model(tokens)), expected)
                )
        grid[str(length)] = row
    return grid


@torch.no_grad()
def evaluate_copy(
    model,
    source,
    seed: int,
    length: int,
    distances,
    n_sequences: int,
    rope_for_length=None,
    at_start: bool = False,
) -> dict:
    """{distance: mean loss on the second copy's answers}: in windows of `length` tokens
    that end with the second copy, its first copy `distance` tokens earlier (at_start: the
    first copy opens the window instead, so that the copy is read near its start)."""
    model.eval()
    out = {}
    with _Scaled(model, rope_for_length, length):
        for distance in distances:
            rng = np.random.default_rng([seed, 5, length, distance])
            tokens, answers = copy_batch(
                source, rng, n_sequences, length, distance, at_start
            )
            loss = _losses(model, tokens)
            out[str(distance)] = float(loss[answers[:, 1:]].mean())
    return out


def save_checkpoint(path: Path, model: LabModel, losses: list[float], tag=None) -> None:
    """Write the weights, the training losses and the configuration `tag` atomically (a
    partial file never counts: it is written aside, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save({"state_dict": model.state_dict(), "losses": losses, "tag": tag}, tmp)
    tmp.replace(path)


def load_checkpoint(path: Path, model: LabModel, tag=None) -> list[float] | None:
    """The training losses, with the weights loaded into `model`, if the checkpoint at
    `path` exists and was made with `tag`; else None."""
    if not path.exists():
        return None
    state = torch.load(path, map_location="cpu", weights_only=False)
    if state.get("tag") != tag:
        return None
    model.load_state_dict(state["state_dict"])
    model.eval()
    return list(state["losses"])
