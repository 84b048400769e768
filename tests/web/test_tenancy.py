"""API keys, tenants and quotas in process (service/web/auth.py, quotas.py, tenancy.py): the
app from the factory with AUTH=keys and a tenants file, driven by Flask's test client. The same
against real servers sharing a real Redis: tests/live/test_tenants.py."""

from __future__ import annotations

import json
import logging

import pytest
from prometheus_client import REGISTRY

from service.config import Settings
from service.web.app import create_app
from service.web.auth import (
    Authenticator,
    KeyFileError,
    TrustedProxies,
    hash_key,
    load_tenants,
    main,
    new_key,
)
from service.web.quotas import QuotaExceeded, operation_class, parse_quota

HAND = {"dice": [1, 2, 3, 4, 5]}
SCORE = "/v1/variants/yahtzee/hands/score"
SUGGEST = "/v1/variants/yahtzee/moves/suggest"

ACME_ID, ACME_KEY = new_key()
OLD_ID, OLD_KEY = new_key()
ZETA_ID, ZETA_KEY = new_key()
TENANTS = {"tenants": [
    {"name": "acme", "origins": ["https://play.acme.example"],
     "keys": [{"id": ACME_ID, "hash": hash_key(ACME_KEY)},
              {"id": OLD_ID, "hash": hash_key(OLD_KEY), "revoked": True}],
     "quotas": {"scoring": "5/minute", "advice": "unlimited"}},
    {"name": "zeta", "keys": [{"id": ZETA_ID, "hash": hash_key(ZETA_KEY)}]},
]}


def keyed_app(tmp_path, **overrides):
    settings = Settings(advisor_table_dir=str(tmp_path / "tables"), advisor_builds="inline",
                        auth="keys", api_keys=json.dumps(TENANTS), **overrides)
    return create_app(settings)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    return keyed_app(tmp_path_factory.mktemp("keyed"))


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_missing_key_is_a_401_problem_with_www_authenticate(keyed):
    r = keyed.test_client().post(SCORE, json=HAND)
    assert r.status_code == 401
    assert r.mimetype == "application/problem+json"
    assert r.json["type"] == "/problems/unauthorized" and r.json["instance"] == SCORE
    assert r.headers["WWW-Authenticate"] == 'Bearer realm="yahtzee-scoring"'
    assert "X-Request-ID" in r.headers


@pytest.mark.parametrize("key", ["nonsense", "yz_0000_" + "a" * 43, ACME_KEY[:-1] + "x"],
                         ids=["not-a-key", "unknown-id", "wrong-secret"])
def test_an_unknown_key_is_a_401(keyed, key):
    r = keyed.test_client().post(SCORE, json=HAND, headers=bearer(key))
    assert r.status_code == 401 and r.json["title"] == "Unknown API key"
    assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]
    assert "tenant" not in r.json


def test_a_revoked_key_is_a_401_that_says_so(keyed):
    r = keyed.test_client().post(SCORE, json=HAND, headers=bearer(OLD_KEY))
    assert r.status_code == 401 and "revoked" in r.json["detail"]


def test_a_key_in_either_header_is_accepted(keyed):
    c = keyed.test_client()
    assert c.post(SCORE, json=HAND, headers=bearer(ZETA_KEY)).status_code == 200
    assert c.post(SCORE, json=HAND, headers={"X-API-Key": ZETA_KEY}).status_code == 200
    basic = {"Authorization": "Basic dXNlcjpwYXNz"}
    assert c.post(SCORE, json=HAND, headers=basic).status_code == 401


def test_origins_a_tenant_does_not_list_are_403(keyed):
    c = keyed.test_client()
    ok = c.post(SCORE, json=HAND, headers={**bearer(ZETA_KEY)})
    assert ok.status_code == 200  # no Origin: a server
    r = c.post(SCORE, json=HAND, headers={**bearer(ZETA_KEY), "Origin": "https://evil.example"})
    assert r.status_code == 403 and r.json["type"] == "/problems/origin-not-allowed"
    assert r.json["tenant"] == "zeta"
    # the service's own pages (same host) may use any key
    same = c.post(SCORE, json=HAND, headers={**bearer(ZETA_KEY), "Origin": "http://localhost"})
    assert same.status_code == 200
    r = c.post(SUGGEST, json={"dice": [1, 1, 1, 1, 1], "throw": 3},
               headers={**bearer(ACME_KEY), "Origin": "https://play.acme.example"})
    assert r.status_code == 200


def test_ops_pages_and_the_spec_need_no_key(keyed):
    c = keyed.test_client()
    for path in ("/healthz", "/readyz", "/metrics", "/openapi.json", "/", "/docs"):
        assert c.get(path).status_code in (200, 503), path  # 503: tables not built here


