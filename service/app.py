"""Application factory: `service.app:create_app()` (what gunicorn serves)."""

from __future__ import annotations

from flask import Flask

from .api import register_api
from .config import Settings
from .ops import init_ops


def create_app(settings: Settings | None = None) -> Flask:
    """Build the Flask app: settings from the environment unless given, the API, errors,
    and the ops layer (/healthz, /readyz, /metrics, request ids, JSON logs, CORS)."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.config["SETTINGS"] = settings
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["MAX_BATCH_ITEMS"] = settings.max_batch_items
    app.json.sort_keys = False  # type: ignore[attr-defined]
    register_api(app)
    init_ops(app, settings)
    return app
