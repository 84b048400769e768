"""The `win` objective: the moves ranked by the chance of finishing first against the other
players' sheets (`rank_to_win`, moves/suggest and moves/bot with `objective: "win"`), and
each player's chance of finishing first (`win_probability`, games/win-probability, with the
winning move of the player to move: `win_move`).

Each move's `win_share` is E[u(final)] for u the share of the win of each own final total
against the others' final distributions (`winprob.utility`), valued by
`utility.move_utilities`: exact late in a game, approximated before (`win_method` says
which). What is assumed is in `kernels/winprob.py`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...domain.consistency import check_sheet
from ...domain.errors import InvalidInput
from ...domain.moves import Move, ScoreBox
from ...domain.rules import RuleSet, UnderRules
from ...domain.scoring import Sheet, score_hand, score_sheet
from ..advice.moves import RankedMove, Suggestion, suggest
from ..advice.objective import Field, Objective, register
from ..analysis.analyst import Analyst, PositionValue, hand_index_checked
from ..kernels.distribution import Distribution
from ..kernels.model import instant_chance, instant_hands
from ..kernels.winprob import (
    ASSUMPTIONS,
    MAX_WIN_OPEN,
    Chances,
    chances,
    instant_times,
    utility,
)
from .utility import DISTRIBUTIONS, EXACT, move_utilities, ranked_by

#: Time budget of all the sampled distributions of one win-probability request together
#: (approximate methods: 8 players must not take 8 budgets).
WIN_SAMPLE_SECONDS = 0.12


@dataclass(frozen=True, slots=True)
class MoveChance:
    """A move (`move`: a keep or a placement) with its chances beside it: its expected
    final score and its expected share of the win (the API's MoveChance, a KeepChance or a
    PlacementChance by the move's kind)."""

    move: Move
    expected_final_score: float
    win_share: float

    @staticmethod
    def of(ranked: RankedMove, win_share: float) -> MoveChance:
        """A suggestion's move with its share of the win."""
        return MoveChance(ranked.move, ranked.expected_final_score, win_share)


@dataclass(frozen=True, slots=True)
class WinFigures:
    """What objective `win` adds to a position's answer (`Win.answer`, a `Suggestion`'s
    `extra`): whether the win shares are exact, and how they were computed."""

    win_exact: bool
    win_method: str


@dataclass(frozen=True)
class WinMove:
    """The move that maximises the player's expected share of the win (`max_win`) beside
    the move that maximises the expected score (`max_expected_score`; the same move unless
    `differs`), and whether and how exactly the shares were computed (the API's WinMove)."""

    exact: bool
    method: str
    max_expected_score: MoveChance
    max_win: MoveChance
    differs: bool


@dataclass
class PlayerChances:
    """One player's chances (the API's PlayerChances): the value of their position (mean,
    SD, distribution of the final total) and their chances of finishing first; `name` the
    player's (`games.player_name`), which the web layer sets."""

    value: PositionValue
    chances: Chances
    name: str = ""


@dataclass
class WinProbability(UnderRules):
    """Each player's chance of finishing first, in turn order, what that assumes, and with
    the dice of the player to move their winning move (the API's WinProbability), under the
    rules `rules`."""

    exact: bool  # every player's distribution is exact
    assumptions: str
    to_move: int
    players: list[PlayerChances]
    move: WinMove | None
    rules: RuleSet = field(kw_only=True, repr=False)


def player_values(analyst: Analyst, rs: RuleSet, sheets: list[Sheet], to_move: int,
                  dice: list[int] | None, throw: int | None, em_baixo: bool,
                  where: Callable[[int], str]) -> list[PositionValue]:
    """Every player's position value (`Analyst.position_value`), where a first throw can win
    at once the totals of their games without one (`instant`). `where(i)`: the JSON pointer
    of player i's scorecard in the request, to name it in a problem.

    Players on the same position share one distribution; the sampled ones (approximate
    methods) share one time budget (`WIN_SAMPLE_SECONDS`): the request's time does not grow
    with the number of players."""
    def key(i: int) -> Any:
        if i == to_move and (dice is not None or throw is not None or em_baixo):
            return i  # the player mid-turn: a position of their own (its throw checked)
        sheet = sheets[i]
        return (sheet.saved_throws, sheet.won,
                tuple((tuple(sorted(c.boxes.items(), key=lambda kv: kv[0])),
                       c.five_of_a_kind_bonuses) for c in sheet.columns))

    keys = [key(i) for i in range(len(sheets))]
    distinct = list(dict.fromkeys(keys))

    def position(i: int) -> tuple[Sheet, list[int] | None, int | None, bool]:
        mine = i == to_move
        return (sheets[i], dice if mine else None, throw if mine else None,
                em_baixo if mine else False)

    def of_player(i: int, fn: Callable[[], Any]) -> Any:
        """fn(), a problem with player i's scorecard named as theirs."""
        try:
            return fn()
        except InvalidInput as err:
            raise InvalidInput([replace(p, pointer=p.pointer.replace(
                "/scorecard", where(i), 1)) for p in err.problems]) from None

    def finished(i: int) -> bool:
        """A player other than the one to move (-1: none is) whose sheet is full: their
        total is final (the last round of a game)."""
        return i != to_move and not sheets[i].won and _turns_left(sheets[i]) == 0

    # every player's position is checked before any table is fetched (or queued to be
    # built), each as its own (the player to move too, on a sheet the same as another's: a
    # full one is an error for it alone); a full sheet is its final total
    found: dict[Any, PositionValue] = {}
    for i, k in enumerate(keys):
        if not finished(i):
            of_player(i, lambda i=i: hand_index_checked(rs, *position(i)))
        elif k not in found:
            total = of_player(i, lambda i=i: _final_total(rs, sheets[i]))
            found[k] = PositionValue(total, float(total), 0.0, True, Distribution(
                lo=total, probs=np.ones(1), method="the sheet is full: its total is final"))
    instant = instant_hands(rs) is not None
    deadline = time.perf_counter() + WIN_SAMPLE_SECONDS
    todo = [k for k in distinct if k not in found]
    for n, k in enumerate(todo):
        i = keys.index(k)
        seconds = max(0.0, deadline - time.perf_counter()) / (len(todo) - n)
        found[k] = of_player(i, lambda i=i, s=seconds: analyst.position_value(
            rs, *position(i), s, instant))
    return [found[k] for k in keys]


def _final_total(rs: RuleSet, sheet: Sheet) -> int:
    """The total of a full sheet, checked as every sheet is (`consistency.check_sheet`)."""
    check_sheet(rs, sheet)
    return int(score_sheet(rs, sheet).total)


def _instant_times(rs: RuleSet, sheets: list[Sheet], to_move: int, mid_turn: bool
                   ) -> list[np.ndarray] | None:
    """`winprob.instant_times` of the players (None where nothing wins at once)."""
    if instant_hands(rs) is None:
        return None
    return instant_times([_turns_left(sh) for sh in sheets], to_move, mid_turn,
                         instant_chance(rs))


def win_probability(analyst: Analyst, rs: RuleSet, sheets: list[Sheet], to_move: int = 0,
                    dice: list[int] | None = None, throw: int | None = None,
                    em_baixo: bool = False) -> WinProbability:
    """Each player's chance of finishing first (see `winprob` for what is assumed), and
    with `dice` the winning move of the player to move (`win_move`)."""
    values = player_values(analyst, rs, sheets, to_move, dice, throw, em_baixo,
                           lambda i: f"/players/{i}/scorecard")
    times = _instant_times(rs, sheets, to_move, dice is not None)
    if dice is not None and _wins_now(rs, sheets[to_move], dice, throw, em_baixo):
        # the player to move stops and wins at once (decision 12)
        ch = [Chances(1.0, 0.0, 1.0) if i == to_move else Chances(0.0, 0.0, 0.0)
              for i in range(len(sheets))]
    else:
        ch = chances([v.distribution for v in values], times)
    exact = all(v.distribution.exact for v in values)
    move = None
    if dice is not None:
        others = [v.distribution for i, v in enumerate(values) if i != to_move]
        rest = None if times is None else [t for i, t in enumerate(times) if i != to_move]
        move = win_move(analyst, rs, sheets[to_move], dice, throw, em_baixo, others, rest)
    return WinProbability(exact, ASSUMPTIONS, to_move,
                          [PlayerChances(v, c) for v, c in zip(values, ch, strict=True)], move,
                          rules=rs)


def _turns_left(sheet: Sheet) -> int:
    """A player's turns left: one a box still open (0 once the game is won at once)."""
    if sheet.won:
        return 0
    return sheet.open_boxes


def _wins_now(rs: RuleSet, sheet: Sheet, dice: list[int], throw: int | None,
              em_baixo: bool) -> bool:
    """Whether the dice win the game at once if the player stops on them."""
    return (throw or 1) == 1 and score_hand(rs, dice, throw, sheet, em_baixo).wins_game


#: How `win_shares` values the moves, by whether it could do it exactly.
WIN_EXACT = ("exact: a backward induction over the player's own states and totals, the win "
             "share in place of points, against the others' distributions")
WIN_DISTRIBUTIONS = ("approximate (Pawlewicz's way): each move's exact distribution of the "
                     "final total with the advisor's expected-score play after it (the rest "
                     "of the turn, then the exact distributions from every state it leads "
                     "to), against the others' distributions; exact from {n} open boxes on "
                     "(one-column variants solved exactly)")
WIN_NORMAL = ("approximate: each move's final total taken as normal, with the mean and "
              "variance of the method's play after it (moment tables of its parts), against "
              "the others' distributions (column sheets, Maxi Yatzy)")

def win_shares(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int],
               throw: int | None, em_baixo: bool, sug: Suggestion,
               others: list[Distribution], instant: list[np.ndarray] | None = None,
               approximate: bool = False) -> tuple[list[float], bool, str]:
    """Each of `sug.moves`' expected share of the win against the others' final
    distributions, whether the shares are exact, and how they were made (`WIN_EXACT`,
    `WIN_DISTRIBUTIONS`, `WIN_NORMAL`: `utility.move_utilities`).

    `instant` (where a first throw can win at once): the others' `instant_times`, the
    player to move at slot 0; `others` are then the totals of their games without an
    instant win. A box written on dice that win at once wins (share 1); a later turn's
    first throw that wins at once is worth the chance that no one else has won before it.
    `approximate`: the distributions' shares wherever (to measure them against the exact
    ones)."""
    def util_of(total: int, top: int) -> np.ndarray:
        if others:
            # an own total above every opponent's highest wins alone whatever comes next:
            # one column (the last, where higher totals are counted) holds them all
            top = max(total + 1, min(top, max(d.lo + len(d.probs) for d in others) + 1))
        return utility(others, total, top, instant is not None)

    shares, how = move_utilities(analyst, rs, sheet, dice, throw, sug, em_baixo, util_of,
                                 instant, approximate)
    method = {EXACT: WIN_EXACT, DISTRIBUTIONS: WIN_DISTRIBUTIONS.format(n=MAX_WIN_OPEN)
              }.get(how, WIN_NORMAL)
    if sug.wins_game:  # the suggestion scored the hand: stopping on it wins at once
        shares = [1.0 if isinstance(a.move, ScoreBox) else v
                  for a, v in zip(sug.moves, shares, strict=True)]
    return shares, how == EXACT, method


