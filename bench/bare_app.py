"""The baseline of the HTTP benchmark: a bare Flask app returning a constant JSON body."""

from __future__ import annotations

from flask import Flask, Response

BODY = '{"box":"chance","score":21,"open":true,"legal":true}'


def create_app() -> Flask:
    """A Flask app that answers every POST and GET with the same small JSON body."""
    app = Flask(__name__)

    @app.route("/<path:_anything>", methods=["GET", "POST"])
    def constant(_anything: str) -> Response:
        return Response(BODY, mimetype="application/json")

    return app
