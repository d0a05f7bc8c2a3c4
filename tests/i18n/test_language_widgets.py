"""The widgets and figures of the sinusoidal, learned-table, rotation, RoPE-complex and
ALiBi lessons in Chinese: Chinese control descriptions, readouts and figure words with their numbers, no
missing glyph, no word outside its figure, and English again after set_language("en").

The widgets of lessons 9-14 and the lab's figures in Chinese (set_language("zh")).

- every control a teacher's demo names has a Chinese description (math symbols such as L,
  alpha, beta and "RoPE +" stay), and the English comes back with set_language("en");
- each widget, moved through its steps, draws in Chinese with no missing glyph, at the
  size it has in English, and its readout is Chinese with exactly the numbers of the
  English readout;
- the lab's figures (text, passkey, copy, scaling, fine-tune) and the thumbnails draw in
  Chinese with no missing glyph and Chinese axis labels;
- the lab's results explorer (rope_lib.widgets.lab) draws exactly the numbers of the
  results it is given, for every model and seed, in place and blitted like a full draw;
  its readout gives the passkey accuracy's median seed and range over the seeds at each
  length (in English and Chinese), in two lines that fit its width, and its passkey
  panel draws no threshold line.
"""

from __future__ import annotations

import re
import warnings

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from rope_lib import length_decay  # noqa: E402
from rope_lib.alibi import alibi_bias, alibi_query_attention, alibi_slopes  # noqa: E402
from rope_lib.analysis import long_term_decay_bound  # noqa: E402
from rope_lib.figures import alibi as alibi_figures  # noqa: E402
from rope_lib.figures import clock_dials as clock_dials_figures  # noqa: E402
from rope_lib.figures import complex_plane as complex_plane_figures  # noqa: E402
from rope_lib.figures import context_extension as context_extension_figures  # noqa: E402
from rope_lib.figures import rotation as rotation_figures  # noqa: E402
from rope_lib.figures import sinusoidal as sinusoidal_figures  # noqa: E402
from rope_lib.figures import todays_models as todays_models_figures  # noqa: E402
from rope_lib.language import cjk_font, language  # noqa: E402
from rope_lib.widgets import (  # noqa: E402
    LIVE_TEXT,
    alibi,
    clock_dials,
    complex_plane,
    learned,
    rotation,
    sinusoidal,
)
from rope_lib.widgets.base import plain_text  # noqa: E402

CJK = re.compile(r"[\u4e00-\u9fff]")
WIDGETS = {
    "encoding_explorer": sinusoidal.EncodingExplorer,
    "rotate_pair": rotation.RotatePairWidget,
    "clock_dials": clock_dials.ClockDials,
    "alibi": alibi.AlibiWidget,
    "learned_table": learned.LearnedTableWidget,
    "complex_plane": complex_plane.ComplexPlaneWidget,
}
# the control descriptions that are names or symbols, the same in every language
SYMBOLS = {"m", "n", "L", "|q|", "|k|", "d_model"}
# for each widget, a value inside each control's range, away from its default (in an
# order the ranges allow: the query's range follows the sequence length)
MOVES = {
    "encoding_explorer": dict(p=77, k=-9, d_model=48, base=1000.0),
    "rotate_pair": dict(
        m=11, n=3, theta=0.45, q_len=1.5, q_angle=0.7, k_len=0.6, k_angle=-1.2, shift=6
    ),
    "clock_dials": dict(position=321, base=500000.0),
    "alibi": dict(heads=12, head=10, seq_len=64, query=40, scores="random"),
    "learned_table": dict(optimizer="AdamW", L=6, steps=120, m=17),
    "complex_plane": dict(m=14, n=3, theta=0.36),
}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_a_cjk_font_is_there():
    # without one, figure words stay English (by design); the set-up installs one
    assert cjk_font() is not None


def draw_strictly(figure) -> None:
    """Draw the figure; a missing glyph (matplotlib warns "Glyph ... missing") fails."""
    if not hasattr(
        figure.canvas, "get_renderer"
    ):  # a bare Figure: give it Agg's canvas
        FigureCanvasAgg(figure)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure.canvas.draw()


def tick_labels(figure) -> set:
    """The ids of the figure's tick labels (a tick out of view keeps its Text, undrawn)."""
    ids = set()
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ids |= {id(tick.label1), id(tick.label2)}
    return ids


