"""The language of rope_lib's learner-facing words: exercise feedback, widget labels and
readouts, figure titles and axis labels. English by default; the Chinese lessons
(notebooks/zh/) call

    from rope_lib import set_language
    set_language("zh")

Translations use the standard library's gettext: the catalog is
rope_lib/locale/zh/LC_MESSAGES/rope_lib.po (compiled to rope_lib.mo beside it; `make
translations` extracts new messages from the code, merges them in and compiles). In the code:

    from ..language import _, _fig, N_
    _("{name} should have shape {expected}, got {got}").format(name=..., expected=..., got=...)
    ax.set_xlabel(_fig("position m"))     # words matplotlib draws
    LABELS = {"pi": N_("position interpolation")}   # marked at import, translated when used

`_` is for words the browser shows (feedback, widget labels, HTML readouts). `_fig` is for
words matplotlib draws: a figure needs a font with CJK glyphs, so `_fig` gives the Chinese only
when one is installed (`cjk_font()`), and the English otherwise, never empty boxes.
Placeholders are named (`{angle}`), never positional, so a translation may reorder them.

In Chinese, `.format` on a translated message sets the spaces at each inserted value by the
script of what is inserted (`spaced_format`): no space between two Chinese characters
("请把它换成张量或数字列表", not "换成 张量"), one between a Chinese character and a Latin
letter or digit ("第 3 层"), so one template serves Chinese and Latin insertions alike. English
messages are formatted by Python's own `str.format`, unchanged.

`table(headers, rows)` prints a table whose headers and labels go through `_` and whose
columns are padded by display width (a Chinese character takes two columns).
"""

from __future__ import annotations

import contextlib
import gettext
import numbers
import string
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

#: The languages the course speaks: English (the default) and Simplified Chinese.
LANGUAGES = ("en", "zh")
DOMAIN = "rope_lib"
LOCALE_DIR = Path(__file__).parent / "locale"

#: CJK fonts matplotlib may find on a machine, best first: Noto Sans SC (from the PyPI
#: package pylopdf-fonts-zh-cn, which the set-up installs), Debian's fonts-noto-cjk, and the
#: fonts of common desktops.
CJK_FONT_FAMILIES = (
    "Noto Sans SC",
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "PingFang SC",
    "Microsoft YaHei",
    "SimHei",
    # last resort: the Japanese face has every Simplified Chinese glyph (some drawn the
    # Japanese way)
    "Noto Sans CJK JP",
)

#: Parts of the file names of those fonts (Debian: NotoSansCJK-Regular.ttc, wqy-microhei.ttc).
CJK_FONT_FILES = (
    "NotoSansCJK",
    "NotoSansSC",
    "SourceHanSans",
    "wqy-",
    "PingFang",
    "msyh",
)

_state = {"language": "en", "translation": gettext.NullTranslations()}


def set_language(language: str) -> None:
    """Speak `language` ("en" or "zh") in every message, widget and figure made from now on.

    With "zh", figures are set in the CJK font (`cjk_font()`, first in font.family; the
    default fonts after it for any glyph it lacks; the course's sizes are kept); without such
    a font, figure words stay English (a warning says how to install one) while feedback and
    widget labels, which the browser draws, are Chinese."""
    if not isinstance(language, str):
        raise TypeError(
            f"language must be a str, one of {LANGUAGES}, got {type(language).__name__}"
        )
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    if language == "en":
        translation = gettext.NullTranslations()
    else:
        translation = gettext.translation(DOMAIN, LOCALE_DIR, languages=[language])
    _state["language"] = language
    _state["translation"] = translation
    _use_font(language)


def get_language() -> str:
    """The language set by `set_language` ("en" until then)."""
    return _state["language"]


@contextlib.contextmanager
def language(name: str):
    """`with language("zh"):` speak `name` inside the block only."""
    before = get_language()
    set_language(name)
    try:
        yield
    finally:
        set_language(before)


