"""Calibrate the computer players: seeded solitaire games of every built-in variant at every
level (`service/advisor/advice/bots.py`), and the time a bot move takes.

    python bench/bench_bots.py [--games N] [--major-games N] [--variants yahtzee ...]
                               [--chart docs/bot-levels.svg] [--jobs 2]

Prints, per variant and level, the mean, SD and median final score with the standard error
of the mean and the mean regret per decision (expected final score given up against the
advisor's best move, averaged over every keep and box the bot chose), then the median time of
a bot move in process. Writes an SVG chart of YAHTZEE's score distribution per level (drawn
here: no plotting library). Games are seeded (`bots.play_game`: game g of a variant throws the dice
of `random.Random(g)` at every level, and the bot draws from seed g), so a run repeats
exactly.
Not a test: the numbers are the README's table.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from service.advisor import Advisor
from service.advisor.advice.bots import LEVEL_NAMES, play_bot_turn, play_game
from service.advisor.analysis.analyst import Analyst
from service.advisor.objectives.win import rank_to_win
from service.domain.rules import effective_rules
from service.domain.scoring import empty_sheet
from service.domain.variants import VARIANT_IDS

#: Variants the issue asks 10,000 games a level of (the others: 2,000).
MAJOR = ("yahtzee", "yatzy", "generala")


def run_variant(advisor: Advisor, vid: str, games: int) -> dict[str, dict[str, float]]:
    """Every level's statistics on `games` seeded games of a built-in variant."""
    st = advisor.strategy(effective_rules(vid))
    out = {}
    for level in LEVEL_NAMES:
        finals, regrets = [], []
        for g in range(games):
            total, rs_ = play_game(st, level, g)
            finals.append(total)
            regrets.extend(rs_)
        sd = statistics.pstdev(finals)
        out[level] = {"mean": statistics.fmean(finals), "sd": sd,
                      "se": sd / len(finals) ** 0.5, "median": statistics.median(finals),
                      "regret": statistics.fmean(regrets), "finals": finals}
    return out


def move_time(advisor: Advisor, vid: str, n: int = 400) -> float:
    """Median seconds of a bot move in process (`Advisor.bot`, the moves/bot work)."""
    rs = effective_rules(vid)
    advisor.strategy(rs)
    hands = [[1, 3, 3, 5, 6], [2, 2, 4, 5, 6], [6, 6, 6, 1, 2], [1, 2, 3, 4, 6]]
    times = []
    for i in range(n):
        t = time.perf_counter()
        dice = hands[i % 4][:rs.variant.dice] + [1] * (rs.variant.dice - 5)
        ranked = advisor.suggest(rs, dice, 1 + i % 3)
        advisor.bot(rs, ranked, dice, 1 + i % 3, None, False, LEVEL_NAMES[i % 4], i)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def win_move_times(advisor: Advisor, analyst: Analyst, vid: str, seed: int = 1
                   ) -> list[tuple[int, float]]:
    """Seconds of a win-objective bot move (`analyst.rank_to_win`, then the draw) at every
    turn of one seeded two-player game (both players expert under the score objective, so
    the positions are those of a real game): (open boxes of the player to move, seconds),
    one move a turn, on the turn's first throw. One analyst serves every game, as in a
    server (where the first request of a variant also loads its reachable states)."""
    rs = effective_rules(vid)
    st = advisor.strategy(rs)
    out = []
    sheets = [empty_sheet(rs), empty_sheet(rs)]
    for turn in range(2 * len(rs.variant.box_ids)):
        me = turn % 2
        rng = random.Random(seed * 1000 + turn)
        dice = sorted(rng.randint(1, 6) for _ in range(rs.variant.dice))
        t = time.perf_counter()
        ranked = rank_to_win(analyst, rs, sheets[me], dice, 1, False, [sheets[1 - me]],
                             advisor.suggest(rs, dice, 1, sheets[me]))
        advisor.bot(rs, ranked, dice, 1, sheets[me], False, "expert", seed)
        out.append((sheets[me].open_boxes,
                    time.perf_counter() - t))
        # the game goes on with the score objective's whole turn (play_game's engine)
        sheets[me] = play_bot_turn(st, sheets[me], rng)
    return out


