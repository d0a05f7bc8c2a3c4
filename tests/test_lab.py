"""The extrapolation lab (rope_lib.lab): the model learns, every scheme and scaling variant is
wired, the data is deterministic per seed, the passkey scorer is right, resume works, and the
CLI's --quick mode runs."""

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
from rope_lib.lab.experiments import rope_scaling, run, summarize
from rope_lib.lab.model import SCHEMES, LabModel
from rope_lib.lab.train import build_model, evaluate_lm, train

ROOT = Path(__file__).resolve().parent.parent
torch.set_num_threads(1)


def test_loss_falls_on_a_tiny_run():
    source = D.MarkovSource(0)
    model = build_model(
        "rope", {"d_model": 32, "n_layers": 1, "n_heads": 2, "max_len": 64}, 0
    )
    before = evaluate_lm(model, source, 0, [32], 8)["loss"]["32"]
    train(model, source, seed=0, steps=150, batch=16, length=32, lr=3e-3)
    after = evaluate_lm(model, source, 0, [32], 8)["loss"]["32"]
    assert before > math.log(D.VOCAB_SIZE) - 0.5  # untrained: near uniform guessing
    assert after < before - 0.8


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


def test_rope_scaling_helper_matches_rope_frequencies():
    inv, factor = rope_scaling("yarn", 4, 16, 64)(256)
    ref_inv, ref_factor = rope_frequencies(
        "yarn", 16, factor=4.0, original_max_position_embeddings=64
    )
    assert torch.equal(inv, ref_inv) and factor == ref_factor
    assert rope_scaling("default", 4, 16, 64)(256) is None
    d128 = rope_scaling("dynamic", 2, 16, 64)(128)[0]
    d512 = rope_scaling("dynamic", 2, 16, 64)(512)[0]
    assert (
        d512[-1] < d128[-1]
    )  # dynamic NTK: the longer the window, the slower the last pair


def test_generators_are_deterministic_per_seed():
    a = D.MarkovSource(3).sample(np.random.default_rng(5), 4, 50)
    b = D.MarkovSource(3).sample(np.random.default_rng(5), 4, 50)
    c = D.MarkovSource(4).sample(np.random.default_rng(5), 4, 50)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    t1 = D.training_batch(D.MarkovSource(1), np.random.default_rng(2), 8, 64)
    t2 = D.training_batch(D.MarkovSource(1), np.random.default_rng(2), 8, 64)
    assert torch.equal(t1, t2)


def test_text_follows_the_second_order_chain():
    source = D.MarkovSource(0)
    seq = source.sample(np.random.default_rng(0), 3, 200)
    for row in seq:
        for t in range(2, len(row)):
            assert row[t] in source.next_words[row[t - 2], row[t - 1]]


def test_passkey_batch_places_the_key():
    source = D.MarkovSource(0)
    tokens, digits, answer_at = D.passkey_batch(
        source, np.random.default_rng(0), 3, 40, 0.0
    )
    k = D.KEY_DIGITS
    slots = D.DIGIT0 + D.N_DIGITS * torch.arange(k)
    assert answer_at == 40 - k
    assert (tokens[:, 0] == D.KEY).all() and torch.equal(
        tokens[:, 1 : k + 1], digits + slots
    )
    assert (tokens[:, answer_at - 1] == D.KEY).all()
    assert torch.equal(tokens[:, answer_at:], digits + slots)
    t_end, _, _ = D.passkey_batch(source, np.random.default_rng(0), 3, 40, 1.0)
    assert (
        t_end[:, 40 - 2 * (k + 1)] == D.KEY
    ).all()  # depth 1: just before the question


def test_passkey_scorer_on_hand_made_cases():
    assert D.passkey_accuracy([[1, 2], [3, 4]], [[1, 2], [3, 4]]) == 1.0
    assert (
        D.passkey_accuracy([[1, 2], [3, 5]], [[1, 2], [3, 4]]) == 0.5
    )  # one digit off
    assert (
        D.passkey_accuracy([[2, 1], [4, 3]], [[1, 2], [3, 4]]) == 0.0
    )  # swapped digits
    assert D.passkey_accuracy([[-1, 2]], [[1, 2]]) == 0.0
    with pytest.raises(ValueError, match="predicted and expected"):
        D.passkey_accuracy([[1, 2, 3]], [[1, 2]])


def test_passkey_predictions_read_the_answer_positions():
    k, length = D.KEY_DIGITS, 20
    answer_at = length - k
    logits = torch.zeros(2, length, D.VOCAB_SIZE)
    want = torch.tensor([[7, 3], [0, 9]])[:, :k]
    for j in range(k):
        logits[0, answer_at - 1 + j, D.DIGIT0 + D.N_DIGITS * j + want[0, j]] = 5.0
        logits[1, answer_at - 1 + j, D.DIGIT0 + D.N_DIGITS * j + want[1, j]] = 5.0
    logits[1, answer_at - 1, 3] = 9.0  # row 1 answers a word, not a digit, first
    got = D.passkey_predictions(logits, answer_at)
    assert torch.equal(got[0], want[0]) and got[1, 0] == -1
    assert D.passkey_accuracy(got, want) == 0.5


