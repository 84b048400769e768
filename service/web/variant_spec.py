"""The OpenAPI document per variant: one path per variant and resource, generated from the
variant data, so that a request valid for the schema names only that variant's options and
boxes, its number of dice, its throws, and its own scorecard fields.

flask-smorest documents `/v1/variants/{variant}/...` once, with request schemas that accept
every variant's options and box ids. `specialise` keeps that templated path (operationId
`scoreHand`: one typed function can serve every variant through it) and adds one path per
variant (`/v1/variants/yahtzee/hands/score`, operationId `scoreHand_yahtzee`) whose schemas
are copies of the generic ones narrowed to that variant (`HandScoreRequest_yahtzee`,
`Options_yahtzee`, `Scorecard_yahtzee`, ...). A body that fits the generic schema but not
the variant it is sent to (another variant's box or option, six dice for five) is a 409; what
no schema can say (a value no hand can put in a box, a house rule that makes no sense, a
sheet no game reaches) is a 409 too.
"""

from __future__ import annotations

import copy
import itertools
from functools import cache
from typing import Any

from ..domain.boxes import SCORINGS
from ..domain.errors import InvalidInput
from ..domain.rules import effective_rules, upper_max
from ..domain.variants import ALL_BOX_IDS, VARIANT_IDS, VARIANTS

REF = "#/components/schemas/"
SCORING_NAMES = frozenset(SCORINGS)
METHODS = ("get", "put", "post", "delete", "patch")
#: Components that depend on the variant; every component that refers to one of them, however
#: deep, is narrowed per variant too (`narrowed_names`)
VARIANT_COMPONENTS = ("Options", "Rules", "BoxOverrides", "Scorecard", "Column",
                      "UpperBonus")
#: Requests whose `throw` the service checks against the variant's throws (hands/validate
#: reports a throw too many; a position's value takes any throw the sheet allows)
THROW_CHECKED = ("HandScoreRequest", "MoveSuggestRequest", "BotMoveRequest", "TurnRequest",
                 "WinProbabilityRequest", "PositionValueRequest")
#: Components of a recorded game: what was played is reported (games/validate's problems),
#: not refused, so only their box ids are narrowed
RECORDED = ("RecordedTurn",)
#: Request components whose top level holds a scorecard's fields (not under `scorecard`)
SHEET_AT_TOP = ("ScorecardScoreRequest",)


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        out = {node["$ref"][len(REF):]} if isinstance(node.get("$ref"), str) else set()
        for v in node.values():
            out |= _refs(v)
        return out
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node)) if node else set()
    return set()


_ALL_BOXES = frozenset(ALL_BOX_IDS)


def _is_box_enum(node: dict[str, Any]) -> bool:
    """Whether a schema node is a box id (its enum is every box id, null perhaps too)."""
    enum = node.get("enum")
    return isinstance(enum, list) and {e for e in enum if e is not None} == _ALL_BOXES


def _box_enums(node: Any) -> list[dict[str, Any]]:
    """Every schema node under `node` that names a box (`_is_box_enum`)."""
    out: list[dict[str, Any]] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, dict):
            if _is_box_enum(n):
                out.append(n)
            todo.extend(n.values())
        elif isinstance(n, list):
            todo.extend(n)
    return out


def narrowed_names(schemas: dict[str, Any]) -> set[str]:
    """The variant's own components (those in VARIANT_COMPONENTS, and every component with a
    field that names a box) and every component that refers to one of them."""
    names = {n for n in VARIANT_COMPONENTS if n in schemas}
    names |= {n for n, schema in schemas.items() if _box_enums(schema)}
    refs = {name: _refs(schema) for name, schema in schemas.items()}
    while True:
        more = {n for n, r in refs.items() if n not in names and r & names}
        if not more:
            return names
        names |= more


