"""Whole games: play one turn on a sheet, and replay a game to check every move in it.

`play_turn` takes a sheet, the dice a turn ended on, the throw they stand on and the box the
player chose (optionally as a chosen 0, `scratch`: decision 3); it answers the new sheet
(boxes, five-of-a-kind bonuses, saved throws, won) and what the turn earned, or raises
`IllegalMove` with a code saying which rule forbids it.

`validate_game` replays a game as a score-keeping app records it (players in order, each a
list of turns: the throws, optionally the dice kept between them, the box, whether it took a
chosen 0, claimed points)
and lists every problem it finds, each with a JSON pointer into the game, a code and a
detail, with each turn's points, running totals, final totals and standings.
`replay_game` is the same replay (the only one: games/validate and the game analysis both
read a recorded game through it), answering also each turn as it was played
(`ReplayedTurn`: the sheet before, the throws and kept dice, the outcome and the sheet after).

Legality and scores come from `scoring.score_hand` and the sheet check from
`consistency.sheet_problems`; this module adds only what a whole game decides (docs/rules.md,
decisions 11-18): turn order, the end of the game, instant wins, throws and kept dice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .consistency import (
    SHEET_CODES,
    bonus_points,
    check_sheet,
    placements_of,
    plural,
    scratch_keeps_bonus,
)
from .dice import Hand, normalise
from .errors import IllegalMove, InvalidInput, Problem
from .rules import RuleSet
from .scoring import (
    Column,
    HandScore,
    Placement,
    Sheet,
    _order_allowed,
    dice_problems,
    em_baixo_problems,
    empty_sheet,
    max_throw,
    score_hand,
    score_sheet,
    throw_problems,
)
from .variants import unknown_box

#: Why a turn may not be played (problem type /problems/illegal-move).
MOVE_CODES: dict[str, str] = {
    "game_won": "The game was won at once (Generala servida, General de boca): no more turns.",
    "game_over": "Every box of the sheet is filled: no more turns.",
    "box_required": "The turn names no box; only an instant win may end a turn without one "
                    "(and a chosen 0, `scratch`, names the box it goes in).",
    "box_filled": "The box is already filled.",
    "out_of_order": "The sheet or column is filled in a fixed order and this box is not the "
                    "next one (Generala obligada; column sheets' columns 1 and 2).",
    "first_throw_only": "The column takes first-throw results only and the dice stand on a "
                        "later throw.",
    "joker_forces_box": "The forced Joker names other boxes for this five of a kind (the "
                        "matching number box, else the lower section).",
}

#: What is wrong with a turn's input for this table (problem type /problems/inconsistent-request).
INPUT_CODES: dict[str, str] = {
    "unknown_box": "The table's sheet has no such box.",
    "column_required": "A column sheet needs the column the box is in.",
    "no_columns": "A column was named on a one-column sheet.",
    "dice_count": "Not as many dice as the variant is played with.",
    "bad_face": "A die that is not a face from 1 to 6.",
    "too_many_throws": "More throws than the turn has (3, plus saved throws in Maxi Yatzy).",
    "em_baixo_not_allowed": "'Em baixo' on a variant other than Bozó.",
}

#: What only a whole game can get wrong (games/validate).
GAME_CODES: dict[str, str] = {
    "kept_count": "`kept` must list the dice kept after each throw but the last "
                  "(one entry fewer than `throws`).",
    "kept_not_in_throw": "Kept dice that the throw they were kept from does not show.",
    "kept_not_in_next_throw": "Kept dice missing from the next throw.",
    "kept_all_dice": "All dice kept and thrown again: keeping every die ends the throwing.",
    "points_mismatch": "The claimed points of a turn differ from what it wrote in its box "
                       "(what its dice score there; 0 for a chosen 0, `scratch`).",
    "first_throw_bonus_on_later_throw": "The claimed points include a first-throw score "
                                        "(servida, de boca, secos) the turn made on a later "
                                        "throw.",
    "total_mismatch": "A player's claimed total differs from the sheet's total.",
    "out_of_turn": "A turn played out of order: players play in the order listed, one turn "
                   "each per round.",
    "winners_mismatch": "The claimed winners are not the players with the top total (or the "
                        "instant winner).",
    "winners_before_end": "Winners claimed for a game that is not over.",
    "unknown_player": "A claimed winner that is not a player of the game.",
}

#: Problems of a position played to win (`objective: "win"`: the other players' sheets).
WIN_CODES: dict[str, str] = {
    "opponents_required": "Playing to win needs the opponents' scorecards: there is no one to "
                          "beat.",
    "opponents_without_win": "Opponents' scorecards are read only when playing to win.",
}

#: Problems of a position played to reach a total (`objective: "target"`).
TARGET_CODES: dict[str, str] = {
    "target_required": "Playing to reach a total needs the total: `target`.",
    "target_without_objective": "A target is read only when playing to reach it "
                                "(objective target).",
}

#: Every code a problem of the API may carry, with its meaning (docs/problems.md, the spec).
ALL_CODES: dict[str, str] = {**SHEET_CODES, **MOVE_CODES, **INPUT_CODES, **GAME_CODES,
                             **WIN_CODES, **TARGET_CODES}


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


@dataclass
class TurnOutcome:
    """A turn played: the sheet after it and what it earned (`scratch`: the box took a chosen
    0 where the dice score more)."""

    sheet: Sheet
    box: str | None
    column: int | None
    dice: list[int]
    scored_dice: list[int]
    throw: int
    score: int = 0
    joker: bool = False
    five_of_a_kind_bonus: int = 0
    upper_bonus: int = 0
    first_throw_bonus: int = 0
    wins_game: bool = False
    turn: int = 0
    turns_left: int = 0
    game_over: bool = False
    scratch: bool = False

    @property
    def points(self) -> int:
        """Everything the turn added to the total: box, five-of-a-kind bonus, upper bonus."""
        return self.score + self.five_of_a_kind_bonus + self.upper_bonus

    def earned(self) -> dict[str, Any]:
        """What the turn earned, as the API shows it (a chosen 0 shows as `score` 0, no
        Joker, no upper or first-throw bonus, and the five-of-a-kind bonus it keeps)."""
        return {"box": self.box, "column": self.column, "score": self.score,
                "joker": self.joker, "five_of_a_kind_bonus": self.five_of_a_kind_bonus,
                "upper_bonus": self.upper_bonus, "first_throw_bonus": self.first_throw_bonus,
                "wins_game": self.wins_game, "points": self.points}


# --------------------------------------------------------------------------- sheets


def scorecard_data(rs: RuleSet, sheet: Sheet) -> dict[str, Any]:
    """A sheet as the API's scorecard object: every box (null = open), the five-of-a-kind
    bonuses, saved throws and won; valid to send back unchanged in the next request."""
    def column(c: Column) -> dict[str, Any]:
        return {"boxes": {b: c.boxes.get(b) for b in rs.variant.box_ids},
                "five_of_a_kind_bonuses": c.five_of_a_kind_bonuses}

    if rs.variant.columns:
        data: dict[str, Any] = {"columns": [column(c) for c in sheet.columns]}
    else:
        data = column(sheet.columns[0])
    data["saved_throws"] = sheet.saved_throws
    data["won"] = sheet.won
    return data


def sheet_totals(rs: RuleSet, sheet: Sheet) -> dict[str, int]:
    """The sheet's totals (`score_sheet`), in the API's words."""
    t = score_sheet(rs, sheet)
    upper, upper_bonus, lower, total = (t["upper_subtotal"], t["upper_bonus"],
                                        t["lower_total"], t["total"])
    return {"upper_subtotal": upper, "upper_bonus": upper_bonus, "lower_total": lower,
            "five_of_a_kind_bonus": total - upper - upper_bonus - lower, "total": total}


def filled_count(sheet: Sheet) -> int:
    """How many boxes are filled (one per turn that wrote a box)."""
    return sum(1 for c in sheet.columns for v in c.boxes.values() if v is not None)


def is_complete(sheet: Sheet) -> bool:
    """Every box of every column filled."""
    return all(v is not None for c in sheet.columns for v in c.boxes.values())


# --------------------------------------------------------------------------- one turn


def _column_problem(rs: RuleSet, column: int | None, ptrs: Pointers) -> Problem | None:
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
    wrong_column = _column_problem(rs, column, ptrs)
    if wrong_column:
        return wrong_column
    p = find_placement(hs, box, column)
    assert p is not None
    if p.legal:
        return None
    if not p.open:
        return Problem(ptrs.box, f"box {box!r} is already filled", "box_filled")
    order = v.columns[column - 1] if v.columns and column else v.order
    where = f"column {column}" if column else "this sheet"
    if order == "first_throw" and throw != 1:
        return Problem(ptrs.column if column else ptrs.box,
                       f"{where} takes first-throw results only; these dice stand on throw "
                       f"{throw}", "first_throw_only")
    col = sheet.columns[column - 1 if column else 0]
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
    outcome = TurnOutcome(sheet=Sheet(columns, max(saved, 0), won), box=None, column=None,
                          dice=list(hs.dice), scored_dice=list(hs.scored_dice), throw=throw,
                          wins_game=first and hs.wins_game)
    if p is not None:
        zero = scratch and p.score != 0  # a chosen 0 where the dice score more
        col = columns[(p.column or 1) - 1]
        col.boxes[p.box] = 0 if zero else p.score
        outcome.box, outcome.column, outcome.scratch = p.box, p.column, zero
        if not zero:
            outcome.score, outcome.joker = p.score, p.joker
        if legal:
            bonus = bonus_points(p) if not zero or scratch_keeps_bonus(rs) else 0
            if bonus:
                col.five_of_a_kind_bonuses += 1
            outcome.five_of_a_kind_bonus = bonus
            if not zero:
                outcome.upper_bonus = p.upper_bonus
                outcome.first_throw_bonus = _first_throw_bonus(rs, hs, p, first)
        else:
            before, after = sheet_totals(rs, sheet), sheet_totals(rs, outcome.sheet)
            outcome.upper_bonus = after["upper_bonus"] - before["upper_bonus"]
    filled = filled_count(outcome.sheet)
    outcome.turn = filled_count(sheet) + 1
    outcome.game_over = won or filled == v.turns
    outcome.turns_left = 0 if outcome.game_over else v.turns - filled
    return outcome


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


# --------------------------------------------------------------------------- whole games


@dataclass
class ReplayedTurn:
    """One recorded turn as the replay played it: the sheet before it, the dice of each throw
    (sorted), the dice kept after each throw but the last (sorted; None when the turn does
    not record them), the throw the placement stands on, and the outcome (the box written,
    None for an instant win that writes none; what it earned; the sheet after it).
    `em_baixo`: the last throw was read by its bottom faces (Bozó)."""

    turn: int  # index of the turn in the player's list
    before: Sheet
    throws: list[Hand]
    kept: list[Hand] | None
    throw: int
    outcome: TurnOutcome
    em_baixo: bool = False


@dataclass
class GameReplay:
    """A game replayed: games/validate's answer (`validation`), the problems found (each
    with pointer, code and detail; none for a game valid so far), and each player's turns as
    played (`turns[player]`; a turn that could not be played is left out)."""

    validation: dict[str, Any]
    problems: list[Problem]
    turns: list[list[ReplayedTurn]]


@dataclass
class _Player:
    """One player's state while a game is replayed."""

    index: int
    name: str
    turns: list[dict[str, Any]]
    sheet: Sheet
    total: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    replayed: list[ReplayedTurn] = field(default_factory=list)


