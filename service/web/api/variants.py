"""/v1/variants: the rule definitions, and the effective rules of a table's house rules."""

from __future__ import annotations

from functools import cache
from typing import Any

from flask.views import MethodView

from ...domain import rules
from ...domain.rules import VariantDefinition, VariantList, effective_rules, get_variant
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
def _definition(variant: str) -> VariantDefinition:
    """The definition of a variant (its default options), made once."""
    return VariantDefinition.of(effective_rules(variant))


@cache
def _every_definition() -> VariantList:
    """Every variant's definition, made once."""
    return VariantList(tuple(_definition(v) for v in VARIANT_IDS))


@blp.route("")
class Variants(MethodView):
    """Every variant."""

    @blp.etag
    @blp.response(200, VariantListSchema, description="Every variant's rules")
    @blp.doc(operationId="listVariants")
    def get(self) -> tuple[VariantList, dict[str, str]]:
        """List every variant with its full rule definition."""
        return _every_definition(), CACHE


@blp.route("/<variant:variant>")
class VariantResource(MethodView):
    """One variant."""

    @blp.etag
    @blp.response(200, VariantDefinitionSchema, description="The variant's rules")
    @blp.doc(operationId="getVariant", responses={"404": ERRORS_DOC["404"]})
    def get(self, variant: str) -> tuple[VariantDefinition, dict[str, str]]:
        """The rules of one variant: boxes in sheet order, bonuses, options and defaults."""
        get_variant(variant)
        return _definition(variant), CACHE


@blp.route("/<variant:variant>/rules")
class EffectiveRules(MethodView):
    """A table's effective rules."""

    @blp.arguments(EffectiveRulesRequestSchema, description="Options and house-rule overrides")
    @blp.response(200, EffectiveRulesSchema,
                  description="The definition after options and overrides")
    @blp.doc(operationId="effectiveRules", responses=ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> rules.EffectiveRules:
        """The effective definition of a variant under options and house-rule overrides.

        Lets a frontend show its table's sheet; `fingerprint` identifies the rules.
        """
        return rules.EffectiveRules.of(rules_for(variant, item))