def test_summary_over_seeds():
    s = summarize({"0": {"64": 1.0}, "1": {"64": 3.0}})
    assert s == {"64": {"mean": 2.0, "std": 1.0, "min": 1.0, "max": 3.0}}
    g = summarize({"0": [[0.0, 1.0]], "1": [[1.0, 1.0]]})
    assert g["mean"] == [[0.5, 1.0]] and g["max"] == [[1.0, 1.0]]


def test_cli_quick_runs_and_resume_trains_nothing_new(tmp_path):
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
    done = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=300
    )  # < 1 min on a quiet machine
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trained 8 model(s)" in done.stdout
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["seeds"] == [3] and results["config"]["quick"]
    assert set(results["lm"]) == set(SCHEMES)
    for name in ("lm.png", "passkey.png", "scaling.png"):
        assert (out / name).stat().st_size > 1000
    assert len(list((out / "checkpoints").glob("*.pt"))) == 8
    # A second run finds every checkpoint: it trains nothing and gives the same numbers.
    torch.set_num_threads(1)
    again = run(out, seed=3, quick=True, quiet=True)
    assert again["trained"] == []
    assert json.loads((out / "results.json").read_text()) == results


# --- the results explorer (rope_lib.widgets.lab) and the lesson's checkers -----------
COMMITTED = ROOT / "notebooks" / "lab_results" / "results.json"


def _explorer(**kwargs):
    import matplotlib

    matplotlib.use("Agg")
    from rope_lib.widgets.lab import LabResultsWidget

    results = json.loads(COMMITTED.read_text())
    return results, LabResultsWidget(results, **kwargs)


def _seed_mean(per_seed: dict, n: int) -> float:
    """The mean over seeds of the stored per-seed numbers (not the stored summary)."""
    runs = [run.get("loss", run) for run in per_seed.values()]  # lm runs keep more
    return float(np.mean([run[str(n)] for run in runs]))


def test_explorer_shows_the_chosen_schemes_and_the_scaled_rope():
    import matplotlib.pyplot as plt

    results, widget = _explorer(schemes=("rope", "alibi"), method="yarn")
    lengths = results["config"]["eval_lengths"]
    widget.update(schemes=("none", "alibi"), method="linear", factor=2)
    shown = {s for s, line in widget.lines.items() if line.get_visible()}
    assert shown == {"none", "alibi"}
    assert {s for s, band in widget.bands.items() if band.get_visible()} == shown
    per_seed = results["rope_scaling"]["linear"]["2"]["per_seed"]
    np.testing.assert_allclose(
        widget.scaled.get_ydata(), [_seed_mean(per_seed, n) for n in lengths], rtol=1e-6
    )
    alibi = results["lm"]["alibi"]["per_seed"]
    np.testing.assert_allclose(
        widget.lines["alibi"].get_ydata(),
        [_seed_mean(alibi, n) for n in lengths],
        rtol=1e-6,
    )
    text = widget.readout.value
    assert "linear ×2" in text and "NoPE" in text and "RoPE 3" not in text
    # the y range holds every number the widget can show: no axis ever has to move
    low, high = widget.ax.get_ylim()
    for method in results["config"]["methods"]:
        for factor in results["config"]["factors"]:
            widget.update(method=method, factor=factor)
            assert (
                low
                < min(widget.scaled.get_ydata())
                <= max(widget.scaled.get_ydata())
                < high
            )
    plt.close(widget.figure)


def test_explorer_readout_changes_with_every_control():
    import matplotlib.pyplot as plt

    _, widget = _explorer(schemes=("rope", "alibi", "sinusoidal"), method="yarn")
    moves = [
        ("schemes", ("rope", "alibi")),
        ("method", "ntk"),
        ("factor", "8"),
        ("method", "default"),
        ("factor", "2"),  # unused by plain RoPE, and the readout says so
        ("schemes", ()),
    ]
    for name, value in moves:
        before = widget.readout.value
        widget.controls[
            name
        ].value = value  # as the browser does: the control, not update()
        assert widget.readout.value != before, name
        assert "rope-readout" in widget.readout._dom_classes
    assert "no scheme shown" in widget.readout.value
    plt.close(widget.figure)


