"""The text the language layer builds (rope_lib.language): messages whose spaces follow the
script of what is inserted, and tables padded by display width.

- every template of the Chinese catalog, filled with Chinese and with Latin words, has no
  space between two Chinese characters, and a space between a Chinese character and an
  inserted Latin word or number;
- `table` lines up columns of Chinese, Latin and numbers (a Chinese character is two
  columns wide), translates its headers and labels, and names the argument of any input it
  cannot take.
"""

from __future__ import annotations

import importlib.util
import re
import string
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import torch

from rope_lib.language import (
    _,
    display_width,
    language,
    ngettext,
    spaced_format,
    table,
)

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "translations", ROOT / "scripts" / "translations.py"
)
translations = importlib.util.module_from_spec(spec)
spec.loader.exec_module(translations)
CATALOG = translations.read_catalog()


def _wide(character: str) -> bool:
    return unicodedata.east_asian_width(character) in "WF" or character in "“”‘’"


def _han(character: str) -> bool:
    return (
        bool(character)
        and _wide(character)
        and unicodedata.category(character).startswith("L")
    )


def spaces_between_chinese(text: str) -> list[str]:
    """Every ' ' standing between two Chinese characters (or full-width marks)."""
    return [
        text[max(0, k - 6) : k + 7]
        for k in range(1, len(text) - 1)
        if text[k] == " " and _wide(text[k - 1]) and _wide(text[k + 1])
    ]


def _filled(template: str, word: str) -> str:
    """The template with every field filled: `word` where the field takes text, a
    number where it has a format spec (.4f, :,); an indexed field ({value[0]:.4g}) gets a
    list of them."""
    fields = {}
    for _literal, name, spec, _conversion in string.Formatter().parse(template):
        if name is not None:
            value = 12.5 if spec else word
            fields[re.split(r"[.\[]", name)[0]] = [value] * 4 if "[" in name else value
    return template.format(**fields)


def _templates():
    for message in CATALOG:
        if message.id:
            yield message.id if isinstance(message.id, str) else message.id[0]


@pytest.mark.parametrize("word", ["新的底数", "inv_freq"])
def test_every_chinese_template_spaces_by_the_script_of_what_is_inserted(word):
    problems = []
    with language("zh"):
        for msgid in _templates():
            message = CATALOG[msgid]
            template = (
                _(msgid)
                if isinstance(message.id, str)
                else ngettext(message.id[0], message.id[1], 2)
            )
            text = _filled(template, word)
            if stray := spaces_between_chinese(text):
                problems.append(f"{msgid!r} -> {text!r}: {stray}")
            for k in (m.start() for m in re.finditer(re.escape(word), text)):
                before, after = text[k - 1 : k], text[k + len(word) : k + len(word) + 1]
                latin = word.isascii()
                if latin and (_han(before) or _han(after)):
                    problems.append(f"{msgid!r} -> {text!r}: no space beside {word}")
    assert not problems, "\n".join(problems)


def test_spacing_follows_the_inserted_script():
    template = "{name} 仍是 None：请把它换成 {expected}"
    assert (
        spaced_format(template, name="新的底数", expected="一个数")
        == "新的底数仍是 None：请把它换成一个数"
    )
    assert (
        spaced_format(template, name="inv_freq", expected="(8,)")
        == "inv_freq 仍是 None：请把它换成 (8,)"
    )
    # a Latin word or a number beside a Chinese character gets one space
    assert spaced_format("第{n}层", n=3) == "第 3 层"
    assert spaced_format("{a}：{b}", a="头", b="x") == "头：x"  # full-width colon: none
    # spaces inside a value, and English, are left alone
    assert spaced_format("值为 {v}", v="中 文") == "值为中 文"
    assert spaced_format("{a} and {b:.2f}", a="x", b=1) == "x and 1.00"
    assert spaced_format("{{literal}} {} {}", "中", "文") == "{literal} 中文"
    assert spaced_format("{1} {0}", "a", "中") == "中 a"
    with pytest.raises(ValueError, match="manual field specification"):
        spaced_format("{0} {}", "a", "b")  # as str.format
    assert spaced_format("{d[k]!r} 个", d={"k": "x"}) == "'x' 个"
    assert spaced_format("宽 {w:{n}d}", w=3, n=4) == "宽    3"


def test_english_messages_are_formatted_by_python_word_for_word():
    message = _("{name} is still None: replace it with {expected}")
    assert type(message) is str
    assert message.format(name="中文", expected="x") == (
        "中文 is still None: replace it with x"
    )
    with language("zh"):
        chinese = _("{name} is still None: replace it with {expected}")
        assert chinese.format(name="x", expected="y") == chinese.format_map(
            {"name": "x", "expected": "y"}
        )
    assert type(_("Correct: ")) is str


