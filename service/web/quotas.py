"""Quotas: how many requests of each operation class a tenant may make, counted in Redis
across every pod (`RATE_LIMIT_STORAGE=redis://...`) or in each pod's memory.

Operation classes: `scoring` (hands, scorecards, games/turn, games/validate, the variants and
their rules), `advice` (moves/suggest, moves/bot, positions/value), `analysis`
(games/analyze, games/win-probability), each declared by its resource's blueprint
(`openapi.new_blueprint`) and read off the route the request took (`frontdoor.Router`), and
`builds` (a new table of house rules queued for the pod's build process:
`Quotas.admit_build`). A request is charged to its caller (`service.caller`): the tenant's
quota under the tenant's name (without keys: the client's address), and a derived key's
end user's own quota, where it has one, beside it. Each quota is in the notation of
the `limits` library ("600/minute", "20/second;600/minute", "unlimited"), counted with its
sliding-window counter (no burst of twice the quota at a window's edge, as a fixed window
allows; one Redis round trip a request).

Over quota: `QuotaExceeded`, which the web layer answers with a 429 problem, `Retry-After`
and the IETF draft's `RateLimit` and `RateLimit-Policy` headers
(draft-ietf-httpapi-ratelimit-headers-10): `RateLimit-Policy: "scoring-60s";q=600;w=60` on
every answer of the class, and `RateLimit: "scoring-60s";r=0;t=12` on the 429. Under
gevent the 429 is held `REFUSAL_HOLD` seconds first (`hold_refusal`), so that a tenant
flooding past its quota cannot take the CPU from the others with refusals.

If Redis fails (refused, or slower than `RATE_LIMIT_REDIS_TIMEOUT`), quotas are counted in
the pod's memory (per-pod limits) until Redis answers again, tried every
`RATE_LIMIT_REDIS_RETRY` seconds, and at once when /readyz finds it back (`Quotas.status`
pings Redis itself, at most every `READY_CHECK_SECONDS`); the switch is logged both ways,
shown by `rate_limit_storage_up` in /metrics (set by every worker when it starts, after a
ping: `Quotas.worker_started`) and by /readyz's `rate_limits` detail. No request waits for
Redis longer than the timeout (`RedisCharges`), and none fails because of it.

Large quotas (twice `LEASE_FROM` requests a window and more, e.g. "600000/minute") are
charged in leases (`lease_size`): a worker takes up to `MAX_LEASE` requests of the quota at
once from the storage and answers them without asking it again, for at most
`LEASE_SECONDS`; near the limit it charges one request at a time. So a busy tenant costs one
Redis round trip (or one count in memory) per lease, not per request, and is never answered
more than its quota; it may be refused up to one lease per worker early (a thousandth of the
quota each). Smaller quotas are charged one request at a time, exactly.

A Redis restarted without persistence starts every counter from zero: for up to one window
of each quota, a tenant may be answered up to its quota again (docs/deploy.md says so, and
what the chart recommends: a Redis with an append-only file).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from typing import Any

from gevent import monkey
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from prometheus_client import Counter, Gauge

from ..caller import ANONYMOUS, Caller, current_caller, waiting
from ..config import Settings

log = logging.getLogger(__name__)

#: The classes a request to an operation belongs to (each resource's blueprint says which).
REQUEST_CLASSES = ("scoring", "advice", "analysis")
#: Every class with a quota: the requests' and `builds` (charged when a build is queued).
OPERATION_CLASSES = (*REQUEST_CLASSES, "builds")
#: Seconds a refusal (429) is held before it is answered, under gevent (`hold_refusal`).
REFUSAL_HOLD = 0.5
#: The Redis keys' prefix (one Redis may serve other apps).
KEY_PREFIX = "yahtzee-scoring-quota"
#: Seconds /readyz keeps what its last ping of Redis found.
READY_CHECK_SECONDS = 1.0
#: Large quotas are charged to Redis in leases (`lease_size`): a limit of at least twice
#: this many requests a window is taken a thousandth at a time, at most `MAX_LEASE`
#: requests, each lease spent by one worker within `LEASE_SECONDS` or dropped.
LEASE_FROM = 1000
MAX_LEASE = 64
LEASE_SECONDS = 1.0

STORAGE_UP = Gauge(
    "rate_limit_storage_up",
    "1 while quotas are counted in the configured storage (Redis: shared by every pod), 0 "
    "while Redis is unreachable and each pod counts them alone (the lowest of the live "
    "workers; each sets it when it starts, after a ping).",
    multiprocess_mode="livemin",
)
STORAGE_ERRORS = Counter(
    "rate_limit_storage_errors_total",
    "Calls to the quota storage (Redis) that failed or timed out, each answered under "
    "per-pod limits instead.",
)

BUILDS = Counter(
    "tenant_table_builds_total",
    "Tables of house rules queued for the build process, by tenant.",
    ["tenant"],
)

def lease_size(item: RateLimitItem) -> int:
    """How many requests of a limit a worker takes from Redis at once: 1 (each request
    charged, exactly) below `LEASE_FROM` a window; above, a thousandth of the limit, at
    most `MAX_LEASE`."""
    return min(MAX_LEASE, item.amount // LEASE_FROM) if item.amount >= 2 * LEASE_FROM else 1


def parse_quota(text: str) -> tuple[RateLimitItem, ...]:
    """The limits a quota names ("600/minute", "20/second;600/minute"); () for
    "unlimited". Raises ValueError with the notation when it is not one."""
    text = text.strip()
    if text.lower() in ("unlimited", "none", ""):
        return ()
    try:
        items = tuple(parse_many(text))
    except ValueError:
        raise ValueError(f"{text!r} is not a quota: use '600/minute', '20/second;600/minute' "
                         f"or 'unlimited'") from None
    if not items:
        raise ValueError(f"{text!r} names no limit")
    return items


class _Charge:
    """One request's charge of one limit, waiting to be sent to Redis (`RedisCharges`)."""

    __slots__ = ("amount", "done", "error", "expiry", "keys", "limit", "result")

    def __init__(self, keys: tuple[str, str], limit: int, expiry: int, amount: int) -> None:
        self.keys, self.limit, self.expiry, self.amount = keys, limit, expiry, amount
        self.done = threading.Event()
        self.result = False
        self.error: BaseException | None = None


