"""Fixtures for the browser tests: one JupyterLab server and one headless Chromium per session,
and one open, executed notebook at a time.

Every test here is skipped, with the reason, when /usr/bin/chromium or the playwright package is
missing (install Debian's chromium: apt-get install -y chromium). Run them alone with
`python -m pytest tests/browser`; `make test` runs them with everything else.
Screenshots go to test-artifacts/browser/<notebook>/.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

import lab

ARTIFACTS = lab.REPO / "test-artifacts" / "browser"
HERE = Path(__file__).resolve().parent
# CI sets ROPE_BROWSER_REQUIRED=1: there a missing chromium/playwright fails instead of skipping
REQUIRED = os.environ.get("ROPE_BROWSER_REQUIRED", "") not in ("", "0")


def _is_browser_item(item) -> bool:
    return HERE in Path(str(item.fspath)).resolve().parents


def pytest_collection_modifyitems(config, items):
    """All browser tests of one notebook run one after the other (the notebook is opened and
    executed once for them); skipped with a reason when they cannot run. (test_widgets.py puts
    them all in one xdist group: with `-n 2 --dist loadgroup` one worker runs them all.)"""
    reason = lab.skip_reason()
    order = {name: i for i, name in enumerate(lab.discover_notebooks())}
    slots = [i for i, item in enumerate(items) if _is_browser_item(item)]
    browser = [items[i] for i in slots]

    def key(item):
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("notebook") if callspec else None
        return order.get(name, len(order))

    for slot, item in zip(slots, sorted(browser, key=key)):  # sorted() is stable
        items[slot] = item
        if reason and not REQUIRED:
            item.add_marker(pytest.mark.skip(reason=reason))


_RAN = []  # set once a notebook was opened in this process


def pytest_terminal_summary(terminalreporter):
    if _RAN:
        terminalreporter.write_line(f"browser test screenshots: {ARTIFACTS}")


@pytest.fixture(scope="session")
def lab_server():
    reason = lab.skip_reason()
    if reason:
        if REQUIRED:
            pytest.fail(f"ROPE_BROWSER_REQUIRED is set but {reason}")
        pytest.skip(reason)
    server = lab.LabServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(lab_server):
    """A persistent Chromium context with a fresh profile (shared by all pages)."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="rope-chromium-")
    with sync_playwright() as p:
        context = lab.launch_chromium(p, profile)
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


class OpenNotebook:
    """One notebook open in the browser and executed: the page and what the run left."""

    def __init__(self, name: str, page, status: str, prompts: list, errors: dict, seconds: float):
        self.name = name
        self.page = page
        self.status = status
        self.prompts = prompts
        self.errors = errors
        self.seconds = seconds
        self.widgets = None  # found once, then shared by the tests of this notebook

    @property
    def artifacts(self) -> Path:
        return ARTIFACTS / Path(self.name).stem


class Notebooks:
    """Opens and runs a notebook on first use and keeps it open for the next tests of the same
    notebook; opening another one closes it and shuts its kernel down (one kernel at a time)."""

    def __init__(self, server, context):
        self.server, self.context = server, context
        self.current: OpenNotebook | None = None

    def get(self, name: str) -> OpenNotebook:
        if self.current is not None and self.current.name == name:
            return self.current
        self.close()
        import time

        _RAN.append(name)
        start = time.monotonic()
        page = lab.open_notebook(self.context, self.server, name)
        try:
            status = lab.run_all(page)
        except Exception as exc:  # a timeout: report what the prompts say
            status = f"timeout: {exc.__class__.__name__}"
        opened = OpenNotebook(name, page, status, lab.prompts(page), lab.errors(page), time.monotonic() - start)
        self.current = opened
        shutil.rmtree(opened.artifacts, ignore_errors=True)
        opened.artifacts.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(opened.artifacts / "notebook-after-run.png"), full_page=True)
        return opened

    def close(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            lab.close_page(current.page, self.server)


@pytest.fixture(scope="session")
def notebooks(lab_server, browser):
    manager = Notebooks(lab_server, browser)
    try:
        yield manager
    finally:
        manager.close()
