"""Build the course's static site (`make site`): both editions, flipbooks and decks.

    _site/index.html          the way in: both editions
    _site/en/, _site/zh-CN/   one Sphinx (myst-nb) build per edition: lessons, teacher
                              notes, notation, search; flipbooks/ (frames) and slides/
                              (one reveal.js deck per lesson)

The notebooks are read as committed, not executed. Each edition's sources are laid out
in site/_build/src/<edition>/ (a file is rewritten only when its text changes, so that a
second build reads only what changed): the lessons with each live widget's output
replaced by its flipbook (site/frames.py) and a link to the lesson's deck, the teacher
notes, an index (the README's lesson table) and the notation page (the README's notation
table). MathJax and reveal.js come from the npm registry (site/package.json, `npm ci` at
set-up time) and are copied into the site: nothing is fetched while building or viewing.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = ROOT / "_site"
BUILD = HERE / "_build"
MODULES = HERE / "node_modules"
sys.path.insert(0, str(HERE))

import frames  # noqa: E402  (site/frames.py)

#: edition -> (notebook folder, rope_lib language, Sphinx language, README)
EDITIONS = {
    "en": ("notebooks", "en", "en", "README.md"),
    "zh-CN": ("notebooks/zh", "zh", "zh_CN", "README.zh-CN.md"),
}
#: What each edition's own pages say.
WORDS = {
    "en": {
        "notation": "Notation",
        "notes": "Teacher notes",
        "lessons": "Lessons",
        "deck": "Slides for the classroom: open this lesson's deck",
        "deck_hint": "(reveal.js, 1280×720; arrow keys move, S opens the speaker view)",
        "title": "How does a transformer know where a token is?",
        "intro": (
            "An interactive course on position encodings: sinusoids, learned tables, "
            "RoPE (as a 2D rotation and in complex numbers), ALiBi, and stretching "
            "RoPE past its training length. This site shows every lesson as committed, "
            "with its outputs; each live widget is a flipbook you can drag. To run the "
            "code and the live widgets, clone the repository and run `make lab`."
        ),
    },
    "zh-CN": {
        "notation": "记号",
        "notes": "教师笔记",
        "lessons": "课程",
        "deck": "课堂幻灯片：打开本课的演示文稿",
        "deck_hint": "（reveal.js，1280×720；方向键翻页，按 S 打开演讲者视图）",
        "title": "Transformer 如何知道每个词元在哪里？",
        "intro": (
            "一门关于位置编码的交互式课程：正弦编码、可学习的位置表、"
            "RoPE（二维旋转与复数形式）、ALiBi，以及把 RoPE 拉伸到训练长度之外。"
            "本网站按提交时的样子展示每一课及其输出；每个实时控件都是一本可以拖动的"
            "翻页图。要运行代码和实时控件，请克隆仓库并运行 `make lab`。"
        ),
    },
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def write(path: Path, text: str) -> None:
    """Write text only when it differs (Sphinx then rereads only what changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def readme_section(readme: str, heading: str) -> str:
    """The text of the README's `## heading` section, without the heading."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## )", readme, re.S | re.M)
    return match.group(1).strip()


def lesson_table(readme: str, heading: str) -> str:
    """The README's lesson table, its links pointing at the site's pages."""
    text = readme_section(readme, heading)
    text = re.sub(r"!\[\]\(images/[^)]*\)", "", text)
    text = re.sub(r"\(notebooks/(?:zh/)?([\w/]+)\.(?:ipynb|md)\)", r"(\1)", text)
    return text


def widget_cells(notebook: dict, classes) -> list[tuple[int, str, str]]:
    """(cell index, class name, call) of each cell whose output is a live widget."""
    found = []
    for index, cell in enumerate(notebook["cells"]):
        outputs = cell.get("outputs", [])
        if any(WIDGET_VIEW in o.get("data", {}) for o in outputs):
            call = frames.widget_call("".join(cell["source"]), classes)
            if call is None:
                raise ValueError(f"cell {index}: a widget output, but no known widget")
            found.append((index, *call))
    return found


def with_flipbooks(notebook: dict, cells, folders, language, base: str) -> dict:
    """The notebook with each widget's output replaced by its flipbook."""
    notebook = copy.deepcopy(notebook)
    for index, name, call in cells:
        folder = folders[(name, call, language)]
        manifest = json.loads((folder / "flipbook.json").read_text())
        ident = f"flipbook-{index}-{name}"
        html = frames.flipbook_html(manifest, f"{base}/{folder.name}", ident)
        notebook["cells"][index]["outputs"] = [
            {"output_type": "display_data", "metadata": {}, "data": {"text/html": html}}
        ]
    return notebook


def _slide_type(cell) -> str | None:
    return (cell["metadata"].get("slideshow") or {}).get("slide_type")


def _is_still(cell) -> bool:
    """A code cell that shows a widget's still picture (static_png / show_png)."""
    source = "".join(cell["source"])
    return cell["cell_type"] == "code" and (
        "static_png(" in source or "show_png(" in source
    )


def without_stills(notebook: dict, cells) -> dict:
    """For a deck: on a widget's slide the flipbook stands in for the live widget and
    its still picture, so the cells after it on that slide that show the still (and the
    markdown line introducing one) are skipped, as the slide marks skip cells."""
    notebook = copy.deepcopy(notebook)
    lesson = notebook["cells"]
    for index, _, _ in cells:
        following = index + 1
        while following < len(lesson) and _slide_type(lesson[following]) in (
            None,
            "-",
            "fragment",
        ):
            cell = lesson[following]
            after = lesson[following + 1] if following + 1 < len(lesson) else None
            if _is_still(cell) or (
                cell["cell_type"] == "markdown"
                and after is not None
                and _is_still(after)
            ):
                cell["metadata"]["slideshow"] = {"slide_type": "skip"}
            following += 1
    return notebook


def deck_link(stem: str, words: dict) -> dict:
    """A markdown cell linking the lesson's deck (not a slide itself)."""
    html = (
        f'<p class="deck-link"><a href="slides/{stem}.html">{words["deck"]}</a> '
        f"{words['deck_hint']}</p>"
    )
    return {
        "cell_type": "markdown",
        "id": "deck-link",
        "metadata": {"slideshow": {"slide_type": "skip"}},
        "source": html,
    }


def stage(edition: str, classes, folders) -> tuple[Path, list]:
    """Lay out one edition's sources; return its folder and its lessons' notebooks."""
    notebooks_dir, language, _, readme_name = EDITIONS[edition]
    words = WORDS[edition]
    src = BUILD / "src" / edition
    readme = (ROOT / readme_name).read_text(encoding="utf-8")
    headings = ("Notation", "The lessons") if edition == "en" else ("记号", "课程")
    lessons = sorted((ROOT / notebooks_dir).glob("[0-9][0-9]_*.ipynb"))
    notes = sorted((ROOT / notebooks_dir / "teacher_notes").glob("*.md"))
    index = "\n".join(
        [
            f"# {words['title']}",
            "",
            words["intro"],
            "",
            lesson_table(readme, headings[1]),
            "",
            "```{toctree}",
            ":hidden:",
            f":caption: {words['lessons']}",
            "",
            *(p.stem for p in lessons),
            "```",
            "",
            "```{toctree}",
            ":hidden:",
            f":caption: {words['notation']} · {words['notes']}",
            "",
            "notation",
            *(f"teacher_notes/{p.stem}" for p in notes),
            "```",
            "",
        ]
    )
    write(src / "index.md", index)
    notation = readme_section(readme, headings[0])
    write(src / "notation.md", f"# {words['notation']}\n\n{notation}\n")
    for note in notes:
        write(src / "teacher_notes" / note.name, note.read_text(encoding="utf-8"))
    staged = []
    for path in lessons:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        cells = widget_cells(notebook, classes)
        page = with_flipbooks(notebook, cells, folders, language, "flipbooks")
        page["cells"].insert(1, deck_link(path.stem, words))
        write(src / path.name, json.dumps(page, ensure_ascii=False, indent=1))
        deck = with_flipbooks(
            without_stills(notebook, cells),
            cells,
            folders,
            language,
            "../flipbooks",
        )
        staged.append((path.stem, deck))
    return src, staged


def assets() -> Path:
    """MathJax and reveal.js from site/node_modules into site/_build/assets (served as
    each edition's _static/)."""
    if not (MODULES / "mathjax").exists():
        sys.exit(
            "site/node_modules is missing: run `npm ci --prefix site` (make site does)"
        )
    target = BUILD / "assets"
    copies = {
        MODULES / "mathjax/es5/tex-svg-full.js": target / "mathjax/tex-svg-full.js",
        MODULES / "reveal.js/dist/reveal.js": target / "reveal/reveal.js",
        MODULES / "reveal.js/dist/reveal.css": target / "reveal/reveal.css",
        MODULES / "reveal.js/plugin/notes/notes.js": target / "reveal/notes.js",
    }
    for source, destination in copies.items():
        if (
            not destination.exists()
            or destination.stat().st_mtime < source.stat().st_mtime
        ):
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)
    return target


