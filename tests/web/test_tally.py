"""The per-request metrics in shared memory (service/web/tally.py): every process's counts
seen by a scrape of any process, a killed process's counts kept, its gauges dropped, its slot
taken again; exported as prometheus-client exports the same metrics."""

from __future__ import annotations

import os
import signal

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from service.web.tally import Tally

BUCKETS = (0.001, 0.01, 0.1, 1.0)


def _registry(tally: Tally) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(tally)
    return registry


def _value(tally: Tally, name: str, labels: dict[str, str] | None = None) -> float | None:
    return _registry(tally).get_sample_value(name, labels or {})


def test_every_process_counts_and_a_killed_one_keeps_its_counts():
    tally = Tally(slots=8)
    requests = tally.counter("t_requests", "requests", ["tenant"])
    busy = tally.gauge("t_busy", "busy").labels()
    requests.labels("a").inc()  # the parent's slot
    busy.inc()
    children = []
    for i in range(3):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read)
            requests.labels("a").inc(10)
            requests.labels(f"c{i}").inc()
            busy.inc()
            os.write(write, b"x")
            if i == 2:
                os.kill(os.getpid(), signal.SIGKILL)  # dies with a request in progress
            signal.pause()
        os.close(write)
        assert os.read(read, 1) == b"x"
        children.append(pid)
    try:
        os.waitpid(children[2], 0)
        assert _value(tally, "t_requests_total", {"tenant": "a"}) == 31
        assert all(_value(tally, "t_requests_total", {"tenant": f"c{i}"}) == 1
                   for i in range(3))
        assert _value(tally, "t_busy") == 3  # the parent's and two live children's
        # a new process takes the dead one's slot: its counters go on, its gauge starts at 0
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            requests.labels("c2").inc()
            os._exit(0 if tally.slot == 3 and _value(tally, "t_busy") == 3 else 1)
        assert os.waitpid(pid, 0)[1] == 0
        assert _value(tally, "t_requests_total", {"tenant": "c2"}) == 2
    finally:
        for pid in children[:2]:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def test_exported_as_prometheus_client_exports_the_same_metrics():
    registry = CollectorRegistry()
    counter = Counter("same_requests", "help c", ["method", "status"], registry=registry)
    histogram = Histogram("same_seconds", "help h", ["method"], buckets=BUCKETS,
                          registry=registry)
    gauge = Gauge("same_busy", "help g", registry=registry)
    timed = Counter("same_timed", "help t", ["method"], registry=registry)
    tally = Tally(slots=2)
    t_counter = tally.counter("same_requests", "help c", ["method", "status"])
    t_histogram = tally.histogram("same_seconds", "help h", ["method"], BUCKETS)
    t_gauge = tally.gauge("same_busy", "help g").labels()
    tally.counter_of(t_histogram, "same_timed", "help t")  # what the histogram counts
    for value in (0.0005, 0.001, 0.002, 0.5, 3.0, 0.01):
        for method in ("GET", "POST"):
            histogram.labels(method).observe(value)
            timed.labels(method).inc()
            t_histogram.labels(method).observe(value)
            counter.labels(method, "200").inc(2)
            t_counter.labels(method, "200").inc(2)
    gauge.inc()
    t_gauge.inc()

    def lines(reg: CollectorRegistry) -> list[str]:
        return sorted(line for line in generate_latest(reg).decode().splitlines()
                      if "_created" not in line)

    assert lines(_registry(tally)) == lines(registry)
