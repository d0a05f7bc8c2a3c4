"""The site as a learner keeps using it (issue 43), in chromium, both editions: take a
lesson away or run it (download, Binder, the repository, from one setting); a phone and a
tablet (the lesson list, the contents and search open; nothing scrolls sideways at 390
px); Chinese search for the glossary's terms typed without spaces; decks walked with
the arrow key, with the teacher notes as speaker notes and links out; pictures that say
what they show, sliders that announce their value; dark mode through axe, print keeping
code whole, the home tables' thumbnails, only what is linked shipped, favicon and 404;
a page's weight to its first typeset formula on a throttled link; flipbooks dense enough
to show the motion, no still after a flipbook, no stale exercise feedback.

Search results for the glossary's terms go to test-artifacts/site/zh_search.json.
"""

from __future__ import annotations

import json
import re
import sys
from urllib.parse import urljoin

import pytest
from sitekit import EDITIONS, REPO, SITE, Watched, axe_violations, decks, lessons
from weight import first_math

sys.path.insert(0, str(REPO / "site"))
import settings  # noqa: E402  (site/settings.py)

ARTIFACTS = REPO / "test-artifacts" / "site"
LESSONS = [p for edition in EDITIONS for p in lessons(edition)]
DECKS = [p for edition in EDITIONS for p in decks(edition)] or ["(not built)"]
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 820, "height": 1180}
#: Bytes to the first typeset formula: 4.9 MB before issue 43 (MathJax in the browser),
#: 1.15-1.30 MB with math typeset at build time, 0.75-1.07 MB with the formulas' SVG
#: made lean and the theme's deferred scripts no longer preloaded (build.finish). Of
#: what is left, the theme's stylesheet is 377 KB.
FIRST_MATH_BYTES = 1.1e6


def _open(browser, site_url, path, viewport, **options):
    watched = Watched(browser, viewport=viewport)
    watched.page.goto(f"{site_url}/{path}", wait_until="load")
    return watched


# --- 1. take a lesson away or run it ----------------------------------------------------


@pytest.mark.parametrize("path", LESSONS)
def test_lesson_offers_download_and_binder(watched, site_url, path):
    """The notebook as committed, Binder on the repository's notebook, the repository:
    every address from site/settings.py."""
    edition, name = path.split("/")
    stem = name.removesuffix(".html")
    folder = "notebooks" if edition == "en" else "notebooks/zh"
    watched.reset()
    watched.page.goto(f"{site_url}/{path}", wait_until="load")
    page = watched.page
    download = page.get_attribute("a.launch-download", "href")
    assert download == f"notebooks/{stem}.ipynb"
    response = page.request.get(urljoin(page.url, download))
    assert response.status == 200
    assert response.body() == (REPO / folder / f"{stem}.ipynb").read_bytes()
    binder = page.get_attribute("a.launch-binder", "href")
    assert binder == settings.binder_url(f"{folder}/{stem}.ipynb")
    assert binder.startswith(f"{settings.BINDERHUB}/v2/gh/{settings.github_path()}/")
    assert page.get_attribute("a.launch-repository", "href") == settings.REPOSITORY


@pytest.mark.parametrize("edition", EDITIONS)
def test_home_page_says_how_to_run(edition):
    markup = (SITE / edition / "index.html").read_text(encoding="utf-8")
    assert f'href="{settings.REPOSITORY}"' in markup
    text = re.sub(r"<[^>]+>", "", markup)
    assert "Binder" in text and settings.REPOSITORY in text and "make lab" in text
    assert "Colab" in text  # and why there is no Colab link


# --- 2. phone and tablet -----------------------------------------------------------------


@pytest.mark.parametrize("viewport", [PHONE, TABLET], ids=["phone", "tablet"])
@pytest.mark.parametrize("edition", EDITIONS)
def test_navigation_contents_and_search_open(browser, site_url, edition, viewport):
    """Tap the lesson list, the contents and the search button: each opens."""
    path = lessons(edition)[3]
    watched = _open(browser, site_url, path, viewport)
    page = watched.page
    try:
        page.locator(".primary-toggle:visible").first.click()
        page.wait_for_function(
            "() => document.querySelector('#pst-primary-sidebar-modal').open"
        )
        assert page.locator("#pst-primary-sidebar-modal a.reference").first.is_visible()
        page.keyboard.press("Escape")
        page.locator(".secondary-toggle:visible").first.click()
        page.wait_for_function(
            "() => document.querySelector('#pst-secondary-sidebar-modal').open"
        )
        assert page.locator(
            "#pst-secondary-sidebar-modal nav.page-toc a"
        ).first.is_visible()
        page.keyboard.press("Escape")
        page.locator(".search-button__button:visible").first.click()
        page.wait_for_function(
            "() => document.querySelector('#pst-search-dialog').open"
        )
        assert page.evaluate(
            "() => document.activeElement.matches('#pst-search-dialog input')"
        )
        assert watched.outside == [] and watched.failed == []
    finally:
        watched.close()


