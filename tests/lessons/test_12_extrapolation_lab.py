"""Lesson 12 (the extrapolation lab): its claims hold on the results it reads, on results it
was not written with, and fail where they should.

The lesson states each claim, then asserts it in the next cell, on results.json and on
probes of the trained RoPE models (checkpoints/rope_seed*.pt beside results.json, read by
rope_lib.lab.probes). Here every code cell runs as the lesson runs it, with
ROPE_LAB_RESULTS set to a temporary folder holding the results and a link to their
checkpoints:
- on the committed results (notebooks/lab_results/, or the folder in ROPE_LAB_RESULTS);
- on another run of the same design on other seeds, which the claims were not written
  with: the folder in ROPE_LAB_OTHER_RESULTS when it is set, else the committed replication
  notebooks/lab_results/seeds5-9/ (`python -m rope_lib.lab --seed 5 --seeds 5 --out DIR`);
- on doctored copies of the committed results, one per assert that reads results.json,
  each made so that its claim is false: the lesson must then stop at that assert, and not
  before.

The probes cost seconds a run and the doctored runs are dozens: within the session each
probe is computed once per (checkpoint file, seed, arguments) and then read back (the
checkpoints never change between the runs, only results.json does).
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import os
import shutil
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rope_lib.lab import probes, summary  # noqa: E402
from rope_lib.lab import results as lab_results  # noqa: E402
from rope_lib.language import get_language, set_language  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = [
    ROOT / "notebooks" / "12_extrapolation_lab.ipynb",
    ROOT / "notebooks" / "zh" / "12_extrapolation_lab.ipynb",
]
#: The results the lesson reads (ROPE_LAB_RESULTS at collection, else the committed
#: notebooks/lab_results/), with their checkpoints/.
COMMITTED = lab_results.results_folder()
#: The replication run on seeds 5-9 (results.json and checkpoints/rope_seed5..9.pt).
REPLICATION = ROOT / "notebooks" / "lab_results" / "seeds5-9"


@functools.cache
def _committed() -> dict:
    if not (COMMITTED / "results.json").is_file():
        pytest.skip(f"no results.json in {COMMITTED}: run make experiments")
    return lab_results.load_results(COMMITTED)


def committed_results() -> dict:
    """A fresh copy of the committed results (a doctor may change it)."""
    return copy.deepcopy(_committed())


def _source(cell) -> str:
    return "".join(cell["source"])


def claim_cells(notebook: Path = NOTEBOOKS[0]) -> list[str]:
    """Every code cell, with the `%` magics and the lines that show a widget (that needs a
    browser) left out."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [
        "\n".join(
            line
            for line in _source(cell).splitlines()
            if not line.lstrip().startswith("%")
            and not line.rstrip().endswith(".widget()")
        )
        for cell in cells
        if cell["cell_type"] == "code"
    ]


