"""One turn played: the checks of a move on a sheet and the sheet it leaves.

`play_turn` takes a sheet, the dice a turn ended on, the throw they stand on and the box the
player chose (optionally as a chosen 0, `scratch`: decision 3); it answers the new sheet
(boxes, five-of-a-kind bonuses, saved throws, won) and what the turn earned (`TurnOutcome`),
or raises `IllegalMove` with a code saying which rule forbids it (`errors.MOVE_CODES`).
`move_problem` says why a move is not legal and `apply_turn` writes one: the replay of a
whole game (`games.py`) and the advisor's bots play their turns through them.

Legality and scores come from `scoring.score_hand` and the sheet check from
`consistency.check_sheet`; this module adds what a turn decides: the box named, its
column, the first-throw score, the game won at once (docs/rules.md, decisions 3-4, 14-15).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .consistency import bonus_points, check_sheet, placements_of, scratch_keeps_bonus
from .counting import column_index, turn_number
from .dice import Hand
from .errors import INPUT_CODES, IllegalMove, InvalidInput, Problem
from .rules import RuleSet, UnderRules
from .scorecards import Scorecard, filled_count, is_complete, scorecard_of, sheet_totals
from .scoring import (
    Column,
    HandScore,
    Placement,
    Sheet,
    Totals,
    _order_allowed,
    dice_problems,
    em_baixo_problems,
    score_hand,
    throw_problems,
)
from .variants import unknown_box


@dataclass(frozen=True)
class Pointers:
    """Where a turn's fields are in the request, for the problems' JSON pointers."""

    scorecard: str = "/scorecard"
    dice: str = "/dice"
    throw: str = "/throw"
    box: str = "/box"
    column: str = "/column"
    em_baixo: str = "/em_baixo"
    turn: str = ""


# Earned, TurnOutcome and the replay's TurnRecord are made once a turn (the replay, the bots,
# the advisor's move utilities): slotted but not frozen, as a frozen dataclass's __init__ sets
# each field through object.__setattr__ (0.25 us a field, a third of apply_turn's time).
@dataclass(slots=True)
class Earned:
    """What a turn added to the sheet: the box written (None: an instant win that wrote
    none) and its column, the box's score, the bonuses, whether it won the game at once, and
    `points`, all it added to the total: box, five-of-a-kind bonus, upper bonus. The part of
    a `TurnOutcome` that games/turn's answer and games/validate's turn records show as
    `earned` (`EarnedSchema` dumps the outcome itself: a chosen 0 shows as `score` 0, no
    Joker, no upper or first-throw bonus, and the five-of-a-kind bonus it keeps)."""

    box: str | None
    column: int | None
    score: int = 0
    joker: bool = False
    five_of_a_kind_bonus: int = 0
    upper_bonus: int = 0
    first_throw_bonus: int = 0
    wins_game: bool = False
    points: int = 0


@dataclass(slots=True, kw_only=True)
class TurnOutcome(Earned):
    """A turn played: what it earned (`Earned`), the sheet after it, the dice (sorted) and
    the faces scored (the hand's own tuples, as `score_hand` read them), the throw they
    stood on, the turn's number on the sheet (1 = first), the turns left, whether the game
    is over, and `scratch`: the box took a chosen 0 where the dice score more. The one
    record of a turn played: games/turn answers it (`TurnResult`) and the replay holds it
    (`games.TurnRecord`)."""

    sheet: Sheet
    dice: Hand
    scored_dice: Hand
    throw: int
    turn: int = 0
    turns_left: int = 0
    game_over: bool = False
    scratch: bool = False


@dataclass(slots=True)
class TurnResult(UnderRules):
    """games/turn's answer (`TurnResultSchema`): the turn played (`outcome`: the dice and
    the faces scored, the throw they stood on, what it earned, the turn's number, the turns
    left, whether the game is over or won at once; the schema reads them there), and what
    only the answer adds: the sheet after the turn as the API's scorecard (to send with the
    next turn) and the sheet's totals."""

    outcome: TurnOutcome
    scorecard: Scorecard
    totals: Totals
    rules: RuleSet = field(kw_only=True, repr=False)

    @staticmethod
    def of(rs: RuleSet, outcome: TurnOutcome) -> TurnResult:
        """The answer of a turn played under `rs` (`play_turn`'s outcome)."""
        return TurnResult(outcome, scorecard_of(rs, outcome.sheet),
                          sheet_totals(rs, outcome.sheet), rules=rs)


