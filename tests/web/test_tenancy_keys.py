"""API keys read within bounds, kept out of URLs, logs and problem documents, in process
(service/web/auth.py, service/secrets.py, service/logs.py, service/web/problems.py): the app
from the factory with AUTH=keys and a tenants file, driven by Flask's test client, and the
authenticator and log formatters called directly. The tenancy rules themselves:
test_tenancy.py; the same refusals against a live keyed gunicorn: tests/live/test_front_door.py.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import sys
import time
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from service.caller import Caller
from service.config import Settings
from service.secrets import holds_key, redact
from service.web.app import create_app
from service.web.auth import (
    DERIVED_MAX_SECONDS,
    Authenticator,
    Refused,
    derive_key,
    derive_secret,
    hash_key,
    new_key,
)

HAND = {"dice": [1, 2, 3, 4, 5]}
SCORE = "/v1/variants/yahtzee/hands/score"

ACME_ID, ACME_KEY = new_key()
OLD_ID, OLD_KEY = new_key()
ZETA_ID, ZETA_KEY = new_key()
#: acme's key that may derive others
ROOT_ID, ROOT_KEY = new_key()
TENANTS = {"tenants": [
    {"name": "acme", "origins": ["https://play.acme.example"],
     "keys": [{"id": ACME_ID, "hash": hash_key(ACME_KEY)},
              {"id": OLD_ID, "hash": hash_key(OLD_KEY), "revoked": True},
              {"id": ROOT_ID, "hash": hash_key(ROOT_KEY), "derive": derive_secret(ROOT_KEY)}],
     "quotas": {"scoring": "unlimited"}},
    {"name": "zeta", "keys": [{"id": ZETA_ID, "hash": hash_key(ZETA_KEY)}],
     "quotas": {"scoring": "unlimited"}},
]}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    settings = Settings(advisor_table_dir=str(tmp_path_factory.mktemp("keys") / "tables"),
                        advisor_builds="inline", auth="keys", api_keys=json.dumps(TENANTS))
    return create_app(settings)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def later(seconds: float = 600) -> int:
    return int(time.time() + seconds)


#: A derived key of acme's that works for days (the property tests pick it among junk).
DERIVED_OK = derive_key(ROOT_KEY, int(time.time()) + 3 * 24 * 3600,
                        origins=["https://play.acme.example"])
_B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _signed(payload: Any, parent: str = ROOT_KEY, body: str | None = None) -> str:
    """A derived key of `payload` (any JSON, not checked as `derive_key` checks it) with a
    true mac under `parent`: what only the parent's holder can make. `body`: the payload's
    text as given instead of the canonical base64url of `payload`."""
    text = "yzd_" + (body if body is not None else _b64(json.dumps(payload).encode()))
    secret = bytes.fromhex(derive_secret(parent))
    return f"{text}.{_b64(hmac.new(secret, text.encode(), hashlib.sha256).digest())}"


def _nested(depth: int, opener: str = "[") -> str:
    """A derived key whose payload is `depth` nested brackets (the reported 500)."""
    return f"yzd_{_b64((opener * depth).encode())}.{'A' * 43}"


def keyed_auth() -> Authenticator:
    return Authenticator(Settings(auth="keys", api_keys=json.dumps(TENANTS)))


def env_of(**entries: Any) -> dict[str, Any]:
    """A WSGI environ of a request to an operation, with `entries` (None: left out)."""
    env = {"REQUEST_METHOD": "POST", "REMOTE_ADDR": "192.0.2.7", "wsgi.url_scheme": "http",
           "HTTP_HOST": "localhost"}
    env.update({k: v for k, v in entries.items() if v is not None})
    return {k: v for k, v in env.items() if v is not None}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
#: payloads a derived key's holder could sign: the known restrictions, any JSON in them
_restriction_sets = st.dictionaries(
    st.sampled_from(["kid", "exp", "ops", "user", "origins", "quotas", "other"]), _json,
    max_size=6).map(lambda d: {**d, "kid": ROOT_ID} if "kid" not in d or d["kid"] else d)
#: nesting depths: shallow ones, and those around and beyond where json.loads recurses out
_depth = st.one_of(st.integers(0, 8), st.integers(900, 5000))
_nesting = st.builds(lambda depth, opener, tail: opener * depth + tail,
                     _depth, st.sampled_from(["[", "{\"a\":", "[\"x\",", "{"]),
                     st.sampled_from(["", "1", "]" * 3, "\"", "\\"]))
_mac = st.one_of(st.text(_B64_ALPHABET, min_size=40, max_size=46),
                 st.binary(min_size=32, max_size=32).map(_b64))
_derived_junk = st.one_of(
    st.builds(lambda p, m: f"yzd_{_b64(json.dumps(p).encode())}.{m}", _json, _mac),
    st.builds(lambda p, m: f"yzd_{_b64(p.encode())}.{m}", _nesting, _mac),
    st.builds(lambda p, m: f"yzd_{_b64(p)}.{m}", st.binary(max_size=300), _mac),
    _restriction_sets.map(_signed),
    st.builds(lambda depth: _signed(None, body=_b64(b"[" * depth)), _depth),
)
_tenant_junk = st.builds(
    lambda i, s: f"yz_{i}_{s}",
    st.one_of(st.sampled_from([ACME_ID, ZETA_ID, OLD_ID, ROOT_ID]), st.text(max_size=40)),
    st.one_of(st.text(_B64_ALPHABET, max_size=140), st.text(max_size=60)))
#: what a header may hold: any text (surrogates, latin-1), any bytes as gunicorn reads them
#: (latin-1), near misses of both kinds of key, and keys that work
_header_value = st.one_of(
    st.text(), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    _derived_junk, _tenant_junk,
    st.sampled_from([ZETA_KEY, ACME_KEY, OLD_KEY, DERIVED_OK, "", " ", "yzd_", "yz_"]))
_authorization = st.one_of(st.none(), _header_value,
                           _header_value.map(lambda v: f"Bearer {v}"),
                           _header_value.map(lambda v: f"bearer   {v} "))
_query = st.one_of(st.none(), st.text(max_size=80), _header_value.map(lambda v: f"api_key={v}"),
                   st.sampled_from(["x=1", "token=", f"k={ZETA_KEY}", "a=yz%5Fabcdefgh"]))
_origin = st.one_of(st.none(), st.text(max_size=40),
                    st.sampled_from(["https://play.acme.example", "http://localhost",
                                     "gopher://localhost", "null", "https://localhost"]))


@settings(max_examples=300, deadline=None)
@given(authorization=_authorization, api_key=st.one_of(st.none(), _header_value),
       query=_query, origin=_origin, host=st.one_of(st.none(), st.just("localhost"),
                                                    st.text(max_size=20)))
def test_identify_answers_a_caller_or_a_401_or_403_whatever_the_headers(
        authorization, api_key, query, origin, host):
    env = env_of(HTTP_AUTHORIZATION=authorization, HTTP_X_API_KEY=api_key,
                 QUERY_STRING=query, HTTP_ORIGIN=origin, HTTP_HOST=host)
    for auth, statuses in ((KEYED_AUTH, (401, 403)), (OPEN_AUTH, (401,))):
        try:
            caller = auth.identify(env, "scoring")
        except Refused as refused:
            assert refused.status in statuses, (refused.status, refused.detail)
            assert refused.type == "/problems/unauthorized" or refused.status == 403
        else:
            assert isinstance(caller, Caller)


KEYED_AUTH = keyed_auth()
OPEN_AUTH = Authenticator(Settings())


@settings(max_examples=300, deadline=None)
@given(authorization=_authorization, api_key=st.one_of(st.none(), _header_value),
       query=_query, origin=_origin)
def test_the_app_answers_unreadable_keys_with_a_401_problem(keyed, authorization, api_key,
                                                             query, origin):
    assume(api_key not in (ZETA_KEY, ACME_KEY, DERIVED_OK))  # junk only: never answered
    assume(not authorization or not any(k in authorization
                                        for k in (ZETA_KEY, ACME_KEY, DERIVED_OK)))
    # as a WSGI server gives them: the bytes sent (here the text's UTF-8) read as latin-1
    env = {k: v.encode("utf-8", "surrogatepass").decode("latin-1")
           for k, v in {"HTTP_AUTHORIZATION": authorization, "HTTP_X_API_KEY": api_key,
                        "QUERY_STRING": query, "HTTP_ORIGIN": origin}.items()
           if v is not None}
    r = keyed.test_client().post(SCORE, json=HAND, environ_overrides=env)
    assert r.status_code in (401, 403), (r.status_code, r.data[:300])
    assert r.mimetype == "application/problem+json"
    doc = r.json
    assert doc["status"] == r.status_code and doc["type"].startswith("/problems/")
    for sent in env.values():
        if holds_key(sent) and len(sent) > 12:
            assert sent not in r.get_data(as_text=True)


@pytest.mark.parametrize("depth", [1500, 900])
@pytest.mark.parametrize("opener", ["[", "{\"a\":"])
def test_deeply_nested_derived_keys_are_a_401_not_a_500(keyed, depth, opener):
    key = _nested(depth, opener)
    c = keyed.test_client()
    for headers in ({"X-API-Key": key}, bearer(key)):
        r = c.post(SCORE, json=HAND, headers=headers)
        assert r.status_code == 401 and r.mimetype == "application/problem+json"
        assert r.json["title"] == "Invalid API key"
    # the same nesting under a true mac (only its parent's holder could make it)
    r = c.post(SCORE, json=HAND, headers=bearer(_signed(None, body=_b64(b"[" * depth))))
    assert r.status_code == 401


def test_keys_that_cannot_be_read_are_a_401_and_logged_without_the_key(keyed, caplog,
                                                                       monkeypatch):
    c = keyed.test_client()
    for key in ("yz_abcd_" + "é" * 20, "yzd_" + "A" * 5000 + "." + "A" * 43, "x" * 70_000):
        r = c.post(SCORE, json=HAND, environ_overrides={"HTTP_X_API_KEY": key})
        assert r.status_code == 401 and "malformed" in r.json["detail"], key[:20]

    def broken(self, key):
        raise RuntimeError(f"unforeseen, holding {key}")

    monkeypatch.setattr(Authenticator, "_entry", broken)
    with caplog.at_level(logging.WARNING, logger="service.web.auth"):
        r = c.post(SCORE, json=HAND, headers=bearer(ZETA_KEY))
    assert r.status_code == 401 and r.json["title"] == "Invalid API key"
    logged = [rec for rec in caplog.records if rec.name == "service.web.auth"]
    assert logged and logged[-1].error == "RuntimeError"
    text = "\n".join(rec.getMessage() + repr(vars(rec)) for rec in caplog.records)
    assert ZETA_KEY not in text


def test_a_derived_key_s_mac_has_one_spelling(keyed):
    key = derive_key(ROOT_KEY, later())
    body, mac = key.rsplit(".", 1)
    base = _B64_ALPHABET.index(mac[-1]) & ~3
    spellings = [f"{body}.{mac[:-1]}{_B64_ALPHABET[base + i]}" for i in range(4)]
    assert key in spellings
    c = keyed.test_client()
    answers = {s: c.post(SCORE, json=HAND, headers=bearer(s)).status_code for s in spellings}
    assert answers == {s: 200 if s == key else 401 for s in spellings}


def test_a_derived_key_s_payload_has_one_spelling(keyed):
    """A payload whose last character has unused bits set is refused even under a true mac
    over that text: the same bytes have one spelling (what `derive_key` writes)."""
    text = _b64(json.dumps({"kid": ROOT_ID, "exp": later()}).encode())
    assert len(text) % 4 in (2, 3)  # the last character has unused bits
    bits = 15 if len(text) % 4 == 2 else 3
    other = text[:-1] + _B64_ALPHABET[_B64_ALPHABET.index(text[-1]) | bits]
    assert other != text and base64.urlsafe_b64decode(other + "==") == \
        base64.urlsafe_b64decode(text + "==")
    c = keyed.test_client()
    assert c.post(SCORE, json=HAND, headers=bearer(_signed(None, body=text))).status_code == 200
    r = c.post(SCORE, json=HAND, headers=bearer(_signed(None, body=other)))
    assert r.status_code == 401 and "malformed" in r.json["detail"]


def test_exp_is_at_most_seven_days_ahead_with_no_allowance(monkeypatch):
    from types import SimpleNamespace

    import service.web.auth as auth_module

    now = float(int(time.time()))
    monkeypatch.setattr(auth_module, "time", SimpleNamespace(time=lambda: now))
    auth = keyed_auth()
    ok = derive_key(ROOT_KEY, int(now) + DERIVED_MAX_SECONDS - 5)
    assert auth.identify({"HTTP_X_API_KEY": ok}, "scoring").tenant == "acme"
    edge = derive_key(ROOT_KEY, int(now) + DERIVED_MAX_SECONDS)
    assert auth.identify({"HTTP_X_API_KEY": edge}, "scoring").tenant == "acme"
    with pytest.raises(ValueError, match="exp"):
        derive_key(ROOT_KEY, int(now) + DERIVED_MAX_SECONDS + 1)
    beyond = _signed({"kid": ROOT_ID, "exp": int(now) + DERIVED_MAX_SECONDS + 1})
    with pytest.raises(Refused) as refused:
        auth.identify({"HTTP_X_API_KEY": beyond}, "scoring")
    assert refused.value.status == 401 and "exp" in refused.value.detail


@pytest.mark.parametrize(("scheme", "origin", "allowed"), [
    ("http", "http://localhost", True),
    ("http", "HTTP://LOCALHOST", True),
    ("http", "gopher://localhost", False),
    ("http", "https://localhost", False),
    ("http", "http://localhost:8080", False),
    ("http", "http://localhost.evil.example", False),
    ("https", "https://localhost", True),
    ("https", "http://localhost", False),
])
def test_the_service_s_own_pages_are_its_own_scheme_and_host(scheme, origin, allowed):
    env = env_of(HTTP_X_API_KEY=ZETA_KEY, HTTP_ORIGIN=origin, **{"wsgi.url_scheme": scheme})
    if allowed:
        assert KEYED_AUTH.identify(env, "scoring").tenant == "zeta"
    else:
        with pytest.raises(Refused) as refused:
            KEYED_AUTH.identify(env, "scoring")
        assert refused.value.status == 403
    # no Host: nothing is the service's own page
    with pytest.raises(Refused):
        KEYED_AUTH.identify({**env, "HTTP_HOST": None}, "scoring")


def test_an_origin_of_another_scheme_is_refused_by_the_app(keyed):
    c = keyed.test_client()
    r = c.post(SCORE, json=HAND, headers={**bearer(ZETA_KEY), "Origin": "gopher://localhost"})
    assert r.status_code == 403 and r.json["type"] == "/problems/origin-not-allowed"
    assert c.post(SCORE, json=HAND, headers={**bearer(ZETA_KEY),
                                             "Origin": "http://localhost"}).status_code == 200


# (ids: the keys are new in each process, and xdist's workers must collect the same tests)
@pytest.mark.parametrize("query", [
    f"api_key={ZETA_KEY}", f"x=1&API-KEY={ZETA_KEY}", f"token={ZETA_KEY[:20]}",
    "access_token=abc", "Key=secret", f"k={ZETA_KEY.replace('_', '%5F')}", ZETA_KEY,
    f"k={DERIVED_OK}", "k=%79%7A_abcdefgh"],
    ids=["api_key", "API-KEY", "token-piece", "access_token", "Key", "encoded", "bare",
         "derived", "encoded-prefix"])
def test_a_key_in_the_query_string_is_a_401_that_says_where_keys_go(keyed, query, caplog):
    c = keyed.test_client()
    with caplog.at_level(logging.DEBUG):
        # a key in a header beside it changes nothing: the one in the URL is leaked
        r = c.post(f"{SCORE}?{query}", json=HAND, headers=bearer(ZETA_KEY))
    assert r.status_code == 401 and r.mimetype == "application/problem+json"
    doc = r.json
    assert doc["type"] == "/problems/unauthorized" and doc["title"] == "API key in the URL"
    for words in ("Authorization: Bearer <key>", "X-API-Key", "never in the URL", "rotate"):
        assert words in doc["detail"]
    assert 'error="invalid_request"' in r.headers["WWW-Authenticate"]
    text = r.get_data(as_text=True) + "\n".join(rec.getMessage() + repr(vars(rec))
                                                for rec in caplog.records)
    for secret in (ZETA_KEY, ZETA_KEY[10:30], DERIVED_OK[10:40]):
        assert secret not in text


def test_without_keys_only_what_looks_like_a_key_in_the_url_is_refused(app):
    c = app.test_client()
    r = c.post(f"{SCORE}?api_key={ZETA_KEY}", json=HAND)
    assert r.status_code == 401 and r.json["title"] == "API key in the URL"
    assert ZETA_KEY not in r.get_data(as_text=True)
    assert c.post(f"{SCORE}?token=abc&x=1", json=HAND).status_code == 200
    assert c.post(f"{SCORE}?analyze=yahtzee", json=HAND).status_code == 200


def test_problem_documents_name_no_key_from_the_path(keyed):
    c = keyed.test_client()
    for path in (f"/v1/variants/{ZETA_KEY}/hands/score", f"/v1/{ZETA_KEY}",
                 f"/v1/variants/{DERIVED_OK}/hands/score"):
        r = c.post(path, json=HAND, headers=bearer(ZETA_KEY))
        assert r.status_code in (401, 404, 405), path
        assert r.mimetype == "application/problem+json"
        body = r.get_data(as_text=True)
        assert ZETA_KEY[3:] not in body and DERIVED_OK[4:40] not in body
        assert "yz" in r.json["instance"]  # the rest of the path is kept


def _access_lines(environ: dict[str, Any]) -> list[str]:
    """The JSON and text access lines of one request, from gunicorn's own atoms and from
    `AccessAtomsLogger`'s (the formatters of gunicorn.conf.py)."""
    from datetime import timedelta
    from types import SimpleNamespace

    from gunicorn import glogging
    from gunicorn.config import Config

    from service.logs import AccessAtomsLogger, JsonFormatter, TextFormatter

    resp = SimpleNamespace(status="401 Unauthorized", headers=[("X-Request-ID", "r-1")],
                           sent=120)
    req = SimpleNamespace(headers=[("HOST", "x")])
    lines = []
    for logger in (glogging.Logger(Config()), AccessAtomsLogger(Config())):
        atoms = logger.atoms_wrapper_class(
            logger.atoms(resp, req, environ, timedelta(microseconds=1500)))
        record = logging.LogRecord("gunicorn.access", logging.INFO, "", 0, "%(h)s", (atoms,),
                                   None)
        record.created = record.msecs = 0.0
        lines += [JsonFormatter().format(record), TextFormatter().format(record)]
    return lines


