"""Input checks shared by the library: every message names the argument, what was expected and
what came, so a learner who passes the wrong thing knows what to change.

The rule for positions lives here too (check_positions), so apply_rope, RotaryEmbedding and
PositionalSelfAttention read a positions tensor the same way.
"""

from __future__ import annotations

import math
import numbers

import torch

from .language import _


def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return _("a tensor of shape {shape} and dtype {dtype}").format(
            shape=tuple(value.shape), dtype=value.dtype
        )
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} ({text})"


def _is_meta(t: torch.Tensor) -> bool:
    return t.device.type == "meta"


def require_tensor(name: str, value) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(
            _("{name} must be a torch.Tensor, got {got}").format(
                name=name, got=describe(value)
            )
        )
    return value


def require_float_dtype(name: str, x: torch.Tensor) -> torch.Tensor:
    if not x.is_floating_point():
        raise TypeError(
            _("{name} must have a floating-point dtype, got {x_dtype}").format(
                name=name, x_dtype=x.dtype
            )
        )
    return x


def require_float_tensor(name: str, value) -> torch.Tensor:
    return require_float_dtype(name, require_tensor(name, value))


def require_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(
            _("{name} must be True or False, got {got}").format(
                name=name, got=describe(value)
            )
        )
    return value


def require_bool_or_none(name: str, value) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(
            _("{name} must be True, False or None, got {got}").format(
                name=name, got=describe(value)
            )
        )
    return value


def require_int(name: str, value) -> int:
    """An integer (Python or numpy; not a bool, not a float such as 4.0)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            _("{name} must be an int, got {got}").format(name=name, got=describe(value))
        )
    return int(value)


def require_positive_int(name: str, value, minimum: int = 1) -> int:
    value = require_int(name, value)
    if value < minimum:
        raise ValueError(
            _("{name} must be >= {minimum}, got {value}").format(
                name=name, minimum=minimum, value=value
            )
        )
    return value


def require_even(name: str, value) -> int:
    value = require_positive_int(name, value)
    if value % 2:
        raise ValueError(
            _(
                "{name} must be even (dimensions are rotated in pairs), got {value}"
            ).format(name=name, value=value)
        )
    return value


def require_number(name: str, value) -> float:
    """A finite real number (Python or numpy; not a bool, a string or a tensor)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            _("{name} must be a number, got {got}").format(
                name=name, got=describe(value)
            )
        )
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(
            _("{name} must be a finite number, got {value}").format(
                name=name, value=value
            )
        )
    return value


def require_positive_float(name: str, value) -> float:
    value = require_number(name, value)
    if not value > 0:
        raise ValueError(
            _("{name} must be > 0, got {value}").format(name=name, value=value)
        )
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
        raise ValueError(
            _("{name} must be finite, got {bad} among its values").format(
                name=name, bad=bad
            )
        )
    return t


def as_real_float64(name: str, value) -> torch.Tensor:
    """A number, a (nested) list of numbers or a real tensor, as a finite float64 tensor."""
    if isinstance(value, torch.Tensor):
        if value.is_complex() or value.dtype == torch.bool:
            raise TypeError(
                _(
                    "{name} must be a real number or tensor, got dtype {value_dtype}"
                ).format(name=name, value_dtype=value.dtype)
            )
        t = value.to(torch.float64)
    elif isinstance(value, bool) or isinstance(value, (str, bytes)) or value is None:
        raise TypeError(
            _("{name} must be a number or a real tensor, got {got}").format(
                name=name, got=describe(value)
            )
        )
    else:
        if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
            raise TypeError(
                _("{name} must be a real number, got {got}").format(
                    name=name, got=describe(value)
                )
            )
        try:
            t = torch.as_tensor(value, dtype=torch.float64)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                _("{name} must be a number or a real tensor, got {got}").format(
                    name=name, got=describe(value)
                )
            ) from None
    return require_finite(name, t)


def require_real_tensor(name: str, value) -> torch.Tensor:
    """A tensor of integers or real numbers (not bool, not complex)."""
    require_tensor(name, value)
    if value.is_complex() or value.dtype == torch.bool:
        raise TypeError(
            _(
                "{name} must hold integers or real numbers, got dtype {value_dtype}"
            ).format(name=name, value_dtype=value.dtype)
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
            _(
                "{name} is on the meta device (no values) while x is on {device}; "
                "pass {name} on {device}"
            ).format(name=name, device=device)
        )
    return t.to(device)


LAYOUTS = ("interleaved", "half")


def check_layout(layout) -> str:
    """ "interleaved" (pairs (2i, 2i+1)) or "half" (pairs (i, i + d/2))."""
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(
            _("layout must be one of {layouts}, got {layout!r}").format(
                layouts=LAYOUTS, layout=layout
            )
        )
    return layout


def check_x(x, name: str = "x") -> torch.Tensor:
    """A float tensor [..., seq, head_dim] with an even head_dim (the pairs RoPE rotates)."""
    require_float_tensor(name, x)
    if x.dim() < 2:
        raise ValueError(
            _(
                "{name} must be [..., seq, head_dim] (at least 2 dimensions), got "
                "shape {x_shape}"
            ).format(name=name, x_shape=tuple(x.shape))
        )
    if x.shape[-1] % 2:
        raise ValueError(
            _("head_dim ({name}.shape[-1]) must be even, got {x_shape_last}").format(
                name=name, x_shape_last=x.shape[-1]
            )
        )
    return x


