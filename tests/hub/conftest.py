"""The class test's hub and browser: one ClassHub (hubclass.py) and one headless Chromium
for the whole module, a browser context per person (four students, the teacher, an
intruder). Not part of `make test`'s pytest runs (they --ignore tests/hub): `make test-hub`
runs it, as root, after them.

Without root, chromium or the proxy from npm the tests are skipped with the
reason; with ROPE_BROWSER_REQUIRED=1 (CI) that is a failure instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "browser")]

import hubclass  # noqa: E402
import lab  # noqa: E402

REQUIRED = lab.REQUIRED
# four students at once; the last one reads the Chinese edition
STUDENTS = {"s1": "en", "s2": "en", "s3": "en", "s4": "zh"}


def pytest_collection_modifyitems(config, items):
    reason = hubclass.skip_reason() or lab.skip_reason()
    if reason is None:
        return
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            if REQUIRED:
                item.add_marker(pytest.mark.usefixtures("_fail_required"))
            else:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def _fail_required():
    pytest.fail(
        "ROPE_BROWSER_REQUIRED=1 but the class hub cannot run here: "
        f"{hubclass.skip_reason() or lab.skip_reason()}"
    )


@pytest.fixture(scope="module")
def hub():
    with hubclass.ClassHub(STUDENTS) as hub:
        yield hub


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=lab.CHROMIUM, headless=True, args=lab.CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def people(hub, browser):
    """{name: page} for the teacher, the four students and the intruder: each a browser
    context of their own (their own cookies), none logged in yet."""
    pages = {}
    for name in [hub.teacher, *hub.students, hub.intruder]:
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.set_default_timeout(60_000)
        pages[name] = page
    yield pages
    for page in pages.values():
        page.context.close()