@pytest.mark.parametrize("key", [ZETA_KEY, DERIVED_OK], ids=["tenant", "derived"])
def test_access_lines_carry_no_key_from_the_query_the_path_or_the_user_agent(key):
    from urllib.parse import quote

    for where in ("query", "encoded query", "path", "user agent"):
        environ = {"REQUEST_METHOD": "POST", "PATH_INFO": SCORE, "QUERY_STRING": "x=1",
                   "RAW_URI": SCORE, "SERVER_PROTOCOL": "HTTP/1.1",
                   "REMOTE_ADDR": "10.0.0.9", "HTTP_USER_AGENT": "curl/8", "wsgi.input": None}
        if where == "query":
            environ["QUERY_STRING"] = f"api_key={key}&x=1"
        elif where == "encoded query":
            environ["QUERY_STRING"] = "api_key=" + quote(key, safe="").replace("_", "%5F")
        elif where == "path":
            environ["PATH_INFO"] = f"/v1/variants/{key}/hands/score"
        else:
            environ["HTTP_USER_AGENT"] = f"curl/8 ({key})"
        lines = _access_lines(environ)
        for line in lines:
            assert key[3:] not in line and key[10:30] not in line, (where, line)
        marker = f"{key[:key.index('_') + 1]}[redacted]"
        assert lines[0] == lines[2]  # gunicorn's own atoms give the same line
        doc = json.loads(lines[0])
        if where == "query":
            assert doc["query"] == f"api_key={marker}&x=1"
        if where == "encoded query":
            assert doc["query"] == f"api_key={marker}"
        if where == "user agent":
            assert doc["user_agent"] == f"curl/8 ({marker})"
        if where == "path":
            assert doc["path"] == doc["message"].split()[1] == \
                f"/v1/variants/{marker}/hands/score"
            assert f"/v1/variants/{marker}/hands/score" in lines[1]  # the text line