def validate_game(rs: RuleSet, game: dict[str, Any], base: str = "") -> dict[str, Any]:
    """Replay a game and check every move (games/validate's answer, see `replay_game`)."""
    return replay_game(rs, game, base).validation


def replay_game(rs: RuleSet, game: dict[str, Any], base: str = "") -> GameReplay:
    """Replay a game and check every move; `base` is the game's pointer in the request.

    `game`: {"players": [{"name"?, "turns": [{"throws": [[dice], ...], "kept"?: [[dice],
    ...], "box"?, "column"?, "em_baixo"?, "scratch"?, "points"?}], "total"?}],
    "winners"?: [index]}.
    The validation answers valid, every problem (pointer, code, detail), each player's
    turns with their points and running totals, the final sheets and totals, and the
    standings. A partial game is valid so far. Beside it, every turn played as a
    `ReplayedTurn`, for the game analysis.
    """
    problems: list[Problem] = []
    players = [_Player(i, p.get("name") or f"Player {i + 1}", p.get("turns") or [],
                       empty_sheet(rs)) for i, p in enumerate(game.get("players") or [])]
    counts = [len(p.turns) for p in players]
    ended: str | None = None  # "won" once someone wins at once
    winner: int | None = None
    for r in range(max(counts, default=0)):
        for pl in players:
            if r >= len(pl.turns):
                continue
            tptr = f"{base}/players/{pl.index}/turns/{r}"
            turn = pl.turns[r]
            if ended == "won" or is_complete(pl.sheet):
                code, detail = ("game_won", f"{players[winner or 0].name} won the game at "
                                            f"once: no turn comes after") \
                    if ended == "won" else ("game_over", "every box of this sheet is "
                                                         "filled: the player has no turn left")
                problems.append(Problem(tptr, detail, code))
                pl.records.append(_record(r, turn, None, pl.total, "after_end"))
                continue
            if not _in_turn(counts, pl.index, r):
                problems.append(Problem(tptr, f"turn {r + 1} of {pl.name} is out of turn: "
                                              f"players play in the order listed, one turn "
                                              f"each per round", "out_of_turn"))
            outcome, status = _replay_turn(rs, pl.sheet, turn, tptr, problems)
            if outcome is None:
                pl.records.append(_record(r, turn, None, pl.total, status))
                continue
            pl.replayed.append(_replayed(r, turn, pl.sheet, outcome))
            pl.sheet = outcome.sheet
            pl.total += outcome.points
            pl.records.append(_record(r, turn, outcome, pl.total, status))
            if outcome.sheet.won:
                ended, winner = "won", pl.index
    game_over = ended == "won" or (bool(players) and all(is_complete(p.sheet)
                                                         for p in players))
    validation = _answer(rs, game, base, players, problems, game_over, winner)
    return GameReplay(validation, problems, [p.replayed for p in players])


