"""Application factory: `service.app:create_app()` (what gunicorn serves)."""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import Any

from flask import Flask

from .api import register_api
from .config import Settings
from .ops import init_ops


class ServiceFlask(Flask):
    """Flask, with `ensure_sync` remembered for plain functions.

    Flask asks `ensure_sync` of every hook and view on every request, and each answer is an
    `inspect` call; hooks and views are fixed once the app is built. (Bound methods, made
    anew per request by MethodView, are passed through uncached.)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sync_cache: dict[Callable[..., Any], Callable[..., Any]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """The sync form of `func`, cached for plain functions."""
        sync = self._sync_cache.get(func)
        if sync is None:
            sync = super().ensure_sync(func)
            if type(func) is FunctionType:
                self._sync_cache[func] = sync
        return sync


def create_app(settings: Settings | None = None) -> Flask:
    """Build the Flask app: settings from the environment unless given, the API, errors,
    and the ops layer (/healthz, /readyz, /metrics, request ids, JSON logs, CORS)."""
    settings = settings or Settings.from_env()
    app = ServiceFlask(__name__)
    app.config["SETTINGS"] = settings
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["MAX_BATCH_ITEMS"] = settings.max_batch_items
    app.config["MAX_BATCH_RULE_SETS"] = settings.max_batch_rule_sets
    app.json.sort_keys = False  # type: ignore[attr-defined]
    register_api(app)
    init_ops(app, settings)
    return app