def _(message: str) -> str:
    """`message` in the current language (words shown by the browser). In Chinese it
    comes back as a `Message`, whose `.format` spaces inserted values by their script."""
    return _translated(_state["translation"].gettext(message))


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message with a count, in the current language:
    `ngettext("{n} pair", "{n} pairs", n).format(n=n)` (Chinese has one form)."""
    return _translated(_state["translation"].ngettext(singular, plural, n))


def _translated(text: str) -> str:
    return text if _state["language"] == "en" else Message(text)


class Message(str):
    """A translated template: a str whose `format` and `format_map` are
    `spaced_format`, so that the spaces at each inserted value follow the script of the
    value (what `_` returns in Chinese)."""

    __slots__ = ()

    def format(self, /, *args, **kwargs) -> str:
        return spaced_format(self, *args, **kwargs)

    def format_map(self, mapping: Mapping) -> str:
        return spaced_format(self, **mapping)


def _is_han(character: str) -> bool:
    """A Chinese (CJK) character, not CJK punctuation."""
    return unicodedata.east_asian_width(character) in "WF" and unicodedata.category(
        character
    ).startswith("L")


def _is_tight(character: str) -> bool:
    """A character that takes no space beside another like it: Chinese characters,
    full-width punctuation, and the curly quotes of Chinese sentences."""
    return unicodedata.east_asian_width(character) in "WF" or character in "“”‘’"


def _is_latin(character: str) -> bool:
    return character.isascii() and character.isalnum()


def _space(before: str, spaces: str, after: str) -> str:
    """The spaces between two characters at the join of a template and an inserted
    value: none between two Chinese characters (or full-width punctuation), one between
    a Chinese character and a Latin letter or digit, otherwise as written."""
    if spaces and _is_tight(before) and _is_tight(after):
        return ""
    if not spaces and (
        (_is_han(before) and _is_latin(after)) or (_is_latin(before) and _is_han(after))
    ):
        return " "
    return spaces


_MIXED_NUMBERING = (
    "cannot switch between automatic field numbering and manual field specification"
)


def spaced_format(template: str, /, *args, **kwargs) -> str:
    """`template.format(*args, **kwargs)` with the spaces around each inserted value
    set by the script on both sides of the join (see `_space`): a template written
    "{name} 仍是 None" gives "新的底数仍是 None" and "inv_freq 仍是 None". Spaces inside
    the values are left as they are."""
    formatter = string.Formatter()
    pieces: list[tuple[str, bool]] = []  # (text, is an inserted value)
    auto = 0
    for literal, field, spec, conversion in formatter.parse(template):
        if literal:
            pieces.append((literal, False))
        if field is None:
            continue
        if field == "":  # "{}": numbered automatically, as str.format does
            if auto is None:
                raise ValueError(_MIXED_NUMBERING)
            field, auto = str(auto), auto + 1
        elif field[0].isdigit():
            if auto:
                raise ValueError(_MIXED_NUMBERING)
            auto = None
        value, _key = formatter.get_field(field, args, kwargs)
        value = formatter.convert_field(value, conversion)
        spec = formatter.vformat(spec, args, kwargs) if spec else ""
        pieces.append((formatter.format_field(value, spec), True))
    joined = []
    for k, (text, is_value) in enumerate(pieces):
        before = pieces[k - 1][0] if k and pieces[k - 1][1] else ""
        after = pieces[k + 1][0] if k + 1 < len(pieces) and pieces[k + 1][1] else ""
        if not is_value and (before or after):
            text = _respaced(text, before[-1:], after[:1])
        joined.append(text)
    return "".join(joined)


def _respaced(text: str, before: str, after: str) -> str:
    """Template text between the inserted characters `before` and `after` ("" where no
    value touches it), its spaces at both joins set by `_space`."""
    core = text.strip(" ")
    if not core:  # only spaces between two values
        return _space(before, text, after) if before and after else text
    lead = text[: len(text) - len(text.lstrip(" "))]
    trail = text[len(text.rstrip(" ")) :]
    if before:
        lead = _space(before, lead, core[0])
    if after:
        trail = _space(core[-1], trail, after)
    return lead + core + trail


def N_(message: str) -> str:
    """Mark `message` for translation without translating it (module-level tables); pass
    it through `_` or `_fig` where it is shown."""
    return message


def _fig(message: str) -> str:
    """`message` in the current language when matplotlib can draw it: the Chinese needs a
    CJK font (`cjk_font()`); without one the English is kept."""
    if _state["language"] != "en" and cjk_font() is None:
        return message
    return _(message)


def display_width(text: str) -> int:
    """The columns `text` takes in a monospaced output: 2 for a wide (Chinese, full-width)
    character (unicodedata.east_asian_width W or F), 0 for a combining mark or a
    zero-width format character, 1 for any other."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    width = 0
    for character in text:
        if unicodedata.east_asian_width(character) in "WF":
            width += 2
        elif unicodedata.category(character) not in ("Mn", "Me", "Cf"):
            width += 1
    return width


