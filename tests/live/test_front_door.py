"""One front door, against a live keyed gunicorn: every spelling of a request is refused, or
it reaches an operation authenticated and charged (service/web/frontdoor.py).

The spellings are generated, not listed by hand: for each of several operations, its path
with doubled and tripled slashes at every place, dot segments, percent-encoding of each
character, letter case, a trailing slash, parameters, a query and a fragment; each as an
origin-form and as an absolute-form request target; then headers that some servers read as
the path (`X-Original-URL`, `X-Rewrite-URL`) or the method (`X-HTTP-Method-Override` and
kin); HEAD, OPTIONS and other methods; and credentials that are empty or of other schemes.
Each is sent on a raw socket (no client library normalises it first), without a key and
with one, and:

- without a valid key, no spelling is answered 2xx (nor 202);
- with the key, a 2xx answer carries the tenant's `RateLimit-Policy` (it was charged), and
  the tenant's `tenant_requests_total` in /metrics grew by exactly the 2xx answers (every
  one was counted, as the tenant's);
- a tenant with a quota of N is refused the (N+1)th request whatever spellings the N took;
- keys nested deep or too long, and keys in the query string, are refused (401; a header
  over gunicorn's limit gets gunicorn's own 4xx), never with a 5xx, and no key reaches the
  server's log.
"""

from __future__ import annotations

import base64
import json
import re
import socket
from pathlib import Path
from urllib.parse import quote

import pytest

from service.web.auth import hash_key, new_key

from .hostile import HOST
from .server import Server, wait_until

KEY_ID, KEY = new_key()
TIGHT_ID, TIGHT_KEY = new_key()
#: the tight tenant's scoring quota a minute
TIGHT = 12
TENANTS = {"tenants": [
    {"name": "door", "quotas": {"scoring": "100000/minute", "advice": "100000/minute"},
     "keys": [{"id": KEY_ID, "hash": hash_key(KEY)}]},
    {"name": "tight", "quotas": {"scoring": f"{TIGHT}/minute"},
     "keys": [{"id": TIGHT_ID, "hash": hash_key(TIGHT_KEY)}]},
]}
HAND = json.dumps({"dice": [1, 2, 3, 4, 5]}).encode()
SUGGEST = json.dumps({"dice": [1, 2, 3, 4, 5], "throw": 3}).encode()
#: (method, canonical path, body) of the operations tried
OPERATIONS = [
    ("POST", "/v1/variants/yahtzee/hands/score", HAND),
    ("POST", "/v1/variants/yahtzee/hands/score/batch", b"[" + HAND + b"]"),
    ("POST", "/v1/variants/kniffel/moves/suggest", SUGGEST),
    ("GET", "/v1/variants", b""),
    ("GET", "/v1/variants/yacht", b""),
]
#: answers that reach no operation: the router served nothing (404, 405), a redirect to the
#: canonical path, a request the HTTP server refused (400), or a refusal of the front door
REFUSED = {301, 302, 307, 308, 400, 401, 403, 404, 405, 414, 429}


def path_spellings(path: str) -> list[str]:
    """Ways to write `path` that some component might read as it."""
    segments = path.strip("/").split("/")
    out = {path, "/" + path, "//" + path, path + "/", path + "//", path + "/.",
           path + "?x=1", path + "#frag", path + ";p=1", path + "%00", path + "%20",
           "/./" + path.lstrip("/"), "/x/../" + path.lstrip("/"), path.replace("/", "\\"),
           path.replace("/", "%2F"), path.replace("/", "%2f"), path.upper(),
           quote(path, safe=""), "/" + path.lstrip("/").replace("/", "/./")}
    for i in range(1, len(segments)):
        head, tail = "/".join(segments[:i]), "/".join(segments[i:])
        out |= {f"/{head}//{tail}", f"/{head}///{tail}", f"/{head}/./{tail}",
                f"/{head}/x/../{tail}", f"/{head}%2F{tail}"}
    for i, segment in enumerate(segments):
        up = list(segments)
        up[i] = segment.upper()
        out.add("/" + "/".join(up))
        up[i] = segment.capitalize()
        out.add("/" + "/".join(up))
    for i, ch in enumerate(path):
        if ch != "/":
            out.add(path[:i] + f"%{ord(ch):02X}" + path[i + 1:])
            out.add(path[:i] + f"%{ord(ch):02x}" + path[i + 1:])
    return sorted(out)


def targets(path: str, port: int) -> list[str]:
    """Every spelling as an origin-form and an absolute-form request target."""
    spellings = path_spellings(path)
    absolute = [f"http://{HOST}:{port}{s}" for s in spellings if s.startswith("/")]
    return spellings + absolute + [f"http://other.example{path}", f"HTTP://{HOST}:{port}{path}"]


