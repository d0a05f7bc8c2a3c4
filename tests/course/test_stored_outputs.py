"""The judge of the browser's run against the stored outputs (tests/browser/stored_outputs.py)
says what nbval would say: same outputs pass, a changed digit fails on its cell, and what
nbval ignores (addresses, figure sizes, pictures' bytes, widget ids, a tagged cell) is
ignored. Checked here on a real lesson, without a browser."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "browser"))
from stored_outputs import differences, sanitizers  # noqa: E402

LESSON = REPO / "notebooks" / "01_sinusoidal.ipynb"


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads(LESSON.read_text(encoding="utf-8"))


def _code(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _first(nb: dict, has) -> tuple[int, dict]:
    """(nbval's cell number, output) of the first output for which has(output)."""
    for number, cell in enumerate(_code(nb)):
        tags = cell["metadata"].get("tags", [])
        for out in cell["outputs"]:
            if "nbval-ignore-output" not in tags and has(out):
                return number, out
    raise AssertionError(f"{LESSON.name} has no such output")


def _text(out: dict) -> str:
    return "".join(out["text"])


def test_the_stored_notebook_matches_itself(stored):
    assert differences(stored, copy.deepcopy(stored), sanitizers()) == []


def test_a_changed_digit_fails_on_its_cell(stored):
    run = copy.deepcopy(stored)
    number, out = _first(
        run, lambda o: o["output_type"] == "stream" and any(map(str.isdigit, _text(o)))
    )
    text = _text(out)
    i = next(i for i, ch in enumerate(text) if ch.isdigit())
    out["text"] = text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1 :]
    found = differences(stored, run, sanitizers())
    assert len(found) == 1 and found[0].startswith(f"Cell {number}: outputs differ")
    assert text.splitlines()[0][:20] in found[0]  # nbval shows the stored text


def test_a_missing_or_extra_output_fails(stored):
    run = copy.deepcopy(stored)
    number, out = _first(run, lambda o: o["output_type"] == "stream")
    _code(run)[number]["outputs"].remove(out)
    assert [f.split(":")[0] for f in differences(stored, run, sanitizers())] == [
        f"Cell {number}"
    ]
    run = copy.deepcopy(stored)
    _code(run)[number]["outputs"].append(
        {"output_type": "stream", "name": "stderr", "text": "a warning\n"}
    )
    assert len(differences(stored, run, sanitizers())) == 1


