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
"""

from __future__ import annotations

import contextlib
import gettext
import warnings
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
    """`message` in the current language (words shown by the browser)."""
    return _state["translation"].gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural of a message with a count, in the current language:
    `ngettext("{n} pair", "{n} pairs", n).format(n=n)` (Chinese has one form)."""
    return _state["translation"].ngettext(singular, plural, n)


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
    "N_",
    "_",
    "_fig",
    "cjk_font",
    "get_language",
    "language",
    "ngettext",
    "set_language",
]
