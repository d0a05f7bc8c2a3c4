"""What the site tests share: where the site is, its pages and decks, chromium's
flags, and a page whose requests are watched (Watched)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
#: The built site; ROPE_SITE_DIR points the tests at another build (an older one, to see
#: a test fail without the change it checks).
SITE = Path(os.environ.get("ROPE_SITE_DIR", REPO / "_site"))
EDITIONS = ("en", "zh-CN")
# Debian's chromium and the project's flags (GUIDE.md "This machine and CI"), as the
# JupyterLab tests launch it
sys.path.insert(0, str(REPO / "tests" / "browser"))
# conftest launches with them; skip_reason: why chromium or playwright cannot run here
from lab import CHROMIUM, CHROMIUM_ARGS, REQUIRED, skip_reason  # noqa: E402, F401

AXE = REPO / "site" / "node_modules" / "axe-core" / "axe.min.js"

#: A wide desktop window for the pages; the decks get the projector's 1280x720.
DESKTOP = {"width": 1366, "height": 768}


def pages(edition: str) -> list[str]:
    """Every page of an edition (not the decks), as paths under _site/."""
    root = SITE / edition
    return sorted(
        str(p.relative_to(SITE))
        for p in root.rglob("*.html")
        if p.relative_to(root).parts[0] not in ("slides", "_static", "flipbooks")
    )


def lessons(edition: str) -> list[str]:
    """The lesson pages of an edition, from the notebooks folder (never a count)."""
    folder = REPO / ("notebooks" if edition == "en" else "notebooks/zh")
    return [
        f"{edition}/{p.stem}.html" for p in sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    ]


def decks(edition: str) -> list[str]:
    return sorted(
        str(p.relative_to(SITE)) for p in (SITE / edition / "slides").glob("*.html")
    )


class Watched:
    """A page whose requests are watched: any request to a host other than 127.0.0.1 is
    blocked and recorded (`outside`), as are failed requests and HTTP errors (`failed`)."""

    def __init__(self, browser, viewport=DESKTOP, scale=1):
        self.context = browser.new_context(viewport=viewport, device_scale_factor=scale)
        self.page = self.context.new_page()
        self.outside: list[str] = []
        self.failed: list[str] = []
        self.page.route("**/*", self._route)
        self.page.on("requestfailed", self._request_failed)
        self.page.on("response", self._response)

    def _route(self, route):
        url = route.request.url
        if (
            urlsplit(url).scheme in ("data", "blob")
            or urlsplit(url).hostname == "127.0.0.1"
        ):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def _request_failed(self, request):
        if request.url not in self.outside:
            self.failed.append(f"{request.url} ({request.failure})")

    def _response(self, response):
        if response.status >= 400:
            self.failed.append(f"{response.url} (HTTP {response.status})")

    def reset(self):
        self.outside.clear()
        self.failed.clear()

    def close(self):
        self.context.close()


def axe_violations(page) -> list[dict]:
    """axe-core's violations on the page as it settles. The theme may switch to dark
    after the first paint and Bootstrap's buttons fade their colour over 0.15 s; on a busy
    machine axe ran mid-fade and measured the search button's grey half-way, so every
    finite animation is waited for first."""
    page.evaluate(
        """async () => await Promise.all(document.getAnimations()
            .filter(a => a.effect.getTiming().iterations !== Infinity)
            .map(a => a.finished))"""
    )
    page.add_script_tag(path=str(AXE))
    return page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
    )
