"""The games resource over HTTP (games/turn, games/validate), and the one sheet check in
every endpoint that reads a sheet (hands/score, moves/suggest: 409; scorecards/score: 200
with valid and problems)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.config import Settings
from service.domain.errors import ALL_CODES, MOVE_CODES
from service.domain.variants import ALL_BOX_IDS
from service.web.app import create_app
from service.web.schemas.games import GameSchema
from tests.domain.gamegen import random_game

SPEC = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json")
                  .read_text())


def turn_url(variant: str) -> str:
    return f"/v1/variants/{variant}/games/turn"


def validate_url(variant: str) -> str:
    return f"/v1/variants/{variant}/games/validate"


# --------------------------------------------------------------------------- games/turn


def test_a_turn_answers_the_next_scorecard(client):
    first = client.post(turn_url("yahtzee"), json={"dice": [4, 4, 4, 4, 4], "throw": 3,
                                                   "box": "five_of_a_kind"})
    assert first.status_code == 200
    one = first.get_json()
    assert one["scorecard"]["boxes"]["five_of_a_kind"] == 50
    assert one["scorecard"]["five_of_a_kind_bonuses"] == 0
    assert (one["turn"], one["turns_left"], one["game_over"], one["won"]) == (1, 12, False,
                                                                             False)
    # the answer's scorecard goes back unchanged; the service fills in the chip count
    two = client.post(turn_url("yahtzee"), json={"scorecard": one["scorecard"],
                                                 "dice": [4, 4, 4, 4, 4], "throw": 2,
                                                 "box": "fours"}).get_json()
    assert two["earned"] == {"box": "fours", "column": None, "score": 20, "joker": False,
                             "five_of_a_kind_bonus": 100, "upper_bonus": 0,
                             "first_throw_bonus": 0, "wins_game": False, "points": 120}
    assert two["scorecard"]["five_of_a_kind_bonuses"] == 1
    assert two["totals"] == {"upper_subtotal": 20, "upper_bonus": 0, "lower_total": 50,
                             "five_of_a_kind_bonus": 100, "total": 170}


def test_an_illegal_move_is_its_own_problem_type(client):
    resp = client.post(turn_url("yahtzee"), json={
        "scorecard": {"boxes": {"five_of_a_kind": 50}}, "dice": [2, 2, 2, 2, 2], "throw": 3,
        "box": "chance"})
    assert resp.status_code == 409
    assert resp.content_type == "application/problem+json"
    body = resp.get_json()
    assert body["type"] == "/problems/illegal-move" and body["code"] == "joker_forces_box"
    assert body["errors"] == [{"pointer": "/box", "code": "joker_forces_box",
                               "detail": "the forced Joker writes this five of a kind in "
                                         "'twos'"}]


def test_a_turn_on_an_impossible_sheet_is_an_inconsistent_request(client):
    resp = client.post(turn_url("yahtzee"), json={
        "scorecard": {"boxes": {"ones": 7}}, "dice": [2, 2, 2, 2, 1], "throw": 3,
        "box": "twos"})
    body = resp.get_json()
    assert resp.status_code == 409 and body["type"] == "/problems/inconsistent-request"
    assert body["errors"][0]["pointer"] == "/scorecard/boxes/ones"
    assert body["errors"][0]["code"] == "value_not_achievable"


def test_turns_in_a_batch_name_their_item(client):
    resp = client.post(turn_url("generala") + "/batch", json=[
        {"dice": [6, 6, 6, 6, 6], "throw": 1},
        {"dice": [6, 6, 6, 6, 6], "throw": 2, "box": "five_of_a_kind"}])
    assert resp.status_code == 200
    won, made = resp.get_json()
    assert won["won"] and won["game_over"] and won["earned"]["wins_game"]
    assert made["earned"]["score"] == 50 and not made["won"]
    bad = client.post(turn_url("generala") + "/batch", json=[
        {"dice": [6, 6, 6, 6, 6], "throw": 1},
        {"dice": [6, 6, 6, 6, 5], "throw": 2}]).get_json()
    assert bad["type"] == "/problems/illegal-move" and bad["code"] == "box_required"
    assert bad["errors"][0]["pointer"] == "/1/box"


def test_column_sheets_and_saved_throws_over_http(client):
    cols = client.post(turn_url("general"), json={
        "options": {"columns": True}, "dice": [1, 1, 1, 1, 1], "throw": 1,
        "box": "five_of_a_kind", "column": 4}).get_json()
    assert cols["scorecard"]["columns"][3]["boxes"]["five_of_a_kind"] == 50
    again = client.post(turn_url("general"), json={
        "options": {"columns": True}, "scorecard": cols["scorecard"], "dice": [1, 2, 3, 4, 5],
        "throw": 2, "box": "small_straight", "column": 4})
    assert again.get_json()["code"] == "first_throw_only"
    maxi = client.post(turn_url("maxi_yatzy"), json={
        "dice": [1, 1, 2, 2, 3, 3], "throw": 1, "box": "three_pairs"}).get_json()
    assert maxi["scorecard"]["saved_throws"] == 2 and maxi["earned"]["score"] == 12


# --------------------------------------------------------------------------- chosen zeros

#: The issue's sheet: five 6s written as a chosen 0 in Small Straight, with the YAHTZEE box
#: at 50 and Sixes filled (rules decisions 3 and 23).
CHOSEN_ZERO_SHEET = {"boxes": {"five_of_a_kind": 50, "sixes": 18, "small_straight": 0},
                     "five_of_a_kind_bonuses": 1}


def test_the_sheet_a_chosen_zero_leaves_is_accepted_everywhere(client):
    audit = client.post("/v1/variants/yahtzee/scorecards/score", json=CHOSEN_ZERO_SHEET)
    assert audit.status_code == 200
    assert audit.get_json()["valid"] and audit.get_json()["problems"] == []
    assert audit.get_json()["total"] == 50 + 18 + 100
    hand = {"dice": [1, 2, 3, 4, 5], "throw": 1, "scorecard": CHOSEN_ZERO_SHEET}
    scored = client.post("/v1/variants/yahtzee/hands/score", json=hand)
    assert scored.status_code == 200, scored.get_json()
    advice = client.post("/v1/variants/yahtzee/moves/suggest", json=hand)
    assert advice.status_code in (200, 202), advice.get_json()


def test_a_turn_writes_a_chosen_zero_and_keeps_the_yahtzee_bonus(client):
    card = {"boxes": {"five_of_a_kind": 50, "sixes": 18}}
    resp = client.post(turn_url("yahtzee"), json={
        "scorecard": card, "dice": [6, 6, 6, 6, 6], "throw": 2, "box": "small_straight",
        "scratch": True})
    assert resp.status_code == 200, resp.get_json()
    body = resp.get_json()
    assert body["earned"] == {"box": "small_straight", "column": None, "score": 0,
                              "joker": False, "five_of_a_kind_bonus": 100, "upper_bonus": 0,
                              "first_throw_bonus": 0, "wins_game": False, "points": 100}
    assert body["scorecard"]["boxes"]["small_straight"] == 0
    assert body["scorecard"]["five_of_a_kind_bonuses"] == 1
    assert body["totals"]["total"] == 168
    # the sheet it answers goes back as the next turn's
    nxt = client.post(turn_url("yahtzee"), json={
        "scorecard": body["scorecard"], "dice": [1, 2, 3, 4, 5], "throw": 3,
        "box": "large_straight"})
    assert nxt.status_code == 200 and nxt.get_json()["earned"]["score"] == 40


@pytest.mark.parametrize(("variant", "request_body", "code"), [
    # decision 14: the forced Joker names Sixes; a chosen 0 in Chance is not allowed
    ("yahtzee", {"scorecard": {"boxes": {"five_of_a_kind": 50}}, "dice": [6, 6, 6, 6, 6],
                 "throw": 2, "box": "chance"}, "joker_forces_box"),
    # Generala obligada: Ones first, 0 included
    ("generala", {"options": {"obligada": True}, "dice": [1, 1, 2, 3, 4], "throw": 3,
                  "box": "twos"}, "out_of_order"),
    # a chosen 0 names its box
    ("yahtzee", {"dice": [1, 1, 2, 3, 4], "throw": 3}, "box_required"),
])
def test_a_chosen_zero_keeps_the_rules(client, variant, request_body, code):
    resp = client.post(turn_url(variant), json={**request_body, "scratch": True})
    assert resp.status_code == 409
    body = resp.get_json()
    assert body["type"] == "/problems/illegal-move" and body["code"] == code
    assert body["errors"][0]["pointer"] == "/box"


def test_a_recorded_game_with_a_chosen_zero_validates(client):
    turns = [{"throws": [[5, 5, 5, 5, 5]], "box": "five_of_a_kind", "points": 50},
             {"throws": [[6, 6, 2, 3, 1], [6, 6, 6, 6, 6]], "kept": [[6, 6]], "box": "sixes",
              "scratch": True, "points": 0}]
    result = client.post(validate_url("yahtzee"),
                         json={"players": [{"turns": turns, "total": 150}]}).get_json()
    assert result["valid"], result["problems"]
    earned = result["players"][0]["turns"][1]["earned"]
    assert (earned["score"], earned["five_of_a_kind_bonus"], earned["points"]) == (0, 100, 100)
    assert result["players"][0]["scorecard"]["boxes"]["sixes"] == 0
    turns[1]["points"] = 30  # what the dice score there, not what the turn wrote
    wrong = client.post(validate_url("yahtzee"),
                        json={"players": [{"turns": turns}]}).get_json()
    assert [(p["pointer"], p["code"]) for p in wrong["problems"]] == [
        ("/players/0/turns/1/points", "points_mismatch")]


# --------------------------------------------------------------------------- games/validate


@pytest.mark.parametrize(("variant", "options"), [
    ("yahtzee", None), ("kniffel", None), ("maxi_yatzy", None), ("generala", None),
    ("bozo", None), ("yahtzee", {"columns": True})])
def test_random_games_validate_and_their_totals_are_the_scorecards(client, variant, options):
    gen = random_game(variant, 7, players=2, options=options)
    result = client.post(validate_url(variant), json=gen.body).get_json()
    assert result["valid"], result["problems"]
    for player in result["players"]:
        card = (player["scorecard"])
        totals = client.post(f"/v1/variants/{variant}/scorecards/score",
                             json={**card, **({"options": options} if options else {}),
                                   "final": True}).get_json()
        assert totals["valid"] and totals["total"] == player["total"]


def test_a_batch_of_games_points_into_each_game(client):
    good = random_game("yacht", 1, players=2).body
    bad = json.loads(json.dumps(good))
    bad["players"][1]["turns"][3]["points"] += 1
    resp = client.post(validate_url("yacht") + "/batch", json=[good, bad])
    assert resp.status_code == 200
    one, two = resp.get_json()
    assert one["valid"] and not two["valid"]
    assert [(p["pointer"], p["code"]) for p in two["problems"]] == [
        ("/1/players/1/turns/3/points", "points_mismatch")]


def test_a_rule_error_in_a_batch_is_a_422_naming_the_game(client):
    good = random_game("yacht", 1, players=1).body
    resp = client.post(validate_url("yacht") + "/batch",
                       json=[good, {**good, "options": {"x": 1}}])
    assert resp.status_code == 422
    assert resp.get_json()["errors"][0]["pointer"] == "/1/options/x"


def test_the_batch_of_games_has_a_limit(tmp_path):
    app = create_app(Settings(advisor_table_dir=str(tmp_path), max_batch_games=2))
    game = {"players": [{"turns": []}]}
    client = app.test_client()
    assert client.post(validate_url("yacht") + "/batch", json=[game, game]).status_code == 200
    resp = client.post(validate_url("yacht") + "/batch", json=[game, game, game])
    assert resp.status_code == 422 and "at most 2" in resp.get_json()["detail"]


def test_recorded_dice_outside_the_rules_are_problems_not_refusals(client):
    body = {"players": [{"turns": [{"throws": [[1, 2, 3, 4, 99]], "box": "chance"},
                                   {"throws": [[1, 2, 3]], "box": "ones"}]}]}
    result = client.post(validate_url("yacht"), json=body).get_json()
    assert [(p["pointer"], p["code"]) for p in result["problems"]] == [
        ("/players/0/turns/0/throws/0/4", "bad_face"),
        ("/players/0/turns/1/throws/0", "dice_count")]


def test_games_need_players(client):
    resp = client.post(validate_url("yacht"), json={"players": []})
    assert resp.status_code == 422


# --------------------------------------------------------------------------- one sheet check


def test_hands_score_refuses_an_impossible_sheet(client):
    resp = client.post("/v1/variants/yahtzee/hands/score", json={
        "dice": [1, 2, 3, 4, 5], "scorecard": {"boxes": {"full_house": 24}}})
    assert resp.status_code == 409
    assert resp.get_json()["errors"] == [{
        "pointer": "/scorecard/boxes/full_house", "code": "value_not_achievable",
        "detail": "24 cannot be scored in box 'full_house' with these rules (it can hold 0, "
                  "25)"}]


def test_moves_suggest_refuses_bonuses_on_a_scratched_box(client):
    card = {"boxes": {"five_of_a_kind": 0}, "five_of_a_kind_bonuses": 2}
    resp = client.post("/v1/variants/yahtzee/moves/suggest", json={
        "dice": [1, 2, 3, 4, 5], "throw": 1, "scorecard": card})
    assert resp.status_code == 409
    assert resp.get_json()["errors"][0]["code"] == "bonus_without_five_of_a_kind"


def test_scorecards_score_audits_and_still_totals(client):
    resp = client.post("/v1/variants/yahtzee/scorecards/score/batch", json=[
        {"boxes": {"ones": 3}}, {"boxes": {"ones": 7, "twos": 4}}])
    ok, bad = resp.get_json()
    assert ok["valid"] and ok["problems"] == []
    assert not bad["valid"] and bad["total"] == 11
    assert bad["problems"] == [{"pointer": "/1/boxes/ones", "code": "value_not_achievable",
                                "detail": "7 cannot be scored in box 'ones' with these rules "
                                          "(it can hold 0, 1, 2, 3, 4, 5)"}]
    assert [b["achievable"] for b in bad["boxes"][:2]] == [False, True]


def test_the_spec_lists_every_code():
    schemas = SPEC["components"]["schemas"]
    assert set(schemas["ProblemError"]["properties"]["code"]["enum"]) == set(ALL_CODES)
    assert set(schemas["Problem"]["properties"]["code"]["enum"]) == set(MOVE_CODES)
    paths = SPEC["paths"]
    assert "/v1/variants/yahtzee/games/turn" in paths
    assert "/v1/variants/yahtzee/games/validate" in paths


# --------------------------------------------------------------------------- fast path

_odd = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                 st.integers(-3, 200))


def _maybe(valid: st.SearchStrategy, noisy: bool) -> st.SearchStrategy:
    """Mostly valid values; with `noisy`, sometimes anything."""
    return st.one_of(valid, _odd) if noisy else valid


def _game_data(noisy: bool) -> st.SearchStrategy:
    dice = st.lists(_maybe(st.integers(-1, 8), noisy), max_size=7)
    turn = st.fixed_dictionaries({"throws": _maybe(st.lists(dice, max_size=4), noisy)}, optional={
        "kept": _maybe(st.lists(dice, max_size=3), noisy),
        "box": _maybe(st.one_of(st.none(), st.sampled_from(ALL_BOX_IDS)), noisy),
        "column": _maybe(st.one_of(st.none(), st.integers(-1, 5)), noisy),
        "em_baixo": _maybe(st.booleans(), noisy),
        "scratch": _maybe(st.booleans(), noisy),
        "points": _maybe(st.one_of(st.none(), st.integers(-1, 10_001)), noisy),
        **({"extra": _odd} if noisy else {})})
    player = st.fixed_dictionaries({"turns": _maybe(st.lists(turn, max_size=3), noisy)},
                                   optional={"name": _maybe(st.text(max_size=3), noisy),
                                             "total": _maybe(st.one_of(
                                                 st.none(), st.integers(-1, 2_000_000)), noisy)})
    return st.fixed_dictionaries({"players": _maybe(st.lists(player, max_size=3), noisy)},
                                 optional={"winners": _maybe(st.one_of(st.none(), st.lists(
                                     st.integers(-1, 3), max_size=3)), noisy),
                                           **({"options": st.just({}), "extra": _odd}
                                              if noisy else {})})


_game = st.one_of(_game_data(False), _game_data(True))


@settings(max_examples=300, deadline=None)
@given(_game)
def test_fast_game_check_agrees_with_the_schema(data):
    fast = GameSchema.fast_load(data)
    if fast is not None:
        assert GameSchema().load(data) == fast


def test_fast_game_check_takes_a_recorded_game():
    body = random_game("yahtzee", 3, players=2).body
    assert GameSchema.fast_load(body) is body
