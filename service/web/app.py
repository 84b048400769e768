"""Application factory: `service.web.app:create_app()` (what gunicorn serves)."""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any

from flask import Flask

from ..compose import make_advisor, make_analyst, make_warmup
from ..config import Settings
from .adapters import RoutedRequestContext
from .api import register_api
from .auth import Authenticator
from .body import OrjsonProvider
from .busy import register_busy_handlers
from .compression import register_compression
from .fairshare import FairShare
from .fast import ScoringFastPath
from .frontdoor import FrontDoor, Router, register_quota_handlers
from .ops import OpsMiddleware, init_ops
from .pages import pages
from .quotas import Quotas


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

    def request_context(self, environ: dict[str, Any]) -> RoutedRequestContext:
        """A request context that takes the front door's route (`RoutedRequestContext`)."""
        return RoutedRequestContext(self, environ)


def create_app(settings: Settings | None = None) -> Flask:
    """Build the Flask app from settings (the environment's unless given): the API, errors,
    the advisor, the analyst and their start (`app.extensions["advisor"]`, `["analyst"]`,
    `["warmup"]`: the one place they are made, `service.compose`), API keys, quotas and
    fair share (`frontdoor`), the ops layer (/healthz, /readyz, /metrics, request ids, JSON
    logs, CORS), and the pages for people
    (/, /docs, /playground). The WSGI layers, outermost first: ops, the front door (one
    route, one identity, quotas and fair share per request), the scoring fast path, Flask."""
    settings = settings or Settings.from_env()
    app = ServiceFlask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.config["MAX_BATCH_ITEMS"] = settings.max_batch_items
    app.config["MAX_BATCH_RULE_SETS"] = settings.max_batch_rule_sets
    app.config["MAX_BATCH_GAMES"] = settings.max_batch_games
    app.config["AUTH"] = settings.auth
    app.json = OrjsonProvider(app)
    auth, quotas = Authenticator(settings), Quotas(settings)
    app.extensions["quotas"] = quotas
    advisor = make_advisor(settings, admit_build=quotas.admit_build)
    app.extensions["advisor"] = advisor
    analyst = app.extensions["analyst"] = make_analyst(settings, advisor)
    app.extensions["warmup"] = make_warmup(settings, advisor, analyst)
    register_api(app)
    app.register_blueprint(pages)
    register_busy_handlers(app)
    register_compression(app)
    register_quota_handlers(app)
    init_ops(app, settings)
    router = Router(app)  # the one reading of a request's route, for every layer
    fair = FairShare(settings.in_flight_per_worker, settings.tenant_in_flight_wait)
    # The pipeline, in the order a request meets it; Flask (the API, errors, pages) last.
    app.wsgi_app, app.extensions["pipeline"] = pipeline(  # type: ignore[method-assign]
        # request id, CORS and preflight, metrics, the access log
        lambda inner: OpsMiddleware(inner, settings, router),
        # who is calling, quotas and fair share, before any of the API
        lambda inner: FrontDoor(inner, router, auth, quotas, fair),
        # the scoring endpoints' common case, without Flask's dispatch
        lambda inner: ScoringFastPath(app, inner, router),
        app=app.wsgi_app)
    return app


def pipeline(*layers: Callable[[Any], Any], app: Any) -> tuple[Any, tuple[Any, ...]]:
    """The WSGI app of `layers` around `app`, the first the outermost, and the middleware
    objects the layers made, outermost first (`app.extensions["pipeline"]`: where tests and
    the benchmark find them). Each layer is called with what it wraps (the layers after it,
    then `app`) and returns a WSGI middleware object.

    What a layer wraps, and what the pipeline answers, is the next object's bound
    `__call__`, not the object: CPython 3.11 runs a call of a bound method of a Python
    function in the caller's own loop of the interpreter, while a call of an object goes
    through its type's call slot, which nests another loop on the C stack. Each greenlet
    switch in a request (the fair share's turn, `fairshare.take_turn`, before the
    request runs) copies that greenlet's C stack out and back in: measured under
    cachegrind, a turn cost some 99,000 instructions through nested objects and 22,000
    through bound methods (a whole scoring request, some 1,030,000)."""
    made: list[Any] = []
    for layer in reversed(layers):
        made.append(layer(app))
        app = made[-1].__call__
    return app, tuple(reversed(made))
