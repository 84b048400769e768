"""Schemas of the games resource (games/turn, games/validate, and the request of
games/analyze, which takes the same recorded game): every constraint a request must meet, and
what the answers hold.

Kept apart from `schemas.py` so the games resource can grow without touching the scoring
endpoints' contract. The scorecard here uses the API's vocabulary (`five_of_a_kind_bonuses`),
and a scorecard in an answer can be sent back unchanged as the next request's scorecard.
"""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from ...domain.errors import ALL_CODES
from ...domain.variants import ALL_BOX_IDS
from .common import (
    MAX_NAME,
    MAX_THROW,
    MAX_VALUE,
    AnswerFields,
    HandAnswerFields,
    NamedPlayerFields,
    PlacementFields,
    RulesRequestFields,
    ScorecardSchema,
    StrictSchema,
    TotalsFields,
    _bool,
    _int,
    answer_dice,
    answer_scored_dice,
    box_id,
    dice_field,
    problem_code,
    problem_detail,
    scoring_em_baixo,
    throw_stood_on,
)

MAX_PLAYERS = 16
MAX_GAME_TURNS = 64  # per player: 52 on a column sheet, with room for turns played too many
MAX_TURN_THROWS = 48  # a Maxi Yatzy turn may reach 41 throws; more are reported, not refused
MAX_RECORDED_DICE = 12  # dice in one recorded throw: more than 6 is reported, not refused
MAX_TOTAL = 1_000_000


# --------------------------------------------------------------------------- scorecards


# --------------------------------------------------------------------------- games/turn


class TurnRequestSchema(RulesRequestFields):
    """One turn: the sheet before it, the dice it ended on, their throw, the box chosen."""

    scorecard = fields.Nested(ScorecardSchema, metadata={
        "description": "The sheet before the turn (absent: an empty sheet)"})
    dice = dice_field(required=True)
    throw = _int(1, MAX_THROW, required=True, metadata={
        "description": "The throw of the turn the dice stand on (1 = first); the player "
                       "stopped there"})
    box = box_id(allow_none=True, metadata={
        "description": "The box to write the dice in; absent or null only for an instant "
                       "win (Generala servida, General de boca) that writes no box"})
    column = _int(1, 4, allow_none=True, metadata={
        "description": "Column sheets: the column of the box (1-4)"})
    em_baixo = scoring_em_baixo()
    scratch = _bool(metadata={
        "description": "Write 0 in the box whatever the dice score there (a chosen 0, "
                       "docs/rules.md decisions 3 and 25): allowed in any box the dice may "
                       "be written in (order rules, first-throw column, forced Joker); a "
                       "five-of-a-kind bonus the dice earn there is kept where the bonus "
                       "does not need the roll scored (the YAHTZEE bonus, not Kniffel's "
                       "extra +50)"})


class EarnedSchema(PlacementFields):
    """What a turn added to the sheet."""

    box = box_id(allow_none=True, required=True, metadata={
        "description": "The box written (null: an instant win that wrote none)"})
    first_throw_bonus = fields.Integer(required=True, metadata={
        "description": "Points of the score that the first throw added (servida, de boca, "
                       "General de mão); part of score"})
    points = fields.Integer(required=True, metadata={
        "description": "score + five_of_a_kind_bonus + upper_bonus"})


class GameTotalsSchema(TotalsFields):
    """A sheet's totals."""


# games/turn's answer is a `turn.TurnResult`: the turn played (`TurnOutcome`, which is also
# what it earned) held in its `outcome`, whose fields are read from there, beside the
# scorecard and totals only the answer has.
class TurnResultSchema(HandAnswerFields):
    """A turn played: the new sheet and what the turn earned."""

    dice = answer_dice(attribute="outcome.dice")
    scored_dice = answer_scored_dice(attribute="outcome.scored_dice")
    throw = throw_stood_on(attribute="outcome.throw")
    scorecard = fields.Nested(ScorecardSchema, required=True, metadata={
        "description": "The sheet after the turn, to send as the next turn's scorecard"})
    earned = fields.Nested(EarnedSchema, required=True, attribute="outcome")
    totals = fields.Nested(GameTotalsSchema, required=True)
    turn = fields.Integer(required=True, attribute="outcome.turn", metadata={
        "description": "This turn's number on the player's sheet (1 = first)"})
    turns_left = fields.Integer(required=True, attribute="outcome.turns_left", metadata={
        "description": "Turns the player has left (0 once the game is over)"})
    game_over = fields.Boolean(required=True, attribute="outcome.game_over", metadata={
        "description": "The sheet is full, or the game was won at once"})
    won = fields.Boolean(required=True, attribute="outcome.sheet.won", metadata={
        "description": "The game was won at once"})


