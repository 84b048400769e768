"""Clients for the live-server tests: hostile ones (slow headers, idle keep-alive, house-rule
floods), normal ones (throughput) and probes (health and readiness latency).

Every client runs in a background thread until `stop()` and reports what it saw; nothing here
starts a server (see `server.py`). Only loopback is used.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

HOST = "127.0.0.1"

HAND = {"dice": [3, 3, 4, 5, 6], "throw": 2,
        "scorecard": {"boxes": {"ones": 2, "full_house": 25, "five_of_a_kind": 50}}}
HAND_URL = "/v1/variants/yahtzee/hands/score"


class Background:
    """A client running in daemon threads until `stop()`."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.threads: list[threading.Thread] = []

    def spawn(self, target: Callable[[], None]) -> None:
        """Start one more thread running `target`."""
        t = threading.Thread(target=target, daemon=True)
        t.start()
        self.threads.append(t)

    def stop(self, timeout: float = 5.0) -> None:
        """Ask every thread to stop and wait for them (bounded)."""
        self.stopping.set()
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SlowHeaders(Background):
    """`n` connections that send a request's headers one line every `interval` seconds and
    never finish them (slowloris); a connection the server closes is opened again."""

    def __init__(self, port: int, n: int, interval: float = 1.0) -> None:
        super().__init__()
        self.port, self.n, self.interval = port, n, interval
        self.opened = self.closed_by_server = self.open_now = 0
        self.spawn(self._run)

    def _connect(self, sel: selectors.BaseSelector) -> None:
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect((HOST, self.port))
            s.sendall(f"POST {HAND_URL} HTTP/1.1\r\nHost: {HOST}\r\n".encode())
        except OSError:
            s.close()
            return
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        self.opened += 1

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for _ in range(self.n):
            self._connect(sel)
        line = 0
        while not self.stopping.is_set():
            deadline = time.monotonic() + self.interval
            while (left := deadline - time.monotonic()) > 0 and not self.stopping.is_set():
                for key, _ in sel.select(min(left, 0.2)):
                    sel.unregister(key.fileobj)
                    key.fileobj.close()  # the server answered or closed: reconnect below
                    self.closed_by_server += 1
            line += 1
            for key in list(sel.get_map().values()):
                try:
                    key.fileobj.send(f"X-Slow-{line}: {'a' * 8}\r\n".encode())
                except OSError:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    self.closed_by_server += 1
            while len(sel.get_map()) < self.n and not self.stopping.is_set():
                self._connect(sel)
            self.open_now = len(sel.get_map())
        for key in list(sel.get_map().values()):
            key.fileobj.close()


class IdleKeepAlive(Background):
    """`n` keep-alive connections that make one request, then sit idle; a connection the
    server closes (keep-alive timeout) is opened again and makes one more request."""

    def __init__(self, port: int, n: int) -> None:
        super().__init__()
        self.port, self.n = port, n
        self.opened = self.closed_by_server = self.open_now = 0
        self.spawn(self._run)

    def _connect(self, sel: selectors.BaseSelector) -> None:
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect((HOST, self.port))
            s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
        except OSError:
            s.close()
            return
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        self.opened += 1

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for _ in range(self.n):
            self._connect(sel)
        while not self.stopping.is_set():
            for key, _ in sel.select(0.2):
                try:
                    data = key.fileobj.recv(65536)
                except OSError:
                    data = b""
                if not data:  # closed by the server
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
                    self.closed_by_server += 1
            while len(sel.get_map()) < self.n and not self.stopping.is_set():
                self._connect(sel)
            self.open_now = len(sel.get_map())
        for key in list(sel.get_map().values()):
            key.fileobj.close()


@dataclass
class Tally:
    """What a group of clients saw."""

    statuses: dict[int, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, status: int | None, latency: float, error: str | None = None) -> None:
        """Count one answer (or one error)."""
        with self.lock:
            if error is not None:
                self.errors[error] = self.errors.get(error, 0) + 1
            else:
                self.statuses[status] = self.statuses.get(status, 0) + 1
            self.latencies.append(latency)

    @property
    def ok(self) -> int:
        """Answers with a 2xx status."""
        return sum(n for s, n in self.statuses.items() if 200 <= s < 300)

    def max_latency(self) -> float:
        """Slowest answer, seconds."""
        return max(self.latencies, default=0.0)


