"""rope_lib.attention_entropy: softmax entropy, its large-n form for Gaussian logits,
the entropy of real heads by number of keys, log-n scaling, YaRN's temperature, the
sweep's best multiplier and the length fits; and the SmolLM2 model's hooks (log-n,
observing) on a tiny random model (no file needed)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rope_lib.attention_entropy import (
    FORMS,
    attention_stats,
    best_multiplier,
    fit_length_curve,
    gaussian_logit_entropy,
    logn_scale,
    random_qk_entropy,
    softmax_entropy,
    yarn_temperature,
)
from rope_lib.pretrained import Llama, LlamaConfig

TINY = LlamaConfig(
    vocab_size=50,
    dim=32,
    n_layers=2,
    n_heads=4,
    n_kv_heads=2,
    hidden_dim=48,
    norm_eps=1e-5,
    rope_base=10000.0,
    context_length=16,
)

# --- softmax entropy ----------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 1000])
def test_equal_logits_give_the_uniform_yardstick_ln_n(n):
    assert float(softmax_entropy(torch.full((n,), 3.5, dtype=torch.float64))) == (
        pytest.approx(math.log(n), abs=1e-12)
    )


def test_one_dominant_logit_gives_almost_zero():
    logits = torch.zeros(100, dtype=torch.float64)
    logits[3] = 200.0
    assert 0 <= float(softmax_entropy(logits)) < 1e-80


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-50, 50), min_size=1, max_size=40),
    st.floats(-100, 100),
    st.randoms(use_true_random=False),
)
def test_entropy_is_bounded_and_invariant_to_shift_and_order(values, shift, rnd):
    x = torch.tensor(values, dtype=torch.float64)
    h = float(softmax_entropy(x))
    assert -1e-12 <= h <= math.log(len(values)) + 1e-12
    shuffled = values[:]
    rnd.shuffle(shuffled)
    assert float(softmax_entropy(x + shift)) == pytest.approx(h, abs=1e-9)
    assert float(
        softmax_entropy(torch.tensor(shuffled, dtype=torch.float64))
    ) == pytest.approx(h, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=30).filter(any))
def test_a_mask_gives_the_entropy_of_the_kept_entries(keep):
    x = torch.linspace(-3, 2, len(keep), dtype=torch.float64)
    mask = torch.tensor(keep)
    assert float(softmax_entropy(x, mask)) == pytest.approx(
        float(softmax_entropy(x[mask])), abs=1e-12
    )


@pytest.mark.parametrize(
    "call,error,name",
    [
        (lambda: softmax_entropy([1.0, 2.0]), TypeError, "logits"),
        (lambda: softmax_entropy(torch.tensor([1, 2])), TypeError, "logits"),
        (lambda: softmax_entropy(torch.zeros(3, 0)), ValueError, "logits"),
        (lambda: softmax_entropy(torch.tensor([1.0, math.nan])), ValueError, "logits"),
        (
            lambda: softmax_entropy(torch.zeros(3), torch.ones(3)),
            ValueError,
            "mask",
        ),
        (
            lambda: softmax_entropy(torch.zeros(3), torch.zeros(3, dtype=torch.bool)),
            ValueError,
            "mask",
        ),
        (
            lambda: softmax_entropy(torch.zeros(3), torch.ones(4, dtype=torch.bool)),
            ValueError,
            "mask",
        ),
    ],
)
def test_softmax_entropy_refuses_wrong_input(call, error, name):
    with pytest.raises(error, match=name):
        call()


# --- random q and k: where ln n comes from ------------------------------------------


@pytest.mark.parametrize("sigma", [0.5, 1.0])
@pytest.mark.parametrize("n", [256, 4096])
def test_random_logits_follow_ln_n_minus_half_sigma_squared(sigma, n):
    """Small sigma: the large-n form holds within the trials' spread (|q| varies from
    trial to trial, so does each trial's sigma) plus 0.03."""
    h = random_qk_entropy(n, 64, sigma, trials=32, seed=1)
    spread = h.std() / math.sqrt(len(h))
    assert abs(h.mean() - gaussian_logit_entropy(n, sigma)) < 3 * spread + 0.03


