"""The ops layer (service.web.ops.init_ops) on a tiny Flask app: health, readiness, request ids,
JSON logs, CORS and metrics. The app factory gets the same wiring; see test_app.py."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
from flask import Flask, abort
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from service.config import Settings
from service.logs import JsonFormatter
from service.web.frontdoor import Router
from service.web.ops import OpsMiddleware, init_ops, valid_request_id


def make_app(**overrides) -> Flask:
    app = Flask("ops-test")
    app.config["TESTING"] = True

    @app.get("/v1/things/<int:n>")
    def thing(n: int):
        logging.getLogger("service.test").info("looking at thing", extra={"thing": n})
        if n == 0:
            abort(404)
        return {"n": n}

    app.extensions["advisor"] = FakeAdvisor()
    with_ops(app, Settings(**overrides))
    return app


def with_ops(app: Flask, settings: Settings) -> None:
    """The ops layer on a tiny app: its endpoints and logging, and its middleware around
    the app, as create_app's pipeline puts it."""
    init_ops(app, settings)
    app.wsgi_app = OpsMiddleware(app.wsgi_app, settings, Router(app))


class FakeAdvisor:
    """Stands in for `service.advisor.Advisor` in readiness: `status` is settable."""

    def __init__(self) -> None:
        self.tables = {"yahtzee": True}

    def status(self) -> dict[str, bool]:
        if isinstance(self.tables, Exception):
            raise self.tables
        return self.tables


@pytest.fixture
def ops_client():
    """A client of the tiny app (not the service's: see conftest's `client`)."""
    return make_app().test_client()


def test_healthz_is_200_json(ops_client):
    r = ops_client.get("/healthz")
    assert r.status_code == 200
    assert r.is_json and r.get_json()["status"] == "ok"


def test_readyz_503_until_every_table_is_loaded(ops_client):
    advisor = ops_client.application.extensions["advisor"]
    advisor.tables = {"yahtzee": True, "yatzy": False}
    r = ops_client.get("/readyz")
    assert r.status_code == 503
    assert r.get_json()["advisor"] == {"yahtzee": True, "yatzy": False}
    advisor.tables = {"yahtzee": True, "yatzy": True}
    assert ops_client.get("/readyz").status_code == 200


def test_readyz_503_when_advisor_status_raises(ops_client):
    ops_client.application.extensions["advisor"].tables = OSError("tables missing")
    r = ops_client.get("/readyz")
    assert r.status_code == 503
    assert r.get_json()["advisor"] == "error: OSError"


def test_ops_endpoints_stay_out_of_the_openapi_spec():
    from flask_smorest import Api, Blueprint

    app = Flask("spec-test")
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    api = Api(app)
    blp = Blueprint("things", __name__, url_prefix="/v1")

    @blp.route("/things")
    def things():
        return {}

    api.register_blueprint(blp)
    with_ops(app, Settings())
    paths = set(api.spec.to_dict()["paths"])
    assert paths == {"/v1/things"}
    assert app.test_client().get("/healthz").status_code == 200


@pytest.mark.parametrize("rid", ["abc", "A.b_c-1", "x" * 128, "0123456789abcdef"])
def test_valid_request_id_is_echoed(ops_client, rid):
    assert valid_request_id(rid)
    r = ops_client.get("/healthz", headers={"X-Request-ID": rid})
    assert r.headers["X-Request-ID"] == rid


@pytest.mark.parametrize("rid", ["", "x" * 129, "has space", "semi;colon", "ünï", "a/b"])
def test_invalid_request_id_is_replaced(ops_client, rid):
    assert not valid_request_id(rid)
    r = ops_client.get("/healthz", headers={"X-Request-ID": rid})
    new = r.headers["X-Request-ID"]
    assert new != rid and len(new) == 32 and int(new, 16) >= 0


def test_request_id_made_when_absent_and_unique(ops_client):
    a = ops_client.get("/healthz").headers["X-Request-ID"]
    b = ops_client.get("/healthz").headers["X-Request-ID"]
    assert len(a) == 32 and a != b


def test_request_id_on_errors_too(ops_client):
    r = ops_client.get("/v1/things/0", headers={"X-Request-ID": "err-1"})
    assert r.status_code == 404 and r.headers["X-Request-ID"] == "err-1"
    r = ops_client.get("/nowhere", headers={"X-Request-ID": "err-2"})
    assert r.status_code == 404 and r.headers["X-Request-ID"] == "err-2"


