"""The OpenAPI contract: the committed spec matches the code, and the API keeps to it.

Schemathesis generates requests from the spec, valid and invalid (negative data), and checks
that no response is a server error, that every response matches its documented schema, that
invalid data is rejected and valid data accepted (Schemathesis's own checks, as they come: a
rule no schema can state is a 409, which valid data may get).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from service.config import Settings
from service.domain.variants import ALL_BOX_IDS, VARIANT_IDS, VARIANTS
from service.web.app import create_app
from service.web.spec import render
from service.web.variant_spec import variant_facts

SPEC = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_committed_spec_matches_the_code():
    assert SPEC.read_text() == render(), "openapi/openapi.json is stale: run `make spec`"


def test_spec_is_openapi_31_with_constraints():
    spec = json.loads(SPEC.read_text())
    assert spec["openapi"].startswith("3.1")
    schemas = spec["components"]["schemas"]
    dice = schemas["HandScoreRequest_yahtzee"]["properties"]["dice"]
    assert dice["minItems"] == 5 and dice["maxItems"] == 5
    assert dice["items"]["minimum"] == 1 and dice["items"]["maximum"] == 6
    assert schemas["HandScoreRequest_maxi_yatzy"]["properties"]["dice"]["minItems"] == 6


def test_one_path_per_variant_narrowed_to_its_rules():
    """A request valid for the schema names only the variant's options, boxes and fields."""
    spec = json.loads(SPEC.read_text())
    schemas = spec["components"]["schemas"]
    generic = spec["paths"]["/v1/variants/{variant}/hands/score"]["post"]
    assert generic["operationId"] == "scoreHand"  # the templated path, for every variant
    for vid in VARIANT_IDS:
        op = spec["paths"][f"/v1/variants/{vid}/hands/score"]["post"]
        assert op["operationId"] == f"scoreHand_{vid}"
        boxes = schemas[f"Scorecard_{vid}"]["properties"]["boxes"]["properties"]
        assert set(boxes) >= set(VARIANTS[vid].box_ids)
        request = schemas[f"HandScoreRequest_{vid}"]["properties"]
        assert (request["em_baixo"].get("enum") == [False]) == (vid != "bozo")
        options = set(schemas.get(f"Options_{vid}", {}).get("properties", {}))
        assert options == {o.name for o in VARIANTS[vid].options}
    assert "double_five_of_a_kind" not in schemas["Scorecard_yahtzee"]["properties"]["boxes"][
        "properties"]
    assert "five_of_a_kind_bonuses" in schemas["Scorecard_kniffel"]["properties"]
    assert schemas["Scorecard_yatzy"]["properties"]["five_of_a_kind_bonuses"]["enum"] == [0]
    assert "saved_throws" in schemas["Scorecard_maxi_yatzy"]["properties"]
    assert "columns" not in schemas["Scorecard_generala"]["properties"]
    assert "if" in schemas["HandScoreRequest_yahtzee"]  # columns option: the columns form


def test_every_field_that_names_a_box_is_narrowed_per_variant():
    """Requests and answers: a per-variant path names only that variant's boxes; the
    templated path's generic schemas name every variant's."""
    spec = json.loads(SPEC.read_text())
    schemas = spec["components"]["schemas"]
    generala = set(variant_facts("generala")["boxes"])
    for name in ("TurnRequest", "ScoreMove", "Placement"):
        generic = [n for n in _box_fields(schemas[name])]
        assert generic and all(set(e) - {None} == set(ALL_BOX_IDS) for e in generic), name
        narrowed = _box_fields(schemas[f"{name}_generala"])
        assert narrowed and all(set(e) - {None} == generala for e in narrowed), name
    assert "chance" not in generala
    # a recorded game's box is reported when the table lacks it (code unknown_box), not
    # refused: no enum to send negative data against
    assert "enum" not in schemas["RecordedTurn"]["properties"]["box"]
    assert "unknown_box" in schemas["RecordedTurn"]["properties"]["box"]["description"]


