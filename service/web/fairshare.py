"""A fair share of a pod for each tenant: at most so many of a tenant's requests are being
answered at once in a worker; the others wait their turn, briefly, then get a 429.

Why a cap on requests in flight and not only a rate quota: a tenant within its rate quota
(which counts requests a minute, across pods) may still send many requests at once, from
many connections. A gevent worker runs its connections' requests in turn, one each, so a
tenant with 16 connections got 16 turns for another tenant's one, and the other's
throughput fell to 0.37 of what it had alone. Here each worker admits at most `per_worker`
requests of one caller (`service.caller.Caller.client`: a tenant, or without keys a client
address) at once; a request beyond that waits, in arrival order among its tenant's, until one
of them is answered, at most `wait` seconds, then is refused (`TooManyInFlight`: 429
`/problems/too-many-in-flight` with Retry-After). Other tenants' requests do not wait for it.
A request waiting for something other than the CPU (a table the build process makes) gives
its place up meanwhile (`service.caller.waiting`).

The pod's cap (`TENANT_IN_FLIGHT`) is shared out between its workers: each admits
`max(1, TENANT_IN_FLIGHT // workers)`, one by default (a tenant's connections may land on
any worker; a killed worker takes its counts with it). Requests answer in microseconds to
milliseconds of CPU without waiting on anything, so under gevent each turn goes through the
event loop's next poll of the sockets (`yield_to_io`): an admitted request first lets the
requests that arrived with it be admitted or queued, and a place handed on is taken after
the sockets were looked at again. The turns then go by tenant, not by connection: measured
with one worker on one core, a tenant flooding from 16 connections raised another's p99
from 3.6 to 5.5-6.0 ms (1.5-1.6 times; 5.5 times without the cap, as before).
"""

from __future__ import annotations

import threading
import time
from collections import deque

from gevent import monkey

from .quotas import cooperative

#: Seconds of the sleep that yields through the event loop's next poll (`yield_to_io`).
_LOOP_PASS = 1e-6


def yield_to_io() -> None:
    """Under gevent, a turn for every other greenlet, those whose sockets became readable
    included: a sleep of more than 0 resumes after the loop's next poll of the sockets,
    while gevent.sleep(0) resumes among the greenlets already runnable, and the loop polls
    the sockets only every switch interval (5 ms) while some keep running (a connection
    whose request just arrived waited that long behind busy keep-alive connections). Alone
    it takes about 3 us (1.4 us for a sleep of 0); in a gunicorn worker a request with its
    turn costs some 25 us more CPU than one without (the extra poll, and the request's data
    gone cold while others ran: 7% of a scoring request; docs/benchmarks.md measures the
    ways tried to take fewer turns). Nothing without gevent (threads are preempted
    anyway)."""
    if cooperative():
        time.sleep(_LOOP_PASS)  # gevent's sleep (monkey-patched): a timer, one loop pass


#: Seconds of work a batch does between two of its turns (`Turns`).
TURN_SECONDS = 0.001


class Turns:
    """A batch's turns among the worker's connections: called between two items, it lets
    every other request run (`yield_to_io`) once the batch has worked `TURN_SECONDS` since
    its last turn. So a batch takes the worker's CPU in slices as a run of single requests
    would (each takes a turn before it runs), and a tenant sending large batches on many
    connections leaves another tenant its turns between its items, not after its batches
    (bench/bench_tenants.py --flood batches measures it). About 0.1 us an item between
    turns; nothing without gevent."""

    __slots__ = ("every", "last")

    def __init__(self, every: float = TURN_SECONDS) -> None:
        self.every = every
        self.last = time.perf_counter()

    def __call__(self) -> None:
        """Between two items: a turn, if the batch worked a slice since its last."""
        now = time.perf_counter()
        if now - self.last >= self.every:
            yield_to_io()
            self.last = time.perf_counter()


class TooManyInFlight(Exception):
    """The caller has its fair share of the pod in flight, and none finished in time."""

    def __init__(self, tenant: str, limit: int, waited: float) -> None:
        super().__init__(f"{tenant}: {limit} requests in flight in this worker")
        self.tenant, self.limit, self.waited = tenant, limit, waited
        self.retry_after = 1

    @property
    def detail(self) -> str:
        """The problem document's detail."""
        who = "This client" if self.tenant == "anonymous" else f"Tenant {self.tenant}"
        return (f"{who} already has {self.limit} request(s) being answered in this worker "
                f"(its fair share of the pod) and none finished within {self.waited:g} s; "
                f"ask again in {self.retry_after} s")


class _Waiter:
    __slots__ = ("event", "handed")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.handed = False


class FairShare:
    """Requests in flight per caller in this worker, capped (module docstring)."""

    def __init__(self, per_worker: int, wait: float) -> None:
        self.per_worker, self.wait = per_worker, wait
        # an OS lock even under gevent (a patched one costs 5 us a use): it is never held
        # across a switch of greenlets, only around a few dict operations
        self._lock = monkey.get_original("_thread", "allocate_lock")()
        self._running: dict[str, int] = {}
        self._waiting: dict[str, deque[_Waiter]] = {}

    def admit(self, client: str, tenant: str) -> None:
        """Wait until a request of `client` may be answered; raises `TooManyInFlight`.
        Every admitted request is `release`d once answered."""
        with self._lock:
            running = self._running.get(client, 0)
            if running < self.per_worker and client not in self._waiting:
                self._running[client] = running + 1
                waiter = None
            else:
                waiter = _Waiter()
                self._waiting.setdefault(client, deque()).append(waiter)
        if waiter is None:
            yield_to_io()  # let the requests that arrived with this one be admitted first
            return
        if waiter.event.wait(self.wait):
            # a finished request handed its place on: take it through the loop's next poll,
            # not straight from the hand-over (a chain of hand-overs would otherwise run
            # every waiting request of the tenant before a socket is looked at again)
            yield_to_io()
            return
        with self._lock:
            if waiter.handed:  # handed its place just as the wait ended
                return
            queue = self._waiting[client]
            queue.remove(waiter)
            if not queue:
                del self._waiting[client]
        raise TooManyInFlight(tenant, self.per_worker, self.wait)

    def resume(self, client: str) -> None:
        """A request of `client` that gave its place up while it waited (`release`, from
        `service.caller.waiting`) takes one again at once: it was admitted before."""
        with self._lock:
            self._running[client] = self._running.get(client, 0) + 1
        yield_to_io()

    def release(self, client: str) -> None:
        """A request of `client` was answered: its place goes to the next one waiting."""
        with self._lock:
            queue = self._waiting.get(client)
            if queue:
                waiter = queue.popleft()
                if not queue:
                    del self._waiting[client]
                waiter.handed = True
                waiter.event.set()
                return
            running = self._running[client] - 1
            if running:
                self._running[client] = running
            else:
                del self._running[client]

    def in_flight(self, client: str) -> int:
        """Requests of `client` admitted and not yet released in this worker (for tests)."""
        return self._running.get(client, 0)