def column_problem(rs: RuleSet, column: int | None, ptrs: Pointers) -> Problem | None:
    columns = rs.variant.columns
    if columns and column is None:
        return Problem(ptrs.column, f"a column sheet needs the column (1 to {len(columns)})",
                       "column_required")
    if not columns and column is not None:
        return Problem(ptrs.column, "this sheet has one column: leave column out",
                       "no_columns")
    if columns and not 1 <= column <= len(columns):
        return Problem(ptrs.column, f"the sheet has columns 1 to {len(columns)}",
                       "column_required")
    return None


def find_placement(hs: HandScore, box: str, column: int | None) -> Placement | None:
    """The placement of the hand in one box (of one column), or None when there is none."""
    for p in placements_of(hs):
        if p.box == box and p.column == column:
            return p
    return None


def move_problem(rs: RuleSet, sheet: Sheet, hs: HandScore, box: str | None,
                 column: int | None, throw: int, ptrs: Pointers,
                 scratch: bool = False) -> Problem | None:
    """Why writing the hand in `box` (of `column`) is not a legal end of the turn, or None.

    The code is one of MOVE_CODES or INPUT_CODES. The reasons are read from `score_hand`'s
    placements (open, legal), so the rules are those of hands/score. A chosen 0 (`scratch`)
    may go wherever the hand may be written (decisions 3, 14, 15): the same rules, except
    that it needs a box.
    """
    if sheet.won:
        return Problem(ptrs.turn, "the game was won at once: no more turns are played",
                       "game_won")
    if is_complete(sheet):
        return Problem(ptrs.turn, "every box is filled: the game is over", "game_over")
    if box is None:
        if scratch:
            return Problem(ptrs.box, "a chosen 0 (scratch) needs the box to write it in",
                           "box_required")
        if throw == 1 and hs.wins_game:
            return None
        return Problem(ptrs.box, "name the box to write the dice in (only an instant win may "
                                 "end a turn without one)", "box_required")
    v = rs.variant
    if box not in v.box_ids:
        return Problem(ptrs.box, unknown_box(v, box), "unknown_box")
    wrong_column = column_problem(rs, column, ptrs)
    if wrong_column:
        return wrong_column
    p = find_placement(hs, box, column)
    assert p is not None
    if p.legal:
        return None
    if not p.open:
        return Problem(ptrs.box, f"box {box!r} is already filled", "box_filled")
    order = v.columns[column_index(column)] if v.columns and column else v.order
    where = f"column {column}" if column else "this sheet"
    if order == "first_throw" and throw != 1:
        return Problem(ptrs.column if column else ptrs.box,
                       f"{where} takes first-throw results only; these dice stand on throw "
                       f"{throw}", "first_throw_only")
    col = sheet.columns[column_index(column)]
    open_ids = [b for b in v.box_ids if not col.filled(b)]
    if box not in _order_allowed(order, open_ids, throw == 1):
        way = "top to bottom" if order == "down" else "bottom to top"
        nxt = _order_allowed(order, open_ids, throw == 1)
        return Problem(ptrs.box, f"{where} is filled {way}: the next box is "
                                 f"{nxt[0]!r}" if nxt else f"{where} has no open box",
                       "out_of_order")
    allowed = [q.box for q in placements_of(hs) if q.legal and q.column == column]
    return Problem(ptrs.box, f"the forced Joker writes this five of a kind in "
                             f"{' or '.join(repr(b) for b in allowed)}", "joker_forces_box")


