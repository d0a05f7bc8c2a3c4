"""The course as its readers meet it: every lesson is one sitting, speaks in the README's
notation, never points at the notes the course was planned from, and README maps every lesson.

(The study notes the course grew from are a maintainer's matter: a learner never saw them, so a
lesson states a claim itself. tests/course/test_seeds.py keeps their worked numbers.)
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MAX_CELLS, MAX_WORDS = 60, 3000

# What would point a learner at the planning notes ("seed 003", "seed note", "the seeds' claims",
# a class named Seed001...). A random seed (torch.manual_seed, "--seed 7") is fine.
POINTERS = [
    r"\bseed[ -]?notes?\b",
    r"\bseeds? ?\d{3}\b",
    r"\bseed0\d\d",
    r"\bthe seeds'",
    r"\bthe seeds\b(?! (?:of|we|you|0|1|2|3|4|5|6|7|8|9))",
    r"\bsource notes\b",
]


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text_of(cell: dict) -> str:
    """What a reader sees of a cell: its source and its text outputs."""
    parts = ["".join(cell["source"])]
    for output in cell.get("outputs", []):
        parts.append("".join(output.get("text", "")))
        parts.append("".join(output.get("data", {}).get("text/plain", "")))
        parts.append("".join(output.get("data", {}).get("text/markdown", "")))
    return "\n".join(parts)


def pointers_in(text: str) -> list[str]:
    return [
        m.group(0) for p in POINTERS for m in re.finditer(p, text, flags=re.IGNORECASE)
    ]


def test_lessons_are_numbered_without_gaps():
    numbers = [int(p.name[:2]) for p in LESSONS]
    assert numbers == list(range(len(LESSONS))), numbers


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_every_lesson_has_its_tests_named_by_its_number(path):
    # tests/lessons/test_NN_<topic>.py: the lesson's claims, checkers and widget
    tests = ROOT / "tests" / "lessons" / f"test_{path.stem}.py"
    assert tests.exists(), f"{tests.relative_to(ROOT)} is missing (make new-lesson)"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_is_one_sitting(path):
    nb = cells(path)
    words = sum(
        len("".join(c["source"]).split()) for c in nb if c["cell_type"] == "markdown"
    )
    assert len(nb) <= MAX_CELLS, f"{path.name}: {len(nb)} cells (at most {MAX_CELLS})"
    assert words <= MAX_WORDS, (
        f"{path.name}: {words} words of prose (at most {MAX_WORDS})"
    )


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_title_carries_its_number(path):
    first = "".join(cells(path)[0]["source"]).splitlines()[0]
    assert first.startswith(f"# Lesson {int(path.name[:2])} · "), first


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_never_points_at_the_planning_notes(path):
    found = {i: pointers_in(text_of(c)) for i, c in enumerate(cells(path))}
    assert {i: f for i, f in found.items() if f} == {}


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_uses_the_course_notation(path):
    # the frequency of pair i is theta_i everywhere (README, Notation); omega was lesson 1's name
    math = "\n".join(
        "".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown"
    )
    assert "\\omega" not in math


def test_library_and_readme_never_point_at_the_planning_notes():
    sources = {
        p: p.read_text(encoding="utf-8") for p in (ROOT / "rope_lib").rglob("*.py")
    }
    for readme in ("README.md", "README.zh-CN.md"):
        sources[ROOT / readme] = (ROOT / readme).read_text(encoding="utf-8")
    found = {str(p.relative_to(ROOT)): pointers_in(t) for p, t in sources.items()}
    assert {p: f for p, f in found.items() if f} == {}


def test_readme_maps_every_lesson_with_a_picture():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in LESSONS:
        assert f"(notebooks/{path.name})" in readme, (
            f"README's lesson map misses {path.name}"
        )
        picture = ROOT / "images" / f"lesson{path.name[:2]}.png"
        assert picture.exists(), f"{picture.relative_to(ROOT)} is missing (make images)"
        assert f"images/lesson{path.name[:2]}.png" in readme


def test_chinese_readme_is_linked_from_the_top_and_maps_every_chinese_lesson():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    top = "\n".join(readme.splitlines()[:5])
    assert "(README.zh-CN.md)" in top, "README.md links README.zh-CN.md near its top"
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "(README.md)" in "\n".join(chinese.splitlines()[:5])
    for path in LESSONS:
        assert f"(notebooks/zh/{path.name})" in chinese, (
            f"README.zh-CN.md's lesson map misses notebooks/zh/{path.name}"
        )
        picture = ROOT / "images" / "zh" / f"lesson{path.name[:2]}.png"
        assert picture.exists(), f"{picture.relative_to(ROOT)} is missing (make images)"
        assert f"(images/zh/lesson{path.name[:2]}.png)" in chinese
    for command in ("make lab", "make test", "make lab-zh", "set_language"):
        assert command in chinese, f"README.zh-CN.md does not say {command!r}"
    assert "make lab-zh" in readme and "jupyterlab-language-pack-zh-cn" in readme


def test_pointer_patterns_catch_what_they_are_for():
    # the check above must be able to fail
    for text in [
        "as seed 003 says",
        "Seed note 004",
        "the seeds' claims",
        "Seed001RoPE",
        "see the seed notes",
        "the source notes say",
    ]:
        assert pointers_in(text), text
    for text in [
        "torch.manual_seed(0)",
        "--seed 7",
        "the spread over seeds 0, 1 and 2",
        "seeds=3",
    ]:
        assert not pointers_in(text), text
