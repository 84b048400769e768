"""The service with layers taken off, for `bench_http.py --layers`: what each layer of the
WSGI stack (`service.web.app.create_app`: ops, the front door, the scoring fast path, Flask)
costs under gunicorn, and what the layers cost when the scoring itself costs nothing.

- `scoring_only()`: the scoring fast path over Flask, without the ops layer (request ids,
  CORS, metrics) and the front door (caller, quota, fair share);
- `no_ops()`: the front door and the scoring fast path, without the ops layer;
- `constant_scoring()`: the whole stack, but each scoring path answers the bytes of its
  first answer again (the body is still read and parsed, the scoring and the dump are
  skipped): the layers' own cost, with scoring free.
"""

from __future__ import annotations

from typing import Any

import orjson
from flask import Flask

from service.web.app import create_app
from service.web.fast import ScoringFastPath
from service.web.frontdoor import FrontDoor
from service.web.ops import OpsMiddleware


def _layers(app: Flask) -> tuple[OpsMiddleware, FrontDoor, ScoringFastPath]:
    ops, door, fast = app.extensions["pipeline"]
    if not (isinstance(ops, OpsMiddleware) and isinstance(door, FrontDoor)
            and isinstance(fast, ScoringFastPath)):
        raise RuntimeError("create_app's WSGI layers changed: update bench/layered_app.py")
    return ops, door, fast


def scoring_only() -> Flask:
    """The scoring fast path over Flask, no ops layer and no front door."""
    app = create_app()
    app.wsgi_app = _layers(app)[2].__call__  # type: ignore[method-assign]
    return app


def no_ops() -> Flask:
    """The front door and the scoring fast path over Flask, no ops layer."""
    app = create_app()
    app.wsgi_app = _layers(app)[1].__call__  # type: ignore[method-assign]
    return app


def constant_scoring() -> Flask:
    """Every layer, with each scoring path answering its first answer's bytes again."""
    app = create_app()
    fast = _layers(app)[2]
    answer = fast._answer
    answers: dict[str, bytes | None] = {}

    def remembered(environ: dict[str, Any], variant: str, endpoint: Any) -> bytes | None:
        path = environ.get("PATH_INFO", "")
        if path not in answers:
            answers[path] = answer(environ, variant, endpoint)
            return answers[path]
        size = int(environ.get("CONTENT_LENGTH") or 0)
        orjson.loads(environ["wsgi.input"].read(size))  # as the raw app does
        return answers[path]

    fast._answer = remembered  # type: ignore[method-assign]
    return app
