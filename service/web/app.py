"""Application factory: `service.web.app:create_app()` (what gunicorn serves)."""

from __future__ import annotations

from flask import Flask

from ..advisor import Advisor
from ..config import Settings
from .api import register_api
from .ops import init_ops


def create_app(settings: Settings | None = None) -> Flask:
    """Build the Flask app from settings (the environment's unless given): the API, errors,
    the advisor (`app.extensions["advisor"]`), and the ops layer (/healthz, /readyz,
    /metrics, request ids, JSON logs, CORS)."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["MAX_BATCH_ITEMS"] = settings.max_batch_items
    app.config["MAX_BATCH_RULE_SETS"] = settings.max_batch_rule_sets
    app.config["MAX_BATCH_GAMES"] = settings.max_batch_games
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["advisor"] = Advisor(settings.advisor_table_dir,
                                        settings.advisor_cache_size, settings.advisor_threads)
    register_api(app)
    init_ops(app, settings)
    return app


def advisor_of(app: Flask) -> Advisor:
    """The advisor an app was built with."""
    return app.extensions["advisor"]
