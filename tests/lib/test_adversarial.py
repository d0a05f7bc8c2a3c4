"""rope_lib against a hostile user (issue 8): wrong input gets a ValueError/TypeError that names
the argument; odd but valid input (odd storage offsets, transposed and sliced x, the meta
device, float64, bfloat16, float16, zero-length sequences) gives what a float64 reference written
here says. The references below are a few lines of cos/sin each, not calls into rope_lib.

Set H1_COUNTS=1 and run with -s to print how many cases each part generated.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import warnings
from collections import Counter

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rope_lib
from rope_lib.scaling import PARAMETERS

COUNTS: Counter = Counter()
SETTINGS = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if os.environ.get("H1_COUNTS"):
        print("\ncases:", dict(COUNTS))


# --- references (float64, written out) ------------------------------------------------------


def ref_inv_freq(head_dim, base=10000.0):
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def ref_rope(x, positions, inv_freq=None, layout="interleaved", factor=1.0):
    """x [..., seq, d] rotated pair by pair; positions broadcast against x.shape[:-1]."""
    x = x.detach().to("cpu", torch.float64)
    d = x.shape[-1]
    inv_freq = (
        ref_inv_freq(d)
        if inv_freq is None
        else inv_freq.detach().to("cpu", torch.float64)
    )
    angle = positions.detach().to("cpu", torch.float64)[..., None] * inv_freq
    c, s = torch.cos(angle) * factor, torch.sin(angle) * factor
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * c - b * s, a * s + b * c], -1).flatten(-2)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([a * c - b * s, a * s + b * c], -1)


TOL = {
    torch.float64: 1e-9,
    torch.float32: 5e-4,
    torch.float16: 2e-2,
    torch.bfloat16: 8e-2,
}


def close_to_reference(got, want, dtype):
    got = got.to("cpu", torch.float64)
    scale = max(1.0, want.abs().max().item()) if want.numel() else 1.0
    return got.shape == want.shape and (
        got.numel() == 0 or (got - want).abs().max().item() <= TOL[dtype] * scale
    )


# --- odd but valid x --------------------------------------------------------------------------

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
FORMS = [
    "contiguous",
    "odd_offset",
    "transposed",
    "seq_sliced",
    "last_dim_slice",
    "expanded",
]


def make_x(form, shape, dtype, gen):
    """x of `shape` [batch, heads, seq, d] laid out in memory as `form` says."""
    b, h, s, d = shape
    if form == "contiguous":
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    if (
        form == "odd_offset"
    ):  # one step sliced out of a flat buffer: contiguous, offset 1
        flat = torch.randn(1 + b * h * s * d, generator=gen, dtype=torch.float64).to(
            dtype
        )
        x = flat[1:].view(shape)
        assert x.is_contiguous() and x.storage_offset() == 1
        return x
    if (
        form == "transposed"
    ):  # [batch, seq, heads, d] transposed to [batch, heads, seq, d]
        return (
            torch.randn(b, s, h, d, generator=gen, dtype=torch.float64)
            .to(dtype)
            .transpose(1, 2)
        )
    if form == "seq_sliced":  # every other token
        return torch.randn(b, h, 2 * s, d, generator=gen, dtype=torch.float64).to(
            dtype
        )[:, :, ::2]
    if (
        form == "last_dim_slice"
    ):  # head_dim sliced from a fused projection, at an odd offset
        return torch.randn(b, h, s, d + 3, generator=gen, dtype=torch.float64).to(
            dtype
        )[..., 1 : d + 1]
    # a broadcast view: stride 0 along heads
    return (
        torch.randn(b, 1, s, d, generator=gen, dtype=torch.float64)
        .to(dtype)
        .expand(b, h, s, d)
    )


odd_inputs = st.tuples(
    st.sampled_from(FORMS),
    st.sampled_from(DTYPES),
    st.sampled_from(rope_lib.LAYOUTS),
    st.integers(1, 3),  # batch
    st.integers(1, 3),  # heads
    st.integers(0, 9),  # seq (0: an empty sequence)
    st.sampled_from([2, 4, 8, 16]),  # head_dim
    st.integers(0, 2**31 - 1),
    st.sampled_from(["int", "float", "per_batch", "offset"]),
)


def positions_for(kind, batch, seq, gen):
    if kind == "int":
        return torch.arange(seq)
    if kind == "float":
        return torch.rand(seq, generator=gen, dtype=torch.float64) * 100
    if kind == "per_batch":
        return torch.randint(0, 500, (batch, 1, seq), generator=gen)
    return torch.arange(seq) + 1000  # a decoding step far from 0


@SETTINGS
@given(odd_inputs)
def test_apply_rope_on_odd_valid_x_matches_the_reference(case):
    form, dtype, layout, b, h, s, d, seed, kind = case
    gen = torch.Generator().manual_seed(seed)
    x = make_x(form, (b, h, s, d), dtype, gen)
    positions = positions_for(kind, b, s, gen)
    got = rope_lib.apply_rope(x, positions, layout=layout)
    COUNTS["odd valid x vs reference"] += 1
    assert got.dtype == dtype and got.shape == x.shape
    assert close_to_reference(got, ref_rope(x, positions, layout=layout), dtype)


@SETTINGS
@given(odd_inputs)
def test_rotary_embedding_on_odd_valid_x_matches_the_reference(case):
    form, dtype, layout, b, h, s, d, seed, kind = case
    gen = torch.Generator().manual_seed(seed)
    x = make_x(form, (b, h, s, d), dtype, gen)
    positions = positions_for(kind, b, s, gen)
    module = rope_lib.RotaryEmbedding(d, layout=layout, initial_cache=4)
    got = module(x, positions)
    COUNTS["odd valid x vs reference"] += 1
    assert got.dtype == dtype and got.shape == x.shape
    assert close_to_reference(got, ref_rope(x, positions, layout=layout), dtype)


@SETTINGS
@given(odd_inputs)
def test_apply_rotary_emb_on_odd_valid_x_matches_the_reference(case):
    form, dtype, _, b, h, s, d, seed, _ = case
    gen = torch.Generator().manual_seed(seed)
    # Meta's layout is [batch, seq, heads, d]: reuse the odd forms by moving the axes
    xq = make_x(form, (b, h, s, d), dtype, gen).transpose(1, 2)
    xk = make_x(form, (b, 1, s, d), dtype, gen).transpose(1, 2)
    freqs_cis = rope_lib.precompute_freqs_cis(d, s + 3)[3:]  # a window that starts at 3
    if dtype == torch.float64:  # complex128 angles: a float64 rotation
        angles = (torch.arange(s, dtype=torch.float64) + 3)[:, None] * ref_inv_freq(d)
        freqs_cis = torch.polar(torch.ones_like(angles), angles)
    got_q, got_k = rope_lib.apply_rotary_emb(xq, xk, freqs_cis)
    COUNTS["odd valid x vs reference"] += 1
    positions = (torch.arange(s) + 3)[:, None]  # [seq, 1] against [batch, seq, heads]
    for got, x in ((got_q, xq), (got_k, xk)):
        assert got.dtype == dtype and got.shape == x.shape
        assert close_to_reference(got, ref_rope(x, positions), dtype)


@pytest.mark.parametrize("layout", rope_lib.LAYOUTS)
def test_float64_x_gets_a_float64_rotation_throughout(layout):
    # frequencies rounded to float32 put the angle off by ~3e-4 rad at position 1e5
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 2, 3, 64, generator=gen, dtype=torch.float64)
    positions = torch.tensor([100_000, 123_457, 250_001])
    want = ref_rope(x, positions, layout=layout)
    for got in (
        rope_lib.apply_rope(x, positions, layout=layout),
        rope_lib.RotaryEmbedding(64, layout=layout)(x, positions),
        rope_lib.apply_rope(x, positions.double(), layout=layout),
    ):
        assert (got - want).abs().max().item() < 1e-9
    exact = ref_inv_freq(64)
    assert (
        rope_lib.inv_frequencies(64, dtype=torch.float64) - exact
    ).abs().max().item() < 1e-15
    # rotation_matrix is float64 too: R_m x == apply_rope(x, m) to float64 precision
    vector = x[0, 0, 0]
    matrix = rope_lib.rotation_matrix(100_000, 64, layout=layout)
    torch.testing.assert_close(
        matrix @ vector,
        ref_rope(vector[None], torch.tensor([100_000]), layout=layout)[0],
        rtol=0,
        atol=1e-9,
    )


def test_zero_length_sequences_give_empty_results():
    empty = torch.randn(2, 3, 0, 8)
    assert rope_lib.apply_rope(empty, torch.arange(0)).shape == (2, 3, 0, 8)
    assert rope_lib.RotaryEmbedding(8)(empty).shape == (2, 3, 0, 8)
    xq, xk = torch.randn(2, 0, 3, 8), torch.randn(2, 0, 1, 8)
    out_q, out_k = rope_lib.apply_rotary_emb(
        xq, xk, rope_lib.precompute_freqs_cis(8, 0)
    )
    assert out_q.shape == xq.shape and out_k.shape == xk.shape
    for scheme in rope_lib.POSITION_SCHEMES:
        block = rope_lib.PositionalSelfAttention(8, 2, scheme)
        assert block(torch.randn(2, 0, 8)).shape == (2, 0, 8)
    COUNTS["zero-length"] += 4 + len(rope_lib.POSITION_SCHEMES)


# --- devices (the meta device runs the same placement code as a GPU) -------------------------


def test_every_rotation_stays_on_the_meta_device():
    x = torch.empty(2, 4, 6, 8, device="meta")
    for layout in rope_lib.LAYOUTS:
        out = rope_lib.apply_rope(
            x, torch.arange(6), layout=layout
        )  # CPU positions follow x
        assert out.device.type == "meta" and out.shape == x.shape
        out = rope_lib.apply_rope(x, torch.arange(6, device="meta"), layout=layout)
        assert out.device.type == "meta"
        out = rope_lib.RotaryEmbedding(8, layout=layout)(x)
        assert out.device.type == "meta"
    inv_freq, factor = rope_lib.rope_frequencies(
        "yarn", 8, factor=4.0, original_max_position_embeddings=64
    )
    assert (
        rope_lib.apply_rope(
            x, torch.arange(6), inv_freq=inv_freq, attention_factor=factor
        ).device.type
        == "meta"
    )
    assert rope_lib.inv_frequencies(8, device="meta").device.type == "meta"
    xq = torch.empty(2, 6, 4, 8, device="meta", dtype=torch.bfloat16)
    out_q, out_k = rope_lib.apply_rotary_emb(
        xq, xq[:, :, :1], rope_lib.precompute_freqs_cis(8, 6)
    )
    assert out_q.device.type == "meta" and out_q.dtype == torch.bfloat16
    scores = torch.empty(4, 6, device="meta")
    assert (
        rope_lib.alibi.alibi_query_attention(
            scores, rope_lib.alibi_slopes(4)[:, None], 3
        ).device.type
        == "meta"
    )


@pytest.mark.parametrize("scheme", rope_lib.POSITION_SCHEMES)
def test_attention_runs_on_the_meta_device(scheme):
    block = rope_lib.PositionalSelfAttention(16, 2, scheme).to("meta")
    x = torch.empty(2, 5, 16, device="meta")
    assert block(x).device.type == "meta"
    out, weights = block(x, return_weights=True)
    assert out.device.type == "meta" and weights.shape == (2, 2, 5, 5)


def test_rotary_embedding_keeps_one_cache_per_device():
    module = rope_lib.RotaryEmbedding(8, initial_cache=16)
    x_cpu, x_meta = torch.randn(1, 2, 4, 8), torch.empty(1, 2, 4, 8, device="meta")
    for _ in range(10):
        module(x_cpu)
        module(x_meta)
    assert module.cached_positions == 16  # switching devices does not grow the cache


def test_frequencies_and_positions_on_another_device():
    x = torch.randn(1, 2, 4, 8)
    with pytest.raises(
        ValueError, match="positions"
    ):  # meta has no values to copy to x
        rope_lib.apply_rope(x, torch.arange(4, device="meta"))
    with pytest.raises(ValueError, match="inv_freq"):
        rope_lib.apply_rope(x, torch.arange(4), inv_freq=torch.ones(4, device="meta"))


# --- gradients, dtypes ------------------------------------------------------------------------


@pytest.mark.parametrize("layout", rope_lib.LAYOUTS)
def test_gradient_flows_to_inv_freq_and_x(layout):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 5, 8, generator=gen, dtype=torch.float64, requires_grad=True)
    inv_freq = ref_inv_freq(8).requires_grad_()
    positions = torch.arange(5) * 1.5
    assert torch.autograd.gradcheck(
        lambda t, f: rope_lib.apply_rope(t, positions, inv_freq=f, layout=layout),
        (x, inv_freq),
    )
    # float32 x with a learnable float32 inv_freq: the gradient arrives, with the right value
    f32 = ref_inv_freq(8).float().requires_grad_()
    x32 = x.detach().float()
    rope_lib.apply_rope(x32, positions, inv_freq=f32, layout=layout).sum().backward()
    f64 = ref_inv_freq(8).requires_grad_()
    ref_rope_grad = torch.autograd.grad(
        _ref_rope_differentiable(x.detach(), positions, f64, layout).sum(), f64
    )[0]
    torch.testing.assert_close(f32.grad.double(), ref_rope_grad, rtol=1e-4, atol=1e-4)


def _ref_rope_differentiable(x, positions, inv_freq, layout):
    angle = positions.double()[..., None] * inv_freq
    c, s = torch.cos(angle), torch.sin(angle)
    d = x.shape[-1]
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * c - b * s, a * s + b * c], -1).flatten(-2)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([a * c - b * s, a * s + b * c], -1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_learned_embedding_returns_x_dtype(dtype):
    emb = rope_lib.LearnedPositionEmbedding(8, 4)
    x = torch.randn(2, 5, 4).to(dtype)
    out = emb(x)
    assert out.dtype == dtype
    want = x.double() + emb.table[:5].detach().double()
    tol = {torch.bfloat16: 3e-2, torch.float16: 4e-3, torch.float64: 1e-12}[dtype]
    torch.testing.assert_close(out.double(), want, rtol=0, atol=tol)


# --- the one rule for positions ---------------------------------------------------------------


def test_apply_rope_and_rotary_embedding_read_positions_the_same_way():
    gen = torch.Generator().manual_seed(2)
    module = rope_lib.RotaryEmbedding(8)
    positions = torch.randint(0, 50, (2, 5), generator=gen)
    # [batch, seq] with a 4-D x is one row per batch, by rank, whatever batch and heads are
    for batch, heads in ((2, 3), (2, 2), (2, 1)):
        x = torch.randn(batch, heads, 5, 8, generator=gen)
        want = ref_rope(x, positions[:, None, :])
        assert close_to_reference(
            rope_lib.apply_rope(x, positions), want, torch.float32
        )
        assert close_to_reference(module(x, positions), want, torch.float32)
    # a row per head needs an explicit shape; [heads, seq] alone is read as [batch, seq]
    x = torch.randn(3, 2, 5, 8, generator=gen)
    for call in (
        lambda: rope_lib.apply_rope(x, positions),
        lambda: module(x, positions),
    ):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert "positions" in message and "(2, 5)" in message
        assert "positions[None]" in message
    want = ref_rope(x, positions[None])
    assert close_to_reference(
        rope_lib.apply_rope(x, positions[None]), want, torch.float32
    )
    assert close_to_reference(module(x, positions[None]), want, torch.float32)


def test_batch_equal_to_heads_is_per_batch_as_in_transformers():
    # issue 17: RotaryEmbedding(8)(x, p), x [8, 8, 3, 8], p [8, 3] used to be refused
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(8, 8, 3, 8, generator=gen)
    positions = torch.randint(0, 100, (8, 3), generator=gen)
    want = ref_rope(x, positions[:, None, :])
    assert close_to_reference(
        rope_lib.RotaryEmbedding(8)(x, positions), want, torch.float32
    )
    assert close_to_reference(rope_lib.apply_rope(x, positions), want, torch.float32)
    half = rope_lib.apply_rope(
        rope_lib.interleaved_to_half(x), positions, layout="half"
    )
    torch.testing.assert_close(rope_lib.half_to_interleaved(half), want.float())
    # the same as transformers' cos[:, None] against q [batch, heads, seq, d]
    per_head = positions[None, :, :]  # [1, heads, seq]: the explicit per-head reading
    assert close_to_reference(
        rope_lib.apply_rope(x, per_head), ref_rope(x, per_head), torch.float32
    )


@pytest.mark.parametrize(
    "shape",
    [(8, 4), (5,), (2, 8, 3, 1), (1, 1, 8, 8, 3), (4, 3), (8, 8, 4)],
)
def test_positions_that_do_not_fit_x_are_refused_by_name(shape):
    x = torch.randn(8, 8, 3, 8)
    positions = torch.zeros(shape, dtype=torch.int64)
    for call in (
        lambda: rope_lib.apply_rope(x, positions),
        lambda: rope_lib.RotaryEmbedding(8)(x, positions),
    ):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert message.startswith("positions must") and str(shape) in message


def test_nan_positions_are_refused_with_batch_equal_to_heads():
    positions = torch.zeros(8, 3)
    positions[3, 1] = math.nan
    with pytest.raises(ValueError, match="positions must be finite"):
        rope_lib.apply_rope(torch.randn(8, 8, 3, 8), positions)
    with pytest.raises(ValueError, match="positions must be finite"):
        rope_lib.RotaryEmbedding(8)(torch.randn(8, 8, 3, 8), positions)


# --- RotaryEmbedding's cache under threads ------------------------------------------------------


def test_rotary_embedding_cache_is_thread_safe():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(1, 1, 1, 8, generator=gen)
    errors, wrong = [], []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(40):
            module = rope_lib.RotaryEmbedding(8, initial_cache=1)
            barrier = threading.Barrier(6)

            def work(k, module=module, barrier=barrier):
                try:
                    barrier.wait()
                    for step in range(1, 30):
                        p = torch.tensor([k * 37 + step * 11])
                        if not close_to_reference(
                            module(x, p), ref_rope(x, p), torch.float32
                        ):
                            wrong.append(int(p))
                except Exception as error:  # noqa: BLE001 - any error is a failure here
                    errors.append(repr(error))

            threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(interval)
    COUNTS["threaded calls"] += 40 * 6 * 29
    assert not errors, errors[:3]
    assert not wrong, wrong[:3]


# --- attention: both paths, every scheme --------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("scheme", rope_lib.POSITION_SCHEMES)
@pytest.mark.parametrize("causal", [True, False])
def test_attention_fast_and_explicit_paths_agree(dtype, scheme, causal):
    torch.manual_seed(4)
    block = rope_lib.PositionalSelfAttention(16, 4, scheme, causal=causal).to(dtype)
    x = torch.randn(3, 7, 16, dtype=dtype)
    fast = block(x)
    explicit, weights = block(x, return_weights=True)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(fast, explicit, rtol=tol, atol=tol)
    if causal:
        assert weights.triu(1).abs().max().item() == 0
    # given positions 0..seq-1 (not cached) agree with the default ones (cached)
    torch.testing.assert_close(block(x, torch.arange(7)), fast, rtol=tol, atol=tol)
    per_batch = torch.arange(7).expand(3, 7)
    torch.testing.assert_close(block(x, per_batch), fast, rtol=tol, atol=tol)


def test_attention_rope_follows_a_replaced_rope_pair():
    torch.manual_seed(5)
    block = rope_lib.PositionalSelfAttention(16, 2, "rope")
    x = torch.randn(2, 6, 16)
    before = block(x)
    scaled = rope_lib.rope_frequencies("linear", 8, factor=4.0)
    block.rope = scaled
    after = block(x)
    twin = rope_lib.PositionalSelfAttention(16, 2, "rope", rope=scaled)
    twin.load_state_dict(block.state_dict())
    torch.testing.assert_close(after, twin(x, return_weights=True)[0])
    assert (after - before).abs().max().item() > 1e-4
    scaled[0].mul_(2.0)  # changed in place: the cache notices
    torch.testing.assert_close(block(x), twin(x, return_weights=True)[0])


def test_learned_attention_uses_the_positions_it_is_given():
    torch.manual_seed(6)
    block = rope_lib.PositionalSelfAttention(8, 2, "learned", max_len=32)
    x = torch.randn(2, 4, 8)
    shifted = torch.arange(4) + 10
    manual = rope_lib.PositionalSelfAttention(8, 2, "none")
    manual.qkv, manual.out = block.qkv, block.out
    torch.testing.assert_close(
        block(x, shifted), manual(x + block.learned.table[shifted])
    )
    assert (block(x, shifted) - block(x)).abs().max().item() > 1e-6


def test_sinusoidal_attention_refuses_negative_positions():
    block = rope_lib.PositionalSelfAttention(8, 2, "sinusoidal")
    with pytest.raises(ValueError, match="positions"):
        block(torch.randn(1, 3, 8), torch.tensor([-1, 0, 1]))


# --- wrong input: a ValueError/TypeError naming the argument ----------------------------------

NOT_A_NUMBER = st.sampled_from(
    [
        None,
        "2",
        "nan",
        [1.0],
        (2,),
        {"factor": 2},
        True,
        1 + 2j,
        torch.ones(2),
        object(),
    ]
)
NON_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])
NON_POSITIVE = st.one_of(st.integers(-(10**6), 0), st.floats(-1e9, 0.0))
NOT_AN_INT = st.sampled_from([2.0, 4.5, "4", None, True, [4], 1 + 0j])
ODD = st.integers(0, 500).map(lambda n: 2 * n + 1)
BAD_NUMBER = st.one_of(NOT_A_NUMBER, NON_FINITE)
BAD_POSITIVE = st.one_of(NOT_A_NUMBER, NON_FINITE, NON_POSITIVE)
BAD_COUNT = st.one_of(NOT_AN_INT, st.integers(-100, 0))
BAD_EVEN = st.one_of(NOT_AN_INT, st.integers(-100, 0), ODD)
NOT_A_TENSOR = st.sampled_from([None, 3.0, "x", [[1.0, 2.0]], {"x": 1}])
X = torch.randn(2, 3, 4, 8)
P = torch.arange(4)
FREQS = rope_lib.precompute_freqs_cis(8, 4)
XQ, XK = torch.randn(2, 4, 3, 8), torch.randn(2, 4, 1, 8)
BAD_X = st.one_of(
    NOT_A_TENSOR,
    st.sampled_from(
        [
            torch.ones(2, 3, 4, 8, dtype=torch.int64),
            torch.ones(2, 4, 8, dtype=torch.bool),
            torch.ones(2, 4, 8, dtype=torch.complex64),
            torch.ones(8),
            torch.ones(2, 4, 7),
        ]
    ),
)
BAD_POSITIONS = st.one_of(
    NOT_A_TENSOR,
    st.sampled_from(
        [
            torch.arange(5),
            torch.arange(3),
            torch.zeros(4, dtype=torch.bool),
            torch.zeros(4, dtype=torch.complex64),
            torch.tensor([0.0, math.nan, 2.0, 3.0]),
            torch.tensor([0.0, 1.0, math.inf, 3.0]),
            torch.zeros(3, 4, 2),
            torch.zeros(1, 1, 1, 1, 4),
            torch.zeros(5, 4),
        ]
    ),
)
BAD_INV_FREQ = st.one_of(
    NOT_A_TENSOR.filter(lambda v: v is not None),  # None: the default frequencies
    st.sampled_from(
        [
            torch.ones(3),
            torch.ones(5),
            torch.ones(2, 4),
            torch.ones(4, dtype=torch.int64),
            torch.tensor([1.0, math.nan, 0.1, 0.01]),
        ]
    ),
)
BAD_LAYOUT = st.one_of(
    st.text(max_size=12).filter(lambda s: s not in rope_lib.LAYOUTS),
    st.sampled_from([None, 1, ["half"], ("interleaved",)]),
)


def _rope_frequencies(rope_type, **params):
    base = {"head_dim": 16}
    defaults = {
        "default": {},
        "linear": {"factor": 2.0},
        "ntk": {"factor": 2.0},
        "dynamic": {"factor": 2.0, "max_position_embeddings": 64, "seq_len": 128},
        "yarn": {"factor": 4.0, "original_max_position_embeddings": 64},
        "llama3": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
        "longrope": {
            "short_factor": [1.0] * 8,
            "long_factor": [2.0] * 8,
            "original_max_position_embeddings": 64,
            "factor": 4.0,
        },
    }[rope_type]
    head_dim = params.pop("head_dim", base["head_dim"])
    base_value = params.pop("base", 10000.0)
    return rope_lib.rope_frequencies(
        rope_type, head_dim, base_value, **{**defaults, **params}
    )


# (function, argument) -> (strategy of bad values, call with the bad value)
WRONG = {
    ("inv_frequencies", "head_dim"): (BAD_EVEN, lambda v: rope_lib.inv_frequencies(v)),
    ("inv_frequencies", "base"): (
        BAD_POSITIVE,
        lambda v: rope_lib.inv_frequencies(8, v),
    ),
    ("sinusoidal_encoding", "seq_len"): (
        BAD_COUNT,
        lambda v: rope_lib.sinusoidal_encoding(v, 8),
    ),
    ("sinusoidal_encoding", "d_model"): (
        BAD_EVEN,
        lambda v: rope_lib.sinusoidal_encoding(4, v),
    ),
    ("sinusoidal_encoding", "base"): (
        BAD_POSITIVE,
        lambda v: rope_lib.sinusoidal_encoding(4, 8, v),
    ),
    ("apply_rope", "x"): (BAD_X, lambda v: rope_lib.apply_rope(v, P)),
    ("apply_rope", "positions"): (BAD_POSITIONS, lambda v: rope_lib.apply_rope(X, v)),
    ("apply_rope", "inv_freq"): (
        BAD_INV_FREQ,
        lambda v: rope_lib.apply_rope(X, P, inv_freq=v),
    ),
    ("apply_rope", "attention_factor"): (
        BAD_POSITIVE,
        lambda v: rope_lib.apply_rope(X, P, attention_factor=v),
    ),
    ("apply_rope", "layout"): (
        BAD_LAYOUT,
        lambda v: rope_lib.apply_rope(X, P, layout=v),
    ),
    ("apply_rope", "base"): (BAD_POSITIVE, lambda v: rope_lib.apply_rope(X, P, base=v)),
    ("precompute_freqs_cis", "dim"): (
        BAD_EVEN,
        lambda v: rope_lib.precompute_freqs_cis(v, 4),
    ),
    ("precompute_freqs_cis", "end"): (
        st.one_of(NOT_AN_INT, st.integers(-100, -1)),
        lambda v: rope_lib.precompute_freqs_cis(8, v),
    ),
    ("precompute_freqs_cis", "theta"): (
        BAD_POSITIVE,
        lambda v: rope_lib.precompute_freqs_cis(8, 4, v),
    ),
    ("apply_rotary_emb", "xq"): (
        BAD_X,
        lambda v: rope_lib.apply_rotary_emb(v, XK, FREQS),
    ),
    ("apply_rotary_emb", "xk"): (
        st.one_of(
            BAD_X, st.just(torch.randn(2, 3, 1, 8)), st.just(torch.randn(2, 4, 1, 6))
        ),
        lambda v: rope_lib.apply_rotary_emb(XQ, v, FREQS),
    ),
    ("apply_rotary_emb", "freqs_cis"): (
        st.one_of(
            NOT_A_TENSOR,
            st.sampled_from([FREQS.real, FREQS[:3], FREQS[:, :2], FREQS * math.nan]),
        ),
        lambda v: rope_lib.apply_rotary_emb(XQ, XK, v),
    ),
    ("interleaved_to_half", "x"): (
        st.one_of(NOT_A_TENSOR, st.just(torch.ones(3, 5)), st.just(torch.tensor(1.0))),
        lambda v: rope_lib.interleaved_to_half(v),
    ),
    ("half_to_interleaved", "x"): (
        st.one_of(NOT_A_TENSOR, st.just(torch.ones(3, 5))),
        lambda v: rope_lib.half_to_interleaved(v),
    ),
    ("alibi_slopes", "n_heads"): (BAD_COUNT, lambda v: rope_lib.alibi_slopes(v)),
    ("alibi_bias", "seq_len"): (BAD_COUNT, lambda v: rope_lib.alibi_bias(v, 4)),
    ("alibi_bias", "n_heads"): (BAD_COUNT, lambda v: rope_lib.alibi_bias(4, v)),
    ("alibi_bias", "causal"): (
        st.sampled_from(["yes", 1, 0, None, [True]]),
        lambda v: rope_lib.alibi_bias(4, 2, v),
    ),
    ("rope_frequencies", "rope_type"): (
        st.one_of(
            st.text(max_size=12).filter(
                lambda s: s not in rope_lib.scaling.ROPE_FREQUENCY_FUNCTIONS
            ),
            st.sampled_from([None, 3, ["yarn"], {"rope_type": "yarn"}]),
        ),
        lambda v: rope_lib.rope_frequencies(v, 16),
    ),
    ("rope_frequencies", "head_dim"): (
        BAD_EVEN,
        lambda v: _rope_frequencies("default", head_dim=v),
    ),
    ("rope_frequencies", "base"): (
        BAD_POSITIVE,
        lambda v: _rope_frequencies("linear", base=v),
    ),
    ("rope_frequencies", "factor"): (
        st.tuples(
            BAD_POSITIVE.filter(lambda v: v is not None),
            st.sampled_from(["linear", "ntk", "dynamic", "yarn", "llama3", "longrope"]),
        ),
        lambda v: _rope_frequencies(v[1], factor=v[0]),
    ),
}
WRONG.update(
    {
        ("rope_frequencies", "attention_factor"): (
            st.tuples(
                BAD_POSITIVE.filter(lambda v: v is not None),
                st.sampled_from(["yarn", "longrope"]),
            ),
            lambda v: _rope_frequencies(v[1], attention_factor=v[0]),
        ),
        ("rope_frequencies", "truncate"): (
            st.sampled_from(["no", "yes", 0, 1, 1.0, [True], "False"]),
            lambda v: _rope_frequencies("yarn", truncate=v),
        ),
        ("rope_frequencies", "short_factor"): (
            st.sampled_from(
                [
                    [[1.0] * 8],
                    [1.0] * 7,
                    [1.0] * 9,
                    "1" * 8,
                    [1.0] * 7 + ["a"],
                    [1.0] * 7 + [math.nan],
                    [1.0] * 7 + [0.0],
                    3.0,
                    torch.ones(2, 4),
                ]
            ),
            lambda v: _rope_frequencies("longrope", short_factor=v),
        ),
        ("rope_frequencies", "long_factor"): (
            st.sampled_from(
                [
                    [[2.0] * 8],
                    [2.0] * 3,
                    [2.0] * 7 + [-1.0],
                    [2.0] * 7 + [math.inf],
                    None,
                ]
            ),
            lambda v: _rope_frequencies("longrope", long_factor=v),
        ),
        ("rope_frequencies", "low_freq_factor"): (
            BAD_POSITIVE.filter(lambda v: v is not None),
            lambda v: _rope_frequencies("llama3", low_freq_factor=v),
        ),
        ("rope_frequencies", "high_freq_factor"): (
            BAD_POSITIVE,
            lambda v: _rope_frequencies("llama3", high_freq_factor=v),
        ),
        ("rope_frequencies", "original_max_position_embeddings"): (
            st.one_of(NON_POSITIVE, NON_FINITE, st.sampled_from(["4096", [64], True])),
            lambda v: _rope_frequencies("yarn", original_max_position_embeddings=v),
        ),
        ("rope_frequencies", "max_position_embeddings"): (
            st.one_of(NON_POSITIVE, NON_FINITE, st.sampled_from(["4096", None])),
            lambda v: _rope_frequencies("dynamic", max_position_embeddings=v),
        ),
        ("rope_frequencies", "seq_len"): (
            st.one_of(
                NON_POSITIVE.filter(lambda v: v != 0),
                NON_FINITE,
                st.sampled_from(["128", torch.ones(3), [128]]),
            ),
            lambda v: _rope_frequencies("dynamic", seq_len=v),
        ),
        ("rope_frequencies", "beta_fast"): (
            st.one_of(
                NON_FINITE, st.floats(-100, -0.001), st.sampled_from(["32", [32]])
            ),
            lambda v: _rope_frequencies("yarn", beta_fast=v),
        ),
        ("rope_frequencies", "mscale"): (
            st.one_of(NON_FINITE, st.sampled_from(["1", [1.0]])),
            lambda v: _rope_frequencies("yarn", mscale=v, mscale_all_dim=1.0),
        ),
        ("rotation_2d", "angle"): (
            st.one_of(
                st.sampled_from(
                    [
                        None,
                        "1.0",
                        {"a": 1},
                        [1.0, "b"],
                        [[1.0], [1.0, 2.0]],
                        1 + 1j,
                        torch.ones(2, dtype=torch.complex64),
                        torch.ones(2, dtype=torch.bool),
                    ]
                ),
                NON_FINITE,
            ),
            lambda v: rope_lib.rotation_2d(v),
        ),
        ("rotation_matrix", "position"): (
            st.one_of(st.sampled_from([None, "3", [3], torch.ones(2)]), NON_FINITE),
            lambda v: rope_lib.rotation_matrix(v, 8),
        ),
        ("rotation_matrix", "head_dim"): (
            BAD_EVEN,
            lambda v: rope_lib.rotation_matrix(1.0, v),
        ),
        ("rotation_matrix", "inv_freq"): (
            BAD_INV_FREQ,
            lambda v: rope_lib.rotation_matrix(1.0, 8, inv_freq=v),
        ),
        ("RotaryEmbedding", "head_dim"): (
            BAD_EVEN,
            lambda v: rope_lib.RotaryEmbedding(v),
        ),
        ("RotaryEmbedding", "base"): (
            BAD_POSITIVE,
            lambda v: rope_lib.RotaryEmbedding(8, v),
        ),
        ("RotaryEmbedding", "attention_factor"): (
            BAD_POSITIVE,
            lambda v: rope_lib.RotaryEmbedding(8, attention_factor=v),
        ),
        ("RotaryEmbedding", "inv_freq"): (
            BAD_INV_FREQ,
            lambda v: rope_lib.RotaryEmbedding(8, inv_freq=v),
        ),
        ("RotaryEmbedding", "x"): (BAD_X, lambda v: rope_lib.RotaryEmbedding(8)(v)),
        ("RotaryEmbedding", "positions"): (
            BAD_POSITIONS.filter(lambda v: v is not None),
            lambda v: rope_lib.RotaryEmbedding(8)(X, v),
        ),
        ("LearnedPositionEmbedding", "positions"): (
            st.sampled_from(
                [
                    torch.tensor([0, 1, 2, 9]),
                    torch.tensor([-1, 0, 1, 2]),
                    torch.arange(4.0),
                    torch.arange(3),
                    "0123",
                ]
            ),
            lambda v: rope_lib.LearnedPositionEmbedding(8, 4)(torch.randn(2, 4, 4), v),
        ),
        ("LearnedPositionEmbedding", "x"): (
            st.one_of(
                NOT_A_TENSOR,
                st.just(torch.ones(2, 4, 4, dtype=torch.int64)),
                st.just(torch.ones(2, 4, 5)),
            ),
            lambda v: rope_lib.LearnedPositionEmbedding(8, 4)(v),
        ),
        ("PositionalSelfAttention", "position"): (
            st.one_of(
                st.text(max_size=10).filter(
                    lambda s: s not in rope_lib.POSITION_SCHEMES
                ),
                st.sampled_from([None, ["rope"]]),
            ),
            lambda v: rope_lib.PositionalSelfAttention(8, 2, v),
        ),
        ("PositionalSelfAttention", "causal"): (
            st.sampled_from(["yes", 1, None]),
            lambda v: rope_lib.PositionalSelfAttention(8, 2, causal=v),
        ),
        ("PositionalSelfAttention", "rope"): (
            st.sampled_from(
                [
                    (torch.ones(3), 1.0),
                    (torch.ones(2), "1"),
                    (torch.ones(2), -1.0),
                    "linear",
                    (torch.ones(2),),
                ]
            ),
            lambda v: rope_lib.PositionalSelfAttention(8, 2, rope=v),
        ),
        ("PositionalSelfAttention", "positions"): (
            st.tuples(
                st.sampled_from(rope_lib.POSITION_SCHEMES),
                st.sampled_from(
                    [
                        torch.arange(5),
                        torch.zeros(2, 2, 4),
                        "0123",
                        torch.tensor([0.0, math.nan, 1.0, 2.0]),
                    ]
                ),
            ),
            lambda v: rope_lib.PositionalSelfAttention(8, 2, v[0])(
                torch.randn(2, 4, 8), v[1]
            ),
        ),
        ("PositionalSelfAttention", "x"): (
            st.one_of(
                NOT_A_TENSOR,
                st.sampled_from(
                    [
                        torch.ones(2, 4, 6),
                        torch.ones(4, 8),
                        torch.ones(2, 4, 8, dtype=torch.int64),
                    ]
                ),
            ),
            lambda v: rope_lib.PositionalSelfAttention(8, 2)(v),
        ),
        ("wavelengths", "inv_freq"): (
            st.one_of(
                NOT_A_TENSOR,
                st.sampled_from(
                    [torch.zeros(4), -torch.ones(4), torch.tensor([1.0, math.nan])]
                ),
            ),
            lambda v: rope_lib.extension_analysis.wavelengths(v),
        ),
        ("yarn_correction_dim", "num_rotations"): (
            BAD_POSITIVE,
            lambda v: rope_lib.scaling.yarn_correction_dim(v, 64, 10000.0, 2048),
        ),
        ("yarn_correction_dim", "base"): (
            st.one_of(BAD_POSITIVE, st.just(1.0), st.just(1)),
            lambda v: rope_lib.scaling.yarn_correction_dim(32, 64, v, 2048),
        ),
        ("yarn_correction_dim", "original_length"): (
            BAD_POSITIVE,
            lambda v: rope_lib.scaling.yarn_correction_dim(32, 64, 10000.0, v),
        ),
        ("yarn_correction_range", "truncate"): (
            st.sampled_from(["no", 1, 0.0, [False]]),
            lambda v: rope_lib.scaling.yarn_correction_range(
                64, 10000.0, 2048, truncate=v
            ),
        ),
        ("yarn_correction_range", "beta_fast"): (
            BAD_POSITIVE,
            lambda v: rope_lib.scaling.yarn_correction_range(
                64, 10000.0, 2048, beta_fast=v
            ),
        ),
        ("ramp_by_pair", "low"): (
            st.one_of(
                NOT_A_NUMBER.filter(lambda v: not isinstance(v, bool)),
                NON_FINITE,
                st.floats(10.001, 1e6),
            ),
            lambda v: rope_lib.extension_analysis.ramp_by_pair(v, 10.0, 16),
        ),
        ("ramp_by_pair", "n_pairs"): (
            BAD_COUNT.filter(lambda v: v != 0),
            lambda v: rope_lib.extension_analysis.ramp_by_pair(1.0, 3.0, v),
        ),
        ("yarn_get_mscale", "scale"): (
            BAD_POSITIVE,
            lambda v: rope_lib.scaling.yarn_get_mscale(v),
        ),
        ("yarn_attention_factor", "factor"): (
            BAD_POSITIVE,
            lambda v: rope_lib.scaling.yarn_attention_factor(v),
        ),
        ("yarn_attention_factor", "mscale_all_dim"): (
            st.just(-10 / math.log(4.0)),
            lambda v: rope_lib.scaling.yarn_attention_factor(4.0, 1.0, v),
        ),
        ("ramp_by_turns", "beta"): (
            st.one_of(
                st.floats(-100, 1.0),
                NON_FINITE,
                NOT_A_NUMBER.filter(lambda v: not isinstance(v, bool)),
            ),
            lambda v: rope_lib.extension_analysis.ramp_by_turns(
                rope_lib.inv_frequencies(16), 64, 1.0, v
            ),
        ),
        ("angle_coverage", "length"): (
            BAD_COUNT,
            lambda v: rope_lib.extension_analysis.angle_coverage(
                rope_lib.inv_frequencies(16), v
            ),
        ),
        ("first_pair_longer_than", "length"): (
            BAD_POSITIVE,
            lambda v: rope_lib.extension_analysis.first_pair_longer_than(
                rope_lib.inv_frequencies(16), v
            ),
        ),
        ("first_pair_longer_than", "inv_freq"): (
            st.one_of(NOT_A_TENSOR, st.just(torch.zeros(4))),
            lambda v: rope_lib.extension_analysis.first_pair_longer_than(v, 100.0),
        ),
        ("implied_ramp", "factor"): (
            st.one_of(BAD_POSITIVE, st.just(1.0)),
            lambda v: rope_lib.extension_analysis.implied_ramp(
                rope_lib.inv_frequencies(16), rope_lib.inv_frequencies(16) / 2, v
            ),
        ),
        ("sinusoidal_shift_matrix", "offset"): (
            st.one_of(st.sampled_from([None, "1", [1]]), NON_FINITE),
            lambda v: rope_lib.sinusoidal.sinusoidal_shift_matrix(v, 8),
        ),
        ("sinusoidal_at", "positions"): (
            st.one_of(st.sampled_from([None, "1", [1, "a"]]), NON_FINITE),
            lambda v: rope_lib.sinusoidal.sinusoidal_at(v, 8),
        ),
        ("closed_form_score", "theta"): (
            st.one_of(st.sampled_from(["0.1", None, torch.ones(3)]), NON_FINITE),
            lambda v: rope_lib.derivation.closed_form_score(
                torch.ones(4), torch.ones(4), 1, 0, v
            ),
        ),
        ("from_polar", "angle"): (
            st.one_of(st.sampled_from(["1", None, {"a": 1}]), NON_FINITE),
            lambda v: rope_lib.derivation.from_polar(1.0, v),
        ),
        ("alibi_span", "threshold"): (
            st.one_of(
                NOT_A_NUMBER.filter(lambda v: not isinstance(v, bool)),
                NON_FINITE,
                st.floats(-10, 1.0),
            ),
            lambda v: rope_lib.alibi.alibi_span(rope_lib.alibi_slopes(4), v),
        ),
        ("alibi_query_attention", "causal"): (
            st.sampled_from(["yes", 1, None]),
            lambda v: rope_lib.alibi.alibi_query_attention(
                torch.zeros(4, 6), 0.5, 3, v
            ),
        ),
        ("long_term_decay_bound", "distances"): (
            st.one_of(st.sampled_from(["1", None, [1, "a"]]), NON_FINITE),
            lambda v: rope_lib.analysis.long_term_decay_bound(v, 16),
        ),
        ("angle_error", "dtype"): (
            st.sampled_from(["bfloat16", torch.int32, None, 16]),
            lambda v: rope_lib.analysis.angle_error([1, 2], 16, dtype=v),
        ),
    }
)


def _names_the_argument(message: str, function: str, argument: str) -> bool:
    if argument in message:
        return True
    # the parts of x that are wrong are named as x.shape[-1] or head_dim (x.shape[-1])
    return argument in ("x", "xq", "xk") and (
        "head_dim" in message or "x.shape" in message
    )


WRONG_KEYS = sorted(WRONG)


@SETTINGS
@given(st.data())
def test_wrong_input_is_refused_with_the_argument_named(data):
    key = data.draw(st.sampled_from(WRONG_KEYS), label="function, argument")
    strategy, call = WRONG[key]
    value = data.draw(strategy, label="bad value")
    _expect_named_error(key, call, value)


@pytest.mark.parametrize("key", WRONG_KEYS, ids=[f"{f}.{a}" for f, a in WRONG_KEYS])
def test_each_argument_refuses_its_wrong_values(key):
    strategy, call = WRONG[key]

    @settings(
        max_examples=12,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def check(value):
        _expect_named_error(key, call, value)

    check()


def _expect_named_error(key, call, value):
    function, argument = key
    COUNTS["wrong input generated"] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as info:
            call(value)
    message = str(info.value)
    assert _names_the_argument(message, function, argument), (key, value, message)
    assert "got" in message or "missing" in message, (key, value, message)
    COUNTS["refused with the argument named"] += 1


@SETTINGS
@given(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20).filter(
        lambda s: s not in PARAMETERS
    )
)
def test_unknown_parameter_names_are_refused(name):
    COUNTS["wrong input generated"] += 1
    with pytest.raises(ValueError) as info:
        rope_lib.rope_frequencies("linear", 16, factor=2.0, **{name: 1.0})
    assert repr(name) in str(info.value)
    COUNTS["refused with the argument named"] += 1


def test_a_typo_gets_a_suggestion():
    with pytest.raises(ValueError, match="'factr' -> 'factor'"):
        rope_lib.rope_frequencies("linear", 16, factr=2.0)


@pytest.mark.parametrize(
    "rope_type,missing",
    [
        ("linear", "factor"),
        ("ntk", "factor"),
        ("dynamic", "factor"),
        ("dynamic", "max_position_embeddings"),
        ("yarn", "original_max_position_embeddings"),
        ("llama3", "factor"),
        ("llama3", "low_freq_factor"),
        ("llama3", "high_freq_factor"),
        ("longrope", "short_factor"),
        ("longrope", "long_factor"),
    ],
)
def test_missing_parameters_are_named(rope_type, missing):
    params = {
        "linear": {"factor": 2.0},
        "ntk": {"factor": 2.0},
        "dynamic": {"factor": 2.0, "max_position_embeddings": 64},
        "yarn": {"factor": 4.0, "original_max_position_embeddings": 64},
        "llama3": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64,
        },
        "longrope": {
            "short_factor": [1.0] * 8,
            "long_factor": [2.0] * 8,
            "original_max_position_embeddings": 64,
        },
    }[rope_type]
    params.pop(missing)
    with pytest.raises(ValueError, match=missing):
        rope_lib.rope_frequencies(rope_type, 16, **params)


def test_reversed_bounds_warn_where_transformers_warns():
    with pytest.warns(UserWarning, match="beta_fast"):
        rope_lib.rope_frequencies(
            "yarn",
            16,
            factor=4.0,
            original_max_position_embeddings=64,
            beta_fast=1.0,
            beta_slow=32.0,
        )
    with pytest.warns(UserWarning, match="high_freq_factor"):
        rope_lib.rope_frequencies(
            "llama3",
            16,
            factor=8.0,
            low_freq_factor=4.0,
            high_freq_factor=1.0,
            original_max_position_embeddings=64,
        )
    with pytest.raises(ValueError, match="low"):
        rope_lib.extension_analysis.ramp_by_pair(5.0, 2.0, 8)


def test_attention_and_mrope_read_batch_positions_by_rank_too():
    # the same rule in PositionalSelfAttention and in each axis of apply_mrope
    gen = torch.Generator().manual_seed(6)
    block = rope_lib.PositionalSelfAttention(8, 2, "rope")  # 2 heads, batch 2
    x = torch.randn(2, 5, 8, generator=gen)
    positions = torch.randint(0, 40, (2, 5), generator=gen)
    with torch.no_grad():
        together = block(x, positions)
        apart = torch.cat([block(x[b : b + 1], positions[b]) for b in range(2)])
    torch.testing.assert_close(together, apart)
    q = torch.randn(2, 2, 5, 8, generator=gen)  # batch == heads
    ids = torch.stack([positions, positions + 1, positions + 2])  # [3, batch, seq]
    got = rope_lib.apply_mrope(q, ids, [2, 1, 1])
    want = rope_lib.apply_mrope(q, ids[:, :, None, :], [2, 1, 1])  # [3, batch, 1, seq]
    torch.testing.assert_close(got, want, rtol=0, atol=0)
