"""A lesson's run in JupyterLab judged against its stored outputs, as nbval judges them.

`make test` runs every lesson once, in JupyterLab (tests/browser): the Chinese ones in a
kernel with torch's plain kernels and two threads (lab.PORTABLE_ENV), the English ones on
this CPU's own kernels with one thread. What that run leaves in the notebook is compared
here with the committed outputs, cell by cell, with nbval's own comparison
(nbval.plugin.IPyNbCell.compare_outputs: streams merged, the outputs' keys and MIME types
compared, images and widget ids not) and the course's sanitizers (tests/nbval_sanitize.cfg),
so that one run answers both questions: does the lesson work in JupyterLab, and does it
print what it says on another machine. `nbval-ignore-output` (a live widget) is run and not
compared, as under nbval. Two things JupyterLab does otherwise, which no lesson may rely on
(tests/course/test_stored_outputs.py holds them to that): its run-all runs every cell (an
`nbval-skip` cell too) and honours only the `raises-exception` tag, not nbval's comments;
and it applies a stream's carriage returns as a terminal does, where nbval drops the text
before one. `make test-nbval` and `make test-portable` run the notebooks under nbval itself.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from pathlib import Path
from types import SimpleNamespace

import nbformat
from nbformat.v4.rwbase import rejoin_lines
from nbval.plugin import (
    IPyNbCell,
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
    nocolors,
)

SANITIZERS = Path(__file__).resolve().parents[1] / "nbval_sanitize.cfg"
# nbval 0.11's IPyNbFile.skip_compare without nbdime: the keys and MIME types it never
# compares (model ids of widgets are random; pictures differ in their bytes)
SKIP_COMPARE = (
    "metadata",
    "traceback",
    "prompt_number",
    "output_type",
    "name",
    "execution_count",
    "application/vnd.jupyter.widget-view+json",
    "image/png",
    "image/jpeg",
)


class _Cell:
    """What nbval's IPyNbCell.compare_outputs reads of the cell it judges: its file's
    skips and sanitizers, the colours, and pytest's hook for showing a difference (here
    none, so nbval prints both outputs in full)."""

    colors = nocolors
    config = None
    ihook = SimpleNamespace(pytest_assertrepr_compare=lambda **_: [])
    compare_outputs = IPyNbCell.compare_outputs
    format_output_compare = IPyNbCell.format_output_compare
    sanitize = IPyNbCell.sanitize

    def __init__(self, patterns: OrderedDict):
        self.parent = SimpleNamespace(
            skip_compare=SKIP_COMPARE, sanitize_patterns=patterns
        )
        self.comparison_traceback: list[str] = []


def sanitizers(path: Path = SANITIZERS) -> OrderedDict:
    return OrderedDict(get_sanitize_patterns(path.read_text(encoding="utf-8")))


def _code_cells(nb: dict) -> list:
    """The code cells as nbval reads them: NotebookNodes, multi-line strings joined."""
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    return rejoin_lines(nbformat.from_dict({"cells": copy.deepcopy(cells)})).cells


def differences(stored: dict, executed: dict, patterns: OrderedDict) -> list[str]:
    """Each code cell whose outputs in `executed` (the notebook after a run, nbformat
    JSON) differ from those in `stored` as nbval would judge them: one text per cell,
    'Cell N' counted as nbval counts (code cells only)."""
    ref_cells, run_cells = _code_cells(stored), _code_cells(executed)
    if [c.source for c in ref_cells] != [c.source for c in run_cells]:
        return ["the run's code cells are not the stored notebook's"]
    found = []
    for number, (ref, run) in enumerate(zip(ref_cells, run_cells)):
        options = dict(find_metadata_tags(ref.metadata))
        options.update(find_comment_markers(ref.source))
        if options.get("skip"):
            continue
        if ref.execution_count is None:  # unrun: nothing to compare, nothing stored
            if ref.outputs:
                found.append(f"Cell {number}: unrun reference cell has outputs")
            continue
        if not options.get("check", True):
            continue
        judge = _Cell(patterns)
        if not judge.compare_outputs(
            coalesce_streams(run.outputs), coalesce_streams(ref.outputs)
        ):
            found.append(
                f"Cell {number}: outputs differ\n"
                + "\n".join(judge.comparison_traceback)
            )
    return found
