"""Quotas: how many requests of each operation class a tenant may make, counted in Redis
across every pod (`RATE_LIMIT_STORAGE=redis://...`) or in each pod's memory.

Operation classes (`operation_class`): `scoring` (hands, scorecards, games/turn,
games/validate, the variants and their rules), `advice` (moves/suggest, positions/value),
`analysis` (games/analyze, games/win-probability) and `builds` (a new table of house rules
queued for the pod's build process: `Quotas.admit_build`). Each quota is in the notation of
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
`RATE_LIMIT_REDIS_RETRY` seconds; the switch is logged both ways, shown by
`rate_limit_storage_up` in /metrics and by /readyz's `rate_limits` detail. No request waits
for Redis longer than the timeout, and none fails because of it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from contextvars import ContextVar
from typing import Any

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from prometheus_client import Counter, Gauge

from ..config import Settings

log = logging.getLogger(__name__)

OPERATION_CLASSES = ("scoring", "advice", "analysis", "builds")
_ADVICE = ("/moves/suggest", "/moves/bot", "/positions/value")
_ANALYSIS = ("/games/analyze", "/games/win-probability")
#: Seconds a refusal (429) is held before it is answered, under gevent (`hold_refusal`).
REFUSAL_HOLD = 0.5
#: The Redis keys' prefix (one Redis may serve other apps).
KEY_PREFIX = "yahtzee-scoring-quota"

STORAGE_UP = Gauge(
    "rate_limit_storage_up",
    "1 while quotas are counted in the configured storage (Redis: shared by every pod), 0 "
    "while Redis is unreachable and each pod counts them alone.",
    multiprocess_mode="min",
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

#: Who a request comes from, for `Quotas.admit_build` (set by `service.web.tenancy` for each
#: /v1/ request): the tenant's name, its `builds` quota and the key its quotas count under.
CALLER: ContextVar[tuple[str, str, str] | None] = ContextVar("quota_caller", default=None)


def operation_class(path: str) -> str:
    """The operation class of an API path (`OPERATION_CLASSES`, but `builds`, which is
    charged when a build is queued, not per request)."""
    if path.endswith(_ADVICE):
        return "advice"
    if path.endswith(_ANALYSIS):
        return "analysis"
    return "scoring"


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

    __slots__ = ("answered", "done", "error", "expiry", "keys", "lead", "limit", "result")

    def __init__(self, keys: tuple[str, str], limit: int, expiry: int) -> None:
        self.keys, self.limit, self.expiry = keys, limit, expiry
        self.done = threading.Event()  # answered, or handed the lead
        self.answered = self.lead = False
        self.result = False
        self.error: BaseException | None = None


class RedisCharges:
    """Charges of requests that arrive together go to Redis together: one pipeline of the
    `limits` sliding-window script (the one `SlidingWindowCounterRateLimiter.hit` runs, on
    the same keys) per round trip.

    A request that finds no pipeline in flight sends one with every charge waiting (its own
    among them) and sends again while charges arrived meanwhile, until its own is answered;
    then the oldest waiting request takes over. So each request is still charged in Redis,
    exactly, before it is answered, but under load one round trip (two system calls and a
    switch of greenlets) serves many requests, not one each. Nobody waits for a batch
    longer than the Redis timeout allows; a failed pipeline fails each of its charges (the
    caller counts them in memory instead).
    """

    def __init__(self, storage: Any, timeout: float) -> None:
        self.storage = storage
        self.script = storage.lua_acquire_sliding_window  # registered by limits
        self.wait = 4 * timeout + 1.0  # a leader's sends: its socket timeout bounds each
        self._lock = threading.Lock()
        self._pending: list[_Charge] = []
        self._leading = False

    def _keys(self, key: str) -> tuple[str, str]:
        """The two Redis keys of a limit's sliding window, as `limits` names them."""
        s = self.storage
        return (s.prefixed_key(s._previous_window_key(key)),
                s.prefixed_key(s._current_window_key(key)))

    def acquire(self, item: RateLimitItem, key: str) -> bool:
        """Charge one request to `item` under `key` in Redis: whether it fits the limit.
        Raises what Redis raised, or TimeoutError."""
        charge = _Charge(self._keys(item.key_for(key)), item.amount, item.get_expiry())
        with self._lock:
            self._pending.append(charge)
            lead = not self._leading
            self._leading = True
        if not lead:
            charge.done.wait(self.wait)
            with self._lock:
                if not charge.answered and not charge.lead:  # given up on: not sent
                    if charge in self._pending:
                        self._pending.remove(charge)
                    raise TimeoutError("quota storage: no answer in time")
            lead = not charge.answered
        if lead:
            self._lead(charge)
        if charge.error is not None:
            raise charge.error
        return charge.result

    def _lead(self, mine: _Charge) -> None:
        """Send what waits until `mine` is answered, then hand the lead on."""
        try:
            while not mine.answered:
                with self._lock:
                    batch, self._pending = self._pending, []
                self._send(batch)
        finally:
            with self._lock:
                if self._pending:
                    heir = self._pending[0]
                    heir.lead = True
                    heir.done.set()
                else:
                    self._leading = False

    def _send(self, batch: list[_Charge]) -> None:
        """One pipeline for the batch; each charge gets its answer or the error."""
        try:
            results = self._execute(batch)
        except Exception as exc:
            results = [exc] * len(batch)
        for charge, result in zip(batch, results):
            if isinstance(result, BaseException):
                charge.error = result
            else:
                charge.result = bool(result)
            charge.answered = True
            charge.done.set()

    def _execute(self, batch: list[_Charge]) -> list[Any]:
        from redis.exceptions import NoScriptError

        for attempt in (0, 1):
            pipe = self.storage.get_connection().pipeline(transaction=False)
            for c in batch:
                pipe.evalsha(self.script.sha, 2, *c.keys, c.limit, c.expiry, 1)
            results = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in results):
                # Redis restarted (or flushed its scripts): load it, send the batch again
                # (a NOSCRIPT answer charged nothing)
                self.script.sha = self.storage.get_connection().script_load(self.script.script)
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
    if REFUSAL_HOLD > 0 and _gevent_time():
        time.sleep(REFUSAL_HOLD)  # gevent's sleep (monkey-patched)


