"""YaRN and its temperature (lesson 10, notebooks/10_yarn.ipynb): the ramp helpers, the
exercise checkers (rope_lib.exercises.yarn), the wavelength-cutoff explorer, the temperature
widget and figures, and the lesson's claims on the committed attention results. Expected values come from
formulas written out here, from hand-derived numbers, or from transformers."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from rope_lib import inv_frequencies, rope_frequencies  # noqa: E402
from rope_lib.exercises import yarn as ex  # noqa: E402
from rope_lib.extension_analysis import (  # noqa: E402
    implied_ramp,
    pair_regimes,
)


def theta64(d=128, b=10000.0):
    return b ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


# --- library: angles, cut-offs, regimes ------------------------------------------------------


def test_implied_ramp_pi_ntk_yarn():
    d, s = 128, 4.0
    theta = inv_frequencies(d)
    assert torch.allclose(
        implied_ramp(theta, theta / s, s),
        torch.zeros(64, dtype=torch.float64),
        atol=1e-6,
    )
    assert torch.allclose(
        implied_ramp(theta, theta, s), torch.ones(64, dtype=torch.float64)
    )
    ntk, _ = rope_frequencies("ntk", d, factor=s)
    expected = (s ** (-2 * torch.arange(64, dtype=torch.float64) / (d - 2)) - 1 / s) / (
        1 - 1 / s
    )
    assert torch.allclose(implied_ramp(theta, ntk, s), expected, atol=1e-5)
    # YaRN: 1 - ramp over the correction range 20..46, written out
    yarn, _ = rope_frequencies(
        "yarn", d, factor=s, original_max_position_embeddings=4096
    )
    ramp = np.clip((np.arange(64) - 20) / 26, 0, 1)
    assert np.allclose(implied_ramp(theta, yarn, s).numpy(), 1 - ramp, atol=1e-5)
    with pytest.raises(ValueError, match="factor"):
        implied_ramp(theta, theta, 1.0)
    with pytest.raises(ValueError, match="shape"):
        implied_ramp(theta, theta[:3], 2.0)


def test_pair_regimes_yarn_and_ntk():
    theta = inv_frequencies(128)
    yarn, _ = rope_frequencies(
        "yarn", 128, factor=4.0, original_max_position_embeddings=4096
    )
    regimes = pair_regimes(theta, yarn, 4.0)
    expected = torch.tensor(
        [0] * 21 + [1] * 25 + [2] * 18
    )  # pairs 0..20, 21..45, 46..63
    assert torch.equal(regimes, expected)
    ntk, _ = rope_frequencies("ntk", 128, factor=4.0)
    assert torch.equal(
        pair_regimes(theta, ntk, 4.0), torch.tensor([0] + [1] * 62 + [2])
    )
    pi, _ = rope_frequencies("linear", 128, factor=4.0)
    assert torch.equal(pair_regimes(theta, pi, 4.0), torch.full((64,), 2))


# --- exercises --------------------------------------------------------------------------------


def test_check_3():
    from rope_lib.extension_analysis import ramp_by_pair
    from rope_lib.scaling import yarn_correction_range

    theta = inv_frequencies(64, 10000.0)
    low, high = yarn_correction_range(64, 10000.0, 2048)
    assert (low, high) == (
        8,
        21,
    )  # 32 ln(2048/(2 pi 32)) / ln 1e4 = 8.06, 32 ln(2048/2pi) / ln 1e4 = 20.1
    ramp = 1 - ramp_by_pair(low, high, 32)  # 1 - gamma: the share of theta / s
    assert ex.check_yarn_frequencies(theta / 8 * ramp + theta * (1 - ramp)).ok
    assert (
        "wrong way round"
        in ex.check_yarn_frequencies(theta / 8 * (1 - ramp) + theta * ramp).message
    )
    assert (
        "multiplied by s"
        in ex.check_yarn_frequencies(theta * 8 * ramp + theta * (1 - ramp)).message
    )
    r2 = torch.clamp(
        (torch.arange(32) - 8.064000845006177)
        / (20.105200671565424 - 8.064000845006177),
        0,
        1,
    )
    assert (
        "rounds the bounds"
        in ex.check_yarn_frequencies(theta / 8 * r2 + theta * (1 - r2)).message
    )
    assert "Position Interpolation" in ex.check_yarn_frequencies(theta / 8).message
    low4, high4 = yarn_correction_range(64, 10000.0, 4096)  # the lesson's L, copied
    ramp4 = 1 - ramp_by_pair(low4, high4, 32)
    at_4096 = ex.check_yarn_frequencies(theta / 8 * ramp4 + theta * (1 - ramp4))
    assert (
        not at_4096.ok and "L = 2048" in at_4096.message and "8..21" in at_4096.message
    )
    assert "original frequencies" in ex.check_yarn_frequencies(theta).message
    # the wrong s: the lesson's 4 named, any other read off the slowest pair
    ramp_s = 1 - ramp_by_pair(low, high, 32)
    assert (
        "the lesson's s"
        in ex.check_yarn_frequencies(theta / 4 * ramp_s + theta * (1 - ramp_s)).message
    )
    assert (
        "divided by 2"
        in ex.check_yarn_frequencies(theta / 2 * ramp_s + theta * (1 - ramp_s)).message
    )
    assert "shape" in ex.check_yarn_frequencies(theta[:5]).message
    empty = ex.check_yarn_frequencies(None)
    assert not empty.ok and "inv_freq" not in empty.message
    # the paper's ramp (linear in the turns, the lesson's first table) is named
    from rope_lib.extension_analysis import ramp_by_turns

    g = ramp_by_turns(theta, 2048, alpha=1.0, beta=32.0)
    paper = ex.check_yarn_frequencies((1 - g) * theta / 8 + g * theta)
    assert not paper.ok and "paper's ramp" in paper.message


def test_check_4():
    assert ex.check_logit_multiplier((0.1 * math.log(16) + 1) ** 2).ok
    # rounded by hand (1.6314): two or three decimals pass, a wrong digit does not
    for rounded in (1.63, 1.631, 1.6314):
        assert ex.check_logit_multiplier(rounded).ok
    assert not ex.check_logit_multiplier(1.62).ok
    for at_4 in ((0.1 * math.log(4) + 1) ** 2, 1.2965, 0.1 * math.log(4) + 1):
        assert "s = 4" in ex.check_logit_multiplier(at_4).message
    assert "twice" in ex.check_logit_multiplier(0.1 * math.log(16) + 1).message
    assert (
        "natural logarithm"
        in ex.check_logit_multiplier((0.1 * math.log10(16) + 1) ** 2).message
    )
    assert (
        "inverted"
        in ex.check_logit_multiplier(1 / (0.1 * math.log(16) + 1) ** 2).message
    )


# --- widget ------------------------------------------------------------------------------------


def test_widget_defaults_readout_and_artists():
    from rope_lib.widgets.context_extension import WavelengthCutoffExplorer

    w = WavelengthCutoffExplorer()
    text = w.readout_text()
    assert "attention factor = 1.1386" in text  # 0.1 ln 4 + 1
    assert "correction range = 20..46" in text
    assert "kept = 21, blended = 25, divided by s = 18" in text
    assert "rope-readout" in w.readout._dom_classes
    assert all(c.description for c in w.controls.values())
    assert set(w.controls) == {
        "scale s",
        "L",
        "alpha",
        "beta",
        "base",
        "head_dim",
        "method",
    }
    offsets = w.wave_points.get_offsets()
    assert np.allclose(
        offsets[:, 1], 2 * np.pi * 10000.0 ** (np.arange(0, 128, 2) / 128), rtol=1e-5
    )
    assert w.line_L.get_ydata()[0] == 4096


def test_widget_update_in_place_with_new_head_dim_and_method():
    from rope_lib.widgets.context_extension import WavelengthCutoffExplorer

    w = WavelengthCutoffExplorer()
    n_artists = [len(ax.get_children()) for ax in w.figure.axes]
    scatter = w.wave_points
    w.update(
        head_dim=64,
        base=500000.0,
        L=8192,
        method="Llama 3",
        beta=4.0,
        **{"scale s": 8.0},
    )
    assert [len(ax.get_children()) for ax in w.figure.axes] == n_artists
    assert w.wave_points is scatter
    d, b, L, s = 64, 500000.0, 8192, 8.0
    lam = 2 * np.pi * b ** (np.arange(0, d, 2) / d)
    assert np.allclose(w.wave_points.get_offsets()[:, 1], lam, rtol=1e-5)
    assert w.line_L.get_ydata()[0] == L and w.line_beta.get_ydata()[0] == L / 4
    assert (
        w.label_L.get_text() == "L = 8192" and w.label_L.get_position()[1] == L
    )  # label on the L line
    assert w.label_method.get_text() == "Llama 3:"  # in front of "what each pair keeps"
    # the Llama 3 line (bold) shows new/old: 1 below L/4, 1/8 above L, smooth blend between
    x, y = w.method_lines["Llama 3"].get_data()
    r = L / lam
    expected = np.where(
        lam < L / 4, 1.0, np.where(lam > L, 1 / s, (1 - (r - 1) / 3) / s + (r - 1) / 3)
    )
    assert np.allclose(y, expected, rtol=1e-5)
    assert (
        w.method_lines["Llama 3"].get_linewidth()
        > w.method_lines["YaRN"].get_linewidth()
    )
    # PI line: 1/s everywhere; NTK: s^(-2i/(d-2))
    assert np.allclose(w.method_lines["PI"].get_data()[1], 1 / s, rtol=1e-6)
    assert np.allclose(
        w.method_lines["NTK"].get_data()[1],
        s ** (-2 * np.arange(d // 2) / (d - 2)),
        rtol=1e-5,
    )
    assert "attention factor = 1.0000" in w.readout_text()
    # colors: kept pairs (lam < L/4) blue
    colors = w.wave_points.get_facecolors()
    blue = matplotlib.colors.to_rgba("#1f77b4")
    assert all(np.allclose(colors[i], blue) for i in np.nonzero(lam < L / 4)[0])
    w.update(
        method="YaRN",
        head_dim=128,
        base=10000.0,
        L=4096,
        beta=32.0,
        **{"scale s": 16.0},
    )
    assert f"attention factor = {0.1 * math.log(16) + 1:.4f}" in w.readout_text()
    assert len(w.wave_points.get_offsets()) == 64


def test_widget_rejects_bad_values_and_steps_run():
    from rope_lib.figures.context_extension import thumbnail
    from rope_lib.widgets.context_extension import WavelengthCutoffExplorer

    w = WavelengthCutoffExplorer()
    with pytest.raises(ValueError, match="method"):
        w.update(method="RoPE")
    assert w.values["method"] == "YaRN"  # a rejected value is not kept
    with pytest.raises(ValueError, match="beta"):
        w.update(alpha=3.0, beta=2.0)
    with pytest.raises(ValueError, match="unknown control"):
        w.update(scale=2.0)
    w = WavelengthCutoffExplorer.example()
    steps = list(w.sweep())
    assert len(steps) == 47
    for step in steps:
        w.update(**step)
    fig = thumbnail()
    assert fig.get_size_inches().tolist() == [4.0, 2.5]


def test_widget_blits_the_same_picture_as_a_full_draw():
    # update() redraws only the moving artists on a saved background; a full draw of the same state
    # must give the same pixels (so no static part is stale), and a new head_dim redraws everything.
    from rope_lib.widgets.context_extension import WavelengthCutoffExplorer

    w = WavelengthCutoffExplorer()
    full_draws = []
    w.figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    steps = [
        {"scale s": 16.0},
        {"L": 32768, "method": "Llama 3"},
        {"alpha": 0.25, "beta": 64.0, "base": 1000000.0},
        {"head_dim": 32},  # new x range: a full redraw
        {"scale s": 1.5, "method": "PI"},
        {
            "head_dim": 256,
            "base": 1000.0,
            "L": 512,
            "scale s": 32.0,
            "method": "NTK",
        },  # full
    ]
    for step in steps:
        before = len(full_draws)
        w.update(**step)
        assert len(full_draws) - before == (1 if "head_dim" in step else 0), step
        blitted = np.asarray(w.figure.canvas.buffer_rgba()).copy()
        w.figure.canvas.draw()
        assert np.array_equal(blitted, np.asarray(w.figure.canvas.buffer_rgba())), step
    # the picture does not depend on the path taken: a widget built at this state looks the same
    fresh = WavelengthCutoffExplorer(**w.values)
    assert np.array_equal(blitted, np.asarray(fresh.figure.canvas.buffer_rgba()))
    # and the sweep redraws everything only when head_dim changes (its 6 values, then back
    # to 128: 7 of 47)
    w = WavelengthCutoffExplorer.example()
    full_draws.clear()
    w.figure.canvas.mpl_connect("draw_event", lambda event: full_draws.append(1))
    changes, head_dim = 0, w.values["head_dim"]
    for step in w.sweep():
        w.update(**step)
        changes += step["head_dim"] != head_dim
        head_dim = step["head_dim"]
    assert len(full_draws) == changes == 7


def test_widget_limits_are_fixed_and_hold_every_setting():
    # fixed y limits (so slider moves need no full redraw) that still show every point and line
    from rope_lib.widgets.context_extension import (
        BASES,
        HEAD_DIMS,
        LENGTHS,
        WavelengthCutoffExplorer,
    )

    w = WavelengthCutoffExplorer()
    wave_ylim, freq_ylim = w.ax_wave.get_ylim(), w.ax_freq.get_ylim()
    lam_max = 2 * math.pi * max(BASES) ** ((max(HEAD_DIMS) - 2) / max(HEAD_DIMS))
    assert wave_ylim[0] < min(2 * math.pi, min(LENGTHS) / 64) and wave_ylim[1] > max(
        lam_max, 32 * max(LENGTHS)
    )
    assert freq_ylim[0] < 1 / 32 and freq_ylim[1] > 1
    w.update(
        head_dim=256,
        base=1000000.0,
        L=32768,
        alpha=0.25,
        beta=64.0,
        **{"scale s": 32.0},
    )
    assert w.ax_wave.get_ylim() == wave_ylim and w.ax_freq.get_ylim() == freq_ylim
    assert (
        w.ax_wave.get_xlim()
        == w.ax_keep.get_xlim()
        == w.ax_freq.get_xlim()
        == (-1, 128)
    )
    w.update(head_dim=16)
    assert w.ax_freq.get_xlim() == (-1, 8)


def test_widget_static_png_shows_the_moving_artists_and_leaves_no_ghosts():
    # The PNG beside the widget (same dpi as the figure) is the live picture, moving artists
    # included, each drawn once. (When saving, matplotlib draws the animated artists in zorder,
    # under the spines; the blitted canvas has them on top: a few pixels where the horizontal
    # lines cross the left spine. Drawn twice, the lines' antialiased edges and the titles differ
    # in thousands of pixels.)
    import io

    from PIL import Image

    from rope_lib.figures import static_png
    from rope_lib.widgets.context_extension import (
        METHOD_COLORS,
        WavelengthCutoffExplorer,
    )

    w = WavelengthCutoffExplorer()
    w.update(L=2048)
    canvas = np.asarray(w.figure.canvas.buffer_rgba())[..., :3].copy()
    png = np.asarray(
        Image.open(io.BytesIO(static_png(w.figure, dpi=100).data)).convert("RGB")
    )
    assert png.shape == canvas.shape
    assert (png != canvas).any(axis=-1).sum() < 50
    red = (
        np.array(matplotlib.colors.to_rgb(METHOD_COLORS["YaRN"])) * 255
    )  # the bold YaRN line
    assert (np.abs(png.astype(float) - red).max(axis=-1) < 10).sum() > 200
    # saving must not leave the old moving artists in the background of later blits
    w.update(L=512, method="PI")
    blitted = np.asarray(w.figure.canvas.buffer_rgba()).copy()
    w.figure.canvas.draw()
    assert np.array_equal(blitted, np.asarray(w.figure.canvas.buffer_rgba()))


# --- lesson 10's new checkers ------------------------------------------------------------


def test_check_entropy_direction():
    assert ex.check_entropy_direction("down").ok
    assert ex.check_entropy_direction("Sharper").ok
    up = ex.check_entropy_direction("up")
    assert not up.ok and "DIVIDING" in up.message and "t < 1" in up.message
    assert "ADDED" in ex.check_entropy_direction("unchanged").message
    assert not ex.check_entropy_direction(None).ok
    assert not ex.check_entropy_direction(1.3).ok


def test_check_new_factor_multiplier():
    from rope_lib.attention_study import read

    sweeps = read("smollm2.temperature")
    best = [sweeps[x]["best_past_L"]["attention_factor"] for x in ("x2", "x4")]
    # k of sqrt(1/t) = k ln s + 1 by least squares through s = 1
    k = sum((m - 1) * math.log(s) for m, s in zip(best, (2, 4))) / sum(
        math.log(s) ** 2 for s in (2, 4)
    )
    yarn, fit = (0.1 * math.log(8) + 1) ** 2, (k * math.log(8) + 1) ** 2
    assert 0.06 < k < 0.08 and fit < yarn
    right = ex.check_new_factor_multiplier((yarn, fit))
    assert right.ok and "extrapolation of a weak fit" in right.message
    assert "gentler temperature" not in right.message
    assert ex.check_new_factor_multiplier(np.array([yarn * 1.005, fit])).ok
    assert "swapped" in ex.check_new_factor_multiplier((fit, yarn)).message
    assert (
        "squares"
        in ex.check_new_factor_multiplier((math.sqrt(yarn), math.sqrt(fit))).message
    )
    assert "inverted" in ex.check_new_factor_multiplier((1 / yarn, 1 / fit)).message
    assert "0.1" in ex.check_new_factor_multiplier((yarn, yarn)).message
    log10 = (0.1 * math.log10(8) + 1) ** 2
    assert "log10" in ex.check_new_factor_multiplier((log10, fit)).message
    assert not ex.check_new_factor_multiplier((1.5, 1.2)).ok
    assert not ex.check_new_factor_multiplier(None).ok


def test_deepseek_released_configs_put_one_temperature_on_every_dim():
    from transformers import DeepseekV3Config
    from transformers.models.deepseek_v3 import modeling_deepseek_v3 as deepseek

    from rope_lib.scaling import yarn_get_mscale

    sizes = dict(hidden_size=64, num_attention_heads=1, q_lora_rank=None)
    sizes.update(kv_lora_rank=16, qk_nope_head_dim=128, qk_rope_head_dim=64)
    for mscale, want in ((0.707, 1.5896), (1.0, 1.8739)):  # V2, V3: (0.1 m ln 40 + 1)^2
        rope = dict(rope_type="yarn", rope_theta=1e4, factor=40.0, mscale=mscale)
        rope.update(mscale_all_dim=mscale, original_max_position_embeddings=4096)
        cfg = DeepseekV3Config(
            **sizes, v_head_dim=16, max_position_embeddings=163840, rope_parameters=rope
        )
        cos_sin = deepseek.DeepseekV3RotaryEmbedding(cfg).attention_scaling
        softmax = deepseek.DeepseekV3Attention(cfg, 0).scaling * math.sqrt(192)
        assert math.isclose(cos_sin, 1.0)  # the split cancels
        assert math.isclose(softmax, want, rel_tol=1e-4)
        assert math.isclose(softmax, yarn_get_mscale(40.0, mscale) ** 2)


def test_attention_entropy_docstring_says_which_side():
    import rope_lib.attention_entropy as ae

    assert "falls under" not in ae.__doc__ and "undershoots" in ae.__doc__
    assert "not Gaussian" in ae.__doc__


def test_moved_checkers_left_lesson_7s_module():
    from rope_lib.exercises import context_extension

    for name in ("check_yarn_frequencies", "check_logit_multiplier", "yarn_by_hand"):
        assert not hasattr(context_extension, name), name
        assert hasattr(ex, name), name
    for name in ("check_llama3_pair_counts", "check_rope_scaling_entry"):
        assert not hasattr(ex, name), name  # lesson 11's, in scaling_in_models


# --- the temperature: the lesson's claims on the committed results -----------------------


@pytest.fixture(scope="module")
def smol():
    from rope_lib.attention_study import read

    return read("smollm2.entropy")


def test_yarn_temperature_sharpens():
    from rope_lib.attention_entropy import (
        gaussian_logits,
        softmax_entropy,
        yarn_temperature,
    )

    for s in (2.0, 4.0, 16.0, 40.0):
        t = yarn_temperature(s)
        assert t["t"] < 1 < t["logit_multiplier"]
        assert math.isclose(t["logit_multiplier"], (0.1 * math.log(s) + 1) ** 2)
        x = 1.5 * gaussian_logits(1024)
        assert softmax_entropy(t["logit_multiplier"] * x) < softmax_entropy(x)
        assert softmax_entropy(x / t["attention_factor"]) > softmax_entropy(x)


def test_random_logits_entropy_follows_ln_n_and_spread_does_not_grow():
    from rope_lib.attention_entropy import random_logit_std
    from rope_lib.attention_study import read

    rnd = read("random")
    checked = 0
    for i, sigma in enumerate(rnd["sigma"]):
        usable = rnd["n"] >= 16 * math.exp(sigma**2)
        gap = np.abs(rnd["mean"][i] - rnd["analytic"][i])[usable]
        assert (gap <= 3 * rnd["std"][i][usable] / math.sqrt(rnd["trials"])).all()
        checked += usable.sum()
    assert checked >= 15
    spreads = [random_logit_std(n, 64, sigma=2.5) for n in (64, 1024, 16384)]
    means = [s.mean() for s in spreads]
    error = max(s.std() for s in spreads) / math.sqrt(len(spreads[0]))
    assert max(means) - min(means) < 3 * math.sqrt(2) * error


def test_smollm2_spread_grows_but_attention_does_not_collapse(smol):
    std, ent = smol["logit_std"], smol["plain"]
    assert (std[:, 4] / std[:, 0] > 1.2).all() and (std[:, 8] / std[:, 4] > 1.15).all()
    assert ent[:, 8].min() > 2.5


def test_smollm2_entropy_slopes_against_ln_n(smol):
    x = np.log(smol["points"])
    slope, error = [], []
    for h in smol["plain"]:
        (a, _b), cov = np.polyfit(x[:5], h[:5], 1, cov=True)  # 1k .. 8k keys
        slope.append(a)
        error.append(math.sqrt(cov[0, 0]))
    slope, error = np.array(slope), np.array(error)
    past = np.array([np.polyfit(x[4:], h[4:], 1)[0] for h in smol["plain"]])
    assert 0.1 < np.median(slope) < 0.3  # the lesson's "about 0.16", ln n's slope: 1
    assert (slope + 2 * error < 1).all()  # every layer slower than ln n
    assert slope.argmax() == 0 and 0.6 < slope[0] < 0.8  # layer 0, "at 0.7"
    assert (past > 0).sum() == 27


def test_entropy_past_L_neither_breaks_nor_fixes(smol):
    from rope_lib.attention_study import read

    inside = smol["points"] <= 8192
    logn, x2 = read("smollm2.logn"), read("smollm2.temperature")["x2"]
    assert x2["attention_factor"][0] == 1  # YaRN without its factor
    no_factor = x2["loss"][0, x2["first_bucket_past_L"] :]
    np.testing.assert_allclose(  # the same 2 L window: YaRN's row is logn's "yarn"
        x2["loss"][1, x2["first_bucket_past_L"] :], logn["yarn"], atol=1e-3
    )
    broken = logn["plain"] - logn["reference"] > 0.5
    assert broken.tolist() == [False, True, True, True]
    plain_h = smol["plain"][:, ~inside]
    same = (plain_h + smol["change"]["yarn_no_attention_factor"][:, ~inside]).mean()
    assert abs(same - plain_h.mean()) < 0.05  # as flat as broken plain RoPE ...
    assert (
        np.abs(no_factor - logn["reference"])[broken] < 0.1
    ).all()  # ... and healthy
    assert (logn["plain"] - logn["reference"])[broken].min() > 0.9
    assert (smol["change"]["logn"][:, ~inside] < 0).all()  # log-n sharpens ...
    assert (np.abs(logn["repaired"]["logn"][broken]) < 0.05).all()  # ... repairs none
    # equal on average, not layer by layer: 13 layers flatter, 17 sharper, up to 0.75
    by_layer = smol["change"]["yarn_no_attention_factor"][:, ~inside].mean(1)
    assert (by_layer < 0).sum() == 13 and (by_layer > 0).sum() == 17
    assert 0.7 < -by_layer.min() < 0.8 and 0.7 < by_layer.max() < 0.8


def test_entropy_neutral_multiplier_beside_yarns_and_its_point_lowest(smol):
    from rope_lib.attention_study import read

    inside = smol["points"] <= 8192
    sweeps = read("smollm2.temperature")
    x2 = sweeps["x2"]
    flat = smol["change"]["yarn_no_attention_factor"][:, inside].mean()
    sharp = smol["change"]["yarn"][:, inside].mean()
    # interpolate the entropy change linearly in ln(1/t) between 1/t = 1 and YaRN's
    u = math.log(x2["yarn"]["logit_multiplier"]) * flat / (flat - sharp)
    assert 1.10 < math.exp(u) < 1.16
    assert abs(math.exp(u) - x2["yarn"]["logit_multiplier"]) < 0.03
    # YaRN's own swept 1/t has the least loss in 8 of 8 buckets (s = 2), 7 of 8 (s = 4)
    for name, want in (("x2", 8), ("x4", 7)):
        sw = sweeps[name]
        own = int(
            np.argmin(
                np.abs(sw["attention_factor"] ** 2 - sw["yarn"]["logit_multiplier"])
            )
        )
        assert own == 1 and (sw["loss"].argmin(0) == own).sum() == want
        first = sw["first_bucket_past_L"]
        assert (sw["loss"][0, first:] - sw["loss"][own, first:] > 0).all()
    # the parabola's lowest points: 1.09, 1.22, and their slope k about 0.074
    from rope_lib.attention_entropy import temperature_slope

    best = [sweeps[n]["best_past_L"]["logit_multiplier"] for n in ("x2", "x4")]
    assert abs(best[0] - 1.09) < 0.01 and abs(best[1] - 1.22) < 0.01
    k = temperature_slope(
        [2, 4], [sweeps[n]["best_past_L"]["attention_factor"] for n in ("x2", "x4")]
    )
    assert 0.06 < k < 0.09


def test_interpolation_flattens_and_yarns_factor_cancels_it(smol):
    inside = smol["points"] <= 8192
    change = {m: v[:, inside] for m, v in smol["change"].items()}
    assert (change["pi"].mean(1) > 0.1).all() and (change["pi"] > 0).sum() >= 145
    assert (change["yarn_no_attention_factor"] > 0).all()
    assert (np.abs(change["yarn"].mean(1)) < 0.2).all()
    assert (smol["change"]["logn"][:, ~inside] < 0).all()
    # PI flattens most on average, not in every layer
    pi, no_factor = change["pi"].mean(1), change["yarn_no_attention_factor"].mean(1)
    assert pi.mean() > no_factor.mean() and (pi > no_factor).sum() == 17


def test_lab_models_agree(smol):
    from rope_lib.attention_study import read

    lab = read("lab")
    plain = lab["entropy"]["plain"].mean(-1)
    assert (
        (plain[:, :, 8] - plain[:, :, 2]) / 3 > (plain[:, :, 2] - plain[:, :, 0]) / 2
    ).all()
    shift = {
        m: (lab["entropy"][m].mean(-1)[:, :, :3] - plain[:, :, :3]).mean((1, 2))
        for m in ("pi", "yarn_no_temperature", "yarn")
    }
    assert (shift["pi"] > 0.3).all() and (shift["yarn_no_temperature"] > 0.1).all()
    assert (np.abs(shift["yarn"]) < 0.15).all()


def test_temperature_sweep_and_logn_claims():
    from rope_lib.attention_study import read

    sweeps = read("smollm2.temperature")
    misses, own = {}, {}
    for name, sw in sweeps.items():
        past = sw["loss"][:, sw["first_bucket_past_L"] :].mean(1)
        u = np.log(sw["attention_factor"] ** 2)
        misses[name] = np.abs(past - np.polyval(np.polyfit(u, past, 2), u)).max()
        row = np.argmin(np.abs(sw["attention_factor"] - sw["yarn"]["attention_factor"]))
        own[name] = past[row] - sw["best_past_L"]["loss"]
        assert sw["best_past_L"]["logit_multiplier"] < sw["yarn"]["logit_multiplier"]
        assert past[0] - sw["best_past_L"]["loss"] > 0.02  # no temperature loses
    # s = 2: YaRN's own swept point beats the fit's vertex, within the fit's misses
    assert -misses["x2"] < own["x2"] < 0 and 0.005 < misses["x2"] < 0.01
    # s = 4: three swept points fix the parabola exactly: nothing checks it
    assert len(sweeps["x4"]["attention_factor"]) == 3 and misses["x4"] < 1e-6
    logn = read("smollm2.logn")
    broken = logn["plain"] - logn["reference"] > 0.5
    assert broken.sum() == 3
    assert (np.abs(logn["repaired"]["logn"][broken]) < 0.05).all()
    assert (logn["repaired"]["yarn"][broken] > 0.95).all()


def test_reader_topics_and_no_committed_change():
    import json
    from pathlib import Path

    from rope_lib.attention_study import TOPICS, read

    for topic in TOPICS:
        assert read(topic)
    with pytest.raises(ValueError, match="topic"):
        read("nothing")
    raw = json.loads(
        (
            Path(__file__).parents[2] / "notebooks/attention_results/results.json"
        ).read_text()
    )
    assert read("smollm2.logn")["buckets"].tolist() == raw["smollm2"]["logn"]["buckets"]


# --- the temperature widget and figures ----------------------------------------------------


def test_temperature_widget_numbers_and_in_place_redraw():
    from rope_lib.attention_entropy import gaussian_logits, softmax_entropy
    from rope_lib.widgets import registry
    from rope_lib.widgets.temperature import KEYS, TemperatureWidget

    assert "TemperatureWidget" in registry()
    w = TemperatureWidget()
    assert w.figure.get_size_inches()[0] <= 6.4
    for values in ({"multiplier": 1.3}, {"n": 16384, "sigma": 3.0}, {"n": 16}):
        w.update(**values)
        spread = w.values["sigma"] * w.values["multiplier"]
        n = w.values["n"]
        want = float(softmax_entropy(spread * gaussian_logits(n)))
        assert math.isclose(w.state["entropy"], want, rel_tol=1e-12)
        assert len(w.state["curve"]) == len(KEYS)
        assert f"{want:.2f}" in w.readout_line()
        assert "\n" not in w.readout_line()
    # larger 1/t, lower entropy at every n
    w.update(n=1024, sigma=1.5, multiplier=1.0)
    flat = w.state["curve"].copy()
    w.update(multiplier=1.3)
    assert (w.state["curve"] < flat).all()
    # the limits hold every setting: the axes never change
    limits = [ax.get_ylim() for ax in w.figure.axes]
    for step in w.sweep():
        w.update(**step)
        assert max(w.state["curve"]) < 10.2
    assert limits == [ax.get_ylim() for ax in w.figure.axes]


def test_temperature_figures_draw():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rope_lib.attention_entropy import random_logit_std
    from rope_lib.attention_study import read
    from rope_lib.figures import temperature as tfig

    smol = read("smollm2.entropy")
    figs = [
        tfig.thumbnail(),
        tfig.entropy_length_figure(read("random"), smol, 8192),
        tfig.spread_figure(
            smol, [64, 1024], [random_logit_std(n, 64) for n in (64, 1024)], 1.0, 8192
        ),
        tfig.entropy_change_figure({m: v.mean(1) for m, v in smol["change"].items()}),
        tfig.sweep_figure(read("smollm2.temperature")),
    ]
    for fig in figs:
        FigureCanvasAgg(fig).draw()  # a bare Figure: draw it with Agg
        assert fig.axes


def test_notebook_imports_the_temperature_figures_first():
    import json
    import re
    from pathlib import Path

    nb = Path(__file__).parents[2] / "notebooks/10_yarn.ipynb"
    source = "\n".join(
        "".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
    )
    topics = re.findall(
        r"rope_lib\.(?:widgets|figures)(?:\.| import )([a-z_]+)", source
    )
    import importlib.util

    topics = [  # as scripts/make_images.py reads them: topics with a figures module
        t for t in topics if importlib.util.find_spec(f"rope_lib.figures.{t}")
    ]
    assert topics[0] == "temperature", topics[:3]
    assert "extrapolated" not in source.lower()
