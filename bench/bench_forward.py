"""The build process's `start` job in-process: the value tables of new rules, then the exact
distribution of the final score from the start of a game (`distribution.forward`), as
`strategies.build_start` runs them, on one and on two threads; medians of --repeat runs,
wall and CPU time. What the kernels cost alone, without the server (`bench_new_rules.py`
times the first answer end to end).

    python bench/bench_forward.py [--repeat 7] [--cases yatzy-60/30 ...] [--stages]

Each case's job is also run in a child forked for it, as the build process runs a job
(`build_process.in_child`: from the fork to the child's end, its CPU time all its threads'),
where the memory it writes starts cold, unlike the repeats in process. --stages adds, per
case, the forward pass's pieces on one thread (each level's turn outcomes, the next level's
index, the histogram adds). On a shared machine the wall time moves with the other load;
the CPU time less. Not a test: it prints.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.advisor.kernels import distribution as dist  # noqa: E402
from service.advisor.solving import solver  # noqa: E402
from service.advisor.tables.build_process import in_child  # noqa: E402
from service.advisor.tables.strategies import start_state, strategy_of  # noqa: E402
from service.domain.rules import effective_rules  # noqa: E402

NEW_BONUS = {"upper_bonus": {"threshold": 60, "amount": 30}}
#: (variant, options, overrides): rules with no built-in table, as a client's new rules
CASES = {
    "yatzy-60/30": ("yatzy", {}, NEW_BONUS),
    "yahtzee-60/30": ("yahtzee", {}, NEW_BONUS),
    "kniffel-extra-off": ("kniffel", {"extra_kniffel_needs_50": False}, {}),
    "generala-obligada": ("generala", {"obligada": True}, {}),
}


def timed(work, *args) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of the process, result) of work(*args)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = work(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, out


def start_job(rs, start: tuple[int, int, int], threads: int) -> None:
    """The start job's kernels: the values, then the forward pass from the start."""
    sol = solver.solve(rs, None, threads)
    dist.forward(sol.kd, sol.values, start, 0, None, threads)


def stages(sol: solver.Solution, start: tuple[int, int, int]) -> dict[str, float]:
    """Seconds of the forward pass's pieces on one thread, over every level."""
    kd, values = sol.kd, sol.values
    gbits = dist.gain_bits(kd)
    mass0 = np.array(kd.prob, dtype=np.float64)
    nu, nf = values.shape[1], values.shape[2]
    full = (1 << kd.nb) - 1
    lo, hoff, hist = np.array([0], np.int64), np.array([0, 1], np.int64), np.array([1.0])
    states = np.array([start], np.int64)
    index = dist._Index(values.size)
    out = dict.fromkeys(("records", "index", "adds"), 0.0)
    while states[0, 0] != full:
        a = time.perf_counter()
        run = (0, *dist.level_records(kd, values, states, gbits, mass0))
        b = time.perf_counter()
        index.take(lo, hoff, run, gbits)
        flat, tlo, thoff = index.close()
        c = time.perf_counter()
        th = np.zeros(int(thoff[-1]))
        dist._add_runs(lo, hoff, hist, [run], gbits, tlo, thoff, th)
        d = time.perf_counter()
        index.slot_of[flat] = -1
        out["records"] += b - a
        out["index"] += c - b
        out["adds"] += d - c
        lo, hoff, hist = tlo, thoff, th
        states = dist._rows(flat, nu, nf)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--cases", nargs="*", choices=sorted(CASES), default=["yatzy-60/30"])
    ap.add_argument("--threads", nargs="*", type=int, default=[1, 2])
    ap.add_argument("--stages", action="store_true")
    args = ap.parse_args()
    for case in args.cases:
        vid, options, overrides = CASES[case]
        rs = effective_rules(vid, options, overrides)
        sol = solver.solve(rs, None, 1)  # compiles (or loads) the kernels
        start = start_state(strategy_of(rs, [sol.values]))
        for threads in args.threads:
            dist.forward(sol.kd, sol.values, start, 0, None, threads)
            rows: dict[str, list[tuple[float, float]]] = {"values": [], "forward": []}
            for _ in range(args.repeat):
                wall, cpu, sol = timed(solver.solve, rs, None, threads)
                rows["values"].append((wall, cpu))
                wall, cpu, got = timed(dist.forward, sol.kd, sol.values, start, 0, None,
                                       threads)
                rows["forward"].append((wall, cpu))
            job = [v[0] + f[0] for v, f in zip(rows["values"], rows["forward"], strict=True)]
            parts = "  ".join(
                f"{name} {statistics.median(w for w, _ in r):.3f} s "
                f"(cpu {statistics.median(c for _, c in r):.3f})" for name, r in rows.items())
            cold = [in_child(partial(start_job, rs, start, threads))
                    for _ in range(args.repeat)]
            print(f"{case:18s} {threads} thread(s): {parts}  job {statistics.median(job):.3f} s"
                  f"  [{got.states} states]; the job in a forked child "
                  f"{statistics.median(r.seconds for r in cold):.3f} s "
                  f"(cpu {statistics.median(r.cpu_seconds for r in cold):.3f})", flush=True)
        if args.stages:
            pieces = stages(sol, start)
            print(f"{case:18s} forward on one thread: "
                  + "  ".join(f"{k} {v:.3f} s" for k, v in pieces.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
