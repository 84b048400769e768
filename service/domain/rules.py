"""Effective rules: a variant with a request's options and house-rule overrides applied.

`effective_rules()` is the one entry point. It validates options and overrides (raising
`InvalidInput` with JSON pointers), builds the effective `Variant`, precomputes every hand's
score in every box, and gives the result a stable fingerprint. Results are cached, so a
request pays for this once per distinct table of rules.

House-rule overrides (`rules` in a request)::

    {"boxes": {"full_house": {"value": 30, "first_throw_bonus": 5}},
     "remove_boxes": ["chance"],
     "upper_bonus": {"threshold": 60, "amount": 30},      # or null: no upper bonus
     "five_of_a_kind_bonus": {"amount": 50}}               # or null: no such bonus
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from .boxes import (
    SCORINGS,
    Box,
    describe,
    full_value,
    match_table,
    pattern_key,
    pattern_match,
    score_from_match,
)
from .dice import Hand, all_hands, counts_of
from .errors import InvalidInput, Problem, UnknownVariant, pointer
from .variants import (
    OPTION_APPLIERS,
    VARIANTS,
    FiveOfAKindBonus,
    OptionSpec,
    UpperBonus,
    Variant,
    unknown_box,
)

BOX_OVERRIDE_FIELDS = ("value", "scoring", "first_throw_bonus", "first_throw_value",
                       "wins_on_first_throw")
OVERRIDE_FIELDS = ("boxes", "remove_boxes", "upper_bonus", "five_of_a_kind_bonus")
MAX_VALUE = 10_000


@dataclass(frozen=True)
class RuleSet:
    """A variant as it is played at one table, with lookup tables for fast scoring."""

    variant: Variant
    options: dict[str, Any]
    overrides: dict[str, Any]
    fingerprint: str
    hand_index: dict[Hand, int] = field(repr=False)
    # score[b][h]: plain score of hand h in box b, later throws / first throw
    score_later: tuple[tuple[int, ...], ...] = field(repr=False)
    score_first: tuple[tuple[int, ...], ...] = field(repr=False)
    matched: tuple[tuple[bool, ...], ...] = field(repr=False)  # pattern made, per box and hand
    achievable: tuple[frozenset[int], ...] = field(repr=False)
    max_score: tuple[int, ...] = field(repr=False)
    # wins_first[h][b]: hand h, made on the first throw, wins the game at once through box b
    wins_first: tuple[tuple[bool, ...], ...] = field(repr=False)
    # joker_score[b][f]: the score of a five of a kind of face f (1..6; 0 unused) in box b
    # when it counts as made there, as a Joker (`joker_value`)
    joker_score: tuple[tuple[int, ...], ...] = field(repr=False)
    # hand_rows[first][h]: hand h's row of score_later (first False) or score_first, made
    # when `scores_of` is first asked for it
    hand_rows: tuple[list[tuple[int, ...] | None], list[tuple[int, ...] | None]] = field(
        repr=False, compare=False)

    @property
    def id(self) -> str:
        """The base variant's id."""
        return self.variant.id

    def scores_of(self, h: int, first_throw: bool) -> tuple[int, ...]:
        """Hand h's plain score in every box, in sheet order, on the first throw or a later
        one (a row of `score_first` or `score_later`, made once a hand)."""
        rows = self.hand_rows[first_throw]
        row = rows[h]
        if row is None:
            table = self.score_first if first_throw else self.score_later
            row = rows[h] = tuple(scores[h] for scores in table)
        return row

    def box_index(self, box_id: str) -> int:
        """Position of a box in sheet order."""
        return self.variant.box_ids.index(box_id)



class UnderRules:
    """What an answer computed under a table of rules states once: the rules (`rules`, a
    `RuleSet`, which the API echoes as `rules`: the variant's id, the options, the house
    rules, the fingerprint) and so the variant it is about (`variant`).

    Mixed into the answers of the domain and the advisor (`scoring.HandScore`,
    `games.GameValidation`, the advisor's `Suggestion`...), each a dataclass that declares
    its `rules` field."""

    __slots__ = ()
    rules: RuleSet

    @property
    def variant(self) -> str:
        """The id of the variant the answer is about."""
        return self.rules.id


