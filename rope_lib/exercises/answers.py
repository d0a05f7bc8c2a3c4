"""Reading a learner's answer by its value, whatever its type.

Every checker reads its answer with one of these, so that 33, np.int64(33), 33.0,
torch.tensor(33) and torch.tensor([33.]) are the same count in every lesson, np.False_
and tensor(False) the same "no", and a list, a tuple, a numpy array or a tensor of any
float dtype on any device the same numbers. Each reader returns the value, or raises
NotYet saying what it expected and what came; it never lets a complex number, a NaN, an
inf or a truncated number through.

    as_tensor(answer, name, *, finite=True, nan_hint="")  -> float64 CPU tensor
    as_number(answer, name)                               -> float
    as_count(answer, name, *, what="")                    -> int (exact)
    as_numbers(answer, name, n, *, whole=False, what="")  -> tuple of n numbers
    as_pair(answer, name, *, whole=False, what="")        -> tuple of 2 numbers
    as_complex(answer, name)                              -> complex
    as_indices(answer, name, size)                        -> frozenset of ints
    as_groups(answer, name, groups, size, *, what)        -> (counts, index sets or None)
    as_yes_no(answer, name)                               -> bool
    as_choices(answer, name, keys, choices)               -> dict {key: choice}
    as_choice(answer, name, aliases, *, names, unknown)   -> the key an answer names
    describe(answer)                  -> a short description, safe for any object
    guarded(check)                    -> the checker, returning a Feedback (a bug of
                                         rope_lib's own is raised under tests)

read_tensor, read_number, ... are the same readers returning the NotYet as a Feedback,
for code outside the checker machinery.

The messages are in the learner's language (rope_lib.set_language). `name` is shown as
given: pass an identifier as it is ("q_rot") and words translated (`_("the count")`).
`what` and `nan_hint` go through `_` here, so pass them translated (`_("a position")`)
or marked (`N_("a position")`).
"""

from __future__ import annotations

import functools
import math
import numbers
import os
import sysconfig
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

import numpy as np
import torch

from ..language import N_, _
from .feedback import Feedback, NotYet, not_yet

_MAX_DEPTH = 8  # nested lists deeper than this are not an answer (and may be cyclic)


class _Unreadable(Exception):
    """Raised inside this module only: not numbers; str(error) says why."""


def describe(answer) -> str:
    """A short description of any answer, safe for any object (no unknown repr)."""
    try:
        if answer is None:
            return "None"
        if isinstance(answer, (bool, np.bool_)):
            return repr(bool(answer))
        if isinstance(answer, (str, np.str_)):
            text = str(answer)
            return repr(text if len(text) <= 30 else text[:27] + "...")
        if isinstance(answer, bytes):
            return "bytes"
        if isinstance(answer, numbers.Integral):
            value = int(answer)
            if abs(value) < 10**15:
                return str(value)
            return _("an integer of {digits} digits").format(
                digits=len(str(abs(value)))
            )
        if isinstance(answer, (float, complex)):
            return repr(answer)
        if isinstance(answer, (numbers.Number, Decimal)):
            return f"{answer} ({type(answer).__name__})"
        if isinstance(answer, torch.Tensor):
            device = answer.device.type
            if answer.dim() == 0 and device == "cpu":
                return f"tensor({answer.item()!r}, dtype={answer.dtype})"
            shape = tuple(answer.shape)
            if device == "cpu":
                return _("a tensor of shape {shape}, dtype {dtype}").format(
                    shape=shape, dtype=answer.dtype
                )
            return _("a tensor of shape {shape}, dtype {dtype} on {device}").format(
                shape=shape, dtype=answer.dtype, device=device
            )
        if isinstance(answer, np.ndarray):
            return _("a numpy array of shape {shape}, dtype {dtype}").format(
                shape=answer.shape, dtype=answer.dtype
            )
        if isinstance(answer, (list, tuple)):
            return _("a {kind} of {n} items").format(
                kind=type(answer).__name__, n=len(answer)
            )
        if isinstance(answer, Mapping):
            keys = [str(k)[:20] for k in list(answer)[:5]]
            return _("a {kind} with keys {keys}").format(
                kind=type(answer).__name__, keys=keys
            )
    except Exception:  # describing must never fail
        pass
    return _("a {kind}").format(kind=type(answer).__name__)