# --------------------------------------------------------------------------- games/validate


def _dice_list(description: str) -> fields.List:
    return fields.List(fields.Integer(strict=True), validate=validate.Length(
        max=MAX_RECORDED_DICE), metadata={"description": description})


class RecordedTurnSchema(StrictSchema):
    """A turn as it was played."""

    throws = fields.List(_dice_list("The dice of one throw, in any order"), required=True,
                         validate=validate.Length(1, MAX_TURN_THROWS), metadata={
                             "description": "The dice of each throw, first to last; faces "
                                            "and counts are checked by the rules (problems "
                                            "bad_face, dice_count), not refused"})
    kept = fields.List(_dice_list("The dice kept after that throw"),
                       validate=validate.Length(max=MAX_TURN_THROWS), metadata={
                           "description": "Optional: the dice kept after each throw but the "
                                          "last (one entry fewer than throws)"})
    box = fields.String(allow_none=True, validate=validate.Length(max=64), metadata={
        "description": "The box written (a box id of the table; another is reported, code "
                       "unknown_box, not refused); absent or null only for an instant win"})
    column = _int(1, 4, allow_none=True, metadata={"description": "Column sheets: 1-4"})
    em_baixo = _bool(metadata={"description": "Bozó: the bottom faces were scored"})
    scratch = _bool(metadata={
        "description": "The box took a chosen 0 whatever the dice score there (as in "
                       "games/turn)"})
    points = _int(0, MAX_VALUE, allow_none=True, metadata={
        "description": "Optional claim: the points written in the box (0 for a scratch)"})


class PlayerSchema(NamedPlayerFields):
    """A player and the turns they played, in order."""

    turns = fields.List(fields.Nested(RecordedTurnSchema), required=True,
                        validate=validate.Length(max=MAX_GAME_TURNS), metadata={
        "description": "The player's turns, in order"})
    total = _int(0, MAX_TOTAL, allow_none=True, metadata={
        "description": "Optional claim: the player's total (final, or so far)"})


# --------------------------------------------------------------------------- fast path
# A recorded game is mostly lists of small integers, which marshmallow checks one field
# object at a time (half the cost of a validation). The check below only ever accepts what
# GameSchema accepts, unchanged; anything else (options, rules, an odd value) goes through
# marshmallow, which gives the errors. tests/web/test_games_api.py checks the two agree.

_BOX_IDS = frozenset(ALL_BOX_IDS)


def _ints(value: object, most: int) -> bool:
    return type(value) is list and len(value) <= most and all(type(d) is int for d in value)


def _fast_turn(turn: object) -> bool:
    if type(turn) is not dict:
        return False
    for key, value in turn.items():
        if key == "throws":
            ok = (type(value) is list and 1 <= len(value) <= MAX_TURN_THROWS
                  and all(_ints(t, MAX_RECORDED_DICE) for t in value))
        elif key == "kept":
            ok = (type(value) is list and len(value) <= MAX_TURN_THROWS
                  and all(_ints(t, MAX_RECORDED_DICE) for t in value))
        elif key == "box":
            ok = value is None or (type(value) is str and value in _BOX_IDS)
        elif key == "column":
            ok = value is None or (type(value) is int and 1 <= value <= 4)
        elif key in ("em_baixo", "scratch"):
            ok = type(value) is bool
        elif key == "points":
            ok = value is None or (type(value) is int and 0 <= value <= MAX_VALUE)
        else:
            ok = False
        if not ok:
            return False
    return "throws" in turn


def _fast_player(player: object) -> bool:
    if type(player) is not dict or "turns" not in player:
        return False
    for key, value in player.items():
        if key == "turns":
            ok = (type(value) is list and len(value) <= MAX_GAME_TURNS
                  and all(_fast_turn(t) for t in value))
        elif key == "name":
            ok = type(value) is str and len(value) <= MAX_NAME
        elif key == "total":
            ok = value is None or (type(value) is int and 0 <= value <= MAX_TOTAL)
        else:
            ok = False
        if not ok:
            return False
    return True


def fast_load_game(data: object) -> dict | None:
    """The game unchanged when it is plainly valid for GameSchema, else None."""
    if type(data) is not dict or "players" not in data:
        return None
    for key, value in data.items():
        if key == "players":
            ok = (type(value) is list and 1 <= len(value) <= MAX_PLAYERS
                  and all(_fast_player(p) for p in value))
        elif key == "winners":
            ok = value is None or _ints(value, MAX_PLAYERS)
        else:
            ok = False
        if not ok:
            return None
    return data