def test_explorer_scheme_buttons_toggle_and_keep_the_option_order():
    import matplotlib.pyplot as plt

    _, widget = _explorer(schemes=("alibi", "rope"))
    buttons = widget.controls["schemes"]
    assert buttons.value == ("rope", "alibi")  # options order, whatever order was given
    buttons.buttons["none"].click()
    assert (
        buttons.value == ("none", "rope", "alibi")
        and widget.lines["none"].get_visible()
    )
    assert (
        buttons.buttons["none"].style.button_color
        != buttons.buttons["learned"].style.button_color
    )
    buttons.buttons["rope"].click()
    assert buttons.value == ("none", "alibi") and not widget.lines["rope"].get_visible()
    with pytest.raises(Exception, match="schemes must be among"):
        widget.update(schemes=("rope", "t5"))
    with pytest.raises(ValueError, match="update\\(\\) takes"):
        widget.update(scheme=("rope",))
    plt.close(widget.figure)


def test_explorer_blits_the_same_picture_as_a_full_draw():
    import matplotlib.pyplot as plt

    _, widget = _explorer(schemes=("rope", "alibi", "sinusoidal"), method="yarn")
    canvas = widget.figure.canvas
    for step in [
        {"schemes": ("none", "learned"), "method": "linear", "factor": "8"},
        {"schemes": ("rope",), "method": "default"},
    ]:
        widget.update(**step)  # blitted: only the curves and the title are drawn again
        blitted = np.asarray(canvas.buffer_rgba()).copy()
        canvas.draw()
        assert np.array_equal(blitted, np.asarray(canvas.buffer_rgba())), step
    plt.close(widget.figure)


def test_check_best_scheme_reads_the_results_the_lesson_reads(tmp_path, monkeypatch):
    from rope_lib.exercises import lab as ex

    summary = {"64": {"mean": 1.0}, "512": {"mean": 9.0}}
    lm = {
        "rope": {"summary": {"64": {"mean": 0.5}, "512": {"mean": 4.0}}},
        "none": {"summary": {"64": {"mean": 2.0}, "512": {"mean": 2.5}}},
        "sinusoidal": {"summary": summary},
    }
    results = {"config": {"eval_lengths": [64, 512]}, "lm": lm}
    (tmp_path / "results.json").write_text(json.dumps(results))
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(tmp_path))
    assert ex.check_best_scheme("none").ok and ex.check_best_scheme("NoPE").ok
    assert not ex.check_best_scheme("alibi").ok  # not a scheme of these results
    wrong = ex.check_best_scheme("rope")
    assert not wrong.ok and "best at 64 tokens" in wrong.message
    worst = ex.check_best_scheme("sinusoidal")
    assert not worst.ok and "min, not max" in worst.message
    assert (
        "one of"
        in ex.check_best_scheme(["none"]).message + ex.check_best_scheme(3).message
    )
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(tmp_path / "missing"))
    missing = ex.check_best_scheme("none")
    assert not missing.ok and "could not be read" in missing.message


def test_exact_match_checker_names_the_slip():
    from rope_lib.exercises import lab as ex

    right = ex.check_exact_match(lambda p, e: (p == e).all(dim=1).double().mean())
    assert right.ok
    slips = {
        "fraction of right digits": lambda p, e: (p == e).double().mean(),
        "not .any(dim=1)": lambda p, e: (p == e).any(dim=1).double().mean(),
        "how many keys are right": lambda p, e: (p == e).all(dim=1).sum(),
        "booleans into numbers": lambda p, e: (p == e).all(dim=1).mean(),
        "one number": lambda p, e: (p == e).all(dim=1).double(),
        "the function itself": 0.5,
    }
    for hint, answer in slips.items():
        feedback = ex.check_exact_match(answer)
        assert not feedback.ok and hint in feedback.message, (hint, feedback)


def test_pi_checker_names_the_slip():
    from rope_lib.exercises import lab as ex

    theta = 10000.0 ** (-torch.arange(0, 16, 2, dtype=torch.float64) / 16)
    assert ex.check_pi_frequencies(theta / 4).ok
    assert ex.check_pi_frequencies((theta / 4).float().tolist()).ok
    slips = {
        "you multiplied by s": theta * 4,
        "unscaled": theta,
        "you divided by 8": theta / 8,
        "d = 16, the head dimension": 10000.0 ** (-torch.arange(0, 64, 2)[:8] / 64) / 4,
        "-2i/d": 10000.0 ** (-torch.arange(8.0) / 16) / 4,
        "reverse order": theta.flip(0) / 4,
        "shape (8,)": (theta / 4).repeat_interleave(2),
        "NTK's base change": (10000.0 * 4 ** (16 / 14))
        ** (-torch.arange(0, 16, 2) / 16),
    }
    for hint, answer in slips.items():
        feedback = ex.check_pi_frequencies(answer)
        assert not feedback.ok and hint in feedback.message, (hint, feedback)