# --- display width and tables -----------------------------------------------------------
def test_display_width_counts_a_chinese_character_as_two_columns():
    assert display_width("RoPE") == 4
    assert display_width("维度对") == 6
    assert display_width("维度对 0") == 8
    assert display_width("（弧度）") == 8  # full-width brackets
    assert display_width("θ·Δ") == 3  # Greek and the middle dot: one column each
    assert display_width("e\u0301") == 1  # a combining accent takes no column
    assert display_width("") == 0
    with pytest.raises(TypeError, match="text must be a str, got int"):
        display_width(3)


def _starts(line: str, cells: list[str]) -> list[int]:
    """The display column where each of `cells` starts in `line`."""
    columns, position = [], 0
    for cell in cells:
        at = line.index(cell, position)
        columns.append(display_width(line[:at]))
        position = at + len(cell)
    return columns


def test_a_table_of_chinese_latin_and_numbers_lines_up():
    text = table(
        ["模型", "L", "比值"],
        [["Llama 2 7B", 4096, 0.5], ["通义千问", 131072, 12.25], ["", None, 3]],
        floatfmt=".2f",
        intfmt=",",
    )
    lines = text.split("\n")
    assert lines[1] == "Llama 2 7B    4,096   0.50"
    assert lines[2] == "通义千问    131,072  12.25"
    # every line ends at the same display column: numbers right-aligned
    assert {display_width(line) for line in lines} == {display_width(lines[0])}
    assert _starts(lines[0], ["模型", "L"])[0] == _starts(lines[2], ["通义千问"])[0]
    assert lines[3].strip() == "3"  # an int keeps intfmt, None and "" are empty


def test_headers_and_labels_go_through_the_language_layer():
    rows = [["kept", 21], ["blended", 25], ["divided by s", 18]]
    english = table(["method", "pairs"], rows)
    assert english.split("\n")[1].startswith("kept")
    with language("zh"):
        chinese = table(["method", "pairs"], rows)
        empty = table(["", "x"], [["", 1]])
    assert chinese.split("\n")[0].startswith("方法")
    assert [line.split()[0] for line in chinese.split("\n")[1:]] == [
        "保留",
        "过渡",
        "除以",
    ]
    assert "Content-Type" not in empty  # "" is not looked up (gettext's header)
    widths = {display_width(line) for line in chinese.split("\n")}
    assert len(widths) == 1, chinese


def test_table_takes_numbers_of_any_kind_and_formats_per_column():
    text = table(
        ["a", "b", "c", "d"],
        [[np.float32(0.5), torch.tensor(2.0), np.int64(7), True]],
        floatfmt=[".1f", ".3f", "", ""],
    )
    assert text.split("\n")[1].split() == ["0.5", "2.000", "7", "True"]
    rows = ([k, k * k] for k in range(3))  # any iterable of rows
    assert table(["k", "k^2"], rows).split("\n")[-1].split() == ["2", "4"]
    assert table(["x"], []) == "x"


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: table("model", [["x"]]), TypeError, r"headers must be a list"),
        (lambda: table(["a", 3], [["x", 1]]), TypeError, r"headers\[1\] must be a str"),
        (lambda: table([], []), ValueError, r"headers must name at least one"),
        (lambda: table(["a"], 5), TypeError, r"rows must be a list of rows, got int"),
        (lambda: table(["a"], "abc"), TypeError, r"rows must be a list of rows"),
        (lambda: table(["a"], ["abc"]), TypeError, r"rows\[0\] must be a list"),
        (lambda: table(["a", "b"], [[1]]), ValueError, r"rows\[0\] must have 2 cells"),
        (lambda: table(["a"], [[1j]]), TypeError, r"rows\[0\]\[0\] must be text or"),
        (lambda: table(["a"], [[{}]]), TypeError, r"rows\[0\]\[0\] .* got dict"),
        (
            lambda: table(["a"], [[torch.ones(3)]]),
            TypeError,
            r"rows\[0\]\[0\] .* got Tensor",
        ),
        (lambda: table(["a"], [["two\nlines"]]), ValueError, r"rows\[0\]\[0\] must be"),
        (lambda: table(["a"], [[1.0]], floatfmt="%d"), ValueError, r"floatfmt has an"),
        (lambda: table(["a"], [[1]], intfmt=["", ""]), ValueError, r"intfmt must have"),
        (lambda: table(["a"], [[1]], floatfmt=2), TypeError, r"floatfmt must be a"),
        (lambda: table(["a"], [[1]], gap=0), ValueError, r"gap must be a whole"),
    ],
)
def test_table_names_the_argument_it_cannot_take(call, error, message):
    with pytest.raises(error, match=message):
        call()
