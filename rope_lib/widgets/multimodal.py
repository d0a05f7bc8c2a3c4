"""Lesson 14's live widgets: M-RoPE position ids for text + an image, and 2D RoPE on a
patch grid.

    MropeWidget(rows=2, cols=3, token=5)
    PatchScoreWidget(patches=8, row=3, col=2, convention="pixtral")

MropeWidget: "I see :", an image of rows x cols patches, "a cat .". Top: every token's
three position ids (t, h, w) from rope_lib.multimodal.mrope_position_ids, the chosen
token framed. Bottom: the 16 pairs of a 32-dim head (fast pair 0 on the left), coloured
by the axis each follows (rope_lib.multimodal.mrope_pair_axes), contiguous as Qwen2-VL
(sections [4, 6, 6], its [16, 24, 24] scaled down) and interleaved as Qwen3-VL ([6, 5,
5], from [24, 20, 20]); the number in a pair is the id it turns the chosen token by
(angle_i = id * theta_i).

PatchScoreWidget: a query patch and every key patch of a square grid, both carrying the
same content vector, score (R_p q) . (R_p' k) with 2D axial RoPE
(rope_lib.vision.apply_2d_rope). Left: the scores as a heatmap; right: the scores along
the query's row against the column offset w' - w, over the curve of every possible
offset (grey). Move the query: the pattern moves with it, unchanged. Change the grid
size: Pixtral's integer (row, column) keep the pattern; DINOv3's coordinates in [-1, 1]
shrink it in patch units.

Both redraw in place by blitting (rope_lib.widgets.Redrawer); a change of the grid
(rows, cols, patches) or of the convention moves static parts and draws everything
again."""

from __future__ import annotations

import numpy as np
import torch
from matplotlib.colors import to_rgb
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from ..figures.multimodal import AXIS_COLORS, TEXT_COLOR, tint
from ..language import N_, _, _fig, get_language
from ..multimodal import mrope_pair_axes, mrope_position_ids
from ..vision import apply_2d_rope, patch_positions
from .base import TIGHT_LINES, Control, LiveWidget

PICK_COLOR = "#c44e52"
BEFORE, AFTER = ("I", "see", ":"), ("a", "cat", ".")
MAX_ROWS, MAX_COLS = 3, 4
HEAD_DIM = 32
QWEN2_SECTION = (4, 6, 6)  # Qwen2-VL's [16, 24, 24] for d = 128, scaled to d = 32
QWEN3_SECTION = (6, 5, 5)  # Qwen3-VL's [24, 20, 20], scaled to d = 32


def _n_tokens(v: dict) -> int:
    """How many tokens: the words before and after, and the image's rows x cols patches."""
    return len(BEFORE) + v["rows"] * v["cols"] + len(AFTER)


