"""The pod's lock (`service.web.shared`): one holder at a time across processes and threads,
and a holder that dies leaves it unlocked; the robust mutex where the C library has one (this
Linux), the record lock elsewhere."""

from __future__ import annotations

import errno
import multiprocessing
import os
import signal
import sys
import threading
import time

import pytest

from service.web.shared import RecordLock, RobustMutex, pod_lock, shared_cells


def _record_lock() -> RecordLock:
    fd, mapped, cells = shared_cells(8, "test-record-lock")
    cells.release()
    return RecordLock(fd, mapped)


def _add_under(lock, cells, times: int) -> None:
    """Add 1 to `cells[0]` `times` times, each a read, a pause (another may run there if it
    can) and a write, under `lock`: with a lock that excludes, none is lost."""
    for _ in range(times):
        with lock:
            seen = cells[0]
            time.sleep(0)
            cells[0] = seen + 1


LOCKS = {"pod_lock": lambda: pod_lock("test-pod-lock"), "record lock": _record_lock}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's or musl's mutex")
def test_on_linux_the_pod_lock_is_a_robust_mutex():
    lock = pod_lock("test-pod-lock")
    try:
        assert isinstance(lock, RobustMutex)
    finally:
        lock.close()


@pytest.mark.parametrize("make", LOCKS.values(), ids=LOCKS.keys())
def test_processes_take_it_one_at_a_time(make):
    """Forked processes add to one shared cell, each addition a read, a pause and a write
    under the lock: none is lost."""
    lock = make()
    fd, mapped, cells = shared_cells(1, "test-counter")
    try:
        ctx = multiprocessing.get_context("fork")

        procs = [ctx.Process(target=_add_under, args=(lock, cells, 200)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert [p.exitcode for p in procs] == [0] * 4
        assert cells[0] == 800
    finally:
        cells.release()
        mapped.close()
        os.close(fd)
        lock.close()


@pytest.mark.parametrize("make", LOCKS.values(), ids=LOCKS.keys())
def test_threads_of_a_process_take_it_one_at_a_time(make):
    lock, counts = make(), [0]
    try:
        threads = [threading.Thread(target=_add_under, args=(lock, counts, 500))
                   for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert counts[0] == 2000
    finally:
        lock.close()


@pytest.mark.parametrize("make", LOCKS.values(), ids=LOCKS.keys())
def test_a_process_killed_holding_it_leaves_it_unlocked(make):
    lock = make()
    try:
        ctx = multiprocessing.get_context("fork")
        held = ctx.Event()

        def holder() -> None:
            lock.__enter__()
            held.set()
            os.kill(os.getpid(), signal.SIGSTOP)

        p = ctx.Process(target=holder)
        p.start()
        assert held.wait(10)
        got = threading.Event()

        def waiter() -> None:
            with lock:
                got.set()

        t = threading.Thread(target=waiter, daemon=True)
        t.start()
        assert not got.wait(0.3)  # held by the stopped process
        os.kill(p.pid, signal.SIGKILL)
        p.join(10)
        assert got.wait(10)  # taken on once its holder died
        t.join(10)
        with lock:  # and free again after
            pass
    finally:
        lock.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's or musl's mutex")
def test_locking_it_again_while_holding_it_is_an_error_not_a_hang():
    lock = pod_lock("test-pod-lock")
    try:
        with lock:
            with pytest.raises(OSError) as err, lock:
                pass
            assert err.value.errno == errno.EDEADLK
        with lock:  # still held once, and released
            pass
    finally:
        lock.close()
