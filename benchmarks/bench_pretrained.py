"""rope_lib.pretrained's forward pass against transformers' on the same input, in one run.

    .venv/bin/python benchmarks/bench_pretrained.py [--lengths 512 2048] [--rounds 2]
                                                    [--threads 2]

Both models are SmolLM2-135M-Instruct in float32 from the same GGUF file (transformers:
LlamaForCausalLM with gguf_file=, SDPA attention; rope_lib: Llama.from_gguf). Each forward
computes all the logits of one window of Python's documentation.

Each measurement runs in a fresh subprocess (a worker: load the model, one warm-up forward on
16 tokens, then one timed forward), so that neither side inherits the other's memory or
caches. The two sides alternate, --rounds times per length, and each side's best time is kept
(the machine is shared: the best is the least disturbed). Peak memory is the kernel's own
high-water mark of the worker's resident set (VmHWM in /proc/self/status, which sees torch's
allocations as well as Python's; tracemalloc would not), reset once the model is loaded
(writing 5 to /proc/self/clear_refs, Linux), so that it is the peak during the forward pass,
printed beside the resident size before it. The workers' last logits are compared: the two
forwards must agree.
Goal (issue 20): rope_lib no slower than 1.2x transformers.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch


def _memory_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (the peak since the last reset) from /proc/self/status."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+) kB", status).group(1)) / 1024


def worker(side: str, length: int, threads: int, logits_path: str) -> dict:
    """Load one side's model, time one forward over `length` tokens; return the numbers."""
    torch.set_num_threads(threads)
    from rope_lib.pretrained import Llama, load_tokenizer, smollm2_path
    from rope_lib.pretrained.text import documentation_tokens, text_windows

    path = smollm2_path()
    tokens = text_windows(documentation_tokens(load_tokenizer(path)), length, 1)[0][
        None
    ]
    if side == "rope_lib":
        model = Llama.from_gguf(path)

        def forward(x):
            return model(x)

    else:
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(
            path.parent, gguf_file=path.name, dtype=torch.float32
        ).eval()

        def forward(x):
            return model(x).logits

    with torch.inference_mode():
        forward(tokens[:, :16])  # warm-up: first-call set-up is not the forward's cost
        loaded = _memory_mb("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
        start = time.perf_counter()
        logits = forward(tokens)
        seconds = time.perf_counter() - start
        peak = _memory_mb("VmHWM")
    torch.save(logits[0, -8:].clone(), logits_path)
    return {"seconds": seconds, "loaded_mb": loaded, "peak_mb": peak}


def measure(side: str, length: int, threads: int, logits_path: str) -> dict:
    command = [sys.executable, __file__, "--worker", side, "--lengths", str(length)]
    command += ["--threads", str(threads), "--logits", logits_path]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker", choices=["rope_lib", "transformers"])
    parser.add_argument("--logits", help="(worker) where to save the last logits")
    args = parser.parse_args(argv)
    if args.worker:
        print(
            json.dumps(worker(args.worker, args.lengths[0], args.threads, args.logits))
        )
        return

    print(
        f"SmolLM2-135M-Instruct, float32, {args.threads} thread(s), best of "
        f"{args.rounds} alternating fresh processes per side"
    )
    print(
        f"{'tokens':>7} {'rope_lib s':>11} {'transformers s':>15} {'ratio':>6} "
        f"{'rope_lib MB':>16} {'transformers MB':>16} {'max |dlogit|':>13}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for n in args.lengths:
            best = {}
            paths = {
                side: f"{folder}/{side}.pt" for side in ("rope_lib", "transformers")
            }
            for _ in range(args.rounds):
                for side, path in paths.items():
                    result = measure(side, n, args.threads, path)
                    if side not in best or result["seconds"] < best[side]["seconds"]:
                        best[side] = result
            ours, theirs = best["rope_lib"], best["transformers"]
            diff = torch.load(paths["rope_lib"]) - torch.load(paths["transformers"])
            print(
                f"{n:>7} {ours['seconds']:>11.2f} {theirs['seconds']:>15.2f} "
                f"{ours['seconds'] / theirs['seconds']:>6.2f} "
                f"{ours['peak_mb']:>9.0f} ({ours['loaded_mb']:>4.0f}) "
                f"{theirs['peak_mb']:>9.0f} ({theirs['loaded_mb']:>4.0f}) "
                f"{'< 1e-3' if diff.abs().max() < 1e-3 else 'DIFFER':>13}"
            )
    print(
        "ratio = rope_lib time / transformers time (goal: at most 1.2); peak MB: the "
        "peak resident memory during the forward, in brackets before it"
    )


if __name__ == "__main__":
    main()
