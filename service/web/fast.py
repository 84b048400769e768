"""The scoring endpoints' common case, answered without Flask's dispatch.

`hands/score` and `scorecards/score` are the service's busiest endpoints and its cheapest:
scoring a hand takes about 20 µs in process (the body read to the answer written), and
Flask's request and application contexts, its routing, flask-smorest's view wrapper and the
response object cost several times that.
`ScoringFastPath` sits between the ops middleware (request id, CORS, metrics, which stay as
they are) and Flask, and answers a request itself when it is the common case:

- a `POST` the router sends to `hands/score` or `scorecards/score` of a variant the
  service has (`frontdoor.Router`: the route the front door found, not a reading of its
  own);
- a JSON body (no Content-Type, or a JSON media type), with a Content-Length within the
  body limit (not chunked);
- one JSON object (not the batch form) that the request schema's `fast_load` accepts;
- answered by the endpoint's own function (`hands.hand_score_answer`,
  `scorecards.scorecard_score_answer`) without an error.

The answer is made by the same functions from the same data and dumped by the same schema
(compiled: `schemas.common.compiled_dump`), so it is the same answer, byte for byte and
header for header, as Flask's (a test holds the two side by side over generated requests). Anything
else (a batch, an error of any kind, another media type, a chunked body) goes on to Flask
with the body put back as it was read, and gets Flask's answer: errors are answered in one
place only. An error the fast path does not expect (`EXPECTED`) goes on to Flask too, and is
counted in /metrics and logged.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from typing import Any

import orjson
from flask import Flask

from ..domain.errors import DomainError
from ..domain.variants import VARIANTS
from .api import hands, scorecards
from .body import JSON, MAY_HOLD_FLOAT, integral_numbers, is_json_media
from .frontdoor import Router
from .ops import FAST_PATH_UNEXPECTED
from .schemas.common import compiled_dump
from .schemas.hands import HandScoreRequestSchema, HandScoreSchema
from .schemas.scorecards import ScorecardScoreRequestSchema, ScorecardTotalsSchema

log = logging.getLogger(__name__)

#: What the fast path expects to meet: a body that is not JSON, and the domain's refusals
#: (a rule broken, an unknown variant). Flask answers them as problem documents; anything
#: else is a bug, counted in /metrics (`fast_path_unexpected_errors_total`) and logged.
EXPECTED = (orjson.JSONDecodeError, DomainError)

#: An endpoint's fast answer: its name for logs and metrics, the request schema's fast_load,
#: the answer of one item, whether the answer takes the item's JSON pointer, and the answer
#: schema compiled (`schemas.common.compiled_dump`: what `@blp.response` dumps)
Endpoint = tuple[str, Callable[[Any], Any], Callable[..., Any], bool, Callable[[Any], Any]]
_ENDPOINTS: dict[str, Endpoint] = {
    f"{hands.blp.name}.{hands.HandScoring.__name__}": (
        "hands/score", HandScoreRequestSchema.fast_load, hands.hand_score_answer, False,
        compiled_dump(HandScoreSchema)),
    f"{scorecards.blp.name}.{scorecards.ScorecardScoring.__name__}": (
        "scorecards/score", ScorecardScoreRequestSchema.fast_load,
        scorecards.scorecard_score_answer, True, compiled_dump(ScorecardTotalsSchema)),
}


class ScoringFastPath:
    """WSGI middleware answering the scoring endpoints' common case (module docstring);
    `enabled` False sends every request to Flask (tests compare the two)."""

    def __init__(self, app: Flask, wsgi_app: Any, router: Router) -> None:
        self.wsgi_app, self.router = wsgi_app, router
        self.enabled = True
        self.limit: int | None = app.config.get("MAX_CONTENT_LENGTH")
        missing = set(_ENDPOINTS) - set(app.view_functions)
        if missing:
            raise RuntimeError(f"no route for {sorted(missing)}: register the API first")

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if self.enabled and environ.get("REQUEST_METHOD") == "POST":
            route = self.router.route(environ)
            endpoint = _ENDPOINTS.get(route.rule.endpoint) if route.rule is not None else None
            if endpoint is not None:
                variant = route.args["variant"]  # type: ignore[index]
                body = self._answer(environ, variant, endpoint) if variant in VARIANTS else None
                if body is not None:
                    start_response("200 OK", [("Content-Type", JSON),
                                              ("Content-Length", str(len(body)))])
                    return [body]
        return self.wsgi_app(environ, start_response)

    def _answer(self, environ: dict[str, Any], variant: str, endpoint: Endpoint
                ) -> bytes | None:
        """The answer's body, or None when Flask is to answer (the body is put back)."""
        media = environ.get("CONTENT_TYPE")
        if (media and not is_json_media(media)) or "HTTP_TRANSFER_ENCODING" in environ:
            return None
        try:
            size = int(environ.get("CONTENT_LENGTH") or "")
        except ValueError:
            return None
        if size <= 0 or (self.limit is not None and size > self.limit):
            return None
        raw = environ["wsgi.input"].read(size)
        name, fast_load, answer, with_base, dump = endpoint
        try:
            data = orjson.loads(raw)
            # None for anything but an object it accepts as it is, which holds no float
            # (every value it accepts is an int, a bool or None): a body's integral floats
            # (`4.0`) are made ints, as Flask's read_json makes them, only when it refuses
            item = fast_load(data)
            if item is None and type(data) is dict and MAY_HOLD_FLOAT.search(raw):
                item = fast_load(integral_numbers(data))  # (a list is a batch: Flask's)
            if item is not None:
                result = answer(variant, item, "") if with_base else answer(variant, item)
                return orjson.dumps(dump(result))
        except EXPECTED:  # an error Flask answers as a problem document
            pass
        except Exception as exc:  # not expected: Flask answers it, and it is counted
            FAST_PATH_UNEXPECTED.labels(name, type(exc).__name__).inc()
            log.warning("fast path: unexpected error, passed on to Flask",
                        extra={"endpoint": name, "error": repr(exc)[:200]})
        environ["wsgi.input"] = io.BytesIO(raw)
        return None
