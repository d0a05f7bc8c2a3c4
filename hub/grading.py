"""nbgrader on the class machine, run so that a student's submission can harm nobody.

    python hub/grading.py [--as rope-grader] [--course-dir DIR] -- NBGRADER ARGS...
        (`make nbgrader CMD="autograde lesson03"`, as root)

runs `nbgrader ARGS` as the grading user (never root; made on first use, no login), in
the course directory, with umask 077, inside a sandbox (hub/sandbox.py) that shows it
the course's Python, this tree read-only, the course directory and the exchange. Every
kernel nbgrader starts there (autograde runs each submission in one) goes into a second
sandbox: no network, the submission's own folder the only thing it can write, neither
the gradebook nor anyone else's submission in sight.

    python hub/grading.py kernel CONNECTION_FILE     that kernel (its kernelspec's argv)

StrictCollect, the exchange's collect step named in the course's nbgrader_config.py
(scripts/make_assignment.py): a submission whose folder belongs to another Unix user
than the student it names is refused (nbgrader only warns: `nbgrader submit --student
bob` run by alice would replace bob's submission).
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import subprocess
import sys
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sandbox  # noqa: E402

GRADER = "rope-grader"


def ensure_grader(name: str = GRADER) -> pwd.struct_passwd:
    """The grading user: a system account without a login or a home of its own."""
    if name == "root":
        raise ValueError("the grading user must not be root: it runs students' code")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/usr/sbin/nologin", "--user-group", name],
            check=True,
        )  # fmt: skip
        return pwd.getpwnam(name)


def kernelspec(folder: Path) -> Path:
    """A `python3` kernelspec in folder/kernels that starts each kernel sandboxed
    (found first through JUPYTER_PATH=folder)."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        "kernel",
        "{connection_file}",
    ]
    spec_json = {
        "argv": argv,
        "display_name": "Python 3 (sandboxed)",
        "language": "python",
    }
    (spec / "kernel.json").write_text(json.dumps(spec_json, indent=1))
    return folder


def run_kernel(connection_file: str) -> None:
    """exec the kernel in its sandbox: its folder (the notebook's, its cwd) and the
    folder of its Unix sockets writable, its connection file readable, no network.
    (The connection file itself may lie in a shared folder, /tmp: only the file is
    shown.)"""
    info = json.loads(Path(connection_file).read_text())
    if info.get("transport") != "ipc":
        sys.exit(f"{connection_file}: a sandboxed kernel has no network: transport ipc")
    sockets = str(Path(info["ip"]).resolve().parent)
    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file]
    cmd = sandbox.kernel_command(
        [os.getcwd(), sockets], kernel, chdir=os.getcwd(), readonly=[connection_file]
    )
    os.execv(cmd[0], cmd)


def run_nbgrader(args: list[str], course: Path, grader: str, exchange: Path) -> int:
    user = ensure_grader(grader)
    runtime = course / ".grading"
    kernelspec(runtime)
    for folder in (runtime, runtime / "runtime"):
        folder.mkdir(exist_ok=True)
        os.chown(folder, user.pw_uid, user.pw_gid)
    nbgrader = [str(Path(sys.executable).parent / "nbgrader"), *args]
    cmd = sandbox.server_command(
        user.pw_uid, user.pw_gid, course, ["/bin/sh", "-c", 'umask 077; exec "$@"',
                                           "nbgrader", *nbgrader],
        writable=[exchange] if exchange.is_dir() else [],
    )  # fmt: skip
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(course),
        "JUPYTER_PATH": str(runtime),
        "JUPYTER_RUNTIME_DIR": str(runtime / "runtime"),
        "PYTHONPATH": str(HERE.parent),
        "OMP_NUM_THREADS": "1",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    return subprocess.run(cmd, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["kernel"]:
        run_kernel(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--as", dest="grader", default=GRADER)
    parser.add_argument(
        "--course-dir", type=Path, default="/srv/nbgrader/rope-notebooks"
    )
    parser.add_argument("--exchange", type=Path, default="/srv/nbgrader/exchange")
    parser.add_argument("nbgrader", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    args = [a for a in opts.nbgrader if a != "--"]
    if os.geteuid() != 0:
        sys.exit("hub/grading.py runs nbgrader as the grading user: run it as root")
    return run_nbgrader(args, opts.course_dir.resolve(), opts.grader, opts.exchange)


try:  # the collect step needs nbgrader; the rest of this file does not
    from nbgrader.exchange.default import ExchangeCollect
except ImportError:  # pragma: no cover
    ExchangeCollect = object


class StrictCollect(ExchangeCollect):
    """nbgrader's collect, refusing a submission that is not its student's own."""

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        try:
            owner = pwd.getpwuid(os.stat(path).st_uid).pw_name
        except KeyError:
            owner = "an unknown uid"
        if self.check_owner and owner != record["username"]:
            self.log.error(
                "Not collected: %s names %s but was submitted by %s",
                path, record["username"], owner,
            )  # fmt: skip
            record["forged"] = True
            # never the newest: the student's own latest submission is the one chosen
            record["timestamp"] = datetime.min  # nbgrader's timestamps are naive UTC
        return record

    def copy_files(self):
        self.src_records = [r for r in self.src_records if not r.get("forged")]
        super().copy_files()


if __name__ == "__main__":
    sys.exit(main())
