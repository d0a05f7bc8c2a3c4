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
import html
import json
import os
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
import settings  # noqa: E402  (site/settings.py: the repository's public address)

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
        "thumbnail": "picture",
        "flipbook": "Flipbook",
        "figure": "Figure",
        "run_title": "Take a lesson away, or run it",
        "run": (
            "Every lesson page starts with three links. **Download the notebook** gives "
            "the lesson's `.ipynb` file with its outputs; it imports the course's "
            "library, `rope_lib`, so run it from a clone of the repository: "
            "`git clone {repository}`, then `make lab` (Python 3.11 or newer; it "
            "installs everything into `.venv`). **Run on Binder** opens the same "
            "notebook in JupyterLab on mybinder.org, built from the repository's "
            "`binder/` folder, ready to run, nothing to install (the first start takes "
            "a few minutes). **Repository** is the source: <{repository}>. There is no "
            "Colab link: a lesson needs the whole repository (rope_lib, the stored lab "
            "results) and the course's pinned environment, which Binder builds and "
            "Colab does not."
        ),
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
        "thumbnail": "示意图",
        "flipbook": "翻页图",
        "figure": "图",
        "run_title": "把一课带走，或者运行它",
        "run": (
            "每一课的页面开头都有三个链接。**下载笔记本** 给出本课的 `.ipynb` 文件（含输出）；"
            "它会导入课程的库 `rope_lib`，所以请在仓库的克隆中运行：`git clone {repository}`，"
            "然后 `make lab`（需要 Python 3.11 或更新版本，所有依赖装进 `.venv`）。"
            "**在 Binder 上运行** 会在 mybinder.org 的 JupyterLab 中打开同一个笔记本，"
            "环境按仓库的 `binder/` 文件夹构建，可直接运行，无须安装（第一次启动要几分钟）。"
            "**代码仓库** 是源码：<{repository}>。这里没有 Colab 链接：一课需要整个仓库"
            "（rope_lib、保存好的实验结果）和课程固定版本的环境，Binder 会构建它，Colab 不会。"
        ),
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


def lesson_table(readme: str, heading: str, thumbnail: str) -> tuple[str, list[str]]:
    """The README's lesson table, its links pointing at the site's pages, its thumbnail
    column kept (headed `thumbnail`); and the pictures it shows (paths under ROOT)."""
    text = readme_section(readme, heading)
    pictures = re.findall(r"!\[\]\((images/[^)]*)\)", text)
    text = re.sub(r"!\[\]\((images/[^)]*)\)", r"![](\1)", text)
    text = re.sub(r"^\| \|", f"| {thumbnail} |", text, count=1, flags=re.M)
    text = re.sub(r"\(notebooks/(?:zh/)?([\w/]+)\.(?:ipynb|md)\)", r"(\1)", text)
    return text, pictures


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
    """The notebook with each widget's output replaced by its flipbook, named by the
    lesson's words before it."""
    notebook = copy.deepcopy(notebook)
    words = WORDS["en" if language == "en" else "zh-CN"]
    for index, name, call in cells:
        folder = folders[(name, call, language)]
        manifest = json.loads((folder / "flipbook.json").read_text())
        ident = f"flipbook-{index}-{name}"
        label = figure_words(notebook["cells"], index, words).split(": ", 1)[-1]
        label = f"{words['flipbook']}: {label}"
        markup = frames.flipbook_html(manifest, f"{base}/{folder.name}", ident, label)
        notebook["cells"][index]["outputs"] = [
            {"output_type": "display_data", "metadata": {}, "data": {"text/html": markup}}
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
    """For a deck: the cells that show a widget's still picture (skipped_stills) are
    skipped, as the slide marks skip cells."""
    notebook = copy.deepcopy(notebook)
    for index in skipped_stills(notebook, cells):
        notebook["cells"][index]["metadata"]["slideshow"] = {"slide_type": "skip"}
    return notebook


def lesson_links(notebook_path: Path, edition: str, words: dict) -> dict:
    """A markdown cell (not a slide) under a lesson's title: its notebook to download,
    Binder, the repository (site/settings.py), the deck."""
    launch = settings.LAUNCH_WORDS[EDITIONS[edition][2]]
    folder = settings.NOTEBOOKS[EDITIONS[edition][2]]
    name = notebook_path.name
    links = [
        f'<a class="launch-download" href="notebooks/{name}" download="{name}" '
        f'title="{launch["download_title"]}">{launch["download"]}</a>',
        f'<a class="launch-binder" href="{html.escape(settings.binder_url(f"{folder}/{name}"))}" '
        f'title="{launch["binder_title"]}">{launch["binder"]}</a>',
        f'<a class="launch-repository" href="{settings.REPOSITORY}" '
        f'title="{launch["repository_title"]}">{launch["repository"]}</a>',
        f'<a class="deck-link" href="slides/{notebook_path.stem}.html">{words["deck"]}</a>'
        f' <span class="deck-hint">{words["deck_hint"]}</span>',
    ]
    return {
        "cell_type": "markdown",
        "id": "lesson-links",
        "metadata": {"slideshow": {"slide_type": "skip"}},
        "source": f'<p class="lesson-links">{" · ".join(links)}</p>',
    }


#: A line of markdown to plain words (for alt text): links, emphasis, code and math marks
#: dropped, their text kept.
_MARKS = [
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), ""),
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"<[^>]+>"), ""),
    (re.compile(r"\$\$?([^$]*)\$\$?"), r"\1"),
    (re.compile(r"[*_`#>]+"), ""),
    (re.compile(r"\\(?:mathrm|text|operatorname|mathbf|boldsymbol)\{([^}]*)\}"), r"\1"),
    (re.compile(r"\\[ ,;:!]"), " "),
    (re.compile(r"\\([A-Za-z]+)"), r" \1 "),
    (re.compile(r"[{}]"), ""),
    (re.compile(r"\s+"), " "),
]


