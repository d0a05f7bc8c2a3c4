"""Teacher notes (notebooks/teacher_notes/NN_*.md, and notebooks/zh/teacher_notes/ for the
Chinese edition): one per lesson, with the sections a teacher needs, and nothing in them that
the lesson or its library does not back up. Every test runs on both editions; a Chinese
lesson's widgets and checkers are built and called with rope_lib.set_language("zh"), so its
notes quote the Chinese control names and hints.

- every lesson notebook has notes named after it, titled like the lesson, with the
  required sections, a 45-minute plan whose timings add up, questions with expected
  answers, readable in about five minutes, and no trace of the source notes;
- the live-demo script is run against the lesson's widgets (one per widget cell), built
  exactly as the notebook builds them: every setting it names (`control description =
  value`, in order) must be a control of one of them, be in range, take effect and
  redraw without error. Lessons without a widget
  say so, and every variable the script tells the teacher to edit is assigned in the
  notebook;
- every misconception listed (the checker says `hint`) is produced by the lesson's own
  checker when it is called with a wrong answer from _wrong_answers() below, and every
  wrong answer there is listed in the notes. A lesson that _wrong_answers() does not list
  gets its wrong answers from its checkers' declarations (declared_wrong_answers): every
  Mistake whose match is a value (or an either(...) of values).
"""

from __future__ import annotations

import ast
import json
import math
import re
from contextlib import nullcontext
from pathlib import Path

import matplotlib
import pytest
import torch

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
ENGLISH = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
#: A lesson is named by its path under notebooks/ without .ipynb: "03_rotation_2d" or, in
#: the Chinese edition, "zh/03_rotation_2d".
LESSONS = ENGLISH + [f"zh/{lesson}" for lesson in ENGLISH]

SECTIONS = (
    "Goals",
    "Plan for 45 minutes",
    "Stop and ask",
    "Live demo",
    "Misconceptions the checkers catch",
    "If you are short of time",
    "As a slideshow",
)
#: What the Chinese notes call the same things.
CHINESE = {
    "sections": dict(
        zip(
            SECTIONS,
            (
                "目标",
                "45 分钟教学安排",
                "停下来提问",
                "现场演示",
                "检查器能发现的误解",
                "时间不够时",
                "幻灯片放映",
            ),
        )
    ),
    "Teacher notes": "教师笔记",
    "# Lesson ": "# 第 ",
    "Expected:": "预期答案：",
    "kernel": "内核",
    "no widget": "没有交互控件",
    "checker says": "检查器会说",
}
MIN_WORDS, MAX_WORDS = 500, 1250  # "readable in about five minutes"
# Chinese reads at about 300-500 characters a minute; a Chinese character is counted as a
# word, so the same notes come to about 1.6 "words" per English word
MIN_WORDS_ZH, MAX_WORDS_ZH = 800, 2600
FORBIDDEN = re.compile(
    r"\bseed notes?\b|\bthe seeds\b|\bsource notes\b|\bseed \d{3}\b|\bnote \d{3}\b",
    re.I,
)


# --- reading notebooks and notes -----------------------------------------------------
def _chinese(lesson: str) -> bool:
    return lesson.startswith("zh/")


def _say(lesson: str, english: str) -> str:
    """The words the notes of this lesson's edition use for `english`."""
    return CHINESE[english] if _chinese(lesson) else english


def _speaking(lesson: str):
    """rope_lib speaks the lesson's language inside this block."""
    from rope_lib.language import language

    return language("zh") if _chinese(lesson) else nullcontext()


def _stem(lesson: str) -> str:
    return lesson.rsplit("/", 1)[-1]


def _notes_folder(lesson: str) -> Path:
    return NOTEBOOKS / Path(lesson).parent / "teacher_notes"


def _notebook(lesson: str) -> dict:
    return json.loads((NOTEBOOKS / f"{lesson}.ipynb").read_text(encoding="utf-8"))


def _source(cell) -> str:
    return (
        "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    )


def _code_cells(lesson: str) -> list[str]:
    return [_source(c) for c in _notebook(lesson)["cells"] if c["cell_type"] == "code"]


def _python(source: str) -> ast.Module:
    """A code cell as Python: IPython magics and shell lines dropped."""
    lines = [
        line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))
    ]
    return ast.parse("\n".join(lines))


def _widget_cells(lesson: str) -> list[str]:
    """Code cells showing a live widget: tag nbval-ignore-output, calling .widget()."""
    cells = []
    for cell in _notebook(lesson)["cells"]:
        tags = cell.get("metadata", {}).get("tags", [])
        if (
            cell["cell_type"] == "code"
            and "nbval-ignore-output" in tags
            and ".widget()" in _source(cell)
        ):
            cells.append(_source(cell))
    return cells


def _notes(lesson: str) -> str:
    return (_notes_folder(lesson) / f"{_stem(lesson)}.md").read_text(encoding="utf-8")