def test_the_large_n_form_fails_where_n_is_not_much_above_e_to_sigma_squared():
    """sigma = 3: e^9 = 8,103 keys are needed; at 16 the form says -1.7, the truth is
    positive, and at 65,536 they meet again."""
    assert gaussian_logit_entropy(16, 3.0) < 0 < random_qk_entropy(16, 64, 3.0).mean()
    far = random_qk_entropy(65536, 64, 3.0, trials=8, seed=2)
    assert abs(far.mean() - gaussian_logit_entropy(65536, 3.0)) < 3 * far.std() + 0.1


def test_the_gap_to_uniform_does_not_grow_with_n():
    """ln n - H is sigma^2 / 2 at every large n: the ln n growth is all of it."""
    gaps = [
        math.log(n) - random_qk_entropy(n, 64, 1.0, trials=16, seed=3).mean()
        for n in (1024, 16384)
    ]
    assert gaps == pytest.approx([0.5, 0.5], abs=0.08)


def test_random_qk_entropy_is_deterministic_by_seed():
    a, b = random_qk_entropy(64, 8, seed=5), random_qk_entropy(64, 8, seed=5)
    assert np.array_equal(a, b) and not np.array_equal(a, random_qk_entropy(64, 8))


@pytest.mark.parametrize(
    "call,error,name",
    [
        (lambda: gaussian_logit_entropy(0, 1.0), ValueError, "n"),
        (lambda: gaussian_logit_entropy(True, 1.0), TypeError, "n"),
        (lambda: gaussian_logit_entropy(10, math.inf), ValueError, "sigma"),
        (lambda: gaussian_logit_entropy(10, "1"), TypeError, "sigma"),
        (lambda: random_qk_entropy(10, 0), ValueError, "head_dim"),
        (lambda: random_qk_entropy(10, 8, trials=1.5), TypeError, "trials"),
        (lambda: random_qk_entropy(10, 8, seed=-1), ValueError, "seed"),
    ],
)
def test_random_parts_refuse_wrong_input(call, error, name):
    with pytest.raises(error, match=name):
        call()


# --- log-n scaling and YaRN's temperature -------------------------------------------


def test_logn_scale_is_one_up_to_L_keys_then_log_base_L():
    scale = logn_scale(torch.arange(300), 16)
    assert torch.equal(scale[:16], torch.ones(16))
    assert float(scale[255]) == pytest.approx(2.0)  # 256 keys = 16^2
    assert (scale.diff() >= 0).all()


@pytest.mark.parametrize(
    "call,error,name",
    [
        (lambda: logn_scale(torch.arange(4), 1), ValueError, "training_length"),
        (lambda: logn_scale(torch.arange(4), True), TypeError, "training_length"),
        (lambda: logn_scale([0, 1], 8), TypeError, "positions"),
        (lambda: logn_scale(torch.tensor([0.0, math.nan]), 8), ValueError, "positions"),
        (lambda: logn_scale(torch.tensor([-1, 0]), 8), ValueError, "positions"),
    ],
)
def test_logn_scale_refuses_wrong_input(call, error, name):
    with pytest.raises(error, match=name):
        call()


@pytest.mark.parametrize("s", [1.0, 2.0, 4.0, 32.0])
def test_yarn_temperature_multiplies_the_logits_by_one_over_t(s):
    """sqrt(1/t) = 0.1 ln s + 1: the logits are multiplied by 1/t > 1 (t < 1: sharper),
    and cos and sin by sqrt(1/t)."""
    y = yarn_temperature(s)
    assert y["attention_factor"] == pytest.approx(0.1 * math.log(s) + 1)
    assert y["logit_multiplier"] == pytest.approx(1 / y["t"])
    assert y["logit_multiplier"] == pytest.approx(y["attention_factor"] ** 2)
    assert y["t"] <= 1.0 and (s == 1.0) == (y["t"] == 1.0)


