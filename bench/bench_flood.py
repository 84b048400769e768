"""A tenant beside another's flood of large batches: what it keeps of its throughput and p99.

    python bench/bench_flood.py [--window 3] [--rounds 3] [--items 1000] [--connections 16]

Starts the service under gunicorn with the project's `gunicorn.conf.py`, AUTH=keys and two
tenants, one worker pinned to one CPU (a pod with a CPU limit of 1); both tenants' clients
run on the other CPU, as clients on other machines take none of the pod's. The calm tenant
sends `hands/score` at a steady 200 requests a second (2 keep-alive connections, 100/s
each); the noisy tenant, within its quota, floods `hands/score/batch` with batches of
`--items` hands from `--connections` keep-alive connections (wrk), as fast as it is
answered. Quiet windows (calm alone) and loaded windows (calm beside the flood) alternate,
`--rounds` of each, so the machine's other load falls on both alike: the baseline is measured
in the same run.

Prints the calm tenant's requests/s and p99 in each kind of window, the ratios (targets:
throughput >= 0.9 of quiet, p99 <= 3x quiet), and what the flood got (batches/s and
items/s). A batch is charged and fair-shared by its items (service/web/batch.py:
`fairshare.take_turn`, a turn between items once the worker has worked a millisecond since
its last).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from bench_http import start, stop, tree

from service.web.auth import hash_key, new_key

# the calm tenant as the noisy-neighbour test measures it (2 connections at 100/s each)
from tests.live.hostile import HAND, calm_process, p99
from tests.live.hostile import HAND_URL as URL

TARGET_THROUGHPUT, TARGET_P99 = 0.9, 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    wrk = shutil.which("wrk")
    if wrk is None:
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("needs two CPUs: one for the server, one for the clients", file=sys.stderr)
        return 2
    server_cpu, client_cpu = cpus[:2]
    (noisy_id, noisy_key), (calm_id, calm_key) = new_key(), new_key()
    big = "1000000000/minute"
    tenants = {"tenants": [
        {"name": "noisy", "quotas": {"scoring": big},
         "keys": [{"id": noisy_id, "hash": hash_key(noisy_key)}]},
        {"name": "calm", "quotas": {"scoring": big},
         "keys": [{"id": calm_id, "hash": hash_key(calm_key)}]}]}
    tmp = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    script = tmp / "flood.lua"
    batch = json.dumps([HAND] * args.items)
    script.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(batch)}\n'
                      f'wrk.headers["Content-Type"] = "application/json"\n'
                      f'wrk.headers["Authorization"] = "Bearer {noisy_key}"\n')
    proc, port = start("service.web.app:create_app()", "yahtzee",
                       {"AUTH": "keys", "API_KEYS": json.dumps(tenants),
                        "WEB_CONCURRENCY": "1", "ACCESS_LOG": "0"},
                       ready_path="/readyz")
    ctx = multiprocessing.get_context("fork")
    asks, answers = ctx.Queue(), ctx.Queue()
    calm = ctx.Process(target=calm_process, args=(port, client_cpu, asks, answers, calm_key),
                       daemon=True)
    try:
        for pid in tree(proc.pid):
            os.sched_setaffinity(pid, {server_cpu})
        calm.start()
        asks.put(1.0)  # warm up
        answers.get(timeout=120)
        quiet: list[float] = []
        loaded: list[float] = []
        floods: list[str] = []
        for _ in range(args.rounds):
            asks.put(args.window)
            quiet += answers.get(timeout=120)
            flood = subprocess.Popen(
                ["taskset", "-c", str(client_cpu), wrk, "-t1", f"-c{args.connections}",
                 f"-d{args.window + 1.5:.0f}s", "--timeout", "30s", "-s", str(script),
                 f"http://127.0.0.1:{port}{URL}/batch"],
                stdout=subprocess.PIPE, text=True)
            time.sleep(0.5)
            asks.put(args.window)
            loaded += answers.get(timeout=120)
            floods.append(flood.communicate(timeout=120)[0])
    finally:
        asks.put(None)
        calm.join(10)
        stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    rates = [float(m.group(1)) for out in floods
             for m in [re.search(r"Requests/sec:\s+([0-9.]+)", out)] if m]
    refused = sum(int(m.group(1)) for out in floods
                  for m in [re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)] if m)
    sent = sum(int(m.group(1)) for out in floods
               for m in [re.search(r"(\d+) requests in", out)] if m)
    seconds = args.rounds * args.window
    throughput = len(loaded) / len(quiet)
    ratio = p99(loaded) / p99(quiet)
    flood_rate = statistics.median(rates) if rates else 0.0
    print(f"calm tenant alone:      {len(quiet) / seconds:6.1f} req/s, p99 "
          f"{p99(quiet) * 1000:6.2f} ms")
    print(f"beside the batch flood: {len(loaded) / seconds:6.1f} req/s, p99 "
          f"{p99(loaded) * 1000:6.2f} ms")
    print(f"flood: {args.connections} connections of {args.items}-item batches, "
          f"{flood_rate:.1f} batches/s; {refused} of its {sent} batches refused (429: more "
          f"in flight than its fair share, after a wait)")
    print(f"throughput kept {throughput:.2f} (target >= {TARGET_THROUGHPUT}); "
          f"p99 {ratio:.2f}x quiet (target <= {TARGET_P99})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
