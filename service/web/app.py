"""Application factory: `service.web.app:create_app()` (what gunicorn serves)."""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

from flask import Flask

from ..compose import make_advisor, make_analyst
from ..config import Settings
from .api import register_api
from .auth import Authenticator
from .busy import register_busy_handlers
from .fast import ScoringFastPath
from .ops import init_ops
from .pages import pages
from .quotas import Quotas
from .tenancy import TenantMiddleware, register_quota_handlers


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
    the advisor and the analyst (`app.extensions["advisor"]`, `["analyst"]`: the one place
    they are made, `service.compose`), API keys and quotas (`tenancy`), the ops layer
    (/healthz, /readyz, /metrics, request ids, JSON logs, CORS), and the pages for people
    (/, /docs, /playground)."""
    settings = settings or Settings.from_env()
    app = ServiceFlask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["MAX_BATCH_ITEMS"] = settings.max_batch_items
    app.config["MAX_BATCH_RULE_SETS"] = settings.max_batch_rule_sets
    app.config["MAX_BATCH_GAMES"] = settings.max_batch_games
    app.config["AUTH"] = settings.auth
    app.json.sort_keys = False  # type: ignore[attr-defined]
    auth, quotas = Authenticator(settings), Quotas(settings)
    app.extensions["quotas"] = quotas
    advisor = make_advisor(settings, admit_build=quotas.admit_build)
    app.extensions["advisor"] = advisor
    app.extensions["analyst"] = make_analyst(settings, advisor)
    register_api(app)
    app.register_blueprint(pages)
    register_busy_handlers(app)
    register_quota_handlers(app)
    # the scoring endpoints' common case, without Flask's dispatch (inside the ops layer)
    app.wsgi_app = ScoringFastPath(app, app.wsgi_app)  # type: ignore[method-assign]
    # API keys and quotas, before any of the API (inside the ops layer)
    app.wsgi_app = TenantMiddleware(app.wsgi_app, settings, auth,  # type: ignore[method-assign]
                                    quotas)
    init_ops(app, settings)
    return app
