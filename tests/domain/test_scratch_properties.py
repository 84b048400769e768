"""Chosen zeros (docs/rules.md decisions 3, 23 and 25): random legal games in which turns
write a chosen 0 (`scratch`), five of a kinds that earn a bonus included, and every endpoint
that reads a sheet must accept each sheet on the way.

Games come from tests/domain/gamegen.py with `scratches` on. Each game is played again turn
by turn through `games/turn` (which checks the sheet it is sent), and after every turn the
sheet must pass `consistency.sheet_problems`, `scorecards/score` must call it valid,
`hands/score` must score a hand on it, and on YAHTZEE and Yatzy `moves/suggest` must advise
on it (200, or 202 while a table is built) while the game goes on. The whole game must
validate, in the domain and through `games/validate`.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.domain.consistency import sheet_problems
from service.domain.games import validate_game
from service.domain.scoring import empty_sheet, parse_scorecard
from service.domain.turn import play_turn

from .gamegen import Generated, earned_json, random_game, scorecard_json, validation_json

#: (variant, options, house rules): the tables with a five-of-a-kind bonus most often, and
#: the order rules (obligada, column sheets) a chosen 0 must keep.
CONFIGS = [
    ("yahtzee", None, None), ("yahtzee", {"columns": True}, None),
    ("yahtzee", {"joker": "free"}, None), ("yahtzee", {"joker": "none"}, None),
    ("yahtzee", None, {"five_of_a_kind_bonus": {"amount": 50}}),
    ("kniffel", None, None), ("kniffel", {"extra_kniffel_needs_50": False}, None),
    ("yatzy", None, None), ("maxi_yatzy", None, None), ("generala", {"obligada": True}, None),
    ("bozo", None, None), ("general", {"columns": True, "general_de_mao": True}, None),
]
#: Variants whose advisor answers moves/suggest here (tables built once per test session).
ADVISED = [("yahtzee", None, None), ("yatzy", None, None)]
IDS = [f"{v}{'-' + '-'.join(f'{k}={x}' for k, x in (o or {}).items()) if o else ''}"
       f"{'-house' if r else ''}" for v, o, r in CONFIGS]
SCRATCHES = 0.25  # a turn in four writes a chosen 0; a bonus five of a kind three in four


def _with_rules(body: dict[str, Any], config: tuple) -> dict[str, Any]:
    _, options, rules = config
    return {**body, **({"options": options} if options else {}),
            **({"rules": rules} if rules else {})}


def _turns_in_order(gen: Generated) -> list[tuple[int, dict[str, Any]]]:
    """Every turn of the game as (player, turn), in playing order."""
    players = gen.body["players"]
    return [(p, pl["turns"][r]) for r in range(max(len(pl["turns"]) for pl in players))
            for p, pl in enumerate(players) if r < len(pl["turns"])]


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_every_endpoint_accepts_every_sheet_of_a_game_with_chosen_zeros(app, config, seed):
    variant, options, rules = config
    gen = random_game(variant, seed, players=1 + seed % 2, options=options, rules=rules,
                      scratches=SCRATCHES)
    rs = gen.rs
    client = app.test_client()
    url = f"/v1/variants/{variant}"
    sheets = [empty_sheet(rs) for _ in gen.body["players"]]
    for p, turn in _turns_in_order(gen):
        dice, throw = turn["throws"][-1], len(turn["throws"])
        box, column, scratch = turn.get("box"), turn.get("column"), turn.get("scratch", False)
        em_baixo = turn.get("em_baixo", False)
        outcome = play_turn(rs, sheets[p], dice, throw, box, column, em_baixo,
                            scratch=scratch)
        request = {"scorecard": scorecard_json(rs, sheets[p]), "dice": dice, "throw": throw,
                   "box": box, "column": column, "em_baixo": em_baixo, "scratch": scratch}
        played = client.post(f"{url}/games/turn", json=_with_rules(request, config))
        assert played.status_code == 200, played.get_json()
        answer = played.get_json()
        assert answer["earned"] == earned_json(outcome)
        if scratch and box is not None:
            assert answer["earned"]["score"] == 0 and not answer["earned"]["joker"]
        sheet = parse_scorecard(rs, answer["scorecard"])
        assert sheet == outcome.sheet
        sheets[p] = sheet

        assert sheet_problems(rs, sheet) == []
        card = answer["scorecard"]
        audit = client.post(f"{url}/scorecards/score", json=_with_rules(card, config))
        assert audit.status_code == 200 and audit.get_json()["valid"], audit.get_json()
        hand = {"dice": dice, "throw": 1, "scorecard": card}
        scored = client.post(f"{url}/hands/score", json=_with_rules(hand, config))
        assert scored.status_code == 200, scored.get_json()
        if config in ADVISED and not answer["game_over"]:
            advice = client.post(f"{url}/moves/suggest", json=hand)
            assert advice.status_code in (200, 202), advice.get_json()

    assert validate_game(rs, gen.body).valid
    checked = client.post(f"{url}/games/validate", json=gen.body)
    assert checked.status_code == 200 and checked.get_json()["valid"], checked.get_json()


def test_the_games_scratch_five_of_a_kinds_that_earn_a_bonus():
    """The property above sees what it is about: chosen zeros that keep a YAHTZEE bonus,
    and chosen zeros in boxes the forced Joker opened (lower boxes, Small Straight...)."""
    kept = lower = 0
    for seed in range(8):
        gen = random_game("yahtzee", seed, players=2, scratches=SCRATCHES)
        result = validation_json(gen.rs, gen.body)
        assert result["valid"], result["problems"]
        for player, data in zip(result["players"], gen.body["players"], strict=True):
            for record, turn in zip(player["turns"], data["turns"], strict=True):
                earned = record["earned"]
                if turn.get("scratch") and earned["five_of_a_kind_bonus"]:
                    assert earned["score"] == 0 and earned["points"] == 100
                    kept += 1
                    lower += turn["box"] not in ("ones", "twos", "threes", "fours", "fives",
                                                 "sixes")
    assert kept >= 5 and lower >= 2, (kept, lower)
