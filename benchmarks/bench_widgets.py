"""Python-side update time of every lesson widget: the median over its sweep.

Every widget registers itself by subclassing LiveWidget (rope_lib.widgets.registry()); its
example() is the widget as its lesson first shows it, and its sweep() the settings that
move each main control across its range (one frame per value: the frames a static site
draws). A step is one update(**values), which recomputes, changes the artists in place
and draws (under matplotlib's Agg backend here, so the draw happens inside the call).
Goal on this machine: under 50 ms per update. Each widget is timed in English and, in the
same run, in Chinese (rope_lib.set_language("zh"): other labels, a CJK font), with the ratio.

    python benchmarks/bench_widgets.py
"""

from __future__ import annotations

import statistics
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from rope_lib.language import language  # noqa: E402
from rope_lib.widgets import registry  # noqa: E402


def median_update_ms(cls, rounds=2):
    widget = cls.example()
    steps = list(widget.sweep())
    widget.update(**steps[0])  # warm-up: fonts, caches
    times = []
    for _ in range(rounds):
        for values in steps:
            start = time.perf_counter()
            widget.update(**values)
            times.append(time.perf_counter() - start)
    plt.close(widget.figure)
    return statistics.median(times) * 1e3, len(steps)


def main():
    print(
        "| module | widget | steps | median update (ms) | in Chinese (ms) | zh / en |"
    )
    print("|---|---|---|---|---|---|")
    for name, cls in registry().items():
        english, steps = median_update_ms(cls)
        with language("zh"):
            chinese, _ = median_update_ms(cls)
        print(
            f"| {cls.__module__.rsplit('.', 1)[1]} | {name} | {steps} "
            f"| {english:.1f} | {chinese:.1f} | {chinese / english:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
