"""Speed of rope_lib.apply_rope against the references it is checked against, in one run.

For q and k of each shape and dtype, times (interleaved, round-robin, median of --repeats):
    clone         q.clone(), k.clone(): the memory-traffic floor
    meta          Meta's LLaMA apply_rotary_emb (complex), on its native [batch, seq, heads, dim]
    transformers  apply_rotary_pos_emb with cos/sin from LlamaRotaryEmbedding (computed once, untimed)
    plain inter.  the plain three lines: rope_cos_sin, then rope_lib.rotary.rotate_pairs
    plain half    (what apply_rope computes, without its fast kernel), angles inside each call
    interleaved   rope_lib.apply_rope(layout="interleaved"), angles computed inside each call
    half          rope_lib.apply_rope(layout="half"), angles computed inside each call
and prints a Markdown table of medians and the ratios: what the fast kernel gains over the three
lines (plain / apply_rope), and what the project aims at:
    interleaved / meta <= 1,  transformers / half >= 2,  interleaved and half / clone <= 1.5.
This machine is shared and noisy: absolute times drift, ratios from one run are what to compare.

    python benchmarks/bench_rope.py [--repeats 15] [--quick]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import (
    LlamaRotaryEmbedding,
    apply_rotary_pos_emb,
)

import rope_lib
from rope_lib.rotary import angle_dtype, rope_cos_sin, rotate_pairs


def meta_apply_rotary_emb(xq, xk, freqs_cis):
    """Meta's reference (llama/model.py), for [batch, seq, heads, head_dim]."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis[None, :, None, :]
    return (
        torch.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq),
        torch.view_as_real(xk_ * freqs_cis).flatten(3).type_as(xk),
    )


def plain_rope(x, positions, layout):
    """apply_rope's numbers from the plain three lines (rotate_pairs), no fast kernel."""
    compute = angle_dtype(x.dtype)
    inv_freq = rope_lib.inv_frequencies(x.shape[-1], dtype=compute)
    cos, sin = rope_cos_sin(positions, inv_freq, compute)
    return rotate_pairs(x, cos, sin, layout)


def candidates(shape, dtype):
    batch, heads, seq, dim = shape
    torch.manual_seed(0)
    q, k = torch.randn(shape).to(dtype), torch.randn(shape).to(dtype)
    q_meta, k_meta = q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous()
    positions = torch.arange(seq)
    freqs_cis = rope_lib.precompute_freqs_cis(dim, seq)
    config = LlamaConfig(
        hidden_size=dim * heads,
        num_attention_heads=heads,
        head_dim=dim,
        max_position_embeddings=seq,
    )
    cos, sin = LlamaRotaryEmbedding(config)(q, positions[None].expand(batch, seq))
    return {
        "clone": lambda: (q.clone(), k.clone()),
        "meta": lambda: meta_apply_rotary_emb(q_meta, k_meta, freqs_cis),
        "transformers": lambda: apply_rotary_pos_emb(q, k, cos, sin),
        "plain inter.": lambda: (
            plain_rope(q, positions, "interleaved"),
            plain_rope(k, positions, "interleaved"),
        ),
        "plain half": lambda: (
            plain_rope(q, positions, "half"),
            plain_rope(k, positions, "half"),
        ),
        "interleaved": lambda: (
            rope_lib.apply_rope(q, positions),
            rope_lib.apply_rope(k, positions),
        ),
        "half": lambda: (
            rope_lib.apply_rope(q, positions, layout="half"),
            rope_lib.apply_rope(k, positions, layout="half"),
        ),
    }


def measure(functions, repeats):
    times = {name: [] for name in functions}
    for function in functions.values():  # warm-up
        function()
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1e3 for name, values in times.items()}


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument(
        "--quick", action="store_true", help="3 repeats, to check that it runs"
    )
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    print(
        f"Machine: {cpu_name()}, {torch.get_num_threads()} torch threads, torch {torch.__version__}, "
        f"Python {platform.python_version()}; median of {repeats}, q and k together, ms"
    )
    print()
    columns = ["clone", "meta", "transformers", "plain inter.", "plain half"]
    columns += ["interleaved", "half"]
    ratios = {
        "plain/interleaved": ("plain inter.", "interleaved"),
        "plain/half": ("plain half", "half"),
        "interleaved/meta": ("interleaved", "meta"),
        "transformers/half": ("transformers", "half"),
        "interleaved/clone": ("interleaved", "clone"),
        "half/clone": ("half", "clone"),
    }
    print("| shape | dtype | " + " | ".join(columns + list(ratios)) + " |")
    print("|---" * (2 + len(columns) + len(ratios)) + "|")
    for shape in [(1, 32, 2048, 128), (4, 8, 512, 64)]:
        for dtype in [torch.float32, torch.bfloat16]:
            ms = measure(candidates(shape, dtype), repeats)
            cells = [str(list(shape)), str(dtype).replace("torch.", "")]
            cells += [f"{ms[name]:.1f}" for name in columns]
            cells += [f"{ms[a] / ms[b]:.2f}" for a, b in ratios.values()]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