def _sections(lesson: str) -> dict[str, str]:
    """The notes' sections by their English names (headings in the lesson's language)."""
    parts = re.split(r"^## ", _notes(lesson), flags=re.M)
    english = {v: k for k, v in CHINESE["sections"].items()} if _chinese(lesson) else {}
    return {
        english.get(heading := part.split("\n", 1)[0].strip(), heading): (
            part.split("\n", 1)[1] if "\n" in part else ""
        )
        for part in parts[1:]
    }


def _words(text: str) -> int:
    """English words, and Chinese characters counted as words."""
    return len(re.findall(r"[A-Za-z][A-Za-z'’-]*|[\u4e00-\u9fff]", text))


def _squash(text: str) -> str:
    return " ".join(text.split())


# --- every lesson has notes with the required sections -------------------------------
@pytest.mark.parametrize("edition", ["", "zh/"])
def test_every_lesson_has_notes_and_every_notes_file_a_lesson(edition):
    assert ENGLISH, "no lesson notebooks found"
    notes = sorted(p.stem for p in (NOTEBOOKS / edition / "teacher_notes").glob("*.md"))
    assert notes == ENGLISH, f"{edition}teacher_notes {notes} against lessons {ENGLISH}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_title_matches_the_lesson(lesson):
    first = next(c for c in _notebook(lesson)["cells"] if c["cell_type"] == "markdown")
    title = _source(first).splitlines()[0]
    assert title.startswith(_say(lesson, "# Lesson ")), title
    heading = _notes(lesson).splitlines()[0]
    assert heading == f"# {_say(lesson, 'Teacher notes')} · " + title[2:], (
        heading,
        title,
    )
    assert f"`notebooks/{lesson}.ipynb`" in _notes(lesson)


@pytest.mark.parametrize("lesson", LESSONS)
def test_required_sections_in_order_and_readable_in_five_minutes(lesson):
    sections = _sections(lesson)
    assert tuple(sections) == SECTIONS, f"{lesson}: sections {list(sections)}"
    least = 45 if _chinese(lesson) else 30
    for name, body in sections.items():
        assert _words(body) >= least, (
            f"{lesson}: section {name!r} has only {_words(body)} words"
        )
    total = _words(_notes(lesson))
    low, high = (
        (MIN_WORDS_ZH, MAX_WORDS_ZH) if _chinese(lesson) else (MIN_WORDS, MAX_WORDS)
    )
    assert low <= total <= high, f"{lesson}: {total} words"


@pytest.mark.parametrize("lesson", LESSONS)
def test_plan_covers_45_minutes_without_gaps(lesson):
    rows = re.findall(
        r"^\|\s*(\d+)\s*[–-]\s*(\d+)\s*\|",
        _sections(lesson)["Plan for 45 minutes"],
        flags=re.M,
    )
    assert len(rows) >= 4, f"{lesson}: plan has {len(rows)} timed rows"
    spans = [(int(a), int(b)) for a, b in rows]
    assert spans[0][0] == 0 and spans[-1][1] == 45, (
        f"{lesson}: plan runs {spans[0][0]}..{spans[-1][1]}"
    )
    for (a, b), (c, _) in zip(spans, spans[1:]):
        assert a < b == c, f"{lesson}: plan rows {a}–{b} then {c}–..."


@pytest.mark.parametrize("lesson", LESSONS)
def test_questions_come_with_expected_answers(lesson):
    items = re.split(r"^\d+\. ", _sections(lesson)["Stop and ask"], flags=re.M)[1:]
    assert len(items) >= 3, f"{lesson}: {len(items)} questions"
    for item in items:
        assert ("?" in item or "？" in item) and _say(lesson, "Expected:") in item, (
            f"{lesson}: question without expected answer: {item[:80]}"
        )


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_trace_of_the_source_notes_and_slides_explained(lesson):
    text = _notes(lesson)
    assert not FORBIDDEN.search(text), FORBIDDEN.search(text).group(0)
    assert "ω" not in text and "omega" not in text.lower(), (
        "course notation: theta_i, never omega_i"
    )
    slides = _squash(_sections(lesson)["As a slideshow"])
    # the live slideshow is jupyterlab-slideshow's (tests/browser/test_slideshow.py): its
    # toolbar button, its keys; RISE's slides cannot show ipywidgets 8 widgets
    for words in ("Toggle Deck", "Space", "Shift+Space", "Esc"):
        assert words in slides, (
            f"{lesson}: the slideshow section does not say {words!r}"
        )
    assert "RISE" not in slides and "Alt+R" not in slides, f"{lesson}: RISE's keys"
    if _widget_cells(lesson):
        assert _say(lesson, "kernel") in slides, (
            f"{lesson}: say that the widget slide needs the kernel running"
        )


# --- the demo script runs against the lesson's widget --------------------------------
SETTING = re.compile(r"`([^`=]+?) = ([^`]+)`")


