"""The live service's life: start-up (the port open at once, the advisor warmed up behind it),
a worker killed under load, SIGTERM under load (drain), and what it leaves behind.

The machine these run on is shared and often busy: each test waits for the condition it needs
(load flowing, a worker replaced, a server ready or gone) with a generous bound, never for a
time that holds only on an idle machine, and checks order and cause rather than speed where it
can (a stop that loses a signal waits for the graceful timeout: the log says so).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from .hostile import Fresh
from .server import Server, wait_until


def test_a_worker_killed_under_load_loses_only_its_own_requests(tables):
    with Server(table_dir=tables) as srv, Fresh(srv.port, n=6) as load:
        assert wait_until(lambda: load.count("ok") >= 12, 60), "no load flowing"
        victim = srv.workers()[0]
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        assert wait_until(lambda: victim not in srv.workers() and len(srv.workers()) == 2,
                          60), "not replaced"
        # served after the kill (half a second after: not just what was in flight then), by
        # the other worker and then by the new one too
        after = max(time.monotonic(), killed + 0.5)
        wait_until(lambda: load.count("ok", since=after) >= 12, 60)
        load.stop()
        lost = load.failures()
        served_after = load.count("ok", since=killed + 0.5)
    print(f"{load.count('ok')} requests answered, {len(lost)} lost with the killed worker: "
          f"{lost}")
    # at most the requests the killed worker had accepted: one per client in flight
    assert len(lost) <= 6
    # none begun after the kill (when a lost request ends depends on the machine's load)
    assert all(began <= killed + 1.0 for _, _, _, began in lost), lost
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
            assert wait_until(lambda: load.count("ok") >= 12 and readiness, 60), "no load"
            srv.signal(signal.SIGTERM)
            termed = time.monotonic()
            # traffic keeps arriving after SIGTERM (endpoints lag behind): 2 s, longer (within
            # the drain) until some of it was answered a second after the signal
            time.sleep(2.0)
            wait_until(lambda: load.count("ok", since=termed + 1.0) > 0, 6)
        # the probes stop with the traffic: connections that keep arriving (as probes do)
        # keep a worker draining up to GUNICORN_DRAIN_SECONDS, which would leave the exit
        # below within a second or two of the bound on an idle machine
        stop_probe.set()
        stopped_traffic = time.monotonic()
        code = srv.proc.wait(60)
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
    # not ready first: /readyz fails (503) while requests are still answered, soon after the
    # signal (about 0.1 s idle; a busy machine delays the probe, not the order)
    first_not_ready = next(t for t, st in after if st != 200)
    assert dict(after)[first_not_ready] == 503 and first_not_ready < 5.0
    assert gone - stopped_traffic < 10


def _call(srv: Server, method: str, path: str, body: object = None) -> tuple[int, dict, dict]:
    """(status, headers, JSON body) of one request to the server."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(srv.url(path), data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


