"""Whole games: replay a game to check every move in it (the one replay engine).

`validate_game` replays a game as a score-keeping app records it (players in order, each a
list of turns: the throws, optionally the dice kept between them, the box, whether it took a
chosen 0, claimed points)
and lists every problem it finds, each with a JSON pointer into the game, a code and a
detail, with each turn's points, running totals, final totals and standings.
`replay_game` is the same replay (the only one: games/validate and the game analysis both
read a recorded game through it). Each recorded turn is one `TurnRecord`, whatever became of
it: games/validate's answer dumps it (`TurnRecordSchema`) and the analysis judges the turns
played (the sheet before, the throws and kept dice, the outcome and the sheet after).

Each turn is played by `turn.py` (`move_problem`, `apply_turn`), whose legality and scores
come from `scoring.score_hand`; this module adds only what a whole game decides
(docs/rules.md, decisions 11-18): turn order, the end of the game, instant wins, throws and
kept dice, claimed points, totals and winners.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .consistency import plural
from .counting import column_index, turn_number
from .dice import Hand, normalise
from .errors import Problem
from .rules import RuleSet, UnderRules
from .scorecards import Scorecard, filled_count, is_complete, scorecard_of, sheet_totals
from .scoring import (
    Column,
    HandScore,
    Placement,
    Sheet,
    Totals,
    dice_problems,
    em_baixo_problems,
    empty_sheet,
    max_throw,
    score_hand,
)
from .turn import (
    Pointers,
    TurnOutcome,
    apply_turn,
    column_problem,
    find_placement,
    move_problem,
)


@dataclass(slots=True)
class TurnRecord:  # made once a turn: not frozen, as Earned (see turn.py)
    """One recorded turn as the replay played it (or did not): games/validate's answer
    dumps it (`TurnRecordSchema`) and the game analysis judges it.

    `index`: the turn's place in the player's list (0 = first; the API's `turn` counts from
    1). `status`: ok, illegal, not_scored (the dice are not a hand: the box took the claimed
    points), after_end (after the game ended: not applied). `before`: the sheet as the turn
    found it. `throws`: the dice of each throw (sorted); `kept`: the dice kept after each
    throw but the last (sorted; None when the turn does not record them); `em_baixo`: the
    last throw was read by its bottom faces (Bozó). `outcome`: the turn played (the box
    written, None for an instant win that writes none; what it earned; the sheet after it),
    None when the turn was not applied. `running_total`: the player's total after it."""

    index: int
    status: str
    before: Sheet
    throws: tuple[Hand, ...]
    kept: tuple[Hand, ...] | None
    em_baixo: bool
    outcome: TurnOutcome | None
    running_total: int

    @property
    def turn(self) -> int:
        """The turn's number on the player's sheet, as the API counts (1 = first)."""
        return turn_number(self.index)

    @property
    def throw_count(self) -> int:
        """How many throws the turn made."""
        return len(self.throws)

    @property
    def dice(self) -> Hand | None:
        """The last throw scored, sorted: None when the dice are not a hand or the turn was
        not applied."""
        o = self.outcome
        return None if o is None else o.dice or None


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's place (`StandingSchema`): equal totals share a rank, and `winner` is the
    top rank once the game is over."""

    rank: int
    player: int
    name: str
    total: int
    winner: bool


def player_name(player: dict[str, Any], index: int) -> str:
    """A player's name in every answer: the request's, else "Player <n>", counted from 1
    (`index` counts from 0)."""
    return player.get("name") or f"Player {index + 1}"


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """A player's game replayed (`PlayerResultSchema`): each turn, the final sheet as the
    API's scorecard, its totals, and whether it is complete and won."""

    player: int
    name: str
    turns: list[TurnRecord]  # every recorded turn, played or not
    scorecard: Scorecard
    totals: Totals
    total: int
    complete: bool
    won: bool


@dataclass(frozen=True, slots=True)
class GameValidation(UnderRules):
    """games/validate's answer (`GameValidationSchema`): no problem found, every problem in
    document order, whether and how the game ended, the winners, the standings and each
    player's game, under the rules `rules`."""

    valid: bool
    problems: list[Problem]
    game_over: bool
    ended_by: str | None
    winners: list[int]
    standings: list[Standing]
    players: list[PlayerResult]
    rules: RuleSet = field(kw_only=True, repr=False)


@dataclass
class GameReplay:
    """A game replayed: games/validate's answer (`validation`, each player's every turn
    recorded among it) and the problems found (each with pointer, code and detail; none for
    a game valid so far)."""

    validation: GameValidation
    problems: list[Problem]

    @property
    def turns(self) -> list[list[TurnRecord]]:
        """Each player's turns as played (`turns[player]`; a turn that was not applied is
        left out)."""
        return [[t for t in p.turns if t.outcome is not None]
                for p in self.validation.players]


@dataclass
class _Player:
    """One player's state while a game is replayed."""

    index: int
    name: str
    turns: list[dict[str, Any]]
    sheet: Sheet
    total: int = 0
    records: list[TurnRecord] = field(default_factory=list)


def validate_game(rs: RuleSet, game: dict[str, Any], base: str = "") -> GameValidation:
    """Replay a game and check every move (games/validate's answer, see `replay_game`)."""
    return replay_game(rs, game, base).validation