def plain_words(markdown: str, limit: int = 220) -> str:
    text = markdown
    for pattern, repl in _MARKS:
        text = pattern.sub(repl, text)
    text = re.sub(r"\s+([,.;:)])", r"\1", text).strip()
    if len(text) > limit:
        cut = max(text.rfind(stop, 0, limit) for stop in (". ", "。", "；", "; ", "："))
        text = text[: cut + 1] if cut > 40 else text[:limit].rstrip() + "…"
    return text


def figure_words(lesson: list, index: int, words: dict) -> str:
    """What a code cell's picture shows, in the lesson's words: the cell's own comment
    lines, else the last paragraph of the markdown cell before it (the text that
    introduces the picture)."""
    source = "".join(lesson[index]["source"])
    comments = [
        line.strip().lstrip("#").strip()
        for line in source.splitlines()
        if line.strip().startswith("#") and not line.strip().startswith("#|")
    ]
    text = ""
    for back in range(index - 1, -1, -1):
        if lesson[back]["cell_type"] == "markdown":
            paragraphs = [
                p for p in "".join(lesson[back]["source"]).split("\n\n") if p.strip()
            ]
            text = plain_words(paragraphs[-1]) if paragraphs else ""
            break
    if comments:
        text = plain_words(" ".join(comments)) + (f" ({text})" if text else "")
    return f"{words['figure']}: {text}" if text else words["figure"]


def with_alt_text(notebook: dict, words: dict) -> dict:
    """Each picture an output shows gets alt text from the lesson's words
    (figure_words), for the page (myst-nb reads metadata.mystnb.image) and the deck
    (site/slides/index.html.j2 reads the same)."""
    notebook = copy.deepcopy(notebook)
    lesson = notebook["cells"]
    for index, cell in enumerate(lesson):
        if cell["cell_type"] != "code":
            continue
        if any("image/png" in o.get("data", {}) for o in cell.get("outputs", [])):
            alt = figure_words(lesson, index, words)
            image = cell["metadata"].setdefault("mystnb", {}).setdefault("image", {})
            image["alt"] = alt
    return notebook