class Normal(Background):
    """`n` well-behaved clients, each on one keep-alive connection, posting `body` to `url`
    (with `headers`, such as a tenant's key) as fast as the server answers; `tally` counts
    every answer."""

    def __init__(self, port: int, n: int = 4, url: str = HAND_URL,
                 body: Any = HAND, timeout: float = 10.0,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__()
        self.port, self.url, self.timeout = port, url, timeout
        self.data = json.dumps(body).encode()
        self.headers = {"Content-Type": "application/json", **(headers or {})}
        self.tally = Tally()
        for _ in range(n):
            self.spawn(self._run)

    def reset(self) -> None:
        """Start counting afresh (after a warm-up)."""
        self.tally = Tally()

    def rate(self) -> float:
        """2xx answers a second since the last reset."""
        return self.tally.ok / max(time.monotonic() - self.tally.started, 1e-9)

    def _run(self) -> None:
        conn = None
        while not self.stopping.is_set():
            if conn is None:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
            t0 = time.monotonic()
            try:
                conn.request("POST", self.url, self.data, self.headers)
                resp = conn.getresponse()
                resp.read()
                self.tally.add(resp.status, time.monotonic() - t0)
                if resp.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as exc:
                self.tally.add(None, time.monotonic() - t0, type(exc).__name__)
                conn.close()
                conn = None
        if conn is not None:
            conn.close()


class Fresh(Background):
    """`n` clients that each open a new connection per request (`Connection: close`), as
    traffic spread over many clients does; every outcome is recorded with its time:
    (time it ended, "ok" | "refused" | an error name, status, time it began). "refused" means
    the connection was not accepted (nothing listening); any other error came after the
    connection was made."""

    def __init__(self, port: int, n: int = 4, url: str = HAND_URL, body: Any = HAND) -> None:
        super().__init__()
        self.port, self.url = port, url
        self.data = json.dumps(body).encode()
        self.outcomes: list[tuple[float, str, int | None, float]] = []
        self.lock = threading.Lock()
        for _ in range(n):
            self.spawn(self._run)

    def _one(self) -> tuple[str, int | None]:
        try:
            s = socket.create_connection((HOST, self.port), timeout=10)
        except ConnectionRefusedError:
            time.sleep(0.01)
            return "refused", None
        except OSError as exc:
            return f"connect {type(exc).__name__}", None
        try:
            s.sendall(f"POST {self.url} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {len(self.data)}"
                      f"\r\n\r\n".encode() + self.data)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            if not data:
                return "closed without an answer", None
            return "ok", int(data.split(b" ", 2)[1])
        except OSError as exc:
            return type(exc).__name__, None
        finally:
            s.close()

    def _run(self) -> None:
        while not self.stopping.is_set():
            began = time.monotonic()
            outcome, status = self._one()
            with self.lock:
                self.outcomes.append((time.monotonic(), outcome, status, began))

    def count(self, outcome: str, since: float = 0.0) -> int:
        """How many requests ended so (after `since`)."""
        return sum(1 for t, o, *_ in self.outcomes if o == outcome and t >= since)

    def failures(self) -> list[tuple[float, str, int | None, float]]:
        """Requests that were accepted and then lost (not ok, not refused), or not 2xx."""
        return [x for x in self.outcomes
                if x[1] not in ("ok", "refused") or (x[1] == "ok" and not 200 <= x[2] < 300)]


class Probes(Background):
    """Kubernetes-style probes: every `period` seconds a GET of each path on a new connection
    with a `timeout`; `results[path]` lists (latency or None when it failed, status)."""

    def __init__(self, port: int, paths: tuple[str, ...] = ("/healthz", "/readyz"),
                 period: float = 0.5, timeout: float = 1.0) -> None:
        super().__init__()
        self.port, self.period, self.timeout = port, period, timeout
        self.results: dict[str, list[tuple[float | None, int | None]]] = {p: [] for p in paths}
        self.errors: dict[str, list[str]] = {p: [] for p in paths}
        for path in paths:
            self.spawn(lambda path=path: self._run(path))

    def _run(self, path: str) -> None:
        while not self.stopping.wait(self.period):
            t0 = time.monotonic()
            conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
            try:
                conn.request("GET", path)
                resp = conn.getresponse()
                resp.read()
                self.results[path].append((time.monotonic() - t0, resp.status))
            except (OSError, http.client.HTTPException) as exc:
                self.results[path].append((None, None))
                self.errors[path].append(f"{type(exc).__name__}: {exc}")
            finally:
                conn.close()

    def failures(self, path: str, ok: tuple[int, ...] = (200,)) -> int:
        """Probes of `path` that failed, timed out or answered another status."""
        return sum(1 for lat, st in self.results[path]
                   if lat is None or st not in ok or lat > self.timeout)

    def worst(self, path: str) -> float | None:
        """Slowest answered probe of `path`, seconds (None when none answered)."""
        done = [lat for lat, _ in self.results[path] if lat is not None]
        return max(done) if done else None


def post(port: int, url: str, body: Any, timeout: float = 10.0,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request on a new connection: (status, headers, body)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("POST", url, json.dumps(body).encode(),
                     {"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        with contextlib.suppress(OSError):
            conn.close()


# --- the same clients in a process of their own ---------------------------------------------
# Probes and hostile connections run in another process than the normal clients, as a kubelet
# and other clients would: the test process's threads then do not delay them.

def _serve_cli(argv: list[str]) -> None:
    """``python -m tests.live.hostile PORT [--slow N] [--idle N] [--probes]``: run until
    stdin closes; print "open <slow> <idle>" each 0.1 s, then the probes' results as JSON."""
    import argparse
    import sys

    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--slow", type=int, default=0)
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--probes", action="store_true")
    ap.add_argument("--probe-timeout", type=float, default=1.0)
    args = ap.parse_args(argv)
    clients: list[Background] = []
    slow = SlowHeaders(args.port, args.slow) if args.slow else None
    idle = IdleKeepAlive(args.port, args.idle) if args.idle else None
    probes = Probes(args.port, timeout=args.probe_timeout) if args.probes else None
    clients = [c for c in (slow, idle, probes) if c is not None]
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    while not done.wait(0.1):
        print(f"open {slow.open_now if slow else 0} {idle.open_now if idle else 0}", flush=True)
    for c in clients:
        c.stop()
    result = {"probes": probes.results if probes else {},
              "errors": probes.errors if probes else {}}
    print("result " + json.dumps(result), flush=True)


class Process:
    """Hostile connections and/or probes in a child process (see `_serve_cli`)."""

    def __init__(self, port: int, slow: int = 0, idle: int = 0, probes: bool = False,
                 probe_timeout: float = 1.0) -> None:
        import subprocess
        import sys
        from pathlib import Path

        root = Path(__file__).resolve().parents[2]
        args = [sys.executable, "-m", "tests.live.hostile", str(port), "--slow", str(slow),
                "--idle", str(idle), "--probe-timeout", str(probe_timeout)]
        self.proc = subprocess.Popen(args + (["--probes"] if probes else []), cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.want = (slow, idle)
        self.open_now = (0, 0)
        self.result: dict[str, Any] = {}
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("open "):
                _, s, i = line.split()
                self.open_now = (int(s), int(i))
            elif line.startswith("result "):
                self.result = json.loads(line[7:])

    def wait_open(self, timeout: float = 15.0) -> bool:
        """Wait until every hostile connection is open."""
        deadline = time.monotonic() + timeout
        while self.open_now != self.want and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.open_now == self.want

    def stop(self) -> dict[str, Any]:
        """Stop the child; its probes' results."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)
        self._reader.join(5)
        return self.result

    def probe_worst(self, path: str) -> float:
        """The slowest answered probe of `path`, seconds."""
        return max((r[0] for r in self.result["probes"][path] if r[0] is not None),
                   default=0.0)


if __name__ == "__main__":
    import sys

    _serve_cli(sys.argv[1:])


# --------------------------------------------------------------------------- a calm tenant
#: The calm tenant: connections, and seconds between the requests of each (100/s each).
CALM_CONNECTIONS, CALM_PERIOD = 2, 0.01


def calm_window(port: int, seconds: float, key: str) -> list[float]:
    """The calm tenant's requests for `seconds`, paced (`CALM_CONNECTIONS` keep-alive
    connections, one request each `CALM_PERIOD`), with `key`: each answer's latency
    (tests/live/test_tenant_flood.py and bench/bench_flood.py measure the same tenant)."""
    out: list[float] = []
    lock = threading.Lock()

    def one() -> None:
        conn = http.client.HTTPConnection(HOST, port, timeout=10)
        end = time.monotonic() + seconds
        due = time.monotonic()
        while time.monotonic() < end:
            t0 = time.perf_counter()
            conn.request("POST", HAND_URL, json.dumps(HAND).encode(),
                         {"Content-Type": "application/json",
                          "Authorization": f"Bearer {key}"})
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200, resp.status
            with lock:
                out.append(time.perf_counter() - t0)
            due += CALM_PERIOD
            time.sleep(max(0.0, due - time.monotonic()))
        conn.close()

    threads = [threading.Thread(target=one) for _ in range(CALM_CONNECTIONS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def calm_process(port: int, cpu: int, asks: Any, answers: Any, key: str) -> None:
    """The calm tenant in a process of its own, on CPU `cpu`: one window per ask."""
    os.sched_setaffinity(0, {cpu})
    while (seconds := asks.get()) is not None:
        answers.put(calm_window(port, seconds, key))


def p99(values: list[float]) -> float:
    """The 99th percentile of some latencies (the nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
