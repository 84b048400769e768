"""Live-server tests: the real service under gunicorn (the project's gunicorn.conf.py) on a
free loopback port, driven by clients in this process. They run one after the other on one
pytest-xdist worker (group "live", see tests/conftest.py), so they do not load the machine
together.

Throughput targets are checked as ratios measured in the same test (the machine is shared and
noisy); each test bounds its own time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .server import ROOT, Server


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every built-in variant's tables, built once for all live servers."""
    directory = tmp_path_factory.mktemp("live-tables")
    subprocess.run([sys.executable, "-m", "service.advisor", "build"], cwd=ROOT, check=True,
                   timeout=600, stdout=subprocess.DEVNULL,
                   env={**os.environ, "ADVISOR_TABLE_DIR": str(directory),
                        "PYTHONPATH": str(ROOT)})
    return directory


@pytest.fixture(scope="module")
def server(tables: Path):
    """A server as the chart runs it (2 workers, every table warm), for a module's tests."""
    with Server(table_dir=tables) as srv:
        yield srv
