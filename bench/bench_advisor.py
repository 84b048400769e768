"""Benchmark the advisor: table builds per variant, suggestion latency, and the peer.

    python bench/bench_advisor.py [--variants yahtzee yatzy ...] [--repeat 3]

Prints build seconds per built-in variant (best of --repeat, JIT compile excluded by a
warm-up build), the total, the median in-process suggestion latency, and, when the
`yatzy-solver` package (Rust, PyPI) is installed, its build and query times side by side
with the ratios. `yatzy-solver` is not a project dependency: without it that part is skipped.
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import time

from service.advisor.advice.moves import suggest
from service.advisor.solving import solver
from service.advisor.solving.methods import method_for
from service.advisor.tables.strategies import build_strategy
from service.domain.rules import effective_rules
from service.domain.scoring import empty_sheet
from service.domain.variants import VARIANT_IDS

PEER_VARIANTS = {"yahtzee": "american", "yatzy": "yatzy-scandinavian"}


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def build_time(vid: str, repeat: int) -> float:
    rs = effective_rules(vid)
    return best_of(lambda: build_strategy(rs), repeat)


def suggestion_latency(vid: str, n: int = 500) -> float:
    rs = effective_rules(vid)
    st = build_strategy(rs)
    sheet = empty_sheet(rs)
    hands = [[1, 3, 3, 5, 6], [2, 2, 4, 5, 6], [6, 6, 6, 1, 2], [1, 2, 3, 4, 6]]
    for h in hands:
        suggest(st, h, 2, sheet)
    times = []
    for i in range(n):
        t = time.perf_counter()
        suggest(st, hands[i % len(hands)], 1 + i % 3, sheet)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def peer(vid: str, repeat: int) -> tuple[float, float] | None:
    try:
        import yatzy_solver as ys
    except ImportError:
        return None
    variant = ys.Variant(PEER_VARIANTS[vid])
    build = best_of(lambda: ys.Solver.build(variant), repeat)
    s = ys.Solver.build(variant)
    situation = "dice 1 3 3 5 6 | rolls 2 | upper 0 | filled -"
    s.option_values(situation)
    times = []
    for _ in range(2000):
        t = time.perf_counter()
        s.option_values(situation)
        times.append(time.perf_counter() - t)
    return build, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", nargs="*", default=list(VARIANT_IDS))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    t = time.perf_counter()
    solver.solve(effective_rules("generala"))  # JIT compile (or load the numba cache)
    print(f"warm-up (JIT compile or cache load): {time.perf_counter() - t:.2f} s")
    total = 0.0
    builds = {}
    for vid in args.variants:
        builds[vid] = build_time(vid, args.repeat)
        total += builds[vid]
        exact = method_for(effective_rules(vid)).exact
        print(f"build {vid:18s} {builds[vid]:7.3f} s {'exact' if exact else 'approx'}")
    print(f"build all {len(args.variants)} variants: {total:.2f} s (target < 10 s)")
    for vid in ("yahtzee", "yatzy"):
        if vid in args.variants:
            lat = suggestion_latency(vid)
            print(f"suggest {vid}: median {lat * 1e3:.3f} ms (target <= 1 ms)")
    for vid in ("yahtzee", "yatzy"):
        if vid not in builds:
            continue
        result = peer(vid, args.repeat)
        if result is None:
            print("yatzy-solver not installed: peer comparison skipped")
            break
        pb, pq = result
        print(f"peer yatzy-solver {PEER_VARIANTS[vid]}: build {pb:.2f} s, query {pq * 1e6:.1f} us;"
              f" ours/peer build ratio {builds[vid] / pb:.3f} (target <= 0.1 for yahtzee)")


if __name__ == "__main__":
    main()
