"""Every lesson reads as a live slideshow on the classroom projector.

jupyterlab-slideshow presents a notebook inside JupyterLab itself (so widgets stay live), from
each cell's `metadata.slideshow.slide_type`: "slide" starts a new slide, "subslide" a new
slide below it, "fragment" appears on the next key press, "skip" and "notes" are left out,
and a cell with no slide_type continues the current slide. (nbconvert also reads "-" as
"continue", but jupyterlab-slideshow 0.3.4 hides such cells, so the lessons never store it.)

The projector (GUIDE.md): 1280x720 at 150% zoom, so 853x480 CSS px, of which a slide's content
gets about 480 px of height. The slideshow sets code and its output in 14 px type on lines of about
17 px (JupyterLab's 1.3 line height), so a slide holds about 480 / 17 = 28 lines: MAX_LINES.
A slide is measured in those lines of text, what the slideshow shows of its cells:
- a code cell: its source lines and its printed/plain-text output lines (a display of
  LaTeX counts 1.5 lines a row); a live widget's output is not text and a figure is not text either
  (static figures are at most 6.4 in wide, live ones at most 3.3 in high, and a slide with a
  figure scrolls as the presenter steps through it);
- a markdown cell: its source lines, a line longer than 100 columns (the lessons' prose
  width; a Chinese character takes two) counting once per 100 columns begun, a heading twice (it is set larger), and a
  collapsed solution (`<details>`) as one line, since that is all a slide shows until clicked.
"""

import json
import math
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# the English lessons and their Chinese twins (notebooks/zh/)
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) + sorted(
    (ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb")
)
MAX_LINES = 28
PROSE_WIDTH = 100
SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes"}
STARTS = {"slide", "subslide"}
EXERCISE = re.compile(r"^(#+ |\*\*)(Exercise |练习 ?)\d", re.MULTILINE)
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def width(line: str) -> int:
    """Columns a line takes: a Chinese character is as wide as two Latin letters."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def name(path: Path) -> str:
    return str(path.relative_to(ROOT / "notebooks"))


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def slide_type(cell: dict) -> str:
    """The cell's slide type; "-" (continue the slide) when it stores none."""
    return cell["metadata"].get("slideshow", {}).get("slide_type", "-")


def is_widget_cell(cell: dict) -> bool:
    """A cell that shows a live widget (tagged nbval-ignore-output, since its output varies)."""
    if "nbval-ignore-output" not in cell["metadata"].get("tags", []):
        return False
    shows_widget = any(
        WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])
    )
    return shows_widget or ".widget()" in source(cell)


def text_lines(cell: dict) -> int:
    """How many 17-px lines of text the cell shows on a slide (see the module docstring)."""
    text = source(cell)
    if cell["cell_type"] == "markdown":
        text = re.sub(
            r"<details>.*?</details>", "<details>", text, flags=re.DOTALL
        )  # collapsed
        lines = 0
        for line in text.splitlines():
            wrapped = max(1, math.ceil(width(line) / PROSE_WIDTH))
            lines += 2 * wrapped if line.startswith("#") else wrapped
        return lines
    lines = len(text.splitlines())
    # printed text as one stream (the kernel may send one line in two messages)
    printed = "".join(
        "".join(o["text"])
        for o in cell.get("outputs", [])
        if o["output_type"] == "stream"
    )
    lines += len(printed.splitlines())
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output["output_type"] == "stream":
            continue
        elif WIDGET_MIME in data or "image/png" in data:
            continue
        elif "text/latex" in data:
            rows = 1 + "".join(data["text/latex"]).count(r"\\")
            lines += math.ceil(1.5 * rows)  # a MathJax row is about 25 px high
        elif "text/plain" in data:
            lines += len("".join(data["text/plain"]).splitlines())
    return lines


def slides(path: Path) -> list[list[int]]:
    """The cells (by index) on each slide or subslide, skipped and notes cells left out."""
    groups: list[list[int]] = []
    for i, cell in enumerate(cells(path)):
        kind = slide_type(cell)
        if kind in ("skip", "notes"):
            continue
        if kind in STARTS or not groups:
            groups.append([])
        groups[-1].append(i)
    return groups


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_every_slide_type_is_one_the_slideshow_shows(path):
    stored = {
        i: c["metadata"]["slideshow"]["slide_type"]
        for i, c in enumerate(cells(path))
        if "slide_type" in c["metadata"].get("slideshow", {})
    }
    wrong = {i: kind for i, kind in stored.items() if kind not in SLIDE_TYPES}
    assert wrong == {}, (
        f"{path.name}: slide types the slideshow would hide or not know: {wrong}"
    )


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_slideshow_opens_on_the_title(path):
    first = cells(path)[0]
    assert slide_type(first) == "slide", (
        f"{path.name}: the title cell must start a slide"
    )


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_each_widget_has_a_slide_of_its_own(path):
    nb = cells(path)
    widgets = [i for i, c in enumerate(nb) if is_widget_cell(c)]
    wrong = [i for i in widgets if slide_type(nb[i]) not in STARTS]
    assert wrong == [], f"{path.name}: widget cells not starting a (sub)slide: {wrong}"
    for group in slides(path):
        on_slide = [i for i in group if i in widgets]
        assert len(on_slide) <= 1, f"{path.name}: two widgets on one slide: {on_slide}"


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_exercises_come_one_at_a_time(path):
    nb = cells(path)
    headings = [i for i, c in enumerate(nb) if EXERCISE.search(source(c))]
    wrong = [i for i in headings if slide_type(nb[i]) not in STARTS | {"fragment"}]
    assert wrong == [], f"{path.name}: exercise cells not a fragment or slide: {wrong}"


@pytest.mark.parametrize("path", LESSONS, ids=name)
def test_every_slide_fits_the_projector(path):
    nb = cells(path)
    too_long = {}
    for group in slides(path):
        lines = sum(text_lines(nb[i]) for i in group)
        if lines > MAX_LINES:
            too_long[f"cells {group[0]}-{group[-1]}"] = lines
    assert too_long == {}, (
        f"{path.name}: slides over {MAX_LINES} lines of text: {too_long}"
    )


def test_the_measure_can_fail():
    # the size check above must be able to fail, and it counts what a slide shows
    prose = {
        "cell_type": "markdown",
        "metadata": {},
        "source": ["word " * 60 + "\n"] * 15,
    }
    assert text_lines(prose) == 45 > MAX_LINES
    chinese = {"cell_type": "markdown", "metadata": {}, "source": ["位置" * 30 + "\n"]}
    assert text_lines(chinese) == 2  # 60 characters, 120 columns
    solution = {
        "cell_type": "markdown",
        "metadata": {},
        "source": ["<details><summary>Solution</summary>\n", "x\n" * 40, "</details>"],
    }
    assert text_lines(solution) == 1
    code = {
        "cell_type": "code",
        "metadata": {},
        "source": ["print(1)\n", "print(2)"],
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["1\n", "2\n"]}
        ],
    }
    assert text_lines(code) == 4
