"""The meter: counters of what each caller used in sliding windows, checked and charged all
together, in the pod's memory (shared by its workers) or in Redis (shared by every pod).

A request is charged to several counters at once (`Charge`: its tenant's quota of its
operation class, and a derived key's end user's own, each limit of each); `charge` checks
every one first and charges them all only when every one has room, or none (a request
refused by one quota uses up none of the others). Each counter has a key of its own (the
caller, the class and the limit: `quotas.Quotas` names them), so two classes whose quotas
read the same never share one.

The counting is the sliding-window counter (as Cloudflare's and `limits`' are): a window of
`seconds`, aligned on the Unix epoch; a counter holds what was charged in the current window
and in the one before; its weighted count at a time `frac` of the way through the current
window is ``previous * (1 - frac) + current``, and a charge of `cost` fits when that plus
`cost` is at most `amount`. One function states the rule (`fits`); the Redis script is its
Lua form, with the same arithmetic in the same order (doubles in both), and a model test
holds both to a plain Python model (tests/web/test_meter.py).

- `MemoryMeter`: a table of counters in shared memory (an anonymous file mapped by every
  process forked from the one that made it: gunicorn's workers, made after the app is
  loaded), each check-and-charge under one lock across the pod's processes and threads
  (`shared.pod_lock`: a robust mutex in shared memory, which a killed worker leaves
  unlocked). So a pod's quota is the pod's, whatever worker answers. It holds `SLOTS`
  counters; a counter not charged for two of its windows is free for another, and when the
  slots a key may use are all live, the one that frees soonest is taken (its count starts
  again).
- `RedisMeter`: the same in Redis, one atomic script a call (`CHARGE_SCRIPT`), the calls that
  arrive together sent as one pipeline (`RedisMeter.charge`), each bounded by a timeout.

Time is the caller's clock (the pods' clocks, kept by NTP), passed in, so windows are the
same in memory and in Redis, and the tests step it.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .shared import pod_lock, shared_cells

#: Counters the pod's memory holds (each 40 bytes: 2.6 MB).
SLOTS = 1 << 16
#: Slots a key may take, from the one its hash names.
PROBE = 32
#: Cells (64-bit integers) at the start of the shared memory kept for `PodState`.
STATE_CELLS = 8
_SLOT_CELLS = 5  # key hash, window seconds, current window's start, current, previous


class Charge(NamedTuple):
    """A charge of `cost` to the counter `key`, whose limit is `amount` in `seconds`."""

    key: str
    amount: int
    seconds: int
    cost: int


class Verdict(NamedTuple):
    """What a `charge` found: whether every charge fitted (and was made), the index of the
    first that did not (-1), and for each charge its counter's current and previous window
    counts (after the charge when it was made, as found when refused), the start of its
    current window (Unix seconds) and the time of the call."""

    allowed: bool
    refused: int
    current: tuple[int, ...]
    previous: tuple[int, ...]
    starts: tuple[int, ...]
    now: float

    def count(self, i: int, charge: Charge) -> float:
        """Charge `i`'s weighted count (`weighted`)."""
        return weighted(self.previous[i], self.current[i],
                        (self.now - self.starts[i]) / charge.seconds)  # _frac, inline

    def remaining(self, i: int, charge: Charge) -> int:
        """How many more units charge `i`'s counter takes now (never below 0)."""
        return max(0, math.floor(charge.amount - self.count(i, charge) + 1e-9))

    def reset(self, i: int, charge: Charge) -> int:
        """Seconds (at least 1) until charge `i`'s current window ends: its count falls from
        then on."""
        return max(1, math.ceil(self.starts[i] + charge.seconds - self.now))

    def wait(self, i: int, charge: Charge) -> int:
        """Seconds (at least 1) until charge `i`'s cost fits, if nothing else is charged;
        a cost above the limit never fits: a whole window then."""
        return wait_seconds(self.previous[i], self.current[i], self.now, self.starts[i],
                            charge)


def weighted(previous: float, current: float, frac: float) -> float:
    """A sliding window's count, `frac` of the way through its current window."""
    return previous * (1.0 - frac) + current


def fits(previous: float, current: float, frac: float, amount: int, cost: int) -> bool:
    """The rule: a charge of `cost` fits when the weighted count plus it is at most `amount`
    (`CHARGE_SCRIPT` computes the same, in the same order)."""
    return previous * (1.0 - frac) + current + cost <= amount


