"""/v1/variants/{variant}/scorecards: total a scorecard and check its entries."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from ...domain.consistency import ScorecardTotals, audit
from ..batch import add_batch_operation
from ..body import rules_for, sheet_for
from ..openapi import ERRORS_DOC, new_blueprint
from ..schemas.scorecards import ScorecardScoreRequestSchema, ScorecardTotalsSchema

blp = new_blueprint("scorecards", "Score whole scorecards")


def scorecard_score_answer(variant: str, item: dict[str, Any], base: str) -> ScorecardTotals:
    """The answer to one loaded scorecards/score item, its problems' pointers under `base`
    (also `fast.ScoringFastPath`'s)."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item, key=None, check=False)
    return audit(rs, sheet, item.get("final", False), base)


@blp.route("/<variant:variant>/scorecards/score")
class ScorecardScoring(MethodView):
    """Scorecard totals."""

    @blp.arguments(ScorecardScoreRequestSchema, description="The scorecard to total")
    @blp.response(200, ScorecardTotalsSchema, description="Totals, completeness and per-box checks")
    @blp.doc(operationId="scoreScorecard", responses=ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> ScorecardTotals:
        """Total a scorecard: upper subtotal and bonus, lower total, bonuses, total.

        The sheet is audited as it is totalled: `valid` says whether some game by these
        rules could produce it, and `problems` lists every reason it could not (pointer,
        code, detail; the codes are in docs/problems.md), while the totals are still given.
        Each filled box says whether its value is achievable in that box. With `final: true`
        empty boxes count as scratches (0). To total many scorecards in one request, send
        them to `scorecards/score/batch`.
        """
        return scorecard_score_answer(variant, item, "")


add_batch_operation(
    blp, "/<variant:variant>/scorecards/score", "scoreScorecardBatch",
    ScorecardScoreRequestSchema, scorecard_score_answer, ScorecardTotalsSchema,
    ("Total many scorecards: each item as `scorecards/score` takes it, answered in order.\n\n"
     "The answer is the list of `scorecards/score` answers, in the order of the items; each "
     "item's `problems` point into the batch (`/3/boxes/chance`). At most `MAX_BATCH_ITEMS` "
     "items and `MAX_BATCH_RULE_SETS` tables of rules a batch.",
     "A list of scorecards, each as `scorecards/score` takes it",
     "Each scorecard's totals and checks, in the order of the items"),
    ERRORS_DOC, with_base=True)
