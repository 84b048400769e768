"""RFC 9457 problem details: every 4xx/5xx leaves the service as application/problem+json.

One place turns domain errors, marshmallow validation messages and werkzeug HTTP errors
into problem documents with field-level `errors` (JSON pointers into the request).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import marshmallow as ma
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from ..domain.errors import (
    IllegalMove,
    InvalidInput,
    Problem,
    UnknownVariant,
    escape_pointer_token,
)
from ..domain.games import ALL_CODES, MOVE_CODES

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_INVALID = "/problems/invalid-request"
TYPE_UNKNOWN_VARIANT = "/problems/unknown-variant"
TYPE_ILLEGAL_MOVE = "/problems/illegal-move"

log = logging.getLogger(__name__)


class ProblemErrorSchema(ma.Schema):
    """One field-level error: where in the request, and what is wrong."""

    pointer = ma.fields.String(required=True, metadata={
        "description": "JSON pointer (RFC 6901) into the request body; '' for the whole body"})
    detail = ma.fields.String(required=True)
    code = ma.fields.String(validate=ma.validate.OneOf(ALL_CODES), metadata={
        "description": "Machine-readable reason, where one applies (docs/problems.md)"})


class ProblemSchema(ma.Schema):
    """An RFC 9457 problem document."""

    type = ma.fields.String(required=True, metadata={"description": "Problem type URI"})
    title = ma.fields.String(required=True)
    status = ma.fields.Integer(required=True)
    detail = ma.fields.String(required=True)
    instance = ma.fields.String(metadata={"description": "The request path"})
    errors = ma.fields.List(ma.fields.Nested(ProblemErrorSchema),
                            metadata={"description": "Field-level errors"})
    code = ma.fields.String(validate=ma.validate.OneOf(MOVE_CODES), metadata={
        "description": "/problems/illegal-move only: the rule that forbids the move "
                       "(docs/problems.md)"})


class RequestProblem(Exception):
    """A problem raised by the HTTP layer before the core is called."""

    def __init__(self, status: int, title: str, detail: str,
                 errors: list[Problem] | None = None, type_: str = TYPE_INVALID) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail
        self.errors = errors or []
        self.type = type_


def problem_response(status: int, title: str, detail: str, type_: str = "about:blank",
                     errors: list[Problem] | None = None,
                     headers: dict[str, str] | None = None,
                     extra: dict[str, Any] | None = None) -> Response:
    """Build a problem+json response (`extra`: extension members, e.g. an illegal move's
    code)."""
    body: dict[str, Any] = {"type": type_, "title": title, "status": status, "detail": detail,
                            "instance": request.path}
    if extra:
        body.update(extra)
    if errors:
        body["errors"] = [_error_entry(p) for p in errors]
    resp = Response(json.dumps(body), status=status, mimetype=PROBLEM_MEDIA_TYPE)
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def _error_entry(p: Problem) -> dict[str, str]:
    entry = {"pointer": p.pointer, "detail": p.detail}
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


def invalid(errors: list[Problem]) -> Response:
    """A 422 naming every problem."""
    first = errors[0]
    where = first.pointer or "the request body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return problem_response(422, "Invalid request", f"{where}: {first.message}{more}",
                            TYPE_INVALID, errors)


def register_error_handlers(app: Flask) -> None:
    """Install the handlers that turn every error into problem+json."""

    @app.errorhandler(InvalidInput)
    def _invalid_input(err: InvalidInput) -> Response:
        return invalid(err.problems)

    @app.errorhandler(IllegalMove)
    def _illegal_move(err: IllegalMove) -> Response:
        first = err.problems[0]
        return problem_response(422, "Illegal move", f"{first.pointer or 'the turn'}: "
                                f"{first.detail}", TYPE_ILLEGAL_MOVE, err.problems,
                                extra={"code": err.code})

    @app.errorhandler(UnknownVariant)
    def _unknown_variant(err: UnknownVariant) -> Response:
        from ..domain.variants import VARIANT_IDS

        return problem_response(404, "Unknown variant",
                                f"No variant {err.variant!r}; known: {', '.join(VARIANT_IDS)}",
                                TYPE_UNKNOWN_VARIANT)

    @app.errorhandler(RequestProblem)
    def _request_problem(err: RequestProblem) -> Response:
        return problem_response(err.status, err.title, err.detail, err.type, err.errors)

    @app.errorhandler(HTTPException)
    def _http(err: HTTPException) -> Response:
        status = err.code or 500
        data = getattr(err, "data", None) or {}
        messages = data.get("messages") or data.get("errors")
        if status == 422 and messages:
            # webargs: {"json": {...}}; the location is not part of the pointer
            if isinstance(messages, dict) and set(messages) <= {"json", "query", "path"}:
                messages = {k: v for loc in messages.values() for k, v in
                            (loc.items() if isinstance(loc, dict) else [("", loc)])}
            return invalid(flatten_messages(messages) or [Problem("", "invalid")])
        headers = {}
        if status == 405 and err.valid_methods:  # type: ignore[attr-defined]
            headers["Allow"] = ", ".join(err.valid_methods)  # type: ignore[attr-defined]
        detail = err.description or err.name
        if status == 413:
            detail = (f"The request body is larger than the limit of "
                      f"{app.config.get('MAX_CONTENT_LENGTH')} bytes")
        return problem_response(status, err.name, detail, headers=headers)

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> Response:  # pragma: no cover - a bug if reached
        log.exception("unhandled error")
        return problem_response(500, "Internal Server Error",
                                "The server failed to handle this request; it has been logged")
