"""python -m rope_lib.pretrained --out DIR [--quick] [--offset N] [--windows N]
                               [--device cpu|cuda|mps] [--threads N]

SmolLM2-135M on Python's documentation, zero-shot: the loss per position past its training
length (8,192 tokens) for plain RoPE and PI, NTK, dynamic NTK, YaRN (with and without its
attention factor) and Llama 3 scaling at factor 2 (16,384 tokens), and for plain RoPE,
dynamic NTK and YaRN at factor 4 (32,768 tokens); why plain RoPE breaks: PI on a band of
pairs only, static NTK x4 inside L, StreamingLLM (attention sinks + recent keys), the
recent keys alone, and the sliding-window reference; passkey retrieval by length, depth and
method; the size of q and k per frequency pair, attention by distance and the attention
sinks, by layer; the attention entropy per layer on the loss units of plain RoPE, PI and
YaRN, a temperature sweep of YaRN at x2 and x4, and log-n scaling (the attention study).
Writes DIR/results.json after every unit; run it again to continue an
interrupted run (units already there are skipped). --quick: the same steps at tiny sizes
(under a minute), for CI. --offset N: read the text from its token N on (other windows,
same text). --windows N: N text windows per method and factor instead of one (a spread
between stretches of text; each more window adds about 47 minutes on two idle cores).
--jobs N: N units side by side in N processes, the threads split between them.
--only METHOD ...: add only these methods' loss units to an existing DIR/results.json."""

from __future__ import annotations

import argparse
import sys

import torch

from .experiment import add_units, run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rope_lib.pretrained",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the docstring as it is
    )
    parser.add_argument("--out", required=True, help="folder for results.json")
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes (under a minute), for CI"
    )
    parser.add_argument(
        "--device", default="cpu", help="torch device, e.g. cuda if a GPU is there"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    parser.add_argument(
        "--offset",
        type=int,
        default=0,
        help="read the text from this token on, wrapping around (other windows)",
    )
    parser.add_argument(
        "--windows",
        type=int,
        default=None,
        help="text windows per method and factor (default 1; more: a spread)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="units side by side in this many processes (threads split between them)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        metavar="METHOD",
        help="add only these methods' loss units to DIR/results.json (a probe added "
        "after the run, e.g. pi_band_control); the rest stays as it is",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.only:
        add_units(args.out, args.only, device=args.device, quiet=args.quiet)
        print(f"added {', '.join(args.only)} to {args.out}/results.json")
        return 0
    results = run(
        args.out,
        quick=args.quick,
        device=args.device,
        quiet=args.quiet,
        offset=args.offset,
        windows=args.windows,
        jobs=args.jobs,
    )
    seconds = ", ".join(f"{part} {s:.0f} s" for part, s in results["seconds"].items())
    print(
        f"done: {results['wall_seconds']:.0f} s this run; the units took {seconds}; "
        f"results in {args.out}/results.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
