"""The baseline of the HTTP benchmark: a bare Flask app answering constant JSON bodies.

By default every path answers a small constant body. With BARE_BODIES naming a JSON file of
{path: body}, a path answers that body instead: the benchmark gives it the service's own
answer to the benchmark request, so both apps send the same bytes and the comparison
measures the service's work, not the size of its answer.
"""

from __future__ import annotations

import json
import os

from flask import Flask, Response

BODY = '{"box":"chance","score":21,"open":true,"legal":true}'


def create_app() -> Flask:
    """A Flask app that answers every POST and GET with a constant JSON body."""
    app = Flask(__name__)
    bodies: dict[str, str] = {}
    if os.environ.get("BARE_BODIES"):
        with open(os.environ["BARE_BODIES"]) as f:
            bodies = json.load(f)

    @app.route("/<path:_anything>", methods=["GET", "POST"])
    def constant(_anything: str) -> Response:
        return Response(bodies.get("/" + _anything, BODY), mimetype="application/json")

    return app


def create_raw_app():
    """The raw baseline: a WSGI callable with no framework that reads the request body, parses
    it with orjson and answers the body BARE_BODIES names for the path (the service's own
    answer to the benchmark request), so only the service's own work differs."""
    import orjson

    bodies: dict[str, bytes] = {}
    if os.environ.get("BARE_BODIES"):
        with open(os.environ["BARE_BODIES"]) as f:
            bodies = {path: body.encode() for path, body in json.load(f).items()}
    default = BODY.encode()

    def app(environ, start_response):
        size = int(environ.get("CONTENT_LENGTH") or 0)
        if size:
            orjson.loads(environ["wsgi.input"].read(size))
        body = bodies.get(environ.get("PATH_INFO", ""), default)
        start_response("200 OK", [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(body)))])
        return [body]

    return app
