"""Lesson 3's exercises as an nbgrader assignment, through a whole class (both languages).

scripts/make_assignment.py generates the assignment in a course directory under a temp
dir; then, with nbgrader's own Python API (what its JupyterLab panels call), the teacher
releases it to an exchange in the temp dir, the students fetch it and submit, the
teacher collects, autogrades and generates the feedback. The students are simulated: one
Unix user (this one), a home folder and an nbgrader cache each, and nbgrader's explicit
student id (CourseDirectory.student_id, `nbgrader submit --student`), so that no root-only
step is needed.

- ada answers every exercise right (the lesson's folded solutions): full points;
- bo makes the first known mistake of each exercise: no points, and the feedback shows,
  for each exercise, the checker's message for that mistake;
- cy makes the second known mistake of exercises 1, 3 and 5 and answers 2 and 4 right.

The Chinese edition (lesson03-zh) is graded the same way, with Chinese messages, for dan
(as ada) and eli (as bo): each student is a kernel run of the notebook. Every
other known mistake of every exercise is run through the autograder's test cell here, in
this process (no kernel): it fails with its checker's message.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeSubmit
from traitlets.config import Config, PyFileConfigLoader

from rope_lib.exercises import either
from rope_lib.exercises.exercise import _call
from rope_lib.language import language

# nbgrader 0.9.6's gradebook under SQLAlchemy 2 warns about its own sessions
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "make_assignment", ROOT / "scripts" / "make_assignment.py"
)
make_assignment = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_assignment)

LESSON = "03"
NOTEBOOK = "03_rotation_2d"
EXERCISES = 5
CHECK = re.compile(r"^feedback = (ex\.(check_\w+)\((\w+)\))$", re.M)
#: Known mistakes declared as tests of the value (no value to try): the teacher notes'.
BY_HAND = {"check_shifted_positions": [(10, 14), (35, 15)]}


def known_mistakes(checker) -> list:
    """The checker's declared mistakes that are values (teacher notes' way), else BY_HAND."""
    declared = checker.exercise
    given = (declared.given(),) if declared.given is not None else ()
    values = []
    for mistake in _call(declared.mistakes, given):
        if isinstance(mistake.match, either):
            values += list(mistake.match)
        elif not callable(mistake.match):
            values.append(mistake.match)
    return values or BY_HAND[checker.__name__]


def literal(value) -> str:
    """The Python a student would type for a value."""
    if isinstance(value, torch.Tensor):
        return f"torch.tensor({value.tolist()!r}, dtype=torch.{str(value.dtype)[6:]})"
    return repr(value)


def graded_cells(notebook) -> dict:
    """nbgrader's cells of a notebook by grade_id ("setup", "exercise-1", ...)."""
    return {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in notebook.cells
        if "nbgrader" in c.metadata
    }


def exercises(notebook) -> list[tuple[str, str]]:
    """(checker name, answer variable) of each exercise, from its test cell."""
    cells = graded_cells(notebook)
    found = []
    for k in range(1, EXERCISES + 1):
        call = CHECK.search(cells[f"exercise-{k}-check"].source)
        found.append((call.group(2), call.group(3)))
    return found


def answer_with(cell_source: str, answer: str, line: str) -> str:
    """The released cell with the `answer = None` placeholder line replaced by line."""
    lines = cell_source.split("\n")
    at = max(i for i, s in enumerate(lines) if re.match(rf"{answer}\s*=\s*None", s))
    return "\n".join(lines[:at] + [line] + lines[at + 1 :])


def solved(source_cell: str) -> str:
    """A source cell as a student who writes the lesson's solution: no delimiters."""
    return "\n".join(
        s
        for s in source_cell.split("\n")
        if "### BEGIN SOLUTION" not in s and "### END SOLUTION" not in s
    )


def plan(lang: str) -> dict:
    """Each student's answers: None for the right one, else which known mistake."""
    names = ("ada", "bo", "cy") if lang == "en" else ("dan", "eli")
    picks = (
        [None] * EXERCISES,
        [0] * EXERCISES,
        [1 if k % 2 else None for k in range(1, EXERCISES + 1)],
    )
    return dict(zip(names, picks))


def nbgrader_config(course: Path, **more) -> Config:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    for key, value in more.items():
        section, name = key.split("__")
        setattr(getattr(config, section), name, value)
    return config


