"""The widgets and figures of the sinusoidal, learned-table, rotation, RoPE-complex and
ALiBi lessons in Chinese: Chinese control descriptions, readouts and figure words with their numbers, no
missing glyph, no word outside its figure, and English again after set_language("en")."""

import re
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

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
    # lesson 6's still figures, from the numbers the lesson gives them
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
    # lesson 7's still figures
    "coverage": lambda: context_extension_figures.coverage_figure(
        torch.rand(64), torch.rand(64), 4096, 4.0
    ),
    "extrapolation": lambda: context_extension_figures.extrapolation_figure(
        torch.linspace(0, 2048, 50),
        torch.rand(50),
        torch.linspace(2048, 4096, 50),
        1000 * torch.rand(50),
        2048,
    ),
    "yarn ramp": lambda: context_extension_figures.ramp_figure(
        torch.linspace(1, 0, 64), torch.linspace(1, 0, 64), 20, 46
    ),
    # lesson 9's still figure
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
