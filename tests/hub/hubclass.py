"""A throwaway class hub and its students, for the class test and benchmarks/bench_hub.py.

ClassHub starts hub/jupyterhub_config.py (what `make hub` runs) with a roster of made-up
students whose names carry a random tag, its own Unix group, state folder, exchange and
free ports on 127.0.0.1. The hub issues their passwords (read back from its state folder)
and makes their Unix users on their first start. The hub is at localhost:PORT and each
student's server at NAME.localhost:PORT (chromium resolves *.localhost to this machine;
Python's requests go to 127.0.0.1 with that Host). cleanup() stops whatever is left,
removes those users (userdel -r), the grading user, the group, the cgroups and the
temporary folder: nothing stays on the machine.

Browser helpers drive the hub's own pages the way a student does: log in, wait for
JupyterLab, run code in her own kernel; notebooks are then driven with
tests/browser/lab.py's helpers.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "hub" / "jupyterhub_config.py"
PROXY = REPO / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
JUPYTERHUB = Path(sys.executable).parent / "jupyterhub"


def skip_reason() -> str | None:
    """Why a class hub cannot run here, or None."""
    if os.geteuid() != 0:
        return "the class hub needs root (one Unix user per student)"
    if not PROXY.exists():
        return f"{PROXY} is missing: make test-hub installs it (cd hub && npm ci)"
    if not JUPYTERHUB.exists():
        return "jupyterhub is missing: pip install -e '.[hub]'"
    return None


def _free_ports(count: int = 3) -> int:
    """A port p with p .. p+count-1 all free on 127.0.0.1 (the hub, its API, the proxy's)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + count > 65535:
            continue
        try:
            for k in range(1, count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port + k))
            return port
        except OSError:
            continue
    raise RuntimeError("no free run of ports on 127.0.0.1")


