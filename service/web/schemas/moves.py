"""The contract of /v1/variants/{variant}/moves: the advisor's suggestion."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from ...advisor.advice.bots import LEVEL_NAMES
from ...advisor.advice.objective import Field
from ...advisor.objectives import REGISTRY, objective_names
from .common import (
    MAX_THROW,
    MAX_WIN_PLAYERS,
    AnswerSchema,
    HandAnswerFields,
    MoveUnionField,
    PlacementFields,
    Rounded,
    RulesRequestFields,
    ScorecardSchema,
    _bool,
    _int,
    dice_field,
    move_union,
    on_move,
    values_method,
)

#: What a position's moves may be ranked by (`objective`): the registered objectives
#: (`service/advisor/objectives/`).
OBJECTIVES = objective_names()


def _field(f: Field, **kw: Any) -> fields.Field:
    """The marshmallow field of an objective's request or answer field (`Field.kind`)."""
    meta = {"metadata": {"description": f.description}, **kw}
    if f.kind == "number" and "places" in meta:
        return Rounded(**meta)
    if f.kind == "scorecards":
        return fields.List(fields.Nested(ScorecardSchema), validate=validate.Length(
            1, MAX_WIN_PLAYERS - 1), **meta)
    if f.kind == "integer" and f.minimum is not None and f.maximum is not None:
        return _int(f.minimum, f.maximum, **meta)
    kinds = {"boolean": fields.Boolean, "string": fields.String, "number": fields.Float,
             "integer": fields.Integer}
    return kinds[f.kind](**meta)


def _objective_fields(kind: str) -> dict[str, fields.Field]:
    """Every registered objective's fields of one kind: "request" (what it reads),
    "answer" (what it adds to the answer: a `Suggestion`'s `extra`), "measure" (what it
    gives each move: a `RankedMove`'s `measures`, to 9 decimals)."""
    out: dict[str, fields.Field] = {}
    held_in = {"request": None, "answer": "extra", "measure": "measures"}[kind]
    for o in REGISTRY.values():
        found = {"request": (o.request,), "answer": o.answer, "measure": (o.measure,)}[kind]
        for f in found:
            if f is None:
                continue
            kw: dict[str, Any] = {} if held_in is None else {"attribute": f"{held_in}.{f.name}"}
            if kind == "measure":
                kw["places"] = 9
            out[f.name] = _field(f, **kw)
    return out


#: A position to move in: the dice, the throw they stand on, the sheet, the objective and
#: the fields the objectives read.
PositionRequestFields = RulesRequestFields.from_dict({
    "dice": dice_field(required=True),
    "throw": _int(1, MAX_THROW, required=True, metadata={
        "description": "Throw of the turn these dice stand on (1 = first); the throws left "
                       "follow from it"}),
    "scorecard": fields.Nested(ScorecardSchema),
    "em_baixo": _bool(metadata={"description": "Bozó: this throw was announced 'em baixo': "
                                               "the dice, sent as thrown, are scored by the "
                                               "faces turned to the table"}),
    "objective": fields.String(validate=validate.OneOf(OBJECTIVES), metadata={
        "description": "What the moves are ranked by: " + "; ".join(
            o.description for o in REGISTRY.values())}),
    **_objective_fields("request"),
}, name="PositionRequestFields")


#: The most moves a position has: every keep of up to six dice (63 subsets, fewer as
#: multisets) and a placement per box (Maxi Yatzy: 20, in columns more): `limit`'s bound.
MAX_MOVES = 1000


class MoveSuggestRequestSchema(PositionRequestFields):
    """A position to advise on: the dice, the throw they stand on, the sheet."""

    coach = _bool(metadata={
        "description": "Add to every keep the probability that the turn ends with points in "
                       "each box and the expected points of the turn (under the advisor's "
                       "play of the rest of the turn)"})
    limit = _int(1, MAX_MOVES, metadata={
        "description": "Answer only the first `limit` moves of the ranked list in `moves` "
                       "(the best first; a move keeps its rank, so the last ones may tie with "
                       "moves left out). Without it, every move: up to 1 + 31 keeps and a "
                       "placement per open box"})


def _move_common() -> dict[str, fields.Field]:
    return {
        "expected_final_score": Rounded(6, required=True, metadata={
            "description": "Expected final total of the sheet after this move under optimal "
                           "play (points already on the sheet included)"}),
        "regret": Rounded(6, required=True, metadata={
            "description": "Best expected final score minus this move's (0 for the best by "
                           "expected score, whatever the objective)"}),
        "rank": fields.Integer(required=True, metadata={
            "description": "1 = best; moves tied in value share a rank"}),
        "tie": fields.Boolean(required=True, metadata={
            "description": "Another move has the same value (within 1e-4, the precision of "
                           "the float32 tables; with objective win, the same win share "
                           "within 1e-9)"}),
        **_objective_fields("measure"),
    }


