"""The Chinese text a reader of the Chinese edition sees, cut into named pieces, for the tests of
its vocabulary (test_glossary.py) and typography (test_zh_typography.py).

A piece is (place, kind, text): place names the file and cell ("zh/12_extrapolation_lab.ipynb
[12]", "README.zh-CN.md", "rope_lib.po: <msgid>"); kind is "markdown", "output", "comment",
"notes", "readme" or "message". Code is left out (the Chinese lessons share their code with
the English ones: identifiers such as `kept` are code, not words), except its comments.
"""

from __future__ import annotations

import io
import json
import tokenize
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
ZH = ROOT / "notebooks" / "zh"
CATALOG = ROOT / "rope_lib" / "locale" / "zh" / "LC_MESSAGES" / "rope_lib.po"
README = ROOT / "README.zh-CN.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.zh-CN.md"
GLOSSARY = ZH / "术语表.md"

#: Files being rewritten this round, whose successors are checked: the checks added in this
#: round (a stray space between Chinese characters, a number written with 弧度) leave their
#: current text alone until the rewrite lands. Remove an entry once its file is gone.
PENDING_REWRITE: tuple[str, ...] = ()


def pending_rewrite(place: str) -> bool:
    """Whether a piece's place lies in a file listed in PENDING_REWRITE."""
    return place.split(" [")[0] in PENDING_REWRITE


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _comments(source: str) -> str:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return ""
    return "\n".join(t.string for t in tokens if t.type == tokenize.COMMENT)


def output_text(output: dict) -> str:
    """What a stored output shows as text: a stream, an error, or a result's text/plain."""
    if output.get("output_type") == "stream":
        return _text(output.get("text"))
    if output.get("output_type") == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    return _text(output.get("data", {}).get("text/plain"))


def notebook_pieces(path: Path) -> list[tuple[str, str, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    pieces = []
    for i, cell in enumerate(cells):
        place = f"zh/{path.name} [{i}]"
        source = _text(cell["source"])
        if cell["cell_type"] == "markdown":
            pieces.append((place, "markdown", source))
            continue
        if cell["cell_type"] != "code":
            continue
        pieces.append((place, "comment", _comments(source)))
        for output in cell.get("outputs", []):
            pieces.append((place, "output", output_text(output)))
    return pieces


def message_pieces() -> list[tuple[str, str, str]]:
    with CATALOG.open("rb") as f:
        catalog = read_po(f)
    pieces = []
    for message in catalog:
        if not message.id:
            continue
        msgid = message.id if isinstance(message.id, str) else message.id[0]
        strings = (
            message.string if isinstance(message.string, tuple) else (message.string,)
        )
        for string in strings:
            pieces.append((f"rope_lib.po: {msgid[:50]!r}", "message", string or ""))
    return pieces


def lessons() -> list[Path]:
    return sorted(ZH.glob("[0-9][0-9]_*.ipynb"))


def teacher_notes() -> list[Path]:
    return sorted((ZH / "teacher_notes").glob("*.md"))


def all_pieces() -> list[tuple[str, str, str]]:
    """Every piece of Chinese text the edition shows: lessons, teacher notes, README and
    CONTRIBUTING, the catalog of rope_lib's messages."""
    pieces = [p for path in lessons() for p in notebook_pieces(path)]
    pieces += [
        (f"zh/teacher_notes/{p.name}", "notes", p.read_text(encoding="utf-8"))
        for p in teacher_notes()
    ]
    pieces.append((README.name, "readme", README.read_text(encoding="utf-8")))
    pieces.append(
        (CONTRIBUTING.name, "readme", CONTRIBUTING.read_text(encoding="utf-8"))
    )
    return pieces + message_pieces()
