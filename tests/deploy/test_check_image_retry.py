"""The image check's retry decision (scripts/check_image.py), without buildah: a build that
failed on a busy resource in buildah or its storage is run once more and the report says so;
any other failure, or a second transient one, is final."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_image.py"


@pytest.fixture(scope="module")
def check_image() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_image", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


# The failure seen on a fresh clone, at the first RUN of the runtime stage (a rerun passed).
MEMFD = """STEP 12/20: RUN groupadd --system --gid 10001 app
Close_Fd sealing memfd copy: Device or resource busy
error building at STEP "RUN groupadd --system --gid 10001 app": exit status 1
"""

TRANSIENT = [
    MEMFD,
    'Error: creating build container: mounting layer: device or resource busy\n',
    'ERRO[0003] unmounting "/var/lib/containers/storage/overlay/ab/merged": '
    'device or resource busy\n',
    'time="2026-12-03T10:00:00Z" level=error msg="removing layer: EBUSY"\n',
    'error committing container for step {Env:[...]}: copying layers: '
    'device or resource busy\n',
]

REAL = [
    # a command of the Dockerfile failed: the build's own failure
    'STEP 5/20: RUN docker/build-venv.sh\nERROR: No matching distribution found for flask\n'
    'error building at STEP "RUN docker/build-venv.sh": exit status 1\n',
    # a busy resource met by a RUN's own command (pip, python) is that command's failure
    'ERROR: Could not install packages due to an OSError: [Errno 16] Device or resource busy\n'
    'error building at STEP "RUN docker/build-venv.sh": exit status 1\n',
    "OSError: [Errno 16] Device or resource busy: '/app/tables'\n"
    'error building at STEP "RUN docker/build-tables.sh": exit status 1\n',
    'Error: no FROM statement found\n',
    'Error: creating build container: image not known\n',
    "",
]


@pytest.mark.parametrize("output", TRANSIENT)
def test_busy_resources_of_buildah_and_its_storage_are_transient(check_image, output):
    reason = check_image.transient_build_failure(output)
    assert reason and "busy" in reason.lower() and reason in output  # the line, for the report


@pytest.mark.parametrize("output", REAL)
def test_other_failures_are_not_transient(check_image, output):
    assert check_image.transient_build_failure(output) is None


def _runs(check_image, *results: tuple[int, str]):
    """An `attempt` that answers `results` in turn, and the list of calls made."""
    calls: list[int] = []

    def attempt():
        status, output = results[len(calls)]
        calls.append(status)
        return check_image.Attempt(status, output, 1.5)

    return attempt, calls


def test_a_transient_failure_is_retried_once_and_reported(check_image):
    attempt, calls = _runs(check_image, (1, MEMFD), (0, "COMMIT localhost/yahtzee-scoring:check\n"))
    result, retried = check_image.with_one_retry(attempt)
    assert calls == [1, 0] and result.exit_status == 0
    assert retried == [{"exit_status": 1, "seconds": 1.5,
                        "reason": "Close_Fd sealing memfd copy: Device or resource busy"}]


def test_a_second_transient_failure_is_final(check_image):
    attempt, calls = _runs(check_image, (1, MEMFD), (1, MEMFD), (0, ""))
    result, retried = check_image.with_one_retry(attempt)
    assert calls == [1, 1] and result.exit_status == 1 and len(retried) == 1


@pytest.mark.parametrize("output", REAL[:2])
def test_a_real_failure_is_not_retried(check_image, output):
    attempt, calls = _runs(check_image, (1, output), (0, ""))
    result, retried = check_image.with_one_retry(attempt)
    assert calls == [1] and result.exit_status == 1 and retried == []


def test_a_success_is_run_once(check_image):
    attempt, calls = _runs(check_image, (0, MEMFD))  # busy lines in a passing build's log
    result, retried = check_image.with_one_retry(attempt)
    assert calls == [0] and result.exit_status == 0 and retried == []
