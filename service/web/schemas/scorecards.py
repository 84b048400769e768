"""The contract of /v1/variants/{variant}/scorecards: total a scorecard and audit it."""

from __future__ import annotations

from marshmallow import fields, validate

from ...domain.errors import SHEET_CODES
from ...domain.variants import COLUMN_ORDERS
from .common import (
    _FAST_SCORECARD,
    AnswerFields,
    AnswerSchema,
    BoxFields,
    RulesRequestFields,
    ScorecardFields,
    ScorecardSchema,
    TotalsFields,
    _bool,
    _fast,
    problem_code,
    problem_detail,
)

_FAST_CARD = {**_FAST_SCORECARD, "final": lambda v: type(v) is bool}


class ScorecardScoreRequestSchema(ScorecardFields, RulesRequestFields):
    """A scorecard to total."""

    fast_load = _fast(_FAST_CARD, ())

    final = _bool(metadata={"description": "The game is over: empty boxes count as 0"})


class BoxCheckSchema(BoxFields):
    """A box of a scored scorecard."""

    repeats = True  # a box's few values, in every sheet's answer
    score = fields.Integer(allow_none=True, required=True, metadata={
        "description": "Points written in the box (null: open; 0 for an open box of a final "
                       "sheet)"})
    filled = fields.Boolean(required=True, metadata={"description": "The box has an entry"})
    achievable = fields.Boolean(required=True, metadata={
        "description": "Whether any hand could have put this value in this box"})


class SheetTotalsFields(TotalsFields):
    """The totals of a sheet or column as scorecards/score gives them."""

    five_of_a_kind_bonuses = fields.Integer(required=True, metadata={
        "description": "How many five-of-a-kind bonuses were won"})


class ColumnTotalsSchema(SheetTotalsFields):
    """Totals of one column."""

    column = fields.Integer(required=True, metadata={"description": "Column number (1-4)"})
    order = fields.String(required=True, validate=validate.OneOf(COLUMN_ORDERS), metadata={
        "description": "The order rule of the column"})
    complete = fields.Boolean(required=True, metadata={
        "description": "Every box of the column has an entry"})
    boxes = fields.List(fields.Nested(BoxCheckSchema), required=True, metadata={
        "description": "Every box of the column, in sheet order"})


class SheetProblemSchema(AnswerSchema):
    """Why no game could produce a sheet (one of SHEET_CODES)."""

    pointer = fields.String(required=True, metadata={
        "description": 'JSON pointer to the offending field of the scorecard'})
    code = problem_code(SHEET_CODES)
    detail = problem_detail()


class ScorecardTotalsSchema(AnswerFields, SheetTotalsFields):
    """Totals of a scorecard (of every column, and per column on a column sheet:
    `domain.consistency.ScorecardTotals`)."""

    left_out = frozenset({"boxes", "columns"})

    scorecard = fields.Nested(ScorecardSchema, required=True, metadata={
        "description": "The scorecard as read, every box listed: valid to send back as is"})
    complete = fields.Boolean(required=True, metadata={
        "description": "Every box has an entry, or the game was won at once"})
    won = fields.Boolean(required=True, metadata={
        "description": "The game was won at once (Generala servida, General de boca)"})
    final = fields.Boolean(required=True, metadata={
        "description": "Empty boxes were counted as scratches (the request's `final`)"})
    boxes = fields.List(fields.Nested(BoxCheckSchema), metadata={
        "description": "One-column sheets: every box, in sheet order"})
    columns = fields.List(fields.Nested(ColumnTotalsSchema), metadata={
        "description": "Column sheets: the totals of each column"})
    valid = fields.Boolean(required=True, metadata={
        "description": "Some game by these rules could produce this sheet"})
    problems = fields.List(fields.Nested(SheetProblemSchema), required=True, metadata={
        "description": "Every reason it could not (empty when valid); docs/problems.md"})
