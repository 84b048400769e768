"""Schemathesis against the live service (gunicorn, gevent workers, background builds, API
keys required: AUTH=keys), with every check schemathesis has, as they come, on valid and
invalid data for every operation, sending a tenant's key (a rule no schema can state is
answered 409, which valid data may get; a request whose table of new rules is being built is
answered 202 or, the build queue full, 429, both with Retry-After). And the same operations
without a key: every one answers 401 as its documented problem, never a 5xx.

(Cases come from each operation's hypothesis strategy: schemathesis's pytest fixture loader
does not work with pytest 9, and the schema must be read from the running server.)
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.generation.modes import GenerationMode

from service.web.auth import hash_key, new_key

from .server import Server

load_all_checks()
ALL_CHECKS = CHECKS.get_all()
assert "positive_data_acceptance" in {getattr(c, "__name__", "") for c in ALL_CHECKS}


KEY_ID, KEY = new_key()
TENANTS = {"tenants": [{"name": "fuzzer", "keys": [{"id": KEY_ID, "hash": hash_key(KEY)}],
                        "origins": ["*"],
                        "quotas": {c: "unlimited" for c in ("scoring", "advice", "analysis",
                                                            "builds")}}]}
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def live_schema(tables):
    env = {"AUTH": "keys", "API_KEYS": json.dumps(TENANTS)}
    with Server(table_dir=tables, env=env) as srv:
        schema = schemathesis.openapi.from_url(srv.url("/openapi.json"))
        # A body over the size limit (MAX_BODY_BYTES, which no schema states) is rejected
        # with 413, which counts as rejecting bad data.
        schema.config.checks.negative_data_rejection.expected_statuses.append("413")
        yield schema


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_live_api_keeps_its_contract(live_schema, mode):
    operations = [result.ok() for result in live_schema.get_all_operations()]
    assert len(operations) >= 6
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=15, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            response = case.call_and_validate(checks=ALL_CHECKS, headers=AUTH, timeout=10)
            if response.status_code in (202, 429):
                headers = {k.lower(): v for k, v in response.headers.items()}
                value = headers["retry-after"]
                value = value[0] if isinstance(value, list) else value
                assert int(value) >= 1

        try:
            check()
        except Unsatisfiable:  # no invalid input exists (an operation without parameters)
            assert mode is GenerationMode.NEGATIVE


#: What holds of an answer whatever the request: no 5xx, a documented status, content type,
#: headers and body.
RESPONSE_CHECKS = [c for c in ALL_CHECKS if getattr(c, "__name__", "") in (
    "not_a_server_error", "status_code_conformance", "content_type_conformance",
    "response_headers_conformance", "response_schema_conformance")]


def test_without_a_key_every_operation_answers_401(live_schema):
    assert len(RESPONSE_CHECKS) == 5
    operations = [result.ok() for result in live_schema.get_all_operations()]
    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
        @settings(max_examples=2, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            response = case.call(timeout=10)
            assert response.status_code == 401, (case.operation.label, response.status_code)
            headers = {k.lower(): v[0] if isinstance(v, list) else v
                       for k, v in response.headers.items()}
            assert headers["content-type"] == "application/problem+json"
            assert headers["www-authenticate"].startswith("Bearer ")
            case.validate_response(response, checks=RESPONSE_CHECKS)

        check()