def _formats(name: str, value, columns: int) -> list[str]:
    """floatfmt / intfmt: one format spec for every column, or one per column."""
    specs = [value] * columns if isinstance(value, str) else value
    if not isinstance(specs, Sequence) or not all(isinstance(f, str) for f in specs):
        raise TypeError(
            f"{name} must be a format spec (str) or a list of one per column, "
            f"got {type(value).__name__}"
        )
    if len(specs) != columns:
        raise ValueError(
            f"{name} must have one format spec per column ({columns}), got {len(specs)}"
        )
    for spec in specs:
        try:
            format(1.5 if name == "floatfmt" else 1, spec)
        except (ValueError, TypeError) as error:
            raise ValueError(
                f"{name} has an invalid format spec {spec!r}: {error}"
            ) from None
    return list(specs)


def _cell(value, where: str):
    """A table cell as text or a number (numbers stay numbers, to be right-aligned)."""
    if value is None:
        return ""
    if isinstance(value, str):
        if any(unicodedata.category(c) == "Cc" for c in value):
            raise ValueError(
                f"{where} must be one line of text, got {value!r} (a line break or "
                "another control character would break the table)"
            )
        return value
    if not isinstance(value, numbers.Number) and callable(getattr(value, "item", None)):
        try:  # numpy scalars, one-element tensors and arrays
            value = value.item()
        except (ValueError, RuntimeError, TypeError):
            pass
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Real):
        return value
    raise TypeError(
        f"{where} must be text or a real number, got {type(value).__name__}"
    )


def _words(text: str) -> str:
    """Text of a table in the current language ("" stays empty: gettext would give the
    catalog's header for it)."""
    return str(_(text)) if text else ""


def _table_cells(headers, rows, gap) -> list[list]:
    """table()'s arguments checked: its rows as lists of checked cells (_cell)."""
    if isinstance(headers, (str, bytes)) or not isinstance(headers, Sequence):
        raise TypeError(
            f"headers must be a list or tuple of str, one per column, got "
            f"{type(headers).__name__}"
        )
    if not headers:
        raise ValueError("headers must name at least one column, got none")
    for k, header in enumerate(headers):
        if not isinstance(header, str):
            raise TypeError(f"headers[{k}] must be a str, got {type(header).__name__}")
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise TypeError(f"rows must be a list of rows, got {type(rows).__name__}")
    if isinstance(gap, bool) or not isinstance(gap, numbers.Integral) or gap < 1:
        raise ValueError(f"gap must be a whole number >= 1, got {gap!r}")
    columns = len(headers)
    cells = []
    for i, row in enumerate(rows):
        if isinstance(row, (str, bytes, Mapping)) or not isinstance(row, Sequence):
            raise TypeError(
                f"rows[{i}] must be a list or tuple of cells, got {type(row).__name__}"
            )
        if len(row) != columns:
            raise ValueError(
                f"rows[{i}] must have {columns} cells (one per header), got {len(row)}"
            )
        cells.append([_cell(value, f"rows[{i}][{j}]") for j, value in enumerate(row)])
    return cells


