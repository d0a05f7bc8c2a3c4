"""Sphinx configuration of the course's static site, one build per edition.

site/build.py lays out each edition's sources (lessons, teacher notes, index, notation)
and runs sphinx-build with -c site/ and `-D language=en` or `-D language=zh_CN`. The
notebooks are read as committed (myst-nb, no execution); MathJax, the theme's fonts and
scripts are served from the site itself: nothing is fetched at build or view time.
"""

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: The edition being built (site/build.py sets it): "en" or "zh-CN".
EDITION = os.environ.get("ROPE_SITE_EDITION", "en")

project = "rope-notebooks"
author = "rope-notebooks"
copyright = "rope-notebooks contributors, MIT licence"
language = "en"  # -D language=zh_CN for the Chinese edition

extensions = ["myst_nb"]
nb_execution_mode = "off"  # the outputs as committed
# no widget manager from a CDN: the flipbooks stand in for the widgets
nb_ipywidgets_js = {}
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
suppress_warnings = ["myst.header", "myst.xref_missing", "misc.highlighting_failure"]

# MathJax 3 from the npm registry (site/node_modules), copied into _static by build.py;
# the SVG output needs no web fonts, so pages work straight from the files too.
mathjax_path = "mathjax/tex-svg-full.js"

html_theme = "sphinx_book_theme"
html_title = "rope-notebooks"
html_static_path = [str(HERE / "_static"), str(HERE / "_build" / "assets")]
html_css_files = ["site.css"]
html_js_files = ["flipbook.js"]
html_favicon = str(HERE / "_static" / "favicon.svg")
templates_path = [str(HERE / "_templates")]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
# The sidebar's search is a button that opens the theme's search dialog (an inline form
# there would be the one the theme's script focuses, hidden on a phone: issue 43).
html_sidebars = {
    "**": ["navbar-logo.html", "search-button-field.html", "sbt-sidebar-nav.html"]
}
html_theme_options = {
    "show_navbar_depth": 1,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "show_prev_next": True,
    # No header bar (the book theme hides it): its two hidden toggle buttons would be the
    # ones the theme's scripts bind, leaving the visible ones dead on a phone (issue 43).
    "navbar_start": [],
    "navbar_center": [],
    "navbar_end": [],
    "navbar_persistent": [],
    # the switch to the other edition, at the top of every page
    "article_header_end": ["lang-switch.html", "article-header-buttons.html"],
    "pygments_light_style": "a11y-high-contrast-light",
}
# Chinese search: with language zh_CN Sphinx splits words with jieba (a site package),
# with the course's own terms as jieba's user dictionary (site/build.py writes it from the
# glossary, notebooks/zh/术语表.md); site/_static/zh-search.js splits a query the same way.
if EDITION == "zh-CN":
    html_search_options = {"dict": str(HERE / "_build" / "zh-userdict.txt")}


def twin(app, pagename, templatename, context, doctree):
    """The same page in the other edition (the editions sit side by side: en/ and
    zh-CN/)."""
    other = "zh-CN" if app.config.language == "en" else "en"
    depth = pagename.count("/") + 1
    context["twin_url"] = "../" * depth + f"{other}/{pagename}.html"
    context["twin_label"] = "中文" if other == "zh-CN" else "English"
    context["twin_lang"] = "zh-CN" if other == "zh-CN" else "en"
    context["twin_title"] = (
        "This page in Chinese (本页的中文版)" if other == "zh-CN" else "本页的英文版"
    )


def setup(app):
    app.connect("html-page-context", twin)
    app.connect("config-inited", chinese_search)


def chinese_search(app, config):
    if config.language.startswith("zh"):
        app.add_js_file("zh-stemmer.js")
        app.add_js_file("zh-search.js")
