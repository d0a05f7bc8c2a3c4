"""Lesson 15 (a real LLM past its training length): its claims on results it was not written
with, its checkers, its widgets, and both in Chinese.

- The lesson's claims: every code cell from section 4 on that reads results.json (not the
  live model) runs here on other results: each text window of the committed run on its own
  (a window is another stretch of Python's documentation; methods are compared on windows
  they all ran on), the committed results moved by about what another stretch of text
  moves them (seeded noise, common to every method on a bucket, plus a little of each
  method's own), and the folder in ROPE_LLM_OTHER_RESULTS when it is set (e.g. a run with
  `python -m rope_lib.pretrained --offset 50000`). The claims must hold on all of them, and
  must fail on doctored results where plain RoPE does not break, and each claim on results
  doctored to contradict it (test_each_claim_fails_where_it_should).
- The checkers: the right answers (computed here by other routes: transformers' row order
  written out, YaRN's cutoffs counted from the wavelengths), each known slip with its own
  message, nothing odd ever called right, the messages in Chinese with the same numbers.
- The widgets: the readout says the numbers of results.json, every control changes the
  picture and the readout, a blit draws what a full draw does, Chinese labels.
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from rope_lib import half_to_interleaved, interleaved_to_half  # noqa: E402
from rope_lib.exercises import real_llm as ex  # noqa: E402
from rope_lib.figures import real_llm as llm_figures  # noqa: E402
from rope_lib.language import language  # noqa: E402
from rope_lib.pretrained import figures  # noqa: E402
from rope_lib.pretrained.results import LossResults, passkey_rows  # noqa: E402
from rope_lib.widgets import real_llm as widgets  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: The committed replication on another stretch of the text and other keys
#: (python -m rope_lib.pretrained --offset 50000), which the claims were not written with.
OTHER_WINDOW = ROOT / "notebooks" / "llm_results" / "offset50000"
NOTEBOOK = ROOT / "notebooks" / "15_real_llm.ipynb"
CJK = re.compile(r"[\u4e00-\u9fff]")


def committed_results() -> dict:
    folder = ex.results_folder()
    if not (folder / "results.json").is_file():
        pytest.skip(f"no results.json in {folder}: run python -m rope_lib.pretrained")
    return ex.load_results()


# ----------------------------------------------------------------- the lesson's claims


def _source(cell) -> str:
    return "".join(cell["source"])


#: What the live cells make (the model, its tokenizer and file): a cell that uses one of
#: them runs the model, not results.json.
LIVE = {"model", "half", "tokenizer", "weights", "ids"}


def _names(source: str) -> set[str]:
    import ast

    lines = [s for s in source.splitlines() if not s.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def claim_cells() -> list[str]:
    """The code cells that read results, not the live model: the imports, then every code
    cell from section 4 on that uses none of LIVE and shows no widget (that needs a
    browser)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    start = next(
        i
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown" and _source(c).startswith("## 4 ·")
    )
    code = [_source(c) for c in cells if c["cell_type"] == "code"]
    later = [
        # a widget cell builds its widget (the next cell draws it), without showing it
        "\n".join(
            line
            for line in _source(c).splitlines()
            if not line.rstrip().endswith(".widget()")
        )
        for c in cells[start:]
        if c["cell_type"] == "code" and not _names(_source(c)) & LIVE
    ]
    return [code[0]] + later


