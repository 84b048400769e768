"""Regressions found by probing the service as a client would (one test per finding)."""

from __future__ import annotations

from service.app import create_app
from service.config import Settings
from service.rules import effective_rules
from service.variants import VARIANTS

PROBLEM = "application/problem+json"


def test_batch_with_too_many_tables_of_rules_is_422():
    client = create_app(Settings(max_batch_rule_sets=3)).test_client()
    items = [{"dice": [1, 2, 3, 4, 5],
              "rules": {"boxes": {"chance": {"scoring": "fixed", "value": n}}}} for n in range(4)]
    resp = client.post("/v1/variants/yacht/hands/score", json=items)
    assert resp.status_code == 422 and resp.mimetype == PROBLEM
    assert client.post("/v1/variants/yacht/hands/score", json=items[:3]).status_code == 200


def test_a_number_box_wins_only_with_its_face(client):
    rules = {"boxes": {"ones": {"wins_on_first_throw": True}}}
    body = client.post("/v1/variants/yahtzee/hands/score",
                       json={"dice": [2, 3, 4, 5, 6], "throw": 1, "rules": rules}).get_json()
    assert body["wins_game"] is False
    body = client.post("/v1/variants/yahtzee/hands/score",
                       json={"dice": [1, 3, 4, 5, 6], "throw": 1, "rules": rules}).get_json()
    assert body["wins_game"] is True


def test_kniffel_has_at_most_six_extra_kniffels(client):
    boxes = {b: 0 for b in VARIANTS["kniffel"].box_ids} | {"five_of_a_kind": 50}
    six = client.post("/v1/variants/kniffel/scorecards/score",
                      json={"boxes": boxes, "bonus_five_of_a_kind": 6}).get_json()
    seven = client.post("/v1/variants/kniffel/scorecards/score",
                        json={"boxes": boxes, "bonus_five_of_a_kind": 7}).get_json()
    assert six["bonus_five_of_a_kind"]["achievable"] is True
    assert seven["bonus_five_of_a_kind"]["achievable"] is False


def test_a_value_override_replaces_the_whole_scale():
    rs = effective_rules("generala_spanish", None,
                         {"boxes": {"four_of_a_kind": {"value": 50}}})
    i = rs.box_index("four_of_a_kind")
    assert rs.score_later[i][rs.hand_index[(1, 1, 1, 1, 3)]] == 50
    assert rs.max_score[i] == 50


def test_removing_number_boxes_must_leave_the_bonus_reachable(client):
    resp = client.post("/v1/variants/yahtzee/hands/score", json={
        "dice": [1, 2, 3, 4, 5], "rules": {"remove_boxes": ["fives", "sixes"]}})
    assert resp.status_code == 422
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
    assert not any(c["legal"] for c in body["categories"])


def test_upper_bonus_without_a_threshold_on_a_sheet_without_bonus(client):
    resp = client.post("/v1/variants/general/rules",
                       json={"rules": {"upper_bonus": {"amount": 30}}})
    assert resp.status_code == 422
    assert resp.get_json()["errors"][0]["pointer"] == "/rules/upper_bonus"


def test_maxi_saved_throws_are_worth_nothing_on_the_last_turn(client):
    boxes = {b: 0 for b in VARIANTS["maxi_yatzy"].box_ids if b != "chance"}
    body = client.post("/v1/variants/maxi_yatzy/moves/suggest", json={
        "dice": [3, 3, 3, 3, 3, 3], "throw": 2, "scorecard": {"boxes": boxes}}).get_json()
    chance = next(a for a in body["alternatives"] if a["action"] == "score")
    assert chance["expected_final_score"] == 18
    assert body["best"]["action"] == "keep" and body["expected_final_score"] > 18


def test_advice_with_no_legal_move_later_leaves_those_keeps_out(client):
    ids = VARIANTS["yahtzee"].box_ids
    full = {"boxes": {b: 0 for b in ids}}
    last = {"boxes": {b: 0 for b in ids if b != "chance"}}
    sheet = {"columns": [full, full, full, last]}
    resp = client.post("/v1/variants/yahtzee/moves/suggest", json={
        "dice": [1, 1, 1, 1, 1], "throw": 2, "options": {"columns": True}, "scorecard": sheet})
    assert resp.status_code == 422 and resp.mimetype == PROBLEM
    body = client.post("/v1/variants/yahtzee/moves/suggest", json={
        "dice": [1, 1, 1, 1, 1], "throw": 1, "options": {"columns": True},
        "scorecard": sheet}).get_json()
    assert [a["action"] for a in body["alternatives"]] == ["score"]
    assert body["expected_final_score"] > -1e6
