"""The wall and interpolation (lesson 9): the angle and score helpers, the loss past L
(rope_lib.length_decay), NTK's reach past the trained arc, and the exercise checkers. Expected values come from formulas written out here,
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
    arc_reach,
    extrapolation_sizes,
    first_pair_longer_than,
    fit_relative_score,
    interpolation_error_bound,
    relative_score,
)
from rope_lib.figures import context_extension as figures  # noqa: E402
from rope_lib.lab.probes import pair_group_excess  # noqa: E402
from rope_lib.length_decay import (  # noqa: E402
    SMOLLM2_VOCABULARY,
    length_study,
    load_study,
    logit_spread_growth,
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


def test_extrapolation_is_set_by_the_ridge_not_the_data():
    """Chen et al.'s stand-in fit, 3 target draws x 3 ridges: the same training fit, a
    tame score on [0, L] (< 1), and a score past L from thousands (ridge 1e-8) down to
    tens or less (ridge 1e-2); never larger than sum |h_j|."""
    sizes = extrapolation_sizes(theta64(128), 2048)
    rms = sizes["train_rms"]
    assert (rms.max(1).values - rms.min(1).values < 0.01).all()
    assert sizes["inside"].max() < 1
    assert (sizes["beyond"][:, 0] > 1000).all() and (sizes["beyond"][:, 2] < 20).all()
    assert (sizes["beyond"][:, 0] > 50 * sizes["beyond"][:, 2]).all()


def test_trained_logits_do_not_blow_up():
    growth = logit_spread_growth()
    assert growth["lab"].shape[0] == 5
    assert 0.8 < growth["lab"].min() and growth["lab"].max() < 1.2
    assert 1.0 < growth["smollm2"].min() and growth["smollm2"].max() < 3


def test_slow_pairs_carry_the_break_on_the_lab():
    """Zero-shot, s = 4, 5 seeds: slow pairs only (5-15) below plain in every seed by
    more than the seed spread; fast pairs only (0-4) worse than plain from bucket 1;
    pair 5 alone removes the step just below lambda_5."""
    test = pair_group_excess(
        {"plain": None, "slow": range(5, 16), "fast": range(5), "pair 5": [5]}
    )
    assert test["L"] == 64 and 100 < test["wavelengths"][5] < 120
    upto = [b < 4 * test["L"] for b in test["bucket_start"]]
    mean = {g: e[:, upto].mean(1) for g, e in test["excess"].items()}
    assert mean["slow"].max() < mean["plain"].min()
    assert (1 - mean["slow"] / mean["plain"] > 0.55).all()
    assert mean["fast"].min() > mean["plain"].max() + 0.5
    assert test["excess"]["fast"][:, 0].min() > 1.5
    assert test["excess"]["plain"][:, 0].max() < 0.1
    step = test["bucket_start"].index(96)
    e = test["excess"]
    assert (e["pair 5"][:, step] < 0.5 * e["plain"][:, step]).all()


def test_smollm2_wall_starts_late_and_plateaus_below_uniform():
    smol = length_study("smollm2")
    assert (abs(smol["excess"][:, 0]) < 0.2).all() and (
        smol["excess"][:, 1] > 0.8
    ).all()
    last = smol["plain"][:, -1]
    assert 8.5 < last.min() and last.max() < math.log(SMOLLM2_VOCABULARY) - 1.5
    for run in range(2):
        aic = {f: smol["aic"][f][run] for f in smol["aic"]}
        assert min(aic["logarithmic"], aic["linear"]) > aic["exponential"] + 10


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
    assert "s = 4" in ex.check_ntk_base(40889.94).message
    assert "multiplier" in ex.check_ntk_base(8.0 ** (128 / 126)).message
    assert not ex.check_ntk_base(None).ok


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


# --- lesson 9's new claims and checkers -----------------------------------------------


def test_ntk_leaves_17_of_18_slow_pairs_past_their_arc_pi_none():
    """d = 128, b = 10000, L = 4096, s = 4: NTK's reach s^(1 - 2i/(d-2)), capped at a
    full turn, is above 1 for pairs 46..62, exactly 1 for 63, at most 1.39; PI's is 1."""
    theta = inv_frequencies(128, 10000.0)
    ntk, _ = rope_frequencies("ntk", 128, 10000.0, factor=4.0)
    pi, _ = rope_frequencies("linear", 128, 10000.0, factor=4.0)
    reach = arc_reach(theta, ntk, 4096, 4.0)
    past = (reach > 1 + 1e-6).nonzero().flatten().tolist()
    assert past == list(range(46, 63))
    by_hand = torch.clamp(4.0 ** (1 - 2 * torch.arange(64.0) / 126) * 4096
                          * theta.double(), max=2 * math.pi) / torch.clamp(
        4096 * theta.double(), max=2 * math.pi)  # fmt: skip
    assert torch.allclose(reach, by_hand, rtol=1e-5)
    assert abs(reach.max().item() - 1.3911) < 1e-3
    assert torch.allclose(
        arc_reach(theta, pi, 4096, 4.0), torch.ones(64, dtype=torch.float64)
    )