def _replayed(r: int, turn: dict[str, Any], before: Sheet,
              outcome: TurnOutcome) -> ReplayedTurn:
    """A turn played, as the analysis reads it."""
    kept = turn.get("kept")
    return ReplayedTurn(r, before, [normalise(d) for d in turn.get("throws") or []],
                        None if kept is None else [normalise(k) for k in kept],
                        outcome.throw, outcome, bool(turn.get("em_baixo")))


def _in_turn(counts: list[int], i: int, r: int) -> bool:
    """Whether player i may play round r: every player before has played it, every player
    after has played the round before."""
    return all(counts[q] > r for q in range(i)) and all(counts[q] >= r
                                                        for q in range(i + 1, len(counts)))


def _replay_turn(rs: RuleSet, sheet: Sheet, turn: dict[str, Any], tptr: str,
                 problems: list[Problem]) -> tuple[TurnOutcome | None, str]:
    """Check one recorded turn against the sheet as it stood and play it.

    Returns the outcome (None when the dice cannot be read: the box then takes the claimed
    points, see `_unreadable_turn`) and the turn's status: ok, illegal, not_scored."""
    v = rs.variant
    throws = turn.get("throws") or []
    found: list[Problem] = []
    readable = []
    for k, d in enumerate(throws):
        ps = dice_problems(rs, d, f"{tptr}/throws/{k}")
        readable.append(not ps)
        found += ps
    dice_ok = all(readable)
    kept = turn.get("kept")
    if kept is not None:
        found += _kept_problems(rs, throws, kept, readable, f"{tptr}/kept")
    limit = max_throw(rs, sheet)
    if len(throws) > limit:
        found.append(Problem(f"{tptr}/throws/{limit}",
                             f"a turn here has at most {plural(limit, 'throw')}"
                             + (f" (3 and {plural(sheet.saved_throws, 'saved throw')})"
                                if v.saved_throws else ""), "too_many_throws"))
    throw = max(1, min(len(throws), limit))
    em_baixo = bool(turn.get("em_baixo"))
    if em_baixo and not v.em_baixo:
        found += em_baixo_problems(rs, em_baixo, f"{tptr}/em_baixo")
        em_baixo = False
    problems += found
    box, column = turn.get("box"), turn.get("column")
    ptrs = Pointers(scorecard=tptr, dice=f"{tptr}/throws/{len(throws) - 1}",
                    throw=f"{tptr}/throws", box=f"{tptr}/box", column=f"{tptr}/column",
                    em_baixo=f"{tptr}/em_baixo", turn=tptr)
    scratch = bool(turn.get("scratch"))
    if not dice_ok or not throws:
        return _unreadable_turn(rs, sheet, turn, throw, ptrs), "not_scored"
    hs = score_hand(rs, throws[-1], throw, sheet, em_baixo)
    problem = move_problem(rs, sheet, hs, box, column, throw, ptrs, scratch)
    p = None
    writable = problem is None or problem.code in ("out_of_order", "first_throw_only",
                                                   "joker_forces_box")
    if box is not None and writable:
        p = find_placement(hs, box, column)  # an illegal box is written as the player did
    if problem is not None:
        problems.append(problem)
        if p is None and problem.code != "box_required":
            return None, "illegal"  # nothing to write (box filled, unknown box...)
    outcome = apply_turn(rs, sheet, hs, p, throw, legal=problem is None, scratch=scratch)
    claimed = turn.get("points")
    if claimed is not None and claimed != outcome.score:
        problems.append(_points_problem(rs, sheet, hs, p, claimed, outcome.score, throw,
                                        em_baixo, f"{tptr}/points", outcome.scratch))
    return outcome, "ok" if problem is None and not found else "illegal"


