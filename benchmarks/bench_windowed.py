"""The cost of a masked forward (model.Window) against the plain one, on SmolLM2-135M.

    .venv/bin/python benchmarks/bench_windowed.py [--length 8192] [--threads 2]
                                                  [--block 1024]

Times token_losses (what a loss unit runs) over the first `length` tokens of Python's
documentation three ways: plain causal attention (fused scaled_dot_product_attention),
StreamingLLM (4 sinks + the most recent L - 4 keys) and the window alone (the most recent
L keys), L = 8,192, both in blocks of `block` queries (windowed_attention). Prints each
one's wall seconds and the process's CPU seconds (all threads): on a shared machine the
wall time stretches with the others' load, the CPU time much less. One warm-up forward on
64 tokens first; the sizes of the masked forwards' score blocks are printed beside, with
what experiment._cost predicts for an idle machine.
"""

from __future__ import annotations

import argparse
import time

import torch


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--length", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--block", type=int, default=1024)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    from rope_lib.pretrained import Llama, Window, load_tokenizer, smollm2_path
    from rope_lib.pretrained.experiment import _cost
    from rope_lib.pretrained.text import documentation_tokens

    path = smollm2_path()
    model = Llama.from_gguf(path)
    L = model.config.context_length
    tokens = documentation_tokens(load_tokenizer(path))[: args.length]
    windows = {
        "plain": None,
        "streaming": Window(L - 4, sinks=4, block=args.block),
        "window_only": Window(L, block=args.block),
    }
    with torch.inference_mode():
        model.token_losses(tokens[:64])
        for name, window in windows.items():
            begun, cpu = time.perf_counter(), time.process_time()
            losses = model.token_losses(tokens, window=window)
            wall = time.perf_counter() - begun
            print(
                f"{name:12s} {args.length} tokens: {wall:6.1f} s wall, "
                f"{time.process_time() - cpu:6.1f} s CPU ({args.threads} threads); "
                f"mean loss {float(losses.mean()):.4f}; "
                f"_cost {_cost(args.length, window):.0f} s"
            )


if __name__ == "__main__":
    main()