def test_a_preflight_needs_no_key(keyed):
    r = keyed.test_client().options(SCORE, headers={
        "Origin": "https://play.acme.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert r.status_code == 204
    assert "authorization" in r.headers["Access-Control-Allow-Headers"]


def test_over_quota_is_a_429_with_ratelimit_headers_and_others_are_unaffected(tmp_path):
    app = keyed_app(tmp_path)
    c = app.test_client()
    for _ in range(5):
        r = c.post(SCORE, json=HAND, headers=bearer(ACME_KEY))
        assert r.status_code == 200
        assert r.headers["RateLimit-Policy"] == '"scoring-60s";q=5;w=60'
    r = c.post(SCORE, json=HAND, headers=bearer(ACME_KEY))
    assert r.status_code == 429 and r.json["type"] == "/problems/quota-exceeded"
    assert r.json["tenant"] == "acme" and "scoring" in r.json["detail"]
    wait = int(r.headers["Retry-After"])
    assert 1 <= wait <= 60
    assert r.headers["RateLimit"] == f'"scoring-60s";r=0;t={wait}'
    assert r.headers["RateLimit-Policy"] == '"scoring-60s";q=5;w=60'
    exposed = c.post(SCORE, json=HAND, headers={**bearer(ACME_KEY),
                                                "Origin": "https://play.acme.example"})
    assert exposed.status_code == 429
    for name in ("Retry-After", "RateLimit", "RateLimit-Policy"):
        assert name in exposed.headers["Access-Control-Expose-Headers"]
    # the other classes of the same tenant, and other tenants, go on
    assert c.post(SUGGEST, json={"dice": [1, 1, 1, 1, 1], "throw": 3},
                  headers=bearer(ACME_KEY)).status_code == 200
    assert c.post(SCORE, json=HAND, headers=bearer(ZETA_KEY)).status_code == 200


def test_anonymous_quotas_are_per_client_address(tmp_path):
    app = create_app(Settings(advisor_table_dir=str(tmp_path), advisor_builds="inline",
                              quota_scoring="2/minute", forwarded_allow_ips=("10.0.0.1",)))
    c = app.test_client()

    def post(peer: str, forwarded: str | None = None) -> int:
        headers = {"X-Forwarded-For": forwarded} if forwarded else {}
        return c.post(SCORE, json=HAND, headers=headers,
                      environ_base={"REMOTE_ADDR": peer}).status_code

    assert [post("192.0.2.1") for _ in range(3)] == [200, 200, 429]
    assert post("192.0.2.2") == 200
    # a forged X-Forwarded-For from an untrusted peer changes nothing
    assert post("192.0.2.1", "198.51.100.9") == 429
    # from the trusted proxy, the client it names is the key
    assert [post("10.0.0.1", "198.51.100.9") for _ in range(3)] == [200, 200, 429]
    assert post("10.0.0.1", "198.51.100.10") == 200
    # anonymous 429s name no tenant
    r = c.post(SCORE, json=HAND, environ_base={"REMOTE_ADDR": "192.0.2.1"})
    assert r.status_code == 429 and "tenant" not in r.json


def test_trusted_proxies_take_the_nearest_untrusted_hop():
    proxies = TrustedProxies(("10.0.0.0/8", "::1"))
    env = {"REMOTE_ADDR": "10.1.2.3", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 203.0.113.5, 10.9.9.9"}
    assert proxies.client(env) == "203.0.113.5"
    assert proxies.client({**env, "REMOTE_ADDR": "192.0.2.1"}) == "192.0.2.1"
    assert proxies.client({**env, "HTTP_X_FORWARDED_FOR": "junk, 10.2.2.2"}) == "10.2.2.2"
    assert TrustedProxies(("*",)).client(env) == "6.6.6.6"  # every hop trusted: the first
    assert TrustedProxies(()).client(env) == "10.1.2.3"


def test_operation_classes():
    assert operation_class("/v1/variants/yahtzee/hands/score/batch") == "scoring"
    assert operation_class("/v1/variants/yahtzee/games/validate") == "scoring"
    assert operation_class("/v1/variants/yahtzee/moves/suggest") == "advice"
    assert operation_class("/v1/variants/yahtzee/positions/value") == "advice"
    assert operation_class("/v1/variants/yahtzee/games/analyze") == "analysis"
    assert operation_class("/v1/variants/yahtzee/games/win-probability") == "analysis"


def test_quota_notation():
    assert parse_quota("unlimited") == ()
    assert [i.amount for i in parse_quota("20/second;600/minute")] == [20, 600]
    with pytest.raises(ValueError, match="not a quota"):
        parse_quota("lots")


@pytest.mark.parametrize(("data", "message"), [
    ("not json", "not JSON"),
    ({"tenants": {}}, "expected"),
    ({"tenants": [{"name": "a b", "keys": []}]}, "name"),
    ({"tenants": [{"name": "anonymous", "keys": []}]}, "name"),
    ({"tenants": [{"name": "a", "keys": []}, {"name": "a", "keys": []}]}, "twice"),
    ({"tenants": [{"name": "a", "keys": [{"id": "abcd", "hash": "md5:x"}]}]}, "hash"),
    ({"tenants": [{"name": "a", "keys": [], "quotas": {"scoring": "lots"}}]}, "not a quota"),
    ({"tenants": [{"name": "a", "keys": [], "quotas": {"speed": "1/second"}}]}, "speed"),
    ({"tenants": [{"name": "a", "keys": [], "color": "red"}]}, "color"),
])
def test_a_bad_tenants_file_is_refused_at_start_naming_where(data, message):
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(KeyFileError, match=message):
        load_tenants(text, Settings().default_quotas)


def test_auth_keys_without_a_tenants_file_does_not_start(tmp_path):
    with pytest.raises(KeyFileError, match="API_KEYS_FILE"):
        Authenticator(Settings(auth="keys"))
    with pytest.raises(KeyFileError, match="cannot read"):
        Authenticator(Settings(auth="keys", api_keys_file=str(tmp_path / "none.json")))


def test_new_key_prints_a_key_and_its_entry(capsys, tmp_path):
    assert main(["new-key", "--tenant", "acme"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["key"].startswith(f"yz_{made['entry']['id']}_")
    path = tmp_path / "tenants.json"
    path.write_text(json.dumps({"tenants": [{"name": "acme", "keys": [made["entry"]]}]}))
    auth = Authenticator(Settings(auth="keys", api_keys_file=str(path)))
    env = {"HTTP_AUTHORIZATION": f"Bearer {made['key']}"}
    assert auth.identify(env).name == "acme"


def test_keys_are_in_no_log_line_and_the_tenant_is(keyed, caplog):
    c = keyed.test_client()
    with caplog.at_level(logging.DEBUG):
        c.post(SCORE, json=HAND, headers=bearer(ZETA_KEY))
        c.post(SCORE, data="{", content_type="application/json", headers=bearer(ZETA_KEY))
        c.post(SCORE, json=HAND, headers=bearer(ZETA_KEY + "x"))
    text = "\n".join(r.getMessage() + repr(vars(r)) for r in caplog.records)
    assert ZETA_KEY not in text and ZETA_KEY[10:30] not in text


def test_metrics_count_requests_by_tenant(keyed):
    c = keyed.test_client()

    def count(tenant: str, status: str) -> float:
        return REGISTRY.get_sample_value("tenant_requests_total", {
            "tenant": tenant, "operation": "scoring", "status": status}) or 0.0

    before = count("zeta", "200"), count("unauthenticated", "401")
    c.post(SCORE, json=HAND, headers=bearer(ZETA_KEY))
    c.post(SCORE, json=HAND)
    assert count("zeta", "200") == before[0] + 1
    assert count("unauthenticated", "401") == before[1] + 1


def test_problem_documents_name_the_tenant(keyed):
    r = keyed.test_client().post(SCORE, json={"dice": [9]}, headers=bearer(ZETA_KEY))
    assert r.status_code == 422 and r.json["tenant"] == "zeta"


def test_readyz_says_where_quotas_are_counted(keyed):
    body = keyed.test_client().get("/readyz").json
    assert body["rate_limits"] == {"storage": "memory", "shared": False, "state": "ok"}


def test_builds_are_queued_for_the_tenant_or_the_client_address_and_charged_to_it():
    """Inside a /v1/ request, the build queue's client (its per-client limit and its turns)
    is the tenant, or without keys the client's address; builds are charged to the same key
    (`Quotas.admit_build`), and both are cleared after the request."""
    from service.advisor.tables.build_process import BUILD_CLIENT
    from service.web.quotas import CALLER, Quotas
    from service.web.tenancy import TenantMiddleware

    seen = []

    def inner(environ, start_response):
        seen.append((BUILD_CLIENT.get(), CALLER.get()))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    def call(app, **environ):
        env = {"REQUEST_METHOD": "POST", "PATH_INFO": SCORE, **environ}
        return b"".join(app(env, lambda status, headers, exc=None: None))

    for settings, environ, key in [
        (Settings(auth="keys", api_keys=json.dumps(TENANTS)),
         {"HTTP_X_API_KEY": ZETA_KEY, "REMOTE_ADDR": "192.0.2.1"}, "zeta"),
        (Settings(), {"REMOTE_ADDR": "192.0.2.1"}, "anonymous/192.0.2.1"),
    ]:
        app = TenantMiddleware(inner, settings, Authenticator(settings), Quotas(settings))
        call(app, **environ)
        client, caller = seen[-1]
        assert client == key and caller[2] == key
        assert BUILD_CLIENT.get() == "" and CALLER.get() is None
    quotas = Quotas(Settings(quota_builds="1/minute"))
    token = CALLER.set(("zeta", "1/minute", "zeta"))
    try:
        quotas.admit_build("zeta")
        with pytest.raises(QuotaExceeded) as refused:
            quotas.admit_build("zeta")
    finally:
        CALLER.reset(token)
    assert refused.value.operation == "builds" and refused.value.tenant == "zeta"
    quotas.admit_build("anyone")  # outside a request (warming, the command line): free
