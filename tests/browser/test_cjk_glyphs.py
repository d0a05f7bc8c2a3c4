"""The Chinese lessons' widgets show Chinese glyphs, not empty boxes.

Chromium draws text with the system's fonts (fontconfig). On a machine with no font that has
Chinese glyphs, every Chinese character of a widget's label, dropdown or readout comes out as
the same empty box, and nothing else fails: the page runs, the widgets move. So for each
Chinese lesson with a live widget, every distinct Chinese character of its widgets' text is
drawn in the element's own font on a canvas, and two different characters must not give the
same picture. CI installs Debian's fonts-noto-cjk beside chromium (.ci/run); README says what a
Linux reader without a CJK font installs.
"""

from __future__ import annotations

import lab
import pytest

pytestmark = pytest.mark.xdist_group("browser")

CHINESE = [n for n in lab.discover_notebooks() if n.startswith("zh/")]

#: For each live widget's text element (labels, dropdown options, buttons, readouts): its font
#: and its Chinese characters. Then each character drawn alone on a canvas in that font: the
#: pixels as a string, and whether anything was drawn at all.
_JS_GLYPHS = r"""
() => {
  const cjk = /[\u4e00-\u9fff]/g;
  const els = [...document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) [data-rope-widget] :is(.widget-label, label, option, button, .rope-readout, .widget-readout)')];
  const canvas = document.createElement('canvas');
  canvas.width = 64; canvas.height = 64;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const glyphs = {};
  for (const el of els) {
    const style = getComputedStyle(el);
    const font = `32px ${style.fontFamily}`;
    for (const ch of new Set(el.textContent.match(cjk) || [])) {
      const key = ch + '|' + style.fontFamily;
      if (key in glyphs) continue;
      ctx.clearRect(0, 0, 64, 64);
      ctx.font = font; ctx.fillStyle = '#000'; ctx.textBaseline = 'top';
      ctx.fillText(ch, 8, 8);
      const d = ctx.getImageData(0, 0, 64, 64).data;
      let ink = 0, bits = '';
      for (let k = 3; k < d.length; k += 4) { bits += d[k] > 127 ? '1' : '0'; ink += d[k] > 127; }
      glyphs[key] = {ch, font: style.fontFamily, ink, bits};
    }
  }
  return Object.values(glyphs);
}
"""


def same_pictures(glyphs: list[dict]) -> list[str]:
    """Groups of different characters drawn alike (same font, same pixels), and characters
    drawn as nothing at all."""
    by_picture: dict[tuple[str, str], list[str]] = {}
    for g in glyphs:
        by_picture.setdefault((g["font"], g["bits"]), []).append(g["ch"])
    found = [
        f"{''.join(chars)} drawn alike in {font}"
        for (font, _), chars in by_picture.items()
        if len(chars) > 1
    ]
    found += [
        f"{g['ch']} drawn as nothing in {g['font']}" for g in glyphs if not g["ink"]
    ]
    return found


@pytest.mark.parametrize("notebook", CHINESE)
def test_chinese_widget_text_has_real_glyphs(notebooks, notebook):
    nb = notebooks.get(notebook)
    if not nb.widgets():
        pytest.skip(f"{notebook} has no live widget")
    glyphs = nb.page.evaluate(_JS_GLYPHS)
    assert len({g["ch"] for g in glyphs}) >= 2, (
        f"{notebook}: its widgets show fewer than two Chinese characters"
    )
    problems = same_pictures(glyphs)
    assert not problems, (
        f"{notebook}: Chinese characters of its widgets render as boxes (no font with Chinese "
        f"glyphs? Debian: apt-get install fonts-noto-cjk): " + "; ".join(problems[:5])
    )


def test_the_check_reads_boxes_and_glyphs():
    box = "0110" * 4
    assert same_pictures(
        [
            {"ch": "位", "font": "f", "ink": 8, "bits": box},
            {"ch": "置", "font": "f", "ink": 8, "bits": box},
        ]
    )
    assert same_pictures([{"ch": "位", "font": "f", "ink": 0, "bits": "0" * 16}])
    assert not same_pictures(
        [
            {"ch": "位", "font": "f", "ink": 8, "bits": box},
            {"ch": "置", "font": "f", "ink": 7, "bits": "1110" * 4},
        ]
    )