@pytest.mark.parametrize("bad", [0.0, -2.0, math.nan])
def test_yarn_temperature_refuses_a_factor_not_above_zero(bad):
    with pytest.raises(ValueError, match="factor"):
        yarn_temperature(bad)


# --- real heads: attention_stats against the whole matrix ---------------------------


def _brute(q, k, m):
    """Entropy and logit std of query m over keys 0..m, every head (GQA by h // r)."""
    r = q.shape[1] // k.shape[1]
    kk = k.repeat_interleave(r, 1)[:, :, : m + 1]
    logits = (q[:, :, m : m + 1] @ kk.transpose(-1, -2))[:, :, 0] / math.sqrt(
        q.shape[-1]
    )
    p = torch.softmax(logits.double(), -1)
    entropy = -(p * p.log()).sum(-1)
    return entropy, logits.double().std(-1, unbiased=False)


def test_attention_stats_equal_the_whole_matrix_with_grouped_heads():
    torch.manual_seed(0)
    q, k = 2 * torch.randn(2, 4, 40, 8), torch.randn(2, 2, 40, 8)
    stats = attention_stats(q, k, [5, 40], queries=3)
    for i, p in enumerate([5, 40]):
        rows = [_brute(q, k, m) for m in range(p - 3, p)]
        entropy = torch.stack([r[0] for r in rows]).mean((0, 1))
        std = torch.stack([r[1] for r in rows]).mean((0, 1))
        assert np.allclose(stats["entropy"][i], entropy.numpy(), atol=1e-5)
        assert np.allclose(stats["logit_std"][i], std.numpy(), atol=1e-5)


def test_attention_stats_of_a_zero_query_is_ln_of_its_keys():
    q, k = torch.zeros(1, 2, 10, 4), torch.randn(1, 1, 10, 4)
    stats = attention_stats(q, k, [1, 10], queries=1)
    assert np.allclose(stats["entropy"], [[0.0, 0.0], [math.log(10)] * 2], atol=1e-9)
    assert np.allclose(stats["logit_std"], 0.0)


Q4, Q3 = torch.zeros(1, 2, 8, 4), torch.zeros(1, 3, 8, 4)


@pytest.mark.parametrize(
    "call,error,name",
    [
        (lambda: attention_stats(Q4[0], Q4[0], [4], 2), ValueError, "q"),
        (lambda: attention_stats(Q3, Q4, [4], 2), ValueError, "k"),
        (lambda: attention_stats(Q4, Q4, [9], 2), ValueError, "points"),
        (lambda: attention_stats(Q4, Q4, [0], 2), ValueError, "points"),
        (lambda: attention_stats(Q4, Q4, [4], 0), ValueError, "queries"),
    ],
)
def test_attention_stats_refuses_wrong_input(call, error, name):
    with pytest.raises(error, match=name):
        call()


# --- the sweep's best multiplier and the length fits --------------------------------


def test_best_multiplier_finds_a_parabola_vertex_in_log_space():
    m = np.array([1.0, 1.2, 1.4, 1.6])
    loss = 2.0 + 3.0 * (np.log(m) - np.log(1.3)) ** 2
    best = best_multiplier(m, loss)
    assert best["inside"] and best["logit_multiplier"] == pytest.approx(1.3)
    assert best["t"] == pytest.approx(1 / 1.3) and best["loss"] == pytest.approx(2.0)
    assert best["attention_factor"] == pytest.approx(math.sqrt(1.3))


def test_best_multiplier_says_when_the_best_is_at_the_edge():
    best = best_multiplier([1.0, 1.1, 1.2], [3.0, 2.0, 1.0])
    assert not best["inside"] and best["logit_multiplier"] == 1.2


@pytest.mark.parametrize(
    "m,loss,name",
    [
        ([1.0, 1.1], [1.0, 2.0], "multipliers"),
        ([1.0, 1.0, 1.1], [1.0, 2.0, 3.0], "multipliers"),
        ([1.0, 0.0, 1.1], [1.0, 2.0, 3.0], "multipliers"),
        ([1.0, 1.1, 1.2], [1.0, math.nan, 3.0], "losses"),
    ],
)
def test_best_multiplier_refuses_wrong_input(m, loss, name):
    with pytest.raises(ValueError, match=name):
        best_multiplier(m, loss)


