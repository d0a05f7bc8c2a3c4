"""The lessons as live slides: jupyterlab-slideshow presents a lesson inside JupyterLab.

jupyterlab-slideshow (the successor of jupyterlab-deck) turns the open notebook into a
presentation in JupyterLab's own page: the same kernel, the same widget manager, so live
ipympl widgets keep working (RISE's separate slideshow app cannot load ipywidgets 8:
jupyterlab-contrib/rise#119). It reads the notebooks' standard cell metadata,
`metadata.slideshow.slide_type`.

What a teacher does, at the projector size (lab.PROJECTOR), for each SLIDES lesson (every
English lesson; with ROPE_BROWSER_SLIDES=all, `make test-slides`, the Chinese ones too), after
the lesson was run (`notebooks`):
- click the title cell, then the notebook toolbar's "Toggle Deck" button (deck:toggle);
- press Space until the last slide (the keyboard's key from the title, after each widget
  and at the end; in between, the same key events dispatched in the page, which the
  slideshow reads alike, a round trip less per press). Every press must show what the
  slide metadata says, read as nbconvert and RISE read it ("slide"/"subslide" start a screen, "fragment"
  appears on its own press, "-" or no slide_type continues, "skip"/"notes" never show):
  expected_steps() below, compared with the cells the slideshow shows at each press;
- every press brings one cell into view, and that cell must be whole on the 480 px screen
  (a taller cell can never be shown at once: split it, or shorten it);
- on each widget slide: the widget (controls and figure) is on the 480 px screen, each
  slider's track at least MIN_SLIDER px long, moving a slider with the keyboard (a
  dropdown if there is no slider) changes the picture's pixels and the readout, and does
  not change the slide; a click on the readout gives the keys back to the slideshow;
- Shift+Space goes one step back, Esc leaves: the JupyterLab menu bar is back, and the
  extension's setting "active" (which would restart the slideshow on the next page load)
  is false again;
- nothing is fetched from outside 127.0.0.1 meanwhile (the classroom may be offline).
Screenshots of what went wrong (a cell cut off, a widget off its screen or not answering):
test-artifacts/browser/<lesson>/slideshow-*.png; the presses: slideshow.json there.
"""

from __future__ import annotations

import json
import os
import time

import lab
import pytest

pytestmark = pytest.mark.xdist_group("browser")

NOTEBOOKS = lab.discover_notebooks()
# every English lesson by default (the Chinese ones have the same cells, widgets and slide
# metadata; ROPE_BROWSER_SLIDES=all, `make test-slides`, walks them too)
SLIDES = [n for n in NOTEBOOKS if not n.startswith("zh/")] or NOTEBOOKS[:1]
if os.environ.get("ROPE_BROWSER_SLIDES", "") == "all":
    SLIDES = NOTEBOOKS
# a slider's track on a widget slide: at least this long (CSS px), as in test_projector
MIN_SLIDER = 100
STARTS = ("slide", "subslide")
HIDDEN = ("skip", "notes")
PLUGIN = "jupyterlab-slideshow:plugin"
TOOLBAR_BUTTON = (
    ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-NotebookPanel-toolbar "
    "jp-button[data-command='deck:toggle']"
)

# the active cell and the cells the audience sees: on screen, no fragment still to come
_JS_SHOWN = r"""() => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  const shown = [];
  let top = Infinity, bottom = -Infinity;
  nb.widgets.forEach((cell, i) => {
    const k = cell.node.classList;
    if (k.contains('jp-deck-mod-onscreen') && k.contains('jp-deck-mod-visible')) {
      shown.push(i);
      const r = cell.node.getBoundingClientRect();
      if (r.height) { top = Math.min(top, r.top); bottom = Math.max(bottom, r.bottom); }
    }
  });
  const a = nb.activeCell ? nb.activeCell.node.getBoundingClientRect() : null;
  return {active: nb.activeCellIndex, shown,
          top: shown.length ? Math.round(top) : null,
          bottom: shown.length ? Math.round(bottom) : null,
          cell: a && a.height ? [Math.round(a.top), Math.round(a.bottom)] : null,
          presenting: document.body.dataset.jpDeckMode === 'presenting'};
}"""


def slide_type(cell: dict) -> str:
    """A cell's slide_type; missing or empty means "-" (continue), as in nbconvert."""
    return (cell.get("metadata", {}).get("slideshow") or {}).get("slide_type") or "-"


