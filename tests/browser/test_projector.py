"""Browser tests at the classroom screen: a 1280x720 projector at 150% zoom, file browser closed.

The whole browser session runs at that size (lab.PROJECTOR: a 853x480 CSS px window at 1.5
device pixels per CSS px). For each notebooks/*.ipynb, after run all:
- test_fits_the_projector: no output (and no rendered markdown: display equations, tables) is
  wider than its area, no image or live canvas is cut off or shrunk to fit, every live widget
  (figure + controls) is at most 480 CSS px high (right after the run and, in the English
  lessons, after each of its controls was moved once) and fits its output area, and shows no ipympl header, toolbar or
  footer. Each widget scrolled to the top of the notebook's part of the screen (what is left
  of 480 px under JupyterLab's bars) shows its whole canvas and every control there, each
  slider's track at least MIN_SLIDER px long: a teacher drags and sees the picture move. Screenshots of what the projector shows, one per widget, go to
  test-artifacts/browser/<notebook>/projector-*.png.
- test_widgets_quiet_when_idle: after every control of every widget was moved once
  (test_widgets_respond's moves) and the answers arrived, nothing at all travels between page
  and kernel for conftest.IDLE_SECONDS (3 s; no comm message either way); the counts are
  printed and saved to idle-messages.json (the English lessons: the Chinese ones build the
  same widgets).
- test_drag_frames (one lesson, DRAG): drags a slider with the mouse in small steps; every step
  changes readout and picture; the frames (drag-NN.png + drag.json) feed
  scripts/make_animation.py, which makes the README's animated picture.
The live slideshow is tested in test_slideshow.py. Each lesson is opened and run once for all
of these (conftest.OpenNotebook).
"""

from __future__ import annotations

import json

import lab
import pytest

pytestmark = pytest.mark.xdist_group("browser")

NOTEBOOKS = lab.discover_notebooks()
MAX_WIDGET_HEIGHT = lab.PROJECTOR["height"]  # figure + controls on one screen
# A slider a teacher can drag at the projector: its track at least this long (CSS px)
MIN_SLIDER = 100
MAX_LINE = (
    88  # the course's code line length (ruff); at the projector the editor shows ~85
)
# the lesson whose widget is dragged for the README animation, and the slider to drag
DRAG = {
    "notebook": "07_rope_in_practice.ipynb",
    "slider": "position",
    "steps": 16,
    "pixels": 5.0,
}


def _screen_summary(m: dict) -> dict:
    """on_screen()'s numbers in short: the view, the canvas, the slider tracks."""
    canvas = m["canvas"] or {}
    return {
        "view": m["view"],
        "canvas": [canvas.get("top"), canvas.get("bottom")],
        "controls_bottom": max((c["bottom"] for c in m["controls"]), default=None),
        "sliders": {
            c["name"]: c["length"] for c in m["controls"] if c["kind"] == "slider"
        },
    }


