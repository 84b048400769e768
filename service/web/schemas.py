"""Marshmallow schemas of the public contract: every constraint a request must meet.

Fields that depend on the variant (how many dice, which boxes a sheet has, which options
apply) are checked again by the core, which answers 422 with a pointer when they do not fit.
"""

from __future__ import annotations

import marshmallow as ma
from marshmallow import fields, validate

from ..domain.boxes import PATTERNS, SCORINGS
from ..domain.rules import BOX_OVERRIDE_FIELDS
from ..domain.variants import ALL_BOX_IDS, COLUMN_ORDERS, LANGS, VARIANT_IDS, VARIANTS

MAX_VALUE = 10_000
MAX_THROW = 41  # 3 throws + 2 saved from each of 19 earlier Maxi Yatzy turns
MAX_BONUSES = 100



class StrictSchema(ma.Schema):
    """Unknown fields are errors (the default, stated for readers)."""

    class Meta:
        unknown = ma.RAISE


def _int(lo: int, hi: int, **kw: object) -> fields.Integer:
    return fields.Integer(strict=True, validate=validate.Range(lo, hi), **kw)


class StrictBoolean(fields.Boolean):
    """JSON true or false only (marshmallow's Boolean also takes 1, 0 and 1.0)."""

    def _deserialize(self, value: object, attr: str | None, data: object,
                     **kwargs: object) -> bool:
        if type(value) is not bool:
            raise self.make_error("invalid", input=value)
        return value


def _bool(**kw: object) -> fields.Boolean:
    return StrictBoolean(**kw)


DICE_FIELD_DOC = "The dice, faces 1 to 6, in any order; 5 dice (6 in maxi_yatzy)."
_RANGE_MSG = "Must be greater than or equal to {lo} and less than or equal to {hi}."


class DiceField(fields.Field):
    """A hand of 5 or 6 dice, faces 1..6.

    Hand-written rather than List(Integer): it is on every scoring request, and this is
    ten times faster with the same messages. `openapi_doc` is what the spec shows.
    """

    openapi_doc = {"type": "array", "minItems": 5, "maxItems": 6, "description": DICE_FIELD_DOC,
                   "items": {"type": "integer", "minimum": 1, "maximum": 6}}

    def _deserialize(self, value: object, attr: str | None, data: object,
                     **kwargs: object) -> list[int]:
        if not isinstance(value, list):
            raise ma.ValidationError("Not a valid list.")
        errors = {i: ["Not a valid integer."] if type(d) is not int
                  else [_RANGE_MSG.format(lo=1, hi=6)]
                  for i, d in enumerate(value) if type(d) is not int or not 1 <= d <= 6}
        if errors:
            raise ma.ValidationError(errors)
        if not 5 <= len(value) <= 6:
            raise ma.ValidationError("Length must be between 5 and 6.")
        return value


def dice_field(**kw: object) -> fields.Field:
    """A hand of 5 or 6 dice, faces 1..6."""
    return DiceField(**kw)


class BoxValuesField(fields.Field):
    """Box id → points entered (0 = scratched), null or absent = open.

    One property per box id in the spec; checked by hand for speed (every scoring request
    carries a scorecard), with marshmallow's messages.
    """

    openapi_doc = {"type": "object", "additionalProperties": False,
                   "description": "Box id → points entered (0 = scratched); null or absent "
                                  "= open",
                   "properties": {b: {"type": ["integer", "null"], "minimum": 0,
                                      "maximum": MAX_VALUE} for b in ALL_BOX_IDS}}
    _ids = frozenset(ALL_BOX_IDS)

    def _deserialize(self, value: object, attr: str | None, data: object,
                     **kwargs: object) -> dict[str, int | None]:
        if not isinstance(value, dict):
            raise ma.ValidationError("Not a valid mapping type.")
        errors: dict[str, list[str]] = {}
        for k, v in value.items():
            if k not in self._ids:
                errors[k] = ["Unknown field."]
            elif v is not None and type(v) is not int:
                errors[k] = ["Not a valid integer."]
            elif v is not None and not 0 <= v <= MAX_VALUE:
                errors[k] = [_RANGE_MSG.format(lo=0, hi=MAX_VALUE)]
        if errors:
            raise ma.ValidationError(errors)
        return dict(value)


