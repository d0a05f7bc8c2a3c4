"""The Chinese edition speaks one vocabulary: notebooks/zh/术语表.md, the glossary, gives each
English concept one Chinese term and lists the variants no longer used. These tests fail when a
Chinese lesson (its prose, printed outputs and code comments), a teacher note, README.zh-CN.md or
a message of rope_lib's catalog uses a rejected variant, and when the glossary says a term is
used in a place where it is not.

A variant marked "（别名）" in the glossary is a common alias a reader meets elsewhere ("KV 缓存"
for 键值缓存): a document may name it once, as a gloss in the full-width parentheses right after
the term's first use in that document ("键值缓存（KV cache，也常称 KV 缓存）"); any other use fails.
A document is one lesson, one teacher note, the README, CONTRIBUTING, or one message."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from zh_text import (
    GLOSSARY,
    all_pieces,
    lessons,
    message_pieces,
    notebook_pieces,
    pending_rewrite,
    teacher_notes,
)

#: The concepts the Chinese review found used several ways: each must have a row.
REQUIRED = (
    "scaling factor s",
    "base (of the frequencies)",
    "claim",
    "solution",
    "source",
    "extrapolation",
    "interpolation",
    "attention sink",
    "yardstick",
    "bucket",
)


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str
    rejected: tuple[re.Pattern, ...]
    places: tuple[str, ...]
    aliases: tuple[re.Pattern, ...] = ()

    def forms(self) -> list[str]:
        """The Chinese words to look for: '保留 / 过渡 / 内插' gives three, '缩放因子（简称因子）'
        gives 缩放因子, '等：“Chen 等（2023）”' gives 等."""
        main = re.split(r"[（：]", self.chinese)[0]
        return [f.strip() for f in main.split(" / ") if f.strip()]


ALIAS = "（别名）"


def _pattern(text: str) -> re.Pattern:
    text = text.strip().removesuffix(ALIAS).strip()
    if len(text) > 2 and text.startswith("/") and text.endswith("/"):
        return re.compile(text[1:-1])
    return re.compile(re.escape(text))


def _split_variants(cell: str) -> list[str]:
    """Comma-separated variants; a /regex/ may itself hold commas."""
    return [
        v.strip()
        for v in re.findall(r"\s*(/(?:[^/\\]|\\.)+/|[^,]+)", cell)
        if v.strip()
    ]


def glossary() -> list[Term]:
    terms = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("英文", "") or set(cells[0]) <= {"-"}:
            continue
        english, chinese, rejected, places = cells
        variants = _split_variants(rejected)
        terms.append(
            Term(
                english,
                chinese,
                tuple(_pattern(v) for v in variants if not v.endswith(ALIAS)),
                tuple(p.strip() for p in places.split(",") if p.strip()),
                tuple(_pattern(v) for v in variants if v.endswith(ALIAS)),
            )
        )
    return terms


TERMS = glossary()


def _document(place: str) -> str:
    """The document a piece belongs to: a lesson's cells are one document."""
    return place.split(" [")[0]


def gloss_span(text: str, term: Term) -> tuple[int, int] | None:
    """Where the full-width parentheses right after the term's first use in a text open and
    close, or None if the term is not used or its first use has no such parentheses."""
    starts = [
        (m.start(), m.end())
        for f in term.forms()
        if (m := re.search(re.escape(f), text))
    ]
    if not starts:
        return None
    end = min(starts)[1]
    if not text.startswith("（", end):
        return None
    depth = 0
    for i in range(end, len(text)):
        depth += {"（": 1, "）": -1}.get(text[i], 0)
        if depth == 0:
            return end, i + 1
    return None


def rejected_uses(pieces, terms=None) -> list[tuple[str, Term, str, str]]:
    """Where a piece of text uses a rejected variant: (place, term, variant, context). An
    alias is let through once per document, as a gloss at the term's first use there."""
    documents: dict[str, list[tuple[str, str]]] = {}
    for place, _kind, text in pieces:
        documents.setdefault(_document(place), []).append((place, text))
    found = []
    for parts in documents.values():
        text, starts = "", []
        for place, part in parts:
            starts.append((len(text), place))
            text += part + "\n\n"

        def place_of(index: int) -> str:
            return [p for s, p in starts if s <= index][-1]

        for term in terms or TERMS:
            gloss = gloss_span(text, term)
            for pattern in term.rejected + term.aliases:
                glossed = pattern not in term.aliases
                for match in pattern.finditer(text):
                    if (
                        not glossed
                        and gloss
                        and gloss[0] <= match.start()
                        and match.end() <= gloss[1]
                    ):
                        glossed = True
                        continue
                    context = text[
                        max(0, match.start() - 12) : match.end() + 12
                    ].replace("\n", " ")
                    found.append(
                        (place_of(match.start()), term, match.group(), context)
                    )
    return found


def test_the_glossary_is_read_whole():
    assert len(TERMS) >= 40
    names = " | ".join(t.english for t in TERMS)
    for concept in REQUIRED:
        assert concept in names, f"the glossary has no row for {concept!r}"
    assert all(t.chinese and t.places for t in TERMS)


