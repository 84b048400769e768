"""The gunicorn worker the service runs: gevent's, with a drain on SIGTERM.

Why gevent: a sync worker is held by one connection from accept to the end of the response,
so a few clients that send their headers slowly (or keep an idle connection) hold every
worker; gthread reads headers in its threads, with the same result. Under gevent each
connection is a greenlet: a worker holds up to GUNICORN_WORKER_CONNECTIONS of them, and a
client gets GUNICORN_KEEPALIVE seconds to send a request's headers. The service's requests
use the CPU without waiting on anything, so greenlets cost nothing in speed (measured in
docs/deploy.md); the advisor's table builds, the one slow thing, run in another process.
The worker takes turns among its connections: before a request runs, the front door passes
it through the event loop's next poll when the worker has spent a millisecond of CPU since
its last turn (`frontdoor`, `fairshare.take_turn`), so a keep-alive client that sends its
next request at once does not keep the worker to itself.

The drain: on SIGTERM gunicorn's worker stops accepting at once, and connections still in the
listening socket's accept queue are reset when the last worker closes it. This one instead
answers /readyz with 503 (`ops.start_draining`), asks every client to close its connection
after its response (`Connection: close`), keeps accepting while connections still arrive,
and closes the listening socket only when none arrived for `QUIET` seconds (and its accept
queue is empty), or after `drain_seconds`; then it finishes what it accepted, within
gunicorn's graceful timeout.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import struct
import time
from functools import partial
from typing import Any

import gevent
from gevent.pool import Pool
from gevent.server import StreamServer
from gunicorn.sock import ssl_context
from gunicorn.workers.ggevent import GeventWorker

from .ops import start_draining

#: Seconds without a new connection after which a draining worker stops accepting.
QUIET = 1.0


def accept_queue_length(sock: Any) -> int:
    """Connections waiting in a listening socket's accept queue (Linux: TCP_INFO's
    tcpi_unacked on a listening socket); 0 where that cannot be read."""
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
        return struct.unpack_from("I", info, 24)[0]
    except (OSError, AttributeError, struct.error):
        return 0


class ServiceWorker(GeventWorker):
    """gevent worker that drains on SIGTERM (module docstring). `drain_seconds` is set by
    gunicorn.conf.py's post_fork hook (GUNICORN_DRAIN_SECONDS)."""

    drain_seconds: float = 10.0

    def catch_early_signals(self) -> None:
        """Right after the fork (post_fork hook): remember a stop signal that arrives before
        gunicorn installs the worker's handlers. Until then the child has the master's
        handlers, which do nothing for it, and gevent's set-up (monkey-patching) makes that
        window long enough for a SIGTERM sent just after a worker (re)starts to be lost,
        leaving the worker to be killed at the graceful timeout."""
        self.early_signal: int | None = None

        def remember(sig: int, _frame: Any) -> None:
            self.early_signal = self.early_signal or sig

        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
            signal.signal(sig, remember)

    def init_process(self) -> None:
        """Start with no drain under way, then gevent's set-up (monkey-patching, run)."""
        self.draining_since: float | None = None
        self.quitting = False
        self.last_accept = time.monotonic()
        if not hasattr(self, "early_signal"):
            self.early_signal = None
        super().init_process()

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        """One connection (a greenlet): note when it arrived, then gunicorn's handling."""
        self.last_accept = time.monotonic()
        super().handle(listener, client, addr)

    def handle_exit(self, sig: int, frame: Any) -> None:
        """SIGTERM: start draining instead of stopping at once. `alive` False makes gunicorn
        close each connection after its response; `run` keeps accepting meanwhile."""
        if self.draining_since is None:
            self.draining_since = time.monotonic()
            start_draining()
        self.alive = False

    def handle_quit(self, sig: int, frame: Any) -> None:
        """SIGINT/SIGQUIT (Ctrl-C under `make run`): stop now, no drain. gevent's worker
        exits from a greenlet, which prints a SystemExit traceback; `run` returns instead."""
        self.quitting = True
        self.alive = False
        self.cfg.worker_int(self)

    def _quiet(self, servers: list[StreamServer]) -> bool:
        now = time.monotonic()
        since = max(self.last_accept, self.draining_since or now)
        return now - since >= QUIET and not any(
            accept_queue_length(s.socket) for s in servers)

    def run(self) -> None:
        """Serve until told to stop; drain; finish the connections accepted."""
        ssl_args = {"ssl_context": ssl_context(self.cfg)} if self.cfg.is_ssl else {}
        servers = []
        for s in self.sockets:
            s.setblocking(1)
            server = StreamServer(s, handle=partial(self.handle, s),
                                  spawn=Pool(self.worker_connections), **ssl_args)
            if self.cfg.workers > 1:
                server.max_accept = 1
            server.start()
            servers.append(server)

        if self.early_signal == signal.SIGTERM:
            self.handle_exit(signal.SIGTERM, None)
        elif self.early_signal is not None:
            self.handle_quit(self.early_signal, None)
        while self.alive:
            self.notify()
            gevent.sleep(0.2)

        if self.quitting:
            for server in servers:
                with contextlib.suppress(Exception):
                    server.stop(timeout=0.5)
            return
        if self.draining_since is not None:
            limit = self.draining_since + self.drain_seconds
            while time.monotonic() < limit and not self._quiet(servers):
                self.notify()
                gevent.sleep(0.05)
        for server in servers:
            server.close()  # stop accepting
        # finish the connections accepted, within the graceful timeout
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            if all(server.pool.free_count() == server.pool.size for server in servers):
                return
            self.notify()
            gevent.sleep(0.1)
        self.log.warning("Worker graceful timeout (pid:%s)", self.pid)
        for server in servers:
            with contextlib.suppress(Exception):
                server.stop(timeout=1)
