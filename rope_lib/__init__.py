"""rope_lib: the math behind the rope-notebooks lessons on position in transformers.

What a user of the library needs is importable from rope_lib itself (formulas and sources in
each function's docstring and in the README):

    position encodings   sinusoidal_encoding, LearnedPositionEmbedding
    RoPE                 inv_frequencies, apply_rope, RotaryEmbedding, rotation_2d,
                         rotation_matrix, interleaved_to_half, half_to_interleaved, LAYOUTS
    Meta's LLaMA form    precompute_freqs_cis, apply_rotary_emb
    context extension    rope_frequencies (transformers' rope types, partial_rotary_factor)
    ALiBi                alibi_slopes, alibi_bias
    attention            PositionalSelfAttention, POSITION_SCHEMES
    today's models       apply_mrope, mrope_position_ids (multimodal RoPE),
                         apply_2d_rope, patch_positions (2D RoPE for image patches),
                         read_rope_config (what each layer of a real model's config does)
    language             set_language, get_language (English, or "zh" for Simplified Chinese)

Each lesson's helpers stay in their topic modules: rope_lib.sinusoidal (the shift matrix, the
offset head), rope_lib.derivation (the 2D-rotation derivation), rope_lib.analysis (decay, turns,
precision, cost), rope_lib.alibi, rope_lib.scaling (YaRN's pieces, the frequency table),
rope_lib.extension_analysis (wavelengths, coverage, ramps, PI's score bound), rope_lib.configs,
rope_lib.models, rope_lib.multimodal, rope_lib.vision, rope_lib.lab (the extrapolation lab).
"""

# the topic modules, reachable as rope_lib.<module> after `import rope_lib`
from . import (  # noqa: F401
    alibi,
    analysis,
    configs,
    derivation,
    extension_analysis,
    multimodal,
    scaling,
    sinusoidal,
    vision,
)
from .alibi import alibi_bias, alibi_slopes
from .attention import POSITION_SCHEMES, PositionalSelfAttention
from .configs import read_rope_config
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
    rotation_2d,
    rotation_matrix,
)
from .scaling import rope_frequencies
from .sinusoidal import LearnedPositionEmbedding, sinusoidal_encoding
from .vision import apply_2d_rope, patch_positions

__all__ = [
    "LAYOUTS",
    "LearnedPositionEmbedding",
    "POSITION_SCHEMES",
    "PositionalSelfAttention",
    "RotaryEmbedding",
    "alibi_bias",
    "alibi_slopes",
    "apply_2d_rope",
    "apply_mrope",
    "apply_rope",
    "apply_rotary_emb",
    "get_language",
    "half_to_interleaved",
    "interleaved_to_half",
    "inv_frequencies",
    "mrope_position_ids",
    "patch_positions",
    "precompute_freqs_cis",
    "read_rope_config",
    "rope_frequencies",
    "rotation_2d",
    "rotation_matrix",
    "set_language",
    "sinusoidal_encoding",
]
