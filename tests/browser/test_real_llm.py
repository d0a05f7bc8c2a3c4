"""Browser test of lesson 15's widgets: what a person sees matches results.json.

test_widgets.py already checks that every control of every widget changes the readout and
the picture. Here, in both editions, after moving the pair widget's layer slider, the pair
the readout calls largest is the largest in the q sizes results.json holds for the
layer the slider shows; after choosing another method in the loss widget, the
readout's loss in the last bucket is that method's in results.json.
"""

from __future__ import annotations

import json
import re

import lab
import pytest

pytestmark = pytest.mark.xdist_group("browser")

NOTEBOOKS = [n for n in lab.discover_notebooks() if n.endswith("15_real_llm.ipynb")]


def _results() -> dict:
    # the copy of notebooks/ the server runs holds the same llm_results/ folder
    path = lab.notebooks_dir() / "llm_results" / "results.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _widget(nb, pattern: str) -> dict:
    found = [w for w in nb.widgets() if re.search(pattern, w["readout"])]
    assert found, f"no widget whose readout matches {pattern!r}"
    return found[0]


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_layer_slider_and_readout_follow_results(notebooks, notebook):
    nb = notebooks.get(notebook)
    page = nb.page
    widget = _widget(nb, r"pair \d+|维度对 \d+")
    i = widget["index"]
    slider = next(c for c in widget["controls"] if c["kind"] == "slider")
    before = lab.wait_changed(page, i, None)["sig"]
    how = lab.move_control(page, slider, presses=3)
    result = lab.wait_changed(page, i, before)
    assert result["ok"], f"moving the layer slider ({how}) changed nothing: {result}"
    layer = int(lab.slider_value(page, slider["selector"]))
    q = _results()["pairs"]["q_rms"][layer]
    largest = max(range(len(q)), key=q.__getitem__)
    readout = result["sig"]["readout"]
    assert re.search(rf"(pair|维度对) {largest}\b", readout), (layer, largest, readout)


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_method_dropdown_shows_that_methods_loss(notebooks, notebook):
    nb = notebooks.get(notebook)
    page = nb.page
    widget = _widget(nb, r"×\d")
    i = widget["index"]
    dropdown = next(c for c in widget["controls"] if c["kind"] == "dropdown")
    select = page.locator(dropdown["selector"]).locator("select")
    results = _results()
    L = results["settings"]["training_length"]
    before = lab.wait_changed(page, i, None)["sig"]
    select.select_option(index=0)  # the first method in the list: PI
    result = lab.wait_changed(page, i, before)
    readout = result["sig"]["readout"]
    factor = 4 if "×4" in readout.split("\n")[0] else 2
    last = results["summary"].get(f"pi/x{factor}/{factor * L}")
    if last is None:
        assert re.search(r"not run|没有", readout), readout
    else:
        assert f"{last['mean'][-1]:.2f}" in readout, (last["mean"][-1], readout)