def texts(figure) -> list:
    """The visible, non-empty Text artists of the figure (titles, labels, ax.text), tick
    labels aside."""
    ticks = tick_labels(figure)
    found = figure.findobj(matplotlib.text.Text)
    return [
        t
        for t in found
        if t.get_visible() and t.get_text().strip() and id(t) not in ticks
    ]


def assert_inside(figure, name: str) -> None:
    """Every word drawn lies inside the figure (nothing cut off at an edge): titles,
    labels and texts, and the drawn tick labels of every axis that is on."""
    renderer = figure.canvas.get_renderer()
    box = figure.bbox
    extents = [(t.get_text(), t.get_window_extent(renderer)) for t in texts(figure)]
    for ax in figure.axes:
        if ax.axison:
            for axis in (ax.xaxis, ax.yaxis):
                extent = axis.get_tightbbox(renderer)
                if extent is not None:
                    extents.append(
                        (f"{axis.axis_name} axis of {ax.get_title()}", extent)
                    )
    for text, extent in extents:
        assert (
            extent.x0 >= box.x0 - 1
            and extent.x1 <= box.x1 + 1
            and extent.y0 >= box.y0 - 1
            and extent.y1 <= box.y1 + 1
        ), f"{name}: {text!r} is cut off ({extent} outside {box})"


def move_every_control(widget, moves: dict) -> None:
    assert set(moves) == set(widget.controls)
    for name, value in moves.items():
        widget.controls[name].value = value
        assert widget.controls[name].value == value, (name, widget.controls[name].value)
        # the widget took it (ClockDials keeps its values as attributes)
        assert getattr(widget, "values", vars(widget))[name] == value, name


@pytest.mark.parametrize("name", WIDGETS)
def test_widget_in_chinese_has_chinese_controls_and_draws(name):
    with language("zh"):
        widget = WIDGETS[name]()
        descriptions = [c.description for c in widget.controls.values()]
        for description in descriptions:
            if description not in SYMBOLS:
                assert CJK.search(description), (
                    f"{name}: {description!r} is not Chinese"
                )
        # short enough for a slider label: at most 4 Chinese characters
        assert all(len(CJK.findall(d)) <= 4 for d in descriptions), descriptions
        # two controls of one widget never share a description
        assert len(set(descriptions)) == len(descriptions)
        move_every_control(widget, MOVES[name])
        draw_strictly(widget.figure)
        assert_inside(widget.figure, name)
        assert repr(widget.widget()) != LIVE_TEXT
        assert CJK.search(repr(widget.widget()))
    assert widget.figure.get_size_inches().tolist() == list(widget.FIGSIZE)


def test_rotation_readout_in_chinese_keeps_its_numbers():
    with language("zh"):
        widget = rotation.RotatePairWidget(shift=4, m=9, n=2)
        text = widget.readout.value
        state = widget.state
        assert CJK.search(text)
        assert f"{state['score']:.4f}" in text and f"{state['closed']:.4f}" in text
        # query at m + shift = 13, key at n + shift = 6
        assert "= 13" in text and "= 6" in text and "= 7" in text
        titles = [widget.ax_plane.get_title(), widget.ax_score.get_title()]
        assert all(CJK.search(t) for t in titles), titles
        # the arcs are labelled with the shifted positions in Chinese
        arc_labels = [widget.plane.arc_label_q.get_text()]
        assert CJK.search(arc_labels[0]) and arc_labels[0].startswith("(m+")


def test_alibi_readout_in_chinese_keeps_its_numbers():
    with language("zh"):
        widget = alibi.AlibiWidget(heads=12, head=10, query=40, seq_len=64)
        widget.update(scores="random")
        state = widget.state()
        text = widget.readout_text()
        lines = text.split("<br>")
        assert len(lines) == 3 and all(CJK.search(line) for line in lines), lines
        for number in ("10", "12", "40", "64", f"{state['slope']:.4f}"):
            assert number in text, (number, text)
        assert f"{state['span']:.4f}" in text
        assert f"{float(state['weights'][40]):.4f}" in text
        assert f"{state['within_span']:.4f}" in text
        assert widget.controls["scores"].label != "random"
        assert CJK.search(widget.controls["scores"].label)
        assert widget.values["scores"] == "random"  # the value the code compares
        assert f"{state['slope']:.4g}" in widget.bias_title.get_text()
        assert "40" in widget.attn_title.get_text()
        assert CJK.search(widget.attn_title.get_text())


