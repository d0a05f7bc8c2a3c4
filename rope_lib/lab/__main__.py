"""python -m rope_lib.lab --seed N --out DIR [--quick]: train and evaluate the lab's models.

Writes DIR/results.json and DIR/{lm,passkey,scaling}.png; checkpoints in DIR/checkpoints/
(a second run with them present trains nothing new).
"""

from __future__ import annotations

import argparse
import sys

import torch

from .experiments import run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rope_lib.lab", description=__doc__)
    parser.add_argument(
        "--seed", type=int, default=0, help="first seed (seeds N, N+1, N+2)"
    )
    parser.add_argument(
        "--out", required=True, help="folder for results.json and figures"
    )
    parser.add_argument(
        "--quick", action="store_true", help="one seed, short runs (< 1 min)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1 is fastest for these tiny models)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    results = run(args.out, seed=args.seed, quick=args.quick, quiet=args.quiet)
    trained = results["trained"]
    print(
        f"trained {len(trained)} model(s) in {results['wall_seconds']:.0f} s; "
        f"results in {args.out}/results.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
