"""The shared widget helpers: static_png and the blitting Redrawer."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from rope_lib.widgets import Redrawer, show_png, static_png  # noqa: E402


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
    plain_image = np.asarray(Image.open(io.BytesIO(static_png(plain, dpi=50).data)).convert("RGBA"))
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
    assert len(shown) == 1 and shown[0].format == "png" and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)
