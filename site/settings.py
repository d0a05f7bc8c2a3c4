"""The one setting of the site that names the world outside it: the repository's public
address (and its branch). Every link that needs it (a lesson's Binder link, the link to
the repository, the home pages' "run it" text) is made from here.

Set it for a build with the environment variable ROPE_SITE_REPOSITORY (make site
SITE_REPOSITORY=https://github.com/you/rope-notebooks); OWNER is a placeholder, as in the
README's Binder link.
"""

from __future__ import annotations

import os
from urllib.parse import quote

REPOSITORY = os.environ.get(
    "ROPE_SITE_REPOSITORY", "https://github.com/OWNER/rope-notebooks"
).rstrip("/")
BRANCH = os.environ.get("ROPE_SITE_BRANCH", "main")
#: The path the site is served under ("/" at a domain's root; "/rope-notebooks/" on a
#: project's GitHub Pages). Only the 404 page needs it: a server shows it at any depth, so
#: its links cannot be relative. make site SITE_BASE=/rope-notebooks/
BASE = "/" + os.environ.get("ROPE_SITE_BASE", "/").strip("/") + "/"
BASE = BASE.replace("//", "/")
BINDERHUB = "https://mybinder.org"

#: Sphinx language -> where that edition's notebooks are in the repository.
NOTEBOOKS = {"en": "notebooks", "zh_CN": "notebooks/zh"}

#: What the launch links say, per Sphinx language.
LAUNCH_WORDS = {
    "en": {
        "download": "Download the notebook",
        "download_title": "This lesson as a Jupyter notebook (.ipynb), outputs included",
        "binder": "Run on Binder",
        "binder_title": "Open this lesson, ready to run, in JupyterLab on mybinder.org",
        "repository": "Repository",
        "repository_title": "The course's source: every lesson, rope_lib, the tests",
    },
    "zh_CN": {
        "download": "下载笔记本",
        "download_title": "本课的 Jupyter 笔记本（.ipynb），包含输出",
        "binder": "在 Binder 上运行",
        "binder_title": "在 mybinder.org 的 JupyterLab 中打开本课，可直接运行",
        "repository": "代码仓库",
        "repository_title": "课程的源码：每一课、rope_lib 和测试",
    },
}


def github_path() -> str:
    """owner/name of the repository (for Binder's gh/ route)."""
    return REPOSITORY.removeprefix("https://github.com/")


def binder_url(notebook: str) -> str:
    """Binder's link that builds the repository (its binder/ folder) and opens `notebook`
    (a path in the repository) in JupyterLab."""
    return (
        f"{BINDERHUB}/v2/gh/{github_path()}/{BRANCH}"
        f"?urlpath={quote('lab/tree/' + notebook, safe='')}"
    )
