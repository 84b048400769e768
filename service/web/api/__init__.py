"""The HTTP layer: one blueprint per resource, schemas that carry every constraint."""

from __future__ import annotations

from flask import Flask, Response, request
from flask_smorest import Api
from werkzeug.exceptions import HTTPException

from ... import __version__
from ..busy import TableBuildingSchema
from ..openapi import (
    ContractPlugin,
    VariantConverter,
    add_variant_paths,
    security_requirements,
    variant_converter_doc,
)
from ..problems import ProblemSchema, http_problem, register_error_handlers
from ..schemas import analysis as analysis_schemas
from ..schemas import common
from ..schemas import games as game_schemas
from ..schemas import hands as hand_schemas
from ..schemas import moves as move_schemas
from ..schemas import scorecards as scorecard_schemas
from ..schemas import variants as variant_schemas
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
    # no documents served by flask-smorest: `pages` serves /openapi.json (made once) and the
    # docs page's /docs/openapi.json
    "OPENAPI_URL_PREFIX": None,
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
            "quota per operation class (scoring, advice, analysis, table builds): a request "
            "is charged one unit, a batch one unit per item (refused whole when they do not "
            "all fit). Every answer states the quota in `RateLimit-Policy` and what is left "
            "in `RateLimit`; over it the answer is 429 with `Retry-After`.")},
    },
}


class ProblemApi(Api):
    """flask-smorest's Api with RFC 9457 problem documents as the error format, through its
    public hooks: `ERROR_SCHEMA`, no default error response (each operation documents its
    problems: `openapi.ERRORS_DOC`, `TENANCY_DOC`), and `handle_http_exception`."""

    ERROR_SCHEMA = ProblemSchema
    DEFAULT_ERROR_RESPONSE_NAME = None

    def handle_http_exception(self, error: HTTPException) -> Response:
        """werkzeug's HTTP errors as problem documents (`problems.http_problem`); a 304 of
        `@blp.etag` (its ETag matched If-None-Match) empty, naming that ETag."""
        if error.code == 304:
            response = Response(status=304)
            sent = request.if_none_match.as_set()
            if len(sent) == 1:  # the one tag the client sent is the one that matched
                response.set_etag(next(iter(sent)))
            return response
        return http_problem(error)


def register_api(app: Flask) -> Api:
    """Create the smorest Api on the app and register every resource; then the document's
    per-variant paths (`openapi.add_variant_paths`). The Api is `app.extensions["openapi"]`:
    its `spec` is the contract (`pages` serves it, `spec.py` prints it)."""
    keys_required = app.config["AUTH"] == "keys"
    for key, value in API_CONFIG.items():
        app.config.setdefault(key, value)
    options = app.config["API_SPEC_OPTIONS"]
    app.config["API_SPEC_OPTIONS"] = {**options,
                                      "security": security_requirements(keys_required)}
    app.url_map.converters["variant"] = VariantConverter
    contract = ContractPlugin(app.config)
    api = ProblemApi(app, spec_kwargs={"extra_plugins": [contract]})
    api.register_converter(VariantConverter, variant_converter_doc)
    api.ma_plugin.converter.add_attribute_function(common.openapi_doc_attribute)
    contract.register_components(api.spec)
    for name, schema in COMPONENTS.items():
        if name not in api.spec.components.schemas:  # a nested schema may have made it
            api.spec.components.schema(name, schema=schema)
    # the moves: each union of a keep and a placement, and its members (`MoveUnionField`)
    for members in common.MOVE_UNIONS.values():
        for component, schema in members.values():
            api.spec.components.schema(component, schema=schema)
    for name, union in common.union_components().items():
        api.spec.components.schema(name, component=union)
    for blp in BLUEPRINTS:
        api.register_blueprint(blp)
    add_variant_paths(api.spec)
    register_error_handlers(app)
    app.extensions["openapi"] = api
    return api
