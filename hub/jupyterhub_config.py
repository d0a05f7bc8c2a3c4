"""JupyterHub for a class on one server (`make hub`; README, "Teaching a class").

Read by `jupyterhub -f hub/jupyterhub_config.py`, as root. The Makefile passes the
settings as environment variables (defaults in brackets):

    ROPE_HUB_ROSTER        the class roster: one student name a line, `name zh` for the
                           Chinese edition, `#` starts a comment   [hub/roster.txt]
    ROPE_HUB_TEACHER       the teacher's user name, the hub's admin    [teacher]
    ROPE_HUB_IP, _PORT     where the hub listens (its API and the proxy's: the next two
                           ports, on 127.0.0.1)                    [127.0.0.1, 8000]
    ROPE_HUB_STATE         the hub's database and cookie secret    [hub/state]
    ROPE_HUB_GROUP         the Unix group of the class's students  [rope-class]
    ROPE_HUB_IDLE_TIMEOUT  seconds without activity before a student's server is stopped
                           to free its memory                      [3600]

Who gets in (NativeAuthenticator): each student signs up at /hub/signup with a password
of their own; a name on the roster is approved at once, any other name waits for the
teacher (/hub/authorize) and stays refused unless the teacher also adds it in
/hub/admin. The teacher signs up first, under ROPE_HUB_TEACHER, before the address is
given out.

Each student is a Unix user of their own (created on their first start, home 0700, in
the group ROPE_HUB_GROUP) running their own JupyterLab with the course's environment
(this tree's .venv and rope_lib) in ~/rope-notebooks: a copy of notebooks/ (both
editions, no teacher notes) and images/, made on each start for the files the student
does not have yet, so nothing a student changed is ever overwritten.
"""

import grp
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nativeauthenticator

c = get_config()  # noqa: F821 (defined by JupyterHub when it reads this file)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BIN = Path(sys.executable).parent  # the course's .venv/bin
ROSTER = Path(os.environ.get("ROPE_HUB_ROSTER") or HERE / "roster.txt")
TEACHER = os.environ.get("ROPE_HUB_TEACHER") or "teacher"
STATE = Path(os.environ.get("ROPE_HUB_STATE") or HERE / "state")
GROUP = os.environ.get("ROPE_HUB_GROUP") or "rope-class"
IDLE_TIMEOUT = int(os.environ.get("ROPE_HUB_IDLE_TIMEOUT") or 3600)
# a Unix user name useradd accepts, lower case (JupyterHub lower-cases what people type)
NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")

if os.geteuid() != 0:
    sys.exit(
        "The class hub runs every student as a Unix user of their own, which needs "
        "root: run `make hub` as root (or with sudo)."
    )


def read_roster(path: Path) -> dict[str, str]:
    """{name: 'en' or 'zh'} from the roster file."""
    if not path.is_file():
        sys.exit(
            f"No class roster at {path}: write one student name a line "
            "(`name zh` for the Chinese edition), or give its path: make hub ROSTER=..."
        )
    roster = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        name, lang = words[0].lower(), (words[1:] or ["en"])[0]
        if not NAME.fullmatch(name) or lang not in ("en", "zh") or len(words) > 2:
            sys.exit(
                f"{path}:{number}: expected `name` or `name zh` with a name of "
                "lower-case letters, digits, '-' or '_' (at most 32), "
                f"got {line.strip()!r}"
            )
        try:  # a student must not become an existing system account (root, www-data...)
            existing = pwd.getpwnam(name)
        except KeyError:
            existing = None
        if existing and GROUP not in _groups_of(name) and name != TEACHER:
            sys.exit(
                f"{path}:{number}: {name!r} is already a Unix account of this "
                f"machine (uid {existing.pw_uid}) that is not one of the class "
                f"(group {GROUP}); choose another name"
            )
        roster[name] = lang
    return roster


def _groups_of(name: str) -> list[str]:
    return [g.gr_name for g in grp.getgrall() if name in g.gr_mem]


ROSTER_LANG = read_roster(ROSTER)

# -- the students' way to the course's Python  -----------------------------------------
# The students' servers run this tree's .venv as their own Unix users, so every
# directory on the way to it, to the Python it was made from (pyenv's lives under /root,
# 0700) and to rope_lib must let them pass. Where one does not, the class's group gets
# pass-through only (x, no listing) with an ACL; the teacher sees each one in the log.
if subprocess.run(["getent", "group", GROUP], capture_output=True).returncode:
    subprocess.run(["groupadd", GROUP], check=True)