def rank_to_win(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int], throw: int,
                em_baixo: bool, opponents: list[Sheet], sug: Suggestion) -> Suggestion:
    """The suggestion's moves ranked by the chance of finishing first against `opponents`
    (their scorecards, in playing order after the player to move), ties shared as rule
    book decision 13 says: each move's `win_share`, the best first. `regret` stays the
    expected final score given up against the expected-score best."""
    # the opponents' values only (no player to move among them: -1); the position itself
    # was checked by the suggestion
    values = player_values(analyst, rs, opponents, -1, None, None, False,
                           lambda i: f"/opponents/{i}")
    times = _instant_times(rs, [sheet, *opponents], 0, True)
    shares, exact, method = win_shares(analyst, rs, sheet, dice, throw, em_baixo, sug,
                                       [v.distribution for v in values],
                                       None if times is None else times[1:])
    others_exact = all(v.distribution.exact for v in values)
    return ranked_by(sug, WIN.name, "win_share", shares, WinFigures(
        exact and others_exact,
        method + ("" if others_exact else "; the opponents' distributions sampled")))


def win_move(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int], throw: int | None,
             em_baixo: bool, others: list[Distribution],
             instant: list[np.ndarray] | None = None) -> WinMove:
    """The move that maximises the player's expected share of the win against the others'
    final distributions (`win_shares`), beside the move that maximises the expected score,
    each with both figures."""
    st = analyst.strategy(rs)
    sug = suggest(st, dice, throw or 1, sheet, em_baixo)
    shares, exact, method = win_shares(analyst, rs, sheet, dice, throw, em_baixo, sug,
                                       others, instant)

    by_share = max(range(len(shares)), key=lambda i: (round(shares[i], 12),
                                                      sug.moves[i].expected_final_score))
    # another move wins more only when its share, as the answer writes it (9 decimals), is
    # above the expected-score move's
    differs = round(shares[by_share], 9) > round(shares[0], 9) + 1e-9
    mine = MoveChance.of(sug.moves[0], shares[0])
    best = MoveChance.of(sug.moves[by_share], shares[by_share]) if differs else mine
    return WinMove(exact, method, mine, best, differs)



