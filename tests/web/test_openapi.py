"""The OpenAPI contract: the committed spec matches the code, and the API keeps to it.

Schemathesis generates requests from the spec, valid and invalid (negative data), and checks
that no response is a server error and that every response matches its documented schema.
"""

from __future__ import annotations

import json
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from service.config import Settings
from service.web.app import create_app
from service.web.spec import render

SPEC = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_committed_spec_matches_the_code():
    assert SPEC.read_text() == render(), "openapi/openapi.json is stale: run `make spec`"


def test_spec_is_openapi_31_with_constraints():
    spec = json.loads(SPEC.read_text())
    assert spec["openapi"].startswith("3.1")
    variant_param = spec["paths"]["/v1/variants/{variant}"]["parameters"][0]
    assert "yahtzee" in variant_param["schema"]["enum"]
    dice = spec["components"]["schemas"]["HandScoreRequest"]["properties"]["dice"]
    assert dice["minItems"] == 5 and dice["maxItems"] == 6
    assert dice["items"]["minimum"] == 1 and dice["items"]["maximum"] == 6


def test_spec_and_docs_are_served(client):
    assert client.get("/openapi.json").get_json()["openapi"].startswith("3.1")
    assert client.get("/docs").status_code == 200


schema = schemathesis.openapi.from_wsgi("/openapi.json",
                                        create_app(Settings(advisor_builds="inline")))
# A body over the size limit is rejected with 413, which counts as rejecting bad data.
schema.config.checks.negative_data_rejection.expected_statuses.append("413")

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, negative_data_rejection]


@schema.parametrize()
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_api_keeps_its_contract(case):
    case.call_and_validate(checks=CHECKS)
