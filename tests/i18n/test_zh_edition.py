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

ROOT = Path(__file__).resolve().parents[2]
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


# --- no English left in what the Chinese lessons print or draw --------------------------
#: An exception's message is shown as Python, NumPy, torch or rope_lib raise it: the same
#: text the learner's own session prints, in English in every edition (rope_lib's errors
#: are part of its API). It runs from "SomethingError:" to the end of the line, plus the
#: lines indented under it (or the one line after an error name that ends its line).
ERROR_MESSAGE = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning)\b\s*[:：]")
#: A token holding one of these is code, a number or a formula, not a sentence:
#: `inv_freq`, `x.shape[-2]`, `b=10000`, `128/128`, `'qk'`, `f(x`, `1e-6`, `cos/sin`.
CODE_LIKE = re.compile(r"[_.=\[\]{}/\\<>^*|`'\"#@~$%&+]|[A-Za-z]\(|\d")
LATIN_WORD = re.compile(r"[A-Za-z]+")
#: What separates the Latin stretches of a Chinese line: Chinese characters and
#: punctuation (a stretch is then split into tokens at its spaces).
NOT_A_TOKEN_BUT_SPACE = re.compile(r"[\u3000-\u303f\uff00-\uffef\u4e00-\u9fff“”‘’]+")
OPERATORS = {"=", "==", "!=", "<", ">", "<=", ">=", "->", "+", "-", "*", "**", "/", "@"}
#: Latin words a Chinese output may show, each for a reason:
ALLOWED_WORDS = frozenset(
    # names of models, model families, papers and methods, which Chinese text writes
    # in Latin letters too (RoPE, not 旋转位置编码, in a table of models)
    "RoPE ALiBi YaRN NoPE NTK PI LongRoPE RoFormer RoPER VideoRoPE LLaMA Llama Meta "
    "Qwen Gemma DeepSeek Mistral Nemo Phi mini Pythia NeoX GPT OSS BLOOM MPT GLM SmolLM "
    "Command Cohere Scout VL Pixtral DINOv InternVL LLaVA BERT Transformer MLA GQA MLP "
    "KV Instruct "
    # libraries and optimizers, by their names, and the optimizer's usual abbreviations
    # for learning rate and weight decay
    "transformers torch PyTorch NumPy sympy JupyterLab Hugging Face vLLM SGD Adam "
    "AdamW lr wd "
    # Python's and torch's values as they print
    "True False None nan inf tensor dtype "
    # units and their abbreviations (tqdm's it/s too)
    "rad nat nats fps it FLOPs "
    # mathematics written in ASCII: functions, Greek letters spelled out, the terms of
    # art Chinese papers leave in English (softmax, logit)
    "max min sqrt cos sin exp ln log Re Im conj sum softmax logit logits Attn PE id ids "
    "Delta theta lambda gamma phi alpha beta mu pi".split()
)
#: The course's notation letters (README): glued into a product with a capital (sL, HW)
#: they are a formula (lower-case pairs would let "is" and "in" through).
NOTATION = set("bdhiklmnqrstvwxyHLTW")


def _output_texts(cell: dict):
    """The text a learner reads in a code cell's outputs: streams and plain-text results
    (not the text/plain of an image, which is only its repr)."""
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            yield "".join(output["text"])
        elif "text/plain" in output.get("data", {}):
            if not any(kind.startswith("image/") for kind in output["data"]):
                yield "".join(output["data"]["text/plain"])


def _without_error_messages(text: str) -> list[str]:
    lines, kept, inside, next_line = text.split("\n"), [], False, False
    for line in lines:
        if inside and (next_line or line.startswith((" ", "\t"))):
            next_line = False
            continue
        inside = False
        found = ERROR_MESSAGE.search(line)
        if found:
            inside, next_line = True, not line[found.end() :].strip()
            line = line[: found.start()]
        kept.append(line)
    return kept


