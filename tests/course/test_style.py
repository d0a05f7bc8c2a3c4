"""The lessons' code and printed text fit the projector's output area without scrolling.

The projector (GUIDE.md) leaves about 640-670 CSS px for a cell; JupyterLab's code font fits
about 88 characters in that width. Code is formatted and linted with ruff (pyproject.toml,
[tool.ruff]: line length 88), and every line a lesson prints is at most 88 characters too.
"""

import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
# the English lessons and their Chinese twins
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) + sorted(
    (NOTEBOOKS / "zh").glob("[0-9][0-9]_*.ipynb")
)
WIDTH = 88
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def ruff() -> list[str]:
    here = Path(sys.executable).parent / "ruff"
    if here.exists():
        return [str(here)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install ruff (it is in the test extra)")
    return [found]


def run_ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*ruff(), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_notebooks_pass_ruff_check():
    result = run_ruff("check", "--no-cache", "--output-format", "concise", "notebooks")
    assert result.returncode == 0, (
        "ruff check notebooks:\n" + result.stdout + result.stderr
    )


def test_library_tests_and_scripts_pass_ruff():
    # the same rules as the lessons, but long strings, comments and docstrings (E501) are
    # ignored here for now (pyproject.toml, per-file-ignores): ruff cannot wrap those
    paths = ("rope_lib", "tests", "scripts", "benchmarks", "hub")
    check = run_ruff("check", "--no-cache", "--output-format", "concise", *paths)
    assert check.returncode == 0, "ruff check:\n" + check.stdout + check.stderr
    form = run_ruff("format", "--check", "--no-cache", *paths)
    assert form.returncode == 0, (
        "ruff format --check (run `ruff format`):\n" + form.stdout
    )


def test_notebooks_are_ruff_formatted():
    result = run_ruff("format", "--check", "--diff", "--no-cache", "notebooks")
    assert result.returncode == 0, (
        "ruff format --check notebooks (run `ruff format notebooks`):\n"
        + result.stdout[-6000:]
        + result.stderr
    )


def width(line: str) -> int:
    """Columns a line takes in a monospace font: a Chinese character takes two (as in
    ruff's line length)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def name(path: Path) -> str:
    return str(path.relative_to(NOTEBOOKS))


def printed_lines(cell: dict) -> list[str]:
    """The text lines a code cell shows: printed text and plain-text results (not figures,
    widgets or LaTeX, which the browser lays out itself)."""
    lines = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output["output_type"] == "stream":
            lines += "".join(output["text"]).splitlines()
        elif output["output_type"] == "error":
            continue  # nbval fails the notebook anyway
        elif any(
            k in data for k in (WIDGET_MIME, "image/png", "text/latex", "text/html")
        ):
            continue
        else:
            lines += "".join(data.get("text/plain", "")).splitlines()
    return lines


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_printed_lines_fit_the_output_area(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    wide = {
        i: [
            f"{width(line)}: {line[:60]}..."
            for line in printed_lines(c)
            if width(line) > WIDTH
        ]
        for i, c in enumerate(cells)
    }
    wide = {i: lines for i, lines in wide.items() if lines}
    assert wide == {}, (
        f"{name(path)}: output lines over {WIDTH} columns, by cell: {wide}"
    )


def test_code_lines_fit_too():
    # ruff format does not split long strings or comments; ruff check (E501) catches them,
    # and this check says so even if the lint selection changes
    long = {}
    for path in LESSONS:
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                for line in "".join(cell["source"]).splitlines():
                    if width(line) > WIDTH:
                        long.setdefault(f"{name(path)} cell {i}", []).append(
                            width(line)
                        )
    assert long == {}
