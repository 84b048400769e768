"""Deprecations (docs/releases.md, "Deprecations"): an operation marked with
`openapi.deprecated` is `deprecated` in the document, with its sunset, and every answer of it,
refusals included, carries `Deprecation`, `Sunset` and `Link` (rel="deprecation"), added by
the front door on the router's reading of the request, whatever the spelling of its path."""

from __future__ import annotations

import json
from datetime import date

import pytest
from flask import Flask
from flask.views import MethodView
from flask_smorest import Api

from service.config import Settings
from service.web.app import pipeline
from service.web.auth import Authenticator
from service.web.fairshare import FairShare
from service.web.frontdoor import FrontDoor, Router
from service.web.openapi import Deprecation, deprecated, new_blueprint
from service.web.quotas import Quotas

SINCE, SUNSET = date(2026, 12, 6), date(2027, 6, 30)
LINK = "/docs/releases.md#deprecations"


def _app(auth: str = "off") -> Flask:
    """A service-shaped app: one resource with an operation deprecated, one not, behind the
    front door as `create_app` composes it."""
    app = Flask(__name__)
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    api = Api(app)
    blp = new_blueprint("old", "A resource on its way out")

    @blp.route("/<variant>/old")
    class Old(MethodView):
        @deprecated(blp, SINCE, SUNSET, LINK)
        @blp.response(200)
        def post(self, variant: str) -> dict:
            """Still answered until the sunset."""
            return {"variant": variant}

        @blp.response(200)
        def get(self, variant: str) -> dict:
            """Not deprecated."""
            return {"variant": variant}

    api.register_blueprint(blp)
    settings = Settings(auth=auth, api_keys=json.dumps({"tenants": []}) if auth == "keys"
                        else None)
    router = Router(app)
    app.wsgi_app, _ = pipeline(  # type: ignore[method-assign]
        lambda inner: FrontDoor(inner, router, Authenticator(settings), Quotas(settings),
                                FairShare(settings.in_flight_per_worker,
                                          settings.tenant_in_flight_wait)),
        app=app.wsgi_app)
    app.extensions["test_api"] = api
    return app


def test_every_answer_of_a_deprecated_operation_announces_its_deprecation_and_sunset():
    client = _app().test_client()
    for path in ("/v1/variants/yahtzee/old", "/v1/variants/yahtzee/%6Fld"):
        r = client.post(path)
        assert r.status_code == 200, path
        assert r.headers["Deprecation"] == "@1796515200"  # 2026-12-06T00:00:00Z
        assert r.headers["Sunset"] == "Wed, 30 Jun 2027 00:00:00 GMT"
        assert r.headers["Link"] == f'<{LINK}>; rel="deprecation"'
    same = client.get("/v1/variants/yahtzee/old")  # the same path, another operation
    assert same.status_code == 200
    assert "Deprecation" not in same.headers and "Sunset" not in same.headers


def test_a_refused_request_to_a_deprecated_operation_is_told_too():
    r = _app(auth="keys").test_client().post("/v1/variants/yahtzee/old")
    assert r.status_code == 401
    assert r.headers["Sunset"] == "Wed, 30 Jun 2027 00:00:00 GMT"


def test_the_document_marks_it_deprecated_with_its_sunset():
    spec = _app().extensions["test_api"].spec.to_dict()
    item = spec["paths"]["/v1/variants/{variant}/old"]
    assert item["post"]["deprecated"] is True
    assert item["post"]["x-sunset"] == "2027-06-30"
    assert "deprecated" not in item["get"]


def test_a_sunset_comes_after_the_deprecation():
    with pytest.raises(ValueError):
        Deprecation(SUNSET, SINCE, LINK)


def test_nothing_the_service_answers_today_is_deprecated():
    """The current contract deprecates nothing (the CHANGELOG would say so): when it does,
    this test names what, and the tests above say how it is announced."""
    from service.web.app import create_app

    router = Router(create_app(Settings()))
    assert router.deprecations == {}
