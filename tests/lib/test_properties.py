"""Properties of RoPE that hold for every input, checked with hypothesis."""

import torch
from hypothesis import given
from hypothesis import strategies as st

import rope_lib

layouts = st.sampled_from(rope_lib.LAYOUTS)
head_dims = st.sampled_from([2, 4, 8, 16, 64])
positions = st.integers(min_value=-5000, max_value=5000)
seeds = st.integers(min_value=0, max_value=2**31 - 1)
bases = st.sampled_from([10.0, 10000.0, 500000.0])


def vectors(seed, shape, dtype=torch.float64):
    return torch.randn(
        *shape, generator=torch.Generator().manual_seed(seed), dtype=dtype
    )


@given(
    seeds, head_dims, positions, positions, st.integers(-10000, 10000), layouts, bases
)
def test_score_depends_only_on_the_offset(seed, head_dim, m, n, shift, layout, base):
    q, k = vectors(seed, (2, head_dim))

    def score(a, b):
        rq = rope_lib.apply_rope(q[None], torch.tensor([a]), base=base, layout=layout)[
            0
        ]
        rk = rope_lib.apply_rope(k[None], torch.tensor([b]), base=base, layout=layout)[
            0
        ]
        return torch.dot(rq, rk)

    scale = q.norm() * k.norm()
    assert abs(score(m, n) - score(m + shift, n + shift)) <= 1e-9 * scale
    # and it equals <q, R_(n-m) k>: only the offset is seen
    assert abs(score(m, n) - score(0, n - m)) <= 1e-9 * scale


@given(seeds, head_dims, positions, layouts)
def test_rotation_preserves_norm_of_every_pair(seed, head_dim, m, layout):
    x = vectors(seed, (3, head_dim))
    out = rope_lib.apply_rope(x, torch.full((3,), m), layout=layout)
    as_pairs = (
        (lambda t: t.unflatten(-1, (-1, 2)))
        if layout == "interleaved"
        else (lambda t: t.unflatten(-1, (2, -1)).transpose(-1, -2))
    )
    torch.testing.assert_close(
        as_pairs(out).norm(dim=-1), as_pairs(x).norm(dim=-1), rtol=1e-12, atol=1e-12
    )


@given(
    seeds,
    head_dims,
    st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=6),
    layouts,
)
def test_rotating_by_minus_m_undoes_m(seed, head_dim, position_list, layout):
    p = torch.tensor(position_list, dtype=torch.float64)
    x = vectors(seed, (2, len(position_list), head_dim))
    back = rope_lib.apply_rope(
        rope_lib.apply_rope(x, p, layout=layout), -p, layout=layout
    )
    torch.testing.assert_close(back, x, rtol=1e-10, atol=1e-10)


@given(seeds, head_dims, st.integers(1, 4))
def test_layout_conversions_round_trip_exactly(seed, head_dim, batch):
    x = vectors(seed, (batch, head_dim), torch.float32)
    assert torch.equal(rope_lib.half_to_interleaved(rope_lib.interleaved_to_half(x)), x)
    assert torch.equal(rope_lib.interleaved_to_half(rope_lib.half_to_interleaved(x)), x)
    # pair i: (2i, 2i+1) in one layout is (i, i + d/2) in the other
    half = rope_lib.interleaved_to_half(x)
    assert torch.equal(half[..., : head_dim // 2], x[..., 0::2]) and torch.equal(
        half[..., head_dim // 2 :], x[..., 1::2]
    )


@given(seeds, head_dims, positions, bases)
def test_layout_conversion_commutes_with_rope(seed, head_dim, m, base):
    x = vectors(seed, (4, head_dim))
    p = torch.arange(m, m + 4)
    via_half = rope_lib.half_to_interleaved(
        rope_lib.apply_rope(
            rope_lib.interleaved_to_half(x), p, base=base, layout="half"
        )
    )
    torch.testing.assert_close(
        via_half,
        rope_lib.apply_rope(x, p, base=base, layout="interleaved"),
        rtol=0,
        atol=1e-12,
    )


@given(seeds, head_dims, positions, layouts)
def test_rotation_matrix_is_apply_rope_on_a_vector(seed, head_dim, m, layout):
    x = vectors(seed, (head_dim,))
    want = rope_lib.apply_rope(x[None], torch.tensor([m]), layout=layout)[0]
    torch.testing.assert_close(
        rope_lib.rotation_matrix(m, head_dim, layout=layout) @ x,
        want,
        rtol=1e-9,
        atol=1e-9,
    )


@given(
    seeds,
    st.sampled_from([torch.bfloat16, torch.float16]),
    st.integers(0, 100_000),
    layouts,
)
def test_low_precision_stays_close_to_a_float64_reference(seed, dtype, start, layout):
    """Stated tolerance: per pair, |error| <= |pair| * (max_position * 2^-23 + eps(dtype)).
    The first term is float32 angles (a relative error of 2^-23 at most, at one radian per
    position for pair 0); the second is rounding the result to the input dtype."""
    head_dim = 64
    x = vectors(seed, (2, 8, head_dim)).to(dtype)
    p = torch.arange(start, start + 8)
    got = rope_lib.apply_rope(x, p, layout=layout).double()
    want = rope_lib.apply_rope(x.double(), p, layout=layout)
    assert (
        got.dtype == torch.float64
        and rope_lib.apply_rope(x, p, layout=layout).dtype == dtype
    )
    pair_norm = x.double().unflatten(-1, (-1, 2)).norm(dim=-1).max()
    bound = pair_norm * (int(p.max()) * 2.0**-23 + torch.finfo(dtype).eps)
    assert (got - want).abs().max() <= bound


@given(seeds, st.sampled_from([2.0, 4.0, 8.0]), layouts)
def test_fractional_positions_equal_divided_frequencies(seed, s, layout):
    # Position Interpolation: positions m / s or frequencies theta / s, the same angles
    x = vectors(seed, (3, 10, 16))
    p = torch.arange(10, dtype=torch.float64) * 37
    inv_freq, _ = rope_lib.rope_frequencies("linear", 16, factor=s)
    torch.testing.assert_close(
        rope_lib.apply_rope(x, p / s, layout=layout),
        rope_lib.apply_rope(x, p, inv_freq=inv_freq, layout=layout),
        rtol=1e-6,
        atol=1e-6,
    )


@given(seeds, st.floats(0.5, 2.0), layouts)
def test_attention_factor_scales_every_output(seed, factor, layout):
    x = vectors(seed, (2, 5, 8))
    p = torch.arange(5)
    torch.testing.assert_close(
        rope_lib.apply_rope(x, p, layout=layout, attention_factor=factor),
        factor * rope_lib.apply_rope(x, p, layout=layout),
    )