PHONE_PAGES = LESSONS + [
    f"{e}/{n}.html" for e in EDITIONS for n in ("index", "notation")
]


@pytest.mark.parametrize("path", PHONE_PAGES)
def test_nothing_scrolls_sideways_on_a_phone(browser, site_url, path):
    watched = _open(browser, site_url, path, PHONE)
    try:
        width = watched.page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= PHONE["width"]
    finally:
        watched.close()


# --- 3. Chinese search ----------------------------------------------------------------------


def glossary_terms() -> list[str]:
    """The glossary's Chinese terms (its second column; each part of "A / B", the short
    name in "（简称 X）"), read here independently of the build."""
    text = (REPO / "notebooks" / "zh" / "术语表.md").read_text(encoding="utf-8")
    terms = []
    for line in text.splitlines()[5:]:  # below the table's header
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            continue
        for part in re.split(r"[/、，,：:“”（）()]|简称", cells[1]):
            if len(part.strip()) >= 2 and re.fullmatch(
                r"[\u4e00-\u9fff]+", part.strip()
            ):
                terms.append(part.strip())
    return list(dict.fromkeys(terms))


#: The issue's own searches, beside the glossary's.
ISSUE_TERMS = ["位置编码", "旋转位置编码", "外推", "注意力温度", "训练长度"]

SEARCH_ALL = """async (terms) => {
  while (!Search.hasIndex()) await new Promise((done) => setTimeout(done, 50));
  const found = {};
  for (const term of terms) {
    const [, searchTerms, excluded] = Search._parseQuery(term);
    const results = Search.performTermsSearch(searchTerms, excluded);
    found[term] = {split: [...searchTerms], pages: results.map((r) => r[0])};
  }
  return found;
}"""


def test_chinese_search_finds_the_glossary(watched, site_url):
    """Every glossary term that the Chinese pages use, typed without spaces, finds the
    pages that use it (searchtools' own query parsing and term search)."""
    watched.reset()
    watched.page.goto(f"{site_url}/zh-CN/search.html", wait_until="load")
    terms = list(dict.fromkeys(ISSUE_TERMS + glossary_terms()))
    found = watched.page.evaluate(SEARCH_ALL, terms)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "zh_search.json").write_text(
        json.dumps(found, ensure_ascii=False, indent=1)
    )
    texts = {
        p: re.sub(r"<[^>]+>", "", (SITE / p).read_text(encoding="utf-8"))
        for p in LESSONS
        if p.startswith("zh-CN/")
    }
    missing = [
        term
        for term in terms
        if any(term in text for text in texts.values()) and not found[term]["pages"]
    ]
    assert missing == []
    for term in ISSUE_TERMS:
        assert found[term]["pages"], term


def test_chinese_search_page_without_spaces(watched, site_url):
    """The search page itself, as a reader types it."""
    watched.reset()
    watched.page.goto(f"{site_url}/zh-CN/search.html?q=旋转位置编码", wait_until="load")
    results = watched.page.locator("#search-results li a")
    results.first.wait_for(timeout=20_000)
    assert results.count() >= 1


# --- 4. decks --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DECKS)
def test_deck_arrow_key_walks_every_slide(browser, site_url, path):
    """ArrowRight alone reaches every slide, the vertical sub-slides too; the teacher
    notes are the speaker notes; the deck links its lesson and its twin, which exist."""
    assert path != "(not built)"
    watched = _open(browser, site_url, path, {"width": 1280, "height": 720})
    page = watched.page
    try:
        page.wait_for_function("() => window.Reveal && Reveal.isReady()")
        every = page.evaluate(
            "() => Reveal.getSlides().map((s) => { const i = Reveal.getIndices(s);"
            " return `${i.h}/${i.v || 0}`; })"
        )
        seen = set()
        for _ in range(len(every) * 3):
            seen.add(
                page.evaluate(
                    "() => { const i = Reveal.getIndices(); "
                    "return `${i.h}/${i.v || 0}`; }"
                )
            )
            if page.evaluate(
                "() => Reveal.isLastSlide() && !Reveal.availableFragments().next"
            ):
                break
            page.keyboard.press("ArrowRight")
        assert set(every) <= seen, sorted(set(every) - seen)
        edition, _, name = path.split("/")
        folder = (
            "notebooks/teacher_notes"
            if edition == "en"
            else "notebooks/zh/teacher_notes"
        )
        notes = (REPO / folder / name.replace(".html", ".md")).read_text(
            encoding="utf-8"
        )
        heading = notes.splitlines()[0].lstrip("# ").split("·")[0].strip()
        assert heading in page.locator("aside.notes").first.text_content()
        links = page.locator(".deck-nav a")
        assert links.count() == 2
        for href in links.evaluate_all("(a) => a.map((x) => x.href)"):
            assert page.request.get(href).status == 200, href
    finally:
        watched.close()


