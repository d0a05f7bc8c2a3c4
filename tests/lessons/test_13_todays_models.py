"""Lesson 13 (RoPE in today's models): its claims against transformers' own code, the
model
table read by read_rope_config, the exercise checkers' answers and slips, and the
widget.

Against transformers (tiny random configs, nothing downloaded):
- Llama 4's NoPE-layer temperature (llama4_attention_scale) vs Llama4TextAttention's
queries,
  for several floor_scale / attn_scale values and a KV cache offset; RoPE layers
  unscaled;
- Gemma 3's local/global frequencies vs Gemma3RotaryEmbedding (v4 and v5 spellings);
- MLA's decoupled RoPE: DeepseekV3Attention's logits = position-free part + rotated part
  (the YaRN mscale corrections themselves are in tests/lib/test_deepseek_mscale.py);
- every RoPE entry of the model table: read_rope_config vs the model's transformers
config
  class and rotary embedding, per layer.
"""

from __future__ import annotations

import importlib
import math
import warnings

import numpy as np
import pytest
import torch

from rope_lib import apply_rope, inv_frequencies, read_rope_config, rope_frequencies
from rope_lib.exercises import todays_models as ex
from rope_lib.extension_analysis import (
    base_lower_bound,
    discrimination_sum,
    first_negative_offset,
)
from rope_lib.language import set_language
from rope_lib.models import (
    LEFT_OUT,
    MODELS,
    layer_pattern,
    llama4_attention_scale,
    model_curves,
    model_layers,
    model_summary,
)

transformers = pytest.importorskip("transformers")
from transformers import AutoConfig  # noqa: E402
from transformers.models.deepseek_v3 import modeling_deepseek_v3 as ds  # noqa: E402
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding  # noqa: E402
from transformers.models.llama4 import modeling_llama4 as l4  # noqa: E402

LARGEST = {}


def note(what, got, want):
    diff = float(
        (torch.as_tensor(got).double() - torch.as_tensor(want).double()).abs().max()
    )
    LARGEST[what] = max(LARGEST.get(what, 0.0), diff)
    return diff


# ------------------------------------------------------------------ Llama 4 temperature


