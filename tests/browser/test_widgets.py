"""Browser tests: every notebook runs clean in JupyterLab, and every live widget answers a person.

For each notebooks/*.ipynb (found at collection time, so a new lesson is covered by itself):
- test_notebook_runs_clean: open it in JupyterLab, clear all outputs, run all cells; every code
  cell gets a number and nothing shows a traceback or an error.
- test_outputs_are_the_stored_ones: what that run printed is what the notebook stores, as
  nbval judges it (stored_outputs.py): the Chinese lessons computed on torch's plain
  kernels with two threads, the English ones on this CPU's own with one.
- test_widgets_respond (English lessons): every live widget (a widget box with a .rope-readout
  and an ipympl canvas) answers each of its controls: a slider moved with the arrow keys, another dropdown
  option, a button click each change BOTH the readout text AND the canvas pixels
  (conftest.OpenNotebook.exercise). Screenshots of the widget at the start and after each
  move go to test-artifacts/browser/<notebook>/.
- test_lesson02_score_matches_formula: lesson 2's q'.k' readout against the closed form computed
  here from the slider readouts, and the shift slider leaving it unchanged.
- test_lesson04_product_depends_on_the_offset_only: lesson 5's q' conj(k') against
  q conj(k) e^{i(m-n)θ} computed here, and m then n moved alike leaving it unchanged.
"""

from __future__ import annotations

import cmath
import json
import math
import os
import re

import lab
import pytest
import stored_outputs
import torch

# one JupyterLab and one Chromium: under pytest-xdist, `--dist loadgroup` sends them all to one worker
pytestmark = pytest.mark.xdist_group("browser")

NOTEBOOKS = lab.discover_notebooks()
LESSON02 = [name for name in NOTEBOOKS if name.startswith("03_rotation_2d")]


def _widget_cells(name: str) -> int:
    """How many code cells end by displaying a widget (`...widget()` as the last line)."""
    nb = json.loads((lab.notebooks_dir() / name).read_text())
    count = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]).strip()
        if source and re.search(r"\.widget\(\)$", source.splitlines()[-1].strip()):
            count += 1
    return count


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_notebook_runs_clean(notebooks, notebook):
    nb = notebooks.get(notebook)
    unnumbered = [
        p
        for p in nb.prompts
        if not p["empty"] and not re.search(r"\[\s*\d+\s*\]", p["prompt"])
    ]
    problems = []
    if nb.status != "done":
        problems.append(f"run all did not finish cleanly ({nb.status})")
    if unnumbered:
        problems.append(
            "cells without an execution number: "
            + "; ".join(f"{p['prompt']!r} {p['source']!r}" for p in unnumbered[:5])
        )
    for text in nb.errors["outputs"]:
        problems.append("error output: " + text)
    for text in nb.errors["kernel"]:
        problems.append("kernel error: " + text)
    assert not problems, f"{notebook} (ran {nb.seconds:.1f} s):\n" + "\n".join(problems)


# the kernel's torch kernels and the threads it was started with (lessons 1 and 2 then set
# torch's threads to 1 themselves)
_SAY_CPU = (
    "import os, torch; print(torch.backends.cpu.get_cpu_capability(), "
    "os.environ.get('OMP_NUM_THREADS'))"
)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_outputs_are_the_stored_ones(notebooks, notebook):
    nb = notebooks.get(notebook)
    stored = json.loads((lab.notebooks_dir() / notebook).read_text(encoding="utf-8"))
    found = stored_outputs.differences(stored, nb.executed, stored_outputs.sanitizers())
    # the kernel that ran it: torch's plain kernels, started with two threads, for a
    # Chinese lesson (lab.PORTABLE_ENV); this CPU's own, with the tests' threads (make
    # test: one), for an English one
    chinese = notebook.startswith("zh/")
    here = torch.backends.cpu.get_cpu_capability()
    expected = (
        ["DEFAULT", lab.PORTABLE_ENV["OMP_NUM_THREADS"]]
        if chinese
        else [here, str(os.environ.get("OMP_NUM_THREADS"))]
    )
    problems = []
    if found:
        problems.append(
            f"{len(found)} cell(s) print other outputs than the stored ones (re-execute "
            "it: scripts/execute_notebooks.py; or print round-off as a bound, README "
            "'Outputs on any machine'):\n" + "\n\n".join(found)
        )
    if nb.status == "done":  # (a kernel still running would not answer)
        ran_on = lab.kernel_prints(nb.page, _SAY_CPU).split()
        if ran_on != expected:
            problems.append(f"its kernel ran on {ran_on}, not {expected}")
    how = " ".join(expected) + " threads"
    assert not problems, f"{notebook} ({how}, run {nb.status}): " + "\n".join(problems)