def test_a_first_start_opens_the_port_at_once_and_warms_up_behind_it(tmp_path):
    """A first start (no tables on disk) opens the port at once: /healthz and scoring are
    answered while the build process makes the advisor ready (service/warmup.py);
    meanwhile a suggestion gets the documented 202 with Retry-After and /readyz 503; then
    both are answered. The log says what happens, in order; the metrics directory
    gunicorn.conf.py made is gone after the stop."""
    srv = Server(table_dir=tmp_path / "tables",
                 env={"ADVISOR_WARM": "yahtzee", "PROMETHEUS_MULTIPROC_DIR": None})
    began = time.monotonic()
    srv.start(ready="/healthz", timeout=60)
    try:
        opened = time.monotonic() - began
        status, _, scored = _call(srv, "POST", "/v1/variants/yahtzee/hands/score",
                                  {"dice": [2, 2, 2, 5, 5]})
        assert status == 200 and scored["dice"] == [2, 2, 2, 5, 5]
        # yahtzee's analysis tables alone take seconds to build: the warm-up is still under
        # way when these are asked, right after the port opened
        status, _, readiness = _call(srv, "GET", "/readyz")
        assert status == 503 and readiness["warm"] is False, readiness
        status, headers, waiting = _call(srv, "POST", "/v1/variants/yahtzee/moves/suggest",
                                         {"dice": [2, 2, 2, 5, 5], "throw": 1})
        assert status == 202, waiting
        assert waiting["status"] == "building" and waiting["detail"].startswith(
            "The server is starting")
        assert 1 <= int(headers["Retry-After"]) == waiting["retry_after"] <= 120
        # warm (the other variants' tables, which ADVISOR_WARM leaves out, are not built:
        # /readyz stays 503 for them, as before the warm-up was deferred)
        assert wait_until(lambda: _call(srv, "GET", "/readyz")[2]["warm"], 600)
        status, _, suggestion = _call(srv, "POST", "/v1/variants/yahtzee/moves/suggest",
                                      {"dice": [2, 2, 2, 5, 5], "throw": 1})
        assert status == 200 and suggestion["best"], suggestion
    finally:
        srv.stop()
    print(f"port open {opened:.1f} s after the start")
    assert opened < 30
    records = srv.log_records()
    messages = [d["message"] for d in records]
    opening = next(i for i, m in enumerate(messages) if m.startswith("the port opens now"))
    assert "about" in messages[opening]
    listening = next(i for i, m in enumerate(messages) if m.startswith("Listening at"))
    warm = next(i for i, m in enumerate(messages)
                if m.startswith("warm: tables and kernels ready"))
    assert opening < listening < warm
    assert all("request_id" not in d for d in records if d["logger"] == "gunicorn.error")
    listening_record = next(d for d in records if d["message"] == "listening")
    assert not Path(listening_record["metrics_dir"]).exists()  # removed on exit
    srv.tmp.cleanup()


def test_metrics_content_type_names_its_charset_once(server):
    with urllib.request.urlopen(server.url("/metrics"), timeout=5) as r:
        assert r.headers["Content-Type"].count("charset") == 1
        text = r.read().decode()
    assert "http_requests_total" in text


def test_metrics_on_their_own_port_are_not_on_the_public_one(tables):
    """METRICS_PORT (the chart's default): gunicorn listens on it too, /metrics is answered
    there and is a 404 on PORT, the port a Service and an Ingress publish."""
    from .server import free_port

    metrics_port = free_port()
    srv = Server(table_dir=tables, env={"WEB_CONCURRENCY": "2", "ADVISOR_WARM": "yahtzee",
                                        "METRICS_PORT": str(metrics_port)}, bind=False)
    with srv:
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
            text = r.read().decode()
        # the gauges of what no request touches are read at the scrape, traffic or not
        for name in ("http_requests_total", "table_build_queue_depth 0.0",
                     "rate_limit_storage_up 1.0"):
            assert name in text, name
        for host in (None, f"127.0.0.1:{metrics_port}"):
            request = urllib.request.Request(srv.url("/metrics"),
                                             headers={"Host": host} if host else {})
            try:
                urllib.request.urlopen(request, timeout=5)
            except urllib.error.HTTPError as exc:
                assert exc.code == 404
            else:
                raise AssertionError("/metrics answered on the public port")


def test_sigterm_just_after_start_stops_promptly(tables):
    """A worker told to stop while it is still setting up (gevent's monkey-patching) stops
    too, instead of being killed at the graceful timeout (25 s)."""
    for _ in range(2):
        # the graceful timeout well above any stop a busy machine makes slow, so that a lost
        # signal (a worker killed at that timeout, which the log tells) is told from a slow stop
        srv = Server(table_dir=tables, env={"WEB_CONCURRENCY": "3",
                                            "GUNICORN_GRACEFUL_TIMEOUT": "90"})
        try:
            srv.start(ready="/healthz")
            started = time.monotonic()
            srv.signal(signal.SIGTERM)
            code = srv.proc.wait(120)
            seconds = time.monotonic() - started
            log = srv.log()
        finally:
            srv.close()
        assert "SIGKILL" not in log and "graceful timeout" not in log, log[-3000:]
        assert code == 0
        assert seconds < 30, log[-3000:]  # about 1.5 s idle; a lost signal takes 90
