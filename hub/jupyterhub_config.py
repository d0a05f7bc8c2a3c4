"""JupyterHub for a class on one server (`make hub`; README, "A class on one server").

Read by `jupyterhub -f hub/jupyterhub_config.py`, as root. The Makefile passes the
settings as environment variables (defaults in brackets):

    ROPE_HUB_ROSTER        the class roster: one student name a line, `name zh` for the
                           Chinese edition, `#` starts a comment   [hub/roster.txt]
    ROPE_HUB_TEACHER       the teacher's user name, the hub's admin    [teacher]
    ROPE_HUB_DOMAIN        the address students type; each student's server is served
                           on a subdomain of it (NAME.DOMAIN)      [localhost:PORT]
    ROPE_HUB_IP, _PORT     where the hub listens (its API and the proxy's: the next two
                           ports, on 127.0.0.1)                    [127.0.0.1, 8000]
    ROPE_HUB_STATE         the hub's database, cookie secret and the passwords issued
                                                                   [hub/state]
    ROPE_HUB_GROUP         the Unix group of the class's students  [rope-class]
    ROPE_HUB_EXCHANGE      nbgrader's exchange           [/srv/nbgrader/exchange]
    ROPE_HUB_MEMORY_GB, ROPE_HUB_PROCESSES   one student's limits  [3, 256]
    ROPE_HUB_IDLE_TIMEOUT  seconds without activity before a student's server is stopped
                           to free its memory                      [3600]

What keeps students apart (README, "What keeps students apart"): passwords the teacher
hands out (hub/accounts.py); each student a Unix user with a 0700 home, her server and
kernels in a sandbox with her own processes, /tmp and limits (hub/sandbox.py,
hub/spawner.py), her kernels talking over Unix sockets in her home, not TCP ports; her
server on a subdomain of its own, so that a page she serves cannot act in anyone else's
browser session; no user configuration of the server.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import nativeauthenticator  # noqa: E402
import sandbox  # noqa: E402
from accounts import NAME, ClassAuthenticator, read_roster  # noqa: E402
from spawner import ClassSpawner  # noqa: E402

c = get_config()  # noqa: F821 (defined by JupyterHub when it reads this file)

REPO = HERE.parent
ROSTER = Path(os.environ.get("ROPE_HUB_ROSTER") or HERE / "roster.txt")
TEACHER = os.environ.get("ROPE_HUB_TEACHER") or "teacher"
STATE = Path(os.environ.get("ROPE_HUB_STATE") or HERE / "state")
GROUP = os.environ.get("ROPE_HUB_GROUP") or "rope-class"
EXCHANGE = Path(os.environ.get("ROPE_HUB_EXCHANGE") or "/srv/nbgrader/exchange")
IDLE_TIMEOUT = int(os.environ.get("ROPE_HUB_IDLE_TIMEOUT") or 3600)
IP = os.environ.get("ROPE_HUB_IP") or "127.0.0.1"
PORT = int(os.environ.get("ROPE_HUB_PORT") or 8000)
DOMAIN = os.environ.get("ROPE_HUB_DOMAIN") or f"localhost:{PORT}"

if os.geteuid() != 0:
    sys.exit(
        "The class hub runs every student as a Unix user of their own, which needs "
        "root: run `make hub` as root (or with sudo)."
    )
if not NAME.fullmatch(TEACHER):
    sys.exit(f"TEACHER={TEACHER!r}: lower-case letters, digits or '-', from a letter")
ROSTER_LANG = read_roster(ROSTER, GROUP)
if subprocess.run(["getent", "group", GROUP], capture_output=True).returncode:
    subprocess.run(["groupadd", GROUP], check=True)
# nbgrader's exchange, with the course's folder made now (root's until `make assignment`
# gives it to the grader), so that no student can make it first
(EXCHANGE / "rope-notebooks").mkdir(parents=True, exist_ok=True)
os.chmod(EXCHANGE, 0o1777)

# -- the hub  --------------------------------------------------------------------------
STATE.mkdir(mode=0o700, parents=True, exist_ok=True)
c.JupyterHub.bind_url = f"http://{IP}:{PORT}"
# every student's server on a subdomain of its own (JupyterHub's advice for untrusted
# users): NAME.localhost:PORT here (browsers resolve *.localhost to this machine), or
# NAME.class.example.org behind a TLS proxy with a wildcard certificate (README)
scheme = "http" if DOMAIN.split(":")[0].endswith("localhost") else "https"
c.JupyterHub.subdomain_host = f"{scheme}://{DOMAIN}"
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
# a restart of the hub (to add a student to the roster) leaves the students' servers
# and kernels running; the teacher stops them at /hub/admin (Stop All)
c.JupyterHub.cleanup_servers = False

# -- who gets in  ----------------------------------------------------------------------
c.JupyterHub.authenticator_class = ClassAuthenticator
c.JupyterHub.template_paths = [
    str(Path(nativeauthenticator.__file__).parent / "templates")
]
c.ClassAuthenticator.passwords_file = str(STATE / "passwords.txt")
c.Authenticator.allowed_users = set(ROSTER_LANG)
c.Authenticator.admin_users = {TEACHER}
c.NativeAuthenticator.enable_signup = False
c.NativeAuthenticator.minimum_password_length = 8
c.NativeAuthenticator.check_common_password = True
# after 5 wrong passwords in a row, a student's name is locked for 10 minutes
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

# -- each student's JupyterLab, in her sandbox  ----------------------------------------
c.JupyterHub.spawner_class = ClassSpawner
c.ClassSpawner.group = GROUP
c.ClassSpawner.exchange = str(EXCHANGE)
c.ClassSpawner.limits = sandbox.Limits(
    memory=int(float(os.environ.get("ROPE_HUB_MEMORY_GB") or 3) * 2**30),
    processes=int(os.environ.get("ROPE_HUB_PROCESSES") or 256),
)
c.Spawner.default_url = "/lab/tree/notebooks"
c.Spawner.environment = {
    # rope_lib from this tree; one thread per kernel (a class shares the cores)
    "PYTHONPATH": str(REPO),
    "OMP_NUM_THREADS": "1",
    "JUPYTER_CONFIG_PATH": str(REPO / "jupyter-config"),
    "ROPE_NBGRADER_EXCHANGE": str(EXCHANGE),  # jupyter-config/nbgrader_config.py
}
# no ~/.jupyter configuration or extensions of the student's own in her server
c.Spawner.disable_user_config = True
c.Spawner.args = [
    # kernels over Unix sockets in the student's home, not TCP ports anyone could read
    "--KernelManager.transport=ipc",
    # her account has no login shell; her terminals run bash, inside her sandbox
    '--ServerApp.terminado_settings={"shell_command": ["/bin/bash", "-l"]}',
    # ROPE_HUB_SERVER_ARGS: more options (the class test exposes JupyterLab's app
    # object to its pages with --LabApp.expose_app_in_browser=True)
    *shlex.split(os.environ.get("ROPE_HUB_SERVER_ARGS", "")),
]
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120


def pre_spawn_hook(spawner):
    if ROSTER_LANG.get(spawner.user.name) == "zh":
        # JupyterLab's menus in Chinese (its zh-CN language pack) and the Chinese
        # edition
        spawner.environment = {
            **spawner.environment,
            "JUPYTER_CONFIG_PATH": str(REPO / "jupyter-config" / "zh"),
        }
        spawner.default_url = "/lab/tree/notebooks/zh"


c.Spawner.pre_spawn_hook = pre_spawn_hook
