"""Make the README's animated picture from the browser tests' drag screenshots.

tests/browser/test_projector.py::test_drag_frames drags a slider of one lesson's widget
with the mouse, at the projector's width, and saves one screenshot per step plus
drag.json (file names, where the pointer was, the slider's value). This script draws a
mouse pointer on each frame, scales the frames down, plays them forward and back, and
writes an animated GIF (or APNG) under images/, smaller than --max-bytes (it shrinks the
frames and the palette until it is).

    python -m pytest tests/browser/test_projector.py -k drag_frames  # the frames
    python scripts/make_animation.py                 # images/widget_drag.gif

Options: --frames DIR (default: the folder of the newest drag.json under
test-artifacts/browser/), --out PATH (.gif, or .png for APNG), --width PX,
--max-bytes N.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from pathlib import Path

from PIL import Image, ImageDraw

REPO = Path(__file__).resolve().parents[1]
# where the browser tests put their screenshots (ROPE_BROWSER_ARTIFACTS, as in
# tests/browser/conftest.py)
ARTIFACTS = Path(
    os.environ.get("ROPE_BROWSER_ARTIFACTS") or REPO / "test-artifacts" / "browser"
)

# a plain arrow pointer, tip at (0, 0), in CSS px
_POINTER = [(0, 0), (0, 17), (4.5, 13), (7.5, 20), (10.5, 18.7), (7.5, 12), (13, 12)]


def find_frames(folder: Path | None) -> Path:
    if folder is not None:
        if not (folder / "drag.json").is_file():
            raise SystemExit(f"no drag.json in {folder}")
        return folder
    found = sorted(ARTIFACTS.glob("*/drag.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(
            f"no drag.json under {ARTIFACTS}: run "
            "`python -m pytest tests/browser/test_projector.py -k drag_frames` first"
        )
    return found[-1].parent


def draw_pointer(image: Image.Image, at: tuple[float, float], scale: float) -> None:
    """A white arrow with a black edge, tip at `at` (CSS px; `scale` px per CSS px)."""
    draw = ImageDraw.Draw(image)
    x, y = at
    points = [((x + px) * scale, (y + py) * scale) for px, py in _POINTER]
    draw.polygon(
        points, fill=(255, 255, 255), outline=(0, 0, 0), width=max(1, round(scale))
    )


def load_frames(folder: Path) -> tuple[list[Image.Image], dict]:
    meta = json.loads((folder / "drag.json").read_text())
    scale = float(meta.get("scale", 1.0))
    frames = []
    for entry in meta["frames"]:
        image = Image.open(folder / entry["file"]).convert("RGB")
        draw_pointer(image, tuple(entry["pointer"]), scale)
        frames.append(image)
    if len(frames) < 2:
        raise SystemExit(f"{folder}: fewer than two frames")
    size = frames[0].size  # element screenshots of one widget: all the same size
    frames = [f if f.size == size else f.resize(size) for f in frames]
    return frames, meta


def encode(
    frames: list[Image.Image], width: int, colors: int, fmt: str, ms: int, hold_ms: int
) -> bytes:
    height = round(frames[0].height * width / frames[0].width)
    small = [f.resize((width, height), Image.LANCZOS) for f in frames]
    # forward, then back: a loop with no jump
    sequence = small + small[-2:0:-1]
    durations = [ms] * len(sequence)
    durations[0] = durations[len(small) - 1] = hold_ms
    if fmt == "gif":
        # one palette for every frame (no flicker), from the first and last frame
        sample = Image.new("RGB", (width, height * 2))
        sample.paste(small[0], (0, 0))
        sample.paste(small[-1], (0, height))
        palette = sample.quantize(colors=colors, method=Image.Quantize.MEDIANCUT)
        quantized = [
            f.quantize(palette=palette, dither=Image.Dither.NONE) for f in sequence
        ]
        out = io.BytesIO()
        quantized[0].save(
            out,
            format="GIF",
            save_all=True,
            append_images=quantized[1:],
            duration=durations,
            loop=0,
            optimize=True,
            disposal=1,
        )
        return out.getvalue()
    out = io.BytesIO()
    sequence[0].save(
        out,
        format="PNG",
        save_all=True,
        append_images=sequence[1:],
        duration=durations,
        loop=0,
        optimize=True,
    )
    return out.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--frames",
        type=Path,
        default=None,
        help="folder with drag.json and drag-NN.png",
    )
    parser.add_argument("--out", type=Path, default=REPO / "images" / "widget_drag.gif")
    parser.add_argument(
        "--width",
        type=int,
        default=640,
        help="width of the picture in px (default 640)",
    )
    parser.add_argument("--max-bytes", type=int, default=1_000_000)
    parser.add_argument(
        "--ms", type=int, default=110, help="ms per frame (default 110)"
    )
    args = parser.parse_args(argv)

    folder = find_frames(args.frames)
    frames, meta = load_frames(folder)
    fmt = "png" if args.out.suffix.lower() in (".png", ".apng") else "gif"
    width, colors = min(args.width, frames[0].width), 128
    while True:
        data = encode(frames, width, colors, fmt, args.ms, hold_ms=900)
        if len(data) <= args.max_bytes:
            break
        if width <= 320:
            print(
                f"cannot get under {args.max_bytes} bytes "
                f"(last try {len(data)} bytes at {width} px)",
                file=sys.stderr,
            )
            return 1
        width, colors = (
            int(width * 0.85),
            max(32, colors // 2 if fmt == "gif" else colors),
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    values = [f["value"] for f in meta["frames"]]
    try:
        shown = args.out.relative_to(REPO)
    except ValueError:
        shown = args.out
    print(
        f"{shown}: {len(data):,} bytes, {width} px wide, {len(frames)} frames "
        f"forward and back, {meta['notebook']} slider {meta['slider']!r} "
        f"{values[0]} -> {values[-1]} (from {folder})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
