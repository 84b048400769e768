"""The meter (service/web/meter.py) and the quotas on it (service/web/quotas.py), checked
against a plain model of the metering rules (docs/deploy.md, "Metering"): random sequences of
requests by tenants and end users, of every class, single and batch, answered by either of
a pod's two workers, with the clock stepped and, on Redis, the storage killed and started
again; every answer is compared with the model's, in memory and against a real redis-server
started by the test.

The model is written from the rules, not from the code: a counter per (caller, class,
limit), its units by window; a request fits when, for every counter it is charged to, the
previous window's units weighted by the part of it still inside the sliding window, plus
the current window's, plus the request's units, are at most the limit; all its counters
are charged, or none; a batch refused for its items gives back its request's unit; while
Redis is down the pod counts on its own table, and a Redis started again has forgotten
everything."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from service.caller import Caller
from service.config import Settings
from service.web.meter import Charge, MemoryMeter, key_hash
from service.web.quotas import QuotaExceeded, Quotas, parse_quota

#: Tenants' quotas: classes whose quotas read the same (scoring and advice: one counter each,
#: not one shared), two limits in one quota, and unlimited.
TENANTS = {
    "acme": {"scoring": "5/minute;9/hour", "advice": "5/minute", "analysis": "unlimited",
             "builds": "2/minute"},
    "zeta": {"scoring": "3/minute", "advice": "3/minute", "analysis": "4/minute",
             "builds": "1/minute"},
}
#: End users of derived keys (of acme): with quotas of their own, or none.
USERS = {None: {}, "u1": {"scoring": "2/minute", "advice": "5/minute"}, "u2": {"scoring": "3/hour"}}
CLASSES = ("scoring", "advice", "analysis")
START = 1_700_000_000.25


def caller(tenant: str, user: str | None) -> Caller:
    if tenant != "acme":
        user = None
    return Caller(tenant, tenant, keyed=True, quotas=TENANTS[tenant], user=user,
                  user_quotas=USERS[user])


class Model:
    """The rules, plainly: units by counter and window start; a store per place counted."""

    def __init__(self) -> None:
        self.stores: dict[str, dict[tuple[str, int], dict[int, int]]] = {"shared": {},
                                                                          "pod": {}}

    def counters(self, who: Caller, cls: str) -> list[tuple[tuple[str, int], int, str]]:
        """(counter, amount, owner) for every limit of every quota that applies."""
        out = []
        quotas = [(who.client, who.quotas[cls], None)]
        if who.user is not None and cls in who.user_quotas:
            quotas.append((f"{who.tenant}/user/{who.user}", who.user_quotas[cls], who.user))
        for client, text, owner in quotas:
            for item in parse_quota(text):
                seconds = item.get_expiry()
                out.append(((f"{client}|{cls}", seconds), item.amount, owner))
        return out

    def fits(self, store: str, counters, units: int, now: float) -> int:
        """The index of the first counter `units` more do not fit, or -1."""
        for i, ((name, seconds), amount, _) in enumerate(counters):
            windows = self.stores[store].get((name + str(amount), seconds), {})
            start = math.floor(now / seconds) * seconds
            frac = (now - start) / seconds
            previous, current = windows.get(start - seconds, 0), windows.get(start, 0)
            if previous * (1.0 - frac) + current + units > amount:
                return i
        return -1

    def add(self, store: str, counters, units: int, now: float,
            starts: list[int] | None = None) -> list[int]:
        """Add `units` (negative: give back, never below 0) to every counter, in the window
        of `now` (or the windows in `starts`); the windows' starts."""
        out = []
        for i, ((name, seconds), amount, _) in enumerate(counters):
            windows = self.stores[store].setdefault((name + str(amount), seconds), {})
            start = starts[i] if starts else math.floor(now / seconds) * seconds
            if start >= math.floor(now / seconds) * seconds - seconds:
                windows[start] = max(0, windows.get(start, 0) + units)
            out.append(start)
        return out

    def remaining(self, store: str, counters, now: float) -> list[int]:
        out = []
        for (name, seconds), amount, _ in counters:
            windows = self.stores[store].get((name + str(amount), seconds), {})
            start = math.floor(now / seconds) * seconds
            frac = (now - start) / seconds
            count = windows.get(start - seconds, 0) * (1.0 - frac) + windows.get(start, 0)
            out.append(max(0, math.floor(amount - count + 1e-9)))
        return out