def openapi_doc_attribute(self: object, field: fields.Field, **kwargs: object) -> dict:
    """apispec attribute function: hand-written fields carry their own OpenAPI schema."""
    return dict(getattr(field, "openapi_doc", {}))


# --------------------------------------------------------------------------- options


def _option_field(name: str) -> fields.Field:
    spec = next(o for v in VARIANTS.values() for o in v.options if o.name == name)
    used_by = [v.id for v in VARIANTS.values() if v.option(name)]
    doc = f"{spec.description} Variants: {', '.join(used_by)}."
    if spec.is_bool:
        return _bool(metadata={"description": doc})
    return fields.String(validate=validate.OneOf(spec.choices), metadata={"description": doc})


OptionsSchema = ma.Schema.from_dict(
    {name: _option_field(name)
     for name in dict.fromkeys(o.name for v in VARIANTS.values() for o in v.options)},
    name="OptionsSchema")
OptionsSchema.__doc__ = ("Rule options; each applies to the variants named in its description "
                         "(another variant's option is a 422).")


# --------------------------------------------------------------------------- house rules


class BoxOverrideSchema(StrictSchema):
    """Changes to one box of the sheet."""

    value = _int(0, MAX_VALUE, metadata={"description": "Fixed score (scoring 'fixed')"})
    scoring = fields.String(validate=validate.OneOf(SCORINGS))
    first_throw_bonus = _int(0, MAX_VALUE, metadata={
        "description": "Points added when made on the first throw (servida, de boca)"})
    first_throw_value = _int(0, MAX_VALUE, allow_none=True, metadata={
        "description": "Score replacing the normal one on the first throw (General de mão)"})
    wins_on_first_throw = _bool(metadata={
        "description": "Made on the first throw, the game is won at once"})


assert set(BoxOverrideSchema._declared_fields) == set(BOX_OVERRIDE_FIELDS)

BoxOverridesSchema = ma.Schema.from_dict(
    {b: fields.Nested(BoxOverrideSchema) for b in ALL_BOX_IDS}, name="BoxOverridesSchema")


class UpperBonusSchema(StrictSchema):
    """The upper-section bonus: amount once the upper total reaches the threshold."""

    threshold = _int(1, MAX_VALUE)
    amount = _int(1, MAX_VALUE)


class FiveOfAKindBonusSchema(StrictSchema):
    """The bonus per further five of a kind (YAHTZEE bonus, extra Kniffel)."""

    amount = _int(1, MAX_VALUE)


class RulesSchema(StrictSchema):
    """House-rule overrides of the variant's table."""

    boxes = fields.Nested(BoxOverridesSchema, metadata={
        "description": "Per box id, the fields to change"})
    remove_boxes = fields.List(fields.String(validate=validate.OneOf(ALL_BOX_IDS)),
                               validate=validate.Length(max=len(ALL_BOX_IDS)))
    upper_bonus = fields.Nested(UpperBonusSchema, allow_none=True, metadata={
        "description": "null removes the upper bonus"})
    five_of_a_kind_bonus = fields.Nested(FiveOfAKindBonusSchema, allow_none=True, metadata={
        "description": "null removes the five-of-a-kind bonus"})


# --------------------------------------------------------------------------- scorecards

class ColumnSchema(StrictSchema):
    """One column of a column sheet."""

    boxes = BoxValuesField()
    bonus_five_of_a_kind = _int(0, MAX_BONUSES, metadata={
        "description": "How many five-of-a-kind bonuses were won in this column"})


class ScorecardFields(StrictSchema):
    """The fields of a scorecard (a request may add others around them)."""

    boxes = BoxValuesField()
    bonus_five_of_a_kind = _int(0, MAX_BONUSES, metadata={
        "description": "How many five-of-a-kind bonuses were won (YAHTZEE bonuses, "
                       "extra Kniffels)"})
    saved_throws = _int(0, MAX_THROW, metadata={
        "description": "Throws saved from earlier turns (maxi_yatzy)"})
    won = _bool(metadata={"description": "The game was won at once (Generala servida...)"})
    columns = fields.List(fields.Nested(ColumnSchema), validate=validate.Length(4, 4),
                          metadata={"description": "With option columns: the four columns"})