def _explicit_dash(cell: dict) -> bool:
    return (cell.get("metadata", {}).get("slideshow") or {}).get("slide_type") == "-"


def expected_steps(cells: list[dict]) -> list[tuple[int, list[int]]]:
    """(active cell, cells shown) for each press of Space from the title, read from the
    slide metadata: one step per cell that is shown at all; a step shows every cell of
    its screen up to its own fragment, with the "-" cells after those fragments."""
    screens: list[list[tuple[int, int]]] = []  # per screen: (cell, fragment number)
    fragment = 0
    for i, cell in enumerate(cells):
        kind = slide_type(cell)
        if kind in HIDDEN:
            continue
        if kind in STARTS or not screens:
            screens.append([])
            fragment = 0
        elif kind == "fragment":
            fragment += 1
        screens[-1].append((i, fragment))
    return [
        (i, [j for j, g in screen if g <= f]) for screen in screens for i, f in screen
    ]


def test_expected_steps_reads_the_metadata():
    def cell(kind):
        return {"metadata": {"slideshow": {"slide_type": kind}} if kind else {}}

    kinds = ["slide", "skip", None, "-", "subslide", "fragment", "-", "fragment"]
    kinds.append("slide")
    assert expected_steps([cell(k) for k in kinds]) == [
        (0, [0, 2, 3]),
        (2, [0, 2, 3]),
        (3, [0, 2, 3]),
        (4, [4]),
        (5, [4, 5, 6]),
        (6, [4, 5, 6]),
        (7, [4, 5, 6, 7]),
        (8, [8]),
    ]


def _setting_active(server) -> bool | None:
    """The extension's saved "active" setting (it restarts the slideshow on load)."""
    found = server.api("GET", f"lab/api/settings/{PLUGIN}") or {}
    return (found.get("settings") or {}).get("active")


def _cut_off(cell: list | None) -> bool:
    """Whether a cell ([top, bottom] in CSS px) reaches past the projector's screen."""
    return bool(cell) and (cell[0] < -1 or cell[1] > lab.PROJECTOR["height"] + 1)


# After a press (or with press: the press itself, then): wait in the page, frame by frame,
# until the active cell has changed, then one frame more, and say what the screen shows;
# null after `timeout` ms without a change (the end of the slideshow).
_JS_AFTER_PRESS = (
    r"""async ([before, timeout, press]) => {
  const nb = window.jupyterapp.shell.currentWidget.content;
  if (press) {  // Space as the page gets it, through JupyterLab's own key handling
    const target = document.activeElement || document.body;
    for (const type of ['keydown', 'keyup'])
      target.dispatchEvent(new KeyboardEvent(type, {key: ' ', code: 'Space', keyCode: 32,
        which: 32, bubbles: true, cancelable: true, composed: true}));
  }
  const frame = () => new Promise(r => requestAnimationFrame(r));
  const t0 = performance.now();
  while (nb.activeCellIndex === before) {
    if (performance.now() - t0 > timeout) return null;
    await frame();
  }
  await frame();  // the new screen laid out
  return (%s)();
}"""
    % _JS_SHOWN
)


def _next(
    page, before: int, timeout_ms: int = 1500, keyboard: bool = True
) -> dict | None:
    """Press Space; the new state, or None when the slideshow did not move (its end).
    keyboard=True: with the browser's keyboard (a real key press); False: the same
    keydown and keyup events dispatched in the page, in the same round trip as the wait
    (the slideshow reads them the same way; a round trip less per press)."""
    if keyboard:
        page.keyboard.press("Space")
    return page.evaluate(_JS_AFTER_PRESS, [before, timeout_ms, not keyboard])


