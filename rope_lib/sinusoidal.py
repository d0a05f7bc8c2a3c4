"""Absolute position encodings: the original Transformer's sinusoids and a learned table.

Vaswani et al. (2017, "Attention Is All You Need", section 3.5):

    PE[m, 2i]   = sin(m / b ** (2i / d_model))   (m: the position, i: the pair)
    PE[m, 2i+1] = cos(m / b ** (2i / d_model))

Each column pair (2i, 2i+1) is a point on a circle turning at frequency base ** (-2i/d_model), so
PE[m + Delta] is PE[m] rotated pair by pair by Delta times those frequencies: a linear map
M_Delta that does not depend on m (sinusoidal_shift_matrix). That property is the bridge to RoPE.
"""

from __future__ import annotations

import torch
from torch import nn

from ._checks import (
    as_real_float64,
    require_even,
    require_float_tensor,
    require_number,
    require_positive_float,
    require_positive_int,
    require_tensor,
)
from .language import _
from .rotary import pair_frequencies, rotation_2d


def _frequencies(d_model: int, base: float, device=None) -> torch.Tensor:
    """theta_i = base ** (-2i / d_model), float64 (pair_frequencies, the library's one formula)."""
    return pair_frequencies(d_model, base, dtype=torch.float64, device=device)


def sinusoids(positions: torch.Tensor, d_model: int, base: float) -> torch.Tensor:
    """PE rows at `positions` (any shape), float64 [*positions.shape, d_model], on positions'
    device: column 2i = sin(m theta_i), column 2i+1 = cos(m theta_i)."""
    freqs = _frequencies(d_model, base, positions.device)
    angles = positions.to(torch.float64).unsqueeze(-1) * freqs
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)


def sinusoidal_encoding(
    seq_len: int, d_model: int, base: float = 10000.0
) -> torch.Tensor:
    """The sinusoidal table, float32 [seq_len, d_model]: column 2i = sin(m theta_i),
    column 2i+1 = cos(m theta_i), theta_i = base ** (-2i / d_model). Angles in float64.
    (Vaswani et al. 2017, "Attention Is All You Need", section 3.5.)"""
    require_positive_int("seq_len", seq_len)
    require_even("d_model", d_model)
    base = require_positive_float("base", base)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _frequencies(
        d_model, base
    )
    return (
        torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2).to(torch.float32)
    )


def sinusoidal_shift_matrix(
    offset: float, d_model: int, base: float = 10000.0
) -> torch.Tensor:
    """M_Delta with PE[m + Delta] = M_Delta @ PE[m] for every m, float64 [d_model, d_model].

    For the pair (sin a, cos a), a = m theta, shifting by Delta gives (sin(a + Delta theta),
    cos(a + Delta theta)) = [[cos Delta theta, sin Delta theta], [-sin Delta theta, cos Delta theta]]
    @ (sin a, cos a): a rotation by -Delta theta in the (sin, cos) coordinates. M_k is
    block-diagonal with one such block per pair (the linear-shift property Vaswani et al. 2017,
    section 3.5, give as the reason for sinusoids).
    """
    offset = require_number(
        "offset",
        offset.item()
        if isinstance(offset, torch.Tensor) and offset.numel() == 1
        else offset,
    )
    require_even("d_model", d_model)
    base = require_positive_float("base", base)
    return torch.block_diag(*rotation_2d(-offset * _frequencies(d_model, base)))


