"""What the OpenAPI document says about every resource: the {variant} path parameter, request
bodies (one object, or a batch), responses and problem documents, and the blueprint factory."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint
from werkzeug.routing import BaseConverter

from ..config import Settings
from ..domain.variants import VARIANT_IDS
from .body import JSON
from .problems import PROBLEM_MEDIA_TYPE


class VariantConverter(BaseConverter):
    """Path segment naming a variant; unknown ids reach the view, which answers 404."""

    regex = r"[^/]+"


def variant_converter_doc(_converter: BaseConverter) -> dict[str, Any]:
    """OpenAPI schema of the {variant} path parameter."""
    return {"type": "string", "enum": list(VARIANT_IDS)}


def body_doc(schema_name: str, batch: bool, description: str,
             max_items: int = Settings.max_batch_items) -> dict[str, Any]:
    """OpenAPI requestBody for one object (or, when `batch`, one object or a list of at most
    `max_items`)."""
    ref = {"$ref": f"#/components/schemas/{schema_name}"}
    schema: dict[str, Any] = ref
    if batch:
        schema = {"oneOf": [ref, {"type": "array", "items": ref, "minItems": 1,
                                  "maxItems": max_items}]}
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
