"""The shared widget helpers: static_png and the blitting Redrawer."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from rope_lib.figures import show_png, static_png  # noqa: E402
from rope_lib.widgets import Redrawer  # noqa: E402


def pixels(fig):
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba()).copy()


def test_redrawer_blits_moving_artists_like_a_full_draw():
    fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
    ax.set_xlim(0, 1), ax.set_ylim(0, 1)
    (line,) = ax.plot([0, 1], [0, 1], lw=3)
    redraw = Redrawer(fig, [line])
    redraw()  # first call: full draw, keeps the background
    assert redraw.background is not None
    line.set_data([0, 1], [1, 0])
    redraw()  # blit
    blitted = np.asarray(fig.canvas.buffer_rgba()).copy()
    # the same picture as drawing everything from scratch
    assert np.array_equal(blitted, pixels(fig))
    # and not the old picture
    line.set_data([0, 1], [0, 1])
    assert not np.array_equal(blitted, pixels(fig))
    plt.close(fig)


def test_static_png_includes_the_moving_artists():
    fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
    (line,) = ax.plot([0, 1], [0, 1], lw=5, color="red")
    Redrawer(fig, [line])()
    png = static_png(fig, dpi=50).data
    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))
    red = (image[..., 0] > 200) & (image[..., 1] < 80) & (image[..., 2] < 80)
    assert red.sum() > 50
    # drawn once, exactly as the same figure without a Redrawer saves (no second, darker copy)
    plain, plain_ax = plt.subplots(figsize=(3, 2), dpi=50)
    plain_ax.plot([0, 1], [0, 1], lw=5, color="red")
    plain_image = np.asarray(
        Image.open(io.BytesIO(static_png(plain, dpi=50).data)).convert("RGBA")
    )
    assert np.array_equal(image, plain_image)
    plt.close(fig), plt.close(plain)


def test_a_static_png_at_another_dpi_does_not_become_the_background():
    fig, ax = plt.subplots(figsize=(3, 2), dpi=100)
    ax.set_xlim(0, 1), ax.set_ylim(0, 1)
    (line,) = ax.plot([0, 1], [0, 1], lw=3)
    redraw = Redrawer(fig, [line])
    redraw()
    static_png(fig, dpi=50)  # savefig draws the figure at dpi 50 on the same canvas
    line.set_data([0, 1], [1, 0])
    redraw()
    blitted = np.asarray(fig.canvas.buffer_rgba()).copy()
    assert np.array_equal(blitted, pixels(fig))
    plt.close(fig)


def test_show_png_displays_a_png_and_closes_the_figure(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    fig = plt.figure(figsize=(2, 1))
    show_png(fig)
    assert (
        len(shown) == 1
        and shown[0].format == "png"
        and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    )
    assert not plt.fignum_exists(fig.number)


# --- every lesson widget: quiet when idle, sized for the projector, short text output ------
import importlib  # noqa: E402
import json  # noqa: E402
import pkgutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

import rope_lib.widgets  # noqa: E402
from rope_lib.widgets import LIVE_TEXT  # noqa: E402
from rope_lib.widgets.base import TIGHT_LINES  # noqa: E402


def lesson_widgets():
    """Every registered widget class, by name."""
    return [
        pytest.param(cls, id=name) for name, cls in rope_lib.widgets.registry().items()
    ]


@pytest.mark.parametrize("cls", lesson_widgets())
def test_a_drawn_widget_is_clean_and_asks_for_no_more_draws(cls, monkeypatch):
    # ipympl's conditions in Agg: pyplot figures, interactive mode on (pyplot then asks for a
    # draw whenever a figure goes stale), and a canvas whose draw_idle only asks (as ipympl's
    # does: the browser answers later with a full draw). A widget whose figure is stale after
    # a draw would ask again after every draw: it redraws forever while nobody touches it.
    monkeypatch.setattr(matplotlib, "is_interactive", lambda: True)
    widget = cls.example()
    steps = list(widget.sweep())
    canvas = widget.figure.canvas
    requests = []
    monkeypatch.setattr(canvas, "draw_idle", lambda *a, **k: requests.append(1))
    for step in [{}, *steps[:: max(1, len(steps) // 6)]]:
        widget.update(**step)
        for _ in range(3):  # the browser answers every request with a full draw
            requests.clear()
            canvas.draw()
            assert not widget.figure.stale, step
            assert requests == [], step
    plt.close(widget.figure)


IDLE_SCRIPT = textwrap.dedent("""
    import importlib, json, pkgutil
    import matplotlib
    matplotlib.use("module://ipympl.backend_nbagg")
    matplotlib.interactive(True)
    import matplotlib.pyplot as plt
    import rope_lib.widgets

    def idle_messages(factory, steps, turns=10):
        widget = factory()
        box = widget.widget()
        canvas = widget.figure.canvas
        sent = []
        canvas.send = lambda content=None, buffers=None: sent.append(
            json.loads(content["data"])["type"])
        def turn():  # the browser: every "draw" request is answered with one full draw
            count, asked = len(sent), "draw" in sent
            sent.clear()
            if asked:
                canvas.manager.handle_json({"type": "draw"})
            return count
        canvas.manager.handle_json({"type": "refresh"})  # shown on the page
        for _ in range(3):
            turn()
        plt.draw_all()  # the cell ends
        shown = sum(turn() for _ in range(turns))
        for step in steps[:6]:
            widget.update(**step)
            for _ in range(3):
                turn()
        plt.draw_all()
        moved = sum(turn() for _ in range(turns))
        return dict(shown=shown, moved=moved, header=canvas.header_visible,
                    footer=canvas.footer_visible, toolbar=canvas.toolbar_visible,
                    text=box._repr_mimebundle_()["text/plain"])

    result = {}
    for name, cls in rope_lib.widgets.registry().items():
        steps = list(cls.example().sweep())[::4]
        result[name] = idle_messages(cls.example, steps)
    print(json.dumps(result))