def canonical(data: Any) -> str:
    """Canonical JSON text (sorted keys, no spaces) for cache keys and fingerprints."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def get_variant(variant_id: str) -> Variant:
    """The catalogue entry for an id, or UnknownVariant."""
    try:
        return VARIANTS[variant_id]
    except KeyError:
        raise UnknownVariant(variant_id) from None


def effective_rules(variant_id: str, options: dict[str, Any] | None = None,
                    overrides: dict[str, Any] | None = None) -> RuleSet:
    """Apply options and overrides to a variant; validated, cached, fingerprinted."""
    get_variant(variant_id)
    # Most requests name no options or overrides: skip building a canonical key for them.
    return _effective_cached(variant_id, canonical(options) if options else "{}",
                             canonical(overrides) if overrides else "{}")


# About 100 KiB a RuleSet (its scoring tables): 128 of them bound what a flood of distinct
# house rules adds to a worker (docs/deploy.md, memory); building one takes milliseconds.
# `scores_of` adds a row a hand scored under it (a flood's tables score few hands each): 75
# KiB more with every hand of five dice scored on first and later throws, 190 with six.
@lru_cache(maxsize=128)
def _effective_cached(variant_id: str, options_json: str, overrides_json: str) -> RuleSet:
    base = VARIANTS[variant_id]
    options = resolve_options(base, json.loads(options_json))
    v = base
    for spec in base.options:
        v = OPTION_APPLIERS[spec.name](v, options[spec.name])
    overrides = json.loads(overrides_json)
    v = apply_overrides(v, overrides)
    rs = build_rule_set(v, options, overrides)
    check_box_bounds(rs)
    return rs


def check_box_bounds(rs: RuleSet) -> None:
    """Refuse house rules under which a box could score more than a box holds (MAX_VALUE:
    the bound of every sheet the service reads and writes), so that every sheet it answers
    can be sent back as it is: a 409 naming each such box, code `box_value_too_large`."""
    problems = [Problem(pointer("rules", "boxes", b.id),
                        f"this box scores up to {most} under these rules (its value, first-"
                        f"throw bonus or value, and Joker together), more than a box holds "
                        f"({MAX_VALUE}): lower them", "box_value_too_large")
                for b, most in zip(rs.variant.boxes, rs.max_score) if most > MAX_VALUE]
    if problems:
        raise InvalidInput(problems)


def resolve_options(variant: Variant, given: dict[str, Any]) -> dict[str, Any]:
    """Every option of the variant with its value: the given one, else the default."""
    problems = []
    for name, value in given.items():
        spec = variant.option(name)
        if spec is None:
            known = ", ".join(o.name for o in variant.options) or "none"
            problems.append(Problem(pointer("options", name),
                                    f"unknown option {name!r} for variant {variant.id!r} "
                                    f"(its options: {known})"))
        elif spec.is_bool and not isinstance(value, bool):
            problems.append(Problem(pointer("options", name), "must be true or false"))
        elif not spec.is_bool and (isinstance(value, bool) or value not in spec.choices):
            problems.append(Problem(pointer("options", name),
                                    f"must be one of {', '.join(map(str, spec.choices))}"))
    if problems:
        raise InvalidInput(problems)
    return {o.name: given.get(o.name, o.default) for o in variant.options}


def _int_field(problems: list[Problem], ptr: str, value: Any, minimum: int,
               maximum: int = MAX_VALUE) -> bool:
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(Problem(ptr, "must be an integer"))
        return False
    if value < minimum or value > maximum:
        problems.append(Problem(ptr, f"must be between {minimum} and {maximum}"))
        return False
    return True


def apply_overrides(v: Variant, overrides: dict[str, Any]) -> Variant:
    """Apply house-rule overrides, or raise InvalidInput naming every field that is wrong."""
    problems: list[Problem] = []
    for key in overrides:
        if key not in OVERRIDE_FIELDS:
            problems.append(Problem(pointer("rules", key),
                                    f"unknown override (known: {', '.join(OVERRIDE_FIELDS)})"))
    box_changes = overrides.get("boxes") or {}
    if not isinstance(box_changes, dict):
        problems.append(Problem("/rules/boxes", "must be an object keyed by box id"))
        box_changes = {}
    for box_id, changes in box_changes.items():
        base = pointer("rules", "boxes", box_id)
        box = v.box(box_id)
        if box is None:
            problems.append(Problem(base, unknown_box(v, box_id), "unknown_box"))
            continue
        if not isinstance(changes, dict):
            problems.append(Problem(base, "must be an object"))
            continue
        v = _override_box(v, box, changes, base, problems)

    removed = overrides.get("remove_boxes") or []
    if not isinstance(removed, list):
        problems.append(Problem("/rules/remove_boxes", "must be a list of box ids"))
        removed = []
    for i, box_id in enumerate(removed):
        if v.box(box_id) is None:
            problems.append(Problem(pointer("rules", "remove_boxes", i),
                                    unknown_box(v, box_id), "unknown_box"))
        elif box_id in removed[:i]:
            problems.append(Problem(pointer("rules", "remove_boxes", i),
                                    f"box {box_id!r} is listed twice"))
    remaining = tuple(b for b in v.boxes if b.id not in removed)
    if removed and not remaining:
        problems.append(Problem("/rules/remove_boxes", "a sheet needs at least one box"))
    for b in remaining:
        for needed in b.requires:
            if needed in removed:
                problems.append(Problem("/rules/remove_boxes",
                                        f"box {b.id!r} depends on {needed!r}; remove both"))
    if removed and remaining:
        v = v.with_boxes(remaining)
        if v.box("five_of_a_kind") is None:
            # The Joker and the five-of-a-kind bonus are rules of that box.
            v = replace(v, joker="none", five_of_a_kind_bonus=None)

    if "upper_bonus" in overrides:
        v = _override_upper_bonus(v, overrides["upper_bonus"], problems)
    elif removed and v.upper_bonus and v.upper_bonus.threshold > upper_max(v):
        problems.append(Problem("/rules/remove_boxes",
                                f"without these boxes the upper bonus's threshold "
                                f"{v.upper_bonus.threshold} is out of reach (the upper "
                                f"section's maximum is {upper_max(v)}); set upper_bonus to "
                                f"null or lower its threshold"))
    if "five_of_a_kind_bonus" in overrides:
        v = _override_five_bonus(v, overrides["five_of_a_kind_bonus"], problems)
    if problems:
        raise InvalidInput(problems)
    return v


def _override_box(v: Variant, box: Box, changes: dict[str, Any], base: str,
                  problems: list[Problem]) -> Variant:
    new: dict[str, Any] = {}
    for key, value in changes.items():
        ptr = f"{base}/{key}"
        if key not in BOX_OVERRIDE_FIELDS:
            problems.append(Problem(ptr, f"unknown box field (known: "
                                         f"{', '.join(BOX_OVERRIDE_FIELDS)})"))
        elif key == "scoring":
            if value not in SCORINGS:
                problems.append(Problem(ptr, f"must be one of {', '.join(SCORINGS)}"))
            elif box.section == "upper" and value != box.scoring:
                problems.append(Problem(ptr, "number boxes always score their face's dice"))
            else:
                new[key] = value
        elif key == "wins_on_first_throw":
            if not isinstance(value, bool):
                problems.append(Problem(ptr, "must be true or false"))
            else:
                new[key] = value
        elif key == "first_throw_value" and value is None:
            new[key] = None
        elif _int_field(problems, ptr, value, 0):
            new[key] = value
    scoring = new.get("scoring", box.scoring)
    if box.section == "upper":
        # a number box scores its face's dice on every throw (no variant has it otherwise;
        # the advisor's model of the upper total relies on it)
        if new.get("first_throw_bonus", 0) != 0:
            problems.append(Problem(f"{base}/first_throw_bonus",
                                    "number boxes score their face's dice on every throw; "
                                    "they have no first-throw bonus"))
        if new.get("first_throw_value") is not None:
            problems.append(Problem(f"{base}/first_throw_value",
                                    "number boxes score their face's dice on every throw; "
                                    "they have no first-throw value"))
    if "value" in new and box.section == "upper":
        problems.append(Problem(f"{base}/value",
                                "number boxes score their face's dice; they have no value"))
    elif "value" in new and scoring != "fixed":
        problems.append(Problem(f"{base}/value",
                                f"box {box.id!r} scores by {scoring}; set scoring to "
                                f"'fixed' to give it a value"))
    if scoring == "fixed" and box.scoring != "fixed" and "value" not in new:
        problems.append(Problem(f"{base}/value", "a fixed-scoring box needs a value"))
    if "value" in new:
        new["value_by_face"] = ()  # a table's value replaces the whole scale (Póker de ases)
    if new:
        v = v.replace_box(box.id, **new)
    return v


def upper_max(v: Variant) -> int:
    """The most the variant's upper section can hold (every upper box at five of its face):
    the highest upper-bonus threshold that can be reached."""
    return sum(b.face * v.dice for b in v.boxes if b.section == "upper")


def _override_upper_bonus(v: Variant, data: Any, problems: list[Problem]) -> Variant:
    if data is None:
        return replace(v, upper_bonus=None)
    if not isinstance(data, dict):
        problems.append(Problem("/rules/upper_bonus", "must be an object or null"))
        return v
    for key in data:
        if key not in ("threshold", "amount"):
            problems.append(Problem(f"/rules/upper_bonus/{key}",
                                    "unknown field (known: threshold, amount)"))
    current = v.upper_bonus
    if current is None and not ("threshold" in data and "amount" in data):
        problems.append(Problem("/rules/upper_bonus",
                                f"variant {v.id!r} has no upper bonus: give both threshold "
                                f"and amount"))
        return v
    current = current or UpperBonus(0, 0)
    threshold = data.get("threshold", current.threshold)
    amount = data.get("amount", current.amount)
    ok = _int_field(problems, "/rules/upper_bonus/threshold", threshold, 1)
    ok = _int_field(problems, "/rules/upper_bonus/amount", amount, 1) and ok
    if ok and threshold > upper_max(v):
        problems.append(Problem("/rules/upper_bonus/threshold",
                                f"no sheet can reach {threshold}: the upper section's maximum "
                                f"is {upper_max(v)}"))
    return replace(v, upper_bonus=UpperBonus(threshold, amount)) if ok else v


def _override_five_bonus(v: Variant, data: Any, problems: list[Problem]) -> Variant:
    if data is None:
        return replace(v, five_of_a_kind_bonus=None)
    if v.five_of_a_kind_bonus is None:
        problems.append(Problem("/rules/five_of_a_kind_bonus",
                                f"variant {v.id!r} has no five-of-a-kind bonus to change"))
        return v
    if not isinstance(data, dict):
        problems.append(Problem("/rules/five_of_a_kind_bonus", "must be an object or null"))
        return v
    for key in data:
        if key != "amount":
            problems.append(Problem(f"/rules/five_of_a_kind_bonus/{key}",
                                    "unknown field (known: amount)"))
    amount = data.get("amount", v.five_of_a_kind_bonus.amount)
    if _int_field(problems, "/rules/five_of_a_kind_bonus/amount", amount, 1):
        return replace(v, five_of_a_kind_bonus=replace(v.five_of_a_kind_bonus, amount=amount))
    return v


def definition(v: Variant) -> dict[str, Any]:
    """Everything that decides a score, as plain data: what the fingerprint hashes (its
    canonical JSON: `canonical`), not an answer (the API's is `VariantDefinition`)."""
    return {
        "variant": v.id,
        "dice": v.dice,
        "throws": v.throws,
        "boxes": [b.as_data() for b in v.boxes],
        "upper_bonus": None if v.upper_bonus is None else
        {"threshold": v.upper_bonus.threshold, "amount": v.upper_bonus.amount},
        "five_of_a_kind_bonus": None if v.five_of_a_kind_bonus is None else
        {"amount": v.five_of_a_kind_bonus.amount,
         "needs_made_box": v.five_of_a_kind_bonus.needs_made_box,
         "placement": v.five_of_a_kind_bonus.placement},
        "joker": v.joker,
        "order": v.order,
        "columns": list(v.columns),
        "saved_throws": v.saved_throws,
        "em_baixo": v.em_baixo,
    }


def joker_value(v: Variant, box: Box, face: int) -> int:
    """The score of a five of a kind of `face` in this box when it counts as made there (a
    Joker: its full value, as the dice it would have used where it makes no match)."""
    counts = counts_of((face,) * v.dice)
    return full_value(box, counts, pattern_match(box, counts) or (5 * face, face))


def joker_values(v: Variant, box: Box) -> set[int]:
    """Every score a Joker (a five of a kind while the five-of-a-kind box is filled) can give
    in this box: none unless the variant has a Joker and the box is in the lower section."""
    if v.joker == "none" or box.section != "lower":
        return set()
    return {joker_value(v, box, face) for face in range(1, 7)}


def build_rule_set(v: Variant, options: dict[str, Any], overrides: dict[str, Any]) -> RuleSet:
    """The RuleSet of a variant as given (options and overrides already applied to it):
    every hand's score in every box, and the fingerprint. `effective_rules` is the entry point
    for requests; the advisor calls this for the sub-sheets it solves separately."""
    hands = all_hands(v.dice)
    counts = [counts_of(h) for h in hands]
    matches = [match_table(pattern_key(b), v.dice) for b in v.boxes]
    later = tuple(tuple(score_from_match(b, c, m) for c, m in zip(counts, ms))
                  for b, ms in zip(v.boxes, matches))
    first = tuple(tuple(score_from_match(b, c, m, True) for c, m in zip(counts, ms))
                  for b, ms in zip(v.boxes, matches))
    matched = tuple(tuple(m is not None for m in ms) for ms in matches)
    achievable = tuple(frozenset({0, *later[i], *first[i], *joker_values(v, b)})
                       for i, b in enumerate(v.boxes))
    wins_first = tuple(tuple(b.wins_on_first_throw and matched[i][h] and first[i][h] > 0
                             for i, b in enumerate(v.boxes)) for h in range(len(hands)))
    fingerprint = hashlib.sha256(canonical(definition(v)).encode()).hexdigest()[:16]
    return RuleSet(
        variant=v, options=options, overrides=overrides, fingerprint=fingerprint,
        hand_index={h: i for i, h in enumerate(hands)},
        score_later=later, score_first=first, matched=matched, achievable=achievable,
        max_score=tuple(max(a) for a in achievable), wins_first=wins_first,
        joker_score=tuple((0, *(joker_value(v, b, face) for face in range(1, 7)))
                          for b in v.boxes),
        hand_rows=([None] * len(hands), [None] * len(hands)),
    )


@dataclass(frozen=True)
class BoxDefinition:
    """A box of a table's sheet as the API shows it (`BoxDefinitionSchema`): the box's data
    (`Box`), its names, its rule in a sentence and its range of scores. The fields of a
    pattern or a scoring the box has not (`value` but for fixed scoring, `face`, `n`,
    `groups`, `runs`, `value_by_face`) are None: not part of the answer."""

    id: str
    section: str
    labels: dict[str, str]
    rule: str
    min_score: int
    max_score: int
    pattern: str
    scoring: str
    first_throw_bonus: int
    first_throw_value: int | None
    wins_on_first_throw: bool
    requires: tuple[str, ...]
    value: int | None = None
    face: int | None = None
    n: int | None = None
    groups: tuple[int, ...] | None = None
    runs: tuple[tuple[int, ...], ...] | None = None
    value_by_face: dict[str, int] | None = None

    @staticmethod
    def of(b: Box, max_score: int) -> BoxDefinition:
        """The definition of box `b`, whose highest score under the table's rules is
        `max_score`."""
        return BoxDefinition(
            b.id, b.section, b.labels, describe(b), 0, max_score, b.pattern, b.scoring,
            b.first_throw_bonus, b.first_throw_value, b.wins_on_first_throw, b.requires,
            value=b.value if b.scoring == "fixed" else None,
            face=b.face if b.pattern == "face" else None,
            n=b.n if b.pattern in ("n_kind", "pairs") else None,
            groups=b.groups or None, runs=b.runs or None,
            value_by_face={str(f): v for f, v in b.value_by_face} or None)


@dataclass(frozen=True)
class VariantDefinition:
    """A table's rules as the API shows them (`VariantDefinitionSchema`): the variant's
    names, dice, throws and turns, its sheet (`BoxDefinition`s), bonuses, Joker and order
    rules, columns, the options a request may set (`OptionSpec`s), its sources and the
    rules' fingerprint."""

    id: str
    name: str
    labels: dict[str, str]
    description: str
    dice: int
    throws: int
    turns: int
    boxes: tuple[BoxDefinition, ...]
    upper_bonus: UpperBonus | None
    five_of_a_kind_bonus: FiveOfAKindBonus | None
    joker: str
    order: str
    columns: tuple[str, ...]
    saved_throws: bool
    em_baixo: bool
    options: tuple[OptionSpec, ...]
    sources: tuple[str, ...]
    fingerprint: str

    @staticmethod
    def of(rs: RuleSet) -> VariantDefinition:
        """The definition of a table's rules: its sheet with labels, rules, score ranges."""
        v = rs.variant
        return VariantDefinition(
            v.id, v.name, v.labels, v.description, v.dice, v.throws, v.turns,
            tuple(BoxDefinition.of(b, most) for b, most in zip(v.boxes, rs.max_score,
                                                                strict=True)),
            v.upper_bonus, v.five_of_a_kind_bonus, v.joker, v.order, v.columns,
            v.saved_throws, v.em_baixo, v.options, v.sources, rs.fingerprint)


@dataclass(frozen=True)
class VariantList:
    """Every variant's definition (`VariantListSchema`), default options."""

    variants: tuple[VariantDefinition, ...]


@dataclass(frozen=True)
class EffectiveRules:
    """A table's effective rules and its definition after options and house rules
    (`EffectiveRulesSchema`)."""

    rules: RuleSet
    definition: VariantDefinition

    @staticmethod
    def of(rs: RuleSet) -> EffectiveRules:
        """The effective rules of a table, with their definition."""
        return EffectiveRules(rs, VariantDefinition.of(rs))
