"""What the OpenAPI document says about every resource: the {variant} path parameter, request
bodies (one object, or a list for a batch operation), responses and problem documents, and
the blueprint factory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask_smorest import Blueprint
from werkzeug.routing import BaseConverter

from ..domain.variants import VARIANT_IDS
from .body import JSON
from .problems import PROBLEM_MEDIA_TYPE


class VariantConverter(BaseConverter):
    """Path segment naming a variant; unknown ids reach the view, which answers 404."""

    regex = r"[^/]+"


def variant_converter_doc(_converter: BaseConverter) -> dict[str, Any]:
    """OpenAPI schema of the {variant} path parameter."""
    return {"type": "string", "enum": list(VARIANT_IDS)}


#: The request-body extension that names the app setting bounding a batch's length;
#: `ProblemApi.document` turns it into the `maxItems` the server enforces.
BATCH_LIMIT = "x-batch-limit"


def body_doc(schema_name: str, description: str) -> dict[str, Any]:
    """OpenAPI requestBody: one object of the named schema."""
    return {"required": True, "description": description,
            "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}}}


def batch_body_doc(schema_name: str, description: str, limit_key: str) -> dict[str, Any]:
    """OpenAPI requestBody of a batch operation: a list of objects of the named schema, at
    most `app.config[limit_key]` of them (filled in by `ProblemApi.document`)."""
    return {"required": True, "description": description, "content": {JSON: {"schema": {
        "type": "array", "items": {"$ref": f"#/components/schemas/{schema_name}"},
        "minItems": 1, BATCH_LIMIT: limit_key}}}}


def fill_batch_limits(spec: dict[str, Any], config: Mapping[str, Any]) -> None:
    """Give every batch request body the `maxItems` the server enforces (`config`, the app's
    settings), in place of the `BATCH_LIMIT` extension that names the setting."""
    for item in spec.get("paths", {}).values():
        for op in item.values():
            body = op.get("requestBody") if isinstance(op, dict) else None
            schema = body and body.get("content", {}).get(JSON, {}).get("schema", {})
            if schema and BATCH_LIMIT in schema:
                schema["maxItems"] = config[schema.pop(BATCH_LIMIT)]


def problem_doc(description: str) -> dict[str, Any]:
    """OpenAPI error response in problem+json."""
    return {"description": description, "content": {
        PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}


ERRORS_DOC = {
    "404": problem_doc("Unknown variant"),
    "413": problem_doc("Request body too large"),
    "415": problem_doc("The body is sent as another media type than JSON "
                       "(`/problems/unsupported-media-type`): send `Content-Type: "
                       "application/json`"),
    "409": problem_doc("The body matches the schema but breaks a rule of the variant that "
                       "no schema can state (`/problems/inconsistent-request`: a sheet no game "
                       "reaches, house rules that make no sense together, fields that "
                       "contradict each other); `errors` names each field by JSON pointer"),
    "422": problem_doc("The body breaks the schema (`/problems/invalid-request`); `errors` "
                       "names each field by JSON pointer"),
}

def new_blueprint(name: str, description: str) -> Blueprint:
    """A resource blueprint under /v1/variants."""
    return Blueprint(name, __name__, url_prefix="/v1/variants", description=description)
