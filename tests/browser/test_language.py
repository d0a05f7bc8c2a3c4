"""`make lab-zh`: JupyterLab's own menus in Chinese, on the Chinese lessons.

A JupyterLab of its own with JUPYTER_CONFIG_PATH=jupyter-config/zh (what `make lab-zh`
sets): the zh-CN language pack is installed and chosen by the config's defaults, so the menu
bar reads 文件 / 编辑 / 设置, and the Language menu offers English to switch back. The
course's default config (`make lab`) keeps English menus and offers the Chinese.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import lab
import pytest

pytestmark = pytest.mark.xdist_group("browser")


CONFIGS = {
    "zh": lab.REPO / "jupyter-config" / "zh",  # what `make lab-zh` uses
    "en": lab.REPO / "jupyter-config",  # what `make lab` uses
}


def _read_menus(page) -> tuple[list[str], list[str]]:
    """The main menu bar's titles and the Settings > Language entries of the page's
    JupyterLab."""
    page.wait_for_selector("#jp-menu-panel .lm-MenuBar-itemLabel")
    titles = page.locator("#jp-menu-panel .lm-MenuBar-itemLabel")
    bar = [t.strip() for t in titles.all_inner_texts()]
    languages = page.evaluate(
        """() => window.jupyterapp.commands.listCommands()
          .filter(c => c.startsWith('jupyterlab-translation:'))
          .map(c => window.jupyterapp.commands.label(c, {}))"""
    )
    return bar, languages


@pytest.fixture(scope="module")
def menus(browser) -> dict[str, tuple[list[str], list[str]]]:
    """For each JupyterLab config of CONFIGS, a JupyterLab of its own (both started at
    once, and both pages loading at once, in the session's Chromium): its menu bar and
    its Language entries."""
    servers = {name: lab.LabServer(config_path=path) for name, path in CONFIGS.items()}
    pages = {}
    try:
        with ThreadPoolExecutor(len(servers)) as pool:
            list(pool.map(lambda server: server.start(), servers.values()))
        for name, server in servers.items():
            pages[name] = browser.new_page()
            pages[name].goto(server.url("lab?reset"), wait_until="commit")
        found = {}
        for name, page in pages.items():
            page.bring_to_front()
            found[name] = _read_menus(page)
        yield found
    finally:
        for page in pages.values():
            page.close()
        for server in servers.values():
            server.stop()


def test_lab_zh_speaks_chinese_and_offers_english(menus):
    bar, languages = menus["zh"]
    assert bar[:3] == ["文件", "编辑", "查看"], bar
    assert "English - English" in languages, languages  # as README says


def test_lab_stays_english_and_offers_chinese(menus):
    bar, languages = menus["en"]
    assert bar[:3] == ["File", "Edit", "View"], bar
    assert "Chinese (Simplified, China) - 中文 (简体, 中国)" in languages, languages
