"""/v1/variants/{variant}/positions/value: what a position is worth under optimal play."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from ...advisor.analysis.analyst import PositionReport
from ..body import rules_for, sheet_for
from ..busy import BUSY_DOC
from ..extensions import analyst_of
from ..openapi import ERRORS_DOC, new_blueprint
from ..schemas.analysis import PositionValueRequestSchema, PositionValueSchema

blp = new_blueprint("positions", "What a position is worth: mean, standard deviation and "
                                 "distribution of the final score under optimal play",
                    operation_class="advice")


def _value(variant: str, item: dict[str, Any]) -> PositionReport:
    """The positions/value answer to one loaded request: the position's value with the
    distribution's figures the request asks for (`PositionValue.reported`)."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    analyst = analyst_of(current_app)
    dice = item.get("dice")
    pv = analyst.position_value(rs, sheet, dice, item.get("throw"),
                                item.get("em_baixo", False))
    return pv.reported(rs, analyst.strategy(rs).description, dice, item.get("throw"),
                       item.get("at_least", []), item.get("histogram", False))


@blp.route("/<variant:variant>/positions/value")
class PositionValue(MethodView):
    """Position values."""

    @blp.arguments(PositionValueRequestSchema,
                   description="A scorecard (start of a turn), optionally with the dice after "
                               "a throw")
    @blp.response(200, PositionValueSchema, description=(
        "Expected final score, its standard deviation, percentiles, "
        "P(final >= t), the histogram"))
    @blp.doc(operationId="valuePosition", responses={**ERRORS_DOC, **BUSY_DOC})
    def post(self, item: dict[str, Any], variant: str) -> PositionReport:
        """What a position is worth under the advisor's (expected-score maximising) play.

        For every exact variant, options and house rules included, the distribution of the
        final total (percentiles 5/25/50/75/95, P(final >= t) for each `at_least`, the
        histogram on request) is exact from any position, at the start of a turn or in its
        middle, and the mean and standard deviation are the distribution's own. Approximate
        methods (column sheets, Maxi Yatzy) are measured by simulating their own play:
        `exact` and `distribution.exact` are false, with the sample size and the standard
        error of the mean.
        """
        return _value(variant, item)