class ScorecardSchema(ScorecardFields):
    """A player's sheet."""


class RulesRequestFields(StrictSchema):
    """Options and house rules, accepted wherever a variant is named."""

    options = fields.Nested(OptionsSchema)
    rules = fields.Nested(RulesSchema)


# --------------------------------------------------------------------------- requests


# --------------------------------------------------------------------------- fast paths
# The common scoring request (dice, throw, a one-column scorecard) is checked here without
# marshmallow, which costs as much as the scoring itself. A fast check only ever accepts:
# anything unusual or wrong returns None and the request goes through marshmallow, which
# gives the errors. tests/test_fast_paths.py checks the two agree on generated requests.


def _fast_int(value: object, lo: int, hi: int) -> bool:
    return type(value) is int and lo <= value <= hi


def _fast_dice(value: object) -> bool:
    return (type(value) is list and 5 <= len(value) <= 6
            and all(type(d) is int and 1 <= d <= 6 for d in value))


def _fast_boxes(value: object) -> bool:
    return type(value) is dict and all(
        k in BoxValuesField._ids and (v is None or _fast_int(v, 0, MAX_VALUE))
        for k, v in value.items())


_FAST_SCORECARD = {
    "boxes": _fast_boxes,
    "bonus_five_of_a_kind": lambda v: _fast_int(v, 0, MAX_BONUSES),
    "saved_throws": lambda v: _fast_int(v, 0, MAX_THROW),
    "won": lambda v: type(v) is bool,
}


def _fast_scorecard(value: object) -> bool:
    return type(value) is dict and all(
        k in _FAST_SCORECARD and _FAST_SCORECARD[k](v) for k, v in value.items())


_FAST_HAND = {
    "dice": _fast_dice,
    "throw": lambda v: _fast_int(v, 1, MAX_THROW),
    "scorecard": _fast_scorecard,
    "em_baixo": lambda v: type(v) is bool,
}
_FAST_CARD = {**_FAST_SCORECARD, "final": lambda v: type(v) is bool}


def _fast(checks: dict, required: tuple[str, ...]) -> object:
    def fast_load(data: object) -> dict | None:
        if type(data) is not dict or any(r not in data for r in required):
            return None
        for key, value in data.items():
            check = checks.get(key)
            if check is None or not check(value):
                return None
        return data

    return staticmethod(fast_load)


class HandScoreRequestSchema(RulesRequestFields):
    """A hand to score, with the sheet it is scored against."""

    fast_load = _fast(_FAST_HAND, ("dice",))

    dice = dice_field(required=True)
    throw = _int(1, MAX_THROW, metadata={
        "description": "Throw of the turn these dice stand on (1 = first: servida, de boca)"})
    scorecard = fields.Nested(ScorecardSchema)
    em_baixo = _bool(metadata={"description": "Bozó: score the faces turned to the table"})


class HandValidateRequestSchema(RulesRequestFields):
    """A hand to check; anything in `dice` is reported on rather than rejected."""

    dice = fields.List(fields.Raw(allow_none=True), required=True,
                       validate=validate.Length(max=64))
    throw = _int(1, MAX_THROW)
    scorecard = fields.Nested(ScorecardSchema)


class ScorecardScoreRequestSchema(ScorecardFields, RulesRequestFields):
    """A scorecard to total."""

    fast_load = _fast(_FAST_CARD, ())

    final = _bool(metadata={"description": "The game is over: empty boxes count as 0"})


class EffectiveRulesRequestSchema(RulesRequestFields):
    """Options and overrides whose effective sheet is wanted."""


# --------------------------------------------------------------------------- responses