def decks(edition: str, staged, out: Path) -> None:
    """One reveal.js deck per lesson, from the slide marks that JupyterLab's slideshow
    reads."""
    import nbformat
    from nbconvert import SlidesExporter

    exporter = SlidesExporter(
        extra_template_basedirs=[str(HERE)],
        template_name="slides",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    (out / "slides").mkdir(parents=True, exist_ok=True)
    language = EDITIONS[edition][2].replace("_", "-")
    for stem, notebook in staged:
        deck = out / "slides" / f"{stem}.html"
        nb = nbformat.reads(json.dumps(notebook), as_version=4)
        body, _ = exporter.from_notebook_node(nb, resources={"language_code": language})
        deck.write_text(body, encoding="utf-8")


def landing(out: Path) -> None:
    """_site/index.html: the two editions."""
    write(
        out / "index.html",
        """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>rope-notebooks</title>
<style>body{font:1.2rem/1.5 sans-serif;max-width:40rem;margin:3rem auto;
padding:0 1rem;color:#222} a{color:#0645ad}</style></head>
<body><main>
<h1>rope-notebooks</h1>
<p>How does a transformer know where a token is? A course on position encodings.</p>
<ul>
<li><a href="en/index.html">English edition</a></li>
<li><a href="zh-CN/index.html" lang="zh-CN" hreflang="zh-CN">中文版</a></li>
</ul>
</main></body></html>
""",
    )


def build(editions) -> None:
    from rope_lib.widgets import registry

    started = time.perf_counter()
    classes = set(registry())
    jobs = []
    for edition in editions:
        notebooks_dir, language = EDITIONS[edition][:2]
        for path in sorted((ROOT / notebooks_dir).glob("[0-9][0-9]_*.ipynb")):
            notebook = json.loads(path.read_text(encoding="utf-8"))
            jobs += [(n, c, language) for _, n, c in widget_cells(notebook, classes)]
    folders = frames.flipbooks(sorted(set(jobs)))
    print(f"flipbooks ready ({time.perf_counter() - started:.0f} s)")
    assets()
    for edition in editions:
        src, staged = stage(edition, classes, folders)
        out = OUT / edition
        subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-b",
                "html",
                "-q",
                "-j",
                "2",
                "-c",
                str(HERE),
                "-d",
                str(BUILD / "doctrees" / edition),
                "-D",
                f"language={EDITIONS[edition][2]}",
                str(src),
                str(out),
            ],
            check=True,
        )
        for source_map in (out / "_static").rglob("*.map"):  # the theme's, for devtools
            source_map.unlink()  # only: 3.5 MB an edition that no reader downloads
        language = EDITIONS[edition][1]
        used = {folder for job, folder in folders.items() if job[2] == language}
        for folder in used:
            target = out / "flipbooks" / folder.name
            if not target.exists():
                shutil.copytree(folder, target, ignore=shutil.ignore_patterns("*.json"))
        for stale in (out / "flipbooks").iterdir():
            if stale not in {out / "flipbooks" / f.name for f in used}:
                shutil.rmtree(stale)
        decks(edition, staged, out)
        print(f"{edition} built ({time.perf_counter() - started:.0f} s)")
    landing(OUT)
    # GitHub Pages runs Jekyll, which drops folders starting with _ (_static, _images)
    write(OUT / ".nojekyll", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edition", choices=EDITIONS, action="append")
    args = parser.parse_args()
    build(args.edition or list(EDITIONS))


if __name__ == "__main__":
    main()
