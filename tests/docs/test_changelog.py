"""The CHANGELOG has versions, newest first, the latest being the version the service runs
(`GET /healthz`, the spec's `info.version`, the package, the chart's appVersion) and the one
the docs build and deploy."""

from __future__ import annotations

import re
import tomllib

import yaml

from service import __version__

from .examples import DOCUMENTS, ROOT

_VERSION = re.compile(r"^## (\d+)\.(\d+)\.(\d+) - (\d{4}-\d{2}-\d{2})$", re.M)
_KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def versions() -> list[tuple[tuple[int, int, int], str]]:
    """The CHANGELOG's versions, as written: ((major, minor, patch), date)."""
    return [((int(a), int(b), int(c)), date)
            for a, b, c, date in _VERSION.findall((ROOT / "CHANGELOG.md").read_text())]


def test_versions_newest_first():
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[0] == "Unreleased" or _VERSION.match(f"## {headings[0]}")
    assert all(_VERSION.match(f"## {h}") for h in headings[1:]), headings
    found = versions()
    assert len(found) >= 2
    assert found == sorted(found, reverse=True), "versions and dates go newest first"
    for kind in re.findall(r"^### (.+)$", text, re.M):
        assert kind in _KINDS, f"### {kind}: a Keep a Changelog kind is one of {_KINDS}"


def test_the_latest_version_is_the_one_that_runs():
    (major, minor, patch), _ = versions()[0]
    latest = f"{major}.{minor}.{patch}"
    chart = yaml.safe_load((ROOT / "helm/yahtzee-scoring/Chart.yaml").read_text())
    package = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    spec = (ROOT / "openapi/openapi.json").read_text()
    assert __version__ == package == chart["appVersion"] == latest
    assert f'"version": "{latest}"' in spec


def test_the_docs_build_and_deploy_the_latest_version():
    """Every image tag the docs and the Dockerfile show is the version that runs."""
    tags = {}
    for name in (*DOCUMENTS, "Dockerfile"):
        text = (ROOT / name).read_text()
        tags[name] = set(re.findall(r"yahtzee-scoring:(\d+\.\d+\.\d+)", text)) | set(
            re.findall(r"image\.tag=(\d+\.\d+\.\d+)", text))
    wrong = {name: found for name, found in tags.items() if found - {__version__}}
    assert not wrong, f"image tags other than {__version__}: {wrong}"
