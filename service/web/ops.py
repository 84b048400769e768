"""Operations: health, readiness, metrics, request ids, JSON logs and CORS.

Two parts, which the application factory uses: `init_ops(app, settings)` (the endpoints and
JSON logging) and `OpsMiddleware` (the outermost layer of its pipeline). The ops endpoints
live on a plain Flask blueprint, outside `/v1` and outside the OpenAPI document:

    GET /healthz   200 while the process can answer at all (liveness)
    GET /readyz    200 once the advisor's tables and kernels are ready, else 503 (readiness:
                   the server's warm-up, `service.warmup`); 503 again
                   once the worker was told to stop (SIGTERM: draining, see
                   `service.web.worker`)
    GET /metrics   Prometheus text format; adds up every gunicorn worker when
                   PROMETHEUS_MULTIPROC_DIR is set (gunicorn.conf.py sets it), with the
                   process figures of the server as a whole (`service.web.processes`); with
                   METRICS_PORT, only on that port (the listener the request came to: the
                   WSGI environ's SERVER_PORT), 404 on the others

Every response carries X-Request-ID: the caller's, when it is 1-128 characters of
[A-Za-z0-9._-], else 32 fresh random hex digits. Log lines written while handling a request
carry it. All of this per-request work is WSGI middleware (`OpsMiddleware`), not Flask hooks.
"""

from __future__ import annotations

import glob
import logging
import os
import random
import re
import time
from typing import Any

from flask import Blueprint, Flask, Response, abort, current_app, jsonify, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    generate_latest,
)

from .. import __version__
from ..config import Settings
from ..logs import REQUEST_ID, configure_logging
from .extensions import advisor_of
from .frontdoor import Router
from .processes import ServerProcesses
from .tally import TALLY

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"
#: Response headers browser code may read (CORS): the request id, when to ask again after a
#: 202 (table being built), a 429 or a 503, the tenant's quotas (`service.web.quotas`) and
#: what a 401 asks for.
EXPOSED_HEADERS = (f"{REQUEST_ID_HEADER}, Retry-After, RateLimit, RateLimit-Policy, "
                   f"WWW-Authenticate, Deprecation, Sunset, Link")
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,128}")

#: Methods a browser may use cross-origin (the API's; preflight answers with this list).
CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"

