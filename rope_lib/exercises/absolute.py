"""Checkers for lessons 1 and 2 (sinusoidal and learned position encodings).

    from rope_lib.exercises import absolute as ex
    ex.check_wavelengths(wavelengths)      # the wavelength of every pair, d_model = 64, base = 10000
    ex.check_shift_block(block)            # the 2x2 block of M_k for pair i = 1, k = 5, d_model = 8
    ex.check_offset_dots(dots)             # PE(m)·PE(m+Δ) for Δ = 0..31, d_model = 16
    ex.check_unfinished_pairs(count)            # pairs that never finish a turn within 512 training positions
    ex.check_previous_token_head(A)                # a previous-token head that works at every position

Each expected value is computed here from the formula, independently of the learner's route.
"""

from __future__ import annotations

import math

import torch

from ..language import _
from ..sinusoidal import offset_head_attends_to, sinusoidal_encoding
from . import Feedback, compare_tensor, correct, not_yet, same_values
from .answers import guarded, read_count, read_tensor

# Exercise 1 ---------------------------------------------------------------------------------
EX1_D, EX1_BASE = 64, 10000.0


def _ex1_expected() -> torch.Tensor:
    i = torch.arange(EX1_D // 2, dtype=torch.float64)
    return 2 * math.pi * EX1_BASE ** (2 * i / EX1_D)


@guarded
def check_wavelengths(answer):
    """Wavelengths (tokens per full turn) of the d_model/2 = 32 pairs, d_model = 64, base = 10000."""
    if answer is None:
        return not_yet(
            _(
                "replace `None` with a tensor of 32 wavelengths, one per pair (i = 0 .. 31)"
            )
        )
    a = read_tensor(answer, "wavelengths")
    if isinstance(a, Feedback):
        return a
    expected = _ex1_expected()
    if a.numel() == EX1_D:
        return not_yet(
            _(
                "you gave {d} numbers, one per coordinate; the sin and cos of a pair "
                "share one frequency, so there are d_model/2 = {pairs} wavelengths"
            ).format(d=EX1_D, pairs=EX1_D // 2)
        )
    if a.shape != expected.shape:
        return not_yet(
            _(
                "wavelengths should have shape {expected} (one per pair), got {got}"
            ).format(expected=tuple(expected.shape), got=tuple(a.shape))
        )
    i = torch.arange(EX1_D // 2, dtype=torch.float64)
    if same_values(a, expected / (2 * math.pi)):
        return not_yet(
            _(
                "these are base**(2i/d_model), the divisor in the formula (what a common "
                "write-up calls the period T_i); one full turn takes 2*pi radians, so the "
                "wavelength is 2*pi times that"
            )
        )
    if (
        same_values(a, 1 / expected)
        or same_values(a, 2 * math.pi / expected)
        or same_values(a, 1 / (expected / (2 * math.pi)))
    ):
        return not_yet(
            _(
                "these are frequencies (how fast a pair turns), not wavelengths; "
                "wavelength = 2*pi / frequency"
            )
        )
    if same_values(a, expected.flip(0)):
        return not_yet(
            _(
                "right numbers, reversed order: pair i = 0 is the fastest (wavelength 2*pi)"
            )
        )
    if same_values(a, 2 * math.pi * EX1_BASE ** (i / EX1_D)):
        return not_yet(_("the exponent is 2i/d_model (i counts pairs), not i/d_model"))
    if same_values(a, 2 * math.pi * EX1_BASE ** (2 * (i + 1) / EX1_D)):
        return not_yet(
            _(
                "off by one pair: the pairs start at i = 0, whose wavelength is exactly 2*pi"
            )
        )
    if same_values(a, 360 * EX1_BASE ** (2 * i / EX1_D)):
        return not_yet(
            _(
                "you used 360 (degrees) for one turn; the angles m·θ_i are in radians, "
                "so use 2*pi"
            )
        )
    feedback = compare_tensor(a, expected, "wavelengths", rtol=1e-4)
    if feedback is not None:
        return feedback
    return correct(
        _(
            "the wavelengths run from 2*pi = {first:.4f} to {last:.1f} tokens "
            "(2*pi * 10000**(62/64), just short of 2*pi * 10000)"
        ).format(first=float(expected[0]), last=float(expected[-1]))
    )


# Exercise 2 ---------------------------------------------------------------------------------
EX2_D, EX2_PAIR, EX2_K, EX2_BASE = 8, 1, 5, 10000.0


def _block(angle: float) -> torch.Tensor:
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, s], [-s, c]], dtype=torch.float64)


