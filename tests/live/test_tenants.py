"""Tenants against real servers: two gunicorn instances sharing a real redis-server count one
tenant's quota together; Redis killed, frozen, or restarted without persistence changes where
quotas are counted, never whether requests are answered, and no request waits for it longer
than its timeout; /readyz and `rate_limit_storage_up` say what Redis does now, in every
worker from the start; keys derived for pages and apps work within their restrictions and
stop working when they expire or their parent is revoked, and their end users' quotas are
shared by the pods; a forged X-Forwarded-For from an untrusted peer changes nothing; no API
key reaches the logs. (The same rules in process: tests/web/test_tenancy.py; every spelling
of a path: test_front_door.py; one tenant flooding beside another: test_tenant_flood.py.)

redis-server is Debian's package (.ci/run installs it); without it these tests fail, they do
not skip."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import re
import signal
import threading
import time
from pathlib import Path

import pytest

from service.web.auth import derive_key, derive_secret, hash_key, new_key
from service.web.quotas import REFUSAL_HOLD

from .hostile import HAND, HAND_URL, HOST, post
from .redis_server import RedisServer
from .server import Server, wait_until

#: Every request's bound, seconds (RATE_LIMIT_REDIS_TIMEOUT is 0.25 s: no request waits on
#: Redis longer than that).
TIMEOUT = 2.0
#: The limited tenant's scoring quota (per minute) and its RateLimit-Policy.
QUOTA = 20
POLICY = f'"scoring-60s";q={QUOTA};w=60'

LIMITED_ID, LIMITED_KEY = new_key()
REVOKED_ID, REVOKED_KEY = new_key()
FREE_ID, FREE_KEY = new_key()
#: a quota large enough to be charged to Redis in leases (service/web/quotas.py)
LARGE = 2400
LARGE_ID, LARGE_KEY = new_key()
#: free's keys that may derive others (one revoked)
PARENT_ID, PARENT_KEY = new_key()
GONE_ID, GONE_KEY = new_key()
TENANTS = {"tenants": [
    {"name": "limited", "quotas": {"scoring": f"{QUOTA}/minute"},
     "keys": [{"id": LIMITED_ID, "hash": hash_key(LIMITED_KEY)},
              {"id": REVOKED_ID, "hash": hash_key(REVOKED_KEY), "revoked": True}]},
    {"name": "large", "quotas": {"scoring": f"{LARGE}/minute"},
     "keys": [{"id": LARGE_ID, "hash": hash_key(LARGE_KEY)}]},
    {"name": "free", "origins": ["https://app.free.example"],
     "keys": [{"id": FREE_ID, "hash": hash_key(FREE_KEY)},
              {"id": PARENT_ID, "hash": hash_key(PARENT_KEY),
               "derive": derive_secret(PARENT_KEY)},
              {"id": GONE_ID, "hash": hash_key(GONE_KEY), "derive": derive_secret(GONE_KEY),
               "revoked": True}]},
]}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def score(srv: Server, key: str | None, body: object = HAND,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One hands/score request, bounded by TIMEOUT (a hang fails the test)."""
    return post(srv.port, HAND_URL, body, timeout=TIMEOUT,
                headers={**(bearer(key) if key else {}), **(headers or {})})