for target in (Path(sys.executable).resolve(), BIN.resolve(), REPO):
    for folder in [*reversed(target.parents), target]:
        if folder.is_dir() and folder.stat().st_mode & 0o001 == 0:
            if not shutil.which("setfacl"):
                sys.exit(
                    f"The students cannot pass through {folder} to the course's "
                    "Python, and setfacl is missing to let them: apt-get install acl"
                )
            print(f"[rope-hub] group {GROUP} may pass through {folder} (setfacl g:x)")
            subprocess.run(["setfacl", "-m", f"g:{GROUP}:x", str(folder)], check=True)

# -- the hub  --------------------------------------------------------------------------
STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
IP = os.environ.get("ROPE_HUB_IP") or "127.0.0.1"
PORT = int(os.environ.get("ROPE_HUB_PORT") or 8000)
c.JupyterHub.bind_url = f"http://{IP}:{PORT}"
# the hub's own API and the proxy's API: the next two ports, on 127.0.0.1 only
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{PORT + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
# configurable-http-proxy from npm (hub/package.json; the Makefile runs npm ci)
c.ConfigurableHTTPProxy.command = [
    str(HERE / "node_modules/.bin/configurable-http-proxy")
]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

# -- who gets in  ----------------------------------------------------------------------
c.JupyterHub.authenticator_class = "native"
c.JupyterHub.template_paths = [
    str(Path(nativeauthenticator.__file__).parent / "templates")
]
c.Authenticator.allowed_users = set(ROSTER_LANG)
c.Authenticator.admin_users = {TEACHER}
c.NativeAuthenticator.minimum_password_length = 8
c.NativeAuthenticator.check_common_password = True
# after 5 wrong passwords in a row, a name is locked for 10 minutes
c.NativeAuthenticator.allowed_failed_logins = 5
c.NativeAuthenticator.seconds_before_next_try = 600

# -- the idle culler frees the memory of servers nobody uses  --------------------------
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [
            sys.executable,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={IDLE_TIMEOUT}",
        ],
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": [
            "list:users",
            "read:users:activity",
            "read:servers",
            "delete:servers",
        ],
        "services": ["idle-culler"],
    }
]

# -- each student's JupyterLab  --------------------------------------------------------
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab/tree/notebooks"
c.Spawner.environment = {
    # rope_lib from this tree; one thread per kernel (a class shares the cores)
    "PYTHONPATH": str(REPO),
    "OMP_NUM_THREADS": "1",
    "JUPYTER_CONFIG_PATH": str(REPO / "jupyter-config"),
}
# ROPE_HUB_SERVER_ARGS: more options for every student's server (the class test exposes
# JupyterLab's app object to the page with --LabApp.expose_app_in_browser=True)
c.Spawner.args = shlex.split(os.environ.get("ROPE_HUB_SERVER_ARGS", ""))
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120


def ensure_unix_user(name: str) -> pwd.struct_passwd:
    """The student's Unix account (created on first use, in GROUP), home 0700."""
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--create-home", "--shell", "/bin/bash", "-G", GROUP, name],
            check=True,
        )
        user = pwd.getpwnam(name)
    os.chmod(user.pw_dir, 0o700)
    return user


def copy_course(home: Path, uid: int, gid: int) -> Path:
    """Copy the notebooks (both editions, without teacher notes) and images into
    home/rope-notebooks, only the files the student does not have; returns that
    folder."""
    dest = home / "rope-notebooks"
    skip = {"teacher_notes", ".ipynb_checkpoints", "__pycache__"}
    for part in ("notebooks", "images"):
        for folder, dirs, files in os.walk(REPO / part):
            dirs[:] = [d for d in dirs if d not in skip]
            target = dest / Path(folder).relative_to(REPO)
            for path in [*reversed(target.relative_to(home).parents), target]:
                if not (home / path).exists():
                    (home / path).mkdir()
                    os.chown(home / path, uid, gid)
            for name in files:
                if not (target / name).exists():
                    shutil.copyfile(Path(folder) / name, target / name)
                    os.chown(target / name, uid, gid)
    return dest


def pre_spawn_hook(spawner):
    user = ensure_unix_user(spawner.user.name)
    folder = copy_course(Path(user.pw_dir), user.pw_uid, user.pw_gid)
    spawner.notebook_dir = str(folder)
    if ROSTER_LANG.get(spawner.user.name) == "zh":
        # JupyterLab's menus in Chinese (its zh-CN language pack) and the Chinese
        # edition
        spawner.environment = {
            **spawner.environment,
            "JUPYTER_CONFIG_PATH": str(REPO / "jupyter-config" / "zh"),
        }
        spawner.default_url = "/lab/tree/notebooks/zh"


c.Spawner.pre_spawn_hook = pre_spawn_hook
