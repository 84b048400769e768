"""The fields and mixins every resource's schemas share, declared once: dice, box ids, a
scorecard's boxes, options, house rules, the echo of the rules an answer was computed with,
and the fast checks of the common scoring requests.

The generic schemas accept every variant's box ids and options; `variant_spec` narrows a copy
per variant for the spec's per-variant paths. Fields that depend on the variant (how many
dice, which boxes a sheet has, which options apply) are checked again by the core, which
answers 409 with a pointer when they do not fit.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, ClassVar

import marshmallow as ma
import orjson
from marshmallow import fields, validate
from marshmallow.utils import get_value

from ...domain.boxes import SCORINGS
from ...domain.rules import BOX_OVERRIDE_FIELDS, MAX_VALUE
from ...domain.variants import (
    ALL_BOX_IDS,
    VARIANT_IDS,
    VARIANTS,
    labels_for,
)

MAX_THROW = 41  # 3 throws + 2 saved from each of 19 earlier Maxi Yatzy turns
#: Most players of games/win-probability, and (with the one to move) of a position played
#: to win (`opponents`)
MAX_WIN_PLAYERS = 8
MAX_BONUSES = 100
MAX_NAME = 100  # characters of a player's name



class StrictSchema(ma.Schema):
    """Unknown fields are errors (the default, stated for readers)."""

    class Meta:
        unknown = ma.RAISE


class AnswerSchema(ma.Schema):
    """A schema of an answer, or of a part of one, dumped from the domain's and the
    advisor's objects (dataclasses: `domain.rules.UnderRules` and the rest), never from a
    dict built for it.

    `left_out`: the attributes (a field's `attribute`, else its name) whose None says that
    the field is not part of this answer: the answer leaves it out, where marshmallow would
    write null (a keep's `em_baixo` outside Bozó, a one-column sheet's `columns`).
    `compiled_dump` does the same.

    `repeats`: the schema's objects repeat from answer to answer (a box's placement, a box
    of a scored sheet: a few thousand distinct values in all), so a list of them compiled
    (`compiled_dump`) writes each distinct one once and then remembers its JSON."""

    left_out: ClassVar[frozenset[str]] = frozenset()
    repeats: ClassVar[bool] = False

    def get_attribute(self, obj: Any, attr: str, default: Any) -> Any:
        """The object's value, as marshmallow reads it; `default` (marshmallow's missing:
        the field left out) for None of an attribute in `left_out`."""
        value = super().get_attribute(obj, attr, default)
        return default if value is None and attr in self.left_out else value


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


class BoxIdField(fields.String):
    """A box id. The spec lists the ids (the generic paths every variant's, the per-variant
    paths the variant's own); the core checks it against the table's sheet, and answers
    any other, another variant's or none's, with the same 409 naming the sheet's ids and the
    one it likely means (`domain.variants.unknown_box`)."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self.openapi_doc = {"enum": [*ALL_BOX_IDS, *([None] if self.allow_none else [])]}


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
        for k, v in value.items():  # the core checks the ids (one 409 for any unknown box)
            if v is not None and type(v) is not int:
                errors[k] = ["Not a valid integer."]
            elif v is not None and not 0 <= v <= MAX_VALUE:
                errors[k] = [_RANGE_MSG.format(lo=0, hi=MAX_VALUE)]
        if errors:
            raise ma.ValidationError(errors)
        return dict(value)


class Rounded(fields.Float):
    """A number written rounded to `places` decimals (the advisor's values are float32 tables'
    sums: digits beyond those are noise). Never a negative zero: minus a regret of 0, or a
    small negative number rounded, is written 0.0 (`+ 0.0` makes -0.0 0.0)."""

    def __init__(self, places: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.places = places

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> float | None:
        return None if value is None else round(float(value), self.places) + 0.0


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


assert set(BoxOverrideSchema().fields) == set(BOX_OVERRIDE_FIELDS)

class _BoxKeyedSchema(ma.Schema):
    """A schema with one field per box id (the spec lists them); a key that is no box id is
    kept for the core, which answers it as any unknown box (a 409 naming the sheet's ids and
    the one it likely means)."""

    @ma.pre_load
    def _box_ids_only(self, data: object, **kwargs: object) -> object:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if k in _BOX_IDS}
        return data

    @ma.post_load(pass_original=True)
    def _others_for_the_core(self, loaded: dict, original: object,
                             **kwargs: object) -> dict:
        if isinstance(original, dict):
            loaded.update({k: v for k, v in original.items() if k not in _BOX_IDS})
        return loaded


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


class ScorecardSchema(ScorecardFields, AnswerSchema):
    """A player's sheet (in an answer, `domain.scorecards.Scorecard`: a one-column sheet
    without `columns`, a column sheet without `boxes` and `five_of_a_kind_bonuses`)."""

    left_out = frozenset({"boxes", "five_of_a_kind_bonuses", "columns"})


class NamedPlayerFields(StrictSchema):
    """A player of a request that lists players: their name, optional."""

    name = fields.String(validate=validate.Length(max=MAX_NAME), metadata={
        "description": "The player's name (optional)"})


class RulesRequestFields(StrictSchema):
    """Options and house rules, accepted wherever a variant is named."""

    options = fields.Nested(OptionsSchema)
    rules = fields.Nested(RulesSchema)


def scoring_em_baixo() -> fields.Boolean:
    """The `em_baixo` flag of a request that scores its dice now (games/turn, hands/score)."""
    return _bool(metadata={"description": "Bozó: score the faces turned to the table"})


# --------------------------------------------------------------------------- fast paths
# The common scoring request (dice, throw, a one-column scorecard) is checked here without
# marshmallow, which costs as much as the scoring itself. A fast check only ever accepts:
# anything unusual or wrong returns None and the request goes through marshmallow, which
# gives the errors. tests/test_fast_paths.py checks the two agree on generated requests.


def _fast_int(value: object, lo: int, hi: int) -> bool:
    return type(value) is int and lo <= value <= hi


def _fast_dice(value: object) -> bool:
    if type(value) is not list or not 5 <= len(value) <= 6:
        return False
    for d in value:  # noqa: SIM110 - a loop, not all() over a generator: half the time
        if type(d) is not int or not 1 <= d <= 6:
            return False
    return True


def _fast_boxes(value: object) -> bool:
    if type(value) is not dict:
        return False
    ids = BoxValuesField._ids
    for k, v in value.items():
        if k not in ids or (v is not None and (type(v) is not int or not 0 <= v <= MAX_VALUE)):
            return False
    return True


_FAST_SCORECARD = {
    "boxes": _fast_boxes,
    "five_of_a_kind_bonuses": lambda v: _fast_int(v, 0, MAX_BONUSES),
    "saved_throws": lambda v: _fast_int(v, 0, MAX_THROW),
    "won": lambda v: type(v) is bool,
}


def _fast_scorecard(value: object) -> bool:
    if type(value) is not dict:
        return False
    for k, v in value.items():
        check = _FAST_SCORECARD.get(k)
        if check is None or not check(v):
            return False
    return True




def _fast(checks: dict, required: tuple[str, ...]) -> object:
    def fast_load(data: object) -> dict | None:
        if type(data) is not dict:
            return None
        for r in required:
            if r not in data:
                return None
        for key, value in data.items():
            check = checks.get(key)
            if check is None or not check(value):
                return None
        return data

    return staticmethod(fast_load)


# --------------------------------------------------------------------------- responses

def _variant_id(**kw: Any) -> fields.String:
    """A variant's id in an answer."""
    return fields.String(required=True, validate=validate.OneOf(VARIANT_IDS), metadata={
        "description": "The variant id"}, **kw)


class VariantFields(AnswerSchema):
    """The variant an answer is about (every answer about a variant names it: its
    `variant`, `domain.rules.UnderRules.variant`)."""

    variant = _variant_id()


class EchoRulesSchema(VariantFields):
    """The effective rules a response was computed with (dumped from the `RuleSet`, whose
    `id` is the variant's)."""

    variant = _variant_id(attribute="id")
    options = fields.Dict(required=True, metadata={
        "description": "Every option of the variant with its effective value"})
    overrides = fields.Dict(required=True, metadata={
        "description": "The house rules as sent (`rules` of the request)"})
    fingerprint = fields.String(required=True, metadata={
        "description": "Stable hash of the effective rules"})


class AnswerFields(VariantFields):
    """What every answer about a table of rules says first: the variant and the effective
    rules (options, house rules) it was computed with."""

    rules = fields.Nested(EchoRulesSchema, required=True, metadata={
        "description": "The effective rules the answer was computed with"})


def answer_dice(**kw: Any) -> fields.List:
    """An answer's `dice`: the dice of a hand, as sent, sorted."""
    return fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True, metadata={
        "description": "The dice as sent, sorted"}, **kw)


