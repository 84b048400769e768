"""Suggestions: the value of every keep and every legal box for one position.

Legality and scores of placements come from `service.domain.scoring.score_hand` (the oracle); the
values of the states they lead to come from the strategy's tables. Within the turn the keep
values are computed by the same recursion as the kernel (mean over one more die, best
sub-keep by running maximum), in float64.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from ...domain.consistency import check_sheet
from ...domain.counting import column_index
from ...domain.dice import bottom_faces
from ...domain.errors import InvalidInput, Problem
from ...domain.moves import Keep, Move, ScoreBox
from ...domain.rules import RuleSet, UnderRules
from ...domain.scoring import (
    HandScore,
    Sheet,
    SheetTotals,
    em_baixo_problems,
    empty_sheet,
    max_throw,
    score_hand,
    score_sheet,
    throw_problems,
)
from ..kernels.steps import next_marks
from ..solving.positions import part_state, part_value, terminals64, turn_tables
from ..solving.strategy import Strategy

#: Two values closer than this are a tie (same rank, `tie: true`). It is set by the precision
#: of the values, not of float64: the tables hold float32 values, which differ from an exact
#: float64 re-solve (`solver.solve_moments`) by at most 3.1e-5 over every reachable state of
#: the built-in tables (YAHTZEE 2.8e-5, Yatzy 3.0e-5; see tests/advisor/test_analysis.py), so
#: two moves of equal true value may be up to twice that apart. Within a position everything
#: else is float64 (`positions.terminals64`), so a box and a keep of equal value agree to
#: 1e-12 and a tolerance of 1e-4 (over 3x the tables' error) ranks them together.
TIE = 1e-4


@dataclass(frozen=True, slots=True)
class BoxChance:
    """The chance that a turn ends with points in one box (of one column on a column
    sheet, else `column` None): `BoxChanceSchema`."""

    box: str
    column: int | None
    probability: float


@dataclass(frozen=True, slots=True)
class TurnOutlook:
    """Where a turn ends after a keep, under the advisor's play of the rest of it
    (`TurnOutlookSchema`, `Analyst.coach`): the expected points the turn adds, and every box
    it may end in with points, most likely first."""

    expected_points: float
    boxes_with_points: list[BoxChance]


@dataclass(slots=True)
class RankedMove:
    """One thing the player can do now (`move`: a keep or a placement, the domain's
    `Move`) with its figures beside it: its expected final score, the expected final score
    it gives up against the best (`regret`), its rank (1 = best; moves tied in value share
    a rank, `tie`), its figures under another objective (`measures`) and, for a keep with
    coaching asked for, where the turn ends (`outlook`). The API writes a keep as a
    KeepMove, a placement as a ScoreMove."""

    move: Move
    expected_final_score: float
    regret: float = 0.0
    rank: int = 1
    tie: bool = False
    #: the move's figure under the objective the moves are ranked by, when it is not the
    #: expected score (`objective.Objective.measure`): "win_share" (objective win),
    #: "target_probability" (objective target)
    measures: dict[str, float] = field(default_factory=dict)
    #: keep, with coaching asked for: where the turn ends under the advisor's play of the
    #: rest of it (`Analyst.coach`; the answer's `turn`); None: not asked for
    outlook: TurnOutlook | None = None

    @property
    def win_share(self) -> float | None:
        """With objective "win": the expected share of the win after this move."""
        return self.measures.get("win_share")


@dataclass
class Suggestion(UnderRules):
    """The best move of a position and every move, ranked (moves/suggest's answer,
    `MoveSuggestionSchema`), under the rules `rules`."""

    best: RankedMove
    expected_final_score: float
    exact: bool
    method: str
    current_total: int
    throw: int
    throws_left: int
    moves: list[RankedMove] = field(default_factory=list)
    dice: list[int] = field(default_factory=list)  # the dice as sent, sorted
    scored_dice: list[int] = field(default_factory=list)  # ... as scored (em baixo: bottom)
    #: stopping on these dice wins the game at once (a first throw: Generala servida,
    #: General de boca), whichever box is written
    wins_game: bool = False
    #: what the moves are ranked by: the name of a registered objective
    #: (`objective.REGISTRY`: "score", the expected final score, as `suggest` ranks them;
    #: "win", "target": `service/advisor/objectives/`)
    objective: str = "score"
    #: what the objective adds to the answer: a dataclass of its `Objective.answer` fields
    #: (the `win` objective's `WinFigures`: win_exact, win_method); None: nothing (`score`)
    extra: Any = None
    rules: RuleSet = field(kw_only=True, repr=False)

    @property
    def win_exact(self) -> bool | None:
        """Objective "win": whether the win shares are exact."""
        return getattr(self.extra, "win_exact", None)

    @property
    def win_method(self) -> str | None:
        """Objective "win": how the win shares are computed."""
        return getattr(self.extra, "win_method", None)


# --------------------------------------------------------------------------- suggestions


def sub_multisets(hand: tuple[int, ...]) -> list[tuple[int, ...]]:
    out = set()
    for r in range(len(hand)):
        out.update(combinations(hand, r))
    return sorted(out, key=lambda t: (len(t), t))


NO_MOVE = -1e29  # values at or below this stand for "no legal placement" in the kernels


def check_position(rs: RuleSet, dice: list[int] | None, throw: int | None, sheet: Sheet,
                   em_baixo: bool = False) -> tuple[HandScore | None, SheetTotals]:
    """Raise InvalidInput when a position has no move to suggest and no value to give under
    these rules (a throw the turn cannot reach, a game over, dice that are no hand, a sheet
    no game reaches); else the hand scored on the sheet (None without dice: a position at
    the start of a turn) and the sheet's totals. Needs no table: it is asked before a table
    is fetched or built, so that a request that cannot be answered is told so at once."""
    # also without dice
    problems = throw_problems(rs, throw, sheet) + em_baixo_problems(rs, em_baixo)
    if em_baixo and dice is None and not problems:
        problems.append(Problem("/em_baixo", "em baixo counts the dice of a throw by their "
                                             "bottom faces: it needs the dice"))
    if problems:
        raise InvalidInput(problems)
    totals = score_sheet(rs, sheet)
    if sheet.won or totals.complete:
        raise InvalidInput.one("/scorecard", "the game is over: its final total is "
                                             f"{totals.total}")
    hs = None
    if dice is not None:
        if throw is None:
            raise InvalidInput.one("/throw", "required with dice: the throw these dice "
                                             "stand on (1 = first)")
        # validates the dice and em_baixo; scores the bottom faces when asked
        hs = score_hand(rs, dice, throw, sheet, em_baixo)
    check_sheet(rs, sheet)  # a sheet no game reaches (as every endpoint checks it)
    return hs, totals


def suggest(st: Strategy, dice: list[int], throw: int, sheet: Sheet | None = None,
            em_baixo: bool = False,
            checked: tuple[HandScore | None, SheetTotals] | None = None) -> Suggestion:
    """The best action for `dice` after throw number `throw` of this turn, and every other.

    Values are expected final totals of the whole sheet (points already on it included).
    `st` is the strategy of the position's rules (`Advisor.strategy`). `checked`: what
    `check_position` answered for this position, when the caller asked it already.
    """
    rs = st.rs
    sheet = sheet or empty_sheet(rs)
    hs, totals = checked or check_position(rs, dice, throw, sheet, em_baixo)
    last = max_throw(rs, sheet)
    current = int(totals.total)
    states = [part_state(p, sheet) for p in st.parts]
    base = [part_value(p, *s[:3]) for p, s in zip(st.parts, states, strict=True)]
    now = current + sum(base)
    # Throws left unused are saved for later turns: worth nothing on the last turn.
    later_turns = sheet.open_boxes - 1
    throw_value = st.saved_throw_value if later_turns > 0 else 0.0
    saved_bonus = throw_value * (last - throw)

    moves: list[RankedMove] = []
    for p in hs.boxes:
        if not p.legal:
            continue
        col = column_index(p.column)
        pi, bi = st.box_part[(col, p.box)]
        part = st.parts[pi]
        m = part.solution.model
        mask, code, flags, _ = states[pi]
        nmask = mask | 1 << bi
        # the next state as the kernels step to it
        _, ncode, flags = next_marks(m.threshold, m.maxrem, m.amount, int(m.kind[bi]),
                                     int(m.trk_bit[bi]), code, flags, float(p.score), nmask)
        gain = p.score + p.five_of_a_kind_bonus + p.upper_bonus
        value = now + gain + float(part.solution.values[nmask, ncode, flags]) - base[pi]
        moves.append(RankedMove(ScoreBox.of(p), value + saved_bonus))
    if throw < last:
        # the announcement of the next throw: Bozó's alone (None: no rule allows one)
        bozo = rs.variant.em_baixo
        kd = st.parts[0].solution.kd
        tf, tl = terminals64(st, states, base)
        e_raw, _ = turn_tables(kd, tf, tl, throw, last, throw_value)
        index = st.parts[0].solution.model.keeps.index
        for kept in sub_multisets(hs.dice):
            # the kept dice read as this throw reads them; the next throw reads them so
            # again, or by their other faces when it is read the other way ("em baixo")
            same = bottom_faces(kept) if em_baixo else kept
            k = index[same]
            value, flip = e_raw[k], False
            if kd.em_baixo and e_raw[kd.mirror[k]] > value + TIE:
                value, flip = e_raw[kd.mirror[k]], True
            if value <= NO_MOVE:
                continue  # no legal box at the end of that turn (column sheets)
            moves.append(RankedMove(Keep(kept, em_baixo != flip if bozo else None),
                                    now + float(value)))
    if not moves:
        raise InvalidInput.one("/throw", "no legal move: no open box accepts a result of "
                                         "this throw (a first-throw-only column?)")
    result = _ranked(st, moves, current, throw, last)
    result.dice = list(hs.dice)
    result.scored_dice = list(hs.scored_dice)
    result.wins_game = throw == 1 and hs.wins_game
    return result


def _order(a: RankedMove) -> tuple:
    """The order of moves of equal value: placements first, by box; then keeps, fewer dice
    first."""
    m = a.move
    if isinstance(m, ScoreBox):
        return (-a.expected_final_score, False, m.box, 0, ())
    return (-a.expected_final_score, True, "", len(m.dice), m.dice)


def _ranked(st: Strategy, moves: list[RankedMove], current: int, throw: int,
            last: int) -> Suggestion:
    moves.sort(key=_order)
    best = moves[0].expected_final_score
    # moves are sorted by value, best first: ranks and ties by bisection, not n^2 scans
    neg = [-a.expected_final_score for a in moves]
    for a in moves:
        v = a.expected_final_score
        a.regret = max(0.0, best - v)
        better = bisect_left(neg, -(v + TIE))  # values above v + TIE
        a.rank = 1 + better
        a.tie = bisect_right(neg, -(v - TIE)) - better > 1
    return Suggestion(best=moves[0], expected_final_score=best, exact=st.exact,
                      method=st.description, current_total=current, throw=throw,
                      throws_left=last - throw, moves=moves, rules=st.rs)