# --- 5. pictures and sliders -----------------------------------------------------------------

_FILE_NAME = re.compile(r"([0-9a-f]{32,}|\.png$|^_images/)")


@pytest.mark.parametrize("path", LESSONS)
def test_pictures_say_what_they_show(watched, site_url, path):
    """No picture's alt text is a file name or a placeholder; a lesson page's pictures
    are described in its language; each flipbook slider announces the value it shows."""
    watched.reset()
    watched.page.goto(f"{site_url}/{path}", wait_until="load")
    page = watched.page
    alts = page.evaluate(
        "() => [...document.querySelectorAll('article img')].map((i) => i.alt)"
    )
    bad = [
        a
        for a in alts
        if not a.strip() or _FILE_NAME.search(a) or "No description" in a
    ]
    assert bad == []
    if path.startswith("zh-CN/"):
        assert all(re.search(r"[\u4e00-\u9fff]", a) for a in alts), alts
    mismatched = page.evaluate(
        "() => [...document.querySelectorAll('figure.flipbook input[type=range]')]"
        ".filter((i) => i.getAttribute('aria-valuetext') !== i.nextElementSibling.textContent)"
        ".map((i) => i.id)"
    )
    assert mismatched == []


#: A section of lesson 7 and the minutes its teacher note's plan gives it, per edition.
PLANNED = {"en": ("2 · RoFormer", "12–20 min"), "zh-CN": ("2 · RoFormer", "12–20 分钟")}


@pytest.mark.parametrize("edition", EDITIONS)
def test_deck_sections_carry_their_plan_as_speaker_notes(edition):
    """The first slide's speaker notes are the whole teacher note; each section's slide
    has its own row of the plan (minutes, what to do, the questions to ask there)."""
    deck = SITE / edition / "slides" / "07_rope_in_practice.html"
    slides = deck.read_text(encoding="utf-8").split("<section")
    notes = [s for s in slides if '<aside class="notes">' in s]
    assert len(notes) >= 6, len(notes)  # the opening slide and five sections at least
    heading, minutes = PLANNED[edition]
    slide = next(s for s in slides if re.search(rf"<h2[^>]*>{re.escape(heading)}", s))
    aside = slide[slide.index('<aside class="notes">') :]
    assert minutes in aside[: aside.index("</aside>")]


@pytest.mark.parametrize("path", DECKS)
def test_deck_pictures_say_what_they_show(path):
    text = (SITE / path).read_text(encoding="utf-8")
    assert "No description has been provided" not in text
    assert 'alt=""' not in text.replace('alt="" class="lesson-thumb"', "")


# --- 7. dark mode, print, home, hygiene ----------------------------------------------------------

DARK = ["index.html"] + [
    p
    for e in EDITIONS
    for p in (f"{e}/index.html", lessons(e)[3], f"{e}/notation.html")
]


@pytest.mark.parametrize("path", DARK)
def test_dark_mode_passes_axe(browser, site_url, path):
    context = browser.new_context(
        viewport={"width": 1366, "height": 768}, color_scheme="dark"
    )
    page = context.new_page()
    try:
        page.goto(f"{site_url}/{path}", wait_until="load")
        if path != "index.html":
            assert (
                page.evaluate("() => document.documentElement.dataset.theme") == "dark"
            )
        violations = axe_violations(page)
        serious = [
            f"{v['id']}: {v['nodes'][0]['html'][:120]}"
            for v in violations
            if v["impact"] in ("serious", "critical")
        ]
        assert serious == []
    finally:
        context.close()


@pytest.mark.parametrize("path", [lessons(e)[7] for e in EDITIONS])
def test_print_keeps_code_whole(browser, site_url, path):
    """On paper no code or output block is cut at its right edge."""
    context = browser.new_context(viewport={"width": 794, "height": 1123})
    page = context.new_page()
    try:
        page.goto(f"{site_url}/{path}", wait_until="load")
        page.emulate_media(media="print")
        cut = page.evaluate(
            "() => [...document.querySelectorAll('article pre')]"
            ".filter((p) => p.offsetParent && p.scrollWidth > p.clientWidth + 1)"
            ".map((p) => p.textContent.slice(0, 60))"
        )
        assert cut == []
    finally:
        context.close()