# The Chinese lessons build the same widgets with other labels: every control of every
# widget is moved once in the English lessons (the widgets' Chinese readouts and figures are
# moved through their steps by tests/test_language_widgets_*.py).
@pytest.mark.parametrize("notebook", [n for n in NOTEBOOKS if not n.startswith("zh/")])
def test_widgets_respond(notebooks, notebook):
    nb = notebooks.get(notebook)
    widgets = nb.widgets()
    expected = _widget_cells(notebook)
    if not widgets:
        assert expected == 0, (
            f"{notebook}: {expected} cell(s) display a .widget() but no live widget "
            "(.rope-readout with an ipympl canvas) is on the page"
        )
        pytest.skip(f"{notebook} has no live widget")
    assert len(widgets) >= expected, (
        f"{notebook}: {expected} widget cells, {len(widgets)} live widgets found"
    )
    result = nb.exercise()
    failures = list(result["failures"])
    for text in result["kernel_errors"]:
        failures.append("kernel error while moving controls: " + text)
    moves = "; ".join(result["moves"])
    assert not failures, (
        f"{notebook}:\n"
        + "\n".join(failures)
        + f"\nscreenshots: {nb.artifacts}\nmoves: {moves}"
    )


# -- lesson 2 ------------------------------------------------------------------------------------

_NUMBER = r"[-−]?\d+(?:\.\d+)?"


def _number(text: str) -> float:
    return float(text.replace("−", "-"))


def _score_by_formula(v: dict) -> float:
    """q = |q|(cos a_q, sin a_q), k likewise (angles in radians, as lesson02.CONTROLS says);
    q'.k' = (q1k1 + q2k2) cos((m-n) theta) + (q1k2 - q2k1) sin((m-n) theta)."""
    q1, q2 = v["|q|"] * math.cos(v["angle q"]), v["|q|"] * math.sin(v["angle q"])
    k1, k2 = v["|k|"] * math.cos(v["angle k"]), v["|k|"] * math.sin(v["angle k"])
    phi = (v["m"] - v["n"]) * v["theta"]
    return (q1 * k1 + q2 * k2) * math.cos(phi) + (q1 * k2 - q2 * k1) * math.sin(phi)


def _check_score(
    page, sliders: dict, readout_selector: str
) -> tuple[float, float, dict]:
    values = {
        name: _number(lab.slider_value(page, sel)) for name, sel in sliders.items()
    }
    text = page.locator(readout_selector).inner_text()
    match = re.search(r"q'·k' = (" + _NUMBER + ")", text)
    assert match, f"no \"q'·k' = x\" in the readout {text!r}"
    shown = _number(match.group(1))
    expected = _score_by_formula(values)
    # 1e-3 relative, plus half a unit in the readout's last printed digit
    digits = len(match.group(1).split(".")[1]) if "." in match.group(1) else 0
    tolerance = 1e-3 * abs(expected) + 0.5 * 10**-digits + 1e-12
    assert abs(shown - expected) <= tolerance, (
        f"q'·k' shown {shown} but the formula gives {expected:.6f} for {values}; readout {text!r}"
    )
    return shown, expected, values


