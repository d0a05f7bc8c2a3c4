"""What a lesson page costs before its first typeset formula, on a throttled link.

The page is opened in a fresh chromium context whose network is slowed by the DevTools
protocol (`SLOW`: 1.6 Mbit/s down, 150 ms round trip, as a weak mobile link); a script
run before the page's own notes the first moment a typeset formula (`mjx-container`) is
in the page at a frame. The bytes are those of the page and of every file whose download
ended before that moment (Resource Timing's transferSize), so a script loaded after it
does not count. The test (test_site.py) asserts the bytes only; the time is printed by

    .venv/bin/python tests/site/weight.py [--site DIR] [PATH ...]

for the README's numbers (it differs from machine to machine: never asserted).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

#: 1.6 Mbit/s down, 750 kbit/s up, 150 ms round trip (bytes per second for DevTools).
SLOW = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1_600_000 / 8,
    "uploadThroughput": 750_000 / 8,
}

FIRST_MATH = """(() => {
  window.__firstMath = null;
  const look = () => {
    if (document.querySelector("mjx-container")) window.__firstMath = performance.now();
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();"""

BYTES_BEFORE = """() => {
  const at = window.__firstMath;
  const [nav] = performance.getEntriesByType("navigation");
  let bytes = nav.transferSize;
  for (const r of performance.getEntriesByType("resource")) {
    if (r.responseEnd <= at) bytes += r.transferSize;
  }
  return {bytes: bytes, ms: at};
}"""


def first_math(browser, url: str, throttle: dict | None = SLOW) -> dict:
    """{bytes, ms} of `url` up to its first typeset formula (a fresh cache)."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    try:
        page = context.new_page()
        if throttle:
            cdp = context.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
            cdp.send("Network.emulateNetworkConditions", throttle)
        page.add_init_script(FIRST_MATH)
        page.goto(url, wait_until="domcontentloaded", timeout=180_000)
        page.wait_for_function("() => window.__firstMath !== null", timeout=180_000)
        return page.evaluate(BYTES_BEFORE)
    finally:
        context.close()


def main() -> None:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from sitekit import CHROMIUM, CHROMIUM_ARGS, SITE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument(
        "paths",
        nargs="*",
        default=["en/03_rotation_2d.html", "en/07_rope_in_practice.html"],
    )
    args = parser.parse_args()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(args.site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path in args.paths:
            found = first_math(browser, f"{base}/{path}")
            print(
                f"{path}: {found['bytes'] / 1e6:.2f} MB, first typeset math at "
                f"{found['ms'] / 1000:.1f} s (1.6 Mbit/s, 150 ms)"
            )
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
