"""Lesson 5 (RoPE in complex numbers): its formulas and claims checked without rope_lib where
possible (a pair as a complex number, the conjugate in the score, a head as d/2 complex
numbers, Meta's worked example, the cached-generation slice), its four checkers, and the
shape of the notebook (goals, exercises, summary, line widths).

Claims corrected here come from the study notes the course was planned from: the score
written Re[x_m^T (W_q^T W_k) x_n e^{i(m-n)θ}] (no conjugate), the pair written q_[2i:2i+1],
and a copied apply_rotary_emb that always slices freqs_cis[:seq_len].
"""

import cmath
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import rope_lib
from rope_lib.exercises import complex_rope as ex

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "05_rope_complex.ipynb"


def cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def markdown():
    return "\n".join(
        "".join(c["source"]) for c in cells() if c["cell_type"] == "markdown"
    )


def code():
    return "\n".join("".join(c["source"]) for c in cells() if c["cell_type"] == "code")


def stream_lines(nb_cells):
    for i, cell in enumerate(nb_cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                for line in "".join(output["text"]).splitlines():
                    yield i, line


def outputs():
    return "\n".join(line for _, line in stream_lines(cells()))


# ---------------------------------------------------------- one pair, one complex number
def test_multiplying_by_a_unit_number_is_the_rotation():
    for x, y, angle in [(1.0, 0.5, 1.2), (3.0, 4.0, 0.5), (-2.0, 0.1, 10.0)]:
        z = complex(x, y) * cmath.exp(1j * angle)
        by_matrix = (
            x * math.cos(angle) - y * math.sin(angle),
            x * math.sin(angle) + y * math.cos(angle),
        )
        assert z.real == pytest.approx(by_matrix[0]) and z.imag == pytest.approx(
            by_matrix[1]
        )
        assert abs(z) == pytest.approx(math.hypot(x, y))


def test_score_needs_the_conjugate_and_sees_only_the_offset():
    q, k, theta = 0.5 - 1.0j, 1.2 + 0.3j, 0.1

    def score(m, n):  # the dot product of the two rotated pairs, as real vectors
        a, b = q * cmath.exp(1j * m * theta), k * cmath.exp(1j * n * theta)
        return a.real * b.real + a.imag * b.imag

    g = (q * k.conjugate() * cmath.exp(2j * theta)).real
    for m, n in [(2, 0), (10, 8), (502, 500)]:
        assert score(m, n) == pytest.approx(g, abs=1e-12)
    assert f"{g:.4f}" == "0.5622" and "0.5622" in outputs()
    no_conj = (q * k * cmath.exp(2j * theta)).real
    assert abs(no_conj - g) > 0.1 and f"{no_conj:.4f}" in outputs()
    # without the conjugate the angles add: a different number at each place
    added = [
        (q * k * cmath.exp(1j * (m + n) * theta)).real for m, n in [(2, 0), (10, 8)]
    ]
    assert abs(added[0] - added[1]) > 0.1


def test_the_lesson_states_the_missing_conjugate_after_the_right_formula():
    nb = cells()
    text = ["".join(c["source"]) for c in nb]
    right = next(
        i for i, t in enumerate(text) if "The score depends on $m - n$ only" in t
    )
    slip = next(
        i
        for i, t in enumerate(text)
        if "The conjugate is the step that is easy to drop" in t
    )
    assert right < slip
    assert nb[slip + 1]["cell_type"] == "code" and nb[slip + 1]["outputs"]


# ---------------------------------------------------------- a head of d/2 complex numbers
def test_pair_is_written_as_two_coordinates():
    text = markdown()
    assert "2i:2i+1]" not in text.replace(" ", "")
    assert "q[2*i : 2*i + 2]" in text
    q = list(range(10))
    assert len(q[2 * 3 : 2 * 3 + 1]) == 1 and len(q[2 * 3 : 2 * 3 + 2]) == 2


def test_head_score_is_the_real_part_of_the_sum_over_pairs():
    torch.manual_seed(3)
    d = 12
    q, k = torch.randn(2, d, dtype=torch.float64).tolist()
    thetas = [10000.0 ** (-2 * i / d) for i in range(d // 2)]

    def rotate(x, m):
        out = []
        for i, t in enumerate(thetas):
            z = complex(x[2 * i], x[2 * i + 1]) * cmath.exp(1j * m * t)
            out += [z.real, z.imag]
        return out

    for m, n in [(7, 3), (1004, 1000)]:
        dot = sum(a * b for a, b in zip(rotate(q, m), rotate(k, n)))
        by_sum = sum(
            complex(q[2 * i], q[2 * i + 1])
            * complex(k[2 * i], k[2 * i + 1]).conjugate()
            * cmath.exp(1j * (m - n) * t)
            for i, t in enumerate(thetas)
        ).real
        assert dot == pytest.approx(by_sum, abs=1e-9)


def test_roformer_counts_the_pairs_from_one():
    d = 16
    from_zero = [10000.0 ** (-2 * i / d) for i in range(d // 2)]
    from_one = [10000.0 ** (-2 * (t - 1) / d) for t in range(1, d // 2 + 1)]
    assert from_zero == from_one and len(from_zero) == d // 2


# ---------------------------------------------------------- Meta's worked example
def test_worked_example_number_by_hand_and_in_the_notebook():
    z = complex(28, 29) * complex(math.cos(0.01), math.sin(0.01))
    assert f"{z.real:.4f}{z.imag:+.4f}j" == "27.7086+29.2785j"
    assert "27.7086+29.2785j" in outputs()
    assert "tensor([27.7086, 29.2785])" in outputs()


def test_cached_generation_needs_row_start_pos():
    torch.manual_seed(4)
    d, start = 8, 7
    q, k = torch.randn(start + 1, d), torch.randn(start + 1, d)
    positions = torch.arange(start + 1)
    full = rope_lib.apply_rope(q, positions) @ rope_lib.apply_rope(k, positions).T
    table = rope_lib.precompute_freqs_cis(d, 32)
    k_rot = rope_lib.apply_rotary_emb(k[None, :, None], k[None, :, None], table[:8])[1]
    new = q[None, -1:, None]
    right = rope_lib.apply_rotary_emb(new, new, table[start : start + 1])[0]
    wrong = rope_lib.apply_rotary_emb(new, new, table[:1])[0]
    torch.testing.assert_close(right[0, 0, 0] @ k_rot[0, :, 0].T, full[-1])
    assert (wrong[0, 0, 0] @ k_rot[0, :, 0].T - full[-1]).abs().max() > 0.1
    # the rows from 0 give the scores of a query at position 0
    torch.testing.assert_close(
        wrong[0, 0, 0] @ k_rot[0, :, 0].T,
        rope_lib.apply_rope(q[-1:], torch.tensor([0]))[0]
        @ rope_lib.apply_rope(k, positions).T,
        rtol=1e-4,
        atol=1e-4,
    )


# ---------------------------------------------------------- checkers
def test_score_changes_checker():
    right = {
        "shift": "same",
        "swap": "changes",
        "phase": "same",
        "conjugate": "changes",
    }
    assert ex.check_score_changes(right).ok
    # by hand: a common phase cancels, a swap turns the other way
    q, k, phi, theta, m, n = 2 + 1j, 1 - 3j, 0.7, 0.2, 7, 3

    def score(q, k, m, n, sign=1):
        return (
            q
            * cmath.exp(1j * m * theta)
            * (k * cmath.exp(sign * 1j * n * theta)).conjugate()
        ).real

    base = score(q, k, m, n)
    assert score(q, k, m + 100, n + 100) == pytest.approx(base)
    assert score(
        q * cmath.exp(1j * phi), k * cmath.exp(1j * phi), m, n
    ) == pytest.approx(base)
    assert abs(score(q, k, n, m) - base) > 0.1
    assert abs(score(q, k, m, n, sign=-1) - base) > 0.1
    for key, words in [
        ("shift", "keeps m - n"),
        ("phase", "cancels"),
        ("swap", "not symmetric"),
        ("conjugate", "m + n"),
    ]:
        wrong = dict(right)
        wrong[key] = "same" if right[key] == "changes" else "changes"
        feedback = ex.check_score_changes(wrong)
        assert not feedback.ok and words in feedback.message, (key, feedback)
    assert "all four" in ex.check_score_changes({"shift": "same"}).message
    assert not ex.check_score_changes({**right, "swap": "maybe"}).ok


def test_complex_rotation_checker():
    z = torch.tensor(3.0 + 4.0j)
    answer = z * torch.polar(torch.tensor(1.0), torch.tensor(5 * 0.1))
    assert ex.check_complex_rotation(answer).ok
    expected = [
        3 * math.cos(0.5) - 4 * math.sin(0.5),
        3 * math.sin(0.5) + 4 * math.cos(0.5),
    ]
    assert ex.check_complex_rotation(expected).ok
    assert ex.check_complex_rotation(complex(*expected)).ok
    mistakes = {
        "clockwise": [
            3 * math.cos(0.5) + 4 * math.sin(0.5),
            -3 * math.sin(0.5) + 4 * math.cos(0.5),
        ],
        "θ = 0.1 only": [
            3 * math.cos(0.1) - 4 * math.sin(0.1),
            3 * math.sin(0.1) + 4 * math.cos(0.1),
        ],
        "degrees": [
            3 * math.cos(math.radians(0.5)) - 4 * math.sin(math.radians(0.5)),
            3 * math.sin(math.radians(0.5)) + 4 * math.cos(math.radians(0.5)),
        ],
        "swapped": expected[::-1],
        "before the rotation": [3.0, 4.0],
        "length": [1.0, 1.0],
        "shape": [1.0, 2.0, 3.0],
    }
    for words, wrong in mistakes.items():
        feedback = ex.check_complex_rotation(wrong)
        assert not feedback.ok and words in feedback.message, (words, feedback)


def test_complex_score_checker():
    q_m = (2 + 1j) * cmath.exp(1j * 7 * 0.2)
    k_n = (1 - 3j) * cmath.exp(1j * 3 * 0.2)
    right = (q_m * k_n.conjugate()).real
    assert f"{right:.4f}" == "-5.7182" and ex.check_complex_score(right).ok
    assert "angles add" in ex.check_complex_score((q_m * k_n).real).message
    assert "imaginary" in ex.check_complex_score((q_m * k_n.conjugate()).imag).message
    assert "real part" in ex.check_complex_score(q_m * k_n.conjugate()).message
    # Re[q k e^{i(m-n)θ}]: the conjugate dropped at the right offset (7.0703)
    dropped = ((2 + 1j) * (1 - 3j) * cmath.exp(1j * 0.8)).real
    assert f"{dropped:.4f}" == "7.0703"
    assert "dropped the conjugate" in ex.check_complex_score(dropped).message
    # Re[q k* e^{i(m+n)θ}]: the positions added (-5.9489)
    added = ((2 + 1j) * (1 + 3j) * cmath.exp(1j * 2.0)).real
    assert f"{added:.4f}" == "-5.9489"
    assert "(m + n)θ = 2.0 rad" in ex.check_complex_score(added).message


def test_best_offset_checker():
    q, k = 0.5 - 1.0j, 1.2 + 0.3j
    scores = [(q * k.conjugate() * cmath.exp(0.1j * d)).real for d in range(63)]
    best = max(range(63), key=scores.__getitem__)
    # by hand: arg(q k*) = atan2(-1.35, 0.3) = -1.352, so 13.52 tokens: 14
    assert best == 14 and math.atan2(-1.35, 0.3) == pytest.approx(-1.3521, abs=1e-4)
    assert ex.check_best_offset(14).ok and ex.check_best_offset(np.int64(14)).ok
    assert "nearer 14" in ex.check_best_offset(13).message
    assert "wrong way" in ex.check_best_offset(49).message
    assert "plain q·k" in ex.check_best_offset(0).message
    assert "0 to 62" in ex.check_best_offset(70).message
    assert "largest where" in ex.check_best_offset(30).message
    assert not ex.check_best_offset(14.5).ok


def test_checkers_say_when_there_is_no_answer_yet():
    for check in (ex.check_complex_rotation, ex.check_best_offset):
        feedback = check(None)
        assert not feedback.ok and "no answer yet" in feedback.message
    for check in (ex.check_score_changes, ex.check_complex_score):
        assert "replace `None`" in check(None).message


def test_complex_rotation_reads_answers_by_value():
    z = (3 + 4j) * complex(math.cos(0.5), math.sin(0.5))
    for form in (z, np.complex128(z), torch.tensor([z]), np.array([z.real, z.imag])):
        assert ex.check_complex_rotation(form).ok, form
    assert not ex.check_complex_rotation(
        torch.tensor([z.real, z.imag], dtype=torch.complex64)
    ).ok


# ---------------------------------------------------------- the lesson as written
def test_goals_exercises_summary():
    nb = cells()
    first = "".join(nb[0]["source"])
    assert first.startswith("# Lesson 5 · RoPE in complex numbers")
    assert "By the end you will be able to" in first and "Lesson 4" in first
    assert "".join(nb[-1]["source"]).startswith("## Summary")
    assert "Next, lesson 6 · Three implementations, one rotation" in "".join(
        nb[-1]["source"]
    )
    sources = code()
    for name in (
        "check_score_changes",
        "check_complex_rotation",
        "check_complex_score",
        "check_best_offset",
    ):
        assert f"ex.{name}(answer)" in sources
    # lesson 6's and lesson 7's exercises are not here
    for other in (
        "check_meta_layout_weights",
        "check_slow_pairs",
        "check_three_modules",
    ):
        assert other not in sources
    numbers = [
        int(h.split("Exercise ")[1].split(" ")[0])
        for c in nb
        for h in "".join(c["source"]).splitlines()
        if h.startswith("### Exercise ")
    ]
    assert numbers == [1, 2, 3, 4]
    sections = [
        int(line[3])
        for c in nb
        if c["cell_type"] == "markdown"
        for line in "".join(c["source"]).splitlines()
        if line.startswith("## ") and line[3].isdigit()
    ]
    assert sections == [1, 2, 3, 4]


def test_printed_and_code_lines_fit_88_characters():
    nb = cells()
    long_output = [(i, line) for i, line in stream_lines(nb) if len(line) > 88]
    assert long_output == []
    long_code = [
        (i, line)
        for i, c in enumerate(nb)
        if c["cell_type"] == "code"
        for line in "".join(c["source"]).splitlines()
        if len(line) > 88
    ]
    assert long_code == []