def test_clock_dials_in_chinese_keep_their_numbers():
    with language("zh"):
        widget = clock_dials.ClockDials(position=100, base=500000.0)
        lines = widget.readout_lines()
        angles = widget.angles().double().tolist()
        assert len(lines) == 8
        for line, angle in zip(lines, angles):
            assert CJK.search(line) and f"{angle:.4f}" in line, line
        html = widget.readout_html()
        assert CJK.search(html) and f"{angles[1]:.4f}" in html
        title = widget.title.get_text()
        assert CJK.search(title) and "100" in title and "500,000" in title


def test_encoding_explorer_in_chinese():
    with language("zh"):
        widget = sinusoidal.EncodingExplorer()
        words = [widget.ax_vec.get_xlabel(), widget.ax_vec.get_title()]
        words += [widget.ax_dot.get_xlabel(), widget.ax_dot.get_title()]
        assert all(CJK.search(w) for w in words), words


STATIC = {
    "sinusoidal thumbnail": sinusoidal_figures.thumbnail,
    "rotation thumbnail": rotation_figures.thumbnail,
    "clock dials thumbnail": clock_dials_figures.thumbnail,
    "alibi thumbnail": alibi_figures.thumbnail,
    "complex plane thumbnail": complex_plane_figures.thumbnail,
    "polar rotation": rotation_figures.polar_rotation_figure,
    "frequency figure": lambda: rotation_figures.frequency_figure(
        [1.0, 0.3], [0.5, 0.8], 7
    ),
    # lesson 8's still figures, from the numbers the lesson gives them
    "alibi one query": lambda: alibi_figures.one_query_figure(
        torch.randn(16),
        alibi_bias(16, 8)[1, 15],
        torch.full((16,), 1 / 16),
        alibi_query_attention(torch.randn(16), 0.25, 15),
        15,
        0.25,
    ),
    "alibi slopes": alibi_figures.slopes_figure,
    "alibi bias matrices": lambda: alibi_figures.bias_matrices_figure(
        alibi_bias(16, 8)
    ),
    "alibi symmetric bias": lambda: alibi_figures.symmetric_bias_figure(
        alibi_bias(12, 8, causal=False)
    ),
    "alibi reach": lambda: alibi_figures.reach_figure(
        alibi_query_attention(torch.zeros(8, 4096), alibi_slopes(8), 4095)
    ),
    "alibi decay comparison": lambda: alibi_figures.decay_comparison_figure(
        torch.arange(1025),
        long_term_decay_bound(torch.arange(1025), head_dim=128)
        / long_term_decay_bound(torch.arange(1), head_dim=128),
        alibi_slopes(8),
    ),
    "alibi attention maps": lambda: alibi_figures.attention_maps_figure(
        torch.rand(1, 8, 48, 48) / 2
    ),
    # lesson 9's still figures
    "coverage": lambda: context_extension_figures.coverage_figure(
        torch.rand(64), torch.rand(64), 4096, 4.0
    ),
    "loss past L": lambda: context_extension_figures.length_figure(
        *(length_decay.length_study(k) for k in ("smollm2", "lab"))
    ),
    "yarn ramp": lambda: context_extension_figures.ramp_figure(
        torch.linspace(1, 0, 64), torch.linspace(1, 0, 64), 20, 46
    ),
    # lesson 13's still figure
    "two partials": lambda: todays_models_figures.partial_frequencies_figure(
        torch.cat([torch.logspace(0, -1.5, 64), torch.zeros(192)]),
        torch.logspace(0, -6, 64),
        1e6,
        0.25,
    ),
}


@pytest.mark.parametrize("name", STATIC)
def test_static_figures_in_chinese_draw_every_glyph_and_fit(name):
    with language("en"):
        english = STATIC[name]()
        english_size = english.get_size_inches().tolist()
        draw_strictly(english)
        english_words = {t.get_text() for t in texts(english)}
    with language("zh"):
        figure = STATIC[name]()
        draw_strictly(figure)
        assert_inside(figure, name)
        words = {t.get_text() for t in texts(figure)}
    assert figure.get_size_inches().tolist() == english_size
    assert any(CJK.search(w) for w in words), words
    assert not any(CJK.search(w) for w in english_words), english_words


