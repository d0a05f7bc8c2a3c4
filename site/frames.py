"""The flipbooks: each live widget of a lesson drawn at build time, frame by frame.

A lesson's widget cell (`explorer = EncodingExplorer()` then `explorer.widget()`) is
found by the class name of a registered widget (rope_lib.widgets.registry()). The widget
is built with the cell's own arguments, in the edition's language, and swept
(LiveWidget.sweep_values): each main control (SWEPT) across its values, the others at
the lesson's values. Each setting is drawn by the widget's own code (update(), then its
figure saved) into one frame, and the page's flipbook shows the frame of the value a
reader drags to.

Frames are cached in .cache/site-frames/<key>/, the key a hash of the widget's code (its
module, the widget base and display code, the course style), the cell's call, the
language and the drawing code here: a build redraws only the widgets whose code or
arguments changed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import io
import json
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "site-frames"
#: The widget's files whose change redraws its frames (beside its own module).
SHARED_CODE = (
    "rope_lib/widgets/base.py",
    "rope_lib/widgets/display.py",
    "rope_lib/figures/style.py",
    "rope_lib/language.py",
    "rope_lib/locale/zh/LC_MESSAGES/rope_lib.po",
)
#: Frames as WebP at this quality: a tenth of a PNG's bytes, text still sharp.
WEBP_QUALITY = 85
#: Positions per slider (the widget's own spread over its range: LiveWidget.sweep_values),
#: and, for an integer slider with a longer range, its first steps one by one too (so
#: the motion of one step, lesson 7's fast dials turning a radian a token, is seen).
POINTS = 16
FIRST_STEPS = 12
#: What a flipbook says under its picture, per language.
NOTE = {
    "en": (
        "A flipbook: these pictures were drawn by the widget's own code when the site "
        "was built. Drag a slider to see what the kernel draws at that value (one "
        "control at a time; the others stay at the lesson's values). The live widget, "
        "with every control, runs in JupyterLab (make lab)."
    ),
    "zh": (
        "翻页图：这些图是构建网站时由控件自己的代码画出的。拖动滑块，即可看到内核在该取值下"
        "画出的图（一次移动一个控件，其余控件保持课程中的取值）。能调节所有控件的实时版本"
        "在 JupyterLab 中运行（make lab）。"
    ),
}
LABEL = {"en": "Flipbook of {name}", "zh": "{name} 的翻页图"}


def widget_call(source: str, classes) -> tuple[str, str] | None:
    """(class name, the call that builds it) of the widget a cell shows, or None."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else getattr(func, "id", "")
            )
            if name in classes:
                node.func = ast.Name(id=name)
                return name, ast.unparse(node)
    return None


def cache_key(cls, call: str, language: str) -> str:
    """The hash of what the frames depend on."""
    digest = hashlib.sha256()
    files = [inspect.getsourcefile(cls), *(ROOT / f for f in SHARED_CODE)]
    for path in files:
        digest.update(Path(path).read_bytes())
    for drawing in (draw_frames, value_label, _numbers, slider_values):
        digest.update(inspect.getsource(drawing).encode())
    digest.update(f"{call}|{language}|{WEBP_QUALITY}|{NOTE}|{LABEL}".encode())
    return digest.hexdigest()[:16]


