"""Who is in the class: the roster, each student's Unix account and first password.

The teacher issues the passwords: at every start the hub gives each roster name (and the
teacher) that has none yet a random one, written to STATE/passwords.txt (0600, root's),
for the teacher to hand out; there is no sign-up page, so nobody can take a roster name
first. A student changes hers at /hub/change-password; the teacher resets a forgotten
one at /hub/change-password/NAME (which also lifts a lock on it).

Wrong passwords: after 5 in a row a student's name is locked for 10 minutes, then
cleared (NativeAuthenticator kept counting, so one wrong try every 10 minutes kept a
name locked for good). The teacher's name is never locked, so nobody can lock the
teacher out: past 5 wrong tries in a row, each wrong try for it is answered after 2 s
(the right password at once, whatever else is waiting), and a password the teacher
chooses is at least 14 characters, which keeps guessing hopeless.
"""

from __future__ import annotations

import asyncio
import grp
import os
import pwd
import re
import secrets
import subprocess
from datetime import datetime
from pathlib import Path

import bcrypt
from nativeauthenticator import NativeAuthenticator
from nativeauthenticator.orm import UserInfo
from traitlets import Unicode

# a Unix user name that is also a DNS label (each student's server has a subdomain):
# lower-case letters, digits and '-', starting with a letter, at most 32
NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
# letters and digits that cannot be misread (no 0/o, 1/l/i)
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
TEACHER_WAIT = 2.0  # seconds per wrong try for the teacher's name past 5 in a row
TEACHER_LENGTH = 14  # the teacher's own password: at least this long


def new_password() -> str:
    """Twelve random characters in three groups: 'k3mq-7tzx-a9fe' (about 59 bits)."""
    chars = "".join(secrets.choice(ALPHABET) for _ in range(12))
    return "-".join(chars[i : i + 4] for i in range(0, 12, 4))


def groups_of(name: str) -> list[str]:
    return [g.gr_name for g in grp.getgrall() if name in g.gr_mem]


def not_a_class_account(name: str, group: str) -> str | None:
    """Why `name` must not be given to a student (an existing account of this machine
    that the hub did not make: root, daemon, www-data...), or None."""
    try:
        existing = pwd.getpwnam(name)
    except KeyError:
        return None
    if group in groups_of(name) and existing.pw_uid >= 1000:
        return None
    return (
        f"{name!r} is already a Unix account of this machine (uid {existing.pw_uid}) "
        f"that is not one of the class (group {group})"
    )


def read_roster(path: Path, group: str) -> dict[str, str]:
    """{name: 'en' or 'zh'} from the roster file: one name a line, `name zh` for the
    Chinese edition, `#` starts a comment. Exits with the line that is wrong."""
    if not path.is_file():
        raise SystemExit(
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
            raise SystemExit(
                f"{path}:{number}: expected `name` or `name zh` with a name of "
                "lower-case letters, digits or '-', starting with a letter (at most "
                f"32), got {line.strip()!r}"
            )
        if why := not_a_class_account(name, group):
            raise SystemExit(f"{path}:{number}: {why}; choose another name")
        roster[name] = lang
    return roster


def ensure_unix_user(name: str, group: str) -> pwd.struct_passwd:
    """The student's Unix account, made on first use in `group`, home 0700. Refuses a
    name that is an account of the machine outside the class."""
    if why := not_a_class_account(name, group):
        raise PermissionError(f"no server for {name}: {why}")
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            # no login shell: nothing (sshd, a mail pipe) runs as her outside her
            # sandbox; JupyterLab's terminals start bash themselves (the spawner's args)
            [
                "useradd",
                "--create-home",
                "--shell",
                "/usr/sbin/nologin",
                "-G",
                group,
                name,
            ],
            check=True,
        )
        user = pwd.getpwnam(name)
    os.chmod(user.pw_dir, 0o700)
    return user


class ClassAuthenticator(NativeAuthenticator):
    """NativeAuthenticator with teacher-issued passwords and a lock that cannot be
    turned against the teacher (see the module's docstring)."""

    passwords_file = Unicode(
        "passwords.txt", help="where new passwords are written (0600)"
    ).tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.issue_passwords()

    def issue_passwords(self) -> list[str]:
        """Give every allowed name and admin without a password a new one; append them
        to passwords_file (0600). Returns the names."""
        issued = []
        for name in sorted({*self.allowed_users, *self.admin_users}):
            if self.get_user(name) is None:
                password = new_password()
                hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt())
                self.db.add(
                    UserInfo(username=name, password=hashed, is_authorized=True)
                )
                issued.append(f"{name} {password}\n")
        if not issued:
            return []
        # the file first: a password never written down must not be in the database
        fd = os.open(self.passwords_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as f:
            f.writelines(issued)
        self.db.commit()
        self.log.info(
            "[rope-hub] %d new password(s) in %s: hand each to its student",
            len(issued),
            self.passwords_file,
        )
        return [line.split()[0] for line in issued]

    def is_blocked(self, username):
        if username in self.admin_users:
            return False  # slowed down instead (authenticate)
        tries = self.login_attempts.get(username)
        if tries and (datetime.now() - tries["time"]).total_seconds() > (
            self.seconds_before_next_try
        ):
            self.login_attempts.pop(username)  # the lock is over: count from zero
        return super().is_blocked(username)

    async def authenticate(self, handler, data):
        name = self.normalize_username(data["username"])
        user = await super().authenticate(handler, data)
        failures = self.login_attempts.get(name, {}).get("count", 0)
        if (
            user is None
            and name in self.admin_users
            and failures > self.allowed_failed_logins
        ):
            await asyncio.sleep(
                TEACHER_WAIT
            )  # each wrong try, not the right one, waits
        return user

    def change_password(self, username, new_password):
        if username in self.admin_users and len(new_password) < TEACHER_LENGTH:
            return None  # the teacher's name is never locked: a long password instead
        done = super().change_password(username, new_password)
        if done:
            self.login_attempts.pop(username, None)
        return done
