"""Native threads for the kernels that release the GIL, shared by a process's requests.

The exact distribution (`distribution.forward`) and the sampled games (`Analyst`) split their
work between threads, one a CPU. The service's gunicorn workers run under gevent, whose
monkey-patching makes `threading`'s threads greenlets: they run one at a time, a kernel never
gives way, and a pool of them only adds switching (worse, a greenlet runs every chunk queued
for it before the waiting request looks at its time budget). There the pool is gevent's
executor of native threads instead: the kernels run side by side on the CPUs, and a request
waiting for them yields to the worker's other connections (health probes included).

One pool a process, made on first use and kept: requests share its threads, so concurrent
requests of a worker never start more than one thread a CPU between them. gunicorn's master
uses it while it compiles the kernels and ends it before it forks (`release_pool`); a
process forked with a pool makes its own. Tasks given to it must not wait on other tasks of
the pool.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import Executor, ThreadPoolExecutor

from ...cpus import usable_cpus

_lock = threading.Lock()
_pool: tuple[int, int, Executor] | None = None  # (pid, workers, pool)


def greenlet_threads() -> bool:
    """Whether `threading` has been monkey-patched by gevent (its threads are greenlets)."""
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey is not None and monkey.is_module_patched("threading"))


def cpu_workers(threads: int) -> int:
    """Threads to use for `threads` asked (0: every usable CPU), never more than the CPUs the
    process may use: its affinity and its container's CPU quota (`service.cpus`), not the
    node's count."""
    cpus = usable_cpus()
    return max(1, min(threads or cpus, cpus))


def release_pool() -> None:
    """End the process's pool, its threads first (made again on next use): before a fork,
    so that no thread of it is alive in the process that forks."""
    global _pool
    with _lock:
        found, _pool = _pool, None
    if found is not None:
        found[2].shutdown(wait=True)


def kernel_pool() -> Executor:
    """The process's pool of native threads, one a CPU (see the module's docstring)."""
    global _pool
    pid = os.getpid()
    found = _pool
    if found is not None and found[0] == pid:
        return found[2]
    with _lock:
        if _pool is None or _pool[0] != pid:
            workers = cpu_workers(0)
            if greenlet_threads():
                from gevent.threadpool import ThreadPoolExecutor as NativePool

                pool: Executor = NativePool(workers)
            else:
                pool = ThreadPoolExecutor(workers, thread_name_prefix="kernels")
            _pool = (pid, workers, pool)
        return _pool[2]