def llama4_queries(
    monkeypatch, floor_scale, attn_scale, layer, seq=24, past=0, tuning=True
):
    """(queries Llama4TextAttention sends to attention, W_q x) for a tiny random
    config."""
    config = l4.Llama4TextConfig(
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        num_hidden_layers=8,
        intermediate_size=32,
        intermediate_size_mlp=32,
        vocab_size=16,
        floor_scale=floor_scale,
        attn_scale=attn_scale,
        attn_temperature_tuning=tuning,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(layer)
    attention = l4.Llama4TextAttention(config, layer_idx=layer).double()
    x = torch.randn(1, seq, 32, dtype=torch.float64)
    seen = {}
    original = l4.eager_attention_forward

    def recording(module, query, *args, **kwargs):
        seen["q"] = query
        return original(module, query, *args, **kwargs)

    monkeypatch.setattr(l4, "eager_attention_forward", recording)
    cache = None
    if past:
        from transformers import DynamicCache

        cache = DynamicCache(config=config)
        k = torch.zeros(1, 1, past, 16, dtype=torch.float64)
        cache.update(k, k.clone(), layer)
    rotary = l4.Llama4TextRotaryEmbedding(config)
    freqs = rotary(x, (torch.arange(seq) + past)[None])
    with torch.no_grad():
        attention(x, freqs, attention_mask=None, past_key_values=cache)
        plain = attention.q_proj(x).view(1, seq, 2, 16).transpose(1, 2)
    return attention, seen["q"], plain


@pytest.mark.parametrize(
    "floor_scale,attn_scale,past",
    [(4, 0.1, 0), (8192, 0.1, 0), (3, 0.25, 0), (5, 0.1, 37), (1, 1.0, 0)],
)
def test_llama4_nope_temperature_matches_transformers(
    monkeypatch, floor_scale, attn_scale, past
):
    attention, query, plain = llama4_queries(
        monkeypatch, floor_scale, attn_scale, 3, past=past
    )
    assert not attention.use_rope  # layer 3 of 8: every 4th layer is NoPE by default
    positions = torch.arange(24) + past
    scale = llama4_attention_scale(positions, floor_scale, attn_scale)
    diff = note(
        "llama4_attention_scale vs Llama4TextAttention", plain * scale[:, None], query
    )
    assert diff < 1e-6  # transformers computes the scale in float32
    # by hand, written out here: 1 + a ln(1 + floor((m + 1) / F))
    for m in (0, floor_scale - 2, floor_scale - 1, 5 * floor_scale + 3):
        if m < 0:
            continue
        want = 1 + attn_scale * math.log(1 + (m + 1) // floor_scale)
        got = float(
            llama4_attention_scale(torch.tensor([m]), floor_scale, attn_scale)[0]
        )
        assert got == pytest.approx(want, rel=1e-12)


def test_llama4_rope_layers_and_switched_off_tuning_are_unscaled(monkeypatch):
    attention, query, plain = llama4_queries(monkeypatch, 2, 0.5, 3, tuning=False)
    torch.testing.assert_close(query, plain)
    attention, _, _ = llama4_queries(monkeypatch, 2, 0.5, 2)
    assert attention.use_rope


def test_llama4_attention_scale_refuses_wrong_input():
    with pytest.raises(TypeError, match="positions"):
        llama4_attention_scale(torch.tensor([1.5]))
    with pytest.raises(ValueError, match="floor_scale"):
        llama4_attention_scale(torch.tensor([1]), floor_scale=0)
    with pytest.raises(ValueError, match="attn_scale"):
        llama4_attention_scale(torch.tensor([1]), attn_scale=-0.1)


def test_lesson_numbers_for_llama4():
    m = torch.tensor([8190, 8191, 100_000, 10_485_759])
    got = llama4_attention_scale(m, 8192, 0.1)
    want = [
        1.0,
        1 + 0.1 * math.log(2),
        1 + 0.1 * math.log(13),
        1 + 0.1 * math.log(1281),
    ]
    assert got.tolist() == pytest.approx(want, rel=1e-12)


# ------------------------------------------------------------------ Gemma 3 local /
# global


@pytest.mark.parametrize(
    "keys",
    [
        {
            "rope_theta": 1e6,
            "rope_local_base_freq": 1e4,
            "rope_scaling": {"rope_type": "linear", "factor": 8.0},
        },
        {"rope_theta": 1e6, "rope_local_base_freq": 1e4, "rope_scaling": None},
        {
            "rope_parameters": {
                "full_attention": {
                    "rope_type": "linear",
                    "factor": 4.0,
                    "rope_theta": 5e5,
                },
                "sliding_attention": {"rope_type": "default", "rope_theta": 2e4},
            }
        },
    ],
)
@pytest.mark.parametrize("head_dim", [256, 64])
def test_gemma3_local_and_global_frequencies_match_transformers(keys, head_dim):
    config = {
        "model_type": "gemma3_text",
        "hidden_size": 64,
        "num_attention_heads": 1,
        "head_dim": head_dim,
        "num_hidden_layers": 6,
        "sliding_window_pattern": 6,
        **keys,
    }
    layers = read_rope_config(config)
    hf_config = AutoConfig.for_model(**config)
    hf = Gemma3RotaryEmbedding(hf_config)
    note(
        "Gemma 3 local vs Gemma3RotaryEmbedding",
        layers[0].inv_freq,
        hf.sliding_attention_inv_freq,
    )
    note(
        "Gemma 3 global vs Gemma3RotaryEmbedding",
        layers[5].inv_freq,
        hf.full_attention_inv_freq,
    )
    torch.testing.assert_close(layers[0].inv_freq, hf.sliding_attention_inv_freq)
    torch.testing.assert_close(layers[5].inv_freq, hf.full_attention_inv_freq)
    assert [layer.layer_type for layer in layers] == ["sliding_attention"] * 5 + [
        "full_attention"
    ]


# ------------------------------------------------------------------ MLA decoupled RoPE


@pytest.mark.parametrize(
    "nope,rope,interleave", [(12, 8, True), (6, 4, False), (16, 16, True)]
)
def test_mla_logits_are_position_free_part_plus_rotated_part(
    monkeypatch, nope, rope, interleave
):
    """DeepseekV3Attention: the key's rotated part is one per token (shared by the
    heads),
    rotated by the token's position; the logit is q_nope.k_nope +
    RoPE(q_rope).RoPE(k_rope)."""
    config = transformers.DeepseekV3Config(
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=2,
        q_lora_rank=None,
        kv_lora_rank=16,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        v_head_dim=6,
        num_hidden_layers=1,
        intermediate_size=32,
        moe_intermediate_size=16,
        n_routed_experts=2,
        num_experts_per_tok=1,
        vocab_size=16,
        rope_interleave=interleave,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    attention = ds.DeepseekV3Attention(config, layer_idx=0).double().eval()
    rotary = ds.DeepseekV3RotaryEmbedding(config)
    positions = torch.tensor([0, 3, 7, 50, 51, 400])
    x = torch.randn(1, len(positions), 32, dtype=torch.float64)
    seen = {}
    original = ds.eager_attention_forward

    def recording(module, query, key, *args, **kwargs):
        seen.update(q=query, k=key)
        return original(module, query, key, *args, **kwargs)

    monkeypatch.setattr(ds, "eager_attention_forward", recording)
    with torch.no_grad():
        attention(x, rotary(x, positions[None]), attention_mask=None)
        # by hand from the module's weights
        q = attention.q_proj(x).view(1, -1, 2, nope + rope).transpose(1, 2)
        q_nope, q_rot = q[..., :nope], q[..., nope:]
        kv = attention.kv_a_proj_with_mqa(x)
        latent, k_rot = kv[..., :16], kv[..., 16:]  # k_rot: [1, seq, rope], shared
        k_nope = attention.kv_b_proj(attention.kv_a_layernorm(latent))
        k_nope = k_nope.view(1, -1, 2, nope + 6).transpose(1, 2)[..., :nope]
    inv_freq = rotary.inv_freq.double()
    # transformers' interleaved option de-interleaves first, then rotates in the half
    # layout:
    # in rope_lib's terms the pairs are (2i, 2i+1), i.e. the interleaved layout
    layout = "interleaved" if interleave else "half"
    q_r = apply_rope(q_rot, positions, inv_freq=inv_freq, layout=layout)
    k_r = apply_rope(k_rot[:, None], positions, inv_freq=inv_freq, layout=layout)
    logits_by_hand = q_nope @ k_nope.transpose(-1, -2) + q_r @ k_r.transpose(-1, -2)
    logits = seen["q"] @ seen["k"].transpose(-1, -2)
    diff = note("MLA nope + rope logits vs DeepseekV3Attention", logits_by_hand, logits)
    # transformers computes cos and sin in float32 (angles up to 400 rad here)
    assert diff < 1e-5 * float(logits.abs().max())
    # the other layout is far off: the check sees which pairs are rotated
    other = "half" if layout == "interleaved" else "interleaved"
    q_o = apply_rope(q_rot, positions, inv_freq=inv_freq, layout=other)
    k_o = apply_rope(k_rot[:, None], positions, inv_freq=inv_freq, layout=other)
    wrong = q_nope @ k_nope.transpose(-1, -2) + q_o @ k_o.transpose(-1, -2)
    assert float((wrong - logits).abs().max()) > 1e-2 * float(logits.abs().max())
    # and the position-free part is the same whatever the positions
    assert seen["k"].shape[-1] == nope + rope


# ------------------------------------------------------------------ the model table


def _hf_layers(config):
    """(inv_freq or None) per layer from transformers' config class and rotary
    embedding."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = AutoConfig.for_model(**config)
    hf = hf.get_text_config() if hasattr(hf, "get_text_config") else hf
    family = hf.model_type.removesuffix("_text")
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    cls = next(
        getattr(module, n)
        for n in dir(module)
        if n.endswith("RotaryEmbedding") and "Vision" not in n
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rotary = cls(hf)
    types = getattr(hf, "layer_types", None) or [None] * hf.num_hidden_layers
    out = []
    for i, layer_type in enumerate(types[: hf.num_hidden_layers]):
        if family == "llama4" and not hf.no_rope_layers[i]:
            out.append(None)
        elif hasattr(rotary, f"{layer_type}_inv_freq"):
            out.append(getattr(rotary, f"{layer_type}_inv_freq"))
        else:
            out.append(rotary.inv_freq)
    return out


ROPE_MODELS = [name for name, entry in MODELS.items() if entry.config is not None]


def _small(config):
    """The same rope keys on fewer layers (transformers' MoE configs are costly to
    build)."""
    config = {k: (dict(v) if isinstance(v, dict) else v) for k, v in config.items()}
    text = config.get("text_config", config)
    n = min(text["num_hidden_layers"], 12)
    text["num_hidden_layers"] = n
    for key in ("no_rope_layers", "layer_types"):
        if key in text:
            text[key] = text[key][:n]
    return config


@pytest.mark.parametrize("name", ROPE_MODELS)
def test_model_table_reads_like_transformers(name):
    config = _small(MODELS[name].config)
    text = config.get("text_config", config)
    if isinstance(text.get("attn_temperature_tuning"), int):
        # Llama 4 Scout's file says 4; transformers 5's config class only takes a bool
        # (anything non-zero means on, as in its attention code)
        text["attn_temperature_tuning"] = bool(text["attn_temperature_tuning"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = read_rope_config(config)
    theirs = _hf_layers(config)
    assert len(ours) == len(theirs)
    for layer, want in zip(ours, theirs):
        if want is None:
            assert not layer.uses_rope
            continue
        note("model table: read_rope_config vs transformers", layer.inv_freq, want)
        torch.testing.assert_close(layer.inv_freq, want.float(), rtol=1e-6, atol=0)


def test_model_table_entries_are_complete_and_cited():
    assert len(MODELS) >= 12
    for name, entry in MODELS.items():
        assert entry.source and entry.trained_length <= entry.context_length, name
        assert (entry.config is None) == (entry.alibi_heads is not None), name
        assert model_summary(name)
        curves = model_curves(name)
        assert curves and all(c["kind"] in ("rope", "nope", "alibi") for c in curves)
    assert "Phi-3 mini 128k" in LEFT_OUT
    with pytest.raises(ValueError, match="not in the table"):
        model_layers("Phi-3 mini 128k")


def test_model_table_facts_the_lesson_states():
    # Gemma 4's global layers: 64 of 256 pairs turn, at the whole head's frequencies
    full = [
        layer
        for layer in model_layers("Gemma 4 26B-A4B")
        if layer.layer_type == "full_attention"
    ]
    assert full[0].head_dim == 512 and full[0].position_pairs == 64
    torch.testing.assert_close(full[0].inv_freq[:64], inv_frequencies(512, 1e6)[:64])
    # Llama 4 Scout: every 4th layer NoPE, 12 of 48
    layers = model_layers("Llama 4 Scout Instruct")
    assert [i for i, layer in enumerate(layers) if not layer.uses_rope] == list(
        range(3, 48, 4)
    )
    # DeepSeek-V3: 64 rotated of 192; Pythia 32 of 128; GLM-4 64 of 128
    assert model_layers("DeepSeek-V3")[0].rotary_dim == 64
    assert model_layers("DeepSeek-V3")[0].head_dim == 192
    assert model_layers("Pythia 1.4B (GPT-NeoX)")[0].rotary_dim == 32
    assert model_layers("GLM-4 9B")[0].rotary_dim == 64
    # Gemma 3 local layers: 57 of 128 pairs longer than the 1024-token window (exercise
    # 3)
    lam = 2 * math.pi / inv_frequencies(256, 1e4).double()
    assert int((lam > 1024).sum()) == 57
    # BLOOM: 112 heads, slopes from two geometric series (not a power of two)
    alibi = model_curves("BLOOM 176B (ALiBi)")[0]
    assert alibi["y"].numel() == 112


def test_model_table_lengths_follow_the_cited_sources():
    # values checked by hand against public copies (issue 12), not read from the table:
    # Mistral 7B paper, Table 1: context_len 8192 (the config's 32768 is not a claim)
    mistral = MODELS["Mistral 7B"]
    assert (mistral.trained_length, mistral.context_length) == (8192, 8192)
    assert mistral.config["max_position_embeddings"] == 32768
    # DeepSeek-V3 card: 128K context; config: 163840 = 40 x 4096, YaRN from 4096
    deepseek = MODELS["DeepSeek-V3"]
    assert (deepseek.trained_length, deepseek.context_length) == (4096, 131072)
    rope = deepseek.config["rope_scaling"]
    assert deepseek.config["max_position_embeddings"] == 163840
    assert (rope["factor"], rope["original_max_position_embeddings"]) == (40, 4096)
    assert (rope["beta_fast"], rope["beta_slow"]) == (32, 1)
    assert (rope["mscale"], rope["mscale_all_dim"]) == (1.0, 1.0)


def test_model_table_rows_added_for_issue_21():
    # values checked by hand against public copies of the configs (issue 21)
    glm = model_layers("GLM-4 9B")[0]  # THUDM/glm-4-9b-chat: rope_ratio 500
    assert glm.base == 10000.0 * 500 and glm.rotary_dim == 64
    oss = MODELS["GPT-OSS 20B"].config
    assert oss["rope_scaling"]["truncate"] is False and oss["sliding_window"] == 128
    layers = model_layers("GPT-OSS 20B")
    assert [layer.layer_type for layer in layers[:2]] == [
        "sliding_attention",
        "full_attention",
    ]
    assert all(torch.equal(layer.inv_freq, layers[0].inv_freq) for layer in layers)
    phi = model_layers("Phi-4-mini")[0]
    assert (phi.rope_type, phi.rotary_dim, phi.head_dim) == ("longrope", 96, 128)
    assert len(MODELS["Phi-4-mini"].config["rope_scaling"]["long_factor"]) == 48
    qwen3 = model_layers("Qwen3 8B + YaRN")[0]
    assert (qwen3.rope_type, qwen3.base) == ("yarn", 1e6)
    for name in ("Mistral 7B v0.3", "Mistral Nemo 12B"):
        assert model_layers(name)[0].base == 1e6, name
    # Llama 4 Scout's L is its original_max_position_embeddings
    scout = MODELS["Llama 4 Scout Instruct"]
    text = scout.config["text_config"]["rope_scaling"]
    assert scout.trained_length == text["original_max_position_embeddings"]


def test_lesson_contrast_partial_vs_proportional():
    prop, _ = rope_frequencies("proportional", 512, 1e6, partial_rotary_factor=0.25)
    neox, _ = rope_frequencies("default", 512, 1e6, partial_rotary_factor=0.25)
    assert prop.numel() == 256 and int((prop > 0).sum()) == 64 and neox.numel() == 64
    assert float(prop[63]) == pytest.approx(1e6 ** (-126 / 512), rel=1e-6)
    assert float(neox[63]) == pytest.approx(1e6 ** (-126 / 128), rel=1e-5)


# ------------------------------------------------------------------ exercises


def test_checkers_accept_the_right_answers():
    theta = 10000.0 ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    right = torch.where(
        torch.arange(32) < 16, theta, torch.zeros(32, dtype=torch.float64)
    )
    assert ex.check_proportional_frequencies(right).ok
    assert ex.check_proportional_frequencies(right.tolist()).ok
    assert ex.check_nope_query_scale(1 + 0.1 * math.log(3)).ok
    assert ex.check_nope_query_scale(np.float32(1 + 0.1 * math.log(3))).ok
    assert (
        ex.check_local_slow_pairs(66).ok
        and ex.check_local_slow_pairs(torch.tensor(66)).ok
    )
    assert ex.check_broken_llama3_config(("faster", 20)).ok
    assert ex.check_broken_llama3_config([" Faster", np.int64(20)]).ok
    assert ex.check_mla_cache_size(576).ok and ex.check_mla_cache_size(576.0).ok


def test_broken_llama3_config_as_the_exercise_says():
    # deleting original_max_position_embeddings: transformers takes L from
    # max_position_embeddings, and the exercise's numbers are transformers' own
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    keys = {k: v for k, v in ex.BROKEN.items() if k != "model_type"}
    theirs, _ = ROPE_INIT_FUNCTIONS["llama3"](LlamaConfig(**keys))
    assert torch.equal(theirs.double(), ex.WRONG5)
    assert ex.CHANGED == 20 and ex.DIVIDED == {"right": 29, "wrong": 15}
    assert (ex.WRONG5 >= ex.RIGHT5).all()  # every changed pair turns faster


GLOBAL_512 = int((2 * math.pi / inv_frequencies(256, 1e6).double() > 512).sum())
NO_TWO_PI_512 = int((1 / inv_frequencies(256, 1e4).double() > 512).sum())


@pytest.mark.parametrize(
    "check,answer,hint",
    [
        (
            ex.check_proportional_frequencies,
            lambda: inv_frequencies(32, 1e4),
            "GPT-NeoX",
        ),
        (
            ex.check_proportional_frequencies,
            lambda: inv_frequencies(64, 1e4)[:16],
            "append",
        ),
        (
            ex.check_proportional_frequencies,
            lambda: inv_frequencies(64, 1e4),
            "plain RoPE",
        ),
        (
            ex.check_proportional_frequencies,
            lambda: torch.cat([inv_frequencies(32, 1e4), torch.zeros(16)]),
            "denominator",
        ),
        (ex.check_nope_query_scale, lambda: 1 + 0.1 * math.log(2), "floor"),
        (ex.check_nope_query_scale, lambda: (1 + 0.1 * math.log(3)) ** 2, "square"),
        (ex.check_nope_query_scale, lambda: 1 + 0.1 * math.log10(3), "log10"),
        (ex.check_local_slow_pairs, lambda: GLOBAL_512, "global base"),
        (ex.check_local_slow_pairs, lambda: NO_TWO_PI_512, "2 pi"),
        (ex.check_local_slow_pairs, lambda: 62, "fast ones"),
        (ex.check_local_slow_pairs, lambda: 57, "Gemma 3 4B"),
        (ex.check_broken_llama3_config, lambda: ("slower", 20), "other way round"),
        (ex.check_broken_llama3_config, lambda: ("faster", 29), "divides by 8"),
        (ex.check_broken_llama3_config, lambda: ("faster", 44), "keep their"),
        (ex.check_broken_llama3_config, lambda: ("faster", 14), "smooth ramp"),
        (ex.check_mla_cache_size, lambda: 512, "rotated key"),
        (ex.check_mla_cache_size, lambda: 512 + 128 * 64, "shared"),
        (ex.check_mla_cache_size, lambda: 128 * (192 + 128), "plain multi-head"),
    ],
)
def test_checkers_name_the_slip(check, answer, hint):
    feedback = check(answer())
    assert not feedback.ok and hint in feedback.message, feedback


# ------------------------------------------------------------------ widget


def test_widget_updates_in_place_and_stays_clean():
    import matplotlib

    matplotlib.use("agg")
    from rope_lib.figures.todays_models import YLIM, wavelength_bounds
    from rope_lib.widgets.todays_models import ModelWavelengthExplorer

    explorer = ModelWavelengthExplorer()
    w, h = explorer.figure.get_size_inches()
    assert w <= 6.4 + 1e-9 and h <= 3.3 + 1e-9
    explorer.figure.canvas.draw()
    for name in MODELS:
        explorer.update(model=name)
        explorer.figure.canvas.draw()
        assert not explorer.figure.stale
        assert name in explorer.readout_text()
        low, high = wavelength_bounds(name)
        assert YLIM[0] < low and high < YLIM[1]  # the fixed y range holds every model
    assert explorer.controls["model"].value == name
    assert "Live widget" in repr(explorer.widget())
    with pytest.raises(ValueError, match="model"):
        explorer.update(model="GPT-5")


def test_zz_report(capsys):
    with capsys.disabled():
        for what, diff in sorted(LARGEST.items()):
            print(f"\n  largest difference, {what}: {diff:.2e}")


# ------------------------------------------------------------------ layer patterns


def _pattern_from_transformers(config):
    """The (kind, count, size) groups that transformers' own config class reads from a
    model table entry: layer_types with sliding_window / attention_chunk_size, Llama 4's
    no_rope_layers, and rope_parameters' mrope_section."""
    config = {k: (dict(v) if isinstance(v, dict) else v) for k, v in config.items()}
    text = config.get("text_config", config)
    if isinstance(text.get("attn_temperature_tuning"), int):
        text["attn_temperature_tuning"] = bool(text["attn_temperature_tuning"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = AutoConfig.for_model(**config)
    hf = hf.get_text_config() if hasattr(hf, "get_text_config") else hf
    n = hf.num_hidden_layers
    types = list(getattr(hf, "layer_types", None) or [])
    window = getattr(hf, "sliding_window", None)
    if not types:
        types = ["sliding_attention" if window else "full_attention"] * n
    nope = [not flag for flag in getattr(hf, "no_rope_layers", [1] * n)]
    groups = {}
    for layer_type, no_position in zip(types, nope):
        if no_position:
            key = ("nope", None)
        elif layer_type == "sliding_attention":
            key = ("sliding", window)
        elif layer_type == "chunked_attention":
            key = ("chunked", hf.attention_chunk_size)
        else:
            key = ("full", None)
        groups[key] = groups.get(key, 0) + 1
    rope = hf.rope_parameters if isinstance(hf.rope_parameters, dict) else {}
    if "mrope_section" in rope:
        kind = "mrope_interleaved" if rope.get("mrope_interleaved") else "mrope"
        return [(kind, n, tuple(rope["mrope_section"]))]
    if list(groups) == [("full", None)]:
        return []  # every layer attends to the whole context with positions
    return [(kind, count, size) for (kind, size), count in groups.items()]


@pytest.mark.parametrize("name", ROPE_MODELS)
def test_layer_patterns_are_what_transformers_reads(name):
    assert list(MODELS[name].layers) == _pattern_from_transformers(MODELS[name].config)


def test_layer_patterns_match_the_config_classes_defaults():
    # transformers' defaults describe these releases: Mistral-7B-v0.1 (32 layers, window
    # 4096), Llama 4 Scout (every 4th of 48 layers NoPE, chunks of 8192 elsewhere), and
    # Gemma 3's five local layers to one global on 34 layers
    from transformers import Gemma3TextConfig, Llama4TextConfig, MistralConfig

    mistral = MistralConfig()
    assert MODELS["Mistral 7B"].layers == (
        ("sliding", mistral.num_hidden_layers, mistral.sliding_window),
    )
    llama4 = Llama4TextConfig(num_hidden_layers=48)
    nope = llama4.no_rope_layers.count(0)
    assert MODELS["Llama 4 Scout Instruct"].layers == (
        ("chunked", 48 - nope, llama4.attention_chunk_size),
        ("nope", nope, None),
    )
    gemma3 = Gemma3TextConfig(num_hidden_layers=34, sliding_window_pattern=6)
    local = gemma3.layer_types.count("sliding_attention")
    assert MODELS["Gemma 3 4B"].layers == (
        ("sliding", local, 1024),
        ("full", 34 - local, None),
    )


def test_layer_pattern_lines_in_both_languages():
    set_language("en")
    try:
        assert layer_pattern("GPT-OSS 20B") == ["SWA 128 x12", "full x12"]
        assert layer_pattern("Llama 4 Scout Instruct") == ["chunk 8192 x36", "NoPE x12"]
        assert layer_pattern("Qwen2-VL 7B") == ["M-RoPE 16/24/24"]
        assert layer_pattern("Qwen3-VL 30B-A3B") == ["M-RoPE thw x20, t x4"]
        assert layer_pattern("Llama 3.1 8B") == []
        assert model_summary("Llama 4 Scout Instruct").split(" | ")[1] == (
            "NoPE 12/48 layers"
        )
        set_language("zh")
        assert layer_pattern("Gemma 4 26B-A4B") == ["滑动窗口 1024 ×25", "全局 ×5"]
    finally:
        set_language("en")
    with pytest.raises(ValueError, match="name must be one of"):
        layer_pattern("Llama 4 Scout")


# ------------------------------------------------------------------ Phi-4-mini's LongRoPE


def test_phi4_mini_long_factors_are_a_geometric_ramp_then_about_32():
    long = torch.tensor(MODELS["Phi-4-mini"].config["rope_scaling"]["long_factor"])
    ratio = long[1:32].double() / long[:31].double()
    assert float((ratio - 1.118320672).abs().max()) < 1e-6  # pairs 0-31: r^i
    assert float(long[31]) == pytest.approx(32.03) and float(long[0]) == 1.0
    assert bool(((long[32:46] > 32) & (long[32:46] < 34)).all())
    assert long[46:].tolist() == pytest.approx([44.16, 47.77])


def test_phi4_mini_short_texts_get_plain_frequencies_and_the_attention_factor():
    from transformers import Phi3Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    phi = model_layers("Phi-4-mini")[0]
    # LongRoPE's factor for s = 131072 / 4096 = 32 (Ding et al. 2024): sqrt(1 + ln s / ln L)
    assert phi.attention_factor == pytest.approx(
        math.sqrt(1 + math.log(32) / math.log(4096))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = Phi3Config(
            **{
                k: v
                for k, v in MODELS["Phi-4-mini"].config.items()
                if k != "model_type"
            }
        )
        short, factor = ROPE_INIT_FUNCTIONS["longrope"](hf, "cpu", seq_len=64)
    plain = 1e4 ** (-torch.arange(0, 96, 2, dtype=torch.float64) / 96)
    torch.testing.assert_close(short.double(), plain, rtol=1e-6, atol=0)
    assert factor == pytest.approx(phi.attention_factor)  # at 64 tokens too


# ------------------------------------------------------------------ Men et al.'s bound


def _numpy_bound(length, head_dim=128, per_decade=100):
    """Men et al.'s bound by brute force, independently of rope_lib: every grid base in
    order, B(m) on every m in [0, L] at once."""
    m = np.arange(length + 1, dtype=np.float64)[:, None]
    i = np.arange(0, head_dim, 2, dtype=np.float64)
    k = 0
    while True:
        base = 10.0 ** (k / per_decade)
        if np.cos(m * base ** (-i / head_dim)).sum(axis=1).min() >= 0:
            return base
        k += 1


@pytest.mark.parametrize("length", [512, 2048])
def test_base_lower_bound_is_the_brute_force_smallest_base(length):
    assert base_lower_bound(length, 128) == _numpy_bound(length)
    assert base_lower_bound(length, 64) == _numpy_bound(length, 64)


def test_base_lower_bound_near_men_et_al_table():
    # Men et al. 2024 (arXiv:2405.14591), Table 1, d = 128: 2.7e4 at 4k, 8.4e4 at 8k,
    # 6.4e5 at 32k. Their grid of bases is not given; B >= 0 is not monotone in the base,
    # so the smallest passing base moves with the grid: within 15% here.
    for length, paper in ((4096, 2.7e4), (8192, 8.4e4), (32768, 6.4e5)):
        assert base_lower_bound(length) == pytest.approx(paper, rel=0.15), length
    # far above the wrap criterion, 2 pi b^((d-2)/d) = L, at every length
    assert base_lower_bound(32768) > 100 * (32768 / (2 * math.pi)) ** (128 / 126)


def test_discrimination_sum_and_first_negative_offset():
    assert float(discrimination_sum(0, 128, 1e4)) == 64.0
    m = torch.tensor([1.0, 1000.0, 5000.0])
    want = torch.cos(
        m[:, None].double() * 1e4 ** (-torch.arange(0, 128, 2).double() / 128)
    ).sum(-1)
    torch.testing.assert_close(
        discrimination_sum(m, 128, 1e4), want, rtol=0, atol=1e-12
    )
    first = first_negative_offset(32768, 128, 1e4)
    values = discrimination_sum(torch.arange(first + 1), 128, 1e4)
    assert bool((values[:-1] >= 0).all()) and float(values[-1]) < 0
    assert first_negative_offset(100, 128, 1e6) is None


def test_smallest_b_at_32k_as_the_lesson_quotes():
    # section 6's "smallest B": -4.04 for 500,000, -0.78 for 1,000,000, +0.01 for the
    # first passing grid base (10^5.8 = 630,957; 630,000 itself gives +0.08), 64 at m = 0
    m = torch.arange(32768 + 1)
    bound = base_lower_bound(32768)
    smallest = {
        b: round(float(discrimination_sum(m, 128, b).min()), 2)
        for b in (5e5, 1e6, bound)
    }
    assert smallest == {5e5: -4.04, 1e6: -0.78, bound: 0.01}
    assert float(discrimination_sum(0, 128, bound)) == 64.0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: base_lower_bound(0), "context_length"),
        (lambda: base_lower_bound(4096, 127), "head_dim"),
        (lambda: base_lower_bound(4096, points_per_decade=0), "points_per_decade"),
        (lambda: base_lower_bound(4096.5), "context_length"),
        (lambda: discrimination_sum(3, 128, -1.0), "base"),
        (lambda: discrimination_sum(float("nan"), 128, 1e4), "offsets"),
        (lambda: first_negative_offset(-1), "length"),
    ],
)
def test_base_bound_rejects_bad_input_by_name(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
