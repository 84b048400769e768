"""One status rule between 422 and 409 (README, "Errors"; docs/problems.md), held on
generated bodies: a 422 `/problems/invalid-request` only for a body that breaks the schema
every variant shares (the templated path's); a body that fits it is never a 422, and one that
fits it but breaks the variant's own path's narrower schema (another variant's box or option,
six dice for five), or a rule no schema states, is a 409. A body that breaks the shared
schema is refused either way (a 422, or the 409 of a rule the service checks first, such as
a batch's number of tables of rules, or a box named that is no box at all, which gets the
409 another variant's box gets, with the box it likely means).

Why not a 422 for the variant's schema too: a request to `/v1/variants/yahtzee/...` matches
two operations of the document, the templated one and the variant's, and a body valid for
the templated one is valid for an operation the client may have called. Schemathesis's own
checks say the same: valid data rejected with a 422 fails `positive_data_acceptance`,
invalid data answered 409 passes `negative_data_rejection`."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator
from schemathesis.generation.modes import GenerationMode

from service.config import Settings
from service.web.app import create_app
from service.web.body import JSON

APP = create_app(Settings(advisor_builds="inline"))
DOCUMENT = APP.test_client().get("/openapi.json").get_json()
schema = schemathesis.openapi.from_wsgi("/openapi.json", APP)
#: The operations that answer from the rules alone (the advisor's build tables for random
#: house rules: the examples below cover them)
RULES_ONLY = ("/hands/", "/scorecards/", "/games/turn", "/games/validate", "/rules")
OPERATIONS = [op for op in (r.ok() for r in schema.get_all_operations())
              if "{variant}" in op.path and op.method.upper() == "POST"
              and any(part in op.path for part in RULES_ONLY)]
#: What a body that fits the schema every variant shares may be answered, and its types
FITS_STATUSES = {200, 409}
CONFLICTS = {"/problems/inconsistent-request", "/problems/illegal-move"}


def _validator(path: str) -> Draft202012Validator:
    body = DOCUMENT["paths"][path]["post"]["requestBody"]["content"][JSON]["schema"]
    return Draft202012Validator({**body, "components": DOCUMENT["components"]})


def test_there_are_operations_to_hold():
    assert len(OPERATIONS) >= 8, [op.label for op in OPERATIONS]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_422_for_a_body_that_breaks_the_shared_schema_and_409_for_the_rest(operation):
    generic = _validator(operation.path)
    narrowed: dict[str, Draft202012Validator] = {}
    seen = {"invalid": 0, "variant's schema": 0, "valid": 0}

    def check(case, mode: GenerationMode) -> None:
        path = operation.path.replace("{variant}", str(case.path_parameters["variant"]))
        response = case.call(headers={"Accept-Encoding": "identity"})
        status, text = response.status_code, response.text[:500]
        if path not in DOCUMENT["paths"]:  # a variant the service does not have
            assert status == 404, (path, status, text)
            return
        if path not in narrowed:
            narrowed[path] = _validator(path)
        if mode is GenerationMode.NEGATIVE and generic.is_valid(case.body):
            assert status < 500, (path, status, text)  # something else than the body broken
            return
        if not generic.is_valid(case.body):
            seen["invalid"] += 1
            assert status in (409, 413, 422), (path, case.body, status, text)
        elif not narrowed[path].is_valid(case.body):
            seen["variant's schema"] += 1
            assert status == 409, (path, case.body, status, text)
            assert response.json()["type"] in CONFLICTS
        else:
            seen["valid"] += 1
            assert status in FITS_STATUSES, (path, case.body, status, text)
            if status == 409:
                assert response.json()["type"] in CONFLICTS

    def runner(mode: GenerationMode):
        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=12, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def run(case) -> None:
            check(case, mode)

        return run

    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        runner(mode)()
    assert seen["invalid"] and seen["variant's schema"] + seen["valid"], seen


@pytest.mark.parametrize(("path", "body", "status", "pointer"), [
    # the shape every variant shares
    ("yahtzee/hands/score", {"dice": [1, 2, 3, 4, 9]}, 422, "/dice/4"),
    ("yahtzee/moves/suggest", {"dice": [1, 2, 3, 4, 5], "throw": "first"}, 422, "/throw"),
    # another variant's box or option, six dice for five: the variant's own schema, a 409
    ("yahtzee/moves/suggest", {"dice": [1, 2, 3, 4, 5], "throw": 1,
                               "scorecard": {"boxes": {"one_pair": 0}}},
     409, "/scorecard/boxes/one_pair"),
    ("yahtzee/hands/score", {"dice": [1, 2, 3, 4, 5], "options": {"obligada": True}},
     409, "/options/obligada"),
    ("generala/games/turn", {"dice": [1, 2, 3, 4, 5, 6], "throw": 1, "box": "straight"},
     409, "/dice"),
    # a rule no schema states
    ("generala/games/turn", {"dice": [1, 2, 3, 4, 5], "throw": 1, "box": "straight",
                             "scorecard": {"boxes": {"straight": 20}}}, 409, "/box"),
    ("yahtzee/positions/value", {"scorecard": {"boxes": {"five_of_a_kind": 0},
                                               "five_of_a_kind_bonuses": 1}}, 409,
     "/scorecard/five_of_a_kind_bonuses"),
])
def test_examples_of_each_side_of_the_rule(path, body, status, pointer):
    r = APP.test_client().post(f"/v1/variants/{path}", json=body)
    assert r.status_code == status, r.get_json()
    assert pointer in [e["pointer"] for e in r.get_json()["errors"]], r.get_json()
