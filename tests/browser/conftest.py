"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium per
session, and one open, executed notebook at a time, run ONCE for every check of that
notebook.

Every test here is skipped, with the reason, when /usr/bin/chromium or the playwright
package is missing (install Debian's chromium: apt-get install -y chromium). Run them
alone with `python -m pytest tests/browser`; `make test` runs them with everything else
(under pytest-xdist they all carry the xdist group "browser": with `--dist loadgroup`
one worker runs them all, so each lesson is opened and run once in the whole session).
The browser is the classroom projector: 853x480 CSS px at 1.5 device px per CSS px (a
1280x720 screen at 150% zoom), file browser closed (lab.PROJECTOR).

How a lesson is checked (OpenNotebook): it is opened and run once; then, each step at
most once and in this order, whichever test needs it first:
  projector()  measure what the projector shows right after the run (widths, widget
               sizes, each widget's canvas and controls on the screen, screenshots);
  exercise()   move every control of every live widget once (readout and picture must
               change), then measure the widgets' sizes again;
  idle()       after that, count every message between page and kernel for IDLE_SECONDS.
The tests only judge these results, so their order does not matter for what they see.
Screenshots go to test-artifacts/browser/<notebook>/ (or
$ROPE_BROWSER_ARTIFACTS/<notebook>/); the time each step took goes to timings.json there
and to the end of pytest's report.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import lab
import pytest

# ROPE_BROWSER_ARTIFACTS: another folder for them (two runs at once must not share one)
ARTIFACTS = Path(
    os.environ.get("ROPE_BROWSER_ARTIFACTS") or lab.REPO / "test-artifacts" / "browser"
)
HERE = Path(__file__).resolve().parent
REQUIRED = lab.REQUIRED  # CI: a missing chromium/playwright fails, not skips
# Nothing may travel between page and kernel in this window (nobody touches a widget).
IDLE_SECONDS = 3.0
# Before the window: the last answer to the last move has arrived when no message came
# for this long (at most SETTLE_MAX_MS in all).
SETTLE_QUIET_MS, SETTLE_MAX_MS = 500, 5_000

# Within one notebook the tests run in this order (the unlisted ones after them, as
# collected): the checks of the state right after the run first, what changes the
# widgets' state last.
_TEST_ORDER = [
    "test_notebook_runs_clean",
    "test_outputs_are_the_stored_ones",
    "test_fits_the_projector",
    "test_widgets_respond",
    "test_widgets_quiet_when_idle",
    "test_lesson02_score_matches_formula",
    "test_lesson04_product_depends_on_the_offset_only",
    "test_drag_frames",
]


def _is_browser_item(item) -> bool:
    return HERE in Path(str(item.fspath)).resolve().parents


def pytest_collection_modifyitems(config, items):
    """All browser tests of one notebook run one after the other (the notebook is opened
    and executed once for them all), in _TEST_ORDER, each lesson's before its Chinese
    twin's; skipped with a reason when they cannot run."""
    reason = lab.skip_reason()
    # each lesson, then its Chinese twin (which runs behind it: Notebooks)
    names = sorted(lab.discover_notebooks(), key=lambda n: (Path(n).name, "/" in n))
    order = {name: i for i, name in enumerate(names)}
    rank = {name: i for i, name in enumerate(_TEST_ORDER)}
    slots = [i for i, item in enumerate(items) if _is_browser_item(item)]
    browser = [items[i] for i in slots]

    def key(item):
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("notebook") if callspec else None
        return order.get(name, len(order)), rank.get(item.originalname, len(rank))

    for slot, item in zip(slots, sorted(browser, key=key)):  # sorted() is stable
        items[slot] = item
        if reason and not REQUIRED:
            item.add_marker(pytest.mark.skip(reason=reason))


_TIMINGS: dict[str, dict] = {}  # notebook -> seconds per step, for the report


def pytest_terminal_summary(terminalreporter):
    if not _TIMINGS:
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timings.json").write_text(json.dumps(_TIMINGS, indent=1))
    terminalreporter.write_line("browser tests, seconds per lesson and step:")
    for name, steps in _TIMINGS.items():
        parts = ", ".join(f"{step} {seconds:.1f}" for step, seconds in steps.items())
        terminalreporter.write_line(f"  {name}: {parts}")
    terminalreporter.write_line(f"browser test screenshots: {ARTIFACTS}")


@pytest.fixture(scope="session")
def lab_server():
    reason = lab.skip_reason()
    if reason:
        if REQUIRED:
            pytest.fail(f"ROPE_BROWSER_REQUIRED is set but {reason}")
        pytest.skip(reason)
    # the Chinese lessons on torch's plain kernels with two threads, the English ones on
    # this CPU's own: their outputs are compared with the stored ones (stored_outputs)
    server = lab.LabServer(portable=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(lab_server):
    """A persistent Chromium context with a fresh profile (shared by all pages)."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="rope-chromium-")
    with sync_playwright() as p:
        context = lab.launch_chromium(p, profile)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


class OpenNotebook:
    """One notebook open in the browser and executed: the page, what the run left, and
    the measurements every test of this notebook judges (each made once, on first
    use)."""

    def __init__(
        self,
        name: str,
        page,
        status: str,
        prompts: list,
        errors: dict,
        seconds: float,
        executed: dict,
    ):
        self.name = name
        self.page = page
        self.status = status
        self.prompts = prompts
        self.errors = errors
        self.executed = executed  # the notebook as the run left it (nbformat JSON)
        self.seconds = seconds
        self.timings = _TIMINGS.setdefault(name, {})
        self.timings["run all"] = round(seconds, 1)
        self._widgets = None
        self._projector = None
        self._exercise = None
        self._idle = None

    @property
    def artifacts(self) -> Path:
        return ARTIFACTS / Path(self.name).with_suffix("")  # zh/03_... for the Chinese

    # -- the live widgets --------------------------------------------------------------
    def widgets(self) -> list[dict]:
        """Every live widget (lab.find_widgets), found once; waits for each one's first
        picture. self.never_drawn: widget index -> what the page showed when a picture
        never came."""
        if self._widgets is None:
            page = self.page
            self._widgets = lab.find_widgets(page)
            self.never_drawn = {}
            for w in self._widgets:
                i = w["index"]
                try:
                    lab.wait_canvas_drawn(page, i)
                except (
                    Exception
                ) as exc:  # playwright's TimeoutError: reported by the tests
                    shot = self.artifacts / f"w{i}-never-drawn.png"
                    page.locator(f'[data-rope-widget="{i}"]').screenshot(path=str(shot))
                    sizes = page.evaluate(
                        "(i) => [...document.querySelectorAll("
                        '`[data-rope-widget="${i}"] .jupyter-matplotlib canvas`)]'
                        ".map(c => c.width + 'x' + c.height)",
                        i,
                    )
                    kernel = "\n".join(lab.errors(page)["kernel"]) or "none"
                    self.never_drawn[i] = (
                        f"widget {i}'s ipympl canvas shows no picture within 20 s "
                        f"(canvas sizes "
                        f"{sizes}; {exc.__class__.__name__}); kernel errors: {kernel}; "
                        f"screenshot {shot}"
                    )
        return self._widgets

    # -- step 1: what the projector shows after the run --------------------------------
    def projector(self) -> dict:
        """Widths and heights at the projector size right after the run, and
        screenshots: the top of the lesson and each widget at the top of the screen
        (projector-*.png)."""
        if self._projector is None:
            start = time.monotonic()
            page = self.page
            widgets = self.widgets()
            size = page.evaluate(
                "() => [window.innerWidth, window.innerHeight, window.devicePixelRatio]"
            )
            left_closed = page.evaluate("() => window.jupyterapp.shell.leftCollapsed")
            found = lab.layout(page)
            boxes = lab.widget_boxes(page)
            page.evaluate(
                "() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) "
                ".jp-WindowedPanel-outer')?.scrollTo(0, 0)"
            )
            lab.next_frame(page)
            page.screenshot(path=str(self.artifacts / "projector-00-top.png"))
            on_screen = {}
            for w in widgets:
                # the widget's top at the top of the notebook's part of the screen: what
                # a teacher sees of it there
                lab.scroll_to_top_of(page, f'[data-rope-widget="{w["index"]}"]')
                on_screen[w["index"]] = lab.on_screen(page, w["index"])
                page.screenshot(
                    path=str(self.artifacts / f"projector-w{w['index']}.png")
                )
            self._projector = {
                "size": size,
                "left_closed": left_closed,
                "found": found,
                "boxes": boxes,
                "on_screen": on_screen,
            }
            self.timings["projector"] = round(time.monotonic() - start, 1)
        return self._projector

    # -- step 2: every control of every widget, moved once -----------------------------
    def exercise(self) -> dict:
        """Move each control of each live widget once, the way a person would
        (lab.move_control), and check that the readout AND the picture change.
        Screenshots: w<i>-start.png, w<i>-moved.png after all the moves, and one after
        each move that changed too little (w<i>-<nn>-<control>.png).
        Afterwards the widgets are measured again (a readout that grows can push a
        widget past the screen). Returns {'failures', 'moves', 'kernel_errors',
        'boxes_after'}."""
        if self._exercise is None:
            self.projector()  # measured first: the state right after the run
            start = time.monotonic()
            page = self.page
            failures, moves = [], []
            for widget in self.widgets():
                i = widget["index"]
                if i in self.never_drawn:
                    failures.append(self.never_drawn[i])
                    continue
                if not widget["controls"]:
                    failures.append(f"widget {i} has no controls")
                    continue
                root = page.locator(f'[data-rope-widget="{i}"]')
                before = lab.wait_changed(page, i, None)["sig"]
                root.scroll_into_view_if_needed()
                root.screenshot(path=str(self.artifacts / f"w{i}-start.png"))
                for control in widget["controls"]:
                    name = lab.slug(control["name"] or control["kind"])
                    label = f"w{i}-{control['index']:02d}-{name}"
                    root.scroll_into_view_if_needed()
                    how = lab.move_control(page, control)
                    if (
                        how == "fixed"
                    ):  # e.g. a slider whose range is a single value right now
                        moves.append(f"{label}: cannot move (single value), skipped")
                        continue
                    result = lab.wait_changed(page, i, before)
                    before = result["sig"]
                    moves.append(f"{label}: {how}")
                    if not result["ok"]:
                        root.screenshot(path=str(self.artifacts / f"{label}.png"))
                        what = [
                            part
                            for part, changed in (
                                ("readout", result["readoutChanged"]),
                                ("figure", result["canvasChanged"]),
                            )
                            if not changed
                        ]
                        failures.append(
                            f"widget {i} control {control['kind']} {control['name']!r} "
                            f"({how}): "
                            f"{' and '.join(what)} did not change within 8 s"
                        )
                root.screenshot(path=str(self.artifacts / f"w{i}-moved.png"))
            self._exercise = {
                "failures": failures,
                "moves": moves,
                "kernel_errors": lab.errors(page)["kernel"],
                "boxes_after": lab.widget_boxes(page),
            }
            self.timings["exercise"] = round(time.monotonic() - start, 1)
        return self._exercise

    # -- step 3: nobody touches anything -----------------------------------------------
    def idle(self) -> dict:
        """After exercise() (every widget has drawn both ways: its first picture and
        updates), wait until the last answers arrived, then record every message between
        page and kernel for IDLE_SECONDS. Saved to idle-messages.json."""
        if self._idle is None:
            self.exercise()
            start = time.monotonic()
            page = self.page
            page.evaluate(
                "() => document.activeElement && document.activeElement.blur()"
            )
            settled = lab.wait_messages_quiet(page, SETTLE_QUIET_MS, SETTLE_MAX_MS)
            mark = lab.message_mark(page)
            t0 = time.monotonic()
            page.wait_for_timeout(IDLE_SECONDS * 1000)  # the measurement window itself
            seconds = time.monotonic() - t0
            messages = lab.messages_since(page, mark)
            comm = lab.comm_messages(messages)
            kinds: dict[str, int] = {}
            for m in messages:
                key = f"{m['dir']} {m['type']} {m['what']}".strip()
                kinds[key] = kinds.get(key, 0) + 1
            self._idle = {
                "idle_seconds": round(seconds, 1),
                "settled_before": settled,
                "settle_max_s": SETTLE_MAX_MS / 1000,
                "comm_to_kernel": len([m for m in comm if m["dir"] == "to kernel"]),
                "comm_to_page": len([m for m in comm if m["dir"] == "to page"]),
                "all_messages": len(messages),
                "by_kind": kinds,
                "after_moving": self._exercise["moves"],
            }
            (self.artifacts / "idle-messages.json").write_text(
                json.dumps(self._idle, indent=1)
            )
            self.timings["idle"] = round(time.monotonic() - start, 1)
        return self._idle


class Notebooks:
    """Opens and runs a notebook on first use and keeps it open for the next tests of
    the same notebook; opening another one closes it and shuts its kernel down. A
    notebook is opened and run once per session (the tests of one notebook run together).
    A lesson's Chinese twin, next in the order, runs behind it while the lesson is checked
    (two kernels on the two cores): its own checks, at the projector, come when it has
    run."""

    def __init__(self, server, context, order: list[str] = ()):
        self.server, self.context = server, context
        self.current: OpenNotebook | None = None
        self._closing = []  # threads shutting closed notebooks' kernels down
        # the notebooks in the order the tests use them: while the tests of one notebook
        # run, the browser already loads the next one (JupyterLab, the notebook, an idle
        # kernel)
        self.order = list(order)
        self._next: tuple[str, object] | None = None  # (name, page) being loaded
        self._running: tuple[str, object] | None = None  # (name, page) running ahead

    def get(self, name: str) -> OpenNotebook:
        if self.current is not None and self.current.name == name:
            return self.current
        start = time.monotonic()
        self.close()
        closed = time.monotonic()
        page, ran_ahead = None, False
        if self._running is not None:  # started behind the lesson before it
            ahead, running = self._running
            self._running = None
            if ahead == name:
                page, ran_ahead = running, True
                page.bring_to_front()
            else:
                self._drop(running)
        if page is None and self._next is not None:
            ahead, loading = self._next
            self._next = None
            if ahead == name:
                try:
                    page = lab.finish_opening(loading)
                except Exception:  # something went wrong while loading: start afresh
                    self._drop(loading)
            else:
                self._drop(loading)
        if page is None:
            page = lab.open_notebook(self.context, self.server, name)
        opened_at = time.monotonic()
        # while this lesson runs and is checked, the browser loads the next one (JupyterLab,
        # the notebook, an idle kernel): started now, it is ready when its tests come
        order = self.order
        following = order[order.index(name) + 1 :] if name in order else []
        if following and self._next is None:  # (a twin running ahead opened it)
            ahead = lab.start_opening(self.context, self.server, following[0])
            self._next = (following[0], ahead)
            # the page under test stays in front: a page behind it gets its timers and
            # animation frames throttled (its drawing would crawl)
            page.bring_to_front()
        try:
            status = lab.wait_run_all(page) if ran_ahead else lab.run_all(page)
        except Exception as exc:  # a timeout: report what the prompts say
            status = f"timeout: {exc.__class__.__name__}"
        self._run_twin_ahead(name, page)
        opened = OpenNotebook(
            name,
            page,
            status,
            lab.prompts(page),
            lab.errors(page),
            time.monotonic() - opened_at,
            lab.executed_notebook(page),
        )
        if ran_ahead:  # the time it still took once in front
            opened.timings["run all, rest after running ahead"] = opened.timings.pop(
                "run all"
            )
        opened.timings["close previous"] = round(closed - start, 1)
        opened.timings["open"] = round(opened_at - closed, 1)
        self.current = opened
        shutil.rmtree(opened.artifacts, ignore_errors=True)
        opened.artifacts.mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=str(opened.artifacts / "notebook-after-run.png"), full_page=True
        )
        return opened

    def _run_twin_ahead(self, name: str, page) -> None:
        """If the next notebook is this lesson's Chinese twin (loaded meanwhile), start
        running it now, behind this one, which stays in front for its checks."""
        if self._next is None or self._next[0] != f"zh/{name}":
            return
        twin, loading = self._next
        self._next = None
        try:
            lab.finish_opening(loading)
            lab.start_run_all(loading)
            self._running = (twin, loading)
        except Exception:  # it is opened and run afresh when its turn comes
            self._drop(loading)
        # and the lesson after the twin starts loading (the twin's own checks are short)
        after = self.order[self.order.index(twin) + 1 :]
        if after:
            self._next = (
                after[0],
                lab.start_opening(self.context, self.server, after[0]),
            )
        page.bring_to_front()

    def _drop(self, page) -> None:
        self._closing.append(
            lab.close_page(page, self.server, wait=False, only_its_own=True)
        )

    def close(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            # its kernel shuts down while the next notebook opens (the next one's own
            # kernel, started already, stays)
            self._closing.append(
                lab.close_page(current.page, self.server, wait=False, only_its_own=True)
            )


@pytest.fixture(scope="session")
def notebooks(request, lab_server, browser):
    order = []  # the notebooks, in the order the selected tests use them
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("notebook") if callspec else None
        if _is_browser_item(item) and name and name not in order:
            order.append(name)
    manager = Notebooks(lab_server, browser, order)
    try:
        yield manager
    finally:
        manager.close()
        for pending in (manager._next, manager._running):
            if pending is not None:
                manager._drop(pending[1])
        for thread in manager._closing:
            thread.join(timeout=30)
