"""/v1/variants/{variant}/hands: validate a hand, and score it in every box."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from ...domain import scoring
from ...domain.scoring import HandScore, score_hand, validate_hand
from ..batch import add_batch_operation
from ..body import rules_for, sheet_for
from ..openapi import ERRORS_DOC, new_blueprint
from ..schemas.hands import (
    HandScoreRequestSchema,
    HandScoreSchema,
    HandValidateRequestSchema,
    HandValidationSchema,
)

blp = new_blueprint("hands", "Validate and score dice hands")


def hand_score_answer(variant: str, item: dict[str, Any]) -> HandScore:
    """The answer to one loaded hands/score item (also `fast.ScoringFastPath`'s)."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    return score_hand(rs, item["dice"], item.get("throw"), sheet, item.get("em_baixo", False))


@blp.route("/<variant:variant>/hands/validate")
class HandValidation(MethodView):
    """Hand validation."""

    @blp.arguments(HandValidateRequestSchema, description="The hand to check")
    @blp.response(200, HandValidationSchema,
                  description="Whether the hand is legal, and what it forms")
    @blp.doc(operationId="validateHand", responses=ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> scoring.HandValidation:
        """Check a hand: sorted dice, face counts, patterns, and why it is not legal.

        An illegal hand (wrong count, a face outside 1..6, not integers) is a 200 with
        `valid: false` and `problems`; only a malformed request is a 422.
        """
        rs = rules_for(variant, item)
        return validate_hand(rs, item["dice"], item.get("throw"), sheet_for(rs, item))


@blp.route("/<variant:variant>/hands/score")
class HandScoring(MethodView):
    """Hand scoring."""

    @blp.arguments(HandScoreRequestSchema, description="The hand, and the sheet it is for")
    @blp.response(200, HandScoreSchema,
                  description="Every box with its score, open and legal flags")
    @blp.doc(operationId="scoreHand", responses=ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> HandScore:
        """Score a hand in every box: score, open, legal (Joker rules applied), bonuses.

        Without a scorecard every box is open. To score many hands in one request, send
        them to `hands/score/batch`.
        """
        return hand_score_answer(variant, item)


add_batch_operation(
    blp, "/<variant:variant>/hands/score", "scoreHandBatch", HandScoreRequestSchema,
    hand_score_answer, HandScoreSchema,
    ("Score many hands: each item as `hands/score` takes it, answered in order.\n\n"
     "The answer is the list of `hands/score` answers, in the order of the items. An item "
     "that breaks a rule refuses the whole batch, naming the item in every pointer "
     "(`/3/dice/0`); at most `MAX_BATCH_ITEMS` items and `MAX_BATCH_RULE_SETS` tables of "
     "rules a batch.",
     "A list of hands, each as `hands/score` takes it",
     "Each hand's answer, in the order of the items"),
    ERRORS_DOC)
