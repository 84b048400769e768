"""Tenants benchmark: scoring throughput with API keys and quotas, against AUTH=off.

    python bench/bench_tenants.py [--seconds 5] [--connections 8] [--rounds 3]

Starts a private redis-server (Debian's, a free loopback port, no persistence) and the
service under gunicorn with the project's `gunicorn.conf.py` (bench_http.py's way: gevent
workers, their number from the CPU count, JSON access log), once per setup:

- `off, no quota`: AUTH=off and QUOTA_SCORING=unlimited: the middleware names the anonymous
  tenant and charges nothing (what the quota itself costs is the difference to `off`);
- `off`: AUTH=off, quotas in memory (the default), per client address;
- `keys, memory`: AUTH=keys, every request with `Authorization: Bearer <key>`, quotas in
  the pod's memory (one table its workers share: `service.web.meter.MemoryMeter`);
- `keys, redis`: the same, quotas counted in the Redis (RATE_LIMIT_STORAGE=redis://),
  one script a request (the charges of requests that arrive together in one pipeline).

Every setup's scoring quota is high enough never to refuse (`strict`: a 401 or 429 stops the
run, it would count as throughput); every request is charged, exactly. wrk (a Python load
generator when wrk is missing) drives `hands/score` and `scorecards/score` on each setup in
turn, for --rounds rounds (each round starting with the next setup), keeping the median.
Prints requests/s, p99 latency, the server CPU time a request cost (all of gunicorn's
processes; for the Redis setup also redis-server's) and the throughput ratios keys-
memory/off (target >= 0.9) and keys-redis/off (target >= 0.75), with the CPU ratios beside
(off's CPU a request over the setup's, Redis's included): on a shared machine requests/s
moves with the other load, CPU a request less.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from bench_http import CARD, HAND, cpu_seconds, free_port, pyload, start, stop, wrk

from service.web.auth import hash_key, new_key

#: a scoring quota no run reaches (the default, 120,000/minute a client address, would be:
#: the service answers some 4,000 requests a second on two cores)
HIGH = "1000000000/minute"
TARGETS = {"keys, memory": 0.9, "keys, redis": 0.75}


def start_redis() -> tuple[subprocess.Popen, int]:
    """A private redis-server on a free loopback port, without persistence."""
    exe = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--protected-mode", "yes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def tenants_file() -> tuple[str, str]:
    """(a key, the tenants JSON naming it), with quotas no run reaches."""
    key_id, key = new_key()
    tenants = {"tenants": [{"name": "bench", "keys": [{"id": key_id, "hash": hash_key(key)}],
                            "quotas": {"scoring": HIGH}}]}
    return key, json.dumps(tenants)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", default="all",
                    help="ADVISOR_WARM of the servers (default all, as bench_http.py: with "
                         "none, each server's table build process compiles the advisor's "
                         "kernels, some 20 s of CPU, while the first rounds run)")
    args = ap.parse_args()
    load = wrk if shutil.which("wrk") else pyload
    print(f"load generator: {'wrk' if load is wrk else 'python'}; gunicorn.conf.py defaults; "
          f"{args.connections} connections, {args.seconds}s per run, median of {args.rounds}")

    redis, redis_port = start_redis()
    key, tenants = tenants_file()
    keyed = {"AUTH": "keys", "API_KEYS": tenants}
    setups: dict[str, dict[str, str]] = {
        "off, no quota": {"AUTH": "off", "QUOTA_SCORING": "unlimited"},
        "off": {"AUTH": "off", "QUOTA_SCORING": HIGH},
        "keys, memory": {**keyed, "RATE_LIMIT_STORAGE": "memory://"},
        "keys, redis": {**keyed, "RATE_LIMIT_STORAGE": f"redis://127.0.0.1:{redis_port}/0"},
    }
    headers = {"keys, memory": {"Authorization": f"Bearer {key}"},
               "keys, redis": {"Authorization": f"Bearer {key}"}}
    servers: dict[str, tuple[subprocess.Popen, int]] = {}
    try:
        for name, env in setups.items():
            servers[name] = start("service.web.app:create_app()", args.warm,
                                  {"QUOTA_SCORING": HIGH, **env}, ready_path="/healthz")
        for endpoint, body in (("hands/score", HAND), ("scorecards/score", CARD)):
            path = f"/v1/variants/yahtzee/{endpoint}"
            for name, (_, port) in servers.items():  # warm up, and check the setup answers
                load(f"http://127.0.0.1:{port}{path}", body, 1, args.connections,
                     headers.get(name), strict=True)
            runs: dict[str, list[tuple[float, float, float, float]]] = {n: [] for n in setups}
            names = list(setups)
            for r in range(args.rounds):
                for name in names[r % len(names):] + names[:r % len(names)]:
                    proc, port = servers[name]
                    cpu0, rcpu0 = cpu_seconds(proc), cpu_seconds(redis)
                    rps, p99 = load(f"http://127.0.0.1:{port}{path}", body, args.seconds,
                                    args.connections, headers.get(name), strict=True)
                    done = max(rps * args.seconds, 1)
                    runs[name].append((rps, p99, (cpu_seconds(proc) - cpu0) / done * 1e6,
                                       (cpu_seconds(redis) - rcpu0) / done * 1e6))
            med = {n: [statistics.median(r[i] for r in runs[n]) for i in range(4)]
                   for n in setups}
            base, base_cpu = med["off"][0], med["off"][2]
            print(f"{endpoint}:")
            for name in setups:
                rps, p99, cpu, rcpu = med[name]
                if name == "keys, redis":
                    redis_cpu, cpu = f" + redis {rcpu:4.0f} us", cpu + rcpu
                else:
                    redis_cpu = ""
                ratio = f"{rps / base:.2f} of off"
                if name in TARGETS:
                    met = "met" if rps / base >= TARGETS[name] else "MISSED"
                    ratio += f" (target >= {TARGETS[name]}: {met})"
                print(f"  {name:14s} {rps:7.0f} req/s  p99 {p99:6.2f} ms  "
                      f"{med[name][2]:4.0f} us CPU/req{redis_cpu:15s}  {ratio}, CPU ratio "
                      f"{base_cpu / cpu:.2f}")
    finally:
        for proc, _ in servers.values():
            stop(proc)
        redis.terminate()
        redis.wait(timeout=10)


if __name__ == "__main__":
    main()