def answer_scored_dice(**kw: Any) -> fields.List:
    """An answer's `scored_dice`: the faces a hand scored."""
    return fields.List(fields.Integer(validate=validate.Range(1, 6)), required=True,
                       metadata={"description": "The faces scored, sorted (the bottom faces "
                                                "with em_baixo)"}, **kw)


class HandAnswerFields(AnswerFields):
    """What an answer about a hand says first, after the rules: the dice and the faces they
    score (hands/score, games/turn, moves/suggest, moves/bot, positions with dice)."""

    dice = answer_dice()
    scored_dice = answer_scored_dice()


def problem_code(codes: Iterable[str]) -> fields.String:
    """The `code` field of a problem an answer reports: one of `codes` (docs/problems.md)."""
    return fields.String(required=True, validate=validate.OneOf(codes), metadata={
        "description": "Machine-readable reason (docs/problems.md)"})


def problem_detail() -> fields.String:
    """The `detail` field of a problem an answer reports (its `pointer` is each schema's own:
    what it points into differs)."""
    return fields.String(required=True, metadata={"description": "What is wrong"})


def throw_stood_on(**kw: Any) -> fields.Integer:
    """An answer's `throw`: the throw the dice of a turn or decision stood on."""
    return fields.Integer(required=True, metadata={"description": 'The throw the dice stood on'},
                          **kw)