def test_what_nbval_ignores_is_ignored(stored):
    run = copy.deepcopy(stored)
    # a picture's bytes and a figure's size (sanitized: <Figure>)
    number, out = _first(run, lambda o: "image/png" in o.get("data", {}))
    out["data"]["image/png"] = "iVBORw0KGgo="
    for cell in _code(run):
        for o in cell["outputs"]:
            plain = o.get("data", {}).get("text/plain")
            if plain and "<Figure size" in "".join(plain):
                o["data"]["text/plain"] = "<Figure size 100x50 with 9 Axes>"
    # a live widget's cell (nbval-ignore-output): anything
    tagged = [
        c for c in _code(run) if "nbval-ignore-output" in c["metadata"].get("tags", [])
    ]
    assert tagged, f"{LESSON.name} has a live widget cell"
    tagged[0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    # a stream split in two outputs, as a kernel may send it
    number, out = _first(
        run, lambda o: o["output_type"] == "stream" and len(_text(o)) > 4
    )
    text = _text(out)
    cell = _code(run)[number]
    at = cell["outputs"].index(out)
    cell["outputs"][at : at + 1] = [
        dict(out, text=text[:3]),
        dict(out, text=text[3:]),
    ]
    assert differences(stored, run, sanitizers()) == []


def test_other_code_is_not_compared_cell_by_cell(stored):
    run = copy.deepcopy(stored)
    _code(run)[0]["source"] = "print('another lesson')"
    assert differences(stored, run, sanitizers()) == [
        "the run's code cells are not the stored notebook's"
    ]


def test_jupyterlab_shaped_outputs_are_read_as_nbval_reads_them(stored):
    """JupyterLab's JSON holds a stream as one string, and a kernel may print between two
    displays: the stream's pieces are merged on both sides."""
    run = copy.deepcopy(stored)
    number, out = _first(
        run, lambda o: o["output_type"] == "stream" and len(_text(o)) > 4
    )
    text = _text(out)
    cell = _code(run)[number]
    at = cell["outputs"].index(out)
    shown = {"output_type": "display_data", "metadata": {}, "data": {"text/plain": "x"}}
    cell["outputs"][at : at + 1] = [
        dict(out, text=text[:3]),
        shown,
        dict(out, text=text[3:]),
    ]
    found = differences(stored, run, sanitizers())
    # the display is new (nbval: unexpected output fields), the stream still matches
    assert len(found) == 1 and "text/plain" in found[0]
    cell["outputs"].remove(shown)
    assert differences(stored, run, sanitizers()) == []


def test_markers_and_unrun_cells_count_as_under_nbval(stored):
    ref, run = copy.deepcopy(stored), copy.deepcopy(stored)
    number, out = _first(run, lambda o: o["output_type"] == "stream")
    # a comment marker: not compared
    for nb in (ref, run):
        cell = _code(nb)[number]
        cell["source"] = "# NBVAL_IGNORE_OUTPUT\n" + "".join(cell["source"])
    _code(run)[number]["outputs"] = []
    assert differences(ref, run, sanitizers()) == []
    # a stored cell never run stores nothing and is not compared (run, it prints)
    ref = copy.deepcopy(stored)
    _code(ref)[number]["outputs"] = []
    assert len(differences(ref, stored, sanitizers())) == 1  # run: compared
    _code(ref)[number]["execution_count"] = None
    assert differences(ref, stored, sanitizers()) == []
    # a stored cell never run that stores outputs is an error, as in nbval
    ref = copy.deepcopy(stored)
    _code(ref)[number]["execution_count"] = None
    assert differences(ref, stored, sanitizers()) == [
        f"Cell {number}: unrun reference cell has outputs"
    ]


def test_the_keys_left_out_are_nbvals():
    """SKIP_COMPARE is read off nbval's IPyNbFile.__init__ (without nbdime, pictures too)."""
    import ast
    import inspect
    import textwrap

    from nbval.plugin import IPyNbFile
    from stored_outputs import SKIP_COMPARE

    tree = ast.parse(textwrap.dedent(inspect.getsource(IPyNbFile.__init__)))
    tuples = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and ast.unparse(node.targets[0]) == "self.skip_compare"
        and isinstance(node.value, ast.Tuple)
    ]
    added = [
        ast.literal_eval(node.value.right)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and ast.unparse(node.targets[0]) == "self.skip_compare"
        and isinstance(node.value, ast.BinOp)
    ]
    assert len(tuples) == 1 and len(added) == 1
    assert set(SKIP_COMPARE) == set(tuples[0]) | set(added[0])


NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted(
    (REPO / "notebooks" / "zh").glob("*.ipynb")
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_lesson_relies_on_what_jupyterlab_does_otherwise(path):
    """make test runs the lessons in JupyterLab (stored_outputs.py): its run-all runs every
    cell and honours only the raises-exception tag, and it applies a stream's carriage
    returns and backspaces as a terminal does, where nbval drops the text before them."""
    from nbval.plugin import find_comment_markers, find_metadata_tags

    nb = json.loads(path.read_text(encoding="utf-8"))
    found = []
    for number, cell in enumerate(_code(nb)):
        source = "".join(cell["source"])
        if dict(find_metadata_tags(cell["metadata"])).get("skip"):
            found.append(f"Cell {number}: the nbval-skip tag")
        comments = dict(find_comment_markers(source))
        for option in ("skip", "check_exception"):
            if option in comments:
                found.append(f"Cell {number}: an NBVAL comment marker ({option})")
        for out in cell["outputs"]:
            if out["output_type"] == "stream" and any(c in _text(out) for c in "\r\b"):
                found.append(
                    f"Cell {number}: a carriage return or backspace in its output"
                )
    assert not found, f"{path.name}: " + "; ".join(found)
