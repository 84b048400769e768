"""Play to win, measured: two-player games of a bot playing to win (`objective: "win"`,
`analyst.rank_to_win`, level expert) against the expected-score optimum, and how often the
approximation picks the exact winning move late in a game.

    python bench/bench_play_to_win.py [--pairs N] [--variants yahtzee yatzy]
                                      [--seed S] [--jobs 2]

Head to head: pair k is two games with the seats swapped. Each seat throws the dice of its
own seeded stream (`random.Random` of the pair and the seat), whoever sits there, so the two
games of a pair share their dice as far as the players' keeps let them. A game's winner
takes 1, a tie is shared (rule book decision 13); the win bot's rate is its mean share over
both games of every pair, with a 95% interval from the spread of the pairs' means.

Agreement: at every decision of the win bot with at most `winprob.MAX_WIN_OPEN` open boxes
(where the exact winning move is known) the approximation played before them (`win_shares(...,
approximate=True)`: each move's exact distribution of the final total, Pawlewicz's way) is
computed too: the share of decisions where it picks a move of the exact best share (within
1e-9), and the worst and mean loss of chance to win when it does not (the exact share of the
exact best minus the exact share of its pick).

Before and after a change of method: run this file from each checkout with the same
arguments (the dice of pair k are the same in both).

`--jobs`: processes sharing the pairs (each with one kernel thread); the games do not depend
on it (pair k's dice come from its own seed).

Not a test: the numbers are the README's.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

from service.advisor import Advisor
from service.advisor.advice.bots import play_bot_turn
from service.advisor.advice.moves import Suggestion
from service.advisor.analysis.analyst import Analyst
from service.advisor.objectives.win import player_values, rank_to_win, win_shares
from service.domain.rules import RuleSet, effective_rules
from service.domain.scoring import Sheet, empty_sheet, score_sheet

MAX_OPEN = 4  # winprob.MAX_WIN_OPEN: the exact winning move


class Agreement:
    """The approximation against the exact winning move, decision by decision."""

    def __init__(self) -> None:
        self.decisions = 0
        self.same = 0
        self.losses: list[float] = []

    def check(self, analyst: Analyst, rs: RuleSet, ranked: Suggestion, dice: list[int],
              throw: int, sheet: Sheet, em_baixo: bool, opponent: Sheet) -> None:
        """Compare the two at a decision the exact shares ranked (`ranked`)."""
        values = player_values(analyst, rs, [opponent], -1, None, None, False, lambda i: "")
        approx = win_shares(analyst, rs, sheet, dice, throw, em_baixo, ranked,
                            [values[0].distribution], None, approximate=True)[0]
        exact = [a.win_share or 0.0 for a in ranked.moves]
        pick = max(range(len(approx)), key=lambda i: (approx[i],
                                                      ranked.moves[i].expected_final_score))
        loss = max(exact) - exact[pick]
        self.decisions += 1
        if loss <= 1e-9:
            self.same += 1
        else:
            self.losses.append(loss)

    def merge(self, other: Agreement) -> None:
        """Add another process's decisions."""
        self.decisions += other.decisions
        self.same += other.same
        self.losses += other.losses


def game(analyst: Analyst, rs: RuleSet, pair: int, seed: int, win_seat: int,
         agreement: Agreement | None) -> float:
    """One game, the win bot in `win_seat`: its share of the win."""
    st = analyst.strategy(rs)
    streams = [random.Random(f"{seed}-{pair}-{s}") for s in (0, 1)]
    sheets = [empty_sheet(rs), empty_sheet(rs)]
    while True:
        for s in (0, 1):
            if score_sheet(rs, sheets[s]).complete:
                totals = [int(score_sheet(rs, sh).total) for sh in sheets]
                if totals[win_seat] == totals[1 - win_seat]:
                    return 0.5
                return 1.0 if totals[win_seat] > totals[1 - win_seat] else 0.0
            rank = None
            if s == win_seat:
                opponent = sheets[1 - s]

                def rank(ranked: Suggestion, dice: list[int], throw: int, sheet: Sheet,
                         em_baixo: bool, opponent: Sheet = opponent) -> Suggestion:
                    out = rank_to_win(analyst, rs, sheet, dice, throw, em_baixo, [opponent],
                                      ranked)
                    if agreement is not None and sheet.open_boxes <= MAX_OPEN and out.win_exact:
                        agreement.check(analyst, rs, out, dice, throw, sheet, em_baixo,
                                        opponent)
                    return out
            sheets[s] = play_bot_turn(st, sheets[s], streams[s], "expert", pair, None, rank)


