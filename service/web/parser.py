"""How request bodies are read: the webargs parser flask-smorest's `@blp.arguments` uses
(`Blueprint.ARGUMENTS_PARSER`, set by `openapi.ServiceBlueprint`), customised only through
webargs' public hooks:

- `load_json`: the body as sent, read once per request (`body.read_json`: a 415 for another
  media type, a 413 past MAX_BODY_BYTES, chunked or not, a 422 for an empty body or one that
  is not JSON; integral numbers written as floats made integers);
- `pre_load`: one object, or for a batch schema (`many=True`) a list of 1 to the schema's
  `BATCH_LIMIT` setting of them (`MAX_BATCH_ITEMS` unless it names another), else a 422
  saying which form to use; a batch's items are charged to its caller's quotas there, one
  unit each (`quotas.charge_batch`), before any is read;
- `parse`: the variant in the path is checked first (404, with the variant it likely means),
  and a schema's `fast_load` (the common scoring request, checked without marshmallow and
  held equal to it by tests/web/test_fast_paths.py) answers before marshmallow does;
- `handle_error`: marshmallow's messages become one RFC 9457 problem whose `errors` name
  each field by JSON pointer (for a batch, `/3/dice/0`).

Views never read a body themselves (a test walks the app's rules: tests/web/test_app.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import marshmallow as ma
from flask import Request, current_app
from webargs.flaskparser import FlaskParser

from ..domain.errors import Problem
from ..domain.rules import get_variant
from .body import read_json
from .problems import RequestProblem, flatten_messages
from .quotas import charge_batch

#: The environ key of a request's parsed body (read once, whichever hook asks first).
_BODY = "service.json"


class ProblemParser(FlaskParser):
    """webargs' Flask parser with the service's reading of bodies (module docstring)."""

    DEFAULT_VALIDATION_STATUS = 422

    def load_json(self, req: Request, schema: ma.Schema) -> Any:
        """The parsed body (read once per request)."""
        environ = req.environ
        if _BODY not in environ:
            environ[_BODY] = read_json()
        return environ[_BODY]

    def pre_load(self, location_data: Mapping, *, schema: ma.Schema, req: Request,
                 location: str) -> Any:
        """Refuse a body of the wrong form before marshmallow: one object, or a batch of 1 to
        its limit."""
        check_form(location_data, schema)
        return location_data

    def parse(self, argmap: Any, req: Request | None = None, **kwargs: Any) -> Any:
        """The loaded body: the variant in the path checked first, then the schema's fast
        check, then marshmallow."""
        req = req if req is not None else self.get_default_request()
        variant = (req.view_args or {}).get("variant")
        if variant is not None:
            get_variant(variant)  # UnknownVariant: 404, before anything about the body
        if isinstance(argmap, type):  # a schema class (@blp.arguments takes either)
            argmap = argmap()
        fast_load = getattr(argmap, "fast_load", None)
        if fast_load is not None:
            data = self.load_json(req, argmap)
            check_form(data, argmap)
            fast = [fast_load(d) for d in data] if argmap.many else fast_load(data)
            if (all(f is not None for f in fast) if argmap.many else fast is not None):
                return fast
        return super().parse(argmap, req, **kwargs)

    def handle_error(self, error: ma.ValidationError, req: Request, schema: ma.Schema, *,
                     error_status_code: int | None,
                     error_headers: Mapping[str, str] | None) -> NoReturn:
        """marshmallow's messages as one problem naming each field by JSON pointer."""
        messages = error.messages
        if isinstance(messages, dict) and set(messages) <= {"json"}:
            messages = messages.get("json", messages)  # the location is not in a pointer
        problems = flatten_messages(messages) or [Problem("", "invalid")]
        first = problems[0]
        raise RequestProblem(422, "Invalid request",
                             f"{first.pointer or 'the request body'}: {first.detail}",
                             problems)


def check_form(data: Any, schema: ma.Schema) -> None:
    """A 422 unless `data` is what `schema` reads: one object, or (`many`) a list of 1 to
    `app.config[schema.BATCH_LIMIT]` (default MAX_BATCH_ITEMS) of them."""
    is_list = isinstance(data, list)
    if schema.many:
        limit_key = getattr(schema, "BATCH_LIMIT", "MAX_BATCH_ITEMS")
        limit = current_app.config[limit_key]
        if not is_list:
            raise RequestProblem(422, "Invalid request",
                                 "The request body of a batch operation must be a JSON list "
                                 "of objects (send one object to the operation without "
                                 "/batch)", [Problem("", "must be a list")])
        if not data:
            raise RequestProblem(422, "Invalid request", "A batch needs at least one item",
                                 [Problem("", "empty list")])
        if len(data) > limit:
            raise RequestProblem(422, "Invalid request",
                                 f"A batch holds at most {limit} items; got {len(data)}",
                                 [Problem("", f"more than {limit} items")])
        charge_batch(len(data))  # one unit an item, before any is read (quotas.py)
    elif not isinstance(data, dict):
        more = " (send a list to the operation's /batch form)" if is_list else ""
        raise RequestProblem(422, "Invalid request",
                             f"The request body must be a JSON object{more}",
                             [Problem("", "must be an object")])
