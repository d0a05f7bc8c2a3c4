"""The ways in agree: environment.yml lists what pyproject.toml asks for, at constraints.txt's versions."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def name_of(requirement: str) -> str:
    return re.split(r"[=<>\[ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += [r for r in extra if not r.startswith("rope-lib")]
    return {name_of(r): r for r in requirements}


def constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version.strip()
    return pins


def conda_pip_requirements() -> dict[str, str]:
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    return {name_of(r): r.split("==")[1] for r in pip if "==" in r}


def test_environment_yml_lists_the_pyproject_packages_at_the_pinned_versions():
    wanted, pins, conda = (
        pyproject_requirements(),
        constraints(),
        conda_pip_requirements(),
    )
    assert set(conda) == set(wanted)
    for name in wanted:
        assert conda[name] == pins[name], (
            f"{name}: environment.yml {conda[name]} != constraints.txt {pins[name]}"
        )


def test_torch_is_pinned_exactly_everywhere():
    # an open range pulls a CUDA build of several GB
    assert pyproject_requirements()["torch"] == "torch==2.13.0"
    assert constraints()["torch"] == "2.13.0"
    assert conda_pip_requirements()["torch"] == "2.13.0"


def test_every_pyproject_package_is_pinned_in_constraints():
    pins = constraints()
    assert [name for name in pyproject_requirements() if name not in pins] == []