def _from_numpy(answer, depth: int) -> torch.Tensor:
    array = np.asarray(answer)
    kind = array.dtype.kind
    if kind == "b":
        return torch.from_numpy(array.astype(np.bool_))
    if kind == "i" or (kind == "u" and array.dtype.itemsize < 8):
        return torch.from_numpy(array.astype(np.int64))
    if kind in "uf":
        return torch.from_numpy(array.astype(np.float64))
    if kind == "c":
        return torch.from_numpy(array.astype(np.complex128))
    if kind == "O":
        return _to_tensor(array.tolist(), depth + 1)
    if kind in "US":
        raise _Unreadable(_("text, not numbers (drop the quotes)"))
    raise _Unreadable(_("a numpy array of dtype {dtype}").format(dtype=array.dtype))


def _to_tensor(answer, depth: int = 0) -> torch.Tensor:
    """A CPU tensor of the answer's values (bool, int64, float64 or complex128)."""
    if depth > _MAX_DEPTH:
        raise _Unreadable(_("lists nested too deeply"))
    if isinstance(answer, torch.Tensor):
        if answer.device.type == "meta":
            raise _Unreadable(
                _(
                    "a tensor on the meta device, which keeps shapes but no values: "
                    "compute it on a real device (e.g. the CPU)"
                )
            )
        t = answer.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        t = t.cpu()
        if t.is_complex():
            return t.to(torch.complex128)
        if t.dtype == torch.bool:
            return t.clone()
        if t.is_floating_point() or t.dtype == torch.uint64:
            return t.to(torch.float64)
        return t.to(torch.int64)
    if isinstance(answer, (np.ndarray, np.generic)):
        return _from_numpy(answer, depth)
    if isinstance(answer, bool):
        return torch.tensor(answer)
    if isinstance(answer, numbers.Integral):
        value = int(answer)
        if -(2**63) <= value < 2**63:
            return torch.tensor(value, dtype=torch.int64)
        if abs(value) > 1e308:
            raise _Unreadable(_("a number too large for a float"))
        return torch.tensor(float(value), dtype=torch.float64)
    if isinstance(answer, (numbers.Real, Decimal)):
        try:
            return torch.tensor(float(answer), dtype=torch.float64)
        except (OverflowError, ValueError, TypeError):
            raise _Unreadable(_("a number too large for a float")) from None
    if isinstance(answer, numbers.Complex):
        return torch.tensor(complex(answer), dtype=torch.complex128)
    if isinstance(answer, (str, bytes)):
        raise _Unreadable(_("text, not numbers (drop the quotes)"))
    if isinstance(answer, (list, tuple, range)):
        items = [_to_tensor(item, depth + 1) for item in answer]
        if not items:
            return torch.zeros(0, dtype=torch.float64)
        if len({tuple(t.shape) for t in items}) > 1:
            raise _Unreadable(_("rows of different lengths (not a rectangular table)"))
        dtype = functools.reduce(torch.promote_types, (t.dtype for t in items))
        return torch.stack([t.to(dtype) for t in items])
    if isinstance(answer, Mapping):
        raise _Unreadable(_("a {kind}").format(kind="dict"))
    raise _Unreadable(_("a {kind}").format(kind=type(answer).__name__))


def _values(answer, name: str, expected: str):
    if answer is None:
        raise NotYet(
            _("{name} is still None: replace it with {expected}").format(
                name=name, expected=expected
            )
        )
    try:
        return _to_tensor(answer)
    except _Unreadable as why:
        raise NotYet(_should_be(name, expected, str(why))) from None
    except Exception:
        raise NotYet(_should_be(name, expected, describe(answer))) from None


def _should_be(name: str, expected: str, got: str) -> str:
    return _("{name} should be {expected}, got {got}").format(
        name=name, expected=expected, got=got
    )


def _complex_values(name: str, t: torch.Tensor) -> NotYet:
    return NotYet(
        _(
            "{name} holds complex numbers ({dtype}); this answer is real numbers: keep "
            "the real part (.real) only if the imaginary part really is zero, or use "
            "torch.view_as_real for (x, y) pairs"
        ).format(name=name, dtype=t.dtype)
    )