def window_start(now: float, seconds: int) -> int:
    """The start (Unix seconds) of the window of `seconds` that `now` is in."""
    return int(now // seconds) * seconds


def _frac(now: float, start: int, seconds: int) -> float:
    return (now - start) / seconds


def wait_seconds(previous: int, current: int, now: float, start: int, charge: Charge) -> int:
    """Seconds until `charge.cost` fits a counter with these counts, if nothing else is
    charged (at least 1; a whole window for a cost above the limit)."""
    amount, seconds, cost = charge.amount, charge.seconds, charge.cost
    if cost > amount:
        return seconds
    if current + cost <= amount:  # the previous window's share has to fall enough
        if previous <= 0:
            return 1
        frac = 1.0 - (amount - current - cost) / previous
        return max(1, math.ceil(start + frac * seconds - now))
    # not before the next window, where this one's count falls as the previous one's did
    frac = 1.0 - (amount - cost) / current
    return max(1, math.ceil(start + seconds + frac * seconds - now))


def key_hash(key: str) -> int:
    """A counter key's 63-bit hash (never 0: 0 marks an empty slot), the same in every
    process."""
    h = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return (h >> 1) or 1


class MemoryMeter:
    """Counters in memory shared by the pod's processes (module docstring)."""

    def __init__(self, slots: int = SLOTS, clock: Callable[[], float] = time.time) -> None:
        self.slots, self.clock = slots, clock
        self._fd, self._map, self.cells = shared_cells(STATE_CELLS + slots * _SLOT_CELLS,
                                                        "quota-meter")
        self.lock = pod_lock("quota-meter-lock")
        self._hashes: dict[str, int] = {}
        self._hints: dict[str, tuple[int, int]] = {}  # key -> (its first cell, its hash)

    def _hash(self, key: str) -> int:
        h = self._hashes.get(key)
        if h is None:
            if len(self._hashes) >= 65536:
                self._hashes.clear()
            h = self._hashes[key] = key_hash(key)
        return h

    def _base(self, key: str, seconds: int, now: float) -> int:
        """The first cell of the counter `key` (taken when new), under the lock: where this
        process last found it when it is still there (no other key took its slot since: a
        key is in one slot at most), else `_slot`'s search."""
        hint = self._hints.get(key)
        cells = self.cells
        if hint is not None:
            base, h = hint
            if cells[base] == h and cells[base + 1] == seconds:
                return base
        h = self._hash(key)
        base = self._slot(h, seconds, now)
        if len(self._hints) >= 65536:
            self._hints.clear()
        self._hints[key] = (base, h)
        return base

    def _slot(self, h: int, seconds: int, now: float) -> int:
        """The first cell of the counter of hash `h` (taken when new), under the lock."""
        cells, slots = self.cells, self.slots
        home = h % slots
        free = soonest = -1
        soonest_end = math.inf
        for p in range(PROBE):
            base = STATE_CELLS + ((home + p) % slots) * _SLOT_CELLS
            found = cells[base]
            if found == h and cells[base + 1] == seconds:
                return base
            if found == 0:  # the chain ends here: the key is not further on
                if free < 0:
                    free = base
                break
            end = cells[base + 2] + 2 * cells[base + 1]  # it counts nothing from then on
            if end <= now:
                if free < 0:
                    free = base
            elif end < soonest_end:
                soonest, soonest_end = base, end
        base = free if free >= 0 else soonest
        cells[base], cells[base + 1] = h, seconds
        cells[base + 2] = cells[base + 3] = cells[base + 4] = 0
        return base

    def _roll(self, base: int, seconds: int, now: float) -> int:
        """Move the counter at `base` to the window `now` is in; its start."""
        cells = self.cells
        start = window_start(now, seconds)
        held = cells[base + 2]
        if held != start:
            cells[base + 4] = cells[base + 3] if held == start - seconds else 0
            cells[base + 3] = 0
            cells[base + 2] = start
        return start

    def _check(self, base: int, c: Charge, now: float) -> tuple[int, bool]:
        """Move the counter at `base` to `now`'s window (under the lock): the window's start,
        and whether `c` fits it."""
        cells, seconds = self.cells, c.seconds
        start = int(now // seconds) * seconds  # window_start, inline
        if cells[base + 2] != start:
            self._roll(base, seconds, now)
        return start, fits(cells[base + 4], cells[base + 3], (now - start) / seconds,
                           c.amount, c.cost)

    def charge(self, charges: Sequence[Charge]) -> Verdict:
        """Check every charge, then make them all or none (module docstring)."""
        now = self.clock()
        cells = self.cells
        if len(charges) == 1:  # the common case (a quota of one limit), without the lists
            c = charges[0]
            with self.lock:
                base = self._base(c.key, c.seconds, now)
                start, allowed = self._check(base, c, now)
                if allowed:
                    cells[base + 3] += c.cost
                current, previous = cells[base + 3], cells[base + 4]
            return Verdict(allowed, -1 if allowed else 0, (current,), (previous,), (start,),
                           now)
        starts: list[int] = []
        refused = -1
        with self.lock:
            bases = [self._base(c.key, c.seconds, now) for c in charges]
            for base, c in zip(bases, charges):
                start, ok = self._check(base, c, now)
                starts.append(start)
                if refused < 0 and not ok:
                    refused = len(starts) - 1
            if refused < 0:
                for base, c in zip(bases, charges):
                    cells[base + 3] += c.cost
            current = tuple([cells[b + 3] for b in bases])
            previous = tuple([cells[b + 4] for b in bases])
        return Verdict(refused < 0, refused, current, previous, tuple(starts), now)

    def refund(self, charges: Sequence[Charge], verdict: Verdict) -> None:
        """Take back charges that `verdict` made (a request refused after them): from the
        window each went to, if its counter still holds it."""
        now = self.clock()
        cells = self.cells
        with self.lock:
            for c, start in zip(charges, verdict.starts):
                base = self._base(c.key, c.seconds, now)
                self._roll(base, c.seconds, now)
                held = cells[base + 2]
                cell = base + 3 if held == start else base + 4 if held == start + c.seconds \
                    else -1
                if cell >= 0:
                    cells[cell] = max(0, cells[cell] - c.cost)

    def close(self) -> None:
        """Unmap the table (tests)."""
        self.lock.close()
        self.cells.release()
        self._map.close()
        os.close(self._fd)


class PodState:
    """A few numbers every process of the pod reads and writes (the quota storage's state,
    `quotas.Quotas`): cells of the memory meter's shared map kept for it."""

    def __init__(self, meter: MemoryMeter) -> None:
        self.cells = meter.cells

    def __getitem__(self, i: int) -> int:
        return self.cells[i]

    def __setitem__(self, i: int, value: int) -> None:
        self.cells[i] = value


#: The check-and-charge in Redis: KEYS, two a charge (its counter's current and previous
#: window); ARGV, four a charge (amount, seconds, frac, cost). The rule is `fits`, in the
#: same order. Answers the 1-based index of the first charge that does not fit (0: all made),
#: then each charge's current and previous counts.
CHARGE_SCRIPT = """
local n = #KEYS / 2
local counts = {}
local refused = 0
for i = 1, n do
  local current = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  local previous = tonumber(redis.call('GET', KEYS[2 * i]) or '0')
  counts[2 * i] = current
  counts[2 * i + 1] = previous
  if refused == 0 and previous * (1.0 - tonumber(ARGV[4 * i - 1])) + current
      + tonumber(ARGV[4 * i]) > tonumber(ARGV[4 * i - 3]) then
    refused = i
  end
end
if refused == 0 then
  for i = 1, n do
    local cost = tonumber(ARGV[4 * i])
    if cost > 0 then
      counts[2 * i] = redis.call('INCRBY', KEYS[2 * i - 1], cost)
      redis.call('EXPIRE', KEYS[2 * i - 1], 2 * tonumber(ARGV[4 * i - 2]) + 1)
    end
  end
end
counts[1] = refused
return counts
"""

#: Takes back charges (KEYS: the windows they went to; ARGV: their costs), never below 0.
REFUND_SCRIPT = """
for i = 1, #KEYS do
  local held = tonumber(redis.call('GET', KEYS[i]) or '0')
  local back = math.min(held, tonumber(ARGV[i]))
  if back > 0 then redis.call('DECRBY', KEYS[i], back) end
end
return 0
"""


class _Call:
    """One call waiting to be sent to Redis (`RedisMeter`)."""

    __slots__ = ("args", "done", "error", "keys", "result", "script")

    def __init__(self, script: Any, keys: list[str], args: list[Any]) -> None:
        self.script, self.keys, self.args = script, keys, args
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class RedisMeter:
    """Counters in Redis (module docstring). A call made while no other of the process is in
    flight is sent straight (one round trip, bounded by the socket timeout); calls that
    arrive while one is go as one pipeline: a sender (a greenlet under gevent, else a
    thread; one per process, started by its first call) sends every call waiting, and again
    as soon as that answers if more arrived. Each call waits for its own answer at most
    `timeout` seconds from when it asked, then raises TimeoutError (its caller counts in
    memory instead); when a pipeline fails, the calls waiting behind it fail with it at
    once."""

    def __init__(self, url: str, timeout: float, prefix: str,
                 clock: Callable[[], float] = time.time) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        self.client = redis.Redis.from_url(url, socket_timeout=timeout,
                                           socket_connect_timeout=timeout,
                                           retry=Retry(NoBackoff(), 0))
        self.timeout, self.prefix, self.clock = timeout, prefix, clock
        self.charge_script = self.client.register_script(CHARGE_SCRIPT)
        self.refund_script = self.client.register_script(REFUND_SCRIPT)
        self._pid = 0

    def ping(self) -> bool:
        """Whether Redis answers (bounded by the timeout; raises what redis-py raises)."""
        return bool(self.client.ping())

    def _key(self, key: str, start: int) -> str:
        return f"{self.prefix}:{key}:{start}"

    def charge(self, charges: Sequence[Charge]) -> Verdict:
        """Check every charge, then make them all or none, in one script."""
        now = self.clock()
        keys: list[str] = []
        args: list[Any] = []
        starts = []
        for c in charges:
            start = window_start(now, c.seconds)
            starts.append(start)
            keys += (self._key(c.key, start), self._key(c.key, start - c.seconds))
            args += (c.amount, c.seconds, repr(_frac(now, start, c.seconds)), c.cost)
        answer = self._call(self.charge_script, keys, args)
        refused = int(answer[0]) - 1
        current = tuple(int(answer[1 + 2 * i]) for i in range(len(charges)))
        previous = tuple(int(answer[2 + 2 * i]) for i in range(len(charges)))
        return Verdict(refused < 0, refused, current, previous, tuple(starts), now)

    def refund(self, charges: Sequence[Charge], verdict: Verdict) -> None:
        """Take back charges that `verdict` made, from the windows they went to."""
        self._call(self.refund_script,
                   [self._key(c.key, s) for c, s in zip(charges, verdict.starts)],
                   [c.cost for c in charges])

    # --- the pipeline ------------------------------------------------------------------------
    def _start(self) -> None:
        """The sender and its queue, made in the process that calls (a worker, after gevent
        patched it: threads do not survive a fork, and primitives made before the patch
        would block the worker instead of a greenlet)."""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: list[_Call] = []
        self._sender = threading.Thread(target=self._send_forever, daemon=True,
                                        name="quota-meter")
        self._sender.start()
        self._in_flight = 0  # calls sent straight and not answered yet
        self._pid = os.getpid()

    def _call(self, script: Any, keys: list[str], args: list[Any]) -> Any:
        """The script's answer: sent straight from the caller when no other call of this
        process is in flight (a hand-over to the sender costs some 40 us of CPU), else
        queued for the sender's next pipeline. Either way bounded by `timeout`."""
        call = _Call(script, keys, args)
        if self._pid != os.getpid():
            self._start()
        if not self._in_flight:
            self._in_flight += 1
            try:
                result = self._execute([call])[0]
            finally:
                self._in_flight -= 1
            if isinstance(result, BaseException):
                raise result
            return result
        with self._lock:
            self._pending.append(call)
            self._wake.set()
        if not call.done.wait(self.timeout):
            with self._lock:
                if call in self._pending:  # not sent yet: it never will be
                    self._pending.remove(call)
            raise TimeoutError("quota storage: no answer in time")
        if call.error is not None:
            raise call.error
        return call.result

    def _send_forever(self) -> None:
        while True:
            self._wake.wait()
            with self._lock:
                batch, self._pending = self._pending, []
                self._wake.clear()
            if batch:
                self._send(batch)

    def _send(self, batch: list[_Call]) -> None:
        """One pipeline for the batch (one command when alone: a pipeline costs some 20 us of
        Python more); each call gets its answer or the error, and after an error so do the
        calls that arrived meanwhile."""
        try:
            results = self._execute(batch)
        except Exception as exc:
            with self._lock:
                batch, self._pending = batch + self._pending, []
            results = [exc] * len(batch)
        for call, result in zip(batch, results):
            if isinstance(result, BaseException):
                call.error = result
            else:
                call.result = result
            call.done.set()

    def _execute(self, batch: list[_Call]) -> list[Any]:
        """The scripts' answers (or errors) for the batch, by their SHA1 (a pipeline of
        redis-py's Script objects would ask SCRIPT EXISTS first, a round trip more each
        time); a Redis that lost them (restarted, flushed) is given them again and asked
        once more (NOSCRIPT charged nothing)."""
        from redis.exceptions import NoScriptError, ResponseError

        client = self.client
        for attempt in (0, 1):
            if len(batch) == 1:
                c = batch[0]
                try:
                    results = [client.evalsha(c.script.sha, len(c.keys), *c.keys, *c.args)]
                except ResponseError as exc:  # NOSCRIPT among them: as a pipeline's answer
                    results = [exc]
            else:
                pipe = client.pipeline(transaction=False)
                for c in batch:
                    pipe.evalsha(c.script.sha, len(c.keys), *c.keys, *c.args)
                results = pipe.execute(raise_on_error=False)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in results):
                for script in {id(c.script): c.script for c in batch}.values():
                    script.sha = client.script_load(script.script)
                continue
            return results
        return results  # pragma: no cover - the loop returns
