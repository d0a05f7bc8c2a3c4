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
