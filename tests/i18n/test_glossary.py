"""The Chinese edition speaks one vocabulary: notebooks/zh/术语表.md, the glossary, gives each
English concept one Chinese term and lists the variants no longer used. These tests fail when a
Chinese lesson (its prose, printed outputs and code comments), a teacher note, README.zh-CN.md or
a message of rope_lib's catalog uses a rejected variant, and when the glossary says a term is
used in a place where it is not."""

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

    def forms(self) -> list[str]:
        """The Chinese words to look for: '保留 / 过渡 / 内插' gives three, '缩放因子（简称因子）'
        gives 缩放因子, '等：“Chen 等（2023）”' gives 等."""
        main = re.split(r"[（：]", self.chinese)[0]
        return [f.strip() for f in main.split(" / ") if f.strip()]


def _pattern(text: str) -> re.Pattern:
    text = text.strip()
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
        terms.append(
            Term(
                english,
                chinese,
                tuple(_pattern(v) for v in _split_variants(rejected)),
                tuple(p.strip() for p in places.split(",") if p.strip()),
            )
        )
    return terms


TERMS = glossary()


def rejected_uses(pieces) -> list[tuple[str, Term, str, str]]:
    """Where a piece of text uses a rejected variant: (place, term, variant, context)."""
    found = []
    for place, _kind, text in pieces:
        for term in TERMS:
            for pattern in term.rejected:
                for match in pattern.finditer(text):
                    context = text[
                        max(0, match.start() - 12) : match.end() + 12
                    ].replace("\n", " ")
                    found.append((place, term, match.group(), context))
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
    ]
    assert not found, "rejected variants in the Chinese edition:\n" + "\n".join(found)


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.english[:30])
def test_a_planted_variant_is_caught(term):
    """Each rejected variant, planted in a real paragraph of lesson 8, is reported; the
    glossary's own term is not."""
    paragraph = next(
        t
        for _p, kind, t in notebook_pieces(lessons()[8])
        if kind == "markdown" and len(t) > 200
    )
    for pattern in term.rejected:
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
        assert not any(p.search(form) for p in term.rejected), (term.english, form)


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