class MropeWidget(LiveWidget):
    """Controls: "rows H", "cols W" (the image grid), "token" (which token's ids to
    follow)."""

    CONTROLS = (
        Control("rows", N_("rows H"), "int", 1, MAX_ROWS),
        Control("cols", N_("cols W"), "int", 1, MAX_COLS),
        Control("token", N_("token"), "int", 0, lambda v: _n_tokens(v) - 1),
    )
    ROWS = (("rows",), ("cols",), ("token",))
    # the controls in a column left of the figure: long sliders, and the picture on the
    # projector's screen with them
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    CLAMP = True
    SWEPT = ("token", "rows", "cols")

    def __init__(self, rows: int = 2, cols: int = 3, token: int = 5):
        super().__init__(rows=rows, cols=cols, token=token)

    def build(self, fig):
        grid = fig.add_gridspec(3, 1, height_ratios=(3.0, 1.0, 1.0), hspace=1.0)
        self.ax_ids = fig.add_subplot(grid[0])
        self.ax_pairs = [fig.add_subplot(grid[1]), fig.add_subplot(grid[2])]
        # a CJK font's taller text needs a little more room under the last strip
        bottom = 0.1 if get_language() == "en" else 0.125
        fig.subplots_adjust(left=0.215, right=0.985, top=0.9, bottom=bottom)
        self._build_ids(self.ax_ids)
        self.sections = {
            "Qwen2-VL": (QWEN2_SECTION, False),
            "Qwen3-VL": (QWEN3_SECTION, True),
        }
        self.pair_axes, self.pair_texts = {}, []
        for ax_p, (name, (section, inter)) in zip(self.ax_pairs, self.sections.items()):
            self._build_pairs(ax_p, name, section, inter)
        self.ax_pairs[1].set_xlabel(
            _fig("pair i (fast → slow), with the id that turns it"),
            fontsize=10,
            labelpad=1,
        )
        return [self.pick, *(t for row in self.pair_texts for t in row)]

    def _build_ids(self, ax) -> None:
        n_max = len(BEFORE) + MAX_ROWS * MAX_COLS + len(AFTER)
        self.cells = ax.imshow(
            np.ones((3, 2, 3)), interpolation="nearest", aspect="auto"
        )
        self.id_texts = [
            [
                ax.text(0, r, "", ha="center", va="center", fontsize=10)
                for _j in range(n_max)
            ]
            for r in range(3)
        ]
        ax.set_yticks([0, 1, 2], ["t", "h", "w"])
        for label, color in zip(ax.get_yticklabels(), AXIS_COLORS):
            label.set_color(color)
            # Latin letters, bold: in a font that has a bold (the CJK font has none)
            label.set_fontfamily("DejaVu Sans")
            label.set_fontweight("bold")
        ax.tick_params(axis="x", length=0, labelsize=10, pad=2)
        ax.tick_params(axis="y", length=0, labelsize=12)
        self.title = ax.set_title(" ", fontsize=12)
        self.pick = Rectangle(
            (0, 0), 1, 3, fill=False, edgecolor=PICK_COLOR, lw=2.2, clip_on=False
        )
        ax.add_patch(self.pick)

    def _build_pairs(self, ax, name: str, section, inter: bool) -> None:
        """One strip of pairs, coloured by the axis each follows."""
        axes = mrope_pair_axes(list(section), interleaved=inter).numpy()
        self.pair_axes[name] = axes
        colors = np.array([[tint(AXIS_COLORS[a], 0.55) for a in axes]])
        ax.imshow(
            colors,
            interpolation="nearest",
            aspect="auto",
            extent=(-0.5, len(axes) - 0.5, 0.5, -0.5),
        )
        ax.set_yticks([])
        ax.set_xticks(range(0, len(axes), 3) if inter else [0, 4, 10, 15])
        ax.tick_params(labelsize=10, length=2, pad=1)
        label = _fig("interleaved") if inter else _fig("contiguous")
        ax.set_ylabel(
            f"{name}\n{label}",
            rotation=0,
            ha="right",
            va="center",
            fontsize=10,
            labelpad=4,
        )
        self.pair_texts.append(
            [
                ax.text(i, 0, "", ha="center", va="center", fontsize=10)
                for i in range(len(axes))
            ]
        )

    # ------------------------------------------------------------------ state and math
    def segments(self, v=None):
        v = v or self.values
        return [len(BEFORE), (1, v["rows"], v["cols"]), len(AFTER)]

    def labels(self):
        """A label per token: the words, and "r,c" for the image patches."""
        v = self.values
        patches = [f"{r},{c}" for r in range(v["rows"]) for c in range(v["cols"])]
        return [*BEFORE, *patches, *AFTER]

    def compute(self, v):
        """The numbers the picture shows, for the readout and for tests."""
        ids = mrope_position_ids(self.segments(v))
        token = v["token"]
        start = len(BEFORE)
        n_image = v["rows"] * v["cols"]
        return {
            "ids": ids,
            "token_ids": ids[:, token],
            "pair_ids": {
                name: ids[:, token][torch.from_numpy(axes)]
                for name, axes in self.pair_axes.items()
            },
            "is_image": start <= token < start + n_image,
            "next_text": start + max(v["rows"], v["cols"]),
            "if_counted": start + n_image,
        }

    # ------------------------------------------------------------------ drawing
    def static_key(self, s):
        return (self.values["rows"], self.values["cols"])

    def draw_static(self, s):
        # the number of tokens changes: cells, numbers and tick labels move
        v = self.values
        ids = s["ids"].numpy()
        n = ids.shape[1]
        start, n_image = len(BEFORE), v["rows"] * v["cols"]
        image = np.array([start <= j < start + n_image for j in range(n)])
        colors = np.empty((3, n, 3))
        for r in range(3):
            colors[r] = np.where(
                image[:, None], tint(AXIS_COLORS[r], 0.45), to_rgb(TEXT_COLOR)
            )
        self.cells.set_data(colors)
        self.cells.set_extent((-0.5, n - 0.5, 2.5, -0.5))
        self.ax_ids.set_xlim(-0.5, n - 0.5)
        self.ax_ids.set_ylim(2.5, -0.5)
        for r in range(3):
            for j, text in enumerate(self.id_texts[r]):
                text.set_visible(j < n)
                if j < n:
                    text.set_position((j, r))
                    text.set_text(str(ids[r, j]))
        words = ["" if image[j] else lab for j, lab in enumerate(self.labels())]
        self.ax_ids.set_xticks(range(n), words)
        self.title.set_text(
            _fig("ids (t, h, w): text, a {rows}×{cols} image, text").format(
                rows=v["rows"], cols=v["cols"]
            )
        )

    def draw(self, s):
        self.pick.set_bounds(self.values["token"] - 0.5, -0.5, 1.0, 3.0)
        for texts, name in zip(self.pair_texts, self.sections):
            for text, value in zip(texts, s["pair_ids"][name].tolist()):
                text.set_text(str(value))

    def readout_text(self) -> str:
        """Three short lines (HTML, joined by <br>)."""
        v, s = self.values, self.state
        token = v["token"]
        t, h, w = s["token_ids"].tolist()
        what = self.labels()[token]
        if s["is_image"]:
            r, c = what.split(",")
            line1 = _("token {token}: patch row {row}, col {col}").format(
                token=token, row=r, col=c
            )
        else:
            line1 = _('token {token}: text "{word}"').format(token=token, word=what)
        line3 = _(
            "text after: {start} + max(H, W) = {next}, not {start} + H·W = {counted}"
        ).format(start=len(BEFORE), next=s["next_text"], counted=s["if_counted"])
        return f"{line1}<br>t, h, w = {t}, {h}, {w}<br>{line3}"


