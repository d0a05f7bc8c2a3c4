"""What a trained model does with its frequency pairs: the size of q and k per pair, by layer.

RoPE turns pair i of a head, the coordinates (2i, 2i+1) in the interleaved layout, by the
angle m * theta_i at position m, theta_i = b ** (-2i/d) (b = 100,000 and d = 64 for SmolLM2:
32 pairs). The score of query m with key n is a sum over the pairs,

    q_m . k_n = sum_i |q_i| |k_i| cos((m - n) theta_i + phi_i),

so a pair whose q or k is small adds little, whatever its frequency. pair_rms measures that
size on real text: sqrt(mean |q_i|^2) over tokens and heads (a rotation keeps |q_i|, so the
rotated q gives the same numbers as the unrotated one).

Barbero et al. 2024 ("Round and Round We Go! What makes Rotary Positional Encodings useful?",
arXiv:2410.06205) found that Gemma 7B puts most of the size of q and k in the lowest-
frequency pairs, which turn so slowly that they act as a semantic channel nearly free of
position, and uses the highest frequencies for a few positional heads. The pair's wavelength
2 pi / theta_i (in tokens) says which pairs ever complete a turn within the training length L.

Past L, pair_reach says which pairs meet angles training never showed them, for any set of
frequencies (plain RoPE or a scaling method's) and any model (no model needed), and
band_interpolated makes the band test's frequencies: Position Interpolation on a few pairs.
"""

from __future__ import annotations

import math

import torch

from .. import half_to_interleaved
from ..extension_analysis import check_frequencies
from ..language import _


