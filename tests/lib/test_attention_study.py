"""The committed attention study (notebooks/attention_results/results.json, made by
`python -m rope_lib.attention_study`): each claim the lessons may make, asserted on the
numbers with a margin larger than their spread (seeds, windows, buckets); the file is
what the code makes from the committed inputs; the real-LLM plan's new units."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rope_lib.attention_study import (
    COMMITTED,
    RANDOM,
    _plain,
    random_table,
    smollm2_table,
)

RESULTS = COMMITTED / "attention_results" / "results.json"


@pytest.fixture(scope="module")
def study():
    return json.loads(RESULTS.read_text())


# --- random q and k -----------------------------------------------------------------


def test_random_entropy_follows_ln_n_minus_half_sigma_squared(study):
    """sigma <= 1, n >= 256: the large-n form within 3 standard errors + 0.03; sigma = 3
    needs n >> e^9 = 8,103: at n <= 256 the form is more than 1 nat too low."""
    r = study["random"]
    n, sigma = np.array(r["n"]), np.array(r["sigma"])
    mean, std, form = (np.array(r[k]) for k in ("mean", "std", "analytic"))
    error = 3 * std / math.sqrt(r["trials"]) + 0.03
    good = (sigma[:, None] <= 1) & (n[None] >= 256)
    assert (np.abs(mean - form)[good] < error[good]).all()
    i = list(sigma).index(3.0)
    assert (mean[i, n <= 256] - form[i, n <= 256] > 1).all()
    assert (np.array(r["uniform"])[None] >= mean - 1e-9).all()  # never above ln n


def test_the_gap_below_uniform_is_constant_in_n(study):
    """ln n - H stays at sigma^2 / 2 (sigma = 0.5, 1) from 1,024 keys on: the ln n is
    the whole growth; nothing in the logits' spread grows with n."""
    r = study["random"]
    n = np.array(r["n"])
    for i, sigma in enumerate(r["sigma"][:2]):
        gap = np.array(r["uniform"]) - np.array(r["mean"][i])
        assert np.abs(gap[n >= 1024] - sigma**2 / 2).max() < 0.05


def test_the_random_table_is_what_the_code_makes(study):
    """Recomputed (about 20 s): equal to the committed digits up to round-off in the
    4th digit (another CPU's sums)."""
    fresh = _plain(random_table(RANDOM))
    for key in ("mean", "std", "analytic", "uniform"):
        assert np.allclose(fresh[key], study["random"][key], rtol=2e-3, atol=2e-3)


# --- the lab's committed RoPE models ------------------------------------------------


def _lab(study, name, part="entropy"):
    """[seed, layer, point], mean over heads."""
    return np.array(study["lab"][part][name]).mean(-1)


def test_lab_entropy_grows_faster_past_L_than_inside(study):
    """Per doubling of the keys, every seed and layer: 0.04-0.47 nats from 16 to 64 keys
    (= L), 0.45-0.70 from 64 to 512; the difference at least 0.2 (measured 0.23)."""
    lab = study["lab"]
    points, plain = lab["points"], _lab(study, "plain")
    i16, iL, i8L = points.index(16), points.index(lab["L"]), points.index(512)
    inside = (plain[:, :, iL] - plain[:, :, i16]) / 2
    past = (plain[:, :, i8L] - plain[:, :, iL]) / 3
    assert (past - inside).min() > 0.2


def test_lab_attention_neither_collapses_nor_goes_uniform(study):
    """ "Attention collapses" past L? The entropy (mean over heads) grows, but from L to
    8L it stays above 0.6 nats and more than 2 nats below ln n (2.2 at 8L) in every
    seed and layer: neither onto one key nor spread evenly."""
    lab = study["lab"]
    past = [i for i, p in enumerate(lab["points"]) if p >= lab["L"]]
    plain = _lab(study, "plain")[:, :, past]
    uniform = np.array(lab["uniform"])[past]
    assert (plain > 0.5).all()
    assert (uniform[None, None] - plain > 2.0).all()


def test_lab_logit_spread_does_not_grow_with_length(study):
    """The claim "scores' variance grows with length": the standard deviation of a
    query's logits over its keys at 512 keys is 0.9-1.07 times its value at 64 in every
    seed and layer (entropy meanwhile grows by 1.3-2.2 nats)."""
    points, std = study["lab"]["points"], _lab(study, "plain", "logit_std")
    ratio = std[:, :, points.index(512)] / std[:, :, points.index(64)]
    assert ((ratio > 0.85) & (ratio < 1.15)).all()