def table(headers, rows, *, floatfmt="g", intfmt="", gap: int = 2) -> str:
    """A plain-text table for print(): `headers` (one str per column) and `rows` (each a
    list with one cell per column: a str, a real number, or None for an empty cell).

    Headers and text cells go through `_` (so a word rope_lib knows, e.g. a regime name,
    comes out in the learner's language); numbers are formatted with `floatfmt` or
    `intfmt` (a format spec, or one per column) and right-aligned, text left-aligned; a
    column whose non-empty cells are all numbers right-aligns its header too. Columns
    are padded by `display_width`, so a Chinese character counts as two columns and a
    Chinese table lines up like an English one."""
    cells = _table_cells(headers, rows, gap)
    columns = len(headers)
    floats = _formats("floatfmt", floatfmt, columns)
    ints = _formats("intfmt", intfmt, columns)
    numeric = [
        any(not isinstance(row[j], str) for row in cells)
        and all(not isinstance(row[j], str) or row[j] == "" for row in cells)
        for j in range(columns)
    ]
    text = [[_words(header) for header in headers]]
    for row in cells:
        text.append(
            [
                _words(value)
                if isinstance(value, str)
                else format(
                    value, ints[j] if isinstance(value, numbers.Integral) else floats[j]
                )
                for j, value in enumerate(row)
            ]
        )
    widths = [max(display_width(line[j]) for line in text) for j in range(columns)]
    lines = []
    for line in text:
        padded = []
        for j, value in enumerate(line):
            pad = " " * (widths[j] - display_width(value))
            padded.append(pad + value if numeric[j] else value + pad)
        lines.append((" " * gap).join(padded).rstrip())
    return "\n".join(lines)


@cache
def cjk_font() -> str | None:
    """The family name of a font with CJK glyphs that matplotlib can use, or None.

    Looks first for the pip package pylopdf-fonts-zh-cn (Noto Sans SC, SIL Open Font
    License), then for the fonts matplotlib already knows (CJK_FONT_FAMILIES), then for
    CJK font files installed after matplotlib built its font cache (e.g. Debian's
    fonts-noto-cjk), registering the file it finds with matplotlib."""
    from matplotlib import font_manager

    try:
        import pylopdf_fonts_zh_cn
    except ImportError:
        pass
    else:
        path = Path(pylopdf_fonts_zh_cn.sans_path())
        if path.is_file():
            font_manager.fontManager.addfont(str(path))
    for attempt in range(2):
        installed = {font.name for font in font_manager.fontManager.ttflist}
        found = next((name for name in CJK_FONT_FAMILIES if name in installed), None)
        if found or attempt:
            return found
        for path in font_manager.findSystemFonts():
            if any(part in Path(path).name for part in CJK_FONT_FILES):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError):  # a file FreeType cannot read
                    continue
    return None


def _use_font(language: str) -> None:
    """Chinese: the CJK font first in rcParams["font.family"] (it has Latin and Greek
    letters too, and mathtext sets the words around `$...$` in the first family), the
    default fonts after it for any glyph it lacks. English: the CJK font taken out again."""
    import matplotlib

    families = [
        f for f in matplotlib.rcParams["font.family"] if f not in CJK_FONT_FAMILIES
    ]
    font = cjk_font() if language != "en" else None
    if language != "en" and font is None:
        warnings.warn(
            "no font with Chinese glyphs found, so figure labels stay in English: "
            "`pip install pylopdf-fonts-zh-cn` (or Debian's `apt-get install "
            "fonts-noto-cjk`) and restart the kernel",
            stacklevel=3,
        )
    matplotlib.rcParams["font.family"] = ([font] if font else []) + families


__all__ = [
    "CJK_FONT_FAMILIES",
    "LANGUAGES",
    "Message",
    "N_",
    "_",
    "_fig",
    "cjk_font",
    "display_width",
    "get_language",
    "language",
    "ngettext",
    "set_language",
    "spaced_format",
    "table",
]
