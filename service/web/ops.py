"""Operations: health, readiness, metrics, request ids, JSON logs and CORS.

One entry point, `init_ops(app, settings)`, which the application factory calls. The ops
endpoints live on a plain Flask blueprint, outside `/v1` and outside the OpenAPI document:

    GET /healthz   200 while the process can answer at all (liveness)
    GET /readyz    200 once the advisor's tables are loaded, else 503 (readiness); 503 again
                   once the worker was told to stop (SIGTERM: draining, see
                   `service.web.worker`)
    GET /metrics   Prometheus text format; adds up every gunicorn worker when
                   PROMETHEUS_MULTIPROC_DIR is set (gunicorn.conf.py sets it)

Every response carries X-Request-ID: the caller's, when it is 1-128 characters of
[A-Za-z0-9._-], else a fresh uuid4 hex. Log lines written while handling a request carry it.
"""

from __future__ import annotations

import logging
import os
import re
import time
import uuid
from typing import Any

from flask import Blueprint, Flask, Response, abort, current_app, g, jsonify, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from .. import __version__
from ..config import Settings
from ..logs import configure_logging

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,128}")

#: Methods a browser may use cross-origin (the API's; preflight answers with this list).
CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"

# Metrics are module-level: prometheus-client keeps one registry per process, and several
# apps in one process (tests) must share them rather than register them twice. In
# multiprocess mode each worker writes them to files in PROMETHEUS_MULTIPROC_DIR.
REQUESTS = Counter(
    "http_requests_total",
    "HTTP requests answered, by method, endpoint template and status.",
    ["method", "endpoint", "status"],
)
LATENCY = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by method, endpoint template and status.",
    ["method", "endpoint", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
IN_PROGRESS = Gauge(
    "http_requests_in_progress",
    "HTTP requests being answered now.",
    multiprocess_mode="livesum",
)

ops_blueprint = Blueprint("ops", __name__)

# Set in a worker told to stop (SIGTERM) while it still answers: readiness fails first.
_draining = False


def start_draining() -> None:
    """From now on /readyz answers 503 in this process (the server is stopping)."""
    global _draining
    _draining = True


def draining() -> bool:
    """Whether this process was told to stop."""
    return _draining


def valid_request_id(value: str | None) -> bool:
    """Whether a caller's X-Request-ID may be reused: 1-128 of [A-Za-z0-9._-]."""
    return value is not None and _REQUEST_ID_RE.fullmatch(value) is not None


def _advisor_status() -> tuple[bool, Any]:
    """(ready, detail): the advisor's per-variant table status."""
    try:
        tables = current_app.extensions["advisor"].status()
    except Exception as exc:  # readiness must answer, whatever the advisor does
        log.exception("advisor status failed")
        return False, f"error: {type(exc).__name__}"
    return all(tables.values()), tables


@ops_blueprint.get("/healthz")
def healthz() -> Response:
    """Liveness: the process is up and answering. Checks nothing else, on purpose."""
    return jsonify(status="ok", version=__version__)


@ops_blueprint.get("/readyz")
def readyz() -> tuple[Response, int]:
    """Readiness: 200 once the advisor's built-in tables are loaded, else 503; 503 while
    the server is stopping."""
    ready, advisor = _advisor_status()
    if _draining:
        return jsonify(status="draining", advisor=advisor), 503
    body = jsonify(status="ready" if ready else "not ready", advisor=advisor)
    return body, 200 if ready else 503


@ops_blueprint.get("/metrics")
def metrics() -> Response:
    """Prometheus exposition; in multiprocess mode, the sum over every worker's files."""
    if not current_app.extensions["ops"]["settings"].metrics_enabled:
        abort(404)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    # content_type, not mimetype: CONTENT_TYPE_LATEST names its charset already
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


def _origin_allowed(origin: str, allowed: tuple[str, ...]) -> bool:
    return "*" in allowed or origin in allowed


def _start_request() -> Response | None:
    # This runs on every request: each proxy (request, g, current_app) is resolved once.
    req = request._get_current_object()
    ctx_g = g._get_current_object()
    headers = req.headers
    incoming = headers.get(REQUEST_ID_HEADER)
    ctx_g.request_id = incoming if valid_request_id(incoming) else uuid.uuid4().hex
    ctx_g.ops_started = time.perf_counter()
    settings: Settings = current_app.extensions["ops"]["settings"]
    if settings.metrics_enabled:
        IN_PROGRESS.inc()
        ctx_g.ops_in_progress = True
    # CORS preflight: answer it here, before routing (the route may not allow OPTIONS).
    if req.method != "OPTIONS":
        return None
    origin = headers.get("Origin")
    if origin and headers.get("Access-Control-Request-Method"):
        response = current_app.make_response(("", 204))
        if _origin_allowed(origin, settings.cors_origins):
            response.headers["Access-Control-Allow-Origin"] = (
                "*" if settings.cors_origins == ("*",) else origin
            )
            response.headers["Access-Control-Allow-Methods"] = CORS_METHODS
            asked = request.headers.get("Access-Control-Request-Headers")
            if asked:
                response.headers["Access-Control-Allow-Headers"] = asked
            response.headers["Access-Control-Max-Age"] = str(settings.cors_max_age)
        return response
    return None


def _cors_headers(response: Response, settings: Settings, origin: str | None) -> None:
    # Vary: Origin, without building werkzeug's HeaderSet on every response
    vary = response.headers.get("Vary")
    if not vary:
        response.headers["Vary"] = "Origin"
    elif "origin" not in vary.lower():
        response.headers["Vary"] = f"{vary}, Origin"
    if not origin or not _origin_allowed(origin, settings.cors_origins):
        return
    # Echo the origin rather than "*", so credentialed requests work with a list too.
    response.headers["Access-Control-Allow-Origin"] = (
        "*" if settings.cors_origins == ("*",) else origin
    )
    response.headers["Access-Control-Expose-Headers"] = REQUEST_ID_HEADER


# (method, endpoint, status) -> (counter child, histogram child): labels() takes a lock and
# builds a key on every call; the set of label values is small and fixed per process.
_METRIC_CHILDREN: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def _metric_children(method: str, endpoint: str, status: int) -> tuple[Any, Any]:
    key = (method, endpoint, status)
    children = _METRIC_CHILDREN.get(key)
    if children is None:
        labels = (method, endpoint, str(status))
        children = _METRIC_CHILDREN[key] = (REQUESTS.labels(*labels), LATENCY.labels(*labels))
    return children


def _finish_request(response: Response) -> Response:
    settings: Settings = current_app.extensions["ops"]["settings"]
    ctx_g = g._get_current_object()
    req = request._get_current_object()
    request_id = getattr(ctx_g, "request_id", None) or uuid.uuid4().hex
    response.headers[REQUEST_ID_HEADER] = request_id
    _cors_headers(response, settings, req.headers.get("Origin"))
    if settings.metrics_enabled:
        rule = req.url_rule
        endpoint = rule.rule if rule is not None else "<unmatched>"
        started = getattr(ctx_g, "ops_started", None)
        count, latency = _metric_children(req.method, endpoint, response.status_code)
        count.inc()
        if started is not None:
            latency.observe(time.perf_counter() - started)
    return response


def _teardown(_exc: BaseException | None) -> None:
    if g.pop("ops_in_progress", False):
        IN_PROGRESS.dec()


def init_ops(app: Flask, settings: Settings | None = None) -> None:
    """Wire the ops endpoints, request ids, JSON logging, CORS and metrics into `app`."""
    settings = settings or Settings.from_env()
    if "ops" in app.extensions:
        raise RuntimeError("init_ops was already called on this app")
    app.extensions["ops"] = {"settings": settings}
    configure_logging(settings.log_level, settings.log_format)
    app.register_blueprint(ops_blueprint)
    app.before_request(_start_request)
    app.after_request(_finish_request)
    app.teardown_request(_teardown)
