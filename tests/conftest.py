"""Shared fixtures: the app from the factory (its advisor writing tables to a temporary
directory and building them inside the request: no build process), its test client, and its
advisor."""

from __future__ import annotations

import os

import pytest

from service.config import Settings
from service.web.app import create_app
from service.web.extensions import advisor_of


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    """The application with default settings, but its own table directory and inline builds
    (the build process is tested in tests/advisor/test_background.py and tests/live)."""
    tables = tmp_path_factory.mktemp("app-tables")
    return create_app(Settings(advisor_table_dir=str(tables), advisor_builds="inline"))


@pytest.fixture()
def client(app):
    """A Flask test client."""
    return app.test_client()


@pytest.fixture(scope="session")
def advisor(app):
    """The app's advisor."""
    return advisor_of(app)


#: Tests that start real servers and load them: one xdist worker runs them one after the
#: other (`--dist=loadgroup`), so they neither slow each other down nor share the CPU with a
#: load test (the container steps start gunicorn within a time limit).
LIVE = ("tests/live/", "tests/deploy/test_container_steps.py", "tests/client/")
#: Tests that time probes and throughput against hostile clients: marked `timing`, which
#: `make test` runs after the rest, alone on the machine (beside the suite's other xdist
#: worker, a build or a fuzz run has stalled a probe past its timeout).
TIMING = ("tests/live/test_hostile_clients.py", "tests/live/test_tenant_flood.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the live-server tests in one xdist group; mark the timing ones."""
    for item in items:
        path = str(item.fspath).replace(os.sep, "/")
        if any(part in path for part in LIVE):
            item.add_marker(pytest.mark.xdist_group("live"))
        if any(part in path for part in TIMING):
            item.add_marker(pytest.mark.timing)
