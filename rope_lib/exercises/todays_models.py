"""Checkers for lesson 9 (RoPE in today's models). Each returns a Feedback naming the
likely slip: the NeoX denominator in p-RoPE, a forgotten +1 in Llama 4's temperature,
the wrong base for local layers, a per-head rotated key in MLA."""

from __future__ import annotations

import math

import torch

from ..language import _
from ..models import llama4_attention_scale
from ..rotary import inv_frequencies
from ..scaling import rope_frequencies
from . import Feedback, compare_tensor, correct, not_yet
from .answers import guarded, read_count, read_number, read_tensor

# The settings each exercise uses (the notebook prints them).
EX1 = {"head_dim": 64, "base": 10000.0, "partial_rotary_factor": 0.5}
EX2 = {"position": 16383, "floor_scale": 8192, "attn_scale": 0.1}
EX3 = {"head_dim": 256, "local_base": 10000.0, "global_base": 1000000.0, "window": 1024}
EX4 = {
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "heads": 128,
}


def _close(a: float, b: float, rtol: float = 1e-4) -> bool:
    return abs(a - b) <= rtol * abs(b)


@guarded
def check_proportional_frequencies(answer) -> object:
    """Gemma 4's p-RoPE ("proportional") frequencies for d = 64, b = 10000, p = 0.5: a
    tensor of d/2 = 32 values, base ** (-2i/d) for the first 16 pairs, 0 after."""
    d, b, p = EX1["head_dim"], EX1["base"], EX1["partial_rotary_factor"]
    expected = rope_frequencies("proportional", d, b, partial_rotary_factor=p)[0]
    expected = expected.double()
    values = read_tensor(answer, "inv_freq")
    if isinstance(values, Feedback):
        return values
    values = values.flatten()
    rotated = int(p * d // 2)
    # the numbers the messages quote
    numbers = {
        "rotated": rotated,
        "width": int(p * d),
        "pairs": d // 2,
        "d": d,
        "rest": d // 2 - rotated,
    }
    neox = inv_frequencies(
        int(p * d), b
    ).double()  # GPT-NeoX: denominator = rotated width
    if values.shape == neox.shape and torch.allclose(values, neox, rtol=1e-4):
        return not_yet(
            _(
                "these are GPT-NeoX's partial-rotary frequencies ({rotated} values, "
                "exponent -2i/{width}): p-RoPE keeps all {pairs} pairs, divides by the "
                "whole head d = {d}, and gives the last {rest} pairs frequency 0"
            ).format(**numbers)
        )
    if values.shape == expected[:rotated].shape and torch.allclose(
        values, expected[:rotated], rtol=1e-4
    ):
        return not_yet(
            _(
                "the first {rotated} frequencies are right; p-RoPE keeps all {pairs} "
                "pairs: append {rest} zeros (those pairs never turn)"
            ).format(**numbers)
        )
    if values.shape == expected.shape:
        padded = torch.cat([neox, torch.zeros(d // 2 - rotated, dtype=torch.float64)])
        if torch.allclose(values, padded, rtol=1e-4):
            return not_yet(
                _(
                    "the zeros are right, but the exponent's denominator is the whole "
                    "head d = {d}, not the rotated width {width}: theta_i = b^(-2i/{d})"
                ).format(**numbers)
            )
        full = inv_frequencies(d, b).double()
        if torch.allclose(values, full, rtol=1e-4):
            return not_yet(
                _(
                    "that is plain RoPE on the whole head; p-RoPE sets the last {rest} "
                    "pairs (the slowest) to frequency 0"
                ).format(**numbers)
            )
        if torch.allclose(values.flip(0), expected, rtol=1e-4):
            return not_yet(
                _("the zeros go to the slowest pairs, at the end: reverse the order")
            )
    problem = compare_tensor(values, expected, "inv_freq", rtol=1e-4, atol=1e-9)
    if problem is not None:
        return problem
    return correct(
        _(
            "{rotated} pairs turn at b^(-2i/{d}), exactly as the first {rotated} pairs "
            "of plain RoPE on the whole head; the {rest} slowest pairs get 0 and carry "
            "no position at all (transformers' ROPE_INIT_FUNCTIONS['proportional'])."
        ).format(**numbers)
    )


@guarded
def check_nope_query_scale(answer) -> object:
    """Llama 4's query scale on a NoPE layer at position m = 16383 (floor_scale 8192,
    attn_scale 0.1): 1 + 0.1 ln(1 + floor((m + 1) / 8192))."""
    value = read_number(answer, _("the scale"))
    if isinstance(value, Feedback):
        return value
    m, f, a = EX2["position"], EX2["floor_scale"], EX2["attn_scale"]
    expected = float(llama4_attention_scale(torch.tensor([m]), f, a)[0])
    if _close(value, expected):
        return correct(
            _(
                "scale = 1 + {a} ln(1 + floor({tokens}/{f})) = 1 + {a} ln 3 = "
                "{expected:.4f}. It multiplies the query only, so each logit q.k of "
                "this token grows by that factor."
            ).format(a=a, tokens=m + 1, f=f, expected=expected)
        )
    if _close(value, expected**2):
        return not_yet(
            _(
                "that is the square: only the query is scaled (not the key), so the "
                "logits get the scale once"
            )
        )
    if _close(value, 1 + a * math.log1p(m // f)):
        return not_yet(
            _(
                "you used floor(m / {f}) = {floor}; the code counts tokens from 1: "
                "floor((m + 1) / {f}) (or you dropped the 1 + inside the log)"
            ).format(f=f, floor=m // f)
        )
    if _close(value, 1 + a * math.log10(1 + (m + 1) // f)):
        return not_yet(_("ln is the natural logarithm (torch.log1p), not log10"))
    if _close(value, a * math.log1p((m + 1) // f)):
        return not_yet(_("you left out the 1 +: the scale is 1 for the first tokens"))
    return not_yet(
        _(
            "scale = 1 + attn_scale * ln(1 + floor((m + 1) / floor_scale)) with m = "
            "{m}; got {value:.6g}"
        ).format(m=m, value=value)
    )


@guarded
def check_local_slow_pairs(answer) -> object:
    """Gemma 3's local layers (d = 256, base 10,000, window 1024 tokens): how many pairs
    have a wavelength 2 pi / theta_i longer than the window?"""
    value = read_count(answer, _("the count"), what=_("a number of pairs"))
    if isinstance(value, Feedback):
        return value
    d, w = EX3["head_dim"], EX3["window"]

    def longer(base, two_pi=True):
        theta = inv_frequencies(d, base).double()
        lam = (2 * math.pi if two_pi else 1.0) / theta
        return int((lam > w).sum())

    expected = longer(EX3["local_base"])
    if value == expected:
        return correct(
            _(
                "{expected} of the {pairs} pairs never finish a turn inside the "
                "window: within the {w} tokens a local layer sees, they barely move. "
                "With the global base 1,000,000 it would be {global_count}."
            ).format(
                expected=expected,
                pairs=d // 2,
                w=w,
                global_count=longer(EX3["global_base"]),
            )
        )
    if value == longer(EX3["global_base"]):
        return not_yet(
            _("that count uses the global base 1,000,000; local layers use 10,000")
        )
    if value == longer(EX3["local_base"], two_pi=False):
        return not_yet(
            _(
                "a wavelength is 2 pi / theta_i (a full turn is 2 pi radians), not 1 / "
                "theta_i"
            )
        )
    if value == d // 2 - expected:
        return not_yet(
            _(
                "{value} pairs are the fast ones; the question asks for the slow ones"
            ).format(value=value)
        )
    if value in (2 * expected, d - expected):
        return not_yet(_("count pairs (d/2 = 128 of them), not coordinates"))
    return not_yet(
        _(
            "count the pairs i < {pairs} with 2 pi * 10000^(2i/{d}) > {w}; got {value}"
        ).format(pairs=d // 2, d=d, w=w, value=value)
    )


@guarded
def check_mla_cache_size(answer) -> object:
    """Numbers DeepSeek-V3 caches per token and layer: the latent c (kv_lora_rank = 512)
    plus the one shared rotated key (qk_rope_head_dim = 64)."""
    value = read_count(answer, _("the size"), what=_("a count of numbers"))
    if isinstance(value, Feedback):
        return value
    c, r, n, v, h = (
        EX4[k]
        for k in (
            "kv_lora_rank",
            "qk_rope_head_dim",
            "qk_nope_head_dim",
            "v_head_dim",
            "heads",
        )
    )
    expected = c + r
    if value == expected:
        full = h * (n + r + v)
        return correct(
            _(
                "{c} + {r} = {expected} numbers, against {full} for plain multi-head "
                "attention with the same heads (keys {h} x {key}, values {h} x {v}): "
                "{times:.0f} times less."
            ).format(
                c=c,
                r=r,
                expected=expected,
                full=full,
                h=h,
                key=n + r,
                v=v,
                times=full / expected,
            )
        )
    if value == c:
        return not_yet(
            _(
                "the latent alone cannot carry position: the rotated key part "
                "(qk_rope_head_dim) is cached beside it"
            )
        )
    if value == c + h * r:
        return not_yet(
            _("the rotated key is shared by all {h} heads: it is cached once").format(
                h=h
            )
        )
    if value == h * (n + r + v) or value == h * (n + r) * 2:
        return not_yet(
            _("that is plain multi-head attention's cache; MLA caches a latent")
        )
    return not_yet(
        _("add what each token leaves in the cache per layer; got {value}").format(
            value=value
        )
    )
