"""rope_lib: the math behind the rope-notebooks lessons on position in transformers.

Public API (see README and each module's docstrings for formulas and sources):
    sinusoidal_encoding, inv_frequencies, apply_rope, precompute_freqs_cis, apply_rotary_emb,
    interleaved_to_half, half_to_interleaved, alibi_slopes, alibi_bias, rope_frequencies
and, for the lessons: rotation_2d, rotation_matrix, RotaryEmbedding, LearnedPositionEmbedding,
PositionalSelfAttention, YaRN's pieces, and each lesson's analysis functions (sinusoidal.py,
derivation.py, analysis.py, alibi.py, scaling.py).

RoPE in today's models: rope_frequencies("proportional", ...) (Gemma 4's p-RoPE) and
partial_rotary_factor for every type, apply_rope(..., rotary_dim=r) (partial rotary),
apply_mrope and mrope_position_ids (multimodal RoPE, rope_lib.multimodal),
apply_2d_rope and patch_positions (2D RoPE for image patches, rope_lib.vision),
read_rope_config (what each layer of a real model's config does, rope_lib.configs).

The learner-facing words (exercise feedback, widgets, figures) are English unless
set_language("zh") asks for Simplified Chinese (rope_lib.language, gettext).
"""

from . import analysis, configs, derivation, multimodal, vision
from .alibi import (
    alibi_bias,
    alibi_key_bias,
    alibi_query_attention,
    alibi_slopes,
    alibi_span,
)
from .analysis import (
    angle_error,
    decay_bound_constant,
    long_term_decay_bound,
    pair_turns,
    rope_cost_per_token,
)
from .attention import POSITION_SCHEMES, PositionalSelfAttention
from .configs import LayerRope, read_rope_config
from .derivation import (
    closed_form_score,
    from_polar,
    polar_score,
    rope_by_steps,
    rotation_from_polar,
    score_derivation,
)
from .extension_analysis import (
    REGIMES,
    angle_coverage,
    first_pair_longer_than,
    fit_relative_score,
    implied_ramp,
    interpolation_error_bound,
    pair_regimes,
    ramp_by_pair,
    ramp_by_turns,
    relative_score,
    wavelengths,
)
from .language import get_language, set_language
from .llama import apply_rotary_emb, precompute_freqs_cis
from .multimodal import apply_mrope, mrope_position_ids
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
    yarn_attention_factor,
    yarn_correction_dim,
    yarn_correction_range,
    yarn_get_mscale,
)
from .sinusoidal import (
    LearnedPositionEmbedding,
    offset_head_attends_to,
    sinusoidal_at,
    sinusoidal_encoding,
    sinusoidal_offset_dot,
    sinusoidal_shift_matrix,
    train_offset_head,
)
from .vision import apply_2d_rope, patch_positions

__all__ = [
    "LAYOUTS",
    "LayerRope",
    "LearnedPositionEmbedding",
    "POSITION_SCHEMES",
    "PositionalSelfAttention",
    "REGIMES",
    "ROPE_FREQUENCY_FUNCTIONS",
    "RotaryEmbedding",
    "alibi_bias",
    "alibi_key_bias",
    "alibi_query_attention",
    "alibi_slopes",
    "alibi_span",
    "analysis",
    "angle_coverage",
    "angle_error",
    "apply_2d_rope",
    "apply_mrope",
    "apply_rope",
    "apply_rotary_emb",
    "closed_form_score",
    "configs",
    "decay_bound_constant",
    "derivation",
    "first_pair_longer_than",
    "fit_relative_score",
    "from_polar",
    "half_to_interleaved",
    "interleaved_to_half",
    "interpolation_error_bound",
    "inv_frequencies",
    "implied_ramp",
    "long_term_decay_bound",
    "mrope_position_ids",
    "multimodal",
    "offset_head_attends_to",
    "pair_regimes",
    "pair_turns",
    "patch_positions",
    "polar_score",
    "precompute_freqs_cis",
    "read_rope_config",
    "set_language",
    "get_language",
    "relative_score",
    "rope_angles",
    "rope_by_steps",
    "rope_cost_per_token",
    "rope_frequencies",
    "rotation_2d",
    "rotation_from_polar",
    "rotation_matrix",
    "score_derivation",
    "sinusoidal_at",
    "sinusoidal_encoding",
    "sinusoidal_offset_dot",
    "sinusoidal_shift_matrix",
    "train_offset_head",
    "ramp_by_turns",
    "vision",
    "wavelengths",
    "yarn_attention_factor",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_get_mscale",
    "ramp_by_pair",
]
