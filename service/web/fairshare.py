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
milliseconds of CPU without waiting on anything, so under gevent the worker takes turns
through the event loop's next poll of the sockets (`take_turn`), at least every
`TURN_SECONDS` of its work: an admitted request, a place handed on, and a batch between two
items take one when it is due, so requests that arrived meanwhile are admitted or queued
within that time. The turns then go by tenant, not by connection: measured with one worker
on one core, a tenant flooding from 16 connections raised another's p99 from 3.6 to 5.5-6.0
ms (1.5-1.6 times; 5.5 times without the cap, as before).

An admitted request holds its caller's place through its turn, so the caller's requests the
turn lets in queue behind it, and each is handed the place through a pass of the loop. That
is what keeps one caller's many connections from crowding out another's, but when the
worker serves one caller alone there is no one to keep out, and the hand-overs cost some
8% of a scoring request (docs/benchmarks.md). So while no request of another caller is in
flight in the worker and none came for `SHARED_SECONDS` (`FairShare.shared`), a request
takes its turn before its place instead: the requests the turn lets in run in it, and the
cap binds only behind a request that holds its place across a wait (a batch between its
items). The first request of another caller makes the worker shared again; it is let in at
the worker's next turn either way. The lone caller's connections then take turns of
`TURN_SECONDS` rather than one request each: with eight keep-alive connections on one
worker their p99 was 10 ms instead of 4 ms (bare Flask, with no turns: 350 ms).
"""

from __future__ import annotations

import threading
import time
from collections import deque

import gevent
from gevent import monkey
from gevent.hub import Waiter

from .quotas import cooperative

#: Seconds of the timer that yields through the event loop's next poll (`take_turn`).
_LOOP_PASS = 1e-6
#: The timer's priority in the loop: below the sockets' watchers (libev's default, 0), so
#: after a poll the greenlets whose sockets became readable run before the one that took
#: the turn (at the same priority the loop would run the turn's greenlet first, and they
#: would wait for its next turn).
_TURN_PRIORITY = -1
#: Seconds of CPU a worker spends between two of its turns through the loop (`take_turn`).
TURN_SECONDS = 0.001
#: Seconds a worker counts as shared after a request of a caller other than the one before
#: (`FairShare.shared`).
SHARED_SECONDS = 1.0
#: This process's thread's CPU time (`time.thread_time`) when it last took a turn.
_turn_cpu = 0.0
#: The wall clock (`time.perf_counter`) before which no turn is due: when `take_turn` last
#: looked at the CPU time, it was short of the next turn's by so much, and the CPU time
#: never runs ahead of the wall clock. Until then `take_turn` reads only the wall clock.
_next_look = 0.0


def take_turn() -> None:
    """Under gevent, when the worker has spent `TURN_SECONDS` of CPU since its last turn: a
    turn for every other greenlet, those whose sockets became readable included. A timer of
    more than 0 s resumes after the loop's next poll of the sockets, while gevent.sleep(0)
    resumes among the greenlets already runnable, and the loop polls the sockets only every
    switch interval (5 ms) while some keep running (a connection whose request just arrived
    waited that long behind busy keep-alive connections, or behind a batch).

    Called before each request runs (`FairShare.admit`) and between a batch's items, so a
    connection that became readable is let in within `TURN_SECONDS` plus one item of the
    worker's work, however its requests come. The worker's CPU time, not the wall clock:
    with more workers than cores a worker waits for a core between its requests, and by the
    wall clock nearly every request would take a turn; the CPU time is read only once the
    wall clock has gone as far as the turn might be due (`_next_look`), not at every
    request (it is a system call, the wall clock is not). A turn costs some 20 us of CPU and
    40 us of waiting in a gunicorn worker; in a benchmark of keep-alive connections none let
    another request in, and one request in three now takes one, against every request
    before (docs/benchmarks.md). Nothing without gevent (threads are preempted anyway)."""
    global _turn_cpu, _next_look
    if not cooperative():
        return
    # the wall clock first: the CPU time is a system call (0.6 us)
    now = time.perf_counter()
    if now < _next_look:
        return
    cpu = time.thread_time()
    short = TURN_SECONDS - (cpu - _turn_cpu)
    if short > 0:  # not due yet, nor before the wall clock has gone as far again
        _next_look = now + short
        return
    # from the turn's start: the requests it lets in do not take one of their own
    _turn_cpu, _next_look = cpu, now + TURN_SECONDS
    hub = gevent.get_hub()
    # due after the loop's next poll (its time is the last poll's: not updated here)
    with hub.loop.timer(_LOOP_PASS, priority=_TURN_PRIORITY) as timer:
        hub.wait(timer)


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


class _ThreadWaiter:
    """A request waiting for its place (`FairShare.admit`), woken by `release` when a place
    is handed to it (`handed`), else by its time running out. Without gevent: an Event of
    the threads."""

    __slots__ = ("event", "handed")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.handed = False

    def wait(self, seconds: float) -> bool:
        """Wait until woken (True) or for `seconds` (False)."""
        return self.event.wait(seconds)

    def wake(self) -> None:
        """End the wait (called once, by `release`)."""
        self.event.set()


class _GreenletWaiter:
    """A waiting request (`_ThreadWaiter`) under gevent: the hub's own `Waiter`, switched to
    by a callback of the loop when the place is handed on and by a timer of the loop when
    the time runs out. A sixth of the cost of an Event (which keeps links, notifies them,
    and makes a Timeout for each wait): measured in process, a hand-over cost 4 us with an
    Event and 0.6 us with this; with a tenant's keep-alive connections on one worker nearly
    every request waits for one (a turn lets the others in while one holds the place, and
    they keep coming while the next is handed it: docs/benchmarks.md). The worker's
    requests all run in greenlets of one thread, the hub's, which `wake` is called in."""

    __slots__ = ("handed", "waiter")

    def __init__(self) -> None:
        self.handed = False
        self.waiter = Waiter()

    def wait(self, seconds: float) -> bool:
        """Wait until woken (True) or for `seconds` (False)."""
        waiter = self.waiter
        timer = waiter.hub.loop.timer(seconds)
        timer.start(waiter.switch, False)
        try:
            return waiter.get()
        finally:
            timer.close()

    def wake(self) -> None:
        """End the wait: switch to the waiting greenlet from the loop's next callbacks (the
        hub's `Waiter` is switched to from the hub only; a value switched before its `get`
        is kept)."""
        waiter = self.waiter
        waiter.hub.loop.run_callback(waiter.switch, True)


