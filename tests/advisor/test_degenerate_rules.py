"""Degenerate house rules through every analysis operation, over HTTP: no 5xx, and answers
that agree with themselves.

The live fuzzer's first 5xx came from such a table (every first throw wins at once: the
exact forward pass met an empty level). Hypothesis draws tables of a few kinds at once:
every first throw winning at once (Chance, which every hand fills), one box left, boxes
worth 0, no upper bonus or one of threshold 1, no five-of-a-kind bonus, first-throw
bonuses, on small sheets (a few boxes left: each table is built inside the request) of
variants with and without a five-of-a-kind box, em baixo and wins at once of their own.
Each is asked positions/value (a turn start and mid-turn), games/win-probability with the
mover's dice, moves/suggest with objective win, and games/analyze of a one-turn game. The
variants whose five of a kind wins at once (Generala, its Spanish scale, Bozó) are also
asked games/analyze of a game their instant win ends (docs/rules.md, decision 26).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from service.domain.rules import effective_rules

pytestmark = pytest.mark.slow

#: Variants drawn: a five-of-a-kind box with Joker and bonus (yahtzee), Scandinavian boxes
#: (yatzy), servida bonuses and wins at once (generala), its Spanish scale (no servida bonus,
#: a servida still winning), em baixo and de boca (bozo).
VARIANTS = ("yahtzee", "yatzy", "generala", "generala_spanish", "bozo", "yacht")
#: The variants whose five of a kind wins at once on a first throw.
INSTANT = ("generala", "generala_spanish", "bozo")


@hs.composite
def tables(draw: hs.DrawFn, variants: tuple[str, ...] = VARIANTS,
           box: str | None = None) -> tuple[str, dict]:
    """A variant of `variants` and house rules: at most four boxes left (`box` among them
    when given, never worth 0), each maybe worth 0, winning at once on the first throw, or
    with a first-throw bonus; bonuses removed or at the smallest threshold."""
    vid = draw(hs.sampled_from(variants))
    v = effective_rules(vid).variant
    ids = list(v.box_ids)
    # boxes another box requires stay with it
    needed = {n for b in v.boxes for n in b.requires}
    keep = draw(hs.lists(hs.sampled_from(ids), min_size=1, max_size=4, unique=True))
    if box is not None and box not in keep:
        keep.append(box)
    keep += [n for b in v.boxes if b.id in keep for n in b.requires if n not in keep]
    rules: dict = {"remove_boxes": [b for b in ids if b not in keep]}
    boxes: dict = {}
    for b in v.boxes:
        if b.id not in keep:
            continue
        change = draw(hs.sampled_from(["none", "zero", "wins", "bonus"]))
        if change == "zero" and b.section != "upper" and b.id not in needed and b.id != box:
            boxes[b.id] = {"scoring": "fixed", "value": 0}
        elif change == "wins":
            boxes[b.id] = {"wins_on_first_throw": True}
        elif change == "bonus" and b.section != "upper":
            boxes[b.id] = {"first_throw_bonus": draw(hs.integers(0, 50))}
    if draw(hs.booleans()) and "chance" in keep:
        boxes["chance"] = {"wins_on_first_throw": True}  # every first throw wins at once
    if boxes:
        rules["boxes"] = boxes
    upper = [b for b in v.boxes if b.section == "upper" and b.id in keep]
    if v.upper_bonus is not None:
        if upper and draw(hs.booleans()):
            rules["upper_bonus"] = {"threshold": 1, "amount": draw(hs.integers(1, 100))}
        else:
            rules["upper_bonus"] = None
    if v.five_of_a_kind_bonus is not None and "five_of_a_kind" in keep and draw(hs.booleans()):
        rules["five_of_a_kind_bonus"] = None
    if not rules["remove_boxes"]:
        del rules["remove_boxes"]
    return vid, rules


def post(client, vid: str, path: str, body: dict):
    r = client.post(f"/v1/variants/{vid}/{path}", json=body)
    assert r.status_code < 500, (path, body, r.get_data(as_text=True))
    return r


def check_value(out: dict) -> None:
    """A position value's figures agree: the distribution is exact, sums to 1, and its mean
    and SD are the answer's."""
    d = out["distribution"]
    assert out["exact"] and d["exact"]
    assert math.isclose(d["mean"], out["expected_final_score"], abs_tol=2e-6)
    assert math.isclose(d["sd"], out["sd"], abs_tol=2e-6)
    total = sum(p["probability"] for p in d["histogram"])
    assert math.isclose(total, 1.0, abs_tol=1e-9)
    assert d["min"] <= out["expected_final_score"] + 1e-9
    assert out["expected_final_score"] <= d["max"] + 1e-9
    pcts = [d["percentiles"][q] for q in ("5", "25", "50", "75", "95")]
    assert pcts == sorted(pcts) and d["min"] <= pcts[0] and pcts[-1] <= d["max"]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(table=tables(), dice=hs.lists(hs.integers(1, 6), min_size=5, max_size=5),
       throw=hs.integers(1, 3))
