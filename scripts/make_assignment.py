"""A lesson's exercises as an nbgrader assignment: `make assignment LESSON=03 [LANG=zh]`.

    python scripts/make_assignment.py 03 [--lang zh] [--course-dir DIR] [--exchange DIR]
        [--course-id rope-notebooks] [--points 1] [--owner GRADER] [--no-validate]

Writes, in the nbgrader course directory (default /srv/nbgrader/rope-notebooks):

    source/lesson03/03_rotation_2d.ipynb    the teacher's version, with the solutions
    release/lesson03/03_rotation_2d.ipynb   the students' version (nbgrader generate_assignment)
    gradebook.db                            the assignment, its notebook and its grade cells
    nbgrader_config.py                      course id, exchange, code stub (when missing)

and the exchange (default /srv/nbgrader/exchange, 1777) with the course's folder in it.
The Chinese edition is the assignment lesson03-zh, from notebooks/zh/. Everything is
made with umask 077 and the course directory is 0700: with --owner (the grading user,
`make assignment` passes rope-grader when run as root) both belong to that user, so
students read neither the solutions nor the gradebook nor each other's submissions.

The source notebook is made from the lesson, never by hand: the lesson's title, its first
code cell (imports and set_language, locked), then its exercises section, where

- every exercise cell (the one calling `ex.check_...(answer)`) becomes a solution cell:
  the lesson's own cell, with the right answer from the lesson's folded solution between
  ### BEGIN SOLUTION and ### END SOLUTION after the `answer = None` line (before the
  `return None` line of an answer that is a function); the release keeps the lesson's
  cell, placeholder and checker call included (the stub is empty);
- after it comes a locked autograder-tests cell worth one point, which calls the same
  checker on the answer and asserts that it is right: a known mistake fails it with the
  checker's message, which the student's feedback then shows;
- the folded solutions (<details>), and the paragraphs that point to them, are left out.

Unless --no-validate, the source notebook is then run (nbgrader validate): every test
must pass on the lesson's own solutions, or the command fails (exit status 1). Lessons 0
to 11 pass, in both languages; lesson 15 does not (two of its exercises read what earlier
cells of the lesson computed, and only the lesson's first code cell is kept).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
COURSE_ID = "rope-notebooks"
COURSE_DIR = Path("/srv/nbgrader") / COURSE_ID
EXCHANGE = Path("/srv/nbgrader/exchange")
POINTS = 1

CHECK_CALL = re.compile(r"^(?P<call>ex\.check_\w+\((?P<answer>\w+)\))\s*$", re.M)
DETAILS = re.compile(r"<details>.*?</details>\s*", re.S)
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
# a paragraph that tells where the folded solutions are (they are left out)
ABOUT_SOLUTIONS = re.compile(r"[Ss]olution|解答")

WORDS = {
    "en": {
        "title": "{title}: exercises",
        "intro": (
            "The exercises of this lesson as an assignment. In each exercise's cell, "
            "replace the `None` with your answer and run the cell: the checker under it "
            "tells you what is right or what is off, as in the lesson. When the "
            "assignment is graded, the same checker gives each exercise its "
            "{points} point{s}. Run the first code cell first, and submit from the "
            "Assignments panel."
        ),
        "test": (
            "# Autograder: the lesson's checker grades this exercise. A right answer gets\n"
            "# the points; a known mistake fails here with the checker's message."
        ),
    },
    "zh": {
        "title": "{title}：练习",
        "intro": (
            "本课的练习，作为一次作业。在每道练习的单元格里把 `None` 换成你的答案，"
            "然后运行它：下面的检查器会像课上一样告诉你哪里对、哪里还不对。"
            "评分时由同一个检查器给分，每道练习 {points} 分。先运行第一个代码单元格，"
            "做完后在 Assignments（作业）面板里提交。"
        ),
        "test": (
            "# 自动评分：由本课的检查器给这道练习评分。答对得分；\n"
            "# 常见错误在这里失败，并显示检查器的提示。"
        ),
    },
}


def lesson_notebook(lesson: str, lang: str) -> Path:
    """notebooks/[zh/]NN_*.ipynb for a lesson number ("3", "03") or name."""
    folder = NOTEBOOKS / "zh" if lang == "zh" else NOTEBOOKS
    number = f"{int(lesson):02d}" if lesson.isdigit() else lesson
    found = sorted(folder.glob(f"{number}*.ipynb"))
    if len(found) != 1:
        raise SystemExit(f"no single lesson {lesson!r} in {folder}: {found}")
    return found[0]


def assignment_name(path: Path, lang: str) -> str:
    return f"lesson{path.stem[:2]}" + ("-zh" if lang == "zh" else "")


def _grading(grade_id: str, *, solution=False, grade=False, locked=False, points=None):
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _solution_code(cells, answer: str) -> list[str]:
    """The right answer's lines: the first python block that sets the answer (or inline
    `answer = ...`) of the first folded solution among cells, without its checker calls. For a function
    `def answer(...)`, its body only (the exercise cell has the def line)."""
    for cell in cells:
        folded = DETAILS.search(cell.source)
        if cell.cell_type != "markdown" or not folded:
            continue
        block = PYTHON_BLOCK.search(folded.group())
        gives = block and re.search(
            rf"^(?:{answer} =|def {answer}\()", block.group(1), re.M
        )
        if gives:  # a block that only checks (the answer given inline) is not it
            lines = block.group(1).rstrip("\n").split("\n")
        else:
            inline = re.search(rf"`({answer} = [^`]+)`", folded.group())
            if not inline:
                break
            lines = [inline.group(1)]
        lines = [line for line in lines if "ex.check_" not in line]
        header = [
            i for i, line in enumerate(lines) if line.startswith(f"def {answer}(")
        ]
        if header:
            body = lines[header[0] + 1 :]
            end = next(
                (i for i, s in enumerate(body) if s and not s[0].isspace()), None
            )
            lines = body[:end]
        while lines and not lines[-1].strip():
            lines.pop()
        return lines
    raise SystemExit(f"no folded solution with the code for {answer!r}")


def _checker_imports(cells, setup) -> list[str]:
    """The lines that import the checkers (`... as ex`) in cells before the exercises,
    where a lesson asks for a prediction on the way: the setup cell gets them."""
    return [
        line
        for cell in cells
        if cell.cell_type == "code" and cell is not setup
        for line in cell.source.splitlines()
        if re.match(r"from rope_lib\.exercises import \w+ as ex$", line)
    ]


def _has_solution(cells, answer: str) -> bool:
    try:
        _solution_code(cells, answer)
    except SystemExit:
        return False
    return True


def _with_solution(source: str, answer: str, solution: list[str]) -> str:
    """The exercise cell with the solution region beside the answer's placeholder line:
    after `answer = None ...`, or, in `def answer(...)`, before `return None ...`."""
    lines = source.split("\n")
    placeholder = [
        i
        for i, line in enumerate(lines)
        if re.match(rf"{answer}\s*=", line) or re.match(r"\s+return None\b", line)
    ]
    if not placeholder:
        raise SystemExit(f"no placeholder line for {answer!r} in:\n{source}")
    at = placeholder[-1]
    # in a def, the solution's body is indented already
    indent = re.match(r"\s*", lines[at]).group()
    region = [indent + "### BEGIN SOLUTION", *solution, indent + "### END SOLUTION"]
    at += 0 if indent else 1
    return "\n".join(lines[:at] + region + lines[at:])


def source_notebook(path: Path, lang: str, points: int = POINTS):
    """The nbgrader source notebook of a lesson's exercises (see the module docstring)."""
    lesson = nbformat.read(path, as_version=4)
    cells = lesson.cells
    words = WORDS[lang]
    checks = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "code" and CHECK_CALL.search(c.source)
    ]
    # the exercises: checker cells with a folded solution before the next one (a lesson's
    # in-section "predict first" cells are answered by the cells after them instead)
    exercises = [
        i
        for k, i in enumerate(checks)
        if _has_solution(
            cells[i + 1 : (checks + [len(cells)])[k + 1]],
            CHECK_CALL.search(cells[i].source).group("answer"),
        )
    ]
    if not exercises:
        raise SystemExit(f"{path.name} has no exercise cell (ex.check_...(answer))")
    headings = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and c.source.startswith("## ")
    ]
    start = max(i for i in headings if i < exercises[0])
    end = min([i for i in headings if i > exercises[-1]] + [len(cells)])
    setup = next(c for c in cells if c.cell_type == "code")
    title = cells[0].source.split("\n")[0].lstrip("# ").strip()

    new = nbformat.v4.new_markdown_cell
    out = [
        new(
            "# "
            + words["title"].format(title=title)
            + "\n\n"
            + words["intro"].format(points=points, s="" if points == 1 else "s"),
        ),
        nbformat.v4.new_code_cell(
            "\n".join([setup.source, *_checker_imports(cells[: exercises[0]], setup)]),
            metadata=_grading("setup", locked=True),
        ),
    ]
    number = 0
    for i in range(start, end):
        cell = cells[i]
        if cell.cell_type == "markdown":
            text = "\n\n".join(
                paragraph
                for paragraph in DETAILS.sub("", cell.source).split("\n\n")
                if not ABOUT_SOLUTIONS.search(paragraph)
            ).strip()
            if text:
                out.append(new(text))
            continue
        call = CHECK_CALL.search(cell.source)
        if not call:
            out.append(nbformat.v4.new_code_cell(cell.source))
            continue
        number += 1
        answer = call.group("answer")
        nxt = next((j for j in exercises if j > i), end)
        solution = _solution_code(cells[i + 1 : nxt], answer)
        out.append(
            nbformat.v4.new_code_cell(
                _with_solution(cell.source, answer, solution),
                metadata=_grading(f"exercise-{number}", solution=True),
            )
        )
        out.append(
            nbformat.v4.new_code_cell(
                f"{words['test']}\nfeedback = {call.group('call')}\n"
                "assert feedback.ok, feedback.message",
                metadata=_grading(
                    f"exercise-{number}-check", grade=True, locked=True, points=points
                ),
            )
        )
    notebook = nbformat.v4.new_notebook(cells=out)
    notebook.metadata = {
        key: lesson.metadata[key]
        for key in ("kernelspec", "language_info")
        if key in lesson.metadata
    }
    return notebook


