"""HTTP benchmark: the service against a raw WSGI app and a bare Flask app, same gunicorn
settings, same load, with API keys off and on.

    python bench/bench_http.py [--seconds 5] [--connections 8] [--rounds 3]

Starts four servers under gunicorn with the project's `gunicorn.conf.py` (its defaults: gevent
workers, their number from the CPU count, JSON access log) on loopback:

- `raw`: a WSGI callable with no framework (`bare_app.create_raw_app`) that reads the body,
  parses it with orjson and answers the service's own answer to the benchmark request;
- `flask`: a bare Flask app answering the same bytes (`bare_app.create_app`);
- `service, off`: the service with AUTH=off (the default);
- `service, keys`: the service with AUTH=keys, every request with its tenant's key, its
  quotas counted in memory (metered, as `off` meters the anonymous client's) and high enough
  never to refuse;
- `unmetered`: the service with AUTH=off and the anonymous scoring quota unlimited, so no
  quota is counted and no RateLimit header sent: not a setup to judge the service by, but
  what the quotas' exact pod-wide count costs, measured in the same rounds.

wrk (Debian package `wrk`; a Python load generator when wrk is missing) drives each endpoint,
the setups in turn for --rounds rounds (each round starting with the next setup; with --fresh,
each run after the first on servers started anew: a process's own layout in memory moves its
speed by a few percent for its whole life), keeping the median. Prints requests/s, p99 latency
and the server CPU time a request cost (all of gunicorn's processes, from /proc: unlike
requests/s it does not move with the rest of the machine's load) of `hands/score` and
`scorecards/score`, and the service's throughput ratios to the raw app (target >= 0.8, with
keys off and on) and to the bare Flask app, and the bare Flask app's own ratio to the raw app
(Flask's dispatch alone, which the scoring fast path skips: `service/web/fast.py`). Beside the
ratio to bare Flask of the medians, the ratio round by round (the two ran back to back: their
median and least, the least >= 1.0 when the service was ahead in every round), and the share of
this machine's CPU time its hypervisor took meanwhile (/proc/stat's steal: a quiet machine
loses almost none). Then the batch form's items per second, moves/suggest per second (target >=
1,000/s), and the memory of the whole service (master, workers and the table build process, all
built-in advisor tables loaded).

    python bench/bench_http.py --layers [--seconds 5] [--rounds 5]

instead takes the service apart (`layered_app`), `hands/score` only, with API keys off: the
raw app, the service, the scoring fast path alone, the front door over it, and the whole
stack with free scoring (each answer's bytes remembered), with metrics on and off. Prints
each setup's server CPU time a request and throughput against the raw app: how far each
layer keeps the service from the raw app.

    python bench/bench_http.py --instructions [--requests 1600]

instead counts the instructions a request costs the gunicorn worker (valgrind's cachegrind,
Debian package `valgrind`; one worker, `hands/score` and `scorecards/score` from 8 keep-alive
connections): the raw app, bare Flask and the service with AUTH=off, each run twice (with
--requests more requests the second time) so that what the start costs drops out. The
count moves far less with the machine's pace than time does, but it moves with its load: a
worker whose clients are slowed polls the loop more often a request, and its idle ticks
(`ServiceWorker.run`) count too. Run it on an idle machine, nothing else running. Under
cachegrind a request takes some fifty times its CPU, so the service takes a turn of its
fair share (`fairshare.TURN_SECONDS` of CPU) before nearly every request instead of one in
three: its count includes about three times the turns it takes at full speed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

HAND = {"dice": [3, 3, 4, 5, 6], "throw": 2,
        "scorecard": {"boxes": {"ones": 2, "full_house": 25, "five_of_a_kind": 50}}}
CARD = {"boxes": {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15,
                  "three_of_a_kind": 22, "full_house": 25, "small_straight": 30,
                  "five_of_a_kind": 50}, "five_of_a_kind_bonuses": 1}
BATCH = 1000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def service_answers() -> str:
    """The service's answers to the benchmark requests, as a {path: body} file for the
    bare app (so both apps send the same bytes)."""
    sys.path.insert(0, str(ROOT))
    from service.config import Settings
    from service.web.app import create_app

    client = create_app(Settings()).test_client()
    bodies = {}
    for name, body in (("hands/score", HAND), ("scorecards/score", CARD)):
        path = f"/v1/variants/yahtzee/{name}"
        bodies[path] = client.post(path, json=body).get_data(as_text=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(bodies, f)
    return f.name


def start(app: str, warm: str, extra_env: dict[str, str] | None = None,
          ready_path: str = "/v1/variants/yacht") -> tuple[subprocess.Popen, int]:
    """Start `app` under gunicorn on a free loopback port; return once `ready_path` answers
    200 (the service's /readyz: every /v1/ path wants a key when it runs with AUTH=keys)."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}", "PORT": str(port),
           "ADVISOR_WARM": warm, **(extra_env or {})}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", app],
        cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    for _ in range(1200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{ready_path}", timeout=1)
            return proc, port
        except OSError:
            time.sleep(0.1)
    stop(proc)  # not left running (and building tables) behind the error
    raise RuntimeError(f"{app} did not start")


def memory_mib(proc: subprocess.Popen) -> tuple[float, float]:
    """(sum of PSS, sum of RSS) in MiB over gunicorn's master and its workers.

    PSS counts a page shared by n processes as 1/n in each, so its sum is the real total;
    RSS counts shared pages (the memory-mapped tables) once per process.
    """
    pss = rss = 0
    for pid in tree(proc.pid):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss += int(line.split()[1])
            elif line.startswith("Rss:"):
                rss += int(line.split()[1])
    return pss / 1024, rss / 1024


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def cpu_seconds(proc: subprocess.Popen) -> float:
    """User + system CPU time of the server's processes so far."""
    total = 0
    for pid in tree(proc.pid):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def wrk(url: str, body: dict | list, seconds: int, connections: int,
        headers: dict[str, str] | None = None, strict: bool = False) -> tuple[float, float]:
    """(requests/s, p99 latency in ms) from wrk. `headers` go with every request; `strict`
    raises if any answer was not 2xx/3xx (a 401 or 429 is cheaper than an answer and would
    count as throughput)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                f"wrk.body = {json.dumps(json.dumps(body))}\n")
        for name, value in (headers or {}).items():
            f.write(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}\n")
        script = f.name
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "-s", script, url], capture_output=True, text=True, check=True).stdout
    os.unlink(script)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if strict and bad:
        raise RuntimeError(f"{url}: {bad.group(1)} answers were not 2xx/3xx")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]
    return rps, p99


def pyload(url: str, body: dict | list, seconds: int, connections: int,
           headers: dict[str, str] | None = None, strict: bool = False) -> tuple[float, float]:
    """A plain Python load generator (threads, one connection each) when wrk is missing;
    `headers` and `strict` as for `wrk`."""
    import http.client
    from urllib.parse import urlparse

    u = urlparse(url)
    data = json.dumps(body).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}
    latencies: list[float] = []
    statuses: set[int] = set()
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def run() -> None:
        local = []
        while time.perf_counter() < deadline:
            conn = http.client.HTTPConnection(u.hostname, u.port)
            t0 = time.perf_counter()
            conn.request("POST", u.path, data, sent)
            response = conn.getresponse()
            response.read()
            local.append(time.perf_counter() - t0)
            conn.close()
            if response.status >= 400:
                with lock:
                    statuses.add(response.status)
        with lock:
            latencies.extend(local)

    threads = [threading.Thread(target=run) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if strict and statuses:
        raise RuntimeError(f"{url}: answers with status {sorted(statuses)}")
    latencies.sort()
    return len(latencies) / seconds, latencies[int(len(latencies) * 0.99)] * 1000


def tenants_file() -> tuple[str, str]:
    """(a key, the tenants JSON naming it), with quotas counted that no run reaches
    ("unlimited" would count nothing)."""
    sys.path.insert(0, str(ROOT))
    from service.web.auth import hash_key, new_key

    key_id, key = new_key()
    tenants = {"tenants": [{"name": "bench", "keys": [{"id": key_id, "hash": hash_key(key)}],
                            "quotas": {"scoring": "1000000000/minute",
                                       "advice": "1000000000/minute"}}]}
    return key, json.dumps(tenants)


class Rounds(dict):
    """Each setup's runs, one (requests/s, p99 ms, server CPU us a request) a round, the
    setups taken in turn within a round (`rotated`)."""

    def median(self, setup: str) -> list[float]:
        """The setup's median requests/s, p99 and CPU a request over the rounds."""
        return [statistics.median(run[i] for run in self[setup]) for i in range(3)]

    def paired(self, setup: str, base: str) -> list[float]:
        """The setup's throughput over `base`'s, round by round: the two ran back to back,
        so a round's ratio shares the machine's state of the moment, which the ratio of the
        medians does not. Their least says whether the setup is ahead in every round."""
        return sorted(mine[0] / theirs[0] for mine, theirs in zip(self[setup], self[base]))


def host_steal() -> tuple[int, int]:
    """(CPU time stolen by the hypervisor, all CPU time) so far, in ticks (/proc/stat); (0,
    0) where that cannot be read. A quiet machine has almost none stolen."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    return (ticks[7] if len(ticks) > 7 else 0), sum(ticks[:8])


def steal_share(before: tuple[int, int], after: tuple[int, int]) -> str:
    """The share of CPU time stolen between two `host_steal` readings, as printed."""
    total = after[1] - before[1]
    return f"{(after[0] - before[0]) / total:.1%}" if total > 0 else "unknown"


class Servers(dict):
    """The setups' servers, {name: (process, port)}, each started by its own function, so a
    round can start them anew (`rotated`)."""

    def __init__(self) -> None:
        super().__init__()
        self.starters: dict[str, Any] = {}

    def add(self, name: str, *how: Any, **options: Any) -> None:
        """Start the setup `name` (`start`'s arguments) and remember how."""
        self.starters[name] = lambda: start(*how, **options)
        self[name] = self.starters[name]()

    def restart(self, name: str) -> tuple[subprocess.Popen, int]:
        """Setup `name` on a server started anew."""
        stop(self[name][0])
        self[name] = self.starters[name]()
        return self[name]


def rotated(servers: Servers, load: Any, url: str, body: dict | list,
            args: argparse.Namespace,
            headers: dict[str, dict[str, str]] | None = None) -> Rounds:
    """Each setup's runs over args.rounds rounds, the setups taken in turn, each round
    starting with the next one; a warm-up run first, which also checks that every answer
    is 2xx. With args.fresh, each run after the first is on a server started anew (and
    warmed up): a process's own layout in memory (addresses, hash seeds) moves its speed by
    a few percent for its whole life, which rounds on one server never average out."""
    names = list(servers)
    headers = headers or {}

    def warm(setup: str, port: int) -> None:
        load(f"http://127.0.0.1:{port}{url}", body, 1, args.connections, headers.get(setup),
             strict=True)

    for setup, (_, port) in servers.items():
        warm(setup, port)
    runs = Rounds({n: [] for n in names})
    for r in range(args.rounds):
        for setup in names[r % len(names):] + names[:r % len(names)]:
            proc, port = servers[setup]
            if args.fresh and r > 0:
                proc, port = servers.restart(setup)
                warm(setup, port)
            cpu0 = cpu_seconds(proc)
            rps, p99 = load(f"http://127.0.0.1:{port}{url}", body, args.seconds,
                            args.connections, headers.get(setup), strict=True)
            cpu_us = (cpu_seconds(proc) - cpu0) / max(rps * args.seconds, 1) * 1e6
            runs[setup].append((rps, p99, cpu_us))
    return runs


def layers(load: Any, args: argparse.Namespace) -> None:
    """`--layers`: the service taken apart (`layered_app`), hands/score, keys off."""
    answers = service_answers()
    servers = Servers()
    setups = {
        "raw": ("bare_app:create_raw_app()", {"BARE_BODIES": answers}),
        "service": ("service.web.app:create_app()", {}),
        "fast path only": ("layered_app:scoring_only()", {}),
        "+ front door": ("layered_app:no_ops()", {}),
        "free scoring": ("layered_app:constant_scoring()", {}),
        "free, no metrics": ("layered_app:constant_scoring()", {"METRICS_ENABLED": "false"}),
    }
    try:
        for name, (app, env) in setups.items():
            servers.add(name, app, "none", env)
        rounds = rotated(servers, load, "/v1/variants/yahtzee/hands/score", HAND, args)
        med = {name: rounds.median(name) for name in rounds}
        raw = med["raw"]
        print("hands/score, AUTH=off:")
        for name, (rps, p99, cpu) in med.items():
            print(f"  {name:17s} {rps:7.0f} req/s p99 {p99:6.2f} ms {cpu:5.0f} us CPU/req "
                  f"(+{cpu - raw[2]:4.0f}): throughput {rps / raw[0]:.2f} of raw, CPU ratio "
                  f"{raw[2] / cpu:.2f}")
    finally:
        for proc, _ in servers.values():
            stop(proc)
        os.unlink(answers)


def send(port: int, path: str, body: dict, count: int, connections: int = 8) -> None:
    """`count` POSTs of `body` to `path`, over `connections` keep-alive connections."""
    import http.client

    data = json.dumps(body).encode()
    failed: list[int] = []

    def run() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        for _ in range(count // connections):
            conn.request("POST", path, data, {"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                failed.append(response.status)
        conn.close()

    threads = [threading.Thread(target=run) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise RuntimeError(f"{path}: answers with status {sorted(set(failed))}")


def worker_instructions(app: str, env: dict[str, str], requests: int) -> dict[str, int]:
    """The instructions gunicorn's one worker ran (cachegrind), serving 96 requests of each
    endpoint to warm up, then `requests` more of each: {endpoint: total}, each total from
    a server started for it."""
    totals = {}
    for name, body in (("hands/score", HAND), ("scorecards/score", CARD)):
        port = free_port()
        out = tempfile.mkdtemp(prefix="cachegrind-")
        log = open(Path(out, "log"), "w+")  # noqa: SIM115 - read, then closed, below
        proc = subprocess.Popen(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--trace-children=yes",
             f"--cachegrind-out-file={out}/%p", sys.executable, "-m", "gunicorn",
             "--config", "gunicorn.conf.py", app],
            cwd=ROOT, start_new_session=True, stdout=log, stderr=subprocess.DEVNULL,
            env={**os.environ, **env, "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}",
                 "PORT": str(port), "WEB_CONCURRENCY": "1", "ADVISOR_WARM": "none",
                 "GUNICORN_DRAIN_SECONDS": "0", "PYTHONHASHSEED": "0"})
        try:
            for _ in range(3000):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
                    break
                except OSError:
                    time.sleep(0.2)
            path = f"/v1/variants/yahtzee/{name}"
            send(port, path, body, 96)
            send(port, path, body, requests)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            # the build process, whose parent has gone (nothing of it is counted)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        log.seek(0)
        worker = re.search(r"Booting worker with pid: (\d+)", log.read())
        log.close()
        if worker is None:
            raise RuntimeError(f"{app}: no worker started")
        summary = Path(out, worker.group(1)).read_text().rsplit("summary:", 1)[1]
        totals[name] = int(summary.split()[0])
        shutil.rmtree(out, ignore_errors=True)
    return totals


def instructions(args: argparse.Namespace) -> None:
    """`--instructions`: a request's instructions in the worker, by setup and endpoint."""
    if not shutil.which("valgrind"):
        raise SystemExit("--instructions needs valgrind (Debian package valgrind)")
    answers = service_answers()
    setups = {"raw": ("bare_app:create_raw_app()", {"BARE_BODIES": answers}),
              "flask": ("bare_app:create_app()", {"BARE_BODIES": answers}),
              "service, off": ("service.web.app:create_app()", {})}
    per_request: dict[str, dict[str, float]] = {}
    try:
        for setup, (app, env) in setups.items():
            few = worker_instructions(app, env, 96)
            many = worker_instructions(app, env, 96 + args.requests)
            per_request[setup] = {name: (many[name] - few[name]) / args.requests
                                  for name in few}
    finally:
        os.unlink(answers)
    print(f"instructions a request costs the worker (cachegrind, {args.requests} requests "
          f"counted per endpoint, 8 keep-alive connections, one worker):")
    for name in ("hands/score", "scorecards/score"):
        raw, flask = per_request["raw"][name], per_request["flask"][name]
        service = per_request["service, off"][name]
        print(f"  {name}: raw {raw:,.0f}, bare Flask {flask:,.0f}, service {service:,.0f} "
              f"(bare Flask's over the service's: {flask / service:.3f}; raw's: "
              f"{raw / service:.3f}, bare Flask's: {raw / flask:.3f})")


SUGGEST = {"dice": [2, 3, 3, 5, 6], "throw": 1,
           "scorecard": {"boxes": {"ones": 3, "full_house": 25, "chance": 21}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fresh", action="store_true",
                    help="each run after the first on servers started anew (a process's "
                         "own layout then weighs on one run, not on every round)")
    ap.add_argument("--layers", action="store_true",
                    help="what each layer of the service costs (hands/score)")
    ap.add_argument("--instructions", action="store_true",
                    help="instructions a request costs a worker, under cachegrind")
    ap.add_argument("--requests", type=int, default=1600,
                    help="--instructions: requests counted, per endpoint")
    args = ap.parse_args()
    load = wrk if shutil.which("wrk") else pyload
    print(f"load generator: {'wrk' if load is wrk else 'python'}; gunicorn.conf.py defaults; "
          f"{args.connections} connections, {args.seconds}s per run, median of {args.rounds}"
          f"{', each run on servers started anew' if args.fresh else ''}")
    if args.instructions:
        instructions(args)
        return
    if args.layers:
        layers(load, args)
        return

    answers = service_answers()
    key, tenants = tenants_file()
    servers = Servers()
    headers = {"service, keys": {"Authorization": f"Bearer {key}"}}
    try:
        servers.add("raw", "bare_app:create_raw_app()", "none", {"BARE_BODIES": answers})
        servers.add("flask", "bare_app:create_app()", "none", {"BARE_BODIES": answers})
        servers.add("service, off", "service.web.app:create_app()", "all",
                    ready_path="/readyz")
        servers.add("service, keys", "service.web.app:create_app()", "all", {
            "AUTH": "keys", "API_KEYS": tenants, "RATE_LIMIT_STORAGE": "memory://"},
            ready_path="/readyz")
        servers.add("unmetered", "service.web.app:create_app()", "none",
                    {"QUOTA_SCORING": "unlimited"})
        names = list(servers)
        for name, body in (("hands/score", HAND), ("scorecards/score", CARD)):
            steal = host_steal()
            rounds = rotated(servers, load, f"/v1/variants/yahtzee/{name}", body, args,
                             headers)
            med = {setup: rounds.median(setup) for setup in names}
            print(f"{name} (CPU time stolen from this machine meanwhile: "
                  f"{steal_share(steal, host_steal())}):")
            for setup in names:
                rps, p99, cpu = med[setup]
                print(f"  {setup:14s} {rps:7.0f} req/s p99 {p99:6.2f} ms {cpu:5.0f} us CPU/req")
            raw, flask = med["raw"], med["flask"]
            print(f"  bare Flask (its dispatch, no body parsed): throughput "
                  f"{flask[0] / raw[0]:.2f} of raw WSGI (CPU ratio {raw[2] / flask[2]:.2f}), "
                  f"what the scoring fast path saves by answering before Flask")
            for setup in ("service, off", "service, keys", "unmetered"):
                rps, _, cpu = med[setup]
                paired = rounds.paired(setup, "flask")
                what = ("target >= 0.8" if setup != "unmetered"
                        else "no quota counted: what the count costs")
                print(f"  {setup}: throughput {rps / raw[0]:.2f} of raw WSGI ({what}; "
                      f"CPU ratio {raw[2] / cpu:.2f}), {rps / flask[0]:.2f} of bare Flask "
                      f"(CPU ratio {flask[2] / cpu:.2f}; round by round "
                      f"{statistics.median(paired):.2f}, least {paired[0]:.2f})")
        svc_port = servers["service, off"][1]
        svc = servers["service, off"][0]
        for name, body in (("hands/score", HAND), ("scorecards/score", CARD)):
            url = f"http://127.0.0.1:{svc_port}/v1/variants/yahtzee/{name}/batch"
            rps, _ = load(url, [body] * BATCH, args.seconds, 2)
            print(f"batch {name:17s} {BATCH} items a request: {rps * BATCH:9.0f} items/s")
        url = f"http://127.0.0.1:{svc_port}/v1/variants/yahtzee/moves/suggest"
        load(url, SUGGEST, 1, args.connections)
        rps, p99 = load(url, SUGGEST, args.seconds, args.connections)
        print(f"moves/suggest      {rps:7.0f} suggestions/s p99 {p99:6.2f} ms "
              f"(target >= 1,000/s)")
        pss, rss = memory_mib(svc)
        print(f"service memory, all built-in tables loaded: {pss:.0f} MiB (sum of PSS over "
              f"master, workers and build process; sum of RSS {rss:.0f} MiB)")
    finally:
        for proc, _ in servers.values():
            stop(proc)
        os.unlink(answers)


if __name__ == "__main__":
    main()
