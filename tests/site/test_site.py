"""The course's static site in a real browser (Debian's chromium through playwright).

Every page of both editions loads with no failed request and none leaving the machine,
shows every image, has no raw TeX left, links a twin that exists and passes axe-core's
audit with no serious or critical violation; every flipbook's picture changes when any of
its sliders moves; the language switch reaches the twin page; search finds a word in each
language; every slide of every deck fits reveal's 853x480 slide, the projector's
1280x720 at 150%. axe's findings per page go to test-artifacts/site/axe.json.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path
from urllib.parse import urljoin

import pytest
from sitekit import EDITIONS, REPO, SITE, Watched, axe_violations, decks, lessons, pages

ARTIFACTS = REPO / "test-artifacts" / "site"
#: A word of the course in each edition, and a page search must list for it.
SEARCH = {"en": ("wavelength", "01_sinusoidal"), "zh-CN": ("波长", "01_sinusoidal")}

ALL_PAGES = ["index.html", *(p for edition in EDITIONS for p in pages(edition))]
if not (SITE / "index.html").exists():
    ALL_PAGES = ["(not built)"]
ALL_DECKS = [p for edition in EDITIONS for p in decks(edition)] or ["(not built)"]

# Text left as TeX outside code: $...$, \( or \[ that MathJax did not typeset.
RAW_MATH = r"""() => {
  const skip = "PRE, CODE, SCRIPT, STYLE, MJX-CONTAINER, TEXTAREA, .highlight, " +
    "#search-results";  // search shows bits of the pages' text as text
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const found = [];
  const tex = /\$[^$\s][^$]*\$|\\\(|\\\[/;
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest(skip)) continue;
    if (tex.test(node.textContent)) found.push(node.textContent.trim().slice(0, 80));
  }
  return found;
}"""

# Every image, lazy ones too, decoded: the broken ones by their src.
BROKEN_IMAGES = """async () => {
  const broken = [];
  for (const img of document.images) {
    img.loading = "eager";
    try { await img.decode(); } catch (e) {}
    if (!img.complete || img.naturalWidth === 0) broken.push(img.src);
  }
  return broken;
}"""

WAIT_MATH = """async () => {
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
}"""


def _visit(watched: Watched, url: str):
    watched.reset()
    watched.page.goto(url, wait_until="load")
    watched.page.evaluate(WAIT_MATH)


def _record(name: str, path: str, value) -> None:
    """Add {path: value} to test-artifacts/site/NAME: a read-modify-write under a lock,
    since the two xdist workers write the same file."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    record = ARTIFACTS / name
    with open(ARTIFACTS / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = json.loads(record.read_text()) if record.exists() else {}
        found[path] = value
        record.write_text(json.dumps(found, indent=1, sort_keys=True))


def _record_axe(path: str, violations: list) -> None:
    _record(
        "axe.json",
        path,
        [
            {"id": v["id"], "impact": v["impact"], "nodes": len(v["nodes"])}
            for v in violations
        ],
    )


def _record_zooms(path: str, sizes: list) -> None:
    _record("deck_zooms.json", path, [round(s["zoom"], 3) for s in sizes])


@pytest.mark.parametrize("path", ALL_PAGES)
def test_page(watched, site_url, path):
    """Loads whole and offline, images there, math typeset, the twin exists."""
    assert path != "(not built)", "_site/ is not built: run `make site`"
    _visit(watched, f"{site_url}/{path}")
    page = watched.page
    assert page.evaluate(BROKEN_IMAGES) == []
    assert page.evaluate(RAW_MATH) == []
    if "/" in path and not path.endswith(("search.html", "genindex.html")):
        twin = page.get_attribute(".lang-switch-link", "href")
        assert twin, "no language switch"
        response = page.request.get(urljoin(page.url, twin))  # not the page's traffic
        assert response.status == 200, f"the twin {twin} is missing"
    assert watched.outside == [], "requests leaving the machine"
    assert watched.failed == []


def _flipbooks_in(notebook: Path) -> int:
    return notebook.read_text(encoding="utf-8").count(
        "application/vnd.jupyter.widget-view"
    )


#: The lesson with the most live widgets (from the notebooks, never by name or number).
_MOST = max(
    sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")), key=_flipbooks_in
).stem
#: axe-core audits the way in and every kind of page of each edition (a full audit of a lesson takes
#: 5-25 s here: every page would not fit the tests' budget): the index, notation and
#: search pages, the first lesson and the one with the most flipbooks, a teacher note and
#: a deck.
AUDITED = ["index.html"] + [
    f"{edition}/{name}.html"
    for edition in EDITIONS
    for name in dict.fromkeys(
        (
            "index",
            "notation",
            "search",
            Path(lessons(edition)[1]).stem,
            _MOST,
            f"teacher_notes/{Path(lessons(edition)[3]).stem}",
            f"slides/{Path(lessons(edition)[3]).stem}",
        )
    )
]


@pytest.mark.parametrize("path", AUDITED)
def test_accessibility(watched, site_url, path):
    """axe-core finds no serious or critical violation (alt text, labels, contrast...)."""
    _visit(watched, f"{site_url}/{path}")
    page = watched.page
    if "/slides/" in path:
        page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    violations = axe_violations(page)
    _record_axe(path, violations)
    serious = [
        f"{v['id']} ({v['impact']}): {v['help']}; e.g. {v['nodes'][0]['html'][:160]}"
        for v in violations
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []


FLIPBOOK_PAGES = [
    p
    for p in ALL_PAGES
    if p != "(not built)" and "flipbook-row" in (SITE / p).read_text(encoding="utf-8")
]


def test_every_widget_has_a_flipbook():
    """Each lesson page has one flipbook per live widget output of its notebook."""
    for edition in EDITIONS:
        folder = REPO / ("notebooks" if edition == "en" else "notebooks/zh")
        for notebook in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
            page = SITE / edition / f"{notebook.stem}.html"
            books = page.read_text(encoding="utf-8").count('<figure class="flipbook"')
            assert books == _flipbooks_in(notebook), page


@pytest.mark.parametrize("path", FLIPBOOK_PAGES)
def test_flipbooks_move(watched, site_url, path):
    """Each slider of each flipbook, moved to an end, shows another frame, loaded."""
    _visit(watched, f"{site_url}/{path}")
    page = watched.page
    sliders = page.locator("figure.flipbook input[type=range]")
    assert sliders.count() >= 1
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        image = page.locator(f"figure.flipbook:has(#{slider.get_attribute('id')}) img")
        before = image.get_attribute("src")
        at_end = slider.get_attribute("value") == slider.get_attribute("max")
        slider.focus()
        page.keyboard.press("Home" if at_end else "End")
        after = image.get_attribute("src")
        label = page.locator(f"label[for='{slider.get_attribute('id')}']").inner_text()
        assert after != before, f"{label}: the picture did not change"
        assert image.evaluate(
            "async (img) => { await img.decode(); return img.naturalWidth; }"
        )
    assert watched.outside == [] and watched.failed == []


@pytest.mark.parametrize("edition", EDITIONS)
def test_language_switch_reaches_the_twin(watched, site_url, edition):
    other = "zh-CN" if edition == "en" else "en"
    lesson = Path(lessons(edition)[3]).stem
    for name in (lesson, f"teacher_notes/{lesson}", "notation"):
        _visit(watched, f"{site_url}/{edition}/{name}.html")
        watched.page.click(".lang-switch-link")
        watched.page.wait_for_load_state("load")
        assert watched.page.url == f"{site_url}/{other}/{name}.html"
        assert watched.page.get_attribute("html", "lang") == other


@pytest.mark.parametrize("edition", EDITIONS)
def test_search_finds_a_word(watched, site_url, edition):
    word, expected = SEARCH[edition]
    _visit(watched, f"{site_url}/{edition}/search.html?q={word}")
    results = watched.page.locator("#search-results li a")
    results.first.wait_for(timeout=20_000)
    links = results.evaluate_all("(links) => links.map((a) => a.href)")
    assert any(expected in link for link in links), links


# Every slide in turn (every fragment shown): its zoom (the deck shrinks a slide taller or
# wider than 853x480 to fit) and its size at that zoom.
SLIDE_SIZES = """async () => {
  const sizes = [];
  for (const slide of Reveal.getSlides()) {
    const {h, v} = Reveal.getIndices(slide);
    Reveal.slide(h, v, 1e6);
    await new Promise((done) => requestAnimationFrame(() => done()));
    const zoom = Number(slide.style.zoom || 1);
    sizes.push({
      slide: `${h}/${v}: ${slide.innerText.slice(0, 50)}`,
      zoom: zoom,
      width: slide.scrollWidth * zoom,
      height: slide.scrollHeight * zoom,
    });
  }
  return sizes;
}"""
#: A slide is not shrunk below this (its text at least 7 CSS px, 10.5 px on the projector).
MIN_ZOOM = 0.5


@pytest.mark.parametrize("path", ALL_DECKS)
def test_deck_fits_the_projector(browser, site_url, path):
    """Reveal lays a slide out at 853x480 CSS px, shown on 1280x720: nothing spills."""
    assert path != "(not built)", "_site/ is not built: run `make site`"
    watched = Watched(browser, viewport={"width": 1280, "height": 720})
    try:
        _visit(watched, f"{site_url}/{path}")
        watched.page.wait_for_function("() => window.Reveal && Reveal.isReady()")
        assert watched.page.evaluate("() => Reveal.getTotalSlides()") >= 3
        sizes = watched.page.evaluate(SLIDE_SIZES)
        spill = [s for s in sizes if s["width"] > 853.5 or s["height"] > 480.5]
        assert spill == [], "slides larger than the screen"
        small = [s for s in sizes if s["zoom"] < MIN_ZOOM]
        assert small == [], "slides shrunk too far to read"
        _record_zooms(path, sizes)
        assert watched.outside == [] and watched.failed == []
    finally:
        watched.close()


def test_site_weight():
    """The whole site stays a reasonable download."""
    size = sum(p.stat().st_size for p in SITE.rglob("*") if p.is_file())
    assert size < 80 * 2**20, f"{size / 2**20:.0f} MiB"


def test_no_page_left_out():
    """Each edition: index, notation, search, every lesson and its teacher notes."""
    for edition in EDITIONS:
        names = {Path(p).relative_to(edition).as_posix() for p in pages(edition)}
        lessons = {p.stem for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")}
        assert {"index.html", "notation.html", "search.html"} <= names
        assert {f"{n}.html" for n in lessons} <= names
        assert {f"teacher_notes/{n}.html" for n in lessons} <= names
        assert {f"slides/{n}.html" for n in lessons} == {
            Path(p).relative_to(edition).as_posix() for p in decks(edition)
        }
