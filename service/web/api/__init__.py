"""The HTTP layer: one blueprint per resource, schemas that carry every constraint."""

from __future__ import annotations

import json

from flask import Flask, Response, current_app
from flask_smorest import Api

from ... import __version__
from ..busy import TableBuildingSchema
from ..openapi import VariantConverter, add_tenancy, fill_batch_limits, variant_converter_doc
from ..problems import PROBLEM_MEDIA_TYPE, ProblemSchema, register_error_handlers
from ..schemas import analysis as analysis_schemas
from ..schemas import common
from ..schemas import games as game_schemas
from ..schemas import hands as hand_schemas
from ..schemas import moves as move_schemas
from ..schemas import scorecards as scorecard_schemas
from ..schemas import variants as variant_schemas
from ..variant_spec import specialise, templated_only
from . import analysis, games, hands, moves, positions, scorecards, variants

BLUEPRINTS = (variants.blp, hands.blp, scorecards.blp, moves.blp, games.blp, positions.blp,
              analysis.blp)

# Schemas referenced by name from hand-written request/response docs.
COMPONENTS = {
    "Problem": ProblemSchema,
    "TableBuilding": TableBuildingSchema,
    "HandValidateRequest": hand_schemas.HandValidateRequestSchema,
    "HandValidation": hand_schemas.HandValidationSchema,
    "HandScoreRequest": hand_schemas.HandScoreRequestSchema,
    "HandScore": hand_schemas.HandScoreSchema,
    "ScorecardScoreRequest": scorecard_schemas.ScorecardScoreRequestSchema,
    "ScorecardTotals": scorecard_schemas.ScorecardTotalsSchema,
    "EffectiveRulesRequest": variant_schemas.EffectiveRulesRequestSchema,
    "EffectiveRules": variant_schemas.EffectiveRulesSchema,
    "VariantDefinition": variant_schemas.VariantDefinitionSchema,
    "VariantList": variant_schemas.VariantListSchema,
    "MoveSuggestRequest": move_schemas.MoveSuggestRequestSchema,
    "MoveSuggestion": move_schemas.MoveSuggestionSchema,
    "KeepMove": move_schemas.KeepMoveSchema,
    "ScoreMove": move_schemas.ScoreMoveSchema,
    "BotMoveRequest": move_schemas.BotMoveRequestSchema,
    "BotMove": move_schemas.BotMoveSchema,
    "TurnRequest": game_schemas.TurnRequestSchema,
    "TurnResult": game_schemas.TurnResultSchema,
    "Game": game_schemas.GameSchema,
    "GameValidation": game_schemas.GameValidationSchema,
    # analysis: service/web/schemas/analysis.py
    "PositionValueRequest": analysis_schemas.PositionValueRequestSchema,
    "PositionValue": analysis_schemas.PositionValueSchema,
    "GameAnalysis": analysis_schemas.GameAnalysisSchema,
    "WinProbabilityRequest": analysis_schemas.WinProbabilityRequestSchema,
    "WinProbability": analysis_schemas.WinProbabilitySchema,
}

API_CONFIG = {
    "API_TITLE": "Yahtzee family scoring service",
    "API_VERSION": __version__,
    "OPENAPI_VERSION": "3.1.0",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "API_SPEC_OPTIONS": {
        "info": {"description": (
            "Validates dice hands, lists the boxes a hand can fill with their scores, scores "
            "whole scorecards, plays turns and validates whole games, for YAHTZEE, Kniffel, "
            "Yam's, Yatzy, Maxi Yatzy, Yacht, General, Generala and Bozó, with options and "
            "house rules. Errors are RFC 9457 application/problem+json.\n\n"
            "**API keys.** A server run with AUTH=keys answers `/v1/` requests only with a "
            "tenant's key: `Authorization: Bearer yz_<id>_<secret>` (or `X-API-Key: ...`); "
            "on this page, *Authorize* sets it for every call. Without one: 401; from a "
            "browser origin the tenant does not allow: 403. **Quotas.** Each tenant has a "
            "quota per operation class (scoring, advice, analysis, table builds); "
            "`RateLimit-Policy` states it, and over it the answer is 429 with `Retry-After` "
            "and `RateLimit`.")},
    },
}


class ProblemApi(Api):
    """flask-smorest's Api with RFC 9457 problem documents as the error format."""

    ERROR_SCHEMA = ProblemSchema
    _document: dict | None = None
    _docs_document: dict | None = None

    def _register_error_handlers(self) -> None:
        """Errors are handled by `problems.register_error_handlers`, not smorest's JSON."""

    def document(self) -> dict:
        """The OpenAPI document as served and committed: one path per variant
        (`variant_spec.specialise`), the batch limits and whether keys are required as the
        server's settings say, built once."""
        if self._document is None:
            spec = self.spec.to_dict()
            fill_batch_limits(spec, self._app.config)
            add_tenancy(spec, self._app.config["AUTH"] == "keys")
            self._document = specialise(spec)
        return self._document

    def docs_document(self) -> dict:
        """What the docs page shows: `document()`'s templated operations and the components
        they use (`variant_spec.templated_only`), built once."""
        if self._docs_document is None:
            self._docs_document = templated_only(self.document())
        return self._docs_document

    def _openapi_json(self) -> Response:
        """Serve `document()` (flask-smorest would serve the generic paths)."""
        return current_app.response_class(json.dumps(self.document(), indent=2),
                                          mimetype="application/json")

    def _register_responses(self) -> None:
        """Document the default error response as problem+json."""
        self.spec.components.response("DEFAULT_ERROR", {
            "description": "Error: RFC 9457 problem details",
            "content": {PROBLEM_MEDIA_TYPE: {"schema": "Problem"}}}, lazy=True)


def register_api(app: Flask) -> Api:
    """Create the smorest Api on the app and register every resource."""
    for key, value in API_CONFIG.items():
        app.config.setdefault(key, value)
    app.url_map.converters["variant"] = VariantConverter
    api = ProblemApi(app)
    api.register_converter(VariantConverter, variant_converter_doc)
    api.ma_plugin.converter.add_attribute_function(common.openapi_doc_attribute)
    registered = api.spec.components.schemas
    for name, schema in COMPONENTS.items():
        if name not in registered:  # a nested schema may have registered it already
            api.spec.components.schema(name, schema=schema)
    for blp in BLUEPRINTS:
        api.register_blueprint(blp)
    # flask-smorest registers a pagination model for paginated views; none is paginated here
    registered.pop("PaginationMetadata", None)
    register_error_handlers(app)
    return api
