"""A student's server starts here: as the student, inside her sandbox (hub/sandbox.py).

    python hub/student_start.py COMMAND...

Copies into ~/rope-notebooks the course's files she does not have yet (notebooks/, both
editions, without the teacher notes, and images/), never touching one she has, then
becomes COMMAND (jupyterhub-singleuser) in that folder: its kernels start there, and
nbgrader's Fetch puts an assignment there, inside what JupyterLab shows.

It runs with the student's uid only, so whatever she left in her home (a symlink to
/etc...) can lead the copy nowhere she could not write herself.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP = {"teacher_notes", ".ipynb_checkpoints", "__pycache__"}


def copy_course(dest: Path) -> None:
    for part in ("notebooks", "images"):
        for folder, dirs, files in os.walk(REPO / part):
            dirs[:] = [d for d in dirs if d not in SKIP]
            target = dest / Path(folder).relative_to(REPO)
            target.mkdir(parents=True, exist_ok=True)
            for name in files:
                if not os.path.lexists(target / name):
                    shutil.copyfile(Path(folder) / name, target / name)


def main(argv: list[str]) -> None:
    if os.geteuid() == 0:
        sys.exit("hub/student_start.py runs as the student, never as root")
    dest = Path.home() / "rope-notebooks"
    try:
        copy_course(dest)
    except OSError as e:  # a file of hers where a folder goes: her server starts anyway
        print(f"[rope-hub] the course was not copied whole: {e}", file=sys.stderr)
    os.chdir(dest if dest.is_dir() else Path.home())
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
