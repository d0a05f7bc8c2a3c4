"""Lesson 2 (notebooks/02_learned_positions.ipynb): the claims about learned tables.

Source-note map (maintainers only): note 003's learned listing (a zero-initialised
nn.Parameter [1, L, d_model], `x += pos_encoding[:, :seq_len, :]`) and its "shorter
inputs are truncated or padded"; note 000's "slicing copies, view does not"; issue 9's
"unreached rows stay at their random initial values" (true without weight decay only).
Expected values come from the optimizers' update rules written out here."""

import math

import pytest
import torch

from rope_lib import LearnedPositionEmbedding


def test_a_shorter_input_reads_the_first_rows_unchanged():
    torch.manual_seed(0)
    learned = LearnedPositionEmbedding(max_len=16, d_model=8)
    for n in (1, 5, 10, 16):
        x = torch.randn(3, n, 8, dtype=torch.float64)
        out = learned(x.float())
        assert out.shape == (3, n, 8)
        rows = learned.table[:n].detach().double().expand(3, n, 8)
        assert torch.allclose(out.double() - x, rows, atol=1e-6)
        assert torch.equal(learned(torch.zeros(1, n, 8))[0], learned.table[:n])


def test_a_basic_slice_is_a_view_and_a_list_index_is_a_copy():
    table = torch.zeros(1, 16, 8)
    rows = table[:, :10, :]
    assert rows.data_ptr() == table.data_ptr() and rows._base is table
    rows[0, 3, 0] = 1.0
    assert table[0, 3, 0].item() == 1.0
    picked = table[:, [0, 3], :]
    picked[0, 1, 0] = 5.0
    assert table[0, 3, 0].item() == 1.0 and picked._base is None


def test_gradients_flow_through_the_slice_into_the_rows_it_covers_only():
    table = torch.zeros(1, 16, 8, requires_grad=True)
    (torch.ones(2, 10, 8) + table[:, :10, :]).sum().backward()
    assert torch.equal(table.grad[0, :10], torch.full((10, 8), 2.0))
    assert torch.equal(table.grad[0, 10:], torch.zeros(6, 8))


def test_the_listing_slices_past_its_end_quietly_and_fails_at_the_addition():
    table = torch.zeros(1, 16, 8)
    assert table[:, :17, :].shape == (1, 16, 8)
    with pytest.raises(RuntimeError, match="17.*16"):
        torch.zeros(2, 17, 8) + table[:, :17, :]
    with pytest.raises(ValueError, match="max_len = 16"):
        LearnedPositionEmbedding(16, 8)(torch.zeros(2, 17, 8))


def train_on_ten_tokens(optimizer_class, steps=50, init=None, **options):
    torch.manual_seed(0)
    learned = LearnedPositionEmbedding(max_len=16, d_model=8)
    if init is not None:
        with torch.no_grad():
            learned.table.copy_(init)
    start = learned.table.detach().clone()
    optimizer = optimizer_class(learned.parameters(), **options)
    target = torch.randn(4, 10, 8)
    for _ in range(steps):
        loss = (learned(torch.zeros(4, 10, 8)) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return start, learned.table.detach()


@pytest.mark.parametrize(
    "optimizer_class, options",
    [
        (torch.optim.SGD, dict(lr=0.1)),
        (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
        (torch.optim.Adam, dict(lr=0.01)),
    ],
)
def test_without_weight_decay_unreached_rows_keep_their_start(optimizer_class, options):
    start, end = train_on_ten_tokens(optimizer_class, **options)
    assert torch.equal(end[10:], start[10:])
    assert not torch.equal(end[:10], start[:10])


def test_adamw_shrinks_unreached_rows_by_one_minus_lr_wd_per_step():
    lr, wd, steps = 0.01, 0.1, 50
    start, end = train_on_ten_tokens(
        torch.optim.AdamW, steps=steps, lr=lr, weight_decay=wd
    )
    factor = (1 - lr * wd) ** steps  # decoupled decay, zero Adam step
    expected = start[10:].double() * factor
    assert torch.allclose(end[10:].double(), expected, rtol=1e-5, atol=0)
    assert factor == pytest.approx(math.exp(steps * math.log1p(-lr * wd)))


def test_coupled_weight_decay_also_pulls_unreached_rows_towards_zero():
    start, end = train_on_ten_tokens(torch.optim.Adam, lr=0.01, weight_decay=0.1)
    assert (end[10:].norm(dim=1) < start[10:].norm(dim=1)).all()
    start, end = train_on_ten_tokens(torch.optim.SGD, lr=0.1, weight_decay=0.1)
    assert torch.allclose(end[10:], start[10:] * (1 - 0.1 * 0.1) ** 50, rtol=1e-5)


def test_a_zero_initialised_table_keeps_zeros_in_unreached_rows_even_with_decay():
    start, end = train_on_ten_tokens(
        torch.optim.AdamW, init=torch.zeros(16, 8), lr=0.01, weight_decay=0.1
    )
    assert torch.equal(start, torch.zeros(16, 8))
    assert torch.equal(end[10:], torch.zeros(6, 8))
    assert not torch.equal(end[:10], torch.zeros(10, 8))


def test_the_long_run_decay_factor_quoted_in_the_lesson():
    # lr 6e-4, weight decay 0.1, 100,000 steps at a constant rate: about e^-6
    factor = (1 - 6e-4 * 0.1) ** 100_000
    assert factor == pytest.approx(math.exp(-6), rel=2e-3)
    assert f"{factor:.4f}" == "0.0025"
