"""Python-side update time of every lesson widget: median of its 30 scripted steps.

Each widget module (rope_lib/widgets/<topic>.py) lists its widgets in WIDGETS as
name -> (factory, steps). A step is one update(**values), which recomputes, changes the artists
in place and draws (under matplotlib's Agg backend here, so the draw happens inside the call).
Goal on this machine: under 50 ms per update. Each widget is timed in English and, in the
same run, in Chinese (rope_lib.set_language("zh"): other labels, a CJK font), with the ratio.

    python benchmarks/bench_widgets.py
"""

from __future__ import annotations

import importlib
import pkgutil
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import rope_lib.widgets  # noqa: E402
from rope_lib.language import language  # noqa: E402


def widget_modules():
    for info in sorted(
        pkgutil.iter_modules(rope_lib.widgets.__path__), key=lambda i: i.name
    ):
        module = importlib.import_module(f"rope_lib.widgets.{info.name}")
        if hasattr(module, "WIDGETS"):
            yield module


def median_update_ms(factory, steps, rounds=2):
    widget = factory()
    widget.update(**steps[0])  # warm-up: fonts, caches
    times = []
    for _ in range(rounds):
        for values in steps:
            start = time.perf_counter()
            widget.update(**values)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    print(
        "| module | widget | steps | median update (ms) | in Chinese (ms) | zh / en |"
    )
    print("|---|---|---|---|---|---|")
    for module in widget_modules():
        for name, (factory, steps) in module.WIDGETS.items():
            english = median_update_ms(factory, steps)
            with language("zh"):
                chinese = median_update_ms(factory, steps)
            print(
                f"| {module.__name__.rsplit('.', 1)[1]} | {name} | {len(steps)} "
                f"| {english:.1f} | {chinese:.1f} | {chinese / english:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
