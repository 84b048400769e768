"""What the OpenAPI document says about every resource: the {variant} path parameter, request
bodies (one object, or a list for a batch operation), responses and problem documents, and
the blueprint factory."""

from __future__ import annotations

import calendar
import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from apispec import APISpec, BasePlugin
from flask_smorest import Blueprint
from werkzeug.http import http_date
from werkzeug.routing import BaseConverter, Rule

from ..domain.variants import VARIANT_IDS
from .body import JSON
from .examples import media_examples
from .parser import ProblemParser
from .problems import PROBLEM_MEDIA_TYPE
from .quotas import REQUEST_CLASSES
from .variant_spec import specialise, used_only


class VariantConverter(BaseConverter):
    """Path segment naming a variant; unknown ids reach the view, which answers 404."""

    regex = r"[^/]+"


def variant_converter_doc(_converter: BaseConverter) -> dict[str, Any]:
    """OpenAPI schema of the {variant} path parameter."""
    return {"type": "string", "enum": list(VARIANT_IDS)}


#: The component of every operation's `default` answer (a problem document).
DEFAULT_ERROR = "DEFAULT_ERROR"
#: The request-body extension that names the app setting bounding a batch's length;
#: `ContractPlugin` turns it into the `maxItems` the server enforces.
BATCH_LIMIT = "x-batch-limit"


def body_doc(schema_name: str, description: str) -> dict[str, Any]:
    """OpenAPI requestBody: one object of the named schema."""
    return {"required": True, "description": description,
            "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}}}


def batch_body_doc(schema_name: str, description: str, limit_key: str) -> dict[str, Any]:
    """OpenAPI requestBody of a batch operation: a list of objects of the named schema, at
    most `app.config[limit_key]` of them (filled in by `ContractPlugin`)."""
    return {"required": True, "description": description, "content": {JSON: {"schema": {
        "type": "array", "items": {"$ref": f"#/components/schemas/{schema_name}"},
        "minItems": 1, BATCH_LIMIT: limit_key}}}}


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

#: How a request carries an API key (`service.web.auth`): either scheme serves.
SECURITY_SCHEMES: dict[str, Any] = {
    "ApiKeyBearer": {"type": "http", "scheme": "bearer", "description": (
        "A tenant's API key, `Authorization: Bearer yz_<id>_<secret>`, or a short-lived "
        "key derived from one for a page or an app (`yzd_<payload>.<mac>`, made by the "
        "tenant's own server: docs/deploy.md). Needed on every `/v1/` operation when the "
        "server runs with AUTH=keys (then the document says so: `security` without the "
        "empty requirement)")},
    "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": (
        "The same key in `X-API-Key`, for clients that cannot set Authorization")},
}

RETRY_AFTER_HEADER: dict[str, Any] = {"description": "Seconds to wait before asking again",
                                      "schema": {"type": "integer", "minimum": 1}}
_LIMIT_HEADERS: dict[str, Any] = {
    "Retry-After": RETRY_AFTER_HEADER,
    "RateLimit-Policy": {"description": (
        "The tenant's quota of this operation class (draft-ietf-httpapi-ratelimit-headers-10)"
        ", e.g. `\"scoring-60s\";q=600;w=60`; on every answer of a class with a quota"),
        "schema": {"type": "string"}},
    "RateLimit": {"description": (
        "What is left of the quota and when it comes back, e.g. "
        "`\"scoring-60s\";r=0;t=12` (draft-ietf-httpapi-ratelimit-headers-10)"),
        "schema": {"type": "string"}},
}

#: The answers of keys and quotas (`service.web.frontdoor`), on every /v1/ operation (by
#: reference: `components.responses`, under these names).
TENANCY_RESPONSES = {"401": "Unauthorized", "403": "OriginNotAllowed", "429": "TooManyRequests"}
TENANCY_DOC: dict[str, Any] = {
    "401": {**problem_doc(
        "With AUTH=keys: no API key, an unknown, revoked or malformed one, or a derived key "
        "that expired or whose parent key was revoked (`/problems/unauthorized`)"),
        "headers": {"WWW-Authenticate": {
            "description": "`Bearer realm=\"yahtzee-scoring\"`, with `error=\"invalid_token\"` "
                           "for a key the service does not take", "schema": {"type": "string"}}}},
    "403": problem_doc("The API key's tenant (or a derived key) does not allow the browser "
                       "origin the request comes from (`/problems/origin-not-allowed`), or a "
                       "derived key does not allow this operation class "
                       "(`/problems/operation-not-allowed`)"),
    "429": {**problem_doc(
        "Too many requests: the tenant (or a derived key's end user) used its quota of this "
        "operation class (`/problems/quota-exceeded`; scoring, advice, analysis, or builds "
        "of new tables of house rules), or it has its fair share of the pod in flight and "
        "none finished in time (`/problems/too-many-in-flight`), or, where the advisor "
        "builds tables, too many of them wait (`/problems/build-queue-full`). Ask again "
        "after Retry-After seconds"),
        "headers": _LIMIT_HEADERS},
}