def value_label(control, value) -> str:
    """How a control's value reads beside its slider."""
    if control.option_label is not None:
        return str(control.option_label(value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def slider_values(widget, control, values: list) -> list:
    """The values a flipbook's slider takes: the sweep's (POINTS of them), and for an
    integer slider its first FIRST_STEPS values one by one."""
    from rope_lib.widgets.base import spread

    if control.kind != "int" or not _numbers(values):
        return values
    every = spread(control, widget.values, n=10**9)
    return sorted({*values, *every[:FIRST_STEPS]})


def draw_frames(name: str, call: str, language: str, out: Path) -> dict:
    """Draw the flipbook of one widget into out/: frames NNN.webp and flipbook.json."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rope_lib.language import _, set_language
    from rope_lib.widgets import registry
    from rope_lib.widgets.base import plain_text

    set_language(language)
    cls = registry()[name]
    module = importlib.import_module(cls.__module__)
    namespace = {name: cls}
    if "results" in call:
        namespace["results"] = module.load_results()
    widget = eval(call, namespace)  # the lesson's own call, e.g. AlibiWidget(heads=8)
    controls = {c.name: c for c in widget.CONTROLS}
    start = dict(widget.values)
    frames, seen, sliders = [], {}, []

    def frame(settings: dict) -> int:
        key = json.dumps(settings, sort_keys=True, default=str)
        if key not in seen:
            widget.update(**settings)
            buffer = io.BytesIO()
            widget.figure.savefig(
                buffer,
                format="webp",
                pil_kwargs={"quality": WEBP_QUALITY, "method": 6},
            )
            src = f"{len(frames):03d}.webp"
            (out / src).write_bytes(buffer.getvalue())
            readout = plain_text(widget.readout_html())
            frames.append({"src": src, "readout": readout})
            seen[key] = len(frames) - 1
        return seen[key]

    out.mkdir(parents=True, exist_ok=True)
    first = frame(start)
    for control_name, values in widget.sweep_values(POINTS).items():
        values = slider_values(widget, controls[control_name], values)
        if start[control_name] not in values:
            values = (
                sorted([*values, start[control_name]])
                if _numbers(values)
                else [
                    start[control_name],
                    *values,
                ]
            )
        control = controls[control_name]
        steps = []
        for value in values:
            index = frame({**start, control_name: value})
            steps.append({"label": value_label(control, value), "frame": index})
        sliders.append(
            {
                "name": control_name,
                "kind": control.kind,
                "label": plain_text(_(control.label)),
                "start": values.index(start[control_name]),
                "steps": steps,
            }
        )
    plt.close(widget.figure)
    width, height = widget.figure.canvas.get_width_height()
    manifest = {
        "widget": name,
        "first": first,
        "frames": frames,
        "sliders": sliders,
        "width": width,
        "height": height,
        "label": LABEL[language].format(name=name),
        "note": NOTE[language],
    }
    (out / "flipbook.json").write_text(json.dumps(manifest, ensure_ascii=False))
    return manifest


def _numbers(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _draw_job(job):
    name, call, language, out = job
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    draw_frames(name, call, language, tmp)
    tmp.rename(out)
    return out


def flipbooks(jobs: list[tuple[str, str, str]], workers: int = 2) -> dict:
    """The flipbooks' folders, (class name, call, language) -> cache folder, drawn
    where the cache lacks them, `workers` processes side by side."""
    from concurrent.futures import ProcessPoolExecutor

    from rope_lib.widgets import registry

    classes = registry()
    folders = {
        job: CACHE / f"{job[0]}-{job[2]}-{cache_key(classes[job[0]], job[1], job[2])}"
        for job in jobs
    }
    for (name, _, language), folder in folders.items():  # frames of older code
        for old in CACHE.glob(f"{name}-{language}-*"):
            if old != folder and not old.name.endswith(".tmp"):
                shutil.rmtree(old)
    missing = [(*job, folder) for job, folder in folders.items() if not folder.exists()]
    if missing:
        print(
            f"drawing {len(missing)} flipbooks ({len(folders) - len(missing)} cached)"
        )
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_draw_job, missing))
    return folders


def flipbook_html(manifest: dict, base: str, ident: str, label: str | None = None) -> str:
    """The flipbook's HTML: the first frame, a labelled slider per main control, the
    readout and the note; site/_static/flipbook.js moves it. label: what it shows (the
    lesson's words), else the widget's name. Each slider announces its value (not its
    index) from the start."""
    import html

    label = label or manifest["label"]
    frames = manifest["frames"]
    first = frames[manifest["first"]]
    rows = []
    for slider in manifest["sliders"]:
        control_id = f"{ident}-{re.sub(r'[^A-Za-z0-9]+', '-', slider['name'])}"
        start = slider["steps"][slider["start"]]
        rows.append(
            f'<div class="flipbook-row"><label for="{control_id}">'
            f"{html.escape(slider['label'])}</label>"
            f'<input type="range" id="{control_id}" min="0" '
            f'max="{len(slider["steps"]) - 1}" value="{slider["start"]}" '
            f'aria-valuetext="{html.escape(start["label"])}" '
            f'data-slider="{len(rows)}">'
            f'<output for="{control_id}">{html.escape(start["label"])}</output></div>'
        )
    data = {
        "base": base,
        "frames": frames,
        "sliders": [
            {"start": s["start"], "steps": s["steps"], "kind": s["kind"]}
            for s in manifest["sliders"]
        ],
    }
    alt = f"{label}: {first['readout']}"
    script = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return (
        f'<figure class="flipbook" id="{ident}" role="group" '
        f'aria-label="{html.escape(label)}">'
        f'<div class="flipbook-controls">{"".join(rows)}</div>'
        f'<img src="{base}/{first["src"]}" alt="{html.escape(alt)}" '
        f'width="{manifest["width"]}" height="{manifest["height"]}">'
        f'<pre class="flipbook-readout" aria-live="polite">'
        f"{html.escape(first['readout'])}</pre>"
        f'<figcaption class="flipbook-note">{html.escape(manifest["note"])}'
        "</figcaption>"
        f'<script type="application/json" class="flipbook-data">'
        f"{script}</script>"
        "</figure>"
    )
