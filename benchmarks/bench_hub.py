"""Sizing the class hub: memory and CPU per student, and key-to-pixels with N students.

Starts the class hub of `make hub` (tests/hub/hubclass.py: made-up students, free ports,
everything removed afterwards), signs students in with headless Chromium, and measures:

1. One student: the memory of all their processes (their JupyterLab server and kernels;
   RSS, and USS: the memory only they use, what each more student adds) and the CPU time
   they use, after logging in, after running lesson 3, after running lesson 7 next to it,
   and while dragging the widgets of both (ArrowRight on the first slider, as
   benchmarks/bench_browser.py).
2. N = 1, 2, 4, ... students with lessons 3 and 7 open and run: every student presses a
   key on the same widget at the same moment, R rounds per lesson; key-to-pixels is timed
   in each page (keydown to the first drawImage that changes the widget's canvas).

Prints Markdown tables. The browsers run on the same machine as the hub (one Chromium,
a context per student), so the latencies include their drawing: an upper bound of what
students on their own laptops see.

    python benchmarks/bench_hub.py [--students 1 2 4 8] [--rounds 7]

Needs root (one Unix user per student), /usr/bin/chromium and hub/node_modules
(make test-hub installs it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests" / "hub")]
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))
import bench_browser  # noqa: E402
import hubclass  # noqa: E402
import lab  # noqa: E402

LESSONS = ["03_rotation_2d.ipynb", "07_rope_in_practice.ipynb"]


def usage(name: str) -> dict:
    """RSS and USS (MB) and CPU seconds of every process of the Unix user `name`."""
    rss = uss = cpu = 0.0
    for proc in hubclass.user_processes(name):
        try:
            mem = proc.memory_full_info()
            times = proc.cpu_times()
        except psutil.Error:
            continue
        rss += mem.rss / 2**20
        uss += mem.uss / 2**20
        cpu += times.user + times.system
    return {"rss": rss, "uss": uss, "cpu": cpu}


def first_slider_widget(page) -> dict:
    for widget in lab.find_widgets(page):
        if any(c["kind"] == "slider" for c in widget["controls"]):
            return widget
    raise LookupError("no widget with a slider")


class Student:
    """One student's browser context with a page per lesson, run and instrumented."""

    def __init__(self, hub, browser, name: str):
        self.hub, self.name = hub, name
        self.context = browser.new_context(viewport={"width": 1280, "height": 720})
        self.pages: dict[str, object] = {}
        self.sliders: dict[str, object] = {}

    def log_in(self) -> None:
        page = self.context.new_page()
        page.set_default_timeout(120_000)
        self.hub.start_log_in(page, self.name)
        self.login_page = page

    def wait_lab(self) -> None:
        self.hub.wait_lab(self.login_page, self.name)
        hubclass.set_lab_settings(self.login_page, self.hub, self.name)

    def open(self, lesson: str) -> None:
        page = self.context.new_page()
        page.set_default_timeout(120_000)
        page.goto(self.hub.notebook_url(self.name, lesson))
        self.pages[lesson] = page

    def run(self, lesson: str) -> None:
        page = self.pages[lesson]
        lab.finish_opening(page)
        lab.start_run_all(page)

    def wait_run(self, lesson: str) -> None:
        page = self.pages[lesson]
        page.bring_to_front()
        if lab.wait_run_all(page, timeout_ms=400_000) != "done":
            raise RuntimeError(f"{self.name} {lesson}: {lab.errors(page)}")
        widget = first_slider_widget(page)
        lab.wait_canvas_drawn(page, widget["index"])
        page.evaluate(bench_browser._JS_INSTRUMENT, widget["index"])
        slider = next(c for c in widget["controls"] if c["kind"] == "slider")
        self.sliders[lesson] = (widget["index"], slider["selector"])

    def prepare(self, lesson: str) -> None:
        """Wait until the lesson's widget is quiet, focus its first slider, arm the
        timer: the next fire() presses the key."""
        page = self.pages[lesson]
        index, selector = self.sliders[lesson]
        lab.wait_changed(page, index, None, quiet_ms=200)
        track = page.locator(selector).locator(".noUi-target").first
        now, hi = track.evaluate(
            "t => [Number(t.noUiSlider.get(true)), t.noUiSlider.options.range.max]"
        )
        page.locator(selector).locator(".noUi-handle").first.focus()
        page.evaluate("() => window.__ropeBench.arm()")
        self.key = "ArrowLeft" if now >= hi else "ArrowRight"

    def fire(self, lesson: str) -> None:
        self.pages[lesson].keyboard.press(self.key)

    def latency(self, lesson: str) -> float:
        page = self.pages[lesson]
        page.wait_for_function(
            "() => window.__ropeBench.draw !== null", timeout=60_000, polling=20
        )
        state = page.evaluate(
            "() => ({press: window.__ropeBench.press, draw: window.__ropeBench.draw})"
        )
        return state["draw"] - state["press"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    reason = hubclass.skip_reason() or lab.skip_reason()
    if reason:
        print(f"bench_hub: cannot run: {reason}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    levels = sorted(set(args.students))
    start, load = time.monotonic(), os.getloadavg()[1]
    names = {f"b{k}": "en" for k in range(1, levels[-1] + 1)}
    with hubclass.ClassHub(names) as hub, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=lab.CHROMIUM, headless=True, args=lab.CHROMIUM_ARGS
        )
        students = [Student(hub, browser, name) for name in hub.students]
        # 1. one student: memory and CPU
        one = students[0]
        one.log_in()
        one.wait_lab()
        time.sleep(3)
        steps = [("logged in, JupyterLab open", usage(one.name))]
        for lesson in LESSONS:
            one.open(lesson)
            one.run(lesson)
            one.wait_run(lesson)
            time.sleep(2)
            steps.append((f"+ {lesson} run", usage(one.name)))
        before = usage(one.name)
        for _ in range(args.rounds):
            for lesson in LESSONS:
                one.prepare(lesson)
                one.fire(lesson)
                one.latency(lesson)
        after = usage(one.name)
        presses = args.rounds * len(LESSONS)
        press_cpu = 1000 * (after["cpu"] - before["cpu"]) / presses
        steps.append(("after dragging both widgets", after))
        # 2. N students at once
        rows, memory = [], {}
        active = [one]
        for level in levels:
            new = students[len(active) : level]
            for s in new:
                s.log_in()
            for s in new:
                s.wait_lab()
            for lesson in LESSONS:
                for s in new:
                    s.open(lesson)
                for s in new:
                    s.run(lesson)
                for s in new:
                    s.wait_run(lesson)
            active += new
            for lesson in LESSONS:
                times = []
                for _ in range(args.rounds):
                    for s in active:
                        s.prepare(lesson)
                    for s in active:  # every student's key at (nearly) the same moment
                        s.fire(lesson)
                    times += [s.latency(lesson) for s in active]
                rows.append((level, lesson, times))
                print(
                    f"{level} students, {lesson}: "
                    + ", ".join(f"{t:.0f}" for t in times)
                    + " ms",
                    file=sys.stderr,
                )
            memory[level] = sum(usage(s.name)["uss"] for s in active)
        browser.close()

    print(
        "\nOne student (the sum of their processes: JupyterLab server and kernels; "
        "USS = memory only theirs)\n"
    )
    print("| step | RSS MB | USS MB | CPU s (total) |")
    print("|---|---:|---:|---:|")
    for step, u in steps:
        print(f"| {step} | {u['rss']:.0f} | {u['uss']:.0f} | {u['cpu']:.1f} |")
    print(
        f"\nCPU per key press (server and kernel, {presses} presses on the two "
        f"widgets): {press_cpu:.0f} ms"
    )
    print(
        f"\nKey press to changed canvas pixels with N students pressing at the same "
        f"moment, {args.rounds} rounds ({time.monotonic() - start:.0f} s in all; the "
        f"machine's 5-minute load average {load:.1f} before, "
        f"{os.getloadavg()[1]:.1f} after, on {os.cpu_count()} cores)\n"
    )
    print("| students | lesson | median ms | 90th pct ms | max ms | USS of all, MB |")
    print("|---:|---|---:|---:|---:|---:|")
    for level, lesson, times in rows:
        q90 = (
            statistics.quantiles(times, n=10, method="inclusive")[-1]
            if len(times) > 1
            else times[0]
        )
        print(
            f"| {level} | {lesson} | {statistics.median(times):.0f} | {q90:.0f} "
            f"| {max(times):.0f} | {memory[level]:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