def test_log_lines_are_json_with_the_request_id(capsys):
    app = make_app()  # its handler writes to the captured stdout
    app.test_client().get("/v1/things/7", headers={"X-Request-ID": "trace-7"})
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    mine = [d for d in lines if d["logger"] == "service.test"]
    assert len(mine) == 1
    doc = mine[0]
    assert doc["request_id"] == "trace-7"
    assert doc["message"] == "looking at thing" and doc["thing"] == 7
    assert doc["level"] == "INFO" and doc["time"].endswith("+00:00")


def test_log_line_outside_a_request_has_no_request_id(capsys):
    make_app()
    logging.getLogger("service.test").warning("no request here")
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "request_id" not in doc and doc["level"] == "WARNING"


def test_records_do_not_collect_what_no_line_shows():
    make_app()
    record = logging.getLogger("service.test").makeRecord(
        "service.test", logging.INFO, "", 0, "a line", None, None)
    assert (record.process, record.processName, record.thread, record.threadName) == (
        None, None, None, None)


def test_text_lines_carry_the_request_id_only_inside_a_request(capsys):
    app = make_app(log_format="text")
    app.test_client().get("/v1/things/7", headers={"X-Request-ID": "trace-8"})
    logging.getLogger("service.test").warning("no request here")
    lines = capsys.readouterr().out.splitlines()
    inside = next(ln for ln in lines if "looking at thing" in ln)
    assert "service.test [trace-8] looking at thing thing=7" in inside
    outside = next(ln for ln in lines if "no request here" in ln)
    assert "[" not in outside and "None" not in outside and "WARNING" in outside


def test_gunicorn_access_record_becomes_one_json_line():
    atoms = {
        "m": "POST", "U": "/v1/hands/score", "q": "", "s": "201", "M": 12, "B": 345,
        "h": "10.0.0.9", "a": "curl/8", "{x-request-id}o": "req-42",
    }
    record = logging.LogRecord("gunicorn.access", logging.INFO, "", 0, "%(m)s", atoms, None)
    doc = json.loads(JsonFormatter().format(record))
    assert doc["logger"] == "gunicorn.access"
    assert (doc["method"], doc["path"], doc["status"], doc["duration_ms"]) == (
        "POST", "/v1/hands/score", 201, 12,
    )
    assert doc["request_id"] == "req-42"
    assert doc["message"] == "POST /v1/hands/score 201"


@pytest.mark.parametrize("request_id", [None, "req-1"])
@pytest.mark.parametrize("tenant", [None, "acme"])
@pytest.mark.parametrize("query", ["", "a=1&b=%22x%22"])
@pytest.mark.parametrize("agent", [None, 'curl/8 "quoted"'])
@pytest.mark.parametrize("status", ["200 OK", "429 Too Many Requests"])
def test_access_lines_made_of_the_logger_s_atoms_are_gunicorn_s(request_id, tenant, query,
                                                                 agent, status):
    """`AccessAtomsLogger` (gunicorn.conf.py's logger class) makes only the atoms the
    formatters read: the JSON and text lines are those gunicorn's own atoms give, field for
    field, header and environ entries included (the last X-Request-ID, as gunicorn keeps)."""
    from datetime import timedelta
    from types import SimpleNamespace

    from gunicorn import glogging
    from gunicorn.config import Config

    from service.logs import AccessAtomsLogger, TextFormatter

    environ = {"REQUEST_METHOD": "POST", "RAW_URI": "/v1/x?" + query, "PATH_INFO": "/v1/x",
               "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "10.0.0.9",
               "HTTP_X_REQUEST_ID": "asked", "wsgi.input": object()}
    if agent is not None:
        environ["HTTP_USER_AGENT"] = agent
    if tenant is not None:
        environ["service.tenant"] = tenant
    headers = [("Content-Type", "application/json"), ("Vary", "Origin")]
    if request_id is not None:
        headers += [("X-Request-ID", "first"), ("x-request-id", request_id)]
    resp = SimpleNamespace(status=status, headers=headers, sent=345)
    req = SimpleNamespace(headers=[("HOST", "x"), ("X-REQUEST-ID", "asked")])
    took = timedelta(seconds=1, microseconds=12_345)
    lines = []
    for logger in (glogging.Logger(Config()), AccessAtomsLogger(Config())):
        atoms = logger.atoms_wrapper_class(logger.atoms(resp, req, environ, took))
        record = logging.LogRecord("gunicorn.access", logging.INFO, "", 0, "%(h)s", (atoms,),
                                   None)
        record.created = record.msecs = 0.0
        lines.append((JsonFormatter().format(record), TextFormatter().format(record)))
    assert lines[0] == lines[1]
    doc = json.loads(lines[1][0])
    assert (doc["status"], doc["duration_ms"], doc["bytes"]) == (int(status[:3]), 1012, 345)
    assert doc.get("request_id") == request_id and doc.get("tenant") == tenant


