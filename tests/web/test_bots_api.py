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
            assert out["move"] in ranked["moves"]
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


def test_bot_moves_count_as_advice(app):
    from service.web.frontdoor import Router

    route = Router(app).route({"REQUEST_METHOD": "POST", "SERVER_NAME": "localhost",
                               "PATH_INFO": "/v1/variants/yahtzee/moves/bot",
                               "SERVER_PORT": "80", "wsgi.url_scheme": "http"})
    assert route.operation == "advice"


# --------------------------------------------------------------------------- playing to win

YAHTZEE_IDS = VARIANTS["yahtzee"].box_ids
#: Three boxes left each, 40 points behind: the winning move is exact (winprob.MAX_WIN_OPEN)
LATE_ME = {b: 0 for b in YAHTZEE_IDS if b not in ("small_straight", "large_straight",
                                                  "five_of_a_kind")}
LATE_THEM = dict(LATE_ME, chance=20, three_of_a_kind=20)


def test_suggest_to_win_ranks_every_move_by_its_win_share(client):
    """objective win: every alternative has its win share, ranked by it; late in a game it
    is exact and agrees with games/win-probability's winning move."""
    position = {"dice": [2, 3, 4, 5, 5], "throw": 1, "scorecard": {"boxes": LATE_ME}}
    r = client.post(SUGGEST.format("yahtzee"), json={
        **position, "objective": "win", "opponents": [{"boxes": LATE_THEM}]})
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    assert out["objective"] == "win" and out["win_exact"] is True
    assert out["win_method"].startswith("exact")
    shares = [a["win_share"] for a in out["moves"]]
    assert shares == sorted(shares, reverse=True) and out["best"] == out["moves"][0]
    assert all(0.0 <= s <= 1.0 for s in shares)
    chances = client.post("/v1/variants/yahtzee/games/win-probability", json={
        "players": [{"scorecard": {"boxes": LATE_ME}}, {"scorecard": {"boxes": LATE_THEM}}],
        "dice": [2, 3, 4, 5, 5], "throw": 1}).get_json()
    assert chances["move"]["exact"]
    assert out["best"]["win_share"] == pytest.approx(chances["move"]["max_win"]["win_share"],
                                                     abs=1e-9)
    plain = client.post(SUGGEST.format("yahtzee"), json=position).get_json()
    assert plain["objective"] == "score" and "win_share" not in plain["best"]
    assert "win_exact" not in plain


def test_suggest_to_win_early_in_a_game_is_approximate_and_says_so(client):
    r = client.post(SUGGEST.format("yahtzee"), json={
        "dice": [1, 1, 4, 5, 6], "throw": 2, "objective": "win",
        "opponents": [{"boxes": {"chance": 25}}, {}]})
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    assert out["win_exact"] is False and out["win_method"].startswith("approximate")
    shares = [a["win_share"] for a in out["moves"]]
    assert shares == sorted(shares, reverse=True)
    # two opponents, one of them 25 points up: the player to move is no favourite
    assert 0.05 < out["best"]["win_share"] < 0.5


def test_a_bot_playing_to_win_plays_the_move_likeliest_to_win(client):
    position = {"dice": [2, 3, 4, 5, 5], "throw": 1, "scorecard": {"boxes": LATE_ME},
                "objective": "win", "opponents": [{"boxes": LATE_THEM}]}
    ranked = client.post(SUGGEST.format("yahtzee"), json=position).get_json()
    out = bot(client, "yahtzee", level="expert", seed=3, **position)
    assert out["objective"] == "win" and out["win_exact"] is True
    assert out["move"] == ranked["best"]
    for seed in range(6):
        move = bot(client, "yahtzee", level="beginner", seed=seed, **position)["move"]
        assert move in ranked["moves"]