class LearnedPositionEmbedding(nn.Module):
    """A trainable table of max_len position vectors, added to the token embeddings (BERT, GPT-2;
    Gehring et al. 2017): x'[m] = x[m] + P[m].

    forward(x, positions=None) adds rows 0 .. seq-1 (or the rows at `positions`: integers
    [seq] or [batch, seq]) to x [batch, seq, d_model] and returns x's dtype. Past max_len there
    is no row to read: it raises a ValueError saying so, since the table has simply never seen
    such a position.
    """

    def __init__(self, max_len: int, d_model: int, init_std: float = 0.02):
        super().__init__()
        require_positive_int("max_len", max_len)
        require_positive_int("d_model", d_model)
        self.max_len = max_len
        self.table = nn.Parameter(torch.randn(max_len, d_model) * init_std)

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        require_float_tensor("x", x)
        d_model = self.table.shape[1]
        if x.dim() < 2 or x.shape[-1] != d_model:
            raise ValueError(
                _(
                    "x must be [..., seq, d_model = {d_model}], got shape {x_shape}"
                ).format(d_model=d_model, x_shape=tuple(x.shape))
            )
        seq = x.shape[-2]
        if positions is None:
            if seq > self.max_len:
                raise ValueError(
                    _(
                        "x.shape[-2] (seq) must be <= max_len = {max_len}, the rows of the "
                        "learned table (positions past the training length have no "
                        "embedding), got {seq}"
                    ).format(max_len=self.max_len, seq=seq)
                )
            return x + self.table[:seq].to(device=x.device, dtype=x.dtype)
        require_tensor("positions", positions)
        if (
            positions.is_floating_point()
            or positions.is_complex()
            or positions.dtype == torch.bool
        ):
            raise TypeError(
                _(
                    "positions must be integers (rows of the table), got dtype "
                    "{positions_dtype}"
                ).format(positions_dtype=positions.dtype)
            )
        if positions.dim() < 1 or positions.shape[-1] != seq:
            raise ValueError(
                _(
                    "positions must be [seq] or [batch, seq] with seq = x.shape[-2] = "
                    "{seq}, got shape {positions_shape}"
                ).format(seq=seq, positions_shape=tuple(positions.shape))
            )
        positions = positions.to(x.device)
        if positions.numel() and positions.device.type != "meta":
            low, high = int(positions.min()), int(positions.max())
            if low < 0 or high >= self.max_len:
                raise ValueError(
                    _(
                        "positions must be in 0 .. max_len - 1 = {value}, the rows of the "
                        "learned table, got values from {low} to {high}"
                    ).format(value=self.max_len - 1, low=low, high=high)
                )
        return x + self.table.to(x.device)[positions].to(x.dtype)


# --- The offset dot product and a tiny attention head that reads positions ----------