def _code_words(cells: list[dict]) -> set[str]:
    """The lesson's own code words: the one-word strings of its code cells ('dog',
    'interleaved', the keys of the lab's results) and the words its prose writes as code
    (`(kept, blended, interpolated)`, `truncate: false`). Variable names do not count
    (`pair`, `error` and `ratio` are English words too), nor words inside a sentence of a
    string or an f-string."""
    words = set()
    for cell in cells:
        source = _source(cell)
        if cell["cell_type"] == "markdown":
            # fenced code (a folded solution's) first, so that its backticks do not
            # pair with those of the inline code after it
            for block in re.findall(r"```.*?```", source, flags=re.DOTALL):
                words.update(re.findall(r"[A-Za-z_]\w*", block))
            source = re.sub(r"```.*?```", " ", source, flags=re.DOTALL)
            for span in re.findall(r"`([^`]+)`", source):
                words.update(re.findall(r"[A-Za-z_]\w*", span))
            continue
        lines = source.splitlines()
        python = "\n".join("" if ln.lstrip()[:1] in "%!" else ln for ln in lines)
        tree = ast.parse(python)
        in_fstring = {
            id(part)
            for node in ast.walk(tree)
            if isinstance(node, ast.JoinedStr)
            for part in node.values
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in in_fstring
                and re.fullmatch(r"[A-Za-z_][\w-]*", node.value)
            ):
                words.update({node.value, *node.value.split("-")})
    return words


def english_words(line: str, allowed: set[str]) -> list[str]:
    """The English words of `line` that are not code, numbers, formulas, names or units.

    A word is code when its token holds code characters (CODE_LIKE), is written in
    CamelCase (a class: GPTNeoXRotaryEmbedding), or stands beside an operator or an
    index or a shape, as in `gram == gram.T`, `delta = 1`, `** steps`,
    `scores [2, 3, 5, 5]`, `positions (2, 5)`."""
    found = []
    for segment in NOT_A_TOKEN_BUT_SPACE.split(line):
        tokens = segment.split()
        for k, token in enumerate(tokens):
            if CODE_LIKE.search(token) or re.search(r"[a-z][A-Z]", token):
                continue
            before = tokens[k - 1] if k else ""
            after = tokens[k + 1] if k + 1 < len(tokens) else ""
            if (
                before in OPERATORS
                or after in OPERATORS
                or re.match(r"\[|\(\d", after)  # an index or a shape
            ):
                continue
            for word in LATIN_WORD.findall(token):
                if (
                    word not in allowed
                    and word not in ALLOWED_WORDS
                    and len(word) > 1  # a variable, an item (a), GPT-J, Command A
                    and not (
                        len(word) <= 3 and set(word) <= NOTATION and not word.islower()
                    )  # a product of notation letters, sL
                ):
                    found.append(word)
    return found


def english_left(cells: list[dict], extra: set[str] = frozenset()) -> list[str]:
    """Every output line of a Chinese lesson with English words in it, by cell."""
    from rope_lib.scaling import ROPE_FREQUENCY_FUNCTIONS  # rope types, as configs say

    allowed = _code_words(cells) | set(ROPE_FREQUENCY_FUNCTIONS) | set(extra)
    found = []
    for index, cell in enumerate(cells):
        for text in _output_texts(cell):
            for line in _without_error_messages(text):
                if words := english_words(line, allowed):
                    found.append(f"cell {index}: {words} in {line.strip()[:100]!r}")
    return found


#: matplotlib calls and keywords whose strings a figure draws.
FIGURE_TEXT_CALLS = {
    "set_title",
    "set_xlabel",
    "set_ylabel",
    "suptitle",
    "supxlabel",
    "supylabel",
    "text",
    "annotate",
    "set_label",
}
FIGURE_TEXT_KEYWORDS = {"label", "title", "xlabel", "ylabel"}


def english_in_figures(cells: list[dict]) -> list[str]:
    """English words in the strings a Chinese lesson's code gives matplotlib to draw
    (titles, axis labels, legend labels, texts): the PNGs themselves hold no text to
    read back."""
    allowed = _code_words(cells)
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        lines = _source(cell).splitlines()
        python = "\n".join("" if ln.lstrip()[:1] in "%!" else ln for ln in lines)
        for node in ast.walk(ast.parse(python)):
            if not isinstance(node, ast.Call):
                continue
            drawn = [k.value for k in node.keywords if k.arg in FIGURE_TEXT_KEYWORDS]
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in FIGURE_TEXT_CALLS:
                drawn += node.args
            for argument in drawn:
                for part in ast.walk(argument):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        text = re.sub(r"\$[^$]*\$", "", part.value)  # mathtext
                        if words := english_words(text, allowed):
                            found.append(f"cell {index}: {words} in {part.value!r}")
    return found


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_outputs_leave_no_english(lesson):
    cells = _cells(ZH / lesson)
    found = english_left(cells) + english_in_figures(cells)
    assert not found, f"{lesson}: English in the Chinese lesson:\n" + "\n".join(found)


