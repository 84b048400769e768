"""/v1/variants/{variant}/moves/suggest: the optimal move advisor over HTTP."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask import Response
from flask.views import MethodView
from marshmallow import fields, validate

from ..advisor import suggest
from ..advisor.tables import strategy
from ..rules import get_variant
from ..variants import ALL_BOX_IDS
from .common import (
    ERRORS_DOC,
    body_doc,
    json_response,
    load_items,
    new_blueprint,
    response_doc,
    rules_for,
    sheet_for,
)
from .schemas import EchoRulesSchema, HandScoreRequestSchema

blp = new_blueprint("moves", "Optimal move advice (expected-score maximising solitaire play)")

_request_schema = HandScoreRequestSchema()


class MoveSchema(ma.Schema):
    """One possible action with its expected final score."""

    action = fields.String(required=True, validate=validate.OneOf(("keep", "score")),
                           metadata={"description": "keep: keep these dice and throw the "
                                                    "others; score: fill a box now"})
    expected_final_score = fields.Float(required=True, metadata={
        "description": "Expected final total of the sheet after this action under optimal "
                       "play (points already on the sheet included)"})
    regret = fields.Float(required=True, metadata={
        "description": "Best expected final score minus this action's"})
    rank = fields.Integer(required=True, metadata={"description": "1 = best; ties share"})
    tie = fields.Boolean(required=True, metadata={
        "description": "Another action has the same value (within 1e-6)"})
    dice = fields.List(fields.Integer(), metadata={"description": "keep: the dice to keep"})
    em_baixo = fields.Boolean(metadata={
        "description": "keep (Bozó): announce 'em baixo' before the next throw"})
    box = fields.String(validate=validate.OneOf(ALL_BOX_IDS), metadata={
        "description": "score: the box to fill"})
    column = fields.Integer(allow_none=True, metadata={
        "description": "score: column number on a column sheet, else null"})
    score = fields.Integer(metadata={"description": "score: points the box receives"})
    bonus = fields.Integer(metadata={
        "description": "score: five-of-a-kind bonus the placement earns (as in hands/score)"})
    upper_bonus = fields.Integer(metadata={
        "description": "score: upper bonus the placement secures (as in hands/score)"})
    joker = fields.Boolean(metadata={"description": "score: the score comes from a Joker"})
    wins_game = fields.Boolean(metadata={
        "description": "score: the placement wins the game at once (valued at its score)"})


class MoveSuggestionSchema(ma.Schema):
    """The best move for a position and every alternative, ranked."""

    variant = fields.String(required=True)
    rules = fields.Nested(EchoRulesSchema, required=True)
    dice = fields.List(fields.Integer(), required=True, metadata={
        "description": "The faces advised on (the bottom faces with em_baixo), sorted"})
    throw = fields.Integer(required=True)
    throws_left = fields.Integer(required=True)
    exact = fields.Boolean(required=True, metadata={
        "description": "Exact optimum (false: a documented approximation, see method)"})
    method = fields.String(required=True)
    current_total = fields.Integer(required=True)
    expected_final_score = fields.Float(required=True)
    best = fields.Nested(MoveSchema, required=True)
    alternatives = fields.List(fields.Nested(MoveSchema), required=True)


def _advise(variant: str, item: dict[str, Any]) -> Response:
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    throw = item.get("throw") or 1
    # Built-in tables are loaded at start-up; a house-rules table is built here, inside the
    # first request that needs it (well under a second for 13 boxes), then cached by its
    # fingerprint; concurrent requests for the same rules wait for one build.
    st = strategy(rs)
    result = suggest(rs, item["dice"], throw, sheet, strat=st,
                     em_baixo=item.get("em_baixo", False))
    return json_response({"variant": variant, "rules": rs.describe(), "dice": result.dice,
                          **result.as_dict()})


@blp.route("/<variant:variant>/moves/suggest")
class MoveSuggestion(MethodView):
    """Move advice."""

    @blp.doc(operationId="suggestMove",
             requestBody=body_doc("HandScoreRequest", False,
                                  "The dice, the throw they stand on and the scorecard"),
             responses={"200": response_doc("MoveSuggestion", False,
                                            "The best keep or box, and every alternative with "
                                            "its expected final score and regret"),
                        **ERRORS_DOC})
    def post(self, variant: str) -> Response:
        """Suggest the move that maximises the expected final score.

        `throw` is the number of throws made this turn (default 1). With throws left the
        alternatives are every keep (the dice to keep, fewer than all) and every legal box;
        on the last throw only boxes. Values are expected final totals under optimal play,
        points already on the sheet included. Exact for every 5-dice one-column variant;
        column sheets and Maxi Yatzy are approximations (`exact: false`, see `method`).
        The table of a house-rules table is built inside the first request that needs it
        (about a second at most), then cached by the rules fingerprint.
        """
        get_variant(variant)
        items, _ = load_items(_request_schema, batch=False)
        return _advise(variant, items[0])