@guarded
def check_shift_block(answer):
    """The 2x2 block B with (PE[m+5, 2], PE[m+5, 3]) = B @ (PE[m, 2], PE[m, 3]) for d_model = 8."""
    if answer is None:
        return not_yet(_("replace `None` with a 2x2 tensor"))
    a = read_tensor(answer, _("the block"))
    if isinstance(a, Feedback):
        return a
    if a.shape != (2, 2):
        return not_yet(
            _("the block should have shape (2, 2), got {got}").format(
                got=tuple(a.shape)
            )
        )
    w = EX2_BASE ** (-2 * EX2_PAIR / EX2_D)  # 0.1
    angle = EX2_K * w
    expected = _block(angle)
    if same_values(a, expected.T):
        return not_yet(
            _(
                "this is the textbook rotation [[cos, -sin], [sin, cos]], written for a "
                "pair ordered (cos, sin); the encoding stores the pair as (sin, cos), "
                "column 2i first, so the signs of the sines swap (your matrix maps PE(m) "
                "to PE(m - 5))"
            )
        )
    if same_values(a, _block(math.radians(angle))) or same_values(
        a, _block(math.radians(angle)).T
    ):
        return not_yet(
            _("the angle Δ·θ_1 = {angle:.4f} is in radians; you used degrees").format(
                angle=angle
            )
        )
    if same_values(a, _block(EX2_K * 1.0)) or same_values(a, _block(EX2_K * 1.0).T):
        return not_yet(
            _(
                "you used pair 0's frequency θ_0 = 1; pair 1 (columns 2 and 3) turns at "
                "θ_1 = 10000**(-2/8) = 0.1"
            )
        )
    if same_values(a, _block(w)) or same_values(a, _block(w).T):
        return not_yet(
            _(
                "that is the block for a shift of Δ = 1; for Δ = {k} the angle is "
                "Δ·θ_1 = {angle:.4f}"
            ).format(k=EX2_K, angle=angle)
        )
    if same_values(a, _block(EX2_K * EX2_BASE ** (-EX2_PAIR / EX2_D))):
        return not_yet(
            _(
                "the frequency of pair i is base**(-2i/d_model); you used "
                "base**(-i/d_model)"
            )
        )
    feedback = compare_tensor(a, expected, _("the block"))
    if feedback is not None:
        return feedback
    return correct(
        _(
            "rotating the (sin, cos) pair by Δ·θ_1 = {angle:.4f} rad; no m appears "
            "anywhere, which is why one fixed matrix M_k shifts every position"
        ).format(angle=angle)
    )


# Exercise 3 ---------------------------------------------------------------------------------
EX3_D, EX3_K, EX3_BASE = 16, 32, 10000.0


def _ex3_expected() -> torch.Tensor:
    k = torch.arange(EX3_K, dtype=torch.float64)[:, None]
    w = EX3_BASE ** (-torch.arange(0, EX3_D, 2, dtype=torch.float64) / EX3_D)
    return torch.cos(k * w).sum(-1)


