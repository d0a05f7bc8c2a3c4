"""The Chinese edition (notebooks/zh/) stays in step with the English lessons.

Every lesson has a Chinese twin of the same name, cell for cell: the same cell types and
slide/tag metadata, and code cells that compute exactly the same thing. Only comments and
string literals may differ: the code cells' token streams are compared with comments and
strings set aside (the fields of an f-string, `{expr:spec}`, are code and are compared). So
an English code cell changed without its twin fails here, naming the cell.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
ZH = NOTEBOOKS / "zh"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CJK = re.compile(r"[\u4e00-\u9fff]")
#: Pointers at the material the course grew from, which the learner never saw.
#: (A random seed, 随机种子 or `--seed 7`, is fine.)
SOURCE_POINTERS = re.compile(
    r"种子笔记|源笔记|原始笔记|原笔记|笔记\s*0\d\d|\bseed[ -]?notes?\b|\bseeds? ?\d{3}\b"
    r"|\bthe seeds\b|\bsource notes\b|\bnote \d{3}\b",
    re.I,
)


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def _fstring_fields(literal: str) -> list[str]:
    """The code inside an f-string literal: each field's expression, conversion and spec."""
    try:
        node = ast.parse(literal, mode="eval").body
    except SyntaxError:
        return ["<unparsable string>"]
    fields = []
    for part in ast.walk(node):
        if isinstance(part, ast.FormattedValue):
            spec = ast.unparse(part.format_spec) if part.format_spec else ""
            fields.append(f"{{{ast.unparse(part.value)}!{part.conversion}:{spec}}}")
    return fields


def code_tokens(source: str) -> list[tuple[int, str]]:
    """(line, token) of a code cell, comments and string literals set aside: a string is
    `<str>` (plus its f-string fields), a comment nothing. IPython lines (`%magic`,
    `!shell`) are compared whole."""
    lines = source.splitlines()
    python = "\n".join("" if line.lstrip()[:1] in "%!" else line for line in lines)
    tokens = [
        (number, line.strip())
        for number, line in enumerate(lines, 1)
        if line.lstrip()[:1] in "%!" and line.strip()
    ]
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
    for line, literal in _literals_as_strings(python):
        if isinstance(literal, str):
            tokens.append((line, "<str>"))
            tokens += [(line, field) for field in _fstring_fields(literal)]
        elif literal.type not in skip:
            tokens.append((line, literal.string))
    return sorted(tokens, key=lambda t: t[0])


#: Since Python 3.12 (PEP 701) an f-string is several tokens, FSTRING_START ... FSTRING_END;
#: before, it was one STRING token. Absent attributes (3.11) match no token type.
FSTRING_START = getattr(tokenize, "FSTRING_START", object())
FSTRING_END = getattr(tokenize, "FSTRING_END", object())


def _literals_as_strings(python: str):
    """(line, token) for every token of `python`, but each string literal, f-strings
    included, as (line, its source text): the same stream on Python 3.11 and 3.12+."""
    lines = python.splitlines(keepends=True)
    depth, start = 0, None
    for token in tokenize.generate_tokens(io.StringIO(python + "\n").readline):
        if token.type == FSTRING_START:
            depth += 1
            start = start or token.start
        elif token.type == FSTRING_END:
            depth -= 1
            if depth == 0:
                yield start[0], _text_between(lines, start, token.end)
                start = None
        elif depth:
            continue
        elif token.type == tokenize.STRING:
            yield token.start[0], token.string
        else:
            yield token.start[0], token


def _text_between(
    lines: list[str], start: tuple[int, int], end: tuple[int, int]
) -> str:
    """The source from (row, col) start to end, rows counted from 1 as tokenize does."""
    if start[0] == end[0]:
        return lines[start[0] - 1][start[1] : end[1]]
    middle = "".join(lines[start[0] : end[0] - 1])
    return lines[start[0] - 1][start[1] :] + middle + lines[end[0] - 1][: end[1]]


