"""Lesson 4 (from one pair to a whole head): the claims its story shows as short printed
checks, asserted here (a head's pairs, the batch walk, where RoPE sits, RoPER, fast and slow
pairs), and its exercises.

Expected values are written out by hand (math.cos/math.sin, Python complex numbers, a 2x2
turn written here), never taken from the function under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib import derivation  # noqa: E402
from rope_lib.exercises import rotation as ex  # noqa: E402
from rope_lib.figures import rope_head  # noqa: E402
from rope_lib.figures import rotation as figures  # noqa: E402

F64 = torch.float64
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "04_rope_head.ipynb"


def turn(angle: float, v) -> tuple[float, float]:
    """R(angle) v written out: counter-clockwise, radians."""
    x, y = float(v[0]), float(v[1])
    c, s = math.cos(angle), math.sin(angle)
    return (x * c - y * s, x * s + y * c)


def rope_score(q, k, m, n, theta) -> float:
    """q rotated to position m, k to position n, one pair, by hand."""
    qm, kn = turn(m * theta, q), turn(n * theta, k)
    return qm[0] * kn[0] + qm[1] * kn[1]


def rotate_by_hand(v, angle):
    """Counter-clockwise rotation of a 2-vector, written out."""
    x, y = v
    return (
        x * math.cos(angle) - y * math.sin(angle),
        x * math.sin(angle) + y * math.cos(angle),
    )


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


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


def test_closed_form_score_whole_head_and_broadcasting():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 8, generator=g, dtype=F64)
    thetas = [1.0, 0.1, 0.01, 0.001]
    m, n = 9, 4
    expected = sum(
        dot(
            rotate_by_hand(q[2 * i : 2 * i + 2].tolist(), m * t),
            rotate_by_hand(k[2 * i : 2 * i + 2].tolist(), n * t),
        )
        for i, t in enumerate(thetas)
    )
    got = derivation.closed_form_score(q, k, m, n, thetas)
    assert float(got) == pytest.approx(expected, abs=1e-10)
    # m as a tensor of offsets: one score per offset
    offsets = torch.arange(5)
    many = derivation.closed_form_score(q, k, offsets, 0, thetas)
    assert many.shape == (5,)
    for o in range(5):
        one = sum(
            dot(
                rotate_by_hand(q[2 * i : 2 * i + 2].tolist(), o * t),
                k[2 * i : 2 * i + 2].tolist(),
            )
            for i, t in enumerate(thetas)
        )
        assert float(many[o]) == pytest.approx(one, abs=1e-10)


def test_rope_by_steps_matches_complex_rotation():
    g = torch.Generator().manual_seed(3)
    batch, length, heads, d_head = 2, 5, 3, 8
    Q = torch.randn(batch, length, heads * d_head, generator=g, dtype=F64)
    K = torch.randn(batch, length, heads * d_head, generator=g, dtype=F64)
    steps = derivation.rope_by_steps(Q, K, heads)
    assert list(steps) == [
        "Q",
        "K",
        "freqs",
        "angles",
        "cos",
        "sin",
        "Q_pairs",
        "K_pairs",
        "Q_rot",
        "K_rot",
        "scores",
    ]
    assert steps["Q"].shape == (batch, heads, length, d_head)
    assert steps["angles"].shape == (length, d_head // 2)
    assert steps["cos"].shape == (1, 1, length, d_head // 2)
    assert steps["Q_pairs"].shape == (batch, heads, length, d_head // 2, 2)
    assert steps["scores"].shape == (batch, heads, length, length)

    # independent: pairs as complex numbers times e^{i m theta_i}, theta_i = 10000^(-2i/d)
    freqs = torch.tensor(
        [10000.0 ** (-2 * i / d_head) for i in range(d_head // 2)], dtype=F64
    )
    phase = torch.polar(
        torch.ones(length, d_head // 2, dtype=F64),
        torch.arange(length, dtype=F64)[:, None] * freqs,
    )

    def reference(X):
        heads_view = X.reshape(batch, length, heads, d_head).permute(0, 2, 1, 3)
        pairs = torch.view_as_complex(
            heads_view.reshape(batch, heads, length, d_head // 2, 2).contiguous()
        )
        return torch.view_as_real(pairs * phase).reshape(batch, heads, length, d_head)

    q_ref, k_ref = reference(Q), reference(K)
    assert torch.allclose(steps["Q_rot"], q_ref, atol=1e-12)
    assert torch.allclose(steps["K_rot"], k_ref, atol=1e-12)
    assert torch.allclose(
        steps["scores"], q_ref @ k_ref.transpose(-1, -2) / math.sqrt(d_head), atol=1e-12
    )


def test_rope_by_steps_errors():
    with pytest.raises(ValueError, match="even"):
        derivation.rope_by_steps(torch.zeros(1, 2, 9), torch.zeros(1, 2, 9), 3)
    with pytest.raises(ValueError, match="Q and K"):
        derivation.rope_by_steps(torch.zeros(1, 2, 8), torch.zeros(1, 3, 8), 2)
    with pytest.raises(TypeError, match="n_heads"):
        derivation.rope_by_steps(torch.zeros(1, 2, 8), torch.zeros(1, 2, 8), 2.0)


def test_head_rotation_is_block_diagonal_and_r_m_transpose_r_n_is_r_n_minus_m():
    thetas = [10000.0 ** (-2 * i / 8) for i in range(4)]
    R = rope_lib.rotation_matrix(2, 8)
    for i, t in enumerate(thetas):
        block = R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        c, s = math.cos(2 * t), math.sin(2 * t)
        assert torch.allclose(block, torch.tensor([[c, -s], [s, c]], dtype=R.dtype))
    mask = torch.block_diag(*[torch.ones(2, 2)] * 4).bool()
    assert (R[~mask] == 0).all()
    gap = rope_lib.rotation_matrix(9, 8).T @ rope_lib.rotation_matrix(4, 8)
    assert torch.allclose(gap, rope_lib.rotation_matrix(-5, 8), atol=1e-12)


def test_static_figures():
    fig = figures.frequency_figure(
        [0.5, -1.0], [1.2, 0.3], 6, thetas=(1.0, 0.001), max_offset=50
    )
    fast_title = fig.axes[0].get_title()
    expected = dot(rotate_by_hand((0.5, -1.0), 6.0), (1.2, 0.3))
    assert f"q'·k' = {expected:.4f}" in fast_title
    block = rope_head.block_rotation_figure(position=2, head_dim=8)
    assert isinstance(block, Figure)
    assert block.get_size_inches()[0] <= 6.4
    image = block.axes[0].images[0].get_array()
    assert image.shape == (8, 8)
    assert image[0, 0] == pytest.approx(math.cos(2.0)) and image[0, 2] == 0
    texts = " ".join(t.get_text() for t in block.axes[1].texts)
    assert "0: 2 × 1 = 2 rad" in texts and "3: 2 × 0.001 = 0.002 rad" in texts
    thumb = rope_head.thumbnail()
    assert tuple(thumb.get_size_inches()) == pytest.approx((4, 2.5))


# ---------------------------------------------------------------- exercises


def test_check_repeat_offset():
    # 7 turns: 44 - 14 pi = 0.0177 rad, the only offset in 30..60 within 0.1 rad
    near = [d for d in range(30, 61) if abs(math.remainder(d, 2 * math.pi)) < 0.1]
    assert near == [44]
    q, k = (0.5, -1.0), (1.2, 0.3)
    assert rope_score(q, k, 44, 0, 1.0) == pytest.approx(0.3239, abs=5e-5)
    assert ex.check_repeat_offset(44) and ex.check_repeat_offset(44.0)
    assert "37.70" in ex.check_repeat_offset(38).message
    assert "31.42" in ex.check_repeat_offset(31).message
    assert "50.27" in ex.check_repeat_offset(50).message
    assert "56.55" in ex.check_repeat_offset(57).message
    assert "between 30 and 60" in ex.check_repeat_offset(6).message
    assert "1.02 rad" in ex.check_repeat_offset(45).message
    assert "still None" in ex.check_repeat_offset(None).message


def test_check_unrotated_pairs():
    thetas = [10000.0 ** (-2 * i / 16) for i in range(8)]
    slowest_two = sorted(range(8), key=lambda i: thetas[i])[:2]
    assert sorted(slowest_two) == [6, 7]
    assert thetas[6] == pytest.approx(0.001) and thetas[7] == pytest.approx(10**-3.5)
    assert ex.check_unrotated_pairs([6, 7]) and ex.check_unrotated_pairs(range(6, 8))
    assert "fastest" in ex.check_unrotated_pairs([0, 1]).message
    assert "a quarter of 8 pairs is 2" in ex.check_unrotated_pairs([7]).message
    assert "p-RoPE rotates" in ex.check_unrotated_pairs(range(6)).message
    assert "share that is rotated" in ex.check_unrotated_pairs(range(2, 8)).message
    assert "8 pairs" in ex.check_unrotated_pairs([14, 15]).message
    assert "not [5, 6]" in ex.check_unrotated_pairs([5, 6]).message
    assert "still None" in ex.check_unrotated_pairs(None).message


def test_an_unrecognised_wrong_answer_is_not_called_correct():
    assert not ex.check_relative_angles([0.5, 0.25, 0.125, 0.0625]).ok
    assert not ex.check_repeat_offset(33).ok
    assert not ex.check_unrotated_pairs([3]).ok


def test_relative_angles_hint_at_angles_reduced_mod_two_pi():
    hand = torch.tensor([8 * 10000.0 ** (-2 * i / 8) for i in range(4)], dtype=F64)
    assert (
        "modulo 2π"
        in ex.check_relative_angles(torch.remainder(hand, 2 * math.pi)).message
    )
    wrapped = (
        torch.remainder(hand + math.pi, 2 * math.pi) - math.pi
    )  # (-pi, pi]: 8 -> 1.7168
    assert "modulo 2π" in ex.check_relative_angles(wrapped).message


def attention_in_complex_numbers(q, k, v, rotate_q=True, rotate_k=True, rotate_v=False):
    """softmax(q' k'^T / sqrt(d)) v with the rotations done as complex multiplications."""
    d = q.shape[-1]
    freqs = torch.tensor([10000.0 ** (-2 * i / d) for i in range(d // 2)], dtype=F64)
    seq = q.shape[-2]
    phase = torch.polar(
        torch.ones(seq, d // 2, dtype=F64),
        torch.arange(seq, dtype=F64)[:, None] * freqs,
    )

    def rot(x):
        return torch.view_as_real(
            torch.view_as_complex(x.unflatten(-1, (d // 2, 2)).contiguous()) * phase
        ).flatten(-2)

    q = rot(q) if rotate_q else q
    k = rot(k) if rotate_k else k
    v = rot(v) if rotate_v else v
    return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1) @ v


def test_check_3():
    q, k, v, positions = ex.rope_attention_inputs()
    assert q.shape == k.shape == v.shape == (1, 2, 5, 4)
    assert torch.equal(positions, torch.arange(5))
    # the worked solution
    q_rot, k_rot = rope_lib.apply_rope(q, positions), rope_lib.apply_rope(k, positions)
    out = (q_rot @ k_rot.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(dim=-1) @ v
    assert ex.check_rope_attention(out)
    assert ex.check_rope_attention(attention_in_complex_numbers(q, k, v))
    assert (
        "rotated v"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, rotate_v=True)
        ).message
    )
    assert (
        "nothing was rotated"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, False, False)
        ).message
    )
    assert (
        "only q"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, True, False)
        ).message
    )
    assert (
        "only k"
        in ex.check_rope_attention(
            attention_in_complex_numbers(q, k, v, False, True)
        ).message
    )
    assert (
        "sqrt(head_dim)"
        in ex.check_rope_attention(
            (q_rot @ k_rot.transpose(-1, -2)).softmax(-1) @ v
        ).message
    )
    assert "shape" in ex.check_rope_attention(out[0]).message
    assert "still None" in ex.check_rope_attention(None).message


def test_check_5():
    hand = torch.tensor(
        [8 * 10000.0 ** (-2 * i / 8) for i in range(4)], dtype=F64
    )  # 8, 0.8, 0.08, 0.008
    assert torch.allclose(hand, torch.tensor([8.0, 0.8, 0.08, 0.008], dtype=F64))
    assert ex.check_relative_angles(
        8 * rope_lib.inv_frequencies(8)
    )  # the worked solution
    assert ex.check_relative_angles(hand.tolist())
    assert (
        "per coordinate" in ex.check_relative_angles(hand.repeat_interleave(2)).message
    )
    assert (
        "-2i/d"
        in ex.check_relative_angles(
            torch.tensor([8 * 10000.0 ** (-i / 8) for i in range(4)])
        ).message
    )
    assert (
        "wrong sign"
        in ex.check_relative_angles(
            torch.tensor([8 * 10000.0 ** (2 * i / 8) for i in range(4)])
        ).message
    )
    assert "reversed" in ex.check_relative_angles(hand.flip(0)).message
    assert "degrees" in ex.check_relative_angles(hand * 180 / math.pi).message
    assert "multiply by the offset" in ex.check_relative_angles(hand / 8).message
    assert "still None" in ex.check_relative_angles(None).message


def test_wavelengths_of_a_d8_head_are_a_ladder_of_tens():
    by_hand = [2 * math.pi * 10000.0 ** (2 * i / 8) for i in range(4)]
    assert [f"{w:,.0f}" for w in by_hand] == ["6", "63", "628", "6,283"]
    library = (2 * math.pi / rope_lib.inv_frequencies(8)).tolist()
    assert library == pytest.approx(by_hand, rel=1e-6)
    for short, long in zip(by_hand, by_hand[1:]):
        assert long / short == pytest.approx(10.0)


def test_text_answers_name_the_quantity_once():
    message = ex.check_repeat_offset("44").message
    assert "between 30 and 60, a whole number" in message
    assert message.count("a whole number") == 1
    assert "not whole" in ex.check_repeat_offset(44.5).message


def test_check_rope_attention_names_a_softmax_over_the_wrong_axis():
    q, k, v, positions = ex.rope_attention_inputs()
    q_rot, k_rot = (rope_lib.apply_rope(t, positions) for t in (q, k))
    scores = q_rot @ k_rot.transpose(-1, -2) / 2  # sqrt(head_dim 4)
    for dim in (-2, 1):
        message = ex.check_rope_attention(scores.softmax(dim) @ v).message
        assert "wrong axis" in message and "dim=-1" in message
    assert ex.check_rope_attention(scores.softmax(-1) @ v)


def test_frequency_figure_labels_the_offset_angle_and_keeps_q_off_q_prime():
    fig = figures.frequency_figure(
        [0.5, -1.0], [1.2, 0.3], 6, thetas=(1.0, 0.001), max_offset=50
    )
    for ax in fig.axes[:2]:
        texts = {t.get_text(): t.get_position() for t in ax.texts if t.get_text()}
        (qx, qy), (px, py) = texts["q"], texts["q'"]
        assert math.hypot(qx - px, qy - py) > 0.3  # the two labels apart
    assert "Δθ" in [t.get_text() for t in fig.axes[0].texts]
    assert fig.axes[2].lines[-1].get_linewidth() >= 1.5  # the offset line, bold


def test_check_step_shapes():
    walk = derivation.rope_by_steps(
        torch.zeros(4, 10, 8 * 64), torch.zeros(4, 10, 8 * 64), 8
    )
    right = ([10, 32], [1, 1, 10, 32], [4, 8, 10, 32, 2])  # 64 / 2 = 32 pairs
    assert tuple(walk["angles"].shape) == (10, 32)
    assert tuple(walk["cos"].shape) == (1, 1, 10, 32)
    assert tuple(walk["Q_pairs"].shape) == (4, 8, 10, 32, 2)
    assert ex.check_step_shapes(right)
    assert ex.check_step_shapes((walk[n].shape for n in ("angles", "cos", "Q_pairs")))
    check = ex.check_step_shapes
    assert "per pair" in check(([10, 64], [1, 1, 10, 64], [4, 8, 10, 64, 2])).message
    assert (
        "heads before" in check(([10, 32], [1, 1, 10, 32], [4, 10, 8, 32, 2])).message
    )
    assert "one table" in check(([4, 10, 32], [1, 1, 10, 32], right[2])).message
    assert "unsqueezed twice" in check(([10, 32], [10, 32], right[2])).message
    assert "no copy" in check(([10, 32], [4, 8, 10, 32], right[2])).message
    assert "you gave" in check(([10, 32], [1, 1, 10, 32], [4, 8, 10, 16, 2])).message
    assert "three shapes" in check("shapes").message
    assert "three shapes" in check([[10, 32]]).message
    assert "still None" in check(None).message
