"""Checkers for lesson 13 (RoPE in today's models). Each returns a Feedback naming the
likely slip: the NeoX denominator in p-RoPE, a forgotten +1 in Llama 4's temperature,
the wrong base for local layers, a per-head rotated key in MLA, a config that lost its
original_max_position_embeddings."""

from __future__ import annotations

import math
from functools import partial

import torch

from ..configs import read_rope_config
from ..language import N_, _
from ..models import MODELS, llama4_attention_scale
from ..rotary import inv_frequencies
from ..scaling import rope_frequencies
from . import Mistake, Word, close, compare_tensor, either, exercise
from .answers import as_count, as_number, as_tensor, describe
from .feedback import NotYet

F64 = torch.float64

# The settings each exercise uses (the notebook prints them).
EX1 = {"head_dim": 64, "base": 10000.0, "partial_rotary_factor": 0.5}
EX2 = {"position": 16383, "floor_scale": 8192, "attn_scale": 0.1}
# Gemma 3 1B's local layers: Gemma 3 4B's (d 256, base 10,000) with a 512-token window
EX3 = {"head_dim": 256, "local_base": 10000.0, "global_base": 1000000.0, "window": 512}
EX3_4B_WINDOW = 1024
EX4 = {
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128,
    "v_head_dim": 128,
    "heads": 128,
}

