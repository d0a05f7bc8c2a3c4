"""python -m rope_lib.pretrained --out DIR [--quick] [--device cpu|cuda|mps]

Loss per position past SmolLM2-135M's training length (8,192 tokens) on Python's documentation:
plain RoPE and zero-shot PI, NTK, dynamic NTK, YaRN (with and without its attention factor) and
Llama 3 scaling at factors 2 and 4 (16,384 and 32,768 tokens), over several windows of the text.
Writes DIR/results.json after every window; run it again to continue an interrupted run.
--quick: the same steps on 2 windows of 64 tokens (under a minute), for CI.
"""

from __future__ import annotations

import argparse
import sys

import torch

from .experiment import run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rope_lib.pretrained", description=__doc__
    )
    parser.add_argument("--out", required=True, help="folder for results.json")
    parser.add_argument(
        "--quick", action="store_true", help="2 short windows (< 1 min), for CI"
    )
    parser.add_argument(
        "--device", default="cpu", help="torch device, e.g. cuda if a GPU is there"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    results = run(args.out, quick=args.quick, device=args.device, quiet=args.quiet)
    print(
        f"{len(results['units'])} window(s) evaluated, {results['wall_seconds']:.0f} s this "
        f"run; results in {args.out}/results.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
