"""Quotas: how much of each operation class a tenant, and a derived key's end user, may use,
counted by the meter (`service.web.meter`) in Redis across every pod
(`RATE_LIMIT_STORAGE=redis://...`) or in the pod's memory, shared by its workers.

Operation classes: `scoring` (hands, scorecards, games/turn, games/validate, the variants and
their rules), `advice` (moves/suggest, moves/bot, positions/value), `analysis`
(games/analyze, games/win-probability), each declared by its resource's blueprint
(`openapi.new_blueprint`) and read off the route the request took (`frontdoor.Router`), and
`builds` (a new table of house rules queued for the pod's build process:
`Quotas.admit_build`). Each quota is in the notation of the `limits` library ("600/minute",
"20/second;600/minute", "unlimited"), counted in a sliding window (no burst of twice the
quota at a window's edge, as a fixed window allows).

The metering rules (docs/deploy.md, "Metering", says the same; tests/web/test_meter.py
holds them against a model):

- **What is charged:** a request to an operation, one unit when the front door admits it
  (`Quotas.charge`); a batch (`.../batch`) one unit per item: the rest when its body is
  read and found a list of items (`charge_batch`), before any item is answered; a table
  build, one unit of `builds` when it is queued.
- **To whom:** every quota that applies, each on a counter of its own: the tenant's quota of
  the class (its key: the caller's client, the class and the limit; without keys the
  client's address stands for the tenant) and, for a derived key naming an end user with a
  quota of the class, the user's, beside it.
- **Once, or not at all:** every counter is checked before any is charged, and a request
  refused by any quota charges none. A request refused after its charge (429: a batch's
  items over quota, its fair share, a build's quota or a full build queue) is given back
  what it was charged (`Quotas.refund`): a refused request is not counted.
- **Where:** `memory://` counts per pod (every worker of the pod on one table); Redis counts
  for every pod; while Redis fails, each pod counts on its own table until Redis answers
  again (counts made meanwhile are not carried over).

Over quota: `QuotaExceeded`, which the web layer answers with a 429 problem, `Retry-After`
and the IETF draft's `RateLimit` and `RateLimit-Policy` headers
(draft-ietf-httpapi-ratelimit-headers-10). Every answer to an operation carries both:
`RateLimit-Policy: "scoring-60s";q=600;w=60` and `RateLimit: "scoring-60s";r=597;t=41`
(`r`: units left now; `t`: seconds until the current window ends, from when the count
falls; on a 429, `r=0` and `t` the seconds until the request would fit). Under gevent the
429 is held `REFUSAL_HOLD` seconds first (`hold_refusal`), so that a tenant flooding past
its quota cannot take the CPU from the others with refusals.

If Redis fails (refused, or slower than `RATE_LIMIT_REDIS_TIMEOUT`), quotas are counted in
the pod's memory until Redis answers again, tried every `RATE_LIMIT_REDIS_RETRY` seconds by
one request of the pod, and at once when /readyz or /metrics finds it back (`Quotas.status`
pings Redis itself, at most every `READY_CHECK_SECONDS`). Which storage counts is the
pod's state (`meter.PodState`), not each worker's: every worker switches together, and
/readyz, `rate_limit_storage_up` and the workers agree. No request waits for Redis longer
than the timeout, and none fails because of it.

A Redis restarted without persistence starts every counter from zero: for up to one window
of each quota, a tenant may be answered up to its quota again (docs/deploy.md says so, and
what the chart recommends: a Redis with an append-only file).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from gevent import monkey
from limits import RateLimitItem, parse_many
from prometheus_client import Counter, Gauge

from ..caller import ANONYMOUS, Caller, current_caller, waiting
from ..config import Settings
from .meter import Charge, MemoryMeter, PodState, RedisMeter, Verdict
from .tally import TALLY

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
#: The pod's state cells (`meter.PodState`): whether Redis is down, since when (Unix ms),
#: when a request tries it again and when it was last pinged (monotonic ms).
_DOWN, _DOWN_SINCE, _NEXT_TRY, _CHECKED = 0, 1, 2, 3

STORAGE_UP = Gauge(
    "rate_limit_storage_up",
    "1 while quotas are counted in the configured storage (Redis: shared by every pod), 0 "
    "while Redis is unreachable and the pod counts them alone (the pod's state, as the "
    "worker that last saw it change or last pinged Redis set it).",
    multiprocess_mode="livemostrecent",
)
STORAGE_ERRORS = Counter(
    "rate_limit_storage_errors_total",
    "Calls to the quota storage (Redis) that failed or timed out, each answered under "
    "per-pod counts instead.",
)
CHARGED = TALLY.counter(  # once a request (shared memory: `tally`)
    "tenant_charged_units",
    "Units charged to tenants' quotas (a request one, a batch one per item, a build one), by "
    "tenant and operation class: what the quotas counted.",
    ["tenant", "operation"],
)
BUILDS = Counter(
    "tenant_table_builds_total",
    "Tables of house rules queued for the build process, by tenant.",
    ["tenant"],
)


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
    """A caller asked for more than a quota of an operation class allows: `headers` are
    the 429's (Retry-After, RateLimit-Policy, RateLimit)."""

    def __init__(self, tenant: str, operation: str, quota: str, retry_after: int,
                 headers: list[tuple[str, str]], user: str | None = None, cost: int = 1,
                 left: int = 0) -> None:
        super().__init__(f"{tenant}: {operation} quota {quota} used up")
        self.tenant, self.operation, self.quota = tenant, operation, quota
        self.retry_after, self.headers, self.user = retry_after, headers, user
        self.cost, self.left = cost, left

    @property
    def detail(self) -> str:
        """The problem document's detail."""
        who = ("This client" if self.tenant == ANONYMOUS else
               f"Tenant {self.tenant}" if self.user is None else
               f"User {self.user} of tenant {self.tenant}")
        if self.cost > 1:
            return (f"{who} has {self.left} left of its {self.operation} quota "
                    f"({self.quota}); this batch of {self.cost} items is charged one unit an "
                    f"item; ask again in {self.retry_after} s, or send fewer items")
        return (f"{who} used its {self.operation} quota ({self.quota}); ask again in "
                f"{self.retry_after} s")


