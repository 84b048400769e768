"""Games played by the advisor's own policy, with seeded dice: the final totals.

Every turn is played as `moves.suggest` plays it: scoring a hand now is worth the best, over
the strategy's parts, of its box's points plus the part's next value minus the part's value
now (`moments.score2` on the solver's float32 tables, read in float64); keeps follow
`turn.turn_tables2` (the within-turn recursion, "em baixo" and saved throws included). This
is what measures the approximate methods (column sheets, Maxi Yatzy), whose values are not
the exact expectation of their own play, and what checks the exact distribution.
"""

from __future__ import annotations

import numpy as np

from ...domain.scoring import empty_sheet
from ..kernels.selfplay import play, play_lanes
from ..solving.positions import Position
from ..solving.strategy import Strategy

#: What `simulate` passes the kernels when no trace is asked for (one array type: one
#: compiled version of each kernel).
NO_TRACE = np.empty((0, 0), np.int64)


def simulate(st: Strategy, pos: Position, n_games: int, seed: int, throw: int = 1,
             hand: int = -1, trace: np.ndarray | None = None) -> np.ndarray:
    """Final totals of `n_games` games of the advisor's play from a position (seeded), from
    the start of a turn or with hand index `hand` after throw `throw`. `trace` (int64,
    a row per game, a column per open box) receives, turn by turn, the points each
    placement gave beyond its box's score (`kernels.selfplay`)."""
    trace = NO_TRACE if trace is None else trace
    keeps0 = st.parts[0].solution.model.keeps
    if len(st.parts) == 1 and not st.rs.variant.saved_throws:
        sol = st.parts[0].solution
        return play_lanes(sol.kd, sol.values, np.array(pos.states[0][:3], np.int64),
                          pos.total, int(n_games), int(seed), int(throw), int(hand),
                          keeps0.size, keeps0.keep_hand, trace)
    kds = tuple(p.solution.kd for p in st.parts)
    tabs = tuple(np.asarray(p.solution.values) for p in st.parts)
    keeps = st.parts[0].solution.model.keeps
    st0 = np.array([s[:3] for s in pos.states], np.int64)
    v = st.rs.variant
    return play(kds, tabs, st0, pos.total, pos.sheet.saved_throws, v.throws,
                bool(v.saved_throws), float(st.saved_throw_value), int(n_games), int(seed),
                int(throw), int(hand), keeps.size, keeps.keep_hand, trace)


def compile_play(st: Strategy) -> None:
    """Compile `play` (or load it from numba's cache) for every number of parts a strategy
    may have: 1 or 2 (Maxi Yatzy's sections, one of them removed by house rules) and 4
    (column sheets). numba compiles one version per tuple length; each is run here on a
    one-part strategy's tables repeated, one game, so that the first request that samples
    a column sheet or Maxi Yatzy does not wait half a minute for the compiler."""
    sol = st.parts[0].solution
    keeps = sol.model.keeps
    row = np.array(Position.of(st, empty_sheet(st.rs)).states[0][:3], np.int64)
    values = np.asarray(sol.values)
    for n in (1, 2, 4):
        play((sol.kd,) * n, (values,) * n, np.tile(row, (n, 1)), 0, 0, 3, True, 0.0, 1, 0,
             1, -1, keeps.size, keeps.keep_hand, NO_TRACE)