def apply_turn(rs: RuleSet, sheet: Sheet, hs: HandScore, p: Placement | None, throw: int,
               legal: bool = True, scratch: bool = False) -> TurnOutcome:
    """The sheet after writing the hand in placement `p` (None: a winning turn that writes no
    box), and what the turn earned. An illegal placement (`legal` false, used when replaying
    a game) is written as the player wrote it; its bonuses follow from the totals.

    `scratch`: the box takes 0 whatever the dice score there (decision 3). The five of a
    kind keeps its bonus where `scratch_keeps_bonus` says so (YAHTZEE: "a forced zero
    included"), a 0 reaches no upper bonus and adds no first-throw score, and the game is
    won at once all the same when the throw wins it (decision 4). A hand that scores 0 there
    anyway is simply a 0."""
    v = rs.variant
    first = throw == 1
    won = sheet.won or (first and hs.wins_game)
    columns = [Column(dict(c.boxes), c.five_of_a_kind_bonuses) for c in sheet.columns]
    saved = sheet.saved_throws + (v.throws - throw if v.saved_throws else 0)
    after = Sheet(columns, max(saved, 0), won)
    box = column = None
    score = five = upper = first_bonus = 0
    joker = zero = False
    if p is not None:
        zero = scratch and p.score != 0  # a chosen 0 where the dice score more
        col = columns[column_index(p.column)]
        col.boxes[p.box] = 0 if zero else p.score
        box, column = p.box, p.column
        if not zero:
            score, joker = p.score, p.joker
        if legal:
            five = bonus_points(p) if not zero or scratch_keeps_bonus(rs) else 0
            if five:
                col.five_of_a_kind_bonuses += 1
            if not zero:
                upper = p.upper_bonus
                first_bonus = _first_throw_bonus(rs, hs, p, first)
        else:
            upper = sheet_totals(rs, after).upper_bonus - sheet_totals(rs, sheet).upper_bonus
    filled = filled_count(after)
    game_over = won or filled == v.turns
    return TurnOutcome(box, column, score, joker, five, upper, first_bonus,
                       first and hs.wins_game, score + five + upper, sheet=after,
                       dice=hs.dice, scored_dice=hs.scored_dice, throw=throw,
                       turn=turn_number(filled_count(sheet)),
                       turns_left=0 if game_over else v.turns - filled, game_over=game_over,
                       scratch=zero)


def _first_throw_bonus(rs: RuleSet, hs: HandScore, p: Placement, first: bool) -> int:
    """Points the first throw added to the box's score (servida, de boca, General de mão)."""
    if not first or p.joker:
        return 0
    i = rs.box_index(p.box)
    h = rs.hand_index[hs.scored_dice]
    if p.score != rs.score_first[i][h]:
        return 0
    return max(0, rs.score_first[i][h] - rs.score_later[i][h])


def play_turn(rs: RuleSet, sheet: Sheet, dice: list[int], throw: int, box: str | None,
              column: int | None = None, em_baixo: bool = False,
              ptrs: Pointers = Pointers(), scratch: bool = False) -> TurnOutcome:
    """Play one turn: check the sheet, the dice, the throw and the placement, and write it
    (`scratch`: write 0 in the box whatever the dice score there; see `apply_turn`).

    Raises InvalidInput (a sheet that cannot occur, dice or throw not possible, a box or
    column the sheet lacks; with codes) or IllegalMove (the rules forbid this placement).
    """
    check_sheet(rs, sheet, ptrs.scorecard)
    problems = (dice_problems(rs, dice, ptrs.dice) + throw_problems(rs, throw, sheet, ptrs.throw)
                + em_baixo_problems(rs, em_baixo, ptrs.em_baixo))
    if problems:
        raise InvalidInput(problems)
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    problem = move_problem(rs, sheet, hs, box, column, throw, ptrs, scratch)
    if problem is not None:
        if problem.code in INPUT_CODES:
            raise InvalidInput([problem])
        raise IllegalMove(problem.code or "illegal_move", problem.pointer, problem.detail)
    p = None if box is None else find_placement(hs, box, column)
    return apply_turn(rs, sheet, hs, p, throw, scratch=scratch)
