"""Chinese typography in the Chinese edition: what a reader sees has no space after a full-width
colon ("表：(16, 8)", not "表： (16, 8)"), no space between two Chinese characters ("带键值缓存",
not "带 键值缓存"), and no line break inside a Chinese sentence of a Markdown paragraph (a
browser shows such a break as a space: "第 1、 2 课")."""

from __future__ import annotations

import re

import pytest
from zh_text import all_pieces, pending_rewrite

CJK = "\u3400-\u4dbf\u4e00-\u9fff"
#: Full-width punctuation: CJK symbols (、。「」《》), full-width forms (，：；！？（）), quotes, dashes.
PUNCT = "\u3000-\u303f\uff00-\uffef\u201c\u201d\u2018\u2019\u2014\u2026"
BLOCK_START = re.compile(r"([-*+] |\d+\. |#|\||>|\$\$|```|<)")


def _context(text: str, start: int, end: int) -> str:
    return text[max(0, start - 15) : end + 15].replace("\n", "⏎")


def colon_spaces(text: str) -> list[str]:
    return [_context(text, m.start(), m.end()) for m in re.finditer(r"：[ \t]", text)]


def cjk_spaces(text: str, kind: str = "markdown") -> list[str]:
    """Spaces between two Chinese characters on one line ("与 键值缓存"): Chinese puts no space
    between its words. A printed table aligns its columns with runs of spaces, and a header
    may meet the next one with a single space ("头维数 层"), so in an output a line holding
    a run of two or more spaces is a table row and is left alone."""
    found = []
    for line in text.split("\n"):
        if kind == "output" and re.search(r"\S {2,}\S", line):
            continue
        found += [
            _context(line, m.start(), m.end())
            for m in re.finditer(f"[{CJK}][ \t\u00a0\u3000]+(?=[{CJK}])", line)
        ]
    return found


def soft_breaks(markdown: str) -> list[str]:
    """Line breaks inside a Markdown paragraph next to Chinese: after or before full-width
    punctuation, or between two Chinese characters. (A break between a Chinese character and a
    Latin word or formula shows as the space Chinese text puts there anyway.) Code blocks
    (fenced or indented), display math, tables, headings, list items' starts and hard breaks are left alone."""
    found, fence, math = [], False, False
    lines = markdown.split("\n")
    for a, b in zip(lines, lines[1:]):
        stripped = a.strip()
        if stripped.startswith("```"):
            fence = not fence
        if stripped.startswith("$$") and stripped.count("$$") == 1:
            math = not math
        if (
            fence
            or math
            or not stripped
            or not b.strip()
            or a.startswith(("    ", "\t"))
        ):
            continue
        if (
            BLOCK_START.match(b.lstrip())
            or stripped[0] in "|#"
            or a.endswith(("  ", "\\"))
        ):
            continue
        x, y = a.rstrip()[-1], b.lstrip()[0]
        if (
            re.match(f"[{PUNCT}]", x)
            or re.match(f"[{PUNCT}]", y)
            or re.match(f"[{CJK}][{CJK}]", x + y)
        ):
            found.append(f"{a[-15:]}⏎{b[:15]}")
    return found


PIECES = all_pieces()


def test_no_space_after_a_full_width_colon():
    found = [
        f"{place}: «{c}»"
        for place, kind, text in PIECES
        if kind != "comment"
        for c in colon_spaces(text)
    ]
    assert not found, (
        f"{len(found)} full-width colons followed by a space:\n" + "\n".join(found)
    )


def test_no_space_between_chinese_characters():
    found = [
        f"{place}: «{c}»"
        for place, kind, text in PIECES
        if kind != "comment" and not pending_rewrite(place)
        for c in cjk_spaces(text, kind)
    ]
    assert not found, f"{len(found)} spaces between Chinese characters:\n" + "\n".join(
        found
    )


def test_no_line_break_inside_a_chinese_sentence():
    found = [
        f"{place}: «{c}»"
        for place, kind, text in PIECES
        if kind in ("markdown", "notes", "readme")
        for c in soft_breaks(text)
    ]
    assert not found, f"{len(found)} soft line breaks next to Chinese:\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("表： (16, 8)", True),
        ("表：(16, 8)", False),
    ],
)
def test_the_colon_check_reads_a_planted_case(text, bad):
    assert bool(colon_spaces(text)) is bad


@pytest.mark.parametrize(
    ("text", "kind", "bad"),
    [
        ("识别它与 键值缓存一起使用时的陷阱", "markdown", True),
        ("**(c) 带 键值缓存的动态 NTK。**", "markdown", True),
        ("两个\u3000汉字", "notes", True),
        ("可见部分上的 键偏置 - 因果偏置", "output", True),
        ("识别它与键值缓存一起使用时的陷阱", "markdown", False),
        ("带键值缓存（KV cache）的动态 NTK", "markdown", False),
        ("维度对 0 每个词元转 1 rad", "markdown", False),
        ("模型    层\nLlama 2 7B   分块 8192", "output", False),
        ("头维数 层      L'", "output", False),
    ],
)
def test_the_space_check_reads_planted_cases(text, kind, bad):
    assert bool(cjk_spaces(text, kind)) is bad


@pytest.mark.parametrize(
    ("markdown", "bad"),
    [
        ("第 1、\n2 课", True),
        ("这是一段\n中文", True),
        ("见 Press\n（2022）", True),
        ("公式\n$x$ 如下", False),
        ("- 第一项\n- 第二项", False),
        ("```\n中文\n中文\n```", False),
        ("    代码\n    代码", False),
        ("一行\n\n另一段", False),
    ],
)
def test_the_line_break_check_reads_planted_cases(markdown, bad):
    assert bool(soft_breaks(markdown)) is bad