def as_tensor(answer, name: str, *, finite: bool = True, nan_hint: str = ""):
    """answer as a float64 CPU tensor (any shape); raises NotYet: not numbers, complex,
    a meta tensor, NaN anywhere, or (with finite=True) an inf anywhere. bool values read
    as 0 and 1."""
    t = _values(answer, name, _("a tensor or a list of numbers"))
    if t.is_complex():
        raise _complex_values(name, t)
    t = t.to(torch.float64)
    if torch.isnan(t).any():
        if nan_hint:
            raise NotYet(
                _("{name} contains NaN: {hint}").format(name=name, hint=_(nan_hint))
            )
        raise NotYet(_("{name} contains NaN").format(name=name))
    if finite and torch.isinf(t).any():
        raise NotYet(
            _("{name} contains inf: every entry should be a finite number").format(
                name=name
            )
        )
    return t


def _scalar(answer, name: str, expected: str):
    """The one value of answer as a 0-d tensor (int64 or float64); raises NotYet."""
    t = _values(answer, name, expected)
    if t.is_complex():
        raise NotYet(
            _("{name} should be {expected}, got a complex number ({got})").format(
                name=name, expected=expected, got=describe(answer)
            )
        )
    if t.dtype == torch.bool:
        raise NotYet(_yes_no_is_not(name, expected))
    if t.numel() != 1:
        raise NotYet(
            _("{name} should be {expected}, got {count} numbers ({shape})").format(
                name=name, expected=expected, count=t.numel(), shape=tuple(t.shape)
            )
        )
    return t.reshape(())


def _yes_no_is_not(name: str, expected: str) -> str:
    return _("{name} should be {expected}; True / False are a yes/no").format(
        name=name, expected=expected
    )


def as_number(answer, name: str):
    """answer as one finite real float; raises NotYet. Reads 0-d and one-element tensors
    and arrays of any dtype and device, numpy scalars, fractions; not bools, text or
    complex numbers."""
    t = _scalar(answer, name, _("one number"))
    value = float(t)
    if math.isnan(value):
        raise NotYet(
            _("{name} is NaN (a 0/0 or an inf - inf somewhere?)").format(name=name)
        )
    if math.isinf(value):
        raise NotYet(_("{name} is infinite").format(name=name))
    return value


def as_count(answer, name: str, *, what: str = ""):
    """answer as an exact int; raises NotYet. 33, np.int64(33), 33.0, tensor(33) and
    tensor([33.]) all read 33; 33.5, NaN, inf, True, text and complex numbers do not
    (never truncated). what: what the number counts ("a number of pairs"), if anything."""
    if what:
        expected = _("{what}, a whole number").format(what=_(what))
    else:
        expected = _("a whole number")
    is_bool = isinstance(answer, (bool, np.bool_))
    if isinstance(answer, numbers.Integral) and not is_bool:
        return int(answer)
    t = _scalar(answer, name, expected)
    if not t.is_floating_point():
        return int(t)
    value = float(t)
    if not math.isfinite(value):
        raise NotYet(_should_be(name, expected, str(value)))
    if value != math.floor(value):
        raise NotYet(
            _("{name} should be {expected}, got {value:.6g}: it is not whole").format(
                name=name, expected=expected, value=value
            )
        )
    return int(value)