def _box_fields(schema) -> list[list]:
    """The enums of a schema's fields that name boxes (one of them is every box id)."""
    out, todo = [], [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            enum = node.get("enum")
            if isinstance(enum, list) and ({"ones", "straight"} & set(enum)) and len(enum) > 2:
                out.append(enum)
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return out


def _request_validator(spec: dict, vid: str, path: str):
    import jsonschema

    op = spec["paths"][f"/v1/variants/{vid}/{path}"]["post"]
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    return jsonschema.Draft202012Validator({**schema, "components": spec["components"]})


def test_game_sheets_and_every_players_sheet_are_narrowed_too():
    """The scorecards of games/turn (and its answer) name only the variant's boxes and
    fields, and every player's scorecard has the form `options.columns` gives it."""
    spec = json.loads(SPEC.read_text())
    schemas = spec["components"]["schemas"]
    assert "columns" not in schemas["Scorecard_generala"]["properties"]
    assert "double_five_of_a_kind" not in schemas["Scorecard_yahtzee"]["properties"][
        "boxes"]["properties"]
    turn = _request_validator(spec, "general_11", "games/turn")
    play = {"dice": [1, 1, 1, 1, 1], "throw": 1, "box": "ones"}
    assert turn.is_valid({**play, "scorecard": {"boxes": {"twos": 4}}})
    assert not turn.is_valid({**play, "scorecard": {"columns": [{"boxes": {}}] * 4}})
    columns = {"columns": [{"boxes": {}}] * 4}
    check = _request_validator(spec, "kniffel", "games/win-probability")
    plain = {"scorecard": {"boxes": {"ones": 3}}}
    in_columns = {"scorecard": columns}
    assert check.is_valid({"players": [plain]})
    assert not check.is_valid({"players": [plain, in_columns]})
    assert check.is_valid({"options": {"columns": True}, "players": [in_columns]})
    assert not check.is_valid({"options": {"columns": True}, "players": [plain]})


def test_games_analyze_takes_the_recorded_game_of_games_validate():
    """One recorded-game shape: games/analyze's request is games/validate's `Game`, per
    variant, and the analysis's own request components are gone."""
    spec = json.loads(SPEC.read_text())
    schemas = spec["components"]["schemas"]
    for vid in VARIANT_IDS:
        def body(path, v=vid):
            op = spec["paths"][f"/v1/variants/{v}/{path}"]["post"]
            return op["requestBody"]["content"]["application/json"]["schema"]
        assert body("games/analyze") == body("games/validate")
    for gone in ("GameAnalyzeRequest", "PlayerGame", "Turn", "Throw"):
        assert not [n for n in schemas if n == gone or n.startswith(f"{gone}_")], gone
    game = _request_validator(spec, "generala", "games/analyze")
    assert game.is_valid({"players": [{"turns": [{"throws": [[1, 2, 3, 4, 5]],
                                                  "box": "straight", "scratch": True,
                                                  "points": 0}], "total": 0}]})
    assert not game.is_valid({"players": [{"turns": [{"throws": [{"dice": [1, 2, 3, 4, 5]}],
                                                      "box": "straight"}]}]})


@pytest.mark.parametrize("vid", VARIANT_IDS)
def test_upper_bonus_threshold_is_bounded_by_what_the_section_can_reach(client, vid):
    """The spec's bound is the server's: the upper section's maximum is accepted, one more
    is refused."""
    spec = json.loads(SPEC.read_text())
    top = spec["components"]["schemas"][f"UpperBonus_{vid}"]["properties"]["threshold"][
        "maximum"]
    variant = VARIANTS[vid]
    assert top == sum(b.face * variant.dice for b in variant.boxes if b.section == "upper")
    url = f"/v1/variants/{vid}/scorecards/score"
    for threshold, status in ((top, 200), (top + 1, 409)):
        r = client.post(url, json={"rules": {"upper_bonus": {"threshold": threshold,
                                                             "amount": 10}}})
        assert r.status_code == status, r.get_json()


def test_boxes_an_option_adds_are_named_only_with_it_whatever_the_other_options(client):
    """Doble Generala's box exists exactly when doble_generala is on, Obligada or not: the
    spec's rule comes from every combination of options, as the server applies them."""
    spec = json.loads(SPEC.read_text())
    check = _request_validator(spec, "generala_spanish", "hands/validate")
    rules = {"remove_boxes": ["double_five_of_a_kind"]}
    for options, known in (({"obligada": True, "doble_generala": True}, True),
                           ({"doble_generala": True}, True), ({"obligada": True}, False),
                           ({}, False)):
        body = {"dice": [1, 2, 3, 4, 5], "options": options, "rules": rules}
        assert check.is_valid(body) == known, options
        r = client.post("/v1/variants/generala_spanish/hands/validate", json=body)
        assert (r.status_code == 200) == known, (options, r.get_json())


@pytest.mark.parametrize(("answer", "field", "union", "members"), [
    ("MoveSuggestion", "best", "Move", {"keep": "KeepMove", "score": "ScoreMove"}),
    ("Decision", "move", "PlayedMove", {"keep": "PlayedKeep", "score": "PlayedScore"}),
    ("WinMove", "max_win", "MoveChance", {"keep": "KeepChance", "score": "PlacementChance"}),
])
def test_every_move_is_a_union_discriminated_by_its_action(answer, field, union, members):
    """A suggested move, a decision's move and a move with its chances: each a union of a
    keep and a placement whose `action` is a literal, the mapping naming its own members,
    on the templated paths and (narrowed) on each variant's."""
    schemas = json.loads(SPEC.read_text())["components"]["schemas"]
    assert schemas[answer]["properties"][field]["$ref"].endswith(f"/{union}")
    for suffix in ("", "_yahtzee", "_bozo"):
        if f"{union}{suffix}" not in schemas:
            continue
        node = schemas[f"{union}{suffix}"]
        mapping = node["discriminator"]["mapping"]
        assert node["discriminator"]["propertyName"] == "action"
        assert [r["$ref"] for r in node["oneOf"]] == list(mapping.values())
        for action, member in members.items():
            assert mapping[action].rsplit("/", 1)[1] in (member, f"{member}{suffix}")
            target = schemas[mapping[action].rsplit("/", 1)[1]]
            assert target["properties"]["action"]["enum"] == [action]
            assert "action" in target["required"]


def undescribed(schema: dict, path: str) -> list[str]:
    """The fields of a schema, nested objects, list items and maps included, that have no
    description (the constraint branches of anyOf, if/then/else and not restate fields
    described where they are defined)."""
    out = []
    for field, prop in schema.get("properties", {}).items():
        if not isinstance(prop, dict):
            continue
        if not ("description" in prop or "$ref" in prop or "anyOf" in prop):
            out.append(f"{path}.{field}")
        out += undescribed(prop, f"{path}.{field}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            out += undescribed(schema[key], f"{path}[{key}]")
    return out


def test_every_schema_is_used_and_every_field_described():
    spec = json.loads(SPEC.read_text())
    text = SPEC.read_text()
    missing = []
    for name, schema in spec["components"]["schemas"].items():
        assert f"#/components/schemas/{name}" in text, f"{name} is never used"
        missing += undescribed(schema, name)
    assert not missing, f"{len(missing)} fields without a description: {missing[:10]}"


def test_spec_and_docs_are_served(client):
    assert client.get("/openapi.json").get_json()["openapi"].startswith("3.1")
    assert client.get("/docs").status_code == 200


schema = schemathesis.openapi.from_wsgi("/openapi.json",
                                        create_app(Settings(advisor_builds="inline")))
# A body over the size limit is rejected with 413, which counts as rejecting bad data.
schema.config.checks.negative_data_rejection.expected_statuses.append("413")

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, negative_data_rejection,
          positive_data_acceptance]
#: Every operation, one test each, named by method and path (so that pytest-xdist, which
#: schedules tests by name, runs every one of them)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_api_keeps_its_contract(operation):
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=4, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case):
            # Schemathesis's in-process transport sends requests' default
            # `Accept-Encoding: gzip, deflate` and does not decode what it asked for: it asks
            # for the plain representation (the live suites decode gzip as clients do)
            case.call_and_validate(checks=CHECKS, headers={"Accept-Encoding": "identity"})

        try:
            check()
        except Unsatisfiable:  # no invalid input exists (an operation without parameters)
            assert mode is GenerationMode.NEGATIVE


