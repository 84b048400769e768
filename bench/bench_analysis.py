"""Benchmark of the analysis, in process, with ratios to baselines measured in the same run:
the YAHTZEE table build and one `moves/suggest` suggestion.

    python bench/bench_analysis.py [--games 200] [--pairs 20] [--skip-house-rules]

For YAHTZEE and Yatzy (issue 33):

- the exact distribution at every turn of `--games` seeded games of the advisor's play with
  mistakes: at each turn start and after each turn's first throw (the dice of the game),
  the time of `positions/value` (median, p99, max) and whether it was exact at every one
  (target: p99 <= 250 ms on 2 cores, exact everywhere);
- house rules (a new upper-bonus threshold): the time from the first `positions/value` at
  the start of a game to its answer, with a real build process (the value tables, the
  start distribution; the request polled every 50 ms, as a client that ignores
  Retry-After would; target 2 s);
- playing to win (`bench_play_to_win.py` with `--pairs` pairs, one process): the win bot
  against the expected-score optimum, and its agreement with the exact winning move;

and the older budgets: analysis of a 13-turn game (<= 20 ms), win probability of 2-4
players, the winning move, no growth of memory with requests. The machine is shared: the
times move with its load, the ratios to the baselines less.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from copy import deepcopy
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.advisor import Advisor
from service.advisor.advice import moves as advice
from service.advisor.analysis.analyst import Analyst
from service.advisor.analysis.games import analyze
from service.advisor.kernels.distribution import forward
from service.advisor.kernels.winprob import MAX_WIN_OPEN
from service.advisor.objectives.win import win_probability
from service.advisor.tables.build_process import (
    BuildQueue,
    BuildSettings,
    TableBuilding,
)
from service.advisor.tables.strategies import build_strategy, start_state
from service.domain.rules import effective_rules
from service.domain.scoring import empty_sheet, score_sheet

VARIANTS = ("yahtzee", "yatzy")


def timed(fn, repeat: int = 5) -> tuple[float, float]:
    """(median, max) seconds of `repeat` calls."""
    runs = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - began)
    return statistics.median(runs), max(runs)


def rss_mib() -> float:
    """Resident memory of this process."""
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def played(rs, st, rng: random.Random, turns: int | None = None, mistakes: float = 0.2):
    """A seeded game of the advisor's play with random deviations: (the game of one player as
    games/validate and games/analyze take it, with its keeps; the sheets at each turn
    start; each turn's first throw)."""
    sheet = empty_sheet(rs)
    out, sheets, firsts = [], [], []
    n = rs.variant.dice
    for _ in range(turns or len(rs.variant.box_ids)):
        if score_sheet(rs, sheet).complete:
            break
        sheets.append(deepcopy(sheet))
        dice = sorted(rng.randint(1, 6) for _ in range(n))
        firsts.append(list(dice))
        throws, kept = [], []
        for t in range(1, rs.variant.throws + 1):
            alts = advice.suggest(st, dice, t, sheet).moves
            a = (alts[0] if rng.random() > mistakes else rng.choice(alts)).move
            if a.action == "keep":
                throws.append(list(dice))
                kept.append(list(a.dice))
                dice = sorted([*a.dice, *(rng.randint(1, 6) for _ in range(n - len(a.dice)))])
                continue
            throws.append(list(dice))
            out.append({"throws": throws, "kept": kept, "box": a.box})
            sheet.columns[0].boxes[a.box] = a.score
            if a.five_of_a_kind_bonus:
                sheet.columns[0].five_of_a_kind_bonuses += 1
            break
    sheets.append(deepcopy(sheet))
    return {"players": [{"turns": out}]}, sheets, firsts