def as_numbers(answer, name: str, n: int, *, whole: bool = False, what: str = ""):
    """answer as a tuple of n finite real numbers (ints when whole=True, never
    truncated); raises NotYet. Reads tuples and lists (also of numpy scalars or 0-d
    tensors), arrays and tensors of shape [n]."""
    if what:
        what = _(what)
    elif whole:
        what = _("{n} whole numbers").format(n=n)
    else:
        what = _("{n} numbers").format(n=n)
    t = _values(answer, name, what)
    if t.is_complex():
        raise NotYet(_got_complex(name, what))
    if t.dtype == torch.bool:
        raise NotYet(_yes_no_is_not(name, what))
    if t.dim() != 1 or t.numel() != n:
        raise NotYet(
            _(
                "{name} should be {expected}, got {count} numbers of shape {shape}"
            ).format(name=name, expected=what, count=t.numel(), shape=tuple(t.shape))
        )
    if not t.is_floating_point():
        values = [int(v) for v in t.tolist()]
        return tuple(values) if whole else tuple(float(v) for v in values)
    values = t.tolist()
    if not all(math.isfinite(v) for v in values):
        raise NotYet(
            _("{name} should be {expected}, got {values} (not finite)").format(
                name=name, expected=what, values=values
            )
        )
    if whole:
        if any(v != math.floor(v) for v in values):
            shown = ", ".join(f"{v:.6g}" for v in values)
            raise NotYet(
                _("{name} should be {expected}, got ({shown}): not all whole").format(
                    name=name, expected=what, shown=shown
                )
            )
        return tuple(int(v) for v in values)
    return tuple(values)


def _got_complex(name: str, expected: str) -> str:
    return _("{name} should be {expected}, got complex numbers").format(
        name=name, expected=expected
    )


def as_pair(answer, name: str, *, whole: bool = False, what: str = ""):
    """read_numbers with n = 2: (x, y); raises NotYet."""
    what = what or (N_("a pair of whole numbers") if whole else "")
    return as_numbers(answer, name, 2, whole=whole, what=what)


def as_complex(answer, name: str):
    """One complex number, given as a complex (Python, numpy, a one-element complex
    tensor) or as two reals [x, y] = x + iy; raises NotYet otherwise."""
    expected = _("one complex number or two real numbers [x, y]")
    t = _values(answer, name, expected)
    if t.is_complex():
        if t.numel() != 1:
            raise NotYet(
                _("{name} should be {expected}, got {count} complex numbers").format(
                    name=name, expected=expected, count=t.numel()
                )
            )
        z = complex(t.reshape(()).item())
    else:
        pair = as_numbers(answer, name, 2, what=expected)
        z = complex(*pair)
    if not (math.isfinite(z.real) and math.isfinite(z.imag)):
        raise NotYet(_("{name} is not finite: {z}").format(name=name, z=z))
    return z


def sorted_set(items, name: str, expected: str) -> list:
    """A set's items in order (a set has none of its own); NotYet when they cannot be
    compared (numbers and words mixed)."""
    try:
        return sorted(items)
    except TypeError:
        raise NotYet(
            _("{name} should be {expected}, got a set of mixed things").format(
                name=name, expected=expected
            )
        ) from None


def whole_numbers(t: torch.Tensor, name: str, expected: str) -> list[int]:
    """t's values, flattened, as ints; NotYet when a float among them is not whole (or not
    finite): 2.0 is 2, 2.5 is no index and no seed."""
    values = t.reshape(-1).tolist()
    if t.is_floating_point() and not all(
        math.isfinite(v) and v == math.floor(v) for v in values
    ):
        raise NotYet(
            _("{name} should be {expected}; not all are whole numbers").format(
                name=name, expected=expected
            )
        )
    return [int(v) for v in values]


def as_indices(answer, name: str, size: int):
    """A set of indices in [0, size): a bool mask of `size` entries, or whole numbers (a
    list, set, range, array or tensor of them, in any order); raises NotYet otherwise."""
    expected = _(
        "indices between 0 and {last} (or a bool mask of {size} entries)"
    ).format(last=size - 1, size=size)
    if isinstance(answer, (set, frozenset)):
        answer = sorted_set(answer, name, expected)
    t = _values(answer, name, expected)
    if t.is_complex():
        raise NotYet(_got_complex(name, expected))
    if t.dtype == torch.bool:
        if t.dim() != 1 or t.numel() != size:
            raise NotYet(
                _("{name} should be {expected}, got a mask of shape {shape}").format(
                    name=name, expected=expected, shape=tuple(t.shape)
                )
            )
        return frozenset(int(i) for i in t.nonzero().flatten().tolist())
    if t.dim() > 1:
        raise NotYet(
            _("{name} should be {expected}, got shape {shape}").format(
                name=name, expected=expected, shape=tuple(t.shape)
            )
        )
    indices = whole_numbers(t, name, expected)
    if any(not 0 <= i < size for i in indices):
        raise NotYet(
            _("{name} should be {expected}; some are outside that range").format(
                name=name, expected=expected
            )
        )
    return frozenset(indices)


