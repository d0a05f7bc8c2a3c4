"""rope_lib.pretrained's forward pass against transformers' on the same input, in one run.

    .venv/bin/python benchmarks/bench_pretrained.py [--lengths 512 2048] [--repeats 2]
                                                    [--threads 1]

Both models are SmolLM2-135M-Instruct in float32 from the same GGUF file (transformers:
LlamaForCausalLM with gguf_file=, SDPA attention; rope_lib: Llama.from_gguf). Each forward
computes all the logits of one window of Python's documentation; the two run alternately and
each one's best time is kept (the machine is shared). Peak memory: the largest resident set size
above the one before the call, sampled every 2 ms while the forward runs (psutil).
Goal (issue 20): rope_lib no slower than 1.2x transformers.
"""

from __future__ import annotations

import argparse
import threading
import time

import psutil
import torch

from rope_lib.pretrained import Llama, load_tokenizer, smollm2_path
from rope_lib.pretrained.text import documentation_tokens, text_windows


def peak_memory_and_time(fn):
    """(seconds, peak extra resident memory in MB) of one call of fn()."""
    process = psutil.Process()
    before = process.memory_info().rss
    peak, running = [before], [True]

    def sample():
        while running[0]:
            peak[0] = max(peak[0], process.memory_info().rss)
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.perf_counter()
    try:
        fn()
    finally:
        seconds = time.perf_counter() - start
        running[0] = False
        sampler.join()
    return seconds, (max(peak[0], process.memory_info().rss) - before) / 2**20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    from transformers import AutoModelForCausalLM

    path = smollm2_path()
    start = time.perf_counter()
    ours = Llama.from_gguf(path)
    loaded_ours = time.perf_counter() - start
    start = time.perf_counter()
    theirs = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32
    ).eval()
    loaded_theirs = time.perf_counter() - start
    print(
        f"load: rope_lib {loaded_ours:.1f} s (dequantized weights cached), "
        f"transformers {loaded_theirs:.1f} s; {args.threads} thread(s), float32"
    )
    ids = documentation_tokens(load_tokenizer(path))
    print(
        f"{'tokens':>7} {'rope_lib s':>11} {'transformers s':>15} {'ratio':>6} "
        f"{'rope_lib MB':>12} {'transformers MB':>16} {'max |dlogit|':>13}"
    )
    for n in args.lengths:
        tokens = text_windows(ids, n, 1)[0][None]
        best = {"ours": (float("inf"), 0.0), "theirs": (float("inf"), 0.0)}
        out = {}
        with torch.inference_mode():
            for _ in range(args.repeats):
                for name, run in (
                    ("ours", lambda: ours(tokens)),
                    ("theirs", lambda: theirs(tokens).logits),
                ):
                    out.pop(name, None)
                    holder = {}
                    seconds, mb = peak_memory_and_time(
                        lambda run=run: holder.setdefault("y", run())
                    )
                    out[name] = holder["y"]
                    best[name] = min(best[name], (seconds, mb))
            diff = (out["ours"] - out["theirs"]).abs().max().item()
        (t_ours, m_ours), (t_theirs, m_theirs) = best["ours"], best["theirs"]
        print(
            f"{n:>7} {t_ours:>11.2f} {t_theirs:>15.2f} {t_ours / t_theirs:>6.2f} "
            f"{m_ours:>12.0f} {m_theirs:>16.0f} {diff:>13.1e}"
        )
    print("ratio = rope_lib time / transformers time (goal: at most 1.2)")


if __name__ == "__main__":
    main()