def test_errors_and_the_default_error_response_are_problem_documents(client):
    """`ProblemApi` makes problem documents the error format through flask-smorest's public
    hooks only (`ERROR_SCHEMA`, `handle_http_exception`; tests/test_public_apis.py holds it
    to overriding no private method): the served document has the per-variant paths, a
    routing error is a problem document, and so is the default error response."""
    served = client.get("/openapi.json").get_json()
    assert "/v1/variants/yahtzee/hands/score" in served["paths"]
    resp = client.get("/v1/no-such-thing")
    assert resp.status_code == 404 and resp.mimetype == "application/problem+json"
    default = served["components"]["responses"]["DEFAULT_ERROR"]["content"]
    assert list(default) == ["application/problem+json"]


def test_the_served_document_is_the_committed_file_byte_for_byte_and_compressed():
    """A client generated from /openapi.json or from openapi/openapi.json is the same: same
    bytes, same key order. A client that accepts gzip gets the same document in about 4 % of
    the bytes, under an ETag of its own."""
    client = create_app(Settings()).test_client()
    plain = client.get("/openapi.json")
    assert plain.data == SPEC.read_bytes()
    assert "Content-Encoding" not in plain.headers
    zipped = client.get("/openapi.json", headers={"Accept-Encoding": "br, gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.data) == plain.data
    assert len(zipped.data) < len(plain.data) / 10
    print(f"/openapi.json: {len(plain.data):,} bytes, {len(zipped.data):,} gzipped")
    assert all("Accept-Encoding" in r.headers["Vary"] for r in (plain, zipped))
    assert zipped.headers["ETag"] != plain.headers["ETag"]
    again = client.get("/openapi.json", headers={"Accept-Encoding": "gzip",
                                                 "If-None-Match": zipped.headers["ETag"]})
    assert again.status_code == 304 and not again.data
    refused = client.get("/openapi.json", headers={"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers and refused.data == plain.data


def _discriminated(node, where="") -> list[tuple[str, dict]]:
    """Every schema with a discriminator mapping in a document, with where it is."""
    found = []
    if isinstance(node, dict):
        if isinstance(node.get("discriminator"), dict) and "mapping" in node["discriminator"]:
            found.append((where, node))
        for key, value in node.items():
            found += _discriminated(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _discriminated(value, f"{where}/{i}")
    return found


def test_every_discriminator_maps_to_its_own_union():
    """A union's tags map to the very schemas it is made of (per variant, the variant's own):
    a client generator types the tag from the mapping, so `best.action === "keep"` narrows to
    the variant's keep."""
    doc = json.loads(SPEC.read_text())
    unions = _discriminated(doc)
    assert len(unions) >= 39  # a move (keep or score) in each of its answers, per variant too
    for where, node in unions:
        members = {member["$ref"] for member in node.get("oneOf", node.get("anyOf", []))}
        assert set(node["discriminator"]["mapping"].values()) <= members, where
