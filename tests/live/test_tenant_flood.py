"""One tenant floods the service with a valid key (scoring, advice, and advice under ever new
house rules, which queue table builds) from several keep-alive connections, as fast as it is
answered, beside another tenant's normal load: the other tenant keeps its throughput, the
flooding one gets 429s; a tenant within its quota flooding from 16 connections leaves
another its throughput and its p99 (the fair share); builds are fair by tenant behind one
proxy address. Marked `timing` (tests/conftest.py's TIMING): it measures throughput and
latency, after the rest of the suite. (Tenants' other live tests: test_tenants.py.)

A refusal costs the server about what a scoring answer does; what keeps the flood cheap is
that each 429 is held half a second (`service.web.quotas.hold_refusal`). Measured on the
shared 2-core machine, this test alone (load average about 4 with it): without the hold,
about 2000 refusals in the 6 s of flood and a ratio of 0.21-0.26; with it, about 70 refusals
and 0.91-0.95. Beside other work (load average 6-11): 0.74-0.77 (the two table builds the
flooding tenant is allowed run at a lower priority, but still take some CPU). KEEP (0.6)
allows for that noise, as in test_hostile_clients.py."""

from __future__ import annotations

import http.client
import json
import multiprocessing
import os
import random
import re
import shutil
import statistics
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from service.web.auth import hash_key, new_key

from .hostile import HAND, HAND_URL, HOST, Process, calm_process, p99
from .server import Server, process_tree
from .test_hostile_clients import KEEP, PROBE_TIMEOUT, SUGGEST, check_probes, compare

FLOOD_ID, FLOOD_KEY = new_key()
STEADY_ID, STEADY_KEY = new_key()
#: The flooding tenant's quotas: small enough that it is throttled (counted in the pod's
#: memory here, one table for the server's two workers).
FLOOD_QUOTAS = {"scoring": "5/second", "advice": "5/second", "builds": "1/minute"}
TENANTS = {"tenants": [
    {"name": "flood", "quotas": FLOOD_QUOTAS,
     "keys": [{"id": FLOOD_ID, "hash": hash_key(FLOOD_KEY)}]},
    {"name": "steady", "keys": [{"id": STEADY_ID, "hash": hash_key(STEADY_KEY)}]},
]}
#: Connections the flooding tenant uses at once.
FLOODERS = 6


@pytest.fixture(scope="module")
def keyed_server(tables: Path):
    """2 workers (as the chart runs them), AUTH=keys, background builds."""
    env = {"AUTH": "keys", "API_KEYS": json.dumps(TENANTS), "ADVISOR_WARM": "yahtzee",
           "ADVISOR_BUILDS": "background"}
    with Server(table_dir=tables, env=env) as srv:
        yield srv


def _flood_connection(port: int, go: Any, stop: Any, client: int, counts: Counter,
                      lock: threading.Lock) -> None:
    """One of the flooding tenant's keep-alive connections: scoring, advice, and advice
    under new house rules in turn, as fast as it is answered, while `go` is set. Counts
    statuses, 429s by problem type, errors, Retry-Afters missing, and the slowest answer."""
    rng = random.Random(client)
    conn: http.client.HTTPConnection | None = None
    n = 0
    while not stop.is_set():
        if not go.wait(0.1):
            continue
        n += 1
        if n % 3 == 0:
            url, body = HAND_URL, HAND
        elif n % 3 == 1:
            url, body = SUGGEST.format("yahtzee"), {"dice": [2, 2, 3, 5, 5], "throw": 1}
        else:
            url = SUGGEST.format("yahtzee")
            body = {"dice": [2, 2, 3, 5, 5], "throw": 1,
                    "rules": {"boxes": {"full_house": {"value": rng.randrange(26, 10_000)},
                                        "small_straight": {"value": rng.randrange(31, 100)}}}}
        if conn is None:
            conn = http.client.HTTPConnection(HOST, port, timeout=10)
        t0 = time.monotonic()
        try:
            conn.request("POST", url, json.dumps(body).encode(),
                         {"Content-Type": "application/json", "X-API-Key": FLOOD_KEY})
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException) as exc:
            with lock:
                counts[f"error {type(exc).__name__}"] += 1
            conn.close()
            conn = None
            continue
        took = time.monotonic() - t0
        with lock:
            counts[f"status {resp.status}"] += 1
            counts["slowest ms"] = max(counts["slowest ms"], round(took * 1000))
            if resp.status in (202, 429) and int(resp.getheader("Retry-After") or 0) < 1:
                counts["no retry-after"] += 1
            if resp.status == 429:
                counts[f"429 {json.loads(data)['type']}"] += 1
        if resp.will_close:
            conn.close()
            conn = None
    if conn is not None:
        conn.close()


