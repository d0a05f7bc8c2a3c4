"""Lesson 7 (RoPE at scale): its formulas and claims checked independently, the
clock-dial readout (moved here from the notebook), and the shape of the notebook.

The claims answered in section 3 come from the study notes (note 000's list of RoPE's
weak points: "naturally extrapolates", f(x,m)·f(y,n) = f(x·y, m-n),
theta_i = m / b^(2i/d), "every layer gets the same position information"); the old
lesson wrote RoFormer's pair as q_[2i:2i+1].
"""

import cmath
import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib import analysis  # noqa: E402
from rope_lib.widgets import clock_dials  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "07_rope_in_practice.ipynb"


def cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def rotate_by_hand(x, m, base=10000.0):
    """RoPE on pairs (2i, 2i+1) of a list of floats at position m, as complex."""
    d = len(x)
    out = []
    for i in range(d // 2):
        z = complex(x[2 * i], x[2 * i + 1]) * cmath.exp(1j * m * base ** (-2 * i / d))
        out += [z.real, z.imag]
    return out


# ---------------------------------------------------------- the decay section's formula
def test_score_is_the_real_part_of_the_pair_sum():
    torch.manual_seed(3)
    d = 32
    q, k = torch.randn(d).tolist(), torch.randn(d).tolist()
    for m, n in [(0, 0), (9, 2), (300, 1)]:
        score = sum(a * b for a, b in zip(rotate_by_hand(q, m), rotate_by_hand(k, n)))
        q_pairs = [complex(q[2 * i], q[2 * i + 1]) for i in range(d // 2)]
        k_pairs = [complex(k[2 * i], k[2 * i + 1]) for i in range(d // 2)]
        h = [a * b.conjugate() for a, b in zip(q_pairs, k_pairs)]
        pair_sum = sum(
            h_i * cmath.exp(1j * (m - n) * 10000.0 ** (-2 * i / d))
            for i, h_i in enumerate(h)
        )
        assert score == pytest.approx(pair_sum.real, abs=1e-9)


# ---------------------------------------------------------- claims of section 3
def test_relative_property_needs_the_conjugate():
    theta, m, n = 0.3, 7, 3
    x, y = 0.8 - 0.2j, -0.5 + 1.1j

    def f(z, p):
        return z * cmath.exp(1j * p * theta)

    assert f(x, m) * f(y, n) == pytest.approx(f(x * y, m + n))
    assert f(x, m) * f(y, n) != pytest.approx(f(x * y, m - n))
    assert f(x, m) * f(y, n).conjugate() == pytest.approx(f(x * y.conjugate(), m - n))


def test_same_rotation_different_heads_use_position_differently():
    d = 128
    fast, slow = [0.0] * d, [0.0] * d
    fast[:8], slow[-8:] = [1.0] * 8, [1.0] * 8

    def score(v, delta):
        return sum(a * b for a, b in zip(rotate_by_hand(v, delta), v))

    assert score(fast, 0) == pytest.approx(8.0) == score(slow, 0)
    assert score(fast, 2) < 0 < score(slow, 2)  # the fast head has already turned
    assert score(slow, 1000) > 7.9  # the slow head hardly notices 1000
    # the numbers the lesson prints
    assert f"{score(fast, 1):.2f}" == "5.43" and f"{score(fast, 4):.2f}" == "-6.90"
    assert f"{score(slow, 1000):.2f}" == "7.91"


def test_pair_zero_aliases_at_44_and_pair_63_meets_unseen_angles():
    assert (44 % (2 * math.pi)) == pytest.approx(0.0177, abs=1e-4)
    theta_63 = 10000.0 ** (-126 / 128)
    assert 4096 * theta_63 == pytest.approx(0.4730, abs=1e-4)
    assert 32768 * theta_63 == pytest.approx(3.7840, abs=1e-4)


# ---------------------------------------------------------- the widget's readout
def test_readout_lines_are_the_html_readout_and_the_exact_angles():
    dials = clock_dials.ClockDials(head_dim=16, position=100)
    try:
        for position, base in [(100, 10000.0), (4000, 500000.0)]:
            dials.update(position=position, base=base)
            lines = dials.readout_lines()
            # the readout beside the dials: the same angles, two short lines
            html_angles = [
                float(v)
                for row in re.findall(r": ([-\d., ]+) rad", dials.readout.value)
                for v in row.split(", ")
            ]
            assert dials.readout.value.count("<br>") == 1 and len(html_angles) == 8
            pattern = r"pair (\d) angle = ([\d.]+) rad \(([\d.]+) turns\)"
            found = [re.fullmatch(pattern, line) for line in lines]
            assert all(found) and [int(f.group(1)) for f in found] == list(range(8))
            for i, f in enumerate(found):
                angle = position * base ** (-2 * i / 16)
                assert float(f.group(2)) == pytest.approx(angle, rel=1e-6, abs=1e-4)
                assert html_angles[i] == pytest.approx(angle, rel=1e-6, abs=1e-4)
                assert float(f.group(3)) == pytest.approx(
                    angle / (2 * math.pi), rel=1e-6, abs=1e-4
                )
    finally:
        import matplotlib.pyplot as plt

        plt.close(dials.figure)


# ---------------------------------------------------------- the lesson as written
def test_widget_cell_is_tagged_and_has_a_still_picture_next_to_it():
    nb = cells()
    index = next(
        i for i, c in enumerate(nb) if "dials.widget()" in "".join(c["source"])
    )
    assert "nbval-ignore-output" in nb[index]["metadata"].get("tags", [])
    # below it: the still picture, then the readout's numbers (two presses of a slide)
    still, numbers = nb[index + 2], nb[index + 3]
    assert any("image/png" in o.get("data", {}) for o in still["outputs"])
    printed = "".join("".join(o.get("text", "")) for o in numbers["outputs"])
    assert "pair 0 angle = 100.0000 rad (15.9155 turns)" in printed


def test_notation_pairs_and_offsets():
    text = "\n".join(
        "".join(c["source"]) for c in cells() if c["cell_type"] == "markdown"
    )
    assert "2i:2i+1]" not in text.replace(" ", "")
    assert "q[2*i : 2*i + 2]" in text
    assert "r = m - n" not in text and "\\Delta = m - n" in text
    assert "\\omega" not in text


def test_goals_exercises_summary():
    nb = cells()
    first = "".join(nb[0]["source"])
    assert first.startswith("# Lesson 7 · ")
    # the goals: in the title cell, or in the next one (the title's next slide)
    assert "By the end you will be able to" in first + "".join(nb[1]["source"])
    assert "".join(nb[-1]["source"]).startswith("## Summary")
    sources = "\n".join("".join(c["source"]) for c in nb if c["cell_type"] == "code")
    assert "ex.check_slow_pairs(answer)" in sources
    assert "ex.check_bfloat16_angle_error(answer)" in sources


def test_printed_and_code_lines_fit_88_characters():
    nb = cells()
    long_lines = []
    for i, c in enumerate(nb):
        if c["cell_type"] != "code":
            continue
        code = "".join(c["source"]).splitlines()
        long_lines += [(i, "code", line) for line in code if len(line) > 88]
        for output in c["outputs"]:
            if output.get("output_type") == "stream":
                text = "".join(output["text"])
                long_lines += [
                    (i, "printed", line) for line in text.splitlines() if len(line) > 88
                ]
    assert long_lines == []


def test_rope_d_is_the_head_size_not_the_model_width():
    # lesson 7: frequencies over the width (576) give the last of 9 heads slow pairs only
    over_width = rope_lib.inv_frequencies(576).double().view(9, 32)
    assert over_width[8, 0] * 8192 < 2 * math.pi
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(1, 10, 576, dtype=torch.float64, generator=gen)
    pos = torch.arange(10)
    per_head = rope_lib.apply_rope(x.view(1, 10, 9, 64).transpose(1, 2), pos)
    whole = rope_lib.apply_rope(x, pos).view(1, 10, 9, 64).transpose(1, 2)
    # head h of the width's rotation gets the band of pairs 32h .. 32h + 31
    assert torch.equal(over_width[1], rope_lib.inv_frequencies(576).double()[32:64])
    assert (per_head - whole).abs().max() > 1


def test_the_decay_bound_falls_on_average_but_not_at_every_step():
    bound = analysis.long_term_decay_bound(torch.arange(0, 1025), head_dim=128)
    rises = int((bound[1:] > bound[:-1]).sum())
    assert 100 < rises < 1024
    assert bound[100] < bound[0] / 3 + 0.5 and bound[1000] < bound[250] < bound[100]


# ====================================================================== the library
# rope_lib.analysis's decay bound, pair turns, angle errors and costs, the clock-dial
# widget, and lesson 7's two checkers (moved here from the split lesson's tests: old
# lesson 4's test file had held them)
from rope_lib.exercises import complex_rope as ex  # noqa: E402
from rope_lib.figures import clock_dials as dial_figures  # noqa: E402
from rope_lib.widgets import clock_dials as lw  # noqa: E402


# ------------------------------------------------------------------ long_term_decay_bound
def reference_bound(r, d, base=10000.0):
    """RoFormer's (1/(d/2)) sum_j |S_j|, S_j = sum_{k<j} e^{i r theta_k}, with plain Python loops."""
    thetas = [base ** (-2 * k / d) for k in range(d // 2)]
    total, partial = 0.0, 0j
    for theta in thetas:
        partial += complex(math.cos(r * theta), math.sin(r * theta))
        total += abs(partial)
    return total / (d // 2)


@pytest.mark.parametrize("d,base", [(128, 10000.0), (16, 10000.0), (64, 500000.0)])
def test_long_term_decay_bound_matches_a_loop(d, base):
    distances = [0, 1, 3, 10, 77, 256, 1000]
    got = analysis.long_term_decay_bound(torch.tensor(distances), d, base)
    want = torch.tensor(
        [reference_bound(r, d, base) for r in distances], dtype=torch.float64
    )
    torch.testing.assert_close(got, want)


def test_long_term_decay_bound_at_zero_and_its_decay():
    # at r = 0 every S_j = j: mean of 1..64 = 32.5
    assert analysis.long_term_decay_bound(
        torch.tensor([0]), 128
    ).item() == pytest.approx(32.5)
    bound = analysis.long_term_decay_bound(torch.arange(0, 257), 128)
    assert bound[0] > bound[10] > bound[100] > bound[256]
    assert bound[250] < 0.25 * bound[0]


def test_decay_bound_really_bounds_the_rope_score():
    torch.manual_seed(0)
    d = 32
    q, k = (
        torch.randn(8, d, dtype=torch.float64),
        torch.randn(8, d, dtype=torch.float64),
    )
    r = torch.arange(0, 300)
    bound = analysis.long_term_decay_bound(r, d)
    constant = analysis.decay_bound_constant(q, k)
    for i in range(8):
        # score computed independently: rotate q by R_r via the block-diagonal matrix
        scores = torch.stack(
            [rope_lib.rotation_matrix(int(m), d) @ q[i] @ k[i] for m in r]
        ).abs()
        assert torch.all(scores <= constant[i] * (d / 2) * bound + 1e-9)


def test_decay_bound_constant_by_hand():
    # d = 4: q pairs 1+0i, 0+1i; k pairs 1+0i, 1+0i -> h = [1, i]; h_2 = 0
    q = torch.tensor([1.0, 0.0, 0.0, 1.0])
    k = torch.tensor([1.0, 0.0, 1.0, 0.0])
    # |h1 - h0| = |i - 1| = sqrt(2), |h2 - h1| = |0 - i| = 1
    assert analysis.decay_bound_constant(q, k).item() == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="same shape"):
        analysis.decay_bound_constant(q, k[:2])


# ------------------------------------------------------------------ pair_turns
def test_pair_turns_known_numbers():
    turns = analysis.pair_turns(4096, 128, 10000.0)
    assert turns.shape == (64,)
    assert turns[0].item() == pytest.approx(4096 / (2 * math.pi))  # theta_0 = 1
    assert turns[63].item() == pytest.approx(
        4096 * 10000.0 ** (-126 / 128) / (2 * math.pi)
    )
    assert (
        int((turns < 1).sum()) == 18
    )  # 4096 theta_i < 2 pi  <=>  i > 64 ln(4096/2pi)/ln(1e4) = 45.01
    with pytest.raises(ValueError, match="head_dim"):
        analysis.pair_turns(100, 7)


# ------------------------------------------------------------------ angle_error
def test_angle_error_bfloat16_positions_and_products():
    err = analysis.angle_error(torch.tensor([3001, 4100, 100]), 8, dtype=torch.bfloat16)
    assert err.shape == (3, 4)
    # bfloat16 rounds 3001 to 3008 (steps of 16 in [2048, 4096)) and 4100 to 4096 (steps of 32)
    assert err[0, 0].item() == pytest.approx(7.0)
    assert err[1, 0].item() == pytest.approx(4.0)
    # position 100 is exact, theta_0 = 1 exact: no error on pair 0
    assert err[2, 0].item() == 0.0
    # pair 1: theta_1 = 0.1 in bfloat16 is 0.10009765625; 100 * that = 10.009765625 -> bfloat16 10.0
    assert err[2, 1].item() == pytest.approx(
        abs(10.0 - 100 * 10000.0 ** (-2 / 8)), abs=1e-6
    )


def test_angle_error_float32_is_small():
    err = analysis.angle_error(torch.arange(0, 4096, 97), 128, dtype=torch.float32)
    assert err.max().item() < 1e-3


# ------------------------------------------------------------------ rope_cost_per_token
def test_rope_cost_per_token_formulas():
    c = analysis.rope_cost_per_token(head_dim=128, n_heads=1, context=4096)
    assert c["rope_flops"] == 6 * 128  # 6d per head for q and k
    assert c["attention_flops"] == 4 * 4096 * 128
    assert c["flops_ratio"] == pytest.approx(1.5 / 4096)
    g = analysis.rope_cost_per_token(
        head_dim=128, n_heads=32, n_kv_heads=8, context=1000, bytes_per_value=2
    )
    assert g["rope_flops"] == 3 * 128 * 40
    assert g["attention_flops"] == 4 * 1000 * 128 * 32
    assert g["attention_bytes"] == 2 * 1000 * 128 * 8 * 2
    assert g["rope_bytes"] == (2 * 128 * 40 + 128) * 2


# ------------------------------------------------------------------ widget
def test_widget_update_moves_every_hand_to_the_independent_angle():
    w = lw.ClockDials(head_dim=16)
    for position, base in [(100, 10000.0), (3001, 500000.0), (7, 10000.0)]:
        w.update(position=position, base=base)
        for i, hand in enumerate(w.hands):
            cx, cy = w.centres[i]
            angle = position * base ** (-2 * i / 16)
            xs, ys = hand.get_data()
            assert xs[0] == pytest.approx(cx) and ys[0] == pytest.approx(cy)
            assert xs[1] - cx == pytest.approx(0.95 * math.cos(angle), abs=2e-3)
            assert ys[1] - cy == pytest.approx(0.95 * math.sin(angle), abs=2e-3)
        assert f"position m = {position}" in w.title.get_text()
        assert (
            w.controls["position"].value == position
            and w.controls["base"].value == base
        )
    import matplotlib.pyplot as plt

    plt.close(w.figure)


def test_widget_readout_is_parseable_and_correct():
    import re

    w = lw.ClockDials(head_dim=16, position=100)
    assert "rope-readout" in w.readout._dom_classes

    def angles(html):  # "m θ_i: pairs 0-3: a, b, c, d rad<br>pairs 4-7: e, f, g, h rad"
        rows = re.findall(r"pairs (\d+)-(\d+): ([-\d., ]+) rad", html)
        return [float(v) for _, _, values in rows for v in values.split(", ")]

    found = angles(w.readout.value)
    assert len(found) == 8 and w.readout.value.count("<br>") == 1
    assert found[0] == pytest.approx(100.0, abs=1e-4)
    assert found[1] == pytest.approx(100 * 10000 ** (-2 / 16), abs=1e-3)
    # the controls drive update: moving the slider changes the hands
    before = w.hands[1].get_data()[0][1]
    w.controls["position"].value = 101
    assert w.hands[1].get_data()[0][1] != before
    assert angles(w.readout.value)[0] == pytest.approx(101.0, abs=1e-4)
    w.controls["base"].value = 500000.0
    assert angles(w.readout.value)[7] == pytest.approx(
        101 * 500000 ** (-14 / 16), abs=1e-4
    )
    for control in w.controls.values():
        assert control.description


def test_widget_sweep_and_thumbnail():
    w = lw.ClockDials.example()
    steps = list(w.sweep())
    assert len(steps) == 10
    for step in steps:
        w.update(**step)
    assert {s.get("base") for s in steps if "base" in s} == set(lw.BASES)
    assert max(s["position"] for s in steps) == w.controls["position"].max
    figure = dial_figures.thumbnail()
    width, height = figure.get_size_inches()
    assert (width, height) == (4, 2.5)


def test_check_slow_pairs_solution_and_mistakes():
    turns = analysis.pair_turns(8192, 128, base=500000.0)
    assert ex.check_slow_pairs(int((turns < 1).sum())).ok
    # by hand: i > 64 ln(8192 / 2 pi) / ln(500000) = 34.98 -> pairs 35..63
    assert ex.check_slow_pairs(29).ok
    assert "DO complete" in ex.check_slow_pairs(35).message
    assert (
        "10,000" in ex.check_slow_pairs(14).message
    )  # i > 64 ln(8192/2pi)/ln(1e4) = 49.8 -> 14 pairs
    assert (
        "2π" in ex.check_slow_pairs(20).message
    )  # 8192 theta_i < 1 -> i > 43.9 -> 20 pairs
    assert "off by one" in ex.check_slow_pairs(30).message
    assert "whole number" in ex.check_slow_pairs(2.5).message
    assert "only 64" in ex.check_slow_pairs(65).message


def test_check_bfloat16_angle_error_solution_and_mistakes():
    stored = torch.tensor(5001.0).to(torch.bfloat16).item()
    answer = abs(stored - 5001) * 1.0
    feedback = ex.check_bfloat16_angle_error(answer)
    assert (
        feedback.ok
        and "4976 to 5008" in feedback.message
        and "steps of 32" in feedback.message
    )
    # by hand: 8 significant bits, so steps of 32 in [4096, 8192); 5001 -> 156 * 32 = 4992, 9 rad off
    assert ex.check_bfloat16_angle_error(9).ok
    assert "positive" in ex.check_bfloat16_angle_error(-9.0).message
    assert "turns" in ex.check_bfloat16_angle_error(9 / (2 * math.pi)).message
    assert "dial" in ex.check_bfloat16_angle_error(9 - 2 * math.pi).message
    assert "stores" in ex.check_bfloat16_angle_error(4992).message
    assert (
        "float16" in ex.check_bfloat16_angle_error(1.0).message
    )  # float16: steps of 4 there, 5001 -> 5000
    assert "256" in ex.check_bfloat16_angle_error(0).message
    assert not ex.check_bfloat16_angle_error("nine").ok


def test_lesson7_checkers_say_when_there_is_no_answer_yet():
    for check in (ex.check_slow_pairs, ex.check_bfloat16_angle_error):
        feedback = check(None)
        assert not feedback.ok and "no answer yet" in feedback.message


def test_lesson7_checkers_read_answers_by_value():
    import numpy as np

    for count in (np.int64(29), torch.tensor(29), np.array(29), 29.0):
        assert ex.check_slow_pairs(count).ok, count
    for wrong in (29.5, float("nan"), float("inf"), complex(29, 0), np.True_):
        assert not ex.check_slow_pairs(wrong).ok, wrong
    assert (
        not ex.check_bfloat16_angle_error(complex(9, 0)).ok
        and ex.check_bfloat16_angle_error(np.float32(9)).ok
    )
