"""nbgrader on the class machine, run so that a student's submission can harm nobody.

    python hub/grading.py [--as rope-grader] [--course-dir DIR] -- NBGRADER ARGS...
        (`make nbgrader CMD="autograde lesson03"`, as root)

runs `nbgrader ARGS` as the grading user (never root; made on first use, no login), in
the course directory, with umask 077, inside a sandbox (hub/sandbox.py) that shows it
the course's Python, this tree read-only, the course directory and the exchange. Every
kernel nbgrader starts there (autograde runs each submission in one) goes into a second
sandbox: no network, its notebook's folder read-only, nothing writable but the folder of
its Unix sockets (.grading/runtime, emptied at every run), neither the gradebook nor
anyone else's submission in sight, and a PID namespace of its own.

    python hub/grading.py kernel CONNECTION_FILE     that kernel (its kernelspec's argv)

StrictCollect, the exchange's collect step named in the course's nbgrader_config.py
(scripts/make_assignment.py): a submission whose folder belongs to another Unix user
than the student it names is refused (nbgrader only warns: `nbgrader submit --student
bob` run by alice would replace bob's submission).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pwd
import shutil
import stat
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
    """exec the kernel in its sandbox: the notebook's folder (its cwd) and its
    connection file read-only, the folder of its Unix sockets writable, no network,
    processes of its own (whatever it leaves ends with it). It can change nothing that
    nbgrader later reads or writes. (The connection file may lie in a shared folder,
    /tmp: only the file is shown.)"""
    info = json.loads(Path(connection_file).read_text())
    if info.get("transport") != "ipc":
        sys.exit(f"{connection_file}: a sandboxed kernel has no network: transport ipc")
    sockets = str(Path(info["ip"]).resolve().parent)
    kernel = [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file]
    cmd = sandbox.kernel_command(
        [sockets], kernel, chdir=os.getcwd(), readonly=[connection_file, os.getcwd()]
    )
    os.execv(cmd[0], cmd)


def grading_folder(course: Path, user: pwd.struct_passwd) -> Path:
    """course/.grading, root's (its kernelspec, which root writes), with runtime/ in it
    the grader's: the only place a kernel can write. Whatever was there is removed
    first, links included, never followed."""
    folder = course / ".grading"
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.exists():
        shutil.rmtree(folder)  # rmtree does not follow links
    folder.mkdir(mode=0o755)
    kernelspec(folder)
    runtime = folder / "runtime"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, user.pw_uid, user.pw_gid, follow_symlinks=False)
    return folder


def run_nbgrader(args: list[str], course: Path, grader: str, exchange: Path) -> int:
    user = ensure_grader(grader)
    # one run at a time: each run ends every process of the grader's when it is done
    lock = open(course / ".grading.lock", "a")  # noqa: SIM115 (held for the run)
    fcntl.flock(lock, fcntl.LOCK_EX)
    runtime = grading_folder(course, user)
    # the course's own nbgrader_config.py says the same, unless it predates these
    args = [
        *args,
        "--ExchangeFactory.collect=grading.StrictCollect",
        "--KernelManager.transport=ipc",
        f"--KernelManager.ip={runtime / 'runtime' / 'kernel'}",
    ]
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
        "PYTHONPATH": f"{HERE.parent}:{HERE}",
        "OMP_NUM_THREADS": "1",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    limits = sandbox.Limits()
    cgroups = sandbox.make_cgroup("rope-grading", grader, limits)
    try:
        return subprocess.run(
            cmd, env=env, preexec_fn=lambda: sandbox.enter_limits(cgroups, limits)
        ).returncode
    finally:  # nothing a submission started outlives the run
        sandbox.kill_uid(user.pw_uid)
        if args[:1] == ["release_assignment"]:
            sticky_inbound(exchange)
        lock.close()
        sandbox.remove_cgroups(
            list(sandbox.cgroup_dirs("rope-grading", grader).values())
        )


def sticky_inbound(exchange: Path, course_id: str = "rope-notebooks") -> None:
    """nbgrader makes inbound/ 2733 (anyone may add, nobody may list): add the sticky
    bit, so that no student can rename or remove another's submission."""
    inbound = exchange / course_id / "inbound"
    if inbound.is_dir() and not inbound.is_symlink():
        os.chmod(inbound, 0o3733)


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
    from nbgrader.utils import ignore_patterns