def _try_widget(page, nb, widget: dict) -> list[str]:
    """Move the widget's first slider on its slide; what went wrong (empty: fine)."""
    i, problems = widget["index"], []
    lab.wait_canvas_drawn(page, i)
    before = lab.wait_changed(page, i, None)["sig"]
    box = page.locator(f'[data-rope-widget="{i}"]').bounding_box()
    height = lab.PROJECTOR["height"]
    if box is None or box["y"] < -1 or box["y"] + box["height"] > height + 1:
        where = box and (round(box["y"]), round(box["y"] + box["height"]))
        problems.append(
            f"cell {widget['cell']}: the widget is not on the {height} px screen "
            f"(top, bottom: {where} CSS px)"
        )
    for problem in lab.off_screen(lab.on_screen(page, i), MIN_SLIDER):
        problems.append(f"cell {widget['cell']}: {problem}")
    if problems:
        page.screenshot(path=str(nb.artifacts / f"slideshow-widget{i}-before.png"))
    # a slider if there is one (keyboard), else the first control (e.g. a dropdown)
    sliders = [c for c in widget["controls"] if c["kind"] == "slider"]
    control = (sliders or widget["controls"] or [None])[0]
    if control is None:
        return problems + [f"cell {widget['cell']}: the widget has no control"]
    how = lab.move_control(page, control, presses=2)
    moved = lab.wait_changed(page, i, before)
    if not moved["ok"]:
        page.screenshot(path=str(nb.artifacts / f"slideshow-widget{i}-after.png"))
    name = f"{control['kind']} {control['name']!r}"
    if how == "fixed":
        problems.append(f"cell {widget['cell']}: {name} cannot move")
    elif not moved["ok"]:
        problems.append(
            f"cell {widget['cell']}: {name} moved ({how}) on its slide, but "
            f"picture changed: {moved['canvasChanged']}, readout changed: "
            f"{moved['readoutChanged']}"
        )
    state = page.evaluate(_JS_SHOWN)
    if not state["presenting"] or state["active"] != widget["cell"]:
        problems.append(
            f"cell {widget['cell']}: moving the {name} left the slide: {state}"
        )
    # what a teacher does next: click beside the controls, then Space goes on
    page.locator(f'[data-rope-widget="{i}"] .rope-readout').click()
    return problems