def test_no_rejected_variant_anywhere():
    found = [
        f"{place}: {variant!r} ({term.english} is {term.chinese}) in «{context}»"
        for place, term, variant, context in rejected_uses(all_pieces())
        if not pending_rewrite(place)
    ]
    assert not found, "rejected variants in the Chinese edition:\n" + "\n".join(found)


KV = next(t for t in TERMS if t.english == "KV cache")


@pytest.mark.parametrize(
    ("lesson", "caught"),
    [
        # the alias once, as a gloss at the first use: let through
        ("键值缓存（KV cache，也常称 KV 缓存）只存旋转后的键。之后再说键值缓存。", []),
        # a second use of the alias, even right after the gloss: caught
        (
            "键值缓存（KV cache，也常称 KV 缓存）只存旋转后的键。KV 缓存会变大。",
            ["KV 缓存"],
        ),
        # the gloss not at the first use: caught
        ("先说键值缓存。后面再注：键值缓存（也常称 KV 缓存）。", ["KV 缓存"]),
        # the alias before the term, or without the term: caught
        ("KV 缓存，即键值缓存。", ["KV 缓存"]),
        ("滚动的 KV 缓存。", ["KV 缓存"]),
        # a rejected variant that is no alias is caught even as a gloss
        ("词元（也称令牌）是模型读的单位。", ["令牌"]),
    ],
)
def test_an_alias_is_let_through_once_as_a_gloss(lesson, caught):
    pieces = [("zh/99_planted.ipynb [0]", "markdown", lesson)]
    found = [variant for _p, _t, variant, _c in rejected_uses(pieces)]
    assert found == caught, (lesson, found)


def test_an_alias_gloss_is_read_per_document():
    """Each lesson (or note, or the README) may gloss the alias at its own first use; two
    cells of one lesson are one document."""
    gloss = "键值缓存（KV cache，也常称 KV 缓存）"
    two_lessons = [
        ("zh/98_a.ipynb [3]", "markdown", gloss),
        ("zh/99_b.ipynb [5]", "markdown", gloss),
    ]
    assert not rejected_uses(two_lessons)
    two_cells = [
        ("zh/99_b.ipynb [3]", "markdown", gloss),
        ("zh/99_b.ipynb [5]", "output", "带 KV 缓存"),
    ]
    assert [p for p, *_ in rejected_uses(two_cells)] == ["zh/99_b.ipynb [5]"]
    assert KV.aliases and not KV.rejected


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.english[:30])
def test_a_planted_variant_is_caught(term):
    """Each rejected variant, planted in a real paragraph of lesson 12, is reported; the
    glossary's own term is not."""
    paragraph = next(
        t
        for _p, kind, t in notebook_pieces(lessons()[8])
        if kind == "markdown" and len(t) > 200
    )
    for pattern in term.rejected + term.aliases:
        example = _an_example(pattern)
        planted = [
            ("planted", "markdown", paragraph[:100] + f" {example} " + paragraph[100:])
        ]
        found = [(t, variant) for _p, t, variant, _c in rejected_uses(planted)]
        assert any(t == term and variant in example for t, variant in found), (
            term.english,
            example,
        )
    for form in term.forms():
        assert not any(p.search(form) for p in term.rejected + term.aliases), (
            term.english,
            form,
        )


def _an_example(pattern: re.Pattern) -> str:
    """A string the pattern matches: the literal itself, or an example written for the regex."""
    examples = {
        r"(?<![A-Za-z])桶": "按桶",
        r"结论\s*\d": "结论 1",
        r"马尔可夫源": "马尔可夫源",
        r"\bnats\b": "2.3 nats",
        r"(?<!存储)偏移": "相对偏移",
        r"外推\s*[\x2f、，]\s*过渡": "外推/过渡",
        r"\(kept, blended": "(kept, blended, interpolated)",
        r"\bkept 和": "kept 和 interpolated",
        r"倍数\s*\$?s": "倍数 $s",
        r"<summary>\s*答案": "<summary>答案</summary>",
        r"\bet al\b": "Chen et al. 2023",
        r"\b[A-Z][a-z]+ and [A-Z][a-z]+[ （(]*\d{4}": "Mohtashami and Jaggi 2023",
        r"(?<=[\d$π}])\s*弧度": "转 1 弧度",
        r"pi\s*弧度": "一圈是 2*pi 弧度",
    }
    example = examples.get(pattern.pattern, pattern.pattern.replace("\\", ""))
    assert pattern.search(example), f"no example for {pattern.pattern!r}"
    return example


def _place_text(place: str) -> str:
    if place.isdigit():
        path = next(p for p in lessons() if p.name.startswith(place.zfill(2)))
        return "\n".join(t for _p, _k, t in notebook_pieces(path))
    if place == "README":
        return next(t for p, _k, t in all_pieces() if p.startswith("README"))
    if place == "笔记":
        return "\n".join(p.read_text(encoding="utf-8") for p in teacher_notes())
    if place == "提示":
        return "\n".join(t for _p, _k, t in message_pieces())
    raise AssertionError(f"unknown place {place!r} in the glossary")


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.english[:30])
def test_each_term_is_used_where_the_glossary_says(term):
    missing = [
        f"{form} not in {place}"
        for place in term.places
        for form in term.forms()
        if form not in _place_text(place)
    ]
    assert not missing, f"{term.english}: " + "; ".join(missing)
