"""Marshmallow schemas of the public contract: every constraint a request must meet.

Fields that depend on the variant (how many dice, which boxes a sheet has, which options
apply) are checked again by the core, which answers 422 with a pointer when they do not fit.
"""

from __future__ import annotations

import difflib
import unicodedata
from contextvars import ContextVar
from functools import cache

import marshmallow as ma
from marshmallow import fields, validate

from ..domain.boxes import PATTERNS, SCORINGS
from ..domain.consistency import SHEET_CODES
from ..domain.dice import HAND_PATTERNS
from ..domain.rules import BOX_OVERRIDE_FIELDS
from ..domain.variants import (
    ALL_BOX_IDS,
    COLUMN_ORDERS,
    LANGS,
    VARIANT_IDS,
    VARIANTS,
    labels_for,
)
from .variant_spec import variant_facts

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


#: The variant the request being read names (set by `body.load_items`): what an unknown box
#: id's message lists the ids of.
REQUEST_VARIANT: ContextVar[str | None] = ContextVar("request_variant", default=None)


def _folded(text: str) -> str:
    """A box label or id as compared for "did you mean": no accents, case or punctuation."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return "".join(c for c in plain.casefold() if c.isalnum())


@cache
def _box_names(variant: str | None) -> tuple[tuple[str, ...], dict[str, str]]:
    """The box ids of a variant (any option's included; every id without a variant), and
    each id's and label's folded form (in every language) -> its id."""
    ids = tuple(variant_facts(variant)["boxes"]) if variant in VARIANTS else ALL_BOX_IDS
    own = {b.id: b.labels for b in VARIANTS[variant].boxes} if variant in VARIANTS else {}
    names: dict[str, str] = {}
    for bid in ids:
        for label in (*own.get(bid, {}).values(), *labels_for(bid).values(), bid):
            names.setdefault(_folded(label), bid)
    return ids, names


def unknown_box(value: object, variant: str | None = None) -> str:
    """What an unknown box id is told: the variant's own ids, and the id it likely means
    when it is a box's label in one of the six languages (or close to an id or label)."""
    variant = variant or REQUEST_VARIANT.get()
    ids, names = _box_names(variant)
    whose = f"the box ids of {variant!r}" if variant in VARIANTS else "box ids"
    text = f"Unknown box {value!r}; {whose} are {', '.join(ids)}"
    if isinstance(value, str) and value:
        key = _folded(value)
        match = names.get(key) or next(iter(difflib.get_close_matches(key, names, 1, 0.8)),
                                        None)
        if match is not None:
            guess = names[match] if match in names and match != key else match
            text += f". Did you mean {guess!r}?"
    return text


class BoxIdField(fields.String):
    """A box id: one of the variant's (the spec's per-variant paths list them; the generic
    schema lists every variant's, and a box the variant lacks is a 409 from the core)."""

    def __init__(self, **kw: object) -> None:
        super().__init__(validate=validate.OneOf(ALL_BOX_IDS), **kw)  # the spec's enum

    def _deserialize(self, value: object, attr: str | None, data: object,
                     **kwargs: object) -> str:
        out = super()._deserialize(value, attr, data, **kwargs)
        if out not in _BOX_IDS:
            raise ma.ValidationError(unknown_box(out))
        return out


_BOX_IDS = frozenset(ALL_BOX_IDS)


def box_id(**kw: object) -> fields.Field:
    """A field that names a box (`BoxIdField`)."""
    return BoxIdField(**kw)


class BoxValuesField(fields.Field):
    """Box id → points entered (0 = scratched), null or absent = open.

    One property per box id in the spec; checked by hand for speed (every scoring request
    carries a scorecard), with marshmallow's messages.
    """

    openapi_doc = {"type": "object", "additionalProperties": False,
                   "description": "Box id → points entered (0 = scratched); null or absent "
                                  "= open",
                   "properties": {b: {"type": ["integer", "null"], "minimum": 0,
                                      "maximum": MAX_VALUE,
                                      "description": f"Points entered in the {b} box ("
                                                     f"{labels_for(b)['en']}; 0 = "
                                                     f"scratched); null or absent = open"}
                                  for b in ALL_BOX_IDS}}
    _ids = _BOX_IDS

    def _deserialize(self, value: object, attr: str | None, data: object,
                     **kwargs: object) -> dict[str, int | None]:
        if not isinstance(value, dict):
            raise ma.ValidationError("Not a valid mapping type.")
        errors: dict[str, list[str]] = {}
        for k, v in value.items():
            if k not in self._ids:
                errors[k] = [unknown_box(k)]
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
    scoring = fields.String(validate=validate.OneOf(SCORINGS), metadata={
        "description": "sum: all dice; matching: the dice of the pattern; fixed: `value`"})
    first_throw_bonus = _int(0, MAX_VALUE, metadata={
        "description": "Points added when made on the first throw (servida, de boca)"})
    first_throw_value = _int(0, MAX_VALUE, allow_none=True, metadata={
        "description": "Score replacing the normal one on the first throw (General de mão)"})
    wins_on_first_throw = _bool(metadata={
        "description": "Made on the first throw, the game is won at once"})


assert set(BoxOverrideSchema._declared_fields) == set(BOX_OVERRIDE_FIELDS)

class _BoxKeyedSchema(ma.Schema):
    """A schema with one field per box id: an unknown key is an unknown box (`unknown_box`),
    not marshmallow's bare "Unknown field."."""

    @ma.pre_load
    def _known_boxes(self, data: object, **kwargs: object) -> object:
        if isinstance(data, dict):
            unknown = {k: [unknown_box(k)] for k in data if k not in _BOX_IDS}
            if unknown:
                raise ma.ValidationError(unknown)
        return data


BoxOverridesSchema = _BoxKeyedSchema.from_dict(
    {b: fields.Nested(BoxOverrideSchema) for b in ALL_BOX_IDS}, name="BoxOverridesSchema")


class UpperBonusSchema(StrictSchema):
    """The upper-section bonus: amount once the upper total reaches the threshold."""

    threshold = _int(1, MAX_VALUE, metadata={
        "description": "Upper total that earns the bonus (itself included)"})
    amount = _int(1, MAX_VALUE, metadata={"description": "Points of the bonus"})


class FiveOfAKindBonusSchema(StrictSchema):
    """The bonus per further five of a kind (YAHTZEE bonus, extra Kniffel)."""

    amount = _int(1, MAX_VALUE, metadata={"description": "Points per bonus"})


class RulesSchema(StrictSchema):
    """House-rule overrides of the variant's table."""

    boxes = fields.Nested(BoxOverridesSchema, metadata={
        "description": "Per box id, the fields to change"})
    remove_boxes = fields.List(box_id(),
                               validate=validate.Length(max=len(ALL_BOX_IDS)), metadata={
                                   "description": "Boxes the table plays without"})
    upper_bonus = fields.Nested(UpperBonusSchema, allow_none=True, metadata={
        "description": "null removes the upper bonus"})
    five_of_a_kind_bonus = fields.Nested(FiveOfAKindBonusSchema, allow_none=True, metadata={
        "description": "null removes the five-of-a-kind bonus"})


# --------------------------------------------------------------------------- scorecards

class ColumnSchema(StrictSchema):
    """One column of a column sheet."""

    boxes = BoxValuesField()
    five_of_a_kind_bonuses = _int(0, MAX_BONUSES, metadata={
        "description": "How many five-of-a-kind bonuses were won in this column"})


class ScorecardFields(StrictSchema):
    """The fields of a scorecard (a request may add others around them)."""

    boxes = BoxValuesField()
    five_of_a_kind_bonuses = _int(0, MAX_BONUSES, metadata={
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
    "five_of_a_kind_bonuses": lambda v: _fast_int(v, 0, MAX_BONUSES),
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


class MoveSuggestRequestSchema(RulesRequestFields):
    """A position to advise on: the dice, the throw they stand on, the sheet."""

    dice = dice_field(required=True)
    throw = _int(1, MAX_THROW, required=True, metadata={
        "description": "Throw of the turn these dice stand on (1 = first); the throws left "
                       "follow from it"})
    scorecard = fields.Nested(ScorecardSchema)
    em_baixo = _bool(metadata={"description": "Bozó: the dice are scored by the faces turned "
                                              "to the table"})
    coach = _bool(metadata={
        "description": "Add to every keep the probability that the turn ends with points in "
                       "each box and the expected points of the turn (under the advisor's "
                       "play of the rest of the turn)"})


class HandValidateRequestSchema(RulesRequestFields):
    """A hand to check; anything in `dice` is reported on rather than rejected."""

    dice = fields.List(fields.Raw(allow_none=True), required=True,
                       validate=validate.Length(max=64), metadata={
                           "description": "The dice to check: anything in the list is "
                                          "reported on (`problems`), not rejected"})
    throw = _int(1, MAX_THROW, metadata={
        "description": "Throw of the turn these dice stand on (1 = first)"})
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

    variant = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata={
        "description": "The variant id"})
    options = fields.Dict(required=True, metadata={
        "description": "Every option of the variant with its effective value"})
    overrides = fields.Dict(required=True, metadata={
        "description": "The house rules as sent (`rules` of the request)"})
    fingerprint = fields.String(required=True, metadata={
        "description": "Stable hash of the effective rules"})


class PlacementSchema(ma.Schema):
    """What filling one box with the hand gives."""

    box = box_id(required=True, metadata={
        "description": "The box id"})
    column = fields.Integer(allow_none=True, required=True, metadata={
        "description": "Column number (1-4) on a column sheet, else null"})
    score = fields.Integer(required=True, metadata={
        "description": "Points the box receives (0: a scratch)"})
    open = fields.Boolean(required=True, metadata={"description": "Not yet filled"})
    legal = fields.Boolean(required=True, metadata={
        "description": "May be filled now (Joker, order and first-throw rules applied)"})
    joker = fields.Boolean(required=True, metadata={"description": "Score comes from a Joker"})
    five_of_a_kind_bonus = fields.Integer(required=True, metadata={
        "description": "Five-of-a-kind bonus points this placement earns (YAHTZEE 100, "
                       "Kniffel 50)"})
    upper_bonus = fields.Integer(required=True, metadata={
        "description": "Upper bonus points this placement secures (it reaches the "
                       "threshold)"})
    wins_game = fields.Boolean(required=True, metadata={
        "description": "Filling this box now wins the game at once (Generala servida, "
                       "General de boca)"})


class HandScoreSchema(ma.Schema):
    """The boxes a hand can fill, with their scores."""

    variant = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata={
        "description": "The variant id"})
    rules = fields.Nested(EchoRulesSchema, required=True, metadata={
        "description": "The effective rules the hand was scored with"})
    dice = fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True, metadata={
        "description": "The hand, sorted"})
    scored_dice = fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True,
                              metadata={"description": "The faces scored, sorted (the bottom "
                                                       "faces with em_baixo)"})
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


