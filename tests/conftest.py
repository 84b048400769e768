"""Shared fixtures (the app from the factory and its test client) and the test order."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.config import Settings


@pytest.fixture(scope="session")
def app():
    """The application with default settings."""
    return create_app(Settings())


@pytest.fixture()
def client(app):
    """A Flask test client."""
    return app.test_client()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The container image tests first: the longest piece of the run (building the image)
    starts at once on one xdist worker, while the other works through the rest."""
    items.sort(key=lambda item: item.get_closest_marker("image") is None)