@cache
def variant_facts(vid: str) -> dict[str, Any]:
    """What the schema of a variant's requests may know: its options, every box any option
    value gives it, its dice and throws, and which scorecard fields it has."""
    base = VARIANTS[vid]
    boxes = dict.fromkeys(base.box_ids)
    kinds: dict[str, tuple[str, set[str]]] = {b.id: (b.section, {b.scoring}) for b in base.boxes}
    # The boxes of every combination of option values: an option's effect on a box may
    # depend on the others (Obligada removes the Doble Generala that doble_generala adds).
    names = [o.name for o in base.options]
    present: dict[tuple[Any, ...], set[str]] = {}
    for combo in itertools.product(*(o.choices for o in base.options)):
        try:
            variant = effective_rules(vid, dict(zip(names, combo, strict=True))).variant
        except InvalidInput:  # options that do not go together
            continue
        present[combo] = set(variant.box_ids)
        boxes.update(dict.fromkeys(variant.box_ids))
        for b in variant.boxes:
            kinds.setdefault(b.id, (b.section, set()))[1].add(b.scoring)
    # (option, value, boxes present only with it, boxes absent with it), whatever the others
    switches: list[tuple[str, Any, list[str], list[str]]] = []
    for i, spec in enumerate(base.options):
        for value in spec.choices:
            with_it = [p for c, p in present.items() if c[i] == value]
            without = [p for c, p in present.items() if c[i] != value]
            added = [b for b in boxes if any(b in p for p in with_it)
                     and not any(b in p for p in without)]
            removed = [b for b in boxes if any(b in p for p in without)
                       and not any(b in p for p in with_it)]
            if added or removed:
                switches.append((spec.name, value, added, removed))
    return {
        "options": [o.name for o in base.options],
        "boxes": list(boxes),
        "box_kinds": kinds,
        "upper_max": upper_max(base),
        "box_switches": switches,
        "dice": base.dice,
        "throws": base.throws,
        "five_of_a_kind_bonus": base.five_of_a_kind_bonus is not None,
        "upper_bonus": base.upper_bonus is not None,
        "saved_throws": base.saved_throws,
        "em_baixo": base.em_baixo,
        "columns": base.option("columns") is not None,
    }


def _rename_refs(node: Any, vid: str, narrowed: set[str]) -> Any:
    """Point every $ref to a narrowed component at that component's copy for `vid`, and
    every discriminator's mapping too (a client generator types a union's tag from it)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF) and ref[len(REF):] in narrowed:
            return {**node, "$ref": f"{ref}_{vid}"}
        out = {k: _rename_refs(v, vid, narrowed) for k, v in node.items()}
        discriminator = out.get("discriminator")
        if isinstance(discriminator, dict) and isinstance(discriminator.get("mapping"), dict):
            out["discriminator"] = {**discriminator, "mapping": {
                tag: f"{target}_{vid}" if target.startswith(REF)
                and target[len(REF):] in narrowed else target
                for tag, target in discriminator["mapping"].items()}}
        return out
    if isinstance(node, list):
        return [_rename_refs(v, vid, narrowed) for v in node]
    return node


def _keep(props: dict[str, Any], names: list[str]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k in names}


def _narrow_sheet(props: dict[str, Any], facts: dict[str, Any], column: bool) -> None:
    """A scorecard's (or a column's) fields for one variant."""
    boxes = props.get("boxes")
    if boxes is not None:
        boxes["properties"] = _keep(boxes["properties"], facts["boxes"])
    if not facts["five_of_a_kind_bonus"] and "five_of_a_kind_bonuses" in props:
        props["five_of_a_kind_bonuses"] = _only(props["five_of_a_kind_bonuses"], 0,
                                                "no five-of-a-kind bonus in this variant")
    if column:
        return
    if not facts["saved_throws"] and "saved_throws" in props:
        props["saved_throws"] = _only(props["saved_throws"], 0,
                                      "this variant saves no throws")
    if not facts["columns"]:
        props.pop("columns", None)


def _only(prop: dict[str, Any], value: Any, why: str) -> dict[str, Any]:
    """A field a variant does not use: only its neutral value (which the service accepts)."""
    kind = "boolean" if isinstance(value, bool) else "integer"
    return {"type": kind, "enum": [value],
            "description": f"{prop.get('description', '')} ({why})".strip()}


def _override_rule(section: str, scorings: set[str]) -> dict[str, Any] | None:
    """What a box's override may combine (as `rules._override_box` checks it): a number box
    keeps its scoring and has no value; `value` goes with scoring 'fixed' (a box that is not
    fixed needs both together)."""
    if "fixed" not in scorings:
        return {"anyOf": [
            {"properties": {"scoring": {"enum": sorted(SCORING_NAMES - {"fixed"})}},
             "not": {"required": ["value"]}},
            {"required": ["scoring", "value"], "properties": {"scoring": {"const": "fixed"}}}]}
    if scorings == {"fixed"}:
        return {"anyOf": [{"not": {"required": ["value"]}},
                          {"not": {"required": ["scoring"]}},
                          {"properties": {"scoring": {"const": "fixed"}}}]}
    return None  # an option changes how it scores: the service decides


def _number_box_override(generic: dict[str, Any], scorings: set[str]) -> dict[str, Any]:
    """A number box's override: it scores its face's dice on every throw, so only whether
    it wins on the first throw may change (and its scoring restated)."""
    out = copy.deepcopy(generic)
    props = out["properties"]
    props.pop("value", None)
    props.pop("first_throw_value", None)
    props.pop("first_throw_bonus", None)
    props["scoring"] = {**props["scoring"], "enum": sorted(scorings)}
    out["description"] = ("Changes to a number box: it scores its face's dice on every throw "
                          "(no value, no first-throw bonus or value)")
    return out


def _option_is(name: str, value: Any) -> dict[str, Any]:
    """The request sets option `name` to `value` explicitly."""
    return {"required": ["options"], "properties": {"options": {
        "type": "object", "required": [name], "properties": {name: {"const": value}}}}}


def _boxes_absent(boxes: list[str], props: dict[str, Any], sheet_at_top: bool
                  ) -> dict[str, Any]:
    """No house rule, sheet entry or placement names one of `boxes`."""
    names = {"propertyNames": {"not": {"enum": boxes}}}
    then: dict[str, Any] = {"rules": {"properties": {
        "boxes": names, "remove_boxes": {"items": {"not": {"enum": boxes}}}}}}
    if "scorecard" in props:
        then["scorecard"] = {"properties": {"boxes": names}}
    if sheet_at_top:
        then["boxes"] = names
    if "box" in props:
        then["box"] = {"not": {"enum": boxes}}
    return {"properties": then}


def _box_switch_rules(vid: str, facts: dict[str, Any], props: dict[str, Any],
                      sheet_at_top: bool) -> list[dict[str, Any]]:
    """Boxes an option adds or removes (Doble Generala, Aleatória): named only with it."""
    default = {o.name: o.default for o in VARIANTS[vid].options}
    rules = []
    for name, value, added, removed in facts["box_switches"]:
        if added and value != default[name]:  # present only when the option says so
            rules.append({"if": {"not": _option_is(name, value)},
                          "then": _boxes_absent(added, props, sheet_at_top)})
        if removed and value != default[name]:
            rules.append({"if": _option_is(name, value),
                          "then": _boxes_absent(removed, props, sheet_at_top)})
    return rules


def _columns_rule(sheet_at_top: bool) -> dict[str, Any]:
    """With `options.columns: true` the scorecard is `{"columns": [...]}`; else `boxes`."""
    one_column = {"anyOf": [{"required": ["boxes"]}, {"required": ["five_of_a_kind_bonuses"]}]}
    columns_form: dict[str, Any] = {"not": one_column}
    plain_form: dict[str, Any] = {"not": {"required": ["columns"]}}
    if_columns = {"required": ["options"], "properties": {
        "options": {"required": ["columns"], "properties": {"columns": {"const": True}}}}}
    if sheet_at_top:
        return {"if": if_columns, "then": columns_form, "else": plain_form}
    return {"if": if_columns,
            "then": {"properties": {"scorecard": columns_form}},
            "else": {"properties": {"scorecard": plain_form}}}


def _players_columns_rule() -> dict[str, Any]:
    """Every player's scorecard has the form `options.columns` gives it (`_columns_rule`)."""
    rule = _columns_rule(sheet_at_top=False)

    def players(sheet_rule: dict[str, Any]) -> dict[str, Any]:
        return {"properties": {"players": {"items": sheet_rule}}}

    return {"if": rule["if"], "then": players(rule["then"]), "else": players(rule["else"])}