@pytest.mark.parametrize(("body", "pointer", "code"), [
    ({"objective": "win"}, "/opponents", "opponents_required"),
    ({"objective": "win", "opponents": []}, "/opponents", None),
    ({"opponents": [{}]}, "/opponents", "opponents_without_win"),
    ({"objective": "points", "opponents": [{}]}, "/objective", None),
    ({"objective": "win", "opponents": [{"boxes": {"sixes": 7}}]},
     "/opponents/0/boxes/sixes", None),
    ({"objective": "win", "opponents": [{}, {"boxes": {"chance": 3}}]},
     "/opponents/1/boxes/chance", None),
    ({"objective": "win", "opponents": [{}] * 8}, "/opponents", None),
])
def test_playing_to_win_refuses_what_no_game_has(client, body, pointer, code):
    _refused_by_suggest_and_bot(client, body, pointer, code)


def _refused_by_suggest_and_bot(client, body: dict, pointer: str, code: str | None,
                                status: int | None = None) -> None:
    """moves/suggest and moves/bot both refuse `body` (beside a first throw of YAHTZEE),
    naming `pointer`, with `code` when given, and `status` with the code when given."""
    for url, extra in ((SUGGEST, {}), (URL, {"level": "expert"})):
        r = client.post(url.format("yahtzee"), json={
            "dice": [1, 2, 3, 4, 5], "throw": 1, **extra, **body})
        assert refused(r), r.get_json()
        errors = r.get_json()["errors"]
        assert pointer in [e["pointer"] for e in errors], errors
        if code:
            assert code in [e.get("code") for e in errors]
            if status:
                assert r.status_code == status


def test_an_opponent_who_won_at_once_ends_the_game(client):
    r = client.post(SUGGEST.format("generala"), json={
        "dice": [1, 2, 3, 4, 5], "throw": 1, "objective": "win",
        "opponents": [{"boxes": {"five_of_a_kind": 50}, "won": True}]})
    assert refused(r) and r.status_code == 409
    assert [(e["pointer"], e.get("code")) for e in r.get_json()["errors"]] == [
        ("/opponents/0/won", "game_won")]


def test_suggest_and_bot_to_reach_a_target(client):
    """objective target: every alternative has its target probability, ranked by it; late
    in a game it is exact, and the expert bot plays the best one."""
    position = {"dice": [2, 3, 4, 5, 5], "throw": 1, "scorecard": {"boxes": LATE_ME}}
    out = client.post(SUGGEST.format("yahtzee"), json={
        **position, "objective": "target", "target": 40}).get_json()
    assert out["objective"] == "target" and out["target"] == 40
    assert out["target_exact"] is True and out["target_method"].startswith("exact")
    probs = [a["target_probability"] for a in out["moves"]]
    assert probs == sorted(probs, reverse=True) and out["best"] == out["moves"][0]
    assert 0.0 < probs[0] < 1.0 and "win_share" not in out["best"]
    # a 40 needs a straight or a YAHTZEE: the expected-score best may not be the target's
    for seed in range(3):
        bot = client.post(URL.format("yahtzee"), json={
            **position, "objective": "target", "target": 40, "level": "expert",
            "seed": seed}).get_json()
        assert bot["objective"] == "target" and bot["target_exact"] is True
        assert bot["move"] == out["best"]
    reached = client.post(SUGGEST.format("yahtzee"), json={
        **position, "objective": "target", "target": 0}).get_json()
    assert {a["target_probability"] for a in reached["moves"]} == {1.0}
    mid = client.post(SUGGEST.format("yahtzee"), json={
        "dice": [2, 3, 4, 5, 5], "throw": 1, "objective": "target", "target": 250}).get_json()
    assert mid["target_exact"] is False and 0.0 < mid["best"]["target_probability"] < 1.0


@pytest.mark.parametrize(("body", "pointer", "code"), [
    ({"objective": "target"}, "/target", "target_required"),
    ({"target": 200}, "/target", "target_without_objective"),
    ({"objective": "win", "opponents": [{}], "target": 200}, "/target",
     "target_without_objective"),
    ({"objective": "target", "target": -1}, "/target", None),
    ({"objective": "target", "target": 1.5}, "/target", None),
    ({"objective": "target", "target": 200, "opponents": [{}]}, "/opponents",
     "opponents_without_win"),
])
def test_playing_to_a_target_refuses_a_request_without_one(client, body, pointer, code):
    _refused_by_suggest_and_bot(client, body, pointer, code, status=409)
