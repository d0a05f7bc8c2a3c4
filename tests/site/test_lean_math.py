"""The built pages' formulas, made lean after typesetting (site/build.py's lean_svg), draw
the same pixels as MathJax's own SVG, and lose no glyph."""

from __future__ import annotations

import importlib.util
import re

from sitekit import REPO, SITE

spec = importlib.util.spec_from_file_location("site_build", REPO / "site" / "build.py")
build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build)

PAGE = SITE / "en" / "03_rotation_2d.html"


def _typeset() -> str:
    """MathJax's SVG as typeset.js writes it: the built page's formulas are already lean,
    so the test typesets a few of the course's own formulas again, in node."""
    import subprocess
    import tempfile

    tex = [
        r"\(q_m \cdot k_n\)",
        r"\[R_m^\top R_n = R_{n-m}\]",
        r"\[\begin{aligned} s' &= \frac{s\,n}{L} - (s - 1) \\ b' &= b\,s'^{d/(d-2)}"
        r"\end{aligned}\]",
        r"\(\gamma(r) = \begin{cases} 0 & r < \alpha \\ 1 & r > \beta \end{cases}\)",
        r"\[\sqrt{1/t} = 0.1 \ln s + 1, \quad \left(\frac{q^\top k}{\sqrt{d}}\right)"
        r"\sum_{j \le m} \hat p_j \tilde x_j \begin{pmatrix} \cos & -\sin \\ \sin & \cos"
        r"\end{pmatrix} \underbrace{\mathrm{softmax}}_{n} \operatorname{Re}[z]\]",
    ]
    html = "<!DOCTYPE html><html><body><p>" + " ".join(tex) + "</p></body></html>"
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as f:
        f.write(html)
    subprocess.run(
        ["node", str(REPO / "site" / "typeset.js"), f.name],
        check=True,
        capture_output=True,
    )
    return open(f.name, encoding="utf-8").read()


def test_lean_formulas_keep_every_glyph_and_group_that_does_something():
    raw = _typeset()
    lean = build.lean_svg(raw)
    assert len(lean) < len(raw)
    for tag in (
        "<svg",
        "<use",
        "<path",
        "<rect",
        "<line",
        "translate(",
        "stroke-width",
    ):
        assert lean.count(tag) == raw.count(tag), tag
    assert 'data-mml-node="mi"' not in lean and "<g>" not in lean
    assert (
        lean.count('data-mml-node="mtable"') == raw.count('data-mml-node="mtable"') > 0
    )
    assert lean.count("<g") == lean.count("</g>")


def test_lean_formulas_draw_the_same_pixels(browser):
    raw = _typeset()
    shots = []
    for html in (raw, build.lean_svg(raw)):
        page = browser.new_page(viewport={"width": 600, "height": 200})
        try:
            page.set_content(html)
            shots.append(page.screenshot())
        finally:
            page.close()
    assert shots[0] == shots[1]


def test_built_pages_are_lean():
    text = PAGE.read_text(encoding="utf-8")
    assert "<mjx-container" in text
    assert not re.search(r'data-mml-node="mi"|<link rel="preload" as="script"', text)
