"""A request body per operation and variant, for the OpenAPI document's examples (so the
docs page's *Try it out* answers 200 as it comes), made from the variant data by the
domain's own game engine: nothing here is written per variant.

A short game of two players is played with fixed dice (`HANDS`, cut to the variant's number
of dice), each turn writing the open box that scores most (`domain.scoring.score_hand`,
`domain.turn.play_turn`), and checked by `domain.games.validate_game`. Its recorded form is
the body of games/validate and games/analyze; the sheets it leaves, compact (only filled
boxes), are the scorecards of the other examples. Every example uses the variant's default
options and no house rules (a built-in variant's tables: no 202 for a table to build).

`examples(vid)` maps an operation, by its path after `/v1/variants/{variant}/` (as
`hands/score/batch`), to its body; `ContractPlugin` puts them in the document.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ..domain.games import validate_game
from ..domain.rules import RuleSet, effective_rules
from ..domain.scoring import Placement, Sheet, empty_sheet, score_hand
from ..domain.turn import play_turn
from ..domain.variants import VARIANT_IDS, VARIANTS

#: The dice of the example game's throws, in order, and of the examples' next hand (never
#: five of a kind: in some variants that wins the game at once, and the game would end)
HANDS = ((2, 3, 3, 5, 6, 1), (3, 3, 3, 1, 4, 6), (1, 2, 3, 4, 6, 6), (6, 6, 5, 5, 2, 4),
         (4, 4, 4, 4, 1, 2), (2, 3, 4, 5, 5, 1), (5, 5, 2, 2, 2, 3), (1, 1, 4, 6, 6, 3))
#: The first turn throws twice, keeping these dice of the first throw
KEPT = (3, 3)
PLAYERS = ("Ana", "Bruno")
#: The prefix of every operation's path that names a variant
PREFIX = "/v1/variants/"


def _dice(rs: RuleSet, i: int) -> list[int]:
    return sorted(HANDS[i % len(HANDS)][:rs.variant.dice])


def _best(rs: RuleSet, sheet: Sheet, dice: list[int], throw: int) -> Placement:
    """The open box the dice score most in (the first in sheet order on a tie)."""
    placements = [p for p in score_hand(rs, dice, throw, sheet).boxes if p.open and p.legal]
    return max(placements, key=lambda p: p.score)


def _turn(rs: RuleSet, sheet: Sheet, throws: list[list[int]]) -> tuple[dict[str, Any], Sheet]:
    """One recorded turn (its throws, the dice kept between them, the box written) and the
    sheet after it."""
    p = _best(rs, sheet, throws[-1], len(throws))
    turn: dict[str, Any] = {"throws": throws}
    if len(throws) > 1:
        turn["kept"] = [list(KEPT)]
    turn["box"] = p.box
    if p.column is not None:
        turn["column"] = p.column
    outcome = play_turn(rs, sheet, throws[-1], len(throws), p.box, p.column)
    return turn, outcome.sheet


def compact(rs: RuleSet, sheet: Sheet) -> dict[str, Any]:
    """A sheet as a request's scorecard, only what is filled or won (the rest defaults)."""
    def column(c: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"boxes": {b: v for b, v in c.boxes.items() if v is not None}}
        if c.five_of_a_kind_bonuses:
            out["five_of_a_kind_bonuses"] = c.five_of_a_kind_bonuses
        return out

    data = ({"columns": [column(c) for c in sheet.columns]} if rs.variant.columns
            else column(sheet.columns[0]))
    if sheet.saved_throws:
        data["saved_throws"] = sheet.saved_throws
    if sheet.won:
        data["won"] = True
    return data


