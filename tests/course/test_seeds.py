"""The seeds' worked numbers (../shared/seeds), reproduced by rope_lib."""

import torch

import rope_lib


def test_seed_002_worked_pair():
    # q = (0.5, -1.0), k = (1.2, 0.3), theta = 0.1, position m = 2: rotated by 0.2 rad
    theta = torch.tensor([0.1])
    q = rope_lib.apply_rope(
        torch.tensor([[0.5, -1.0]]), torch.tensor([2]), inv_freq=theta
    )
    k = rope_lib.apply_rope(
        torch.tensor([[1.2, 0.3]]), torch.tensor([2]), inv_freq=theta
    )
    assert [round(v, 4) for v in q[0].tolist()] == [0.6887, -0.8807]
    assert [round(v, 4) for v in k[0].tolist()] == [1.1165, 0.5324]


def test_seed_004_llama_grouped_query_example():
    # batch 2, length 5, 2 query heads and 1 key head of size 8; freqs [1, 0.1, 0.01, 0.001]
    xq = torch.arange(2 * 5 * 2 * 8, dtype=torch.float32).reshape(2, 5, 2, 8)
    xk = torch.arange(2 * 5 * 1 * 8, dtype=torch.float32).reshape(2, 5, 1, 8)
    assert xq[0, 1, 1, 4:6].tolist() == [28.0, 29.0]
    torch.testing.assert_close(
        rope_lib.inv_frequencies(8), torch.tensor([1.0, 0.1, 0.01, 0.001])
    )
    freqs_cis = rope_lib.precompute_freqs_cis(8, 5)
    assert [
        round(v, 4) for v in (freqs_cis[1, 2].real.item(), freqs_cis[1, 2].imag.item())
    ] == [0.9999, 0.01]  # the seed prints 0.9999+0.0100j
    xq_out, xk_out = rope_lib.apply_rotary_emb(xq, xk, freqs_cis)
    assert [round(v, 4) for v in xq_out[0, 1, 1, 4:6].tolist()] == [27.7086, 29.2785]
    # position 0 is left as it was; the same position is rotated alike in both samples
    torch.testing.assert_close(xk_out[:, 0], xk[:, 0])
    angle_0 = torch.atan2(xk_out[:, 1, 0, 1], xk_out[:, 1, 0, 0]) - torch.atan2(
        xk[:, 1, 0, 1], xk[:, 1, 0, 0]
    )
    torch.testing.assert_close(angle_0, torch.tensor([1.0, 1.0]))


def test_seed_003_alibi_slopes_are_not_linear():
    # the seed's linear slopes m * 1..n with m = -0.1 against the paper's 2^(-8h/n) for 8 heads
    assert torch.equal(
        rope_lib.alibi_slopes(8), torch.tensor([2.0 ** (-h) for h in range(1, 9)])
    )
    causal = rope_lib.alibi_bias(4, 8)
    assert causal[0, 3, 0] == -0.5 * 3 and causal[0, 0, 3] == float("-inf")
    symmetric = rope_lib.alibi_bias(4, 8, causal=False)
    assert symmetric[0, 0, 3] == symmetric[0, 3, 0] == -1.5


def test_yarn_correction_range_of_the_issue():
    # L = 4096, |D| = 128, b = 10,000: pairs 20..46 after rounding outward
    assert rope_lib.scaling.yarn_correction_range(128, 10000.0, 4096) == (20, 46)