# Exercise 1: p-RoPE; GPT-NeoX's partial rotary divides by the rotated width instead.
D1, B1, P1 = EX1["head_dim"], EX1["base"], EX1["partial_rotary_factor"]
ROTATED = int(P1 * D1 // 2)
NEOX = inv_frequencies(int(P1 * D1), B1).double()
P_ROPE = rope_frequencies("proportional", D1, B1, partial_rotary_factor=P1)[0].double()


def _like(value):
    """A mistake's value, matched with torch.allclose's atol (the frequencies near 0)."""
    return lambda a: close(rtol=1e-4)(a, value)


@exercise(
    read=lambda answer, name: as_tensor(answer, name).flatten(),
    name="inv_freq",
    expected=P_ROPE,
    same=close(rtol=1e-4, atol=1e-9),
    compare=partial(compare_tensor, rtol=1e-4, atol=1e-9),
    mistakes=[
        Mistake(
            _like(NEOX),
            N_(
                "these are GPT-NeoX's partial-rotary frequencies ({rotated} values, exponent "
                "-2i/{width}): p-RoPE keeps all {pairs} pairs, divides by the whole head d = "
                "{d}, and gives the last {rest} pairs frequency 0"
            ),
        ),
        Mistake(
            _like(P_ROPE[:ROTATED]),
            N_(
                "the first {rotated} frequencies are right; p-RoPE keeps all {pairs} pairs: "
                "append {rest} zeros (those pairs never turn)"
            ),
        ),
        Mistake(
            _like(torch.cat([NEOX, torch.zeros(D1 // 2 - ROTATED, dtype=F64)])),
            N_(
                "the zeros are right, but the exponent's denominator is the whole head d = "
                "{d}, not the rotated width {width}: theta_i = b^(-2i/{d})"
            ),
        ),
        Mistake(
            _like(inv_frequencies(D1, B1).double()),
            N_(
                "that is plain RoPE on the whole head; p-RoPE sets the last {rest} pairs (the "
                "slowest) to frequency 0"
            ),
        ),
        Mistake(
            _like(P_ROPE.flip(0)),
            N_("the zeros go to the slowest pairs, at the end: reverse the order"),
        ),
    ],
    facts={
        "rotated": ROTATED,
        "width": int(P1 * D1),
        "pairs": D1 // 2,
        "d": D1,
        "rest": D1 // 2 - ROTATED,
    },
    right=N_(
        "{rotated} pairs turn at b^(-2i/{d}), exactly as the first {rotated} pairs of "
        "plain RoPE on the whole head; the {rest} slowest pairs get 0 and carry no "
        "position at all (transformers' ROPE_INIT_FUNCTIONS['proportional'])."
    ),
)
def check_proportional_frequencies(answer):
    """Gemma 4's p-RoPE ("proportional") frequencies for d = 64, b = 10000, p = 0.5: a
    tensor of d/2 = 32 values, base ** (-2i/d) for the first 16 pairs, 0 after."""


# Exercise 2: Llama 4's query scale on a NoPE layer.
M2, F2, A2 = EX2["position"], EX2["floor_scale"], EX2["attn_scale"]
SCALE = float(llama4_attention_scale(torch.tensor([M2]), F2, A2)[0])


@exercise(
    read=as_number,
    name=Word(N_("the scale")),
    expected=SCALE,
    mistakes=[
        Mistake(
            SCALE**2,
            N_(
                "that is the square: only the query is scaled (not the key), so the logits "
                "get the scale once"
            ),
        ),
        Mistake(
            1 + A2 * math.log1p(M2 // F2),
            N_(
                "you used floor(m / {f}) = {floor}; the code counts tokens from 1: floor((m "
                "+ 1) / {f}) (or you dropped the 1 + inside the log)"
            ),
        ),
        Mistake(
            1 + A2 * math.log10(1 + (M2 + 1) // F2),
            N_("ln is the natural logarithm (torch.log1p), not log10"),
        ),
        Mistake(
            A2 * math.log1p((M2 + 1) // F2),
            N_("you left out the 1 +: the scale is 1 for the first tokens"),
        ),
    ],
    facts={"a": A2, "tokens": M2 + 1, "f": F2, "floor": M2 // F2, "m": M2},
    otherwise=N_(
        "scale = 1 + attn_scale * ln(1 + floor((m + 1) / floor_scale)) with m = {m}; got "
        "{value:.6g}"
    ),
    right=N_(
        "scale = 1 + {a} ln(1 + floor({tokens}/{f})) = 1 + {a} ln 3 = {expected:.4f}. It "
        "multiplies the query only, so each logit q.k of this token grows by that factor."
    ),
)
def check_nope_query_scale(answer):
    """Llama 4's query scale on a NoPE layer at position m = 16383 (floor_scale 8192,
    attn_scale 0.1): 1 + 0.1 ln(1 + floor((m + 1) / 8192))."""


# Exercise 3: Gemma 3's local layers.
D3, W3 = EX3["head_dim"], EX3["window"]


def _longer(base: float, two_pi: bool = True, window: int = W3) -> int:
    """How many pairs have a wavelength longer than the window."""
    theta = inv_frequencies(D3, base).double()
    return int(((2 * math.pi if two_pi else 1.0) / theta > window).sum())


LOCAL_SLOW = _longer(EX3["local_base"])


@exercise(
    read=as_count,
    name=Word(N_("the count")),
    options={"what": N_("a number of pairs")},
    expected=LOCAL_SLOW,
    mistakes=[
        Mistake(
            _longer(EX3["local_base"], window=EX3_4B_WINDOW),
            N_(
                "that is Gemma 3 4B's count for its 1024-token window; with {w} tokens "
                "the window is shorter, so more pairs are slower than it"
            ),
        ),
        Mistake(
            _longer(EX3["global_base"]),
            N_("that count uses the global base 1,000,000; local layers use 10,000"),
        ),
        Mistake(
            _longer(EX3["local_base"], two_pi=False),
            N_(
                "a wavelength is 2 pi / theta_i (a full turn is 2 pi radians), not 1 / "
                "theta_i"
            ),
        ),
        Mistake(
            D3 // 2 - LOCAL_SLOW,
            N_("{value} pairs are the fast ones; the question asks for the slow ones"),
        ),
        Mistake(
            either(2 * LOCAL_SLOW, D3 - LOCAL_SLOW),
            N_("count pairs (d/2 = 128 of them), not coordinates"),
        ),
    ],
    facts={
        "pairs": D3 // 2,
        "d": D3,
        "w": W3,
        "global_count": _longer(EX3["global_base"]),
        "count_4b": _longer(EX3["local_base"], window=EX3_4B_WINDOW),
    },
    otherwise=N_(
        "count the pairs i < {pairs} with 2 pi * 10000^(2i/{d}) > {w}; got {value}"
    ),
    right=N_(
        "{expected} of the {pairs} pairs never finish a turn inside the {w}-token "
        "window, against {count_4b} in Gemma 3 4B's 1024: halving the window leaves more "
        "pairs that measure distance across it without wrapping."
    ),
)
def check_local_slow_pairs(answer):
    """Gemma 3 1B's local layers (d = 256, base 10,000, window 512 tokens): how many pairs
    have a wavelength 2 pi / theta_i longer than the window?"""


# Exercise 4: DeepSeek-V3's MLA cache.
C4, R4, N4, V4, H4 = (
    EX4[k]
    for k in (
        "kv_lora_rank",
        "qk_rope_head_dim",
        "qk_nope_head_dim",
        "v_head_dim",
        "heads",
    )
)
FULL = H4 * (N4 + R4 + V4)


@exercise(
    read=as_count,
    name=Word(N_("the size")),
    options={"what": N_("a count of numbers")},
    expected=C4 + R4,
    mistakes=[
        Mistake(
            C4,
            N_(
                "the latent alone cannot carry position: the rotated key part "
                "(qk_rope_head_dim) is cached beside it"
            ),
        ),
        Mistake(
            C4 + H4 * R4,
            N_("the rotated key is shared by all {h} heads: it is cached once"),
        ),
        Mistake(
            either(FULL, H4 * (N4 + R4) * 2),
            N_("that is plain multi-head attention's cache; MLA caches a latent"),
        ),
    ],
    facts={
        "c": C4,
        "r": R4,
        "full": FULL,
        "h": H4,
        "key": N4 + R4,
        "v": V4,
        "times": FULL / (C4 + R4),
    },
    otherwise=N_("add what each token leaves in the cache per layer; got {value}"),
    right=N_(
        "{c} + {r} = {expected} numbers, against {full} for plain multi-head attention "
        "with the same heads (keys {h} x {key}, values {h} x {v}): {times:.0f} times "
        "less."
    ),
)
def check_mla_cache_size(answer):
    """Numbers DeepSeek-V3 caches per token and layer: the latent c (kv_lora_rank = 512)
    plus the one shared rotated key (qk_rope_head_dim = 64)."""


# Exercise 4: Llama 3.1 8B's config without original_max_position_embeddings.
PUBLISHED = MODELS["Llama 3.1 8B"].config
BROKEN = {
    **PUBLISHED,
    "rope_scaling": {
        k: v
        for k, v in PUBLISHED["rope_scaling"].items()
        if k != "original_max_position_embeddings"
    },
}
RIGHT5 = read_rope_config(PUBLISHED)[0].inv_freq.double()
WRONG5 = read_rope_config(BROKEN)[0].inv_freq.double()
CHANGED = int((~torch.isclose(RIGHT5, WRONG5)).sum())
PLAIN5 = inv_frequencies(RIGHT5.numel() * 2, PUBLISHED["rope_theta"]).double()
DIVIDED = {
    "right": int((PLAIN5 / RIGHT5 > 7.999).sum()),
    "wrong": int((PLAIN5 / WRONG5 > 7.999).sum()),
}
DIRECTIONS = ("faster", "slower", "same")


def _read_diagnosis(answer, name):
    """A pair (a direction, a count): ("faster" or "slower" or "same", whole number)."""
    if not (
        isinstance(answer, (tuple, list))
        and len(answer) == 2
        and isinstance(answer[0], str)
    ):
        raise NotYet(
            _(
                '{name} should be a pair like ("slower", 10): a direction, then a '
                "number of pairs; got {got}"
            ).format(name=name, got=describe(answer))
        )
    direction = answer[0].strip().lower()
    if direction not in DIRECTIONS:
        raise NotYet(
            _("the direction should be one of {choices}, got {got}").format(
                choices=", ".join(DIRECTIONS), got=repr(answer[0])
            )
        )
    return direction, as_count(answer[1], _("the count"), what=N_("a number of pairs"))


@exercise(
    read=_read_diagnosis,
    name=Word(N_("the diagnosis")),
    placeholder=N_(
        'replace `None` with ("faster" or "slower", pairs whose frequency changes)'
    ),
    expected=("faster", CHANGED),
    same=lambda a, b: tuple(a) == tuple(b),
    mistakes=[
        Mistake(
            lambda a: a[0] == "slower",
            N_(
                "the other way round: L moves up from 8,192 to 131,072, so the cuts "
                "L / low_freq_factor and L / high_freq_factor move up 16 times and fewer "
                "pairs are divided by 8; those pairs now turn faster than in training"
            ),
        ),
        Mistake(
            lambda a: a[0] == "same",
            N_(
                "transformers does not refuse the config: it takes L from "
                "max_position_embeddings = 131,072 (and warns), and the cuts move"
            ),
        ),
        Mistake(
            lambda a: a[1] in (DIVIDED["right"], DIVIDED["wrong"]),
            N_(
                "the direction is right; {value[1]} is how many pairs one of the two "
                "configs divides by 8 ({right} published, {wrong} broken): count the "
                "pairs whose frequency differs between them"
            ),
        ),
        Mistake(
            lambda a: a[1] == RIGHT5.numel() - CHANGED,
            N_("the direction is right; {value[1]} pairs keep their frequency"),
        ),
        Mistake(
            lambda a: a[1] == DIVIDED["right"] - DIVIDED["wrong"],
            N_(
                "the direction is right; the pairs that leave the x8 group are not the "
                "only ones: pairs in the smooth ramp between the cuts change too"
            ),
        ),
    ],
    facts={"right": DIVIDED["right"], "wrong": DIVIDED["wrong"], "pairs": 64},
    otherwise=N_(
        "the direction is right; compare read_rope_config(published) with "
        "read_rope_config(broken), pair by pair (torch.isclose); got {value[1]}"
    ),
    right=N_(
        "Without it transformers takes L = max_position_embeddings = 131,072: only "
        "{wrong} pairs instead of {right} are divided by 8, and {expected[1]} of the "
        "{pairs} pairs turn faster than the model was trained with. Nothing fails; the "
        "slow pairs meet angles they never saw."
    ),
)
def check_broken_llama3_config(answer):
    """Llama 3.1 8B's config with original_max_position_embeddings deleted from
    rope_scaling: do its slow pairs turn faster or slower than the published model's,
    and how many of the 64 pairs change frequency? A pair ("faster", 20)."""