def without_stale_feedback(notebook: dict, language: str) -> dict:
    """An exercise cell's stored output is the checker's "not yet" for the placeholder,
    which a reader of the site cannot act on: such outputs are left out."""
    from rope_lib.language import _, set_language

    set_language(language)
    not_yet = _("Not yet: ").strip()
    set_language("en")
    notebook = copy.deepcopy(notebook)
    for cell in notebook["cells"]:
        texts = [
            "".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
            for o in cell.get("outputs", [])
        ]
        if texts and any(t.lstrip().startswith(not_yet) for t in texts):
            cell["outputs"] = []
    return notebook


def skipped_stills(notebook: dict, cells) -> set[int]:
    """The cells after each widget, on its slide, that show its still picture (and the
    markdown line introducing one): on the site the flipbook stands in for both."""
    lesson = notebook["cells"]
    found = set()
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
                found.add(following)
            following += 1
    return found


def userdict(path: Path) -> list[str]:
    """jieba's user dictionary for the Chinese edition's search: the glossary's Chinese
    terms (notebooks/zh/术语表.md, its second column) and the course's compound names
    built from them, one a line with a high frequency (so jieba keeps each whole, and
    cut_for_search also yields the known words inside it)."""
    glossary = (ROOT / "notebooks" / "zh" / "术语表.md").read_text(encoding="utf-8")
    terms = []
    for line in glossary.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.search(r"[\u4e00-\u9fff]", cells[1]):
            continue
        chinese = cells[1]
        for part in re.split(r"[/、，,：:“”（）()]|简称", chinese):
            part = part.strip()
            if len(part) >= 2 and re.fullmatch(r"[\u4e00-\u9fff]+", part):
                terms.append(part)
    terms += [t for t in ZH_COMPOUNDS if t not in terms]
    terms = list(dict.fromkeys(terms))
    write(path, "".join(f"{t} 100000 n\n" for t in terms))
    return terms


#: Names the course uses that join two glossary terms (the glossary lists the parts).
ZH_COMPOUNDS = ("旋转位置编码", "正弦位置编码", "注意力温度", "相对位置", "绝对位置")