def _statement(source: str, line: int) -> str:
    """The whole statement of `source` at `line` (an assert ruff has wrapped over several
    lines included), on one line."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and node.lineno <= line <= node.end_lineno:
            if not isinstance(node, (ast.For, ast.If, ast.With, ast.FunctionDef)):
                return " ".join(ast.get_source_segment(source, node).split())
    return source.splitlines()[line - 1].strip()


# ------------------------------------------------------- the probes, once per session

#: rope_lib.lab.probes' functions that load a model or run one, as they are.
REAL = {
    name: getattr(probes, name)
    for name in (
        "trained_model",
        "band_probe",
        "cap_probe",
        "scores_by_offset",
        "pair_sizes",
        "pi_on_pairs",
    )
}
_CACHE: dict = {}
#: id of a model made by trained_model() below -> (checkpoint file, seed, scheme, config)
_MODELS: dict[int, tuple] = {}


def _config_key(config: dict) -> str:
    return json.dumps(config, sort_keys=True)


def _tokens_key(tokens) -> tuple:
    data = tokens.contiguous().numpy().tobytes()
    return tuple(tokens.shape), str(tokens.dtype), hashlib.sha1(data).hexdigest()


def trained_model(folder, seed, scheme: str = "rope", config: dict | None = None):
    """probes.trained_model, one model per (checkpoint file, seed, scheme, config): the
    checkpoint is named through its link, so every run of a folder's checkpoints shares
    one model."""
    folder = Path(folder)
    if config is None:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        config = results["config"]
    checkpoint = (folder / "checkpoints" / f"{scheme}_seed{seed}.pt").resolve()
    key = ("trained_model", str(checkpoint), str(seed), scheme, _config_key(config))
    if key not in _CACHE:
        model = REAL["trained_model"](folder, seed, scheme, config)
        _CACHE[key] = model
        _MODELS[id(model)] = key[1:]
    return _CACHE[key]


def _memoized(name: str, key_of):
    """probes.<name>(model, ...) computed once per model of trained_model() and key_of(
    the other arguments), then a copy of it; a model made elsewhere is not cached. (The
    probes leave a model as they found it: window and RoPE set back.)"""
    real = REAL[name]

    @functools.wraps(real)
    def probe(model, *args, **kwargs):
        known = _MODELS.get(id(model))
        if known is None:
            return real(model, *args, **kwargs)
        key = (name, known, key_of(*args), tuple(sorted(kwargs.items())))
        if key not in _CACHE:
            _CACHE[key] = real(model, *args, **kwargs)
        return copy.deepcopy(_CACHE[key])

    return probe


CACHED = {
    "trained_model": trained_model,
    "band_probe": _memoized(
        "band_probe", lambda config, seed: (_config_key(config), str(seed))
    ),
    "cap_probe": _memoized(
        "cap_probe", lambda config, seed: (_config_key(config), str(seed))
    ),
    "scores_by_offset": _memoized("scores_by_offset", _tokens_key),
    "pair_sizes": _memoized("pair_sizes", _tokens_key),
    "pi_on_pairs": _memoized(
        "pi_on_pairs",
        lambda config, seed, pairs: (_config_key(config), str(seed), tuple(pairs)),
    ),
}


def _link_checkpoints(folder: Path, checkpoints: Path) -> None:
    """folder/checkpoints: a link to `checkpoints` (a copy where links cannot be made)."""
    if not checkpoints.is_dir():
        pytest.fail(f"no checkpoints at {checkpoints}: the probe cells need them")
    target = folder / "checkpoints"
    if target.is_symlink() or target.exists():
        if target.resolve() == checkpoints.resolve():
            return
        if target.is_symlink():
            target.unlink()
        else:
            shutil.rmtree(target)
    try:
        target.symlink_to(checkpoints.resolve(), target_is_directory=True)
    except OSError:
        shutil.copytree(checkpoints, target)


#: Cells that only draw (a figure, the widget): no claim in them, left out by fast runs.
DRAWING = ("show_png(", "LabResultsWidget(", "explorer.")


def run_claims(
    results: dict,
    folder: Path,
    monkeypatch,
    notebook: Path = NOTEBOOKS[0],
    fast: bool = False,
    checkpoints: Path | None = None,
) -> dict:
    """Execute the lesson's code cells on `results` (written to folder, beside a link to
    `checkpoints`, by default the committed ones), as the lesson does with
    ROPE_LAB_RESULTS=folder; returns the cells' namespace. The probes are the session's
    cached ones. An assert that fails raises AssertionError naming its statement. fast:
    leave out the cells that only draw."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    _link_checkpoints(folder, checkpoints or COMMITTED / "checkpoints")
    monkeypatch.setenv("ROPE_LAB_RESULTS", str(folder))
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: None)
    for name, probe in CACHED.items():
        monkeypatch.setattr(probes, name, probe)
    namespace = {"display": lambda *a, **k: None}
    speaking = get_language()
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
        set_language(speaking)  # the lesson's first cell sets its own
    return namespace


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=["en", "zh"])
def test_the_claims_hold_on_the_committed_results(notebook, tmp_path, monkeypatch):
    namespace = run_claims(committed_results(), tmp_path, monkeypatch, notebook)
    assert "tuned" in namespace and "explorer" in namespace and "cost" in namespace