def run_claims(
    results: dict, folder: Path, monkeypatch, replication: Path = OTHER_WINDOW
) -> dict:
    """Execute the lesson's result cells on `results` (written to folder), as the lesson
    does with ROPE_LLM_RESULTS=folder, beside the replication on another stretch of the
    text in the folder `replication` (ROPE_LLM_REPLICATION: text 2, on which the lesson
    checks every claim too); returns the cells' namespace."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    monkeypatch.setenv("ROPE_LLM_RESULTS", str(folder))
    monkeypatch.setenv("ROPE_LLM_REPLICATION", str(replication))
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: None)
    namespace = {"display": lambda *a, **k: None}
    try:
        for number, source in enumerate(claim_cells()):
            lines = [s for s in source.splitlines() if not s.lstrip().startswith("%")]
            code = compile("\n".join(lines), f"<claim cell {number}>", "exec")
            try:
                exec(code, namespace)
            except AssertionError as error:
                import traceback

                line = traceback.extract_tb(error.__traceback__)[-1].lineno
                raise AssertionError(
                    f"a claim fails on these results: {lines[line - 1].strip()}"
                ) from None
    finally:
        plt.close("all")
    return namespace


def one_window(results: dict, window: int) -> dict | None:
    """The results of one text window alone, every method on it: None when some method
    did not run on that window (methods are compared on the same text only)."""
    units = {
        k: u for k, u in results["units"].items() if k.endswith(f"/window{window}")
    }
    methods = {k.split("/")[0] for k in results["units"]}
    if {k.split("/")[0] for k in units} != methods:
        return None
    single = copy.deepcopy(results)
    single["units"] = {
        k.replace(f"/window{window}", "/window0"): u for k, u in units.items()
    }
    windowed = results.get("windowed", {}).get("units", {})
    if windowed:
        single["windowed"]["units"] = {
            k.replace(f"/window{window}", "/window0"): copy.deepcopy(u)
            for k, u in windowed.items()
            if k.endswith(f"/window{window}")
        }
    return single


def perturbed(results: dict, seed: int) -> dict:
    """The results moved about as much as another stretch of text moves them: the loss of
    each bucket of each window by N(0, 0.15) nats for every method alike (a harder or an
    easier stretch: the spread between windows in the issue's runs), the windowed units
    (StreamingLLM, the window alone, the sliding reference) too, at their buckets'
    absolute positions, plus N(0, 0.02) for each method or windowed unit on its own; each
    q/k size, attention weight (with and without the first token) and sink share by a
    factor e^N(0, 0.1)."""
    rng = np.random.default_rng(seed)
    out = copy.deepcopy(results)
    # window w begins at the same token at every length: one stretch of text, whose
    # noise per bucket every length and method shares
    buckets = max(len(unit["bucket_loss"]) for unit in out["units"].values())
    text: dict = {}  # window -> the text's own noise per bucket
    for key, unit in out["units"].items():
        window = key.split("/")[3]
        loss = np.asarray(unit["bucket_loss"])
        common = text.setdefault(window, rng.normal(0, 0.15, buckets))[: len(loss)]
        unit["bucket_loss"] = (loss + common + rng.normal(0, 0.02, loss.shape)).tolist()
    for key, unit in out.get("windowed", {}).get("units", {}).items():
        window = key.split("/")[2]
        loss = np.asarray(unit["bucket_loss"])
        where = np.asarray(unit.get("buckets", range(len(loss))))
        common = text.setdefault(window, rng.normal(0, 0.15, buckets))[where]
        unit["bucket_loss"] = (loss + common + rng.normal(0, 0.02, loss.shape)).tolist()
    for part, names in (
        ("pairs", ("q_rms", "k_rms")),
        ("decay", ("mean_weight", "mean_weight_without_first")),
        ("sinks", ("first_token",)),
    ):
        for name in names:
            values = np.asarray(out[part][name], dtype=float)
            values = values * np.exp(rng.normal(0, 0.1, values.shape))
            top = 1.0 if part == "sinks" else np.inf
            out[part][name] = np.minimum(values, top).tolist()
    return out


def test_the_claims_hold_on_the_committed_results(tmp_path, monkeypatch):
    namespace = run_claims(committed_results(), tmp_path / "committed", monkeypatch)
    assert namespace["yardstick"] > 0 and "last" in namespace


@pytest.mark.parametrize("case", range(4), ids=lambda w: f"window{w}")
def test_the_claims_hold_on_each_text_window_alone(case, tmp_path, monkeypatch):
    single = one_window(committed_results(), case)
    if single is None:
        pytest.skip(f"the run has no window {case} at factor 2")
    run_claims(single, tmp_path / f"window{case}", monkeypatch)


@pytest.mark.parametrize("seed", range(5))
def test_the_claims_hold_with_the_numbers_moved_by_their_spread(
    seed, tmp_path, monkeypatch
):
    run_claims(
        perturbed(committed_results(), seed), tmp_path / f"moved{seed}", monkeypatch
    )


def test_the_claims_hold_on_other_results_when_given(tmp_path, monkeypatch):
    import os

    folder = os.environ.get("ROPE_LLM_OTHER_RESULTS") or OTHER_WINDOW
    if not (Path(folder) / "results.json").is_file():
        pytest.skip("set ROPE_LLM_OTHER_RESULTS=DIR (python -m rope_lib.pretrained "
                    "--offset N --out DIR) to check the claims on other windows")  # fmt: skip
    results = json.loads((Path(folder) / "results.json").read_text(encoding="utf-8"))
    # beside it, as text 2, the committed run on the text from its token 0 on
    run_claims(results, tmp_path / "other", monkeypatch, ex.results_folder())


def test_the_claims_can_fail(tmp_path, monkeypatch):
    # plain RoPE that does not break past L: claim 1 must say so
    results = copy.deepcopy(committed_results())
    L, bucket = results["settings"]["training_length"], results["settings"]["bucket"]
    for key, unit in results["units"].items():
        if key.startswith("plain/"):
            inside = float(np.mean(unit["bucket_loss"][: L // bucket]))
            unit["bucket_loss"] = [inside] * len(unit["bucket_loss"])
    with pytest.raises(AssertionError):
        run_claims(results, tmp_path / "doctored", monkeypatch)


def _losses(results: dict, prefix: str) -> list:
    """The bucket_loss lists of the loss or windowed units whose key starts with prefix."""
    units = {**results["units"], **results.get("windowed", {}).get("units", {})}
    return [u["bucket_loss"] for k, u in units.items() if k.startswith(prefix)]


def _set_past_L(results: dict, prefix: str, value) -> None:
    """Every loss unit of prefix: buckets past L set to value(bucket index, loss)."""
    L, bucket = results["settings"]["training_length"], results["settings"]["bucket"]
    for losses in _losses(results, prefix):
        for b in range(L // bucket, len(losses)):
            losses[b] = value(b, losses[b])


def _plain(results: dict, b: int) -> float:
    return results["units"][f"plain/x1/{4 * results['settings']['training_length']}"
                            "/window0"]["bucket_loss"][b]  # fmt: skip


def _yarn_above_the_reference(results):  # claim 3: YaRN 0.5 above in one bucket
    _set_past_L(results, "yarn/x2/", lambda b, x: x + 0.5 * (b == 6))


def _yarn_x4_drifts(results):  # claim 4: YaRN at 4L 0.5 above the reference at the end
    _set_past_L(results, "yarn/x4/", lambda b, x: x + 0.5 * (b == 15))


def _static_ntk_pays(results):  # claim 4: the base change at x4 costs 0.3 more inside L
    for losses in _losses(results, "ntk/x4/"):
        losses[:] = [x + 0.3 for x in losses]


def _band_light(results):  # claim 7: the size moved from pairs 21-25 to 26-31 (their k)
    for row in results["pairs"]["k_rms"]:  # q keeps its peak in 22-25 (claims 5, 6)
        row[21:26] = [0.2 * x for x in row[21:26]]
        row[26:] = [6 * x for x in row[26:]]


def _band_does_not_help(results):  # claim 8: the band test breaks as plain RoPE does
    _set_past_L(results, "pi_band/", lambda b, x: _plain(results, b))


def _control_helps(results):  # claim 8's control: halving pairs 26-31 helps as much
    band = _losses(results, "pi_band/")[0]
    _set_past_L(results, "pi_band_control/", lambda b, x: band[b] + 0.1)


def _decay_everywhere(results):  # claim 9: layers 3-8 decay like the others
    decay = results["decay"]
    for layer in range(3, 9):
        decay["mean_weight_without_first"][layer][-1] = (
            0.3 * decay["uniform_without_first"][-1]
        )


def _no_decay(results):  # claim 9: keys far back get an even share in every layer
    decay = results["decay"]
    for row in decay["mean_weight_without_first"]:
        row[-1] = decay["uniform_without_first"][-1]


def _no_sinks(results):  # claim 10: the first token gets an even share
    sinks = results["sinks"]
    sinks["first_token"] = [sinks["uniform_first_token"]] * len(sinks["first_token"])


def _streaming_breaks(results):  # claim 11: StreamingLLM as bad as plain RoPE
    _set_past_L(results, "streaming/", lambda b, x: _plain(results, b))


def _sinks_do_not_matter(results):  # claim 11: the window alone as good as StreamingLLM
    stream = _losses(results, "streaming/")[0]
    _set_past_L(results, "window_only/", lambda b, x: stream[b])


def _pi_loses_to_nothing(results):  # section 8: PI no better than plain RoPE at the end
    _set_past_L(
        results, "pi/x2/", lambda b, x: _plain(results, b) + 0.1 if b == 7 else x
    )


DOCTORED = {
    "claim 3": (_yarn_above_the_reference, "gap[method].max() < 0.25"),
    "claim 4, YaRN": (_yarn_x4_drifts, "# claim 4"),
    "claim 4, static NTK": (_static_ntk_pays, "YaRN's cost"),
    "claim 7": (_band_light, "# claim 7"),
    "claim 8": (_band_does_not_help, "# claim 8"),
    "claim 8, control": (_control_helps, "claim 8's control"),
    "claim 9, layers 3-8": (_decay_everywhere, "not in layers 3 to 8"),
    "claim 9, decay": (_no_decay, "# claim 9"),
    "claim 10": (_no_sinks, "# claim 10"),
    "claim 11": (_streaming_breaks, "# claim 11"),
    "claim 11, sinks": (_sinks_do_not_matter, "without the sinks"),
    "PI beats nothing": (_pi_loses_to_nothing, "PI beats nothing"),
}


@pytest.mark.parametrize("case", sorted(DOCTORED))
def test_each_claim_fails_where_it_should(case, tmp_path, monkeypatch):
    doctor, words = DOCTORED[case]
    results = copy.deepcopy(committed_results())
    if "windowed" not in results or "pi_band/x2/16384/window0" not in results["units"]:
        pytest.skip("results made before the band test and the windowed units")
    doctor(results)
    with pytest.raises(AssertionError, match="a claim fails") as failure:
        run_claims(results, tmp_path / "doctored", monkeypatch)
    assert words in str(failure.value), (case, str(failure.value))


# ----------------------------------------------------------------- checkers


def _file_wk():
    try:
        return ex.file_wk()
    except FileNotFoundError as error:
        pytest.skip(f"the model file is not installed: {error}")


def test_half_layout_wk_right_by_transformers_rule():
    w = _file_wk()
    # transformers' _reverse_permute_weights: rows of each head as (d/2, 2), swap, flatten
    by_transformers = w.reshape(3, 32, 2, 576).transpose(1, 2).reshape(192, 576).clone()
    order = interleaved_to_half(torch.arange(64))
    assert ex.check_half_layout_wk(by_transformers).ok
    assert ex.check_half_layout_wk(w.view(3, 64, 576)[:, order].reshape(192, 576)).ok
    assert ex.check_half_layout_wk(by_transformers.double().numpy()).ok


def test_half_layout_wk_slips_get_their_own_message():
    w = _file_wk()
    backwards = w.view(3, 64, 576)[:, half_to_interleaved(torch.arange(64))]
    cases = {
        "unchanged": (w, "the file's rows, unchanged"),
        "backwards": (backwards.reshape(192, 576), "llama.cpp's direction"),
        "one block": (interleaved_to_half(w.T).T, "all 192 rows as one block"),
        "columns": (interleaved_to_half(w), "permuted the columns"),
        "W_q's shape": (torch.zeros(576, 576), "W_q's"),
        "transposed": (w.T, "transposed"),
        "by head": (w.view(3, 64, 576), "one head per block"),
    }
    right = w.reshape(3, 32, 2, 576).transpose(1, 2).reshape(192, 576)
    cases["float16"] = (right.half(), "rounded")
    for name, (answer, words) in cases.items():
        feedback = ex.check_half_layout_wk(answer)
        assert not feedback.ok and words in feedback.message, (name, feedback)
    assert "None" in ex.check_half_layout_wk(None).message


def _yarn_counts_by_wavelength(length: float = 8192, base: float = 1e5):
    """Count by hand: pair i turns length / wavelength_i times within `length`."""
    turns = [length / (2 * math.pi * base ** (2 * i / 64)) for i in range(32)]
    # transformers floors the fast cutoff and ceils the slow one (truncate=True)
    low = math.floor(64 * math.log(length / (2 * math.pi * 32)) / (2 * math.log(base)))
    high = math.ceil(64 * math.log(length / (2 * math.pi)) / (2 * math.log(base)))
    kept = sum(1 for i in range(32) if i <= low)
    interpolated = sum(1 for i in range(32) if i >= high)
    assert all(turns[i] > 32 for i in range(low))  # the kept ones turn > 32 times
    assert all(turns[i] < 1 for i in range(high, 32))  # the stretched ones < once
    return kept, 32 - kept - interpolated, interpolated


def test_yarn_counts_against_rope_frequencies():
    from rope_lib import inv_frequencies, rope_frequencies

    new, _ = rope_frequencies(
        "yarn", 64, 100000.0, factor=4.0, original_max_position_embeddings=8192
    )
    ratio = inv_frequencies(64, 100000.0).double() / new.double()
    kept = int((ratio - 1).abs().lt(1e-6).sum())
    interpolated = int((ratio - 4).abs().lt(1e-6).sum())
    expected = (kept, 32 - kept - interpolated, interpolated)
    assert expected == _yarn_counts_by_wavelength() == (11, 9, 12)
    assert ex.check_yarn_pair_counts(expected).ok
    assert ex.check_yarn_pair_counts(np.array(expected, dtype=np.float32)).ok


@pytest.mark.parametrize(
    "answer, words",
    [
        ((12, 9, 11), "swapped"),
        ((17, 3, 12), "Llama 3's counts"),
        ((16, 10, 6), "without the 2 pi"),
        ((13, 12, 7), "base 10,000"),
        ((15, 9, 8), "new length"),
        ((11, 9, 11), "add up to d/2 = 32"),
        ((10, 10, 12), "got (10, 10, 12)"),
        ((11.5, 9, 11.5), "not all whole"),
    ],
)
def test_yarn_count_slips_get_their_own_message(answer, words):
    feedback = ex.check_yarn_pair_counts(answer)
    assert not feedback.ok and words in feedback.message, feedback


def test_the_slips_are_what_their_messages_say():
    # Llama 3 (cutoffs L/4 and L) and YaRN counted without 2 pi, with b = 1e4, with 4L
    wavelengths = [2 * math.pi * 1e5 ** (2 * i / 64) for i in range(32)]
    kept = sum(w < 8192 / 4 for w in wavelengths)
    slow = sum(w > 8192 for w in wavelengths)
    assert (kept, 32 - kept - slow, slow) == (17, 3, 12)
    assert _yarn_counts_by_wavelength(base=1e4) == (13, 12, 7)
    assert _yarn_counts_by_wavelength(length=4 * 8192) == (15, 9, 8)
    assert _yarn_counts_by_wavelength(length=2 * math.pi * 8192) == (16, 10, 6)


def _last_buckets(results: dict) -> dict:
    """Each method's loss in the last bucket at factor 2, the mean over the windows every
    method ran on, from the windows' units (not the attention study's: the temperature
    sweep and log-n scaling are no methods of the lesson's)."""
    from rope_lib.pretrained.results import PROBES, temperature_study

    L = results["settings"]["training_length"]
    by_method: dict = {}
    for key, unit in results["units"].items():
        method, factor, length, window = key.split("/")
        if method in PROBES:  # the band test and its control: no methods
            continue
        if int(length) == 2 * L and not temperature_study(method, factor):
            by_method.setdefault(method, {})[window] = unit["bucket_loss"][-1]
    shared = set.intersection(*(set(w) for w in by_method.values()))
    return {m: float(np.mean([w[i] for i in shared])) for m, w in by_method.items()}


def test_best_method_is_read_from_the_results_the_lesson_reads(tmp_path, monkeypatch):
    results = committed_results()
    last = _last_buckets(results)
    best = min(last, key=last.get)
    assert ex.check_best_method(best).ok
    label = ex.METHOD_NAMES[best]
    assert ex.check_best_method(f"  {label.upper()} ").ok
    worst = max(last, key=last.get)
    feedback = ex.check_best_method(worst)
    assert not feedback.ok and f"{last[worst]:.2f}" in feedback.message
    # another folder, another answer: the checker follows ROPE_LLM_RESULTS
    doctored = copy.deepcopy(results)
    other = next(m for m in last if m not in (best, "plain"))
    for key, unit in doctored["units"].items():
        if key.startswith(other + "/"):
            unit["bucket_loss"][-1] = 0.5
    (tmp_path / "results.json").write_text(json.dumps(doctored))
    monkeypatch.setenv("ROPE_LLM_RESULTS", str(tmp_path))
    assert ex.check_best_method(other).ok
    assert not ex.check_best_method(best).ok
    monkeypatch.setenv("ROPE_LLM_RESULTS", str(tmp_path / "missing"))
    message = ex.check_best_method(best).message
    assert "python -m rope_lib.pretrained --out DIR" in message


def test_best_method_slips_get_their_own_message():
    results = committed_results()
    last = _last_buckets(results)
    best = min(last, key=last.get)
    feedback = ex.check_best_method("plain")
    assert not feedback.ok
    if last["plain"] - last[best] >= 0.05:  # past L, plain is far behind
        assert "best inside L" in feedback.message, feedback
    for answer, words in [
        (["yarn"], "one name"),
        (3, "a string"),
        ("rope", "answer with one of"),
        (None, "replace `None`"),
    ]:
        feedback = ex.check_best_method(answer)
        assert not feedback.ok and words in feedback.message, (answer, feedback)
    close = [m for m in last if m != best and last[m] - last[best] < 0.05]
    for method in close:
        assert "three decimals" in ex.check_best_method(method).message


ODD = [None, "", "x", 3.5, float("nan"), [1, 2], {"a": 1}, torch.zeros(2), b"yarn"]


@pytest.mark.parametrize(
    "check",
    [ex.check_half_layout_wk, ex.check_yarn_pair_counts, ex.check_best_method],
    ids=lambda c: c.__name__,
)
def test_odd_answers_get_feedback_and_are_never_right(check):
    for answer in ODD:
        feedback = check(answer)
        assert not feedback.ok and feedback.message, (answer, feedback)
        assert "could not check" not in feedback.message, (answer, feedback)


def _chinese_cases():
    cases = [
        (ex.check_yarn_pair_counts, a)
        for a in [(11, 9, 12), (12, 9, 11), (17, 3, 12), (16, 10, 6), (13, 12, 7)]
    ]
    cases += [(ex.check_yarn_pair_counts, a) for a in [(15, 9, 8), (1, 2, 3), None]]
    cases += [(ex.check_best_method, a) for a in ["plain", "pi", "yarn", None, 3]]
    return cases


@pytest.mark.parametrize("check, answer", _chinese_cases())
def test_checker_messages_in_chinese_keep_the_numbers(check, answer):
    english = check(answer).message
    with language("zh"):
        chinese = check(answer).message
    assert CJK.search(chinese) and not CJK.search(english), (english, chinese)
    numbers = re.compile(r"\d+(?:[.,]\d+)*")
    assert sorted(numbers.findall(chinese)) == sorted(numbers.findall(english)), (
        english,
        chinese,
    )


# ----------------------------------------------------------------- widgets


def test_loss_widget_says_the_numbers_of_the_results():
    results = committed_results()
    data = LossResults(results)
    w = widgets.LossCurveWidget(results, method="yarn")
    try:
        # YaRN at x2 (the widget's first factor) over its own windows, plain RoPE and
        # the yardstick on the same windows, from the units
        L, bucket = data.L, data.bucket
        yarn = [
            u["bucket_loss"]
            for k, u in results["units"].items()
            if k.startswith("yarn/x2/")
        ]
        windows = [
            k.rsplit("/", 1)[1] for k in results["units"] if k.startswith("yarn/x2/")
        ]
        plain = [
            results["units"][f"plain/x1/{2 * L}/{w}"]["bucket_loss"] for w in windows
        ]
        end, inside = (
            np.mean([y[-1] for y in yarn]),
            np.mean([y[: L // bucket] for y in yarn]),
        )
        assert f"{end:.2f} at the end" in w.readout_text()
        assert f"{inside:.2f} inside L" in w.readout_text()
        assert (
            f"dashed {np.mean([p[: L // bucket] for p in plain]):.2f}"
            in w.readout_text()
        )
        assert np.allclose(w.line.get_ydata(), np.mean(yarn, 0))
        readouts = {w.readout_text()}
        for method in data.methods:
            w.update(method=method)
            readouts.add(w.readout_text())
        assert len(readouts) == len(data.methods)
        # a run at one factor has no factor control; with several, a method not run
        # at x4 is said so, its curve hidden
        assert ("factor" in w.controls) == (len(data.factors) > 1)
        missing = [m for m in data.methods if not data.windows(m, 4)]
        if 4 in data.factors and missing:
            w.update(method=missing[0], factor=4)
            assert "was not run at ×4" in w.readout_text()
            assert not w.line.get_visible()
        # dynamic NTK at x4 over the first L tokens only (the full plan): its number
        # inside L, no end, a curve that stops at L
        unit = results["units"].get(f"dynamic_ntk/x4/{L}/window0")
        if unit is not None:
            w.update(method="dynamic_ntk", factor=4)
            inside = np.mean(unit["bucket_loss"][: L // bucket])
            assert f"×4: {inside:.2f} inside L (run inside L only)" in w.readout_text()
            assert w.line.get_visible() and max(w.line.get_xdata()) < L
    finally:
        plt.close(w.figure)


def test_pair_widget_follows_its_layer():
    results = committed_results()
    w = widgets.PairNormWidget(results, layer=0)
    try:
        q = np.asarray(results["pairs"]["q_rms"][5])
        w.update(layer=5)
        assert np.allclose(w.q_line.get_ydata(), q / q.max())
        assert f"largest q in pair {int(q.argmax())}" in w.readout_text()
        assert w.title.get_text() == "layer 5 of 30"
    finally:
        plt.close(w.figure)


WIDGETS = {"loss_curves": widgets.LossCurveWidget, "pair_norms": widgets.PairNormWidget}


@pytest.mark.parametrize("key", sorted(WIDGETS))
def test_a_blit_draws_what_a_full_draw_does(key):
    w = WIDGETS[key].example()
    steps = list(w.sweep())
    try:
        w.figure.canvas.draw()
        for step in steps[:: max(1, len(steps) // 4)]:
            w.update(**step)
            blitted = np.asarray(w.figure.canvas.buffer_rgba()).copy()
            w.figure.canvas.draw()
            assert np.array_equal(blitted, np.asarray(w.figure.canvas.buffer_rgba()))
    finally:
        plt.close(w.figure)


@pytest.mark.parametrize("key", sorted(WIDGETS))
def test_widget_speaks_chinese_with_the_english_numbers(key):
    readouts = {}
    for lang in ("en", "zh"):
        with language(lang):
            w = WIDGETS[key].example()
            steps = list(w.sweep())
            try:
                names = {n: c.description for n, c in w.controls.items()}
                texts = [w.readout_text()]
                for step in steps:
                    w.update(**step)
                    texts.append(w.readout_text())
                w.figure.canvas.draw()
            finally:
                plt.close(w.figure)
        readouts[lang] = (names, texts)
    number = re.compile(r"\d+(?:[.,]\d+)*")
    for name, label in readouts["zh"][0].items():
        assert CJK.search(label) or label == readouts["en"][0][name], label
    for en, zh in zip(readouts["en"][1], readouts["zh"][1], strict=True):
        assert CJK.search(zh) and not CJK.search(en)
        assert sorted(number.findall(zh)) == sorted(number.findall(en)), (en, zh)


def test_static_figures_draw_in_both_languages():
    results = committed_results()
    for lang in ("en", "zh"):
        with language(lang):
            for make in (
                figures.loss_figure,
                figures.pairs_figure,
                figures.attention_figure,
                figures.decay_figure,
            ):
                figure = make(results)
                figure.canvas.draw()
                assert figure.get_size_inches()[0] <= 6.4
            figure = llm_figures.thumbnail()
            figure.canvas.draw()
            assert figure.get_size_inches()[0] <= 6.4


def test_passkey_rows_cover_every_group_in_order():
    results = committed_results()
    rows = passkey_rows(results)
    assert len(rows) == len(results["passkey"]["summary"])
    assert rows == sorted(rows, key=lambda r: r[1]) or rows[0][0] == "plain"
    for method, length, shares in rows:
        assert shares and all(0 <= s <= 1 for s in shares.values())
