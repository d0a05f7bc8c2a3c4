"""Fixtures for the site tests: the built site (_site/, `make site`) served on 127.0.0.1,
and one headless Debian chromium whose every request leaving the machine is blocked and
recorded (a test fails on it).

The site must be built first: `make test` runs `make site` before these tests; alone,
`make site && .venv/bin/python -m pytest tests/site`. Without chromium or playwright the
tests are skipped saying why, except where ROPE_BROWSER_REQUIRED=1 (CI): there it fails.
"""

from __future__ import annotations

import functools
import http.server
import threading

import pytest
from sitekit import CHROMIUM, CHROMIUM_ARGS, REQUIRED, SITE, Watched, skip_reason


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url():
    """The site served on 127.0.0.1 (a free port) for the session."""
    if not (SITE / "en" / "index.html").exists():
        pytest.fail("_site/ is not built: run `make site` first (make test does)")
    handler = functools.partial(_Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    reason = skip_reason()
    if reason:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:  # launch() gives chromium a fresh profile of its own
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def watched(browser):
    page = Watched(browser)
    yield page
    page.close()