def _flood_process(port: int, go: Any, stop: Any, results: Any) -> None:
    """The flooding tenant: FLOODERS connections in a process of its own (its client work
    then does not slow the steady tenant's clients, as it would not from another machine);
    its counts are put on `results` when `stop` is set."""
    counts: Counter = Counter()
    lock = threading.Lock()
    threads = [threading.Thread(target=_flood_connection,
                                args=(port, go, stop, c, counts, lock), daemon=True)
               for c in range(FLOODERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.put(dict(counts))


def test_a_flooding_tenant_does_not_starve_another(keyed_server):
    port = keyed_server.port
    ctx = multiprocessing.get_context("fork")  # before any thread of this test starts
    go, stop, results = ctx.Event(), ctx.Event(), ctx.Queue()
    flooder = ctx.Process(target=_flood_process, args=(port, go, stop, results), daemon=True)
    flooder.start()
    probes = Process(port, probes=True, probe_timeout=PROBE_TIMEOUT)
    try:
        without, with_, tally = compare(port, go.set, lambda _: go.clear(), seconds=2.0,
                                        headers={"Authorization": f"Bearer {STEADY_KEY}"})
    finally:
        probes.stop()
        stop.set()
        go.set()
    seen = results.get(timeout=30)
    flooder.join(15)
    print(f"steady tenant: {without:.0f} req/s alone, {with_:.0f} beside {FLOODERS} "
          f"connections of a flooding tenant: ratio {with_ / without:.2f}; flood: {seen}")
    assert not tally.errors and set(tally.statuses) == {200}, tally.statuses
    assert not [k for k in seen if k.startswith("error")], seen
    statuses = {int(k.split()[1]) for k in seen if k.startswith("status")}
    assert statuses <= {200, 202, 429}, seen
    assert seen.get("429 /problems/quota-exceeded", 0) > 0, seen  # it was throttled
    kinds = {k.split()[1] for k in seen if k.startswith("429")}
    assert kinds <= {"/problems/quota-exceeded", "/problems/build-queue-full",
                     "/problems/too-many-in-flight"}, seen
    assert not seen.get("no retry-after"), seen
    assert seen["slowest ms"] < 5000, seen  # bounded waits, never a hang
    assert with_ >= KEEP * without
    check_probes(probes)


# --- builds fair by tenant behind one proxy address ------------------------------------------
BUILDER_ID, BUILDER_KEY = new_key()
QUIET_ID, QUIET_KEY = new_key()
BUILD_TENANTS = {"tenants": [
    {"name": "builder", "quotas": {"advice": "100000/minute", "builds": "100000/minute"},
     "keys": [{"id": BUILDER_ID, "hash": hash_key(BUILDER_KEY)}]},
    {"name": "quiet", "keys": [{"id": QUIET_ID, "hash": hash_key(QUIET_KEY)}]},
]}


def _new_rules_suggest(port: int, key: str, value: int) -> tuple[int, dict[str, str]]:
    """moves/suggest under house rules no one asked for before (a new table to build)."""
    body = {"dice": [2, 2, 3, 5, 5], "throw": 1,
            "rules": {"boxes": {"full_house": {"value": value}}}}
    conn = http.client.HTTPConnection(HOST, port, timeout=15)
    try:
        conn.request("POST", SUGGEST.format("yahtzee"), json.dumps(body).encode(),
                     {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def _until_built(port: int, key: str, value: int, limit: float) -> tuple[float, list[int]]:
    """Ask for a new table until it answers 200: (seconds it took, statuses seen)."""
    t0 = time.monotonic()
    seen: list[int] = []
    while time.monotonic() - t0 < limit:
        status, _ = _new_rules_suggest(port, key, value)
        seen.append(status)
        if status == 200:
            return time.monotonic() - t0, seen
        assert status == 202, seen  # never 429: its one table has a place of its own
        time.sleep(0.2)
    raise AssertionError(f"not built in {limit} s: {seen}")


def _build_flood(port: int, stop: Any, counts: Any) -> None:
    """The flooding tenant: new house rules from 6 connections, as fast as answered."""
    def one(c: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            # a value no one asked for before (Full House's house value: 26..9999)
            status, _ = _new_rules_suggest(port, BUILDER_KEY, 100 + c * 1600 + n % 1600)
            counts[status] = counts.get(status, 0) + 1
    threads = [threading.Thread(target=one, args=(c,), daemon=True) for c in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_builds_are_fair_by_tenant_behind_one_proxy_address(tables: Path):
    """Two tenants reach the service from one address (one ingress): one floods new house
    rules through moves/suggest, the other asks for a single new table. Builds are queued and
    taken by tenant (the caller), not by address: the second tenant's table gets a place of
    its own (no 429) and is built in its turn, within about one build of it (before the
    front door, the flood held the address's four places and the other got 429 for 45 s)."""
    env = {"AUTH": "keys", "API_KEYS": json.dumps(BUILD_TENANTS), "ADVISOR_WARM": "yahtzee",
           "ADVISOR_BUILDS": "background", "WEB_CONCURRENCY": "2"}
    with Server(table_dir=tables, env=env) as srv:
        alone, _ = _until_built(srv.port, QUIET_KEY, 31, limit=120)  # one build, no flood
        manager = multiprocessing.Manager()
        stop, counts = manager.Event(), manager.dict()
        flood = multiprocessing.get_context("fork").Process(
            target=_build_flood, args=(srv.port, stop, counts), daemon=True)
        flood.start()
        try:
            time.sleep(2.0)  # the flood holds its places in the queue
            took, seen = _until_built(srv.port, QUIET_KEY, 32, limit=120)
        finally:
            stop.set()
            flood.join(30)
        figures = json.loads((srv.build_dir / "builder.json").read_text())
        build = figures["mean_seconds"]
        print(f"one build alone: {alone:.1f} s; beside the flood the other tenant's table "
              f"was ready after {took:.1f} s ({len(seen)} asks); builds took {build:.1f} s "
              f"each (mean); the flood saw {dict(counts)}")
        assert set(counts) <= {200, 202, 429}, dict(counts)
        assert counts.get(429, 0) > 0  # the flood was held to its own places
        # its turn comes after the build under way: at most that one and its own, with
        # a build's time to spare for a loaded machine
        assert took <= 3 * max(build, alone) + 2.0, (took, build, alone)


# --- a noisy neighbour within its quota ------------------------------------------------------
NOISY_ID, NOISY_KEY = new_key()
CALM_ID, CALM_KEY = new_key()
NEIGHBOURS = {"tenants": [
    {"name": "noisy", "quotas": {"scoring": "100000000/minute"},
     "keys": [{"id": NOISY_ID, "hash": hash_key(NOISY_KEY)}]},
    {"name": "calm", "quotas": {"scoring": "100000000/minute"},
     "keys": [{"id": CALM_ID, "hash": hash_key(CALM_KEY)}]},
]}
#: Seconds of each window, and windows of each kind (alternated: quiet, loaded, quiet, ...).
WINDOW, ROUNDS = 3.0, 3


def _neighbours(srv: Server, wrk: str, script: Path, client_cpu: int
                ) -> tuple[list[float], list[float], list[str]]:
    """One measurement: quiet and loaded windows alternated (the calm tenant's latencies in
    each kind, and wrk's reports of the noisy tenant's floods)."""
    ctx = multiprocessing.get_context("fork")
    asks, answers = ctx.Queue(), ctx.Queue()
    calm = ctx.Process(target=calm_process, args=(srv.port, client_cpu, asks, answers, CALM_KEY),
                       daemon=True)
    calm.start()
    quiet: list[float] = []
    loaded: list[float] = []
    noisy: list[str] = []
    try:
        asks.put(1.0)  # warm up
        answers.get(timeout=60)
        for _ in range(ROUNDS):
            asks.put(WINDOW)
            quiet += answers.get(timeout=60)
            flood = subprocess.Popen(
                ["taskset", "-c", str(client_cpu), wrk, "-t1", "-c16",
                 f"-d{WINDOW + 1:.0f}s", "-s", str(script), srv.url(HAND_URL)],
                stdout=subprocess.PIPE, text=True)
            time.sleep(0.5)
            asks.put(WINDOW)
            loaded += answers.get(timeout=60)
            noisy.append(flood.communicate(timeout=60)[0])
    finally:
        asks.put(None)
        calm.join(10)
    return quiet, loaded, noisy


#: Measurements made at most: the machine's other load can spoil one (a p99 is a few
#: requests); the fair share is what makes any of them pass (without it: 5.5 times).
ATTEMPTS = 3


def test_a_tenant_within_its_quota_does_not_take_another_s_share(tables: Path, tmp_path: Path):
    """Tenant A, within its quota, floods `hands/score` from 16 keep-alive connections (wrk,
    as fast as it is answered); tenant B sends 200 requests a second beside it. B keeps its
    throughput (>= 0.8 of what it had alone) and its p99 latency stays within twice its
    quiet p99, in the same run: the fair share (service/web/fairshare.py) admits one request
    of A at a time in the worker, so B's requests wait for one of A's, not for sixteen.

    The server runs one worker on one CPU, as a pod with a CPU limit of 1; both tenants'
    clients run on the other CPU, as clients on other machines would take none of the pod's.
    Quiet and loaded windows alternate, so the machine's other load falls on both alike.
    Measured on a quiet machine: p99 3.3-3.7 ms quiet, 5.4-6.9 ms beside A (1.5-2.1
    times); without the fair share 18 ms (5.5 times)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.fail("needs two CPUs: one for the server, one for the clients")
    wrk = shutil.which("wrk")
    if wrk is None:  # fail, not skip: CI must run it (.ci/run installs wrk)
        pytest.fail("wrk is not installed (apt-get install wrk; .ci/run installs it)")
    server_cpu, client_cpu = sorted(os.sched_getaffinity(0))[:2]
    script = tmp_path / "noisy.lua"
    script.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(HAND))}\n'
                      f'wrk.headers["Content-Type"] = "application/json"\n'
                      f'wrk.headers["Authorization"] = "Bearer {NOISY_KEY}"\n')
    env = {"AUTH": "keys", "API_KEYS": json.dumps(NEIGHBOURS), "ADVISOR_WARM": "yahtzee",
           "WEB_CONCURRENCY": "1"}
    results = []
    with Server(table_dir=tables, env=env) as srv:
        for pid in process_tree(srv.proc.pid):
            os.sched_setaffinity(pid, {server_cpu})
        for _ in range(ATTEMPTS):
            quiet, loaded, noisy = _neighbours(srv, wrk, script, client_cpu)
            rates = [float(m.group(1)) for out in noisy
                     for m in [re.search(r"Requests/sec:\s+([0-9.]+)", out)] if m]
            assert all("Non-2xx" not in out for out in noisy), noisy  # A within its quota
            assert len(rates) == ROUNDS and min(rates) > 100, noisy  # and it did flood
            throughput = len(loaded) / len(quiet)
            p99_quiet, p99_loaded = p99(quiet), p99(loaded)
            results.append((throughput, p99_loaded / p99_quiet))
            print(f"tenant B alone: {len(quiet) / (ROUNDS * WINDOW):.0f} req/s, p99 "
                  f"{p99_quiet * 1000:.2f} ms; beside A ({statistics.median(rates):.0f} req/s "
                  f"from 16 connections): {len(loaded) / (ROUNDS * WINDOW):.0f} req/s "
                  f"({throughput:.2f}), p99 {p99_loaded * 1000:.2f} ms "
                  f"({p99_loaded / p99_quiet:.2f} times)")
            if throughput >= 0.8 and p99_loaded <= 2 * p99_quiet:
                break
    assert any(t >= 0.8 and p99 <= 2 for t, p99 in results), results