def _inside(study, name):
    """method - plain at the points up to L: [seed, layer, point]."""
    lab = study["lab"]
    n = [i for i, p in enumerate(lab["points"]) if p <= lab["L"]]
    return _lab(study, name)[:, :, n] - _lab(study, "plain")[:, :, n]


def test_lab_pi_flattens_layers_1_and_2_not_always_layer_0(study):
    """PI at factor 4, inside L: +0.67 to +0.89 nats in layers 1 and 2 for every seed;
    layer 0 from -0.02 to +0.66: "flatter" holds where the heads were sharp."""
    change = _inside(study, "pi")
    assert change[:, 1:].min() > 0.5
    assert change[:, 0].min() < 0.1 < change[:, 0].max()


def test_lab_yarn_flattens_and_its_temperature_undoes_it(study):
    """YaRN x4 without its temperature: flatter in every seed, layer and point up to L
    (+0.08 to +0.75); with it, on average back to plain (mean |change| 0.06 against
    0.29), closer than without at 97% of (seed, layer, point)."""
    bare, yarn = _inside(study, "yarn_no_temperature"), _inside(study, "yarn")
    assert bare.min() > 0.05
    assert np.abs(yarn).mean() < 0.4 * bare.mean()
    assert (np.abs(yarn) < bare).mean() > 0.9


def test_lab_excess_loss_is_fitted_by_no_form_within_its_seed_spread(study):
    """The excess loss past L (plain - keys hidden beyond L): every form's residuals are
    larger than 0.1 nats rms; the saturating ones (exponential with c < 0, power) fit
    better than the line; the seeds differ by more than the forms do."""
    fits = study["lab"]["fits"]
    rmse = {form: fits[form]["rmse"] for form in ("exponential", "power", "linear")}
    assert min(rmse.values()) > 0.1
    assert (
        fits["exponential"]["c"] < 0
        and max(rmse["exponential"], rmse["power"]) < (rmse["linear"])
    )
    excess = np.array(fits["excess"])
    assert (excess.max(0) - excess.min(0)).mean() > 3 * rmse["exponential"]


# --- the real-LLM plan's new units and jobs side by side ----------------------------


def test_the_plan_measures_entropy_on_the_loss_units_it_shares():
    from rope_lib.pretrained.experiment import (
        _measures_entropy,
        _without_entropy,
        plan,
    )
    from rope_lib.pretrained.results import temperature_study

    settings = plan(quick=False, training_length=8192)
    assert settings["entropy"]["points"][-1] == 32768
    assert _measures_entropy(settings, "plain", 1)
    assert _measures_entropy(settings, "yarn", 2)
    assert not _measures_entropy(settings, "yarn", 4)  # its 4L pass: not rerun
    assert not _measures_entropy(settings, "ntk", 2)
    stored = {
        "plain/x1/32768/window0": {"bucket_loss": []},
        "plain/x1/16384/window0": {"from": "plain/x1/32768/window0"},
        "pi/x2/16384/window0": {"bucket_loss": [], "entropy": {}},
        "ntk/x2/16384/window0": {"bucket_loss": []},
    }
    again = _without_entropy(stored, settings["entropy"], settings)
    assert again == {"plain/x1/32768/window0", "plain/x1/16384/window0"}
    assert "pi/x2/16384/window0" in _without_entropy(stored, None, settings)
    assert temperature_study("logn", "x1") and temperature_study("yarn_af1.14", "x2")
    assert temperature_study("yarn_no_attention_factor", "x4")
    assert not temperature_study("yarn_no_attention_factor", "x2")


@pytest.fixture(scope="module")
def gguf_path():
    from rope_lib.pretrained.gguf import smollm2_path

    try:
        return smollm2_path()
    except FileNotFoundError as error:
        pytest.skip(f"the pretrained model's file is not installed: {error}")