def first_difference(english: str, chinese: str) -> str | None:
    """None when two code cells compute the same, else where they first part ways."""
    a, b = code_tokens(english), code_tokens(chinese)
    for (line_a, token_a), (line_b, token_b) in zip(a, b):
        if token_a != token_b:
            return (
                f"English line {line_a} has {token_a!r} where the Chinese line {line_b} "
                f"has {token_b!r}:\n  en: {english.splitlines()[line_a - 1].strip()}\n"
                f"  zh: {chinese.splitlines()[line_b - 1].strip()}"
            )
    if len(a) != len(b):
        longer, name = (a, "English") if len(a) > len(b) else (b, "Chinese")
        line = longer[min(len(a), len(b))][0]
        return f"the {name} cell goes on past the other's end, at its line {line}"
    return None


def out_of_step(lesson: str, english: list[dict], chinese: list[dict]) -> list[str]:
    """Every way the Chinese cells have fallen out of step with the English ones."""
    if len(english) != len(chinese):
        return [
            f"{lesson}: {len(english)} cells in English, {len(chinese)} in notebooks/zh/ "
            "(keep one Chinese cell per English cell)"
        ]
    problems = []
    for number, (en, zh) in enumerate(zip(english, chinese)):
        where = f"{lesson}, cell {number} ({en['cell_type']})"
        if en["cell_type"] != zh["cell_type"]:
            problems.append(f"{where}: the Chinese cell is {zh['cell_type']}")
            continue
        meta_en, meta_zh = en.get("metadata", {}), zh.get("metadata", {})
        for key in ("slideshow", "tags"):
            if meta_en.get(key) != meta_zh.get(key):
                problems.append(
                    f"{where}: metadata {key} {meta_en.get(key)} in English, "
                    f"{meta_zh.get(key)} in Chinese"
                )
        if en["cell_type"] == "code":
            difference = first_difference(_source(en), _source(zh))
            if difference:
                problems.append(
                    f"{where}: the code differs from its Chinese twin in "
                    f"notebooks/zh/{lesson} (a change not carried over): {difference}"
                )
    return problems


def test_every_lesson_has_a_chinese_twin_and_nothing_else():
    chinese = sorted(p.name for p in ZH.glob("*.ipynb"))
    assert chinese == LESSONS, f"notebooks/zh/ has {chinese}, the lessons are {LESSONS}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_twin_computes_the_same(lesson):
    problems = out_of_step(lesson, _cells(NOTEBOOKS / lesson), _cells(ZH / lesson))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_twin_speaks_chinese(lesson):
    english, chinese = _cells(NOTEBOOKS / lesson), _cells(ZH / lesson)
    number = int(lesson[:2])
    title = _source(chinese[0]).splitlines()[0]
    assert title.startswith(f"# 第 {number} 课 · ") and CJK.search(title), title
    code = [_source(c) for c in chinese if c["cell_type"] == "code"]
    assert 'set_language("zh")' in code[0], "the first code cell sets the language"
    for index, (en, zh) in enumerate(zip(english, chinese)):
        if en["cell_type"] != "markdown":
            continue
        prose = re.sub(
            r"```.*?```|`[^`]*`|\$[^$]*\$|<[^>]+>", "", _source(en), flags=re.S
        )
        words = re.findall(r"\b[A-Za-z]{3,}\b", prose)
        if len(words) >= 4:
            assert len(CJK.findall(_source(zh))) >= len(words), (
                f"{lesson}, cell {index}: markdown not translated: {_source(zh)[:120]!r}"
            )
    text = "\n".join(_source(c) for c in chinese)
    assert not SOURCE_POINTERS.search(text), SOURCE_POINTERS.search(text).group(0)


def test_pointer_patterns_catch_what_they_are_for():
    for text in ("见种子笔记", "源笔记里说", "seed 003", "the seed notes", "笔记 003"):
        assert SOURCE_POINTERS.search(text), text
    for text in ("随机种子 0", "--seed 7", "torch.manual_seed(0)", "config['seeds']"):
        assert not SOURCE_POINTERS.search(text), text


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_figures_had_every_glyph(lesson):
    # matplotlib warns on stderr when a font lacks a glyph (the figure shows boxes)
    for index, cell in enumerate(_cells(ZH / lesson)):
        for output in cell.get("outputs", []):
            text = "".join(output.get("text", ""))
            assert (
                "missing from font" not in text and "does not have a glyph" not in text
            ), f"{lesson}, cell {index}: {text[:300]}"


def _wide(character: str) -> bool:
    """A Chinese character or punctuation mark (curly quotes count: they sit in Chinese
    sentences)."""
    return unicodedata.east_asian_width(character) in "WF" or character in "“”‘’"


