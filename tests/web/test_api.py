"""The HTTP contract: status codes, problem+json errors, batch form, caching headers."""

from __future__ import annotations

import pytest

from service.config import Settings
from service.domain.variants import UPPER_IDS, VARIANT_IDS, VARIANTS
from service.web.app import create_app
from service.web.problems import TYPE_ILLEGAL_MOVE, status_of

from .refusals import refused

PROBLEM = "application/problem+json"
#: assert_problem's status for a request refused by the schema or by a rule of the variant
REJECTED = object()


def assert_problem(resp, status, pointer=None):
    """A problem document with this status (REJECTED: 422 for a body that breaks the
    shape every variant shares, 409 for one that breaks a rule of the variant), whose type
    is answered with that status, naming `pointer`."""
    body = resp.get_json()
    if status is REJECTED:
        assert refused(resp) and body["type"] != TYPE_ILLEGAL_MOVE, body
        status = status_of(body["type"])
    assert resp.status_code == status, resp.get_data(as_text=True)
    assert resp.mimetype == PROBLEM
    assert {"type", "title", "status", "detail"} <= set(body)
    assert body["status"] == status == status_of(body["type"])
    if pointer is not None:
        assert pointer in [e["pointer"] for e in body["errors"]], body
    return body


# --------------------------------------------------------------------------- variants


def test_list_variants(client):
    resp = client.get("/v1/variants")
    assert resp.status_code == 200
    ids = [v["id"] for v in resp.get_json()["variants"]]
    assert ids == list(VARIANT_IDS)
    assert resp.headers["ETag"] and "max-age" in resp.headers["Cache-Control"]


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_variant_definition(client, variant):
    resp = client.get(f"/v1/variants/{variant}")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["id"] == variant
    assert body["turns"] == len(body["boxes"])
    for box in body["boxes"]:
        assert set(box["labels"]) == {"en", "pt", "es", "de", "sv", "fr"}
        assert box["rule"] and box["min_score"] == 0 and box["max_score"] > 0
    for opt in body["options"]:
        assert opt["default"] in opt["choices"]


def test_yahtzee_definition_values(client):
    body = client.get("/v1/variants/yahtzee").get_json()
    assert [b["id"] for b in body["boxes"]] == [
        "ones", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind",
        "four_of_a_kind", "full_house", "small_straight", "large_straight", "five_of_a_kind",
        "chance"]
    assert body["upper_bonus"] == {"threshold": 63, "amount": 35}
    assert body["five_of_a_kind_bonus"]["amount"] == 100
    assert {o["name"]: o["default"] for o in body["options"]}["joker"] == "forced"
    assert (body["dice"], body["throws"], body["turns"]) == (5, 3, 13)