def _narrow(name: str, schema: dict[str, Any], vid: str, narrowed: set[str],
            schemas: dict[str, Any]) -> dict[str, Any]:
    facts = variant_facts(vid)
    schema = _rename_refs(copy.deepcopy(schema), vid, narrowed)
    for node in _box_enums(schema):  # a field that names a box names one of the variant's
        node["enum"] = [*facts["boxes"], *([None] if None in node["enum"] else [])]
    props = schema.get("properties", {})
    if name == "Options":
        schema["properties"] = _keep(props, facts["options"])
    elif name == "BoxOverrides":
        generic_box = schemas["BoxOverride"]
        schema["properties"] = _keep(props, facts["boxes"])
        for box_id, prop in schema["properties"].items():
            section, scorings = facts["box_kinds"][box_id]
            if section == "upper":
                schema["properties"][box_id] = _number_box_override(generic_box, scorings)
                continue
            rule = _override_rule(section, scorings)
            if rule is not None:
                why = ("`value` only with scoring 'fixed'" if "fixed" in scorings
                       else "scoring 'fixed' and `value` go together")
                schema["properties"][box_id] = {
                    "allOf": [prop, rule], "description": f"Changes to {box_id}: {why}"}
    elif name == "Rules":
        props["remove_boxes"]["items"]["enum"] = facts["boxes"]
        props["remove_boxes"]["maxItems"] = len(facts["boxes"]) - 1  # one box stays
        props["remove_boxes"]["uniqueItems"] = True
        if not facts["five_of_a_kind_bonus"]:  # nothing to change; null (none) is allowed
            props["five_of_a_kind_bonus"] = {
                "type": "null", "description": f"{vid} has no five-of-a-kind bonus"}
        if not facts["upper_bonus"]:  # a new upper bonus needs both fields
            props["upper_bonus"] = {"anyOf": [
                {"$ref": f"{REF}UpperBonus_{vid}", "required": ["threshold", "amount"]},
                {"type": "null"}], "description": props["upper_bonus"].get("description", "")}
    elif name == "UpperBonus":  # a threshold the upper section can reach (all its boxes)
        props["threshold"]["maximum"] = facts["upper_max"]
        props["threshold"]["description"] = (
            f"{props['threshold'].get('description', '')}: at most {facts['upper_max']}, the "
            f"upper section's maximum (lower with boxes removed)").strip()
    elif name in ("Scorecard", "Column"):
        _narrow_sheet(props, facts, column=name.endswith("Column"))
    else:  # a request
        if "dice" in props and props["dice"].get("type") == "array" and "minItems" in props[
                "dice"]:
            props["dice"]["minItems"] = props["dice"]["maxItems"] = facts["dice"]
            props["dice"]["description"] = f"The dice, faces 1 to 6, in any order: {facts['dice']}"
        if ("throw" in props and "maximum" in props["throw"] and not facts["saved_throws"]
                and name in THROW_CHECKED):
            props["throw"]["maximum"] = facts["throws"]
        if not facts["em_baixo"] and "em_baixo" in props and name not in RECORDED:
            props["em_baixo"] = _only(props["em_baixo"], False, "Bozó only")
        if name in SHEET_AT_TOP:
            _narrow_sheet(props, facts, column=False)
        if "rules" in props and "options" in props:
            switches = _box_switch_rules(vid, facts, props, name in SHEET_AT_TOP)
            if switches:
                schema.setdefault("allOf", []).extend(switches)
        if facts["columns"] and name.endswith("Request") and (
                name in SHEET_AT_TOP or "scorecard" in props):
            schema.update(_columns_rule(name in SHEET_AT_TOP))
        if facts["columns"] and "options" in props and "players" in props:
            schema.setdefault("allOf", []).append(_players_columns_rule())
    return schema


