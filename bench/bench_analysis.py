"""Benchmark of the analysis (issue 10's budgets), in process, with ratios to baselines
measured in the same run: the YAHTZEE table build and one `moves/suggest` suggestion.

    python bench/bench_analysis.py            # every figure (a minute or two)

Budgets: analysis of a full 13-turn YAHTZEE game with keeps <= 20 ms; the distribution from
the start of a game <= 2 s (exact; every built-in variant solved exactly); from mid-game
positions <= 200 ms; win probability for 2-4 players mid-game <= 200 ms; no growth of memory
with requests.
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.advisor import Advisor
from service.advisor.advice import moves as advice
from service.advisor.analysis.analyst import Analyst, win_probability
from service.advisor.analysis.games import analyze
from service.advisor.kernels.winprob import MAX_WIN_OPEN
from service.advisor.tables.strategies import build_strategy, start_state
from service.domain.rules import effective_rules
from service.domain.scoring import empty_sheet, score_sheet
from service.domain.variants import VARIANTS


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
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def played(rs, st, rng: random.Random, turns: int | None = None, mistakes: float = 0.2):
    """A seeded game of the advisor's play with random deviations: (the game of one player as
    games/validate and games/analyze take it, with its keeps; the sheets at each turn
    start)."""
    sheet = empty_sheet(rs)
    out, sheets = [], []
    n = rs.variant.dice
    for _ in range(turns or len(rs.variant.box_ids)):
        if score_sheet(rs, sheet)["complete"]:
            break
        sheets.append(_copy(sheet))
        dice = sorted(rng.randint(1, 6) for _ in range(n))
        throws, kept = [], []
        for t in range(1, rs.variant.throws + 1):
            alts = advice.suggest(st, dice, t, sheet).alternatives
            a = alts[0] if rng.random() > mistakes else rng.choice(alts)
            if a.action == "keep":
                throws.append(list(dice))
                kept.append(list(a.dice))
                dice = sorted(a.dice + [rng.randint(1, 6) for _ in range(n - len(a.dice))])
                continue
            throws.append(list(dice))
            out.append({"throws": throws, "kept": kept, "box": a.box})
            sheet.columns[0].boxes[a.box] = a.score
            if a.five_of_a_kind_bonus:
                sheet.columns[0].five_of_a_kind_bonuses += 1
            break
    sheets.append(_copy(sheet))
    return {"players": [{"turns": out}]}, sheets


def _copy(sheet):
    from copy import deepcopy

    return deepcopy(sheet)


def main() -> int:
    """Run every measure and print them."""
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

    began = time.perf_counter()
    analyst.moments(st)
    mom = time.perf_counter() - began
    print(f"moment tables (mean, second moment), YAHTZEE: {mom:.2f} s "
          f"({mom / build:.1f} x the table build)")

    # coaching: suggest plus every keep's turn outlook
    keeps = [(tuple(a.dice), a.em_baixo) for a in advice.suggest(st, [1, 2, 3, 4, 6], 1)
             .alternatives if a.action == "keep"]
    analyst.coach(st, empty_sheet(rs), 1, keeps)
    coach = timed(lambda: analyst.coach(st, empty_sheet(rs), 1, keeps), 20)[0]
    print(f"coach, {len(keeps)} keeps on throw 1: {coach * 1e3:.2f} ms "
          f"({coach / sug:.1f} x a suggestion)")

    # 1. analysis of a full game with keeps
    rng = random.Random(20241130)
    game, _ = played(rs, st, rng)
    decisions = sum(len(t["throws"]) for t in game["players"][0]["turns"])
    analyze(analyst, rs, game)
    med, worst = timed(lambda: analyze(analyst, rs, game), 20)
    print(f"analysis of a 13-turn YAHTZEE game with keeps ({decisions} decisions): "
          f"{med * 1e3:.1f} ms median, {worst * 1e3:.1f} ms max "
          f"({med / sug:.0f} x a suggestion; budget 20 ms)")

    # 2. distribution from the start and from mid-game positions
    for vid in VARIANTS:  # every built-in variant solved exactly (one part)
        vrs = effective_rules(vid)
        vst = advisor.strategy(vrs)
        if len(vst.parts) != 1:
            continue
        start = start_state(vst)
        first = timed(lambda s=vst, a=start: analyst.exact_distribution(s, a), 3)[0]
        analyst.start_distribution(vst)
        again = timed(lambda r=vrs: analyst.position_value(r, None, None, None), 5)[0]
        print(f"distribution from the start, {vid}: computed in {first:.2f} s (median of 3; "
              f"{first / build:.1f} x the YAHTZEE build), then cached: {again * 1e3:.1f} ms")
    games = [played(rs, st, random.Random(s), mistakes=0.1)[1] for s in range(6)]
    for open_boxes in (4, 6, 8, 10, 12):
        sheets = [g[13 - open_boxes] for g in games]
        times = []
        exact = 0
        for sh in sheets:
            analyst.dists.clear()
            analyst.win_cache.clear()
            began = time.perf_counter()
            pv = analyst.position_value(rs, sh, None, None)
            times.append(time.perf_counter() - began)
            exact += pv.distribution.exact
        print(f"distribution, YAHTZEE mid-game, {open_boxes} open boxes: "
              f"{statistics.median(times) * 1e3:.0f} ms median, {max(times) * 1e3:.0f} ms "
              f"max, {exact}/{len(sheets)} exact (budget 200 ms)")

    # 3. win probability, 2-4 players mid-game
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
                  f"{statistics.median(times) * 1e3:.0f} ms median "
                  f"(exact: {out['exact']}; budget 200 ms)")

    # the winning move (the mover's dice given), 2 players, up to winprob.MAX_WIN_OPEN boxes
    for open_boxes in range(2, MAX_WIN_OPEN + 1):
        sheets = [g[13 - open_boxes] for g in games[:2]]
        times = []
        for _ in range(3):
            analyst.dists.clear()
            analyst.win_cache.clear()
            began = time.perf_counter()
            out = win_probability(analyst, rs, sheets, 0, [2, 3, 4, 5, 5], 1)
            times.append(time.perf_counter() - began)
        print(f"win probability with the winning move, 2 players, {open_boxes} open boxes: "
              f"{statistics.median(times) * 1e3:.0f} ms median (exact: "
              f"{out['move']['exact']}; budget 200 ms)")

    # memory: many requests, no growth beyond the caches' bounds
    gc.collect()
    before = rss_mib()
    for i in range(300):
        sh = games[i % 6][7 + i % 5]
        analyst.position_value(rs, sh, None, None)
        analyze(analyst, rs, game)
    gc.collect()
    mid = rss_mib()
    for i in range(300):
        sh = games[i % 6][7 + i % 5]
        analyst.position_value(rs, sh, None, None)
        analyze(analyst, rs, game)
    gc.collect()
    after = rss_mib()
    print(f"memory: {before:.0f} MiB, after 300 requests {mid:.0f} MiB, after 600 "
          f"{after:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