def wavelengths(head_dim: int, base: float) -> list[float]:
    """2 pi / theta_i = 2 pi b ** (2i/d) in tokens, for the pairs i = 0 .. d/2 - 1."""
    if isinstance(head_dim, bool) or not isinstance(head_dim, int):
        raise TypeError(
            _("head_dim must be an int, got {head_dim}").format(
                head_dim=type(head_dim).__name__
            )
        )
    if head_dim < 2 or head_dim % 2:
        raise ValueError(
            _("head_dim must be even and >= 2, got {head_dim}").format(
                head_dim=head_dim
            )
        )
    if not isinstance(base, (int, float)) or not base > 1:
        raise ValueError(_("base must be a number > 1, got {base!r}").format(base=base))
    return [2 * math.pi * base ** (2 * i / head_dim) for i in range(head_dim // 2)]


def pair_rms(x: torch.Tensor, layout: str = "interleaved") -> torch.Tensor:
    """sqrt(mean over everything but the pair of |x_i|^2): x [..., head_dim] -> [head_dim/2].

    Pair i is (2i, 2i+1) for layout="interleaved" and (i, i + d/2) for layout="half"; the
    result is ordered by pair index i, i.e. from the highest frequency to the lowest.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(
            _("x must be a torch.Tensor, got {x}").format(x=type(x).__name__)
        )
    if x.dim() < 1 or x.shape[-1] % 2 or x.numel() == 0:
        raise ValueError(
            _(
                "x must be non-empty with an even last dimension, got shape {x_shape}"
            ).format(x_shape=tuple(x.shape))
        )
    if layout not in ("interleaved", "half"):
        raise ValueError(
            _("layout must be 'interleaved' or 'half', got {layout!r}").format(
                layout=layout
            )
        )
    if layout == "half":
        x = half_to_interleaved(x)
    squared = x.double().pow(2).unflatten(-1, (-1, 2)).sum(-1)  # |x_i|^2, [..., d/2]
    return squared.flatten(0, -2).mean(0).sqrt().to(x.dtype)


def band_interpolated(inv_freq: torch.Tensor, band, factor: float) -> torch.Tensor:
    """inv_freq with the pairs band[0] <= i < band[1] divided by factor (Position
    Interpolation on that band only, every other pair as it was); a new tensor."""
    check_frequencies("inv_freq", inv_freq)
    pairs = inv_freq.shape[-1] if inv_freq.dim() == 1 else -1
    if (
        not isinstance(band, (list, tuple))
        or len(band) != 2
        or not all(isinstance(b, int) and not isinstance(b, bool) for b in band)
        or not 0 <= band[0] < band[1] <= pairs
    ):
        raise ValueError(
            _(
                "band must be two ints [first, stop) with 0 <= first < stop <= "
                "{pairs} (inv_freq's pairs), got {band!r}"
            ).format(pairs=pairs, band=band)
        )
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor <= 0:
        raise ValueError(
            _("factor must be a number > 0, got {factor!r}").format(factor=factor)
        )
    out = inv_freq.clone()
    out[band[0] : band[1]] /= factor
    return out


def pair_reach(
    inv_freq: torch.Tensor, original_inv_freq: torch.Tensor, training_length, length
) -> dict:
    """Which angles pair i meets over `length` tokens with the frequencies inv_freq
    (theta'_i: a scaling method's), against those training showed it (original_inv_freq,
    theta_i, over training_length = L tokens). Per pair, float64 [d/2]:

        angle_i   = theta'_i n                        the largest angle over n tokens
        trained_i = min(theta_i L, 2 pi)              the arc training showed it
        reach_i   = min(angle_i, 2 pi) / trained_i    its arc over n tokens against that
        exceeds_i = reach_i > 1 (by more than 1e-6)   angles training never showed

    A pair that completed a turn within L (theta_i L >= 2 pi) has seen every angle: its
    reach is 1, whatever n. Plain RoPE at n = 2L doubles every slow pair's arc (reach 2);
    PI at factor s keeps every reach at n = s L to 1. (Positions run from 0 to n - 1, so
    theta n is the bound the arc approaches; Chen et al. 2023, arXiv:2306.15595, and
    extension_analysis.angle_coverage use n - 1.) The tolerance 1e-6 forgives float32
    frequencies (PI's theta / s times s L is theta L up to round-off).
    Returns {"angle", "trained", "reach", "exceeds" (bool)}.
    """
    theta = check_frequencies("inv_freq", inv_freq).to(torch.float64)
    original = check_frequencies("original_inv_freq", original_inv_freq)
    if theta.dim() != 1 or original.shape != theta.shape:
        raise ValueError(
            _(
                "inv_freq and original_inv_freq must be 1-D of one shape [d/2], "
                "got {theta_shape} and {original_shape}"
            ).format(
                theta_shape=tuple(theta.shape), original_shape=tuple(original.shape)
            )
        )
    for name, value in (("training_length", training_length), ("length", length)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(
                _("{name} must be a number of tokens > 0, got {value!r}").format(
                    name=name, value=value
                )
            )
    angle = theta * length
    trained = (original.to(torch.float64) * training_length).clamp(max=2 * math.pi)
    reach = angle.clamp(max=2 * math.pi) / trained
    return {
        "angle": angle,
        "trained": trained,
        "reach": reach,
        "exceeds": reach > 1 + 1e-6,
    }


def reach_table(
    frequencies: dict, original_inv_freq: torch.Tensor, training_length, lengths
) -> dict:
    """pair_reach for every method's frequencies at every length: {name: {n: {"angle",
    "trained", "reach", "exceeds"}}}, frequencies {name: inv_freq} (e.g. experiment.
    method_frequencies: plain RoPE, PI, NTK, YaRN, Llama 3 at a factor), lengths e.g.
    (L, 2L, 4L)."""
    if not isinstance(frequencies, dict) or not frequencies:
        raise ValueError(
            _(
                "frequencies must be a non-empty dict {{name: inv_freq}}, got "
                "{frequencies!r:.60}"
            ).format(frequencies=frequencies)
        )
    if not isinstance(lengths, (list, tuple)) or not lengths:
        raise ValueError(
            _("lengths must be a non-empty list of ints, got {lengths!r}").format(
                lengths=lengths
            )
        )
    return {
        name: {
            n: pair_reach(inv_freq, original_inv_freq, training_length, n)
            for n in lengths
        }
        for name, inv_freq in frequencies.items()
    }