def values_method() -> fields.String:
    """An answer's `method`: how the advisor computed the values it gives."""
    return fields.String(required=True, metadata={"description": 'How the values are computed'})


class TotalsFields(AnswerSchema):
    """A sheet's (or a column's) totals."""

    upper_subtotal = fields.Integer(required=True, metadata={
        "description": "Sum of the number boxes"})
    upper_bonus = fields.Integer(required=True, metadata={"description": "Upper bonus points"})
    lower_total = fields.Integer(required=True, metadata={
        "description": "Sum of the other boxes"})
    five_of_a_kind_bonus = fields.Integer(required=True, metadata={
        "description": "Points of the five-of-a-kind bonuses"})
    total = fields.Integer(required=True, metadata={"description": "The total so far"})


class BoxFields(AnswerSchema):
    """An answer's entry about one box of the sheet: the box it is about."""

    box = box_id(required=True, metadata={"description": "The box id"})


class BoxColumnFields(BoxFields):
    """An answer's entry about one box of a sheet that may have columns: the box and its
    column."""

    column = fields.Integer(allow_none=True, required=True, metadata={
        "description": "Column number (1-4) on a column sheet, else null"})


class PlacementFields(BoxColumnFields):
    """What writing a hand in one box gives: the box, its score and the bonuses it brings."""

    score = fields.Integer(required=True, metadata={
        "description": "Points the box receives (0: a scratch)"})
    joker = fields.Boolean(required=True, metadata={"description": "Scored as a Joker"})
    five_of_a_kind_bonus = fields.Integer(required=True, metadata={
        "description": "Five-of-a-kind bonus points it earns (YAHTZEE 100, Kniffel 50)"})
    upper_bonus = fields.Integer(required=True, metadata={
        "description": "Upper bonus points it secures (it reaches the threshold)"})
    wins_game = fields.Boolean(required=True, metadata={
        "description": "It wins the game at once (Generala servida, General de boca)"})



# --------------------------------------------------------------------------- moves
#: The unions of a keep and a placement (`MoveUnionField`): the union's component name ->
#: (action -> (the member's component name, its schema)). The API registers each member and
#: each union as a component (`union_components`), so a generator types `action` as a
#: literal and narrows a move by it.
MOVE_UNIONS: dict[str, dict[str, tuple[str, type[ma.Schema]]]] = {}
#: The union's component name -> the attribute of the objects it dumps that holds the move
#: (`domain.moves.Move`, whose `action` picks the member), None: the objects are moves.
MOVE_HELD_IN: dict[str, str | None] = {}