def check_inv_freq(
    name: str, inv_freq, n_pairs: int, device: torch.device
) -> torch.Tensor:
    """A real [n_pairs] tensor of finite frequencies, moved to `device`."""
    require_tensor(name, inv_freq)
    if not inv_freq.is_floating_point():
        raise TypeError(
            _("{name} must have a floating-point dtype, got {inv_freq_dtype}").format(
                name=name, inv_freq_dtype=inv_freq.dtype
            )
        )
    if tuple(inv_freq.shape) != (n_pairs,):
        raise ValueError(
            _(
                "{name} must have shape [head_dim/2] = [{n_pairs}], got "
                "{inv_freq_shape}"
            ).format(name=name, n_pairs=n_pairs, inv_freq_shape=tuple(inv_freq.shape))
        )
    require_finite(name, inv_freq)
    return require_same_device(name, inv_freq, device)


def require_rope_pair(name: str, rope, head_dim: int):
    """(inv_freq [head_dim/2], attention_factor > 0), as rope_frequencies returns it."""
    if not isinstance(rope, (tuple, list)) or len(rope) != 2:
        raise TypeError(
            _(
                "{name} must be an (inv_freq, attention_factor) pair from "
                "rope_frequencies, got {got}"
            ).format(name=name, got=describe(rope))
        )
    inv_freq, factor = rope
    require_tensor(f"{name}[0] (inv_freq)", inv_freq)
    if not inv_freq.is_floating_point() or tuple(inv_freq.shape) != (head_dim // 2,):
        raise ValueError(
            _(
                "{name}[0] (inv_freq) must be a float tensor of shape [head_dim/2] "
                "= [{value}], got {inv_freq_dtype} {inv_freq_shape}"
            ).format(
                name=name,
                value=head_dim // 2,
                inv_freq_dtype=inv_freq.dtype,
                inv_freq_shape=tuple(inv_freq.shape),
            )
        )
    return inv_freq, require_positive_float(f"{name}[1] (attention_factor)", factor)


def check_positions(
    positions, x: torch.Tensor, name: str = "positions"
) -> torch.Tensor:
    """The library's one rule for a positions tensor against x [..., seq, head_dim], by rank
    only (as transformers reads position_ids): returns positions on x's device with exactly
    x.dim() - 1 dimensions, ready to broadcast against x.shape[:-1].

    - [seq] (or one position, [] or [1]): shared by every leading dimension of x;
    - [batch, seq] with a 4-D x [batch, heads, seq, head_dim]: one row per batch, always
      (transformers' cos[:, None]); a row per head needs an explicit [1, heads, seq];
    - anything else: broadcast against x.shape[:-1] as usual (e.g. [batch, heads, seq] or
      [batch, 1, seq] for x [batch, heads, seq, head_dim]).
    Values: integers or real numbers, finite (NaN/inf refused). A misfit raises a ValueError
    naming `name`, the shapes it may have and the shape that came.
    """
    require_real_tensor(name, positions)
    lead = tuple(x.shape[:-1])
    shape = tuple(positions.shape)
    if len(shape) == 1 and shape[0] == lead[-1] and positions.device == x.device:
        if not positions.is_floating_point():  # the common case: [seq] integers
            return positions.view((1,) * (len(lead) - 1) + shape)
    if len(shape) <= 1:
        aligned = (1,) * (len(lead) - 1) + (shape or (1,))
    elif len(shape) == 2 and len(lead) == 3:
        aligned = (shape[0], 1, shape[1])  # [batch, seq] -> [batch, 1, seq]
    else:
        aligned = (1,) * (len(lead) - len(shape)) + shape
    if len(aligned) != len(lead) or any(p not in (1, n) for p, n in zip(aligned, lead)):
        raise ValueError(_positions_misfit(name, shape, x))
    positions = require_same_device(name, positions, x.device)
    require_finite(name, positions)
    return positions.reshape(aligned)


def _positions_misfit(name: str, shape: tuple, x: torch.Tensor) -> str:
    """What check_positions says when positions does not fit x."""
    lead = tuple(x.shape[:-1])
    allowed = "[seq] = [{seq}]".format(seq=lead[-1])
    if len(lead) == 3:
        allowed += _(", [batch, seq] = [{batch}, {seq}] (one row per batch)").format(
            batch=lead[0], seq=lead[-1]
        )
    text = _(
        "{name} must have shape {allowed} or be broadcastable to x.shape[:-1] = {lead} "
        "(x is [..., seq, head_dim] = {x_shape}), got shape {shape}"
    ).format(name=name, allowed=allowed, lead=lead, x_shape=tuple(x.shape), shape=shape)
    if len(lead) == 3 and len(shape) == 2:
        text += _(
            " (for one row per head pass {name}[None], of shape [1, heads, seq])"
        ).format(name=name)
    return text


def check_factor_list(name: str, value, length: int) -> list[float]:
    """A flat list/tuple (or 1-D tensor) of `length` finite numbers > 0 (LongRoPE's factors)."""
    if isinstance(value, torch.Tensor):
        if value.dim() != 1 or value.is_complex() or value.dtype == torch.bool:
            raise TypeError(
                _("{name} must be a flat list of numbers, got {got}").format(
                    name=name, got=describe(value)
                )
            )
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise TypeError(
            _("{name} must be a list of numbers, got {got}").format(
                name=name, got=describe(value)
            )
        )
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(
                _(
                    "{name} must be a flat list of numbers, got {got} at index {i}"
                ).format(name=name, got=describe(v), i=i)
            )
    if len(value) != length:
        raise ValueError(
            _("{name} must have head_dim/2 = {length} entries, got {n_value}").format(
                name=name, length=length, n_value=len(value)
            )
        )
    out = [float(v) for v in value]
    for i, v in enumerate(out):
        if not math.isfinite(v) or not v > 0:
            raise ValueError(
                _("{name} must hold finite numbers > 0, got {v} at index {i}").format(
                    name=name, v=v, i=i
                )
            )
    return out
