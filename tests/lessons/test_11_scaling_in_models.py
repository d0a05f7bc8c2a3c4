"""Long context in released models (lesson 11, notebooks/11_scaling_in_models.ipynb):
Llama 3's ramp, the exercise checkers (rope_lib.exercises.scaling_in_models), the divisor
figure, and the lesson's claims on the committed SmolLM2 results. Expected values come from
formulas written out here, from hand-derived numbers, or from transformers."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from rope_lib import inv_frequencies, rope_frequencies  # noqa: E402
from rope_lib.exercises import scaling_in_models as ex  # noqa: E402
from rope_lib.extension_analysis import ramp_by_turns  # noqa: E402


def theta64(d=128, b=10000.0):
    return b ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)


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
    # lesson 10's explorer counts at beta = 4 (base 10,000, L = 4096), a likely slip
    at_lesson_10 = ex.check_llama3_pair_counts((36, 10, 18))
    assert not at_lesson_10.ok and "lesson 10" in at_lesson_10.message
    assert (
        "(kept, blended, interpolated) counts"
        in ex.check_llama3_pair_counts(None).message
    )


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


def test_check_rope_scaling_entry():
    assert ex.check_rope_scaling_entry((8192, 4)).ok
    assert "stretches" in ex.check_rope_scaling_entry((32768, 4)).message
    assert "EVERY" in ex.check_rope_scaling_entry((8192, 2)).message
    assert "every length" in ex.check_rope_scaling_entry((8192, 1)).message
    assert not ex.check_rope_scaling_entry((2048, 4)).ok
    assert not ex.check_rope_scaling_entry(None).ok


def test_check_llama3_short_prompt():
    # Llama 3.1-8B's config.json as shipped; transformers' own llama3 init as reference
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    shipped = ex.LLAMA31
    assert shipped["rope_scaling"]["rope_type"] == "llama3"
    config = LlamaConfig(
        hidden_size=256,
        num_attention_heads=2,
        head_dim=128,
        num_hidden_layers=1,
        intermediate_size=32,
        vocab_size=16,
        max_position_embeddings=shipped["max_position_embeddings"],
        rope_parameters={
            "rope_theta": shipped["rope_theta"],
            **shipped["rope_scaling"],
        },
    )
    theirs, factor = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu", seq_len=ex.PROMPT)
    divisor = inv_frequencies(128, 500000.0) / theirs
    assert math.isclose(divisor[0], 1.0) and math.isclose(
        divisor[63], 8.0, rel_tol=1e-6
    )
    assert factor == 1.0
    assert ex.check_llama3_short_prompt((1, 8)).ok
    assert ex.check_llama3_short_prompt(np.array([1.0, 8.0])).ok
    assert "never reads" in ex.check_llama3_short_prompt((1, 1)).message
    assert "Position Interpolation" in ex.check_llama3_short_prompt((8, 8)).message
    assert "swapped" in ex.check_llama3_short_prompt((8, 1)).message
    assert "ratio" in ex.check_llama3_short_prompt((1, 0.125)).message
    assert "high_freq_factor = 4" in ex.check_llama3_short_prompt((1, 4)).message
    assert "compare" in ex.check_llama3_short_prompt((2, 3)).message
    assert not ex.check_llama3_short_prompt(None).ok


def test_divisor_figure_and_its_claims():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rope_lib.extension_analysis import wavelengths
    from rope_lib.figures.context_extension import divisor_figure

    d, b, L, s = 128, 10000.0, 4096, 4.0
    theta = inv_frequencies(d, b)
    at_L = dict(factor=s, original_max_position_embeddings=L)
    long = [1.0 + 7.0 * (i / 63) ** 2 for i in range(64)]
    scaled = {
        "PI": rope_frequencies("linear", d, b, factor=s)[0],
        "NTK": rope_frequencies("ntk", d, b, factor=s)[0],
        "YaRN": rope_frequencies("yarn", d, b, **at_L)[0],
        "Llama 3": rope_frequencies(
            "llama3", d, b, **at_L, low_freq_factor=1.0, high_freq_factor=4.0
        )[0],
        "LongRoPE": theta / torch.tensor(long),
    }
    fig = divisor_figure(theta, scaled, L, s)
    FigureCanvasAgg(fig).draw()
    assert fig.get_size_inches()[0] <= 6.4 and len(fig.axes[0].lines) >= 5
    divisor = {k: (theta / v).double() for k, v in scaled.items()}
    lam = wavelengths(theta)
    # NTK at pair 40: s^(80/126) = 2.41; the ramps: YaRN's code 2.36, Llama 3's 1.94
    assert math.isclose(divisor["NTK"][40], s ** (80 / 126), rel_tol=1e-4)
    r40 = L * float(theta[40]) / (2 * math.pi)  # 2.06 turns
    smooth = (r40 - 1) / 3
    assert math.isclose(
        divisor["Llama 3"][40], 1 / ((1 - smooth) / s + smooth), rel_tol=1e-5
    )
    gamma = 1 - (40 - 20) / 26
    assert math.isclose(
        divisor["YaRN"][40], 1 / ((1 - gamma) / s + gamma), rel_tol=1e-5
    )
    assert math.isclose(divisor["NTK"][20], s ** (40 / 126), rel_tol=1e-4)  # 1.55
    for name in ("YaRN", "Llama 3"):
        assert (divisor[name][lam < L / 32] - 1).abs().max() < 1e-5
        assert (divisor[name][lam > L] - s).abs().max() < 1e-4
    blended = {k: int(((divisor[k] > 1 + 1e-4) & (divisor[k] < s - 1e-4)).sum())
               for k in ("YaRN", "Llama 3")}  # fmt: skip
    assert blended["YaRN"] > blended["Llama 3"]


def test_smollm2_llama3_ramp_zero_shot_and_static_cost():
    from rope_lib.pretrained.results import load_results

    loss = {k: np.array(v["mean"]) for k, v in load_results()["summary"].items()}
    gap = loss["llama3/x2/16384"][4:] - loss["yarn_no_attention_factor/x2/16384"][4:]
    assert (gap > 0.02).all() and (gap < 0.07).all()  # "0.03 to 0.06 in every bucket"
    cost = loss["yarn/x2/16384"][:4] - loss["plain/x1/16384"][:4]
    assert (cost > 0.01).all() and (cost < 0.06).all()  # "+0.02 .. +0.05"