except ImportError:  # pragma: no cover
    ExchangeCollect = object


def refusal(path: str, student: str) -> str | None:
    """Why the submission folder `path` is not `student`'s own plain work, or None: it
    must be a folder of hers holding only folders and regular files of hers (a symlink
    would let collect copy whatever it points to: the solutions, the gradebook, another
    student's work), with nbgrader's submission_secret.txt."""
    try:
        uid = pwd.getpwnam(student).pw_uid
    except KeyError:
        return f"no Unix user {student!r}"
    entries = [path]
    for folder, dirs, files in os.walk(path):
        entries += [os.path.join(folder, n) for n in [*dirs, *files]]
    for entry in entries:
        info = os.lstat(entry)
        if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
            return f"{entry} is not a plain file or folder"
        if info.st_uid != uid:
            owner = pwd.getpwuid(info.st_uid).pw_name if info.st_uid else "root"
            return f"{entry} belongs to {owner}, not to {student}"
    if not os.path.isfile(os.path.join(path, "submission_secret.txt")):
        return "no submission_secret.txt (not made by nbgrader submit)"
    return None


def _copy_regular(src: str, dst: str) -> None:
    """Copy one regular file, never through a link nor from a pipe (copytree's
    copy_function: a file swapped for a link after the check is refused here)."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{src} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f, open(dst, "wb") as out:
            shutil.copyfileobj(f, out)
    finally:
        os.close(fd)


class StrictCollect(ExchangeCollect):
    """nbgrader's collect, refusing a submission that is not its student's own plain
    work (`refusal`), and copying without following links."""

    def _path_to_record(self, path):
        try:
            record = super()._path_to_record(path)
        except Exception as e:  # a folder a student named at will: not a submission
            self.log.error("Not collected: %s: %s", path, e)
            return {"username": "", "filename": os.path.basename(path),
                    "timestamp": datetime.min, "refused": True}  # fmt: skip
        try:
            why = refusal(path, record["username"]) if self.check_owner else None
        except (OSError, KeyError) as e:  # changed while it was read
            why = str(e)
        if why:
            self.log.error("Not collected: %s: %s", path, why)
            record["refused"] = True
            # never the newest: the student's own latest submission is the one chosen
            record["timestamp"] = datetime.min  # nbgrader's timestamps are naive UTC
        return record

    def copy_files(self):
        self.src_records = [r for r in self.src_records if not r.get("refused")]
        super().copy_files()

    def do_copy(self, src, dest, log=None):
        if not self.check_owner:
            return super().do_copy(src, dest, log)
        try:
            if os.path.islink(src):
                raise OSError(f"{src} is a link")
            if self.get_size(src) > 1000 * self.coursedir.max_dir_size:  # as nbgrader
                raise OSError(f"{src} is larger than {self.coursedir.max_dir_size} kB")
            shutil.copytree(
                src, dest, symlinks=True, copy_function=_copy_regular,
                ignore=ignore_patterns(exclude=self.coursedir.ignore,
                                       include=self.coursedir.include,
                                       max_file_size=self.coursedir.max_file_size,
                                       log=self.log),
            )  # fmt: skip
            links = [p for p in Path(dest).rglob("*") if p.is_symlink()]
            if links:
                raise OSError(f"{links[0]} is a link")
        except OSError as e:  # changed since the check: this submission is dropped
            self.log.error("Not collected: %s: %s", src, e)
            shutil.rmtree(dest, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
