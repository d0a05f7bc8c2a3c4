"""python -m rope_lib.lab --out DIR [--seed N] [--seeds K] [--workers W] [--quick]

Train and evaluate the lab's models (one job per scheme and seed, W side by side) and write
DIR/results.json and DIR/*.png; finished jobs are kept in DIR/jobs/ and models in
DIR/checkpoints/, so a second run continues an interrupted one.
"""

from __future__ import annotations

import argparse
import sys

from .experiments import run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rope_lib.lab",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--out", required=True, help="folder for results.json and figures"
    )
    parser.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    parser.add_argument(
        "--seeds", type=int, default=5, help="how many seeds (default 5)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="jobs side by side, one thread each"
    )
    parser.add_argument(
        "--quick", action="store_true", help="one seed, short runs (< 1 min)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    results = run(
        args.out,
        seed=args.seed,
        seeds=args.seeds,
        quick=args.quick,
        workers=args.workers,
        quiet=args.quiet,
    )
    print(
        f"ran {len(results['trained'])} job(s) in {results['timing']['wall_seconds']:.0f} s; "
        f"results in {args.out}/results.json"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
