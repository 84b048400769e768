"""Application factory: `service.web.app:create_app()` (what gunicorn serves)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import MethodType
from typing import Any

from flask import Flask

from ..advisor import Advisor
from ..advisor.tables.build_process import BuildQueue, BuildSettings, default_build_dir
from ..config import Settings
from .api import register_api
from .busy import register_busy_handlers
from .fast import ScoringFastPath
from .ops import init_ops
from .pages import pages


class ServiceFlask(Flask):
    """Flask, with `ensure_sync`'s answer remembered per function: Flask asks it of every view
    on every request (MethodView's bound methods, made anew each time, included), and each
    answer costs an inspection of the function, a measurable share of a scoring request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._is_async: dict[Callable[..., Any], bool] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        """`func` itself when it is a plain function (or method), else Flask's sync wrapper."""
        key = func.__func__ if type(func) is MethodType else func
        is_async = self._is_async.get(key)
        if is_async is None:
            is_async = self._is_async[key] = super().ensure_sync(func) is not func
        return super().ensure_sync(func) if is_async else func


def create_app(settings: Settings | None = None) -> Flask:
    """Build the Flask app from settings (the environment's unless given): the API, errors,
    the advisor (`app.extensions["advisor"]`), and the ops layer (/healthz, /readyz,
    /metrics, request ids, JSON logs, CORS), and the pages for people (/, /docs, /playground)."""
    settings = settings or Settings.from_env()
    app = ServiceFlask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["MAX_BATCH_ITEMS"] = settings.max_batch_items
    app.config["MAX_BATCH_RULE_SETS"] = settings.max_batch_rule_sets
    app.config["MAX_BATCH_GAMES"] = settings.max_batch_games
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["advisor"] = make_advisor(settings)
    register_api(app)
    app.register_blueprint(pages)
    register_busy_handlers(app)
    # the scoring endpoints' common case, without Flask's dispatch (inside the ops layer)
    app.wsgi_app = ScoringFastPath(app, app.wsgi_app)  # type: ignore[method-assign]
    init_ops(app, settings)
    return app


def make_advisor(settings: Settings) -> Advisor:
    """The advisor the settings describe: its tables, cache and (background) builds."""
    builds = None
    if settings.advisor_builds == "background":
        build_dir = (Path(settings.advisor_build_dir) if settings.advisor_build_dir
                     else default_build_dir(settings.advisor_table_dir))
        builds = BuildQueue(BuildSettings(
            directory=build_dir, table_dir=Path(settings.advisor_table_dir),
            max_queue=settings.advisor_build_queue,
            per_client=settings.advisor_build_queue_per_client,
            keep=settings.advisor_cache_size, keep_mib=settings.advisor_cache_mib,
            nice=settings.advisor_build_nice,
            threads=settings.advisor_threads))
    return Advisor(settings.advisor_table_dir, settings.advisor_cache_size,
                   settings.advisor_threads, builds, settings.advisor_build_wait)


def advisor_of(app: Flask) -> Advisor:
    """The advisor an app was built with."""
    return app.extensions["advisor"]
