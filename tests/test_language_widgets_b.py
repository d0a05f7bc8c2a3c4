"""The widgets of lessons 7-10 and the lab's figures in Chinese (set_language("zh")).

- every control a teacher's demo names has a Chinese description (math symbols such as L,
  alpha, beta and "RoPE +" stay), and the English comes back with set_language("en");
- each widget, moved through its steps, draws in Chinese with no missing glyph, at the
  size it has in English, and its readout is Chinese with exactly the numbers of the
  English readout;
- the lab's figures (lm, passkey, scaling) and the thumbnails draw in Chinese with no
  missing glyph and Chinese axis labels.
"""

from __future__ import annotations

import re
import warnings

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from rope_lib.language import cjk_font, language  # noqa: E402
from rope_lib.widgets import (  # noqa: E402
    context_extension,
    lab,
    label_px,
    multimodal,
    todays_models,
)

CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _models_widget():
    return todays_models.ModelWavelengthExplorer()


def _model_steps():
    return [{"model": name} for name in todays_models.MODELS]


WIDGETS = {
    "wavelength_cutoffs": context_extension.WIDGETS["wavelength_cutoffs"],
    "lab_results": lab.WIDGETS["lab_results"],
    "models": (_models_widget, _model_steps()),
    "mrope": multimodal.WIDGETS["mrope"],
    "patch_scores": multimodal.WIDGETS["patch_scores"],
}

#: The control descriptions the Chinese teacher notes quote (`description = value`).
CHINESE_CONTROLS = {
    "wavelength_cutoffs": ("scale s", "base", "head_dim", "method"),
    "lab_results": ("schemes", "factor"),
    "models": ("model",),
    "mrope": ("rows", "cols", "token"),
    "patch_scores": ("patches", "row", "col", "convention"),
}
SYMBOL_CONTROLS = {
    "wavelength_cutoffs": ("L", "alpha", "beta"),
    "lab_results": ("method",),
}


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
    factory, steps = WIDGETS[key]
    with language(lang):
        widget = factory()
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


@pytest.mark.parametrize("key", sorted(WIDGETS))
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
        explorer = lab._explorer()
        plt.close(explorer.figure)
    for name, control in w.controls.items():
        width = int(control.style.description_width.removesuffix("px"))
        assert width >= label_px(control.description), name
        # the slider's track keeps most of the column beside the figure
        assert width <= 72, name
    factor = explorer.controls["factor"]
    assert int(factor.style.description_width.removesuffix("px")) >= (
        label_px(factor.description)
    )


def _lab_figures():
    from rope_lib.exercises.lab import load_results
    from rope_lib.lab import figures

    results = load_results()
    config = results["config"]
    panels = [("scheme", s) for s in config["schemes"]]
    panels += [("zero_shot", "linear"), ("finetuned", "linear")]
    return [
        figures.plot_lm(results).figure,
        figures.plot_passkey(results, panels),
        figures.plot_scaling(results, str(config["finetune"]["factor"])).figure,
        context_extension.thumbnail(),
        lab.thumbnail(),
        multimodal.thumbnail(),
        todays_models.static_figure("BLOOM 176B (ALiBi)"),
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
        assert english[0].axes[0].get_ylabel() == "mean loss (nats)"
        assert not any(CJK.search(w) for f in english for w in _figure_words(f))
    finally:
        for figure in english:
            plt.close(figure)