def test_english_again_after_chinese():
    with language("zh"):
        rotation.RotatePairWidget()
    widget = rotation.RotatePairWidget()
    descriptions = [c.description for c in widget.controls.values()]
    assert descriptions == [
        "m",
        "n",
        "theta",
        "|q|",
        "angle q",
        "|k|",
        "angle k",
        "shift",
    ]
    assert plain_text(widget.readout.value).startswith("q'·k' = ")
    assert "closed form" in widget.readout.value
    assert widget.ax_plane.get_title() == "q, k faded; q', k' solid"
    assert repr(widget.widget()) == LIVE_TEXT
    dials = clock_dials.ClockDials(position=3)
    assert dials.readout_lines()[0] == "pair 0 angle = 3.0000 rad (0.4775 turns)"
    ali = alibi.AlibiWidget()
    assert [c.description for c in ali.controls.values()] == [
        "heads",
        "head",
        "query m",
        "seq len",
        "scores",
    ]
    assert ali.controls["scores"].label == "zeros"


def test_clock_dial_labels_in_chinese_have_every_glyph(monkeypatch):
    """The dials' labels are outlines (TextPath), which draw a box for a missing glyph
    without a warning: every character must be in one of the label font's families."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    drawn = []
    text_path = clock_dials_figures.text_path

    def recording(x, y, text, *args, **kwargs):
        drawn.append(text)
        return text_path(x, y, text, *args, **kwargs)

    monkeypatch.setattr(clock_dials_figures, "text_path", recording)
    with language("zh"):
        widget = clock_dials.ClockDials(position=50)
        widget.update(position=700, base=500000.0)
        families = clock_dials_figures.label_font().get_family()
        clock_dials_figures.thumbnail()
    assert any(CJK.search(text) for text in drawn), drawn
    fonts = [
        FT2Font(
            font_manager.findfont(
                font_manager.FontProperties(family=family), fallback_to_default=False
            )
        )
        for family in families
    ]
    for text in drawn:
        for char in text.replace(" ", ""):
            assert any(font.get_char_index(ord(char)) for font in fonts), (char, text)


matplotlib.use("Agg")


from rope_lib.figures import lab as lab_figures  # noqa: E402
from rope_lib.figures import multimodal as multimodal_figures  # noqa: E402
from rope_lib.widgets import (  # noqa: E402
    context_extension,
    lab,
    label_px,
    multimodal,
    todays_models,
)

NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _model_steps():
    return [{"model": name} for name in todays_models.MODELS]


#: key -> (widget class, steps: every model for the models' widget, else its sweep)
LATER_WIDGETS = {
    "wavelength_cutoffs": (context_extension.WavelengthCutoffExplorer, None),
    "lab_results": (lab.LabResultsWidget, None),
    "models": (todays_models.ModelWavelengthExplorer, _model_steps()),
    "mrope": (multimodal.MropeWidget, None),
    "patch_scores": (multimodal.PatchScoreWidget, None),
}

#: The control descriptions the Chinese teacher notes quote (`description = value`).
CHINESE_CONTROLS = {
    "wavelength_cutoffs": ("scale s", "base", "head_dim", "method"),
    "lab_results": ("model", "seed"),
    "models": ("model",),
    "mrope": ("rows", "cols", "token"),
    "patch_scores": ("patches", "row", "col", "convention"),
}
SYMBOL_CONTROLS = {
    "wavelength_cutoffs": ("L", "alpha", "beta"),
}


# lesson 10's temperature widget (rope_lib.widgets.temperature)
from rope_lib.widgets import temperature as temperature_widgets  # noqa: E402

LATER_WIDGETS["temperature"] = (temperature_widgets.TemperatureWidget, None)
CHINESE_CONTROLS["temperature"] = ("n",)
SYMBOL_CONTROLS["temperature"] = ("multiplier", "sigma")


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>|&[a-z]+;|&#\d+;", " ", html)


def _draw_strictly(figure) -> None:
    """Draw the figure; a missing glyph ("Glyph ... missing from font") fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure.canvas.draw()


def _figure_words(figure) -> list[str]:
    words = [t.get_text() for t in figure.texts]
    for legend in figure.legends:
        words += [t.get_text() for t in legend.get_texts()]
    for ax in figure.axes:
        words += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        if ax.get_legend() is not None:
            words += [t.get_text() for t in ax.get_legend().get_texts()]
    return [w for w in words if w.strip()]