""")


def test_under_ipympl_no_widget_sends_messages_while_idle():
    # the real ipympl canvas, a simulated browser: after the widget is shown, and again after
    # a few slider moves, ten turns of the event loop without input send nothing (before the
    # fix the ALiBi widget sent about 93 messages a turn: a draw request after each full draw)
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", IDLE_SCRIPT],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert {
        "AlibiWidget",
        "EncodingExplorer",
        "RotatePairWidget",
        "ClockDials",
        "WavelengthCutoffExplorer",
        "LearnedTableWidget",
        "ComplexPlaneWidget",
    } <= set(result)
    for name, r in result.items():
        assert r["shown"] == 0 and r["moved"] == 0, (name, r)
        assert (
            r["header"] is False and r["footer"] is False and r["toolbar"] is False
        ), name
        assert r["text"] == LIVE_TEXT, name


@pytest.mark.parametrize("cls", lesson_widgets())
def test_live_figures_and_controls_fit_the_projector(cls):
    import ipywidgets as w

    from rope_lib.widgets import CANVAS_MARGINS, SCREEN_HEIGHT, SCREEN_WIDTH, SIDE_GAP

    widget = cls.example()
    width, height = widget.figure.get_size_inches()
    assert widget.figure.dpi == 100 and width <= 6.4 + 1e-9 and height <= 3.3 + 1e-9
    box = widget.widget()
    assert box._repr_mimebundle_()["text/plain"] == LIVE_TEXT and repr(box) == LIVE_TEXT
    # the controls: rows (HBoxes of one VBox) holding every control, the readout beside
    # or under them, the canvas after them
    controls = {id(c) for c in widget.controls.values()}

    def boxes(node):
        yield node
        for child in getattr(node, "children", ()):
            yield from boxes(child)

    panels = [
        b
        for b in boxes(box)
        if isinstance(b, w.VBox)
        and b is not box
        and any(
            isinstance(r, w.HBox) and controls & {id(c) for c in r.children}
            for r in b.children
        )
    ]
    assert len(panels) == 1
    rows = [r for r in panels[0].children if isinstance(r, w.HBox)]
    assert {id(c) for r in rows for c in r.children} >= controls
    assert widget.readout in list(boxes(box)) and box.children[-1] is not panels[0]
    # what the projector's screen holds (673 x 359 CSS px under JupyterLab's bars; the
    # browser tests measure it): a control row is about 32 px, a readout line 17 px
    lines = widget.readout.value.count("<br>") + 1
    figure_px = (round(width * 100), round(height * 100))
    if widget.BESIDE == "side":
        column = int(widget.READOUT_WIDTH.removesuffix("px"))
        assert column + SIDE_GAP + figure_px[0] + CANVAS_MARGINS <= SCREEN_WIDTH
        assert figure_px[1] <= SCREEN_HEIGHT - 10
        assert 32 * len(rows) + 17 * lines <= SCREEN_HEIGHT - 10, (len(rows), lines)
        assert widget.READOUT == TIGHT_LINES  # lines 17 px apart, not ipywidgets' 28
    else:
        assert 1 <= len(rows) <= 3
        under = 17 * lines if widget.BESIDE == "below" else 0
        assert 32 * len(rows) + under + figure_px[1] <= SCREEN_HEIGHT, (
            len(rows),
            lines,
        )
        assert figure_px[0] + CANVAS_MARGINS <= SCREEN_WIDTH
    plt.close(widget.figure)


def test_a_side_widget_brings_its_style_and_touches_nothing_else():
    import ipywidgets as w

    from rope_lib.widgets import SIDE_CSS
    from rope_lib.widgets.rotation import RotatePairWidget

    widget = RotatePairWidget()
    box = widget.widget()
    styles = [c for c in box.children if isinstance(c, w.HTML) and c.value == SIDE_CSS]
    assert len(styles) == 1 and "rope-side" in box._dom_classes
    # every rule of the style sheet is scoped to the widget's own class
    rules = SIDE_CSS.removeprefix("<style>").removesuffix("</style>").split("}")
    for rule in filter(str.strip, rules):
        selectors = rule.split("{")[0].split(",")
        assert all(sel.strip().startswith(".rope-side ") for sel in selectors), rule
    plt.close(widget.figure)


def test_the_course_style_is_applied_on_import_and_pngs_are_dpi_100():
    from rope_lib.figures.style import COURSE_RC, course_style

    for key, value in COURSE_RC.items():
        expected = list(value) if isinstance(value, tuple) else value
        assert matplotlib.rcParams[key] == expected, key
    assert (
        matplotlib.rcParams["font.size"] == 12
        and matplotlib.rcParams["axes.titlesize"] == 13
    )
    assert matplotlib.rcParams["xtick.labelsize"] == 11
    fig = plt.figure(figsize=(2, 1), dpi=100)
    image = Image.open(io.BytesIO(static_png(fig).data))
    assert image.size == (200, 100)
    plt.close(fig)
    with matplotlib.rc_context({"font.size": 8}), course_style():
        assert matplotlib.rcParams["font.size"] == 12


def thumbnail_topics() -> list[str]:
    """Every rope_lib.figures module with a thumbnail() (a lesson's README picture)."""
    import rope_lib.figures

    return [
        info.name
        for info in pkgutil.iter_modules(rope_lib.figures.__path__)
        if hasattr(
            importlib.import_module(f"rope_lib.figures.{info.name}"), "thumbnail"
        )
    ]


@pytest.mark.parametrize("name", thumbnail_topics())
def test_thumbnails_are_at_most_6_4_in_wide(name):
    module = importlib.import_module(f"rope_lib.figures.{name}")
    fig = module.thumbnail()
    assert fig.get_size_inches()[0] <= 6.4
    plt.close(fig)


def test_the_registry_holds_every_widget_class_of_rope_lib_widgets():
    from rope_lib.widgets.base import LiveWidget

    registry = rope_lib.widgets.registry()
    found = {}
    for info in pkgutil.iter_modules(rope_lib.widgets.__path__):
        module = importlib.import_module(f"rope_lib.widgets.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, LiveWidget)
                and value is not LiveWidget
                and value.__module__ == module.__name__
            ):
                found[value.__name__] = value
    assert found == registry and len(registry) >= 13


def test_a_widget_without_main_controls_is_refused_and_others_do_not_register():
    from rope_lib.widgets.base import REGISTRY, LiveWidget

    class Elsewhere(LiveWidget):  # a subclass outside rope_lib.widgets: not a lesson's
        pass

    assert "Elsewhere" not in REGISTRY
    with pytest.raises(TypeError, match="SWEPT"):
        type("NoMain", (LiveWidget,), {"__module__": "rope_lib.widgets.scratch"})
    assert "NoMain" not in REGISTRY


def test_spread_covers_a_range_evenly_with_both_ends():
    from rope_lib.widgets.base import Control, spread

    assert spread(Control("m", "m", "int", 0, 20), {}, 5) == [0, 5, 10, 15, 20]
    assert spread(Control("m", "m", "int", 0, 3), {}, 8) == [0, 1, 2, 3]
    assert spread(Control("t", "t", "float", 0.0, 1.0, 0.25), {}, 8) == [
        0.0, 0.25, 0.5, 0.75, 1.0
    ]  # fmt: skip
    following = Control("q", "q", "int", 0, lambda v: v["n"] - 1)
    assert spread(following, {"n": 4}, 8) == [0, 1, 2, 3]
    assert spread(Control("b", "b", "log", 1, 3, 1), {}, 8) == [10.0, 100.0, 1000.0]
    choice = Control("c", "c", "choice", options=("a", "b", "c"))
    assert spread(choice, {}, 2) == ["a", "b", "c"]  # every option: each a case
    with pytest.raises(ValueError, match="n must be >= 2"):
        spread(Control("m", "m", "int", 0, 20), {}, 1)


def frame(widget) -> np.ndarray:
    """The picture the canvas shows now."""
    return np.asarray(widget.figure.canvas.buffer_rgba()).copy()


@pytest.mark.parametrize("cls", lesson_widgets())
def test_every_widget_sweeps_its_main_controls_and_each_frame_differs(cls):
    # the sweep is what a static site draws as the widget's flipbook: deterministic, at
    # least one main control, one list of distinct values per main control, each value a
    # frame of its own
    widget = cls.example()
    values = widget.sweep_values()
    assert list(values) == list(cls.SWEPT) and values
    for name, swept in values.items():
        assert len(swept) >= 2 and len(set(map(str, swept))) == len(swept), name
    steps = list(widget.sweep())
    assert len(steps) == sum(map(len, values.values()))
    again = cls.example()
    assert list(again.sweep()) == steps  # deterministic
    plt.close(again.figure)
    previous = None
    for step in steps:
        widget.update(**step)
        picture = frame(widget)
        assert previous is None or not np.array_equal(picture, previous), step
        previous = picture
    plt.close(widget.figure)
