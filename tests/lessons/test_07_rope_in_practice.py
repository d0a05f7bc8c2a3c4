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