def move_union(name: str, keep: tuple[str, type[ma.Schema]],
               score: tuple[str, type[ma.Schema]], held_in: str | None = None) -> str:
    """Declare the union `name` of a keep and a placement, discriminated by `action`
    ("keep", "score"), from the component name and schema of each (returns `name`).
    `held_in`: the attribute of the objects the union dumps that holds the move (a record
    with figures beside the move), None: the objects are the moves."""
    MOVE_UNIONS[name] = {"keep": keep, "score": score}
    MOVE_HELD_IN[name] = held_in
    return name


def on_move(fields_: Mapping[str, fields.Field], held_in: str = "move"
            ) -> dict[str, fields.Field]:
    """These fields read from the move a record holds (`held_in`, its attribute): each a
    copy reading `<held_in>.<its attribute>` (what it writes, and the spec, unchanged)."""
    out = {}
    for name, field in fields_.items():
        read = copy.copy(field)
        read.attribute = f"{held_in}.{field.attribute or name}"
        out[name] = read
    return out


def union_components() -> dict[str, dict[str, Any]]:
    """Every declared union as an OpenAPI component: `oneOf` its members, discriminated by
    `action`, the mapping naming the members of its own `oneOf`."""
    out = {}
    for name, members in MOVE_UNIONS.items():
        refs = {tag: f"#/components/schemas/{component}"
                for tag, (component, _) in members.items()}
        out[name] = {"oneOf": [{"$ref": ref} for ref in refs.values()],
                     "discriminator": {"propertyName": "action", "mapping": refs}}
    return out


