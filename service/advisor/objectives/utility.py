"""A utility of the final total maximised: what each of a position's moves is worth when the
player values a final total x at u(x) (the `win` objective: the share of the win against the
others' totals; the `target` objective: 1 when x reaches the target) and plays on to
maximise E[u(final)].

`move_utilities` values every move three ways, by what the strategy allows:

- exact (`EXACT`): a backward induction over the player's own states and totals with u in
  place of points (`winprob.win_tables`), the player maximising E[u] from then on: one-part
  strategies with at most `winprob.MAX_WIN_OPEN` open boxes;
- Pawlewicz's way (`DISTRIBUTIONS`): each move's exact distribution of the final total under
  the advisor's expected-score play after it (`Analyst.successor_futures`, forward passes),
  E[u] of it: exact for that play, a lower bound of the best E[u] (one-part strategies
  before that);
- normal (`NORMAL`): each move's final total taken as normal with its exact mean and
  variance (column sheets, Maxi Yatzy).

Where a first throw wins at once (`instant`, playing to win), a later turn's win at once is
worth the chance that no one else has won before it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ...domain.moves import ScoreBox
from ...domain.rules import RuleSet
from ...domain.scoring import Sheet, score_hand
from ...domain.turn import apply_turn
from ..advice.moves import Suggestion
from ..analysis.analyst import Analyst, _shifted, flat_index
from ..analysis.turn_view import TurnView, start_moments
from ..kernels.distribution import Distribution, first_turn_records, forward, gain_bits
from ..kernels.model import instant_chance, instant_hands
from ..kernels.winprob import MAX_WIN_OPEN, gain_bounds, normal_cdf, survival, win_tables
from ..solving.positions import Position
from ..solving.strategy import Strategy

#: How the moves were valued (`move_utilities`' second answer).
EXACT, DISTRIBUTIONS, NORMAL = "exact", "distributions", "normal"


def move_utilities(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int],
                   throw: int | None, sug: Suggestion, em_baixo: bool,
                   util_of: Callable[[int, int], np.ndarray],
                   instant: list[np.ndarray] | None = None, approximate: bool = False,
                   ) -> tuple[list[float], str]:
    """E[u(final)] after each of `sug.moves`, and how it was computed (`EXACT`,
    `DISTRIBUTIONS`, `NORMAL`: see the module's docstring). `util_of(total, top)`: u of the
    final totals total, total + 1, ... (its last entry counting every higher total), `top`
    being above the highest total the position reaches (one-part strategies; a generous
    bound otherwise). `instant`: the others' `winprob.instant_times` (playing to win where a
    first throw wins at once). `approximate`: Pawlewicz's way wherever (to measure it
    against the exact values)."""
    st = analyst.strategy(rs)
    pos = analyst.position(st, sheet)
    t = throw or 1
    one_part = len(st.parts) == 1 and not rs.variant.saved_throws
    exact = one_part and pos.open_boxes <= MAX_WIN_OPEN and not approximate
    if one_part:
        kd = st.parts[0].solution.kd
        top = pos.total + gain_bounds(kd, pos.states[0][0])((1 << kd.nb) - 1) + 1
    else:
        top = pos.total + int(max(a.expected_final_score for a in sug.moves)
                              - pos.total) * 3 + 50
    util = util_of(pos.total, top)
    args = (analyst, st, pos, sheet, dice, t, em_baixo, sug, util, instant)
    if exact:
        return _exact_shares(*args), EXACT
    if one_part:
        return _distribution_shares(*args), DISTRIBUTIONS
    return _normal_shares(*args), NORMAL


def ranked_by(sug: Suggestion, objective: str, measure: str, values: list[float],
              extra: Any) -> Suggestion:
    """The suggestion's moves ranked by `values` (each move's `measures[measure]`), the best
    first, ties (equal to 1e-9) by expected final score and sharing a rank; `regret` stays
    the expected final score given up against the expected-score best. `extra`: what the
    objective adds to the answer (a dataclass of its `Objective.answer` fields)."""
    for a, v in zip(sug.moves, values, strict=True):
        a.measures[measure] = v
    order = sorted(sug.moves, key=lambda a: (-round(a.measures[measure], 9),
                                                    -a.expected_final_score))
    rounded = [round(a.measures[measure], 9) for a in order]
    equal = Counter(rounded)
    rank = 1
    for i, (a, here) in enumerate(zip(order, rounded, strict=True)):
        if i and here < rounded[i - 1]:
            rank = i + 1
        a.rank = rank
        a.tie = equal[here] > 1
    return replace(sug, best=order[0], moves=order, objective=objective, extra=extra)


def _own_instant(pos: Position, instant: list[np.ndarray] | None, later: int
                 ) -> np.ndarray | None:
    """Per turn from now (0 = this one), the chance that no one else has won at once before
    the player's turn: the worth of a win at once then (None where nothing wins at once).
    `later`: the turns looked at."""
    if instant is None:
        return None
    n = len(instant) + 1
    alive = np.ones(n * (later + 1))
    for times in instant:
        alive *= survival(times, len(alive))
    return alive[::n]  # the player to move's turns: slots 0, n, 2n, ...


def _exact_shares(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet,
                  dice: list[int], throw: int, em_baixo: bool, sug: Suggestion,
                  util: np.ndarray, instant: list[np.ndarray] | None) -> list[float]:
    """E[u(final)] by the backward induction (`winprob.win_tables`)."""
    rs = st.rs
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    kd = st.parts[0].solution.kd
    model = st.parts[0].solution.model
    state = tuple(int(x) for x in pos.states[0][:3])
    iwh = instant_hands(rs)
    at_once = _own_instant(pos, instant, pos.open_boxes) if iwh is not None else None
    digest = hashlib.blake2b(util.tobytes(), digest_size=16)
    if at_once is not None:
        digest.update(at_once.tobytes())
    wins = analyst.win_cache.get(
        rs, (rs.fingerprint, state, len(util), digest.digest()),
        lambda: win_tables(st, state, util, analyst.reachable_levels(st),
                           iwh if at_once is not None else None, at_once))
    h = rs.hand_index[hs.scored_dice]
    options = wins.options(kd, state, throw, h)
    out = []
    for a in sug.moves:
        m = a.move
        if isinstance(m, ScoreBox):
            p = next(p for p in hs.boxes if p.legal and p.box == m.box)
            after = Position.of(st, apply_turn(rs, sheet, hs, p, throw).sheet)
            s2 = after.states[0]
            gain = after.total - pos.total
            full = s2[0] == (1 << model.nb) - 1
            row = util if full else wins.row(*s2[:3])
            out.append(float(row[min(gain, len(row) - 1)]))
        else:
            # the kept dice as the next throw reads them (Bozó "em baixo"): the model's keep
            out.append(float(options[1 + model.keeps.index[m.read], 0]))
    return out


def _own_later_instant(rs: RuleSet, pos: Position, instant: list[np.ndarray] | None
                       ) -> float:
    """The player's chance of a win at once on a later turn (after this one), each worth
    the chance that no one else has won at once before it (0 where nothing wins at
    once)."""
    if instant is None:
        return 0.0
    q = instant_chance(rs)
    later = pos.open_boxes - 1  # turns after this one
    alive = _own_instant(pos, instant, later)
    return float(sum(q * (1 - q) ** (k - 1) * alive[k] for k in range(1, later + 1)))


def _move_outcome(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet, hs: Any,
                  a: ScoreBox, throw: int) -> Position:
    """The position a placement (`a`, scored on the hand `hs`) leads to."""
    rs = st.rs
    p = next(p for p in hs.boxes if p.legal and p.box == a.box
             and (a.column is None or p.column == a.column))
    return Position.of(st, apply_turn(rs, sheet, hs, p, throw).sheet)


def _distribution_shares(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet,
                         dice: list[int], throw: int, em_baixo: bool, sug: Suggestion,
                         util: np.ndarray, instant: list[np.ndarray] | None) -> list[float]:
    """E[u(final)] from each move's exact distribution of the final total (Pawlewicz's
    way): a box's is the distribution from the state it leads to, a keep's the rest of the
    turn under the advisor's play (`first_turn_records`) followed by those distributions,
    every one from `Analyst.successor_futures`. Its share is E[util(final)]; where a first
    throw can win at once, the distributions are of the games without such a win and the
    player's own later wins at once are added (`_own_later_instant`)."""
    rs = st.rs
    sol = st.parts[0].solution
    kd, model = sol.kd, sol.model
    state = tuple(int(x) for x in pos.states[0][:3])
    wins = instant_hands(rs) if instant is not None else None
    futures_ = analyst.successor_futures(st, state, wins)
    gbits = gain_bits(kd)
    own = _own_later_instant(rs, pos, instant)
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    full = (1 << model.nb) - 1

    def share(d: Distribution) -> float:
        at = np.minimum(d.totals - pos.total, len(util) - 1)
        return float(d.probs @ util[at]) + own

    out = []
    for a in sug.moves:
        m = a.move
        if isinstance(m, ScoreBox):
            after = _move_outcome(analyst, st, pos, sheet, hs, m, throw)
            s2 = tuple(int(x) for x in after.states[0][:3])
            if s2[0] == full:
                d = Distribution(lo=after.total, probs=np.ones(1))
            else:
                d = (futures_.get(flat_index(sol, s2), after.total)
                     or analyst._exact(st, after, -1, 1, wins))
        else:
            # in Bozó "em baixo", the bottom faces of the dice kept: the keep the model plays
            rk, rp = first_turn_records(kd, sol.values, state, -1, throw,
                                        model.keeps.index[m.read])
            d = futures_.combine(rk, rp, gbits, pos.total) or _shifted(
                forward(kd, sol.values, state, 0, (rk, rp), analyst.threads, wins), pos.total)
        out.append(share(d))
    return out