def test_jobs_side_by_side_give_the_units_one_job_gives(gguf_path, tmp_path):
    """--quick with two jobs: every unit of the plan, the entropy where the plan says;
    three units run again by one job (resumed) give the same numbers."""
    from rope_lib.pretrained.experiment import run

    results = run(tmp_path, quick=True, quiet=True, jobs=2)
    entropy = results["units"]["plain/x1/128/window0"]["entropy"]
    assert entropy["points"][-1] == 128 and len(entropy["entropy"]) == 30
    assert len(entropy["entropy"][0]) == len(entropy["points"])
    assert "entropy" in results["units"]["logn/x1/64/window0"]
    assert "entropy" not in results["units"]["ntk/x2/64/window0"]
    path = tmp_path / "results.json"
    stored = json.loads(path.read_text())
    keys = ["logn/x1/64/window0", "pi/x2/64/window1", "yarn_af1.28/x4/64/window0"]
    for key in keys:
        del stored["units"][key]
    path.write_text(json.dumps(stored))
    again = run(tmp_path, quick=True, quiet=True, jobs=1)
    for key in keys:
        assert again["units"][key]["bucket_loss"] == pytest.approx(
            results["units"][key]["bucket_loss"], abs=1e-5
        )
        assert np.allclose(
            again["units"][key]["entropy"]["entropy"],
            results["units"][key]["entropy"]["entropy"],
            atol=2e-3,
        )


