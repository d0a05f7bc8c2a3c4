"""Each student's JupyterLab, in a sandbox of her own (hub/sandbox.py).

ClassSpawner is JupyterHub's LocalProcessSpawner with three changes:
- the command is bwrap (as root) -> setpriv (the student's uid) -> hub/student_start.py
  (copies the course as the student) -> jupyterhub-singleuser;
- before that command starts, the forked child joins the student's cgroup and takes her
  rlimits, so everything in the sandbox is inside the limits;
- stopping a server also ends every process the student left (a `setsid` one included)
  and removes her cgroup.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import sys
from pathlib import Path

import sandbox
from accounts import ensure_unix_user
from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Instance, Unicode

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


class ClassSpawner(LocalProcessSpawner):
    group = Unicode("rope-class", help="the students' Unix group").tag(config=True)
    exchange = Unicode("", help="nbgrader's exchange (read-write in the sandbox)").tag(
        config=True
    )
    limits = Instance(sandbox.Limits, args=()).tag(config=True)

    def sandboxed_cmd(self) -> list[str]:
        user = ensure_unix_user(self.user.name, self.group)
        inner = [
            sys.executable,
            str(HERE / "student_start.py"),
            str(BIN / "jupyterhub-singleuser"),
        ]
        writable = (
            [self.exchange] if self.exchange and os.path.isdir(self.exchange) else []
        )
        return sandbox.server_command(
            user.pw_uid, user.pw_gid, Path(user.pw_dir), inner, writable=writable
        )

    async def start(self):
        self.cmd = await asyncio.to_thread(self.sandboxed_cmd)
        self.notebook_dir = str(
            Path(pwd.getpwnam(self.user.name).pw_dir) / "rope-notebooks"
        )
        return await super().start()

    def make_preexec_fn(self, name):
        cgroups = sandbox.make_cgroup(self.group, name, self.limits)
        limits = self.limits

        def preexec():  # in the child, as root, before bwrap
            sandbox.enter_limits(cgroups, limits)
            os.chdir("/")

        return preexec

    async def stop(self, now=False):
        await super().stop(now=now)
        try:
            uid = pwd.getpwnam(self.user.name).pw_uid
        except KeyError:
            return
        killed = await asyncio.to_thread(sandbox.kill_uid, uid)
        if killed:
            self.log.info(
                "[rope-hub] %s: %d leftover process(es) ended", self.user.name, killed
            )
        folders = sandbox.cgroup_dirs(self.group, self.user.name).values()
        await asyncio.to_thread(sandbox.remove_cgroups, list(folders))