def _is_collection(part) -> bool:
    if isinstance(part, (torch.Tensor, np.ndarray)):
        return part.ndim > 0
    return isinstance(part, (list, tuple, range, set, frozenset))


def as_groups(answer, name: str, groups, size: int, *, what: str):
    """Pairs 0 .. size - 1 split into `groups` (e.g. kept, blended, interpolated), as
    (counts, index sets or None): given as one count per group, one collection of pair
    indices per group, or a dict with the groups as keys; the sets only when every group
    came as indices. Raises NotYet."""
    if isinstance(answer, dict):
        keys = {k.strip().lower(): v for k, v in answer.items() if isinstance(k, str)}
        missing = [k for k in groups if k not in keys]
        if missing:
            raise NotYet(
                _("the dict needs the keys {keys}; no {missing}").format(
                    keys=list(groups), missing=missing
                )
            )
        parts = [keys[k] for k in groups]
    else:
        try:
            counts = as_numbers(answer, name, len(groups), whole=True, what=_(what))
            return counts, None
        except NotYet:
            some = isinstance(answer, (list, tuple)) and len(answer) == len(groups)
            if not some or not any(map(_is_collection, answer)):
                raise
        parts = list(answer)
    counts, sets = [], []
    for group, part in zip(groups, parts):
        try:
            what = _("the number of {name} pairs").format(name=group)
            counts.append(as_count(part, group, what=what))
            sets.append(None)
            continue
        except NotYet:
            pass
        try:
            indices = as_indices(part, group, size)
        except NotYet:
            raise NotYet(
                _("{name}: give a count or the pair indices; got {got}").format(
                    name=group, got=describe(part)
                )
            ) from None
        counts.append(len(indices))
        sets.append(indices)
    return tuple(counts), (tuple(sets) if all(x is not None for x in sets) else None)


def as_yes_no(answer, name: str):
    """True or False: a bool, np.bool_, or a one-element bool tensor or array; raises
    NotYet otherwise."""
    if answer is None:
        raise NotYet(_("set {name} to True or False").format(name=name))
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    if isinstance(answer, (str, np.str_)):
        raise NotYet(
            _("{name} should be True or False (without quotes), got {got}").format(
                name=name, got=describe(answer)
            )
        )
    if isinstance(answer, (torch.Tensor, np.ndarray)):
        t = _values(answer, name, _("True or False"))
        if t.dtype == torch.bool and t.numel() == 1:
            return bool(t.reshape(()))
    raise NotYet(
        _("{name} should be True or False, got {got}").format(
            name=name, got=describe(answer)
        )
    )


def as_choices(answer, name: str, keys, choices):
    """A dict {key: choice} with every value one of `choices` (strings; case and spaces
    do not matter, in keys either); raises NotYet otherwise. Other keys are left out."""
    keys, choices = list(keys), list(choices)
    example = f"{{{keys[0]!r}: {choices[0]!r}, ...}}"
    if not isinstance(answer, Mapping):
        raise NotYet(
            _("{name} should be a dict like {example}, got {got}").format(
                name=name, example=example, got=describe(answer)
            )
        )
    read = {}
    for key, value in list(answer.items()):
        if not isinstance(key, str):
            continue
        key = key.strip().lower()
        if key not in keys:
            continue
        if not isinstance(value, str):
            raise NotYet(
                _("{key}: give one place, a string from {choices}, got {got}").format(
                    key=repr(key), choices=choices, got=describe(value)
                )
            )
        value = value.strip().lower()
        if value not in choices:
            raise NotYet(
                _("{key}: use one of {choices}, got {got}").format(
                    key=repr(key), choices=choices, got=describe(value)
                )
            )
        read[key] = value
    return read


