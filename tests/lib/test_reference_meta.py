"""rope_lib against Meta's LLaMA reference (llama/model.py), written here from its published
definition: complex64 freqs_cis, x viewed as complex pairs (2i, 2i+1)."""

import pytest
import torch

import rope_lib


def meta_precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def meta_reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def meta_apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = meta_reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


@pytest.mark.parametrize(
    "dim,end,theta", [(8, 5, 10000.0), (128, 4096, 10000.0), (64, 300, 500000.0)]
)
def test_precompute_freqs_cis_matches_meta(dim, end, theta):
    got = rope_lib.precompute_freqs_cis(dim, end, theta)
    assert got.dtype == torch.complex64
    torch.testing.assert_close(got, meta_precompute_freqs_cis(dim, end, theta))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("n_heads,n_kv_heads", [(8, 8), (8, 2), (4, 1)])
def test_apply_rotary_emb_matches_meta_with_grouped_query_shapes(
    dtype, n_heads, n_kv_heads
):
    torch.manual_seed(0)
    batch, seq, head_dim, start = 2, 33, 64, 17
    xq = torch.randn(batch, seq, n_heads, head_dim).to(dtype)
    xk = torch.randn(batch, seq, n_kv_heads, head_dim).to(dtype)
    freqs_cis = meta_precompute_freqs_cis(head_dim, 128)[start : start + seq]
    want_q, want_k = meta_apply_rotary_emb(xq, xk, freqs_cis)
    got_q, got_k = rope_lib.apply_rotary_emb(xq, xk, freqs_cis)
    assert got_q.dtype == got_k.dtype == dtype and got_k.shape == xk.shape
    torch.testing.assert_close(got_q, want_q)
    torch.testing.assert_close(got_k, want_k)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_apply_rope_interleaved_matches_meta(dtype):
    torch.manual_seed(1)
    x = torch.randn(2, 300, 4, 32).to(dtype)  # Meta's [batch, seq, heads, head_dim]
    want, _ = meta_apply_rotary_emb(x, x, meta_precompute_freqs_cis(32, 300))
    # apply_rope wants [..., seq, head_dim]: move the heads in front of seq and back
    got = rope_lib.apply_rope(x.transpose(1, 2), torch.arange(300)).transpose(1, 2)
    torch.testing.assert_close(got, want)


def test_apply_rope_with_positions_offset_matches_meta_slice():
    torch.manual_seed(2)
    x = torch.randn(1, 3, 10, 16)
    want, _ = meta_apply_rotary_emb(
        x.transpose(1, 2), x.transpose(1, 2), meta_precompute_freqs_cis(16, 100)[50:60]
    )
    got = rope_lib.apply_rope(x, torch.arange(50, 60))
    torch.testing.assert_close(got, want.transpose(1, 2))
