"""Test order for the deployment tests."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The container image test first (it sees every item of the session, like any
    collection hook): the longest piece of the run, building the image, starts at once on one
    xdist worker while the other works through the rest."""
    items.sort(key=lambda item: item.get_closest_marker("image") is None)