def _short(items: list[dict], n: int = 12) -> str:
    return "\n".join(
        "  " + json.dumps(item, ensure_ascii=False) for item in items[:n]
    ) + (f"\n  ... and {len(items) - n} more" if len(items) > n else "")


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_fits_the_projector(notebooks, notebook):
    nb = notebooks.get(notebook)
    measured = nb.projector()  # right after the run
    size, found, boxes = measured["size"], measured["found"], measured["boxes"]
    assert size == [
        lab.PROJECTOR["width"],
        lab.PROJECTOR["height"],
        lab.PROJECTOR_SCALE,
    ], size
    assert measured["left_closed"], "the file browser is open"
    # and after every control was moved once (the English lessons; the Chinese ones build
    # the same widgets): a readout that grows must still fit
    moved = boxes and not notebook.startswith("zh/")
    after = {box["index"]: box for box in nb.exercise()["boxes_after"]} if moved else {}

    widest = max(found["widths"], key=lambda r: r["width"] - r["area"], default=None)
    on_screen = measured["on_screen"]
    summary = {
        "output_area": found["outputArea"],
        "widest": widest,
        "widgets": boxes,
        "on_screen": {i: _screen_summary(m) for i, m in on_screen.items()},
        "widget_heights_after_moves": {i: box["height"] for i, box in after.items()},
        "code_cells_scrolling": len(found["code"]),
        "longest_code_line_that_fits": found["fits"],
        "notebook_visible_height": found["visibleHeight"],
    }
    (nb.artifacts / "projector.json").write_text(
        json.dumps(
            {**summary, "wide": found["wide"], "code": found["code"]},
            indent=1,
            ensure_ascii=False,
        )
    )
    print(f"{notebook}: {json.dumps(summary, ensure_ascii=False)}")

    problems = []
    if found["wide"]:
        problems.append(
            f"{len(found['wide'])} output(s) wider than their area "
            f"(output area {found['outputArea']} CSS px):\n" + _short(found["wide"])
        )
    for box in boxes:
        moved = after.get(box["index"])
        for state, b in (("after the run", box), ("after moving its controls", moved)):
            if b is not None and b["height"] > MAX_WIDGET_HEIGHT:
                problems.append(
                    f"widget {b['index']} is {b['height']} CSS px high {state}: figure and "
                    f"controls do not fit the {MAX_WIDGET_HEIGHT} px screen "
                    f"(canvases {b['canvases']})"
                )
        if box["area"] and box["width"] > box["area"] + 1:
            problems.append(
                f"widget {box['index']} is {box['width']} CSS px wide in a {box['area']} px area"
            )
        if box["header"]:
            problems.append(
                f"widget {box['index']} shows ipympl's {', '.join(box['header'])}"
            )
    for i, m in on_screen.items():
        for problem in lab.off_screen(m, MIN_SLIDER):
            problems.append(
                f"widget {i} scrolled to the top of the notebook's {m['view'][1] - m['view'][0]} "
                f"px: {problem}"
            )
    too_long = [c for c in found["code"] if c["chars"] > MAX_LINE]
    if too_long:
        problems.append(
            f"{len(too_long)} code cell(s) with lines over {MAX_LINE} characters scroll sideways "
            f"(editor {too_long[0]['area']} CSS px):\n" + _short(too_long, 6)
        )
    assert not problems, (
        f"{notebook} at {size[0]}x{size[1]} CSS px, {size[2]} device px per CSS px:\n"
        + "\n".join(problems)
        + f"\nscreenshots: {nb.artifacts}/projector-*.png"
    )


# The Chinese lessons build the same widgets with other labels: what they send when
# nobody touches them is checked once, on the English lessons (3 s a lesson).
@pytest.mark.parametrize("notebook", [n for n in NOTEBOOKS if not n.startswith("zh/")])
def test_widgets_quiet_when_idle(notebooks, notebook):
    nb = notebooks.get(notebook)
    if not nb.widgets():
        pytest.skip(f"{notebook} has no live widget")
    # every control of every widget was moved once before (conftest.OpenNotebook.idle)
    record = nb.idle()
    seconds, n = record["idle_seconds"], record["all_messages"]
    print(
        f"{notebook}: idle {seconds:.1f} s: {record['comm_to_page']} comm messages kernel->page, "
        f"{record['comm_to_kernel']} page->kernel, {n} messages in all"
    )
    assert record["settled_before"], (
        f"{notebook}: messages still flowing {record['settle_max_s']:.0f} s after the last move: "
        f"{record['by_kind']}"
    )
    assert not n, (
        f"{notebook}: nobody touched the widgets for {seconds:.1f} s, yet "
        f"{record['comm_to_page']} comm messages went kernel->page and "
        f"{record['comm_to_kernel']} page->kernel ({n} messages in all; "
        f"{n / seconds:.1f}/s): {record['by_kind']}\nafter moving {record['after_moving']}"
    )


