"""The contract of /v1/variants: the variants' definitions and a table's effective rules."""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from ...domain.boxes import PATTERNS, SCORINGS
from ...domain.variants import (
    ALL_BOX_IDS,
    BONUS_PLACEMENTS,
    COLUMN_ORDERS,
    LANGS,
    VARIANT_IDS,
)
from .common import AnswerSchema, EchoRulesSchema, RulesRequestFields


class EffectiveRulesRequestSchema(RulesRequestFields):
    """Options and overrides whose effective sheet is wanted."""


def _d(text: str) -> dict[str, str]:
    return {"description": text}


def _in_each_language(what: str) -> fields.Dict:
    """A text per language (en, pt, es, de, sv, fr): a name or a description."""
    return fields.Dict(keys=fields.String(validate=validate.OneOf(LANGS)),
                       values=fields.String(), required=True,
                       metadata=_d(f"{what} in each language (en, pt, es, de, sv, fr)"))


class BoxDefinitionSchema(AnswerSchema):
    """A box of a variant's sheet (`domain.rules.BoxDefinition`)."""

    left_out = frozenset({"value", "face", "n", "groups", "runs", "value_by_face"})

    id = fields.String(required=True, validate=validate.OneOf(ALL_BOX_IDS), metadata=_d(
        "The box id, the same in every variant"))
    section = fields.String(required=True, validate=validate.OneOf(("upper", "lower")),
                            metadata=_d("upper: a number box (counts toward the upper bonus)"))
    labels = _in_each_language("The box's name")
    rule = fields.String(required=True, metadata=_d("How the box scores, in a sentence"))
    min_score = fields.Integer(required=True, metadata=_d("Lowest score (0: a scratch)"))
    max_score = fields.Integer(required=True, metadata=_d("Highest score any hand gives"))
    pattern = fields.String(required=True, validate=validate.OneOf(PATTERNS), metadata=_d(
        "The kind of pattern the hand must form"))
    scoring = fields.String(required=True, validate=validate.OneOf(SCORINGS), metadata=_d(
        "sum: all dice; matching: the dice of the pattern; fixed: `value`"))
    value = fields.Integer(metadata=_d("Fixed score (scoring fixed)"))
    face = fields.Integer(metadata=_d("The face of a number box"))
    n = fields.Integer(metadata=_d("How many equal dice (pattern n_kind)"))
    groups = fields.List(fields.Integer(), metadata=_d(
        "Sizes of the groups of equal dice (pattern groups, e.g. [3, 2] for a full house)"))
    runs = fields.List(fields.List(fields.Integer()), metadata=_d(
        "The faces of each straight that counts (pattern straight)"))
    value_by_face = fields.Dict(keys=fields.String(), values=fields.Integer(), metadata=_d(
        "Fixed score by the face of the pattern (e.g. Póker de ases)"))
    first_throw_bonus = fields.Integer(required=True, metadata=_d(
        "Points added when made on the first throw (servida, de boca)"))
    first_throw_value = fields.Integer(allow_none=True, required=True, metadata=_d(
        "Score replacing the normal one on the first throw (null: none)"))
    wins_on_first_throw = fields.Boolean(required=True, metadata=_d(
        "Made on the first throw, the game is won at once"))
    requires = fields.List(fields.String(), required=True, metadata={
        "description": "Boxes that must hold their score (not a scratch) first"})


#: An option's value: every option of the catalogue takes booleans or strings.
OPTION_VALUE = {"type": ["boolean", "string"]}


class UpperBonusDefinitionSchema(ma.Schema):
    """A variant's upper-section bonus."""

    threshold = fields.Integer(required=True, metadata=_d(
        "Upper total that earns the bonus (itself included)"))
    amount = fields.Integer(required=True, metadata=_d("Points of the bonus"))


