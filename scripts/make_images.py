"""Write the README's pictures into images/: a hero figure and one thumbnail per lesson,
and their Chinese versions (drawn with rope_lib.set_language("zh")) into images/zh/ for
README.zh-CN.md.

    python scripts/make_images.py                # every picture
    python scripts/make_images.py --lesson 15    # lesson 15's thumbnails alone

Every number drawn comes from rope_lib. A lesson's thumbnail is the thumbnail() of
rope_lib.figures.<topic> for the first rope_lib.widgets or rope_lib.figures topic it imports
(for the first lesson that shows that topic), else its own
first stored figure, shrunk; lesson 0's picture is drawn here.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import io
import json
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402

import rope_lib  # noqa: E402
from rope_lib.language import _fig, language  # noqa: E402

IMAGES = Path(__file__).resolve().parent.parent / "images"
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
THUMBNAIL = (320, 200)  # px, the size of the widget thumbnails


def hero() -> plt.Figure:
    """Three ideas of the course on a dark card: the sinusoid table, a query turning by
    m·theta, ALiBi's bias. Course notation: positions m (query) and n (key)."""
    ink, card = "#e8e6e3", "#1b1f2a"
    with plt.rc_context(
        {
            "text.color": ink,
            "axes.labelcolor": ink,
            "xtick.color": ink,
            "ytick.color": ink,
            "axes.edgecolor": "#3a4150",
            "font.size": 12,
            "axes.titlesize": 14,
        }
    ):
        fig, axes = plt.subplots(
            1, 3, figsize=(12, 3.6), facecolor=card, layout="constrained"
        )
        for ax in axes:
            ax.set_facecolor(card)
        fig.suptitle(
            _fig("How does a transformer know where a token is?"),
            color=ink,
            fontsize=17,
            fontweight="bold",
        )

        pe = rope_lib.sinusoidal_encoding(64, 64)
        axes[0].imshow(pe.T, aspect="auto", cmap="twilight_shifted", vmin=-1, vmax=1)
        axes[0].set(
            title=_fig("sinusoids: one column per position"),
            xlabel=_fig("position m"),
            ylabel=_fig("dimension"),
        )

        ax = axes[1]
        circle = torch.linspace(0, 2 * math.pi, 200)
        ax.plot(circle.cos(), circle.sin(), color="#3a4150", lw=1.5)
        q = torch.tensor([[0.9, 0.25]])
        theta = torch.tensor([0.45])
        for m in range(0, 7):
            rotated = rope_lib.apply_rope(q, torch.tensor([m]), inv_freq=theta)[0]
            color = plt.cm.plasma(0.15 + 0.75 * m / 6)
            ax.annotate(
                "",
                xy=tuple(rotated.tolist()),
                xytext=(0, 0),
                arrowprops=dict(arrowstyle="-|>", color=color, lw=2.5),
            )
            ax.text(
                *(1.16 * rotated).tolist(),
                f"m={m}",
                fontsize=10,
                ha="center",
                va="center",
                color=color,
            )
        ax.set(
            title=_fig("RoPE: q turned by m·θ"),
            xlim=(-1.35, 1.35),
            ylim=(-1.35, 1.35),
            aspect="equal",
        )
        ax.set_xticks([]), ax.set_yticks([])
        for side in ax.spines.values():
            side.set_visible(False)

        bias = rope_lib.alibi_bias(16, 8)[2]
        axes[2].imshow(bias.masked_fill(bias.isinf(), float("nan")), cmap="plasma")
        axes[2].set(
            title=_fig("ALiBi: −μ·(m − n), head 3 of 8"),
            xlabel=_fig("key n"),
            ylabel=_fig("query m"),
        )
        axes[2].set_xticks(range(0, 16, 5)), axes[2].set_yticks(range(0, 16, 5))
    return fig


def lesson0_thumbnail() -> plt.Figure:
    torch.manual_seed(0)
    block = rope_lib.PositionalSelfAttention(16, 4, "none", causal=False)
    x = torch.randn(1, 5, 16)
    swap = torch.tensor([0, 4, 2, 3, 1])
    with torch.no_grad():
        _, w = block(x, return_weights=True)
        _, w_swapped = block(x[:, swap], return_weights=True)
    fig, axes = plt.subplots(1, 2, figsize=(4, 2.5))
    for ax, weights, title in zip(
        axes, (w, w_swapped), (_fig("tokens"), _fig("tokens 1 and 4 swapped"))
    ):
        ax.imshow(weights[0, 0], cmap="viridis")
        ax.set_title(title, fontsize=8)
        ax.set_xticks([]), ax.set_yticks([])
    fig.suptitle(_fig("No positions: the same weights, reordered"), fontsize=9)
    fig.tight_layout()
    return fig


def save(fig: plt.Figure, path: Path, dpi: int) -> None:
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    print(f"wrote {path.relative_to(IMAGES.parent)}")


def lesson_widget_module(notebook: Path):
    """The rope_lib.figures module of a topic the lesson imports (from rope_lib.widgets or
    rope_lib.figures, by topic name) that can draw a thumbnail."""
    source = notebook.read_text(encoding="utf-8")
    pattern = r"rope_lib\.(?:widgets|figures)(?:\.| import )([a-z_]+)"
    for name in re.findall(pattern, source):
        if importlib.util.find_spec(f"rope_lib.figures.{name}") is None:
            continue  # show_png, static_png, style, a topic without figures
        module = importlib.import_module(f"rope_lib.figures.{name}")
        if hasattr(module, "thumbnail"):
            return module
    return None


def first_figure(notebook: Path) -> Image.Image | None:
    """The first PNG figure stored in a lesson's outputs."""
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                return Image.open(io.BytesIO(base64.b64decode("".join(png))))
    return None


def save_thumbnail_of(image: Image.Image, path: Path) -> None:
    image = image.convert("RGBA")
    image.thumbnail(THUMBNAIL)
    image.save(path)
    print(f"wrote {path.relative_to(IMAGES.parent)}")


def pictures(images: Path, notebooks: Path, only: str | None = None) -> None:
    """The hero and every lesson's thumbnail, in the language set, into `images`; with
    `only` ("12"), that lesson's thumbnail alone."""
    images.mkdir(exist_ok=True)
    if only is None:
        save(hero(), images / "hero.png", 100)
        save(lesson0_thumbnail(), images / "lesson00.png", 80)
    used = set()
    for notebook in sorted(notebooks.glob("[0-9][0-9]_*.ipynb")):
        number = notebook.name[:2]
        if number == "00":
            continue
        if only is not None and number != only:
            # the lessons before it still claim their topics' thumbnails
            if (module := lesson_widget_module(notebook)) is not None:
                used.add(module.__name__)
            continue
        # a widget module's thumbnail for the first lesson that shows it; otherwise the
        # lesson's own first figure
        module = lesson_widget_module(notebook)
        if module is not None and module.__name__ not in used:
            used.add(module.__name__)
            save(module.thumbnail(), images / f"lesson{number}.png", 80)
        elif (figure := first_figure(notebook)) is not None:
            save_thumbnail_of(figure, images / f"lesson{number}.png")


def main(argv: list[str]) -> None:
    only = argv[argv.index("--lesson") + 1] if "--lesson" in argv else None
    pictures(IMAGES, NOTEBOOKS, only)
    with language("zh"):
        pictures(IMAGES / "zh", NOTEBOOKS / "zh", only)


if __name__ == "__main__":
    main(sys.argv[1:])
