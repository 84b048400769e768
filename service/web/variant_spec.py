"""The OpenAPI document per variant: one path per variant and resource, generated from the
variant data, so that a request valid for the schema names only that variant's options and
boxes, its number of dice, its throws, and its own scorecard fields.

flask-smorest documents `/v1/variants/{variant}/...` once, with request schemas that accept
every variant's options and box ids. `specialise` turns each such path into one path per
variant (`/v1/variants/yahtzee/hands/score`, operationId `scoreHand_yahtzee`) whose request
schemas are copies of the generic ones narrowed to that variant (`HandScoreRequest_yahtzee`,
`Options_yahtzee`, `Scorecard_yahtzee`, ...). What a schema cannot say (a value no hand can
put in a box, a house rule that makes no sense, a sheet no game reaches) is still a 422.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from ..domain.rules import effective_rules
from ..domain.variants import VARIANT_IDS, VARIANTS

REF = "#/components/schemas/"
METHODS = ("get", "put", "post", "delete", "patch")
#: Components that depend on the variant; every component that refers to one of them, however
#: deep, is narrowed per variant too (`narrowed_names`)
VARIANT_COMPONENTS = ("Options", "Rules", "BoxOverrides", "Scorecard", "Column")
#: Requests whose `throw` the service checks against the variant's throws (hands/validate
#: reports a throw too many; a position's value takes any throw the sheet allows)
THROW_CHECKED = ("HandScoreRequest", "MoveSuggestRequest", "TurnRequest")
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


def narrowed_names(schemas: dict[str, Any]) -> set[str]:
    """The variant's own components and every component that refers to one of them."""
    names = {n for n in VARIANT_COMPONENTS if n in schemas}
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
    for spec in base.options:
        for value in spec.choices:
            boxes.update(dict.fromkeys(effective_rules(vid, {spec.name: value}).variant.box_ids))
    return {
        "options": [o.name for o in base.options],
        "boxes": list(boxes),
        "dice": base.dice,
        "throws": base.throws,
        "five_of_a_kind_bonus": base.five_of_a_kind_bonus is not None,
        "upper_bonus": base.upper_bonus is not None,
        "saved_throws": base.saved_throws,
        "em_baixo": base.em_baixo,
        "columns": base.option("columns") is not None,
    }


def _rename_refs(node: Any, vid: str, narrowed: set[str]) -> Any:
    """Point every $ref to a narrowed component at that component's copy for `vid`."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF) and ref[len(REF):] in narrowed:
            return {**node, "$ref": f"{ref}_{vid}"}
        return {k: _rename_refs(v, vid, narrowed) for k, v in node.items()}
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


def _columns_rule(facts: dict[str, Any], sheet_at_top: bool) -> dict[str, Any]:
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


def _narrow(name: str, schema: dict[str, Any], vid: str, narrowed: set[str]
            ) -> dict[str, Any]:
    facts = variant_facts(vid)
    schema = _rename_refs(copy.deepcopy(schema), vid, narrowed)
    props = schema.get("properties", {})
    if name == "Options":
        schema["properties"] = _keep(props, facts["options"])
    elif name == "BoxOverrides":
        schema["properties"] = _keep(props, facts["boxes"])
    elif name == "Rules":
        props["remove_boxes"]["items"]["enum"] = facts["boxes"]
        props["remove_boxes"]["maxItems"] = len(facts["boxes"])
        if not facts["five_of_a_kind_bonus"]:  # nothing to change; null (none) is allowed
            props["five_of_a_kind_bonus"] = {
                "type": "null", "description": f"{vid} has no five-of-a-kind bonus"}
        if not facts["upper_bonus"]:  # a new upper bonus needs both fields
            props["upper_bonus"] = {"anyOf": [
                {"$ref": f"{REF}UpperBonus", "required": ["threshold", "amount"]},
                {"type": "null"}], "description": props["upper_bonus"].get("description", "")}
    elif name in ("Scorecard", "Column"):
        _narrow_sheet(props, facts, column=name == "Column")
    else:  # a request
        if "dice" in props and props["dice"].get("type") == "array" and "minItems" in props[
                "dice"]:
            props["dice"]["minItems"] = props["dice"]["maxItems"] = facts["dice"]
            props["dice"]["description"] = f"The dice, faces 1 to 6, in any order: {facts['dice']}"
        if ("throw" in props and "maximum" in props["throw"] and not facts["saved_throws"]
                and name in THROW_CHECKED):
            props["throw"]["maximum"] = facts["throws"]
        if not facts["em_baixo"] and "em_baixo" in props:
            props["em_baixo"] = _only(props["em_baixo"], False, "Bozó only")
        if name in SHEET_AT_TOP:
            _narrow_sheet(props, facts, column=False)
        if facts["columns"] and name.endswith("Request") and (
                name in SHEET_AT_TOP or "scorecard" in props):
            schema.update(_columns_rule(facts, name in SHEET_AT_TOP))
    return schema


def specialise(spec: dict[str, Any]) -> dict[str, Any]:
    """The document with one path per variant for every `{variant}` path."""
    spec = copy.deepcopy(spec)
    schemas = spec["components"]["schemas"]
    narrowed = narrowed_names(schemas)
    paths: dict[str, Any] = {}
    for path, item in spec["paths"].items():
        if "{variant}" not in path:
            paths[path] = item
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
        generic = schemas.pop(name)
        for vid in VARIANT_IDS:
            schemas[f"{name}_{vid}"] = _narrow(name, generic, vid, narrowed)
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