class FiveOfAKindBonusDefinitionSchema(ma.Schema):
    """A variant's bonus per further five of a kind (YAHTZEE bonus, extra Kniffel)."""

    amount = fields.Integer(required=True, metadata=_d("Points per bonus"))
    needs_made_box = fields.Boolean(required=True, metadata=_d(
        "Earned only while the five-of-a-kind box holds its score, not a 0"))
    placement = fields.String(required=True, validate=validate.OneOf(BONUS_PLACEMENTS),
                              metadata=_d('Where the further five of a kind must be written: '
                                          '"any" box, or "matching_upper", the number box '
                                          'of its face (Kniffel)'))


class OptionDefinitionSchema(ma.Schema):
    """An option of a variant, with what a person reads of it in six languages."""

    name = fields.String(required=True, metadata=_d("The option's name in `options`"))
    labels = _in_each_language("The option's name for people")
    choices = fields.List(fields.Raw(metadata=OPTION_VALUE), required=True,
                          metadata=_d("Its possible values"))
    choice_labels = fields.List(_in_each_language("A value's name"), required=True,
                                metadata=_d("Each value's name for people, in each language "
                                            "(in the order of `choices`)"))
    default = fields.Raw(required=True, metadata={**OPTION_VALUE,
                                                  **_d("Its value when not given")})
    description = fields.String(required=True, metadata=_d("What it changes (in English)"))
    descriptions = _in_each_language("What it changes")


class VariantDefinitionSchema(ma.Schema):
    """A variant's rules: the sheet, dice, throws, turns, bonuses, options."""

    id = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata=_d(
        "The variant id"))
    name = fields.String(required=True, metadata=_d("The game's name"))
    labels = _in_each_language("The game's name for people")
    description = fields.String(required=True, metadata=_d("The game in a few sentences"))
    dice = fields.Integer(required=True, metadata=_d("How many dice"))
    throws = fields.Integer(required=True, metadata=_d("Throws a turn has"))
    turns = fields.Integer(required=True, metadata=_d("Turns a game has (one box a turn)"))
    boxes = fields.List(fields.Nested(BoxDefinitionSchema), required=True, metadata=_d(
        "The boxes in sheet order"))
    upper_bonus = fields.Nested(UpperBonusDefinitionSchema, allow_none=True, required=True,
                                metadata=_d("The bonus once the number boxes reach the "
                                            "threshold; null: none"))
    five_of_a_kind_bonus = fields.Nested(FiveOfAKindBonusDefinitionSchema, allow_none=True,
                                         required=True, metadata=_d(
                                             "Points per further five of a kind; null: none"))
    joker = fields.String(required=True, validate=validate.OneOf(("forced", "free", "none")),
                          metadata=_d("The Joker rule for a five of a kind thrown while its "
                                      "box is filled"))
    order = fields.String(required=True, validate=validate.OneOf(COLUMN_ORDERS), metadata=_d(
        "The order boxes must be filled in (down: top to bottom, obligada)"))
    columns = fields.List(fields.String(validate=validate.OneOf(COLUMN_ORDERS)),
                          required=True, metadata=_d(
                              "Column sheet: each column's order rule; [] for one column"))
    saved_throws = fields.Boolean(required=True, metadata=_d(
        "Unused throws carry over to later turns (Maxi Yatzy)"))
    em_baixo = fields.Boolean(required=True, metadata=_d(
        "The player may score the faces turned to the table (Bozó)"))
    options = fields.List(fields.Nested(OptionDefinitionSchema), required=True, metadata=_d(
        "The options a request may set"))
    sources = fields.List(fields.String(), required=True, metadata=_d(
        "Where the rules come from"))
    fingerprint = fields.String(required=True, metadata=_d(
        "Stable hash of these rules (as in `rules.fingerprint` of responses)"))


class VariantListSchema(ma.Schema):
    """Every variant."""

    variants = fields.List(fields.Nested(VariantDefinitionSchema), required=True,
                           metadata=_d("Every variant with its default options"))


class EffectiveRulesSchema(ma.Schema):
    """A table's effective rules: the definition after options and house rules."""

    rules = fields.Nested(EchoRulesSchema, required=True)
    definition = fields.Nested(VariantDefinitionSchema, required=True)
