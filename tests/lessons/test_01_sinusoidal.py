"""Lesson 1 (notebooks/01_sinusoidal.ipynb): the claims its story makes, the widget's
readout in the course notation, and the shape of lessons 1 and 2 (one sitting each, no
pointers to the source notes).

Source-note map (maintainers only): note 003's NumPy listing (normalize, odd d_model)
and its "T_0 = 1, period close to 2*pi"; note 004's p_{i,2t} = sin(i / 10000^(2i/d))
typo. Expected values are computed here from the formulas with the math module, not with
the functions under test."""

import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib.figures.sinusoidal import thumbnail  # noqa: E402
from rope_lib.widgets.sinusoidal import EncodingExplorer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LESSONS = {
    "01_sinusoidal.ipynb": "# Lesson 1 · The sinusoidal encoding",
    "02_learned_positions.ipynb": "# Lesson 2 · Learned positions and the training length",
}


def pe_by_hand(pos: float, d: int, base: float = 10000.0) -> list[float]:
    out = []
    for i in range(d // 2):
        angle = pos / base ** (2 * i / d)
        out += [math.sin(angle), math.cos(angle)]
    return out


def dot(u, v) -> float:
    return sum(a * b for a, b in zip(u, v))


SOURCE_POINTER = re.compile(
    r"\bseeds?\b|source notes|\bnote 00\d|(?<![\w,.])00[0-4]\b", re.I
)


def cells(name):
    return json.loads((ROOT / "notebooks" / name).read_text())["cells"]


def visible_text(cell) -> str:
    """What a learner sees of a cell: its source and its text outputs."""
    text = "".join(cell["source"])
    for out in cell.get("outputs", []):
        text += "".join(out.get("text", ""))
        text += "".join(out.get("data", {}).get("text/plain", ""))
    return text


# --- the lessons' shape (both lessons of the split) ------------------------------


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_lesson_is_one_sitting_with_goals_summary_and_exercises(name):
    nb = cells(name)
    markdown = [c for c in nb if c["cell_type"] == "markdown"]
    words = sum(len("".join(c["source"]).split()) for c in markdown)
    assert len(nb) <= 60 and words <= 3000, (len(nb), words)
    first = "".join(nb[0]["source"])
    assert first.startswith(LESSONS[name] + "\n")
    # the goals: in the title cell, or in the next one (the title's next slide)
    assert "By the end you will be able to" in first + "".join(nb[1]["source"])
    headings = [
        line
        for c in markdown
        for line in "".join(c["source"]).splitlines()
        if line.startswith("## ")
    ]
    assert any("Summary" in h for h in headings)
    assert any("Exercises" in h for h in headings)
    checks = [
        c
        for c in nb
        if c["cell_type"] == "code" and "ex.check_" in "".join(c["source"])
    ]
    assert len(checks) >= 2


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_no_learner_visible_pointer_to_the_source_notes_or_old_notation(name):
    for index, cell in enumerate(cells(name)):
        text = visible_text(cell)
        assert not SOURCE_POINTER.search(text), index
        assert "omega" not in text, index
        assert "<br>" not in text and ".readout" not in text, index  # HTML stripping
        assert "inspect.getsource" not in text, index


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_code_lines_fit_88_columns(name):
    for index, cell in enumerate(cells(name)):
        if cell["cell_type"] == "code":
            for line in "".join(cell["source"]).splitlines():
                assert len(line) <= 88, (index, line)


def test_widget_cell_is_ignored_by_nbval_and_followed_by_a_static_png():
    nb = cells("01_sinusoidal.ipynb")
    live = [i for i, c in enumerate(nb) if ".widget()" in "".join(c["source"])]
    assert len(live) == 1
    assert "nbval-ignore-output" in nb[live[0]]["metadata"].get("tags", [])
    after = nb[live[0] + 1]
    assert "static_png(" in "".join(after["source"])
    assert any("image/png" in out.get("data", {}) for out in after["outputs"])


def _moved(name):  # lesson helpers live in their topic modules
    from rope_lib import extension_analysis, sinusoidal

    return getattr(extension_analysis, name, None) or getattr(sinusoidal, name)


def test_exercise_solutions_shown_in_the_lessons_pass_their_checkers():
    from rope_lib.exercises import absolute as ex

    for name in LESSONS:
        for cell in cells(name):
            source = "".join(cell["source"])
            if cell["cell_type"] != "markdown" or "<summary>Solution" not in source:
                continue
            block = re.search(r"```python\n(.*?)```", source, re.S).group(1)
            library = (
                "wavelengths",
                "inv_frequencies",
                "sinusoidal_encoding",
                "sinusoidal_shift_matrix",
                "offset_head_attends_to",
            )
            names = dict(torch=torch, math=math)
            names.update({n: getattr(rope_lib, n, None) or _moved(n) for n in library})
            exec(block, names)
            answer = next(k for k in names if k.startswith("answer_"))
            number = int(answer.split("_")[1])
            checker = {
                ("01_sinusoidal.ipynb", 1): ex.check_wavelengths,
                ("01_sinusoidal.ipynb", 2): ex.check_shift_block,
                ("01_sinusoidal.ipynb", 3): ex.check_offset_dots,
                ("02_learned_positions.ipynb", 1): ex.check_unfinished_pairs,
                ("02_learned_positions.ipynb", 2): ex.check_head_offsets,
            }[(name, number)]
            assert checker(names[answer]).ok, (name, number)


# --- the claims of lesson 1 --------------------------------------------------------


def test_the_typo_with_the_position_in_the_exponent_repeats_one_pair_across_the_row():
    d = 64
    for m in (1, 5, 37):
        typo = [
            f(m / 10000 ** (2 * m / d))
            for _ in range(d // 2)
            for f in (math.sin, math.cos)
        ]
        assert len(set(typo)) == 2
        assert len(set(pe_by_hand(m, d))) == d


def test_the_listing_normalize_gives_rows_of_length_one_over_sqrt2_not_one():
    for d in (4, 64, 512):
        for m in (0, 3, 1000):
            length = math.sqrt(sum(v * v for v in pe_by_hand(m, d))) / math.sqrt(d)
            assert length == pytest.approx(1 / math.sqrt(2))


def test_an_odd_width_fails_loudly_in_numpy_and_by_name_in_the_library():
    theta = 10000.0 ** (-np.arange(0, 62, 2) / 63)  # the listing's d // 2 = 31 of them
    with pytest.raises(ValueError, match="broadcast"):
        np.zeros((10, 63))[:, 0::2] = np.sin(np.arange(10)[:, None] * theta)
    with pytest.raises(ValueError, match="d_model"):
        rope_lib.sinusoidal_encoding(10, 63)


def test_pair_zero_has_period_exactly_two_pi_and_the_last_pair_stops_short_of_2pi_b():
    for m in (0.0, 3.7, 250.0):
        one_turn_later = pe_by_hand(m + 2 * math.pi, 8)[:2]
        assert one_turn_later == pytest.approx(pe_by_hand(m, 8)[:2], abs=1e-12)
    lam = rope_lib.extension_analysis.wavelengths(
        rope_lib.inv_frequencies(512)
    ).double()
    assert float(lam[0]) == pytest.approx(2 * math.pi, rel=1e-6)
    assert float(lam[-1]) == pytest.approx(2 * math.pi * 10000 ** (510 / 512), rel=1e-6)
    assert float(lam[-1]) < 2 * math.pi * 10000


# --- the widget speaks the course notation (was: HTML stripping in the story) ------


def readout_number(html: str, label: str) -> float:
    text = re.sub(r"<[^>]+>", "", html)
    match = re.search(re.escape(label) + r" = (-?\d+\.\d+)", text)
    assert match, text
    return float(match.group(1))


def test_widget_readout_uses_m_delta_theta_and_matches_the_formula():
    w = EncodingExplorer()
    w.update(p=37, k=-6, d_model=12, base=100.0)
    html = w.readout.value
    forward = dot(pe_by_hand(37, 12, 100.0), pe_by_hand(31, 12, 100.0))
    backward = dot(pe_by_hand(37, 12, 100.0), pe_by_hand(43, 12, 100.0))
    closed = sum(math.cos(-6 / 100.0 ** (2 * i / 12)) for i in range(6))
    assert readout_number(html, "PE(m)·PE(m+Δ)") == pytest.approx(forward, abs=1e-4)
    assert readout_number(html, "PE(m)·PE(m−Δ)") == pytest.approx(backward, abs=1e-4)
    assert readout_number(html, "Σ_i cos(Δ·θ_i)") == pytest.approx(closed, abs=1e-4)
    assert readout_number(html, "|PE(m)|²") == pytest.approx(6.0, abs=1e-4)
    # the inputs are the sliders' (the readout beside them is four short lines of results)
    assert html.count("<br>") == 3 and "PE(m)·PE(m+Δ) = 3.0761" in html  # PE(37)·PE(31)
    plt.close(w.figure)


def test_widget_labels_use_the_course_notation():
    w = EncodingExplorer()
    labels = [c.description for c in w.controls.values()]
    labels += [w.ax_vec.get_title(), w.ax_dot.get_title(), w.ax_dot.get_xlabel()]
    labels.append(re.sub(r"<[^>]+>", " ", w.readout.value))
    fig = thumbnail()
    labels += [t.get_text() for ax in fig.axes for t in (ax.title, ax.xaxis.label)]
    text = " ".join(labels)
    assert "position m" in text and "offset Δ" in text and "θ_i" in text
    assert not re.search(r"\bp\b|\bk\b|w_i|PE\(p", text), text
    plt.close(w.figure)
    plt.close(fig)


def test_widget_default_state_is_the_one_the_lesson_describes():
    w = EncodingExplorer()
    assert w.values == dict(p=20, k=5, d_model=32, base=10000.0)
    expected = dot(pe_by_hand(20, 32), pe_by_hand(25, 32))
    shown = readout_number(w.readout.value, "PE(m)·PE(m+Δ)")
    assert shown == pytest.approx(expected, abs=1e-4)
    plt.close(w.figure)
