"""Lesson 8 (the extrapolation lab): its claims hold on the results it reads, on results it
was not written with, and fail where they should.

The lesson states each claim, then asserts it on results.json in the next cell. Here every
code cell that reads the results (not the small model trained live, whose numbers are given)
runs as the lesson runs it, with ROPE_LAB_RESULTS set:
- on the committed results (notebooks/lab_results/, or the folder in ROPE_LAB_RESULTS);
- on the folder in ROPE_LAB_OTHER_RESULTS when it is set: another run of the same design on
  other seeds (`python -m rope_lib.lab --seed 5 --seeds 5 --out DIR`), which the claims were
  not written with;
- on doctored copies of the committed results, one per claim, each made so that its claim is
  false: the lesson must then stop at that claim's assert, and not before.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import os
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from rope_lib.exercises import lab as ex  # noqa: E402
from rope_lib.lab.data import MarkovSource  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [
    ROOT / "notebooks" / "08_extrapolation_lab.ipynb",
    ROOT / "notebooks" / "zh" / "08_extrapolation_lab.ipynb",
]
#: What the live training cell makes: a cell that assigns one of these trains a model.
LIVE = {"live", "losses", "small"}


def committed_results() -> dict:
    folder = ex.results_folder()
    if not (folder / "results.json").is_file():
        pytest.skip(f"no results.json in {folder}: run make experiments")
    return ex.load_results()


def _source(cell) -> str:
    return "".join(cell["source"])


def _assigned(source: str) -> set[str]:
    lines = [s for s in source.splitlines() if not s.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


def claim_cells(notebook: Path = NOTEBOOKS[0]) -> list[str]:
    """Every code cell but the live training (which assigns a name of LIVE), with the
    `%` magics and the lines that show a widget (that needs a browser) left out."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    out = []
    for cell in cells:
        if cell["cell_type"] != "code" or _assigned(_source(cell)) & LIVE:
            continue
        out.append(
            "\n".join(
                line
                for line in _source(cell).splitlines()
                if not line.lstrip().startswith("%")
                and not line.rstrip().endswith(".widget()")
            )
        )
    return out


def _live_numbers(results: dict) -> dict:
    """What the live cell leaves behind, as a run of it does: untrained above uniform,
    trained below the current-word floor, above the full recipe's loss."""
    L = results["config"]["train_length"]
    floor = MarkovSource(0).yardsticks(L)
    return {"before": math.log(35) + 0.2, "after": floor["current_word"] - 0.5}


def _statement(source: str, line: int) -> str:
    """The whole statement of `source` at `line` (an assert ruff has wrapped over several
    lines included), on one line."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and node.lineno <= line <= node.end_lineno:
            if not isinstance(node, (ast.For, ast.If, ast.With, ast.FunctionDef)):
                return " ".join(ast.get_source_segment(source, node).split())
    return source.splitlines()[line - 1].strip()


#: Cells that only draw (a figure, the widget): no claim in them, left out by fast runs.
DRAWING = ("show_png(", "LabResultsWidget(", "explorer.")


def run_claims(
    results: dict,
    folder: Path,
    monkeypatch,
    notebook: Path = NOTEBOOKS[0],
    fast: bool = False,
) -> dict:
    """Execute the lesson's result cells on `results` (written to folder), as the lesson
    does with ROPE_LAB_RESULTS=folder; returns the cells' namespace. An assert that fails
    raises AssertionError naming its statement. fast: leave out the cells that only draw."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(folder))
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: None)
    namespace = {"display": lambda *a, **k: None, **_live_numbers(results)}
    try:
        for number, source in enumerate(claim_cells(notebook)):
            if fast and any(words in source for words in DRAWING):
                continue
            code = compile(source, f"<claim cell {number}>", "exec")
            try:
                exec(code, namespace)
            except AssertionError as error:
                frames = traceback.extract_tb(error.__traceback__)
                line = next(
                    f.lineno for f in reversed(frames) if f.filename == code.co_filename
                )
                raise AssertionError(
                    f"a claim fails on these results: {_statement(source, line)}"
                ) from None
    finally:
        plt.close("all")
    return namespace


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=["en", "zh"])
def test_the_claims_hold_on_the_committed_results(notebook, tmp_path, monkeypatch):
    namespace = run_claims(committed_results(), tmp_path, monkeypatch, notebook)
    assert "tuned" in namespace and "explorer" in namespace