def test_the_english_check_catches_sentences_and_lets_code_through():
    allowed = {"qk"}
    for line in (
        "max |by hand - theta|: below 1e-6",
        "angle error in bfloat16 (rad)     pair 0   pair 1",
        "BLOOM 176B (ALiBi)   2048  ALiBi, 112 heads",
        "未收录：Phi-3 mini 128k: LongRoPE with 48 searched factors per list",
        "extrapolated 21 个维度对：0..20",
    ):
        assert english_words(line, allowed), line
    for line in (
        "max |rope_lib - b^(-2i/r)|：低于 1e-7（float32 对 float64）",
        "第 0-4 层 sliding_attention: default，底数 10000",
        "还不对：'sinusoidal'：应为 ['input', 'qk', 'scores'] 之一",
        "Llama 3.1 8B     8192   131072  llama3 b=500000 128/128",
        "PI 之后 L' = sL 处的覆盖率：True；softmax 缩放 x 1.8739",
        "训练 rope（现场）:   0%|          | 0/150 [00:00<?, ?it/s]",
    ):
        assert not english_words(line, allowed | {"rope", "llama3", "default"}), line
    text = (
        "rope_lib，d = 63： ValueError：\n    d_model must be even, got 63\n"
        "NotImplementedError:\nModule [M] is missing the required forward function\n"
        "(c) RuntimeError: The size of tensor a (4) must match ...\n"
        "but this is English"
    )
    kept = _without_error_messages(text)
    assert [english_words(line, set()) for line in kept] == [
        [],
        [],
        [],
        ["but", "this", "is", "English"],
    ]
    figure = {
        "cell_type": "code",
        "source": 'ax.set_title("位置 m")\nax.plot(x, label="the slow pairs")\n',
        "outputs": [],
    }
    assert english_in_figures([figure]) == [
        "cell 0: ['the', 'slow', 'pairs'] in 'the slow pairs'"
    ]


#: The lessons whose tables name the lab's and rope_lib.pretrained's methods and schemes.
METHOD_LESSONS = ("12_extrapolation_lab.ipynb", "15_real_llm.ipynb")


def method_ids() -> set[str]:
    """The ids code uses for the lab's schemes, methods and fine-tune controls and for
    rope_lib.pretrained's methods and probes ('rope', 'linear', 'dynamic_ntk',
    'yarn_no_attention_factor', 'pi_band'...): a reader sees their names instead."""
    from rope_lib.lab.figures import CONTROLS, LABELS
    from rope_lib.pretrained.results import METHOD_NAMES

    return set(LABELS) | set(CONTROLS) | set(METHOD_NAMES)


def method_ids_in(text: str, ids: set[str]) -> list[str]:
    """The ids written as a word of `text` (case counts: 'PI', 'RoPE' and 'None' are
    names, not the ids 'pi', 'rope' and 'none')."""
    words = re.findall(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_])", text)
    return [word for word in words if word in ids]


@pytest.mark.parametrize("lesson", METHOD_LESSONS)
def test_chinese_outputs_name_methods_not_their_ids(lesson):
    ids = method_ids()
    found = [
        f"cell {index}: {words} in {line.strip()[:100]!r}"
        for index, cell in enumerate(_cells(ZH / lesson))
        for text in _output_texts(cell)
        for line in text.split("\n")
        if (words := method_ids_in(line, ids))
    ]
    assert not found, f"{lesson}: method ids in the Chinese outputs:\n" + "\n".join(
        found
    )


def test_the_method_id_check_finds_ids_and_lets_names_through():
    ids = method_ids()
    assert method_ids_in("dynamic_ntk (×3)   2.42", ids) == ["dynamic_ntk"]
    assert method_ids_in("plain         8,192 个词元", ids) == ["plain"]
    assert method_ids_in("把 `None` 换成一个方法名，例如 'linear'", ids) == ["linear"]
    assert method_ids_in("yarn_no_attention_factor     2.37", ids) == [
        "yarn_no_attention_factor"
    ]
    for line in (
        "动态 NTK（×3）  2.42  2.01 2.45 2.65 2.35",
        "YaRN，不带注意力缩放因子  2.37",
        "普通 RoPE（对照：只用文本）  1.49 0.18",
        "还不对：把 `None` 换成一个方法名，例如 'PI'",
        "Llama 3  0.95  1.02",
    ):
        assert not method_ids_in(line, ids), line