class ClassHub:
    """The class hub for `students` ({name: 'en' or 'zh'} without the tag), a teacher and
    an intruder who is not on the roster. Names get a random tag: `s1` becomes `s1-3fa2`."""

    def __init__(
        self,
        students: dict[str, str],
        idle_timeout: int = 3600,
        env: dict | None = None,
    ):
        self.tag = secrets.token_hex(2)
        self.students = {f"{n}-{self.tag}": lang for n, lang in students.items()}
        self.teacher = f"teacher-{self.tag}"
        self.intruder = f"intruder-{self.tag}"
        self.grader = f"grader-{self.tag}"
        self.group = f"rope-test-{self.tag}"
        self.idle_timeout = idle_timeout
        self.env = env or {}  # more ROPE_HUB_* settings
        self.tmp: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.log_path: Path | None = None

    def password(self, name: str) -> str:
        """The password the hub issued to `name` (its state folder's passwords.txt)."""
        for line in (self.tmp / "state" / "passwords.txt").read_text().splitlines():
            who, password = line.split()
            if who == name:
                return password
        return "no-password-issued"

    @property
    def exchange(self) -> Path:
        return self.tmp / "srv" / "exchange"

    # -- life cycle ------------------------------------------------------------------------
    def start(self, timeout: float = 60) -> "ClassHub":
        """Start the hub (again, after stop(): same state, ports and students)."""
        if self.tmp is None:
            self.tmp = Path(tempfile.mkdtemp(prefix="rope-hub-"))
            os.chmod(self.tmp, 0o755)  # the students reach the exchange inside
            (self.tmp / "srv").mkdir(mode=0o755)
            (self.tmp / "roster.txt").write_text(
                "# made by tests/hub/hubclass.py\n"
                + "".join(f"{n} {lang}\n" for n, lang in self.students.items())
            )
            self.port = _free_ports()
        env = dict(os.environ)
        env.update(
            ROPE_HUB_ROSTER=str(self.tmp / "roster.txt"),
            ROPE_HUB_TEACHER=self.teacher,
            ROPE_HUB_PORT=str(self.port),
            ROPE_HUB_STATE=str(self.tmp / "state"),
            ROPE_HUB_GROUP=self.group,
            ROPE_HUB_EXCHANGE=str(self.exchange),
            ROPE_HUB_IDLE_TIMEOUT=str(self.idle_timeout),
            ROPE_HUB_SERVER_ARGS="--LabApp.expose_app_in_browser=True",
            **self.env,
        )
        self.log_path = self.tmp / "hub.log"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [str(JUPYTERHUB), "-f", str(CONFIG)],
                cwd=self.tmp,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the hub exited:\n{self.log_tail()}")
            if self.get("hub/api/")[0] == 200:
                return self
            time.sleep(0.3)
        raise RuntimeError(
            f"the hub did not answer in {timeout:.0f} s:\n{self.log_tail()}"
        )

    def url(self, path: str = "") -> str:
        """An address of the hub itself (localhost:PORT)."""
        return f"http://localhost:{self.port}/{path.lstrip('/')}"

    def user_url(self, name: str, path: str = "") -> str:
        """An address on `name`'s server: her own subdomain."""
        return f"http://{name}.localhost:{self.port}/user/{name}/{path.lstrip('/')}"

    def get(self, url_or_path: str, headers: dict | None = None) -> tuple[int, str]:
        """A plain request (no browser, no cookie) to 127.0.0.1 with the address's Host:
        (status, body)."""
        url = url_or_path if "://" in url_or_path else self.url(url_or_path)
        host = url.split("/")[2]
        path = "/" + url.split("/", 3)[3]
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            headers={"Host": host, **(headers or {})},
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except OSError as e:
            return 0, str(e)

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except (OSError, AttributeError):
            return "(no hub log)"
        return "\n".join(text.splitlines()[-lines:])

    def users(self) -> list[str]:
        """Every name of this hub that has a Unix account now."""
        names = [*self.students, self.teacher, self.intruder, self.grader]
        found = []
        for name in names:
            try:
                pwd.getpwnam(name)
                found.append(name)
            except KeyError:
                pass
        return found

    def processes(self) -> list[psutil.Process]:
        """The hub, its proxy and culler (its session), and every process of the class's
        Unix users."""
        uids = {pwd.getpwnam(n).pw_uid for n in self.users()}
        found = []
        for proc in psutil.process_iter(["uids"]):
            try:
                if proc.info["uids"].real in uids or (
                    self.proc is not None and os.getsid(proc.pid) == self.proc.pid
                ):
                    found.append(proc)
            except (psutil.Error, OSError):
                continue
        return found

    def stop(self, timeout: float = 45) -> dict:
        """Stop the hub as Ctrl-C would (SIGTERM to the hub alone; the students' servers
        go on): {'returncode', 'seconds', 'left': the hub's own processes still there}."""
        t0 = time.monotonic()
        code = None
        session = self.proc.pid if self.proc is not None else None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                pass
        elif self.proc is not None:
            code = self.proc.returncode
        seconds = time.monotonic() - t0
        time.sleep(0.5)
        left = []
        for proc in psutil.process_iter():
            try:  # a zombie has exited (only its parent has not read its status yet)
                if os.getsid(proc.pid) == session and proc.status() != "zombie":
                    left.append(" ".join(proc.cmdline()[:3]))
            except (psutil.Error, OSError):  # gone meanwhile
                continue
        return {"returncode": code, "seconds": seconds, "left": left}

    def cleanup(self) -> None:
        """Kill what is left, remove the class's Unix users, group, cgroups, folder."""
        for proc in self.processes():
            try:
                proc.kill()
            except psutil.Error:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        for name in self.users():
            subprocess.run(["userdel", "-r", name], capture_output=True)
            for controller in ("memory", "pids", ""):
                folder = Path("/sys/fs/cgroup", controller, self.group, name)
                if folder.is_dir():
                    folder.rmdir()
        for controller in ("memory", "pids", ""):
            for folder in (
                Path("/sys/fs/cgroup", controller, self.group),
                Path("/sys/fs/cgroup", controller, "rope-grading", self.grader),
            ):
                if folder.is_dir():
                    folder.rmdir()
        subprocess.run(["groupdel", self.group], capture_output=True)
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> "ClassHub":
        try:
            return self.start()
        except BaseException:
            self.cleanup()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()
        self.cleanup()

    # -- the students' pages -----------------------------------------------------------------
    def start_log_in(self, page, name: str, password: str | None = None) -> None:
        """Fill in the login form and submit it; returns at once (the hub then starts the
        student's server and JupyterLab loads: wait_lab)."""
        page.goto(self.url("hub/login"))
        page.fill("input[name=username]", name)
        page.fill("input[name=password]", password or self.password(name))
        page.click("#login_submit")

    def wait_lab(self, page, name: str, timeout_ms: int = 150_000) -> None:
        page.wait_for_url(f"**/user/{name}/lab**", timeout=timeout_ms)
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell", timeout=timeout_ms
        )

    def notebook_url(self, name: str, path: str) -> str:
        """A fresh JupyterLab workspace with notebooks/<path> open (no old tabs)."""
        return self.user_url(
            name,
            f"lab/workspaces/t{uuid.uuid4().hex[:12]}/tree/notebooks/{path}?reset",
        )