# Metrics are module-level: prometheus-client keeps one registry per process, and several
# apps in one process (tests) must share them rather than register them twice. In
# multiprocess mode each worker writes them to files in PROMETHEUS_MULTIPROC_DIR.
# The per-request ones are counted in the pod's shared memory (`tally`: a write costs a
# fifth of prometheus-client's multiprocess write), the rest by prometheus-client.
LATENCY = TALLY.histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by method, endpoint template and status.",
    ["method", "endpoint", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
#: every request answered is timed: the count of LATENCY, by the same labels
REQUESTS = TALLY.counter_of(
    LATENCY,
    "http_requests",
    "HTTP requests answered, by method, endpoint template and status.",
)
FAST_PATH_UNEXPECTED = Counter(
    "fast_path_unexpected_errors_total",
    "Requests the scoring fast path (web/fast.py) passed on to Flask after an error it does "
    "not expect (a bug to look at), by endpoint and exception type.",
    ["endpoint", "error"],
)
IN_PROGRESS = TALLY.gauge(
    "http_requests_in_progress",
    "HTTP requests being answered now.",
).labels()

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


def _advisor_status() -> tuple[bool, bool, Any]:
    """(ready, warm, detail): whether this process answers every built-in variant without
    a 202, whether its warm-up is done (`service.warmup`: a deferred one is run here
    once the build process has made everything), and the advisor's per-variant table
    status."""
    try:
        warmup = current_app.extensions.get("warmup")
        warm = warmup is None or not warmup.deferred or warmup.ready()
        tables = advisor_of(current_app).status()
    except Exception as exc:  # readiness must answer, whatever the advisor does
        log.exception("advisor status failed")
        return False, False, f"error: {type(exc).__name__}"
    return warm and all(tables.values()), warm, tables


@ops_blueprint.get("/healthz")
def healthz() -> Response:
    """Liveness: the process is up and answering. Checks nothing else, on purpose."""
    return jsonify(status="ok", version=__version__)


@ops_blueprint.get("/readyz")
def readyz() -> tuple[Response, int]:
    """Readiness: 200 once the advisor's built-in tables and kernels are ready (`warm`),
    else 503; 503 while the server is stopping. `rate_limits` says where quotas are counted:
    Redis being unreachable does not make the pod unready (it counts quotas alone
    meanwhile)."""
    ready, warm, advisor = _advisor_status()
    details: dict[str, Any] = {"advisor": advisor, "warm": warm}
    quotas = current_app.extensions.get("quotas")
    if quotas is not None:
        details["rate_limits"] = quotas.status()
    if _draining:
        return jsonify(status="draining", **details), 503
    return jsonify(status="ready" if ready else "not ready", **details), 200 if ready else 503


@ops_blueprint.get("/metrics")
def metrics() -> Response:
    """Prometheus exposition; in multiprocess mode, the sum over every worker's files."""
    settings = current_app.extensions["ops"]["settings"]
    if not settings.metrics_enabled or (
            settings.metrics_port and request.environ.get("SERVER_PORT") != str(
                settings.metrics_port)):
        abort(404)
    # the gauges of what is outside any request, read now: with no traffic too
    quotas = current_app.extensions.get("quotas")
    if quotas is not None:  # `rate_limit_storage_up`: what Redis does now
        quotas.status()
    builds = getattr(current_app.extensions.get("advisor"), "builds", None)
    if builds is not None:  # `table_build_queue_depth`: what the queue holds now
        builds.depth()
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:  # every worker's files, and the process figures of the server as a whole
        registry = CollectorRegistry(auto_describe=False)
        registry.register(WorkerFiles(directory))
        registry.register(TALLY)
        registry.register(ServerProcesses(current_app.extensions["ops"]["server_pid"]))
    else:  # one process: prometheus-client's own process figures are the server's
        registry = REGISTRY
    # content_type, not mimetype: CONTENT_TYPE_LATEST names its charset already
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


class WorkerFiles:
    """The metrics of every process, read from their files in PROMETHEUS_MULTIPROC_DIR:
    prometheus-client's `MultiProcessCollector`, less the files that are still empty.

    A process makes its file first and sizes it after, so for a moment the file has no
    header; prometheus-client then fails the whole scrape (struct.error, its issue #1199),
    and for good if the process died in that moment. An empty file holds no value yet:
    skipping it loses nothing. The rest is `MultiProcessCollector.merge`, its public API."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def collect(self) -> Any:
        """The merged metrics of every file with a header (the registry's collector API)."""
        from prometheus_client.multiprocess import MultiProcessCollector

        files = []
        for path in glob.glob(os.path.join(self.directory, "*.db")):
            try:
                if os.path.getsize(path) >= 8:  # `used` (4 bytes) and its padding
                    files.append(path)
            except FileNotFoundError:  # a live gauge's file, removed with its process
                pass
        return MultiProcessCollector.merge(files, accumulate=True)


def _origin_allowed(origin: str, allowed: tuple[str, ...]) -> bool:
    return "*" in allowed or origin in allowed


# (method, endpoint, status) -> histogram child (its count is REQUESTS'): labels() builds a
# key on every call; the set of label values is small and fixed per process.
_METRIC_CHILDREN: dict[tuple[str, str, int], Any] = {}


def _metric_child(method: str, endpoint: str, status: int) -> Any:
    key = (method, endpoint, status)
    child = _METRIC_CHILDREN.get(key)
    if child is None:
        child = _METRIC_CHILDREN[key] = LATENCY.labels(method, endpoint, str(status))
    return child


#: Request ids come from a generator of their own, seeded from the OS and seeded again in
#: each forked process (gunicorn's workers): unique across workers, without a system call
#: per request (os.urandom cost twice as much). They identify, they guard nothing.
_ids = random.Random()
os.register_at_fork(after_in_child=_ids.seed)
_id_bits = _ids.getrandbits


def new_request_id() -> str:
    """A fresh request id: 32 random hex digits (as long as a uuid4's hex)."""
    return f"{_id_bits(128):032x}"


class OpsMiddleware:
    """The per-request ops work, as WSGI middleware around the Flask app: request id (also
    for log lines, `service.logs.REQUEST_ID`), CORS headers and preflight answers, metrics.
    (Who the request is from, its quotas and fair share: `service.web.frontdoor`, inside
    this one.)

    Flask's before/after/teardown hooks did the same at about three times the cost (each
    hook goes through Flask's dispatch, its context-local proxies and ensure_sync).
    """

    def __init__(self, wsgi_app: Any, settings: Settings, router: Router) -> None:
        self.wsgi_app, self.settings, self.router = wsgi_app, settings, router
        self.any_origin = settings.cors_origins == ("*",)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        incoming = environ.get("HTTP_X_REQUEST_ID")
        request_id = incoming if valid_request_id(incoming) else new_request_id()
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        metrics = self.settings.metrics_enabled
        if metrics:
            IN_PROGRESS.inc()
        origin = environ.get("HTTP_ORIGIN")
        status_code = [500]

        def ops_start_response(status: str, headers: list[tuple[str, str]],
                               exc_info: Any = None) -> Any:
            status_code[0] = int(status[:3])
            headers.append((REQUEST_ID_HEADER, request_id))
            self._cors(headers, origin)
            return start_response(status, headers, exc_info)

        try:
            if (environ.get("REQUEST_METHOD") == "OPTIONS" and origin
                    and environ.get("HTTP_ACCESS_CONTROL_REQUEST_METHOD")):
                result: Any = self._preflight(environ, origin, ops_start_response)
            else:
                result = self.wsgi_app(environ, ops_start_response)
            if metrics:
                _metric_child(environ.get("REQUEST_METHOD", ""), self._endpoint(environ),
                              status_code[0]).observe(time.perf_counter() - started)
            return result
        finally:
            if metrics:
                IN_PROGRESS.dec()
            REQUEST_ID.reset(token)

    def _endpoint(self, environ: dict[str, Any]) -> str:
        """The route template the router matched (metrics label), or <unmatched>."""
        rule = self.router.route(environ).rule
        return rule.rule if rule is not None else "<unmatched>"

    def _cors(self, headers: list[tuple[str, str]], origin: str | None) -> None:
        for i, (name, value) in enumerate(headers):
            if name.lower() == "vary":
                if "origin" not in value.lower():
                    headers[i] = (name, f"{value}, Origin")
                break
        else:
            headers.append(("Vary", "Origin"))
        if not origin or not _origin_allowed(origin, self.settings.cors_origins):
            return
        # Echo the origin rather than "*", so credentialed requests work with a list too.
        headers.append(("Access-Control-Allow-Origin", "*" if self.any_origin else origin))
        headers.append(("Access-Control-Expose-Headers", EXPOSED_HEADERS))

    def _preflight(self, environ: dict[str, Any], origin: str, start_response: Any) -> Any:
        """A CORS preflight, answered before routing (the route may not allow OPTIONS)."""
        headers: list[tuple[str, str]] = [("Content-Length", "0")]
        if _origin_allowed(origin, self.settings.cors_origins):
            headers += [("Access-Control-Allow-Methods", CORS_METHODS),
                        ("Access-Control-Max-Age", str(self.settings.cors_max_age))]
            asked = environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS")
            if asked:
                headers.append(("Access-Control-Allow-Headers", asked))
        start_response("204 No Content", headers)
        return [b""]


def init_ops(app: Flask, settings: Settings) -> None:
    """Wire the ops endpoints (/healthz, /readyz, /metrics) and JSON logging into `app`. The
    per-request work (request ids, CORS, metrics) is `OpsMiddleware`, which the app's
    pipeline puts outermost (`service.web.app.create_app`)."""
    if "ops" in app.extensions:
        raise RuntimeError("init_ops was already called on this app")
    # the process that loads the app is the server's first: gunicorn's master (the app is
    # preloaded), whose children are the workers and the build process
    app.extensions["ops"] = {"settings": settings, "server_pid": os.getpid()}
    configure_logging(settings.log_level, settings.log_format)
    app.register_blueprint(ops_blueprint)