def other_results_folder() -> Path:
    """ROPE_LAB_OTHER_RESULTS (a relative path: from here, else from notebooks/), else
    the committed replication on seeds 5-9; skips when there is neither."""
    given = os.environ.get("ROPE_LAB_OTHER_RESULTS")
    if given:
        folder = Path(given)
        if not folder.is_absolute() and not folder.exists():
            folder = ROOT / "notebooks" / folder
        return folder
    if (REPLICATION / "results.json").is_file():
        return REPLICATION
    pytest.skip(
        f"no other results: {REPLICATION.relative_to(ROOT)} is not committed yet and "
        "ROPE_LAB_OTHER_RESULTS is not set (DIR with results.json and checkpoints/, from "
        "python -m rope_lib.lab --seed 5 --seeds 5 --out DIR)"
    )


def test_the_claims_hold_on_other_results_when_given(tmp_path, monkeypatch):
    folder = other_results_folder()
    results = lab_results.load_results(folder)
    assert not results["config"]["quick"], "a --quick run learns nothing to check"
    assert set(results["config"]["seeds"]) != set(_committed()["config"]["seeds"]), (
        f"{folder} holds the committed seeds: no other results"
    )
    run_claims(results, tmp_path, monkeypatch, checkpoints=folder / "checkpoints")


# ----------------------------------------------------------------- doctored results


def _seeds(r):
    return [str(s) for s in r["config"]["seeds"]]


def _L(r):
    return r["config"]["train_length"]


def _each(value, s):
    """A doctor's value: the same for every seed, or a function of the seed."""
    return value(s) if callable(value) else value


def _text(r, scheme, n, value=None, add=0.0, seeds=None):
    for s in seeds or _seeds(r):
        loss = r["schemes"][scheme][s]["text"]["loss"]
        loss[str(n)] = (loss[str(n)] if value is None else _each(value, s)) + add


def _mean_text(r, scheme, n):
    return summary.mean(summary.text_loss(r, scheme, n))


def _passkey(r, scheme, n, value, seeds=None, depth=None):
    """Every depth's accuracy (or only that of `depth`, an index) set to value."""
    for s in seeds or _seeds(r):
        grid = r["schemes"][scheme][s]["passkey"][str(n)]
        for i in range(len(grid)) if depth is None else [depth]:
            grid[i] = value


def _copy(r, scheme, n, distance, value, method=None):
    for s in _seeds(r):
        part = r["scaling"][method][s] if method else r["schemes"][scheme][s]
        part["copy"][str(n)][str(distance)] = value


def _scaling(r, method, n, value=None, add=0.0, part="text"):
    for s in _seeds(r):
        values = r["scaling"][method][s]
        if part == "inside_L":
            old = values["inside_L"]
            values["inside_L"] = (old if value is None else _each(value, s)) + add
        else:
            old = values[part][str(n)]
            values[part][str(n)] = old + add if value is None else _each(value, s)


def _finetune(r, method, budget, text=None, passkey=None, n=None, control=None):
    """The fine-tune of `method` (or its `control` run) after `budget` steps: its text
    loss set to text(seed), its passkey accuracy at n to `passkey` at every depth."""
    part = r["finetune"] if control is None else r["finetune_controls"][control]
    for s in _seeds(r):
        scores = part[method][s][str(budget)]
        if text is not None:
            scores["text"] = text(s)
        if passkey is not None:
            grid = scores["passkey"][str(n)]
            grid[:] = [passkey] * len(grid)


def _ft_text(r, method, budget, control=None):
    part = r["finetune"] if control is None else r["finetune_controls"][control]
    return lambda s: part[method][s][str(budget)]["text"]


def _base_sweep(r, method, n, value):
    """The base-500 RoPE model extended by `method`: its text loss at n set to
    value(seed, the model's results)."""
    base = f"{r['config']['controls']['base']:g}"
    for s, model in r["base_sweep"][base].items():
        model["scaling"][method]["text"][str(n)] = value(s, model)