def specialise(spec: dict[str, Any]) -> dict[str, Any]:
    """The document with one path per variant for every `{variant}` path."""
    spec = copy.deepcopy(spec)
    schemas = spec["components"]["schemas"]
    narrowed = narrowed_names(schemas)
    paths: dict[str, Any] = {}
    for path, item in spec["paths"].items():
        paths[path] = item  # the templated path, for clients that serve every variant
        if "{variant}" not in path:
            continue
        for vid in VARIANT_IDS:
            new = _rename_refs(copy.deepcopy(item), vid, narrowed)
            params = [p for p in new.pop("parameters", []) if p.get("name") != "variant"]
            if params:
                new["parameters"] = params
            for method in METHODS:
                op = new.get(method)
                if op is None:
                    continue
                op["operationId"] = f"{op['operationId']}_{vid}"
                op["responses"].pop("404", None)  # the variant exists
                op["summary"] = f"{op.get('summary', '')} ({VARIANTS[vid].name})".strip()
            paths[path.replace("{variant}", vid)] = new
    spec["paths"] = paths
    for name in sorted(narrowed):
        generic = schemas[name]
        for vid in VARIANT_IDS:
            schemas[f"{name}_{vid}"] = _narrow(name, generic, vid, narrowed, schemas)
    # a variant without columns or options refers to no Column_<id> or Options_<id>
    copies = {f"{name}_{vid}" for name in narrowed for vid in VARIANT_IDS}
    while True:
        used = _refs(spec["paths"]) | set().union(
            *(_refs(v) for k, v in schemas.items()))
        unused = (copies & set(schemas)) - used
        if not unused:
            return spec
        for name in unused:
            del schemas[name]


def templated_only(spec: dict[str, Any]) -> dict[str, Any]:
    """The document with the templated paths only (`/v1/variants/{variant}/...` and the
    paths that name no variant), and the components they use: what the docs page shows, one
    operation per endpoint with the variant as a parameter (Swagger UI does not finish
    drawing the 196 operations of the whole document)."""
    variant_paths = {path.replace("{variant}", vid) for path in spec["paths"]
                     if "{variant}" in path for vid in VARIANT_IDS}
    return used_only({**spec, "paths": {p: item for p, item in spec["paths"].items()
                                        if p not in variant_paths}})


def used_only(spec: dict[str, Any]) -> dict[str, Any]:
    """The document without the schemas no path or response refers to, however deep (such
    as the pagination model flask-smorest registers for paginated views, which this
    service has none of)."""
    schemas = spec["components"]["schemas"]
    used, todo = set(), _refs(spec["paths"]) | _refs(spec["components"].get("responses", {}))
    while todo:
        name = todo.pop()
        if name in used or name not in schemas:
            continue
        used.add(name)
        todo |= _refs(schemas[name])
    return {**spec, "components": {**spec["components"],
                                   "schemas": {n: s for n, s in schemas.items()
                                               if n in used}}}