def test_the_claims_hold_on_other_results_when_given(tmp_path, monkeypatch):
    folder = os.environ.get("ROPE_LAB_OTHER_RESULTS")
    if not folder:
        pytest.skip("set ROPE_LAB_OTHER_RESULTS=DIR (python -m rope_lib.lab --seed 5 "
                    "--seeds 5 --out DIR) to check the claims on other seeds")  # fmt: skip
    results = json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))
    assert not results["config"]["quick"], "a --quick run learns nothing to check"
    run_claims(results, tmp_path, monkeypatch)


# ----------------------------------------------------------------- doctored results


def _seeds(r):
    return [str(s) for s in r["config"]["seeds"]]


def _text(r, scheme, n, value=None, add=0.0, seeds=None):
    for s in seeds or _seeds(r):
        loss = r["schemes"][scheme][s]["text"]["loss"]
        loss[str(n)] = (loss[str(n)] if value is None else value) + add


def _passkey(r, scheme, n, value, seeds=None):
    for s in seeds or _seeds(r):
        grid = r["schemes"][scheme][s]["passkey"]
        grid[str(n)] = [value] * len(grid[str(n)])


def _mean_text(r, scheme, n):
    return sum(
        r["schemes"][scheme][s]["text"]["loss"][str(n)] for s in _seeds(r)
    ) / len(_seeds(r))


def _copy(r, where, n, distance, value, method=None):
    for s in _seeds(r):
        part = r["scaling"][method][s] if method else r["schemes"][where][s]
        part["copy"][str(n)][str(distance)] = value


def _scaling(r, method, n, value=None, add=0.0, part="text"):
    for s in _seeds(r):
        values = r["scaling"][method][s]
        if part == "inside_L":
            values["inside_L"] = (values["inside_L"] if value is None else value) + add
        else:
            old = values[part][str(n)]
            values[part][str(n)] = old + add if value is None else value(s)


def _finetune(r, method, budget, text=None, passkey=None, n=None):
    for s in _seeds(r):
        scores = r["finetune"][method][s][str(budget)]
        if text is not None:
            scores["text"] = text(s)
        if passkey is not None:
            grid = scores["passkey"]
            grid[str(n)] = [passkey] * len(grid[str(n)])


def _ft_text(r, method, budget):
    return lambda s: r["finetune"][method][s][str(budget)]["text"]


def _L(r):
    return r["config"]["train_length"]