def test_etag_not_modified(client):
    first = client.get("/v1/variants/kniffel")
    again = client.get("/v1/variants/kniffel", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    assert again.headers["ETag"] == first.headers["ETag"]


def test_unknown_variant_is_404(client):
    body = assert_problem(client.get("/v1/variants/poker"), 404)
    assert "poker" in body["detail"]
    assert_problem(client.post("/v1/variants/poker/hands/score", json={"dice": [1] * 5}), 404)


def test_effective_rules_endpoint(client):
    resp = client.post("/v1/variants/general/rules", json={
        "options": {"trinca_quadra": "fixed"},
        "rules": {"boxes": {"full_house": {"value": 30}}, "remove_boxes": ["chance"]}})
    assert resp.status_code == 200
    body = resp.get_json()
    boxes = {b["id"]: b for b in body["definition"]["boxes"]}
    assert boxes["full_house"]["value"] == 30
    assert boxes["three_of_a_kind"]["value"] == 20
    assert "chance" not in boxes
    assert body["rules"]["fingerprint"] == body["definition"]["fingerprint"]
    plain = client.post("/v1/variants/general/rules", json={}).get_json()
    assert plain["rules"]["fingerprint"] != body["rules"]["fingerprint"]


@pytest.mark.parametrize("rules,pointer", [
    ({"boxes": {"villa": {"value": 3}}}, "/rules/boxes/villa"),
    ({"boxes": {"full_house": {"value": -5}}}, "/rules/boxes/full_house/value"),
    ({"boxes": {"chance": {"value": 5}}}, "/rules/boxes/chance/value"),
    ({"upper_bonus": {"threshold": 200, "amount": 35}}, "/rules/upper_bonus/threshold"),
    ({"remove_boxes": ["tower"]}, "/rules/remove_boxes/0"),
    ({"five_of_a_kind_bonus": {"amount": 10}}, "/rules/five_of_a_kind_bonus"),
    ({"colour": "red"}, "/rules/colour"),
])
def test_nonsense_overrides_are_rejected(client, rules, pointer):
    resp = client.post("/v1/variants/general/hands/score",
                       json={"dice": [1, 2, 3, 4, 5], "rules": rules})
    assert_problem(resp, REJECTED, pointer)


# --------------------------------------------------------------------------- hands


def test_validate_reports_problems_with_200(client):
    resp = client.post("/v1/variants/yahtzee/hands/validate", json={"dice": [1, "x", 7, 2.5]})
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["valid"] is False
    pointers = {p["pointer"] for p in body["problems"]}
    assert {"/dice/1", "/dice/2", "/dice/3", "/dice"} <= pointers


def test_validate_a_good_hand(client):
    body = client.post("/v1/variants/yahtzee/hands/validate",
                       json={"dice": [3, 5, 3, 5, 3]}).get_json()
    assert body["valid"] and body["dice"] == [3, 3, 3, 5, 5]
    assert body["counts"] == {"1": 0, "2": 0, "3": 3, "4": 0, "5": 2, "6": 0}
    assert {"pair", "two_pairs", "three_of_a_kind", "full_house"} <= set(body["patterns"])


def test_validate_six_dice_and_saved_throws(client):
    url = "/v1/variants/maxi_yatzy/hands/validate"
    ok = client.post(url, json={"dice": [1, 2, 3, 4, 5, 6], "throw": 4,
                                "scorecard": {"boxes": {"ones": 2},
                                              "saved_throws": 1}}).get_json()
    assert ok["valid"]
    bad = client.post(url, json={"dice": [1, 2, 3, 4, 5, 6], "throw": 4}).get_json()
    assert not bad["valid"] and bad["problems"][0]["pointer"] == "/throw"


def test_score_hand_without_scorecard(client):
    body = client.post("/v1/variants/yahtzee/hands/score",
                       json={"dice": [2, 3, 4, 5, 6]}).get_json()
    scores = {c["box"]: c["score"] for c in body["boxes"]}
    assert scores["large_straight"] == 40 and scores["small_straight"] == 30
    assert all(c["open"] and c["legal"] for c in body["boxes"])
    assert body["rules"]["variant"] == "yahtzee" and len(body["rules"]["fingerprint"]) == 16


def test_score_hand_yahtzee_bonus_and_joker(client):
    body = client.post("/v1/variants/yahtzee/hands/score", json={
        "dice": [6, 6, 6, 6, 6], "throw": 3,
        "scorecard": {"boxes": {"five_of_a_kind": 50, "sixes": 24}}}).get_json()
    cats = {c["box"]: c for c in body["boxes"]}
    assert cats["full_house"] == {**cats["full_house"], "score": 25, "legal": True,
                                  "joker": True, "five_of_a_kind_bonus": 100}
    assert not cats["ones"]["legal"]


def test_score_hand_kniffel_extra(client):
    body = client.post("/v1/variants/kniffel/hands/score", json={
        "dice": [2, 2, 2, 2, 2], "scorecard": {"boxes": {"five_of_a_kind": 50}}}).get_json()
    legal = [c for c in body["boxes"] if c["legal"]]
    assert [(c["box"], c["score"], c["five_of_a_kind_bonus"]) for c in legal] == [("twos", 10, 50)]


def test_generala_servida_wins(client):
    body = client.post("/v1/variants/generala/hands/score",
                       json={"dice": [4, 4, 4, 4, 4], "throw": 1}).get_json()
    assert body["wins_game"] is True
    cats = {c["box"]: c for c in body["boxes"]}
    assert cats["five_of_a_kind"]["wins_game"] and cats["five_of_a_kind"]["score"] == 50


@pytest.mark.parametrize("body,pointer", [
    ({"dice": [1, 2, 3, 4]}, "/dice"),
    ({"dice": [1, 2, 3, 4, 5, 6]}, "/dice"),
    ({"dice": [0, 2, 3, 4, 5]}, "/dice/0"),
    ({"dice": [1, 2, 3, 4, "5"]}, "/dice/4"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 4}, "/throw"),
    ({"dice": [1, 2, 3, 4, 5], "options": {"joker": "maybe"}}, "/options/joker"),
    ({"dice": [1, 2, 3, 4, 5], "options": {"trinca_quadra": "sum"}}, "/options/trinca_quadra"),
    ({"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"villa": 3}}},
     "/scorecard/boxes/villa"),
    ({"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"nonsense": 3}}},
     "/scorecard/boxes/nonsense"),
    ({"dice": [1, 2, 3, 4, 5], "em_baixo": True}, "/em_baixo"),
    ({"dice": [1, 2, 3, 4, 5], "extra": 1}, "/extra"),
    ({}, "/dice"),
])
def test_bad_hand_requests_are_rejected(client, body, pointer):
    assert_problem(client.post("/v1/variants/yahtzee/hands/score", json=body), REJECTED,
                   pointer)


@pytest.mark.parametrize("data", ["{not json", "[1,", "3", '"text"', ""])
def test_malformed_body_is_422(client, data):
    resp = client.post("/v1/variants/yahtzee/hands/score", data=data,
                       content_type="application/json")
    assert_problem(resp, 422)


def test_batch_hand_scoring(client):
    resp = client.post("/v1/variants/yatzy/hands/score/batch",
                       json=[{"dice": [1, 1, 2, 2, 3]}, {"dice": [6, 6, 6, 6, 6], "throw": 1}])
    assert resp.status_code == 200
    first, second = resp.get_json()
    assert {c["box"]: c["score"] for c in first["boxes"]}["two_pairs"] == 6
    assert {c["box"]: c["score"] for c in second["boxes"]}["five_of_a_kind"] == 50


def test_batch_errors_name_the_item(client):
    resp = client.post("/v1/variants/yatzy/hands/score/batch",
                       json=[{"dice": [1, 1, 2, 2, 3]}, {"dice": [1, 1, 2, 2, 9]}])
    assert_problem(resp, 422, "/1/dice/4")
    resp = client.post("/v1/variants/yatzy/hands/score/batch",
                       json=[{"dice": [1, 1, 2, 2, 3]}, {"dice": [1, 1, 2, 2]}])
    assert_problem(resp, 422, "/1/dice")


def test_single_and_batch_are_separate_operations(client):
    """A list sent to the single operation, or an object to the batch one, is a 422 that
    says which to use; each answers one shape."""
    resp = client.post("/v1/variants/yatzy/hands/score", json=[{"dice": [1, 1, 2, 2, 3]}])
    assert_problem(resp, 422, "")
    assert "/batch" in resp.get_json()["detail"]
    resp = client.post("/v1/variants/yatzy/hands/score/batch", json={"dice": [1, 1, 2, 2, 3]})
    assert_problem(resp, 422, "")
    assert "list" in resp.get_json()["detail"]
    assert_problem(client.post("/v1/variants/yatzy/hands/score/batch", json=[]), 422, "")
    one = client.post("/v1/variants/yatzy/hands/score", json={"dice": [1, 1, 2, 2, 3]})
    many = client.post("/v1/variants/yatzy/hands/score/batch", json=[{"dice": [1, 1, 2, 2, 3]}])
    assert many.get_json() == [one.get_json()]


def test_batch_limit():
    app = create_app(Settings(max_batch_items=3))
    resp = app.test_client().post("/v1/variants/yatzy/hands/score/batch",
                                  json=[{"dice": [1, 2, 3, 4, 5]}] * 4)
    assert_problem(resp, 422, "")


def test_body_too_large_is_413():
    app = create_app(Settings(max_body_bytes=200))
    resp = app.test_client().post("/v1/variants/yatzy/hands/score",
                                  json=[{"dice": [1, 2, 3, 4, 5]}] * 50)
    assert_problem(resp, 413)


def test_wrong_method_and_path(client):
    assert_problem(client.get("/v1/variants/yatzy/hands/score"), 405)
    assert_problem(client.get("/v1/nothing-here"), 404)


# --------------------------------------------------------------------------- scorecards


def test_scorecard_totals(client):
    boxes = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18,
             "three_of_a_kind": 24, "four_of_a_kind": 0, "full_house": 25,
             "small_straight": 30, "large_straight": 40, "five_of_a_kind": 50, "chance": 22}
    body = client.post("/v1/variants/yahtzee/scorecards/score",
                       json={"boxes": boxes, "five_of_a_kind_bonuses": 2}).get_json()
    assert body["upper_subtotal"] == 63 and body["upper_bonus"] == 35
    assert body["lower_total"] == 191 and body["five_of_a_kind_bonus"] == 200
    assert body["total"] == 63 + 35 + 191 + 200
    assert body["complete"] is True


def test_scorecard_achievability(client):
    body = client.post("/v1/variants/yahtzee/scorecards/score", json={
        "boxes": {"full_house": 24, "three_of_a_kind": 4, "ones": 6, "chance": 30}}).get_json()
    ok = {b["box"]: b["achievable"] for b in body["boxes"] if b["filled"]}
    assert ok == {"full_house": False, "three_of_a_kind": False, "ones": False, "chance": True}
    assert body["complete"] is False


def test_scorecard_final_scratches_empty_boxes(client):
    body = client.post("/v1/variants/yacht/scorecards/score",
                       json={"boxes": {"chance": 20}, "final": True}).get_json()
    assert body["complete"] is True and body["total"] == 20
    assert all(b["score"] is not None for b in body["boxes"])


def test_scorecard_chips_need_a_bonus_variant(client):
    resp = client.post("/v1/variants/yatzy/scorecards/score", json={"five_of_a_kind_bonuses": 1})
    assert_problem(resp, 409, "/five_of_a_kind_bonuses")


def test_scorecard_batch(client):
    resp = client.post("/v1/variants/general/scorecards/score/batch",
                       json=[{"boxes": {"chance": 20}}, {"boxes": {"full_house": 25}}])
    assert [r["total"] for r in resp.get_json()] == [20, 25]


def test_batch_with_too_many_tables_of_rules_is_409():
    client = create_app(Settings(max_batch_rule_sets=3)).test_client()
    items = [{"dice": [1, 2, 3, 4, 5],
              "rules": {"boxes": {"chance": {"scoring": "fixed", "value": n}}}} for n in range(4)]
    resp = client.post("/v1/variants/yacht/hands/score/batch", json=items)
    assert resp.status_code == 409 and resp.mimetype == PROBLEM
    assert client.post("/v1/variants/yacht/hands/score/batch",
                       json=items[:3]).status_code == 200


def test_a_number_box_wins_only_with_its_face(client):
    rules = {"boxes": {"ones": {"wins_on_first_throw": True}}}
    body = client.post("/v1/variants/yahtzee/hands/score",
                       json={"dice": [2, 3, 4, 5, 6], "throw": 1, "rules": rules}).get_json()
    assert body["wins_game"] is False
    body = client.post("/v1/variants/yahtzee/hands/score",
                       json={"dice": [1, 3, 4, 5, 6], "throw": 1, "rules": rules}).get_json()
    assert body["wins_game"] is True


def test_kniffel_has_at_most_six_extra_kniffels(client):
    # an extra Kniffel goes into its free number box: five of that face, +50
    boxes = {b: 0 for b in VARIANTS["kniffel"].box_ids} | {"five_of_a_kind": 50} | {
        b: 5 * face for face, b in enumerate(UPPER_IDS, 1)}
    six = client.post("/v1/variants/kniffel/scorecards/score",
                      json={"boxes": boxes, "five_of_a_kind_bonuses": 6}).get_json()
    seven = client.post("/v1/variants/kniffel/scorecards/score",
                        json={"boxes": boxes, "five_of_a_kind_bonuses": 7}).get_json()
    assert six["valid"] is True
    assert seven["valid"] is False
    assert [p["code"] for p in seven["problems"]] == ["too_many_bonuses"]


def test_removing_number_boxes_must_leave_the_bonus_reachable(client):
    resp = client.post("/v1/variants/yahtzee/hands/score", json={
        "dice": [1, 2, 3, 4, 5], "rules": {"remove_boxes": ["fives", "sixes"]}})
    assert resp.status_code == 409
    assert resp.get_json()["errors"][0]["pointer"] == "/rules/remove_boxes"
    ok = client.post("/v1/variants/yahtzee/hands/score", json={
        "dice": [1, 2, 3, 4, 5],
        "rules": {"remove_boxes": ["fives", "sixes"], "upper_bonus": None}})
    assert ok.status_code == 200


def test_booleans_are_json_booleans(client):
    for body in ({"dice": [1, 2, 3, 4, 5], "options": {"columns": 1}},
                 {"dice": [1, 2, 3, 4, 5], "em_baixo": 1.0}):
        resp = client.post("/v1/variants/yahtzee/hands/score", json=body)
        assert resp.status_code == 422, body
    resp = client.post("/v1/variants/yahtzee/scorecards/score", json={"final": 1})
    assert resp.status_code == 422


def test_validate_reports_a_null_die(client):
    body = client.post("/v1/variants/yahtzee/hands/validate",
                       json={"dice": [1, 2, 3, 4, None]}).get_json()
    assert body["valid"] is False and body["problems"][0]["pointer"] == "/dice/4"


def test_a_won_game_takes_no_entry(client):
    body = client.post("/v1/variants/generala/hands/score",
                       json={"dice": [1, 2, 3, 4, 5], "scorecard": {"won": True}}).get_json()
    assert not any(c["legal"] for c in body["boxes"])


def test_upper_bonus_without_a_threshold_on_a_sheet_without_bonus(client):
    resp = client.post("/v1/variants/general/rules",
                       json={"rules": {"upper_bonus": {"amount": 30}}})
    assert resp.status_code == 409
    assert resp.get_json()["errors"][0]["pointer"] == "/rules/upper_bonus"


@pytest.mark.parametrize(("path", "body", "expected"), [
    ("scorecards/score", {"boxes": {"chance": 0}}, "/boxes/chance"),
    ("scorecards/score/batch", [{"boxes": {"chance": 0}}], "/0/boxes/chance"),
    ("hands/score", {"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"a/b~c": 0}}},
     "/scorecard/boxes/a~1b~0c"),
])
def test_an_unknown_box_is_pointed_at_exactly(client, path, body, expected):
    """RFC 6901 pointers: no empty token for a scorecard at the top of the body, and the
    box id escaped."""
    r = client.post(f"/v1/variants/bozo/{path}", json=body)
    assert r.status_code in (409, 422) and r.status_code == status_of(r.get_json()["type"])
    assert expected in [e["pointer"] for e in r.get_json()["errors"]], r.get_json()


@pytest.mark.parametrize(("path", "body", "pointer", "meant"), [
    ("generala/games/turn", {"dice": [1, 2, 3, 4, 5], "throw": 1, "box": "Sequência"},
     "/box", "straight"),
    ("yahtzee/hands/score", {"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"Full House": 25}}},
     "/scorecard/boxes/Full House", "full_house"),
    ("kniffel/hands/score", {"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"Kniffel": 50}}},
     "/scorecard/boxes/Kniffel", "five_of_a_kind"),
    ("yams/hands/score", {"dice": [1, 2, 3, 4, 5], "rules": {"remove_boxes": ["Brelan"]}},
     "/rules/remove_boxes/0", "three_of_a_kind"),
    ("yahtzee/hands/score", {"dice": [1, 2, 3, 4, 5],
                             "rules": {"boxes": {"Chance": {"value": 3}}}},
     "/rules/boxes/Chance", "chance"),
    ("generala/games/turn", {"dice": [1, 2, 3, 4, 5], "throw": 1, "box": "nonsense"},
     "/box", None),
])
def test_an_unknown_box_names_the_variants_own_ids(client, path, body, pointer, meant):
    """An unknown box, whether another variant's or none's, is one mistake with one answer:
    a 409 (code unknown_box) listing the table's own box ids, and a box's label in any of
    the six languages (or a near miss) gets "did you mean" with its id."""
    from service.domain.rules import effective_rules

    resp = client.post(f"/v1/variants/{path}", json=body)
    error = next(e for e in assert_problem(resp, 409)["errors"] if e["pointer"] == pointer)
    assert error["code"] == "unknown_box"
    detail = error["detail"]
    vid = path.split("/")[0]
    listed = detail.split("(its boxes: ", 1)[1].split(")")[0].split(", ")
    assert listed == list(effective_rules(vid).variant.box_ids)
    if meant:
        assert detail.endswith(f"; did you mean {meant!r}?")
    else:
        assert "did you mean" not in detail


@pytest.mark.parametrize("box", ["chance", "no_such_box"])
def test_another_variants_box_and_no_variants_box_get_the_same_answer(client, box):
    resp = client.post("/v1/variants/generala/hands/score",
                       json={"dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {box: 3}}})
    body = assert_problem(resp, 409)
    assert [e["code"] for e in body["errors"]] == ["unknown_box"]


def test_responses_expose_retry_after_and_the_request_id_to_browsers(client):
    resp = client.post("/v1/variants/yahtzee/hands/score", json={"dice": [1, 2, 3, 4, 5]},
                       headers={"Origin": "http://example.test"})
    exposed = {h.strip().lower() for h in
               resp.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"retry-after", "x-request-id"} <= exposed
