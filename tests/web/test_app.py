"""The app factory wires in the ops layer: the same behaviour through create_app()."""

from __future__ import annotations

from service.config import Settings
from service.domain.variants import VARIANT_IDS
from service.web.app import create_app
from service.web.extensions import advisor_of, analyst_of


def test_ops_endpoints_through_the_factory(client):
    assert client.get("/healthz").status_code == 200
    r = client.get("/readyz")  # the test app's tables are built on demand, not at start
    assert r.status_code in (200, 503) and set(r.get_json()["advisor"]) == set(VARIANT_IDS)
    assert b"http_requests_total" in client.get("/metrics").data


def test_settings_reach_the_advisor(tmp_path):
    app = create_app(Settings(advisor_table_dir=str(tmp_path), advisor_cache_size=3))
    advisor = advisor_of(app)
    assert advisor.store.directory == tmp_path and advisor.cache.lru_size == 3


def test_the_factory_builds_the_analyst_from_the_same_settings(tmp_path):
    """The app factory is the composition root: the analyst is made with the app, around
    the app's advisor, with the settings' kernel threads (not on first use, with defaults)."""
    app = create_app(Settings(advisor_table_dir=str(tmp_path), advisor_threads=3))
    analyst = analyst_of(app)
    assert analyst.advisor is advisor_of(app) and analyst.threads == 3


def test_ops_endpoints_are_not_in_the_public_spec(client):
    spec = client.get("/openapi.json").get_json()
    for path in ("/healthz", "/readyz", "/metrics"):
        assert path not in spec["paths"]
    assert any(p.startswith("/v1") for p in spec["paths"])


def test_api_responses_carry_request_id_and_cors(client):
    r = client.get("/v1/variants", headers={"X-Request-ID": "api-1", "Origin": "https://x.io"})
    assert r.status_code == 200
    assert r.headers["X-Request-ID"] == "api-1"
    assert r.headers["Access-Control-Allow-Origin"] == "*"
    assert "X-Request-ID" in r.headers["Access-Control-Expose-Headers"]


def test_api_errors_carry_request_id(client):
    r = client.get("/v1/variants/no-such-variant", headers={"X-Request-ID": "api-2"})
    assert r.status_code == 404 and r.headers["X-Request-ID"] == "api-2"


def test_preflight_on_an_api_route(client):
    r = client.options(
        "/v1/variants/yahtzee/hands/score",
        headers={"Origin": "https://x.io", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"},
    )
    assert r.status_code == 204
    assert "POST" in r.headers["Access-Control-Allow-Methods"]


def test_metrics_off_is_a_problem_404():
    client = create_app(Settings(metrics_enabled=False)).test_client()
    r = client.get("/metrics")
    assert r.status_code == 404
    assert r.mimetype == "application/problem+json"


#: What reading a request's body by hand looks like (`@blp.arguments` is the only way in)
BODY_READERS = {"read_json", "read_body", "get_json", "get_data", "load_items", "json",
                "data", "stream", "form", "values", "input_stream"}


def test_no_view_reads_a_body_by_hand(app):
    """Every operation that takes a body gets it from `@blp.arguments` (the service's parser,
    one schema), and no resource module touches the request's body itself."""
    import ast
    from pathlib import Path

    takes_body = 0
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/v1/"):
            continue
        view = app.view_functions[rule.endpoint].view_class
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            handler = getattr(view, method.lower())
            doc = getattr(handler, "_apidoc", {})
            if method == "POST":
                takes_body += 1
                params = doc.get("arguments", {}).get("parameters", [])
                assert [p["in"] for p in params] == ["json"], (rule.rule, method)
            assert "response" in doc, (rule.rule, method)  # dumped by its schema
    assert takes_body >= 15
    api = Path(__file__).resolve().parents[2] / "service" / "web" / "api"
    for path in sorted(api.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert not (node.value.id == "request" and node.attr in BODY_READERS), \
                    f"{path.name} reads request.{node.attr}"
            if isinstance(node, ast.Name):
                assert node.id not in {"read_json", "read_body", "load_items"}, \
                    f"{path.name} calls {node.id}"


def test_the_pipeline_calls_each_layer_through_its_bound_call(app):
    """The layers in the order a request meets them, each calling the next through its bound
    `__call__` (`app.pipeline` says why: no loop of the interpreter nested on the C stack,
    which each greenlet switch would copy), the last Flask's own dispatch."""
    from flask import Flask

    from service.web.fast import ScoringFastPath
    from service.web.frontdoor import FrontDoor
    from service.web.ops import OpsMiddleware

    layers = app.extensions["pipeline"]
    assert [type(layer) for layer in layers] == [OpsMiddleware, FrontDoor, ScoringFastPath]
    outer = app.wsgi_app
    for layer in layers:
        assert outer == layer.__call__ and outer.__self__ is layer
        outer = layer.wsgi_app
    assert outer.__func__ is Flask.wsgi_app and outer.__self__ is app