class Metering(RuleBasedStateMachine):
    """Requests against two workers of one pod, compared with `Model`."""

    redis = None  # a tests.live.redis_server.RedisServer for the Redis form

    def __init__(self) -> None:
        super().__init__()
        self.now = [START]
        self.pod = MemoryMeter(slots=512, clock=lambda: self.now[0])
        storage = self.redis.url() if self.redis is not None else "memory://"
        conf = Settings(rate_limit_storage=storage, rate_limit_redis_retry=0.0,
                        rate_limit_redis_timeout=0.5)
        self.workers = [Quotas(conf, clock=lambda: self.now[0], memory=self.pod)
                        for _ in range(2)]
        self.model = Model()
        self.down = False
        if self.redis is not None:
            import redis

            redis.Redis.from_url(self.redis.url()).flushall()

    def teardown(self) -> None:
        if self.redis is not None and self.down:
            self.redis.start()
        self.pod.close()

    def store(self) -> str:
        return "pod" if self.redis is None or self.down else "shared"

    def ask(self, worker: int, who: Caller, cls: str, items: int | None) -> None:
        """One request (a batch of `items` when not None), and the model's answer beside."""
        quotas = self.workers[worker]
        counters = self.model.counters(who, cls)
        store, now = self.store(), self.now[0]
        refused = self.model.fits(store, counters, 1, now)
        starts = None
        if refused < 0:
            starts = self.model.add(store, counters, 1, now)
            if items is not None and items > 1:
                refused = self.model.fits(store, counters, items - 1, now)
                if refused < 0:
                    self.model.add(store, counters, items - 1, now)
                else:
                    self.model.add(store, counters, -1, now, starts)
        try:
            bill = quotas.charge(who, cls)
            if items is not None:
                quotas.charge_more(bill, items)
        except QuotaExceeded as exc:
            assert refused >= 0, (who, cls, items, exc.detail)
            _, _, owner = counters[refused]
            assert (exc.operation, exc.user) == (cls, owner)
            return
        assert refused < 0, (who, cls, items, "answered, the model refuses")
        header = dict(bill.headers()).get("RateLimit", "")
        left = [int(part.split("r=")[1].split(";")[0]) for part in header.split(", ") if part]
        assert left == self.model.remaining(store, counters, now), (header, counters)

    @initialize()
    def start(self) -> None:
        pass

    @rule(worker=st.integers(0, 1), tenant=st.sampled_from(sorted(TENANTS)),
          user=st.sampled_from([None, "u1", "u2"]), cls=st.sampled_from(CLASSES))
    def request(self, worker, tenant, user, cls) -> None:
        self.ask(worker, caller(tenant, user), cls, None)

    @rule(worker=st.integers(0, 1), tenant=st.sampled_from(sorted(TENANTS)),
          user=st.sampled_from([None, "u1"]), cls=st.sampled_from(CLASSES),
          items=st.integers(1, 12))
    def batch(self, worker, tenant, user, cls, items) -> None:
        self.ask(worker, caller(tenant, user), cls, items)

    @rule(seconds=st.one_of(st.floats(0.0, 5.0), st.floats(5.0, 90.0),
                            st.sampled_from([30.0, 60.0, 3600.0, 7200.0])))
    def tick(self, seconds) -> None:
        self.now[0] += seconds

    @precondition(lambda self: self.redis is not None and not self.down)
    @rule()
    def redis_dies(self) -> None:
        self.redis.kill()
        self.down = True

    @precondition(lambda self: self.redis is not None and self.down)
    @rule()
    def redis_comes_back(self) -> None:
        self.redis.start()  # empty: no persistence
        self.model.stores["shared"] = {}
        self.down = False

    @invariant()
    def the_pod_says_where_it_counts(self) -> None:
        if self.redis is not None and not self.down:
            assert self.workers[0].status()["shared"] in (True, False)


SETTINGS = settings(max_examples=60, stateful_step_count=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def test_the_meter_in_memory_follows_the_model():
    Metering.TestCase.settings = SETTINGS
    Metering.TestCase().runTest()


@pytest.fixture(scope="module")
def redis_server():
    from tests.live.redis_server import RedisServer

    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_the_meter_in_redis_follows_the_model(redis_server):
    class OnRedis(Metering):
        redis = redis_server

    OnRedis.TestCase.settings = settings(SETTINGS, max_examples=30)
    OnRedis.TestCase().runTest()


# --- the table itself ----------------------------------------------------------------------
def test_a_full_table_takes_the_counter_that_frees_soonest_and_keeps_the_rest():
    now = [START]
    meter = MemoryMeter(slots=8, clock=lambda: now[0])
    try:
        keys = [f"k{i}" for i in range(8)]
        for k in keys:
            assert meter.charge([Charge(k, 5, 60, 1)]).allowed
        # every slot is live: a ninth key takes one, the others keep their counts
        assert meter.charge([Charge("new", 5, 60, 5)]).allowed
        kept = [meter.charge([Charge(k, 5, 60, 0)]).current[0] for k in keys]
        assert sorted(kept)[1:] == [1] * 7
        # two windows on, every counter is free again and counts from 0
        now[0] += 120
        assert meter.charge([Charge("new", 5, 60, 0)]).current[0] == 0
    finally:
        meter.close()


def test_the_hash_of_a_key_is_the_same_in_every_process_and_never_zero():
    assert key_hash("acme|scoring|5/60") == key_hash("acme|scoring|5/60") != 0
    assert key_hash("acme|scoring|5/60") != key_hash("acme|advice|5/60")


def test_a_pod_s_workers_share_one_table_across_a_fork():
    """Two processes (a worker forked from the app's process) count on one table: a quota of
    3 a minute answers 3 in all, not 3 each."""
    import multiprocessing

    meter = MemoryMeter(slots=64)
    try:
        ctx = multiprocessing.get_context("fork")
        results = ctx.Queue()

        def worker() -> None:
            results.put([meter.charge([Charge("t|scoring|3/60", 3, 60, 1)]).allowed
                         for _ in range(3)])

        procs = [ctx.Process(target=worker) for _ in range(2)]
        for p in procs:
            p.start()
        answered = sum(sum(results.get(timeout=30)) for _ in procs)
        for p in procs:
            p.join(10)
        assert answered == 3
    finally:
        meter.close()


def test_a_worker_killed_while_it_holds_the_lock_leaves_nothing_locked():
    import multiprocessing
    import os
    import signal

    meter = MemoryMeter(slots=64)
    try:
        ctx = multiprocessing.get_context("fork")
        held = ctx.Event()

        def holder() -> None:
            meter.lock.__enter__()
            held.set()
            os.kill(os.getpid(), signal.SIGSTOP)

        p = ctx.Process(target=holder)
        p.start()
        assert held.wait(10)
        os.kill(p.pid, signal.SIGKILL)
        p.join(10)
        assert meter.charge([Charge("t", 3, 60, 1)]).allowed  # not blocked
    finally:
        meter.close()