class RedisCharges:
    """Charges of requests that arrive together go to Redis together: one pipeline of the
    `limits` sliding-window script (the one `SlidingWindowCounterRateLimiter.hit` runs, on
    the same keys) per round trip.

    A sender (a greenlet under gevent, else a thread; one per worker process, started by
    its first charge) sends every charge waiting as one pipeline, and again as soon as that
    answers if more arrived meanwhile. Each request waits for its own answer at most
    `timeout` seconds from when it asked, whatever is in flight: then it gives up
    (TimeoutError) and its caller counts it in memory. So each request is still charged in
    Redis before it is answered, one round trip serves many requests under load, and a
    frozen Redis costs a request the timeout, not the batch before its own too. When a
    pipeline fails, the charges waiting behind it fail at once with it.
    """

    def __init__(self, storage: Any, timeout: float) -> None:
        self.storage = storage
        self.script = storage.lua_acquire_sliding_window  # registered by limits
        self.timeout = timeout
        self._pid = 0
        self._key_names: dict[str, tuple[str, str]] = {}

    def _start(self) -> None:
        """The sender and its queue, made in the process that charges (a worker, after gevent
        patched it: threads do not survive a fork, and primitives made before the patch
        would block the worker instead of a greenlet)."""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: list[_Charge] = []
        self._sender = threading.Thread(target=self._send_forever, daemon=True,
                                        name="quota-charges")
        self._sender.start()
        self._pid = os.getpid()

    def _keys(self, key: str) -> tuple[str, str]:
        """The two Redis keys of a limit's sliding window, as `limits` names them (kept:
        a tenant's keys are the same on every request)."""
        found = self._key_names.get(key)
        if found is None:
            if len(self._key_names) >= 4096:
                self._key_names.clear()
            s = self.storage
            found = self._key_names[key] = (s.prefixed_key(s._previous_window_key(key)),
                                            s.prefixed_key(s._current_window_key(key)))
        return found

    def acquire(self, item: RateLimitItem, key: str, amount: int = 1) -> bool:
        """Charge `amount` requests to `item` under `key` in Redis: whether they fit the
        limit. Raises what Redis raised, or TimeoutError after `timeout` seconds."""
        charge = _Charge(self._keys(item.key_for(key)), item.amount, item.get_expiry(), amount)
        if self._pid != os.getpid():
            self._start()
        with self._lock:
            self._pending.append(charge)
            self._wake.set()
        if not charge.done.wait(self.timeout):
            with self._lock:
                if charge in self._pending:  # not sent yet: it never will be
                    self._pending.remove(charge)
            raise TimeoutError("quota storage: no answer in time")
        if charge.error is not None:
            raise charge.error
        return charge.result

    def _send_forever(self) -> None:
        """The sender: every charge waiting, one pipeline at a time."""
        while True:
            self._wake.wait()
            with self._lock:
                batch, self._pending = self._pending, []
                self._wake.clear()
            if batch:
                self._send(batch)

    def _send(self, batch: list[_Charge]) -> None:
        """One pipeline for the batch; each charge gets its answer or the error. After an
        error, the charges that arrived meanwhile get it too instead of waiting for another
        attempt (the caller falls back to memory at once)."""
        try:
            results = self._execute(batch)
        except Exception as exc:
            with self._lock:
                batch, self._pending = batch + self._pending, []
            results = [exc] * len(batch)
        for charge, result in zip(batch, results):
            if isinstance(result, BaseException):
                charge.error = result
            else:
                charge.result = bool(result)
            charge.done.set()

    def _execute(self, batch: list[_Charge]) -> list[Any]:
        """The script's answers (or errors) for the batch: one command when it is alone (a
        pipeline costs some 20 us of Python more), else one pipeline."""
        from redis.exceptions import NoScriptError, ResponseError

        connection = self.storage.get_connection()
        for attempt in (0, 1):
            if len(batch) == 1:
                c = batch[0]
                try:
                    results = [connection.evalsha(self.script.sha, 2, *c.keys, c.limit,
                                                  c.expiry, c.amount)]
                except ResponseError as exc:  # NOSCRIPT among them: as a pipeline's answer
                    results = [exc]
            else:
                pipe = connection.pipeline(transaction=False)
                for c in batch:
                    pipe.evalsha(self.script.sha, 2, *c.keys, c.limit, c.expiry, c.amount)
                results = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in results):
                # Redis restarted (or flushed its scripts): load it, send the batch again
                # (a NOSCRIPT answer charged nothing)
                self.script.sha = connection.script_load(self.script.script)
                continue
            return results
        return results  # pragma: no cover - the loop returns