def _lab_results() -> dict:
    """The results lesson 12 reads: the folder in ROPE_LAB_RESULTS, as the notebook."""
    import os

    folder = Path(os.environ.get("ROPE_LAB_RESULTS", NOTEBOOKS / "lab_results"))
    if not folder.is_absolute() and not folder.exists():
        folder = NOTEBOOKS / folder  # the notebook resolves it from notebooks/
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def _earlier_values(lesson: str) -> dict:
    """Values a widget cell takes from earlier cells other than imports: lessons 12's and
    11's results, read from the folder the notebook reads."""
    if _stem(lesson) == "15_real_llm":
        from rope_lib.exercises.real_llm import load_results

        return {"results": load_results()}
    return (
        {"results": _lab_results()} if _stem(lesson) == "12_extrapolation_lab" else {}
    )


def _build_widgets(lesson: str) -> list:
    """The lesson's widgets, one per widget cell, each constructed exactly as its cell
    does (same class, same arguments), with the notebook's own rope_lib.widgets
    imports and the values of _earlier_values()."""
    namespace: dict = _earlier_values(lesson)
    imports = []
    for source in _code_cells(lesson):
        for node in ast.walk(_python(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "rope_lib.widgets"
            ):
                imports.append(node)
    exec(compile(ast.Module(body=imports, type_ignores=[]), lesson, "exec"), namespace)
    widgets = []
    for cell in _widget_cells(lesson):
        tree = _python(cell)
        shown = {
            node.func.value.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "widget"
            and isinstance(node.func.value, ast.Name)
        }
        built = [
            eval(compile(ast.Expression(node.value), lesson, "eval"), namespace)
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id in shown for t in node.targets)
        ]
        assert built, (
            f"{lesson}: no `name = Widget(...)` before `name.widget()` in a widget "
            f"cell:\n{cell}"
        )
        widgets.extend(built)
    return widgets


def _number(text: str):
    try:
        return float(text.replace(",", "").replace("_", ""))
    except ValueError:
        return None


def _apply(control, text: str) -> None:
    """Set one control as the demo script says, and check that it took the value."""
    name = control.description
    if isinstance(control.value, tuple):  # several choices: `schemes = rope, alibi`
        labels, values = list(control._options_labels), list(control._options_values)
        wanted = [part.strip() for part in text.split(",")]
        missing = [part for part in wanted if part not in labels]
        assert not missing, f"{name!r} has no options {missing}; options {labels}"
        chosen = tuple(values[labels.index(part)] for part in wanted)
        control.value = chosen
        assert set(control.value) == set(chosen), (name, control.value, chosen)
        return
    if hasattr(control, "_options_labels"):  # Dropdown, SelectionSlider
        labels, values = list(control._options_labels), list(control._options_values)
        number = _number(text)
        matches = [
            i
            for i, (label, value) in enumerate(zip(labels, values))
            if label == text
            or (
                number is not None
                and isinstance(value, (int, float))
                and value == number
            )
        ]
        assert matches, f"{name!r} has no option {text!r}; options {labels}"
        control.value = values[matches[0]]
        assert control.value == values[matches[0]]
        return
    number = _number(text)
    assert number is not None, f"{name!r} is a slider; {text!r} is not a number"
    low, high = control.min, control.max
    if type(control).__name__ == "FloatLogSlider":
        low, high = control.base**low, control.base**high
    assert low <= number <= high, (
        f"{name!r} = {number} is outside its range {low}..{high}"
    )
    control.value = number
    assert math.isclose(control.value, number, rel_tol=1e-9, abs_tol=1e-9), (
        name,
        control.value,
        number,
    )


# (read from the English lesson: its Chinese twin has the same cells, test_zh_edition.py)
WIDGET_LESSONS = [lesson for lesson in LESSONS if _widget_cells(_stem(lesson))]
PLAIN_LESSONS = [lesson for lesson in LESSONS if not _widget_cells(_stem(lesson))]


@pytest.mark.parametrize("lesson", WIDGET_LESSONS)
def test_demo_script_runs_on_the_lessons_widget(lesson):
    settings = SETTING.findall(_sections(lesson)["Live demo"])
    assert len(settings) >= 4, (
        f"{lesson}: the demo names {len(settings)} widget settings"
    )
    with _speaking(lesson):
        _run_demo(lesson, settings)


def _run_demo(lesson: str, settings: list) -> None:
    import matplotlib.pyplot as plt

    widgets = _build_widgets(lesson)
    try:
        by_description = {}
        for widget in widgets:
            for control in widget.controls.values():
                assert control.description not in by_description, (
                    f"{lesson}: two widgets have a control {control.description!r}; "
                    "the demo script could not say which one it means"
                )
                by_description[control.description] = control
        for name, value in settings:
            assert name in by_description, (
                f"{lesson}: the demo sets {name!r}; "
                f"the widgets' controls are {sorted(by_description)}"
            )
            _apply(by_description[name], value.strip())
        for widget in widgets:
            widget.figure.canvas.draw()  # the last state draws
    finally:
        for widget in widgets:
            plt.close(widget.figure)