# The band probe and PI on pairs, live from the committed checkpoints (the session's
# cache): a doctor that must stay on one side of a live number reads it here.


def _live_model(seed):
    return trained_model(COMMITTED, seed)


def _band_text(r, seed) -> float:
    """The worst chunk of the text at 8L with the keys beyond L hidden, for one seed."""
    return max(CACHED["band_probe"](_live_model(seed), r["config"], seed)["text"])


def _pi_cost(r, pairs, j) -> float:
    """PI on `pairs` only: the mean text loss over the seeds at L with s = 4 (j = 0), 4L
    (j = 1) or 8L (j = 2)."""
    return float(
        np.mean(
            [
                CACHED["pi_on_pairs"](_live_model(s), r["config"], s, pairs)[j]
                for s in _seeds(r)
            ]
        )
    )


def _plain_rope_at_L(r, value):
    """Plain RoPE's text loss at L set to value(seed); dynamic NTK's inside L with it
    (the lesson checks that they are equal)."""
    _text(r, "rope", _L(r), value)
    _scaling(r, "dynamic", None, value=value, part="inside_L")


def _slow_pairs_cost_more_inside_L(r):
    """Plain RoPE at L as low as the band probe allows (each seed's band text within 0.1
    of it, claim 1 of section 5): its mean is then more than 0.1 below PI on pairs 5-15
    at L."""
    _plain_rope_at_L(r, lambda s: _band_text(r, s) - 0.098)