def hold_refusal() -> None:
    """Wait `REFUSAL_HOLD` seconds before a refusal is answered, under gevent only (there the
    wait holds a greenlet, not a worker: nothing else waits). A client over its quota that
    keeps asking on a connection, without waiting Retry-After, then gets at most 1 /
    REFUSAL_HOLD refusals a second on it: refusing costs about what answering a scoring
    request does, so an unheld flood from a few connections would take most of the CPU
    from the other tenants (tests/live/test_tenant_flood.py). The client loses nothing:
    Retry-After asks it to wait at least a second anyway."""
    if REFUSAL_HOLD > 0 and cooperative():
        with waiting():  # inside a request (a builds quota): its place goes to the next
            time.sleep(REFUSAL_HOLD)  # gevent's sleep (monkey-patched)


def cooperative() -> bool:
    """Whether this process runs under gevent (its worker patched `time` and `threading`):
    then a sleep holds a greenlet, not the worker. (Asked on every request: once patched,
    the answer is kept.)"""
    global _cooperative
    if not _cooperative:
        _cooperative = bool(monkey.is_module_patched("time"))
    return _cooperative


_cooperative = False


class QuotaExceeded(Exception):
    """A tenant asked for more than its quota of an operation class allows."""

    def __init__(self, tenant: str, operation: str, quota: str, retry_after: int,
                 headers: list[tuple[str, str]], user: str | None = None) -> None:
        super().__init__(f"{tenant}: {operation} quota {quota} used up")
        self.tenant, self.operation, self.quota = tenant, operation, quota
        self.retry_after, self.headers, self.user = retry_after, headers, user

    @property
    def detail(self) -> str:
        """The problem document's detail."""
        who = ("This client" if self.tenant == ANONYMOUS else
               f"Tenant {self.tenant}" if self.user is None else
               f"User {self.user} of tenant {self.tenant}")
        return (f"{who} used its {self.operation} quota ({self.quota}); ask again in "
                f"{self.retry_after} s")


class _Policy:
    """A tenant's quota of one operation class: its limits and the RateLimit-Policy value."""

    __slots__ = ("header", "items", "limits", "names", "operation", "text")

    def __init__(self, operation: str, text: str, per_user: bool = False) -> None:
        self.operation, self.text = operation, text
        self.items = parse_quota(text)
        who = f"{operation}-user" if per_user else operation
        self.names = [f"{who}-{item.get_expiry()}s" for item in self.items]
        self.header = ", ".join(f'"{name}";q={item.amount};w={item.get_expiry()}'
                                for name, item in zip(self.names, self.items))
        #: each limit's name, item, lease size, and what its leases are kept under (what
        #: makes two items' hashes and equality agree, without their hash in Python)
        self.limits = tuple(
            (name, item, lease_size(item),
             (item.namespace, item.amount, item.multiples, item.GRANULARITY))
            for name, item in zip(self.names, self.items))