def _unreadable_turn(rs: RuleSet, sheet: Sheet, turn: dict[str, Any], throw: int,
                     ptrs: Pointers) -> TurnOutcome | None:
    """A turn whose dice are not a hand: its box takes the claimed points (0 when none or
    for a chosen 0), so the rest of the game is checked against the sheet as the players
    kept it."""
    box, column = turn.get("box"), turn.get("column")
    v = rs.variant
    if (box is None or box not in v.box_ids or _column_problem(rs, column, ptrs) is not None
            or sheet.won or is_complete(sheet)):
        return None
    col = sheet.columns[(column or 1) - 1]
    if col.filled(box):
        return None
    value = 0 if turn.get("scratch") else turn.get("points") or 0
    columns = [Column(dict(c.boxes), c.five_of_a_kind_bonuses) for c in sheet.columns]
    columns[(column or 1) - 1].boxes[box] = value
    saved = sheet.saved_throws + (v.throws - throw if v.saved_throws else 0)
    new = Sheet(columns, max(saved, 0), False)
    before, after = sheet_totals(rs, sheet), sheet_totals(rs, new)
    filled = filled_count(new)
    return TurnOutcome(sheet=new, box=box, column=column, dice=[], scored_dice=[],
                       throw=throw, score=value,
                       upper_bonus=after["upper_bonus"] - before["upper_bonus"],
                       turn=filled, turns_left=v.turns - filled, game_over=filled == v.turns)