def _run(key: str, lang: str):
    """Build the widget in `lang`, move it through its steps; its descriptions, readouts
    after each step, figure size and words."""
    cls, steps = LATER_WIDGETS[key]
    with language(lang):
        widget = cls.example()
        steps = steps or list(widget.sweep())
        try:
            descriptions = {n: c.description for n, c in widget.controls.items()}
            readouts = [widget.readout.value]
            for step in steps:
                widget.update(**step)
                readouts.append(widget.readout.value)
            _draw_strictly(widget.figure)
            size = tuple(widget.figure.get_size_inches())
            words = _figure_words(widget.figure)
        finally:
            plt.close(widget.figure)
    return descriptions, readouts, size, words


@pytest.mark.parametrize("key", sorted(LATER_WIDGETS))
def test_widget_speaks_chinese_with_the_english_numbers(key):
    en_descriptions, en_readouts, en_size, _ = _run(key, "en")
    zh_descriptions, zh_readouts, zh_size, zh_words = _run(key, "zh")
    for name in CHINESE_CONTROLS[key]:
        assert CJK.search(zh_descriptions[name]), (name, zh_descriptions[name])
        assert not CJK.search(en_descriptions[name]), (name, en_descriptions[name])
        assert len(zh_descriptions[name]) <= 10, zh_descriptions[name]  # a short label
    for name in SYMBOL_CONTROLS.get(key, ()):
        assert zh_descriptions[name] == en_descriptions[name]
    # descriptions stay distinct: a demo script names a control by its description
    assert len(set(zh_descriptions.values())) == len(zh_descriptions)
    assert zh_size == en_size
    for en, zh in zip(en_readouts, zh_readouts, strict=True):
        assert CJK.search(_plain(zh)), zh
        assert not CJK.search(_plain(en)), en
        assert sorted(NUMBER.findall(_plain(zh))) == sorted(
            NUMBER.findall(_plain(en))
        ), (en, zh)
    if cjk_font() is not None:  # with no CJK font figures keep English words
        assert any(CJK.search(w) for w in zh_words), zh_words


def test_english_comes_back_after_chinese():
    with language("zh"):
        zh = context_extension.WavelengthCutoffExplorer()
        plt.close(zh.figure)
    en = context_extension.WavelengthCutoffExplorer()
    plt.close(en.figure)
    assert zh.controls["scale s"].description != "scale s"
    assert en.controls["scale s"].description == "scale s"
    assert "attention factor = " in en.readout_text()
    assert en.ax_wave.get_xlabel() == "pair i"
    assert en.ax_wave.get_title() == "wavelength (tokens)"


def test_chinese_labels_are_no_wider_than_the_room_they_get():
    with language("zh"):
        w = context_extension.WavelengthCutoffExplorer()
        plt.close(w.figure)
        explorer = lab.LabResultsWidget.example()
        plt.close(explorer.figure)
    for name, control in w.controls.items():
        width = int(control.style.description_width.removesuffix("px"))
        assert width >= label_px(control.description), name
        # the slider's track keeps most of the column beside the figure
        assert width <= 72, name
    for control in explorer.controls.values():
        assert int(control.style.description_width.removesuffix("px")) >= (
            label_px(control.description)
        )


def _lab_figures():
    from rope_lib.lab import figures
    from rope_lib.lab.results import load_results

    results = load_results()
    return [
        figures.text_figure(results),
        figures.passkey_figure(results),
        figures.copy_figure(results),
        figures.scaling_figure(results),
        figures.finetune_figure(results),
        context_extension_figures.thumbnail(),
        lab_figures.thumbnail(),
        multimodal_figures.thumbnail(),
        todays_models_figures.static_figure("BLOOM 176B (ALiBi)"),
    ]


def test_lab_figures_and_thumbnails_draw_in_chinese():
    with language("zh"):
        figures = _lab_figures()
        try:
            for figure in figures:
                _draw_strictly(figure)
                words = _figure_words(figure)
                assert words
                if cjk_font() is not None:
                    assert any(CJK.search(w) for w in words), words
        finally:
            for figure in figures:
                plt.close(figure)
    english = _lab_figures()
    try:
        assert english[0].axes[0].get_ylabel() == "text loss (nats)"
        assert not any(CJK.search(w) for f in english for w in _figure_words(f))
    finally:
        for figure in english:
            plt.close(figure)