@pytest.mark.parametrize("edition", EDITIONS)
def test_home_table_shows_the_thumbnails(watched, site_url, edition):
    watched.reset()
    watched.page.goto(f"{site_url}/{edition}/index.html", wait_until="load")
    page = watched.page
    rows = page.locator("article table tbody tr")
    assert rows.count() == len(lessons(edition))
    # The thumbnails load lazily: each is scrolled to, then waited for, as a reader would.
    first_cells = rows.evaluate_all(
        "async (rows) => { const shown = []; for (const r of rows) {"
        " const img = r.cells[0].querySelector('img');"
        " if (!img) { shown.push(false); continue; }"
        " img.scrollIntoView(); try { await img.decode(); } catch (e) {}"
        " shown.push(img.complete && img.naturalWidth > 0); } return shown; }"
    )
    assert all(first_cells), first_cells
    headers = page.locator("article table th").evaluate_all(
        "(th) => th.map((h) => h.textContent.trim())"
    )
    assert all(headers), headers
    assert watched.failed == []


def test_only_what_is_linked_is_shipped():
    assert not (SITE / "jupyter_execute").exists()
    for edition in EDITIONS:
        assert not (SITE / edition / "_sources").exists()
        assert not (SITE / edition / "objects.inv").exists()
    assert (SITE / "404.html").exists() and (SITE / "favicon.svg").exists()


@pytest.mark.parametrize(
    "path", ["index.html", "404.html", *(lessons(e)[0] for e in EDITIONS)]
)
def test_favicon(watched, site_url, path):
    watched.reset()
    watched.page.goto(f"{site_url}/{path}", wait_until="load")
    icon = watched.page.get_attribute("link[rel~=icon]", "href")
    assert (
        icon and watched.page.request.get(urljoin(watched.page.url, icon)).status == 200
    )


# --- 6. weight, flipbooks, exercises ----------------------------------------------------------


@pytest.mark.parametrize("path", [lessons(e)[i] for e in EDITIONS for i in (3, 7)])
def test_weight_to_first_typeset_math(browser, site_url, path):
    """At 1.6 Mbit/s and 150 ms: about 1 MB before the first formula shows typeset."""
    found = first_math(browser, f"{site_url}/{path}")
    assert found["bytes"] <= FIRST_MATH_BYTES, f"{found['bytes'] / 1e6:.2f} MB"


def _books(path: str) -> list[dict]:
    text = (SITE / path).read_text(encoding="utf-8")
    return [
        json.loads(m.replace("<\\/", "</"))
        for m in re.findall(
            r'<script type="application/json" class="flipbook-data">(.*?)</script>',
            text,
            re.S,
        )
    ]


@pytest.mark.parametrize("path", LESSONS)
def test_flipbooks_show_the_motion(path):
    """A flipbook's integer slider over a long range takes its first steps one by one
    (lesson 7's fast dials turn a radian a token: a jump of hundreds of tokens would land
    the hands anywhere); a slider over a list of options (lesson 10's 16, 32, ... keys)
    steps through the options."""
    for book in _books(path):
        for slider in book["sliders"]:
            labels = [s["label"] for s in slider["steps"]]
            if slider["kind"] != "int":
                continue
            assert all(re.fullmatch(r"-?\d+", x) for x in labels), labels
            numbers = [int(x) for x in labels]
            gaps = [b - a for a, b in zip(numbers, numbers[1:])]
            span = numbers[-1] - numbers[0]
            if span > 100 and len(numbers) >= 8:
                assert len(set(gaps[:4])) == 1, labels  # the first steps one by one
                assert gaps[0] <= span / 20, labels


@pytest.mark.parametrize("path", LESSONS)
def test_no_still_after_a_flipbook_nor_stale_feedback(path):
    text = (SITE / path).read_text(encoding="utf-8")
    assert "static_png(" not in text and "show_png(" not in text
    stale = "Not yet:" if path.startswith("en/") else "还不对："
    assert stale not in text


@pytest.mark.parametrize("base", ["/", "/rope-notebooks/"])
def test_404_links_lead_home_from_any_depth(tmp_path, base):
    """A server shows the 404 page at whatever path was asked for (/en/a/b/missing.html),
    so its links are absolute, under the path the site is served at (settings.BASE)."""
    import build  # site/build.py

    build.landing(tmp_path, base=base)
    page = (tmp_path / "404.html").read_text(encoding="utf-8")
    links = re.findall(r'(?:href|src)="([^"]+)"', page)
    assert len(links) == 3
    for link in links:
        assert link.startswith(base), link
        assert (SITE / link[len(base) :]).is_file(), link