class Win(Objective):
    """Play to win against the other players' sheets."""

    name = "win"
    description = ("`win`, the chance of finishing first against `opponents` (ties shared, "
                   "rule book decision 13): each move then has its `win_share`, exact late "
                   "in a game and approximated before (`win_method` says which)")
    measure = Field("win_share", "number",
                    "With objective win: the expected share of the win after this move (a "
                    "k-way tie counts 1/k), playing on to maximise it")
    answer = (Field("win_exact", "boolean", "With objective win: the win shares are exact"),
              Field("win_method", "string",
                    "With objective win: how the win shares are computed"))
    request = Field("opponents", "scorecards",
                    "With objective `win` (needed then, and read only then: else a 409): the "
                    "other players' scorecards, in playing order after the player to move")
    missing_code = "opponents_required"
    stray_code = "opponents_without_win"

    def rank(self, analyst: Any, rs: Any, sheet: Any, dice: list[int], throw: int,
             em_baixo: bool, sug: Suggestion, given: Any) -> Suggestion:
        return rank_to_win(analyst, rs, sheet, dice, throw, em_baixo, given, sug)


WIN = register(Win())


def _compile(analyst: Analyst, rs: RuleSet, late: Sheet, middle: Sheet,
             dice: list[int]) -> None:
    """Run the win kernels once (`Analyst.compile_kernels`): the chances and the exact
    winning move late in a game, the moves' distributions before."""
    win_probability(analyst, rs, [late, late], 0, dice, 2)
    win_probability(analyst, rs, [middle, late], 0, dice, 2)


Analyst.compilers.append(_compile)