@pytest.mark.parametrize("notebook", SLIDES)
def test_slideshow_shows_the_slides_and_live_widgets(notebooks, lab_server, notebook):
    nb = notebooks.get(notebook)
    page = nb.page
    cells = json.loads((lab.notebooks_dir() / notebook).read_text(encoding="utf-8"))[
        "cells"
    ]
    expected = expected_steps(cells)
    widgets = {w["cell"]: w for w in lab.find_widgets(page)}
    external: list[str] = []

    def outside(request) -> None:
        if not request.url.startswith(("http://127.0.0.1", "data:", "blob:")):
            external.append(request.url)

    page.on("request", outside)
    walked: list[dict] = []
    widget_problems: list[str] = []
    back = left = None
    start = time.monotonic()
    try:
        # the teacher clicks the title cell, then the notebook toolbar's deck button
        page.evaluate(
            """() => { const nb = window.jupyterapp.shell.currentWidget.content;
                       nb.activeCellIndex = 0; nb.mode = 'command';
                       nb.activeCell.node.focus(); }"""
        )
        lab.stop_slideshow(page)  # a page loaded while another slideshow ran
        page.locator(TOOLBAR_BUTTON).click()
        page.wait_for_function(
            "() => document.body.dataset.jpDeckMode === 'presenting'", timeout=20_000
        )
        lab.next_frame(page)  # the title screen laid out
        walked.append(page.evaluate(_JS_SHOWN))
        menu_bar = page.evaluate(
            "() => getComputedStyle(document.querySelector('#jp-menu-panel')).display"
        )
        while len(walked) <= len(cells):
            active = walked[-1]["active"]
            on_widget = active in widgets
            if on_widget:
                widget_problems += _try_widget(page, nb, widgets[active])
            # past the last step the metadata gives, the slideshow should not move: a
            # short wait for that. The keyboard's own Space from the title, after each
            # widget (a click on its readout gave the keys back) and at the end.
            last = len(walked) >= len(expected) - 1
            state = _next(
                page,
                active,
                1500 if len(walked) < len(expected) else 400,
                keyboard=len(walked) == 1 or on_widget or last,
            )
            if state is None:
                break
            walked.append(state)
            if _cut_off(state["cell"]):
                shot = nb.artifacts / f"slideshow-cut-off-{state['active']}.png"
                page.screenshot(path=str(shot))
        page.keyboard.press("Shift+Space")
        back = (
            page.evaluate(_JS_AFTER_PRESS, [walked[-1]["active"], 1500, False])
            or {"active": walked[-1]["active"]}
        )["active"]
        # The extension saves "active" when the deck starts and again when it stops, each
        # write once its settings have loaded: on the session's first deck the start's
        # write can land after a quick walk's stop and leave "active" on (the race failed
        # lesson 0 twice in six runs). A teacher is slower than one settings write; wait
        # for it, as a teacher's pace would, before leaving.
        deadline = time.monotonic() + 10
        while not _setting_active(lab_server) and time.monotonic() < deadline:
            time.sleep(0.2)
        page.keyboard.press("Escape")
        page.wait_for_function(
            "() => document.body.dataset.jpDeckMode === undefined", timeout=20_000
        )
        left = page.evaluate(
            "() => getComputedStyle(document.querySelector('#jp-menu-panel')).display"
        )
    finally:
        page.remove_listener("request", outside)
        if page.evaluate("() => document.body.dataset.jpDeckMode === 'presenting'"):
            page.evaluate("() => window.jupyterapp.commands.execute('deck:stop')")
            page.wait_for_function(
                "() => document.body.dataset.jpDeckMode === undefined", timeout=20_000
            )
    seconds = time.monotonic() - start
    deadline = time.monotonic() + 10
    while _setting_active(lab_server) and time.monotonic() < deadline:
        time.sleep(0.2)
    got = [(s["active"], s["shown"]) for s in walked]
    height = lab.PROJECTOR["height"]
    # each press brings one cell into view (the title, a new screen, a fragment, the next
    # cell of a screen): that cell, from top to bottom, on the projector's screen
    cells_on_screen = {s["active"]: s["cell"] for s in walked if s["cell"]}
    cut_off = {i: r for i, r in cells_on_screen.items() if _cut_off(r)}
    screens = {}  # the screens as a whole (first cell: top, bottom), for the record
    for s in walked:
        if s["shown"] and s["bottom"] is not None:
            screens[s["shown"][0]] = (s["top"], s["bottom"])
    (nb.artifacts / "slideshow.json").write_text(
        json.dumps(
            {
                "seconds": round(seconds, 1),
                "expected": expected,
                "walked": got,
                "cells": cells_on_screen,
                "screens": screens,
            }
        )
    )
    lowest = max((r[1] for r in cells_on_screen.values()), default=None)
    tallest = max((r[1] - r[0] for r in cells_on_screen.values()), default=None)
    print(
        f"{notebook}: {len(got)} presses of Space in {seconds:.1f} s, "
        f"{len(widgets)} widget(s) moved on their slides; the lowest cell ends at "
        f"{lowest} px, the tallest is {tallest} px; cut off: {cut_off}"
    )

    assert menu_bar == "none", f"{notebook}: the slideshow leaves the menu bar showing"
    if got != [(i, shown) for i, shown in expected]:
        shown_ever = {j for _, shown in got for j in shown}
        missing = [i for _, shown in expected for i in shown if i not in shown_ever]
        missing = sorted(set(missing))
        first = next(
            (k for k, (a, b) in enumerate(zip(got, expected)) if a != tuple(b)),
            min(len(got), len(expected)),
        )
        dash = [i for i in missing if _explicit_dash(cells[i])]
        pytest.fail(
            f"{notebook}: the slideshow does not follow the slide metadata. "
            f"{len(got)} presses, {len(expected)} expected; first difference at press "
            f"{first}: shown {got[first] if first < len(got) else 'nothing'}, expected "
            f"{expected[first] if first < len(expected) else 'the end'}.\n"
            f"Cells never shown ({len(missing)}): {missing}\n"
            + (
                f"{len(dash)} of them have slide_type '-': jupyterlab-slideshow reads "
                "only a MISSING slide_type as 'continue' and never shows a '-' cell "
                "(JupyterLab 4's own Property Inspector stores '-' as no slide_type).\n"
                if dash
                else ""
            )
            + f"the presses: {nb.artifacts}/slideshow.json"
        )
    assert not widget_problems, f"{notebook}:\n" + "\n".join(widget_problems)
    assert not cut_off, (
        f"{notebook}: cells the slideshow cannot show whole on the projector's {height} "
        f"px (cell: [top, bottom] in CSS px when it is the active one): {cut_off}\n"
        f"screenshots: {nb.artifacts}/slideshow-cut-off-*.png"
    )
    reached = {a for a, _ in got}
    assert set(widgets) <= reached, (
        f"{notebook}: widget cells never reached: {sorted(set(widgets) - reached)}"
    )
    if len(got) > 1:
        assert back == got[-2][0], (
            f"{notebook}: Shift+Space from cell {got[-1][0]} went to {back}, "
            f"not back to {got[-2][0]}"
        )
    assert left not in (None, "none"), f"{notebook}: Esc did not leave the slideshow"
    assert _setting_active(lab_server) is False, (
        f"{notebook}: the setting {PLUGIN} 'active' is still on after Esc: the next "
        "page load would start in the slideshow"
    )
    assert not external, f"{notebook}: fetched from outside: {external[:5]}"