def svg_chart(stats: dict[str, dict[str, float]], path: Path, title: str) -> None:
    """Score distributions per level as lines over 10-point bins, an SVG of our own."""
    width, height, pad = 720, 360, 48
    colours = {"beginner": "#d95f02", "casual": "#7570b3", "strong": "#1b9e77",
               "expert": "#222222"}
    lo = min(min(s["finals"]) for s in stats.values()) // 10 * 10
    hi = max(max(s["finals"]) for s in stats.values()) // 10 * 10 + 10
    bins = list(range(int(lo), int(hi) + 10, 10))
    shares = {}
    for level, s in stats.items():
        counts = [0] * len(bins)
        for v in s["finals"]:
            counts[int((v - lo) // 10)] += 1
        shares[level] = [c / len(s["finals"]) for c in counts]
    top = max(max(v) for v in shares.values())

    def x(i: float) -> float:
        return pad + (width - 2 * pad) * i / (len(bins) - 1)

    def y(v: float) -> float:
        return height - pad - (height - 2 * pad) * v / top

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
             'stroke="#888"/>']
    for i, b in enumerate(bins):
        if b % 50 == 0:
            parts.append(f'<text x="{x(i):.1f}" y="{height - pad + 16}" '
                         f'text-anchor="middle">{b}</text>')
    parts.append(f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle">final score '
                 '(10-point bins)</text>')
    for k, (level, vals) in enumerate(shares.items()):
        pts = " ".join(f"{x(i + 0.5):.1f},{y(v):.1f}" for i, v in enumerate(vals))
        parts.append(f'<polyline fill="none" stroke="{colours[level]}" stroke-width="2" '
                     f'points="{pts}"/>')
        s = stats[level]
        parts.append(f'<text x="{width - pad - 170}" y="{pad + 16 * k}" '
                     f'fill="{colours[level]}">{level}: mean {s["mean"]:.1f}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def _variant_job(vid: str, games: int) -> tuple[str, int, dict, float]:
    """One variant's games, in a process of its own (`--jobs`)."""
    started = time.perf_counter()
    advisor = Advisor(tempfile.mkdtemp(prefix="bench-bots-"))
    return vid, games, run_variant(advisor, vid, games), time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=2000, help="games a level, most variants")
    ap.add_argument("--major-games", type=int, default=10000,
                    help="games a level for YAHTZEE, Yatzy and Generala")
    ap.add_argument("--variants", nargs="*", default=list(VARIANT_IDS))
    ap.add_argument("--chart", default="docs/bot-levels.svg")
    ap.add_argument("--jobs", type=int, default=1, help="variants played side by side")
    args = ap.parse_args()
    print("| variant | level | games | mean (SE) | SD | median | regret/decision |")
    print("|---|---|---|---|---|---|---|")
    jobs = [(vid, args.major_games if vid in MAJOR else args.games) for vid in args.variants]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for vid, games, stats, seconds in pool.map(_variant_job, *zip(*jobs, strict=True)):
            for level, s in stats.items():
                print(f"| {vid} | {level} | {games:,} | {s['mean']:.2f} ({s['se']:.2f}) | "
                      f"{s['sd']:.1f} | {s['median']:g} | {s['regret']:.3f} |", flush=True)
            if vid == "yahtzee" and args.chart:
                svg_chart(stats, Path(args.chart),
                          f"YAHTZEE: final scores of {games:,} games a level")
            print(f"<!-- {vid}: {seconds:.0f} s -->", flush=True)
    advisor = Advisor(tempfile.mkdtemp(prefix="bench-bots-"))
    for vid in ("yahtzee", "yatzy", "generala"):
        if vid in args.variants:
            print(f"bot move in process, {vid}: median {move_time(advisor, vid) * 1e3:.2f} ms")
    analyst = Analyst(advisor)
    for vid in ("yahtzee", "yatzy"):
        if vid in args.variants:
            win_move_times(advisor, analyst, vid, 0)  # the variant's first game: warm-up
            times = [t for seed in (1, 2, 3) for t in win_move_times(advisor, analyst, vid,
                                                                      seed)]
            worst = max(times, key=lambda x: x[1])
            print(f"win-objective bot move, two players, {vid}: median "
                  f"{statistics.median(t for _, t in times) * 1e3:.0f} ms, slowest "
                  f"{worst[1] * 1e3:.0f} ms ({worst[0]} open boxes), over "
                  f"{len(times)} turns of three games")


if __name__ == "__main__":
    main()
