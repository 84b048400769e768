"""RFC 9457 problem details: every 4xx/5xx leaves the service as application/problem+json.

One place turns domain errors, marshmallow validation messages and werkzeug HTTP errors
into problem documents with field-level `errors` (JSON pointers into the request). Every
document is made by `problem_document` (the front door's refusals too), which takes out of
what the request sent (`instance`, `detail`, `errors`) anything that looks like an API key
(`service.secrets.redact`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import marshmallow as ma
from flask import Flask, Response, current_app, request
from werkzeug.exceptions import HTTPException

from ..caller import current_caller
from ..domain.errors import (
    ALL_CODES,
    MOVE_CODES,
    IllegalMove,
    InvalidInput,
    Problem,
    UnknownVariant,
    escape_pointer_token,
)
from ..secrets import redact

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_INVALID = "/problems/invalid-request"
TYPE_INCONSISTENT = "/problems/inconsistent-request"
TYPE_UNKNOWN_VARIANT = "/problems/unknown-variant"
TYPE_ILLEGAL_MOVE = "/problems/illegal-move"
TYPE_BUILD_QUEUE_FULL = "/problems/build-queue-full"
TYPE_TABLE_BUILD_FAILED = "/problems/table-build-failed"
TYPE_NOT_FOUND = "/problems/not-found"
TYPE_METHOD_NOT_ALLOWED = "/problems/method-not-allowed"
TYPE_TOO_LARGE = "/problems/body-too-large"
TYPE_UNSUPPORTED = "/problems/unsupported-media-type"
TYPE_INTERNAL = "/problems/internal-error"
TYPE_UNAUTHORIZED = "/problems/unauthorized"
TYPE_ORIGIN_NOT_ALLOWED = "/problems/origin-not-allowed"
TYPE_QUOTA_EXCEEDED = "/problems/quota-exceeded"
TYPE_OPERATION_NOT_ALLOWED = "/problems/operation-not-allowed"
TYPE_TOO_MANY_IN_FLIGHT = "/problems/too-many-in-flight"

#: Every problem type the service answers, with its status and what it means (the docs and
#: the spec list them from here).
PROBLEM_TYPES: dict[str, tuple[int, str]] = {
    TYPE_INVALID: (422, "The body is not JSON or breaks the shape every variant shares (a "
                        "type, a range, an unknown field); `errors` names each field by JSON "
                        "pointer"),
    TYPE_INCONSISTENT: (409, "The body has the right shape but breaks a rule of the variant, "
                             "of its house rules or of the game: dice, boxes or options the "
                             "variant does not have, house rules that make no sense together, "
                             "a value no hand can score, a sheet no game reaches, fields that "
                             "contradict each other; `errors` names each field by JSON pointer, "
                             "with a `code` where one applies (docs/problems.md). A request "
                             "valid for the spec can get it (no schema states these rules), "
                             "hence 409 (the request conflicts with the rules of the variant "
                             "it names) and not 422, which says the body breaks the spec"),
    TYPE_UNKNOWN_VARIANT: (404, "The variant in the path is not one of the service's"),
    TYPE_NOT_FOUND: (404, "No such resource"),
    TYPE_METHOD_NOT_ALLOWED: (405, "The resource does not take this method (see Allow)"),
    TYPE_TOO_LARGE: (413, "The request body is larger than MAX_BODY_BYTES"),
    TYPE_UNSUPPORTED: (415, "The body is not sent as JSON"),
    TYPE_ILLEGAL_MOVE: (409, "The move is well formed but the rules do not allow it on this "
                             "sheet (it conflicts with the game's state); `code` says which "
                             "rule (docs/problems.md)"),
    TYPE_BUILD_QUEUE_FULL: (429, "Too many tables are waiting to be built (for the pod or "
                                 "for this client); ask again after Retry-After seconds"),
    TYPE_UNAUTHORIZED: (401, "With AUTH=keys: no API key, or one the service does not know, "
                             "or a revoked, expired or malformed one (see WWW-Authenticate); "
                             "with either AUTH, an API key in the URL's query string (keys "
                             "go in headers; the key is leaked)"),
    TYPE_ORIGIN_NOT_ALLOWED: (403, "The API key may not be used from the browser origin the "
                                   "request comes from (its tenant's `origins`)"),
    TYPE_OPERATION_NOT_ALLOWED: (403, "A derived API key that does not allow this operation "
                                      "class (its `ops`)"),
    TYPE_QUOTA_EXCEEDED: (429, "The tenant (or a derived key's end user) used its quota of "
                               "this operation class; ask again after Retry-After seconds "
                               "(RateLimit and RateLimit-Policy say how much it may ask)"),
    TYPE_TOO_MANY_IN_FLIGHT: (429, "The tenant already has as many requests being answered in "
                                   "this pod as its fair share allows (TENANT_IN_FLIGHT), and "
                                   "none finished within TENANT_IN_FLIGHT_WAIT seconds; ask "
                                   "again after Retry-After seconds"),
    TYPE_TABLE_BUILD_FAILED: (500, "The advisor's table for these rules could not be built"),
    TYPE_INTERNAL: (500, "A bug: the service failed to handle the request (it is logged)"),
    "about:blank": (400, "Any other HTTP error (e.g. 400 for a malformed request line): the "
                         "status's standard title"),
}

#: werkzeug's HTTP errors -> (problem type, title, detail) in the service's own words
_HTTP_PROBLEMS = {
    404: (TYPE_NOT_FOUND, "Not found", "No resource at this path; GET / lists the service's "
                                       "resources"),
    405: (TYPE_METHOD_NOT_ALLOWED, "Method not allowed",
          "This resource does not take this method"),
    413: (TYPE_TOO_LARGE, "Request body too large", ""),
    415: (TYPE_UNSUPPORTED, "Unsupported media type", "Send the body as application/json"),
}

log = logging.getLogger(__name__)


class ProblemErrorSchema(ma.Schema):
    """One field-level error: where in the request, and what is wrong."""

    pointer = ma.fields.String(required=True, metadata={
        "description": "JSON pointer (RFC 6901) into the request body; '' for the whole body"})
    detail = ma.fields.String(required=True, metadata={"description": "What is wrong there"})
    code = ma.fields.String(validate=ma.validate.OneOf(ALL_CODES), metadata={
        "description": "Machine-readable reason, where one applies (docs/problems.md)"})


class ProblemSchema(ma.Schema):
    """An RFC 9457 problem document."""

    type = ma.fields.String(required=True, validate=ma.validate.OneOf(list(PROBLEM_TYPES)),
                            metadata={"description": "Problem type URI (relative to the "
                                                     "service); each is documented in the "
                                                     "README"})
    title = ma.fields.String(required=True, metadata={
        "description": "Short summary of the problem type"})
    status = ma.fields.Integer(required=True, metadata={"description": "The HTTP status"})
    detail = ma.fields.String(required=True, metadata={
        "description": "What went wrong with this request"})
    instance = ma.fields.String(metadata={"description": "The request path"})
    errors = ma.fields.List(ma.fields.Nested(ProblemErrorSchema),
                            metadata={"description": "Field-level errors"})
    code = ma.fields.String(validate=ma.validate.OneOf(MOVE_CODES), metadata={
        "description": "/problems/illegal-move only: the rule that forbids the move "
                       "(docs/problems.md)"})
    tenant = ma.fields.String(metadata={
        "description": "The tenant the request's API key belongs to (with AUTH=keys; never "
                       "the key itself)"})


class RequestProblem(Exception):
    """A problem raised by the HTTP layer before the core is called."""

    def __init__(self, status: int, title: str, detail: str,
                 errors: list[Problem] | None = None, type_: str = TYPE_INVALID) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail
        self.errors = errors or []
        self.type = type_


def problem_document(status: int, title: str, detail: str, type_: str, instance: str,
                     errors: list[Problem] | None = None,
                     extra: dict[str, Any] | None = None,
                     tenant: str | None = None) -> bytes:
    """A problem+json body (`extra`: extension members, e.g. an illegal move's code), naming
    `tenant`, by default the request's when it has a key (`service.caller`). `instance` (the
    request's path), `detail` and `errors` may quote the request: anything in them that looks
    like an API key is taken out (`redact`)."""
    body: dict[str, Any] = {"type": type_, "title": title, "status": status,
                            "detail": redact(detail), "instance": redact(instance)}
    if tenant is None:
        caller = current_caller()
        tenant = caller.tenant if caller is not None and caller.keyed else None
    if tenant is not None:
        body["tenant"] = tenant
    if extra:
        body.update(extra)
    if errors:
        body["errors"] = [_error_entry(p) for p in errors]
    return json.dumps(body).encode()


def problem_response(status: int, title: str, detail: str, type_: str = "about:blank",
                     errors: list[Problem] | None = None,
                     headers: dict[str, str] | None = None,
                     extra: dict[str, Any] | None = None) -> Response:
    """Build a problem+json response (`problem_document`)."""
    resp = Response(problem_document(status, title, detail, type_, request.path, errors, extra),
                    status=status, mimetype=PROBLEM_MEDIA_TYPE)
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def _error_entry(p: Problem) -> dict[str, str]:
    entry = {"pointer": redact(p.pointer), "detail": redact(p.detail)}
    if p.code:
        entry["code"] = p.code
    return entry


def flatten_messages(messages: Any, prefix: str = "") -> list[Problem]:
    """Turn marshmallow's nested error messages into (JSON pointer, message) problems."""
    out: list[Problem] = []
    if isinstance(messages, dict):
        for key, sub in messages.items():
            if key == "_schema":
                out += flatten_messages(sub, prefix)
            else:
                out += flatten_messages(sub, f"{prefix}/{escape_pointer_token(key)}")
    elif isinstance(messages, list | tuple):
        for m in messages:
            out += flatten_messages(m, prefix)
    else:
        out.append(Problem(prefix, str(messages)))
    return out


def status_of(type_: str) -> int:
    """The HTTP status a problem type is answered with (`PROBLEM_TYPES`)."""
    return PROBLEM_TYPES[type_][0]


def invalid(errors: list[Problem], type_: str = TYPE_INVALID) -> Response:
    """A problem naming every field: the body breaks the schema (422 `TYPE_INVALID`) or,
    matching it, a rule of the game the schema cannot state (409 `TYPE_INCONSISTENT`)."""
    first = errors[0]
    where = first.pointer or "the request body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    title = "Invalid request" if type_ == TYPE_INVALID else "Inconsistent request"
    return problem_response(status_of(type_), title, f"{where}: {first.detail}{more}", type_,
                            errors)


def http_problem(err: HTTPException) -> Response:
    """werkzeug's HTTP errors (404, 405, 413, 415, ...) as problem documents: what
    `api.ProblemApi.handle_http_exception`, flask-smorest's handler of them, answers."""
    status = err.code or 500
    headers = {}
    if status == 405 and getattr(err, "valid_methods", None):
        headers["Allow"] = ", ".join(err.valid_methods)  # type: ignore[attr-defined]
    type_, title, detail = _HTTP_PROBLEMS.get(
        status, ("about:blank", err.name, err.description or err.name))
    if status == 413:
        detail = (f"The request body is larger than the limit of "
                  f"{current_app.config.get('MAX_CONTENT_LENGTH')} bytes")
    return problem_response(status, title, detail, type_, headers=headers)


def register_error_handlers(app: Flask) -> None:
    """Install the handlers that turn the service's errors into problem+json (werkzeug's own
    HTTP errors: `http_problem`, through flask-smorest's handler)."""

    @app.errorhandler(InvalidInput)
    def _invalid_input(err: InvalidInput) -> Response:
        # the domain's checks: what marshmallow (and so the spec) cannot say
        return invalid(err.problems, TYPE_INCONSISTENT)

    @app.errorhandler(IllegalMove)
    def _illegal_move(err: IllegalMove) -> Response:
        first = err.problems[0]
        return problem_response(status_of(TYPE_ILLEGAL_MOVE), "Illegal move",
                                f"{first.pointer or 'the turn'}: {first.detail}",
                                TYPE_ILLEGAL_MOVE, err.problems, extra={"code": err.code})

    @app.errorhandler(UnknownVariant)
    def _unknown_variant(err: UnknownVariant) -> Response:
        from ..domain.variants import unknown_variant

        return problem_response(404, "Unknown variant", unknown_variant(err.variant),
                                TYPE_UNKNOWN_VARIANT)

    @app.errorhandler(RequestProblem)
    def _request_problem(err: RequestProblem) -> Response:
        return problem_response(err.status, err.title, err.detail, err.type, err.errors)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> Response:  # pragma: no cover - a bug if reached
        log.exception("unhandled error")
        return problem_response(500, "Internal Server Error",
                                "The server failed to handle this request; it has been logged",
                                TYPE_INTERNAL)