class FairShare:
    """Requests in flight per caller in this worker, capped (module docstring)."""

    def __init__(self, per_worker: int, wait: float,
                 shared_seconds: float = SHARED_SECONDS) -> None:
        self.per_worker, self.wait, self.shared_seconds = per_worker, wait, shared_seconds
        # an OS lock even under gevent (a patched one costs 5 us a use): it is never held
        # across a switch of greenlets, only around a few dict operations
        self._lock = monkey.get_original("_thread", "allocate_lock")()
        self._running: dict[str, int] = {}
        self._waiting: dict[str, deque[_ThreadWaiter | _GreenletWaiter]] = {}
        # the caller of the last request admitted, and until when the worker is shared
        self._last_client = ""
        self._shared_until = 0.0

    def shared(self, client: str) -> bool:
        """Whether the worker serves callers other than `client`: one of theirs is in
        flight, or came less than `shared_seconds` ago (noted here: called once a request,
        by `admit`)."""
        now = time.perf_counter()
        if client != self._last_client:
            self._last_client, self._shared_until = client, now + self.shared_seconds
            return True
        running = self._running
        return now < self._shared_until or len(running) > (client in running)

    def admit(self, client: str, tenant: str) -> None:
        """Wait until a request of `client` may be answered; raises `TooManyInFlight`.
        Every admitted request is `release`d once answered."""
        shared = self.shared(client)
        if not shared:
            # alone: its turn before its place, so the client's requests the turn lets in
            # run in it instead of queueing behind this one (module docstring)
            take_turn()
        with self._lock:
            running = self._running.get(client, 0)
            if running < self.per_worker and client not in self._waiting:
                self._running[client] = running + 1
                waiter = None
            else:
                waiter = _GreenletWaiter() if cooperative() else _ThreadWaiter()
                self._waiting.setdefault(client, deque()).append(waiter)
        if waiter is None:
            if shared:  # let the requests that arrived with this one in first
                self._turn(client)
            return
        try:
            handed = waiter.wait(self.wait)
        except BaseException:  # ended while it waited (its greenlet killed): not left queued
            if not self._leave(client, waiter):
                self.release(client)  # a place was handed to it meanwhile: passed on
            raise
        if handed or not self._leave(client, waiter):  # (handed just as the wait ended)
            # a finished request handed its place on: a turn when due, not straight from
            # the hand-over (a chain of hand-overs would otherwise run every waiting request
            # of the tenant before a socket is looked at again)
            if shared:
                self._turn(client)
            return
        raise TooManyInFlight(tenant, self.per_worker, self.wait)

    def _turn(self, client: str) -> None:
        """`take_turn` for a request holding a place of `client`: ended meanwhile (its
        greenlet killed), it gives the place back."""
        try:
            take_turn()
        except BaseException:
            self.release(client)
            raise

    def _leave(self, client: str, waiter: _ThreadWaiter | _GreenletWaiter) -> bool:
        """Take a waiter out of its client's queue; False when a place was handed to it
        meanwhile (it holds that place)."""
        with self._lock:
            if waiter.handed:
                return False
            queue = self._waiting[client]
            queue.remove(waiter)
            if not queue:
                del self._waiting[client]
            return True

    def resume(self, client: str) -> None:
        """A request of `client` that gave its place up while it waited (`release`, from
        `service.caller.waiting`) takes one again at once: it was admitted before."""
        with self._lock:
            self._running[client] = self._running.get(client, 0) + 1
        # (not `_turn`: ended meanwhile, its request gives the place back as it ends, as
        # any admitted request does)
        take_turn()

    def release(self, client: str) -> None:
        """A request of `client` was answered: its place goes to the next one waiting."""
        with self._lock:
            queue = self._waiting.get(client)
            if queue:
                waiter = queue.popleft()
                if not queue:
                    del self._waiting[client]
                waiter.handed = True
                waiter.wake()
                return
            running = self._running[client] - 1
            if running:
                self._running[client] = running
            else:
                del self._running[client]

    def in_flight(self, client: str) -> int:
        """Requests of `client` admitted and not yet released in this worker (for tests)."""
        return self._running.get(client, 0)
