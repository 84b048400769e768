"""/v1/variants: the rule definitions, and the effective rules of a table's house rules."""

from __future__ import annotations

import hashlib
from functools import cache
from typing import Any

from flask import Response, request
from flask.views import MethodView

from ...domain.rules import definition_document, effective_rules, get_variant
from ...domain.variants import VARIANT_IDS
from ..batch import answer_one
from ..body import rules_for
from ..openapi import ERRORS_DOC, body_doc, new_blueprint
from ..schemas.variants import (
    EffectiveRulesRequestSchema,
    EffectiveRulesSchema,
    VariantDefinitionSchema,
    VariantListSchema,
)

blp = new_blueprint("variants", "Rule definitions of every variant")

# Definitions are immutable for a release: let clients and proxies cache them.
CACHE_CONTROL = "public, max-age=86400"


@cache
def _definition_body(variant: str | None) -> tuple[str, str]:
    import json

    if variant is None:
        data = {"variants": [definition_document(effective_rules(v)) for v in VARIANT_IDS]}
    else:
        data = definition_document(effective_rules(variant))
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return body, '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


def _cached(variant: str | None) -> Response:
    body, etag = _definition_body(variant)
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if etag in request.if_none_match or request.if_none_match.contains_weak(etag.strip('"')):
        return Response(status=304, headers=headers)
    return Response(body, mimetype="application/json", headers=headers)


NOT_MODIFIED = {"304": {"description": "Not modified (If-None-Match matched the ETag)"}}


def _effective_one(variant: str, item: dict[str, Any]) -> dict[str, Any]:
    """The effective rules and definition of one loaded request's options and house rules."""
    rs = rules_for(variant, item)
    return {"rules": rs.describe(), "definition": definition_document(rs)}


@blp.route("")
class Variants(MethodView):
    """Every variant."""

    @blp.response(200, VariantListSchema, description="Every variant's rules")
    @blp.doc(operationId="listVariants",
             responses={**NOT_MODIFIED})
    def get(self) -> Response:
        """List every variant with its full rule definition."""
        return _cached(None)


@blp.route("/<variant:variant>")
class VariantResource(MethodView):
    """One variant."""

    @blp.response(200, VariantDefinitionSchema, description="The variant's rules")
    @blp.doc(operationId="getVariant",
             responses={"404": ERRORS_DOC["404"], **NOT_MODIFIED})
    def get(self, variant: str) -> Response:
        """The rules of one variant: boxes in sheet order, bonuses, options and defaults."""
        get_variant(variant)
        return _cached(variant)


@blp.route("/<variant:variant>/rules")
class EffectiveRules(MethodView):
    """A table's effective rules."""

    @blp.response(200, EffectiveRulesSchema,
                  description="The definition after options and overrides")
    @blp.doc(operationId="effectiveRules",
             requestBody=body_doc("EffectiveRulesRequest",
                                  "Options and house-rule overrides"),
             responses=ERRORS_DOC)
    def post(self, variant: str) -> Response:
        """The effective definition of a variant under options and house-rule overrides.

        Lets a frontend show its table's sheet; `fingerprint` identifies the rules.
        """
        return answer_one(variant, EffectiveRulesRequestSchema(), _effective_one)
