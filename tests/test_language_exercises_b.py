"""The checkers of lessons 6-10 (alibi, context_extension, lab, todays_models,
multimodal) speak Chinese after set_language("zh"): every message is translated, keeps
its numbers, and set_language("en") gives back the English word for word.

The numbers the tests look for are computed here from the exercises' formulas, not taken
from the checkers.
"""

from __future__ import annotations

import math
import re

import pytest
import torch

from rope_lib.exercises import alibi, context_extension, lab, multimodal, todays_models
from rope_lib.language import language

CJK = re.compile(r"[\u4e00-\u9fff]")
#: English words of the templates; none may be left in a Chinese message.
ENGLISH = re.compile(
    r"\b(the|should|got|you|your|is|are|not|replace|with|of|one|numbers?|pairs?)\b"
)
f64 = torch.float64


def _theta(d: int, base: float) -> torch.Tensor:
    """theta_i = base^(-2i/d), i = 0 .. d/2 - 1."""
    return base ** (-torch.arange(0, d, 2, dtype=f64) / d)


def _geometric(n: int) -> torch.Tensor:
    return 2.0 ** (-8.0 * torch.arange(1, n + 1, dtype=f64) / n)


def _cases() -> list:
    """(checker, answer): right answers, the known slips and odd answers of every
    checker."""
    heads = torch.arange(1, 9, dtype=f64)
    slopes12 = torch.cat([_geometric(8), _geometric(16)[0::2][:4]])
    m5, n5 = torch.arange(5)[:, None], torch.arange(5)[None, :]
    causal = (-0.25 * (m5 - n5)).to(f64).masked_fill(n5 > m5, float("-inf"))
    keys = torch.arange(8, dtype=f64)
    past = torch.where(
        keys <= 5, torch.exp(-0.5 * (5 - keys)), torch.zeros(8, dtype=f64)
    )
    symmetric = torch.exp(-0.5 * (5 - keys).abs())
    yarn = context_extension.yarn_by_hand
    mscale = 0.1 * math.log(16) + 1
    lab_theta = _theta(16, 10000.0)
    p_rope = torch.cat([_theta(64, 10000.0)[:16], torch.zeros(16, dtype=f64)])
    llama4 = 1 + 0.1 * math.log(1 + (16383 + 1) // 8192)
    ids = torch.tensor(
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ]
    )
    axes = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 0, 0, 0]

    def exact_match(predicted, expected):
        return (predicted == expected).all(dim=1).double().mean()

    def digit_fraction(predicted, expected):
        return (predicted == expected).double().mean()

    def raises(predicted, expected):
        raise KeyError("oops")

    odd = [None, "abc", [1, [2, 3]], float("nan"), 2.5]
    table = {
        alibi.check_power_of_two_slopes: [
            2.0**-heads,
            0.1 * heads,
            -(2.0**-heads),
            (2.0**-heads).flip(0),
            torch.exp(-heads),
            torch.ones(7),
        ],
        alibi.check_twelve_head_slopes: [
            slopes12,
            _geometric(12),
            _geometric(16)[:12],
            slopes12.sort().values,
        ],
        alibi.check_causal_bias: [
            causal,
            causal.T,
            -0.25 * (m5 - n5).abs().to(f64),
            causal.masked_fill(n5 > m5, 0.0),
            2 * causal,
            causal.expand(8, 5, 5),
        ],
        alibi.check_query_weights: [
            past / past.sum(),
            symmetric / symmetric.sum(),
            past,
            (-0.5 * (5 - keys)).masked_fill(keys > 5, float("-inf")),
            torch.ones(3),
        ],
        context_extension.check_first_long_pair: [46, 45, 92, 0, 64, 10],
        context_extension.check_ntk_base: [
            10000 * 8 ** (128 / 126),
            80000.0,
            10000 * 8 ** (126 / 128),
            3.0,
        ],
        context_extension.check_yarn_frequencies: [
            yarn(64, 10000.0, 8.0, 2048),
            yarn(64, 10000.0, 8.0, 2048, invert=True),
            yarn(64, 10000.0, 8.0, 2048, truncate=False),
            _theta(64, 10000.0) / 8,
            torch.ones(3),
        ],
        context_extension.check_logit_multiplier: [mscale**2, mscale, 1 / mscale, 7.0],
        context_extension.check_llama3_pair_counts: [
            (29, 6, 29),
            (35, 0, 29),
            (1, 2, 3),
            (41, 9, 14),
            (20, 10, 34),
            {"kept": range(0, 29), "blended": range(29, 35), "interpolated": 0},
            {
                "kept": range(0, 29),
                "blended": range(29, 35),
                "interpolated": range(35, 64),
            },
            {
                "kept": range(35, 64),
                "blended": range(29, 35),
                "interpolated": range(29),
            },
            {
                "kept": range(0, 28),
                "blended": range(28, 35),
                "interpolated": range(35, 64),
            },
            {"kept": 29},
        ],
        lab.check_exact_match: [exact_match, digit_fraction, raises, 3],
        lab.check_pi_frequencies: [
            lab_theta / 4,
            lab_theta * 4,
            lab_theta / 2,
            (lab_theta / 4).repeat_interleave(2),
            lab_theta / 4 + 0.01,
        ],
        lab.check_best_scheme: ["alibi", "rope", "sinusoidal", "T5 bias", ["rope"], 3],
        todays_models.check_proportional_frequencies: [
            p_rope,
            _theta(32, 10000.0),
            p_rope[:16],
            _theta(64, 10000.0),
            p_rope.flip(0),
        ],
        todays_models.check_nope_query_scale: [llama4, llama4**2, 5.0],
        todays_models.check_local_slow_pairs: [57, 80, 71, 3],
        todays_models.check_mla_cache_size: [576, 512, 512 + 128 * 64, 17],
        multimodal.check_position_ids: [ids, ids.T, torch.arange(10).expand(3, -1)],
        multimodal.check_next_text_position: [30, 290, 1130, 50, 7],
        multimodal.check_interleaved_pair_axes: [
            axes,
            [0] * 8 + [1] * 4 + [2] * 4,
            [i % 3 for i in range(16)],
            [a + 1 for a in axes],
        ],
        multimodal.check_resized_offsets: [(6, 0.375), (0.375, 6), (3, 0.375), (6, 6)],
    }
    return [
        (check, answer) for check, answers in table.items() for answer in answers + odd
    ]