class MoveUnionField(fields.Field):
    """A move of a union `move_union` declared: a keep or a placement, written by the schema
    of its `action` (compiled: `compiled_dump`); in the spec, a reference to the union."""

    def __init__(self, union: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.openapi_doc = {"$ref": f"#/components/schemas/{union}"}
        self.dumps = {tag: compiled_dump(schema)
                      for tag, (_, schema) in MOVE_UNIONS[union].items()}
        self.held_in = MOVE_HELD_IN[union]

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        if value is None:
            return None
        move = value if self.held_in is None else getattr(value, self.held_in, None)
        action = getattr(move, "action", None)
        if action is None:  # a mapping: its key
            action = value["action"]
        return self.dumps[action](value)


# --------------------------------------------------------------------------- dumping fast
# An answer is dumped by its schema: `@blp.response` runs marshmallow's dump, and the scoring
# fast path (`web/fast.py`) the same schema compiled (`compiled_dump`): the fields it
# declares, in its order, under their data keys, nested schemas compiled too. Compiled, it
# skips marshmallow's per-field machinery (a third of a scoring request's CPU); a list of
# objects that repeat (`AnswerSchema.repeats`) is written from the JSON remembered for each.
# tests/web/test_fast_paths.py holds the two to the same bytes over generated requests.


def compiled_dump(schema: ma.Schema | type[ma.Schema]) -> Callable[[Any], Any]:
    """A function dumping what `schema` dumps, as marshmallow's `dump` does (a field the
    object lacks is left out; numbers and booleans made of their field's type), for orjson
    to write: a list of a `repeats` schema's objects holds their JSON (`orjson.Fragment`)."""
    return _compiled(schema)[0]


def _compiled_list(schema: ma.Schema | type[ma.Schema]) -> Callable[..., list[Any]]:
    """A function dumping a list of what `schema` (taken as one object's) dumps, each item
    as `compiled_dump` does; with `keep_none`, a None item is written None (a List of
    Nested), else dumped as the others (a Nested with many)."""
    return _compiled(schema)[1]


def _compiled(schema: ma.Schema | type[ma.Schema]
              ) -> tuple[Callable[[Any], Any], Callable[..., list[Any]]]:
    instance = schema() if isinstance(schema, type) else schema
    key = (type(instance), instance.many, tuple(instance.only or ()),
           tuple(instance.exclude or ()))
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED[key] = _compile(instance)
    return found


_COMPILED: dict[tuple, tuple[Callable[[Any], Any], Callable[..., list[Any]]]] = {}
_MISSING = object()

#: The types of the objects dumped, by whether they are Mappings (read by key, as
#: marshmallow reads them) or not (read by attribute: an answer's dataclasses): what
#: `isinstance(obj, Mapping)` says of them, asked once a type.
_PLAIN: set[type] = set()
_MAPPINGS: set[type] = set()


def _plain(kind: type) -> bool:
    """Whether objects of this type are not Mappings (remembered in `_PLAIN` or
    `_MAPPINGS`)."""
    if issubclass(kind, Mapping):
        _MAPPINGS.add(kind)
        return False
    _PLAIN.add(kind)
    return True

#: Converters that give back the very value they are given when it is already of their type
#: (`int(5) is 5`): the compiled code skips the call then.
_SAME_WHEN = {int: "int", float: "float"}


def _converter(field: fields.Field) -> Callable[[Any], Any] | None:
    """How a field's value is written (None: as it is, as marshmallow writes a Boolean); a
    field of the service's own that writes its values itself (`Rounded`, a move) through
    marshmallow's public `Field.serialize`, as a schema's dump does."""
    if _writes_itself(field):
        return partial(_own_serialize, field)
    if isinstance(field, fields.Nested):
        if field.many:
            return partial(_compiled_list(field.schema), keep_none=False)
        return compiled_dump(field.schema)
    if isinstance(field, fields.List):
        if isinstance(field.inner, fields.Nested) and not field.inner.many \
                and not _writes_itself(field.inner):
            return partial(_compiled_list(field.inner.schema), keep_none=True)
        inner = _converter(field.inner)
        same = _SAME_WHEN.get(inner)  # type: ignore[call-overload]
        if same is not None:  # (int, float) give back a value already of their type
            return partial(_same_list, int if same == "int" else float, inner)
        return list if inner is None else (lambda v: [None if x is None else inner(x)
                                                      for x in v])
    if isinstance(field, fields.Dict):
        return dict
    if isinstance(field, fields.Float):
        return float
    if isinstance(field, fields.Integer):
        return int
    return None


def _same_list(kind: type, convert: Callable[[Any], Any], values: Any) -> list[Any]:
    """A List of numbers written: the items as they are when each is of the converter's
    type (`kind`) or None, else each converted (None stays None)."""
    for x in values:
        if type(x) is not kind and x is not None:
            return [None if x is None else convert(x) for x in values]
    return list(values)


#: The service's own package: its field classes write their values themselves.
_SERVICE = __name__.split(".")[0] + "."


def _writes_itself(field: fields.Field) -> bool:
    """Whether a field is of a class of the service's own with a `_serialize` of its own
    (a class of ours that only documents or checks, `BoxIdField`, writes as its marshmallow
    base does)."""
    for klass in type(field).__mro__:
        if not klass.__module__.startswith(_SERVICE):
            return False
        if "_serialize" in vars(klass):
            return True
    return False


#: Most objects of one `repeats` schema whose JSON is remembered; beyond it the memory is
#: emptied and fills again.
REMEMBERED = 16384


def _remembered(schema: ma.Schema, found_first: list[str], rest: list[str],
                names: dict[str, Any]) -> list[str]:
    """The lines of a `repeats` schema's list dump that give an object's JSON (an
    `orjson.Fragment`, which orjson writes as it is): remembered under the values its fields
    read, made by the dump of one the first time (`dump_one`, so the same JSON), the memory
    emptied when it holds `REMEMBERED`. Values that compare equal name one JSON where the
    field converts them (an Integer's `True` and `1` are both written 1); a field that writes
    its value as it is (a Boolean: `1` and `True` are written apart) adds the value's type,
    but for a String's (a string equals no other value). Every field must be required and
    read from a plain attribute (a path or a field the schema leaves out would read
    otherwise)."""
    left_out = getattr(schema, "left_out", frozenset())
    read = [(field.attribute or name, field) for name, field in schema.dump_fields.items()]
    if found_first or rest or left_out or not all(
            attr.isidentifier() and field.required for attr, field in read):
        raise TypeError(f"{type(schema).__name__}.repeats needs every field required and "
                        f"read from a plain attribute")
    names.update(_memory={}, _limit=REMEMBERED, _Fragment=orjson.Fragment,
                 _dumps=orjson.dumps)
    key = [f"obj.{attr}" for attr, _ in read] + [
        f"type(obj.{attr})" for attr, field in read
        if _converter(field) is None and not isinstance(field, fields.String)]
    return [f"_memory.get(key := ({', '.join(key)},))",
            "if ret is None:",
            "    if len(_memory) >= _limit:",
            "        _memory.clear()",
            "    ret = _memory[key] = _Fragment(_dumps(dump_one(obj)))"]


def _own_serialize(field: fields.Field, value: Any) -> Any:
    return field.serialize("value", {"value": value})


def _compile(schema: ma.Schema) -> tuple[Callable[[Any], Any], Callable[..., list[Any]]]:
    """The dump of one object as Python source made for the schema, so that a field costs
    little more than its lookup (a loop over the fields, with a call per field, cost twice
    that): for each field, its value (the dict's key or the object's attribute; the default
    when it lacks one, or nothing when there is no default either), converted unless it is
    None or already of the converter's type. A plain dict or an object (the common cases)
    is dumped with its required fields read in one dict display (as far as the first
    optional one: the order is the schema's), the rest one by one; one that lacks a
    required field, and any other mapping, field by field. A required field of an object
    read by a path of attributes (`attribute="move.dice"`, the move a record holds) is read
    at once too, each object on the way first found without `__getitem__` (else, and for a
    dict, field by field, as marshmallow's `get_value` reads an item first); any other
    field read by a path (`attribute="measures.win_share"`) is read by marshmallow's own
    `get_value`, one by one. Returned with it: the dump of a list of such objects
    (`_compiled_list`), which reads an object of a type found to be no Mapping in its loop
    as the dump of one does (a `repeats` schema's from the JSON it remembers)."""
    names: dict[str, Any] = {"_MISSING": _MISSING, "_get_value": get_value}
    left_out: frozenset[str] = getattr(schema, "left_out", frozenset())
    by_field: dict[str, list[str]] = {"dict": [], "object": []}
    display: dict[str, list[str]] = {"dict": [], "object": []}  # the dict display's fields
    rest: dict[str, list[str]] = {"dict": [], "object": []}  # after the first optional one
    #: an object's path read at once: each prefix (its steps) -> the local holding it,
    #: assigned and found no mapping before the display
    prefixes: dict[tuple[str, ...], str] = {}
    found_first: list[str] = []  # those assignments and checks, in order

    def prefix_local(steps: tuple[str, ...]) -> str:
        """The local holding `obj.<steps>`, its assignment and check added once."""
        if steps not in prefixes:
            parent = "obj" if len(steps) == 1 else prefix_local(steps[:-1])
            local = prefixes[steps] = f"_p{len(prefixes)}"
            # read by its key, not its attribute, by marshmallow's `get_value`: field by field
            found_first.extend([f"{local} = {parent}.{steps[-1]}",
                                f"if hasattr({local}, '__getitem__'): raise AttributeError"])
        return prefixes[steps]

    for i, (name, field) in enumerate(schema.dump_fields.items()):
        attr = field.attribute or name
        path = "." in attr
        out = field.data_key if field.data_key is not None else name
        default = field.dump_default
        convert = _converter(field)
        value, test, inline = "v", "", ""
        if isinstance(field, Rounded):  # written inline: a third of a move's dump
            convert = None
            inline = f"(round(float(v), {field.places}) + 0.0)"
            value = f"v if v is None else {inline}"
        if convert is not None:
            names[f"_c{i}"] = convert
            same = _SAME_WHEN.get(convert)  # type: ignore[call-overload]
            test = f" is None or type(v) is {same}" if same else " is None"
            value = f"v if v{test} else _c{i}(v)"
        if default is ma.missing:
            absent = ["pass"]
        else:
            names[f"_d{i}"] = default
            absent = [f"v = _d{i}()" if callable(default) else f"v = _d{i}",
                      f"ret[{out!r}] = {value}"]
        first, *further = attr.split(".")
        # a path of attributes may be read at once from an object
        by_attributes = path and all(step.isidentifier() for step in attr.split("."))
        read = {"dict": f"obj[{attr!r}]",
                "object": f"obj.{attr}" if attr.isidentifier() else f"getattr(obj, {attr!r})"}
        # a None of an attribute the schema leaves out is the field's absence
        lacks = "v is _MISSING or v is None" if attr in left_out else "v is _MISSING"
        for kind, get in (("dict", f"obj.get({first!r}, _MISSING)"),
                          ("object", f"getattr(obj, {first!r}, _MISSING)")):
            # a path: each further step as marshmallow's get_value takes it, a dict's key
            # read at once
            steps = [f"if v is not _MISSING: v = v.get({key!r}, _MISSING) if type(v) is dict "
                     f"else _get_value(v, {key!r}, _MISSING)" for key in further]
            one_by_one = [f"v = {get}", *steps, f"if {lacks}:",
                          *("    " + a for a in absent), "else:", f"    ret[{out!r}] = {value}"]
            by_field[kind] += one_by_one
            if inline:
                shown = f"None if (v := {read[kind]}) is None else {inline}"
            elif convert is not None:
                shown = f"v if (v := {read[kind]}){test} else _c{i}(v)"
            else:  # as it is
                shown = read[kind]
            # in the display while none may lack (a path, or a field the schema leaves out,
            # may lack anywhere: one by one; an object's path of attributes is read at once)
            read_at_once = (field.required and attr not in left_out
                            and (not path or (kind == "object" and bool(by_attributes))))
            if read_at_once and path:
                at = f"{prefix_local(tuple([first, *further[:-1]]))}.{further[-1]}"
                if inline:
                    shown = f"None if (v := {at}) is None else {inline}"
                elif convert is not None:
                    shown = f"v if (v := {at}){test} else _c{i}(v)"
                else:
                    shown = at
            if read_at_once and not rest[kind]:
                display[kind].append(f"{out!r}: {shown}")
            elif read_at_once:
                rest[kind].append(f"ret[{out!r}] = {shown}")
            else:
                rest[kind] += one_by_one
    source = [
        "def by_field(obj):",
        "    ret = {}",
        "    if isinstance(obj, dict):",
        *("        " + line for line in by_field["dict"] or ["pass"]),
        "    else:",
        *("        " + line for line in by_field["object"] or ["pass"]),
        "    return ret",
        "def dump_one(obj):",
    ]
    plain = "(t := type(obj)) in _PLAIN or (t not in _MAPPINGS and _plain(t))"
    for kind, test, missing in (("dict", "type(obj) is dict", "KeyError"),
                                ("object", plain, "AttributeError")):
        source += [
            f"    if {test}:",
            "        try:",
            *("            " + line for line in (found_first if kind == "object" else ())),
            f"            ret = {{{', '.join(display[kind])}}}",
            *("            " + line for line in rest[kind]),
            "            return ret",
            f"        except {missing}:",
            "            pass",
        ]
    source.append("    return by_field(obj)")
    # a list: an object of a type found to be no Mapping (an answer's list of dataclasses)
    # read in the loop (a call an item less), any other item as dump_one reads it
    read = [f"{{{', '.join(display['object'])}}}", *rest["object"]]
    if getattr(schema, "repeats", False):
        # each distinct object written once: its JSON remembered under its values
        read = _remembered(schema, found_first, rest["object"], names)
    source += [
        "def dump_list(objs, keep_none):",
        "    out = []",
        "    append = out.append",
        "    for obj in objs:",
        "        if obj is None and keep_none:",
        "            append(None)",
        "            continue",
        f"        if {plain}:",
        "            try:",
        *("                " + line for line in found_first),
        f"                ret = {read[0]}",
        *("                " + line for line in read[1:]),
        "            except AttributeError:",
        "                ret = by_field(obj)",
        "            append(ret)",
        "        else:",
        "            append(dump_one(obj))",
        "    return out",
    ]
    names["_PLAIN"], names["_MAPPINGS"], names["_plain"] = _PLAIN, _MAPPINGS, _plain
    exec(compile("\n".join(source), f"<compiled dump of {type(schema).__name__}>", "exec"),
         names)
    dump_one: Callable[[Any], Any] = names["dump_one"]
    dump_list: Callable[..., list[Any]] = names["dump_list"]
    if schema.many:
        return partial(dump_list, keep_none=False), dump_list
    return dump_one, dump_list