class _Plan:
    """What a request of one class costs one caller: a `Charge` of one unit on each limit of
    each quota that applies (the tenant's, then its end user's), their RateLimit names (and
    each RateLimit item's start), the RateLimit-Policy value, and for each charge the
    quota's text and whose it is."""

    __slots__ = ("charges", "lefts", "names", "owners", "policy", "texts")

    def __init__(self, caller: Caller, operation: str) -> None:
        charges: list[Charge] = []
        names: list[str] = []
        texts: list[str] = []
        owners: list[str | None] = []
        quotas = [(caller.client, operation, caller.quotas.get(operation, "unlimited"), None)]
        user_quota = caller.user_quotas.get(operation)
        if user_quota is not None and caller.user_client is not None:
            quotas.append((caller.user_client, f"{operation}-user", user_quota, caller.user))
        for client, who, text, owner in quotas:
            for item in parse_quota(text):
                seconds = item.get_expiry()
                charges.append(Charge(f"{client}|{operation}|{item.amount}/{seconds}",
                                      item.amount, seconds, 1))
                names.append(f"{who}-{seconds}s")
                texts.append(text)
                owners.append(owner)
        self.charges, self.names = tuple(charges), tuple(names)
        self.texts, self.owners = tuple(texts), tuple(owners)
        self.policy = ", ".join(f'"{n}";q={c.amount};w={c.seconds}'
                                for n, c in zip(names, charges))
        self.lefts = tuple(f'"{n}";r=' for n in names)  # each RateLimit item's start


class Bill:
    """One request's charges (`Quotas.charge`): its plan, the units charged, the meter that
    counted them and what it found (for the RateLimit header); `charge_batch` adds a
    batch's items."""

    __slots__ = ("caller", "charged", "meter", "operation", "plan", "quotas", "verdict")

    def __init__(self, quotas: Quotas, caller: Caller, operation: str, plan: _Plan) -> None:
        self.quotas, self.caller, self.operation, self.plan = quotas, caller, operation, plan
        self.charged = 0
        self.meter: Any = None
        self.verdict: Verdict | None = None

    def headers(self) -> list[tuple[str, str]]:
        """RateLimit-Policy and RateLimit for the answer (none when unlimited)."""
        plan, verdict = self.plan, self.verdict
        if not plan.charges or verdict is None:
            return []
        remaining, reset = verdict.remaining, verdict.reset
        if len(plan.charges) == 1:  # the common case, without the join
            c = plan.charges[0]
            left = f"{plan.lefts[0]}{remaining(0, c)};t={reset(0, c)}"
        else:
            left = ", ".join([f"{n}{remaining(i, c)};t={reset(i, c)}"
                              for i, (n, c) in enumerate(zip(plan.lefts, plan.charges))])
        return [("RateLimit-Policy", plan.policy), ("RateLimit", left)]


