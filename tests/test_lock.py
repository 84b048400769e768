"""The lock files (requirements/*.lock, made by `make lock` with pip-tools) hold
pyproject.toml's dependencies (and sbom.lock the image's SBOM tool alone): every dependency
the project declares is locked, at a version its range allows, with the hashes pip checks
(`--require-hashes`: make, .ci/run and the image install from them and refuse anything
else); the image's lock agrees with the tests' (the image built is the one tested); and
nothing of one machine is written in them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
RUNTIME, TEST = ROOT / "requirements" / "runtime.lock", ROOT / "requirements" / "test.lock"
SBOM = ROOT / "requirements" / "sbom.lock"  # the image's SBOM tool alone
_PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s\\]+)")


def pins(path: Path) -> dict[str, tuple[str, int]]:
    """Each locked package: (its version, how many hashes it has)."""
    out: dict[str, tuple[str, int]] = {}
    name = None
    for line in path.read_text().splitlines():
        found = _PIN.match(line)
        if found:
            name = canonicalize_name(found.group(1))
            out[name] = (found.group(2), 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            out[name] = (out[name][0], out[name][1] + 1)
    return out


def declared(extra: str | None = None) -> list[Requirement]:
    project = PYPROJECT["project"]
    listed = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return [Requirement(r) for r in listed]


@pytest.mark.parametrize(("lock", "requirements"), [
    (RUNTIME, declared()),
    (RUNTIME, [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]),
    (TEST, declared() + declared("test")),
    (TEST, [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]),
])
def test_every_declared_dependency_is_locked_within_its_range(lock, requirements):
    locked = pins(lock)
    for req in requirements:
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} is not in {lock.name}: run `make lock`"
        version = locked[name][0]
        assert req.specifier.contains(version, prereleases=True), (
            f"{lock.name} pins {name}=={version}, outside pyproject.toml's {req}: "
            f"run `make lock`")


def test_every_dependency_has_an_upper_bound():
    """The next major release of a dependency may break the service: each range stops
    before it (the lock pins within it)."""
    for req in declared() + declared("test"):
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), req


@pytest.mark.parametrize("lock", [RUNTIME, TEST, SBOM])
def test_every_pin_has_hashes_and_no_machine_is_named(lock):
    locked = pins(lock)
    assert locked
    assert all(count >= 1 for _, count in locked.values()), lock.name
    text = lock.read_text()
    for machine in ("file://", "/opt/", "/tmp/", "--index-url", "--find-links"):
        assert machine not in text, (lock.name, machine)


def test_the_image_installs_what_the_tests_ran_with():
    runtime, test = pins(RUNTIME), pins(TEST)
    for name, (version, _) in runtime.items():
        assert test.get(name, (None,))[0] == version, (name, version, test.get(name))


def test_the_sbom_tool_is_locked_as_the_tests_run_it():
    """requirements/sbom.lock (docker/build-sbom.sh installs it alone) pins the SBOM tool and
    what it needs at the test lock's versions, within pyproject.toml's range."""
    sbom, test = pins(SBOM), pins(TEST)
    assert "cyclonedx-bom" in sbom
    for name, (version, _) in sbom.items():
        assert test.get(name, (None,))[0] == version, (name, version, test.get(name))