# fetch() from a page with its cookies and JupyterHub's XSRF token: {status, body}
JS_FETCH = """async ([url, method, body]) => {
  const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || '';
  const r = await fetch(url, {method, credentials: 'same-origin', body,
                              headers: {'X-XSRFToken': decodeURIComponent(xsrf),
                                        'Content-Type': 'application/json'}});
  return {status: r.status, body: await r.text()};
}"""


def fetch(page, url: str, method: str = "GET", body=None) -> dict:
    """A request from the page (its cookies, its XSRF token): {'status', 'body'}; a
    body is sent as JSON."""
    data = None if body is None else json.dumps(body)
    return page.evaluate(JS_FETCH, [url, method, data])


# In a student's JupyterLab page: run code in a kernel of hers (started on first use, then
# reused), return what it printed and any error as text
JS_RUN = """async ([code, ms]) => {
  const sm = window.jupyterapp.serviceManager;
  if (!window._ropeKernel || window._ropeKernel.isDisposed) {
    window._ropeKernel = await sm.kernels.startNew({name: 'python3'});
  }
  const future = window._ropeKernel.requestExecute({code, stop_on_error: true});
  let out = '';
  future.onIOPub = msg => {
    const t = msg.header.msg_type;
    if (t === 'stream') out += msg.content.text;
    if (t === 'error') out += msg.content.ename + ': ' + msg.content.evalue;
  };
  const late = new Promise((_, no) => setTimeout(() => no(new Error('timeout')), ms));
  await Promise.race([future.done, late]);
  return out;
}"""


def run_in_kernel(page, code: str, timeout_s: float = 60) -> str:
    """Run `code` in the student's own kernel from her JupyterLab page (as she would in
    a cell): what it printed."""
    return page.evaluate(JS_RUN, [code, int(timeout_s * 1000)])


# JupyterLab settings for the students' pages in the test, as tests/browser/lab.py's:
# every cell rendered (no windowing, so every prompt and widget is in the page), no news
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
        "doNotDisturbMode": True,
    },
}


def set_lab_settings(page, hub: ClassHub, name: str) -> None:
    """Store LAB_SETTINGS as the student's own JupyterLab settings (the next page that
    loads uses them); the page is on her server."""
    for plugin, values in LAB_SETTINGS.items():
        got = fetch(
            page,
            hub.user_url(name, f"lab/api/settings/{plugin}"),
            "PUT",
            {"raw": json.dumps(values)},
        )
        if got["status"] != 204:
            raise RuntimeError(f"settings {plugin} of {name}: {got}")


def as_user(name: str, *cmd: str) -> subprocess.CompletedProcess:
    """Run a command as the Unix user `name` (runuser), capturing its output."""
    return subprocess.run(
        ["runuser", "-u", name, "--", *cmd], capture_output=True, text=True
    )


def user_processes(name: str) -> list[psutil.Process]:
    uid = pwd.getpwnam(name).pw_uid
    return [
        p
        for p in psutil.process_iter(["uids"])
        if p.info["uids"] and p.info["uids"].real == uid
    ]


