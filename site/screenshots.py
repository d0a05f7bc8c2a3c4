"""The README's pictures of the site: a lesson page and a flipbook, in each language.

    make site && .venv/bin/python site/screenshots.py

writes images/site_lesson.png, images/site_flipbook.png and their Chinese twins in
images/zh/, taken in Debian's chromium from the built site (_site/).
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_site"
#: (edition, images folder): the English pictures and the Chinese ones.
EDITIONS = (("en", ROOT / "images"), ("zh-CN", ROOT / "images" / "zh"))
LESSON = "03_rotation_2d.html"
FLIPBOOK = "07_rope_in_practice.html"
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from lab import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (how the tests launch it)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main() -> None:
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 760})
        for edition, folder in EDITIONS:
            page.goto(f"{base}/{edition}/{LESSON}", wait_until="load")
            page.evaluate("async () => await MathJax.startup.promise")
            page.screenshot(path=str(folder / "site_lesson.png"))
            page.goto(f"{base}/{edition}/{FLIPBOOK}", wait_until="load")
            book = page.locator("figure.flipbook").first
            slider = book.locator("input[type=range]").first
            slider.focus()
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            book.locator("img").evaluate("async (img) => await img.decode()")
            book.screenshot(path=str(folder / "site_flipbook.png"))
            print("wrote", folder / "site_lesson.png", folder / "site_flipbook.png")
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