CASES = _cases()


def _id(case) -> str:
    check, _ = case
    return f"{check.__module__.rsplit('.', 1)[1]}.{check.__name__}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_every_message_is_chinese_and_english_comes_back(case):
    check, answer = case
    english = repr(check(answer))
    with language("zh"):
        chinese = repr(check(answer))
    assert english.startswith(("Correct: ", "Not yet: ")), english
    assert chinese.startswith(("正确：", "还不对：")), chinese
    assert CJK.search(chinese[4:]), chinese
    assert not ENGLISH.search(chinese), chinese
    assert repr(check(answer)) == english  # English again after the block
    assert not CJK.search(english), english


def test_the_numbers_survive_the_translation():
    with language("zh"):
        # lesson 6: each step back multiplies the weight by e^(-1/2); the query's own
        # key gets 1 / sum_k e^(-k/2), k = 0..5
        keys = torch.arange(8, dtype=f64)
        weights = torch.where(keys <= 5, torch.exp(-0.5 * (5 - keys)), 0 * keys)
        feedback = alibi.check_query_weights(weights / weights.sum())
        own = 1 / sum(math.exp(-k / 2) for k in range(6))
        assert feedback.ok
        assert f"{math.exp(-0.5):.4f}" in feedback.message
        assert f"{own:.4f}" in feedback.message
        # ... and a weight row that does not sum to 1 is quoted with its sum
        message = alibi.check_query_weights(2 * weights / weights.sum()).message
        assert "2.0000" in message and "归一化" in message
        # lesson 7: NTK's base and YaRN's logit multiplier
        base = 10000 * 8 ** (128 / 126)
        feedback = context_extension.check_ntk_base(base)
        assert feedback.ok and f"{base:.2f}" in feedback.message
        mscale = 0.1 * math.log(16) + 1
        feedback = context_extension.check_logit_multiplier(mscale**2)
        assert f"{mscale**2:.4f}" in feedback.message
        assert f"{mscale:.4f}" in feedback.message
        # Llama 3.1: kept = wavelength under 8192 / 4, interpolated = over 8192
        wavelengths = 2 * math.pi / _theta(128, 500000.0)
        kept = int((wavelengths < 2048).sum())
        interpolated = int((wavelengths > 8192).sum())
        blended = 64 - kept - interpolated
        feedback = context_extension.check_llama3_pair_counts(
            (kept, blended, interpolated)
        )
        assert feedback.ok, feedback.message
        assert f"{kept} 个维度对" in feedback.message
        assert f"0..{kept - 1}" in feedback.message
        assert f"{64 - interpolated}..63" in feedback.message
        # lesson 8: the scorer's slip is quoted with both fractions
        message = lab.check_exact_match(lambda p, e: (p == e).double().mean()).message
        assert "0.75" in message and "0.5" in message and "[[1,2],[3,5]]" in message
        # lesson 9: MLA caches 512 + 64 numbers against 128 * (192 + 128)
        feedback = todays_models.check_mla_cache_size(576)
        assert feedback.ok
        assert "576" in feedback.message and str(128 * (192 + 128)) in feedback.message
        # lesson 10: the text after a 14 x 20 grid goes on at 10 + 20
        feedback = multimodal.check_next_text_position(30)
        assert feedback.ok and "30" in feedback.message
        message = multimodal.check_next_text_position(7).message
        assert message.startswith("不是 7")


def test_the_lab_results_message_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(tmp_path / "missing"))
    with language("zh"):
        message = lab.check_best_scheme("rope").message
    assert "FileNotFoundError" in message
    assert "python -m rope_lib.lab --out DIR" in message and "读不到" in message


def test_the_best_scheme_may_be_named_by_its_chinese_label():
    from rope_lib.lab.figures import LABELS
    from rope_lib.language import _

    with language("zh"):
        label = _(LABELS["sinusoidal"])
        assert CJK.search(label), label
        message = lab.check_best_scheme(label).message
    assert message.startswith("sinusoidal ")
    # in English the Chinese label is no scheme name
    assert "got" in lab.check_best_scheme(label).message