class GameSchema(RulesRequestFields):
    """A game as it was played (or so far)."""

    fast_load = staticmethod(fast_load_game)

    players = fields.List(fields.Nested(PlayerSchema), required=True,
                          validate=validate.Length(1, MAX_PLAYERS), metadata={
                              "description": "In playing order; one turn each per round"})
    winners = fields.List(fields.Integer(strict=True), validate=validate.Length(
        max=MAX_PLAYERS), allow_none=True, metadata={
        "description": "Optional claim: the winners, by index in players (0 = first)"})


class GameProblemSchema(ma.Schema):
    """One thing wrong with the game."""

    pointer = fields.String(required=True, metadata={
        "description": "JSON pointer into the request body (batch: starts with the game's "
                       "index)"})
    code = problem_code(ALL_CODES)
    detail = problem_detail()


# A turn replayed is the replay's `games.TurnRecord`: its number (`turn`, counted from 1 from
# the record's index), the count of its throws, and what it earned: its outcome
# (`TurnOutcome`, an Earned), dumped as games/turn's `earned`.
class TurnRecordSchema(ma.Schema):
    """A turn replayed: its number, status and throws, and what it earned, as games/turn
    tells it."""

    turn = fields.Integer(required=True, metadata={
        "description": "The turn's number on the player's sheet (1 = first)"})
    status = fields.String(required=True, validate=validate.OneOf(
        ("ok", "illegal", "not_scored", "after_end")), metadata={
        "description": "ok; illegal (problems name why; written as played where possible); "
                       "not_scored (dice unreadable: the box takes the claimed points); "
                       "after_end (after the game ended: not applied)"})
    throws = fields.Integer(required=True, attribute="throw_count", metadata={
        "description": 'How many throws the turn made'})
    dice = fields.List(fields.Integer(), allow_none=True, required=True, metadata={
        "description": "The last throw, sorted"})
    running_total = fields.Integer(required=True, metadata={
        "description": "The player's total after this turn"})
    earned = fields.Nested(EarnedSchema, allow_none=True, required=True, attribute="outcome",
                           metadata={
        "description": "What the turn added to the sheet, as games/turn's `earned` (null: "
                       "the turn was not applied)"})


def _player_index() -> fields.Integer:
    """Which player of the request an answer's entry is about."""
    return fields.Integer(required=True, metadata={
        "description": "The player's index in the request"})


def _player_total() -> fields.Integer:
    """A player's total in an answer."""
    return fields.Integer(required=True, metadata={"description": "The player's total"})


class PlayerResultSchema(ma.Schema):
    """A player's game replayed."""

    player = _player_index()
    name = fields.String(required=True, metadata={
        "description": "The player's name: the request's, else \"Player <n>\", counted from 1"})
    turns = fields.List(fields.Nested(TurnRecordSchema), required=True, metadata={
        "description": 'Each turn replayed'})
    scorecard = fields.Nested(ScorecardSchema, required=True)
    totals = fields.Nested(GameTotalsSchema, required=True)
    total = _player_total()
    complete = fields.Boolean(required=True, metadata={
        "description": "The player's sheet is full (or the game was won at once)"})
    won = fields.Boolean(required=True, metadata={
        "description": 'The player won (alone or sharing the top total)'})


class StandingSchema(ma.Schema):
    """A player's place."""

    rank = fields.Integer(required=True, metadata={"description": "1 = first; ties share"})
    player = _player_index()
    name = fields.String(required=True, metadata={"description": "The player's name"})
    total = _player_total()
    winner = fields.Boolean(required=True, metadata={
        "description": 'The player is among the winners'})


class GameValidationSchema(AnswerFields):
    """Whether every move of the game was legal, with scores and standings."""

    valid = fields.Boolean(required=True, metadata={
        "description": "No problem found (a partial game: valid so far)"})
    problems = fields.List(fields.Nested(GameProblemSchema), required=True, metadata={
        "description": "Every problem found, in document order"})
    game_over = fields.Boolean(required=True, metadata={
        "description": 'The game has ended (every sheet full, or an instant win)'})
    ended_by = fields.String(allow_none=True, required=True, validate=validate.OneOf(
        ("sheets_full", "instant_win")), metadata={
        "description": 'How the game ended (null while it goes on)'})
    winners = fields.List(fields.Integer(), required=True, metadata={
        "description": "Indexes of the winners once the game is over (ties share the win); "
                       "empty before"})
    standings = fields.List(fields.Nested(StandingSchema), required=True, metadata={
        "description": 'Players by total, best first'})
    players = fields.List(fields.Nested(PlayerResultSchema), required=True, metadata={
        "description": "Each player's game replayed, in the request's order"})