def test_every_analysis_operation_answers_degenerate_rules(client, table, dice, throw):
    vid, rules = table
    rs = effective_rules(vid, None, rules)
    ids = rs.variant.box_ids
    dice = sorted(dice)

    # positions/value: a turn start and mid-turn
    r = post(client, vid, "positions/value", {"rules": rules, "histogram": True})
    assert r.status_code == 200, r.get_data(as_text=True)
    check_value(r.get_json())
    r = post(client, vid, "positions/value", {"rules": rules, "histogram": True,
                                              "dice": dice, "throw": throw})
    assert r.status_code == 200, r.get_data(as_text=True)
    check_value(r.get_json())

    # games/win-probability: two players, the second's sheet one box ahead
    first = ids[0]
    moves = post(client, vid, "moves/suggest", {"rules": rules, "dice": dice, "throw": 1})
    assert moves.status_code == 200, moves.get_data(as_text=True)
    scored = next(a for a in moves.get_json()["moves"] if a["action"] == "score")
    ahead = {"boxes": {scored["box"]: scored["score"]}} if len(ids) > 1 else {}
    body = {"rules": rules, "players": [{"scorecard": {}}, {"scorecard": ahead}],
            "dice": dice, "throw": throw}
    r = post(client, vid, "games/win-probability", body)
    assert r.status_code == 200, r.get_data(as_text=True)
    out = r.get_json()
    shares = [p["share"] for p in out["players"]]
    assert math.isclose(sum(shares), 1.0, abs_tol=3e-9)
    for p in out["players"]:
        assert -1e-12 <= p["share"] <= 1 + 1e-12
        assert math.isclose(p["first"], p["win"] + p["tie"], abs_tol=2e-9)
    move = out["move"]
    assert move["max_win"]["win_share"] >= move["max_expected_score"]["win_share"] - 1e-9

    # moves/suggest playing to win: every move's share a probability, the best first
    r = post(client, vid, "moves/suggest", {"rules": rules, "dice": dice, "throw": throw,
                                            "objective": "win",
                                            "opponents": [ahead or {"boxes": {}}]})
    assert r.status_code == 200, r.get_data(as_text=True)
    alts = r.get_json()["moves"]
    wins = [a["win_share"] for a in alts]
    assert all(-1e-12 <= w <= 1 + 1e-12 for w in wins)
    assert wins[0] == pytest.approx(max(wins), abs=1e-9)

    # games/analyze: one turn, stopped on the first throw in a legal box (which may win at
    # once), and a second player yet to play
    game = {"rules": rules, "players": [{"turns": [{"throws": [dice], "box": scored["box"]}]},
                                        {"turns": []}]}
    check_analysis(client, vid, game)
    assert first in ids


def check_analysis(client, vid: str, game: dict) -> list[dict]:
    """games/analyze of a game, against games/validate's replay of it: skill plus luck is
    each player's difference; a placement that wins at once is the best move, regret 0,
    worth the final total; once the game is over every player has finished, on the total
    games/validate gives. Returns the analysed players."""
    r = post(client, vid, "games/analyze", game)
    assert r.status_code == 200, r.get_data(as_text=True)
    players = r.get_json()["players"]
    replay = post(client, vid, "games/validate", game).get_json()
    assert replay["valid"], replay["problems"]
    for p, res, data in zip(players, replay["players"], game["players"], strict=True):
        assert math.isclose(p["skill"] + p["luck"], p["difference"], abs_tol=1e-5)
        assert p["final_total"] == res["total"]
        assert p["finished"] == (replay["game_over"] or res["complete"])
        if p["finished"]:
            assert math.isclose(p["difference"], res["total"] - p["start_expected_final_score"],
                                abs_tol=2e-6)
        for turn, record in zip(p["turns"], res["turns"], strict=True):
            if not record["earned"]["wins_game"]:
                continue
            won = turn["decisions"][-1:]  # none when the winning turn wrote no box
            assert all(d["regret"] == 0 and d["class"] == "best" and d["move"]["box"] ==
                       d["best"]["box"] == data["turns"][-1].get("box") and
                       d["expected_final_score"] == res["total"] for d in won)
    return players


@pytest.mark.parametrize("variant", INSTANT)
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=hs.data(), face=hs.integers(1, 6), em_baixo=hs.booleans(),
       pick=hs.integers(0, 10), before=hs.integers(0, 2), after=hs.integers(0, 2),
       others=hs.lists(hs.lists(hs.integers(1, 6), min_size=5, max_size=5), min_size=4,
                       max_size=4))
def test_an_instant_win_ends_the_game_on_the_best_move(client, variant, data, face, em_baixo,
                                                       pick, before, after, others):
    """Generala, its Spanish scale and Bozó under drawn house rules (their five of a kind
    kept): `before` players play a turn (two throws, so that none wins at once), then one
    throws five `face`s (Bozó: maybe announced em baixo) and writes them in a drawn legal
    box, which wins at once, and `after` players never play. The winning placement is the
    best move, regret 0, and every player has finished on their final total, skill plus
    luck their difference."""
    vid, rules = data.draw(tables((variant,), box="five_of_a_kind"))
    em_baixo = em_baixo and vid == "bozo"
    turns = []
    for k in range(before):
        second = sorted(others[2 * k + 1])
        moves = post(client, vid, "moves/suggest", {"rules": rules, "dice": second,
                                                    "throw": 2}).get_json()["moves"]
        box = next(a["box"] for a in moves if a["action"] == "score")
        turns.append({"throws": [sorted(others[2 * k]), second], "box": box})
    extra = {"em_baixo": True} if em_baixo else {}
    r = post(client, vid, "moves/suggest", {"rules": rules, "dice": [face] * 5, "throw": 1,
                                            **extra})
    assert r.status_code == 200, r.get_data(as_text=True)
    scores = [a for a in r.get_json()["moves"] if a["action"] == "score"]
    assert scores and all(a["wins_game"] for a in scores)  # decision 4: any box wins
    win = {"throws": [[face] * 5], "box": scores[pick % len(scores)]["box"], **extra}
    game = {"rules": rules, "players": [{"turns": [t]} for t in turns] + [{"turns": [win]}]
            + [{"turns": []} for _ in range(after)]}
    players = check_analysis(client, vid, game)
    assert all(p["finished"] for p in players)
    [dec] = players[before]["turns"][0]["decisions"]
    assert dec["regret"] == 0 and dec["class"] == "best"