# --- the results explorer (rope_lib.widgets.lab) --------------------------------------


def _lab_results() -> dict:
    from rope_lib.lab.results import load_results

    return load_results()


def _by_hand(results: dict, model: str) -> tuple[np.ndarray, np.ndarray]:
    """(text loss, passkey accuracy) [seed, length] of a model, read from results.json
    by hand: a scheme's own numbers, or the RoPE model's under a method past L (at L
    the method's factor is 1: plain RoPE); passkey averaged over the depths."""
    config = results["config"]
    L, seeds = config["train_length"], [str(s) for s in config["seeds"]]
    text, key = np.zeros((2, len(seeds), len(config["lengths"])))
    for i, seed in enumerate(seeds):
        for j, n in enumerate(config["lengths"]):
            if model in config["schemes"]:
                run = results["schemes"][model][seed]
                text[i, j] = run["text"]["loss"][str(n)]
            elif n == L:
                run = results["schemes"]["rope"][seed]
                text[i, j] = run["text"]["loss"][str(n)]
            else:
                run = results["scaling"][model][seed]
                text[i, j] = run["text"][str(n)]
            key[i, j] = np.mean(run["passkey"][str(n)])
    return text, key


def _spreads(key: np.ndarray) -> str:
    """The readout's passkey numbers, by hand: at each length (a column of key), the
    median over the seeds and the lowest and highest seed, "m [lo-hi]" joined by " · "."""
    return " · ".join(
        f"{m:.2f} [{lo:.2f}-{hi:.2f}]"
        for m, lo, hi in zip(np.median(key, axis=0), key.min(axis=0), key.max(axis=0))
    )


def test_spreads_by_hand_reads_the_lessons_nope_example():
    # NoPE at 4L over five seeds: 0.84, 0.91, 0.90, 0.63, 0.88 -> median 0.88, 0.63-0.91
    key = np.array([[0.84], [0.91], [0.90], [0.63], [0.88]])
    assert _spreads(key) == "0.88 [0.63-0.91]"


def test_explorer_draws_every_models_numbers_and_the_spread_over_seeds():
    from rope_lib.widgets.lab import LabResultsWidget

    results = _lab_results()
    config = results["config"]
    seeds = [str(s) for s in config["seeds"]]
    last = config["lengths"][-1]
    widget = LabResultsWidget(results)
    try:
        low, high = widget.ax_text.get_ylim()
        for model in config["schemes"] + config["methods"]:
            text, key = _by_hand(results, model)
            widget.update(model=model, seed="all")
            for i, line in enumerate(widget.text_lines):
                np.testing.assert_allclose(line.get_ydata(), text[i], rtol=1e-9)
                np.testing.assert_allclose(
                    widget.key_lines[i].get_ydata(), key[i], rtol=1e-9
                )
                assert low < text[i].min() and text[i].max() < high  # no axis moves
            assert widget.mean_line.get_visible()
            np.testing.assert_allclose(
                widget.mean_line.get_ydata(), text.mean(axis=0), rtol=1e-9
            )
            # the median seed [range] at each length, and the loss at the longest
            readout = plain_text(widget.readout.value)
            first = f"passkey: {_spreads(key)}"
            assert readout.splitlines()[0] == first, (model, readout)
            assert "above 0.9" not in readout
            assert f"text loss at {last}: {text[:, -1].mean():.2f}" in readout
            assert "entropy rate" in readout
            # one seed: drawn on top of the others, its numbers in the readout
            seed = seeds[-1]
            widget.update(seed=int(seed))  # a seed may be given as an int
            chosen = widget.text_lines[-1]
            assert chosen.get_zorder() > widget.text_lines[0].get_zorder() or (
                len(seeds) == 1
            )
            assert not widget.mean_line.get_visible()
            readout = plain_text(widget.readout.value)
            assert readout.splitlines()[0] == first, readout  # every seed's, still
            accuracies = " · ".join(f"{a:.2f}" for a in key[-1])
            assert f"seed {seed}: passkey {accuracies}" in readout, readout
            assert f"text loss at {last}: {text[-1, -1]:.2f}" in readout
            assert widget.title.get_text().endswith(f"seed {seed}")
    finally:
        plt.close(widget.figure)