def _close(a, b, tolerance=2e-3) -> bool:
    """Nested dicts/lists equal, numbers up to a relative tolerance (4-digit rounding on
    another CPU can move the last digit)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tolerance * max(1.0, abs(a), abs(b))
    return a == b


def test_the_smollm2_tables_are_what_the_code_makes_of_the_committed_run(study):
    assert _close(_plain(smollm2_table()), study["smollm2"])


# --- SmolLM2 (the real-LLM run's units, read by attention_study) --------------------


def test_logn_scaling_alone_repairs_none_of_the_break(study):
    """Plain RoPE's frequencies with the logits of query m times max(1, ln(m+1)/ln L)
    (up to 1.077 at 2L, YaRN's own 1.143 at x2 is larger): where plain RoPE breaks
    (10-16k, more than 0.5 nats over the sliding reference) log-n takes back at most
    5 % of the excess (measured -3 % to +1 %), YaRN x2 over 95 %."""
    logn = study["smollm2"]["logn"]
    plain, ref = np.array(logn["plain"]), np.array(logn["reference"])
    broken = plain - ref > 0.5
    assert broken.sum() >= 3
    assert (np.abs(np.array(logn["repaired"]["logn"])[broken]) < 0.05).all()
    assert (np.array(logn["repaired"]["yarn"])[broken] > 0.95).all()


def test_smollm2_excess_loss_saturates_and_no_form_fits_the_onset(study):
    """Plain RoPE's loss over the sliding reference, 1L to 4L, two stretches of text:
    it starts near 0, rises by 3 nats within 0.75 L and levels off near 6-7 nats. An
    exponential approach to a plateau (c < 0) fits best in each window, a power law
    next, ln n and a line far worse (rmse > 2 times); every form leaves more than
    0.2 nats rms, the largest residual at the onset."""
    fits = study["smollm2"]["length"]
    per_run = fits["rmse_per_run"]
    for w in range(len(per_run["linear"])):
        order = sorted(per_run, key=lambda form: per_run[form][w])
        assert order[:2] == ["exponential", "power"]
        assert per_run["logarithmic"][w] > 2 * per_run["exponential"][w]
    assert fits["exponential"]["c"] < 0 and fits["exponential"]["rmse"] > 0.2
    residuals = np.abs(fits["exponential"]["residuals"])
    assert residuals.argmax() <= 2  # the onset, within 1.75 L
    excess = np.array(fits["excess"])
    assert (np.abs(excess[:, 0]) < 0.2).all() and (excess[:, -4:] > 5.5).all()


def _smollm2(study):
    e = study["smollm2"]["entropy"]
    points = np.array(e["points"])
    return e, points, points <= study["smollm2"]["L"]


def test_smollm2_entropy_grows_much_slower_than_ln_n_inside_L(study):
    """Plain RoPE, mean over the 30 layers: +0.40 nats from 1k to 8k keys (ln n: +2.08);
    every layer at every point more than 1 nat below ln n (layer 0, the flattest, is
    1.0-1.6 below; the mean 3.9-5.6 below)."""
    e, points, inside = _smollm2(study)
    plain, uniform = np.array(e["plain"]), np.array(e["uniform"])
    mean = plain.mean(0)
    rise = mean[points == 8192][0] - mean[points == 1024][0]
    assert 0 < rise < 0.25 * (uniform[points == 8192][0] - uniform[0])
    assert (uniform[None] - plain > 1.0).all()


def test_smollm2_attention_spreads_past_L_without_collapsing(study):
    """Past L plain RoPE's attention gets flatter (mean over layers 12-16k minus 4-8k:
    +0.77 nats), still more than 5 nats below ln n: no collapse onto one key, no even
    spread either."""
    e, points, inside = _smollm2(study)
    plain, uniform = np.array(e["plain"]), np.array(e["uniform"])
    mean = plain.mean(0)
    late = (points >= 12288) & (points <= 16384)
    early = (points >= 4096) & inside
    assert mean[late].mean() - mean[early].mean() > 0.4
    assert (uniform[late] - mean[late] > 5.0).all() and (plain > 1.5).all()


def test_smollm2_logit_spread_grows_with_length_unlike_random_or_lab(study):
    """The claim "scores' variance grows with length" holds in SmolLM2 (not in random
    q, k, not in the lab): in every layer the std of a query's logits over its keys is
    1.27-1.86 times larger at 8k keys than at 1k, and 1.2-2.45 times larger again at
    16k. Why (keys at larger distances scoring lower on average, so more keys spread
    wider?) is a hypothesis here: no control was run."""
    e, points, inside = _smollm2(study)
    std = np.array(e["logit_std"])
    one, L, two = (list(points).index(p) for p in (1024, 8192, 16384))
    assert (std[:, L] / std[:, one] > 1.2).all()
    assert (std[:, two] / std[:, L] > 1.15).all()


def test_smollm2_interpolation_flattens_every_layer_and_yarn_undoes_it(study):
    """Inside L (1k-8k keys), per layer, the change against plain RoPE averaged over
    the points: PI x2 +0.14 to +1.42 nats, YaRN x2 without its attention factor +0.14 to
    +0.72: flatter in all 30 layers; YaRN with it -0.18 to +0.08 (mean over layers
    -0.04): the temperature takes the flattening back."""
    e, points, inside = _smollm2(study)
    change = {k: np.array(v)[:, inside[: len(v[0])]] for k, v in e["change"].items()}
    for name in ("pi", "yarn_no_attention_factor"):
        assert (change[name].mean(1) > 0.1).all()
    yarn = change["yarn"].mean(1)
    assert (np.abs(yarn) < 0.25).all() and abs(yarn.mean()) < 0.1
    assert np.abs(yarn).mean() < 0.3 * change["yarn_no_attention_factor"].mean()


def test_smollm2_logn_sharpens_past_L_only(study):
    """Log-n scaling leaves every query up to L keys alone and makes every layer
    sharper past L (-0.12 to -0.26 nats averaged over 10-16k keys), yet the loss does
    not move (test_logn_scaling_alone_repairs_none_of_the_break)."""
    e, points, inside = _smollm2(study)
    change = np.array(e["change"]["logn"])
    assert np.abs(change[:, inside]).max() < 1e-3
    assert (change[:, ~inside].mean(1) < -0.08).all()


def test_the_best_temperature_is_milder_than_yarns_rule_on_smollm2(study):
    """The sweep (YaRN's frequencies, attention factor m, logits x m^2 = 1/t) at x2 and
    x4 on a 2L window: the least loss past L lies inside the swept range, at 1/t above
    1 in every bucket (sharpening helps) and below YaRN's (0.1 ln s + 1)^2 in every
    bucket; sqrt(1/t) = k ln s + 1 holds with about the same k at both factors, below
    YaRN's 0.1. The cost of YaRN's own t against the best is small."""
    slopes = []
    for factor in ("x2", "x4"):
        t = study["smollm2"]["temperature"][factor]
        yarn = t["yarn"]["logit_multiplier"]
        best = [b["logit_multiplier"] for b in t["best_by_bucket"]]
        assert t["best_past_L"]["inside"] and all(
            b["inside"] for b in t["best_by_bucket"]
        )
        assert 1.0 < min(best) and max(best) < yarn
        slopes.append(t["slope"])
        first = t["first_bucket_past_L"]
        swept = np.array(t["attention_factor"])
        own = int(np.abs(swept - t["yarn"]["attention_factor"]).argmin())
        at_yarn = np.mean(t["loss"][own][first:])
        assert at_yarn - t["best_past_L"]["loss"] < 0.05
    assert abs(slopes[0] - slopes[1]) < 0.02 and max(slopes) < 0.09
