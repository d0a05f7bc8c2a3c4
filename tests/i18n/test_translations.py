"""rope_lib's Chinese words (rope_lib.language, gettext; catalog in rope_lib/locale/zh/).

- every message marked in the code (`_`, `_fig`, `N_`, `ngettext`) has a Chinese
  translation that keeps its {placeholders} (name, conversion and spec), and the compiled
  .mo says what the .po says, message by message (`make translations` after editing either);
- a figure with every Chinese figure word draws without a missing glyph;
- without a CJK font the figure words stay English (never boxes) and the learner is told;
- set_language refuses anything but "en"/"zh", naming the argument.
"""

from __future__ import annotations

import gettext
import importlib.util
import logging
import re
import string
import warnings
from pathlib import Path

import matplotlib
import pytest
from babel.messages.extract import extract_from_file

import rope_lib
from rope_lib import language as L

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "translations", ROOT / "scripts" / "translations.py"
)
translations = importlib.util.module_from_spec(spec)
spec.loader.exec_module(translations)

CATALOG = translations.read_catalog()
CJK = re.compile(r"[\u4e00-\u9fff]")
CODE = translations.extract()


def _fields(text: str) -> list[tuple]:
    """The replacement fields of a str.format template: (name, spec, conversion)."""
    return sorted(
        (name, spec, conversion)
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    )


def _ids(message) -> tuple[str, ...]:
    return message.id if isinstance(message.id, tuple) else (message.id,)


def _strings(message) -> tuple[str, ...]:
    return message.string if isinstance(message.string, tuple) else (message.string,)


def test_catalog_has_every_message_of_the_code_and_no_other():
    in_code = {m.id for m in CODE if m.id}
    in_catalog = {m.id for m in CATALOG if m.id}
    missing = in_code - in_catalog
    assert not missing, (
        f"not in the catalog (run `make translations`): {sorted(missing)}"
    )
    stale = in_catalog - in_code
    assert not stale, f"in the catalog, gone from the code: {sorted(stale)}"
    assert len(in_code) > 100, f"only {len(in_code)} messages marked"


def test_every_message_is_translated_into_chinese_with_its_placeholders():
    problems = []
    for message in CATALOG:
        if not message.id:
            continue
        strings = _strings(message)
        if message.fuzzy or not all(strings):
            problems.append(f"untranslated or fuzzy: {_ids(message)[0]!r}")
            continue
        for source in _ids(message):
            for translated in strings:
                try:
                    same = _fields(source) == _fields(translated)
                except ValueError as error:
                    problems.append(f"{translated!r} is not a valid template: {error}")
                    continue
                if not same:
                    problems.append(
                        f"placeholders differ: {source!r} {_fields(source)} -> "
                        f"{translated!r} {_fields(translated)}"
                    )
        if any(c.isalpha() for c in _ids(message)[0]) and not any(
            CJK.search(s) for s in strings
        ):
            problems.append(f"no Chinese in the translation of {_ids(message)[0]!r}")
    assert not problems, "\n".join(problems)


def test_compiled_catalog_says_what_the_po_says():
    mo = translations.CATALOG.with_suffix(".mo")
    with mo.open("rb") as file:
        compiled = gettext.GNUTranslations(file)
    for message in CATALOG:
        if not message.id or not all(_strings(message)):
            continue  # untranslated: the test above says so
        if isinstance(message.id, tuple):
            assert compiled.ngettext(*message.id, 1) == message.string[0]
        else:
            assert compiled.gettext(message.id) == message.string, message.id


def _figure_words() -> list[str]:
    """The Chinese of every message the code marks with _fig (words matplotlib draws)."""
    ids = {
        m[1]
        for path in translations.sources()
        for m in extract_from_file("python", path, keywords={"_fig": None})
        if m[1]
    }
    assert len(ids) >= 20, f"only {len(ids)} figure messages"
    return [CATALOG[i].string for i in sorted(ids)]


def test_a_chinese_figure_has_every_glyph(caplog):
    assert L.cjk_font(), "no CJK font: the set-up (make) installs pylopdf-fonts-zh-cn"
    with L.language("zh"):
        figure, ax = plt.subplots(figsize=(6.4, 8))
        for row, words in enumerate(_figure_words()):
            ax.text(0, row, words, parse_math=False, fontsize=6)
        ax.set_title("旋转位置编码：$\\theta_i = b^{-2i/d}$，位置 $m$")  # mathtext too
        ax.set_xlabel(L._fig("position m"))
        with warnings.catch_warnings(), caplog.at_level(logging.WARNING, "matplotlib"):
            warnings.simplefilter("error")  # "Glyph ... missing from font(s)"
            figure.canvas.draw()
        plt.close(figure)
    missing = [r.getMessage() for r in caplog.records if "glyph" in r.getMessage()]
    assert not missing, missing  # mathtext logs its missing glyphs


def test_without_a_cjk_font_figures_keep_english(monkeypatch):
    monkeypatch.setattr(L, "cjk_font", lambda: None)
    with pytest.warns(UserWarning, match="no font with Chinese glyphs"):
        L.set_language("zh")
    try:
        assert L._fig("position m") == "position m"
        assert L._("Correct: ") != "Correct: "  # the browser draws these: Chinese
        assert matplotlib.rcParams["font.family"] == ["sans-serif"]
    finally:
        L.set_language("en")


def test_language_switches_back_and_forth():
    assert rope_lib.get_language() == "en"
    with L.language("zh"):
        assert L._("Not yet: ") == "还不对："
        assert matplotlib.rcParams["font.family"][0] == L.cjk_font()
    assert L._("Not yet: ") == "Not yet: "
    assert matplotlib.rcParams["font.family"] == ["sans-serif"]
    with L.language("zh"), L.language("en"):
        assert L._fig("Not yet: ") == "Not yet: "


@pytest.mark.parametrize(
    "bad, error",
    [("fr", ValueError), ("ZH", ValueError), (None, TypeError), (1, TypeError)],
)
def test_set_language_names_the_argument(bad, error):
    with pytest.raises(error, match=r"language must be.*('en', 'zh')"):
        L.set_language(bad)
    assert L.get_language() == "en"
