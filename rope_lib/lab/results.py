"""Reading a results folder of `python -m rope_lib.lab` (experiments.py gives the schema of
results.json): what lesson 12, its checkers and its widgets read, the twin of
rope_lib.pretrained.results. summary.py computes from the dict.

    results_folder()            the folder named by ROPE_LAB_RESULTS, or the committed
                                notebooks/lab_results/
    load_results(folder=None)   results.json as a dict; by default from results_folder()
"""

from __future__ import annotations

from pathlib import Path

from .. import results as _results

#: The committed results, read when ROPE_LAB_RESULTS is not set.
COMMITTED_RESULTS = _results.NOTEBOOKS / "lab_results"


def results_folder() -> Path:
    """The folder of results.json the lesson reads: ROPE_LAB_RESULTS (a relative path is
    taken from the current folder, else from notebooks/, as the lesson resolves it from
    there), or the committed notebooks/lab_results/."""
    return _results.results_folder("ROPE_LAB_RESULTS", COMMITTED_RESULTS)


def load_results(folder=None) -> dict:
    """results.json of the lab (python -m rope_lib.lab --out FOLDER) as a dict; by
    default from results_folder()."""
    return _results.load_results(folder if folder is not None else results_folder())
