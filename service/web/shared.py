"""Memory and a lock shared by a pod's processes, which the memory meter (`meter`) and the
per-request metrics (`tally`) count in.

- `shared_cells`: 64-bit cells in an anonymous file mapped shared, made in the process that
  loads the app (gunicorn's master, the app preloaded) before it forks the workers, which
  all map it.
- `pod_lock`: one holder at a time across the pod's processes and a process's threads, which
  a process that dies holding it (a worker killed) does not leave locked:
  - where the C library has them (glibc, musl), a POSIX robust, process-shared mutex in
    shared memory, called through ctypes (`RobustMutex`). It makes no system call unless
    another holds it: a lock and unlock cost 0.45 us in process. The next process to lock it
    after its holder died is told so (`EOWNERDEAD`) and takes it on.
  - elsewhere, a POSIX record lock on the shared file, which the kernel releases when its
    process dies, with a thread lock (record locks do not exclude a process's threads):
    `RecordLock`. Two `fcntl` calls, 1.5 us, and under load a worker could be preempted on
    the way out of the first while it held the lock, the others then waiting for it.

Both are held only around a few operations on memory, never across a wait, so under gevent
they are OS locks, not a greenlet's: a worker's greenlets never meet inside one.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import logging
import mmap
import os
from typing import Any

from gevent import monkey

log = logging.getLogger(__name__)

#: Bytes kept for a mutex (a pthread_mutex_t is 40 bytes in glibc on x86-64, 48 on arm64)
#: and for its attributes (4 or 8).
MUTEX_BYTES = 64
# <pthread.h>'s values, the same in glibc and musl
_ERRORCHECK, _PROCESS_SHARED, _ROBUST = 2, 1, 1


def shared_cells(count: int, name: str) -> tuple[int, Any, memoryview]:
    """`count` 64-bit cells of memory shared with every process forked after this (an
    anonymous file, mapped shared), all zero: its descriptor, map and cells."""
    size = count * 8
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(name, os.MFD_CLOEXEC)
    else:  # pragma: no cover - not Linux
        import tempfile

        fd, path = tempfile.mkstemp(prefix=name)
        os.unlink(path)
    os.ftruncate(fd, size)
    mapped = mmap.mmap(fd, size)
    return fd, mapped, memoryview(mapped).cast("q")


def pod_lock(name: str) -> RobustMutex | RecordLock:
    """A lock across the pod's processes (module docstring), in shared memory of its own:
    made before the fork, like the memory it guards. A robust mutex where the C library
    has one, else a record lock."""
    fd, mapped, cells = shared_cells(MUTEX_BYTES // 8, name)
    cells.release()
    try:
        return RobustMutex(fd, mapped)
    except (OSError, AttributeError):  # no robust mutexes here (not glibc or musl)
        return RecordLock(fd, mapped)


def _function(lib: ctypes.CDLL, name: str, *args: Any) -> Any:
    function = getattr(lib, name)
    function.argtypes, function.restype = [ctypes.c_void_p, *args], ctypes.c_int
    return function


def _check(err: int) -> None:
    if err:
        raise OSError(err, os.strerror(err))


class RobustMutex:
    """A POSIX robust, process-shared, error-checking mutex at the start of `mapped` (module
    docstring). Error-checking: a thread that locks it again while it holds it gets
    `EDEADLK` (an OSError) instead of waiting for ever."""

    def __init__(self, fd: int, mapped: mmap.mmap) -> None:
        self.fd, self.mapped = fd, mapped
        libc = ctypes.CDLL(None)  # the process's C library (pthread_* are in it)
        attr = ctypes.create_string_buffer(MUTEX_BYTES)
        self._memory: Any = (ctypes.c_char * MUTEX_BYTES).from_buffer(mapped)
        self.address = ctypes.addressof(self._memory)
        _check(_function(libc, "pthread_mutexattr_init")(attr))
        try:
            for setting, value in (("settype", _ERRORCHECK), ("setpshared", _PROCESS_SHARED),
                                   ("setrobust", _ROBUST)):
                _check(_function(libc, f"pthread_mutexattr_{setting}", ctypes.c_int)(
                    attr, value))
            _check(_function(libc, "pthread_mutex_init", ctypes.c_void_p)(self.address, attr))
        finally:
            _function(libc, "pthread_mutexattr_destroy")(attr)
        # called holding the GIL (they return at once)...
        held = ctypes.PyDLL(None)
        self._trylock = _function(held, "pthread_mutex_trylock")
        self._unlock = _function(held, "pthread_mutex_unlock")
        self._consistent = _function(held, "pthread_mutex_consistent")
        # ... and this one letting it go (it waits while another process or thread holds it)
        self._lock = _function(libc, "pthread_mutex_lock")

    def __enter__(self) -> None:
        err = self._trylock(self.address)
        if err == errno.EBUSY:
            err = self._lock(self.address)
        if err == errno.EOWNERDEAD:  # its holder died holding it: this one takes it on
            log.warning("a process of the pod died holding its lock: taken on")
            err = self._consistent(self.address)
        _check(err)

    def __exit__(self, *exc: object) -> None:
        _check(self._unlock(self.address))

    def close(self) -> None:
        """Unmap it (tests; no process may hold it)."""
        del self._memory
        self.mapped.close()
        os.close(self.fd)


class RecordLock:
    """A POSIX record lock on the shared file, and a thread lock (module docstring)."""

    def __init__(self, fd: int, mapped: mmap.mmap) -> None:
        self.fd, self.mapped = fd, mapped
        # an OS lock even under gevent: held only around a few operations on memory
        self.thread_lock = monkey.get_original("_thread", "allocate_lock")()

    def __enter__(self) -> None:
        self.thread_lock.acquire()
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX)
        except BaseException:
            self.thread_lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_UN)
        finally:
            self.thread_lock.release()

    def close(self) -> None:
        """Unmap it (tests)."""
        self.mapped.close()
        os.close(self.fd)
