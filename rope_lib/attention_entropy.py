"""How spread out attention is, and how it changes with the number of keys n.

    softmax_entropy(logits, mask=None)            H = -sum_j p_j ln p_j, nats
    gaussian_logit_entropy(n, sigma)              ln n - sigma^2 / 2 (large n)
    random_qk_entropy(n, head_dim, sigma)         the same, simulated: random q, k
    random_logit_std(n, head_dim, sigma)          their logits' spread: sigma at every n
    gaussian_logits(n, seed)                      n fixed N(0, 1) logits (the widget's)
    attention_stats(q, k, points, queries)        entropy and logit spread of real heads
    logn_scale(positions, training_length)        max(1, ln(m + 1) / ln L)
    yarn_temperature(factor)                      YaRN's t: 1 / sqrt(t) = 0.1 ln s + 1
    best_multiplier(multipliers, losses)          the logit multiplier of least loss
    temperature_slope(factors, attention_factors) k of sqrt(1/t) = k ln s + 1, fitted
    slope_multiplier(slope, factor)               (k ln s + 1)^2, the logits' multiplier
    fit_length_curve(x, y, form)                  loss against length: exp, power, ...

Attention gives query m the weights p_j = exp(x_j) / Z over its n keys, x_j the
logits q . k_j / sqrt(d), Z = sum_j exp(x_j). Its entropy H = ln Z - sum_j p_j x_j
lies between 0 (one key) and ln n (every key alike: the uniform yardstick).

Where the ln n comes from. Let the n logits be independent N(0, sigma^2) (random q and
k: given q, q . k / sqrt(d) is Gaussian with variance |q|^2 / d). For large n the sums
are n times their expectations: Z ~ n E[e^x] = n e^(sigma^2 / 2) and
sum_j p_j x_j ~ E[x e^x] / E[e^x] = sigma^2, so

    H ~ ln n + sigma^2 / 2 - sigma^2 = ln n - sigma^2 / 2.

The ln n is the number of keys competing; the variance does not grow with n (each
logit's spread is set by q and k alone). The law of large numbers needs n >> e^(sigma^2)
(the relative variance of e^x): below that a few keys dominate and the formula
undershoots: H stays positive while ln n - sigma^2 / 2 heads to 0 and below (the random
energy model's low-temperature side, Derrida 1981; at sigma^2 > 2 ln n the weights
freeze onto a handful of keys). Trained logits are not Gaussian: their spread is set by
a few outliers (sink keys, far keys), so this formula is no summary of their focus.

Two answers to "attention spreads as n grows". Multiplying the logits by lambda changes
sigma to lambda sigma: to keep H fixed at H_0 under Gaussian logits,
lambda^2 sigma^2 / 2 must grow like ln n (lambda ~ sqrt(ln n)). To keep the weight of
one key whose logit stands a fixed gap above n others fixed, the gap times lambda must
grow like ln n (lambda ~ ln n): that is log-n scaling (Chiang and Cholak 2022,
"Overcoming a Theoretical Limitation of Self-Attention", arXiv:2202.12172; Su 2021,
"entropy invariance"; Qwen's use_logn_attn; Nakanishi 2025, "Scalable-Softmax Is
Superior for Attention", arXiv:2501.19399, with a learned slope). YaRN's temperature
(Peng et al. 2023, arXiv:2309.00071, section 3.4) multiplies the logits by 1/t with
sqrt(1/t) = 0.1 ln s + 1, a constant for a given factor s fitted on LLaMA, not a
function of n.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .language import _
from .scaling import yarn_get_mscale


def _positive_int(name: str, value, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            _("{name} must be an int, got {value!r}").format(name=name, value=value)
        )
    if value < least:
        raise ValueError(
            _("{name} must be >= {least}, got {value}").format(
                name=name, least=least, value=value
            )
        )
    return int(value)


def _finite(name: str, value, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
        raise TypeError(
            _("{name} must be a number, got {value!r}").format(name=name, value=value)
        )
    if not math.isfinite(value) or (positive and value <= 0):
        raise ValueError(
            _("{name} must be a finite number{bound}, got {value}").format(
                name=name, bound=" > 0" if positive else "", value=value
            )
        )
    return float(value)


def softmax_entropy(logits: torch.Tensor, mask: torch.Tensor | None = None):
    """H = -sum_j p_j ln p_j in nats over the last dimension, p = softmax(logits) over
    the entries where mask is True (all of them without a mask). Same shape as logits
    less its last dimension. A row must keep at least one entry."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError(
            _("logits must be a floating-point torch.Tensor, got {value!r:.60}").format(
                value=logits
            )
        )
    if logits.dim() == 0 or logits.shape[-1] == 0:
        raise ValueError(
            _(
                "logits must have a last dimension of size >= 1, got shape {shape}"
            ).format(shape=tuple(logits.shape))
        )
    if logits.isnan().any():
        raise ValueError(_("logits must not contain NaN"))
    if mask is not None:
        if not _fits(mask, logits):
            raise ValueError(
                _("mask must be a bool tensor that broadcasts to {shape}").format(
                    shape=tuple(logits.shape)
                )
            )
        if not mask.any(-1).all():
            raise ValueError(_("mask must keep at least one entry in every row"))
        logits = logits.masked_fill(~mask, -math.inf)
    logp = torch.log_softmax(logits, -1)
    p = logp.exp()
    return -torch.where(p > 0, p * logp, torch.zeros_like(p)).sum(-1)


