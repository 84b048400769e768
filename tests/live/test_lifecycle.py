"""The live service's life: start-up (no connection accepted before it can be answered),
a worker killed under load, SIGTERM under load (drain), and what it leaves behind."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import urllib.request
from pathlib import Path

from .hostile import Fresh
from .server import Server


def test_a_worker_killed_under_load_loses_only_its_own_requests(tables):
    with Server(table_dir=tables) as srv, Fresh(srv.port, n=6) as load:
        time.sleep(1.5)
        victim = srv.workers()[0]
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        deadline = killed + 20
        while (victim in srv.workers() or len(srv.workers()) < 2) and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        assert victim not in srv.workers() and len(srv.workers()) == 2, "not replaced"
        time.sleep(1.5)
        load.stop()
        lost = load.failures()
        served_after = load.count("ok", since=killed + 0.5)
    print(f"{load.count('ok')} requests answered, {len(lost)} lost with the killed worker: "
          f"{lost}")
    # at most the requests the killed worker had accepted: one per client in flight
    assert len(lost) <= 6
    assert all(t <= killed + 1.0 for t, _, _ in lost), lost  # none after the kill
    assert served_after > 0


def test_sigterm_drains_without_resetting_accepted_requests(tables):
    srv = Server(table_dir=tables, env={"GUNICORN_DRAIN_SECONDS": "10"}).start()
    try:
        readiness: list[tuple[float, int | None]] = []
        stop_probe = threading.Event()

        def probe() -> None:
            while not stop_probe.wait(0.1):
                try:
                    with urllib.request.urlopen(srv.url("/readyz"), timeout=2) as r:
                        readiness.append((time.monotonic(), r.status))
                except urllib.error.HTTPError as exc:
                    readiness.append((time.monotonic(), exc.code))
                except OSError:
                    readiness.append((time.monotonic(), None))

        threading.Thread(target=probe, daemon=True).start()
        with Fresh(srv.port, n=6) as load:
            time.sleep(1.5)
            srv.signal(signal.SIGTERM)
            termed = time.monotonic()
            time.sleep(2.0)  # traffic keeps arriving after SIGTERM (endpoints lag behind)
        stopped_traffic = time.monotonic()
        code = srv.proc.wait(40)
        stop_probe.set()
        gone = time.monotonic()
    finally:
        srv.close()
    after = [(t - termed, st) for t, st in readiness if t > termed]
    print(f"SIGTERM: {load.count('ok', since=termed)} requests answered after it, "
          f"{load.count('refused')} refused, lost {load.failures()}; readiness after it "
          f"{after[:6]}...; exit {code} {gone - stopped_traffic:.1f} s after traffic stopped")
    assert code == 0
    assert load.failures() == []  # nothing accepted was reset or dropped
    assert load.count("ok", since=termed + 1.0) > 0  # still serving while traffic arrives
    # not ready first: /readyz fails (503) while requests are still answered
    first_not_ready = next(t for t, st in after if st != 200)
    assert dict(after)[first_not_ready] == 503 and first_not_ready < 1.0
    assert gone - stopped_traffic < 10


def test_start_up_accepts_no_connection_before_it_can_answer(tmp_path):
    """A first start builds a table before opening the port: a client meanwhile is refused
    at once (it can try another pod), never left waiting; the log says what is happening;
    the metrics directory gunicorn.conf.py made is gone after the stop."""
    srv = Server(table_dir=tmp_path / "tables",
                 env={"ADVISOR_WARM": "yahtzee", "PROMETHEUS_MULTIPROC_DIR": None})
    attempts: list[tuple[str, float]] = []
    stop = threading.Event()

    def knock() -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    answer = s.recv(100)
                attempts.append(("answered" if answer.startswith(b"HTTP/1.1 200") else
                                 f"bad {answer[:20]!r}", time.monotonic() - t0))
            except ConnectionRefusedError:
                attempts.append(("refused", time.monotonic() - t0))
            except OSError as exc:
                attempts.append((type(exc).__name__, time.monotonic() - t0))
            time.sleep(0.05)

    thread = threading.Thread(target=knock, daemon=True)
    thread.start()
    try:
        srv.start(ready="/healthz")
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(10)
        srv.stop()
    kinds = {k for k, _ in attempts}
    assert kinds <= {"refused", "answered"}, attempts
    assert "refused" in kinds and "answered" in kinds
    assert max(seconds for _, seconds in attempts) < 1.0  # nobody waited for the build
    records = srv.log_records()
    messages = [d["message"] for d in records]
    building = next(m for m in messages if m.startswith("building advisor tables"))
    assert "1 variant" in building and "about" in building
    assert messages.index(building) < next(i for i, m in enumerate(messages)
                                           if m.startswith("Listening at"))
    assert all("request_id" not in d for d in records if d["logger"] == "gunicorn.error")
    listening = next(d for d in records if d["message"] == "listening")
    assert not Path(listening["metrics_dir"]).exists()  # removed on exit
    srv.tmp.cleanup()


def test_metrics_content_type_names_its_charset_once(server):
    with urllib.request.urlopen(server.url("/metrics"), timeout=5) as r:
        assert r.headers["Content-Type"].count("charset") == 1
        text = r.read().decode()
    assert "http_requests_total" in text


def test_sigterm_just_after_start_stops_promptly(tables):
    """A worker told to stop while it is still setting up (gevent's monkey-patching) stops
    too, instead of being killed at the graceful timeout (25 s)."""
    for _ in range(2):
        srv = Server(table_dir=tables, env={"WEB_CONCURRENCY": "3"})
        try:
            srv.start(ready="/healthz")
            started = time.monotonic()
            srv.signal(signal.SIGTERM)
            assert srv.proc.wait(20) == 0
            assert time.monotonic() - started < 10
        finally:
            srv.close()