#: The bill of the request being answered here (set by the front door).
BILL: ContextVar[Bill | None] = ContextVar("bill", default=None)


def charge_batch(items: int) -> None:
    """Charge the request being answered for a batch of `items` (one unit each, the unit its
    request was charged included); nothing outside a request the front door admitted.
    Raises `QuotaExceeded`, having given back what the request was charged."""
    bill = BILL.get()
    if bill is not None and items > bill.charged:
        bill.quotas.charge_more(bill, items)


def _monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


class Quotas:
    """Every caller's quotas, and the meter that counts them (module docstring). `clock`:
    the meters' time (tests step it); `memory`: the pod's table (made here by default:
    in the process that loads the app, before gunicorn forks the workers that share it)."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.time,
                 memory: MemoryMeter | None = None) -> None:
        self.memory = memory if memory is not None else MemoryMeter(clock=clock)
        self.state = PodState(self.memory)
        self.uri = settings.rate_limit_storage
        self.redis: RedisMeter | None = None
        if not self.uri.startswith("memory://"):
            self.redis = RedisMeter(self.uri, settings.rate_limit_redis_timeout, KEY_PREFIX,
                                    clock)
        self.retry_ms = int(settings.rate_limit_redis_retry * 1000)
        self._plans: dict[tuple, _Plan] = {}
        self._charged: dict[tuple[str, str], Any] = {}

    def worker_started(self) -> None:
        """In each worker as it starts (gunicorn's post_worker_init): ping Redis (bounded by
        the timeout) and set `rate_limit_storage_up` from the pod's state."""
        self._check()

    # --- the storage, and falling back from it ---------------------------------------------
    def _meter(self) -> Any:
        """Redis while the pod finds it answers; the pod's memory while it does not (one
        request of the pod tries Redis again every RATE_LIMIT_REDIS_RETRY seconds)."""
        if self.redis is None:
            return self.memory
        state = self.state
        if not state[_DOWN]:
            return self.redis
        now = _monotonic_ms()
        with self.memory.lock:
            if now < state[_NEXT_TRY]:
                return self.memory
            state[_NEXT_TRY] = now + self.retry_ms  # this request tries; the others wait
        return self.redis

    def _failed(self, exc: BaseException) -> None:
        STORAGE_ERRORS.inc()
        state = self.state
        with self.memory.lock:
            state[_NEXT_TRY] = _monotonic_ms() + self.retry_ms
            went_down = not state[_DOWN]
            if went_down:
                state[_DOWN], state[_DOWN_SINCE] = 1, int(time.time() * 1000)
        STORAGE_UP.set(0)
        if went_down:
            log.warning("quota storage unreachable: counting quotas per pod until it "
                        "answers", extra={"error": repr(exc)[:200],
                                          "retry_seconds": self.retry_ms / 1000})

    def _recovered(self) -> None:
        state = self.state
        with self.memory.lock:
            came_back = bool(state[_DOWN])
            since, state[_DOWN] = state[_DOWN_SINCE], 0
        STORAGE_UP.set(1)
        if came_back:
            log.warning("quota storage answers again: quotas are shared by every pod",
                        extra={"down_seconds": round(time.time() - since / 1000, 1)})

    def _run(self, charges: tuple[Charge, ...]) -> tuple[Verdict, Any]:
        """Check and charge on the pod's meter of the moment: (what it found, the meter)."""
        meter = self._meter()
        if meter is self.redis:
            try:
                verdict = meter.charge(charges)
            except Exception as exc:  # any storage failure: never a 5xx, never a hang
                self._failed(exc)
                return self.memory.charge(charges), self.memory
            if self.state[_DOWN]:
                self._recovered()
            return verdict, meter
        return meter.charge(charges), meter

    def _check(self) -> None:
        """Ping Redis (bounded by the timeout); the pod's state follows what it found."""
        if self.redis is None:
            STORAGE_UP.set(1)
            return
        self.state[_CHECKED] = _monotonic_ms()
        try:
            if not self.redis.ping():
                raise ConnectionError("redis did not answer PING")
        except Exception as exc:
            self._failed(exc)
        else:
            self._recovered()

    def status(self) -> dict[str, Any]:
        """Where quotas are counted now (for /readyz and /metrics): Redis is pinged when the
        pod's last ping is older than `READY_CHECK_SECONDS`, so the answer is what Redis
        does now; a Redis found back is used again by every worker at once."""
        if self.redis is None:
            return {"storage": "memory", "shared": False, "state": "ok"}
        if _monotonic_ms() - self.state[_CHECKED] >= READY_CHECK_SECONDS * 1000:
            self._check()
        else:
            STORAGE_UP.set(0 if self.state[_DOWN] else 1)
        if not self.state[_DOWN]:
            return {"storage": "redis", "shared": True, "state": "ok"}
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                              time.gmtime(self.state[_DOWN_SINCE] / 1000))
        return {"storage": "redis", "shared": False,
                "state": f"redis unreachable since {since}: quotas counted per pod"}

    # --- charging a caller ------------------------------------------------------------------
    def plan(self, caller: Caller, operation: str) -> _Plan:
        """What a request of `operation` costs `caller` (made once per caller and class)."""
        key = (operation, caller.client, caller.quotas.get(operation), caller.user_client,
               caller.user_quotas.get(operation))
        found = self._plans.get(key)
        if found is None:
            if len(self._plans) >= 4096:
                self._plans.clear()
            found = self._plans[key] = _Plan(caller, operation)
        return found

    def charge(self, caller: Caller, operation: str, cost: int = 1) -> Bill:
        """Charge a request of `operation` (`cost` units) to every quota of `caller` that
        applies, all or none: its bill, or `QuotaExceeded`."""
        bill = Bill(self, caller, operation, self.plan(caller, operation))
        self.charge_more(bill, cost)
        return bill

    def charge_more(self, bill: Bill, units: int) -> None:
        """Bring `bill` to `units` units in all (a batch's items: the units it was charged
        already count), all quotas or none; refused, the bill's earlier units are given back
        and `QuotaExceeded` raised."""
        plan = bill.plan
        more = units - bill.charged
        if not plan.charges or more <= 0:
            bill.charged = max(bill.charged, units)
            return
        charges = plan.charges if more == 1 else tuple(c._replace(cost=more)
                                                       for c in plan.charges)
        verdict, meter = self._run(charges)
        if not verdict.allowed:
            given_back = bill.charged
            self.refund(bill)  # a batch refused for its items: its request is not charged
            hold_refusal()
            raise self._exceeded(bill, charges, verdict, units, given_back)
        bill.charged, bill.meter, bill.verdict = units, meter, verdict

    def refund(self, bill: Bill) -> None:
        """Give back what `bill` was charged (its request was refused after the charge: a
        batch's items, its fair share, a build's quota or queue), to the windows it went to;
        a storage that fails meanwhile keeps it (counted as a storage error)."""
        if not bill.charged or bill.meter is None:
            return
        try:
            bill.meter.refund(tuple(c._replace(cost=bill.charged) for c in bill.plan.charges),
                              bill.verdict)
        except Exception as exc:
            self._failed(exc)
        bill.charged = 0

    def settle(self, bill: Bill) -> None:
        """Count what `bill` was charged in the end in `tenant_charged_units_total` (once a
        request is answered: a batch refused for its items was given back)."""
        if not bill.charged or not bill.plan.charges:
            return
        key = (bill.caller.tenant, bill.operation)
        child = self._charged.get(key)
        if child is None:
            if len(self._charged) >= 4096:
                self._charged.clear()
            child = self._charged[key] = CHARGED.labels(*key)
        child.inc(bill.charged)

    def _exceeded(self, bill: Bill, charges: tuple[Charge, ...], verdict: Verdict,
                  units: int, given_back: int) -> QuotaExceeded:
        plan, i = bill.plan, verdict.refused
        wait = verdict.wait(i, charges[i])
        left = ", ".join(
            f'"{n}";r={0 if j == i else verdict.remaining(j, c)};'
            f't={wait if j == i else verdict.reset(j, c)}'
            for j, (n, c) in enumerate(zip(plan.names, plan.charges)))
        headers = [("Retry-After", str(wait)), ("RateLimit-Policy", plan.policy),
                   ("RateLimit", left)]
        return QuotaExceeded(bill.caller.tenant, bill.operation, plan.texts[i], wait, headers,
                             plan.owners[i], units,
                             verdict.remaining(i, charges[i]) + given_back)

    def admit_build(self, client: str) -> None:
        """Charge the caller (`service.caller`) one table build; raises `QuotaExceeded`. The
        build queue calls it before it queues a new table (`BuildQueue(admit=...)`) for
        `client` (the caller's client key: the same identity)."""
        caller = current_caller()
        if caller is None:  # not in a request (the command line, warming): not charged
            return
        self.settle(self.charge(caller, "builds"))
        BUILDS.labels(caller.tenant).inc()