#: (how the results are doctored, words of the assert that must fail on them)
DOCTORED = [
    # the recipe, the full models inside L
    (lambda r: r["config"].update(answer_weight=4.0), 'config["answer_weight"]'),
    (lambda r: r["config"]["model"].update(n_layers=2), 'config["model"] =='),
    (lambda r: _text(r, "rope", _L(r), add=1.0), "full < best"),
    # text past L
    (
        lambda r: _text(
            r, "none", _L(r), MarkovSource(0).yardsticks(_L(r))["current_word"]
        ),
        'yard[first]["current_word"] - 1',
    ),
    (lambda r: _text(r, "learned", _L(r), add=0.6), 'yard[first]["entropy_rate"]'),
    (
        lambda r: _text(r, "none", _L(r), _mean_text(r, "rope", _L(r))),
        'text["none"][0] > max(positional)',
    ),
    (
        lambda r: _text(r, "sinusoidal", 8 * _L(r), _mean_text(r, "sinusoidal", _L(r))),
        "uniform + 0.3",
    ),
    (
        lambda r: _text(r, "rope", 4 * _L(r), _mean_text(r, "rope", 2 * _L(r))),
        "b > a + 0.05",
    ),
    (
        lambda r: _text(r, "rope", 8 * _L(r), _mean_text(r, "learned", 8 * _L(r))),
        "r < t - 0.5",
    ),
    (
        lambda r: _text(r, "alibi", 8 * _L(r), add=0.3, seeds=_seeds(r)[:1]),
        "< 0.15",
    ),
    (
        lambda r: _text(r, "none", 8 * _L(r), _mean_text(r, "alibi", 8 * _L(r)) - 0.1),
        'text["alibi"][-1] <',
    ),
    (
        lambda r: [
            r["schemes"]["none"][s]["text"].update(
                loss_by_chunk=[r["schemes"]["none"][s]["text"]["loss_by_chunk"][0]] * 8
            )
            for s in _seeds(r)
        ],
        "chunks[-1] > uniform",
    ),
    (
        lambda r: _text(r, "none", 8 * _L(r), _mean_text(r, "none", _L(r)) + 0.5),
        'text["none"][0] + 1',
    ),
    # retrieval
    (lambda r: _passkey(r, "rope", _L(r), 0.0, _seeds(r)[:2]), "5 * k_of[s][0]"),
    (lambda r: _passkey(r, "learned", _L(r), 1.0), 'k_of["learned"][0] <'),
    (lambda r: _passkey(r, "learned", _L(r), 0.0), '"learned", L).values()) > 0.7'),
    (lambda r: _passkey(r, "rope", 4 * _L(r), 1.0, _seeds(r)[:1]), "k_of[s][2] == 0"),
    (
        lambda r: (
            _passkey(r, "alibi", _L(r), 1.0),
            _passkey(r, "alibi", 8 * _L(r), 0.0, _seeds(r)[:1]),
        ),
        "keys[n][k] > 0.9",
    ),
    (lambda r: _passkey(r, "none", 2 * _L(r), 0.0), 'k_of["none"][1] >= 1'),
    # copies
    (lambda r: _copy(r, "learned", _L(r), 24, 0.5), "max(window) < 0.2"),
    (lambda r: _copy(r, "rope", 4 * _L(r), 8, 0.2), 'copies[("rope",)]'),
    (lambda r: _copy(r, "rope", 4 * _L(r), 248, 2.0, "yarn"), '"yarn")][-2:]'),
    (lambda r: _copy(r, "alibi", 4 * _L(r), 248, 2.0), 'copies[("alibi",)]'),
    # zero-shot extension
    (
        lambda r: _scaling(r, "dynamic", 4 * _L(r), add=0.01),
        'scaled["dynamic"][k][part] == scaled["ntk"][k][part]',
    ),
    (
        lambda r: _scaling(r, "dynamic", None, add=0.01, part="inside_L"),
        'scaled["dynamic"][k]["inside_L"]',
    ),
    (lambda r: _scaling(r, "linear", 2 * _L(r), lambda s: 0.0), 'ext["linear"][j] =='),
    (
        lambda r: _scaling(r, "linear", None, value=1.0, part="inside_L"),
        'inside["linear"] >',
    ),
    (
        lambda r: _scaling(
            r,
            "yarn",
            8 * _L(r),
            lambda s: r["scaling"]["llama3"][s]["text"][str(8 * _L(r))],
        ),
        'ext["yarn"][2] <',
    ),
    (
        lambda r: _scaling(r, "yarn", 4 * _L(r), add=0.2),
        'ext["yarn"][0] < best[0]',
    ),
    (
        lambda r: _scaling(r, "yarn", None, add=0.5, part="inside_L"),
        'inside["yarn"] <',
    ),
    (
        lambda r: _scaling(r, "yarn", 4 * _L(r), lambda s: [0.0] * 5, part="passkey"),
        '2 * key4["yarn"]',
    ),
    # fine-tuning
    (
        lambda r: _finetune(r, "yarn", 0, text=_ft_text(r, "default", 0)),
        'tuned["yarn"][0] <',
    ),
    (
        lambda r: _finetune(r, "yarn", 0, passkey=0.0, n=4 * _L(r)),
        '2 * found4["yarn"][0]',
    ),
    (
        lambda r: _finetune(
            r, "yarn", 100, text=lambda s: _ft_text(r, "yarn", 100)(s) + 0.2
        ),
        'tuned["yarn"][j] <',
    ),
    (
        lambda r: _finetune(r, "default", 50, text=_ft_text(r, "default", 0)),
        "plain[budgets.index(50)]",
    ),
    (
        lambda r: _finetune(r, "default", 25, text=_ft_text(r, "linear", 25)),
        "plain[budgets.index(25)]",
    ),
    (
        lambda r: _finetune(
            r, "linear", 200, text=lambda s: _ft_text(r, "default", 200)(s) - 0.03
        ),
        "p < q + 0.01",
    ),
    (
        lambda r: _finetune(r, "linear", 25, passkey=1.0, n=4 * _L(r)),
        'found4["linear"]',
    ),
]


@pytest.mark.parametrize("doctor, words", DOCTORED, ids=[w for _, w in DOCTORED])
def test_each_claim_fails_where_it_should(doctor, words, tmp_path, monkeypatch):
    results = copy.deepcopy(committed_results())
    doctor(results)
    with pytest.raises(AssertionError) as failure:
        run_claims(results, tmp_path, monkeypatch, fast=True)
    assert words in str(failure.value), str(failure.value)


#: Asserts on what the lesson computes itself, not on results.json: the yardsticks of the
#: source, ALiBi's slopes (exact), the live model (its cell is not run here).
NOT_RESULTS = ("ys[", "slopes", "before >")


def test_every_claim_is_doctored_at_least_once():
    words = [w for _, w in DOCTORED]
    for source in claim_cells():
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Assert):
                continue
            statement = " ".join(ast.get_source_segment(source, node).split())
            if any(w in statement for w in NOT_RESULTS):
                continue
            assert any(w in statement for w in words), (
                f"no doctored results make this claim fail: {statement}"
            )