def course_config(course_id: str, exchange: Path) -> str:
    return f'''"""nbgrader's configuration for the course (written by scripts/make_assignment.py).

The teacher runs nbgrader in this folder. The students' JupyterLab needs the same exchange
and course id: the course's own (jupyter-config/nbgrader_config.py) has the defaults.
"""

import os
import sys

from jupyter_core.paths import jupyter_runtime_dir

sys.path.insert(0, {str(ROOT / "hub")!r})
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {str(exchange)!r}
# a submission whose folder belongs to another Unix user than the student it names is
# not collected (nbgrader only warns): nobody can submit for somebody else
c.ExchangeFactory.collect = "grading.StrictCollect"
# kernels over Unix sockets in the grading folder (hub/grading.py): the autograder's
# kernels have no network at all
c.KernelManager.transport = "ipc"
os.makedirs(jupyter_runtime_dir(), mode=0o700, exist_ok=True)
c.KernelManager.ip = os.path.join(jupyter_runtime_dir(), "kernel")
# The lessons' exercise cells keep their `answer = None` line and checker call: the
# solution region between them is removed, with nothing in its place.
c.ClearSolutions.code_stub = {{"python": ""}}
'''


def prepare_exchange(exchange: Path, course_id: str, owner: str | None) -> None:
    """The exchange as nbgrader wants it (0777 with the sticky bit: every student writes,
    nobody removes another's), and the course's folder in it made now, the grader's, so
    that no student can make it first (the class hub makes it at its start). A folder a
    student made, or a link she put in its place, is refused: nothing here is done
    through a link (as root, that would chown and chmod wherever it points)."""
    exchange.mkdir(parents=True, exist_ok=True)
    os.chmod(exchange, 0o1777)
    folder = exchange / course_id
    try:
        folder.mkdir()
    except FileExistsError:
        pass
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as e:
        raise SystemExit(
            f"{folder} is not a folder ({e.strerror}): remove it"
        ) from None
    try:
        made_by = os.fstat(fd).st_uid
        allowed = {0, os.getuid()} | ({pwd.getpwnam(owner).pw_uid} if owner else set())
        if made_by not in allowed:
            raise SystemExit(
                f"{folder} belongs to uid {made_by}, not to the grader: a student made it "
                "before the course did. Remove it and run this again."
            )
        if owner:
            os.fchown(fd, pwd.getpwnam(owner).pw_uid, pwd.getpwnam(owner).pw_gid)
        os.fchmod(fd, 0o755)
    finally:
        os.close(fd)