def _plain_beats_slow_pairs_at_8L(r):
    """Plain RoPE at 8L just below PI on pairs 5-15 there; at 4L between 2L and 8L (it
    still worsens at each doubling) and ALiBi at 1.0 inside L and at 8L (still flat and
    the best at 8L)."""
    model = r["config"]["model"]
    slow = (5, model["d_model"] // model["n_heads"] // 2)  # the lesson's pairs 5-15
    L, at_8L = _L(r), _pi_cost(r, slow, 2) - 0.01
    _text(r, "rope", 4 * L, (_mean_text(r, "rope", 2 * L) + at_8L) / 2)
    _text(r, "rope", 8 * L, at_8L)
    for n in (L, 8 * L):
        _text(r, "alibi", n, 1.0)


#: (how the results are doctored, words of the assert that must fail on them)
DOCTORED = [
    # 1. the recipe
    (lambda r: r["config"].update(answer_weight=4.0), 'config["answer_weight"]'),
    (lambda r: r["config"]["model"].update(n_layers=2), 'config["model"] =='),
    # 2. text past L
    (
        lambda r: _text(r, "none", _L(r), summary.yardsticks(r, _L(r))["current_word"]),
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
        "alibi[1][k] - alibi[0][k]",
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
    # 3. retrieval, seed by seed
    (
        lambda r: _passkey(r, "sinusoidal", _L(r), 0.9, _seeds(r)[:1]),
        "by[s][0][1] > 0.95",
    ),
    (lambda r: _passkey(r, "learned", _L(r), 1.0), 'by["learned"][0][0] <'),
    (
        lambda r: _passkey(r, "learned", _L(r), 0.5, _seeds(r)[:1]),
        '0.6 < by["learned"][0][1]',
    ),
    (
        lambda r: _passkey(r, "rope", 2 * _L(r), 1.0),
        "by[s][1][0] < by[s][0][0] - 0.15",
    ),
    (lambda r: _passkey(r, "rope", 8 * _L(r), 0.5), "by[s][-1][0] < 0.2"),
    (
        lambda r: _passkey(r, "alibi", 8 * _L(r), 0.0, _seeds(r)[:1]),
        'low >= 0.9 for _, low, _ in by["alibi"]',
    ),
    (lambda r: _passkey(r, "none", 2 * _L(r), 0.0), 'by["none"][1][0] > max(0.9'),
    (
        lambda r: _passkey(r, "none", 8 * _L(r), 1.0, _seeds(r)[:1]),
        "nope[-1][k] < nope[1][k] - 0.05",
    ),
    # 4. copies
    (lambda r: _copy(r, "learned", _L(r), 24, 0.5), "len(bad) <= 2"),
    (
        lambda r: _copy(r, "rope", 4 * _L(r), 8, 0.2),
        'v > 0.5 for v in copies[("rope",)]',
    ),
    (
        lambda r: [
            r["schemes"]["rope"][s]["copy_at_start"][str(4 * _L(r))].update(
                {"248": 0.5}
            )
            for s in _seeds(r)[:1]
        ],
        "at_start=True).values()) > 0.9",
    ),
    (lambda r: _copy(r, "rope", 4 * _L(r), 248, 2.0, "yarn"), '"yarn")][1:]'),
    (lambda r: _copy(r, "alibi", 4 * _L(r), 248, 2.0), 'max(copies[("alibi",)])'),
    # 5. why RoPE breaks: the results.json side of the comparisons with the probes
    (lambda r: _text(r, "rope", _L(r), 0.5), 'max(bands[k]["text"][1:]) < at_L[k]'),
    (lambda r: _copy(r, "rope", 4 * _L(r), 8, 1.0), 'probe["copy"][1][k] < 0.3'),
    (
        lambda r: _passkey(r, "rope", 2 * _L(r), 0.0, depth=2),
        'mean(probe["key_near"][0]) < middle',
    ),
    (
        lambda r: _passkey(r, "rope", 2 * _L(r), 0.85, _seeds(r)[:1], depth=4),
        'probe["key_near"][1][k] > probe["key_near"][0][k] + 0.2',
    ),
    (
        lambda r: r["schemes"]["rope"][_seeds(r)[0]]["text"][
            "loss_by_chunk"
        ].__setitem__(-1, 1.3),
        "min(back.values()) > 2 / 3",
    ),
    (
        lambda r: _passkey(r, "rope", 2 * _L(r), 1.0, depth=0),
        "spread(far[0])[0] + 0.3",
    ),
    # 6. zero-shot extension
    (
        lambda r: _scaling(r, "dynamic", 4 * _L(r), add=0.01),
        'scaled["dynamic"][k][part] == scaled["ntk"][k][part]',
    ),
    (
        lambda r: _scaling(r, "dynamic", None, add=0.01, part="inside_L"),
        'scaled["dynamic"][k]["inside_L"]',
    ),
    (lambda r: _scaling(r, "linear", 2 * _L(r), 0.0), 'ext["linear"][j] >'),
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
        'ext["yarn"][2] < min(',
    ),
    (
        lambda r: _scaling(r, "yarn", 4 * _L(r), add=0.2),
        'ext["yarn"][0] < best[0]',
    ),
    (
        lambda r: _scaling(
            r,
            "yarn",
            4 * _L(r),
            lambda s: [0.0] * len(r["config"]["passkey_depths"]),
            part="passkey",
        ),
        'key4["yarn"] > 0.9',
    ),
    (
        lambda r: _scaling(
            r,
            "yarn_no_temperature",
            8 * _L(r),
            lambda s: r["scaling"]["yarn"][s]["text"][str(8 * _L(r))] - 0.01,
        ),
        'ext["yarn"][2] < cold',
    ),
    # which pairs matter: the results.json side of the comparisons with PI on pairs
    (
        lambda r: _scaling(r, "linear", None, value=4.0, part="inside_L"),
        "min(share.values()) > 0.8",
    ),
    (_slow_pairs_cost_more_inside_L, 'cost["PI, pairs 5-15"][0] <'),
    (_plain_beats_slow_pairs_at_8L, "removed[0] > 0.75 and removed[1] > 0.5"),
    # 7. fine-tuning
    (
        lambda r: _finetune(r, "yarn", 0, text=_ft_text(r, "default", 0)),
        'tuned["yarn", None][0] <',
    ),
    (
        lambda r: _finetune(
            r, "yarn", 100, text=lambda s: _ft_text(r, "yarn", 100)(s) + 0.2
        ),
        'tuned["yarn", None][b] <',
    ),
    (
        lambda r: _finetune(r, "default", 50, text=_ft_text(r, "default", 0)),
        "d0[budgets.index(50)]",
    ),
    (
        lambda r: _finetune(
            r, "default", 200, passkey=1.0, n=4 * _L(r), control="text_only"
        ),
        'keys4[m, "text_only"][-1] < 0.5',
    ),
    (
        lambda r: _finetune(
            r, "default", 200, text=_ft_text(r, "default", 0), control="text_only"
        ),
        'tuned[m, "text_only"][-1] <',
    ),
    (
        lambda r: _finetune(
            r,
            "default",
            25,
            text=_ft_text(r, "linear", 25, "text_only"),
            control="text_only",
        ),
        'tuned["default", "text_only"][j] <',
    ),
    (
        lambda r: _finetune(
            r,
            "default",
            25,
            text=_ft_text(r, "linear", 25, "low_lr"),
            control="low_lr",
        ),
        'tuned["default", "low_lr"][j] <',
    ),
    # against the papers: the base-500 models
    (
        lambda r: _base_sweep(
            r, "linear", 2 * _L(r), lambda s, m: m["text"]["loss"][str(2 * _L(r))]
        ),
        "p > q + 0.3",
    ),
]


@pytest.mark.parametrize("doctor, words", DOCTORED, ids=[w for _, w in DOCTORED])
def test_each_claim_fails_where_it_should(doctor, words, tmp_path, monkeypatch):
    results = committed_results()
    doctor(results)
    with pytest.raises(AssertionError) as failure:
        run_claims(results, tmp_path, monkeypatch, fast=True)
    assert words in str(failure.value), str(failure.value)


#: Asserts on what the lesson computes itself, not on results.json (doctoring results.json
#: cannot make them fail):
NOT_RESULTS = (
    "ys[",  # the source's yardsticks, exact
    "slopes",  # ALiBi's slopes, exact
    'probe["key_near"][1]',  # the band probe, live from the checkpoints
    'probe["key_far"][1]',  # the same
    "text8[2][k] > text8[1][k]",  # the cap against the band, both live
    "max(copy8[1].values())",  # the same
    "unseen > seen",  # the scores by offset, live from the checkpoints
    "reach[",  # the pairs' reach, from the frequencies alone
    "size[",  # the pair sizes, live from the checkpoints
)


def _asserts(source: str) -> list[str]:
    return [
        " ".join(ast.get_source_segment(source, node).split())
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Assert)
    ]


