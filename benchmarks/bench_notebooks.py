"""The collection's speed budget, Python side: notebooks, nbval, and importing rope_lib.

Prints a Markdown table:
    import rope_lib                      fresh interpreter, median of 5
    each notebook, fresh kernel          executed on a temporary copy (nothing is written back)
    the whole nbval run                  as `make test-nbval` runs it (2 workers)
Goals on this machine: every notebook under 20 s, the whole nbval run under 90 s.
Widget update times: benchmarks/bench_widgets.py; key press to pixels: benchmarks/bench_browser.py.

    python benchmarks/bench_notebooks.py
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def seconds(command: list[str], cwd: Path = ROOT) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        sys.exit(
            f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    return time.perf_counter() - start


def execute_seconds(path: Path, workdir: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def main() -> None:
    rows = []
    imports = [seconds([sys.executable, "-c", "import rope_lib"]) for _ in range(5)]
    rows.append(("import rope_lib", statistics.median(imports), None))
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "notebooks"
        shutil.copytree(
            ROOT / "notebooks",
            copy,
            ignore=shutil.ignore_patterns(".ipynb_checkpoints"),
        )
        for path in sorted(copy.glob("[0-9]*.ipynb")):
            rows.append((f"execute {path.name}", execute_seconds(path, copy), 20.0))
        nbval = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--dist",
            "loadfile",
            str(copy),
            "--nbval",
            "--nbval-sanitize-with",
            str(ROOT / "tests" / "nbval_sanitize.cfg"),
        ]
        rows.append(
            ("whole nbval run (2 workers)", seconds(nbval, cwd=Path(tmp)), 90.0)
        )
    print("| what | seconds | goal |")
    print("|---|---|---|")
    for name, value, goal in rows:
        print(f"| {name} | {value:.1f} | {'' if goal is None else f'< {goal:.0f}'} |")


if __name__ == "__main__":
    main()
