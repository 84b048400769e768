"""POST /v1/variants/{variant}/moves/bot: a computer player's move over HTTP."""

from __future__ import annotations

import pytest

from service.domain.rules import effective_rules
from service.domain.variants import VARIANTS
from service.web.schemas.moves import MAX_SEED

from .refusals import refused

URL = "/v1/variants/{}/moves/bot"
SUGGEST = "/v1/variants/{}/moves/suggest"


@pytest.fixture(scope="module", autouse=True)
def _tables(advisor):
    for vid in ("yahtzee", "generala"):
        advisor.strategy(effective_rules(vid))


def bot(client, variant, **body):
    r = client.post(URL.format(variant), json=body)
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


def test_a_bot_move_is_one_of_the_advisors_moves(client):
    position = {"dice": [1, 3, 3, 5, 6], "throw": 2,
                "scorecard": {"boxes": {"threes": 9, "chance": 21}}}
    ranked = client.post(SUGGEST.format("yahtzee"), json=position).get_json()
    for level in ("beginner", "casual", "strong", "expert"):
        for seed in range(8):
            out = bot(client, "yahtzee", level=level, seed=seed, **position)
            assert out["level"] == level and out["seed"] == seed
            assert out["move"] in ranked["alternatives"]
            assert out["best_expected_final_score"] == ranked["expected_final_score"]
            assert out["current_total"] == 30 and out["throws_left"] == 1
            assert out["dice"] == [1, 3, 3, 5, 6] and out["exact"] is True
            if level == "expert":
                assert out["move"] == ranked["best"]


def test_the_same_request_and_seed_give_the_same_move(client):
    body = {"dice": [2, 2, 4, 5, 6], "throw": 1, "level": "beginner"}
    moves = [bot(client, "yahtzee", seed=s, **body)["move"] for s in range(30)]
    assert moves == [bot(client, "yahtzee", seed=s, **body)["move"] for s in range(30)]
    assert len({repr(m) for m in moves}) > 1  # the seed matters to a beginner
    drawn = bot(client, "yahtzee", **body)
    assert 0 <= drawn["seed"] <= MAX_SEED  # no seed: one drawn, and answered
    again = bot(client, "yahtzee", seed=drawn["seed"], **body)
    assert again["move"] == drawn["move"]


def test_a_generala_servida_is_taken_by_every_level(client):
    for level in ("beginner", "casual", "strong", "expert"):
        for seed in range(5):
            move = bot(client, "generala", dice=[4, 4, 4, 4, 4], throw=1, level=level,
                       seed=seed)["move"]
            assert move["action"] == "score" and move["box"] == "five_of_a_kind"
            assert move["wins_game"] is True


@pytest.mark.parametrize(("body", "pointer"), [
    ({"dice": [1, 2, 3, 4, 5], "throw": 1}, "/level"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "level": "godlike"}, "/level"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "level": "casual", "seed": -1}, "/seed"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "level": "casual", "seed": MAX_SEED + 1}, "/seed"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "level": "casual", "seed": True}, "/seed"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "level": "casual", "seed": 1.5}, "/seed"),
    ({"dice": [1, 2, 3, 4], "throw": 1, "level": "casual"}, "/dice"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 4, "level": "casual"}, "/throw"),
    ({"dice": [1, 2, 3, 4, 5], "throw": 1, "level": "casual", "coach": True}, "/coach"),
])
def test_bad_requests_name_the_field(client, body, pointer):
    r = client.post(URL.format("generala"), json=body)
    assert refused(r), r.get_json()
    assert pointer in [e["pointer"] for e in r.get_json()["errors"]]


def test_a_game_already_over_is_refused(client):
    full = {b: 0 for b in VARIANTS["yahtzee"].box_ids}
    r = client.post(URL.format("yahtzee"), json={
        "dice": [1, 2, 3, 4, 5], "throw": 1, "level": "casual", "scorecard": {"boxes": full}})
    assert refused(r)
    assert "/scorecard" in [e["pointer"] for e in r.get_json()["errors"]]


def test_bot_moves_count_as_advice():
    from service.web.quotas import operation_class

    assert operation_class("/v1/variants/yahtzee/moves/bot") == "advice"