def _fits(mask, logits) -> bool:
    """Is mask a bool tensor that broadcasts to logits' shape?"""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        return False
    try:
        return torch.broadcast_shapes(mask.shape, logits.shape) == logits.shape
    except RuntimeError:
        return False


def gaussian_logit_entropy(n, sigma) -> float:
    """ln n - sigma^2 / 2: the entropy of softmax over n independent N(0, sigma^2)
    logits for large n (module docstring). Good when n >> e^(sigma^2); at
    sigma^2 >= 2 ln n it would reach 0 or less, and the true entropy stays positive
    (the weights freeze onto a few keys): there it is no estimate."""
    n = _positive_int("n", n)
    sigma = _finite("sigma", sigma)
    return math.log(n) - sigma**2 / 2


def random_qk_entropy(
    n, head_dim, sigma=1.0, trials: int = 64, seed: int = 0
) -> np.ndarray:
    """Entropies (float64 [trials]) of one query over n keys, q with N(0, sigma^2)
    entries and k with N(0, 1) entries in head_dim dimensions, logits q . k / sqrt(d):
    given q, each logit is N(0, sigma^2 |q|^2 / (d sigma^2)), about N(0, sigma^2)."""
    n = _positive_int("n", n)
    d = _positive_int("head_dim", head_dim)
    trials = _positive_int("trials", trials)
    sigma = _finite("sigma", sigma)
    generator = torch.Generator().manual_seed(_positive_int("seed", seed, 0))
    entropies = []
    for _trial in range(trials):  # one trial at a time: n x d keys each
        q = sigma * torch.randn(d, generator=generator, dtype=torch.float64)
        k = torch.randn(n, d, generator=generator, dtype=torch.float64)
        entropies.append(float(softmax_entropy(k @ q / math.sqrt(d))))
    return np.array(entropies)


def random_logit_std(
    n, head_dim, sigma=1.0, trials: int = 16, seed: int = 0
) -> np.ndarray:
    """The standard deviation over its n keys of one random query's logits q . k / sqrt(d)
    (float64 [trials], drawn as random_qk_entropy draws them): about sigma for every n,
    since each logit's spread is set by q and k alone, not by how many keys there are."""
    n = _positive_int("n", n, 2)
    d = _positive_int("head_dim", head_dim)
    trials = _positive_int("trials", trials)
    sigma = _finite("sigma", sigma)
    generator = torch.Generator().manual_seed(_positive_int("seed", seed, 0))
    spreads = []
    for _trial in range(trials):
        q = sigma * torch.randn(d, generator=generator, dtype=torch.float64)
        k = torch.randn(n, d, generator=generator, dtype=torch.float64)
        spreads.append(float((k @ q / math.sqrt(d)).std()))
    return np.array(spreads)


