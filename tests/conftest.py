"""Shared fixtures: the app from the factory and its test client."""

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
