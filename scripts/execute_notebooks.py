"""Execute notebooks in place, in order, each in a fresh kernel, and check them for hygiene.

    python scripts/execute_notebooks.py                 # every lesson, English then Chinese
    python scripts/execute_notebooks.py notebooks/03_rotation_2d.ipynb

Outputs are committed, so that the lessons read well on GitHub and nbval has something to
compare. Widget state is not stored (it would be large and differ every run); every widget has a
static PNG beside it instead.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ExecutePreprocessor

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    processor = ExecutePreprocessor(
        timeout=600,
        kernel_name="python3",
        store_widget_state=False,
        record_timing=False,
    )
    start = time.perf_counter()
    processor.preprocess(notebook, {"metadata": {"path": str(path.parent)}})
    seconds = time.perf_counter() - start
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)  # timestamps of older runs
    nbformat.write(notebook, path)
    return seconds


def main(argv: list[str]) -> None:
    paths = [Path(a).resolve() for a in argv] or [
        *sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")),
        *sorted((ROOT / "notebooks" / "zh").glob("[0-9]*.ipynb")),
    ]
    for path in paths:
        print(
            f"{path.relative_to(ROOT)}: executed in {execute(path):.1f} s", flush=True
        )


if __name__ == "__main__":
    main(sys.argv[1:])