def test_other_log_lines_carry_no_key_in_message_extras_or_traceback():
    from service.logs import JsonFormatter, TextFormatter

    try:
        raise ValueError(f"bad {ZETA_KEY}")
    except ValueError:
        error = sys.exc_info()
    record = logging.LogRecord(
        "gunicorn.error", logging.WARNING, "", 0,
        "Invalid request from ip=10.0.0.9: Invalid Request Line 'GET /x?api_key=%s HTTP/1.1'",
        (ZETA_KEY,), error)
    record.error = f"holding {DERIVED_OK}"
    for formatter in (JsonFormatter(), TextFormatter()):
        line = formatter.format(logging.makeLogRecord(vars(record)))
        assert ZETA_KEY[3:] not in line and DERIVED_OK[4:] not in line, line
        assert "api_key=yz_[redacted] HTTP/1.1" in line and "yzd_[redacted]" in line


@pytest.mark.parametrize(("text", "redacted"), [
    (f"Bearer {ZETA_KEY}", "Bearer yz_[redacted]"),
    (f"/v1/{DERIVED_OK}/x", "/v1/yzd_[redacted]/x"),
    (f"api_key={ZETA_KEY.replace('_', '%5F')}&x=1", "api_key=yz_[redacted]&x=1"),
    (f"k={ZETA_KEY.replace('_', '%5f')}", "k=yz_[redacted]"),
    ("k=%79%7A%5Fabcd_ef%2Dgh&x", "k=yz_[redacted]&x"),
    ("k=yzd%5Feyj.abc", "k=yzd_[redacted]"),
    (f"a {ZETA_KEY} b {ACME_KEY[:12]}", "a yz_[redacted] b yz_[redacted]"),
    ("YZ_ABCDEF", "yz_[redacted]"),
], ids=["bearer", "derived", "encoded", "encoded-lower", "encoded-prefix", "derived-encoded",
        "two", "upper"])
def test_redact_takes_out_anything_that_looks_like_a_key(text, redacted):
    assert redact(text) == redacted
    assert holds_key(text)
    assert redact(redacted) == redacted  # the marker is not a key


@pytest.mark.parametrize("text", [
    "", "/v1/variants/yahtzee/games/analyze", "/v1/variants/yacht/hands/score?x=1",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36",
    "the lazy_dog analyzed xyz", "yz", "yz_", "yzd_", "yz-abc", "quizzes yz.", "%7", "%79",
    "a%2Fb%5Fc", "yz_[redacted]"])
def test_redact_leaves_ordinary_text_alone(text):
    assert redact(text) == text
    assert not holds_key(text)
