"""Pages for people: the landing page, the API docs (Swagger UI), the playground.

Everything is served from the service's own files: Swagger UI from the pinned
`flask-swagger-ui` package's copy of swagger-ui-dist, the landing page and the playground from
`static/`. No page loads anything from another host, so they work without internet. `/`
answers browsers with the landing page and API clients (JSON) with an index of links.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import flask_swagger_ui
from flask import Blueprint, Response, current_app, request, send_from_directory

from .. import __version__
from .openapi import contract_document, document_bytes
from .variant_spec import templated_only

pages = Blueprint("pages", __name__)

#: Swagger UI's files (swagger-ui-dist) as the pinned package ships them.
SWAGGER_UI_DIR = Path(flask_swagger_ui.__file__).resolve().parent / "dist"
STATIC_DIR = Path(__file__).resolve().parent / "static"

#: The links of the JSON index (`GET /` with Accept: application/json).
LINKS = {
    "variants": {"href": "/v1/variants", "title": "Every variant's rules"},
    "openapi": {"href": "/openapi.json", "title": "The OpenAPI 3.1 document"},
    "docs": {"href": "/docs", "title": "Interactive API documentation (Swagger UI)"},
    "playground": {"href": "/playground", "title": "Play a game against the API in a browser"},
    "health": {"href": "/healthz", "title": "Liveness"},
    "ready": {"href": "/readyz", "title": "Readiness (advisor tables loaded)"},
}

DOCS_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API docs · Yahtzee family scoring service</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/static/swagger-ui.css">
<link rel="stylesheet" href="/static/docs.css">
<link rel="icon" href="/favicon.ico">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script src="/static/docs-init.js"></script>
</body>
</html>
"""


def _wants_html() -> bool:
    best = request.accept_mimetypes.best_match(["application/json", "text/html"])
    return best == "text/html" and request.accept_mimetypes[best] > \
        request.accept_mimetypes["application/json"]


@pages.get("/")
def index() -> Response:
    """Browsers get the landing page; API clients a JSON index of links."""
    if _wants_html():
        return send_from_directory(STATIC_DIR, "index.html", max_age=300)
    body = {"service": "Yahtzee family scoring service", "version": __version__,
            "links": LINKS}
    response = current_app.json.response(body)
    response.headers["Vary"] = "Accept"
    return response


@pages.get("/docs")
def docs() -> Response:
    """Swagger UI on the service's own OpenAPI document."""
    return Response(DOCS_HTML, mimetype="text/html")


@pages.get("/openapi.json")
def openapi_document() -> Response:
    """The OpenAPI document: the whole contract, per-variant paths included."""
    return _document(docs=False)


@pages.get("/docs/openapi.json")
def docs_document() -> Response:
    """The document the docs page shows: the templated operations, one per endpoint with
    the variant as a parameter (`variant_spec.templated_only`)."""
    return _document(docs=True)


def _document(docs: bool) -> Response:
    """One of the two documents, made once per app (`openapi.contract_document`, as
    `openapi.document_bytes` writes it: the committed file's bytes), with an ETag (304 to a
    client that has it), gzip-compressed for a client that accepts it (2.7 MB, about 5 %
    of it compressed)."""
    made = current_app.extensions.setdefault("openapi_documents", {})
    bodies = made.get(docs)
    if bodies is None:
        spec = contract_document(current_app.extensions["openapi"])
        plain = document_bytes(templated_only(spec) if docs else spec)
        bodies = made[docs] = (plain, gzip.compress(plain, 6, mtime=0))
    compressed = request.accept_encodings["gzip"] > 0
    response = current_app.response_class(bodies[compressed], mimetype="application/json")
    response.vary.add("Accept-Encoding")
    if compressed:
        response.content_encoding = "gzip"
    # one tag per representation (RFC 9110 8.8.3): the plain one's, marked for gzip
    response.set_etag(hashlib.sha1(bodies[False]).hexdigest() + ("-gzip" if compressed else ""))
    return response.make_conditional(request)


@pages.get("/docs/static/<path:filename>")
def docs_static(filename: str) -> Response:
    """Swagger UI's own files, from the pinned package."""
    return send_from_directory(SWAGGER_UI_DIR, filename, max_age=86400)


@pages.get("/favicon.ico")
def favicon() -> Response:
    """The service's icon (a die showing five; `scripts/make_favicon.py` draws it), which
    browsers ask for on every page."""
    return send_from_directory(STATIC_DIR, "favicon.ico", max_age=86400,
                               mimetype="image/vnd.microsoft.icon")


@pages.get("/playground")
def playground() -> Response:
    """The playground: a game against the public API, in the browser."""
    return send_from_directory(STATIC_DIR / "playground", "index.html", max_age=300)
