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
"""

from __future__ import annotations

import math

import torch

from .. import half_to_interleaved


def wavelengths(head_dim: int, base: float) -> list[float]:
    """2 pi / theta_i = 2 pi b ** (2i/d) in tokens, for the pairs i = 0 .. d/2 - 1."""
    if isinstance(head_dim, bool) or not isinstance(head_dim, int):
        raise TypeError(f"head_dim must be an int, got {type(head_dim).__name__}")
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be even and >= 2, got {head_dim}")
    if not isinstance(base, (int, float)) or not base > 1:
        raise ValueError(f"base must be a number > 1, got {base!r}")
    return [2 * math.pi * base ** (2 * i / head_dim) for i in range(head_dim // 2)]


def pair_rms(x: torch.Tensor, layout: str = "interleaved") -> torch.Tensor:
    """sqrt(mean over everything but the pair of |x_i|^2): x [..., head_dim] -> [head_dim/2].

    Pair i is (2i, 2i+1) for layout="interleaved" and (i, i + d/2) for layout="half"; the
    result is ordered by pair index i, i.e. from the highest frequency to the lowest.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() < 1 or x.shape[-1] % 2 or x.numel() == 0:
        raise ValueError(
            f"x must be non-empty with an even last dimension, got shape {tuple(x.shape)}"
        )
    if layout not in ("interleaved", "half"):
        raise ValueError(f"layout must be 'interleaved' or 'half', got {layout!r}")
    if layout == "half":
        x = half_to_interleaved(x)
    squared = x.double().pow(2).unflatten(-1, (-1, 2)).sum(-1)  # |x_i|^2, [..., d/2]
    return squared.flatten(0, -2).mean(0).sqrt().to(x.dtype)
