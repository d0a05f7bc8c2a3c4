"""rope_lib: the math behind the rope-notebooks lessons on position in transformers.

Public API (see README and each module's docstrings for formulas and sources):
    sinusoidal_encoding, inv_frequencies, apply_rope, precompute_freqs_cis, apply_rotary_emb,
    interleaved_to_half, half_to_interleaved, alibi_slopes, alibi_bias, rope_frequencies
and, for the lessons: rotation_2d, rotation_matrix, sinusoidal_shift_matrix, RotaryEmbedding,
LearnedPositionEmbedding, PositionalSelfAttention, alibi_key_bias and YaRN's pieces.
"""

from .alibi import alibi_bias, alibi_key_bias, alibi_slopes
from .attention import POSITION_SCHEMES, PositionalSelfAttention
from .llama import apply_rotary_emb, precompute_freqs_cis
from .rotary import (
    LAYOUTS,
    RotaryEmbedding,
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    inv_frequencies,
    rope_angles,
    rotation_2d,
    rotation_matrix,
)
from .scaling import (
    ROPE_FREQUENCY_FUNCTIONS,
    rope_frequencies,
    wavelengths,
    yarn_attention_factor,
    yarn_correction_dim,
    yarn_correction_range,
    yarn_get_mscale,
    yarn_ramp,
)
from .sinusoidal import LearnedPositionEmbedding, sinusoidal_encoding, sinusoidal_shift_matrix

__all__ = [
    "LAYOUTS",
    "POSITION_SCHEMES",
    "ROPE_FREQUENCY_FUNCTIONS",
    "LearnedPositionEmbedding",
    "PositionalSelfAttention",
    "RotaryEmbedding",
    "alibi_bias",
    "alibi_key_bias",
    "alibi_slopes",
    "apply_rope",
    "apply_rotary_emb",
    "half_to_interleaved",
    "interleaved_to_half",
    "inv_frequencies",
    "precompute_freqs_cis",
    "rope_angles",
    "rope_frequencies",
    "rotation_2d",
    "rotation_matrix",
    "sinusoidal_encoding",
    "sinusoidal_shift_matrix",
    "wavelengths",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_get_mscale",
    "yarn_ramp",
]
