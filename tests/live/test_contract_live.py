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
#: Seconds a client waits for an answer here (see `check`).
LONG_ANSWER = 30


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
            # 30 s: a win-probability or play-to-win answer under new rules with dice in
            # hand computes the distributions from every state the turn leads to in the
            # request, 5-7 s the first time a worker meets the position (more on a
            # loaded machine: README, "Who is likely to win")
            response = case.call_and_validate(checks=ALL_CHECKS, headers=AUTH,
                                              timeout=LONG_ANSWER)
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


def test_the_stateful_phase_follows_the_links_of_a_game(live_schema):
    """Schemathesis's stateful phase on the live service: scenarios that start anywhere and
    follow the document's links (the sheet games/turn answers feeds the next games/turn,
    moves/suggest and scorecards/score), every check on every step, with the tenant's key.
    It follows them: some scenarios chain a turn into the next, with its sheet."""
    # One variant's operations, so that scenarios meet a turn's answer often enough
    machine = live_schema.include(path_regex="^/v1/variants/yahtzee/").as_state_machine()
    answered: list[object] = []  # the scorecards games/turn answered
    followed: list[str] = []  # operations sent one of them back

    class Game(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case):
            return {"headers": AUTH, "timeout": 10}

        def before_call(self, case):
            body = case.body if isinstance(case.body, dict) else {}
            if body.get("scorecard") is not None and body["scorecard"] in answered:
                followed.append(case.operation.label)

        def after_call(self, response, case):
            if case.operation.label.endswith("/games/turn") and response.status_code == 200:
                answered.append(response.json()["scorecard"])

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=ALL_CHECKS, headers=AUTH,
                                   transport_kwargs={"headers": AUTH, "timeout": 10})

    settings_ = settings(max_examples=60, stateful_step_count=5, deadline=None, derandomize=True,
                         database=None, suppress_health_check=list(HealthCheck))
    Game.run(settings=settings_)
    print(f"{len(answered)} turns answered 200")
    assert followed, "no scenario sent back a sheet games/turn answered"
    print(f"{len(followed)} requests followed a link: {sorted(set(followed))}")