@cache
def examples(vid: str) -> dict[str, Any]:
    """Every operation's example body for the variant (module docstring)."""
    rs = effective_rules(vid)
    n = rs.variant.dice
    # the game: Ana throws twice in her first turn (keeping two threes), then one throw a turn
    sheets = [empty_sheet(rs) for _ in PLAYERS]
    turns: list[list[dict[str, Any]]] = [[] for _ in PLAYERS]
    hand = 0
    for r in range(2):
        for i in range(len(PLAYERS)):
            if r == 0 and i == 0:
                throws = [_dice(rs, 0), sorted([*KEPT, *HANDS[1][len(KEPT):n]])]
                hand = 2
            else:
                throws = [_dice(rs, hand)]
                hand += 1
            turn, sheets[i] = _turn(rs, sheets[i], throws)
            turns[i].append(turn)
    game = {"players": [{"name": name, "turns": t} for name, t in zip(PLAYERS, turns,
                                                                        strict=True)]}
    first_round = {"players": [{"name": name, "turns": t[:1]}
                               for name, t in zip(PLAYERS, turns, strict=True)]}
    for g in (game, first_round):
        if not validate_game(rs, g).valid:
            raise AssertionError(f"{vid}: the example game is not valid")
    ana, bruno = (compact(rs, s) for s in sheets)
    dice, other = _dice(rs, hand), _dice(rs, hand + 1)
    defaults = {o.name: o.default for o in rs.variant.options}
    turn = {"scorecard": ana, "dice": dice, "throw": 2, "box": _best(rs, sheets[0], dice, 2).box}
    other_turn = {"scorecard": bruno, "dice": other, "throw": 1,
                  "box": _best(rs, sheets[1], other, 1).box}
    for t, sheet in ((turn, sheets[0]), (other_turn, sheets[1])):
        play_turn(rs, sheet, t["dice"], t["throw"], t["box"])  # raises if it is not legal
    return {
        "rules": {"options": defaults} if defaults else {},
        "hands/validate": {"dice": dice, "throw": 1},
        "hands/score": {"dice": dice, "throw": 2, "scorecard": ana},
        "hands/score/batch": [{"dice": dice, "throw": 1},
                              {"dice": other, "throw": 3, "scorecard": bruno}],
        "scorecards/score": ana,
        "scorecards/score/batch": [ana, bruno],
        "games/turn": turn,
        "games/turn/batch": [turn, other_turn],
        "games/validate": game,
        "games/validate/batch": [game, first_round],
        "games/analyze": game,
        "moves/suggest": {"dice": dice, "throw": 1, "scorecard": ana},
        "moves/bot": {"dice": dice, "throw": 1, "scorecard": ana, "level": "casual",
                      "seed": 7},
        "positions/value": {"scorecard": ana, "dice": dice, "throw": 1, "at_least": [100]},
        "games/win-probability": {
            "players": [{"name": PLAYERS[0], "scorecard": ana},
                        {"name": PLAYERS[1], "scorecard": bruno}],
            "to_move": 0, "dice": dice, "throw": 1},
    }


def operation_of(path: str) -> tuple[str | None, str] | None:
    """A path's variant (None for the templated `{variant}`) and operation (its path after
    the variant), or None for a path that names no variant."""
    if not path.startswith(PREFIX):
        return None
    vid, _, operation = path[len(PREFIX):].partition("/")
    if not operation:
        return None
    if vid == "{variant}":
        return None, operation
    return (vid, operation) if vid in VARIANTS else None


def media_examples(path: str) -> dict[str, Any]:
    """What a request body's media type gets on this path: a variant's path, its `example`;
    the templated path, `examples` named by variant id (summary: the variant's English
    name), for Swagger UI to offer; nothing for an operation without one."""
    found = operation_of(path)
    if found is None:
        return {}
    vid, operation = found
    if vid is not None:
        body = examples(vid).get(operation)
        return {} if body is None else {"example": body}
    named = {v: {"summary": VARIANTS[v].labels.get("en", VARIANTS[v].name),
                 "description": f"Choose `{v}` as the variant",
                 "value": examples(v)[operation]}
             for v in VARIANT_IDS if operation in examples(v)}
    return {"examples": named} if named else {}
