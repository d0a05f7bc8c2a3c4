"""Create the skeleton of a new lesson: `make new-lesson NAME=<topic> [TITLE="..."]`.

    python scripts/new_lesson.py <topic> [--title "..."] [--title-zh "..."]
        [--summary "..."] [--summary-zh "..."] [--no-execute]

The lesson gets the next number NN and every file a lesson has, each a real (if trivial)
part that passes the whole suite as generated (CONTRIBUTING.md walks through them):

    notebooks/NN_<topic>.ipynb, notebooks/zh/NN_<topic>.ipynb   title, set-up, one
        section, the widget and its still figure, one exercise, summary; slide metadata
    notebooks/teacher_notes/NN_<topic>.md and notebooks/zh/teacher_notes/NN_<topic>.md
    rope_lib/exercises/<topic>.py   one exercise declared with @exercise
    rope_lib/widgets/<topic>.py     one LiveWidget (it registers itself by subclassing)
    rope_lib/figures/<topic>.py     thumbnail(), the README's picture of the lesson
    tests/lessons/test_NN_<topic>.py
    README.md and README.zh-CN.md   a row in the lesson table each
    images/lessonNN.png, images/zh/lessonNN.png   (scripts/make_images.py --lesson NN)
    rope_lib/locale/zh/LC_MESSAGES/rope_lib.po    the skeleton's messages, in Chinese

Then it executes both notebooks (scripts/execute_notebooks.py), so that their stored
outputs are there for nbval. What is left to write by hand is the lesson itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from lesson_templates import (  # noqa: E402
    EXERCISES,
    FIGURES,
    MESSAGES_ZH,
    NOTES,
    NOTES_ZH,
    TEST,
    WIDGET,
    cells,
)

NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": "3.11.7",
    },
}


def next_number() -> int:
    """One more than the last lesson's number (lessons are numbered without gaps)."""
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    return int(lessons[-1].name[:2]) + 1 if lessons else 0


def class_name(topic: str) -> str:
    """rope_vs_alibi_decay -> RopeVsAlibiDecayWidget."""
    return "".join(part.capitalize() for part in topic.split("_")) + "Widget"


def notebook(stem: str, language: str, fields: dict) -> str:
    """The notebook's JSON (nbformat 4.5, unexecuted), cells from lesson_templates."""
    out = []
    for i, (kind, slide, tags, source) in enumerate(cells(language, fields)):
        metadata = {"slideshow": {"slide_type": slide}} if slide else {}
        if tags:
            metadata["tags"] = list(tags)
        key = hashlib.sha1(f"{stem}/{i}".encode()).hexdigest()[:8]
        cell = {"cell_type": kind, "id": key, "metadata": metadata}
        if kind == "code":
            cell |= {"execution_count": None, "outputs": []}
        lines = source.strip("\n").splitlines(keepends=True)
        out.append(cell | {"source": lines})
    nb = {"cells": out, "metadata": NOTEBOOK_METADATA, "nbformat": 4}
    return json.dumps(nb | {"nbformat_minor": 5}, indent=1, ensure_ascii=False) + "\n"


def readme_rows(fields: dict) -> None:
    """A row in each README's lesson table, after the last lesson's row."""
    rows = {
        "README.md": "| ![](images/lesson{nn}.png) | [{n} · {title}](notebooks/{stem}"
        ".ipynb) | {summary} | [notes](notebooks/teacher_notes/{stem}.md) |",
        "README.zh-CN.md": "| ![](images/zh/lesson{nn}.png) | [{n} · {title_zh}]"
        "(notebooks/zh/{stem}.ipynb) | {summary_zh} | "
        "[教师笔记](notebooks/zh/teacher_notes/{stem}.md) |",
    }
    for name, row in rows.items():
        path = ROOT / name
        lines = path.read_text(encoding="utf-8").split("\n")
        last = max(
            i for i, line in enumerate(lines) if line.startswith("| ![](images/")
        )
        lines.insert(last + 1, row.format(**fields))
        path.write_text("\n".join(lines), encoding="utf-8")


def translate_skeleton() -> None:
    """Merge the new messages into the catalog, give the skeleton's their Chinese, and
    compile it (what `make translations` does, with those filled in)."""
    import translations

    catalog = translations.merged()
    for msgid, msgstr in MESSAGES_ZH.items():
        if msgid in catalog and not catalog[msgid].string:
            catalog[msgid].string = msgstr
    translations.write(catalog)
    missing = [m.id for m in catalog if m.id and not m.string]
    print(f"catalog: {len(catalog)} messages, {len(missing)} untranslated {missing}")


def run(script: str, *args: str) -> None:
    subprocess.run([sys.executable, str(ROOT / script), *args], check=True, cwd=ROOT)


def write(path: Path, text: str) -> None:
    if path.exists():
        raise SystemExit(f"{path.relative_to(ROOT)} exists already: nothing written")
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")


def files(fields: dict) -> dict[Path, str]:
    stem, topic = fields["stem"], fields["topic"]
    return {
        ROOT / f"notebooks/{stem}.ipynb": notebook(stem, "en", fields),
        ROOT / f"notebooks/zh/{stem}.ipynb": notebook(stem, "zh", fields),
        ROOT / f"notebooks/teacher_notes/{stem}.md": NOTES.format(**fields),
        ROOT / f"notebooks/zh/teacher_notes/{stem}.md": NOTES_ZH.format(**fields),
        ROOT / f"rope_lib/exercises/{topic}.py": EXERCISES.format(**fields),
        ROOT / f"rope_lib/widgets/{topic}.py": WIDGET.format(**fields),
        ROOT / f"rope_lib/figures/{topic}.py": FIGURES.format(**fields),
        ROOT / f"tests/lessons/test_{stem}.py": TEST.format(**fields),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topic", help="the lesson's topic: lower_case_with_underscores")
    parser.add_argument("--title", default="", help="the lesson's title in English")
    parser.add_argument("--title-zh", default="", help="its title in Chinese")
    parser.add_argument("--summary", default="", help="its README row: one line")
    parser.add_argument("--summary-zh", default="", help="the Chinese README's row")
    parser.add_argument("--no-execute", action="store_true")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", args.topic):
        raise SystemExit(
            f"NAME must be lower_case_with_underscores, got {args.topic!r}"
        )
    number = next_number()
    title = args.title or args.topic.replace("_", " ").capitalize()
    fields = dict(
        n=number,
        nn=f"{number:02d}",
        topic=args.topic,
        stem=f"{number:02d}_{args.topic}",
        title=title,
        title_zh=args.title_zh or f"{title}（标题待译）",
        widget=class_name(args.topic),
        summary=args.summary or "what the learner does in this lesson, in one line",
        summary_zh=args.summary_zh or "学习者在这一课里做什么，一行写完",
    )
    targets = files(fields)
    for path, text in targets.items():
        write(path, text)
    # a long topic name may push a line past 88 columns: the course's formatter decides
    ruff = Path(sys.executable).with_name("ruff")
    python = [str(p) for p in targets if p.suffix == ".py"]
    subprocess.run([str(ruff), "format", "--quiet", *python], check=True, cwd=ROOT)
    readme_rows(fields)
    translate_skeleton()
    run("scripts/make_images.py", "--lesson", fields["nn"])
    if not args.no_execute:
        run("scripts/execute_notebooks.py", *(str(p) for p in list(targets)[:2]))
    print(f"Lesson {number} created: see CONTRIBUTING.md for what to write next.")


if __name__ == "__main__":
    main(sys.argv[1:])