@pytest.mark.parametrize(
    "form,c,curve",
    [
        ("exponential", -0.7, lambda x: np.exp(-0.7 * x)),
        ("power", 1.5, lambda x: x**1.5),
        ("logarithmic", None, np.log),
        ("linear", None, lambda x: x),
    ],
)
def test_each_form_recovers_its_own_curve(form, c, curve):
    x = np.linspace(1.0, 4.0, 12)
    fit = fit_length_curve(x, 0.5 - 2.0 * curve(x), form)
    assert fit["a"] == pytest.approx(0.5, abs=1e-5)
    assert fit["b"] == pytest.approx(-2.0, abs=1e-5)
    assert fit["rmse"] < 1e-6 and (fit["c"] is None) == (c is None)
    if c is not None:
        assert fit["c"] == pytest.approx(c, abs=1e-4)


def test_a_saturating_curve_is_told_apart_from_a_power_law():
    x = np.linspace(1.0, 4.0, 12)
    y = 2.5 - 3.0 * np.exp(-1.2 * x)
    rmse = {form: fit_length_curve(x, y, form)["rmse"] for form in FORMS}
    assert rmse["exponential"] < 1e-6
    assert min(rmse["power"], rmse["logarithmic"], rmse["linear"]) > 1e-3


@pytest.mark.parametrize(
    "x,y,form,name",
    [
        ([1, 2, 3, 4], [1, 2, 3, 4], "cubic", "form"),
        ([1, 2, 3], [1, 2, 3], "linear", "x and y"),
        ([0, 1, 2, 3], [1, 2, 3, 4], "power", "x must"),
        ([1, 2, 3, 4], [1, 2, math.inf, 4], "linear", "y finite"),
    ],
)
def test_fit_length_curve_refuses_wrong_input(x, y, form, name):
    with pytest.raises(ValueError, match=name):
        fit_length_curve(x, y, form)


# --- the model's hooks: log-n scaling and observing the forward ---------------------


def _random_tiny(seed: int = 0) -> Llama:
    torch.manual_seed(seed)
    model = Llama(TINY).eval()
    for parameter in model.parameters():
        parameter.data.normal_(0, 0.3)
    return model


def test_logn_changes_nothing_up_to_L_and_the_later_positions_past_it():
    model = _random_tiny()
    tokens = torch.randint(0, 50, (40,))
    plain = model.token_losses(tokens)
    model.set_logn(16)
    logn = model.token_losses(tokens)
    assert torch.equal(logn[:15], plain[:15])  # queries 0..15 see <= 16 keys
    assert (logn[16:] - plain[16:]).abs().max() > 1e-3
    model.set_logn(None)
    assert torch.equal(model.token_losses(tokens), plain)


def test_observing_sees_what_the_attention_uses():
    """The probe gets each layer's q, k once per forward, equal to layer_qk's (log-n
    scaling in), and attention_stats on them is what loss_unit stores."""
    model = _random_tiny(1)
    model.set_logn(16)
    tokens = torch.randint(0, 50, (24,))
    seen = {}
    with model.observing(lambda i, q, k: seen.setdefault(i, (q, k))):
        model.token_losses(tokens)
    assert sorted(seen) == [0, 1]
    for i, q, k in model.layer_qk(tokens):
        assert torch.equal(seen[i][0], q) and torch.equal(seen[i][1], k)
    assert all(layer.attention.observe is None for layer in model.layers)


def test_the_hooks_refuse_wrong_input():
    model = _random_tiny()
    with pytest.raises(TypeError, match="probe"):
        with model.observing(3):
            pass
    for bad in (1, 2.5, True, "16"):
        with pytest.raises(ValueError, match="training_length"):
            model.set_logn(bad)