@pytest.mark.parametrize(
    "notebook",
    [n for n in NOTEBOOKS if n == DRAG["notebook"]]
    or [
        pytest.param(
            DRAG["notebook"],
            marks=pytest.mark.skip(reason=f"notebooks/{DRAG['notebook']} is not there"),
        )
    ],
)
def test_drag_frames(notebooks, notebook):
    nb = notebooks.get(notebook)
    page = nb.page
    widgets = lab.find_widgets(page)
    found = [
        (w, c)
        for w in widgets
        for c in w["controls"]
        if c["kind"] == "slider" and c["name"] == DRAG["slider"]
    ]
    assert found, (
        f"{notebook}: no widget with a slider {DRAG['slider']!r}: {[w['controls'] for w in widgets]}"
    )
    widget, control = found[0]
    i = widget["index"]
    root = page.locator(f'[data-rope-widget="{i}"]')
    lab.wait_canvas_drawn(page, i)
    # the projector's width, but tall enough for the whole widget under JupyterLab's bars
    page.set_viewport_size({"width": lab.PROJECTOR["width"], "height": 900})
    try:
        _drag(page, nb, notebook, i, root, control)
    finally:
        page.set_viewport_size(lab.PROJECTOR)


def _drag(page, nb, notebook, i, root, control):
    lab.scroll_to_top_of(page, f'[data-rope-widget="{i}"]')
    target = page.locator(control["selector"]).locator(".noUi-target").first
    now, lo, hi = target.evaluate(
        "t => [Number(t.noUiSlider.get(true)), t.noUiSlider.options.range.min, t.noUiSlider.options.range.max]"
    )
    track = target.bounding_box()
    # at least one unit per step, at least DRAG["pixels"] px per step, and stay on the track
    step_px = max(track["width"] / (hi - lo), DRAG["pixels"])
    room = (
        track["x"]
        + track["width"] * (hi - lo - 0.5) / (hi - lo)
        - (track["x"] + track["width"] * (now - lo) / (hi - lo))
    )
    steps = min(DRAG["steps"], int(room // step_px))
    assert steps >= 3, (
        f"slider {DRAG['slider']!r} at {now} of [{lo}, {hi}]: no room to drag"
    )

    for old in nb.artifacts.glob("drag-*.png"):
        old.unlink()
    handle = page.locator(control["selector"]).locator(".noUi-handle").first
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    frames = []

    def frame(n: int, hx: float, hy: float) -> None:
        rbox = root.bounding_box()
        name = f"drag-{n:02d}.png"
        root.screenshot(path=str(nb.artifacts / name))
        frames.append(
            {
                "file": name,
                "pointer": [round(hx - rbox["x"], 1), round(hy - rbox["y"], 1)],
                "size": [round(rbox["width"]), round(rbox["height"])],
                "value": lab.slider_value(page, control["selector"]),
            }
        )

    before = lab.wait_changed(page, i, None)["sig"]
    frame(0, x, y)
    page.mouse.move(x, y)
    page.mouse.down()
    unchanged = []
    for n in range(1, steps + 1):
        x += step_px
        page.mouse.move(x, y, steps=3)
        result = lab.wait_changed(page, i, before, quiet_ms=250)
        if not result["ok"]:
            unchanged.append(
                f"step {n}: readout changed {result['readoutChanged']}, "
                f"picture changed {result['canvasChanged']}"
            )
        before = result["sig"]
        frame(n, x, y)
    page.mouse.up()
    meta = {
        "notebook": notebook,
        "widget": i,
        "slider": DRAG["slider"],
        "scale": lab.PROJECTOR_SCALE,
        "frames": frames,
    }
    (nb.artifacts / "drag.json").write_text(json.dumps(meta, indent=1))
    values = [f["value"] for f in frames]
    assert not unchanged, (
        f"{notebook}: dragging {DRAG['slider']!r} ({values}):\n" + "\n".join(unchanged)
    )
    assert len(set(values)) == len(values), (
        f"the slider did not follow the mouse: {values}"
    )