class Quotas:
    """Every tenant's quotas, and the storage they are counted in (module docstring)."""

    def __init__(self, settings: Settings) -> None:
        self.local = SlidingWindowCounterRateLimiter(MemoryStorage())
        self.uri = settings.rate_limit_storage
        self.shared: SlidingWindowCounterRateLimiter | None = None
        if not self.uri.startswith("memory://"):
            from redis.backoff import NoBackoff
            from redis.retry import Retry

            storage: Storage = storage_from_string(
                self.uri, key_prefix=KEY_PREFIX, wrap_exceptions=True,
                socket_timeout=settings.rate_limit_redis_timeout,
                socket_connect_timeout=settings.rate_limit_redis_timeout,
                retry=Retry(NoBackoff(), 0))
            self.shared = SlidingWindowCounterRateLimiter(storage)
            self.charges = RedisCharges(storage, settings.rate_limit_redis_timeout)
        self.retry_seconds = settings.rate_limit_redis_retry
        self._down_since: float | None = None  # wall clock, for /readyz
        self._next_try = 0.0  # monotonic: when to try Redis again
        self._lock = threading.Lock()
        self._policies: dict[tuple[str, str, bool], _Policy] = {}
        self._checked = -math.inf  # monotonic: when /readyz last pinged Redis
        # (limit, client key) -> [requests left, monotonic expiry]: this worker's leases
        self._leases: dict[tuple[tuple, str], list[float]] = {}

    def worker_started(self) -> None:
        """In each worker as it starts (gunicorn's post_fork): find out whether Redis
        answers (one ping, bounded by the timeout), so that `rate_limit_storage_up` is right
        in every worker from the start, and a worker that cannot reach Redis counts in
        memory at once instead of each request waiting for the timeout first."""
        self._check()
        STORAGE_UP.set(0 if self._down_since is not None else 1)

    # --- the storage, and falling back from it ---------------------------------------------
    def _limiter(self) -> SlidingWindowCounterRateLimiter:
        """Redis while it answers; the pod's memory while it does not (one request tries
        Redis again every `retry_seconds`)."""
        if self.shared is None or self._down_since is None:
            return self.shared or self.local
        with self._lock:
            now = time.monotonic()
            if now < self._next_try:
                return self.local
            self._next_try = now + self.retry_seconds  # this request tries; others wait
        return self.shared

    def _failed(self, exc: BaseException) -> None:
        STORAGE_ERRORS.inc()
        with self._lock:
            self._next_try = time.monotonic() + self.retry_seconds
            if self._down_since is None:
                self._down_since = time.time()
                STORAGE_UP.set(0)
                log.warning("quota storage unreachable: counting quotas per pod until it "
                            "answers", extra={"error": repr(exc)[:200],
                                              "retry_seconds": self.retry_seconds})

    def _recovered(self) -> None:
        with self._lock:
            if self._down_since is not None:
                log.warning("quota storage answers again: quotas are shared by every pod",
                            extra={"down_seconds": round(time.time() - self._down_since, 1)})
                self._down_since = None
                STORAGE_UP.set(1)

    def _hit(self, item: RateLimitItem, key: str, size: int, lease_key: tuple
             ) -> tuple[bool, SlidingWindowCounterRateLimiter]:
        """Charge one request to a limit (`size`: its `lease_size`; `lease_key`: what its
        leases are kept under, `_Policy.limits`): from this worker's lease of it, or in the
        storage (a new lease for a large quota, else the one request)."""
        limiter = self._limiter()
        if size > 1:  # a large quota: spend this worker's lease first
            lease = self._leases.get((lease_key, key))
            if lease is not None and lease[0] > 0 and lease[1] > time.monotonic():
                lease[0] -= 1
                return True, limiter
        if limiter is self.local:
            allowed = limiter.hit(item, key, cost=size)
            if not allowed and size > 1:  # no room for a lease: one request, exactly
                allowed, size = limiter.hit(item, key), 1
        else:
            try:
                allowed = self.charges.acquire(item, key, size)
                if not allowed and size > 1:
                    allowed, size = self.charges.acquire(item, key), 1
            except Exception as exc:  # any storage failure: never a 5xx, never a hang
                self._failed(exc)
                return self.local.hit(item, key), self.local
            if self._down_since is not None:
                self._recovered()
        if allowed and size > 1:
            if len(self._leases) >= 4096:
                self._leases.clear()
            self._leases[(lease_key, key)] = [size - 1, time.monotonic() + LEASE_SECONDS]
        return allowed, limiter

    def _check(self) -> None:
        """Ping Redis (bounded by the timeout): note whether it answers."""
        if self.shared is None:
            return
        self._checked = time.monotonic()
        try:
            if not self.shared.storage.check():
                raise ConnectionError("redis did not answer PING")
        except Exception as exc:
            self._failed(exc)
        else:
            self._recovered()

    def status(self) -> dict[str, Any]:
        """Where quotas are counted now (for /readyz): Redis is pinged when the last ping is
        older than `READY_CHECK_SECONDS`, so the answer is what Redis does now, not what
        the last request saw; a Redis found back is used again at once."""
        if self.shared is not None and time.monotonic() - self._checked >= READY_CHECK_SECONDS:
            self._check()
        if self.shared is None:
            return {"storage": "memory", "shared": False, "state": "ok"}
        if self._down_since is None:
            return {"storage": "redis", "shared": True, "state": "ok"}
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._down_since))
        return {"storage": "redis", "shared": False,
                "state": f"redis unreachable since {since}: quotas counted per pod"}

    # --- charging a tenant ------------------------------------------------------------------
    def policy(self, operation: str, quota: str, per_user: bool = False) -> _Policy:
        """An operation class's quota, parsed (once per class and quota; `per_user`: an end
        user's, its policies named `<class>-user-<seconds>s`)."""
        found = self._policies.get((operation, quota, per_user))
        if found is None:
            found = self._policies[(operation, quota, per_user)] = _Policy(operation, quota,
                                                                           per_user)
        return found

    def charge(self, caller: Caller, operation: str) -> str:
        """Count one request of `operation` for `caller`: its tenant's quota, under the
        caller's client key (the tenant's name; an anonymous client's address), and a
        derived key's end user's own quota of the class, if any. Returns the
        RateLimit-Policy header's value ("" when unlimited); raises `QuotaExceeded`."""
        header = self._charge(caller.tenant, operation, caller.quotas[operation], caller.client)
        user_quota = caller.user_quotas.get(operation)
        if user_quota is not None and caller.user_client is not None:
            user = self._charge(caller.tenant, operation, user_quota, caller.user_client,
                                caller.user)
            header = ", ".join(h for h in (header, user) if h)
        return header

    def _charge(self, tenant: str, operation: str, quota: str, key: str,
                user: str | None = None) -> str:
        policy = self._policies.get((operation, quota, user is not None))
        if policy is None:
            policy = self.policy(operation, quota, user is not None)
        for name, item, size, lease_key in policy.limits:
            allowed, limiter = self._hit(item, key, size, lease_key)
            if not allowed:
                hold_refusal()
                raise self._exceeded(tenant, policy, name, item, key, limiter, user)
        return policy.header

    def _exceeded(self, tenant: str, policy: _Policy, name: str, item: RateLimitItem,
                  key: str, limiter: SlidingWindowCounterRateLimiter,
                  user: str | None) -> QuotaExceeded:
        # Only the reset time is asked of the window: a refused request has nothing left
        # (limits' `remaining` floors the sliding window's weighted count, so just after a
        # window boundary it can say 1 for a count the hit found full).
        try:
            reset = limiter.get_window_stats(item, key).reset_time - time.time()
        except Exception as exc:  # the storage failed just now: say a whole window
            self._failed(exc)
            reset = float(item.get_expiry())
        wait = max(1, math.ceil(reset))
        headers = [("Retry-After", str(wait)),
                   ("RateLimit-Policy", policy.header),
                   ("RateLimit", f'"{name}";r=0;t={wait}')]
        return QuotaExceeded(tenant, policy.operation, policy.text, wait, headers, user)

    def admit_build(self, client: str) -> None:
        """Charge the caller (`service.caller`) one table build; raises `QuotaExceeded`. The
        build queue calls it before it queues a new table (`BuildQueue(admit=...)`) for
        `client` (the caller's client key: the same identity)."""
        caller = current_caller()
        if caller is None:  # not in a request (the command line, warming): not charged
            return
        self.charge(caller, "builds")
        BUILDS.labels(caller.tenant).inc()
