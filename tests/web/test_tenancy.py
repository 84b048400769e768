"""API keys, tenants and quotas in process (service/web/auth.py, quotas.py, frontdoor.py):
the app from the factory with AUTH=keys and a tenants file, driven by Flask's test client.
The same against real servers sharing a real Redis: tests/live/test_tenants.py; every
spelling of a path against a live keyed server: tests/live/test_front_door.py."""

from __future__ import annotations

import json
import logging
import re
import time

import pytest
from prometheus_client import REGISTRY

from service.config import Settings
from service.web.app import create_app
from service.web.auth import (
    DERIVED_MAX_SECONDS,
    Authenticator,
    KeyFileError,
    TrustedProxies,
    derive_key,
    derive_secret,
    hash_key,
    load_tenants,
    main,
    new_key,
)
from service.web.quotas import QuotaExceeded, parse_quota

HAND = {"dice": [1, 2, 3, 4, 5]}
SCORE = "/v1/variants/yahtzee/hands/score"
SUGGEST = "/v1/variants/yahtzee/moves/suggest"

ACME_ID, ACME_KEY = new_key()
OLD_ID, OLD_KEY = new_key()
ZETA_ID, ZETA_KEY = new_key()
#: keys that may derive others: acme's, and a revoked one of acme's
ROOT_ID, ROOT_KEY = new_key()
GONE_ID, GONE_KEY = new_key()
TENANTS = {"tenants": [
    {"name": "acme", "origins": ["https://play.acme.example", "https://m.acme.example"],
     "keys": [{"id": ACME_ID, "hash": hash_key(ACME_KEY)},
              {"id": OLD_ID, "hash": hash_key(OLD_KEY), "revoked": True},
              {"id": ROOT_ID, "hash": hash_key(ROOT_KEY), "derive": derive_secret(ROOT_KEY)},
              {"id": GONE_ID, "hash": hash_key(GONE_KEY), "derive": derive_secret(GONE_KEY),
               "revoked": True}],
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
    # a proxy's Basic credentials beside the key do not hide it (nor does an empty Bearer)
    assert c.post(SCORE, json=HAND, headers={**basic, "X-API-Key": ZETA_KEY}).status_code == 200
    assert c.post(SCORE, json=HAND, headers={"Authorization": "Bearer ",
                                             "X-API-Key": ZETA_KEY}).status_code == 200
    # a Bearer key is the key, whatever X-API-Key says
    assert c.post(SCORE, json=HAND, headers={**bearer(ZETA_KEY + "x"),
                                             "X-API-Key": ZETA_KEY}).status_code == 401


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
    assert 1 <= wait <= 120  # the sliding window: this minute's 5 weigh on the next one
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


@pytest.mark.parametrize(("path", "operation"), [
    ("/v1/variants/yahtzee/hands/score/batch", "scoring"),
    ("/v1/variants/yahtzee/games/validate", "scoring"),
    ("/v1/variants/yahtzee/moves/suggest", "advice"),
    ("/v1/variants/yahtzee/moves/bot", "advice"),
    ("/v1/variants/yahtzee/positions/value", "advice"),
    ("/v1/variants/yahtzee/games/analyze", "analysis"),
    ("/v1/variants/yahtzee/games/win-probability", "analysis"),
    ("//v1/variants/yahtzee/moves/suggest", "advice"),
])
def test_operation_classes_come_from_the_route(app, path, operation):
    from service.web.frontdoor import Router

    route = Router(app).route({"REQUEST_METHOD": "POST", "PATH_INFO": path,
                               "SERVER_NAME": "localhost", "SERVER_PORT": "80",
                               "wsgi.url_scheme": "http"})
    assert route.operation == operation


def test_every_operation_has_a_class_and_nothing_else_has_one(app):
    from service.web.frontdoor import Router

    router = Router(app)
    for rule in app.url_map.iter_rules():
        is_operation = rule.rule.startswith("/v1/")
        assert (rule.endpoint in router.operations) == is_operation, rule.rule


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
    assert auth.identify(env, "scoring").tenant == "acme"


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


def test_builds_are_queued_for_the_tenant_or_the_client_address_and_charged_to_it(app):
    """Inside a request to an operation, the caller (`service.caller`) is the tenant, or
    without keys the client's address: the build queue's client (its per-client limit and
    its turns) and the builds quota read it, and it is cleared after the request."""
    from service.advisor.tables.build_process import current_client
    from service.caller import CALLER, Caller, current_caller
    from service.web.fairshare import FairShare
    from service.web.frontdoor import FrontDoor, Router
    from service.web.quotas import Quotas

    seen = []

    def inner(environ, start_response):
        seen.append((current_client(), current_caller()))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    def call(door, **environ):
        env = {"REQUEST_METHOD": "POST", "PATH_INFO": SCORE, "SERVER_NAME": "localhost",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http", **environ}
        return b"".join(door(env, lambda status, headers, exc=None: None))

    for settings, environ, key in [
        (Settings(auth="keys", api_keys=json.dumps(TENANTS)),
         {"HTTP_X_API_KEY": ZETA_KEY, "REMOTE_ADDR": "192.0.2.1"}, "zeta"),
        (Settings(), {"REMOTE_ADDR": "192.0.2.1"}, "anonymous/192.0.2.1"),
    ]:
        door = FrontDoor(inner, Router(app), Authenticator(settings), Quotas(settings),
                         FairShare(2, 1.0))
        call(door, **environ)
        client, caller = seen[-1]
        assert client == key and caller.client == key
        assert current_client() == "" and current_caller() is None
    quotas = Quotas(Settings(quota_builds="1/minute"))
    token = CALLER.set(Caller("zeta", "zeta", keyed=True,
                              quotas={**Settings().default_quotas, "builds": "1/minute"}))
    try:
        quotas.admit_build("zeta")
        with pytest.raises(QuotaExceeded) as refused:
            quotas.admit_build("zeta")
    finally:
        CALLER.reset(token)
    assert refused.value.operation == "builds" and refused.value.tenant == "zeta"
    quotas.admit_build("anyone")  # outside a request (warming, the command line): free


def test_a_request_ended_while_it_waits_for_its_place_is_not_charged(app):
    """A request whose greenlet is killed while it waits for its place in the fair share
    (the worker stopping, its connection gone) was never answered: its quota unit is given
    back, and the caller is cleared."""
    from service.caller import current_caller
    from service.web.fairshare import FairShare
    from service.web.frontdoor import FrontDoor, Router
    from service.web.quotas import Quotas

    class Ended(BaseException):
        pass

    class Killing(FairShare):
        def admit(self, client: str, tenant: str) -> None:
            raise Ended

    def inner(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        return [b"{}"]

    def call(door):
        statuses = []
        env = {"REQUEST_METHOD": "POST", "PATH_INFO": SCORE, "SERVER_NAME": "localhost",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "192.0.2.9"}
        b"".join(door(env, lambda status, headers, exc=None: statuses.append(status)))
        return statuses[0]

    settings = Settings(quota_scoring="2/minute")
    quotas = Quotas(settings)
    router, auth = Router(app), Authenticator(settings)
    with pytest.raises(Ended):
        call(FrontDoor(inner, router, auth, quotas, Killing(1, 1.0)))
    assert current_caller() is None
    door = FrontDoor(inner, router, auth, quotas, FairShare(1, 1.0))
    assert [call(door) for _ in range(3)] == ["200 OK", "200 OK", "429 Too Many Requests"]


# --------------------------------------------------------------------------- derived keys
def later(seconds: float = 600) -> int:
    return int(time.time() + seconds)


def test_a_derived_key_works_within_its_restrictions(keyed):
    c = keyed.test_client()
    key = derive_key(ROOT_KEY, later(), operations=["scoring"],
                     origins=["https://play.acme.example"])
    assert key.startswith("yzd_") and ROOT_KEY not in key
    r = c.post(SCORE, json=HAND, headers=bearer(key))
    assert r.status_code == 200
    r = c.post(SCORE, json=HAND, headers={**bearer(key), "Origin": "https://play.acme.example"})
    assert r.status_code == 200
    # an origin of the tenant's that the derived key does not name
    r = c.post(SCORE, json=HAND, headers={**bearer(key), "Origin": "https://m.acme.example"})
    assert r.status_code == 403 and r.json["type"] == "/problems/origin-not-allowed"
    # an operation class it does not allow
    r = c.post(SUGGEST, json={"dice": [1, 1, 1, 1, 1], "throw": 3}, headers=bearer(key))
    assert r.status_code == 403 and r.json["type"] == "/problems/operation-not-allowed"
    assert r.json["tenant"] == "acme"
    assert c.post(SCORE, json=HAND, headers={"X-API-Key": key}).status_code == 200


def _widened(key: str, **changes) -> str:
    """`key` with its payload changed (and its mac kept): what a holder might try."""
    import base64

    body, mac = key.split(".")
    raw = body.removeprefix("yzd_")
    payload = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    payload.update(changes)
    for name in [k for k, v in changes.items() if v is None]:
        del payload[name]
    text = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    return f"yzd_{text}.{mac}"


@pytest.mark.parametrize("how", ["expired", "widened ops", "no ops", "longer life",
                                 "other user", "forged mac", "parent revoked",
                                 "parent cannot derive", "origin outside the tenant's",
                                 "malformed", "another tenant's kid"])
def test_a_derived_key_cannot_be_widened_and_stops_working(keyed, how):
    c = keyed.test_client()
    base = derive_key(ROOT_KEY, later(), operations=["scoring"], user="u1")
    key = {
        "expired": lambda: derive_key(ROOT_KEY, later(-1)),
        "widened ops": lambda: _widened(base, ops=["scoring", "advice"]),
        "no ops": lambda: _widened(base, ops=None),
        "longer life": lambda: _widened(base, exp=later(3600 * 24)),
        "other user": lambda: _widened(base, user="u2"),
        "forged mac": lambda: base[:-3] + ("AAA" if not base.endswith("AAA") else "BBB"),
        "parent revoked": lambda: derive_key(GONE_KEY, later()),
        "parent cannot derive": lambda: derive_key(ZETA_KEY, later()),
        "origin outside the tenant's": lambda: derive_key(ROOT_KEY, later(),
                                                          origins=["https://evil.example"]),
        "malformed": lambda: "yzd_" + "A" * 30,
        "another tenant's kid": lambda: _widened(base, kid=ZETA_ID),
    }[how]()
    r = c.post(SCORE, json=HAND, headers=bearer(key))
    assert r.status_code == 401, r.json
    assert r.json["type"] == "/problems/unauthorized"
    assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]
    if how == "expired":
        assert r.json["title"] == "Expired API key"
    if how == "parent revoked":
        assert "revoked" in r.json["detail"]


def test_derived_keys_are_short_lived():
    with pytest.raises(ValueError, match="exp"):
        derive_key(ROOT_KEY, later(DERIVED_MAX_SECONDS + 3600))
    with pytest.raises(ValueError, match="ops"):
        derive_key(ROOT_KEY, later(), operations=["builds"])
    with pytest.raises(ValueError, match="need a user"):
        derive_key(ROOT_KEY, later(), quotas={"scoring": "1/minute"})


def test_a_derived_key_s_end_user_has_a_quota_of_its_own(tmp_path):
    app = keyed_app(tmp_path)
    c = app.test_client()
    # clear of a minute's boundary: just after one, the sliding window counter weighs the
    # previous minute's requests a little less and lets one more through
    if time.time() % 60 > 55:
        time.sleep(61 - time.time() % 60)
    alice = derive_key(ROOT_KEY, later(), user="alice", quotas={"advice": "2/minute"})
    bob = derive_key(ROOT_KEY, later(), user="bob", quotas={"advice": "2/minute"})
    body = {"dice": [1, 1, 1, 1, 1], "throw": 3}
    for _ in range(2):
        r = c.post(SUGGEST, json=body, headers=bearer(alice))
        assert r.status_code == 200
        assert '"advice-user-60s";q=2;w=60' in r.headers["RateLimit-Policy"]
    r = c.post(SUGGEST, json=body, headers=bearer(alice))
    assert r.status_code == 429 and r.json["type"] == "/problems/quota-exceeded"
    assert "alice" in r.json["detail"] and r.json["tenant"] == "acme"
    assert c.post(SUGGEST, json=body, headers=bearer(bob)).status_code == 200
    # the tenant's own quota counts every user's requests: acme's scoring is 5/minute
    carol = derive_key(ROOT_KEY, later(), user="carol")
    statuses = [c.post(SCORE, json=HAND, headers=bearer(k)).status_code
                for k in (alice, bob, carol, alice, bob, carol)]
    assert statuses == [200] * 5 + [429]


def test_derive_on_the_command_line(capsys, monkeypatch, keyed):
    monkeypatch.setenv("YAHTZEE_API_KEY", ROOT_KEY)
    assert main(["derive", "--expires-in", "60", "--operations", "scoring", "--user", "u9",
                 "--quota", "scoring=10/minute"]) == 0
    key = capsys.readouterr().out.strip()
    assert keyed.test_client().post(SCORE, json=HAND, headers=bearer(key)).status_code == 200
    assert main(["new-key", "--tenant", "acme", "--derivable"]) == 0
    entry = json.loads(capsys.readouterr().out)["entry"]
    assert len(entry["derive"]) == 64


# --------------------------------------------------------------------------- fair share
def test_a_tenant_s_requests_beyond_its_share_wait_their_turn_then_429():
    import threading

    from service.web.fairshare import FairShare, TooManyInFlight

    fair = FairShare(per_worker=2, wait=0.3)
    fair.admit("a", "a")
    fair.admit("a", "a")
    assert fair.in_flight("a") == 2
    fair.admit("b", "b")  # another tenant is not held by a's share
    got: list[str] = []

    def third() -> None:
        try:
            fair.admit("a", "a")
            got.append("admitted")
        except TooManyInFlight:
            got.append("refused")

    t = threading.Thread(target=third)
    t.start()
    time.sleep(0.05)
    assert got == []  # waiting its turn
    fair.release("a")  # its place goes to the waiting request
    t.join(2)
    assert got == ["admitted"] and fair.in_flight("a") == 2
    t0 = time.monotonic()
    with pytest.raises(TooManyInFlight) as refused:
        fair.admit("a", "a")
    assert 0.25 <= time.monotonic() - t0 < 1.0
    assert refused.value.retry_after == 1 and "a" in refused.value.detail
    for client in ("a", "a", "b"):
        fair.release(client)
    assert fair.in_flight("a") == 0 and fair.in_flight("b") == 0


def test_a_worker_is_shared_while_another_caller_is_in_flight_or_came_lately():
    from service.web.fairshare import FairShare

    fair = FairShare(per_worker=1, wait=0.3, shared_seconds=0.2)
    assert fair.shared("a")  # a change of caller (from none)
    assert fair.shared("a")  # within shared_seconds of it
    time.sleep(0.25)
    assert not fair.shared("a")  # alone since
    fair.admit("b", "b")
    assert fair.shared("a")
    time.sleep(0.25)
    assert fair.shared("a")  # b's request is still in flight
    fair.release("b")
    assert not fair.shared("a")


def test_too_many_in_flight_is_a_documented_429(tmp_path):
    """The front door answers a request that found no place in time with a 429 problem
    and Retry-After (here the tenant's one place is held by another request)."""
    app = keyed_app(tmp_path, tenant_in_flight=1, web_concurrency=1,
                    tenant_in_flight_wait=0.05)
    from service.web.frontdoor import FrontDoor

    _ops, door, _fast = app.extensions["pipeline"]
    assert isinstance(door, FrontDoor)
    door.fair.admit("zeta", "zeta")  # zeta's one place, held
    try:
        r = app.test_client().post(SCORE, json=HAND, headers=bearer(ZETA_KEY))
    finally:
        door.fair.release("zeta")
    assert r.status_code == 429 and r.json["type"] == "/problems/too-many-in-flight"
    assert r.headers["Retry-After"] == "1" and r.json["tenant"] == "zeta"
    assert app.test_client().post(SCORE, json=HAND, headers=bearer(ZETA_KEY)).status_code == 200


def test_a_request_refused_by_its_fair_share_is_charged_nothing(tmp_path):
    """Charged when the front door admits it, given back when it finds no place in time:
    3/hour answers 3, whatever was refused in between."""
    app = metered_app(tmp_path, PAYING, tenant_in_flight=1, web_concurrency=1,
                      tenant_in_flight_wait=0.05)
    _ops, door, _fast = app.extensions["pipeline"]
    c = app.test_client()
    door.fair.admit("pay", "pay")  # pay's one place, held
    try:
        refused = [c.post(SCORE, json=HAND, headers=bearer(PAY_KEY)).status_code
                   for _ in range(4)]
    finally:
        door.fair.release("pay")
    assert refused == [429] * 4
    assert [c.post(SCORE, json=HAND, headers=bearer(PAY_KEY)).status_code
            for _ in range(4)] == [200, 200, 200, 429]


def test_a_request_waiting_for_a_build_gives_its_place_up():
    """`service.caller.waiting` (the build queue's wait for a table) hands the caller's
    place to its next request meanwhile, and takes one back after."""
    import threading

    from service.caller import PAUSE, waiting
    from service.web.fairshare import FairShare

    fair = FairShare(per_worker=1, wait=2.0)
    fair.admit("t", "t")
    token = PAUSE.set((lambda: fair.release("t"), lambda: fair.resume("t")))
    got: list[str] = []
    try:
        with waiting():
            other = threading.Thread(target=lambda: (fair.admit("t", "t"),
                                                     got.append("admitted")))
            other.start()
            other.join(1.0)
            assert got == ["admitted"]  # admitted while the first waits
        assert fair.in_flight("t") == 2  # the first took a place back at once
    finally:
        PAUSE.reset(token)
    fair.release("t")
    fair.release("t")
    assert fair.in_flight("t") == 0
    with waiting():  # outside a request: nothing to give up
        pass


def metered_app(tmp_path, tenants, **overrides):
    settings = Settings(advisor_table_dir=str(tmp_path / "tables"), advisor_builds="inline",
                        auth="keys", api_keys=json.dumps(tenants), **overrides)
    return create_app(settings)


# ----------------------------------------------------------------- metering (issue: billing)
PAY_ID, PAY_KEY = new_key()
PAY_ROOT_ID, PAY_ROOT_KEY = new_key()
PAYING = {"tenants": [{"name": "pay", "quotas": {"scoring": "3/hour", "advice": "3/hour"},
                       "keys": [{"id": PAY_ID, "hash": hash_key(PAY_KEY)},
                                {"id": PAY_ROOT_ID, "hash": hash_key(PAY_ROOT_KEY),
                                 "derive": derive_secret(PAY_ROOT_KEY)}]}]}
BATCH = "/v1/variants/yahtzee/hands/score/batch"


def test_classes_whose_quotas_read_the_same_count_apart(tmp_path):
    """scoring and advice both 3/hour: three of each, not three in all."""
    c = metered_app(tmp_path, PAYING).test_client()
    body = {"dice": [1, 1, 1, 1, 1], "throw": 3}
    assert [c.post(SCORE, json=HAND, headers=bearer(PAY_KEY)).status_code
            for _ in range(4)] == [200, 200, 200, 429]
    assert [c.post(SUGGEST, json=body, headers=bearer(PAY_KEY)).status_code
            for _ in range(4)] == [200, 200, 200, 429]


def test_a_user_refused_by_its_own_quota_uses_none_of_its_tenant_s(tmp_path):
    c = metered_app(tmp_path, {"tenants": [dict(PAYING["tenants"][0],
                                                quotas={"scoring": "5/hour"})]}).test_client()
    user = derive_key(PAY_ROOT_KEY, later(), user="u1", quotas={"scoring": "2/hour"})
    assert [c.post(SCORE, json=HAND, headers=bearer(user)).status_code
            for _ in range(5)] == [200, 200, 429, 429, 429]
    # the tenant used 2 of its 5: 3 more for its own key
    assert [c.post(SCORE, json=HAND, headers=bearer(PAY_KEY)).status_code
            for _ in range(4)] == [200, 200, 200, 429]


def test_a_batch_is_charged_one_unit_an_item(tmp_path):
    c = metered_app(tmp_path, {"tenants": [dict(PAYING["tenants"][0],
                                                quotas={"scoring": "50/hour"})]}).test_client()
    r = c.post(BATCH, json=[HAND] * 40, headers=bearer(PAY_KEY))
    assert r.status_code == 200
    assert r.headers["RateLimit"].startswith('"scoring-3600s";r=10;')
    # 11 more do not fit: refused whole, charged nothing (10 still left)
    r = c.post(BATCH, json=[HAND] * 11, headers=bearer(PAY_KEY))
    assert r.status_code == 429 and r.json["type"] == "/problems/quota-exceeded"
    assert "batch of 11 items" in r.json["detail"] and "10 left" in r.json["detail"]
    assert r.headers["RateLimit"].startswith('"scoring-3600s";r=0;')
    assert r.headers.get_all("RateLimit-Policy") == ['"scoring-3600s";q=50;w=3600']
    statuses = [c.post(SCORE, json=HAND, headers=bearer(PAY_KEY)).status_code
                for _ in range(11)]
    assert statuses == [200] * 10 + [429]


def test_every_answer_says_what_is_left(tmp_path):
    c = metered_app(tmp_path, PAYING).test_client()
    for left in (2, 1, 0):
        r = c.post(SCORE, json=HAND, headers={**bearer(PAY_KEY)})
        assert r.status_code == 200
        assert r.headers["RateLimit-Policy"] == '"scoring-3600s";q=3;w=3600'
        remaining, reset = re.fullmatch(r'"scoring-3600s";r=(\d+);t=(\d+)',
                                        r.headers["RateLimit"]).groups()
        assert int(remaining) == left and 1 <= int(reset) <= 3600
    # errors of the request too (a 422 is an answered request)
    r = c.post(SUGGEST, json={"dice": [9]}, headers=bearer(PAY_KEY))
    assert r.status_code == 422 and r.headers["RateLimit"].startswith('"advice-3600s";r=2;')


def test_charged_units_are_counted_by_tenant_and_class(tmp_path):
    c = metered_app(tmp_path, {"tenants": [dict(PAYING["tenants"][0],
                                                quotas={"scoring": "50/hour"})]}).test_client()

    def charged() -> float:
        return REGISTRY.get_sample_value("tenant_charged_units_total",
                                         {"tenant": "pay", "operation": "scoring"}) or 0.0

    before = charged()
    assert c.post(BATCH, json=[HAND] * 7, headers=bearer(PAY_KEY)).status_code == 200
    assert c.post(BATCH, json=[], headers=bearer(PAY_KEY)).status_code == 422
    assert c.post(BATCH, json=[HAND] * 60, headers=bearer(PAY_KEY)).status_code == 429
    assert c.post(SCORE, json=HAND, headers=bearer(PAY_KEY)).status_code == 200
    # the 422 (no item): its request's unit; the 429: nothing
    assert charged() - before == 7 + 1 + 1