# ---------------------------------------------------------------------- 2D RoPE on a pa
VISION_HEAD_DIM = 64
CONVENTIONS = ("pixtral", "dinov3")
MIN_PATCHES, MAX_PATCHES = 4, 16


def patch_content(head_dim: int = VISION_HEAD_DIM, seed: int = 0) -> torch.Tensor:
    """The content vector every patch carries in the widget (query and keys alike),
    float64."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(head_dim, generator=generator, dtype=torch.float64)


def patch_scores(
    patches: int,
    row: int,
    col: int,
    convention: str,
    content: torch.Tensor | None = None,
) -> torch.Tensor:
    """[patches, patches]: the score (R_p q) . (R_p' k) of the query patch p = (row,
    col) with every key patch p' of a square grid, q = k = content, 2D RoPE of the
    convention."""
    content = patch_content() if content is None else content
    positions = patch_positions(patches, patches, convention)
    keys = apply_2d_rope(
        content.expand(patches * patches, -1), positions, convention=convention
    )
    query = keys[row * patches + col]
    return (keys @ query).view(patches, patches)


def _scores_from_origin(content, dh, dw, convention: str) -> torch.Tensor:
    """The score of a query at (0, 0) with keys at (dh, dw), all carrying `content`."""
    positions = torch.stack([dh.flatten(), dw.flatten()])
    keys = apply_2d_rope(
        content.expand(positions.shape[1], -1), positions, convention=convention
    )
    query = apply_2d_rope(
        content[None], torch.zeros(2, 1, dtype=torch.float64), convention=convention
    )[0]
    return keys @ query


def _step(patches: int, convention: str) -> float:
    """How far one patch moves the position: 1 (Pixtral), 2 / patches (DINOv3)."""
    return 2.0 / patches if convention == "dinov3" else 1.0


def offset_scores(
    offsets: torch.Tensor,
    patches: int,
    convention: str,
    content: torch.Tensor | None = None,
) -> torch.Tensor:
    """The score of a query with a key `offsets` columns to its right (same row), for a
    grid of `patches` per side: Pixtral's offset is the number of columns, DINOv3's 2 *
    offset / patches."""
    content = patch_content() if content is None else content
    dw = offsets.to(torch.float64) * _step(patches, convention)
    return _scores_from_origin(content, torch.zeros_like(dw), dw, convention)


def offset_map(
    patches: int, convention: str, content: torch.Tensor | None = None
) -> torch.Tensor:
    """[2n - 1, 2n - 1]: the score of a query with a key (dh, dw) patches away, for
    every offset a grid of n = `patches` per side holds (dh, dw from -(n - 1) to n - 1);
    entry [n - 1 + dh, n - 1 + dw]. Pixtral's offsets count patches, DINOv3's steps are
    2/n."""
    content = patch_content() if content is None else content
    offsets = torch.arange(-(patches - 1), patches, dtype=torch.float64)
    offsets = offsets * _step(patches, convention)
    dh, dw = torch.meshgrid(offsets, offsets, indexing="ij")
    side = 2 * patches - 1
    return _scores_from_origin(content, dh, dw, convention).view(side, side)


class PatchScoreWidget(LiveWidget):
    """Controls: "patches" (grid side), "row" and "col" (the query patch), "model"."""

    CONTROLS = (
        Control("patches", N_("patches"), "int", MIN_PATCHES, MAX_PATCHES),
        Control("row", N_("row"), "int", 0, lambda v: v["patches"] - 1),
        Control("col", N_("col"), "int", 0, lambda v: v["patches"] - 1),
        Control("convention", N_("model"), "choice", options=CONVENTIONS),
    )
    ROWS = (("patches",), ("row",), ("col",), ("convention",))
    # the controls in a column left of the figure: long sliders, and the picture on the
    # projector's screen with them
    BESIDE, READOUT_WIDTH, READOUT = "side", "232px", TIGHT_LINES
    FIGSIZE = (4.25, 3.3)
    CLAMP = True
    SWEPT = ("row", "col", "patches", "convention")

    def __init__(
        self, patches: int = 8, row: int = 3, col: int = 2, convention: str = "pixtral"
    ):
        self.content = patch_content()
        self._lowest = {}
        self.peak = float(self.content @ self.content)  # the score at offset 0
        super().__init__(patches=patches, row=row, col=col, convention=convention)

    def build(self, fig):
        grid = fig.add_gridspec(1, 3, width_ratios=(1.0, 0.06, 0.8), wspace=0.3)
        self.ax_map = fig.add_subplot(grid[0])
        self.ax_bar = fig.add_subplot(grid[1])
        self.ax_row = fig.add_subplot(grid[2])
        fig.subplots_adjust(left=0.11, right=0.89, top=0.88, bottom=0.17)

        self.image = self.ax_map.imshow(
            np.zeros((2, 2)), cmap="viridis", interpolation="nearest"
        )
        fig.colorbar(self.image, cax=self.ax_bar)
        self.ax_bar.tick_params(labelsize=10)
        self.marker = Rectangle((0, 0), 1, 1, fill=False, edgecolor="black", lw=2.0)
        self.ax_map.add_patch(self.marker)
        self.row_line = self.ax_map.axhline(0, color="black", lw=0.8, ls=":")
        self.ax_map.set_xlabel(_fig("column w'"), labelpad=1)
        self.ax_map.set_ylabel(_fig("row h'"), labelpad=1)
        self.ax_map.tick_params(labelsize=10)
        self.map_title = self.ax_map.set_title(" ", fontsize=12)

        (self.curve,) = self.ax_row.plot([], [], color="0.65", lw=1.2)
        (self.dots,) = self.ax_row.plot([], [], "o", color=PICK_COLOR, ms=4)
        self.ax_row.axvline(0, color="black", lw=0.6, ls=":")
        self.ax_row.set_xlabel(_fig("column offset w' - w"), labelpad=1)
        self.ax_row.tick_params(labelsize=10)
        self.ax_row.yaxis.tick_right()
        self.ax_row.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
        self.row_title = self.ax_row.set_title(" ", fontsize=12)
        return [self.image, self.row_line, self.marker, self.dots]

    def compute(self, v):
        n, row, col = v["patches"], v["row"], v["col"]
        scores = patch_scores(n, row, col, v["convention"], self.content)
        offsets = torch.arange(-(n - 1), n)
        step = _step(n, v["convention"])
        key = (n, v["convention"])
        if key not in self._lowest:  # the lowest score over every 2D offset of the grid
            pattern = offset_map(n, v["convention"], self.content)
            self._lowest[key] = float(pattern.min())
        return {
            "lowest": self._lowest[key],
            "scores": scores,
            "row_scores": scores[row],
            "row_offsets": torch.arange(n) - col,
            "offsets": offsets,
            "curve": offset_scores(offsets, n, v["convention"], self.content),
            "step": step,
        }

    def static_key(self, s):
        return (self.values["patches"], self.values["convention"])

    def draw_static(self, s):
        # grid size or convention: axes ranges, the curve and the titles change
        n, convention = self.static_key(s)
        self.ax_map.set_xlim(-0.5, n - 0.5)
        self.ax_map.set_ylim(n - 0.5, -0.5)
        self.image.set_extent((-0.5, n - 0.5, n - 0.5, -0.5))
        ticks = [0, n // 2, n - 1]
        self.ax_map.set_xticks(ticks)
        self.ax_map.set_yticks(ticks)
        self.ax_row.set_xlim(-(n - 1) - 0.5, n - 1 + 0.5)
        self.curve.set_data(s["offsets"].numpy(), s["curve"].numpy())
        low = s["lowest"]  # one colour scale for every query position on this grid
        self.image.set_clim(low, self.peak)
        margin = 0.06 * (self.peak - low)
        self.ax_row.set_ylim(low - margin, self.peak + margin)
        name = {"pixtral": "Pixtral", "dinov3": "DINOv3"}[convention]
        if convention == "pixtral":
            title = _fig("{model} {n}×{n}, step 1")
        else:
            title = _fig("{model} {n}×{n}, step 2/{n}")
        self.map_title.set_text(title.format(model=name, n=n))
        self.row_title.set_text(_fig("the query's row"))

    def draw(self, s):
        v = self.values
        self.image.set_data(s["scores"].numpy())
        self.marker.set_bounds(v["col"] - 0.5, v["row"] - 0.5, 1.0, 1.0)
        self.row_line.set_ydata([v["row"], v["row"]])
        self.dots.set_data(s["row_offsets"].numpy(), s["row_scores"].numpy())

    def readout_text(self) -> str:
        """Three short lines (HTML, joined by <br>)."""
        v, s = self.values, self.state
        n = v["patches"]
        right = float(s["curve"][n])  # offset +1
        return "<br>".join(
            [
                _("query at row {row}, col {col} of {n}×{n}").format(
                    row=v["row"], col=v["col"], n=n
                ),
                _("score: itself {peak:.2f}, next column {right:.2f}").format(
                    peak=self.peak, right=right
                ),
                _("one column moves the position by {step:.4g}").format(step=s["step"]),
            ]
        )