def head_to_head(analyst: Analyst, rs: RuleSet, pairs: range, seed: int,
                 agreement: Agreement) -> list[float]:
    """Each pair's mean share of the win bot (both seats)."""
    out = []
    for k in pairs:
        out.append((game(analyst, rs, k, seed, 0, agreement)
                    + game(analyst, rs, k, seed, 1, agreement)) / 2)
    return out


_analysts: dict[str, Analyst] = {}  # a process's, by variant


def _job(vid: str, pairs: range, seed: int, tables: str) -> tuple[list[float], Agreement]:
    """Some of a variant's pairs, in a process of its own with one kernel thread, its
    tables memory-mapped from `tables` (made once by `prepare`)."""
    rs = effective_rules(vid)
    analyst = _analysts.get(vid)
    if analyst is None:
        analyst = _analysts[vid] = Analyst(Advisor(tables), threads=1)
    agreement = Agreement()
    return head_to_head(analyst, rs, pairs, seed, agreement), agreement


def prepare(vid: str, tables: str) -> None:
    """The variant's tables into `tables`, once for every process: the value tables and
    every analysis table (`Analyst.warm`, as the image ships them)."""
    Analyst(Advisor(tables)).warm([vid])


def run(vid: str, pairs: int, seed: int, jobs: int, tables: str
        ) -> tuple[list[float], Agreement, float]:
    """The head to head of `pairs` pairs on `jobs` processes: each pair's share, the
    agreement, seconds."""
    block = 50  # pairs a task: the processes take blocks in turn, and finish together
    agreement = Agreement()
    shares: list[float] = []
    began = time.perf_counter()
    blocks = [range(a, min(a + block, pairs)) for a in range(0, pairs, block)]
    with ProcessPoolExecutor(jobs) as pool:
        for part, agreed in pool.map(_job, [vid] * len(blocks), blocks,
                                     [seed] * len(blocks), [tables] * len(blocks)):
            shares += part
            agreement.merge(agreed)
    return shares, agreement, time.perf_counter() - began


def report(vid: str, shares: list[float], agreement: Agreement, seconds: float) -> None:
    """Print the head to head with its 95% interval and the agreement."""
    mean = statistics.fmean(shares)
    half = 1.96 * statistics.stdev(shares) / len(shares) ** 0.5 if len(shares) > 1 else 0
    print(f"{vid}: win bot against the expected-score optimum, {2 * len(shares):,} games "
          f"({len(shares):,} pairs, seats swapped, dice shared): {100 * mean:.2f}% "
          f"(95% interval {100 * (mean - half):.2f}-{100 * (mean + half):.2f}%); "
          f"{seconds:.0f} s")
    if agreement.decisions:
        worst = max(agreement.losses, default=0.0)
        lost = statistics.fmean(agreement.losses) if agreement.losses else 0.0
        print(f"{vid}: approximation vs exact winning move, {agreement.decisions:,} "
              f"decisions with at most {MAX_OPEN} open boxes: same move "
              f"{100 * agreement.same / agreement.decisions:.1f}%, worst loss "
              f"{100 * worst:.3f} points of chance to win (mean {100 * lost:.3f} when it "
              f"differs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=10000, help="pairs of games (seats swapped)")
    ap.add_argument("--variants", nargs="*", default=["yahtzee", "yatzy"])
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--jobs", type=int, default=1, help="processes sharing the pairs")
    args = ap.parse_args()
    tables = tempfile.mkdtemp(prefix="bench-win-")
    for vid in args.variants:
        prepare(vid, tables)
        report(vid, *run(vid, args.pairs, args.seed, max(1, args.jobs), tables))


if __name__ == "__main__":
    main()