def squeeze(text) -> str:
    """A name as checkers compare it: lower case, without spaces, hyphens, underscores,
    dots or plus signs, and without a "rope +" in front (rope + YaRN is YaRN)."""
    text = str(text).strip().lower()
    for prefix in ("rope+", "rope +", "rope + "):
        if text.startswith(prefix) and len(text) > len(prefix):
            text = text[len(prefix) :]
    return "".join(c for c in text if c not in " -_.+")


def as_choice(answer, name: str, aliases: Mapping, *, names, unknown, near=None):
    """The key an answer names, one string: `aliases` maps each way to write a key (its
    id, its label in English and in the learner's language) to the key, compared after
    squeeze(). `near` maps names that are known wrong choices to their message; any
    other name gets `unknown`. Messages are formatted with names (the choices to show)
    and got (the answer); raises NotYet."""
    if isinstance(answer, np.ndarray) and answer.ndim == 0 and answer.dtype.kind == "U":
        answer = str(answer)
    one = isinstance(answer, (list, tuple, set, frozenset)) and len(answer) == 1
    if one or (
        isinstance(answer, np.ndarray) and answer.ndim >= 1 and answer.size == 1
    ):
        raise NotYet(_("give one name (a string), not a collection of names"))
    if not isinstance(answer, (str, np.str_)):
        raise NotYet(
            _("answer with one of {names} (a string), got {got}").format(
                names=names, got=describe(answer)
            )
        )
    text = squeeze(answer)
    keys = {squeeze(alias): key for alias, key in aliases.items()}
    if text in keys:
        return keys[text]
    near = {squeeze(alias): message for alias, message in (near or {}).items()}
    message = near.get(text, unknown)
    raise NotYet(_(message).format(names=names, got=describe(answer)))


def strict() -> bool:
    """Whether a checker's own bug is raised rather than shown as feedback: under pytest
    (PYTEST_CURRENT_TEST) or with ROPE_STRICT_CHECKERS=1 (tests/conftest.py sets it, so
    that the notebooks nbval runs are strict too)."""
    return "PYTEST_CURRENT_TEST" in os.environ or (
        os.environ.get("ROPE_STRICT_CHECKERS") == "1"
    )


_LIBRARIES = tuple(
    str(Path(p).resolve())
    for p in {
        Path(__file__).parents[1],
        *map(sysconfig.get_path, ("stdlib", "purelib")),
    }
)


def _raised_by_learner(error: BaseException) -> bool:
    """Whether the learner's own code is on the way to the error: a frame outside
    rope_lib, the standard library and the installed packages (a notebook cell, the
    learner's function or class)."""
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename  # "<string>": made by the library
        path = str(Path(filename).resolve())
        if not filename.startswith("<") and not path.startswith(_LIBRARIES):
            return True
        tb = tb.tb_next
    return False


def guarded(check):
    """Wrap a checker so that it returns a Feedback: a NotYet raised inside becomes a "not
    yet" with its message; an error raised in the learner's own code a "could not check".
    Any other exception is a bug of the checker: a "could not check" too for a learner,
    but raised under tests (strict()), so that a bug never hides as feedback."""

    @functools.wraps(check)
    def wrapper(answer):
        try:
            result = check(answer)
        except NotYet as why:
            return not_yet(str(why))
        except Exception as error:
            if strict() and not _raised_by_learner(error):
                raise
            return not_yet(
                _(
                    "could not check this answer ({error}); give it in the form the "
                    "exercise asks for, got {got}"
                ).format(error=type(error).__name__, got=describe(answer))
            )
        if not isinstance(result, Feedback):
            return not_yet(
                _("could not check this answer, got {got}").format(got=describe(answer))
            )
        return result

    return wrapper


def _returning(reader):
    """reader as a function that returns its NotYet as a Feedback (the read_* names, for
    code outside the checker machinery)."""

    @functools.wraps(reader)
    def read(*args, **kwargs):
        try:
            return reader(*args, **kwargs)
        except NotYet as why:
            return not_yet(str(why))

    return read


read_tensor, read_number, read_count = map(_returning, (as_tensor, as_number, as_count))
read_numbers, read_pair, read_complex = map(
    _returning, (as_numbers, as_pair, as_complex)
)
read_indices, read_yes_no = _returning(as_indices), _returning(as_yes_no)
read_choices = _returning(as_choices)