@pytest.mark.parametrize(
    "notebook",
    LESSON02
    or [
        pytest.param(
            "03_rotation_2d.ipynb",
            marks=pytest.mark.skip(
                reason="notebooks/03_rotation_2d.ipynb is not there"
            ),
        )
    ],
)
def test_lesson02_score_matches_formula(notebooks, notebook):
    nb = notebooks.get(notebook)
    page = nb.page
    widgets = [w for w in nb.widgets() if "q'·k' = " in w["readout"]]
    if not widgets:
        pytest.skip(f"{notebook} has no widget whose readout shows \"q'·k' = \"")
    widget = widgets[0]
    i = widget["index"]
    readout = f'[data-rope-widget="{i}"] .rope-readout'
    sliders = {
        c["name"]: c["selector"] for c in widget["controls"] if c["kind"] == "slider"
    }
    needed = {"m", "n", "theta", "|q|", "angle q", "|k|", "angle k", "shift"}
    assert needed <= set(sliders), (
        f"lesson 2's widget lacks sliders {sorted(needed - set(sliders))}"
    )
    assert i not in nb.never_drawn, nb.never_drawn.get(i)
    before = lab.wait_changed(page, i, None)["sig"]
    _check_score(page, sliders, readout)

    checked = []
    for name in ("angle q", "theta", "m", "angle k", "|q|", "n", "|k|"):
        how = lab.move_control(
            page, {"kind": "slider", "selector": sliders[name]}, presses=2
        )
        result = lab.wait_changed(page, i, before)
        assert result["ok"], (
            f"moving {name!r} ({how}) did not change readout and figure: {result}"
        )
        before = result["sig"]
        shown, expected, values = _check_score(page, sliders, readout)
        checked.append(f"{name}: shown {shown} formula {expected:.5f}")

    # shift moves both positions: the picture turns, the score stays
    score_before = re.search(r"q'·k' = (" + _NUMBER + ")", before["readout"]).group(1)
    shift_before = lab.slider_value(page, sliders["shift"])
    how = lab.move_control(
        page, {"kind": "slider", "selector": sliders["shift"]}, presses=3
    )
    result = lab.wait_changed(page, i, before)
    shift_after = lab.slider_value(page, sliders["shift"])
    assert shift_after != shift_before, f"the shift slider did not move ({how})"
    assert result["ok"], f"moving 'shift' did not change readout and figure: {result}"
    score_after = re.search(
        r"q'·k' = (" + _NUMBER + ")", result["sig"]["readout"]
    ).group(1)
    assert score_after == score_before, (
        f"q'·k' changed from {score_before} to {score_after} when shift went {shift_before} -> {shift_after}"
    )
    _check_score(page, sliders, readout)


# -- lesson 5 ------------------------------------------------------------------------------------

LESSON04 = [name for name in NOTEBOOKS if name.startswith("05_rope_complex")]
_COMPLEX = r"([-−]?\d+\.\d+) ([-+]) (\d+\.\d+)i"


def _product(readout: str) -> complex:
    match = re.search(r"q'·conj\(k'\) = " + _COMPLEX, readout)
    assert match, f"no \"q'·conj(k') = a ± bi\" in the readout {readout!r}"
    real, sign, imag = match.groups()
    return complex(_number(real), float(imag) * (-1 if sign == "-" else 1))


@pytest.mark.parametrize(
    "notebook",
    LESSON04
    or [
        pytest.param(
            "05_rope_complex.ipynb",
            marks=pytest.mark.skip(
                reason="notebooks/05_rope_complex.ipynb is not there"
            ),
        )
    ],
)
def test_lesson04_product_depends_on_the_offset_only(notebooks, notebook):
    """The complex-plane widget: its score is Re[q conj(k) e^{i(m-n)θ}] for the worked pair
    (computed here from the sliders' readouts), and moving m, then n, by the same amount
    turns the picture but leaves the product q' conj(k') where it was."""
    nb = notebooks.get(notebook)
    page = nb.page
    widgets = [w for w in nb.widgets() if "q'·conj(k') = " in w["readout"]]
    if not widgets:
        pytest.skip(f"{notebook} has no widget whose readout shows \"q'·conj(k') = \"")
    widget = widgets[0]
    i = widget["index"]
    assert i not in nb.never_drawn, nb.never_drawn.get(i)
    sliders = {
        c["name"]: c["selector"] for c in widget["controls"] if c["kind"] == "slider"
    }
    assert {"m", "n", "theta"} <= set(sliders), sorted(sliders)
    before = lab.wait_changed(page, i, None)["sig"]

    def expected() -> complex:
        m, n, theta = (
            _number(lab.slider_value(page, sliders[name]))
            for name in ("m", "n", "theta")
        )
        q, k = complex(0.5, -1.0), complex(1.2, 0.3)
        return q * k.conjugate() * cmath.exp(1j * (m - n) * theta)

    first = _product(before["readout"])
    assert abs(first - expected()) < 1e-3, (first, expected())
    moved = []
    for name in ("m", "n"):  # the same two steps for each
        how = lab.move_control(
            page, {"kind": "slider", "selector": sliders[name]}, presses=2
        )
        result = lab.wait_changed(page, i, before)
        assert result["canvasChanged"], f"moving {name!r} ({how}) left the picture"
        before = result["sig"]
        moved.append(_product(before["readout"]))
        assert abs(moved[-1] - expected()) < 1e-3, (name, moved[-1], expected())
    assert moved[0] != first, f"moving m ({first} -> {moved[0]}) left the product"
    assert moved[1] == first, (
        f"m and n moved by the same amount, yet the product went {first} -> {moved[1]}"
    )