class ValidateProblemSchema(ma.Schema):
    """Why a hand is not legal."""

    pointer = fields.String(required=True, metadata={
        "description": "JSON pointer to the offending field of the request"})
    detail = fields.String(required=True, metadata={"description": "What is wrong"})


class HandValidationSchema(ma.Schema):
    """Whether a hand is legal for the variant, and what it forms."""

    variant = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata={
        "description": "The variant id"})
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


def _d(text: str) -> dict[str, str]:
    return {"description": text}


class BoxDefinitionSchema(ma.Schema):
    """A box of a variant's sheet."""

    id = fields.String(required=True, validate=validate.OneOf(ALL_BOX_IDS), metadata=_d(
        "The box id, the same in every variant"))
    section = fields.String(required=True, validate=validate.OneOf(("upper", "lower")),
                            metadata=_d("upper: a number box (counts toward the upper bonus)"))
    labels = fields.Dict(keys=fields.String(validate=validate.OneOf(LANGS)),
                         values=fields.String(), required=True, metadata=_d(
                             "The box's name in each language (en, pt, es, de, sv, fr)"))
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


class OptionDefinitionSchema(ma.Schema):
    """An option of a variant."""

    name = fields.String(required=True, metadata=_d("The option's name in `options`"))
    choices = fields.List(fields.Raw(), required=True, metadata=_d("Its possible values"))
    default = fields.Raw(required=True, metadata=_d("Its value when not given"))
    description = fields.String(required=True, metadata=_d("What it changes"))


