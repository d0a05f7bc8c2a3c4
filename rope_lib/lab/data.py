"""The lab's data: generated on the fly, deterministic per seed, nothing downloaded.

Vocabulary: N_TEXT "word" tokens (0 .. N_TEXT-1), KEY_DIGITS x 10 digit tokens (slot j of a
key has its own ten tokens, DIGIT0 + 10 j + digit), and one KEY marker.

Text (`MarkovSource.sample`): a sparse second-order Markov chain: after the words (a, b) comes
one of N_NEXT words with fixed probabilities. Predicting well needs the previous token as well
as the current one, so the model must learn where "one token back" is: a positional skill
that each scheme provides differently, and that may break past the training length.

Passkey (`passkey_batch`): text filler with KEY d1 .. dK inserted at a chosen depth, and KEY at
the very end: the model is asked for the K digits (the "pass key retrieval" test of the PI and
YaRN papers, in tokens instead of words). Because each slot has its own digit tokens, finding
digit j is a pure content lookup ("the token of slot j, wherever it is"): what can stop it
past the training length is the position scheme alone. Training mixes both kinds of sequence.
"""

from __future__ import annotations

import numpy as np
import torch

N_TEXT = 24
N_DIGITS = 10
KEY_DIGITS = 2
DIGIT0 = N_TEXT
KEY = N_TEXT + N_DIGITS * KEY_DIGITS
VOCAB_SIZE = KEY + 1
N_NEXT = 3


class MarkovSource:
    """A sparse random second-order Markov chain over the N_TEXT words, drawn from `seed`.

    next_words[a, b]  the N_NEXT possible words after the pair (a, b)
    next_probs[a, b]  their probabilities (a Dirichlet(1, ..., 1) draw)
    """

    def __init__(self, seed: int):
        rng = np.random.default_rng([seed, 1])
        self.next_words = np.stack(
            [rng.choice(N_TEXT, N_NEXT, replace=False) for _ in range(N_TEXT * N_TEXT)]
        ).reshape(N_TEXT, N_TEXT, N_NEXT)
        self.next_probs = rng.dirichlet(np.ones(N_NEXT), size=(N_TEXT, N_TEXT))
        self._cumulative = np.cumsum(self.next_probs, axis=-1)

    def entropy(self) -> float:
        """Mean entropy (nats) of the next word given the last two, averaged uniformly over
        the pairs: roughly the loss a model that has learned the chain reaches."""
        p = self.next_probs
        return float(-(p * np.log(p)).sum(axis=-1).mean())

    def sample(self, rng: np.random.Generator, batch: int, length: int) -> np.ndarray:
        """Text sequences, int64 [batch, length], vectorized over the batch."""
        out = np.empty((batch, length), dtype=np.int64)
        out[:, :2] = rng.integers(0, N_TEXT, (batch, 2))
        for t in range(2, length):
            a, b = out[:, t - 2], out[:, t - 1]
            choice = (rng.random(batch)[:, None] > self._cumulative[a, b]).sum(axis=1)
            out[:, t] = self.next_words[a, b, np.minimum(choice, N_NEXT - 1)]
        return out


def passkey_batch(
    source: MarkovSource,
    rng: np.random.Generator,
    batch: int,
    length: int,
    depth: float | None = None,
):
    """(tokens int64 [batch, length], key digits int64 [batch, KEY_DIGITS], answer_at int).

    tokens = filler, with KEY d1 .. dK starting at fraction `depth` of the filler (uniform
    per row when depth is None), and the last KEY_DIGITS + 1 tokens = KEY d1 .. dK. The model
    answers at positions answer_at .. length-1 (the digits after the final KEY): its logits at
    answer_at - 1 .. length - 2 predict them.
    """
    k = KEY_DIGITS
    if length < 2 * (k + 1) + 1:
        raise ValueError(
            f"length must be >= {2 * (k + 1) + 1} for a passkey, got {length}"
        )
    tokens = source.sample(rng, batch, length)
    digits = rng.integers(0, N_DIGITS, (batch, k))
    room = length - 2 * (k + 1)  # places where the inserted key may start: 0 .. room
    if depth is None:
        starts = rng.integers(0, room + 1, batch)
    else:
        starts = np.full(batch, int(round(float(depth) * room)))
    slots = DIGIT0 + N_DIGITS * np.arange(k)
    key = np.concatenate([np.full((batch, 1), KEY), digits + slots], axis=1)
    rows = np.arange(batch)[:, None]
    tokens[rows, starts[:, None] + np.arange(k + 1)] = key
    tokens[:, length - (k + 1) :] = key
    return torch.from_numpy(tokens), torch.from_numpy(digits), length - k


def training_batch(
    source: MarkovSource,
    rng: np.random.Generator,
    batch: int,
    length: int,
    passkey_fraction: float = 0.5,
) -> torch.Tensor:
    """A training batch [batch, length + 1] (inputs are [:, :-1], targets [:, 1:]): text,
    and a fraction of passkey sequences."""
    n_key = int(round(batch * passkey_fraction))
    text = torch.from_numpy(source.sample(rng, batch - n_key, length + 1))
    if n_key == 0:
        return text
    keys, _, _ = passkey_batch(source, rng, n_key, length + 1)
    return torch.cat([text, keys])[torch.from_numpy(rng.permutation(batch))]


def passkey_predictions(logits: torch.Tensor, answer_at: int) -> torch.Tensor:
    """The digits a model gives, [batch, KEY_DIGITS], from its logits [batch, length, vocab]
    at the answer positions (teacher-forced argmax; an exact match under teacher forcing is an
    exact match under greedy decoding, since greedy decoding then sees the same prefixes).
    A token that is not a digit of its slot comes back as -1."""
    tokens = logits[:, answer_at - 1 : answer_at - 1 + KEY_DIGITS].argmax(-1)
    digits = tokens - DIGIT0 - N_DIGITS * torch.arange(KEY_DIGITS, device=tokens.device)
    return torch.where(
        (digits >= 0) & (digits < N_DIGITS), digits, torch.full_like(digits, -1)
    )


def passkey_accuracy(predicted, expected) -> float:
    """Exact-match accuracy: the fraction of rows whose digits are all right.

    predicted, expected: [n, KEY_DIGITS] integers (tensors or nested lists)."""
    predicted, expected = torch.as_tensor(predicted), torch.as_tensor(expected)
    if predicted.shape != expected.shape or predicted.dim() != 2:
        raise ValueError(
            f"predicted and expected must both be [n, digits], got {tuple(predicted.shape)} "
            f"and {tuple(expected.shape)}"
        )
    if predicted.shape[0] == 0:
        raise ValueError("predicted must hold at least one row, got 0")
    return float((predicted == expected).all(dim=1).double().mean())
