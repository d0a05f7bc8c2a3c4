"""Where a lesson finds the results of a long run: results.json in a folder.

The experiments (`python -m rope_lib.lab`, `python -m rope_lib.pretrained`) write
DIR/results.json; their lesson, its checkers and its widgets read the folder named by an
environment variable (ROPE_LAB_RESULTS, ROPE_LLM_RESULTS), or else the committed one under
notebooks/. rope_lib.lab.results and rope_lib.pretrained.results name theirs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
"""The lessons' folder, where the committed results live (notebooks/lab_results/, ...)."""


def results_folder(variable: str, committed: Path) -> Path:
    """The folder named by the environment variable `variable`, or `committed` when it is
    unset or empty. A relative path is taken from the current folder if it exists there,
    else from the committed folder's parent (notebooks/), as a lesson resolves it."""
    name = os.environ.get(variable)
    if not name:
        return committed
    folder = Path(name)
    if not folder.is_absolute() and not folder.exists():
        folder = committed.parent / folder
    return folder


def load_results(folder) -> dict:
    """folder/results.json as a dict."""
    return json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))