def stray_spaces(markdown: str) -> list[str]:
    """Lines broken between two Chinese characters (outside code blocks): the browser
    shows such a break as a space inside the sentence."""
    found, fence = [], False
    lines = markdown.split("\n")
    for line, following in zip(lines, lines[1:]):
        if line.lstrip().startswith("```"):
            fence = not fence
        # emphasis markers (*, **, _) at the break do not separate the words either
        body = re.sub(r"^\s*>\s?", "", following).lstrip().lstrip("*_")
        end = line.rstrip().rstrip("*_")
        if not fence and end and body and _wide(end[-1]) and _wide(body[0]):
            if not end.lstrip().startswith("|"):
                found.append(f"{end[-20:]!r} / {body[:20]!r}")
    return found


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_stray_spaces_in_chinese_sentences(lesson):
    texts = {
        f"cell {i}": _source(c)
        for i, c in enumerate(_cells(ZH / lesson))
        if c["cell_type"] == "markdown"
    }
    notes = ZH / "teacher_notes" / lesson.replace(".ipynb", ".md")
    texts["teacher notes"] = notes.read_text(encoding="utf-8")
    if lesson == LESSONS[0]:
        texts["README.zh-CN.md"] = (ROOT / "README.zh-CN.md").read_text(
            encoding="utf-8"
        )
    found = {
        where: stray for where, text in texts.items() if (stray := stray_spaces(text))
    }
    assert not found, f"{lesson}: lines broken inside a Chinese sentence: {found}"


# --- the sync check itself fails as it should -----------------------------------------
def test_a_changed_english_code_cell_is_named():
    lesson = "03_rotation_2d.ipynb"
    english, chinese = _cells(NOTEBOOKS / lesson), _cells(ZH / lesson)
    index = next(
        i
        for i, c in enumerate(english)
        if c["cell_type"] == "code" and re.search(r"\b0\.5\b", _source(c))
    )
    changed = [dict(c) for c in english]
    changed[index]["source"] = re.sub(
        r"\b0\.5\b", "0.25", _source(english[index]), count=1
    )
    problems = out_of_step(lesson, changed, chinese)
    assert len(problems) == 1, problems
    assert f"cell {index} (code)" in problems[0] and "'0.25'" in problems[0], problems[
        0
    ]


def test_stray_space_check():
    assert stray_spaces("旋转位置\n编码")
    assert stray_spaces("> 旋转位置\n> 编码")
    assert stray_spaces("矩阵，\n**对每个**") and stray_spaces("“吃”\n在")
    assert not stray_spaces("旋转位置\nRoPE 编码") and not stray_spaces("RoPE\n编码")
    assert not stray_spaces("```\n# 注释\n# 注释\n```")


def test_comments_strings_and_fstring_fields():
    same = 'x = f(2)  # two\nprint("two", x)\n'
    assert first_difference(same, 'x = f(2)  # 二\nprint("二", x)\n') is None
    assert first_difference(same, "x = f(3)  # two\nprint('two', x)\n")
    assert first_difference('print(f"{x:.3f} rad")', 'print(f"{x:.3f} 弧度")') is None
    assert first_difference('print(f"{x:.3f} rad")', 'print(f"{x:.4f} 弧度")')
    assert first_difference('print(f"{x} rad")', 'print(f"{y} 弧度")')
    assert first_difference("%matplotlib widget\nx = 1", "%matplotlib inline\nx = 1")
    assert first_difference("x = 1", "x = 1\ny = 2")
    nested = "print(f\"{x:{w}.3f} {f'{y}'} rad\")"
    assert first_difference(nested, "print(f\"{x:{w}.3f} {f'{y}'} 弧度\")") is None
    assert first_difference(nested, "print(f\"{x:{w}.3f} {f'{z}'} 弧度\")")
    multi = 'print(\n    f"{a:.2f} and "\n    f"""{b}\nrad"""\n)'
    assert (
        first_difference(multi, 'print(\n    f"{a:.2f} 与 "\n    f"""{b}\n弧度"""\n)')
        is None
    )
    assert first_difference(
        multi, 'print(\n    f"{a:.3f} 与 "\n    f"""{b}\n弧度"""\n)'
    )