def _readout_px(line: str) -> float:
    """About the width (CSS px) of a readout line in 13 px text: Latin in DejaVu Sans
    (Chromium's sans-serif on Linux, wider than Segoe UI, Helvetica or Arial), a CJK
    character a 13 px square."""
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    latin = "".join(c for c in line if ord(c) < 0x2E80)
    font = FontProperties(family="DejaVu Sans", size=13)
    width = RendererAgg(10, 10, 72).get_text_width_height_descent(latin, font, False)[0]
    return width + 13 * (len(line) - len(latin))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explorer_readout_in_both_languages_fits_its_two_lines(lang):
    from rope_lib.figures import static_png
    from rope_lib.widgets.lab import LabResultsWidget

    results = _lab_results()
    config = results["config"]
    seed = str(config["seeds"][0])
    with language(lang):
        widget = LabResultsWidget(results)
        try:
            width = int(widget.READOUT_WIDTH.removesuffix("px"))
            for model in config["schemes"] + config["methods"]:
                _text, key = _by_hand(results, model)
                for chosen in ("all", seed):
                    widget.update(model=model, seed=chosen)
                    lines = plain_text(widget.readout.value).splitlines()
                    assert len(lines) == 2, lines
                    # the passkey numbers, whatever the seed control says
                    assert lines[0].endswith(_spreads(key)), (model, lines)
                    assert ("密钥检索" in lines[0]) == (lang == "zh"), lines
                    for line in lines:  # a 10 px margin: no third line
                        px = _readout_px(line)
                        assert px <= width - 10, (line, px)
            # the passkey panel: a line per seed, no threshold line, no "has learned"
            title = widget.ax_key.get_title()
            expected = {"en": "each seed a line", "zh": "每个随机种子一条线"}[lang]
            assert title == expected, title
            flat = [
                line
                for line in widget.ax_key.get_lines()
                if line not in widget.key_lines and np.ptp(line.get_ydata()) == 0
            ]
            assert flat == [], [line.get_ydata() for line in flat]
            # the static figure beside the widget still renders
            assert len(static_png(widget.figure).data) > 10_000
        finally:
            plt.close(widget.figure)


def test_explorer_controls_update_it_and_odd_values_are_refused():
    from rope_lib.widgets.lab import LabResultsWidget

    results = _lab_results()
    widget = LabResultsWidget(results, model="alibi")
    try:
        assert widget.controls["model"].value == "alibi"
        assert widget.controls["seed"].value == "all"
        for name, value in [
            ("model", "yarn"),
            ("seed", str(results["config"]["seeds"][0])),
            ("model", "none"),
            ("seed", "all"),
        ]:
            before = widget.readout.value
            widget.controls[name].value = value  # as the browser does
            assert widget.values[name] == value
            assert widget.readout.value != before, (name, value)
        labels = dict(
            (v, k) for k, v in widget.controls["model"].options
        )  # what the dropdown shows
        assert labels["yarn"] == "RoPE + YaRN" and labels["none"] == "NoPE"
        assert labels["rope"] == "RoPE"
        for bad in [dict(model="t5"), dict(seed="99"), dict(seed=3.5), dict(scheme=1)]:
            with pytest.raises(ValueError):
                widget.update(**bad)
        assert "rope-readout" in widget.readout._dom_classes
    finally:
        plt.close(widget.figure)


def test_explorer_blits_the_same_picture_as_a_full_draw():
    from rope_lib.widgets.lab import LabResultsWidget

    results = _lab_results()
    seed = str(results["config"]["seeds"][-1])
    widget = LabResultsWidget(results)
    canvas = widget.figure.canvas
    try:
        canvas.draw()
        for step in [
            {"model": "sinusoidal", "seed": seed},
            {"model": "yarn", "seed": "all"},
            {"model": "none", "seed": seed},
        ]:
            widget.update(**step)  # blitted: only the seeds' lines and the title
            blitted = np.asarray(canvas.buffer_rgba()).copy()
            canvas.draw()
            assert np.array_equal(blitted, np.asarray(canvas.buffer_rgba())), step
    finally:
        plt.close(widget.figure)


def test_explorer_sweep_fits_the_lessons_results():
    steps = list(lab.LabResultsWidget.example().sweep())
    config = _lab_results()["config"]
    models = set(config["schemes"] + config["methods"])
    assert {step["model"] for step in steps} == models
    assert {step["seed"] for step in steps} >= {"all", str(config["seeds"][0])}