def percentile(xs: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of xs."""
    ordered = sorted(xs)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def per_turn(analyst: Analyst, vid: str, games: int) -> None:
    """positions/value at every turn start and after every turn's first throw of `games`
    seeded games: times and exactness."""
    rs = effective_rules(vid)
    st = analyst.strategy(rs)
    starts, mids, slowest = [], [], []
    exact = total = 0
    for g in range(games):
        _, sheets, firsts = played(rs, st, random.Random(g), mistakes=0.1)
        for k, (sheet, dice) in enumerate(zip(sheets[:-1], firsts, strict=True)):
            for dice_, throw, into in ((None, None, starts), (dice, 1, mids)):
                analyst.dists.clear()  # each position computed, not read from the cache
                began = time.perf_counter()
                pv = analyst.position_value(rs, sheet, dice_, throw)
                seconds = time.perf_counter() - began
                into.append(seconds)
                slowest.append((seconds, k, "mid-turn" if dice_ else "turn start"))
                exact += pv.distribution.exact
                total += 1
    for name, xs in (("turn starts", starts), ("after the first throw", mids)):
        print(f"distribution per turn, {vid}, {name} of {games} games ({len(xs):,}): "
              f"median {statistics.median(xs) * 1e3:.1f} ms, p99 "
              f"{percentile(xs, 99) * 1e3:.0f} ms, max {max(xs) * 1e3:.0f} ms "
              f"(target p99 <= 250 ms)")
    worst = sorted(slowest, reverse=True)[:3]
    print(f"distribution per turn, {vid}: exact at {exact:,} of {total:,} positions; slowest "
          + ", ".join(f"{s * 1e3:.0f} ms ({where}, {k} boxes filled)" for s, k, where in worst))


def house_rules_first_answer(vid: str, build: float) -> None:
    """Seconds from the first positions/value at the start of a game of new house rules to
    its answer, with a build process of its own (started and warmed first, as the server
    forks it warm from its master)."""
    base = Path(tempfile.mkdtemp(prefix="bench-house-"))
    settings = BuildSettings(base / "build", base / "tables", nice=0, threads=0)
    queue = BuildQueue(settings)
    advisor = Advisor(settings.table_dir, builds=queue, build_wait=0.05)
    analyst = Analyst(advisor)
    # a small table first: the build process starts and loads its kernels
    warm = effective_rules("generala", None, {"boxes": {"full_house": {"value": 31}}})
    ask_until_answered(analyst, warm)
    idle(queue)
    rs = effective_rules(vid, None, {"upper_bonus": {"threshold": 60, "amount": 40}})
    began = time.perf_counter()
    pv = ask_until_answered(analyst, rs)
    seconds = time.perf_counter() - began
    began = time.perf_counter()
    idle(queue)
    rest = time.perf_counter() - began + seconds
    print(f"house rules, {vid} (upper bonus 40 at 60): the first positions/value at the start "
          f"of a game answered after {seconds:.2f} s ({seconds / build:.1f} x the YAHTZEE "
          f"build; target 2 s), exact: {pv.distribution.exact}, mean {pv.mean:.4f}; the "
          f"moment tables (games/analyze) {rest:.1f} s after the request")


def idle(queue: BuildQueue) -> None:
    """Wait until the build process has no job left."""
    while queue.jobs():
        time.sleep(0.05)


def ask_until_answered(analyst: Analyst, rs):
    """positions/value at the start of a game, asked every 50 ms until it answers."""
    while True:
        try:
            return analyst.position_value(rs, None, None, None)
        except TableBuilding:
            time.sleep(0.05)


def play_to_win(vid: str, pairs: int) -> None:
    """A short head to head of the win bot (`bench_play_to_win.py`: run it for the
    README's figures)."""
    import bench_play_to_win as ptw

    tables = tempfile.mkdtemp(prefix="bench-win-")
    ptw.prepare(vid, tables)
    ptw.report(vid, *ptw.run(vid, pairs, 20261204, 1, tables))


def main() -> int:
    """Run every measure and print them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=20, help="play-to-win pairs (0: none)")
    ap.add_argument("--skip-house-rules", action="store_true")
    args = ap.parse_args()
    tables = tempfile.mkdtemp(prefix="bench-analysis-")
    advisor = Advisor(tables)
    analyst = Analyst(advisor)
    rs = effective_rules("yahtzee")
    build_strategy(rs)  # JIT warm-up
    build = timed(lambda: build_strategy(rs), 3)[0]
    st = advisor.strategy(rs)
    print(f"baseline: YAHTZEE table build {build:.2f} s")
    advice.suggest(st, [1, 2, 3, 4, 6], 1)
    sug = timed(lambda: advice.suggest(st, [1, 2, 3, 4, 6], 1), 50)[0]
    print(f"baseline: one suggestion {sug * 1e3:.2f} ms (median)")

    # the analysis tables of YAHTZEE and Yatzy, as the image ships them (`warm`)
    for vid in VARIANTS:
        vst = advisor.strategy(effective_rules(vid))
        began = time.perf_counter()
        analyst.moments(vst)
        mom = time.perf_counter() - began
        began = time.perf_counter()
        early = analyst.early_futures(vst, here=True)
        first = time.perf_counter() - began
        analyst.warm([vid])  # the start distribution, from the first turns' table
        sol = vst.parts[0].solution
        start = timed(lambda s=sol, v=vst: forward(s.kd, s.values, start_state(v), 0, None, 0),
                      1)[0]
        print(f"analysis tables, {vid}: moments {mom:.2f} s ({mom / build:.1f} x the YAHTZEE "
              f"build); the first four turns' distributions {first:.2f} s "
              f"({first / build:.1f} x), {early.nbytes / 2**20:.1f} MiB, "
              f"{len(early.flat):,} turn starts; the start distribution by a forward pass "
              f"{start:.2f} s ({start / build:.1f} x)")

    # 1. the distribution at every turn of whole games
    for vid in VARIANTS:
        per_turn(analyst, vid, args.games)

    # 2. house rules: time to the first answer
    if not args.skip_house_rules:
        for vid in VARIANTS:
            house_rules_first_answer(vid, build)

    # 3. analysis of a full game with keeps, coaching
    keeps = [(a.move.dice, a.move.announced) for a in advice.suggest(st, [1, 2, 3, 4, 6], 1)
             .moves if a.move.action == "keep"]
    analyst.coach(st, empty_sheet(rs), 1, keeps)
    coach = timed(lambda: analyst.coach(st, empty_sheet(rs), 1, keeps), 20)[0]
    print(f"coach, {len(keeps)} keeps on throw 1: {coach * 1e3:.2f} ms "
          f"({coach / sug:.1f} x a suggestion)")
    game, _, _ = played(rs, st, random.Random(20241130))
    decisions = sum(len(t["throws"]) for t in game["players"][0]["turns"])
    analyze(analyst, rs, game)
    med, worst = timed(lambda: analyze(analyst, rs, game), 20)
    print(f"analysis of a 13-turn YAHTZEE game with keeps ({decisions} decisions): "
          f"{med * 1e3:.1f} ms median, {worst * 1e3:.1f} ms max "
          f"({med / sug:.0f} x a suggestion; budget 20 ms)")

    # 4. win probability, 2-4 players mid-game, and the winning move
    games = [played(rs, st, random.Random(s), mistakes=0.1)[1] for s in range(6)]
    for players in (2, 3, 4):
        for open_boxes in (5, 7, 9, 11):
            sheets = [g[13 - open_boxes] for g in games[:players]]
            times = []
            for _ in range(3):
                analyst.dists.clear()
                analyst.win_cache.clear()
                began = time.perf_counter()
                out = win_probability(analyst, rs, sheets)
                times.append(time.perf_counter() - began)
            print(f"win probability, {players} players, {open_boxes} open boxes: "
                  f"{statistics.median(times) * 1e3:.0f} ms median (exact: {out.exact})")
    for open_boxes in (2, MAX_WIN_OPEN, 6, 9, 12):
        sheets = [g[13 - open_boxes] for g in games[:2]]
        times = []
        for _ in range(3):
            analyst.dists.clear()
            analyst.win_cache.clear()
            analyst.successors.clear()
            began = time.perf_counter()
            out = win_probability(analyst, rs, sheets, 0, [2, 3, 4, 5, 5], 1)
            times.append(time.perf_counter() - began)
        print(f"win probability with the winning move, 2 players, {open_boxes} open boxes: "
              f"{statistics.median(times) * 1e3:.0f} ms median (exact: "
              f"{out.move.exact})")

    # 5. playing to win, briefly
    if args.pairs:
        for vid in VARIANTS:
            play_to_win(vid, args.pairs)

    # memory: many requests, no growth beyond the caches' bounds
    gc.collect()
    before = rss_mib()
    for i in range(300):
        analyst.position_value(rs, games[i % 6][7 + i % 5], None, None)
        analyze(analyst, rs, game)
    gc.collect()
    mid = rss_mib()
    for i in range(300):
        analyst.position_value(rs, games[i % 6][7 + i % 5], None, None)
        analyze(analyst, rs, game)
    gc.collect()
    after = rss_mib()
    print(f"memory: {before:.0f} MiB, after 300 requests {mid:.0f} MiB, after 600 "
          f"{after:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