def test_length_study_smollm2_saturating_exponential_best_in_each_window():
    smol = length_study("smollm2")
    assert smol["runs"] == 2 and smol["best"] == ["exponential", "exponential"]
    for w in range(2):
        r = {f: smol["rmse"][f][w] for f in smol["rmse"]}
        assert smol["fits"]["exponential"][w]["c"] < 0
        assert 1.1 < r["power"] / r["exponential"] < 1.2  # the lesson's 15-17%
        assert min(r["logarithmic"], r["linear"]) > 2 * r["exponential"]
        assert r["exponential"] > 0.2
    # the per-run fits agree with the study's own per-run rmse
    study = load_study()["smollm2"]["length"]["rmse_per_run"]
    for form, values in study.items():
        assert np.allclose(smol["rmse"][form], values, rtol=1e-3), form


def test_length_study_lab_forms_not_separable_per_seed():
    lab = length_study("lab")
    assert lab["runs"] == 5
    for seed in range(5):
        ordered = sorted(lab["rmse"][f][seed] for f in lab["rmse"])
        assert ordered[1] - ordered[0] < 0.1 * ordered[0]
        assert ordered[0] > 0.1
    rates = [abs(f["c"]) for f in lab["fits"]["exponential"]]
    assert max(rates) > 5 * min(rates)


def test_length_figure_draws_both_panels():
    wavelengths = 2 * math.pi / theta64(32).numpy()
    fig = figures.length_figure(
        length_study("smollm2"), length_study("lab"), wavelengths=wavelengths
    )
    assert len(fig.axes) == 2
    assert all(len(ax.lines) >= 5 for ax in fig.axes)
    # lambda_5, 6, 7 = 112, 199, 353 tokens fall inside 1.125 L .. 7.875 L, no other
    assert len(fig.axes[1].texts) == 3


def test_check_ntk_past_arc_slips():
    assert ex.check_ntk_past_arc(range(46, 63)).ok
    assert ex.check_ntk_past_arc(torch.arange(46, 63)).ok
    assert "PI's answer" in ex.check_ntk_past_arc([]).message
    assert "last pair" in ex.check_ntk_past_arc(range(46, 64)).message
    assert "whole circle" in ex.check_ntk_past_arc(range(0, 63)).message
    assert "dimension indices" in ex.check_ntk_past_arc(range(92, 126, 2)).message
    assert "1/theta_i" in ex.check_ntk_past_arc(range(58, 63)).message
    assert not ex.check_ntk_past_arc(range(47, 63)).ok
    assert not ex.check_ntk_past_arc(None).ok
    assert ex.check_ntk_past_arc_small(range(21, 31)).ok
    assert "last pair" in ex.check_ntk_past_arc_small(range(21, 32)).message


def test_check_neighbour_angles_slips():
    assert ex.check_neighbour_angles((0.25, 1.0)).ok
    assert ex.check_neighbour_angles([0.25, 1]).ok
    assert "divides the frequency by s" in ex.check_neighbour_angles((4, 1)).message
    assert "swapped" in ex.check_neighbour_angles((1.0, 0.25)).message
    assert "whatever the base" in ex.check_neighbour_angles((0.25, 0.25)).message
    assert "pair 0 included" in ex.check_neighbour_angles((1, 1)).message
    assert "degrees" in ex.check_neighbour_angles((14.32, 57.3)).message
    assert not ex.check_neighbour_angles((0.5, 1.0)).ok


def test_check_dynamic_factor_slips():
    assert ex.check_dynamic_factor(7).ok and ex.check_dynamic_factor(7.0).ok
    assert "length ratio" in ex.check_dynamic_factor(4).message
    assert "configured factor" in ex.check_dynamic_factor(2).message
    assert "- (s - 1)" in ex.check_dynamic_factor(8).message
    assert "left out the 1" in ex.check_dynamic_factor(6).message
    assert "max_position_embeddings" in ex.check_dynamic_factor(3).message
    assert not ex.check_dynamic_factor(5).ok
