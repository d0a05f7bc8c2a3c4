"""Input checks shared by the library: every message names the argument, what was expected and
what came, so a learner who passes the wrong thing knows what to change.

The rule for positions lives here too (check_positions), so apply_rope and RotaryEmbedding read
a positions tensor the same way.
"""

from __future__ import annotations

import math
import numbers

import torch


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} ({text})"


def _is_meta(t: torch.Tensor) -> bool:
    return t.device.type == "meta"


def require_tensor(name: str, value) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {_describe(value)}")
    return value


def require_float_dtype(name: str, x: torch.Tensor) -> torch.Tensor:
    if not x.is_floating_point():
        raise TypeError(f"{name} must have a floating-point dtype, got {x.dtype}")
    return x


def require_float_tensor(name: str, value) -> torch.Tensor:
    return require_float_dtype(name, require_tensor(name, value))


def require_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {_describe(value)}")
    return value


def require_bool_or_none(name: str, value) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"{name} must be True, False or None, got {_describe(value)}")
    return value


def require_int(name: str, value) -> int:
    """An integer (Python or numpy; not a bool, not a float such as 4.0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {_describe(value)}")
    return int(value)


def require_positive_int(name: str, value, minimum: int = 1) -> int:
    value = require_int(name, value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def require_even(name: str, value) -> int:
    value = require_positive_int(name, value)
    if value % 2:
        raise ValueError(
            f"{name} must be even (dimensions are rotated in pairs), got {value}"
        )
    return value


def require_number(name: str, value) -> float:
    """A finite real number (Python or numpy; not a bool, a string or a tensor)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {_describe(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return value


def require_positive_float(name: str, value) -> float:
    value = require_number(name, value)
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return value


def require_finite(name: str, t: torch.Tensor) -> torch.Tensor:
    """No NaN or inf in a real tensor (not checkable, hence not checked, on the meta device)."""
    if (
        t.is_floating_point()
        and not _is_meta(t)
        and t.numel()
        and not bool(torch.isfinite(t).all())
    ):
        bad = t[~torch.isfinite(t)].flatten()[0].item()
        raise ValueError(f"{name} must be finite, got {bad} among its values")
    return t


def as_real_float64(name: str, value) -> torch.Tensor:
    """A number, a (nested) list of numbers or a real tensor, as a finite float64 tensor."""
    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(
                f"{name} must be a real number or tensor, got dtype {value.dtype}"
            )
        t = value.to(torch.float64)
    elif isinstance(value, bool) or isinstance(value, (str, bytes)) or value is None:
        raise TypeError(
            f"{name} must be a number or a real tensor, got {_describe(value)}"
        )
    else:
        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {_describe(value)}")
        try:
            t = torch.as_tensor(value, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                f"{name} must be a number or a real tensor, got {_describe(value)}"
            ) from None
    return require_finite(name, t)


def require_real_tensor(name: str, value) -> torch.Tensor:
    """A tensor of integers or real numbers (not bool, not complex)."""
    require_tensor(name, value)
    if value.is_complex() or value.dtype == torch.bool:
        raise TypeError(
            f"{name} must hold integers or real numbers, got dtype {value.dtype}"
        )
    return value


def require_same_device(
    name: str, t: torch.Tensor, device: torch.device
) -> torch.Tensor:
    """t moved to `device` (x's): positions and frequencies follow the tensor they rotate."""
    if t.device == device:
        return t
    if _is_meta(t):
        raise ValueError(
            f"{name} is on the meta device (no values) while x is on {device}; "
            f"pass {name} on {device}"
        )
    return t.to(device)


def check_inv_freq(
    name: str, inv_freq, n_pairs: int, device: torch.device
) -> torch.Tensor:
    """A real [n_pairs] tensor of finite frequencies, moved to `device`."""
    require_tensor(name, inv_freq)
    if not inv_freq.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype, got {inv_freq.dtype}"
        )
    if tuple(inv_freq.shape) != (n_pairs,):
        raise ValueError(
            f"{name} must have shape [head_dim/2] = [{n_pairs}], got {tuple(inv_freq.shape)}"
        )
    require_finite(name, inv_freq)
    return require_same_device(name, inv_freq, device)


def require_rope_pair(name: str, rope, head_dim: int):
    """(inv_freq [head_dim/2], attention_factor > 0), as rope_frequencies returns it."""
    if not isinstance(rope, (tuple, list)) or len(rope) != 2:
        raise TypeError(
            f"{name} must be an (inv_freq, attention_factor) pair from rope_frequencies, "
            f"got {_describe(rope)}"
        )
    inv_freq, factor = rope
    require_tensor(f"{name}[0] (inv_freq)", inv_freq)
    if not inv_freq.is_floating_point() or tuple(inv_freq.shape) != (head_dim // 2,):
        raise ValueError(
            f"{name}[0] (inv_freq) must be a float tensor of shape [head_dim/2] = "
            f"[{head_dim // 2}], got {inv_freq.dtype} {tuple(inv_freq.shape)}"
        )
    return inv_freq, require_positive_float(f"{name}[1] (attention_factor)", factor)


def check_positions(
    positions, x: torch.Tensor, name: str = "positions"
) -> torch.Tensor:
    """The one rule for a positions tensor against x [..., seq, head_dim]; returns positions on
    x's device with exactly x.dim() - 1 dimensions, ready to broadcast against x.shape[:-1].

    - [seq] (or a single position, [] or [1]): shared by every leading dimension of x;
    - exactly x.dim() - 1 dimensions: ordinary broadcasting against x.shape[:-1];
    - more than one but fewer than x.dim() - 1 dimensions, e.g. [batch, seq] for x
      [batch, heads, seq, head_dim]: it can be read batch-first (the leading dimensions of
      positions line up with the leading ones of x) or right-aligned (ordinary broadcasting:
      they line up with the dimensions just before seq). When only one reading fits, or both give
      the same result, that is the meaning; when both fit and differ, a ValueError asks for an
      explicit shape (positions[:, None, :] for per-batch, positions[None] for right-aligned).
    Values: integers or real numbers, finite (NaN/inf refused).
    """
    require_real_tensor(name, positions)
    if (
        positions.dim() == 1
        and positions.shape[0] == x.shape[-2]
        and positions.device == x.device
        and not positions.is_floating_point()
    ):  # the common case, [seq] integers, without the general checks below
        return positions.view((1,) * (x.dim() - 2) + (x.shape[-2],))
    lead = tuple(x.shape[:-1])
    seq = lead[-1]
    shape = tuple(positions.shape)
    target = len(lead)

    def fits(candidate):
        try:
            return tuple(torch.broadcast_shapes(candidate, lead)) == lead
        except RuntimeError:
            return False

    def expected():
        return (
            f"{name} must have shape [seq] = [{seq}] or be broadcastable to x.shape[:-1] = {lead} "
            f"(x is [..., seq, head_dim] = {tuple(x.shape)}), got shape {shape}"
        )

    if len(shape) <= 1 or len(shape) >= target:
        if not fits(shape):
            raise ValueError(expected())
        new_shape = (1,) * (target - len(shape)) + shape
    else:
        right = (1,) * (target - len(shape)) + shape
        batch_first = shape[:-1] + (1,) * (target - len(shape)) + shape[-1:]
        right_ok, batch_ok = fits(right), fits(batch_first)
        if right_ok and batch_ok and right != batch_first:
            raise ValueError(
                f"{name} must fit x one way only, got shape {shape}, which is ambiguous for x "
                f"of shape {tuple(x.shape)}: read "
                f"batch-first (its leading dimensions are x's leading ones, e.g. one row per "
                f"batch) it would be {batch_first}, read right-aligned (ordinary broadcasting, "
                f"e.g. one row per head) it would be {right}. Say which: {name}[:, None, :] "
                f"(or a view of shape {batch_first}) for batch-first, {name}[None] (or a view "
                f"of shape {right}) for right-aligned"
            )
        if batch_ok:
            new_shape = batch_first
        elif right_ok:
            new_shape = right
        else:
            raise ValueError(
                expected() + f" (for per-batch positions pass {name}[:, None, :])"
            )
    positions = require_same_device(name, positions, x.device)
    require_finite(name, positions)
    return positions.reshape(new_shape)


def check_factor_list(name: str, value, length: int) -> list[float]:
    """A flat list/tuple (or 1-D tensor) of `length` finite numbers > 0 (LongRoPE's factors)."""
    if isinstance(value, torch.Tensor):
        if value.dim() != 1 or value.is_complex() or value.dtype == torch.bool:
            raise TypeError(
                f"{name} must be a flat list of numbers, got {_describe(value)}"
            )
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be a list of numbers, got {_describe(value)}")
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(
                f"{name} must be a flat list of numbers, got {_describe(v)} at index {i}"
            )
    if len(value) != length:
        raise ValueError(
            f"{name} must have head_dim/2 = {length} entries, got {len(value)}"
        )
    out = [float(v) for v in value]
    for i, v in enumerate(out):
        if not math.isfinite(v) or not v > 0:
            raise ValueError(
                f"{name} must hold finite numbers > 0, got {v} at index {i}"
            )
    return out
