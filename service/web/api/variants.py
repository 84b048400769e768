"""/v1/variants: the rule definitions, and the effective rules of a table's house rules."""

from __future__ import annotations

from functools import cache
from typing import Any

from flask.views import MethodView

from ...domain.rules import definition_document, effective_rules, get_variant
from ...domain.variants import VARIANT_IDS
from ..body import rules_for
from ..openapi import ERRORS_DOC, new_blueprint
from ..schemas.variants import (
    EffectiveRulesRequestSchema,
    EffectiveRulesSchema,
    VariantDefinitionSchema,
    VariantListSchema,
)

blp = new_blueprint("variants", "Rule definitions of every variant")

# Definitions are immutable for a release: let clients and proxies cache them (and ask
# again with If-None-Match: `@blp.etag` answers 304 when the ETag matches).
CACHE = {"Cache-Control": "public, max-age=86400"}


@cache
def _definitions(variant: str | None) -> dict[str, Any]:
    """The definition of a variant (every variant's with None), made once."""
    if variant is None:
        return {"variants": [definition_document(effective_rules(v)) for v in VARIANT_IDS]}
    return definition_document(effective_rules(variant))


def _effective_one(variant: str, item: dict[str, Any]) -> dict[str, Any]:
    """The effective rules and definition of one loaded request's options and house rules."""
    rs = rules_for(variant, item)
    return {"rules": rs.describe(), "definition": definition_document(rs)}


@blp.route("")
class Variants(MethodView):
    """Every variant."""

    @blp.etag
    @blp.response(200, VariantListSchema, description="Every variant's rules")
    @blp.doc(operationId="listVariants")
    def get(self) -> tuple[dict[str, Any], dict[str, str]]:
        """List every variant with its full rule definition."""
        return _definitions(None), CACHE


@blp.route("/<variant:variant>")
class VariantResource(MethodView):
    """One variant."""

    @blp.etag
    @blp.response(200, VariantDefinitionSchema, description="The variant's rules")
    @blp.doc(operationId="getVariant", responses={"404": ERRORS_DOC["404"]})
    def get(self, variant: str) -> tuple[dict[str, Any], dict[str, str]]:
        """The rules of one variant: boxes in sheet order, bonuses, options and defaults."""
        get_variant(variant)
        return _definitions(variant), CACHE


@blp.route("/<variant:variant>/rules")
class EffectiveRules(MethodView):
    """A table's effective rules."""

    @blp.arguments(EffectiveRulesRequestSchema, description="Options and house-rule overrides")
    @blp.response(200, EffectiveRulesSchema,
                  description="The definition after options and overrides")
    @blp.doc(operationId="effectiveRules", responses=ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> dict[str, Any]:
        """The effective definition of a variant under options and house-rule overrides.

        Lets a frontend show its table's sheet; `fingerprint` identifies the rules.
        """
        return _effective_one(variant, item)