def raw(port: int, method: str, target: str, body: bytes = b"",
        headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on a raw socket (nothing normalises the target): (status, headers, body);
    status 0 when the server closed the connection without an answer."""
    lines = [f"{method} {target} HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close",
             f"Content-Length: {len(body)}"]
    if body:
        lines.append("Content-Type: application/json")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    with socket.create_connection((HOST, port), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    if not data:
        return 0, {}, b""
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    found = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        found[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), found, rest


def tenant_requests(srv: Server, tenant: str) -> float:
    """The sum of `tenant_requests_total` of a tenant, over operations and statuses."""
    status, _, body = raw(srv.port, "GET", "/metrics")
    assert status == 200
    total = 0.0
    for line in body.decode().splitlines():
        match = re.match(r'tenant_requests_total\{([^}]*)\} ([0-9.e+]+)', line)
        if match and f'tenant="{tenant}"' in match.group(1):
            total += float(match.group(2))
    return total


@pytest.fixture(scope="module")
def keyed(tables: Path):
    # one worker: quotas in memory are per worker, and the quota test counts exactly
    env = {"AUTH": "keys", "API_KEYS": json.dumps(TENANTS), "ADVISOR_WARM": "yahtzee",
           "WEB_CONCURRENCY": "1"}
    with Server(table_dir=tables, env=env) as srv:
        yield srv


def _check_without_key(srv: Server, method: str, target: str, body: bytes,
                       headers: dict[str, str], seen: list[str]) -> None:
    status, got, answer = raw(srv.port, method, target, body, headers)
    seen.append(f"{status} {method} {target} {headers}")
    assert "ratelimit-policy" not in got, seen[-1]
    if target == "/healthz" and status == 200:  # health's own answer, not the operation's
        assert json.loads(answer)["status"] == "ok", seen[-1]
        return
    assert status in REFUSED or status == 0, seen[-1]


#: credentials that are no valid key: missing, empty, other schemes, a key cut short
NO_KEYS = [{}, {"Authorization": "Bearer"}, {"Authorization": "Bearer "},
           {"Authorization": 'Bearer ""'}, {"X-API-Key": ""}, {"X-API-Key": " "},
           {"Authorization": "Basic ZG9vcjpkb29y"}, {"Authorization": f"Token {KEY}"},
           {"Authorization": f"Basic {KEY}"}, {"Authorization": KEY},
           {"Authorization": f"Bearer {KEY[:-1]}"}, {"X-API-Key": KEY[:-2]},
           {"Authorization": f"Bearer {KEY[:12]}"}, {"Cookie": f"api_key={KEY}"},
           {"X-Api-Key-": KEY}]


def test_no_spelling_reaches_an_operation_without_a_key(keyed):
    seen: list[str] = []
    for method, path, body in OPERATIONS:
        for target in targets(path, keyed.port):
            _check_without_key(keyed, method, target, body, {}, seen)
        for headers in NO_KEYS:
            _check_without_key(keyed, method, path, body, headers, seen)
            _check_without_key(keyed, method, "//" + path.lstrip("/"), body, headers, seen)
        for other in ("HEAD", "OPTIONS", "GET", "PUT", "PATCH", "DELETE", "post", "TRACE"):
            _check_without_key(keyed, other, path, body, {}, seen)
            _check_without_key(keyed, other, "//" + path.lstrip("/"), body, {}, seen)
        # headers some servers read as the path, or as the method
        for name in ("X-Original-URL", "X-Rewrite-URL", "X-Forwarded-Path",
                     "X-Forwarded-Prefix", "X-Envoy-Original-Path"):
            _check_without_key(keyed, method, path, body, {name: "/healthz"}, seen)
            _check_without_key(keyed, method, "/healthz", body, {name: path}, seen)
        for name in ("X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override"):
            for value in ("GET", "POST", "OPTIONS", "HEAD"):
                _check_without_key(keyed, method, path, body, {name: value}, seen)
                other = "GET" if method == "POST" else "POST"
                _check_without_key(keyed, other, path, body, {name: method}, seen)
        _check_without_key(keyed, "POST" if method == "GET" else "GET",
                           path + "?_method=" + method, body, {}, seen)
    print(f"{len(seen)} spellings without a valid key, none answered 2xx; statuses: "
          f"{sorted({int(s.split()[0]) for s in seen})}")


def test_every_spelling_that_is_answered_was_authenticated_charged_and_counted(keyed):
    before = tenant_requests(keyed, "door")
    answered = charged = refused = 0
    for method, path, body in OPERATIONS:
        spellings = [(method, t, {}) for t in targets(path, keyed.port)]
        spellings += [(m, path, {}) for m in ("HEAD", "OPTIONS")]
        spellings += [(method, path, {"Authorization": "Basic ZG9vcjpkb29y"}),
                      (method, path, {"Authorization": f"bearer {KEY}"}),
                      (method, path, {"Authorization": f"Bearer   {KEY}  "})]
        for how, target, extra in spellings:
            headers = {"Authorization": f"Bearer {KEY}", **extra}
            if extra.get("Authorization", "").startswith("Basic"):
                headers = {**extra, "X-API-Key": KEY}  # a proxy's Basic beside the key
            status, got, _ = raw(keyed.port, how, target, body, headers)
            where = f"{status} {how} {target} {extra}"
            charged += "ratelimit-policy" in got
            if 200 <= status < 300:
                answered += 1
                assert got.get("ratelimit-policy", "").startswith('"'), where
            elif "ratelimit-policy" not in got:  # not charged: it reached no operation
                refused += 1
                assert status in REFUSED or status == 0, where
    assert answered >= 30  # the canonical and the router's other spellings are answered
    # every charged request was counted as the tenant's (an operation may refuse a body
    # after the charge: a misspelt variant is a 404 of the view's)
    assert tenant_requests(keyed, "door") - before == charged
    print(f"with the key: {answered} answered 2xx, {charged - answered} refused by the "
          f"operation, all charged and counted; {refused} reached no operation")


def test_a_quota_counts_every_spelling(keyed):
    path = "/v1/variants/yahtzee/hands/score"
    spellings = targets(path, keyed.port)
    headers = {"Authorization": f"Bearer {TIGHT_KEY}"}
    answered = 0
    for target in spellings:
        status, _, _ = raw(keyed.port, "POST", target, HAND, headers)
        answered += 200 <= status < 300
        if answered == TIGHT:
            break
    assert answered == TIGHT
    status, _, body = raw(keyed.port, "POST", path, HAND, headers)
    assert status == 429 and json.loads(body)["type"] == "/problems/quota-exceeded"
    status, _, _ = raw(keyed.port, "POST", "//" + path.lstrip("/"), HAND, headers)
    assert status == 429


def _nested_key(depth: int) -> str:
    """A derived key whose payload is `depth` nested brackets (json.loads recursed on it)."""
    payload = base64.urlsafe_b64encode(b"[" * depth).decode().rstrip("=")
    return f"yzd_{payload}.{'A' * 43}"


def _long_key(size: int) -> str:
    """A derived key `size` characters long (a payload of base64url text)."""
    return f"yzd_{'QUFB' * ((size - 48) // 4)}.{'A' * 43}"


def test_unreadable_keys_and_keys_in_the_url_are_refused_and_never_logged(keyed):
    """Keys nested deep, too long for the service or for gunicorn's header limit, and keys
    in the query string: each a 401 (a header over gunicorn's limit: its own 431 or 400),
    never a 5xx; and none of them, nor the tenant's key sent in a URL, in the server's log."""
    path, body = "/v1/variants/yahtzee/hands/score", HAND
    sent: list[str] = [KEY]
    seen: list[str] = []

    def check(target: str, headers: dict[str, str], allowed: set[int]) -> bytes:
        status, got, answer = raw(keyed.port, "POST", target, body, headers)
        seen.append(f"{status} {target[:60]} {[(k, len(v)) for k, v in headers.items()]}")
        assert status in allowed, seen[-1]
        if status == 401:
            assert got["content-type"] == "application/problem+json", seen[-1]
            assert got["www-authenticate"].startswith('Bearer realm="yahtzee-scoring"')
        return answer

    for key in (_nested_key(1500), _nested_key(900), _long_key(5 * 1024)):
        sent.append(key)
        for headers in ({"X-API-Key": key}, {"Authorization": f"Bearer {key}"}):
            check(path, headers, {401})
    huge = _long_key(64 * 1024)
    sent.append(huge)
    for headers in ({"X-API-Key": huge}, {"Authorization": f"Bearer {huge}"}):
        check(path, headers, {400, 431})  # gunicorn's limit_request_field_size (8190)
    for query in (f"api_key={KEY}", f"x=1&token={KEY}", f"k={KEY.replace('_', '%5F')}", KEY):
        answer = check(f"{path}?{query}", {"Authorization": f"Bearer {KEY}"}, {401})
        doc = json.loads(answer)
        assert doc["title"] == "API key in the URL", doc
        assert "Authorization: Bearer <key>" in doc["detail"] and "X-API-Key" in doc["detail"]
        assert KEY[3:] not in answer.decode()
    # a path that needs no key, with one in its URL, and one in the User-Agent: answered,
    # and logged without it
    status, _, _ = raw(keyed.port, "GET", f"/healthz?api_key={KEY}", b"",
                       {"User-Agent": f"probe {KEY}"})
    assert status == 200
    assert wait_until(lambda: "/healthz" in keyed.log(), 10)
    log = keyed.log()
    for key in sent:
        for i in range(4, len(key) - 16, 16):
            assert key[i:i + 16] not in log, (key[:20], key[i:i + 16])
    assert "yz_[redacted]" in log
    print(f"{len(seen)} requests: {sorted({s.split()[0] for s in seen})}")