@given(st.one_of(st.floats(min_value=-1e9, max_value=4e9, allow_nan=False),
                 st.integers(0, 4_000_000).map(lambda ms: 1_765_000_000 + ms / 1000),
                 st.integers(0, 10_000).map(lambda k: 1_765_000_000.9995 + k * 1e-7)))
def test_a_line_s_time_is_datetime_s_to_the_millisecond(created):
    """A line's time (the second's text made once a second) is what datetime writes, its
    rounding of the microseconds (half to even, up into the next second) included."""
    from datetime import UTC, datetime

    from service.logs import _iso_time

    assert _iso_time(created) == datetime.fromtimestamp(created, UTC).isoformat(
        timespec="milliseconds")


def test_the_logger_s_access_line_is_gunicorn_s_own(tmp_path):
    """`AccessAtomsLogger.access` hands the access logger's handlers the record gunicorn's
    `access` would (made at once, without logging's search of the stack): the same JSON
    line, gunicorn's access format as its message; none while the access logger is off."""
    from datetime import timedelta
    from types import SimpleNamespace

    from gunicorn import glogging
    from gunicorn.config import Config

    from service.logs import AccessAtomsLogger

    cfg = Config()
    cfg.set("accesslog", str(tmp_path / "access.log"))
    theirs, ours = glogging.Logger(cfg), AccessAtomsLogger(cfg)
    environ = {"REQUEST_METHOD": "GET", "RAW_URI": "/v1/x?a=1", "PATH_INFO": "/v1/x",
               "QUERY_STRING": "a=1", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "10.0.0.9",
               "HTTP_USER_AGENT": "curl/8", "service.tenant": "acme"}
    resp = SimpleNamespace(status="200 OK", sent=12,
                           headers=[("Content-Type", "text/plain"), ("X-Request-ID", "r-1")])
    req = SimpleNamespace(headers=[("HOST", "x")])
    took = timedelta(microseconds=2_500)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    access, keep = logging.getLogger("gunicorn.access"), Keep()
    access.addHandler(keep)
    level = access.level
    try:
        theirs.access(resp, req, environ, took)
        ours.access(resp, req, environ, took)
        access.setLevel(logging.WARNING)
        ours.access(resp, req, environ, took)
    finally:
        access.removeHandler(keep)
        access.setLevel(level)
    assert len(records) == 2
    docs = [json.loads(JsonFormatter().format(record)) for record in records]
    for doc in docs:
        del doc["time"]
    assert docs[0] == docs[1]
    assert docs[1]["request_id"] == "r-1" and docs[1]["tenant"] == "acme"
    assert records[1].msg == cfg.access_log_format and records[1].levelno == logging.INFO


def test_exception_is_logged_in_the_json_line():
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord(
            "x", logging.ERROR, "", 0, "failed", None, sys.exc_info()
        )
    doc = json.loads(JsonFormatter().format(record))
    assert "ValueError: boom" in doc["exc_info"]


def test_cors_any_origin(ops_client):
    r = ops_client.get("/healthz", headers={"Origin": "https://app.example"})
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "X-Request-ID" in r.headers["Access-Control-Expose-Headers"]