def stage(edition: str, classes, folders) -> tuple[Path, list]:
    """Lay out one edition's sources; return its folder and its lessons' notebooks."""
    notebooks_dir, language, _, readme_name = EDITIONS[edition]
    words = WORDS[edition]
    src = BUILD / "src" / edition
    shutil.rmtree(src, ignore_errors=True)  # a lesson renamed or removed leaves no page
    readme = (ROOT / readme_name).read_text(encoding="utf-8")
    headings = ("Notation", "The lessons") if edition == "en" else ("记号", "课程")
    lessons = sorted((ROOT / notebooks_dir).glob("[0-9][0-9]_*.ipynb"))
    notes = sorted((ROOT / notebooks_dir / "teacher_notes").glob("*.md"))
    table, pictures = lesson_table(readme, headings[1], words["thumbnail"])
    for picture in pictures:
        target = src / picture
        if not target.exists() or target.read_bytes() != (ROOT / picture).read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / picture, target)
    index = "\n".join(
        [
            f"# {words['title']}",
            "",
            words["intro"],
            "",
            "```{container} lesson-table",
            table,
            "```",
            "",
            f"## {words['run_title']}",
            "",
            words["run"].format(repository=settings.REPOSITORY),
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
        notebook = with_alt_text(without_stale_feedback(notebook, language), words)
        page = with_flipbooks(notebook, cells, folders, language, "flipbooks")
        page["cells"] = [
            cell
            for index, cell in enumerate(page["cells"])
            if index not in skipped_stills(notebook, cells)
        ]
        page["cells"].insert(1, lesson_links(path, edition, words))
        write(src / path.name, json.dumps(page, ensure_ascii=False, indent=1))
        deck = with_flipbooks(
            without_stills(notebook, cells),
            cells,
            folders,
            language,
            "../flipbooks",
        )
        notes = ROOT / notebooks_dir / "teacher_notes" / f"{path.stem}.md"
        if notes.exists():
            note = notes.read_text(encoding="utf-8")
            # each section's slide: its plan row and questions; the first: the whole note
            for index, text in sorted(section_notes(note, deck["cells"]), reverse=True):
                deck["cells"].insert(index + 1, speaker_note(f"notes-{index}", text))
            deck["cells"].insert(1, speaker_note("teacher-notes", note))
        staged.append((path.stem, deck))
    return src, staged


def speaker_note(ident: str, text: str) -> dict:
    """A cell reveal.js shows in the speaker view of the slide it follows."""
    return {
        "cell_type": "markdown",
        "id": ident,
        "metadata": {"slideshow": {"slide_type": "notes"}},
        "source": text,
    }


#: In a teacher note: the plan's heading, a row, a question's reference; in a lesson: a
#: heading cell, "## 2. Title", "### 2.1 Title", "## Exercises".
_PLAN = re.compile(r"^## (?:Plan for|\d+ 分钟)", re.M)
_ROW = re.compile(r"^\| *(\d+ *[–-] *\d+) *\| *(.+?) *\|$", re.M)
_QUESTION = re.compile(r"\bQ(\d)|问题 ?(\d)")
_ASK = re.compile(r"^## (?:Stop and ask|停下来提问)\n(.*?)(?=^## )", re.M | re.S)
_HEADING = re.compile(r"#{2,3} (?:(\d+(?:\.\d+)?)(?:\.|\s·)?\s+)?(.+)")


def _row_section(what: str) -> str | None:
    """The section a plan row starts with: "Section 2", "§2", "第 2 节", "Exercises",
    "练习", or a quoted section title."""
    for pattern in (
        r"\b[Ss]ections? (\d+(?:\.\d+)?)",
        r"§ ?(\d+(?:\.\d+)?)",
        r"第 ?(\d+(?:\.\d+)?)(?: ?[–-] ?\d+(?:\.\d+)?)? ?节",
    ):
        if found := re.search(pattern, what):
            return found.group(1)
    if re.match(r"Exercises?\b|练习", what):
        return "exercises"
    if quoted := re.match(r"[\"“]([^\"”]+)[\"”]", what):
        return quoted.group(1).lower()
    return None


def section_notes(note: str, cells: list[dict]) -> list[tuple[int, str]]:
    """(index of a section's heading cell, its speaker note): each row of the teacher
    note's plan that names a section goes to the slide that opens that section, with its
    minutes and the "stop and ask" questions it calls (Q1, 问题 1)."""
    plan = _PLAN.search(note)
    if plan is None:
        return []
    asked = _ASK.search(note)
    questions = re.split(r"^(?=\d\. )", asked.group(1), flags=re.M) if asked else []
    questions = {q.split(".")[0]: q.strip() for q in questions if q[:1].isdigit()}
    heads = {}
    for index, cell in enumerate(cells):
        lines = "".join(cell["source"]).split("\n") if cell["cell_type"] == "markdown" else []
        for found in filter(None, map(_HEADING.fullmatch, lines)):
            number, title = found.group(1), found.group(2).strip().lower()
            exercises = "exercises" if re.match(r"exercises?\b|练习", title) else None
            for key in filter(None, (number, title, exercises)):
                heads.setdefault(key, index)
    unit = "min" if plan.group(0).startswith("## Plan") else "分钟"
    out = {}
    for minutes, what in _ROW.findall(note[plan.end() :].split("\n## ")[0]):
        key = _row_section(what)
        if key not in heads:
            continue
        asks = [questions[n] for pair in _QUESTION.findall(what) for n in pair if n]
        text = "\n\n".join([f"**{minutes} {unit}** · {what}", *asks])
        index = heads[key]
        out[index] = f"{out[index]}\n\n{text}" if index in out else text
    return list(out.items())


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
    other = "zh-CN" if edition == "en" else "en"
    for stem, notebook in staged:
        deck = out / "slides" / f"{stem}.html"
        nb = nbformat.reads(json.dumps(notebook), as_version=4)
        resources = {
            "language_code": language,
            "deck_links": {
                "lesson": f"../{stem}.html",
                "lesson_label": DECK_WORDS[edition]["lesson"],
                "twin": f"../../{other}/slides/{stem}.html",
                "twin_label": DECK_WORDS[edition]["twin"],
                "twin_lang": other,
            },
        }
        body, _ = exporter.from_notebook_node(nb, resources=resources)
        deck.write_text(body, encoding="utf-8")


#: The links in a deck's corner (to its lesson page, to the deck in the other language).
DECK_WORDS = {
    "en": {"lesson": "Lesson page", "twin": "中文"},
    "zh-CN": {"lesson": "课程页面", "twin": "English"},
}


def landing(out: Path, base: str = settings.BASE) -> None:
    """_site/index.html: the two editions; 404.html, whose links start at `base` (the
    path the site is served under: the page is shown at any depth)."""
    write(
        out / "index.html",
        """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<title>rope-notebooks</title>
<style>body{font:1.2rem/1.5 sans-serif;max-width:40rem;margin:3rem auto;
padding:0 1rem;color:#222} a{color:#0645ad}</style></head>
<body><main>
<h1>rope-notebooks</h1>
<p>How does a transformer know where a token is? A course on position encodings:
sinusoids, learned tables, RoPE as a 2D rotation and in complex numbers, ALiBi, and
stretching RoPE past its training length, with widgets you can drag.</p>
<p lang="zh-CN">Transformer 如何知道每个词元在哪里？一门关于位置编码的交互式课程。</p>
<ul>
<li><a href="en/index.html">English edition</a></li>
<li><a href="zh-CN/index.html" lang="zh-CN" hreflang="zh-CN">中文版</a></li>
</ul>
</main></body></html>
""",
    )
    write(
        out / "404.html",
        """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<link rel="icon" href="{base}favicon.svg" type="image/svg+xml">
<title>Page not found · rope-notebooks</title>
<style>body{font:1.2rem/1.5 sans-serif;max-width:40rem;margin:3rem auto;
padding:0 1rem;color:#222} a{color:#0645ad}</style></head>
<body><main>
<h1>Page not found</h1>
<p lang="zh-CN">找不到这个页面。</p>
<p>The lessons are here: <a href="{base}en/index.html">English edition</a> ·
<a href="{base}zh-CN/index.html" lang="zh-CN" hreflang="zh-CN">中文版</a></p>
</main></body></html>
""".replace("{base}", html.escape(base)),
    )
    favicon = HERE / "_static" / "favicon.svg"
    write(out / "favicon.svg", favicon.read_text(encoding="utf-8"))


#: What a page loads that it does not use: Sphinx's search scripts and index on every page
#: (the theme's search-as-you-type, which the site leaves off; search.html loads its own).
_SEARCH_SCRIPTS = re.compile(
    r'\s*<script src="(?:\.\./)*(?:_static/searchtools\.js|_static/language_data\.js|'
    r'searchindex\.js)"></script>'
)
#: The theme's hints to fetch its deferred scripts first: on a slow link they took the
#: bandwidth the page's text and formulas need; the scripts load, later, all the same.
_SCRIPT_PRELOADS = re.compile(r'\s*<link rel="preload" as="script" href="[^"]*"\s*/?>')
_MATHJAX = re.compile(
    r"\s*<script>window\.MathJax = [^<]*</script>"
    r'\s*<script defer="defer" src="[^"]*mathjax/tex-svg-full\.js[^"]*"></script>'
)


#: A typeset formula (its SVG may hold SVGs: tables), or the page's cache of glyphs.
_SVG = re.compile(
    r"<mjx-container[^>]*>.*?</mjx-container>|<svg [^>]*MJX-SVG-global-cache.*?</svg>", re.S
)
#: What MathJax writes on each glyph and group for its own menus and explorers (which
#: the site does not load), but the node names its stylesheet draws by (tables, errors,
#: actions); the namespaces an SVG inside HTML gets from the parser.
_SVG_NOISE = re.compile(
    r' (?:data-mml-node="(?!mtable|merror|maction)[^"]*"'
    r'|data-(?:c|mjx-texclass|variant)="[^"]*"'
    r'|xmlns(?::xlink)?="http://www\.w3\.org/(?:2000/svg|1999/xlink)")'
)
_SVG_TAG = re.compile(r"<g>|</g>|<g [^>]*>")
_MATHML_NOISE = re.compile(
    r' xmlns="http://www\.w3\.org/1998/Math/MathML"| unselectable="on"'
)


def lean_svg(text: str) -> str:
    """A page's typeset formulas drawn the same with fewer bytes (a third fewer in
    the formulas' SVG): MathJax's data attributes and the namespaces the HTML parser
    implies dropped, and every group left without attributes unwrapped (a bare <g>
    changes nothing it holds)."""

    def one(match) -> str:
        svg = _SVG_NOISE.sub("", match.group(0))
        bare = []  # for each open <g>, whether it had no attributes

        def tag(t) -> str:
            if t.group(0) == "</g>":
                return "" if bare.pop() else "</g>"
            bare.append(t.group(0) == "<g>")
            return "" if bare[-1] else t.group(0)

        return _SVG_TAG.sub(tag, svg)

    text = _MATHML_NOISE.sub("", _SVG.sub(one, text))
    # the stylesheet's one rule by data-c (every glyph's stroke), for glyphs without it
    return text.replace("path[data-c]", "path").replace("use[data-c]", "use")


def finish(out: Path) -> None:
    """The edition's pages as a reader gets them: math typeset at build time (site/typeset.js,
    MathJax in node) so that no page loads MathJax; no search scripts outside search.html;
    pictures below the first screen loaded when scrolled to; nothing shipped that no page
    links (Sphinx's empty _sources/, its objects.inv for other Sphinx projects)."""
    pages = [
        p
        for p in sorted(out.rglob("*.html"))
        if p.relative_to(out).parts[0] not in ("_static", "slides", "flipbooks")
    ]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if page.name != "search.html":
            text = _SEARCH_SCRIPTS.sub("", text)
        text = _SCRIPT_PRELOADS.sub("", text)
        # every content picture but the first lazily (the first may be on screen)
        count = 0

        def lazy(match):
            nonlocal count
            count += 1
            tag = match.group(0)
            if count == 1 or "flipbooks/" in tag:  # a flipbook swaps its picture itself
                return tag
            return f'<img loading="lazy" {tag[5:]}'

        body = text.find('<main')
        text = text[:body] + re.sub(r"<img (?![^>]*loading=)[^>]*>", lazy, text[body:])
        write(page, text)
    typeset = [p for p in pages if p.name not in ("search.html", "genindex.html")]
    subprocess.run(
        ["node", str(HERE / "typeset.js"), *map(str, typeset)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for page in typeset:  # test_site's raw-TeX check finds any formula left untypeset
        write(page, lean_svg(_MATHJAX.sub("", page.read_text(encoding="utf-8"))))
    for unused in (out / "_sources", out / "objects.inv", out / ".buildinfo"):
        if unused.is_dir():
            shutil.rmtree(unused)
        elif unused.exists():
            unused.unlink()


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
    userdict(BUILD / "zh-userdict.txt")
    for edition in editions:
        src, staged = stage(edition, classes, folders)
        out = OUT / edition
        shutil.rmtree(out, ignore_errors=True)  # nothing left from an earlier build
        subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-b",
                "html",
                "-q",
                # every page written again: finish() post-processes what Sphinx writes
                "-a",
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
            env={**os.environ, "ROPE_SITE_EDITION": edition},
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
        notebooks_dir = ROOT / EDITIONS[edition][0]
        for name in ("notebooks",):  # each lesson's notebook, as committed, to download
            shutil.rmtree(out / name, ignore_errors=True)
            (out / name).mkdir()
        for path in sorted(notebooks_dir.glob("[0-9][0-9]_*.ipynb")):
            shutil.copyfile(path, out / "notebooks" / path.name)
        finish(out)
        print(f"{edition} built ({time.perf_counter() - started:.0f} s)")
    landing(OUT)
    # myst-nb writes the notebooks' outputs beside the output folder (jupyter_execute/):
    # the pages' pictures are in each edition's _images/, nothing links this one
    shutil.rmtree(OUT / "jupyter_execute", ignore_errors=True)
    # GitHub Pages runs Jekyll, which drops folders starting with _ (_static, _images)
    write(OUT / ".nojekyll", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edition", choices=EDITIONS, action="append")
    args = parser.parse_args()
    build(args.edition or list(EDITIONS))


if __name__ == "__main__":
    main()