#: The scorecard and rules a turn answers, as the next request about the same sheet takes them
_SAME_SHEET = {"scorecard": "$response.body#/scorecard",
               "options": "$response.body#/rules/options",
               "rules": "$response.body#/rules/overrides"}
#: OpenAPI links (a client, and Schemathesis's stateful phase, follow a game through them):
#: the sheet games/turn answers feeds the next turn, the advice for it and its totals.
LINKS: dict[str, dict[str, Any]] = {"playTurn": {
    "nextTurn": {"operationId": "playTurn", "requestBody": _SAME_SHEET, "description": (
        "The next turn of the same sheet: the answer's scorecard and rules, with new dice")},
    "adviseNextTurn": {"operationId": "suggestMove", "requestBody": _SAME_SHEET,
                       "description": "Advice for the next turn of the same sheet"},
    "totalTheSheet": {"operationId": "scoreScorecard", "description": (
        "The totals and audit of the sheet the turn left (one-column sheets)"),
        "requestBody": {"boxes": "$response.body#/scorecard/boxes",
                        "five_of_a_kind_bonuses":
                            "$response.body#/scorecard/five_of_a_kind_bonuses",
                        "saved_throws": "$response.body#/scorecard/saved_throws",
                        "won": "$response.body#/scorecard/won",
                        "options": "$response.body#/rules/options",
                        "rules": "$response.body#/rules/overrides"}},
}}


def security_requirements(keys_required: bool) -> list[dict[str, list[str]]]:
    """The document's top-level `security`: a key by either scheme, required when the server
    runs with AUTH=keys; else the empty requirement says it may be left out."""
    required = [{"ApiKeyBearer": []}, {"ApiKeyHeader": []}]
    return required if keys_required else [*required, {}]


class ContractPlugin(BasePlugin):
    """What the document says that depends on the server's settings, added as each operation
    is registered (an apispec plugin: flask-smorest's public way to shape the document): the
    `maxItems` of every batch body (the setting its `BATCH_LIMIT` extension names), the
    401, 403 and 429 of keys and quotas on every /v1/ operation (`TENANCY_DOC`, by
    reference), and the body's examples (`examples.media_examples`: one per variant on the
    templated path, that variant's on each variant's path). `register_components` adds the
    components they refer to."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__()
        self.config = config

    def register_components(self, spec: APISpec) -> None:
        """The API-key schemes, the answers of keys and quotas, and the default answer of
        every operation: a problem document for any status it does not list."""
        spec.components.response(DEFAULT_ERROR, problem_doc("Error: RFC 9457 problem details"))
        for name, scheme in SECURITY_SCHEMES.items():
            spec.components.security_scheme(name, scheme)
        for status, name in TENANCY_RESPONSES.items():
            spec.components.response(name, TENANCY_DOC[status])

    def operation_helper(self, path: str | None = None,
                         operations: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Batch limits, examples and the answers of keys and quotas (class docstring)."""
        for op in (operations or {}).values():
            if not isinstance(op, dict):
                continue
            body = op.get("requestBody")
            media = body and body.get("content", {}).get(JSON)
            schema = media and media.get("schema", {})
            if schema and BATCH_LIMIT in schema:
                schema["maxItems"] = self.config[schema.pop(BATCH_LIMIT)]
            if media and path is not None:  # a variant's path: the templated one's copy
                media.pop("examples", None)
                media.pop("example", None)
                media.update(media_examples(path))
            if "responses" in op:
                op["responses"].setdefault("default",
                                           {"$ref": f"#/components/responses/{DEFAULT_ERROR}"})
            links = LINKS.get(op.get("operationId", ""))
            ok = next((v for k, v in op.get("responses", {}).items() if str(k) == "200"), None)
            if links and isinstance(ok, dict):
                ok["links"] = copy.deepcopy(links)
            if path is not None and path.startswith("/v1/") and "responses" in op:
                op["responses"].update(
                    {status: {"$ref": f"#/components/responses/{name}"}
                     for status, name in TENANCY_RESPONSES.items()})


def add_variant_paths(spec: APISpec) -> None:
    """Register one path per variant for every `{variant}` path, with the components they
    narrow (`variant_spec.specialise`), through apispec's public `path` and `components`."""
    whole = spec.to_dict()
    specialised = specialise(_without_examples(whole))  # each path gets its own
    schemas = whole["components"]["schemas"]
    for name, component in specialised["components"]["schemas"].items():
        if name not in schemas:
            spec.components.schema(name, component)
    for path, item in specialised["paths"].items():
        if path in whole["paths"]:
            continue
        item = dict(item)
        parameters = item.pop("parameters", None)
        for op in item.values():  # a component's parameter by name, as apispec takes it
            if isinstance(op, dict) and op.get("parameters"):
                op["parameters"] = [_component_name(p) for p in op["parameters"]]
            vid = path.split("/")[3]
            for link in (op.get("responses", {}).get("200", {}).get("links") or {}).values():
                link["operationId"] = f"{link['operationId']}_{vid}"  # the same variant's
        spec.path(path=path, operations=item, parameters=parameters, rule=Rule(path))


