"""A throwaway class hub and its students, for the class test and benchmarks/bench_hub.py.

ClassHub starts hub/jupyterhub_config.py (what `make hub` runs) with a roster of made-up
students whose names carry a random tag, its own Unix group, state folder and free ports on
127.0.0.1. The students' Unix users are made by the hub itself, on their first start.
cleanup() stops whatever is left, removes those users (userdel -r), the group and the ACL
entries the hub gave it, and the temporary folder: nothing stays on the machine.

Browser helpers drive the hub's own pages the way a student does: sign up, log in, wait for
JupyterLab; notebooks are then driven with tests/browser/lab.py's helpers.
"""

from __future__ import annotations

import grp
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
PASSWORD = "class-pw-{}-Rope"  # each student's own password: formatted with the name


def skip_reason() -> str | None:
    """Why a class hub cannot run here, or None."""
    if os.geteuid() != 0:
        return "the class hub needs root (one Unix user per student)"
    if not PROXY.exists():
        return f"{PROXY} is missing: make test-hub installs it (cd hub && npm ci)"
    if not JUPYTERHUB.exists():
        return "jupyterhub is missing: pip install -e '.[hub]'"
    if not shutil.which("setfacl"):
        return "setfacl is missing: apt-get install -y acl"
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

    def __init__(self, students: dict[str, str], idle_timeout: int = 3600):
        self.tag = secrets.token_hex(2)
        self.students = {f"{n}-{self.tag}": lang for n, lang in students.items()}
        self.teacher = f"teacher-{self.tag}"
        self.intruder = f"intruder-{self.tag}"
        self.group = f"rope-test-{self.tag}"
        self.idle_timeout = idle_timeout
        self.tmp: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.log_path: Path | None = None

    def password(self, name: str) -> str:
        return PASSWORD.format(name)

    # -- life cycle ------------------------------------------------------------------------
    def start(self, timeout: float = 60) -> "ClassHub":
        self.tmp = Path(tempfile.mkdtemp(prefix="rope-hub-"))
        roster = self.tmp / "roster.txt"
        roster.write_text(
            "# made by tests/hub/hubclass.py\n"
            + "".join(f"{n} {lang}\n" for n, lang in self.students.items())
        )
        self.port = _free_ports()
        env = dict(os.environ)
        env.update(
            ROPE_HUB_ROSTER=str(roster),
            ROPE_HUB_TEACHER=self.teacher,
            ROPE_HUB_PORT=str(self.port),
            ROPE_HUB_STATE=str(self.tmp / "state"),
            ROPE_HUB_GROUP=self.group,
            ROPE_HUB_IDLE_TIMEOUT=str(self.idle_timeout),
            ROPE_HUB_SERVER_ARGS="--LabApp.expose_app_in_browser=True",
        )
        self.log_path = self.tmp / "hub.log"
        with open(self.log_path, "wb") as log:
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
            try:
                with urllib.request.urlopen(self.url("hub/api/"), timeout=2) as r:
                    if r.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.3)
        raise RuntimeError(
            f"the hub did not answer in {timeout:.0f} s:\n{self.log_tail()}"
        )

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except (OSError, AttributeError):
            return "(no hub log)"
        return "\n".join(text.splitlines()[-lines:])

    def users(self) -> list[str]:
        """Every name of this hub that has a Unix account now."""
        names = [*self.students, self.teacher, self.intruder]
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
        """Stop the hub as Ctrl-C would (SIGTERM to the hub alone): {'returncode',
        'seconds', 'left': processes still there afterwards}."""
        t0 = time.monotonic()
        code = None
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
        for proc in self.processes():
            try:  # a zombie has exited (only its parent has not read its status yet)
                if proc.status() != psutil.STATUS_ZOMBIE:
                    left.append(" ".join(proc.cmdline()[:3]))
            except psutil.Error:  # gone meanwhile
                continue
        return {"returncode": code, "seconds": seconds, "left": left}

    def cleanup(self) -> None:
        """Kill what is left, remove the class's Unix users, group, ACL entries, folder."""
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
        try:
            grp.getgrnam(self.group)
        except KeyError:
            pass
        else:
            for target in (Path(sys.executable).resolve(), JUPYTERHUB.parent, REPO):
                for folder in [*target.resolve().parents, target.resolve()]:
                    subprocess.run(
                        ["setfacl", "-x", f"g:{self.group}", str(folder)],
                        capture_output=True,
                    )
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
    def sign_up(self, page, name: str) -> str:
        """Fill in the hub's sign-up form as `name`; returns the answer's kind:
        'alert-success' (approved: may log in now), 'alert-info' (waits for the teacher)
        or 'alert-danger' (refused)."""
        page.goto(self.url("hub/signup"))
        page.fill("input[name=username]", name)
        page.fill("input[name=signup_password]", self.password(name))
        page.fill("input[name=signup_password_confirmation]", self.password(name))
        with page.expect_navigation():
            page.click("#signup_submit")
        alert = page.locator("div.alert[role=alert]").first
        kind = alert.get_attribute("class").split()
        return next(k for k in kind if k.startswith("alert-"))

    def start_log_in(self, page, name: str) -> None:
        """Fill in the login form and submit it; returns at once (the hub then starts the
        student's server and JupyterLab loads: wait_lab)."""
        page.goto(self.url("hub/login"))
        page.fill("input[name=username]", name)
        page.fill("input[name=password]", self.password(name))
        page.click("#login_submit")

    def wait_lab(self, page, name: str, timeout_ms: int = 150_000) -> None:
        page.wait_for_url(f"**/user/{name}/lab**", timeout=timeout_ms)
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell", timeout=timeout_ms
        )

    def notebook_url(self, name: str, path: str) -> str:
        """A fresh JupyterLab workspace with notebooks/<path> open (no old tabs)."""
        return self.url(
            f"user/{name}/lab/workspaces/t{uuid.uuid4().hex[:12]}"
            f"/tree/notebooks/{path}?reset"
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


def set_lab_settings(page, hub_url: str, name: str) -> None:
    """Store LAB_SETTINGS as the student's own JupyterLab settings (the next page that
    loads uses them)."""
    for plugin, values in LAB_SETTINGS.items():
        got = fetch(
            page,
            f"{hub_url}user/{name}/lab/api/settings/{plugin}",
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
