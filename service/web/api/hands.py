"""/v1/variants/{variant}/hands: validate a hand, and score it in every box."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from ...domain.scoring import score_hand, validate_hand
from ..batch import add_batch_operation, answer_one
from ..body import rules_for, sheet_for
from ..openapi import ERRORS_DOC, body_doc, new_blueprint
from ..schemas.hands import (
    HandScoreRequestSchema,
    HandScoreSchema,
    HandValidateRequestSchema,
    HandValidationSchema,
)

blp = new_blueprint("hands", "Validate and score dice hands")

_score_schema = HandScoreRequestSchema()
_validate_schema = HandValidateRequestSchema()


def score_one(variant: str, item: dict[str, Any]) -> dict[str, Any]:
    """The answer to one loaded hands/score item (also `fast.ScoringFastPath`'s)."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    result = score_hand(rs, item["dice"], item.get("throw"), sheet, item.get("em_baixo", False))
    return {
        "variant": variant,
        "rules": rs.describe(),
        "dice": list(result.dice),
        "scored_dice": list(result.scored_dice),
        "throw": result.throw,
        "wins_game": result.wins_game,
        "joker": result.joker,
        "patterns": list(result.patterns),
        "boxes": [p.as_dict() for p in result.boxes],
    }


def _validate_one(variant: str, item: dict[str, Any]) -> dict[str, Any]:
    """The hands/validate answer to one loaded hand."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    return {"variant": variant, **validate_hand(rs, item["dice"], item.get("throw"), sheet)}


@blp.route("/<variant:variant>/hands/validate")
class HandValidation(MethodView):
    """Hand validation."""

    @blp.response(200, HandValidationSchema,
                  description="Whether the hand is legal, and what it forms")
    @blp.doc(operationId="validateHand",
             requestBody=body_doc("HandValidateRequest", "The hand to check"),
             responses=ERRORS_DOC)
    def post(self, variant: str) -> Response:
        """Check a hand: sorted dice, face counts, patterns, and why it is not legal.

        An illegal hand (wrong count, a face outside 1..6, not integers) is a 200 with
        `valid: false` and `problems`; only a malformed request is a 422.
        """
        return answer_one(variant, _validate_schema, _validate_one)


@blp.route("/<variant:variant>/hands/score")
class HandScoring(MethodView):
    """Hand scoring."""

    @blp.response(200, HandScoreSchema,
                  description="Every box with its score, open and legal flags")
    @blp.doc(operationId="scoreHand",
             requestBody=body_doc("HandScoreRequest", "The hand, and the sheet it is for"),
             responses=ERRORS_DOC)
    def post(self, variant: str) -> Response:
        """Score a hand in every box: score, open, legal (Joker rules applied), bonuses.

        Without a scorecard every box is open. To score many hands in one request, send
        them to `hands/score/batch`.
        """
        return answer_one(variant, _score_schema, score_one)


add_batch_operation(
    blp, "/<variant:variant>/hands/score", "scoreHandBatch", _score_schema, score_one,
    ("HandScoreRequest", HandScoreSchema),
    ("Score many hands: each item as `hands/score` takes it, answered in order.\n\n"
     "The answer is the list of `hands/score` answers, in the order of the items. An item "
     "that breaks a rule refuses the whole batch, naming the item in every pointer "
     "(`/3/dice/0`); at most `MAX_BATCH_ITEMS` items and `MAX_BATCH_RULE_SETS` tables of "
     "rules a batch.",
     "A list of hands, each as `hands/score` takes it",
     "Each hand's answer, in the order of the items"),
    ERRORS_DOC)