@pytest.mark.parametrize("lesson", PLAIN_LESSONS)
def test_demo_without_widget_edits_real_variables(lesson):
    demo = _sections(lesson)["Live demo"]
    if _chinese(lesson):
        assert _say(lesson, "no widget") in _notes(lesson)
    else:
        assert "no live widget" in _notes(lesson).lower() or "no widget" in demo.lower()
    assigned = set()
    for source in _code_cells(lesson):
        for node in ast.walk(_python(source)):
            for target in getattr(node, "targets", []) + [
                getattr(node, "target", None)
            ]:
                for name in ast.walk(target) if target is not None else []:
                    if isinstance(name, ast.Name):
                        assigned.add(name.id)
    edits = SETTING.findall(demo)
    assert edits, f"{lesson}: the demo names no value to edit"
    for left, _ in edits:
        for variable in (v.strip() for v in left.split(",")):
            assert variable in assigned, (
                f"{lesson}: the demo edits {variable!r}, never assigned in the notebook"
            )


# --- misconceptions are the checkers' own hints --------------------------------------
def _wrong_answers():
    """lesson -> [(checker module, checker name, wrong answer)]: the listed mistakes."""
    from rope_lib import (
        apply_rope,
        half_to_interleaved,
        interleaved_to_half,
        inv_frequencies,
        rotation_2d,
    )
    from rope_lib.exercises import (
        absolute,
        alibi,
        complex_rope,
        context_extension,
        lab,
        multimodal,
        real_llm,
        rotation,
        todays_models,
        why_position,
    )
    from rope_lib.exercises import scaling_in_models as released
    from rope_lib.exercises import yarn as yarn_exercises

    f64 = torch.float64
    i32 = torch.arange(32, dtype=f64)
    offsets = torch.arange(32, dtype=f64)[:, None]
    theta16 = 10000.0 ** (-torch.arange(0, 16, 2, dtype=f64) / 16)
    dots = torch.cos(offsets * theta16).sum(1)
    i64 = torch.arange(64, dtype=f64)
    q = torch.tensor([0.5, -1.0], dtype=f64)
    (q1, q2), (k1, k2), angle = (0.8, 0.6), (-0.3, 1.1), 1.5
    dot, cross = q1 * k1 + q2 * k2, q1 * k2 - q2 * k1
    qa, ka, va, pos = rotation.rope_attention_inputs()
    rq, rk, rv = (apply_rope(t, pos) for t in (qa, ka, va))
    relative = 8 * inv_frequencies(8).to(f64)
    pair = torch.tensor(3 + 4j)
    turned = pair * torch.polar(torch.tensor(1.0), torch.tensor(0.5))
    w_half = complex_rope.meta_layout_weights()
    # lessons 5 and 6: the right answers of the prediction exercises, one key changed
    changes = {
        "shift": "same",
        "swap": "changes",
        "phase": "same",
        "conjugate": "changes",
    }
    modules = {"wrong": "b", "at position 0": "unchanged"}
    unpermuted = {"m = n": "right", "n = 0": "wrong", "m - n = 1": "wrong"}
    m5, n5 = torch.arange(5)[:, None], torch.arange(5)[None, :]
    causal = (-0.25 * (m5 - n5)).to(f64).masked_fill(n5 > m5, float("-inf"))
    keys = torch.arange(8, dtype=f64)
    symmetric = torch.exp(-0.5 * (5 - keys).abs())
    yarn = yarn_exercises.yarn_by_hand
    mscale16 = 0.1 * math.log(16) + 1
    # lesson 10: the logit multipliers at s = 8, YaRN's and SmolLM2's fitted slope's
    yarn8, fit8 = yarn_exercises._new_factor()[:2]

    # lesson 12: passkey scorers (rows are keys, columns digits), PI's frequencies
    def digit_fraction(predicted, expected):
        return (predicted == expected).double().mean()

    def over_keys(predicted, expected):
        return (predicted == expected).all(dim=0).double().mean()

    def key_count(predicted, expected):
        return (predicted == expected).all(dim=1).sum()

    lab_theta = 10000.0 ** (-torch.arange(0, 32, 2, dtype=f64) / 32)
    # lesson 13: p-RoPE for d = 64, b = 10000, p = 0.5; Llama 4 at m = 16383; Gemma 3's
    # local layers (d = 256, window 1024); DeepSeek-V3's cache (512 + 64, 128 heads)
    p_rope = torch.cat([inv_frequencies(64, 10000.0)[:16].to(f64), torch.zeros(16)])
    neox_32 = inv_frequencies(32, 10000.0).to(f64)
    llama4 = 1 + 0.1 * math.log(1 + (16383 + 1) // 8192)
    local_slow = int((2 * math.pi / inv_frequencies(256, 10000.0).to(f64) > 512).sum())
    global_slow = int((2 * math.pi / inv_frequencies(256, 1e6).to(f64) > 512).sum())
    no_two_pi = int((1 / inv_frequencies(256, 10000.0).to(f64) > 512).sum())
    gemma3_4b = int((2 * math.pi / inv_frequencies(256, 10000.0).to(f64) > 1024).sum())
    # lesson 14: "I see" + a 2 x 3 image + ". ok" (exercise 1), the right ids
    ids = torch.tensor(
        [
            [0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6],
        ]
    )
    text_counted, image_from_zero = ids.clone(), ids.clone()
    text_counted[:, 8:] = torch.tensor([8, 9])
    image_from_zero[:, 2:8] -= 2
    return {
        "00_why_position": [
            (why_position, "check_swapped_outputs", [2, 3, 4, 5]),
            (why_position, "check_swapped_outputs", [5]),
            (
                why_position,
                "check_where_position_goes",
                {
                    "sinusoidal": "input",
                    "learned": "input",
                    "rope": "input",
                    "alibi": "scores",
                },
            ),
            (
                why_position,
                "check_where_position_goes",
                {
                    "sinusoidal": "input",
                    "learned": "qk",
                    "rope": "qk",
                    "alibi": "scores",
                },
            ),
        ],
        "01_sinusoidal": [
            (absolute, "check_wavelengths", 10000 ** (2 * i32 / 64)),
            (absolute, "check_wavelengths", 10000 ** (-2 * i32 / 64)),
            (absolute, "check_wavelengths", torch.ones(64)),
            (absolute, "check_wavelengths", 2 * math.pi * 10000 ** (i32 / 64)),
            (absolute, "check_shift_block", rotation_2d(0.5)),
            (absolute, "check_shift_block", rotation_2d(0.1).T),
            (absolute, "check_offset_dots", dots / 8),
            (absolute, "check_offset_dots", 2 * dots),
            (absolute, "check_offset_dots", torch.sin(offsets * theta16).sum(1)),
        ],
        "02_learned_positions": [
            (
                absolute,
                "check_unfinished_pairs",
                int((10000 ** (2 * i64 / 128) > 512).sum()),
            ),
            (absolute, "check_unfinished_pairs", 31),
            (absolute, "check_unfinished_pairs", 66),
            (absolute, "check_head_offsets", (1, 0)),
            (absolute, "check_head_offsets", (2, -1)),
            (absolute, "check_head_offsets", (2, 1)),
        ],
        "03_rotation_2d": [
            (rotation, "check_rotated_query", rotation_2d(-1.5) @ q),
            (rotation, "check_rotated_query", rotation_2d(math.radians(1.5)) @ q),
            (rotation, "check_transpose_index", 3),
            (rotation, "check_transpose_index", 7),
            (rotation, "check_wish_maps", frozenset({1})),
            (rotation, "check_wish_maps", frozenset({0, 1, 3})),
            (
                rotation,
                "check_closed_form_score",
                dot * math.cos(-angle) + cross * math.sin(-angle),
            ),
            (rotation, "check_closed_form_score", dot * math.cos(angle)),
            (rotation, "check_shifted_positions", (10, 14)),
            (rotation, "check_shifted_positions", (35, 15)),
        ],
        "04_rope_head": [
            (rotation, "check_repeat_offset", 38),
            (rotation, "check_repeat_offset", 50),
            (rotation, "check_relative_angles", relative.repeat_interleave(2)),
            (rotation, "check_relative_angles", torch.remainder(relative, 2 * math.pi)),
            (
                rotation,
                "check_rope_attention",
                (rq @ rk.transpose(-1, -2) / 2).softmax(-1) @ rv,
            ),
            (
                rotation,
                "check_rope_attention",
                (rq @ ka.transpose(-1, -2) / 2).softmax(-1) @ va,
            ),
            (rotation, "check_unrotated_pairs", frozenset({0, 1})),
            (rotation, "check_unrotated_pairs", frozenset(range(6))),
            (
                rotation,
                "check_step_shapes",
                ([10, 64], [1, 1, 10, 64], [4, 8, 10, 64, 2]),
            ),
            (
                rotation,
                "check_step_shapes",
                ([10, 32], [1, 1, 10, 32], [4, 10, 8, 32, 2]),
            ),
        ],
        "05_rope_complex": [
            (complex_rope, "check_score_changes", {**changes, "shift": "changes"}),
            (complex_rope, "check_score_changes", {**changes, "phase": "changes"}),
            (complex_rope, "check_score_changes", {**changes, "swap": "same"}),
            (complex_rope, "check_score_changes", {**changes, "conjugate": "same"}),
            (
                complex_rope,
                "check_complex_rotation",
                pair * torch.polar(torch.tensor(1.0), torch.tensor(-0.5)),
            ),
            (
                complex_rope,
                "check_complex_rotation",
                pair * torch.polar(torch.tensor(1.0), torch.tensor(0.1)),
            ),
            (
                complex_rope,
                "check_complex_rotation",
                [turned.imag.item(), turned.real.item()],
            ),
            # exercise 3 without the conjugate: Re[(2 + i) e^(1.4i) (1 - 3i) e^(0.6i)]
            (complex_rope, "check_complex_score", 2.4657528),
            # the conjugate dropped at the right offset; the positions added
            (complex_rope, "check_complex_score", 7.0703),
            (complex_rope, "check_complex_score", -5.9489),
            # exercise 4: 13.52 rounded down, the arrow turned clockwise, no turn at all
            (complex_rope, "check_best_offset", 13),
            (complex_rope, "check_best_offset", 49),
            (complex_rope, "check_best_offset", 0),
        ],
        "06_rope_layouts": [
            (complex_rope, "check_three_modules", {**modules, "wrong": "a"}),
            (complex_rope, "check_three_modules", {**modules, "wrong": "none"}),
            (
                complex_rope,
                "check_three_modules",
                {**modules, "at position 0": "permuted"},
            ),
            (
                complex_rope,
                "check_meta_layout_weights",
                w_half.view(2, 8, 16)[
                    :, interleaved_to_half(torch.arange(8)), :
                ].reshape(16, 16),
            ),
            (
                complex_rope,
                "check_meta_layout_weights",
                half_to_interleaved(w_half.T).T,
            ),
            (complex_rope, "check_meta_layout_weights", half_to_interleaved(w_half)),
            (complex_rope, "check_unpermuted_scores", {**unpermuted, "m = n": "wrong"}),
            (complex_rope, "check_unpermuted_scores", {**unpermuted, "n = 0": "right"}),
        ],
        "07_rope_in_practice": [
            (complex_rope, "check_slow_pairs", 35),
            (complex_rope, "check_slow_pairs", 14),
            (
                complex_rope,
                "check_slow_pairs",
                int((8192 * 500000.0 ** (-2 * i64 / 128) < 1).sum()),
            ),
            (complex_rope, "check_bfloat16_angle_error", 9 / (2 * math.pi)),
            (complex_rope, "check_bfloat16_angle_error", 9 - 2 * math.pi),
            (complex_rope, "check_bfloat16_angle_error", 4992),
            (complex_rope, "check_bfloat16_angle_error", 1.0),
        ],
        "08_alibi": [
            (alibi, "check_doubled_context", {"head 1": "stay", "head 8": "halve"}),
            (alibi, "check_doubled_context", {"head 1": "stay", "head 8": "stay"}),
            (alibi, "check_twelve_head_slopes", 0.1 * torch.arange(1, 13, dtype=f64)),
            (alibi, "check_twelve_head_slopes", -alibi.SLOPES_12),
            (alibi, "check_twelve_head_slopes", alibi.SLOPES_12.flip(0)),
            (
                alibi,
                "check_twelve_head_slopes",
                2.0 ** (-8 * torch.arange(1, 13, dtype=f64) / 12),
            ),
            (
                alibi,
                "check_twelve_head_slopes",
                2.0 ** (-8 * torch.arange(1, 13, dtype=f64) / 16),
            ),
            (alibi, "check_causal_bias", -0.25 * (m5 - n5).abs().to(f64)),
            (alibi, "check_causal_bias", causal.masked_fill(n5 > m5, 0.0)),
            (alibi, "check_causal_bias", causal.T),
            (alibi, "check_query_weights", symmetric / symmetric.sum()),
            (
                alibi,
                "check_query_weights",
                (-0.5 * (5 - keys)).masked_fill(keys > 5, float("-inf")),
            ),
        ],
        "09_interpolation": [
            (context_extension, "check_first_long_pair", 45),
            (context_extension, "check_first_long_pair", 92),
            (
                context_extension,
                "check_first_long_pair",
                int((1 / inv_frequencies(128, 10000.0) > 4096).nonzero()[0]),
            ),
            (context_extension, "check_ntk_base", 80000.0),
            (context_extension, "check_ntk_base", 10000 * 8 ** (126 / 128)),
            (context_extension, "check_ntk_base", 10000 * 4 ** (128 / 126)),
            (context_extension, "check_ntk_past_arc", []),
            (context_extension, "check_ntk_past_arc", range(46, 64)),
            (context_extension, "check_ntk_past_arc", range(0, 63)),
            (context_extension, "check_ntk_past_arc", range(92, 126, 2)),
            (context_extension, "check_ntk_past_arc", range(58, 63)),
            (context_extension, "check_neighbour_angles", (4.0, 1.0)),
            (context_extension, "check_neighbour_angles", (1.0, 0.25)),
            (context_extension, "check_neighbour_angles", (0.25, 0.25)),
            (context_extension, "check_neighbour_angles", (1.0, 1.0)),
            (context_extension, "check_neighbour_angles", (14.32, 57.3)),
            (context_extension, "check_dynamic_factor", 4.0),
            (context_extension, "check_dynamic_factor", 2.0),
            (context_extension, "check_dynamic_factor", 8.0),
            (context_extension, "check_dynamic_factor", 6.0),
            (context_extension, "check_dynamic_factor", 3.0),
        ],
        # lesson 10 (rope_lib.exercises.yarn)
        "10_yarn": [
            (yarn_exercises, "check_entropy_direction", "up"),
            (yarn_exercises, "check_entropy_direction", "unchanged"),
            (yarn_exercises, "check_new_factor_multiplier", (yarn8**0.5, fit8**0.5)),
            (yarn_exercises, "check_new_factor_multiplier", (yarn8, yarn8)),
            (yarn_exercises, "check_new_factor_multiplier", (fit8, yarn8)),
            (
                yarn_exercises,
                "check_yarn_frequencies",
                yarn(64, 10000.0, 8.0, 2048, invert=True),
            ),
            (
                yarn_exercises,
                "check_yarn_frequencies",
                inv_frequencies(64, 10000.0) / 8,
            ),
            (
                yarn_exercises,
                "check_yarn_frequencies",
                yarn(64, 10000.0, 8.0, 2048, truncate=False),
            ),
            (
                yarn_exercises,
                "check_yarn_frequencies",
                yarn(64, 10000.0, 8.0, 4096),  # the lesson's L, copied
            ),
            (
                yarn_exercises,
                "check_yarn_frequencies",
                yarn(64, 10000.0, 4.0, 2048),  # the lesson's s, copied
            ),
            (yarn_exercises, "check_logit_multiplier", (0.1 * math.log(4) + 1) ** 2),
            (yarn_exercises, "check_logit_multiplier", mscale16),
            (
                yarn_exercises,
                "check_logit_multiplier",
                (0.1 * math.log10(16) + 1) ** 2,
            ),
        ],
        # lesson 11 (rope_lib.exercises.scaling_in_models)
        "11_scaling_in_models": [
            (released, "check_rope_scaling_entry", (32768, 4)),
            (released, "check_rope_scaling_entry", (8192, 2)),
            (released, "check_llama3_pair_counts", (29, 0, 35)),
            (
                released,
                "check_llama3_pair_counts",
                {
                    "kept": range(35, 64),
                    "blended": range(29, 35),
                    "interpolated": range(0, 29),
                },
            ),
            (released, "check_llama3_short_prompt", (1, 1)),
            (released, "check_llama3_short_prompt", (8, 8)),
            (released, "check_llama3_short_prompt", (8, 1)),
            (released, "check_llama3_short_prompt", (1, 0.125)),
            (released, "check_llama3_short_prompt", (1, 4)),
        ],
        "12_extrapolation_lab": [
            (lab, "check_exact_match", digit_fraction),
            (lab, "check_exact_match", over_keys),
            (lab, "check_exact_match", key_count),
            (lab, "check_pi_frequencies", lab_theta * 4),
            (lab, "check_pi_frequencies", lab_theta),
            (lab, "check_pi_frequencies", (lab_theta / 4).repeat_interleave(2)),
            (lab, "check_best_extension", "default"),
            (lab, "check_best_extension", "T5 bias"),
        ],
        "13_todays_models": [
            (todays_models, "check_proportional_frequencies", neox_32),
            (todays_models, "check_proportional_frequencies", p_rope[:16]),
            (
                todays_models,
                "check_proportional_frequencies",
                torch.cat([neox_32, torch.zeros(16, dtype=f64)]),
            ),
            (
                todays_models,
                "check_proportional_frequencies",
                inv_frequencies(64, 10000.0),
            ),
            (todays_models, "check_proportional_frequencies", p_rope.flip(0)),
            (todays_models, "check_nope_query_scale", llama4**2),
            (todays_models, "check_nope_query_scale", 1 + 0.1 * math.log(1 + 1)),
            (todays_models, "check_nope_query_scale", 1 + 0.1 * math.log10(3)),
            (todays_models, "check_nope_query_scale", 0.1 * math.log(3)),
            (todays_models, "check_local_slow_pairs", global_slow),
            (todays_models, "check_local_slow_pairs", no_two_pi),
            (todays_models, "check_local_slow_pairs", 128 - local_slow),
            (todays_models, "check_local_slow_pairs", 2 * local_slow),
            (todays_models, "check_local_slow_pairs", gemma3_4b),
            (todays_models, "check_broken_llama3_config", ("slower", 20)),
            (todays_models, "check_broken_llama3_config", ("same", 0)),
            (todays_models, "check_broken_llama3_config", ("faster", 29)),
            (todays_models, "check_broken_llama3_config", ("faster", 44)),
            (todays_models, "check_broken_llama3_config", ("faster", 14)),
        ],
        "14_multimodal_rope": [
            (multimodal, "check_position_ids", text_counted),
            (multimodal, "check_position_ids", image_from_zero),
            (multimodal, "check_position_ids", torch.arange(10).expand(3, -1)),
            (multimodal, "check_next_text_position", 10 + 14 * 20),
            (multimodal, "check_next_text_position", 10 + 40),
            (multimodal, "check_interleaved_pair_axes", [0] * 8 + [1] * 4 + [2] * 4),
            (multimodal, "check_interleaved_pair_axes", [i % 3 for i in range(16)]),
            (multimodal, "check_resized_offsets", (3, 0.375)),
            (multimodal, "check_resized_offsets", (6, 6 / 32)),
        ],
        "15_real_llm": _real_llm_wrong_answers(real_llm),
    }


def _real_llm_wrong_answers(real_llm):
    """Lesson 15: layer 0's W_k of the model file unchanged, permuted llama.cpp's way
    and as one block; YaRN's pair counts by Llama 3's cutoffs, swapped, without 2 pi; the
    best method inside L, and one that is not the best past it."""
    from rope_lib import half_to_interleaved, interleaved_to_half

    w_k = real_llm.file_wk()
    backwards = w_k.view(3, 64, 576)[:, half_to_interleaved(torch.arange(64))]
    at_2x = real_llm.last_buckets(real_llm.load_results())
    not_best = max((m for m in at_2x if m != "plain"), key=at_2x.get)
    return [
        (real_llm, "check_half_layout_wk", w_k),
        (real_llm, "check_half_layout_wk", backwards.reshape(192, 576)),
        (real_llm, "check_half_layout_wk", interleaved_to_half(w_k.T).T),
        (real_llm, "check_yarn_pair_counts", (17, 3, 12)),
        (real_llm, "check_yarn_pair_counts", (12, 9, 11)),
        (real_llm, "check_yarn_pair_counts", (16, 10, 6)),
        (real_llm, "check_best_method", "plain"),
        (real_llm, "check_best_method", not_best),
    ]


def declared_wrong_answers(lesson: str) -> list:
    """[(checker module, checker name, wrong answer)]: the value mistakes declared by the
    checkers the lesson calls (`from rope_lib.exercises import <topic> as ex`, then
    `ex.check_...(`), in the order the notebook calls them. A mistake that is a test of
    the value (a function) has no value to try: list such a lesson in _wrong_answers()."""
    import importlib

    from rope_lib.exercises import either

    sources = "\n".join(_code_cells(lesson))
    found = []
    for topic in re.findall(r"from rope_lib\.exercises import (\w+) as ex\b", sources):
        module = importlib.import_module(f"rope_lib.exercises.{topic}")
        for name in dict.fromkeys(re.findall(r"\bex\.(check_\w+)\(", sources)):
            declared = getattr(getattr(module, name, None), "exercise", None)
            mistakes = getattr(declared, "mistakes", ())
            for mistake in () if callable(mistakes) else mistakes:
                if isinstance(mistake.match, either):
                    found += [(module, name, value) for value in mistake.match]
                elif not callable(mistake.match):
                    found.append((module, name, mistake.match))
    return found


@pytest.fixture(scope="module")
def wrong_answers():
    listed = _wrong_answers()
    return {
        lesson: listed.get(lesson) or declared_wrong_answers(lesson)
        for lesson in ENGLISH
    }


@pytest.mark.parametrize("lesson", LESSONS)
def test_misconceptions_are_the_lessons_checker_hints(lesson, wrong_answers):
    assert wrong_answers[_stem(lesson)], (
        f"{lesson}: no wrong answers for its misconceptions: its checkers declare no "
        "value mistakes, and _wrong_answers() does not list it"
    )
    section = _sections(lesson)["Misconceptions the checkers catch"]
    says = r"\s*".join(_say(lesson, "checker says").split())
    quoted = [_squash(h) for h in re.findall(says + r"\s*`([^`]+)`", section)]
    assert len(quoted) >= 3, f"{lesson}: {len(quoted)} checker hints quoted"
    sources = "\n".join(_code_cells(lesson))
    messages = []
    for module, name, answer in wrong_answers[_stem(lesson)]:
        module_name = module.__name__.rsplit(".", 1)[1]
        assert f"exercises import {module_name} as ex" in sources, (
            f"{lesson} does not use {module_name}"
        )
        assert f"ex.{name}(" in sources, f"{lesson} never calls {name}"
        check = getattr(module, name)
        with _speaking(lesson):
            feedback = check(answer)
        assert not feedback.ok, (
            f"{lesson}: {name} accepts the wrong answer {repr(answer)[:200]}"
        )
        messages.append(_squash(feedback.message))
    for hint in quoted:
        assert any(hint in message for message in messages), (
            f"{lesson}: no recorded wrong answer makes the checker say {hint!r}"
        )
    for (_, name, answer), message in zip(wrong_answers[_stem(lesson)], messages):
        assert any(hint in message for hint in quoted), (
            f"{lesson}: the notes do not list {name}'s hint for a recorded wrong "
            f"answer: {message!r}"
        )
