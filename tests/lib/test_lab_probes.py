"""The lab's probes (rope_lib.lab.probes) and the summary's new readers: each probe equals
the same quantity written out by hand on a small model, leaves the model as it found it,
and refuses a checkpoint made with other settings."""

from __future__ import annotations

import json
import math

import pytest
import torch

from rope_lib import rope_frequencies
from rope_lib.lab import probes, summary
from rope_lib.lab.data import MarkovSource
from rope_lib.lab.experiments import extension, job_tag, make_config
from rope_lib.lab.train import (
    build_model,
    evaluate_copy,
    evaluate_passkey,
    evaluate_text,
    save_checkpoint,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def small():
    """A quick config with a smaller model, and an untrained RoPE model of it."""
    config = make_config(quick=True)
    config["model"] = {"d_model": 32, "n_layers": 2, "n_heads": 2, "max_len": 512}
    return config, build_model("rope", config["model"], 0)


def _by_hand(model, tokens):
    """Every layer's rotated q and k [batch, heads, n, d], captured on a forward pass."""
    inputs = []
    hooks = [
        b.attn.register_forward_pre_hook(lambda _, a: inputs.append(a[0]))
        for b in model.blocks
    ]
    with torch.no_grad():
        model(tokens)
    for hook in hooks:
        hook.remove()
    return [b.attn.query_key(x) for b, x in zip(model.blocks, inputs)]


def test_trained_model_reads_its_checkpoint_and_refuses_others(tmp_path, small):
    config, model = small
    (tmp_path / "results.json").write_text(json.dumps({"config": config}))
    path = tmp_path / "checkpoints" / "rope_seed0.pt"
    with pytest.raises(FileNotFoundError, match="make experiments"):
        probes.trained_model(tmp_path, 0)
    save_checkpoint(path, model, [1.0], job_tag(config, "rope", 0))
    loaded = probes.trained_model(tmp_path, "0")
    assert not loaded.training
    for key, value in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value)
    save_checkpoint(path, model, [1.0], job_tag({**config, "train": {}}, "rope", 0))
    with pytest.raises(FileNotFoundError, match="other|settings"):
        probes.trained_model(tmp_path, 0)


def test_band_probe_is_the_evaluation_with_a_window_and_leaves_none(small):
    config, model = small
    L = config["train_length"]
    probed = probes.band_probe(model, config, 0)
    source = MarkovSource(0)
    model.set_window(L)
    text = evaluate_text(model, source, 0, [8 * L], config["text_sequences"], None, L)
    copy = evaluate_copy(
        model,
        source,
        0,
        4 * L,
        config["copy_distances"][str(4 * L)],
        config["copy_sequences"],
    )
    keys = evaluate_passkey(
        model, source, 0, [2 * L], config["passkey_depths"], config["passkey_keys"]
    )
    model.set_window(None)
    assert probed == {
        "text": text["loss_by_chunk"],
        "copy": copy,
        "passkey": keys[str(2 * L)],
    }
    assert all(b.attn.window is None for b in model.blocks)
    full = evaluate_text(model, source, 0, [8 * L], config["text_sequences"], None, L)
    assert full["loss_by_chunk"][0] == pytest.approx(text["loss_by_chunk"][0], abs=1e-5)
    assert full["loss_by_chunk"][-1] != pytest.approx(
        text["loss_by_chunk"][-1], abs=1e-4
    )  # an untrained model: the far keys change its loss a little, but they do


def test_scores_and_sizes_equal_the_written_out_ones(small):
    config, model = small
    tokens = probes.text_tokens(config, 0, 40)
    assert tokens.shape == (config["text_sequences"], 40)
    scores = probes.scores_by_offset(model, tokens)
    sizes = probes.pair_sizes(model, tokens)
    for layer, (q, k) in enumerate(_by_hand(model, tokens)):
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        for offset in (0, 1, 7, 39):
            diagonal = torch.stack(
                [s[..., m, m - offset] for m in range(offset, 40)], -1
            )
            torch.testing.assert_close(
                scores["mean"][layer, :, offset], diagonal.mean((0, -1))
            )
            torch.testing.assert_close(
                scores["max"][layer, :, offset], diagonal.amax((0, -1))
            )
        pair_q = (q.double() ** 2).unflatten(-1, (-1, 2)).sum(-1).mean((0, 1, 2)).sqrt()
        torch.testing.assert_close(sizes["q"][layer].double(), pair_q)
    assert scores["mean"].shape == (2, 2, 40) and sizes["k"].shape == (2, 8)