def _normal_shares(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet,
                   dice: list[int], throw: int, em_baixo: bool, sug: Suggestion,
                   util: np.ndarray, instant: list[np.ndarray] | None) -> list[float]:
    """E[u(final)] with each move's final total taken as normal (its exact mean and
    variance under the advisor's play after it); where a first throw wins at once, the
    player's own later wins at once are added, each worth the chance that no one else has
    won before it, and the totals count only the games without one."""
    rs = st.rs
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    tables = analyst.tables(st)
    view = TurnView(pos, tables, throw)
    model = st.parts[0].solution.model
    parts = [tables(i) for i in range(len(st.parts))]
    q = instant_chance(rs) if instant is not None else 0.0
    own = _own_later_instant(rs, pos, instant)
    none = (1 - q) ** (pos.open_boxes - 1)

    def share(mean: float, var: float) -> float:
        probs = _normal_probs(pos.total, len(util), mean, float(np.sqrt(max(var, 0.0))))
        return none * float(probs @ util) + own

    out = []
    for a in sug.moves:
        m = a.move
        if isinstance(m, ScoreBox):
            after = _move_outcome(analyst, st, pos, sheet, hs, m, throw)
            m1, m2 = start_moments(after, parts)
            var = sum(b2 - b1 * b1 for b1, b2 in zip(m1, m2, strict=True))
        else:
            e1, e2 = view.keep_value(model.keeps.index[m.read], throw)
            var = e2 - e1 * e1
        out.append(share(a.expected_final_score, var))
    return out



def _normal_probs(lo: int, n: int, mean: float, sd: float) -> np.ndarray:
    """A normal distribution of `mean` and `sd` on the n whole totals from `lo`, each the
    probability of its unit interval; what lies below or above goes to the first or the
    last (where `winprob.utility`'s last column counts every higher total)."""
    if sd < 1e-9:
        out = np.zeros(n)
        out[int(np.clip(np.rint(mean) - lo, 0, n - 1))] = 1.0
        return out
    edges = np.arange(lo, lo + n + 1, dtype=np.float64) - 0.5
    cdf = normal_cdf((edges - mean) / sd)
    probs = np.diff(cdf)
    probs[0] += cdf[0]
    probs[-1] += 1.0 - cdf[-1]
    return probs