def succeeded(result: dict) -> dict:
    assert result["success"], result.get("error") or result.get("log")
    return result


@pytest.fixture(scope="module", params=["en", "zh"])
def graded(request, tmp_path_factory):
    """One class through the whole cycle; returns what the tests read."""
    lang = request.param
    tmp = tmp_path_factory.mktemp(f"class-{lang}")
    course, exchange = tmp / "course", tmp / "exchange"
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` from PATH
    patch = pytest.MonkeyPatch()
    patch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    request.addfinalizer(patch.undo)

    args = [LESSON, "--course-dir", str(course), "--exchange", str(exchange)]
    assert make_assignment.main([*args, "--lang", lang, "--no-validate"]) == 0
    name = f"lesson{LESSON}" + ("-zh" if lang == "zh" else "")
    source = nbformat.read(course / "source" / name / f"{NOTEBOOK}.ipynb", 4)
    release = nbformat.read(course / "release" / name / f"{NOTEBOOK}.ipynb", 4)
    assert exchange.stat().st_mode & 0o7777 == 0o1777

    # every simulated student's submission belongs to this process's uid: the class
    # hub's check that a submission is its student's own (hub/grading.py) is off here
    teacher = NbGraderAPI(
        config=nbgrader_config(course, ExchangeCollect__check_owner=False)
    )
    succeeded(teacher.release_assignment(name))

    module = importlib.import_module("rope_lib.exercises.rotation")
    solutions = graded_cells(source)
    everyone = Authenticator()  # nbgrader's default: every student is in the course
    students = {}
    for student, picks in plan(lang).items():
        home = tmp / "home" / student
        home.mkdir(parents=True)
        config = nbgrader_config(
            course,
            CourseDirectory__student_id=student,
            CourseDirectory__assignment_id=name,
            Exchange__assignment_dir=str(home),
            Exchange__cache=str(home / ".nbgrader_cache"),
        )
        coursedir = CourseDirectory(config=config)
        ExchangeFetchAssignment(
            coursedir=coursedir, authenticator=everyone, config=config
        ).start()
        path = home / name / f"{NOTEBOOK}.ipynb"
        notebook = nbformat.read(path, 4)
        cells = graded_cells(notebook)
        wrong = {}
        for k, ((checker, answer), pick) in enumerate(
            zip(exercises(release), picks), 1
        ):
            cell = cells[f"exercise-{k}"]
            if pick is None:
                cell.source = solved(solutions[f"exercise-{k}"].source)
                continue
            value = known_mistakes(getattr(module, checker))[pick]
            with language(lang):
                wrong[k] = getattr(module, checker)(value).message
            cell.source = answer_with(
                cell.source, answer, f"{answer} = {literal(value)}"
            )
        nbformat.write(notebook, path)
        ExchangeSubmit(
            coursedir=coursedir, authenticator=everyone, config=config
        ).start()
        students[student] = wrong

    succeeded(teacher.collect(name))
    for student in students:
        succeeded(teacher.autograde(name, student))
        succeeded(teacher.generate_feedback(name, student))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {
            student: (
                gradebook.find_submission(name, student).score,
                gradebook.find_submission(name, student).max_score,
                [
                    gradebook.find_grade(
                        f"exercise-{k}-check", NOTEBOOK, name, student
                    ).score
                    for k in range(1, EXERCISES + 1)
                ],
            )
            for student in students
        }
    feedback = {
        student: html.unescape(
            re.sub(
                r"<[^>]+>",
                "",
                (course / "feedback" / student / name / f"{NOTEBOOK}.html").read_text(),
            )
        )
        for student in students
    }
    return {
        "lang": lang,
        "source": source,
        "release": release,
        "students": students,
        "scores": scores,
        "feedback": feedback,
    }


def test_release_is_the_lessons_cells_without_the_solutions(graded):
    lesson_path = make_assignment.lesson_notebook(LESSON, graded["lang"])
    lesson = "\n".join(c.source for c in nbformat.read(lesson_path, 4).cells)
    release = graded["release"]
    text = "\n".join(c.source for c in release.cells)
    assert "BEGIN SOLUTION" not in text and "<details>" not in text
    cells = graded_cells(release)
    assert sorted(cells) == sorted(
        ["setup"] + [f"exercise-{k}{t}" for k in range(1, 6) for t in ("", "-check")]
    )
    assert cells["setup"].metadata["nbgrader"]["locked"]
    for k, (checker, answer) in enumerate(exercises(release), 1):
        # the student gets the lesson's own exercise cell (the stub is empty)
        released = cells[f"exercise-{k}"].source.replace("\n\n", "\n")
        assert released in lesson, released
        assert f"{answer} = None" in released and f"ex.{checker}({answer})" in released
        test = cells[f"exercise-{k}-check"].metadata["nbgrader"]
        assert test["grade"] and test["locked"] and test["points"] == 1
        source = graded_cells(graded["source"])[f"exercise-{k}"].source
        solution = source.split("### BEGIN SOLUTION\n")[1].split("### END SOLUTION")[0]
        assert solution.strip() and solution not in released


def test_right_answers_get_every_point(graded):
    right = next(iter(graded["students"]))
    assert graded["scores"][right] == (5.0, 5.0, [1.0] * 5)


def test_each_known_mistake_gets_no_point_and_its_message(graded):
    (right, first, *second) = graded["students"]
    assert graded["scores"][first] == (0.0, 5.0, [0.0] * 5)
    if second:  # the English class only: one kernel less
        assert graded["scores"][second[0]] == (2.0, 5.0, [0.0, 1.0, 0.0, 1.0, 0.0])
    for student in (first, *second):
        wrong = graded["students"][student]
        assert sorted(wrong) == ([1, 2, 3, 4, 5] if student == first else [1, 3, 5])
        for k, message in wrong.items():
            assert f"AssertionError: {message}" in graded["feedback"][student], (
                student,
                k,
                message,
            )
    for message in graded["students"][first].values():
        assert message not in graded["feedback"][right]
    if graded["lang"] == "zh":
        assert all(
            re.search(r"[\u4e00-\u9fff]", m) for m in graded["students"][first].values()
        )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_known_mistake_fails_the_test_cell_with_its_message(lang):
    """All the declared mistakes, through each test cell's code, without a kernel."""
    path = make_assignment.lesson_notebook(LESSON, lang)
    source = make_assignment.source_notebook(path, lang)
    module = importlib.import_module("rope_lib.exercises.rotation")
    tried = 0
    for k, (checker, answer) in enumerate(exercises(source), 1):
        test = graded_cells(source)[f"exercise-{k}-check"].source
        for value in known_mistakes(getattr(module, checker)):
            with language(lang):
                message = getattr(module, checker)(value).message
                with pytest.raises(AssertionError) as failed:
                    exec(test, {"ex": module, answer: value})
            assert str(failed.value) == message
            tried += 1
    assert tried == 24  # 7 + 4 + 5 + 6 + 2 (exercises 1 to 5 of lesson 3)


def test_the_exchange_course_folder_is_never_changed_through_a_link(tmp_path):
    """A student who puts a link where the exchange's course folder goes (the exchange
    is 1777) must not get make_assignment, run as root, to chmod or chown its target."""
    exchange, victim = tmp_path / "exchange", tmp_path / "victim"
    exchange.mkdir()
    victim.mkdir(mode=0o700)
    (exchange / "rope-notebooks").symlink_to(victim)
    with pytest.raises(SystemExit, match="is not a folder"):
        make_assignment.prepare_exchange(exchange, "rope-notebooks", None)
    assert victim.stat().st_mode & 0o777 == 0o700


#: Every lesson but the real-LLM one (make_assignment's docstring says why) is an assignment.
ASSIGNABLE = sorted(
    p.name[:2]
    for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
    if not p.name.endswith("_real_llm.ipynb")
)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("lesson", ASSIGNABLE)
def test_every_exercise_gets_the_lessons_own_answer(lesson, lang):
    """Each graded cell gets the line(s) of the folded solution that set the answer (not
    a block that only checks it, nor a lesson's in-section prediction)."""
    path = make_assignment.lesson_notebook(lesson, lang)
    source = make_assignment.source_notebook(path, lang)
    answers = [
        c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")
    ]
    assert answers
    for cell in answers:
        region = cell.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
        assert re.search(r"^\s*(\w+ =|return )", region, re.M), cell