def _without_examples(document: dict[str, Any]) -> dict[str, Any]:
    """The document without its request bodies' examples (`ContractPlugin` gives each
    variant's path its own), not copying the rest: `specialise` copies every templated
    operation once per variant, and would copy every variant's examples with each."""
    def media(m: Any) -> Any:
        return {k: v for k, v in m.items() if k not in ("example", "examples")} \
            if isinstance(m, dict) else m

    def operation(op: Any) -> Any:
        body = op.get("requestBody") if isinstance(op, dict) else None
        if not isinstance(body, dict) or "content" not in body:
            return op
        return {**op, "requestBody": {**body, "content": {
            t: media(m) for t, m in body["content"].items()}}}

    return {**document, "paths": {path: {k: operation(v) for k, v in item.items()}
                                  for path, item in document["paths"].items()}}


def _component_name(parameter: Any) -> Any:
    """A parameter as `spec.path` takes it: a reference to a component by its name."""
    if isinstance(parameter, dict) and set(parameter) == {"$ref"}:
        return parameter["$ref"].rsplit("/", 1)[1]
    return parameter


@dataclass(frozen=True)
class Deprecation:
    """An operation on its way out (docs/releases.md, "Deprecations"): deprecated by the
    release of `since`, answered until `sunset` at least (it goes in a major release after
    it), the way to move written at `link`. Every answer of the operation says so, whatever
    its status: `Deprecation` (RFC 9745: the date, as `@` and its Unix time), `Sunset` (RFC
    8594: an HTTP date) and `Link` (`rel="deprecation"`); the document marks it
    `deprecated`, with the date in `x-sunset`."""

    since: date
    sunset: date
    link: str

    def __post_init__(self) -> None:
        if self.sunset <= self.since:
            raise ValueError(f"a sunset ({self.sunset}) comes after the deprecation "
                             f"({self.since})")

    def headers(self) -> tuple[tuple[str, str], ...]:
        """The answer's headers that announce it."""
        return (("Deprecation", f"@{calendar.timegm(self.since.timetuple())}"),
                ("Sunset", http_date(self.sunset)),
                ("Link", f'<{self.link}>; rel="deprecation"'))


View = TypeVar("View", bound=Callable[..., Any])


def deprecated(blp: Blueprint, since: date, sunset: date, link: str) -> Callable[[View], View]:
    """Mark a view method deprecated (`Deprecation`): in the document, and on every answer
    (the front door adds the headers: `frontdoor.Router` reads them off the view)."""
    deprecation = Deprecation(since, sunset, link)

    def mark(view: View) -> View:
        view.deprecation = deprecation  # type: ignore[attr-defined]
        return blp.doc(deprecated=True, **{"x-sunset": sunset.isoformat()})(view)

    return mark


def deprecation_of(view: Any, method: str) -> Deprecation | None:
    """The `Deprecation` of a view function's `method` (a MethodView's method, or the
    function itself), if it is marked."""
    cls = getattr(view, "view_class", None)
    name = method.lower()
    if name == "head" and cls is not None and not hasattr(cls, "head"):
        name = "get"  # as MethodView answers HEAD
    handler = getattr(cls, name, view)
    return getattr(handler, "deprecation", None)


def new_blueprint(name: str, description: str, operation_class: str = "scoring") -> Blueprint:
    """A resource blueprint under /v1/variants, whose operations belong to `operation_class`
    (`quotas.REQUEST_CLASSES`: which quota they are charged to; the front door reads it off
    the route a request takes)."""
    if operation_class not in REQUEST_CLASSES:
        raise ValueError(f"operation class {operation_class!r}: one of {REQUEST_CLASSES}")
    blp = ServiceBlueprint(name, __name__, url_prefix="/v1/variants",
                           description=description)
    blp.operation_class = operation_class  # type: ignore[attr-defined]
    return blp


class ServiceBlueprint(Blueprint):
    """flask-smorest's blueprint, reading bodies with the service's parser
    (`parser.ProblemParser`: `@blp.arguments` is how every view gets its body)."""

    ARGUMENTS_PARSER = ProblemParser()


def contract_document(api: Any) -> dict[str, Any]:
    """The OpenAPI document as served and committed: flask-smorest's spec (`api.spec`, the
    Api `register_api` made), the schemas nothing refers to left out."""
    return used_only(api.spec.to_dict())


def document_bytes(document: dict[str, Any]) -> bytes:
    """An OpenAPI document as the service serves it and `openapi/openapi.json` holds it, byte
    for byte: the generator's key order (a client generated from either file is the same),
    two-space indents, UTF-8."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()
