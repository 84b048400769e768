"""The contract of /v1/variants/{variant}/scorecards: total a scorecard and audit it."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from ...domain.consistency import SHEET_CODES
from ...domain.variants import COLUMN_ORDERS, VARIANT_IDS
from .common import (
    _FAST_SCORECARD,
    EchoRulesSchema,
    RulesRequestFields,
    ScorecardFields,
    ScorecardSchema,
    _bool,
    _fast,
    box_id,
)

_FAST_CARD = {**_FAST_SCORECARD, "final": lambda v: type(v) is bool}


class ScorecardScoreRequestSchema(ScorecardFields, RulesRequestFields):
    """A scorecard to total."""

    fast_load = _fast(_FAST_CARD, ())

    final = _bool(metadata={"description": "The game is over: empty boxes count as 0"})


class BoxCheckSchema(ma.Schema):
    """A box of a scored scorecard."""

    box = box_id(required=True, metadata={
        "description": "The box id"})
    score = fields.Integer(allow_none=True, required=True, metadata={
        "description": "Points written in the box (null: open; 0 for an open box of a final "
                       "sheet)"})
    filled = fields.Boolean(required=True, metadata={"description": "The box has an entry"})
    achievable = fields.Boolean(required=True, metadata={
        "description": "Whether any hand could have put this value in this box"})


class ColumnTotalsSchema(ma.Schema):
    """Totals of one column."""

    column = fields.Integer(required=True, metadata={"description": "Column number (1-4)"})
    order = fields.String(required=True, validate=validate.OneOf(COLUMN_ORDERS), metadata={
        "description": "The order rule of the column"})
    upper_subtotal = fields.Integer(required=True, metadata={
        "description": "Sum of the number boxes"})
    upper_bonus = fields.Integer(required=True, metadata={"description": "Upper bonus points"})
    lower_total = fields.Integer(required=True, metadata={
        "description": "Sum of the other boxes"})
    five_of_a_kind_bonus = fields.Integer(required=True, metadata={
        "description": "Five-of-a-kind bonus points"})
    five_of_a_kind_bonuses = fields.Integer(required=True, metadata={
        "description": "How many five-of-a-kind bonuses were won"})
    total = fields.Integer(required=True, metadata={"description": "The column's total"})
    complete = fields.Boolean(required=True, metadata={
        "description": "Every box of the column has an entry"})
    boxes = fields.List(fields.Nested(BoxCheckSchema), required=True, metadata={
        "description": "Every box of the column, in sheet order"})


class SheetProblemSchema(ma.Schema):
    """Why no game could produce a sheet (one of SHEET_CODES)."""

    pointer = fields.String(required=True, metadata={
        "description": 'JSON pointer to the offending field of the scorecard'})
    code = fields.String(required=True, validate=validate.OneOf(SHEET_CODES), metadata={
        "description": 'Machine-readable reason (docs/problems.md)'})
    detail = fields.String(required=True, metadata={"description": 'What is wrong'})


class ScorecardTotalsSchema(ma.Schema):
    """Totals of a scorecard (per column too, on a column sheet)."""

    variant = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata={
        "description": "The variant id"})
    rules = fields.Nested(EchoRulesSchema, required=True, metadata={
        "description": "The effective rules the scorecard was totalled with"})
    scorecard = fields.Nested(ScorecardSchema, required=True, metadata={
        "description": "The scorecard as read, every box listed: valid to send back as is"})
    upper_subtotal = fields.Integer(required=True, metadata={
        "description": "Sum of the number boxes (of every column)"})
    upper_bonus = fields.Integer(required=True, metadata={"description": "Upper bonus points"})
    lower_total = fields.Integer(required=True, metadata={
        "description": "Sum of the other boxes"})
    five_of_a_kind_bonus = fields.Integer(required=True, metadata={
        "description": "Five-of-a-kind bonus points"})
    five_of_a_kind_bonuses = fields.Integer(required=True, metadata={
        "description": "How many five-of-a-kind bonuses were won"})
    total = fields.Integer(required=True, metadata={"description": "The final score so far"})
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