def test_pi_on_pairs_is_pi_on_every_pair_and_plain_on_none(small):
    config, model = small
    L, d = config["train_length"], model.head_dim
    every = probes.pi_on_pairs(model, config, 0, (0, d // 2))
    source = MarkovSource(0)
    for n, s, value in zip((L, 4 * L, 8 * L), (4, 4, 8), every):
        pi = evaluate_text(
            model,
            source,
            0,
            [n],
            config["text_sequences"],
            extension("linear", d, L, factor=s),
        )["loss"][str(n)]
        assert value == pytest.approx(pi, abs=1e-5)
    plain = probes.text_loss_with(
        model, config, 0, 4 * L, rope_frequencies("default", d)
    )
    assert plain == pytest.approx(
        evaluate_text(model, source, 0, [4 * L], config["text_sequences"])["loss"][
            str(4 * L)
        ],
        abs=1e-6,
    )
    assert all(b.attn.rope is None for b in model.blocks)


def test_band_summary_reads_each_measure_where_it_is():
    L = 4
    rope = {
        "text": {"loss_by_chunk": [1.0, 2.0]},
        "copy": {"16": {"8": 3.0}},
        "passkey": {"8": [0.1, 0.5, 0.9]},
    }
    results = {"config": {"train_length": L}, "schemes": {"rope": {"0": rope}}}
    bands = {"0": {"text": [0.5, 0.6], "copy": {"8": 0.01}, "passkey": [0.0, 0.7, 1.0]}}
    assert probes.band_summary(results, bands) == {
        "text": ({"0": 2.0}, {"0": 0.6}),
        "copy": ({"0": 3.0}, {"0": 0.01}),
        "key_far": ({"0": 0.1}, {"0": 0.0}),
        "key_near": ({"0": 0.9}, {"0": 1.0}),
    }
    assert set(probes.MEASURES) == {"text", "copy", "key_far", "key_near"}


def test_spread_and_wilson_interval_on_worked_numbers():
    assert summary.spread({"0": 0.2, "1": 0.9, "2": 0.5}) == (0.5, 0.2, 0.9)
    low, high = summary.wilson_interval(0.9, 100)
    # (p + z^2/2n) / (1 + z^2/n) -+ z sqrt(p(1-p)/n + z^2/4n^2) / (1 + z^2/n), z = 1.96
    assert (round(low, 4), round(high, 4)) == (0.8256, 0.9448)
    assert summary.wilson_interval(1.0, 100)[1] == pytest.approx(1.0)
    assert summary.wilson_interval(0.0, 20)[0] == pytest.approx(0.0, abs=1e-15)
    for bad in ({"p": 1.5, "n": 10}, {"p": 0.5, "n": 0}, {"p": 0.5, "n": True}):
        with pytest.raises(ValueError):
            summary.wilson_interval(**bad)


def test_finetune_runs_gather_the_sweep_and_its_controls():
    config = {"train_length": 4, "finetune": {"budgets": [0, 5]}}
    cell = lambda t, p: {"text": t, "passkey": {"16": [p, p]}}  # noqa: E731
    sweep = {
        "0": {"0": cell(2.0, 0.1), "5": cell(1.0, 0.9)},
        "1": {"0": cell(4.0, 0.3), "5": cell(1.0, 0.7)},
    }
    results = {
        "config": config,
        "finetune": {"default": sweep},
        "finetune_controls": {"text_only": {"linear": sweep}},
    }
    runs = summary.finetune_runs(results)
    assert set(runs) == {("default", None), ("linear", "text_only")}
    assert runs["default", None] == {"text": [3.0, 1.0], "passkey": [0.2, 0.8]}
