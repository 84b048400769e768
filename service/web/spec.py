"""Print the OpenAPI document the code generates: `python -m service.web.spec`.

The committed copy is `openapi/openapi.json`; a test fails when the two disagree
(`make spec` rewrites it).
"""

from __future__ import annotations

from typing import Any


def generate() -> dict[str, Any]:
    """The OpenAPI document of a default app."""
    from ..config import Settings
    from .app import create_app
    from .openapi import contract_document

    app = create_app(Settings())
    with app.app_context():
        return contract_document(app.extensions["openapi"])


def render() -> str:
    """The document as the committed file holds it: the bytes /openapi.json serves
    (`openapi.document_bytes`)."""
    from .openapi import document_bytes

    return document_bytes(generate()).decode()


if __name__ == "__main__":
    print(render(), end="")
