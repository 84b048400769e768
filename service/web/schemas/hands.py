"""The contract of /v1/variants/{variant}/hands: validate a hand, score it in every box."""

from __future__ import annotations

from marshmallow import fields, validate

from ...domain.dice import HAND_PATTERNS
from .common import (
    MAX_THROW,
    AnswerSchema,
    HandAnswerFields,
    PlacementFields,
    RulesRequestFields,
    ScorecardSchema,
    VariantFields,
    _fast,
    _fast_dice,
    _fast_int,
    _fast_scorecard,
    _int,
    dice_field,
    problem_detail,
    scoring_em_baixo,
)

_FAST_HAND = {
    "dice": _fast_dice,
    "throw": lambda v: _fast_int(v, 1, MAX_THROW),
    "scorecard": _fast_scorecard,
    "em_baixo": lambda v: type(v) is bool,
}


class HandScoreRequestSchema(RulesRequestFields):
    """A hand to score, with the sheet it is scored against."""

    fast_load = _fast(_FAST_HAND, ("dice",))

    dice = dice_field(required=True)
    throw = _int(1, MAX_THROW, metadata={
        "description": "Throw of the turn these dice stand on (1 = first: servida, de boca)"})
    scorecard = fields.Nested(ScorecardSchema)
    em_baixo = scoring_em_baixo()


class HandValidateRequestSchema(RulesRequestFields):
    """A hand to check; anything in `dice` is reported on rather than rejected."""

    dice = fields.List(fields.Raw(allow_none=True), required=True,
                       validate=validate.Length(max=64), metadata={
                           "description": "The dice to check: anything in the list is "
                                          "reported on (`problems`), not rejected"})
    throw = _int(1, MAX_THROW, metadata={
        "description": "Throw of the turn these dice stand on (1 = first)"})
    scorecard = fields.Nested(ScorecardSchema)


PATTERNS_DOC = (
    "Patterns the hand forms, the same names for every variant (not box ids: a variant's box "
    "may ask for more or less): pair, two_pairs, three_pairs, three_of_a_kind, "
    "four_of_a_kind, five_of_a_kind, six_of_a_kind, full_house (3+2), villa (3+3), tower "
    "(4+2), small_straight (4 in a row), large_straight (5 in a row), wrapped_straight "
    "(3-4-5-6-1), full_straight (1-6).")


class PlacementSchema(PlacementFields):
    """What filling one box with the hand gives."""

    repeats = True  # a box's few placements, in every hand's answer
    open = fields.Boolean(required=True, metadata={"description": "Not yet filled"})
    legal = fields.Boolean(required=True, metadata={
        "description": "May be filled now (Joker, order and first-throw rules applied)"})


class HandScoreSchema(HandAnswerFields):
    """The boxes a hand can fill, with their scores."""

    throw = fields.Integer(allow_none=True, required=True, metadata={
        "description": "The throw the dice stand on, as sent (null: not given, so not a "
                       "first throw)"})
    wins_game = fields.Boolean(required=True, metadata={
        "description": "The hand wins the game at once (whatever box it is written in)"})
    joker = fields.Boolean(required=True, metadata={
        "description": "The hand is a Joker on this sheet"})
    patterns = fields.List(fields.String(validate=validate.OneOf(HAND_PATTERNS)),
                           required=True, metadata={"description": PATTERNS_DOC})
    boxes = fields.List(fields.Nested(PlacementSchema), required=True, metadata={
        "description": "Every box of the sheet (every column's on a column sheet), in "
                       "sheet order"})


class ValidateProblemSchema(AnswerSchema):
    """Why a hand is not legal."""

    pointer = fields.String(required=True, metadata={
        "description": "JSON pointer to the offending field of the request"})
    detail = problem_detail()


class HandValidationSchema(VariantFields):
    """Whether a hand is legal for the variant, and what it forms
    (`domain.scoring.HandValidation`)."""

    left_out = frozenset({"dice", "counts", "sum", "patterns"})

    valid = fields.Boolean(required=True, metadata={
        "description": "The hand is legal for the variant"})
    dice_count = fields.Integer(required=True, metadata={
        "description": "How many dice the variant is played with"})
    dice = fields.List(fields.Integer(validate=validate.Range(1, 6)), metadata={
        "description": "The hand, sorted (when every die is a face)"})
    counts = fields.Dict(keys=fields.String(validate=validate.OneOf(("1", "2", "3", "4", "5",
                                                                     "6"))),
                         values=fields.Integer(), metadata={
                             "description": "How many dice show each face"})
    sum = fields.Integer(metadata={"description": "Sum of the dice"})
    patterns = fields.List(fields.String(validate=validate.OneOf(HAND_PATTERNS)), metadata={
        "description": PATTERNS_DOC})
    problems = fields.List(fields.Nested(ValidateProblemSchema), required=True, metadata={
        "description": "Why the hand is not legal (empty when valid)"})
