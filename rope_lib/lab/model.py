"""The lab's model: a tiny decoder-only transformer whose position scheme is a parameter.

    LabModel(vocab_size, position="rope", d_model=64, n_layers=2, n_heads=4, max_len=512,
             base=10000.0)

embedding -> (+ sinusoidal table or learned table, once, for those two schemes)
          -> n_layers pre-norm blocks:  x + attn(LN(x)),  then  x + MLP(LN(x))
          -> LN -> linear head to next-token logits

The attention is rope_lib.PositionalSelfAttention. RoPE rotates q and k inside every block;
ALiBi adds its bias to every block's scores; "sinusoidal" and "learned" are added once at the
embedding (the blocks then get position="none"), as in the original Transformer and GPT-2.
For a RoPE model, `set_rope(inv_freq, attention_factor)` swaps the frequencies of every block,
which is how a scaling method (PI, NTK, YaRN, ...) is applied at evaluation or fine-tuning;
`base` is RoPE's b (theta_i = b^(-2i/d)). `set_window(w)` lets every block see only the
last w keys (a probe: is it the far keys that break a model past L?).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..attention import PositionalSelfAttention
from ..language import _
from ..sinusoidal import LearnedPositionEmbedding, sinusoidal_encoding

SCHEMES = ("none", "sinusoidal", "learned", "rope", "alibi")
"""Position schemes of the lab, in the order the lesson plots them."""


class PlainCausalAttention(nn.Module):
    """The floor for the speed comparison: multi-head causal attention with no positions, one
    call to torch.nn.functional.scaled_dot_product_attention, the same weights' shapes."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor, positions=None) -> torch.Tensor:
        batch, seq, d_model = x.shape
        qkv = self.qkv(x).view(batch, seq, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(out.transpose(1, 2).reshape(batch, seq, d_model))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(LN(x)), then x + MLP(LN(x))."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        position: str,
        max_len: int,
        plain: bool,
        base: float = 10000.0,
    ):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        if plain:
            self.attn = PlainCausalAttention(d_model, n_heads)
        else:
            self.attn = PositionalSelfAttention(
                d_model, n_heads, position, causal=True, max_len=max_len, base=base
            )
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), positions)
        return x + self.mlp(self.ln2(x))


class LabModel(nn.Module):
    """A tiny decoder-only language model with a chosen position scheme (see module docstring).

    forward(tokens [batch, seq] int64) -> logits [batch, seq, vocab_size].
    `plain=True` (with position="none") uses PlainCausalAttention instead of rope_lib's block:
    the speed floor of benchmarks/bench_lab.py.
    """

    def __init__(
        self,
        vocab_size: int,
        position: str = "rope",
        *,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        max_len: int = 512,
        plain: bool = False,
        base: float = 10000.0,
    ):
        super().__init__()
        if position not in SCHEMES:
            raise ValueError(
                _("position must be one of {schemes}, got {position!r}").format(
                    schemes=SCHEMES, position=position
                )
            )
        if plain and position != "none":
            raise ValueError(
                _(
                    "plain=True is the no-position floor: position must be 'none', got "
                    "{position!r}"
                ).format(position=position)
            )
        self.position, self.max_len, self.base = position, max_len, float(base)
        self.embed = nn.Embedding(vocab_size, d_model)
        if position == "learned":
            self.learned = LearnedPositionEmbedding(max_len, d_model)
        if position == "sinusoidal":
            self.register_buffer(
                "sinusoid", sinusoidal_encoding(max_len, d_model), persistent=False
            )
        block_position = position if position in ("rope", "alibi") else "none"
        self.blocks = nn.ModuleList(
            Block(d_model, n_heads, block_position, max_len, plain, base)
            for _ in range(n_layers)
        )
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    @property
    def head_dim(self) -> int:
        return self.embed.embedding_dim // self.blocks[0].attn.n_heads

    def set_rope(self, rope: tuple[torch.Tensor, float] | None) -> None:
        """Use these (inv_freq, attention_factor) in every block (None: the trained default)."""
        if self.position != "rope":
            raise ValueError(
                _(
                    "set_rope needs a RoPE model, this one has position={position!r}"
                ).format(position=self.position)
            )
        for block in self.blocks:
            block.attn.rope = rope

    def set_window(self, window: int | None) -> None:
        """Every block's attention sees only the last `window` keys (None: all of them)."""
        if self.blocks and isinstance(self.blocks[0].attn, PlainCausalAttention):
            raise ValueError(_("set_window needs rope_lib's attention, got plain=True"))
        for block in self.blocks:
            block.attn.window = window

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        if seq > self.max_len:
            raise ValueError(
                _("tokens.shape[1] must be <= max_len = {max_len}, got {seq}").format(
                    max_len=self.max_len, seq=seq
                )
            )
        x = self.embed(tokens)
        if self.position == "learned":
            x = self.learned(x)
        elif self.position == "sinusoidal":
            x = x + self.sinusoid[:seq]
        positions = torch.arange(seq, device=tokens.device)
        for block in self.blocks:
            x = block(x, positions)
        return self.head(self.ln_f(x))