def replay_game(rs: RuleSet, game: dict[str, Any], base: str = "") -> GameReplay:
    """Replay a game and check every move; `base` is the game's pointer in the request.

    `game`: {"players": [{"name"?, "turns": [{"throws": [[dice], ...], "kept"?: [[dice],
    ...], "box"?, "column"?, "em_baixo"?, "scratch"?, "points"?}], "total"?}],
    "winners"?: [index]}.
    The validation answers valid, every problem (pointer, code, detail), each player's
    turns with their points and running totals, the final sheets and totals, and the
    standings. A partial game is valid so far. Every recorded turn is a `TurnRecord`, which
    the game analysis reads too.
    """
    problems: list[Problem] = []
    players = [_Player(i, player_name(p, i), p.get("turns") or [],
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
                pl.records.append(_record(r, turn, pl.sheet, None, pl.total, "after_end"))
                continue
            if not _in_turn(counts, pl.index, r):
                problems.append(Problem(tptr, f"turn {turn_number(r)} of {pl.name} is out of turn: "
                                              f"players play in the order listed, one turn "
                                              f"each per round", "out_of_turn"))
            outcome, status = _replay_turn(rs, pl.sheet, turn, tptr, problems)
            if outcome is None:
                pl.records.append(_record(r, turn, pl.sheet, None, pl.total, status))
                continue
            pl.records.append(_record(r, turn, pl.sheet, outcome, pl.total + outcome.points,
                                      status))
            pl.sheet = outcome.sheet
            pl.total += outcome.points
            if outcome.sheet.won:
                ended, winner = "won", pl.index
    game_over = ended == "won" or (bool(players) and all(is_complete(p.sheet)
                                                         for p in players))
    validation = _answer(rs, game, base, players, problems, game_over, winner)
    return GameReplay(validation, problems)


def _record(r: int, turn: dict[str, Any], before: Sheet, outcome: TurnOutcome | None,
            running: int, status: str) -> TurnRecord:
    """The record of turn `r` (its index in the player's list) of a player, as replayed."""
    kept = turn.get("kept")
    # tuples of tuples of ints, which the garbage collector stops tracking: a batch of
    # games keeps every record until its answer is written
    return TurnRecord(r, status, before, tuple(map(normalise, turn.get("throws") or ())),
                      None if kept is None else tuple(map(normalise, kept)),
                      bool(turn.get("em_baixo")), outcome, running)


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
    if (box is None or box not in v.box_ids or column_problem(rs, column, ptrs) is not None
            or sheet.won or is_complete(sheet)):
        return None
    col = sheet.columns[column_index(column)]
    if col.filled(box):
        return None
    value = 0 if turn.get("scratch") else turn.get("points") or 0
    columns = [Column(dict(c.boxes), c.five_of_a_kind_bonuses) for c in sheet.columns]
    columns[column_index(column)].boxes[box] = value
    saved = sheet.saved_throws + (v.throws - throw if v.saved_throws else 0)
    new = Sheet(columns, max(saved, 0), False)
    before, after = sheet_totals(rs, sheet), sheet_totals(rs, new)
    filled = filled_count(new)
    upper = after.upper_bonus - before.upper_bonus
    return TurnOutcome(box, column, value, upper_bonus=upper, points=value + upper, sheet=new,
                       dice=(), scored_dice=(), throw=throw,
                       turn=turn_number(filled_count(sheet)),
                       turns_left=v.turns - filled, game_over=filled == v.turns)


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


def _answer(rs: RuleSet, game: dict[str, Any], base: str, players: list[_Player],
            problems: list[Problem], game_over: bool, winner: int | None) -> GameValidation:
    out_players = []
    for pl, data in zip(players, game.get("players") or []):
        totals = sheet_totals(rs, pl.sheet)
        claimed = data.get("total")
        if claimed is not None and claimed != totals.total:
            problems.append(Problem(f"{base}/players/{pl.index}/total",
                                    f"claimed {claimed}, but the sheet totals "
                                    f"{totals.total}", "total_mismatch"))
        out_players.append(PlayerResult(pl.index, pl.name, pl.records,
                                        scorecard_of(rs, pl.sheet), totals, totals.total,
                                        is_complete(pl.sheet), pl.sheet.won))
    standings = _standings(out_players, winner, game_over)
    winners = [s.player for s in standings if s.rank == 1] if game_over else []
    claimed_winners = game.get("winners")
    if claimed_winners is not None:
        problems += _winner_problems(claimed_winners, winners, len(players), game_over,
                                     f"{base}/winners")
    problems.sort(key=lambda p: _pointer_key(p.pointer))
    ended_by = None if not game_over else ("instant_win" if winner is not None
                                           else "sheets_full")
    return GameValidation(not problems, problems, game_over, ended_by, winners, standings,
                          out_players, rules=rs)


def _standings(players: list[PlayerResult], winner: int | None,
               game_over: bool) -> list[Standing]:
    """Players by rank: the instant winner first, then by total; equal totals share a rank
    (and, at the top of a finished game, the win)."""
    order = sorted(players, key=lambda p: (p.player != winner, -p.total, p.player))
    out: list[Standing] = []
    for pos, p in enumerate(order):
        prev = out[-1] if out else None
        same = (prev is not None and prev.total == p.total
                and winner not in (prev.player, p.player))
        rank = prev.rank if same else pos + 1
        out.append(Standing(rank, p.player, p.name, p.total, rank == 1 and game_over))
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
