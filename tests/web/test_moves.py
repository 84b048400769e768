"""POST /v1/variants/{variant}/moves/suggest: the advisor over HTTP."""

from __future__ import annotations

import pytest

from service.domain.rules import effective_rules
from service.domain.variants import VARIANTS

from .refusals import refused

PROBLEM = "application/problem+json"
URL = "/v1/variants/{}/moves/suggest"


@pytest.fixture(scope="module", autouse=True)
def _tables(advisor):
    for vid in ("generala", "yacht"):
        advisor.strategy(effective_rules(vid))


def test_suggest_first_throw(client):
    r = client.post(URL.format("generala"), json={"dice": [4, 4, 4, 4, 4], "throw": 1})
    assert r.status_code == 200, r.get_data(as_text=True)
    body = r.get_json()
    assert body["exact"] is True and body["throw"] == 1 and body["throws_left"] == 2
    assert body["best"] == body["moves"][0]
    assert body["best"]["action"] == "score" and body["best"]["box"] == "five_of_a_kind"
    assert body["best"]["wins_game"] is True
    assert body["rules"]["variant"] == "generala" and body["current_total"] == 0
    keeps = [a for a in body["moves"] if a["action"] == "keep"]
    assert keeps and all(len(a["dice"]) < 5 for a in keeps)
    assert body["expected_final_score"] == body["best"]["expected_final_score"]


def test_suggest_with_scorecard_last_throw(client):
    r = client.post(URL.format("yacht"), json={
        "dice": [6, 5, 4, 3, 2], "throw": 3,
        "scorecard": {"boxes": {"large_straight": 30, "ones": 2}}})
    assert r.status_code == 200, r.get_data(as_text=True)
    body = r.get_json()
    assert body["current_total"] == 32 and body["throws_left"] == 0
    assert all(a["action"] == "score" for a in body["moves"])
    assert "large_straight" not in {a["box"] for a in body["moves"]}
    assert body["expected_final_score"] > 32
    ranks = [a["rank"] for a in body["moves"]]
    assert ranks == sorted(ranks) and ranks[0] == 1


def test_throw_is_required(client):
    """docs/rules.md decision 8: advice depends on the throws left, so no default."""
    r = client.post(URL.format("generala"), json={"dice": [1, 2, 3, 4, 6]})
    assert r.status_code == 422 and r.mimetype == PROBLEM
    assert "/throw" in [e["pointer"] for e in r.get_json()["errors"]]


def test_moves_are_a_union_on_action(client):
    body = client.post(URL.format("yahtzee"), json={"dice": [1, 2, 3, 4, 6],
                                                    "throw": 2}).get_json()
    for move in body["moves"]:
        keys = set(move) - {"action", "expected_final_score", "regret", "rank", "tie"}
        if move["action"] == "keep":
            assert keys == {"dice", "em_baixo"}
        else:
            assert keys == {"box", "column", "score", "five_of_a_kind_bonus", "upper_bonus",
                            "joker", "wins_game"}


@pytest.mark.parametrize(("body", "pointer"), [
    ({"dice": [1, 2, 3, 4], "throw": 1}, "/dice"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 4}, "/throw"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "em_baixo": True}, "/em_baixo"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "scorecard": {"boxes": {"sixes": 7}}},
     "/scorecard/boxes/sixes"),
])
def test_invalid_requests_are_problems(client, body, pointer):
    r = client.post(URL.format("generala"), json=body)
    assert refused(r), r.get_json()
    assert pointer in [e["pointer"] for e in r.get_json()["errors"]]


def test_unknown_variant_is_404(client):
    r = client.post(URL.format("monopoly"), json={"dice": [1, 2, 3, 4, 5], "throw": 1})
    assert r.status_code == 404 and r.mimetype == PROBLEM


def test_house_rules_table_is_built_in_the_first_request(client):
    body = {"dice": [2, 2, 3, 5, 5], "throw": 2,
            "rules": {"boxes": {"full_house": {"value": 31}}}}
    r = client.post(URL.format("generala"), json=body)
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    assert out["rules"]["overrides"] == body["rules"]
    assert out["best"]["action"] in ("keep", "score")


def test_em_baixo_advises_on_the_bottom_faces(client, advisor):
    advisor.strategy(effective_rules("bozo"))
    r = client.post(URL.format("bozo"), json={"dice": [6, 6, 6, 6, 6], "throw": 1,
                                              "em_baixo": True})
    assert r.status_code == 200
    body = r.get_json()
    assert body["dice"] == [6, 6, 6, 6, 6] and body["scored_dice"] == [1, 1, 1, 1, 1]
    assert body["best"]["box"] == "five_of_a_kind" and body["best"]["wins_game"]


@pytest.mark.parametrize("path", ["suggest", "bot"])
def test_em_baixo_keeps_are_the_dice_as_thrown(client, advisor, path):
    """2 2 2 5 6 read em baixo is 5 5 5 2 1: the keep names the three 2s on the table (what a
    recorded game's `kept` takes), and the next throw announced em baixo reads them as 5s."""
    advisor.strategy(effective_rules("bozo"))
    body = {"dice": [6, 2, 5, 2, 2], "throw": 2, "em_baixo": True}
    if path == "bot":
        body.update(level="expert", seed=3)
    r = client.post(f"/v1/variants/bozo/moves/{path}", json=body)
    assert r.status_code == 200, r.get_json()
    out = r.get_json()
    assert out["dice"] == [2, 2, 2, 5, 6] and out["scored_dice"] == [1, 2, 5, 5, 5]
    move = out["best"] if path == "suggest" else out["move"]
    assert move == {**move, "action": "keep", "dice": [2, 2, 2], "em_baixo": True}