def gaussian_logits(n, seed: int = 0) -> torch.Tensor:
    """n independent N(0, 1) logits (float64 [n]), the same for a seed whatever n: the
    first n of one fixed draw. sigma * gaussian_logits(n) are one query's logits of
    spread sigma over n keys (the module docstring's model of random q and k)."""
    n = _positive_int("n", n)
    generator = torch.Generator().manual_seed(_positive_int("seed", seed, 0))
    chunks = -(-n // 4096)  # drawn 4096 at a time: a longer draw extends a shorter one
    draws = [
        torch.randn(4096, generator=generator, dtype=torch.float64)
        for _chunk in range(chunks)
    ]
    return torch.cat(draws)[:n]


def temperature_slope(factors, attention_factors) -> float:
    """The k of YaRN's form sqrt(1/t) = k ln s + 1 (YaRN's fit on LLaMA: k = 0.1) that
    best fits measured best attention factors sqrt(1/t) at the factors s (least squares
    through (s = 1, sqrt(1/t) = 1)): k = sum (m_s - 1) ln s / sum (ln s)^2."""
    s = np.asarray(factors, dtype=float)
    m = np.asarray(attention_factors, dtype=float)
    if s.ndim != 1 or m.shape != s.shape or len(s) < 1 or not (s > 1).all():
        raise ValueError(
            _(
                "factors must be > 1 and match attention_factors, got {s} and {m}"
            ).format(s=s.tolist(), m=m.tolist())
        )
    x = np.log(s)
    return float(np.sum((m - 1) * x) / np.sum(x * x))


def slope_multiplier(slope, factor) -> float:
    """The logits' multiplier 1/t = (k ln s + 1)^2 that the rule sqrt(1/t) = k ln s + 1
    gives at factor s (k = 0.1: YaRN's yarn_temperature(s)["logit_multiplier"])."""
    k = _finite("slope", slope)
    s = _finite("factor", factor, positive=True)
    return (k * math.log(s) + 1) ** 2


def logn_scale(positions: torch.Tensor, training_length) -> torch.Tensor:
    """max(1, ln(m + 1) / ln L) for each position m (float32, positions' shape): the
    factor log-n scaling multiplies query m by, so its logits grow like ln of the number
    of keys it sees, m + 1, once that passes L (Qwen's use_logn_attn: log_L(m + 1) for
    m + 1 > L, else 1; Chiang and Cholak 2022 scale by log n at every length)."""
    L = _positive_int("training_length", training_length, 2)
    if not isinstance(positions, torch.Tensor) or positions.is_complex():
        raise TypeError(
            _("positions must be a real torch.Tensor, got {value!r:.60}").format(
                value=positions
            )
        )
    if positions.numel() and positions.device.type != "meta":
        if positions.isnan().any() or (positions < 0).any():
            raise ValueError(_("positions must be >= 0 and not NaN"))
    keys = positions.to(torch.float32) + 1
    return torch.clamp(torch.log(keys) / math.log(L), min=1.0)


def yarn_temperature(factor) -> dict:
    """YaRN's temperature at factor s (Peng et al. 2023, section 3.4): the
    logits are multiplied by 1/t, with sqrt(1/t) = 0.1 ln s + 1. Implementations
    multiply cos and sin (q and k) by m = sqrt(1/t) (transformers' attention_factor), so
    the logits get m^2 = 1/t. {"attention_factor": m, "logit_multiplier": 1/t, "t": t};
    t < 1 for s > 1: the logits grow, attention sharpens."""
    m = yarn_get_mscale(_finite("factor", factor, positive=True))
    return {"attention_factor": m, "logit_multiplier": m * m, "t": 1 / (m * m)}


def attention_stats(q: torch.Tensor, k: torch.Tensor, points, queries: int) -> dict:
    """Entropy and logit spread of causal attention by the number of keys.

    q [batch, H, n, d] and k [batch, G, n, d] as the attention uses them (rotated; G
    divides H, query head h reads key head h // (H / G)); logits q . k / sqrt(d), query
    m seeing keys 0..m. For each point p of points (1 <= p <= n), the `queries` queries
    just before it (m = p - queries .. p - 1, so about p keys each): {"entropy": float64
    [points, H], the mean over those queries and the batch of H in nats (compare ln p),
    "logit_std": the same for the standard deviation of a query's logits over its keys}.
    Only those queries' scores are formed: memory batch x H x queries x p."""
    _qk_checked(q, k)
    queries = _positive_int("queries", queries)
    batch, H, n, d = q.shape
    G = k.shape[1]
    entropy, spread = [], []
    for p in points:
        p = _positive_int("points", p)
        if p > n:
            raise ValueError(_("points must be <= n = {n}, got {p}").format(n=n, p=p))
        m = torch.arange(max(0, p - queries), p, device=q.device)
        rows = q[:, :, m].reshape(batch, G, H // G * len(m), d)
        logits = (rows @ k[:, :, :p].transpose(-1, -2)) / math.sqrt(d)
        logits = logits.reshape(batch, H, len(m), p).double()
        mask = torch.arange(p, device=q.device)[None] <= m[:, None]
        entropy.append(softmax_entropy(logits, mask).mean((0, 2)))
        count = mask.sum(-1)
        mean = torch.where(mask, logits, 0).sum(-1) / count
        var = torch.where(mask, (logits - mean[..., None]) ** 2, 0).sum(-1) / count
        spread.append(var.sqrt().mean((0, 2)))
    return {
        "entropy": torch.stack(entropy).cpu().numpy(),
        "logit_std": torch.stack(spread).cpu().numpy(),
    }


def _qk_checked(q, k) -> None:
    for name, x in (("q", q), ("k", k)):
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.dim() != 4:
            raise ValueError(
                _(
                    "{name} must be a floating-point tensor [batch, heads, n, d], "
                    "got {value!r:.60}"
                ).format(name=name, value=x)
            )
    if (
        k.shape[0] != q.shape[0]
        or k.shape[2:] != q.shape[2:]
        or q.shape[1] % k.shape[1]
    ):
        raise ValueError(
            _(
                "k must be [batch, G, n, d] with q's batch, n, d and G dividing q's "
                "heads, got q {q_shape} and k {k_shape}"
            ).format(q_shape=tuple(q.shape), k_shape=tuple(k.shape))
        )


def best_multiplier(multipliers, losses) -> dict:
    """The logit multiplier 1/t of least loss from a sweep: a parabola in u = ln(1/t)
    fitted (least squares) to the losses at the multipliers (at least 3 distinct, > 0);
    its vertex if it is a minimum inside the swept range, else the best swept one.
    {"logit_multiplier": 1/t, "attention_factor": sqrt(1/t), "t", "inside": whether
    the vertex was inside, "loss": the parabola's (or the swept) least loss}."""
    m = np.asarray(multipliers, dtype=float)
    y = np.asarray(losses, dtype=float)
    if m.ndim != 1 or y.shape != m.shape or len(np.unique(m)) < 3:
        raise ValueError(
            _(
                "multipliers and losses must be 1-D of the same length with at least "
                "3 distinct multipliers, got shapes {m_shape} and {y_shape}"
            ).format(m_shape=m.shape, y_shape=y.shape)
        )
    if not (np.isfinite(m).all() and (m > 0).all()):
        raise ValueError(_("multipliers must be finite and > 0"))
    if not np.isfinite(y).all():
        raise ValueError(_("losses must be finite"))
    u = np.log(m)
    a, b, c = np.polyfit(u, y, 2)
    inside = a > 0 and u.min() <= -b / (2 * a) <= u.max()
    if inside:
        best, loss = -b / (2 * a), c - b * b / (4 * a)
    else:
        best, loss = u[np.argmin(y)], y.min()
    return {
        "logit_multiplier": float(np.exp(best)),
        "attention_factor": float(np.exp(best / 2)),
        "t": float(np.exp(-best)),
        "inside": bool(inside),
        "loss": float(loss),
    }


FORMS = {
    # name: (the curve y = a + b f(x; c), the grid of c to search, or None: no c)
    "exponential": (lambda x, c: np.exp(c * x), np.linspace(-8.0, 8.0, 1601)),
    "power": (lambda x, c: x**c, np.linspace(-6.0, 6.0, 1201)),
    "logarithmic": (lambda x, c: np.log(x), None),
    "linear": (lambda x, c: x, None),
}
"""The forms fit_length_curve tries: a + b e^(c x), a + b x^c, a + b ln x, a + b x."""


def fit_length_curve(x, y, form: str) -> dict:
    """Least-squares fit of y against x (> 0, e.g. the length in units of L) to one of
    FORMS: for each c on the form's grid (then refined by a golden-section search around
    the best), a and b by linear least squares. {"form", "a", "b", "c" (None for the
    two-parameter forms), "rmse", "residuals": y - fit, "parameters": count}."""
    if form not in FORMS:
        raise ValueError(
            _("form must be one of {forms}, got {form!r}").format(
                forms=sorted(FORMS), form=form
            )
        )
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or y.shape != x.shape or len(x) < 4:
        raise ValueError(
            _(
                "x and y must be 1-D of the same length >= 4, got {x_shape}, {y_shape}"
            ).format(x_shape=x.shape, y_shape=y.shape)
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all() and (x > 0).all()):
        raise ValueError(_("x must be finite and > 0, y finite"))
    curve, grid = FORMS[form]

    def solve(c):
        design = np.stack([np.ones_like(x), curve(x, c)], 1)
        if not np.isfinite(design).all():
            return np.inf, (np.nan, np.nan)
        (a, b), *_rest = np.linalg.lstsq(design, y, rcond=None)
        return float(np.sum((y - a - b * design[:, 1]) ** 2)), (a, b)

    c = None
    if grid is not None:
        scores = [solve(g)[0] for g in grid]
        i = int(np.argmin(scores))
        c = _golden(
            lambda g: solve(g)[0], grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        )
    rss, (a, b) = solve(c)
    residuals = y - a - b * curve(x, c)
    return {
        "form": form,
        "a": float(a),
        "b": float(b),
        "c": None if c is None else float(c),
        "rmse": float(np.sqrt(rss / len(x))),
        "residuals": residuals.tolist(),
        "parameters": 2 if c is None else 3,
    }


def _golden(f, lo: float, hi: float, steps: int = 60) -> float:
    """The minimum of f on [lo, hi] by golden-section search (f unimodal there)."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _step in range(steps):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(c) <= f(d):
            b = d
        else:
            a = c
    return (a + b) / 2
