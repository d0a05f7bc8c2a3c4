"""The extrapolation lab (rope_lib.lab): the model learns, every scheme and extension is wired,
the data is what its docstring says and deterministic per seed, the yardsticks are exact, the
scorers score the answers and nothing else, resume works, and the CLI's --quick mode runs."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from rope_lib import alibi_bias, apply_rope, rope_frequencies
from rope_lib.lab import data as D
from rope_lib.lab import summary
from rope_lib.lab.experiments import METHODS, extension, run
from rope_lib.lab.model import SCHEMES, LabModel
from rope_lib.lab.train import (
    build_model,
    evaluate_copy,
    evaluate_passkey,
    evaluate_text,
    train,
)

ROOT = Path(__file__).resolve().parents[2]
torch.set_num_threads(1)


def test_loss_falls_on_a_tiny_run():
    """300 steps of a one-layer model on windows of the lab's L = 64: from about uniform
    over the vocabulary to below what word frequencies alone give (it uses the context).
    (In windows of 32, a passkey's or a copy's digits fill most of a sequence, and the text
    is learned too slowly for so short a run.)"""
    source = D.MarkovSource(0)
    model = build_model(
        "rope", {"d_model": 32, "n_layers": 1, "n_heads": 2, "max_len": 64}, 0
    )
    before = evaluate_text(model, source, 0, [64], 16)["loss"]["64"]
    train(model, source, seed=0, steps=300, batch=16, length=64, lr=3e-3)
    after = evaluate_text(model, source, 0, [64], 16)["loss"]["64"]
    assert before > math.log(D.VOCAB_SIZE) - 0.5  # untrained: near uniform guessing
    assert after < before - 0.8
    assert after < source.yardsticks(64)["unigram"] - 0.1


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_scheme_runs_and_is_causal(scheme):
    torch.manual_seed(0)
    model = LabModel(D.VOCAB_SIZE, scheme, d_model=32, n_heads=4, max_len=64).eval()
    tokens = torch.randint(0, D.VOCAB_SIZE, (2, 40))
    changed = tokens.clone()
    changed[:, 30:] = (changed[:, 30:] + 1) % D.VOCAB_SIZE
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    assert a.shape == (2, 40, D.VOCAB_SIZE)
    torch.testing.assert_close(a[:, :30], b[:, :30])  # the future does not leak back
    assert not torch.allclose(a[:, 30:], b[:, 30:])


def test_schemes_differ_only_where_they_should():
    """Sinusoidal and learned positions sit once, at the embedding; RoPE/ALiBi in the blocks."""
    sin = LabModel(D.VOCAB_SIZE, "sinusoidal", max_len=64)
    learned = LabModel(D.VOCAB_SIZE, "learned", max_len=64)
    rope = LabModel(D.VOCAB_SIZE, "rope", max_len=64)
    assert all(b.attn.position == "none" for b in sin.blocks + learned.blocks)
    assert all(b.attn.position == "rope" for b in rope.blocks)
    assert learned.learned.table.shape == (64, 64)


def _attention_by_hand(attn, x, q_map, bias=None):
    """Causal attention of a PositionalSelfAttention's weights, with q and k passed through
    q_map and an optional additive bias, written out independently."""
    batch, seq, d = x.shape
    q, k, v = (
        attn.qkv(x)
        .view(batch, seq, 3, attn.n_heads, attn.head_dim)
        .permute(2, 0, 3, 1, 4)
    )
    q, k = q_map(q), q_map(k)
    scores = q @ k.transpose(-1, -2) / math.sqrt(attn.head_dim)
    if bias is not None:
        scores = scores + bias
    scores = scores.masked_fill(
        torch.ones(seq, seq, dtype=torch.bool).triu(1), float("-inf")
    )
    out = scores.softmax(-1) @ v
    return attn.out(out.transpose(1, 2).reshape(batch, seq, d))


@pytest.mark.parametrize("scheme", ["rope", "alibi", "none"])
def test_window_lets_a_query_see_only_its_last_keys(scheme):
    torch.manual_seed(3)
    model = LabModel(
        D.VOCAB_SIZE, scheme, d_model=32, n_heads=2, n_layers=1, max_len=64
    )
    attn, x, window = model.blocks[0].attn, torch.randn(2, 20, 32), 5
    far = torch.arange(20)[:, None] - torch.arange(20)[None, :] >= window
    bias = alibi_bias(20, 2, causal=False) if scheme == "alibi" else torch.zeros(20, 20)
    positions = torch.arange(20)
    q_map = (lambda t: apply_rope(t, positions)) if scheme == "rope" else (lambda t: t)
    with torch.no_grad():
        full = attn(x)
        model.set_window(window)
        banded = attn(x)
        torch.testing.assert_close(
            banded,
            _attention_by_hand(attn, x, q_map, bias.masked_fill(far, float("-inf"))),
            atol=1e-5,
            rtol=1e-4,
        )
        _, weights = attn(x, return_weights=True)
        assert (weights[..., far] == 0).all()
        # the first `window` queries see every key anyway; the later ones lose some
        torch.testing.assert_close(banded[:, :window], full[:, :window])
        assert not torch.allclose(banded[:, window:], full[:, window:], atol=1e-4)
        model.set_window(20)  # a band as long as the sequence: plain causal attention
        torch.testing.assert_close(attn(x), full, atol=1e-6, rtol=1e-5)
    for bad in (0, -1, 2.5):
        attn.window = bad
        with pytest.raises((ValueError, TypeError), match="window"):
            attn(x)


def test_base_sets_the_rope_frequencies_and_query_key_reads_them():
    torch.manual_seed(4)
    model = LabModel(
        D.VOCAB_SIZE, "rope", d_model=32, n_heads=2, n_layers=1, max_len=64, base=500.0
    )
    attn, x = model.blocks[0].attn, torch.randn(2, 12, 32)
    q, k = attn.query_key(x)
    raw = attn.qkv(x).view(2, 12, 3, 2, 16).permute(2, 0, 3, 1, 4)
    positions = torch.arange(12)
    torch.testing.assert_close(q, apply_rope(raw[0], positions, base=500.0))
    torch.testing.assert_close(k, apply_rope(raw[1], positions, base=500.0))
    assert not torch.allclose(q, apply_rope(raw[0], positions))
    with pytest.raises(ValueError, match="x must be"):
        attn.query_key(torch.randn(12, 32))


@pytest.mark.parametrize(
    "method,params",
    [
        ("default", {}),
        ("linear", {"factor": 4.0}),
        ("ntk", {"factor": 4.0}),
        ("dynamic", {"factor": 2.0, "max_position_embeddings": 16, "seq_len": 24}),
        ("yarn", {"factor": 4.0, "original_max_position_embeddings": 16}),
        (
            "llama3",
            {
                "factor": 4.0,
                "original_max_position_embeddings": 16,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
            },
        ),
    ],
)
def test_rope_model_rotates_with_the_chosen_frequencies(method, params):
    torch.manual_seed(1)
    model = LabModel(
        D.VOCAB_SIZE, "rope", d_model=32, n_heads=2, n_layers=1, max_len=64
    ).eval()
    inv_freq, factor = rope_frequencies(method, 16, **params)
    model.set_rope((inv_freq, factor))
    attn = model.blocks[0].attn
    x = torch.randn(2, 24, 32)
    positions = torch.arange(24)
    expected = _attention_by_hand(
        attn,
        x,
        lambda t: apply_rope(t, positions, inv_freq=inv_freq, attention_factor=factor),
    )
    with torch.no_grad():
        torch.testing.assert_close(attn(x, positions), expected, atol=1e-5, rtol=1e-4)
    if method != "default":  # the scaled frequencies really change the output
        model.set_rope(None)
        with torch.no_grad():
            assert not torch.allclose(attn(x, positions), expected, atol=1e-4)


def test_alibi_model_adds_alibi_bias():
    torch.manual_seed(2)
    model = LabModel(
        D.VOCAB_SIZE, "alibi", d_model=32, n_heads=4, n_layers=1, max_len=64
    )
    attn = model.blocks[0].attn
    x = torch.randn(2, 20, 32)
    bias = alibi_bias(20, 4, causal=True).masked_fill(
        torch.ones(20, 20, dtype=torch.bool).triu(1), 0.0
    )
    expected = _attention_by_hand(attn, x, lambda t: t, bias)
    with torch.no_grad():
        torch.testing.assert_close(
            attn(x, torch.arange(20)), expected, atol=1e-5, rtol=1e-4
        )


def test_extensions_are_rope_frequencies_at_the_matched_factor():
    L, d = 64, 32
    for method in ("linear", "ntk"):
        for n in (128, 256, 512):
            inv, factor = extension(method, d, L)(n)
            ref, ref_factor = rope_frequencies(method, d, factor=n / L)
            assert torch.equal(inv, ref) and factor == ref_factor
    inv, factor = extension("yarn", d, L)(256)
    ref, ref_factor = rope_frequencies(
        "yarn", d, factor=4.0, original_max_position_embeddings=L
    )
    assert torch.equal(inv, ref) and factor == ref_factor == 0.1 * math.log(4) + 1
    assert torch.equal(
        extension("default", d, L)(512)[0], rope_frequencies("default", d)[0]
    )
    # dynamic NTK with factor 1 at n tokens is NTK at s = n / L, to the last bit
    for n in (128, 256, 512):
        assert torch.equal(
            extension("dynamic", d, L)(n)[0], extension("ntk", d, L)(n)[0]
        )
    # inside L: the factor fixed at 4; dynamic NTK is then plain RoPE
    assert torch.equal(
        extension("linear", d, L, factor=4)(L)[0], rope_frequencies("default", d)[0] / 4
    )
    assert torch.equal(
        extension("dynamic", d, L, factor=4)(L)[0], rope_frequencies("default", d)[0]
    )


def test_generators_are_deterministic_per_seed():
    a = D.MarkovSource(3).sample(np.random.default_rng(5), 4, 50)
    b = D.MarkovSource(3).sample(np.random.default_rng(5), 4, 50)
    c = D.MarkovSource(4).sample(np.random.default_rng(5), 4, 50)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    t1 = D.training_batch(D.MarkovSource(1), np.random.default_rng(2), 8, 64)
    t2 = D.training_batch(D.MarkovSource(1), np.random.default_rng(2), 8, 64)
    assert torch.equal(t1[0], t2[0]) and torch.equal(t1[1], t2[1])


def test_text_follows_the_second_order_chain():
    source = D.MarkovSource(0)
    seq = source.sample(np.random.default_rng(0), 3, 200)
    for row in seq:
        for t in range(2, len(row)):
            assert row[t] in source.next_words[row[t - 2], row[t - 1]]


def test_passkey_batch_hides_the_key_and_asks_for_it_at_the_end():
    source, k = D.MarkovSource(0), D.KEY_DIGITS
    tokens, answers = D.passkey_batch(source, np.random.default_rng(0), 64, 40, 0.0)
    digits = tokens[:, 1 : k + 1]
    assert (tokens[:, 0] == D.KEY).all()  # depth 0: the key opens the sequence
    assert ((digits >= D.DIGIT0) & (digits < D.DIGIT0 + D.N_DIGITS)).all()
    assert (
        len(torch.unique(digits)) == D.N_DIGITS
    )  # one digit vocabulary for every slot
    assert (tokens[:, -k - 1] == D.KEY).all() and torch.equal(tokens[:, -k:], digits)
    assert torch.equal(answers, torch.arange(40).expand(64, 40) >= 40 - k)
    # depth 1: the key just before the question; the markers appear exactly twice
    end, _ = D.passkey_batch(source, np.random.default_rng(0), 3, 40, 1.0)
    assert (end[:, 40 - 2 * (k + 1)] == D.KEY).all()
    assert ((end == D.KEY).sum(1) == 2).all()
    with pytest.raises(ValueError, match="length must be >= 9"):
        D.passkey_batch(source, np.random.default_rng(0), 1, 8)


def test_copy_batch_repeats_a_span_at_the_distance():
    source, span = D.MarkovSource(0), D.SPAN
    for distance in (span, 20, 58):
        tokens, answers = D.copy_batch(
            source, np.random.default_rng(1), 16, 64, distance
        )
        second = tokens[
            :, 64 - span :
        ]  # a chosen distance: the second copy ends the window
        first = tokens[:, 64 - span - distance : 64 - distance]
        assert torch.equal(first, second)
        assert all(len(set(row.tolist())) == span for row in second)  # distinct digits
        assert ((second >= D.DIGIT0) & (second < D.KEY)).all()
        assert answers.sum().item() == 16 * (span - 1)
        assert answers[
            :, 64 - span + 1 :
        ].all()  # the second copy after its first token
    tokens, answers = D.copy_batch(source, np.random.default_rng(2), 200, 64)
    for row, marks in zip(tokens, answers):
        where = marks.nonzero().ravel()
        assert len(where) == span - 1
        start = int(where[0]) - 1
        copy = row[start : start + span]
        earlier = [
            p for p in range(start - span + 1) if torch.equal(row[p : p + span], copy)
        ]
        assert len(earlier) == 1 and start - earlier[0] >= span
    for bad in (span - 1, 64 - span + 1):
        with pytest.raises(ValueError, match="distance must be in"):
            D.copy_batch(source, np.random.default_rng(0), 1, 64, bad)


def test_copy_at_start_puts_the_first_copy_first_at_the_same_distance():
    source, span = D.MarkovSource(0), D.SPAN
    for distance in (span, 20, 58):
        tokens, answers = D.copy_batch(
            source, np.random.default_rng(1), 16, 64, distance, at_start=True
        )
        first, second = tokens[:, :span], tokens[:, distance : distance + span]
        assert torch.equal(first, second)
        assert ((first >= D.DIGIT0) & (first < D.KEY)).all()
        assert answers.sum().item() == 16 * (span - 1)
        assert answers[:, distance + 1 : distance + span].all()
        # the same digits as the placement at the end: only where they sit differs
        end, _ = D.copy_batch(source, np.random.default_rng(1), 16, 64, distance)
        assert torch.equal(end[:, 64 - span :], second)


def test_text_only_mixture_has_no_passkeys_and_no_copies():
    mix = {"text": 1.0, "passkey": 0.0, "copy": 0.0}
    tokens, answers = D.training_batch(
        D.MarkovSource(0), np.random.default_rng(0), 8, 65, mix
    )
    assert tokens.shape == (8, 65) and not answers.any()
    assert (tokens < D.N_TEXT).all()


def test_training_batch_mixes_the_kinds_as_MIX_says():
    tokens, answers = D.training_batch(
        D.MarkovSource(0), np.random.default_rng(0), 32, 65
    )
    has_key = (tokens == D.KEY).any(1)
    has_digit = ((tokens >= D.DIGIT0) & (tokens < D.KEY)).any(1)
    assert has_key.sum() == 32 * D.MIX["passkey"]
    assert (has_digit & ~has_key).sum() == 32 * D.MIX["copy"]
    assert not answers[~has_digit].any()  # text rows have no answers
    assert (answers.sum(1)[has_key] == D.KEY_DIGITS).all()
    assert (answers.sum(1)[has_digit & ~has_key] == D.SPAN - 1).all()


def test_yardsticks_agree_with_sampled_text():
    """The exact yardsticks against 6,000 sampled windows: the oracle's loss, the counted
    current-word conditional entropy (Miller-Madow's bias correction) and the unigram
    cross-entropy, each within 0.02 nats."""
    n, windows = 64, 6000
    source = D.MarkovSource(2)
    y = source.yardsticks(n)
    assert y["entropy_rate"] < y["current_word"] < y["unigram"] < y["uniform"]
    assert y["uniform"] == math.log(D.N_TEXT)
    x = source.sample(np.random.default_rng(7), windows, n + 1)
    t = source.transition()
    oracle = -np.log(t[x[:, :-2], x[:, 1:-1], x[:, 2:]]).sum() + windows * math.log(
        D.N_TEXT
    )
    assert abs(oracle / (windows * n) - y["entropy_rate"]) < 0.02
    pairs = np.zeros((D.N_TEXT, D.N_TEXT))
    np.add.at(pairs, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    conditional = pairs / pairs.sum(1, keepdims=True)
    counted = -(pairs[pairs > 0] * np.log(conditional[pairs > 0])).sum() / pairs.sum()
    counted += ((pairs > 0).sum() - D.N_TEXT) / (2 * pairs.sum())  # Miller-Madow
    assert abs(counted - y["current_word"]) < 0.02
    freq = np.bincount(x[:, 1:].ravel(), minlength=D.N_TEXT) / x[:, 1:].size
    assert abs(-(freq * np.log(freq)).sum() - y["unigram"]) < 0.02
    longer = source.yardsticks(8 * n)  # the first, unpredictable word weighs less
    assert longer["entropy_rate"] < y["entropy_rate"]


def test_passkey_scorer_on_hand_made_cases():
    assert D.passkey_accuracy([[1, 2, 3], [3, 4, 5]], [[1, 2, 3], [3, 4, 5]]) == 1.0
    assert D.passkey_accuracy([[1, 2, 3], [3, 4, 6]], [[1, 2, 3], [3, 4, 5]]) == 0.5
    assert D.passkey_accuracy([[3, 2, 1]], [[1, 2, 3]]) == 0.0  # order matters
    assert D.passkey_accuracy([[-1, 2, 3]], [[1, 2, 3]]) == 0.0
    with pytest.raises(ValueError, match="predicted and expected"):
        D.passkey_accuracy([[1, 2, 3]], [[1, 2]])
    with pytest.raises(ValueError, match="at least one row"):
        D.passkey_accuracy(torch.zeros(0, 3), torch.zeros(0, 3))


def test_passkey_predictions_read_the_places_before_the_answers():
    k, length = D.KEY_DIGITS, 20
    logits = torch.zeros(2, length, D.VOCAB_SIZE)
    want = torch.tensor([[7, 3, 0], [0, 9, 9]])
    for row in range(2):
        for j in range(k):
            logits[row, length - k - 1 + j, D.DIGIT0 + want[row, j]] = 5.0
    logits[1, length - k - 1, 3] = 9.0  # row 1 answers a word first
    logits[:, -1, D.DIGIT0] = 99.0  # the last place predicts past the sequence: ignored
    got = D.passkey_predictions(logits)
    assert torch.equal(got[0], want[0]) and got[1, 0] == -1
    assert D.passkey_accuracy(got, want) == 0.5


class _LookBack(torch.nn.Module):
    """A hand-written model that looks back perfectly: at a token seen before, it predicts
    what followed the earlier occurrence whose preceding tokens match the most (an induction
    head with a longer memory), with logit 30; elsewhere it guesses uniformly. It solves
    every passkey (even with a repeated digit) and every copy."""

    def forward(self, tokens):
        batch, seq = tokens.shape
        logits = torch.zeros(batch, seq, D.VOCAB_SIZE)
        for b in range(batch):
            row = tokens[b].tolist()
            for t in range(seq):
                best, best_match = None, 0
                for p in range(t - 1, -1, -1):
                    match = 0
                    while match <= p and row[p - match] == row[t - match]:
                        match += 1
                    if match > best_match:
                        best, best_match = p, match
                if best is not None:
                    logits[b, t, row[best + 1]] = 30.0
        return logits


def test_scorers_score_the_answers_with_a_model_that_looks_back():
    source = D.MarkovSource(0)
    model = _LookBack()
    grid = evaluate_passkey(model, source, 0, [40, 80], [0.0, 0.5, 1.0], 6)
    assert grid == {"40": [1.0, 1.0, 1.0], "80": [1.0, 1.0, 1.0]}
    copies = evaluate_copy(model, source, 0, 64, [8, 56], 6)
    assert all(loss < 1e-6 for loss in copies.values())
    # A model that never looks back: exactly uniform on the answers, and no passkey right
    blind = torch.nn.Module()
    blind.forward = lambda tokens: torch.zeros(*tokens.shape, D.VOCAB_SIZE)
    uniform = evaluate_copy(blind, source, 0, 64, [8], 6)["8"]
    assert abs(uniform - math.log(D.VOCAB_SIZE)) < 1e-6
    assert evaluate_passkey(blind, source, 0, [40], [0.5], 6) == {"40": [0.0]}


def _results(per_seed_passkey: dict) -> dict:
    """A hand-made results dict with the layout of experiments.py, for summary's readers."""
    L = 64
    schemes = {
        "none": {
            s: {
                "passkey": {str(L): [v, v], str(2 * L): [v, 0.0]},
                "text": {"loss": {"64": v}},
            }
            for s, v in per_seed_passkey.items()
        }
    }
    scaling = {
        "yarn": {
            s: {"passkey": {str(2 * L): [v, 1.0]}} for s, v in per_seed_passkey.items()
        }
    }
    return {
        "config": {"seeds": [int(s) for s in per_seed_passkey], "train_length": L},
        "schemes": schemes,
        "scaling": scaling,
    }


def test_summary_reads_per_seed_and_spreads_over_seeds():
    results = _results({"0": 1.0, "1": 0.9, "2": 0.2})
    assert summary.passkey(results, "none") == {"0": 1.0, "1": 0.9, "2": 0.2}
    assert summary.passkey(results, "none", 128) == {"0": 0.5, "1": 0.45, "2": 0.1}
    assert summary.passkey(results, "rope", 128, "yarn") == {
        "0": 1.0,
        "1": 0.95,
        "2": 0.6,
    }
    assert summary.spread(summary.passkey(results, "rope", 128, "yarn")) == (
        0.95,
        0.6,
        1.0,
    )
    assert summary.text_loss(results, "none") == {"0": 1.0, "1": 0.9, "2": 0.2}


def test_cli_quick_runs_and_resume_runs_nothing_new(tmp_path):
    out = tmp_path / "lab"
    cmd = [
        sys.executable,
        "-m",
        "rope_lib.lab",
        "--seed",
        "3",
        "--out",
        str(out),
        "--quick",
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ran 6 job(s)" in done.stdout
    results = json.loads((out / "results.json").read_text())
    config = results["config"]
    assert config["seeds"] == [3] and config["quick"]
    assert set(results["schemes"]) == set(SCHEMES)
    assert set(results["scaling"]) == {*METHODS, "yarn_no_temperature"}
    assert set(results["finetune"]) == {"default", "linear", "yarn"}
    # the controls: text-only and low-rate fine-tunes, YaRN without temperature, base 500
    controls = results["finetune_controls"]
    assert set(controls) == {"text_only", "low_lr"}
    for control in controls.values():
        assert set(control) == {"default", "linear"}
        assert sorted(control["linear"]["3"], key=int) == [
            str(b) for b in config["finetune"]["budgets"]
        ]
        # budget 0 is the model trained at L, whatever the fine-tune does next
        assert control["linear"]["3"]["0"] == results["finetune"]["linear"]["3"]["0"]
    assert (
        controls["text_only"]["default"]["3"]["10"]
        != (results["finetune"]["default"]["3"]["10"])
    )
    yarn, cold = (
        results["scaling"]["yarn"]["3"],
        results["scaling"]["yarn_no_temperature"],
    )
    assert cold["3"]["text"] != yarn["text"]
    sweep = results["base_sweep"]["500"]["3"]
    assert set(sweep["scaling"]) == set(results["scaling"])
    assert sweep["text"]["loss"] != results["schemes"]["rope"]["3"]["text"]["loss"]
    assert set(results["schemes"]["none"]["3"]["copy_at_start"]) == {"256"}
    budgets = [str(b) for b in config["finetune"]["budgets"]]
    assert sorted(results["finetune"]["yarn"]["3"], key=int) == budgets
    rope = results["schemes"]["rope"]["3"]
    assert set(rope["passkey"]) == {str(n) for n in config["lengths"]}
    assert set(rope["copy"]) == {"64", "256"}
    assert set(results["yardsticks"]["3"]) == {str(n) for n in config["lengths"]}
    # dynamic NTK (factor 1) is NTK at matched factors: the same numbers, not close ones
    dynamic, ntk = results["scaling"]["dynamic"]["3"], results["scaling"]["ntk"]["3"]
    assert {k: dynamic[k] for k in ("text", "passkey", "copy")} == {
        k: ntk[k] for k in ("text", "passkey", "copy")
    }
    # budget 0 of the plain-RoPE fine-tune is the base model, scored again
    assert (
        results["finetune"]["default"]["3"]["0"]["passkey"]["64"]
        == rope["passkey"]["64"]
    )
    for name in ("text", "passkey", "copy", "scaling", "finetune"):
        assert (out / f"{name}.png").stat().st_size > 1000
    assert len(list((out / "jobs").glob("*.json"))) == 6
    assert len(list((out / "checkpoints").glob("*.pt"))) == 6
    # A second run finds every job: it runs nothing and writes the same numbers.
    again = run(out, seed=3, quick=True, quiet=True)
    assert again["trained"] == []
    rerun = json.loads((out / "results.json").read_text())
    assert {k: v for k, v in rerun.items() if k != "timing"} == {
        k: v for k, v in results.items() if k != "timing"
    }
    # A job whose file is gone is run again from its checkpoint: same numbers again
    (out / "jobs" / "alibi_seed3.json").unlink()
    third = run(out, seed=3, quick=True, quiet=True, workers=1)
    assert third["trained"] == ["alibi_seed3"]
    assert third["schemes"] == results["schemes"]