def generate(course: Path, name: str) -> bool:
    """nbgrader generate_assignment, in this process (as its formgrader does): the
    release version, and the assignment with its grade cells in the gradebook."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import PyFileConfigLoader

    # the gradebook runs `alembic` from PATH: this Python's
    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    print(f"$ nbgrader generate_assignment {name} --force", flush=True)
    result = NbGraderAPI(config=config).generate_assignment(name, force=True)
    if not result["success"]:
        print(result.get("log", ""), result.get("error", ""), file=sys.stderr)
    return result["success"]


def solutions_pass(source: Path) -> bool:
    """Run the source notebook (nbgrader validate): every test cell must pass on the
    lesson's solutions. Says which fail, and why, when some do."""
    from nbgrader.validator import Validator

    print(f"$ nbgrader validate {source}", flush=True)
    results = Validator().validate(str(source))
    for failed in results.get("failed", []):
        print(f"FAILED:\n{failed['source']}\n{failed['raw_error']}", file=sys.stderr)
    if results:
        print(f"The lesson's solutions do not pass in {source}", file=sys.stderr)
    else:
        print("Every test passes on the lesson's solutions.")
    return not results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("lesson", help="the lesson's number (3 or 03) or file name")
    parser.add_argument("--lang", choices=sorted(WORDS), default="en")
    parser.add_argument("--course-dir", type=Path, default=COURSE_DIR)
    parser.add_argument("--exchange", type=Path, default=EXCHANGE)
    parser.add_argument("--course-id", default=COURSE_ID)
    parser.add_argument("--points", type=int, default=POINTS)
    parser.add_argument("--no-validate", action="store_true")
    parser.add_argument(
        "--owner",
        help="the grading user (made if missing): the course folder becomes theirs",
    )
    args = parser.parse_args(argv)

    os.umask(0o077)  # what is made here is the grader's alone
    if args.owner:
        sys.path.insert(0, str(ROOT / "hub"))
        from grading import ensure_grader

        ensure_grader(args.owner)
    path = lesson_notebook(args.lesson, args.lang)
    name = assignment_name(path, args.lang)
    course = args.course_dir.resolve()
    source = course / "source" / name / path.name
    source.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(source_notebook(path, args.lang, args.points), source)
    print(f"source: {source}")

    config = course / "nbgrader_config.py"
    if not config.exists():
        config.write_text(course_config(args.course_id, args.exchange.resolve()))
        print(f"config: {config}")
    else:
        print(f"config: {config} (kept as it is)")
    prepare_exchange(args.exchange, args.course_id, args.owner)

    if not generate(course, name):
        return 1
    if not args.no_validate and not solutions_pass(source):
        return 1
    if args.owner:  # the grader runs nbgrader there: theirs, gradebook included
        owner = pwd.getpwnam(args.owner)
        for folder, dirs, files in os.walk(course):  # never through a link, as root
            dirs[:] = [d for d in dirs if d != ".grading"]  # hub/grading.py's, root's
            for item in [folder, *(os.path.join(folder, n) for n in [*dirs, *files])]:
                os.chown(item, owner.pw_uid, owner.pw_gid, follow_symlinks=False)
    os.chmod(course, 0o700)  # solutions, gradebook, submissions: the grader's only
    print(
        json.dumps({"assignment": name, "release": str(course / "release" / name)}),
        f"\nNext: make nbgrader CMD='release_assignment {name}' COURSE_DIR={course}"
        if args.owner
        else f"\nNext, in {course}: nbgrader release_assignment {name}",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