def test_cors_listed_origins_only():
    ops_client = make_app(cors_origins=("https://a.example", "https://b.example")).test_client()
    r = ops_client.get("/healthz", headers={"Origin": "https://b.example"})
    assert r.headers["Access-Control-Allow-Origin"] == "https://b.example"
    assert "Origin" in r.headers["Vary"]
    r = ops_client.get("/healthz", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_cors_none_when_origins_empty():
    ops_client = make_app(cors_origins=()).test_client()
    r = ops_client.get("/healthz", headers={"Origin": "https://a.example"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_cors_preflight(ops_client):
    r = ops_client.options(
        "/v1/things/3",
        headers={
            "Origin": "https://app.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type, x-request-id",
        },
    )
    assert r.status_code == 204
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    assert r.headers["Access-Control-Allow-Headers"] == "content-type, x-request-id"
    assert r.headers["Access-Control-Max-Age"] == "600"
    assert r.headers["X-Request-ID"]


def test_cors_preflight_refused_origin():
    ops_client = make_app(cors_origins=("https://a.example",)).test_client()
    r = ops_client.options(
        "/v1/things/3",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "Access-Control-Allow-Origin" not in r.headers
    assert "Access-Control-Allow-Methods" not in r.headers


def _count(endpoint: str, status: str, method: str = "GET") -> float:
    value = REGISTRY.get_sample_value(
        "http_requests_total", {"method": method, "endpoint": endpoint, "status": status}
    )
    return value or 0.0


def test_metrics_count_by_endpoint_template_and_status(ops_client):
    before_ok = _count("/v1/things/<int:n>", "200")
    before_404 = _count("/v1/things/<int:n>", "404")
    before_unmatched = _count("<unmatched>", "404")
    ops_client.get("/v1/things/1")
    ops_client.get("/v1/things/2")
    ops_client.get("/v1/things/0")
    ops_client.get("/no/such/path")
    assert _count("/v1/things/<int:n>", "200") == before_ok + 2
    assert _count("/v1/things/<int:n>", "404") == before_404 + 1
    assert _count("<unmatched>", "404") == before_unmatched + 1
    r = ops_client.get("/metrics")
    assert r.status_code == 200 and r.mimetype == "text/plain"
    text = r.get_data(as_text=True)
    assert 'http_requests_total{endpoint="/v1/things/<int:n>",method="GET",status="200"}' in text
    assert "http_request_duration_seconds_bucket" in text
    assert "http_requests_in_progress" in text
    assert r.headers["Content-Type"].count("charset") == 1


def test_metrics_of_every_worker_skip_a_file_still_empty(monkeypatch, tmp_path, ops_client):
    """Multiprocess mode: /metrics adds up every process's file, and one a process has made
    but not yet sized (empty: prometheus-client's issue #1199 fails the whole scrape on it,
    for good when that process died) is skipped, not a 500."""

    worker = ("from prometheus_client import Counter\n"
              "Counter('worker_jobs_total', 'Jobs.').inc(3)\n")
    subprocess.run([sys.executable, "-c", worker], check=True,
                   env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)})
    (tmp_path / "counter_999999.db").touch()  # made, not yet sized (or its process killed)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    r = ops_client.get("/metrics")
    assert r.status_code == 200, r.get_data(as_text=True)
    assert "worker_jobs_total 3.0" in r.get_data(as_text=True)
    # and the server's process figures, which prometheus-client's multiprocess mode has not
    # (service/web/processes.py)
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes",
                 "process_open_fds", "process_start_time_seconds", "server_processes"):
        assert f"\n{name} " in r.get_data(as_text=True), name


def test_readyz_503_once_draining(monkeypatch, ops_client):
    from service.web import ops

    monkeypatch.setattr(ops, "_draining", False)
    assert ops_client.get("/readyz").status_code == 200
    ops.start_draining()
    r = ops_client.get("/readyz")
    assert r.status_code == 503 and r.get_json()["status"] == "draining"
    assert ops_client.get("/healthz").status_code == 200


def test_metrics_can_be_switched_off():
    ops_client = make_app(metrics_enabled=False).test_client()
    assert ops_client.get("/metrics").status_code == 404


def test_metrics_on_a_port_of_their_own_are_answered_only_there():
    """METRICS_PORT: /metrics only on the listener of that port (SERVER_PORT: gunicorn sets
    it from the socket a request came to, whatever its Host header says, which
    tests/live/test_lifecycle.py holds)."""
    client = make_app(metrics_port=9464).test_client()
    assert client.get("/metrics", base_url="http://localhost:8000").status_code == 404
    assert client.get("/metrics", base_url="http://localhost:9464").status_code == 200
    with pytest.raises(ValueError, match="METRICS_PORT"):
        Settings(metrics_port=8000)


def test_init_ops_twice_is_an_error():
    app = make_app()
    with pytest.raises(RuntimeError):
        init_ops(app, Settings())


def test_settings_from_env(monkeypatch):
    monkeypatch.setenv("CORS_ORIGINS", "https://a.example, https://b.example")
    monkeypatch.setenv("LOG_LEVEL", "debug")
    monkeypatch.setenv("METRICS_ENABLED", "false")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("PORT", "9000")
    s = Settings.from_env()
    assert s.cors_origins == ("https://a.example", "https://b.example")
    assert s.log_level == "DEBUG" and s.metrics_enabled is False
    assert s.workers == 3 and s.port == 9000
    monkeypatch.setenv("METRICS_ENABLED", "maybe")
    with pytest.raises(ValueError):
        Settings.from_env()


def test_settings_defaults(monkeypatch):
    for name in ("WEB_CONCURRENCY", "PORT", "CORS_ORIGINS", "LOG_FORMAT"):
        monkeypatch.delenv(name, raising=False)
    s = Settings.from_env()
    assert s.port == 8000 and s.cors_origins == ("*",) and s.log_format == "json"
    assert 1 <= s.workers <= 8
