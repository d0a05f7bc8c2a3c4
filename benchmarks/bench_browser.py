"""Key press to pixels: how long a live widget takes to redraw in JupyterLab after an arrow key.

Starts the same throwaway JupyterLab and headless Chromium as the browser tests
(tests/browser/lab.py: a temporary copy of notebooks/, random port and token), opens each notebook
that shows a widget, runs it, and for each live widget presses ArrowRight N times on its first
slider (ArrowLeft once the slider is at its end). Each time it measures, in the page's own clock,
from the keydown event to the first drawImage onto the widget's visible ipympl canvas that
changes its pixels (the frame that shows them follows within one refresh, <= 16 ms). It waits
for the widget to settle before the next press. Prints the median per widget as a Markdown table.

    python benchmarks/bench_browser.py [-n 9] [notebook.ipynb ...]

The page is the classroom projector (lab.PROJECTOR: 853x480 CSS px at 1.5 device px per CSS px,
file browser closed), as in the browser tests.

Needs /usr/bin/chromium (apt-get install -y chromium) and the playwright package.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))
import lab  # noqa: E402

# Instrument one widget: record the keydown time, and the time of the first drawImage that
# changes the pixels of one of its canvases.
_JS_INSTRUMENT = r"""(i) => {
  const root = document.querySelector(`[data-rope-widget="${i}"]`);
  const hash = (c) => {
    if (!c.width || !c.height) return 'empty';
    const d = new Uint32Array(c.getContext('2d').getImageData(0, 0, c.width, c.height).data.buffer);
    let h = 2166136261 >>> 0;
    for (let k = 0; k < d.length; k++) { h ^= d[k]; h = Math.imul(h, 16777619) >>> 0; }
    return c.width + 'x' + c.height + ':' + h;
  };
  const state = window.__ropeBench = {armed: false, press: null, draw: null, base: new Map(), draws: 0};
  const canvases = [...root.querySelectorAll('.jupyter-matplotlib canvas')];
  canvases.forEach(c => {
    const ctx = c.getContext('2d');
    const original = ctx.drawImage.bind(ctx);
    ctx.drawImage = (...args) => {
      const result = original(...args);
      const t = performance.now();
      if (state.armed && state.press !== null && state.draw === null) {
        state.draws++;
        if (hash(c) !== state.base.get(c)) state.draw = t;
      }
      return result;
    };
  });
  state.arm = () => {
    canvases.forEach(c => state.base.set(c, hash(c)));
    state.press = null; state.draw = null; state.draws = 0; state.armed = true;
  };
  document.addEventListener('keydown', (e) => {
    if (state.armed && state.press === null && root.contains(e.target)) state.press = performance.now();
  }, true);
  return canvases.length;
}"""


def _has_widget(path: Path) -> bool:
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        if ".widget()" in "".join(cell["source"]):
            return True
        for out in cell.get("outputs", []):
            if "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
                return True
    return False


def measure_widget(page, widget: dict, presses: int) -> tuple[str, list[float]]:
    sliders = [c for c in widget["controls"] if c["kind"] == "slider"]
    if not sliders:
        return "(no slider)", []
    slider = sliders[0]
    i = widget["index"]
    lab.wait_canvas_drawn(page, i)
    page.evaluate(_JS_INSTRUMENT, i)
    times = []
    for _ in range(presses):
        lab.wait_changed(page, i, None, quiet_ms=300)
        handle = page.locator(slider["selector"]).locator(".noUi-handle").first
        now, hi = (
            page.locator(slider["selector"])
            .locator(".noUi-target")
            .first.evaluate(
                "t => [Number(t.noUiSlider.get(true)), t.noUiSlider.options.range.max]"
            )
        )
        key = "ArrowLeft" if now >= hi else "ArrowRight"
        handle.focus()
        page.evaluate("() => window.__ropeBench.arm()")
        handle.press(key)
        page.wait_for_function(
            "() => window.__ropeBench.draw !== null", timeout=15_000, polling=20
        )
        state = page.evaluate(
            "() => ({press: window.__ropeBench.press, draw: window.__ropeBench.draw})"
        )
        times.append(state["draw"] - state["press"])
    page.evaluate("() => { window.__ropeBench.armed = false; }")
    return slider["name"], times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-n",
        "--presses",
        type=int,
        default=9,
        help="key presses per widget (default 9)",
    )
    parser.add_argument(
        "notebooks",
        nargs="*",
        help="notebook names in notebooks/ (default: every one with a widget)",
    )
    args = parser.parse_args(argv)
    reason = lab.skip_reason()
    if reason:
        print(f"bench_browser: cannot run: {reason}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    names = args.notebooks or [
        n for n in lab.discover_notebooks() if _has_widget(lab.notebooks_dir() / n)
    ]
    rows = []
    start = time.monotonic()
    with (
        lab.LabServer() as server,
        sync_playwright() as p,
        tempfile.TemporaryDirectory(prefix="rope-chromium-") as profile,
    ):
        context = lab.launch_chromium(p, profile)
        try:
            for name in names:
                page = lab.open_notebook(context, server, name)
                try:
                    status = lab.run_all(page)
                    if status != "done":
                        print(
                            f"{name}: run all stopped ({status}); skipped",
                            file=sys.stderr,
                        )
                        continue
                    for widget in lab.find_widgets(page):
                        try:
                            slider, times = measure_widget(page, widget, args.presses)
                        except (
                            Exception
                        ) as exc:  # e.g. a canvas that never shows a picture
                            print(
                                f"{name} widget {widget['index']}: {exc.__class__.__name__}: "
                                f"{str(exc).splitlines()[0]}",
                                file=sys.stderr,
                            )
                            rows.append(
                                (
                                    name,
                                    widget["index"],
                                    f"(failed: {exc.__class__.__name__})",
                                    [],
                                )
                            )
                            continue
                        rows.append((name, widget["index"], slider, times))
                        print(
                            f"{name} widget {widget['index']} {slider!r}: "
                            + ", ".join(f"{t:.0f}" for t in times)
                            + " ms",
                            file=sys.stderr,
                        )
                finally:
                    lab.close_page(page, server)
        finally:
            context.close()

    print(
        f"\nKey press to changed canvas pixels, {args.presses} ArrowRight presses per widget "
        f"(headless Chromium, JupyterLab, ipympl; {time.monotonic() - start:.0f} s in all)\n"
    )
    print("| notebook | widget | slider | median ms | min ms | max ms |")
    print("|---|---|---|---:|---:|---:|")
    for name, index, slider, times in rows:
        if times:
            print(
                f"| {name} | {index} | {slider} | {statistics.median(times):.0f} | {min(times):.0f} | {max(times):.0f} |"
            )
        else:
            print(f"| {name} | {index} | {slider} | - | - | - |")
    return 1 if any(not times for *_, times in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
