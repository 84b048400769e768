"""Property tests of whole games: random legal games of every variant (column sheets and
options included) validate as valid, with the totals of their final sheets; each single
mutation of such a game is found and pointed at the right place.

Games come from tests/domain/gamegen.py (random dice, random legal boxes); hypothesis draws
the seeds, a few per variant, so the suite stays bounded.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.domain.consistency import sheet_problems
from service.domain.scoring import parse_scorecard, score_sheet

from .gamegen import Generated, random_game, validation_json

CONFIGS = [
    ("yahtzee", None, None), ("yahtzee_basic", None, None), ("kniffel", None, None),
    ("yams", None, None), ("yatzy", None, None), ("maxi_yatzy", None, None),
    ("general", None, None), ("general_11", None, None), ("generala", None, None),
    ("generala_spanish", None, None), ("bozo", None, None), ("yacht", None, None),
    ("yahtzee", {"columns": True}, None),
    ("general", {"columns": True, "general_de_mao": True, "trinca_quadra": "matching"}, None),
    ("kniffel", {"extra_kniffel_needs_50": False}, None),
    ("yahtzee", {"joker": "free"}, None),
    ("generala", {"obligada": True}, None),
    ("generala_spanish", {"doble_generala": True}, None),
    ("yahtzee", None, {"boxes": {"full_house": {"first_throw_bonus": 5}},
                       "five_of_a_kind_bonus": {"amount": 50}}),
]
IDS = [f"{v}{'-' + '-'.join(f'{k}={x}' for k, x in (o or {}).items()) if o else ''}"
       f"{'-house' if r else ''}" for v, o, r in CONFIGS]
SEEDS = st.integers(0, 2**32 - 1)
SETTINGS = settings(max_examples=3, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def game(config: tuple, seed: int, **kw: Any) -> Generated:
    variant, options, rules = config
    return random_game(variant, seed, players=1 + seed % 3, options=options, rules=rules, **kw)


def validate(gen: Generated, body: dict | None = None) -> dict[str, Any]:
    return validation_json(gen.rs, body if body is not None else gen.body)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@SETTINGS
@given(seed=SEEDS)
def test_random_legal_games_are_valid(config, seed):
    gen = game(config, seed)
    result = validate(gen)
    assert result["valid"], result["problems"]
    assert result["game_over"]
    for player, sheet in zip(result["players"], gen.sheets, strict=True):
        final = parse_scorecard(gen.rs, player["scorecard"])
        assert final == sheet
        assert not sheet_problems(gen.rs, final)
        assert player["total"] == score_sheet(gen.rs, final, final=True).total
        assert player["turns"][-1]["running_total"] == player["total"]
        assert all(t["status"] == "ok" for t in player["turns"])


# --------------------------------------------------------------------------- mutations


def _turns(body: dict) -> list[tuple[int, int, dict]]:
    """Every turn of the game as (player, turn index, turn)."""
    return [(p, t, turn) for p, pl in enumerate(body["players"])
            for t, turn in enumerate(pl["turns"])]


def _play_position(pointer: str) -> tuple[int, int] | None:
    """(round, player) of a turn pointer, or None for claims outside the turns."""
    parts = pointer.strip("/").split("/")
    if len(parts) >= 4 and parts[0] == "players" and parts[2] == "turns":
        return int(parts[3]), int(parts[1])
    return None


def assert_found(result: dict, pointer: str, code: str) -> None:
    found = [(p["pointer"], p["code"]) for p in result["problems"]]
    assert (pointer, code) in found, found
    assert not result["valid"]
    # nothing is blamed on a turn played before the mutated one
    where = _play_position(pointer)
    for p in result["problems"]:
        pos = _play_position(p["pointer"])
        assert pos is None or where is None or pos >= where, (pointer, found)


def mutate_face(gen: Generated, rng: random.Random) -> tuple[dict, str, str]:
    body = copy.deepcopy(gen.body)
    p, t, turn = rng.choice(_turns(body))
    k = rng.randrange(len(turn["throws"]))
    d = rng.randrange(len(turn["throws"][k]))
    turn["throws"][k][d] = rng.choice((0, 7, 9))
    return body, f"/players/{p}/turns/{t}/throws/{k}/{d}", "bad_face"


def mutate_kept(gen: Generated, rng: random.Random) -> tuple[dict, str, str] | None:
    body = copy.deepcopy(gen.body)
    choices = [(p, t, turn, k) for p, t, turn in _turns(body)
               for k, keep in enumerate(turn["kept"]) if keep]
    if not choices:
        return None
    p, t, turn, k = rng.choice(choices)
    face = rng.choice(turn["kept"][k])
    nxt = turn["throws"][k + 1]
    # leave one die of that face fewer in the next throw than were kept
    surplus = nxt.count(face) - turn["kept"][k].count(face) + 1
    for i, d in enumerate(nxt):
        if d == face and surplus > 0:
            nxt[i] = face % 6 + 1
            surplus -= 1
    return body, f"/players/{p}/turns/{t}/kept/{k}", "kept_not_in_next_throw"


def mutate_box_twice(gen: Generated, rng: random.Random) -> tuple[dict, str, str] | None:
    body = copy.deepcopy(gen.body)
    choices = []
    for p, pl in enumerate(body["players"]):
        written = [(t, turn) for t, turn in enumerate(pl["turns"]) if turn.get("box")]
        choices += [(p, later, first) for i, first in enumerate(written)
                    for later in written[i + 1:]]
    if not choices:
        return None
    p, (t, turn), (_, first) = rng.choice(choices)
    turn["box"] = first["box"]
    if "column" in first:
        turn["column"] = first["column"]
    return body, f"/players/{p}/turns/{t}/box", "box_filled"


def mutate_points(gen: Generated, rng: random.Random) -> tuple[dict, str, str]:
    body = copy.deepcopy(gen.body)
    p, t, turn = rng.choice(_turns(body))
    turn["points"] += 1
    return body, f"/players/{p}/turns/{t}/points", "points_mismatch"


def mutate_extra_throw(gen: Generated, rng: random.Random) -> tuple[dict, str, str]:
    body = copy.deepcopy(gen.body)
    p, t, turn = rng.choice(_turns(body))
    limit = gen.limits[(p, t)]
    while len(turn["throws"]) <= limit:  # throw everything again, with the same dice
        turn["kept"].append([])
        turn["throws"].append(list(turn["throws"][-1]))
    return body, f"/players/{p}/turns/{t}/throws/{limit}", "too_many_throws"


MUTATIONS = {"face": mutate_face, "kept": mutate_kept, "box_twice": mutate_box_twice,
             "points": mutate_points, "extra_throw": mutate_extra_throw}


@pytest.mark.parametrize("mutation", list(MUTATIONS))
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@settings(max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS)
def test_each_mutation_is_found_where_it_is(config, mutation, seed):
    gen = game(config, seed)
    mutated = MUTATIONS[mutation](gen, random.Random(seed))
    if mutated is None:
        return  # nothing to mutate in this game (no kept dice, a single box)
    body, pointer, code = mutated
    assert_found(validate(gen, body), pointer, code)


INSTANT = [c for c, i in zip(CONFIGS, IDS) if c[0] in ("generala", "generala_spanish", "bozo")]


@pytest.mark.parametrize("config", INSTANT, ids=[f"{c[0]}-{i}" for i, c in enumerate(INSTANT)])
@SETTINGS
@given(seed=SEEDS)
def test_a_turn_after_an_instant_win_is_found(config, seed):
    rng = random.Random(seed)
    players = 1 + seed % 3
    at = (rng.randrange(players), rng.randrange(4))
    gen = random_game(config[0], seed, players=players, options=config[1],
                      force_win_at=at)
    assert gen.winner is not None and gen.winner[::-1] <= at[::-1]  # (round, player)
    result = validate(gen)
    assert result["valid"] and result["ended_by"] == "instant_win"
    assert result["winners"] == [gen.winner[0]]
    w, r = gen.winner
    body = copy.deepcopy(gen.body)
    nxt = (w + 1, r) if w + 1 < players else (0, r + 1)
    extra = copy.deepcopy(body["players"][w]["turns"][r])
    body["players"][nxt[0]]["turns"].append(extra)
    assert len(body["players"][nxt[0]]["turns"]) == nxt[1] + 1
    assert_found(validate(gen, body), f"/players/{nxt[0]}/turns/{nxt[1]}", "game_won")