def get(srv: Server, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(HOST, srv.port, timeout=TIMEOUT)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def rate_limits(srv: Server) -> dict:
    """/readyz's `rate_limits` detail (asserting /readyz is 200: Redis down is no reason to
    take a pod out of service)."""
    status, body = get(srv, "/readyz")
    assert status == 200, body
    doc = json.loads(body)
    found = [v for k, v in _walk(doc) if k == "rate_limits"]
    assert found, doc
    return found[0]


def _walk(doc: object):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk(v)


def storage_up(srv: Server) -> float:
    """`rate_limit_storage_up` in /metrics."""
    status, body = get(srv, "/metrics")
    assert status == 200
    found = re.search(rb"^rate_limit_storage_up(?:\{[^}]*\})? (\S+)$", body, re.M)
    assert found, body[:2000]
    return float(found.group(1))


def storage_errors(srv: Server) -> float:
    """`rate_limit_storage_errors_total` in /metrics."""
    body = get(srv, "/metrics")[1]
    found = re.search(rb"^rate_limit_storage_errors_total(?:\{[^}]*\})? (\S+)$", body, re.M)
    return float(found.group(1)) if found else 0.0


def use_up(srv: Server, key: str, most: int = QUOTA + 5) -> int:
    """Score with `key` until a 429; how many 200s came first."""
    for n in range(most):
        status, _, body = score(srv, key)
        if status == 429:
            return n
        assert status == 200, (status, body)
    raise AssertionError(f"no 429 after {most} requests")


def assert_allowed(n: int, quota: int) -> None:
    """`n` requests passed a sliding-window quota of `quota` before the first 429: exactly
    `quota`, or one more when a window boundary passed meanwhile (the previous window's count
    then weighs a little less than it did: the sliding window counter is an approximation)."""
    assert quota <= n <= quota + 1, (n, quota)


def clear_of_window_boundary(seconds: float = 10.0) -> None:
    """Wait, if need be, until the next quota window boundary (every minute, the windows of
    `limits` being aligned to the clock) is more than `seconds` away: a sequence that counts
    exact numbers of allowed requests must not straddle one (`assert_allowed`)."""
    left = 60.0 - time.time() % 60.0
    if left < seconds:
        time.sleep(left + 0.5)


def assert_quota_exceeded(answer: tuple[int, dict[str, str], bytes], tenant: str) -> None:
    """A 429 problem with Retry-After, RateLimit and RateLimit-Policy, naming the tenant."""
    status, headers, body = answer
    assert status == 429, (status, body)
    assert headers["content-type"].startswith("application/problem+json")
    doc = json.loads(body)
    assert doc["type"] == "/problems/quota-exceeded" and doc["status"] == 429
    assert doc["tenant"] == tenant
    wait = int(headers["retry-after"])
    assert 1 <= wait <= 120  # the sliding window
    assert headers["ratelimit-policy"] == POLICY
    assert re.fullmatch(r'"scoring-60s";r=0;t=\d+', headers["ratelimit"]), headers


def start_all(*servers: Server) -> None:
    """Start servers side by side (each start waits for its /readyz)."""
    errors: list[BaseException] = []

    def start(srv: Server) -> None:
        try:
            srv.start(timeout=180)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        for srv in servers:
            srv.close()
        raise errors[0]


def small_server(tables: Path, **env: str) -> Server:
    """One worker, only the yahtzee tables warm: quick to start."""
    return Server(table_dir=tables, env={"WEB_CONCURRENCY": "1", "ADVISOR_WARM": "yahtzee",
                                         "ACCESS_LOG": "1", **env})


@pytest.fixture(scope="module")
def redis():
    try:
        server = RedisServer()
    except RuntimeError as exc:
        missing = str(exc)
    else:
        missing = ""
    if missing:  # fail, not skip: CI must run these (outside the except: one message)
        pytest.fail(missing, pytrace=False)
    with server:
        yield server


@pytest.fixture(scope="module")
def pair(tables: Path, redis: RedisServer):
    """Instances A and B: AUTH=keys, the same tenants, quotas counted in `redis`."""
    env = {"AUTH": "keys", "API_KEYS": json.dumps(TENANTS),
           "RATE_LIMIT_STORAGE": redis.url(), "RATE_LIMIT_REDIS_TIMEOUT": "0.25",
           "RATE_LIMIT_REDIS_RETRY": "1"}
    a, b = small_server(tables, **env), small_server(tables, **env)
    start_all(a, b)
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def test_a_tenant_at_its_quota_on_one_instance_is_refused_on_the_other(pair):
    a, b = pair
    assert rate_limits(a)["shared"] and rate_limits(b)["shared"]
    status, headers, _ = score(a, LIMITED_KEY)
    assert status == 200 and headers["ratelimit-policy"] == POLICY
    assert_allowed(use_up(a, LIMITED_KEY), QUOTA - 1)
    assert_quota_exceeded(score(a, LIMITED_KEY), "limited")
    t0 = time.monotonic()
    assert_quota_exceeded(score(b, LIMITED_KEY), "limited")  # counted in Redis, not per pod
    assert time.monotonic() - t0 >= REFUSAL_HOLD - 0.05  # a refusal is held (quotas.py)
    for srv in (a, b):  # the other tenant is unaffected on both
        for _ in range(3):
            assert score(srv, FREE_KEY)[0] == 200
            assert score(srv, None, headers={"X-API-Key": FREE_KEY})[0] == 200


def test_redis_killed_and_restarted(pair, redis):
    """While Redis is down every request is answered (none waits past its bound), under
    per-pod limits, which /readyz and /metrics say; once it is back, limits are shared again
    and the logs tell both switches."""
    a, b = pair
    use_up(a, LIMITED_KEY)
    assert_quota_exceeded(score(b, LIMITED_KEY), "limited")

    redis.kill()
    try:
        seen: list[tuple[int, float]] = []

        def free_on_both() -> None:
            for srv in (a, b):
                t0 = time.monotonic()
                status = score(srv, FREE_KEY)[0]
                seen.append((status, time.monotonic() - t0))

        def both_alone() -> bool:
            free_on_both()
            return not rate_limits(a)["shared"] and not rate_limits(b)["shared"]

        assert wait_until(both_alone, timeout=15), (rate_limits(a), rate_limits(b))
        for srv in (a, b):
            detail = rate_limits(srv)
            assert detail["storage"] == "redis" and "unreachable" in detail["state"], detail
            assert "per pod" in detail["state"], detail
            assert storage_up(srv) == 0
        # per-pod limits: each instance counts the tenant alone, from zero
        assert_allowed(use_up(a, LIMITED_KEY), QUOTA)
        assert_quota_exceeded(score(a, LIMITED_KEY), "limited")
        assert score(b, LIMITED_KEY)[0] == 200
        errors = {srv.port: storage_errors(srv) for srv in (a, b)}

        def tried_again() -> bool:  # RATE_LIMIT_REDIS_RETRY later, a request tries Redis again
            free_on_both()
            return all(storage_errors(srv) > errors[srv.port] for srv in (a, b))

        assert wait_until(tried_again, timeout=15, interval=0.1)
        assert {s for s, _ in seen} == {200}, seen
        slowest = max(t for _, t in seen)

        redis.start()
    finally:  # a failure above must not leave the later tests without Redis
        if redis.proc is None or redis.proc.poll() is not None:
            redis.start()

    def both_shared() -> bool:
        free_on_both()  # a request finds Redis again (one each RATE_LIMIT_REDIS_RETRY)
        return rate_limits(a)["shared"] and rate_limits(b)["shared"]

    assert wait_until(both_shared, timeout=20, interval=0.2), (rate_limits(a), rate_limits(b))
    assert storage_up(a) == 1 and storage_up(b) == 1
    assert {s for s, _ in seen} == {200}, seen
    # shared again. The restarted Redis kept nothing (it persists nothing, as a Redis
    # without an append-only file): the counters start from zero, so the tenant is answered
    # its whole quota again within the same minute (docs/deploy.md says so); its use on A
    # counts on B again
    assert_allowed(use_up(a, LIMITED_KEY), QUOTA)
    assert_quota_exceeded(score(b, LIMITED_KEY), "limited")
    assert score(b, FREE_KEY)[0] == 200
    for srv in (a, b):
        messages = [(d.get("level"), d.get("message", "")) for d in srv.log_records()]
        assert any(level == "WARNING" and m.startswith("quota storage unreachable")
                   for level, m in messages), srv.log()[-3000:]
        assert any(level == "WARNING" and m.startswith("quota storage answers again")
                   for level, m in messages), srv.log()[-3000:]
    print(f"Redis down: {len(seen)} requests all 200, slowest {slowest:.3f} s")


def test_a_frozen_redis_costs_a_request_its_timeout_at_most(pair, redis):
    """Redis stopped (SIGSTOP: connections are accepted, nothing answers): requests wait
    RATE_LIMIT_REDIS_TIMEOUT at most, then go on per pod; SIGCONT: shared again."""
    a, _ = pair
    assert wait_until(lambda: rate_limits(a)["shared"], timeout=10)
    assert redis.proc is not None
    redis.proc.send_signal(signal.SIGSTOP)
    times: list[float] = []
    try:
        def alone() -> bool:
            t0 = time.monotonic()
            assert score(a, FREE_KEY)[0] == 200
            times.append(time.monotonic() - t0)
            return not rate_limits(a)["shared"]

        assert wait_until(alone, timeout=15)
        for _ in range(20):
            alone()
    finally:
        redis.proc.send_signal(signal.SIGCONT)
    # RATE_LIMIT_REDIS_TIMEOUT (0.25 s) at most, plus the answer itself on a busy machine
    # (before: the batch in flight's wait, then its own: 0.52 s)
    assert max(times) < 0.45, times

    def shared() -> bool:
        assert score(a, FREE_KEY)[0] == 200
        return rate_limits(a)["shared"]

    assert wait_until(shared, timeout=20, interval=0.2)
    print(f"Redis frozen: slowest request {max(times):.3f} s")


def test_a_forged_x_forwarded_for_from_an_untrusted_peer_changes_nothing(tables):
    env = {"AUTH": "off", "QUOTA_SCORING": "10/minute"}
    untrusted = small_server(tables, FORWARDED_ALLOW_IPS="10.255.255.1", **env)
    trusted = small_server(tables, FORWARDED_ALLOW_IPS="127.0.0.1", **env)
    start_all(untrusted, trusted)
    try:
        clear_of_window_boundary()
        # the peer (127.0.0.1) is no trusted proxy: every forged client is the peer
        for n in range(10):
            status = score(untrusted, None, headers={"X-Forwarded-For": f"198.51.100.{n}"})[0]
            assert status == 200, n
        for forged in ("198.51.100.200", "203.0.113.9, 198.51.100.201", "10.255.255.1"):
            status, _, body = score(untrusted, None, headers={"X-Forwarded-For": forged})
            assert status == 429 and json.loads(body)["detail"].startswith("This client")
        assert score(untrusted, None)[0] == 429

        # a trusted proxy (127.0.0.1): the client it names is the key
        clear_of_window_boundary()
        for _ in range(10):
            assert score(trusted, None, headers={"X-Forwarded-For": "198.51.100.1"})[0] == 200
        assert score(trusted, None, headers={"X-Forwarded-For": "198.51.100.1"})[0] == 429
        # a client's own forged entry, left of the one the proxy added, is never reached
        forged = {"X-Forwarded-For": "203.0.113.77, 198.51.100.1"}
        assert score(trusted, None, headers=forged)[0] == 429
        for client in ("198.51.100.2", "2001:db8::5"):
            assert score(trusted, None, headers={"X-Forwarded-For": client})[0] == 200
        assert score(trusted, None)[0] == 200  # the proxy's own requests: its own key
    finally:
        untrusted.close()
        trusted.close()


def test_keys_appear_in_no_log_line(pair):
    """Valid, revoked, unknown and mangled keys in both headers, with good, invalid and
    over-quota requests: the logs name tenants, never a key or a piece of one."""
    a, _ = pair
    use_up(a, LIMITED_KEY)  # the limited tenant's requests below are refused (429)
    _, unknown = new_key()
    wrong_secret = FREE_KEY[:-6] + "AAAAAA"
    keys = [LIMITED_KEY, REVOKED_KEY, FREE_KEY, unknown, wrong_secret]
    bodies = [HAND, {"dice": [7, 7, 7]}, {"dice": "nonsense"}, [1, 2]]
    ids: dict[str, tuple[str, int]] = {}  # request id -> (key, status)
    n = 0
    for key in keys:
        for header in ("Authorization", "X-API-Key"):
            value = f"Bearer {key}" if header == "Authorization" else key
            for body in bodies:
                n += 1
                rid = f"keys-test-{n}"
                status, headers, _ = score(a, None, body,
                                           headers={header: value, "X-Request-ID": rid})
                assert status < 500
                assert headers["x-request-id"] == rid
                ids[rid] = (key, status)
        # a key where a browser page sends it, from an origin its tenant does not list
        n += 1
        rid = f"keys-test-{n}"
        status, _, _ = score(a, key, headers={"X-Request-ID": rid,
                                              "Origin": "https://evil.example"})
        ids[rid] = (key, status)
    statuses = {s for _, s in ids.values()}
    assert {200, 401, 403, 422, 429} <= statuses, statuses

    def logged() -> dict[str, dict]:
        return {d["request_id"]: d for d in a.log_records()
                if d.get("logger") == "gunicorn.access" and d.get("request_id") in ids}

    assert wait_until(lambda: len(logged()) == len(ids), timeout=10), sorted(logged())
    log = a.log()
    for key in keys:
        assert key not in log
        secret = key.split("_", 2)[2]
        for i in range(len(secret) - 11):  # nor 12 characters of its secret
            assert secret[i:i + 12] not in log, (key, secret[i:i + 12])
    tenant_of = {LIMITED_KEY: "limited", FREE_KEY: "free"}
    for rid, line in logged().items():
        key, status = ids[rid]
        assert line["status"] == status
        if key in tenant_of:  # a valid key: the access line names its tenant
            assert line["tenant"] == tenant_of[key], line
        else:
            assert "tenant" not in line, line


def test_readiness_and_the_storage_gauge_tell_the_truth_from_the_start(tables):
    """A pod started while Redis is down says so before any request (/readyz and
    `rate_limit_storage_up`), says it is shared again as soon as Redis answers, and down
    again when it is killed, without waiting for a request to try it (the pod's state,
    which every worker reads: /readyz and the gauge agree whichever worker answers); a pod
    started with Redis up says 1 at once."""
    redis = RedisServer()  # its port is free: nothing listens yet
    srv = Server(table_dir=tables, env={
        "AUTH": "keys", "API_KEYS": json.dumps(TENANTS), "ADVISOR_WARM": "yahtzee",
        "WEB_CONCURRENCY": "2", "RATE_LIMIT_STORAGE": redis.url(),
        "RATE_LIMIT_REDIS_RETRY": "60"})  # no retry by a request within the test
    srv.start(timeout=180)
    try:
        detail = rate_limits(srv)
        assert not detail["shared"] and "unreachable" in detail["state"], detail
        assert storage_up(srv) == 0
        redis.start()
        t0 = time.monotonic()
        assert wait_until(lambda: rate_limits(srv)["shared"], timeout=10, interval=0.2)
        took = time.monotonic() - t0
        # the pod's state, not one worker's: the gauge agrees at once, whichever worker
        # answers the scrape, and so does every worker's /readyz
        assert storage_up(srv) == 1
        assert all(rate_limits(srv)["shared"] for _ in range(6))
        print(f"/readyz saw Redis back after {took:.2f} s, with no API request")
        # killed with no traffic: /readyz and the gauge both say so, and agree
        redis.kill()
        t0 = time.monotonic()
        assert wait_until(lambda: not rate_limits(srv)["shared"], timeout=10, interval=0.2)
        assert storage_up(srv) == 0
        assert not any(rate_limits(srv)["shared"] for _ in range(6))
        print(f"/readyz saw Redis gone after {time.monotonic() - t0:.2f} s, no traffic")
        redis.start()
        assert wait_until(lambda: rate_limits(srv)["shared"] and storage_up(srv) == 1,
                          timeout=10, interval=0.2)
        other = small_server(tables, AUTH="keys", API_KEYS=json.dumps(TENANTS),
                             RATE_LIMIT_STORAGE=redis.url())
        with other:
            assert storage_up(other) == 1  # before any request
    finally:
        srv.close()
        redis.close()


def test_derived_keys_against_live_servers(pair):
    """A key derived for a page: it works within its restrictions on both pods, its end
    user's quota is counted in Redis across them, and it stops working when it expires or
    when its parent is revoked; a changed payload is refused."""
    a, b = pair
    assert wait_until(lambda: rate_limits(a)["shared"] and rate_limits(b)["shared"],
                      timeout=20, interval=0.2)
    soon = int(time.time()) + 600
    key = derive_key(PARENT_KEY, soon, operations=["scoring"], user=f"u{time.time_ns()}",
                     origins=["https://app.free.example"], quotas={"scoring": "3/minute"})
    page = {"Origin": "https://app.free.example"}
    answers = [score(srv, key, headers=page) for srv in (a, b, a)]
    assert [s for s, _, _ in answers] == [200, 200, 200], answers
    assert '"scoring-user-60s";q=3;w=60' in answers[0][1]["ratelimit-policy"]
    status, _, body = score(b, key, headers=page)
    assert status == 429 and "User u" in json.loads(body)["detail"]  # shared by the pods
    assert score(a, key, headers={"Origin": "https://evil.example"})[0] == 403
    suggest = post(a.port, "/v1/variants/yahtzee/moves/suggest",
                   {"dice": [1, 1, 1, 1, 1], "throw": 3}, timeout=TIMEOUT,
                   headers=bearer(key))
    assert suggest[0] == 403  # an operation class it does not allow
    expiring = derive_key(PARENT_KEY, int(time.time()) + 2)
    assert score(a, expiring)[0] == 200
    time.sleep(2.5)
    status, headers, body = score(a, expiring)
    assert status == 401 and json.loads(body)["title"] == "Expired API key"
    assert 'error="invalid_token"' in headers["www-authenticate"]
    revoked = derive_key(GONE_KEY, soon)
    assert score(a, revoked)[0] == 401
    body, mac = key.split(".")
    assert score(a, body[:-2] + "AA." + mac)[0] == 401
    # one spelling a key: the mac's last character with its two unused bits set is refused
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(mac[-1])
    for bits in (1, 2, 3):
        assert score(b, f"{body}.{mac[:-1]}{alphabet[last | bits]}", headers=page)[0] == 401
    assert score(b, key, headers=page)[0] in (200, 429)  # the one spelling works
    # at most 7 days: a key signed by its parent's secret for 7 days and a minute is refused
    payload = {"kid": PARENT_ID, "exp": int(time.time()) + 7 * 24 * 3600 + 60}
    text = "yzd_" + base64.urlsafe_b64encode(
        json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")
    digest = hmac.new(bytes.fromhex(derive_secret(PARENT_KEY)), text.encode(),
                      hashlib.sha256).digest()
    too_long = f"{text}.{base64.urlsafe_b64encode(digest).decode().rstrip('=')}"
    status, _, body_ = score(a, too_long)
    assert status == 401 and "7 days" in json.loads(body_)["detail"], body_
    # the service's own pages are its own scheme and host, not any scheme of its host
    own = f"127.0.0.1:{a.port}"
    assert score(a, FREE_KEY, headers={"Origin": f"http://{own}"})[0] == 200
    assert score(a, FREE_KEY, headers={"Origin": f"gopher://{own}"})[0] == 403


def test_a_large_quota_is_exact_across_two_pods(pair):
    """A quota of LARGE a minute, asked on both pods in turn: answered exactly LARGE (one
    more when a window boundary passed meanwhile: the sliding window), never more."""
    a, b = pair
    assert wait_until(lambda: rate_limits(a)["shared"] and rate_limits(b)["shared"],
                      timeout=20, interval=0.2)
    clear_of_window_boundary(40)
    answered = 0
    for n in range(LARGE + 5):
        status = score(a if n % 2 else b, LARGE_KEY)[0]
        assert status in (200, 429), status
        answered += status == 200
    assert_allowed(answered, LARGE)
    print(f"a quota of {LARGE}/minute: {answered} answered over two pods")


# --- the meter: each rule against a real Redis and against memory:// with 2 workers -------
def _metered_tenants() -> tuple[dict, dict[str, str]]:
    """Tenants of their own for one test (their counters start from nothing on a Redis the
    tests share), and their keys by role."""
    run = f"{time.time_ns() % 10**9}"
    keys = {role: new_key() for role in ("same", "root", "pod")}
    tenants = {"tenants": [
        {"name": f"same-{run}", "origins": ["https://app.metered.example"],
         "quotas": {"scoring": "3/hour", "advice": "3/hour"},
         "keys": [{"id": keys["same"][0], "hash": hash_key(keys["same"][1])}]},
        {"name": f"pod-{run}", "quotas": {"scoring": "5/hour"},
         "keys": [{"id": keys["pod"][0], "hash": hash_key(keys["pod"][1])},
                  {"id": keys["root"][0], "hash": hash_key(keys["root"][1]),
                   "derive": derive_secret(keys["root"][1])}]},
    ]}
    return tenants, {role: key for role, (_, key) in keys.items()}


@pytest.mark.parametrize("storage", ["memory", "redis"])
def test_the_meter_rules_against_live_pods(tables, redis, storage):
    """Each rule the last review found broken, on a pod of 2 workers counting in its memory,
    and on two pods sharing a real Redis; every request on a new connection (any worker):
    1. two classes whose quotas read the same (3/hour) count apart;
    2. an end user refused by its own quota uses none of its tenant's;
    3. a batch is charged one unit an item, and refused whole when they do not fit;
    4. a pod's quota is the pod's, whichever of its workers answers;
    5. every answer says what is left (RateLimit), and browsers may read it."""
    tenants, key = _metered_tenants()
    env = {"AUTH": "keys", "API_KEYS": json.dumps(tenants), "ADVISOR_WARM": "yahtzee",
           "WEB_CONCURRENCY": "2"}
    if storage == "redis":
        env.update(RATE_LIMIT_STORAGE=redis.url(), RATE_LIMIT_REDIS_TIMEOUT="0.25")
        servers = [Server(table_dir=tables, env=env), Server(table_dir=tables, env=env)]
    else:
        servers = [Server(table_dir=tables, env=env)]
    start_all(*servers)
    try:
        turn = iter(range(10_000))

        def ask(url: str, who: str, body: object = HAND, **headers: str):
            srv = servers[next(turn) % len(servers)]
            return post(srv.port, url, body, timeout=TIMEOUT,
                        headers={**bearer(who), **headers})

        suggest = {"dice": [1, 1, 1, 1, 1], "throw": 3}
        page = {"Origin": "https://app.metered.example"}
        seen = [ask(HAND_URL, key["same"], **page) for _ in range(4)]
        assert [s for s, _, _ in seen] == [200, 200, 200, 429], seen  # 4.
        assert [h["ratelimit"].split(";")[1] for _, h, _ in seen[:3]] == ["r=2", "r=1", "r=0"]
        for _, headers, _ in seen[:3]:  # 5.
            assert headers["ratelimit-policy"] == '"scoring-3600s";q=3;w=3600'
            assert "RateLimit" in headers["access-control-expose-headers"]
        assert [ask(SUGGEST_URL, key["same"], suggest)[0]
                for _ in range(4)] == [200, 200, 200, 429]  # 1.
        # 2. the user's 2/hour refuses its third and later; its tenant (5/hour) used 2
        user = derive_key(key["root"], int(time.time()) + 600, user="u1",
                          quotas={"scoring": "2/hour"})
        assert [ask(HAND_URL, user)[0] for _ in range(5)] == [200, 200, 429, 429, 429]
        # 3. a batch of 2 fits the 3 left; then one of 2 does not (1 left), refused whole
        status, headers, _ = ask(BATCH_URL, key["pod"], [HAND] * 2)
        assert status == 200 and headers["ratelimit"].startswith('"scoring-3600s";r=1;')
        status, _, body = ask(BATCH_URL, key["pod"], [HAND] * 2)
        assert status == 429 and "batch of 2 items" in json.loads(body)["detail"]
        assert [ask(HAND_URL, key["pod"])[0] for _ in range(2)] == [200, 429]
    finally:
        for srv in servers:
            srv.close()


SUGGEST_URL = "/v1/variants/yahtzee/moves/suggest"
BATCH_URL = HAND_URL + "/batch"