def sinusoidal_offset_dot(offset, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """PE[m] . PE[m + Delta] for the sinusoidal table (Delta = `offset`), float64, shaped as
    `offset`. Each pair contributes
    sin(a) sin(a + Delta theta_i) + cos(a) cos(a + Delta theta_i) = cos(Delta theta_i), so

        PE[m] . PE[m + Delta] = sum_i cos(Delta theta_i),   theta_i = base ** (-2i / d_model),

    which does not depend on m and is even in Delta (it cannot tell Delta from -Delta); at
    Delta = 0 it is d_model / 2, the squared length of every PE row (Vaswani et al. 2017, section 3.5).
    """
    require_even("d_model", d_model)
    base = require_positive_float("base", base)
    k = as_real_float64("offset", offset)
    return torch.cos(k.unsqueeze(-1) * _frequencies(d_model, base, k.device)).sum(-1)


def _check_table(table) -> torch.Tensor:
    require_tensor("table", table)
    if table.dim() != 2 or table.is_complex() or table.dtype == torch.bool:
        raise ValueError(
            _(
                "table must be a 2-D tensor [positions, d_model] of real numbers, "
                "got {table_dtype} {table_shape}"
            ).format(table_dtype=table.dtype, table_shape=tuple(table.shape))
        )
    return as_real_float64("table", table.detach())


def offset_head_attends_to(table: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """Where a one-head, position-only causal attention looks: int64 [positions].

    Query m scores every key n <= m with s(m, n) = table[m] @ A @ table[n] (A plays the role of
    W_q^T W_k / sqrt(d) acting on the position vectors alone); the result is argmax_n s(m, n).
    """
    table = _check_table(table)
    d = table.shape[1]
    if not isinstance(A, torch.Tensor) or tuple(A.shape) != (d, d):
        shape = tuple(A.shape) if isinstance(A, torch.Tensor) else type(A).__name__
        raise ValueError(
            _(
                "A must be a tensor of shape ({d}, {d}) to match table, got {shape}"
            ).format(d=d, shape=shape)
        )
    A = as_real_float64("A", A.detach()).to(table.device)
    scores = table @ A @ table.T
    future = torch.ones_like(scores, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).argmax(-1)


def _check_training_range(table: torch.Tensor, offset, train_len) -> None:
    """train_offset_head's offset (an int in [0, train_len)) and train_len (at most
    table.shape[0])."""
    if (
        isinstance(offset, bool)
        or not isinstance(offset, int)
        or not 0 <= offset < train_len
    ):
        raise ValueError(
            _(
                "offset must be an int in [0, train_len = {train_len}), got {offset!r}"
            ).format(train_len=train_len, offset=offset)
        )
    if train_len > table.shape[0]:
        raise ValueError(
            _(
                "train_len must be <= table.shape[0] = {table_shape}, got {train_len}"
            ).format(table_shape=table.shape[0], train_len=train_len)
        )


def train_offset_head(
    table: torch.Tensor,
    offset: int = 1,
    train_len: int = 32,
    steps: int = 300,
    lr: float = 0.05,
) -> torch.Tensor:
    """Fit A (float64 [d, d], from zeros, `steps` Adam steps) so that query m attends to key m - offset.

    Trains only on the rows table[:train_len] (queries m = offset .. train_len - 1, causal
    softmax over keys n <= m, cross-entropy with target n = m - offset), as a model trained on
    sequences of train_len tokens would. Deterministic: no random initialisation. The result can
    then be tested past train_len with offset_head_attends_to. For sinusoids an exact solution
    that works at every position exists, A = M_offset = sinusoidal_shift_matrix(offset, d), since
    table[m] @ M_o @ table[n] = (M_o^T table[m]) . table[n] = PE[m - o] . PE[n]; lesson 2 shows
    that training on a short range does not find it.
    """
    table = _check_table(table)
    require_positive_int("train_len", train_len, minimum=2)
    require_positive_int("steps", steps)
    _check_training_range(table, offset, train_len)
    rows = table[:train_len]
    d = rows.shape[1]
    A = torch.zeros(d, d, dtype=torch.float64, requires_grad=True)
    future = torch.ones(train_len, train_len, dtype=torch.bool).triu(1)
    targets = torch.arange(train_len - offset)
    # Adam written out (Kingma & Ba 2015, default betas): torch.optim's first use costs seconds of
    # imports, more than this whole fit. One thread: the tensors are tiny, and on a busy machine
    # threads waiting for each other made these 300 steps take 13 s instead of 0.4 s (measured).
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    m1, m2 = torch.zeros_like(A), torch.zeros_like(A)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for t in range(1, steps + 1):
            scores = (rows @ A @ rows.T).masked_fill(future, float("-inf"))
            loss = nn.functional.cross_entropy(scores[offset:], targets)
            (grad,) = torch.autograd.grad(loss, A)
            m1.mul_(beta1).add_(grad, alpha=1 - beta1)
            m2.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = lr * (m1 / (1 - beta1**t)) / ((m2 / (1 - beta2**t)).sqrt() + eps)
            with torch.no_grad():
                A -= step
    finally:
        torch.set_num_threads(threads)
    return A.detach()


def sinusoidal_at(positions, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """PE at any positions (negative or fractional too), float64 [*positions.shape, d_model]:
    the same columns as sinusoidal_encoding (2i = sin(m theta_i), 2i+1 = cos(m theta_i)) without
    building a table from 0 (Vaswani et al. 2017, section 3.5)."""
    require_even("d_model", d_model)
    base = require_positive_float("base", base)
    return sinusoids(as_real_float64("positions", positions), d_model, base)


#: The optimizers train_learned_table offers, with their learning rates.
TABLE_OPTIMIZERS = {"SGD": 0.5, "Adam": 0.01, "AdamW": 0.01}


def train_learned_table(
    train_len: int,
    steps: int,
    optimizer: str = "Adam",
    *,
    max_len: int = 16,
    d_model: int = 8,
    batch: int = 4,
    weight_decay: float = 0.1,
    init_std: float = 0.02,
    seed: int = 0,
) -> torch.Tensor:
    """A learned position table trained on sequences of train_len tokens only: the table
    after every step, float64 [steps + 1, max_len, d_model] (index 0: its random start).

    A LearnedPositionEmbedding(max_len, d_model, init_std) and a random target
    [batch, train_len, d_model] are drawn from `seed` (the global random state is left as it
    was); each step adds the table to zeros, takes the mean squared error against the target
    and steps the optimizer: "SGD" (lr 0.5), "Adam" (lr 0.01) or "AdamW" (lr 0.01, decoupled
    weight decay `weight_decay`, Loshchilov & Hutter 2019). Rows train_len .. max_len - 1 take
    part in no forward pass, so their gradient is zero: SGD and Adam leave them as they
    started, AdamW multiplies them by (1 - lr * weight_decay) at every step.
    """
    require_positive_int("train_len", train_len)
    require_positive_int("steps", steps, minimum=0)
    require_positive_int("max_len", max_len)
    if train_len > max_len:
        raise ValueError(
            _(
                "train_len must be <= max_len = {max_len} (the table's rows), got "
                "{train_len}"
            ).format(max_len=max_len, train_len=train_len)
        )
    if optimizer not in TABLE_OPTIMIZERS:
        raise ValueError(
            _("optimizer must be one of {table_optimizers}, got {optimizer!r}").format(
                table_optimizers=tuple(TABLE_OPTIMIZERS), optimizer=optimizer
            )
        )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        learned = LearnedPositionEmbedding(max_len, d_model, init_std).double()
        target = torch.randn(batch, train_len, d_model).double()
    lr = TABLE_OPTIMIZERS[optimizer]
    make = {
        "SGD": lambda p: torch.optim.SGD(p, lr=lr),
        "Adam": lambda p: torch.optim.Adam(p, lr=lr),
        "AdamW": lambda p: torch.optim.AdamW(p, lr=lr, weight_decay=weight_decay),
    }[optimizer]
    opt = make(learned.parameters())
    tables = [learned.table.detach().clone()]
    inputs = torch.zeros_like(target)
    for _step in range(steps):
        loss = (learned(inputs) - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tables.append(learned.table.detach().clone())
    return torch.stack(tables)


#: The position-only tasks train_position_head offers (lesson 2, what a learned table learns).
HEAD_TASKS = ("previous", "recent")


def train_position_head(
    task: str,
    seed: int = 0,
    *,
    train_len: int = 32,
    d_model: int = 16,
    steps: int = 400,
    lr: float = 0.05,
) -> torch.Tensor:
    """Train a learned position table with a position-only causal head; return the table,
    float64 [train_len, d_model].

    The table P (one row per position, random start of size 0.5) and the head's matrix A
    (random start of size 0.1) are trained together, `steps` Adam steps at `lr`, on the scores
    s(m, n) = P[m] A P[n], n <= m (softmax over the keys each query sees):

    - "previous": every query m >= 1 should attend to n = m - 1 (cross-entropy), the task of
      lesson 2's sinusoidal head;
    - "recent": every query m should spread its attention over the recent past, the weight of
      key n proportional to exp(-(m - n) / 2) (cross-entropy against that distribution), a task
      that rewards nearness rather than one exact offset.

    Draws from `seed` without touching the global random state. What the rows learn depends on
    the task (lesson 2 compares them with position_similarity).
    """
    if task not in HEAD_TASKS:
        raise ValueError(
            _("task must be one of {tasks}, got {task!r}").format(
                tasks=HEAD_TASKS, task=task
            )
        )
    require_positive_int("train_len", train_len, minimum=2)
    require_positive_int("d_model", d_model)
    require_positive_int("steps", steps)
    generator = torch.Generator().manual_seed(seed)
    f64 = torch.float64
    P = (
        0.5 * torch.randn(train_len, d_model, generator=generator, dtype=f64)
    ).requires_grad_()
    A = (
        0.1 * torch.randn(d_model, d_model, generator=generator, dtype=f64)
    ).requires_grad_()
    future = torch.ones(train_len, train_len, dtype=torch.bool).triu(1)
    back = (torch.arange(train_len)[:, None] - torch.arange(train_len)[None]).to(f64)
    recent = torch.exp(-back / 2).masked_fill(future, 0.0)
    recent = recent / recent.sum(dim=1, keepdim=True)
    optimizer = torch.optim.Adam([P, A], lr=lr)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is fastest
    try:
        for _step in range(steps):
            scores = (P @ A @ P.T).masked_fill(future, float("-inf"))
            if task == "previous":
                loss = nn.functional.cross_entropy(
                    scores[1:], torch.arange(train_len - 1)
                )
            else:
                log_w = torch.log_softmax(scores, dim=1).masked_fill(future, 0.0)
                loss = -(recent * log_w).sum(dim=1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return P.detach()


def position_similarity(table) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Read a position table: (similarity, by_offset, components).

    similarity [L, L]: cosine similarity of rows m and n; by_offset [L]: its mean along the
    diagonal at offset 0, 1, ..., L - 1 (how alike rows Delta apart are, on average);
    components [L, L'] (L' = min(L, d)): the rows' principal components (the table centred
    over positions, then its left singular vectors scaled by the singular values), leading first.
    """
    table = _check_table(table)
    unit = nn.functional.normalize(table, dim=1)
    similarity = unit @ unit.T
    n = similarity.shape[0]
    by_offset = torch.stack([torch.diagonal(similarity, k).mean() for k in range(n)])
    centred = table - table.mean(dim=0)
    U, S, _Vh = torch.linalg.svd(centred, full_matrices=False)
    return similarity, by_offset, U * S


def learned_table_stats(table) -> torch.Tensor:
    """Five numbers that say what a position table learned, float64 [5]: the mean cosine
    similarity of rows 1, 4 and 8 apart; the share of the (centred) table that its two leading
    principal components hold; how many times the first component changes sign along the
    positions (1: it rises or falls steadily; many: no order)."""
    _similarity, by_offset, components = position_similarity(table)
    share = (components[:, :2] ** 2).sum() / (components**2).sum()
    first = components[:, 0]
    changes = (first[1:] * first[:-1] < 0).sum().to(torch.float64)
    return torch.stack([by_offset[1], by_offset[4], by_offset[8], share, changes])