def server_port(name: str) -> int:
    """The port the student's own server listens on (127.0.0.1)."""
    for proc in user_processes(name):
        if "jupyterhub-singleuser" in " ".join(proc.cmdline()):
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    return conn.laddr.port
    raise LookupError(f"no server of {name} is listening")


def read_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# run in the student's kernel: put an answer into the fetched notebook's exercise 1
ANSWER_FILE = """
import json, pathlib
path = pathlib.Path({path!r})
nb = json.loads(path.read_text())
for cell in nb["cells"]:
    src = "".join(cell["source"])
    if "check_rotated_query(q_rot)" in src and cell["metadata"].get(
            "nbgrader", {{}}).get("solution"):
        cell["source"] = src.replace("q_rot = None", {answer!r}, 1)
path.write_text(json.dumps(nb))
print("answered", path.stat().st_uid)
"""


# -- nbgrader on the hub: `make assignment`, `make nbgrader` (hub/grading.py) -------------
def course_dir(hub) -> Path:
    return hub.tmp / "srv" / "course"


def assignment_made(hub, lang: str = "en") -> None:
    """`make assignment LESSON=03` as root, once per hub: the course folder goes to the
    hub's grading user."""
    if (course_dir(hub) / "release").is_dir():
        return
    make = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "assignment",
         "LESSON=03", f"COURSE_DIR={course_dir(hub)}", f"EXCHANGE={hub.exchange}",
         f"GRADER={hub.grader}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert make.returncode == 0, make.stdout + make.stderr


def grading(hub, *command: str) -> subprocess.CompletedProcess:
    """`make nbgrader CMD="..."`, as root: nbgrader as the grading user, sandboxed."""
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "nbgrader",
         f"CMD={' '.join(command)}", f"COURSE_DIR={course_dir(hub)}",
         f"EXCHANGE={hub.exchange}", f"GRADER={hub.grader}"],
        capture_output=True, text=True,
    )  # fmt: skip


def fetch_assignment(hub, page, name: str, assignment: str = "lesson03") -> str:
    """Fetch, through the endpoint the Assignment List panel calls; returns the
    notebook's path as the panel links it (relative to JupyterLab's root)."""
    query = f"course_id=rope-notebooks&assignment_id={assignment}"
    got = fetch(page, hub.user_url(name, f"assignments/fetch?{query}"), "POST")
    assert got["status"] == 200 and json.loads(got["body"])["success"], got
    listed = fetch(page, hub.user_url(name, "assignments?course_id=rope-notebooks"))
    entries = json.loads(listed["body"])["value"]
    entry = next(
        e
        for e in entries
        if e["assignment_id"] == assignment and e["status"] == "fetched"
    )
    return entry["notebooks"][0]["path"]


def open_from_assignment_list(page, notebook: str = "03_rotation_2d") -> str:
    """The student's way, in her JupyterLab: Nbgrader > Assignment List, Fetch, then the
    fetched notebook's link. Returns the path JupyterLab opened (relative to its root)."""
    # nbgrader's extension loads after the page
    command = "nbgrader:open-assignment-list"
    page.wait_for_function(
        "c => window.jupyterapp.commands.hasCommand(c)", arg=command, timeout=60_000
    )
    page.evaluate("c => window.jupyterapp.commands.execute(c)", command)
    page.locator("#released_assignments_list button", has_text="Fetch").first.click()
    fetched = "#fetched_assignments_list"
    link = page.locator(f"{fetched} .nested_list_item .item_name a", has_text=notebook)
    link.first.wait_for(state="attached", timeout=60_000)
    if not link.first.is_visible():  # the assignment's notebooks are folded: unfold
        page.locator(f"{fetched} .assignment-notebooks-link").first.click()
    link.first.click()
    page.wait_for_function(
        "n => window.jupyterapp.shell.currentWidget?.context?.path?.endsWith(n)",
        arg=f"{notebook}.ipynb",
        timeout=60_000,
    )
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path")