def test_every_claim_is_doctored_at_least_once():
    words = [w for _, w in DOCTORED]
    statements = [s for source in claim_cells() for s in _asserts(source)]
    for statement in statements:
        if any(w in statement for w in NOT_RESULTS):
            continue
        assert any(w in statement for w in words), (
            f"no doctored results make this claim fail: {statement}"
        )
    for w in [*words, *NOT_RESULTS]:  # no word of a claim the lesson no longer makes
        assert any(w in statement for statement in statements), (
            f"{w!r} is in no assert of the lesson"
        )


def test_the_cap_changes_only_the_offsets_past_it():
    """probes.capped(model, cap): the model as it is while no offset passes cap (and
    after the block), another model once one does; a non-RoPE model is refused."""
    import torch

    config = _committed()["config"]
    seed, L = _seeds(_committed())[0], _L(_committed())
    model = trained_model(COMMITTED, seed)
    tokens = probes.text_tokens(config, seed, 2 * L)[:2]
    with torch.no_grad():
        plain = model(tokens)
        with probes.capped(model, L - 1):
            inside = model(tokens[:, :L])
            past = model(tokens)
        assert torch.equal(model(tokens), plain)
    assert (inside - plain[:, :L]).abs().max() < 1e-4
    assert (past[:, L:] - plain[:, L:]).abs().max() > 0.1
    with pytest.raises(ValueError, match="RoPE"):
        with probes.capped(_NoRope(), L - 1):
            pass


class _NoRope:
    position = "alibi"
