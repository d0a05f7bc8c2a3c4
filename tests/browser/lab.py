"""A throwaway JupyterLab server and a headless Chromium for the browser tests and the benchmark.

Used by tests/browser/conftest.py and benchmarks/bench_browser.py. Nothing here touches the
user's Jupyter settings, workspaces or notebooks:
- the server serves a temporary COPY of notebooks/ (and images/), so autosave cannot write
  cleared outputs back into the repository; by default the copies have no stored
  outputs (strip_outputs: every test runs the lesson afresh, and JupyterLab need not
  render outputs it would clear anyway);
- JUPYTER_CONFIG_DIR, JUPYTER_DATA_DIR, JUPYTER_RUNTIME_DIR, IPYTHONDIR, the workspaces and the
  user settings live in the same temporary directory;
- 127.0.0.1 only, a random free port and a random token;
- the kernels import rope_lib from this tree (PYTHONPATH), so a copy of the tree tests itself.
stop() deletes every session and kernel through the REST API, then terminates the server's
process group, and removes the temporary directory.

Notebook helpers (open, run all, find the live widgets, canvas signatures) are here too, so the
tests and the benchmark drive JupyterLab the same way.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# GUIDE.md, "This machine and CI".
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ENABLE_HINT = "install Debian's chromium: apt-get install -y chromium"
# The classroom screen (GUIDE.md): a 1280x720 projector at 150% browser zoom is a 853x480 CSS px
# window with 1.5 device pixels per CSS px; the file browser is closed.
PROJECTOR = {"width": 853, "height": 480}
PROJECTOR_SCALE = 1.5


def notebooks_dir() -> Path:
    """notebooks/ of this tree; ROPE_BROWSER_NOTEBOOKS points the tests at another folder."""
    return Path(
        os.environ.get("ROPE_BROWSER_NOTEBOOKS") or REPO / "notebooks"
    ).resolve()


def discover_notebooks() -> list[str]:
    """Paths under notebooks/ of the lessons, in reading order: notebooks/*.ipynb, then
    the Chinese edition's zh/*.ipynb."""
    folder = notebooks_dir()
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.glob("*.ipynb")) + sorted(
        f"zh/{p.name}" for p in (folder / "zh").glob("*.ipynb")
    )


# CI sets ROPE_BROWSER_REQUIRED=1: there a missing chromium/playwright fails, not skips
# (the browser, site and class tests alike; the Makefile's test-notebooks reads it too)
REQUIRED = os.environ.get("ROPE_BROWSER_REQUIRED", "") not in ("", "0")


def skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing: pip install playwright (browser tests need it)"
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} is missing; to run the browser tests, {ENABLE_HINT}"
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "jupyterlab is missing: pip install -e '.[test]'"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# JupyterLab user settings for the temporary server: render every cell (no windowing, so every
# prompt and widget is in the DOM), no news or update checks.
_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none"
    },
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


# The portable way of computing (README, "Outputs on any machine"): torch's plain kernels
# instead of this CPU's AVX2/AVX-512 ones, and two threads instead of one, so that round-off
# printed as digits fails here and not on the next learner's laptop. With
# LabServer(portable=True) the Chinese lessons run in a kernel with this environment and
# the English ones in the plain one (this CPU's kernels, the tests' one thread, where their
# widgets are moved and timed): the two editions are the same code
# (tests/i18n/test_zh_edition.py), so both ways of computing are checked against the stored
# outputs, once. The Makefile's test-portable uses the same.
PORTABLE_KERNEL = "python3-portable"
PORTABLE_ENV = {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "2"}


def _prepare_copy(path: Path, strip: bool, kernel: str | None) -> None:
    """In a notebook file (in place): remove the stored outputs and execution counts
    (strip), and name another kernel (kernel)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    if strip:
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code":
                cell["outputs"], cell["execution_count"] = [], None
    if kernel:
        nb.setdefault("metadata", {}).setdefault("kernelspec", {})["name"] = kernel
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")


class LabServer:
    """JupyterLab over a temporary copy of notebooks/. Use as a context manager or start()/stop()."""

    def __init__(
        self,
        notebooks: Path | None = None,
        startup_timeout: float = 90.0,
        strip_outputs: bool = True,
        config_path: Path | None = None,
        portable: bool = False,
    ):
        self.source = Path(notebooks or notebooks_dir())
        # JUPYTER_CONFIG_PATH for the server: a folder of the course's JupyterLab defaults,
        # jupyter-config (what `make lab` uses, by default) or jupyter-config/zh (`make
        # lab-zh`), so that the tests see the JupyterLab a learner sees
        self.config_path = config_path or REPO / "jupyter-config"
        self.strip_outputs = strip_outputs
        # the Chinese lessons in a kernel of PORTABLE_ENV, the English ones in the plain one
        self.portable = portable
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.tmp: Path | None = None
        self.port = 0
        self.token = ""
        self.log_path: Path | None = None

    # -- life cycle --------------------------------------------------------------------------
    def start(self) -> "LabServer":
        self.tmp = Path(tempfile.mkdtemp(prefix="rope-lab-"))
        root = self.tmp / "root"
        shutil.copytree(
            self.source,
            root / "notebooks",
            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
        )
        for path in (root / "notebooks").rglob("*.ipynb"):
            chinese = path.parent == root / "notebooks" / "zh"
            kernel = PORTABLE_KERNEL if self.portable and chinese else None
            if self.strip_outputs or kernel:
                _prepare_copy(path, self.strip_outputs, kernel)
        images = REPO / "images"
        if images.is_dir():  # notebooks link ../images/*.png
            shutil.copytree(images, root / "images")
        settings = self.tmp / "user-settings"
        for rel, value in _SETTINGS.items():
            path = settings / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        for sub in ("config", "data", "runtime", "ipython", "workspaces"):
            (self.tmp / sub).mkdir()
        if self.portable:  # shown as the plain kernel is
            spec = self.tmp / "data" / "kernels" / PORTABLE_KERNEL / "kernel.json"
            spec.parent.mkdir(parents=True)
            spec.write_text(
                json.dumps(
                    {
                        "argv": [sys.executable, "-m", "ipykernel_launcher"]
                        + ["-f", "{connection_file}"],
                        "display_name": "Python 3 (ipykernel)",
                        "language": "python",
                        "env": PORTABLE_ENV,
                    }
                )
            )

        self.port = _free_port()
        self.token = secrets.token_hex(24)
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.tmp / "config"),
            JUPYTER_DATA_DIR=str(self.tmp / "data"),
            JUPYTER_RUNTIME_DIR=str(self.tmp / "runtime"),
            IPYTHONDIR=str(self.tmp / "ipython"),
            PYTHONPATH=os.pathsep.join(
                [str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p]
            ),
            PYDEVD_DISABLE_FILE_VALIDATION="1",
        )
        env.pop("JUPYTER_TOKEN", None)
        env["JUPYTER_CONFIG_PATH"] = str(self.config_path)
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={root}",
            "--ServerApp.terminals_enabled=False",
            # if the test process is killed hard, the server still goes away on its own
            "--ServerApp.shutdown_no_activity_timeout=1800",
            f"--LabApp.workspaces_dir={self.tmp / 'workspaces'}",
            f"--LabApp.user_settings_dir={settings}",
            # window.jupyterapp: run JupyterLab commands (clear outputs, run all) from the page
            "--LabApp.expose_app_in_browser=True",
            "--LanguageServerManager.autodetect=False",
        ]
        if os.geteuid() == 0:
            cmd.append("--allow-root")
        self.log_path = self.tmp / "server.log"
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        atexit.register(self.stop)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}"
                )
            try:
                self.api("GET", "api/status", timeout=2)
                # the lab page itself (extensions, settings) answers too
                with urllib.request.urlopen(self.url("lab"), timeout=5) as r:
                    if r.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(
            f"JupyterLab did not answer within {self.startup_timeout:.0f} s:\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(
                self.log_path.read_text(errors="replace").splitlines()[-lines:]
            )
        except (OSError, AttributeError):
            return "(no server log)"

    def stop(self) -> None:
        """Delete every session and kernel, terminate the process group, remove the temp dir."""
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                for kind in ("sessions", "kernels"):
                    try:
                        for item in self.api("GET", f"api/{kind}", timeout=5) or []:
                            self.api("DELETE", f"api/{kind}/{item['id']}", timeout=15)
                    except (OSError, urllib.error.URLError, ValueError):
                        pass
            for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(wait)
                except subprocess.TimeoutExpired:
                    continue
                # the server is gone; anything left in its group (a kernel) gets the same signal
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    pass
                break
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> "LabServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- HTTP --------------------------------------------------------------------------------
    def url(self, path: str = "", token: bool = True) -> str:
        url = f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"
        if token:
            url += ("&" if "?" in url else "?") + f"token={self.token}"
        return url

    def api(self, method: str, path: str, timeout: float = 10):
        req = urllib.request.Request(
            self.url(path, token=False),
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def notebook_url(self, name: str) -> str:
        """A fresh workspace for each page: `?reset` so no old tabs are restored."""
        return self.url(
            f"lab/workspaces/t{uuid.uuid4().hex[:12]}/tree/notebooks/{name}?reset"
        )

    def running(self) -> dict[str, list[str]]:
        """The ids of the sessions and kernels running now:
        {'sessions': [...], 'kernels': [...]}."""
        found = {}
        for kind in ("sessions", "kernels"):
            try:
                found[kind] = [
                    item["id"] for item in self.api("GET", f"api/{kind}") or []
                ]
            except (OSError, urllib.error.URLError, ValueError):
                found[kind] = []
        return found

    def shutdown_kernels(self, ids: dict[str, list[str]] | None = None) -> None:
        """Delete these sessions and kernels (a dict like self.running()'s; default: all
        of them). Returns once the server has shut the kernels down."""
        for kind, names in (ids or self.running()).items():
            for name in names:
                try:
                    self.api("DELETE", f"api/{kind}/{name}", timeout=15)
                except (OSError, urllib.error.URLError, ValueError):
                    pass


def launch_chromium(
    playwright,
    user_data_dir: str,
    viewport=(PROJECTOR["width"], PROJECTOR["height"]),
    scale: float = PROJECTOR_SCALE,
):
    """Debian's chromium with the GUIDE's flags and a fresh profile: a persistent context.
    By default the page sees the projector: 853x480 CSS px at 1.5 device pixels per CSS px."""
    return playwright.chromium.launch_persistent_context(
        user_data_dir,
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": viewport[0], "height": viewport[1]},
        device_scale_factor=scale,
    )


# -- notebook helpers (run in the page) ----------------------------------------------------------

_JS_READY = """async () => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  if (!panel || !panel.sessionContext) throw new Error('no notebook panel is current');
  await panel.context.ready;
  await panel.sessionContext.ready;
  const t0 = Date.now();
  while (!(panel.sessionContext.session && panel.sessionContext.session.kernel)) {
    if (Date.now() - t0 > 60000) throw new Error('no kernel after 60 s');
    await new Promise(r => setTimeout(r, 100));
  }
  const kernel = panel.sessionContext.session.kernel;
  await kernel.info;
  // every message between page and kernel, by direction and type (for the idle check)
  window.__ropeMessages = [];
  kernel.anyMessage.connect((_, args) => {
    const m = args.msg, c = m.content || {};
    const data = c.data || {};
    window.__ropeMessages.push({t: performance.now(), dir: args.direction === 'send' ? 'to kernel' : 'to page',
                                type: m.header.msg_type, channel: m.channel || '',
                                comm: c.comm_id || '',
                                what: (data.method || '') + (data.content && data.content.type ? ':' + data.content.type
                                       : data.state ? ':' + Object.keys(data.state).join(',') : '')});
  });
  // every error the kernel reports from now on (cells and widget callbacks alike)
  window.__ropeKernelErrors = [];
  panel.sessionContext.iopubMessage.connect((_, msg) => {
    const t = msg.header.msg_type, c = msg.content || {};
    if (t === 'error') {
      window.__ropeKernelErrors.push((c.traceback || [c.ename + ': ' + c.evalue]).join('\\n').replace(/\\u001b\\[[0-9;]*m/g, ''));
    } else if (t === 'stream' && c.name === 'stderr' && /Traceback \\(most recent call last\\)/.test(c.text)) {
      window.__ropeKernelErrors.push(c.text.replace(/\\u001b\\[[0-9;]*m/g, ''));
    }
  });
  return panel.context.path;
}"""

_JS_CELLS_DONE = """() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  if (!nb) return false;
  const app = window.jupyterapp, panel = app.shell.currentWidget;
  let pending = 0, running = 0;
  panel.content.widgets.forEach(cell => {
    if (cell.model.type !== 'code') return;
    const prompt = (cell.node.querySelector('.jp-InputPrompt') || {}).textContent || '';
    if (prompt.includes('*')) running++;
    if (!cell.model.sharedModel.getSource().trim()) return;   // empty cells get no number
    if (!/\\[\\s*\\d+\\s*\\]/.test(prompt)) pending++;
  });
  if (pending === 0 && running === 0) return 'done';
  // run-all stops at the first error: the rest never get a number
  if (running === 0 && (window.__ropeKernelErrors || []).length) return 'error';
  return false;
}"""

_JS_PROMPTS = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(c => c.model.type === 'code')
  .map(c => ({prompt: (c.node.querySelector('.jp-InputPrompt') || {}).textContent || '',
              empty: !c.model.sharedModel.getSource().trim(),
              source: c.model.sharedModel.getSource().slice(0, 80)}))"""

_JS_ERRORS = r"""() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const found = [];
  const errorLine = /^\s*[\w.]*(Error|Exception)\b.*:/m;
  nb.querySelectorAll('.jp-OutputArea-output').forEach(el => {
    const text = el.textContent || '';
    const mime = el.getAttribute('data-mime-type') || '';
    if (/Traceback \(most recent call last\)/.test(text) ||
        (mime === 'application/vnd.jupyter.stderr' && errorLine.test(text)) ||
        /Error (displaying|rendering|creating) (widget|view)/.test(text)) {
      found.push(mime + ': ' + text.slice(0, 1500));
    }
  });
  nb.querySelectorAll('.jupyter-widgets').forEach(el => {
    const text = el.textContent || '';
    if (/Traceback \(most recent call last\)|Error (displaying|rendering|creating) (widget|view)/.test(text))
      found.push('widget: ' + text.slice(0, 1500));
  });
  return {outputs: [...new Set(found)], kernel: window.__ropeKernelErrors || []};
}"""


def open_notebook(context, server: LabServer, name: str, timeout_ms: int = 60_000):
    """A new page with notebooks/<name> open in a fresh workspace and its kernel ready."""
    return finish_opening(start_opening(context, server, name, timeout_ms), timeout_ms)


def start_opening(context, server: LabServer, name: str, timeout_ms: int = 60_000):
    """A new page that starts loading notebooks/<name> in a fresh workspace; returns at once
    (the browser goes on loading JupyterLab, the notebook and its kernel on its own).
    finish_opening(page) waits until it is ready."""
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    page.goto(server.notebook_url(name), wait_until="commit")
    return page


def finish_opening(page, timeout_ms: int = 60_000):
    """Wait until start_opening's page shows the notebook and its kernel is ready; then
    record the page-kernel messages from now on and close the side panels. Returns the
    page."""
    page.bring_to_front()  # a page behind another one is throttled
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell", timeout=timeout_ms
    )
    page.wait_for_selector(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell",
        timeout=timeout_ms,
    )
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget; return !!(w && w.sessionContext); }",
        timeout=timeout_ms,
    )
    page.evaluate(_JS_READY)
    close_side_panels(page)
    stop_slideshow(page)
    return page


def stop_slideshow(page) -> None:
    """Leave jupyterlab-slideshow's presentation if the page shows one: its setting
    "active" restarts it on every page that loads while a slideshow runs (a notebook the
    tests opened ahead, while the one before it was being presented)."""
    if page.evaluate("() => document.body.dataset.jpDeckMode !== undefined"):
        page.evaluate("() => window.jupyterapp.commands.execute('deck:stop')")
        page.wait_for_function(
            "() => document.body.dataset.jpDeckMode === undefined", timeout=20_000
        )


def close_side_panels(page) -> None:
    """Collapse the file browser (left) and the right side bar, as a teacher does on a projector."""
    page.evaluate(
        """() => { const s = window.jupyterapp.shell; s.collapseLeft(); s.collapseRight(); }"""
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.leftCollapsed && window.jupyterapp.shell.rightCollapsed"
    )


def run_all(page, timeout_ms: int = 120_000) -> str:
    """Clear every output, run all cells, wait until every non-empty code cell shows a number
    (or an error stopped the run). Returns 'done' or 'error'."""
    start_run_all(page)
    return wait_run_all(page, timeout_ms)


def start_run_all(page) -> None:
    """Clear every output and start running all cells; returns while they run (the kernel
    goes on, in a page behind another one too)."""
    page.evaluate(
        "() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')"
    )
    # the stored numbers are gone before anything runs (so old ones cannot pass for new ones)
    page.wait_for_function(
        r"""() => window.jupyterapp.shell.currentWidget.content.widgets
              .filter(c => c.model.type === 'code')
              .every(c => !/\d/.test((c.node.querySelector('.jp-InputPrompt') || {}).textContent || ''))""",
        timeout=10_000,
    )
    page.evaluate(
        "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }"
    )


def wait_run_all(page, timeout_ms: int = 120_000) -> str:
    """After start_run_all: wait until every non-empty code cell shows a number (or an
    error stopped the run). Returns 'done' or 'error'."""
    handle = page.wait_for_function(_JS_CELLS_DONE, timeout=timeout_ms, polling=200)
    return handle.json_value()


def prompts(page) -> list[dict]:
    return page.evaluate(_JS_PROMPTS)


def kernel_prints(page, code: str, timeout_ms: int = 30_000) -> str:
    """What `code` prints when the open notebook's kernel runs it (outside any cell: no
    output, no execution number)."""
    return page.evaluate(
        """async ([code, timeout]) => {
          const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
          const future = kernel.requestExecute({code, store_history: false});
          let text = '';
          future.onIOPub = msg => {
            if (msg.header.msg_type === 'stream') text += msg.content.text;
            if (msg.header.msg_type === 'error') text += msg.content.ename;
          };
          await Promise.race([future.done, new Promise(r => setTimeout(r, timeout))]);
          return text;
        }""",
        [code, timeout_ms],
    )


def executed_notebook(page) -> dict:
    """The open notebook as JupyterLab holds it (nbformat JSON), outputs included."""
    return page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.model.toJSON()"
    )


def errors(page) -> dict:
    """{'outputs': error-looking outputs in the notebook, 'kernel': errors the kernel sent}."""
    return page.evaluate(_JS_ERRORS)


# -- live widgets ----------------------------------------------------------------------------

_JS_FIND_WIDGETS = r"""() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const roots = [];
  nb.querySelectorAll('.rope-readout').forEach(readout => {
    let el = readout.parentElement;
    while (el && el !== nb && !(el.classList.contains('jupyter-widgets') &&
                                el.querySelector('.jupyter-matplotlib canvas'))) el = el.parentElement;
    if (el && el !== nb && !roots.includes(el)) roots.push(el);
  });
  const kinds = [['slider', '.widget-slider'], ['dropdown', '.widget-dropdown'],
                 ['button', '.widget-button'], ['checkbox', '.widget-checkbox'],
                 ['toggle', '.widget-toggle-buttons']];
  return roots.map((root, i) => {
    root.setAttribute('data-rope-widget', String(i));
    const controls = [];
    root.querySelectorAll(kinds.map(k => k[1]).join(',')).forEach(el => {
      if (el.closest('.jupyter-matplotlib')) return;           // ipympl's own toolbar
      if (controls.some(c => c.el.contains(el))) return;
      const kind = kinds.find(k => el.matches(k[1]))[0];
      const label = el.querySelector(':scope > .widget-label, :scope > label');
      const name = kind === 'button' ? (el.textContent || '').trim()
                                     : (label ? label.textContent.trim() : '');
      controls.push({el, kind, name});
    });
    controls.forEach((c, j) => c.el.setAttribute('data-rope-control', `${i}-${j}`));
    const cell = root.closest('.jp-Cell');
    const cells = [...nb.querySelectorAll('.jp-Cell')];
    return {index: i, cell: cells.indexOf(cell), readout: root.querySelector('.rope-readout').textContent,
            controls: controls.map((c, j) => ({index: j, kind: c.kind, name: c.name,
                                               selector: `[data-rope-control="${i}-${j}"]`}))};
  });
}"""

# A signature of one widget: its readout text and a hash of every pixel of its ipympl canvases.
_JS_SIGNATURE = r"""(i) => {
  const root = document.querySelector(`[data-rope-widget="${i}"]`);
  const readout = root.querySelector('.rope-readout').textContent;
  let h = 2166136261 >>> 0, size = '';
  root.querySelectorAll('.jupyter-matplotlib canvas').forEach(c => {
    size += c.width + 'x' + c.height + ';';
    if (!c.width || !c.height) return;
    const data = new Uint32Array(c.getContext('2d').getImageData(0, 0, c.width, c.height).data.buffer);
    for (let k = 0; k < data.length; k++) { h ^= data[k]; h = Math.imul(h, 16777619) >>> 0; }
  });
  return {readout, canvas: size + h.toString(16)};
}"""

# Wait until readout and canvas have both changed from `before` (if given), then until nothing
# changes for `quiet` ms. Never blocks the page: it sleeps between looks.
_JS_WAIT = (
    r"""async ([i, before, timeout, quiet]) => {
  const sig = () => (%s)(i);
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const t0 = performance.now();
  let s = sig(), readoutChanged = false, canvasChanged = false;
  while (before) {
    readoutChanged = s.readout !== before.readout;
    canvasChanged = s.canvas !== before.canvas;
    if (readoutChanged && canvasChanged) break;
    if (performance.now() - t0 > timeout) return {ok: false, readoutChanged, canvasChanged, sig: s};
    await sleep(30);
    s = sig();
  }
  let last = s, since = performance.now();
  while (performance.now() - since < quiet && performance.now() - t0 < timeout + 5000) {
    await sleep(40);
    s = sig();
    if (s.readout !== last.readout || s.canvas !== last.canvas) { last = s; since = performance.now(); }
  }
  if (before) { readoutChanged = s.readout !== before.readout; canvasChanged = s.canvas !== before.canvas; }
  return {ok: !before || (readoutChanged && canvasChanged), readoutChanged, canvasChanged, sig: s};
}"""
    % _JS_SIGNATURE
)


def find_widgets(page) -> list[dict]:
    """Every live widget: a widget box holding a .rope-readout and an ipympl canvas, with its
    controls (sliders, dropdowns, buttons, ...). Marks them with data-rope-widget/-control."""
    return page.evaluate(_JS_FIND_WIDGETS)


def signature(page, widget: int) -> dict:
    return page.evaluate(_JS_SIGNATURE, widget)


def wait_changed(
    page, widget: int, before: dict | None, timeout_ms: int = 8_000, quiet_ms: int = 300
) -> dict:
    """Wait until the widget's readout AND canvas differ from `before`, then until they settle.
    With before=None: only wait until the widget is quiet. Returns {ok, readoutChanged, canvasChanged, sig}."""
    return page.evaluate(_JS_WAIT, [widget, before, timeout_ms, quiet_ms])


def wait_canvas_drawn(page, widget: int, timeout_ms: int = 20_000) -> None:
    """Wait until the widget's ipympl canvas has a size and is not blank."""
    page.wait_for_function(
        """(i) => { const c = document.querySelector(`[data-rope-widget="${i}"] .jupyter-matplotlib canvas`);
                    if (!c || !c.width || !c.height) return false;
                    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                    for (let k = 3; k < d.length; k += 4) if (d[k]) return true;
                    return false; }""",
        arg=widget,
        timeout=timeout_ms,
        polling=100,
    )


def slug(text: str) -> str:
    text = re.sub(r"\|(\w+)\|", r"norm_\1", text)  # |q| -> norm_q
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_") or "control"


def move_control(page, control: dict, presses: int = 3) -> str:
    """Move one control the way a person would; returns a description of what was done."""
    loc = page.locator(control["selector"])
    kind = control["kind"]
    if kind == "slider":
        handle = loc.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        # where the handle is (noUiSlider's own numbers; a SelectionSlider counts options)
        now, lo, hi = loc.locator(".noUi-target").first.evaluate(
            "t => [Number(t.noUiSlider.get(true)), t.noUiSlider.options.range.min, t.noUiSlider.options.range.max]"
        )
        if lo == hi:
            return "fixed"
        key = "ArrowLeft" if now >= hi else "ArrowRight"
        handle.focus()
        for _ in range(presses):
            handle.press(key)
        return f"{key} x{presses}"
    if kind == "dropdown":
        select = loc.locator("select")
        options = select.locator("option")
        count = options.count()
        if count < 2:
            return "fixed"
        current = select.evaluate("s => s.selectedIndex")
        index = (current + 1) % count
        select.select_option(index=index)
        return f"option {index}: {options.nth(index).text_content()}"
    if kind == "button":
        loc.click()
        return "click"
    if kind == "checkbox":
        loc.locator("input").click()
        return "toggle"
    if kind == "toggle":
        buttons = loc.locator("button:not(.mod-active)")
        if buttons.count() == 0:
            return "fixed"
        buttons.first.click()
        return f"choose {buttons.first.text_content()}"
    raise ValueError(f"unknown control kind {kind!r}")


def slider_value(page, selector: str) -> str:
    """The text of a slider's .widget-readout."""
    return page.locator(selector).locator(".widget-readout").inner_text().strip()


_JS_SESSION = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const s = w && w.sessionContext && w.sessionContext.session;
  return s ? {sessions: [s.id], kernels: s.kernel ? [s.kernel.id] : []} : null;
}"""


def page_session(page) -> dict[str, list[str]] | None:
    """The ids of the session and kernel of the page's notebook (None if it has none)."""
    try:
        return page.evaluate(_JS_SESSION)
    except Exception:  # a closed or broken page
        return None


def close_page(page, server: LabServer, wait: bool = True, only_its_own: bool = False):
    """Close the page and shut its kernel down (the next notebook gets the cores).
    By default every kernel running now is shut down; only_its_own=True: only the page's
    own session and kernel (another page's kernel is left alone).
    wait=False: the kernels are shut down in a background thread (about 1.5 s of waiting
    saved; kernels started afterwards are left alone); returns the thread."""
    ids = page_session(page) if only_its_own else server.running()
    ids = ids or {}
    try:
        page.close()
    finally:
        if wait:
            server.shutdown_kernels(ids)
        else:
            thread = threading.Thread(
                target=server.shutdown_kernels, args=(ids,), daemon=True
            )
            thread.start()
            return thread
    return None


# -- the projector: what is wider than its area, what is taller than the screen -------------------

_JS_LAYOUT = r"""() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const cells = [...nb.querySelectorAll('.jp-Cell')];
  const cellOf = el => cells.indexOf(el.closest('.jp-Cell'));
  const px = x => Math.round(x);
  const wide = [], code = [], widths = [];
  const seen = new Set();
  const report = (el, kind, width, area, what) => {
    const key = cellOf(el) + kind + what;
    if (seen.has(key)) return;
    seen.add(key);
    wide.push({cell: cellOf(el), kind, width: px(width), area: px(area), what: what.slice(0, 100)});
  };
  // outputs of code cells, and rendered markdown (display equations, tables, code blocks)
  nb.querySelectorAll('.jp-OutputArea-output, .jp-MarkdownOutput').forEach(el => {
    const kind = el.classList.contains('jp-MarkdownOutput') ? 'markdown' : 'output';
    const box = el.getBoundingClientRect(), area = el.clientWidth;
    if (!area) return;                                   // collapsed or hidden
    const text = (el.textContent || '').trim().replace(/\s+/g, ' ');
    if (kind === 'output') widths.push({cell: cellOf(el), area: px(area), width: px(el.scrollWidth)});
    if (el.scrollWidth > area + 1) report(el, kind, el.scrollWidth, area, 'scrolls sideways: ' + text);
    el.querySelectorAll('mjx-container, pre, table, .jupyter-widgets, .jupyter-matplotlib-figure').forEach(inner => {
      if (inner.scrollWidth > inner.clientWidth + 1 && inner.clientWidth)
        report(el, kind, inner.scrollWidth, inner.clientWidth,
               inner.tagName.toLowerCase() + ' scrolls sideways: ' + (inner.textContent || '').trim().replace(/\s+/g, ' '));
    });
    el.querySelectorAll('img, canvas, svg').forEach(m => {
      const r = m.getBoundingClientRect();
      if (!r.width) return;
      const natural = m.tagName === 'IMG' && !m.getAttribute('width') ? m.naturalWidth : r.width;
      if (r.right > box.right + 1 || r.width > area + 1)
        report(el, kind, r.width, area, m.tagName.toLowerCase() + ' cut off at the right edge');
      else if (natural > area + 1)
        report(el, kind, natural, area, m.tagName.toLowerCase() + ` ${natural} px wide, shown shrunk to ${px(r.width)} px`);
      if (kind === 'output') widths.push({cell: cellOf(el), area: px(area), width: px(Math.max(natural, r.width))});
    });
  });
  // code that needs sideways scrolling
  nb.querySelectorAll('.jp-CodeCell .jp-InputArea-editor .cm-scroller').forEach(el => {
    if (el.scrollWidth > el.clientWidth + 1) {
      const lines = [...el.querySelectorAll('.cm-line')].map(l => l.textContent);
      const longest = lines.reduce((a, b) => b.length > a.length ? b : a, '');
      code.push({cell: cellOf(el), width: px(el.scrollWidth), area: px(el.clientWidth),
                 chars: longest.length, line: longest.slice(0, 100)});
    }
  });
  // how many characters of code fit the editor without scrolling
  let fits = null;
  const line = nb.querySelector('.jp-CodeCell .cm-content .cm-line');
  const scroller = nb.querySelector('.jp-CodeCell .cm-scroller');
  if (line && scroller) {
    const probe = document.createElement('span');   // outside the editor, in the editor's font
    const font = getComputedStyle(line);
    probe.style.cssText = `position:absolute;visibility:hidden;white-space:pre;font-family:${font.fontFamily};` +
                          `font-size:${font.fontSize};letter-spacing:${font.letterSpacing}`;
    probe.textContent = 'x'.repeat(100);
    document.body.appendChild(probe);
    const perChar = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const content = nb.querySelector('.jp-CodeCell .cm-content');
    const pad = parseFloat(getComputedStyle(content).paddingLeft) + parseFloat(getComputedStyle(line).paddingLeft)
              + parseFloat(getComputedStyle(line).paddingRight) + parseFloat(getComputedStyle(content).paddingRight);
    fits = Math.floor((scroller.clientWidth - pad) / perChar);
  }
  const output = nb.querySelector('.jp-OutputArea-output');
  const scrollerBox = nb.closest('.jp-WindowedPanel-outer') || nb;
  return {wide, code, widths, fits, visibleHeight: Math.round(scrollerBox.clientHeight), outputArea: output ? px(output.clientWidth) : null,
          window: [window.innerWidth, window.innerHeight], dpr: window.devicePixelRatio};
}"""

_JS_WIDGET_BOXES = r"""() => [...document.querySelectorAll('[data-rope-widget]')].map(root => {
  const r = root.getBoundingClientRect();
  const area = root.closest('.jp-OutputArea-output');
  const canvases = [...root.querySelectorAll('.jupyter-matplotlib canvas')]
    .map(c => c.getBoundingClientRect()).filter(c => c.width)
    .map(c => [Math.round(c.width), Math.round(c.height)]);
  const header = [...root.querySelectorAll('.jupyter-matplotlib-header, .jupyter-matplotlib-toolbar, .jupyter-matplotlib-footer')]
    .filter(e => e.getBoundingClientRect().height > 0 && getComputedStyle(e).display !== 'none'
                 && getComputedStyle(e).visibility !== 'hidden').map(e => e.className.split(' ')[0]);
  return {index: Number(root.getAttribute('data-rope-widget')), width: Math.round(r.width),
          height: Math.round(r.height), area: area ? area.clientWidth : null, canvases, header};
})"""


# Where a widget's controls and picture are on the screen (CSS px, relative to the window):
# the part of the window where the notebook shows (between JupyterLab's bars, or the whole
# window in a slideshow), the canvas, and each control with its slider track's length.
_JS_ON_SCREEN = r"""(i) => {
  const root = document.querySelector(`[data-rope-widget="${i}"]`);
  const px = x => Math.round(x);
  const scroller = root.closest('.jp-WindowedPanel-outer');
  const s = scroller ? scroller.getBoundingClientRect() : {top: 0, bottom: window.innerHeight};
  const view = [px(Math.max(0, s.top)), px(Math.min(window.innerHeight, s.bottom))];
  const box = el => { const r = el.getBoundingClientRect();
                      return {top: px(r.top), bottom: px(r.bottom), left: px(r.left), right: px(r.right)}; };
  const canvases = [...root.querySelectorAll('.jupyter-matplotlib canvas')]
    .filter(c => c.getBoundingClientRect().width).map(box);
  const canvas = canvases.length ? {top: Math.min(...canvases.map(c => c.top)),
                                    bottom: Math.max(...canvases.map(c => c.bottom))} : null;
  const kinds = '.widget-slider, .widget-dropdown, .widget-toggle-buttons, .widget-button, .widget-checkbox';
  const controls = [...root.querySelectorAll(kinds)].filter(el => !el.closest('.jupyter-matplotlib'))
    .map(el => {
      const label = el.querySelector(':scope > .widget-label, :scope > label');
      const track = el.classList.contains('widget-slider') ? el.querySelector('.noUi-target') : null;
      return {kind: el.classList.contains('widget-slider') ? 'slider' : 'other',
              name: label ? label.textContent.trim() : (el.textContent || '').trim().slice(0, 30),
              length: track ? px(track.getBoundingClientRect().width) : null, ...box(el)};
    });
  return {view, canvas, controls, widget: box(root)};
}"""


def on_screen(page, widget: int) -> dict:
    """Where widget `widget`'s canvas and controls are now, against the part of the window
    that shows the notebook: {'view': [top, bottom], 'canvas': {top, bottom}, 'controls':
    [{kind, name, length (a slider's track), top, bottom, left, right}], 'widget'}."""
    return page.evaluate(_JS_ON_SCREEN, widget)


def off_screen(measured: dict, min_slider: float) -> list[str]:
    """What of on_screen()'s measurement a teacher cannot see or use: the canvas or a control
    outside the view, a slider track shorter than min_slider CSS px."""
    top, bottom = measured["view"]
    problems = []
    canvas = measured["canvas"]
    if canvas is None:
        problems.append("no canvas")
    elif canvas["top"] < top - 1 or canvas["bottom"] > bottom + 1:
        problems.append(
            f"canvas at {canvas['top']}..{canvas['bottom']} px, the screen shows {top}..{bottom}"
        )
    for c in measured["controls"]:
        if c["top"] < top - 1 or c["bottom"] > bottom + 1:
            problems.append(
                f"{c['kind']} {c['name']!r} at {c['top']}..{c['bottom']} px, "
                f"the screen shows {top}..{bottom}"
            )
        if c["length"] is not None and c["length"] < min_slider:
            problems.append(
                f"slider {c['name']!r} is {c['length']} px long (at least {min_slider})"
            )
    return problems


def layout(page) -> dict:
    """What does not fit the width: {'wide': outputs/markdown wider than their area,
    'code': code cells that scroll sideways, 'widths': every output's width against its area,
    'outputArea': the output area's width in CSS px, 'window', 'dpr'}."""
    return page.evaluate(_JS_LAYOUT)


def widget_boxes(page) -> list[dict]:
    """Size in CSS px of every widget found by find_widgets: box, canvases, visible ipympl bars."""
    return page.evaluate(_JS_WIDGET_BOXES)


def next_frame(page) -> None:
    """Wait until the page has laid out and painted what changed (two animation frames)."""
    page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )


def scroll_to_top_of(page, selector: str) -> None:
    """Scroll the notebook so that the element's top is at the top of the window."""
    page.locator(selector).first.evaluate("el => el.scrollIntoView({block: 'start'})")
    next_frame(page)


# -- messages between page and kernel (counted from the moment the notebook was opened) ----------


def message_mark(page) -> int:
    return page.evaluate("() => window.__ropeMessages.length")


def messages_since(page, mark: int) -> list[dict]:
    return page.evaluate("(mark) => window.__ropeMessages.slice(mark)", mark)


def wait_messages_quiet(page, quiet_ms: int = 500, timeout_ms: int = 5_000) -> bool:
    """Wait until no message went either way between page and kernel for quiet_ms and
    the kernel is idle (the answers to the last move have arrived: a kernel still working
    on one can be silent for longer than quiet_ms); give up after timeout_ms. True if it
    got quiet."""
    return page.evaluate(
        """async ([quiet, timeout]) => {
             const t0 = performance.now(), log = window.__ropeMessages;
             const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
             while (performance.now() - t0 < timeout) {
               const last = log.length ? log[log.length - 1].t : 0;
               const since = performance.now() - last;
               if (since >= quiet && kernel.status === 'idle') return true;
               await new Promise(r => setTimeout(r, Math.max(20, quiet - since)));
             }
             return false;
           }""",
        [quiet_ms, timeout_ms],
    )


def comm_messages(messages: list[dict]) -> list[dict]:
    """The widget traffic among them: comm_msg/comm_open/comm_close in either direction."""
    return [m for m in messages if m["type"].startswith("comm_")]