# A suggested move is a `RankedMove`: the move (`domain.moves.Keep` or `ScoreBox`, its
# fields read from `move`) with its figures beside it.
KeepMoveSchema = AnswerSchema.from_dict({
    **on_move({"action": fields.String(required=True, validate=validate.OneOf(("keep",)),
                                       metadata={"description": "keep: keep these dice and "
                                                                "throw the others"})}),
    **_move_common(),
    **on_move({
        "dice": fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True,
                            metadata={"description": "The dice to keep as thrown (their top "
                                                     "faces, fewer than all, sorted): a "
                                                     "sub-multiset of the position's `dice`, "
                                                     "what a recorded game's `kept` takes"}),
        # False outside Bozó, where the move's `em_baixo` is None
        "em_baixo": fields.Boolean(required=True, attribute="announced", metadata={
            "description": "Bozó: announce 'em baixo' before the next throw, which is then "
                           "read by its bottom faces, kept dice included (send it as that "
                           "throw's `em_baixo`); false: the next throw is read by its top "
                           "faces. Always false elsewhere"}),
    }),
    "turn": fields.Nested("TurnOutlookSchema", attribute="outlook", metadata={
        "description": "With coach: true: where the turn ends under the advisor's play of "
                       "the rest of it"}),
}, name="KeepMoveSchema")
KeepMoveSchema.left_out = frozenset({"outlook"})  # coaching not asked for

ScoreMoveSchema = AnswerSchema.from_dict({
    # a placement's fields (as hands/score writes a box's), read from the move
    **on_move(PlacementFields().fields),
    **on_move({"action": fields.String(required=True, validate=validate.OneOf(("score",)),
                                       metadata={"description": "score: fill a box now"})}),
    **_move_common(),
}, name="ScoreMoveSchema")


#: A suggested move: a keep or a placement, with its values (`advice.moves.RankedMove`,
#: the move held in its `move`).
MOVE = move_union("Move", keep=("KeepMove", KeepMoveSchema), score=("ScoreMove", ScoreMoveSchema),
                  held_in="move")


class PositionAnswerFields(HandAnswerFields):
    """What an answer about a position to move in says first."""

    throw = fields.Integer(required=True, metadata={
        "description": "The throw the dice stand on, as sent"})
    throws_left = fields.Integer(required=True, metadata={
        "description": "Throws this turn may still make (saved throws included)"})
    exact = fields.Boolean(required=True, metadata={
        "description": "Exact optimum (false: a documented approximation, see method)"})
    method = values_method()
    current_total = fields.Integer(required=True, metadata={
        "description": "Points on the sheet now (bonuses included)"})
    objective = fields.String(required=True, validate=validate.OneOf(OBJECTIVES), metadata={
        "description": "What the moves are ranked by, as sent"})


#: ... and what the objectives add to it (`Objective.answer`: e.g. win_exact, win_method)
PositionAnswerFields = PositionAnswerFields.from_dict(_objective_fields("answer"),
                                                      name="PositionAnswerFields")


class MoveSuggestionSchema(PositionAnswerFields):
    """The best move for a position and every move, ranked."""

    expected_final_score = Rounded(6, required=True, metadata={
        "description": "Expected final total under optimal play from here (the best "
                       "move's value)"})
    best = MoveUnionField(MOVE, required=True, metadata={"description": "The best move"})
    moves = fields.List(MoveUnionField(MOVE), required=True, metadata={
        "description": "Every move (the best first), ranked by expected final score (with "
                       "objective win: by win share, target: by target probability; then by "
                       "expected final score)"})


#: The largest seed: a JavaScript number holds every integer up to it exactly.
MAX_SEED = 2**53 - 1


class BotMoveRequestSchema(PositionRequestFields):
    """A position for a computer player: the dice, the throw, the sheet, its strength."""

    level = fields.String(required=True, validate=validate.OneOf(LEVEL_NAMES), metadata={
        "description": "The computer player's strength: beginner, casual and strong err as "
                       "people of that strength do (they prefer better moves, overvalue "
                       "points they can write now, and never give up more than a few points "
                       "in one move); expert plays the advisor's move"})
    seed = _int(0, MAX_SEED, metadata={
        "description": "Seed of the bot's choice: the same request and seed give the same "
                       "move (each position draws its own number from it, so one seed may "
                       "serve a whole game). Without it the service draws one and answers it"})


class BotMoveSchema(PositionAnswerFields):
    """The move a computer player makes in a position."""

    level = fields.String(required=True, validate=validate.OneOf(LEVEL_NAMES), metadata={
        "description": "The strength it played at, as sent"})
    seed = fields.Integer(required=True, metadata={
        "description": "The seed the move was drawn with (sent, or drawn by the service): "
                       "sent again with the same position, it gives the same move"})
    move = MoveUnionField(MOVE, required=True, metadata={
        "description": "The move: a keep or a box, with its expected final score under "
                       "optimal play afterwards and its regret against the best move"})
    best_expected_final_score = Rounded(6, required=True, metadata={
        "description": "The best move's expected final score (the move's regret is the "
                       "difference)"})
