"""Stored outputs that come out the same on any machine (GUIDE.md, "Portable").

Round-off differs between CPUs (AVX2 / AVX-512 kernels), thread counts and BLAS builds. A
stored output that prints round-off as digits ("largest difference: 4.86e-17") fails nbval on
the next machine although the course is right. Such a quantity is printed as a bound that
holds everywhere, with an assert beside it ("largest difference below 1e-12"); this test reads
every stored output of every lesson, both editions, and names each cell that does otherwise.

The rule: a number in scientific notation whose size is below 1e-5 (float32 round-off is about
1e-7, float64 about 1e-16; a printed 0.0e+00 is round-off that happened to vanish here) must
stand right after a bound word ("below", "within", "<", "低于" ...). The other half of the
promise, a number printed to more digits than are stable (an ill-conditioned fit, a long
float32 sum), cannot be seen in the text: `make test` runs the Chinese lessons, the same code,
with torch's plain kernels and two threads (ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=2) and
the English ones on this CPU's own, and compares both with the stored outputs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(
    [
        *(ROOT / "notebooks").glob("[0-9]*.ipynb"),
        *(ROOT / "notebooks/zh").glob("[0-9]*.ipynb"),
    ]
)
SCIENTIFIC = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
BOUND_WORD = re.compile(r"(?:below|under|within|to|<|≤|低于|小于|不到|在)\s*$")
SMALLEST_VALUE = 1e-5
#: Lines whose tiny numbers are values, not round-off: (lesson file, text in the line, why).
GENUINE_VALUES = [
    (
        "08_alibi.ipynb",
        "1.929e-22",
        "exp(-50) in the table of exp(-μΔ): a value, stable to every printed digit",
    ),
    (
        "08_alibi.ipynb",
        "7.125e-218",
        "exp(-500) in the same table",
    ),
    (
        "07_rope_in_practice.ipynb",
        "1.34e-06",
        "how much cos changes between two tokens on the slowest pair: a float64 difference "
        "of two cosines 1e-6 apart, stable to far more digits than printed",
    ),
    (
        "13_todays_models.ipynb",
        "1.241e-06",
        "the slowest frequency of a partial-rotary model, b^(-(r-2)/r): a value",
    ),
]


def _outputs(cell: dict) -> str:
    texts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append("".join(output["text"]))
        data = output.get("data", {})
        if "text/plain" in data:
            texts.append("".join(data["text/plain"]))
    return "\n".join(texts)


def round_off_lines(text: str, lesson: str = "") -> list[str]:
    """The lines of `text` that print a number that looks like round-off."""
    genuine = [value for name, value, _ in GENUINE_VALUES if name == lesson]
    found = []
    for line in text.splitlines():
        for match in SCIENTIFIC.finditer(line):
            if abs(float(match.group())) >= SMALLEST_VALUE:
                continue
            if BOUND_WORD.search(line[: match.start()]):
                continue
            if any(value in line for value in genuine):
                continue
            found.append(line.strip())
            break
    return found


def problems(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found, code_index = [], -1
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        code_index += 1
        for line in round_off_lines(_outputs(cell), path.name):
            found.append(
                f"{path.relative_to(ROOT)}, cell {index} (nbval's Cell {code_index}): "
                f"{line!r} prints round-off as digits; print a bound ('below 1e-12') "
                "and assert it"
            )
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_stored_output_prints_round_off(path):
    assert not problems(path), "\n".join(problems(path))


def test_the_rule_catches_what_it_is_for():
    assert round_off_lines("largest difference: 4.86e-17")
    assert round_off_lines("vs transformers, largest difference: 0.0e+00")
    assert round_off_lines("Pixtral frequencies vs transformers: 2.384185791015625e-07")
    assert round_off_lines("tensor([1.0000e+00, 3.2000e-08])")
    assert round_off_lines("最大差异 3.0e-08")
    assert not round_off_lines("largest difference below 1e-12")
    assert not round_off_lines("largest difference < 1e-06")
    assert not round_off_lines("最大差异低于 1e-6")
    assert not round_off_lines("closed form, within 1e-12: True")
    assert not round_off_lines("对称偏置 = 因果偏置，误差在 1e-6 以内：True")
    assert not round_off_lines("base 1e+06, wavelength 6.3e+04, slope 3.9e-03")
    assert not round_off_lines("exp(-μΔ) 1.929e-22", "08_alibi.ipynb")
    assert round_off_lines("exp(-μΔ) 1.929e-22", "01_sinusoidal.ipynb")


def test_genuine_values_are_still_there():
    """An allowance whose line is gone must go too (it would excuse round-off later)."""
    for lesson, value, _why in GENUINE_VALUES:
        for path in (ROOT / "notebooks" / lesson, ROOT / "notebooks/zh" / lesson):
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            assert any(value in _outputs(c) for c in cells), (path, value)