class VariantDefinitionSchema(ma.Schema):
    """A variant's rules: the sheet, dice, throws, turns, bonuses, options."""

    id = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata=_d(
        "The variant id"))
    name = fields.String(required=True, metadata=_d("The game's name"))
    description = fields.String(required=True, metadata=_d("The game in a few sentences"))
    dice = fields.Integer(required=True, metadata=_d("How many dice"))
    throws = fields.Integer(required=True, metadata=_d("Throws a turn has"))
    turns = fields.Integer(required=True, metadata=_d("Turns a game has (one box a turn)"))
    boxes = fields.List(fields.Nested(BoxDefinitionSchema), required=True, metadata=_d(
        "The boxes in sheet order"))
    upper_bonus = fields.Dict(allow_none=True, required=True, metadata=_d(
        "{threshold, amount}: the bonus once the number boxes reach the threshold; null: none"))
    five_of_a_kind_bonus = fields.Dict(allow_none=True, required=True, metadata=_d(
        "{amount, needs_made_box, placement}: points per further five of a kind; null: none"))
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


def _move_common() -> dict[str, fields.Field]:
    return {
        "expected_final_score": fields.Float(required=True, metadata={
            "description": "Expected final total of the sheet after this action under optimal "
                           "play (points already on the sheet included)"}),
        "regret": fields.Float(required=True, metadata={
            "description": "Best expected final score minus this action's (0 for the best)"}),
        "rank": fields.Integer(required=True, metadata={
            "description": "1 = best; actions tied in value share a rank"}),
        "tie": fields.Boolean(required=True, metadata={
            "description": "Another action has the same value (within 1e-4, the precision of "
                           "the float32 tables)"}),
    }