PATTERNS_DOC = (
    "Patterns the hand forms, the same names for every variant (not box ids: a variant's box "
    "may ask for more or less): pair, two_pairs, three_pairs, three_of_a_kind, "
    "four_of_a_kind, five_of_a_kind, six_of_a_kind, full_house (3+2), villa (3+3), tower "
    "(4+2), small_straight (4 in a row), large_straight (5 in a row), wrapped_straight "
    "(3-4-5-6-1), full_straight (1-6).")




class EchoRulesSchema(ma.Schema):
    """The effective rules a response was computed with."""

    variant = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS))
    options = fields.Dict(required=True)
    overrides = fields.Dict(required=True)
    fingerprint = fields.String(required=True, metadata={
        "description": "Stable hash of the effective rules"})


class CategorySchema(ma.Schema):
    """What filling one box with the hand gives."""

    box = fields.String(required=True, validate=validate.OneOf(ALL_BOX_IDS))
    score = fields.Integer(required=True)
    open = fields.Boolean(required=True, metadata={"description": "Not yet filled"})
    legal = fields.Boolean(required=True, metadata={
        "description": "May be filled now (Joker, order and first-throw rules applied)"})
    joker = fields.Boolean(required=True, metadata={"description": "Score comes from a Joker"})
    bonus = fields.Integer(required=True, metadata={
        "description": "Five-of-a-kind bonus this placement earns (YAHTZEE 100, Kniffel 50)"})
    upper_bonus = fields.Integer(required=True, metadata={
        "description": "Upper bonus this placement secures"})
    wins_game = fields.Boolean(required=True)
    column = fields.Integer(allow_none=True, required=True, metadata={
        "description": "Column number (1-4) on a column sheet, else null"})


class HandScoreSchema(ma.Schema):
    """The boxes a hand can fill, with their scores."""

    variant = fields.String(required=True)
    rules = fields.Nested(EchoRulesSchema, required=True)
    dice = fields.List(fields.Integer(), required=True)
    scored_dice = fields.List(fields.Integer(), required=True, metadata={
        "description": "The faces scored (the bottom faces with em_baixo)"})
    throw = fields.Integer(allow_none=True, required=True)
    wins_game = fields.Boolean(required=True)
    joker = fields.Boolean(required=True)
    patterns = fields.List(fields.String(), required=True,
                           metadata={"description": PATTERNS_DOC})
    categories = fields.List(fields.Nested(CategorySchema), required=True)


class ValidateProblemSchema(ma.Schema):
    """Why a hand is not legal."""

    pointer = fields.String(required=True)
    message = fields.String(required=True)


class HandValidationSchema(ma.Schema):
    """Whether a hand is legal for the variant, and what it forms."""

    variant = fields.String(required=True)
    valid = fields.Boolean(required=True)
    dice_count = fields.Integer(required=True)
    dice = fields.List(fields.Integer())
    counts = fields.Dict(keys=fields.String(), values=fields.Integer())
    sum = fields.Integer()
    patterns = fields.List(fields.String(), metadata={"description": PATTERNS_DOC})
    problems = fields.List(fields.Nested(ValidateProblemSchema), required=True)


class BoxCheckSchema(ma.Schema):
    """A box of a scored scorecard."""

    box = fields.String(required=True)
    value = fields.Integer(allow_none=True, required=True)
    filled = fields.Boolean(required=True)
    achievable = fields.Boolean(required=True, metadata={
        "description": "Whether any hand could have put this value in this box"})


class FiveOfAKindBonusTotalSchema(ma.Schema):
    """Five-of-a-kind bonuses: how many, their points."""

    count = fields.Integer(required=True)
    points = fields.Integer(required=True)
    achievable = fields.Boolean(required=True)


class ColumnTotalsSchema(ma.Schema):
    """Totals of one column."""

    column = fields.Integer()
    order = fields.String(validate=validate.OneOf(COLUMN_ORDERS))
    upper_subtotal = fields.Integer(required=True)
    upper_bonus = fields.Integer(required=True)
    lower_total = fields.Integer(required=True)
    bonus = fields.Integer(required=True)
    bonus_five_of_a_kind = fields.Nested(FiveOfAKindBonusTotalSchema, required=True)
    total = fields.Integer(required=True)
    complete = fields.Boolean(required=True)
    boxes = fields.List(fields.Nested(BoxCheckSchema), required=True)