def _gevent_time() -> bool:
    try:
        from gevent import monkey
    except ImportError:  # pragma: no cover - gevent is a dependency
        return False
    return bool(monkey.is_module_patched("time"))


class QuotaExceeded(Exception):
    """A tenant asked for more than its quota of an operation class allows."""

    def __init__(self, tenant: str, operation: str, quota: str, retry_after: int,
                 headers: list[tuple[str, str]]) -> None:
        super().__init__(f"{tenant}: {operation} quota {quota} used up")
        self.tenant, self.operation, self.quota = tenant, operation, quota
        self.retry_after, self.headers = retry_after, headers

    @property
    def detail(self) -> str:
        """The problem document's detail."""
        who = "This client" if self.tenant == "anonymous" else f"Tenant {self.tenant}"
        return (f"{who} used its {self.operation} quota ({self.quota}); ask again in "
                f"{self.retry_after} s")


class _Policy:
    """A tenant's quota of one operation class: its limits and the RateLimit-Policy value."""

    __slots__ = ("header", "items", "names", "operation", "text")

    def __init__(self, operation: str, text: str) -> None:
        self.operation, self.text = operation, text
        self.items = parse_quota(text)
        self.names = [f"{operation}-{item.get_expiry()}s" for item in self.items]
        self.header = ", ".join(f'"{name}";q={item.amount};w={item.get_expiry()}'
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
        self._policies: dict[tuple[str, str], _Policy] = {}
        STORAGE_UP.set(1)

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

    def _hit(self, item: RateLimitItem, key: str) -> tuple[bool, SlidingWindowCounterRateLimiter]:
        limiter = self._limiter()
        if limiter is self.local:
            return limiter.hit(item, key), limiter
        try:
            allowed = self.charges.acquire(item, key)
        except Exception as exc:  # any storage failure: never a 5xx, never a hang
            self._failed(exc)
            return self.local.hit(item, key), self.local
        if self._down_since is not None:
            self._recovered()
        return allowed, limiter

    def status(self) -> dict[str, Any]:
        """Where quotas are counted now (for /readyz)."""
        if self.shared is None:
            return {"storage": "memory", "shared": False, "state": "ok"}
        if self._down_since is None:
            return {"storage": "redis", "shared": True, "state": "ok"}
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._down_since))
        return {"storage": "redis", "shared": False,
                "state": f"redis unreachable since {since}: quotas counted per pod"}

    # --- charging a tenant ------------------------------------------------------------------
    def policy(self, operation: str, quota: str) -> _Policy:
        """An operation class's quota, parsed (once per class and quota)."""
        found = self._policies.get((operation, quota))
        if found is None:
            found = self._policies[(operation, quota)] = _Policy(operation, quota)
        return found

    def charge(self, tenant: str, operation: str, quota: str, key: str) -> str:
        """Count one request of `operation` for `tenant`, whose quota of it is `quota`, under
        `key` (the tenant's name; an anonymous client's address). Returns the
        RateLimit-Policy header's value ("" when unlimited); raises `QuotaExceeded`."""
        policy = self.policy(operation, quota)
        for name, item in zip(policy.names, policy.items):
            allowed, limiter = self._hit(item, key)
            if not allowed:
                hold_refusal()
                raise self._exceeded(tenant, policy, name, item, key, limiter)
        return policy.header

    def _exceeded(self, tenant: str, policy: _Policy, name: str, item: RateLimitItem,
                  key: str, limiter: SlidingWindowCounterRateLimiter) -> QuotaExceeded:
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
        return QuotaExceeded(tenant, policy.operation, policy.text, wait, headers)

    def admit_build(self, client: str) -> None:
        """Charge the calling tenant (`CALLER`) one table build; raises `QuotaExceeded`. The
        build queue calls it before it queues a new table (`BuildQueue(admit=...)`), with
        the client it queues the table for."""
        caller = CALLER.get()
        if caller is None:  # not in a request (the command line, warming): not charged
            return
        tenant, quota, key = caller
        self.charge(tenant, "builds", quota, key or client)
        BUILDS.labels(tenant).inc()