KeepMoveSchema = ma.Schema.from_dict({
    "action": fields.String(required=True, validate=validate.OneOf(("keep",)), metadata={
        "description": "keep: keep these dice and throw the others"}),
    **_move_common(),
    "dice": fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True,
                        metadata={"description": "The dice to keep, sorted (fewer than all)"}),
    "em_baixo": fields.Boolean(required=True, metadata={
        "description": "Bozó: announce 'em baixo' before the next throw (false elsewhere)"}),
    "turn": fields.Nested("TurnOutlookSchema", metadata={
        "description": "With coach: true: where the turn ends under the advisor's play of "
                       "the rest of it"}),
}, name="KeepMoveSchema")

ScoreMoveSchema = ma.Schema.from_dict({
    "action": fields.String(required=True, validate=validate.OneOf(("score",)), metadata={
        "description": "score: fill a box now"}),
    **_move_common(),
    "box": fields.String(required=True, validate=validate.OneOf(ALL_BOX_IDS), metadata={
        "description": "The box to fill"}),
    "column": fields.Integer(required=True, allow_none=True, metadata={
        "description": "Column number (1-4) on a column sheet, else null"}),
    "score": fields.Integer(required=True, metadata={
        "description": "Points the box receives"}),
    "five_of_a_kind_bonus": fields.Integer(required=True, metadata={
        "description": "Five-of-a-kind bonus points the placement earns (as in hands/score)"}),
    "upper_bonus": fields.Integer(required=True, metadata={
        "description": "Upper bonus points the placement secures (as in hands/score)"}),
    "joker": fields.Boolean(required=True, metadata={
        "description": "The score comes from a Joker"}),
    "wins_game": fields.Boolean(required=True, metadata={
        "description": "The placement wins the game at once (valued at its score)"}),
}, name="ScoreMoveSchema")


class MoveField(fields.Raw):
    """A keep or a score action: a union discriminated by `action` in the spec."""

    openapi_doc = {
        "oneOf": [{"$ref": "#/components/schemas/KeepMove"},
                  {"$ref": "#/components/schemas/ScoreMove"}],
        "discriminator": {"propertyName": "action",
                          "mapping": {"keep": "#/components/schemas/KeepMove",
                                      "score": "#/components/schemas/ScoreMove"}},
    }


class MoveSuggestionSchema(ma.Schema):
    """The best move for a position and every alternative, ranked."""

    variant = fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata={
        "description": "The variant id"})
    rules = fields.Nested(EchoRulesSchema, required=True, metadata={
        "description": "The effective rules the advice was computed with"})
    dice = fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True, metadata={
        "description": "The faces advised on (the bottom faces with em_baixo), sorted"})
    throw = fields.Integer(required=True, metadata={
        "description": "The throw the dice stand on, as sent"})
    throws_left = fields.Integer(required=True, metadata={
        "description": "Throws this turn may still make (saved throws included)"})
    exact = fields.Boolean(required=True, metadata={
        "description": "Exact optimum (false: a documented approximation, see method)"})
    method = fields.String(required=True, metadata={
        "description": "How the values are computed"})
    current_total = fields.Integer(required=True, metadata={
        "description": "Points on the sheet now (bonuses included)"})
    expected_final_score = fields.Float(required=True, metadata={
        "description": "Expected final total under optimal play from here (the best "
                       "action's value)"})
    best = MoveField(required=True, metadata={"description": "The best action"})
    alternatives = fields.List(MoveField(), required=True, metadata={
        "description": "Every action (the best first), ranked by expected final score"})
