"""Reading a request body and writing a JSON answer, the same way for every resource.

`read_json` is how the parser of `@blp.arguments` (`parser.ProblemParser`) reads a body:
the limits, the media type and the JSON itself; `rules_for` and `sheet_for` turn a loaded
body's rules and scorecard into the domain's.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from flask import Response, current_app, request
from flask.json.provider import JSONProvider
from werkzeug.exceptions import RequestEntityTooLarge

from ..domain.consistency import check_sheet
from ..domain.errors import Problem
from ..domain.rules import RuleSet, effective_rules
from ..domain.scoring import Sheet, parse_scorecard
from .problems import TYPE_UNSUPPORTED, RequestProblem

JSON = "application/json"
#: Bytes of a chunked body past the limit read and dropped before its 413 is sent.
DRAIN_BYTES = 16 * 1024 * 1024


class OrjsonProvider(JSONProvider):
    """Flask's JSON with orjson (about ten times the json module's speed): what
    `@blp.response`'s answers are written with, the same bytes the scoring fast path sends.
    Keys stay in the order the schemas dump them."""

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """The JSON text of `obj`."""
        return orjson.dumps(obj).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """The value of a JSON text."""
        return orjson.loads(s)



def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None
                  ) -> Response:
    """A JSON answer made outside a view's `@blp.response` (the 202 of a table being built)."""
    return Response(orjson.dumps(data), status=status, mimetype=JSON, headers=headers)


def read_body() -> bytes:
    """The request body; 413 when it is larger than MAX_CONTENT_LENGTH, whether it came with
    a Content-Length (werkzeug checks it) or chunked (werkzeug would cut it at the limit
    without a word, so one byte more than the limit is read here to tell)."""
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    environ = request.environ
    length = environ.get("CONTENT_LENGTH")
    if length and limit is not None and "HTTP_TRANSFER_ENCODING" not in environ:
        # the common case, read straight from the server's stream (werkzeug's wrapping of
        # it costs more than the read)
        try:
            size = int(length)
        except ValueError:
            size = -1
        if 0 <= size <= limit:
            return environ["wsgi.input"].read(size) if size else b""
    if request.content_length is not None or limit is None:
        return request.get_data(cache=True)  # raises 413 beyond MAX_CONTENT_LENGTH
    if not request.environ.get("wsgi.input_terminated"):
        return b""  # no length and a server that does not end the stream: nothing safe to read
    stream = request.environ["wsgi.input"]
    chunks, size = [], 0
    while size <= limit:
        chunk = stream.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        # Read (and drop) a bounded amount more, so that the 413 reaches a client still
        # sending instead of a connection reset for unread data.
        left = DRAIN_BYTES
        while left > 0 and (chunk := stream.read(min(65536, left))):
            left -= len(chunk)
        raise RequestEntityTooLarge()
    return b"".join(chunks)


def read_json() -> Any:
    """The parsed JSON body; a 415 when it is sent as another media type than JSON (no
    Content-Type is taken as JSON), a 422 when it is not JSON."""
    media = request.environ.get("CONTENT_TYPE")
    if media and not is_json_media(media):
        raise RequestProblem(415, "Unsupported media type",
                             f"Send the body as application/json (it came as "
                             f"{media.split(';', 1)[0].strip()[:100]!r})",
                             [Problem("", "Content-Type must be application/json")],
                             type_=TYPE_UNSUPPORTED)
    raw = read_body()
    if not raw:
        raise RequestProblem(422, "Invalid request", "The request body is empty; send JSON",
                             [Problem("", "a JSON body is required")])
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RequestProblem(422, "Invalid request", f"The request body is not JSON: {exc}",
                             [Problem("", "not valid JSON")]) from None
    if MAY_HOLD_FLOAT.search(raw):
        data = integral_numbers(data)
    return data


def is_json_media(content_type: str) -> bool:
    """Whether a Content-Type names JSON: application/json or a structured suffix
    (`application/problem+json`), parameters such as charset ignored."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == JSON or (media.startswith("application/") and media.endswith("+json"))


#: A number written with a fraction or an exponent (`4.0`, `4e0`) can only be where a digit is
#: followed by one of these, and an integer beyond 64 bits (which orjson reads as a float) has
#: 19 digits or more; most bodies have neither and skip the walk.
MAY_HOLD_FLOAT = re.compile(rb"[0-9][.eE]|[0-9]{19}")


def integral_numbers(data: Any) -> Any:
    """The body with every integral number written as a float (`4.0`, `4e0`) made an int.

    JSON has one number type and JSON Schema counts 4.0 as an integer, so the spec's
    `"type": "integer"` fields take it; the schemas stay strict about everything else (a
    string, a boolean or 4.5 is still not an integer). Walked without recursion: a body may
    nest as deep as the JSON parser allows.
    """
    if type(data) is float:
        return int(data) if data.is_integer() else data
    stack = [data]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            items = node.items()
        elif type(node) is list:
            items = enumerate(node)
        else:
            continue
        for key, value in list(items):
            if type(value) is float:
                if value.is_integer():
                    node[key] = int(value)
            elif type(value) in (dict, list):
                stack.append(value)
    return data


def rules_for(variant: str, item: dict[str, Any]) -> RuleSet:
    """The effective rules of the item's variant, options and house rules."""
    return effective_rules(variant, item.get("options"), item.get("rules"))


def sheet_for(rs: RuleSet, item: dict[str, Any], key: str | None = "scorecard",
              check: bool = True, base: str = "") -> Sheet:
    """The item's scorecard (the whole item when `key` is None) as a Sheet; `base`: the
    pointer of the item in the request ("/players/1" for a player's).

    With `check` (every endpoint but the audit of scorecards/score) a sheet no game could
    produce is refused naming each problem (`consistency.check_sheet`).
    """
    if key is None:  # (parse_scorecard reads the scorecard's fields only, not the rest)
        sheet = parse_scorecard(rs, item, base=base)
        if check:
            check_sheet(rs, sheet, base)
        return sheet
    data = item.get(key)
    where = f"{base}/{key}"
    sheet = parse_scorecard(rs, data, base=where)
    if check and data:
        check_sheet(rs, sheet, where)
    return sheet
