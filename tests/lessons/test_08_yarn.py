"""Context extension (lesson 7): the scaling helpers appended to rope_lib.scaling, the exercise
checkers and the wavelength-cutoff widget. Expected values come from formulas written out here,
from hand-derived numbers, or from transformers."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from rope_lib import inv_frequencies, rope_frequencies  # noqa: E402
from rope_lib.exercises import context_extension as ex  # noqa: E402
from rope_lib.extension_analysis import (  # noqa: E402
    angle_coverage,
    first_pair_longer_than,
    fit_relative_score,
    implied_ramp,
    interpolation_error_bound,
    pair_regimes,
    ramp_by_turns,
    relative_score,
)


def theta64(d=128, b=10000.0):
    return b ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


# --- library: angles, cut-offs, regimes ------------------------------------------------------


def test_angle_coverage_by_hand():
    theta = torch.tensor([1.0, 2 * math.pi / 100, 2 * math.pi / 1000])
    cov = angle_coverage(theta, 51)  # 50 steps
    # pair 0: 50 rad > 2 pi -> 1; pair 1: 50 * 2pi/100 / 2pi = 0.5; pair 2: 0.05
    assert torch.allclose(cov, torch.tensor([1.0, 0.5, 0.05], dtype=torch.float64))
    with pytest.raises(ValueError, match="length"):
        angle_coverage(theta, 0)


def test_first_pair_longer_than_llama_numbers():
    # 2 pi 10000^(i/64) > 4096  <=>  i > 64 ln(4096 / 2pi) / ln 10000 = 45.03
    assert first_pair_longer_than(inv_frequencies(128, 10000.0), 4096) == 46
    assert first_pair_longer_than(inv_frequencies(128, 10000.0), 1e9) == 64
    assert first_pair_longer_than(inv_frequencies(128, 10000.0), 1.0) == 0


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


def test_ramp_by_turns_is_llama3_smooth():
    d, b, s, L = 128, 500000.0, 8.0, 8192
    theta = theta64(d, b)
    gamma = ramp_by_turns(theta, L, alpha=1.0, beta=4.0)
    r = L * theta / (2 * math.pi)
    assert torch.allclose(gamma, torch.clamp((r - 1) / 3, 0, 1))
    llama3, _ = rope_frequencies(
        "llama3",
        d,
        b,
        factor=s,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=L,
    )
    assert torch.allclose(
        ((1 - gamma) * theta / s + gamma * theta).float(), llama3, rtol=1e-6
    )
    with pytest.raises(ValueError, match="beta"):
        ramp_by_turns(theta, L, 2.0, 2.0)


# --- library: the Position Interpolation argument --------------------------------------------


def test_relative_score_is_the_rope_dot_product():
    # a(m - n) = q'_m . k'_n for RoPE with interleaved pairs, h_j = q_j conj(k_j)
    torch.manual_seed(0)
    d = 16
    q, k = torch.randn(d, dtype=torch.float64), torch.randn(d, dtype=torch.float64)
    theta = theta64(d)
    qc, kc = torch.complex(q[0::2], q[1::2]), torch.complex(k[0::2], k[1::2])
    m, n = 37.0, 11.0
    from rope_lib import apply_rope

    dot = (
        apply_rope(q[None], torch.tensor([m]), inv_freq=theta)
        * apply_rope(k[None], torch.tensor([n]), inv_freq=theta)
    ).sum()
    assert torch.allclose(
        relative_score(qc * kc.conj(), torch.tensor([m - n]), theta), dot[None]
    )


def test_fit_relative_score_recovers_exact_coefficients():
    theta = theta64(
        16, 100.0
    )  # the slowest pair turns ~3 times over the 1000 distances: well posed
    h_true = torch.complex(
        torch.linspace(-1, 1, 8, dtype=torch.float64),
        torch.linspace(0.5, -0.5, 8, dtype=torch.float64),
    )
    s = torch.arange(0, 1000, dtype=torch.float64)
    h = fit_relative_score(s, relative_score(h_true, s, theta), theta, ridge=0.0)
    assert torch.allclose(h, h_true, atol=1e-6)


def test_interpolation_error_bound_holds_and_is_tight_in_shape():
    theta = theta64(128)
    gen = torch.Generator().manual_seed(3)
    h = torch.complex(
        torch.randn(64, generator=gen, dtype=torch.float64),
        torch.randn(64, generator=gen, dtype=torch.float64),
    )
    s = torch.linspace(0, 50, 5001, dtype=torch.float64)
    s1 = torch.floor(s)
    w = s - s1
    gap = (
        relative_score(h, s, theta)
        - (
            (1 - w) * relative_score(h, s1, theta)
            + w * relative_score(h, s1 + 1, theta)
        )
    ).abs()
    bound = interpolation_error_bound(h, theta, s)
    assert (gap <= bound + 1e-12).all()
    # written out at a midpoint: (1/2)(1/2)/2 * sum |h_j| theta_j^2
    mid = interpolation_error_bound(h, theta, torch.tensor([3.5]))
    assert math.isclose(mid.item(), (h.abs() * theta**2).sum().item() / 8)
    assert interpolation_error_bound(h, theta, torch.tensor([4.0])).item() == 0.0


def test_extrapolation_blows_up_where_interpolation_does_not():
    theta = theta64(128)
    gen = torch.Generator().manual_seed(0)
    L = 2048
    s = torch.arange(0, L + 1, dtype=torch.float64)
    h = fit_relative_score(
        s, torch.rand(L + 1, generator=gen, dtype=torch.float64) * 2 - 1, theta
    )
    inside = (
        relative_score(h, torch.linspace(0, L, 8001, dtype=torch.float64), theta)
        .abs()
        .max()
    )
    beyond = (
        relative_score(h, torch.linspace(L, 2 * L, 8001, dtype=torch.float64), theta)
        .abs()
        .max()
    )
    assert inside < 2 and beyond > 100 * inside


# --- exercises --------------------------------------------------------------------------------


def test_check_1():
    theta = inv_frequencies(128, 10000.0)
    solution = int((2 * math.pi / theta > 4096).nonzero()[0])
    assert ex.check_first_long_pair(solution).ok
    assert "last pair" in ex.check_first_long_pair(45).message
    assert "dimension index" in ex.check_first_long_pair(92).message
    assert (
        "2 pi" in ex.check_first_long_pair(58).message
    )  # wavelength taken as 1/theta: 10000^(i/64) > 4096 -> i = 58
    assert "whole number" in ex.check_first_long_pair(46.5).message
    assert (
        "number" in ex.check_first_long_pair(None).message
        and not ex.check_first_long_pair(None).ok
    )


def test_check_2():
    assert ex.check_ntk_base(10000.0 * 8.0 ** (128 / 126)).ok
    assert "multiplied the base by s" in ex.check_ntk_base(80000.0).message
    assert "upside down" in ex.check_ntk_base(10000.0 * 8.0 ** (126 / 128)).message
    assert "multiplier" in ex.check_ntk_base(8.0 ** (128 / 126)).message
    assert not ex.check_ntk_base(None).ok


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
    assert "original frequencies" in ex.check_yarn_frequencies(theta).message
    assert "shape" in ex.check_yarn_frequencies(theta[:5]).message
    assert not ex.check_yarn_frequencies(None).ok


def test_check_4():
    assert ex.check_logit_multiplier((0.1 * math.log(16) + 1) ** 2).ok
    assert "twice" in ex.check_logit_multiplier(0.1 * math.log(16) + 1).message
    assert (
        "natural logarithm"
        in ex.check_logit_multiplier((0.1 * math.log10(16) + 1) ** 2).message
    )
    assert (
        "inverted"
        in ex.check_logit_multiplier(1 / (0.1 * math.log(16) + 1) ** 2).message
    )


def test_check_5():
    lam = 2 * math.pi * 500000.0 ** (torch.arange(0, 128, 2, dtype=torch.float64) / 128)
    kept, interpolated = int((lam < 2048).sum()), int((lam > 8192).sum())
    assert (kept, interpolated) == (29, 29)
    assert ex.check_llama3_pair_counts(
        (kept, 64 - kept - interpolated, interpolated)
    ).ok
    assert "500,000" in ex.check_llama3_pair_counts((41, 9, 14)).message
    assert "add up" in ex.check_llama3_pair_counts((29, 6, 28)).message
    assert "blend" in ex.check_llama3_pair_counts((35, 0, 29)).message
    assert (
        "(kept, blended, interpolated) counts"
        in ex.check_llama3_pair_counts(None).message
    )


# --- widget ------------------------------------------------------------------------------------


def test_widget_defaults_readout_and_artists():
    from rope_lib.widgets.context_extension import WavelengthCutoffExplorer

    w = WavelengthCutoffExplorer()
    text = w.readout_text()
    assert "attention factor = 1.1386" in text  # 0.1 ln 4 + 1
    assert "correction range = 20..46" in text
    assert "extrapolated = 21, blended = 25, interpolated = 18" in text
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
    # colors: extrapolated pairs (lam < L/4) blue
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


def test_check_5_kept_and_interpolated_do_not_pass_swapped_silently():
    kept, blended, interpolated = (
        range(0, 29),
        range(29, 35),
        range(35, 64),
    )  # by hand, see test_check_5
    assert ex.check_llama3_pair_counts(
        {"kept": kept, "blended": blended, "interpolated": interpolated}
    ).ok
    assert ex.check_llama3_pair_counts(
        (list(kept), list(blended), list(interpolated))
    ).ok
    swapped = ex.check_llama3_pair_counts(
        {"kept": interpolated, "blended": blended, "interpolated": kept}
    )
    assert not swapped.ok and "swapped" in swapped.message
    mask = torch.arange(64) < 29
    assert ex.check_llama3_pair_counts(
        {
            "kept": mask,
            "blended": blended,
            "interpolated": ~mask & (torch.arange(64) >= 35),
        }
    ).ok
    # the counts read the same either way round, so the verdict says how to tell them apart
    feedback = ex.check_llama3_pair_counts((29, 6, 29))
    assert (
        feedback.ok
        and "cannot show which is which" in feedback.message
        and "0..28" in feedback.message
    )
    for form in (
        np.array([29, 6, 29]),
        torch.tensor([29, 6, 29]),
        (np.int64(29), 6.0, 29),
    ):
        assert ex.check_llama3_pair_counts(form).ok
    for wrong in (
        (29.5, 6, 29),
        (29, 6, float("nan")),
        [29, 6],
        "29, 6, 29",
        {"kept": 29},
    ):
        assert not ex.check_llama3_pair_counts(wrong).ok, wrong


def test_checkers_read_numbers_by_value_and_say_no_seed():
    for right in (46, np.int64(46), np.array(46), torch.tensor([46.0])):
        assert ex.check_first_long_pair(right).ok, right
    for wrong in (46.5, float("inf"), float("nan"), complex(46, 0), True):
        assert not ex.check_first_long_pair(wrong).ok, wrong
    base = 10000.0 * 8.0 ** (128 / 126)
    assert (
        ex.check_ntk_base(np.float64(base)).ok
        and ex.check_ntk_base(torch.tensor(base, dtype=torch.float64)).ok
    )
    assert (
        not ex.check_ntk_base(complex(base, 0)).ok
        and not ex.check_ntk_base(float("inf")).ok
    )
    assert "seed" not in ex.check_first_long_pair.__doc__.lower()
