"""The README's table of final-score figures for every built-in variant under the advisor's
play, and the measurement of the approximate methods by simulating their own play.

    python bench/analysis_table.py               # every built-in variant, then the column
                                                 # sheets (a quarter of an hour on 2 cores)
    python bench/analysis_table.py yahtzee yatzy # some variants (ids, or id+columns)

Exact variants: mean and standard deviation from the moment tables, percentiles from the
exact start distribution; P(five-of-a-kind bonus) and P(upper bonus) from seeded games of
the advisor's play (their standard errors printed). Approximate methods (Maxi Yatzy, column
sheets): everything from seeded games, enough for a standard error of the mean under 0.5.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.advisor import Advisor
from service.advisor.analysis.analyst import Analyst
from service.advisor.analysis.simulate import simulate
from service.advisor.solving.positions import Position
from service.domain.rules import effective_rules
from service.domain.scoring import empty_sheet
from service.domain.variants import VARIANT_IDS, VARIANTS

SEED = 20241130
BONUS_GAMES = 20_000


def simulate_games(st, pos: Position, n_games: int, seed: int) -> np.ndarray:
    """`n_games` games of the advisor's play from a position (seeded): rows of final
    totals, upper bonuses won (one per column or section that has one) and five-of-a-kind
    bonuses won, told from the points each turn gave beyond its box's score (the
    simulation's trace)."""
    extras = np.zeros((n_games, pos.open_boxes), np.int64)
    totals = simulate(st, pos, n_games, seed, trace=extras)
    v = st.rs.variant
    a = v.upper_bonus.amount if v.upper_bonus else 0
    f = v.five_of_a_kind_bonus.amount if v.five_of_a_kind_bonus else 0
    # a five-of-a-kind bonus is `f`, or `f + a` when the same placement also crossed the
    # upper threshold; any other extra is an upper bonus
    five = (f > 0) & (f != a) & ((extras == f) | (extras == f + a))
    upper = (extras > 0) & (~five | (extras == f + a))
    return np.stack([totals, upper.sum(axis=1), five.sum(axis=1)])


def row(analyst: Analyst, vid: str, columns: bool) -> str:
    """One markdown row of the table."""
    rs = effective_rules(vid, {"columns": True} if columns else None)
    st = analyst.strategy(rs)
    pos = Position.of(st, empty_sheet(rs))
    began = time.perf_counter()
    name = f"`{vid}`" + (" columns" if columns else "")
    if st.exact:
        pv = analyst.position_value(rs, None, None, None)
        d = analyst.start_distribution(st)
        games = simulate_games(st, pos, BONUS_GAMES, SEED)
        mean, sd = f"{pv.mean:.2f}", f"{pv.sd:.2f}"
        pct = [d.percentile(q) for q in (5, 25, 50, 75, 95)]
        how = f"exact; bonuses from {BONUS_GAMES:,} games"
    else:
        games = simulate_games(st, pos, 2_000, SEED)
        need = int((games[0].std() / 0.45) ** 2) + 1
        games = simulate_games(st, pos, max(need, 2_000), SEED)
        se = games[0].std(ddof=1) / np.sqrt(games.shape[1])
        mean = f"{games[0].mean():.2f} ± {se:.2f}"
        sd = f"{games[0].std(ddof=1):.2f}"
        pct = [int(np.percentile(games[0], q, method="inverted_cdf"))
               for q in (5, 25, 50, 75, 95)]
        advisor_estimate = sum(p.solution.start_value for p in st.parts)
        how = (f"{games.shape[1]:,} games of its own play; the method's own estimate "
               f"{advisor_estimate:.2f}")
    n = games.shape[1]
    has_five = rs.variant.five_of_a_kind_bonus is not None
    has_upper = rs.variant.upper_bonus is not None
    p5 = (games[2] > 0).mean()
    pu = (games[1] > 0).mean() if not columns else games[1].mean() / 4
    five = f"{p5:.4f} ± {np.sqrt(p5 * (1 - p5) / n):.4f}" if has_five else "—"
    upper = (f"{pu:.3f} ± {np.sqrt(pu * (1 - pu) / n):.3f}" if has_upper else "—")
    seconds = time.perf_counter() - began
    return (f"| {name} | {mean} | {sd} | {' / '.join(map(str, pct))} | {five} | {upper} "
            f"| {how} ({seconds:.0f} s) |")


def main(argv: list[str]) -> int:
    """Print the table rows."""
    analyst = Analyst(Advisor(tempfile.mkdtemp(prefix="analysis-table-")))
    todo = []
    if argv:
        for a in argv:
            vid, _, col = a.partition("+")
            todo.append((vid, bool(col)))
    else:
        todo = [(v, False) for v in VARIANT_IDS]
        todo += [(v, True) for v in VARIANT_IDS
                 if any(o.name == "columns" for o in VARIANTS[v].options)]
    print("| variant | mean | SD | percentiles 5 / 25 / 50 / 75 / 95 | P(five-of-a-kind "
          "bonus) | P(upper bonus) | how |")
    print("|---|---|---|---|---|---|---|")
    for vid, columns in todo:
        print(row(analyst, vid, columns), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