def _kept_problems(rs: RuleSet, throws: list[Any], kept: list[Any], readable: list[bool],
                   ptr: str) -> list[Problem]:
    """Kept dice: one entry per throw but the last, each shown by the throw it was kept from
    and by the next one, never every die (a throw that is not a hand is not compared)."""
    problems: list[Problem] = []
    if len(kept) != max(len(throws) - 1, 0):
        problems.append(Problem(ptr, f"{plural(len(throws), 'throw')} need "
                                     f"{max(len(throws) - 1, 0)} entries in kept (the dice "
                                     f"kept after each throw but the last), got {len(kept)}",
                                "kept_count"))
    n = rs.variant.dice
    for k, keep in enumerate(kept[:max(len(throws) - 1, 0)]):
        kptr = f"{ptr}/{k}"
        bad = [Problem(f"{kptr}/{i}", f"{d!r} is not a face of a die (1 to 6)", "bad_face")
               for i, d in enumerate(keep) if not 1 <= d <= 6]
        if bad:
            problems += bad
            continue
        if not (readable[k] and readable[k + 1]):
            pass
        elif not _holds(throws[k], keep):
            problems.append(Problem(kptr, f"kept {sorted(keep)} but throw {k + 1} shows "
                                          f"{sorted(throws[k])}", "kept_not_in_throw"))
        elif not _holds(throws[k + 1], keep):
            missing = sorted((Counter(keep) - Counter(throws[k + 1])).elements())
            problems.append(Problem(kptr, f"kept {sorted(keep)} after throw {k + 1}, but throw "
                                          f"{k + 2} ({sorted(throws[k + 1])}) lacks "
                                          f"{missing}", "kept_not_in_next_throw"))
        if len(keep) >= n:
            problems.append(Problem(kptr, f"all {n} dice kept after throw {k + 1}: keeping "
                                          f"every die ends the throwing", "kept_all_dice"))
    return problems


def _holds(dice: list[int], part: list[int]) -> bool:
    """Whether the dice show every die of `part` (as a multiset)."""
    return all(part.count(f) <= dice.count(f) for f in set(part))