class ScorecardTotalsSchema(ma.Schema):
    """Totals of a scorecard (per column too, on a column sheet)."""

    variant = fields.String(required=True)
    rules = fields.Nested(EchoRulesSchema, required=True)
    upper_subtotal = fields.Integer(required=True)
    upper_bonus = fields.Integer(required=True)
    lower_total = fields.Integer(required=True)
    bonus = fields.Integer(required=True)
    bonus_five_of_a_kind = fields.Nested(FiveOfAKindBonusTotalSchema)
    total = fields.Integer(required=True)
    complete = fields.Boolean(required=True)
    won = fields.Boolean(required=True)
    final = fields.Boolean(required=True)
    boxes = fields.List(fields.Nested(BoxCheckSchema))
    columns = fields.List(fields.Nested(ColumnTotalsSchema))


class BoxDefinitionSchema(ma.Schema):
    """A box of a variant's sheet."""

    id = fields.String(required=True, validate=validate.OneOf(ALL_BOX_IDS))
    section = fields.String(required=True, validate=validate.OneOf(("upper", "lower")))
    labels = fields.Dict(keys=fields.String(validate=validate.OneOf(LANGS)),
                         values=fields.String(), required=True)
    rule = fields.String(required=True)
    min_score = fields.Integer(required=True)
    max_score = fields.Integer(required=True)
    pattern = fields.String(required=True, validate=validate.OneOf(PATTERNS))
    scoring = fields.String(required=True, validate=validate.OneOf(SCORINGS))
    value = fields.Integer()
    face = fields.Integer()
    n = fields.Integer()
    groups = fields.List(fields.Integer())
    runs = fields.List(fields.List(fields.Integer()))
    value_by_face = fields.Dict(keys=fields.String(), values=fields.Integer())
    first_throw_bonus = fields.Integer(required=True)
    first_throw_value = fields.Integer(allow_none=True, required=True)
    wins_on_first_throw = fields.Boolean(required=True)
    requires = fields.List(fields.String(), required=True, metadata={
        "description": "Boxes that must hold their score (not a scratch) first"})


class OptionDefinitionSchema(ma.Schema):
    """An option of a variant."""

    name = fields.String(required=True)
    choices = fields.List(fields.Raw(), required=True)
    default = fields.Raw(required=True)
    description = fields.String(required=True)


class VariantDefinitionSchema(ma.Schema):
    """A variant's rules: the sheet, dice, throws, turns, bonuses, options."""

    id = fields.String(required=True)
    name = fields.String(required=True)
    description = fields.String(required=True)
    dice = fields.Integer(required=True)
    throws = fields.Integer(required=True)
    turns = fields.Integer(required=True)
    boxes = fields.List(fields.Nested(BoxDefinitionSchema), required=True)
    upper_bonus = fields.Dict(allow_none=True, required=True)
    five_of_a_kind_bonus = fields.Dict(allow_none=True, required=True)
    joker = fields.String(required=True)
    order = fields.String(required=True)
    columns = fields.List(fields.String(), required=True)
    saved_throws = fields.Boolean(required=True)
    em_baixo = fields.Boolean(required=True)
    options = fields.List(fields.Nested(OptionDefinitionSchema), required=True)
    sources = fields.List(fields.String(), required=True)
    fingerprint = fields.String(required=True)


class VariantListSchema(ma.Schema):
    """Every variant."""

    variants = fields.List(fields.Nested(VariantDefinitionSchema), required=True)


class EffectiveRulesSchema(ma.Schema):
    """A table's effective rules: the definition after options and house rules."""

    rules = fields.Nested(EchoRulesSchema, required=True)
    definition = fields.Nested(VariantDefinitionSchema, required=True)


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
        "description": "Another action has the same value (within 1e-4, the precision of "
                       "the float32 tables)"})
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
    turn = fields.Nested("TurnOutlookSchema", metadata={
        "description": "keep, with coach: true: where the turn ends under the advisor's "
                       "play of the rest of it (service/web/analysis_schemas.py)"})


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
