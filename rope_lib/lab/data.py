"""The lab's data: generated on the fly, deterministic per seed, nothing downloaded.

Vocabulary: N_TEXT "word" tokens (0 .. N_TEXT-1), N_DIGITS digit tokens (DIGIT0 + d) and
one KEY marker. Three kinds of sequence, mixed in training as MIX says:

text     (`MarkovSource.sample`) a sparse second-order Markov chain: after the words (a, b)
         comes one of N_NEXT words with fixed probabilities. It needs one token of look-back
         and no more; `MarkovSource.yardsticks` gives the losses that make a text loss mean
         something (the entropy rate, the current-word-only floor, word frequencies, uniform).
passkey  (`passkey_batch`) text filler with KEY d1 .. dK hidden at some depth and KEY again
         at the very end: the model must copy the K digits that followed the first KEY, from
         however far back (Mohtashami and Jaggi 2023, "Landmark Attention", arXiv:2305.16300,
         in tokens instead of words). The digits are one vocabulary shared by every slot, so
         the answer is "what came after the marker", not a lookup of slot-specific tokens.
copy     (`copy_batch`) text filler in which a span of SPAN distinct digits recurs DISTANCE
         tokens later (an induction copy, Olsson et al. 2022): from its second token on, the
         second copy is predictable only by finding the first.

Every generator returns (tokens int64 [batch, length], answers bool [batch, length]): answers
marks the tokens that can only be predicted by looking back (the passkey's last K digits; the
second copy's tokens after its first). Training weighs them more (train.answer_weights), and
the evaluation scores them.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..language import _

N_TEXT = 24
N_DIGITS = 10
DIGIT0 = N_TEXT
KEY = N_TEXT + N_DIGITS
VOCAB_SIZE = KEY + 1
N_NEXT = 3
KEY_DIGITS = 3
"""Digits of a passkey: 1,000 keys, so a guess is right once in a thousand."""
SPAN = 6
"""Digits of an induction copy (distinct, so each one says where its copy continues)."""
MIX = {"text": 0.25, "passkey": 0.375, "copy": 0.375}
"""The training mixture: fractions of the sequences in a batch."""

COPY_UNIFORM = math.log(N_DIGITS)
"""Copy loss of a guess uniform over the digits: ln 10 = 2.30 nats."""
COPY_NO_LOOK_BACK = float(np.mean([math.log(N_DIGITS - j) for j in range(1, SPAN)]))
"""Copy loss of the best guess that does not look back past the second copy: after j of its
distinct digits, one of the 10 - j others (ln 9 .. ln 5, mean 1.92 nats)."""


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

    def transition(self) -> np.ndarray:
        """T[a, b, c] = P(next word c | the last two words a, b), dense [N_TEXT]*3."""
        t = np.zeros((N_TEXT, N_TEXT, N_TEXT))
        a, b = np.indices((N_TEXT, N_TEXT))
        for j in range(N_NEXT):
            t[a, b, self.next_words[:, :, j]] = self.next_probs[:, :, j]
        return t

    def yardsticks(self, length: int) -> dict:
        """The mean losses (nats per token) over a window of `length` predictions (targets
        x_1 .. x_length of a sample, whose first two words are uniform), computed exactly by
        carrying the distribution of the last two words along the window:

        entropy_rate   the source itself (the best any model can do): ln N_TEXT for x_1,
                       then E[H(T[x_{t-2}, x_{t-1}])]
        current_word   the best predictor that sees only the current word, one for every
                       position: H(x_t | x_{t-1}) of the window's pooled word pairs
        unigram        word frequencies alone: H(x_t) of the window's pooled targets
        uniform        ln N_TEXT
        """
        t = self.transition()
        h = -(self.next_probs * np.log(self.next_probs)).sum(-1)  # H(T[a, b])
        pair = np.full((N_TEXT, N_TEXT), 1.0 / N_TEXT**2)  # (x_{t-1}, x_t) at t = 1
        oracle = [math.log(N_TEXT)]
        pooled = pair.copy()
        for _step in range(length - 1):
            oracle.append(float((pair * h).sum()))
            pair = np.einsum("ab,abc->bc", pair, t)
            pooled += pair
        pooled /= length
        marginal = pooled.sum(0)
        previous = pooled.sum(1, keepdims=True)
        nz = pooled > 0
        current = -(pooled[nz] * np.log((pooled / previous)[nz])).sum()
        return {
            "entropy_rate": float(np.mean(oracle)),
            "current_word": float(current),
            "unigram": float(-(marginal * np.log(marginal)).sum()),
            "uniform": math.log(N_TEXT),
        }

    def sample(self, rng: np.random.Generator, batch: int, length: int) -> np.ndarray:
        """Text sequences, int64 [batch, length], vectorized over the batch."""
        out = np.empty((batch, length), dtype=np.int64)
        out[:, :2] = rng.integers(0, N_TEXT, (batch, 2))
        for t in range(2, length):
            a, b = out[:, t - 2], out[:, t - 1]
            choice = (rng.random(batch)[:, None] > self._cumulative[a, b]).sum(axis=1)
            out[:, t] = self.next_words[a, b, np.minimum(choice, N_NEXT - 1)]
        return out


def passkey_batch(source, rng, batch: int, length: int, depth: float | None = None):
    """(tokens, answers): text filler with KEY d1 .. dK starting at fraction `depth` of the
    room before the end (uniform per row when depth is None), and KEY d1 .. dK as the last
    K + 1 tokens; answers marks those last K digits."""
    k = KEY_DIGITS
    if length < 2 * (k + 1) + 1:
        raise ValueError(
            _("length must be >= {value} for a passkey, got {length}").format(
                value=2 * (k + 1) + 1, length=length
            )
        )
    tokens = source.sample(rng, batch, length)
    room = length - 2 * (k + 1)  # the first KEY may start at 0 .. room
    starts = (
        rng.integers(0, room + 1, batch)
        if depth is None
        else np.full(batch, int(round(float(depth) * room)))
    )
    key = np.concatenate(
        [np.full((batch, 1), KEY), DIGIT0 + rng.integers(0, N_DIGITS, (batch, k))],
        axis=1,
    )
    rows = np.arange(batch)[:, None]
    tokens[rows, starts[:, None] + np.arange(k + 1)] = key
    tokens[:, length - (k + 1) :] = key
    answers = np.zeros((batch, length), dtype=bool)
    answers[:, length - k :] = True
    return torch.from_numpy(tokens), torch.from_numpy(answers)


def copy_batch(
    source, rng, batch: int, length: int, distance: int | None = None, at_start=False
):
    """(tokens, answers): text filler with a span of SPAN distinct digits at p and again at
    p + distance. With distance None both are drawn per row (distance uniform in SPAN ..
    length - SPAN, p uniform where both copies fit); with a distance, the second copy ends
    the sequence, or, with at_start=True, the first copy begins it (p = 0): the same
    distance, read by tokens at other positions. answers marks the second copy's tokens
    after its first."""
    if length < 2 * SPAN:
        raise ValueError(
            _("length must be >= {value} for a copy, got {length}").format(
                value=2 * SPAN, length=length
            )
        )
    if distance is not None and not SPAN <= distance <= length - SPAN:
        raise ValueError(
            _(
                "distance must be in {span} .. {value} for length {length}, got "
                "{distance}"
            ).format(span=SPAN, value=length - SPAN, length=length, distance=distance)
        )
    tokens = source.sample(rng, batch, length)
    if distance is None:
        distances = rng.integers(SPAN, length - SPAN + 1, batch)
        starts = (rng.random(batch) * (length - SPAN - distances + 1)).astype(np.int64)
    else:
        distances = np.full(batch, distance)
        starts = 0 * distances if at_start else length - SPAN - distances
    span = DIGIT0 + np.argsort(rng.random((batch, N_DIGITS)), axis=1)[:, :SPAN]
    rows, offsets = np.arange(batch)[:, None], np.arange(SPAN)
    tokens[rows, starts[:, None] + offsets] = span
    second = (starts + distances)[:, None] + offsets
    tokens[rows, second] = span
    answers = np.zeros((batch, length), dtype=bool)
    answers[rows, second[:, 1:]] = True
    return torch.from_numpy(tokens), torch.from_numpy(answers)


def training_batch(source, rng, batch: int, length: int, mix: dict | None = None):
    """(tokens [batch, length], answers [batch, length]): the mixture `mix` (default MIX)
    of text, passkeys and copies, shuffled; text rows have no answers."""
    mix = MIX if mix is None else mix
    n_key = int(round(batch * mix["passkey"]))
    n_copy = int(round(batch * mix["copy"]))
    n_text = batch - n_key - n_copy
    text = torch.from_numpy(source.sample(rng, n_text, length))
    keys = passkey_batch(source, rng, n_key, length)
    copies = copy_batch(source, rng, n_copy, length)
    tokens = torch.cat([text, keys[0], copies[0]])
    answers = torch.cat([torch.zeros_like(text, dtype=torch.bool), keys[1], copies[1]])
    order = torch.from_numpy(rng.permutation(batch))
    return tokens[order], answers[order]


def passkey_predictions(logits: torch.Tensor) -> torch.Tensor:
    """The digits a model gives for a passkey batch, [batch, KEY_DIGITS], from its logits
    [batch, length, vocab] on the whole sequence (the last K digits are predicted by the
    logits one place before them: teacher-forced argmax, which is an exact match exactly
    when greedy decoding is). A token that is not a digit comes back as -1."""
    tokens = logits[:, -KEY_DIGITS - 1 : -1].argmax(-1)
    digits = tokens - DIGIT0
    return torch.where((digits >= 0) & (digits < N_DIGITS), digits, -1)


def passkey_accuracy(predicted, expected) -> float:
    """Exact-match accuracy: the fraction of rows whose digits are all right.

    predicted, expected: [n, KEY_DIGITS] integers (tensors or nested lists)."""
    predicted, expected = torch.as_tensor(predicted), torch.as_tensor(expected)
    if predicted.shape != expected.shape or predicted.dim() != 2:
        raise ValueError(
            _(
                "predicted and expected must both be [n, digits], got "
                "{predicted_shape} and {expected_shape}"
            ).format(
                predicted_shape=tuple(predicted.shape),
                expected_shape=tuple(expected.shape),
            )
        )
    if predicted.shape[0] == 0:
        raise ValueError(_("predicted must hold at least one row, got 0"))
    return float((predicted == expected).all(dim=1).double().mean())
