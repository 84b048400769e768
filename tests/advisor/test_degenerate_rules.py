"""Degenerate house rules through every analysis operation, over HTTP: no 5xx, and answers
that agree with themselves.

The live fuzzer's first 5xx came from such a table (every first throw wins at once: the
exact forward pass met an empty level). Hypothesis draws tables of a few kinds at once:
every first throw winning at once (Chance, which every hand fills), one box left, boxes
worth 0, no upper bonus or one of threshold 1, no five-of-a-kind bonus, first-throw
bonuses, on small sheets (a few boxes left: each table is built inside the request) of
variants with and without a five-of-a-kind box, em baixo and wins at once of their own.
Each is asked positions/value (a turn start and mid-turn), games/win-probability with the
mover's dice, moves/suggest with objective win, and games/analyze of a one-turn game.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from service.domain.rules import effective_rules

pytestmark = pytest.mark.slow

#: Variants drawn: a five-of-a-kind box with Joker and bonus (yahtzee), Scandinavian boxes
#: (yatzy), servida bonuses and wins at once (generala), em baixo and de boca (bozo).
VARIANTS = ("yahtzee", "yatzy", "generala", "bozo", "yacht")


@hs.composite
def tables(draw: hs.DrawFn) -> tuple[str, dict]:
    """A variant and house rules: at most four boxes left, each maybe worth 0, winning at
    once on the first throw, or with a first-throw bonus; bonuses removed or at the
    smallest threshold."""
    vid = draw(hs.sampled_from(VARIANTS))
    v = effective_rules(vid).variant
    ids = list(v.box_ids)
    # boxes another box requires stay with it
    needed = {n for b in v.boxes for n in b.requires}
    keep = draw(hs.lists(hs.sampled_from(ids), min_size=1, max_size=4, unique=True))
    keep += [n for b in v.boxes if b.id in keep for n in b.requires if n not in keep]
    rules: dict = {"remove_boxes": [b for b in ids if b not in keep]}
    boxes: dict = {}
    for b in v.boxes:
        if b.id not in keep:
            continue
        change = draw(hs.sampled_from(["none", "zero", "wins", "bonus"]))
        if change == "zero" and b.section != "upper" and b.id not in needed:
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

    # games/analyze: one turn, stopped on the first throw in a legal box
    game = {"rules": rules, "players": [{"turns": [{"throws": [dice], "box": scored["box"]}]}]}
    r = post(client, vid, "games/analyze", game)
    assert r.status_code == 200, r.get_data(as_text=True)
    player = r.get_json()["players"][0]
    assert math.isclose(player["skill"] + player["luck"], player["difference"], abs_tol=1e-5)
    assert first in ids
