"""What every resource does the same way: read the body, name the table of rules, answer JSON.

Request bodies are read here rather than by `@blp.arguments` because the scoring endpoints
take either one item or a list of items (the batch form), and a malformed body of either
form must come back as one 422 whose pointers say which item and which field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma
import orjson
from flask import Response, current_app, request
from flask_smorest import Blueprint
from werkzeug.routing import BaseConverter

from ..config import Settings
from ..errors import InvalidInput, Problem
from ..rules import RuleSet, canonical, effective_rules, get_variant
from ..scoring import Sheet, parse_scorecard
from ..variants import VARIANT_IDS
from .problems import PROBLEM_MEDIA_TYPE, RequestProblem, flatten_messages

JSON = "application/json"


class VariantConverter(BaseConverter):
    """Path segment naming a variant; unknown ids reach the view, which answers 404."""

    regex = r"[^/]+"


def variant_converter_doc(_converter: BaseConverter) -> dict[str, Any]:
    """OpenAPI schema of the {variant} path parameter."""
    return {"type": "string", "enum": list(VARIANT_IDS)}


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None
                  ) -> Response:
    """Serialise a response body (plain dicts built by the views; orjson: ~10x json's speed)."""
    return Response(orjson.dumps(data), status=status, mimetype=JSON, headers=headers)


def read_json() -> Any:
    """The parsed JSON body, or a 422 saying it is not JSON."""
    raw = request.get_data(cache=True)  # raises 413 beyond MAX_CONTENT_LENGTH
    if not raw:
        raise RequestProblem(422, "Invalid request", "The request body is empty; send JSON",
                             [Problem("", "a JSON body is required")])
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RequestProblem(422, "Invalid request", f"The request body is not JSON: {exc}",
                             [Problem("", "not valid JSON")]) from None


def load_items(schema: ma.Schema, batch: bool) -> tuple[list[dict[str, Any]], bool]:
    """Validate the body against the schema: one object, or (when `batch`) a list of them.

    Returns the loaded items and whether the body was a list.
    """
    data = read_json()
    is_list = isinstance(data, list)
    if is_list and not batch:
        raise RequestProblem(422, "Invalid request", "The request body must be a JSON object",
                             [Problem("", "must be an object")])
    if is_list:
        limit = current_app.config["MAX_BATCH_ITEMS"]
        if not data:
            raise RequestProblem(422, "Invalid request", "A batch needs at least one item",
                                 [Problem("", "empty list")])
        if len(data) > limit:
            raise RequestProblem(422, "Invalid request",
                                 f"A batch holds at most {limit} items; got {len(data)}",
                                 [Problem("", f"more than {limit} items")])
    elif not isinstance(data, dict):
        raise RequestProblem(422, "Invalid request", "The request body must be a JSON object"
                             + (" or a list of objects" if batch else ""),
                             [Problem("", "must be an object")])
    fast_load = getattr(schema, "fast_load", None)
    if fast_load is not None:
        fast = [fast_load(d) for d in data] if is_list else [fast_load(data)]
        if all(item is not None for item in fast):
            return fast, is_list
    try:
        items = schema.load(data, many=is_list)
    except ma.ValidationError as err:
        problems = flatten_messages(err.messages)
        first = problems[0]
        raise RequestProblem(422, "Invalid request",
                             f"{first.pointer or 'the request body'}: {first.message}",
                             problems) from None
    return (items if is_list else [items]), is_list


def answer_one_or_many(variant: str, schema: ma.Schema,
                       answer: Callable[[str, dict[str, Any]], dict[str, Any]]) -> Response:
    """The batch-capable endpoints: check the variant, read one item or a list, answer each.

    A domain error in a batch names its item (`/3/dice/0`).
    """
    get_variant(variant)
    items, is_list = load_items(schema, batch=True)
    if not is_list:
        return json_response(answer(variant, items[0]))
    tables = {(canonical(it.get("options")), canonical(it.get("rules"))) for it in items
              if it.get("options") or it.get("rules")}
    limit = current_app.config["MAX_BATCH_RULE_SETS"]
    if len(tables) > limit:
        raise RequestProblem(422, "Invalid request",
                             f"A batch may use at most {limit} different tables of rules "
                             f"(options and house rules); this one uses {len(tables)}",
                             [Problem("", f"more than {limit} different tables of rules")])
    return json_response([prefixed(f"/{i}", lambda it=it: answer(variant, it))
                          for i, it in enumerate(items)])


def prefixed(prefix: str, fn: Callable[[], Any]) -> Any:
    """Run `fn`; domain errors get their pointers prefixed (the item's place in a batch)."""
    if not prefix:
        return fn()
    try:
        return fn()
    except InvalidInput as err:
        raise InvalidInput([Problem(prefix + p.pointer, p.message) for p in err.problems]
                           ) from None


def rules_for(variant: str, item: dict[str, Any]) -> RuleSet:
    """The effective rules of the item's variant, options and house rules."""
    return effective_rules(variant, item.get("options"), item.get("rules"))


def sheet_for(rs: RuleSet, item: dict[str, Any], key: str | None = "scorecard") -> Sheet:
    """The item's scorecard (the whole item when `key` is None) as a Sheet."""
    if key is None:
        fields = ("boxes", "bonus_five_of_a_kind", "saved_throws", "won", "columns")
        return parse_scorecard(rs, {k: item[k] for k in fields if k in item}, base="")
    return parse_scorecard(rs, item.get(key))


def body_doc(schema_name: str, batch: bool, description: str) -> dict[str, Any]:
    """OpenAPI requestBody for one object (or, when `batch`, one object or a list)."""
    ref = {"$ref": f"#/components/schemas/{schema_name}"}
    schema: dict[str, Any] = ref
    if batch:
        schema = {"oneOf": [ref, {"type": "array", "items": ref, "minItems": 1,
                                  "maxItems": Settings.max_batch_items}]}
    return {"required": True, "description": description,
            "content": {JSON: {"schema": schema}}}


def response_doc(schema_name: str, batch: bool, description: str) -> dict[str, Any]:
    """OpenAPI 200 response (a list of results for a batch request)."""
    ref = {"$ref": f"#/components/schemas/{schema_name}"}
    schema: dict[str, Any] = ref
    if batch:
        schema = {"oneOf": [ref, {"type": "array", "items": ref}]}
    return {"description": description, "content": {JSON: {"schema": schema}}}


def problem_doc(description: str) -> dict[str, Any]:
    """OpenAPI error response in problem+json."""
    return {"description": description, "content": {
        PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


ERRORS_DOC = {
    "404": problem_doc("Unknown variant"),
    "413": problem_doc("Request body too large"),
    "422": problem_doc("Invalid request: `errors` names each field by JSON pointer"),
}

def new_blueprint(name: str, description: str) -> Blueprint:
    """A resource blueprint under /v1/variants."""
    return Blueprint(name, __name__, url_prefix="/v1/variants", description=description)