def test_maxi_saved_throws_are_worth_nothing_on_the_last_turn(client):
    boxes = {b: 0 for b in VARIANTS["maxi_yatzy"].box_ids if b != "chance"}
    body = client.post("/v1/variants/maxi_yatzy/moves/suggest", json={
        "dice": [3, 3, 3, 3, 3, 3], "throw": 2, "scorecard": {"boxes": boxes}}).get_json()
    chance = next(a for a in body["moves"] if a["action"] == "score")
    assert chance["expected_final_score"] == 18
    assert body["best"]["action"] == "keep" and body["expected_final_score"] > 18


def test_advice_with_no_legal_move_later_leaves_those_keeps_out(client):
    ids = VARIANTS["yahtzee"].box_ids
    full = {"boxes": {b: 0 for b in ids}}
    last = {"boxes": {b: 0 for b in ids if b != "chance"}}
    sheet = {"columns": [full, full, full, last]}
    resp = client.post("/v1/variants/yahtzee/moves/suggest", json={
        "dice": [1, 1, 1, 1, 1], "throw": 2, "options": {"columns": True}, "scorecard": sheet})
    assert resp.status_code == 409 and resp.mimetype == PROBLEM
    body = client.post("/v1/variants/yahtzee/moves/suggest", json={
        "dice": [1, 1, 1, 1, 1], "throw": 1, "options": {"columns": True},
        "scorecard": sheet}).get_json()
    assert [a["action"] for a in body["moves"]] == ["score"]
    assert body["expected_final_score"] > -1e6


@pytest.mark.parametrize("path, body, pointer", [
    # the live contract test's find: a throw the variant does not have, under an option
    # whose table was not built yet, was answered 202 (table being built) instead of 409
    ("kniffel/moves/suggest", {"dice": [2, 6, 1, 6, 4], "throw": 4,
                               "options": {"columns": True}}, "/throw"),
    ("yahtzee/moves/suggest", {"dice": [1, 2, 3, 4, 5, 6], "throw": 1,
                               "options": {"joker": "none"}}, "/dice"),
    ("yahtzee/positions/value", {"dice": [1, 2, 3, 4, 5], "throw": 4,
                                 "options": {"joker": "none"}}, "/throw"),
    ("yahtzee/games/win-probability", {
        "players": [{}, {"scorecard": {"boxes": {"ones": 7}}}],
        "options": {"joker": "none"}}, "/players/1/scorecard/boxes/ones"),
    ("yahtzee/games/win-probability", {
        "players": [{}, {}], "to_move": 0, "dice": [1, 1, 1, 1, 1, 1], "throw": 1,
        "options": {"joker": "none"}}, "/dice"),
    # a game is replayed against the rules before any table is asked for
    ("yahtzee/games/analyze", {
        "players": [{"turns": [{"throws": [[1, 2, 3, 4, 5]], "box": "chance"}]},
                    {"turns": [{"throws": [[6, 6, 2, 3, 4], [6, 5, 1, 1, 1]],
                                "kept": [[6, 5]], "box": "sixes"}]}],
        "options": {"joker": "none"}}, "/players/1/turns/0/kept/0"),
    ("yahtzee/games/analyze", {
        "players": [{"turns": [{"throws": [[1, 2, 3, 4, 5]], "box": "chance"},
                               {"throws": [[2, 2, 3, 4, 5]], "box": "chance"}]}],
        "options": {"joker": "none"}}, "/players/0/turns/1/box"),
])
def test_a_position_that_breaks_a_rule_is_refused_before_its_table_is_asked_for(
        app, client, monkeypatch, path, body, pointer):
    from service.advisor.tables.build_process import TableBuilding

    def building(*args, **kwargs):
        raise TableBuilding(1, 1)

    monkeypatch.setattr(app.extensions["advisor"], "strategy", building)
    r = client.post(f"/v1/variants/{path}", json=body)
    assert r.status_code == 409 and refused(r), r.get_data(as_text=True)
    assert pointer in [e["pointer"] for e in r.get_json()["errors"]], r.get_json()
    # and a request that is right gets the 202 while its table is being built
    ok = client.post("/v1/variants/yahtzee/moves/suggest",
                     json={"dice": [1, 2, 3, 4, 5], "throw": 1, "options": {"joker": "none"}})
    assert ok.status_code == 202, ok.get_data(as_text=True)


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_limit_answers_the_best_few_moves_as_ranked(client, limit):
    """`limit`: the first moves of the same ranked list, each as it is in the whole list
    (coached too), and nothing else of the answer changes."""
    body = {"dice": [1, 2, 3, 4, 6], "throw": 2, "coach": True}
    whole = client.post(URL.format("yacht"), json=body).get_json()
    few = client.post(URL.format("yacht"), json={**body, "limit": limit})
    assert few.status_code == 200, few.get_data(as_text=True)
    few = few.get_json()
    assert few["moves"] == whole["moves"][:limit] and len(whole["moves"]) > limit
    assert {k: v for k, v in few.items() if k != "moves"} == {
        k: v for k, v in whole.items() if k != "moves"}
    assert few["best"] == few["moves"][0]


@pytest.mark.parametrize("limit", [0, -1, 1001, "3", 2.5, None])
def test_a_limit_out_of_range_is_a_problem(client, limit):
    r = client.post(URL.format("yacht"), json={"dice": [1, 2, 3, 4, 6], "throw": 2,
                                                "limit": limit})
    assert r.status_code == 422 and r.get_json()["errors"][0]["pointer"] == "/limit"
