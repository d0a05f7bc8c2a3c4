"""Lesson 3 (the 2D rotation derivation of RoPE): the claims its story shows as short
printed checks, asserted here, and checks that left the story (widget arrows, RoPER).

Expected values are written out by hand (math.cos/math.sin, Python complex numbers, a
2x2 turn written here), never taken from the function under test. The worked pair is the
one the study notes print (note 002: q = (0.5, -1.0), k = (1.2, 0.3), theta 0.1, m = 2).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib import derivation  # noqa: E402
from rope_lib.widgets.rotation import RotatePairWidget  # noqa: E402

F64 = torch.float64
NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "03_rotation_2d.ipynb"


def turn(angle: float, v) -> tuple[float, float]:
    """R(angle) v written out: counter-clockwise, radians."""
    x, y = float(v[0]), float(v[1])
    c, s = math.cos(angle), math.sin(angle)
    return (x * c - y * s, x * s + y * c)


def rope_score(q, k, m, n, theta) -> float:
    """q rotated to position m, k to position n, one pair, by hand."""
    qm, kn = turn(m * theta, q), turn(n * theta, k)
    return qm[0] * kn[0] + qm[1] * kn[1]


def test_worked_pair_both_ways():
    q, k = torch.tensor([0.5, -1.0], dtype=F64), torch.tensor([1.2, 0.3], dtype=F64)
    turn_02 = rope_lib.rotation_2d(0.2)
    by_matrix = torch.stack([turn_02 @ q, turn_02 @ k])
    by_apply = rope_lib.apply_rope(
        torch.stack([q, k]),
        torch.tensor([2, 2]),
        inv_freq=torch.tensor([0.1], dtype=F64),
    )
    printed = torch.tensor([[0.6887, -0.8807], [1.1165, 0.5324]], dtype=F64)
    assert torch.allclose(by_matrix, printed, atol=5e-5)
    assert torch.allclose(by_apply, printed, atol=5e-5)
    # the same position for both: the score is the unrotated q.k = 0.6 - 0.3
    assert float(by_apply[0] @ by_apply[1]) == pytest.approx(0.3, abs=1e-12)


def test_score_is_a_function_of_the_offset_and_its_sign():
    q, k = (0.3, -1.1), (0.8, 0.4)
    theta = 0.5
    pairs = [(3, 0), (5, 2), (100, 97), (4000, 3997)]
    same_offset = [rope_score(q, k, m, n, theta) for m, n in pairs]
    assert max(same_offset) - min(same_offset) < 1e-9
    # offset -3 flips the sine term: q1 k2 - q2 k1 = 0.12 + 0.88 = 1.0 is not 0
    flipped = rope_score(q, k, 0, 3, theta)
    assert abs(flipped - same_offset[0]) == pytest.approx(2 * math.sin(1.5), abs=1e-9)
    # closed form and polar form, by hand
    dot, cross = q[0] * k[0] + q[1] * k[1], q[0] * k[1] - q[1] * k[0]
    closed = dot * math.cos(1.5) + cross * math.sin(1.5)
    assert same_offset[0] == pytest.approx(closed, abs=1e-12)
    phi_q, phi_k = math.atan2(q[1], q[0]), math.atan2(k[1], k[0])
    polar = math.hypot(*q) * math.hypot(*k) * math.cos(phi_q - phi_k + 1.5)
    assert same_offset[0] == pytest.approx(polar, abs=1e-12)
    # the library's closed form agrees, and the whole table is constant along diagonals
    pq, pk = torch.tensor(q, dtype=F64), torch.tensor(k, dtype=F64)
    library = float(derivation.closed_form_score(pq, pk, 3, 0, theta))
    assert library == pytest.approx(closed, abs=1e-12)
    one = torch.tensor([theta], dtype=F64)
    rows = rope_lib.apply_rope(pq.expand(6, 2), torch.arange(6), inv_freq=one)
    cols = rope_lib.apply_rope(pk.expand(6, 2), torch.arange(6), inv_freq=one)
    table = rows @ cols.T
    assert torch.allclose(table[1:, 1:], table[:-1, :-1], atol=1e-12)


def test_cos_only_version_loses_the_sine_term_and_the_conjugate_keeps_it():
    q, k, m, n, theta = (0.3, -1.1), (0.8, 0.4), 7, 3, 0.5
    exact = rope_score(q, k, m, n, theta)
    turn_by_offset = complex(math.cos(2.0), math.sin(2.0))  # e^(i (m - n) theta)
    with_conjugate = (complex(*q) * complex(*k).conjugate() * turn_by_offset).real
    cos_only = (q[0] * k[0] + q[1] * k[1]) * math.cos(2.0)
    cross = q[0] * k[1] - q[1] * k[0]
    assert with_conjugate == pytest.approx(exact, abs=1e-12)
    assert exact - cos_only == pytest.approx(cross * math.sin(2.0), abs=1e-12)
    assert abs(exact - cos_only) > 0.5


def test_head_score_is_the_sum_of_its_pairs_scores():
    torch.manual_seed(0)
    q8, k8 = torch.randn(2, 8, dtype=F64)
    m, n = 9, 4
    rotated = rope_lib.apply_rope(torch.stack([q8, k8]), torch.tensor([m, n]))
    pairs = sum(
        rope_score(
            q8[2 * i : 2 * i + 2], k8[2 * i : 2 * i + 2], m, n, 10000.0 ** (-2 * i / 8)
        )
        for i in range(4)
    )
    assert float(rotated[0] @ rotated[1]) == pytest.approx(pairs, abs=1e-10)


def test_widget_keeps_the_score_under_a_shift_and_draws_the_rotation():
    probe = RotatePairWidget(m=7, n=4, theta=0.4, shift=0)
    before = probe.state["score"]
    probe.update(shift=25)
    assert probe.state["score"] == pytest.approx(before, abs=1e-10)
    tip = (probe.plane.rotated.U[0], probe.plane.rotated.V[0])
    expected = turn((7 + 25) * 0.4, probe.state["q"])
    assert tip == pytest.approx(expected, abs=1e-9)
    # the shift has no letter in the readout: s is the course's scale factor
    assert "query at m + shift = 32, key at n + shift = 29" in probe.readout.value
    assert probe.controls["shift"].description == "shift"
    matplotlib.pyplot.close(probe.figure)


def turn_rows(x, positions, sign=1.0):
    """Row j of x turned by sign * positions[j] radians (one pair, theta = 1)."""
    return torch.stack(
        [
            torch.tensor(turn(sign * float(p), row), dtype=F64)
            for row, p in zip(x, positions)
        ]
    )


def attention_by_hand(q, k, v, positions, rotate_v=False, rotate_back=False):
    """One causal head of size 2 (one pair, theta = 1), every rotation written out."""
    scores = turn_rows(q, positions) @ turn_rows(k, positions).T / math.sqrt(2)
    future = torch.ones(len(q), len(q), dtype=torch.bool).triu(1)
    weights = scores.masked_fill(future, -math.inf).softmax(-1)
    out = weights @ (turn_rows(v, positions) if rotate_v else v)
    return (turn_rows(out, positions, -1.0) if rotate_back else out), weights


def test_roper_rotating_values_and_the_output_back_keeps_attention_relative():
    g = torch.Generator().manual_seed(5)
    q, k, v = torch.randn(3, 6, 2, dtype=F64, generator=g)
    pos = torch.arange(6)
    plain, _ = attention_by_hand(q, k, v, pos)
    assert torch.allclose(plain, attention_by_hand(q, k, v, pos + 100)[0], atol=1e-10)
    v_only = (
        (
            attention_by_hand(q, k, v, pos + 100, rotate_v=True)[0]
            - attention_by_hand(q, k, v, pos, rotate_v=True)[0]
        )
        .abs()
        .max()
    )
    assert v_only > 0.1  # rotating v alone stamps absolute positions
    roper, weights = attention_by_hand(q, k, v, pos, rotate_v=True, rotate_back=True)
    shifted = attention_by_hand(q, k, v, pos + 100, rotate_v=True, rotate_back=True)[0]
    assert torch.allclose(roper, shifted, atol=1e-10)
    # RoPER's output is sum_n a_mn R_(n-m) v_n: each value turned by its offset
    for m in range(6):
        expected = sum(
            weights[m, n] * torch.tensor(turn(n - m, v[n]), dtype=F64) for n in range(6)
        )
        assert torch.allclose(roper[m], expected, atol=1e-12)
    # the lesson's apply_rope version: positions -p turn the output back
    one = torch.tensor([1.0], dtype=F64)
    back = rope_lib.apply_rope(v, -pos, inv_freq=one)
    assert torch.allclose(back[3], torch.tensor(turn(-3, v[3]), dtype=F64))


def test_fast_pair_wraps_and_slow_pair_barely_moves():
    q, k = (0.5, -1.0), (1.2, 0.3)
    scale = math.hypot(*q) * math.hypot(*k)
    fast = [rope_score(q, k, d, 0, 1.0) for d in range(51)]
    slow = [rope_score(q, k, d, 0, 0.001) for d in range(51)]
    assert max(fast) - min(fast) > 1.9 * scale
    assert max(slow) - min(slow) < 0.06 * scale
    assert abs(fast[44] - fast[0]) < 0.03  # 44 rad is 7 turns and 0.018 rad


def test_slowest_pair_of_a_real_head_turns_less_than_half_a_radian_in_4096_tokens():
    slowest = 10000.0 ** (-126 / 128)
    assert float(rope_lib.inv_frequencies(128)[-1]) == pytest.approx(slowest, rel=1e-6)
    assert 4096 * slowest == pytest.approx(0.473, abs=5e-4)
    assert math.cos(4096 * slowest) > 0.89


def test_the_story_carries_no_test_machinery():
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for machinery in ("inspect.", '.split(\'"""\')', '.replace("<b>"', "assert "):
        assert machinery not in code, machinery