@guarded
def check_offset_dots(answer):
    """PE(m)·PE(m+Δ) for Δ = 0, 1, ..., 31 with d_model = 16, base = 10000 (a tensor of 32 numbers)."""
    if answer is None:
        return not_yet(
            _("replace `None` with a tensor of 32 dot products, for Δ = 0 .. 31")
        )
    a = read_tensor(answer, "dots")
    if isinstance(a, Feedback):
        return a
    expected = _ex3_expected()
    if a.dim() == 2:
        return not_yet(
            _(
                "you gave a {shape} table; sum over the coordinates to get one number "
                "per offset Δ (shape ({k},))"
            ).format(shape=tuple(a.shape), k=EX3_K)
        )
    if a.shape != expected.shape:
        return not_yet(
            _(
                "dots should have shape {expected}, one number per Δ = 0 .. {last}, "
                "got {got}"
            ).format(expected=tuple(expected.shape), last=EX3_K - 1, got=tuple(a.shape))
        )
    if same_values(a, expected / (EX3_D / 2)):
        return not_yet(
            _(
                "these are cosine similarities (divided by |PE|^2 = d_model/2 = 8); the "
                "exercise asks for the raw dot product, which is 8 at Δ = 0"
            )
        )
    if same_values(a, 2 * expected):
        return not_yet(
            _(
                "twice too large: each pair gives ONE term cos(Δ·θ_i) (sin*sin + "
                "cos*cos), not two"
            )
        )
    k = torch.arange(EX3_K, dtype=torch.float64)[:, None]
    w = EX3_BASE ** (-torch.arange(0, EX3_D, 2, dtype=torch.float64) / EX3_D)
    if same_values(a, torch.sin(k * w).sum(-1)):
        return not_yet(
            _(
                "you summed sin(Δ·θ_i); sin(a) sin(b) + cos(a) cos(b) = cos(a - b), so "
                "each pair gives cos(Δ·θ_i)"
            )
        )
    if same_values(
        a,
        torch.cos(
            k * EX3_BASE ** (-torch.arange(EX3_D // 2, dtype=torch.float64) / EX3_D)
        ).sum(-1),
    ):
        return not_yet(
            _(
                "the frequencies are base**(-2i/d_model), i = 0 .. 7; you used "
                "base**(-i/d_model)"
            )
        )
    if abs(float(a[0]) - EX3_D / 2) > 1e-3:
        return not_yet(
            _(
                "check Δ = 0 first: PE(m).PE(m) = |PE(m)|^2 = d_model/2 = {norm:g}, you "
                "have {got:.4f}"
            ).format(norm=EX3_D / 2, got=float(a[0]))
        )
    feedback = compare_tensor(a, expected, "dots")
    if feedback is not None:
        return feedback
    return correct(
        _(
            "from {first:.4f} at Δ = 0 down to {last:.4f} at Δ = 31: one number per "
            "offset, whatever m you started from"
        ).format(first=float(expected[0]), last=float(expected[-1]))
    )


# Exercise 4 ---------------------------------------------------------------------------------
EX4_L, EX4_D, EX4_BASE = 512, 128, 10000.0


def _ex4_counts() -> dict:
    i = torch.arange(EX4_D // 2, dtype=torch.float64)
    lam = 2 * math.pi * EX4_BASE ** (2 * i / EX4_D)
    return {
        "right": int((lam > EX4_L).sum()),
        "no_2pi": int((lam / (2 * math.pi) > EX4_L).sum()),
        "complement": int((lam <= EX4_L).sum()),
        "coordinates": 2 * int((lam > EX4_L).sum()),
        "i_over_d": int((2 * math.pi * EX4_BASE ** (i / EX4_D) > EX4_L).sum()),
    }


@guarded
def check_unfinished_pairs(answer):
    """How many of the 64 pairs (d_model = 128, base = 10000) have a wavelength longer than the
    training length L = 512, so that training never shows them a full turn? An int."""
    if answer is None:
        return not_yet(_("replace `None` with a whole number (how many pairs)"))
    if isinstance(answer, torch.Tensor) and answer.numel() > 1:
        return not_yet(
            _(
                "give one number, the count; you gave a tensor of shape {shape} "
                "(a boolean mask? then sum it)"
            ).format(shape=tuple(answer.shape))
        )
    n = read_count(answer, _("the count"), what=_("a number of pairs"))
    if isinstance(n, Feedback):
        return n
    counts = _ex4_counts()
    if n == counts["right"]:
        return correct(
            _(
                "{n} of the 64 pairs (i = {first} .. 63) have wavelengths over {length} "
                "tokens: during training they only ever visit an arc of their circle, "
                "and positions past 512 take them onto arcs no weight was fitted to"
            ).format(n=n, first=64 - n, length=EX4_L)
        )
    if n == counts["no_2pi"]:
        return not_yet(
            _(
                "you compared base**(2i/d_model) with L; the wavelength is 2*pi times that"
            )
        )
    if n == counts["complement"]:
        return not_yet(
            _(
                "that counts the pairs that DO finish a turn within 512 tokens; the "
                "question asks for the others"
            )
        )
    if n == counts["coordinates"]:
        return not_yet(
            _(
                "that counts coordinates (sin and cos columns); the question counts pairs"
            )
        )
    if n == counts["i_over_d"]:
        return not_yet(_("the exponent is 2i/d_model with i = 0 .. 63, not i/d_model"))
    if not 0 <= n <= EX4_D // 2:
        return not_yet(
            _(
                "there are only {pairs} pairs, so the count is between 0 and {pairs}; "
                "got {n}"
            ).format(pairs=EX4_D // 2, n=n)
        )
    return not_yet(
        _(
            "{n} is not it: compute the wavelength 2*pi * 10000**(2i/128) of each pair "
            "i = 0 .. 63 and count those above {length}"
        ).format(n=n, length=EX4_L)
    )


# Exercise 5 ---------------------------------------------------------------------------------
EX5_D, EX5_N, EX5_BASE = 16, 2048, 10000.0


@guarded
def check_previous_token_head(answer):
    """A [16, 16] matrix A such that, with s(m, n) = PE[m] @ A @ PE[n] over keys n <= m, every query m >= 1
    attends to n = m - 1, for all positions m < 2048 (d_model = 16, base = 10000)."""
    if answer is None:
        return not_yet(_("replace `None` with a 16x16 tensor A"))
    a = read_tensor(answer, "A")
    if isinstance(a, Feedback):
        return a
    if a.shape != (EX5_D, EX5_D):
        return not_yet(
            _("A should have shape ({d}, {d}), got {got}").format(
                d=EX5_D, got=tuple(a.shape)
            )
        )
    table = sinusoidal_encoding(EX5_N, EX5_D, EX5_BASE).to(torch.float64)
    looks = offset_head_attends_to(table, a)
    m = torch.arange(1, EX5_N)
    hits = looks[1:] == m - 1
    if bool(hits.all()):
        return correct(
            _(
                "every query m = 1 .. {last} attends to m - 1: a fixed matrix reads the "
                "offset at every position, because PE(m - 1) = M_1^T PE(m) for all m"
            ).format(last=EX5_N - 1)
        )
    if bool((looks[1:] == m).all()):
        if torch.allclose(
            a @ a.T, torch.eye(EX5_D, dtype=torch.float64), atol=1e-6
        ) and not torch.allclose(a, torch.eye(EX5_D, dtype=torch.float64), atol=1e-6):
            return not_yet(
                _(
                    "every query attends to itself. Your A looks one step AHEAD (it "
                    "compares PE(m + 1) with PE(n)), which the causal mask forbids, so "
                    "the query itself wins; the shift goes the other way: transpose A"
                )
            )
        return not_yet(
            _(
                "every query attends to itself: PE(m).PE(n) is largest at n = m (the "
                "identity's choice); A has to move PE(m) one step back first"
            )
        )
    first = int(m[~hits][0])
    share = float(hits.double().mean())
    if bool((looks[1:] == 0).all()):
        why = (
            _("A is zero: every key scores the same")
            if not a.any()
            else _("A favours n = 0")
        )
        return not_yet(
            _(
                "every query attends to the first key, n = 0 ({why}; ties go to the first "
                "key): that is right at m = 1 only by accident. A has to move PE(m) one "
                "step back: s(m, n) = PE(m - 1).PE(n)"
            ).format(why=why)
        )
    if bool(hits[: first - 1].all()) and first > 2:
        return not_yet(
            _(
                "right for every query up to m = {last_right}, then wrong from m = "
                "{first} ({share:.1%} of the {queries} queries right): like a trained "
                "head, it only works where it was fitted. Build A from the shift matrix "
                "instead"
            ).format(last_right=first - 1, first=first, share=share, queries=EX5_N - 1)
        )
    return not_yet(
        _(
            "{share:.1%} of the queries attend to m - 1 (the first miss is at m = "
            "{first}); you want s(m, n) = PE(m - 1).PE(n)"
        ).format(share=share, first=first)
    )