def _points_problem(rs: RuleSet, sheet: Sheet, hs: HandScore, p: Placement | None,
                    claimed: int, real: int, throw: int, em_baixo: bool, ptr: str,
                    scratch: bool = False) -> Problem:
    if p is not None and scratch:
        return Problem(ptr, f"claimed {claimed}, but the turn wrote a chosen 0 (scratch) in "
                            f"box {p.box!r}", "points_mismatch")
    if p is not None and throw > 1:
        first = find_placement(score_hand(rs, list(hs.dice), 1, sheet, em_baixo), p.box,
                               p.column)
        if first is not None and first.score == claimed:
            return Problem(ptr, f"claimed {claimed}, the first-throw score of {p.box!r}, but "
                                f"the dice stand on throw {throw}: the box scores {real}",
                           "first_throw_bonus_on_later_throw")
    where = f"box {p.box!r}" if p is not None else "this turn (no box written)"
    return Problem(ptr, f"claimed {claimed}, but the dice score {real} in {where}",
                   "points_mismatch")


def _record(r: int, turn: dict[str, Any], outcome: TurnOutcome | None, running: int,
            status: str) -> dict[str, Any]:
    throws = turn.get("throws") or []
    rec: dict[str, Any] = {"turn": r + 1, "status": status, "box": turn.get("box"),
                           "column": turn.get("column"), "throws": len(throws),
                           "dice": (outcome.dice or None) if outcome else None}
    if outcome is None:
        rec.update(score=0, joker=False, five_of_a_kind_bonus=0, upper_bonus=0,
                   first_throw_bonus=0, wins_game=False, points=0)
    else:
        rec.update(outcome.earned())
    rec["running_total"] = running
    return rec


def _answer(rs: RuleSet, game: dict[str, Any], base: str, players: list[_Player],
            problems: list[Problem], game_over: bool, winner: int | None) -> dict[str, Any]:
    out_players = []
    for pl, data in zip(players, game.get("players") or []):
        totals = sheet_totals(rs, pl.sheet)
        claimed = data.get("total")
        if claimed is not None and claimed != totals["total"]:
            problems.append(Problem(f"{base}/players/{pl.index}/total",
                                    f"claimed {claimed}, but the sheet totals "
                                    f"{totals['total']}", "total_mismatch"))
        out_players.append({"player": pl.index, "name": pl.name, "turns": pl.records,
                            "scorecard": scorecard_data(rs, pl.sheet), "totals": totals,
                            "total": totals["total"], "complete": is_complete(pl.sheet),
                            "won": pl.sheet.won})
    standings = _standings(out_players, winner)
    winners = [s["player"] for s in standings if s["winner"]] if game_over else []
    claimed_winners = game.get("winners")
    if claimed_winners is not None:
        problems += _winner_problems(claimed_winners, winners, len(players), game_over,
                                     f"{base}/winners")
    for s in standings:
        s["winner"] = s["winner"] and game_over
    problems.sort(key=lambda p: _pointer_key(p.pointer))
    return {"valid": not problems,
            "problems": [{"pointer": p.pointer, "code": p.code, "detail": p.detail}
                         for p in problems],
            "game_over": game_over,
            "ended_by": None if not game_over else ("instant_win" if winner is not None
                                                    else "sheets_full"),
            "winners": winners, "standings": standings, "players": out_players}


def _standings(players: list[dict[str, Any]], winner: int | None) -> list[dict[str, Any]]:
    """Players by rank: the instant winner first, then by total; equal totals share a rank
    (and, at the top of a finished game, the win)."""
    order = sorted(players, key=lambda p: (p["player"] != winner, -p["total"], p["player"]))
    out = []
    for pos, p in enumerate(order):
        prev = out[-1] if out else None
        same = (prev is not None and prev["total"] == p["total"]
                and winner not in (prev["player"], p["player"]))
        rank = prev["rank"] if same else pos + 1
        out.append({"rank": rank, "player": p["player"], "name": p["name"],
                    "total": p["total"], "winner": rank == 1})
    return out


def _winner_problems(claimed: list[int], winners: list[int], n: int, game_over: bool,
                     ptr: str) -> list[Problem]:
    bad = [Problem(f"{ptr}/{k}", f"no player {w} (players are 0 to {n - 1})", "unknown_player")
           for k, w in enumerate(claimed) if not 0 <= w < n]
    if bad:
        return bad
    if not game_over:
        return [Problem(ptr, "the game is not over: nobody has won yet", "winners_before_end")]
    if sorted(set(claimed)) != sorted(winners):
        return [Problem(ptr, f"claimed winners {sorted(set(claimed))}, but the winners are "
                             f"{winners}", "winners_mismatch")]
    return []


def _pointer_key(pointer: str) -> list[Any]:
    """Sort pointers in document order (numbers as numbers)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in pointer.split("/")]
