"""`make lab-zh`: JupyterLab's own menus in Chinese, on the Chinese lessons.

A JupyterLab of its own with JUPYTER_CONFIG_PATH=jupyter-config/zh (what `make lab-zh`
sets): the zh-CN language pack is installed and chosen by the config's defaults, so the menu
bar reads 文件 / 编辑 / 设置, and the Language menu offers English to switch back. The
course's default config (`make lab`) keeps English menus and offers the Chinese.
"""

from __future__ import annotations

import lab
import pytest

pytestmark = pytest.mark.xdist_group("browser")


def _menus(browser, config) -> tuple[list[str], list[str]]:
    """The main menu bar's titles and the Settings > Language entries of a JupyterLab
    started with JUPYTER_CONFIG_PATH=config (in the session's Chromium)."""
    with lab.LabServer(config_path=config) as server:
        page = browser.new_page()
        try:
            page.goto(server.url("lab?reset"))
            page.wait_for_selector("#jp-menu-panel .lm-MenuBar-itemLabel")
            titles = page.locator("#jp-menu-panel .lm-MenuBar-itemLabel")
            bar = [t.strip() for t in titles.all_inner_texts()]
            languages = page.evaluate(
                """() => window.jupyterapp.commands.listCommands()
                  .filter(c => c.startsWith('jupyterlab-translation:'))
                  .map(c => window.jupyterapp.commands.label(c, {}))"""
            )
            return bar, languages
        finally:
            page.close()


def test_lab_zh_speaks_chinese_and_offers_english(browser):
    bar, languages = _menus(browser, lab.REPO / "jupyter-config" / "zh")
    assert bar[:3] == ["文件", "编辑", "查看"], bar
    assert "English - English" in languages, languages  # as README says


def test_lab_stays_english_and_offers_chinese(browser):
    bar, languages = _menus(browser, lab.REPO / "jupyter-config")
    assert bar[:3] == ["File", "Edit", "View"], bar
    assert "Chinese (Simplified, China) - 中文 (简体, 中国)" in languages, languages
