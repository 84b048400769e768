"""The seeds' and the rule books' worked examples, replayed as whole games with games/turn.

Each game starts from an empty sheet and sends back the scorecard the previous answer gave,
as a game frontend does. Two kinds of games:

- the examples of tests/data/vectors.jsonl, one game per source and variant: each example
  written in its box, as long as the source's examples fill boxes not yet filled (a source
  that gives one example per box, as exercism's Yacht table and the Maxi Yatzy page do, is a
  whole game);
- games the rule book and the seeds add up themselves: seed 004's 375 and 1575, Yatzy's
  374, the Hasbro Joker example, an extra Kniffel, a Generala servida, first-throw scores,
  Maxi Yatzy's saved throws and a column sheet.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from tests.domain.rulebook import UPPER
from tests.domain.test_vectors import ROWS, box_id, options_for


def play(client, variant: str, turns: list[tuple], options: dict | None = None
         ) -> list[dict[str, Any]]:
    """Play turns (dice, throw, box[, column]) in order; every answer, the last one last."""
    card = None
    answers = []
    for dice, throw, box, *column in turns:
        body: dict[str, Any] = {"dice": dice, "throw": throw, "box": box}
        if column:
            body["column"] = column[0]
        if card is not None:
            body["scorecard"] = card
        if options:
            body["options"] = options
        resp = client.post(f"/v1/variants/{variant}/games/turn", json=body)
        assert resp.status_code == 200, (body, resp.get_json())
        answer = resp.get_json()
        answers.append(answer)
        card = answer["scorecard"]
    return answers


# --------------------------------------------------------------------------- vectors


def _vector_games() -> list[Any]:
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for row in ROWS:
        if row.get("kind") or row.get("context"):
            continue  # predicates; the Joker example is a game of its own below
        key = (row["source"], row["variant"], repr(sorted(options_for(row).items())))
        groups[key].append(row)
    params = []
    for (source, variant, _), rows in groups.items():
        seen: set[str] = set()
        game = []
        for row in rows:
            box = box_id(row["category"])
            if box not in seen:
                seen.add(box)
                game.append(row)
        params.append(pytest.param(variant, options_for(game[0]), game,
                                   id=f"{variant}-{source[:40]}"))
    return params


@pytest.mark.parametrize(("variant", "options", "rows"), _vector_games())
def test_worked_examples_as_a_game(client, variant, options, rows):
    turns = [(r["dice"], r.get("roll") or 2, box_id(r["category"])) for r in rows]
    answers = play(client, variant, turns, options)
    for row, answer in zip(rows, answers, strict=True):
        assert answer["earned"]["score"] == row["expected"], row
    last = answers[-1]
    assert last["totals"]["total"] == sum(a["earned"]["points"] for a in answers)
    assert last["turn"] == len(rows)
    n_boxes = len(last["scorecard"]["boxes"])
    assert last["game_over"] == (len(rows) == n_boxes)


def test_the_yacht_table_and_the_maxi_yatzy_page_are_whole_games(client):
    """exercism's table and maxiyatzy.com give one example per box: whole games."""
    for variant, total, boxes in (("yacht", 206, 12), ("maxi_yatzy", 414, 20)):
        rows = [r for r in ROWS if r["variant"] == variant and "context" not in r
                and (variant != "yacht" or r["source"].startswith("exercism"))]
        assert len({box_id(r["category"]) for r in rows}) == boxes
        answers = play(client, variant, [(r["dice"], 2, box_id(r["category"])) for r in rows])
        assert answers[-1]["game_over"] and answers[-1]["totals"]["total"] == total


# --------------------------------------------------------------------------- rule book


def test_seed_004_375_without_yahtzee_bonus(client):
    """Seed 004: 105 + 35 + 30 * 3 + 25 + 30 + 40 + 50 = 375."""
    turns = [([f] * 5, 3, b) for f, b in zip(range(1, 7), UPPER)]  # YAHTZEE box still open
    turns += [([6] * 5, 3, "three_of_a_kind"), ([6] * 5, 3, "four_of_a_kind"),
              ([6] * 5, 3, "chance"), ([2, 2, 3, 3, 3], 2, "full_house"),
              ([1, 2, 3, 4, 6], 2, "small_straight"), ([2, 3, 4, 5, 6], 2, "large_straight"),
              ([6] * 5, 3, "five_of_a_kind")]
    answers = play(client, "yahtzee", turns)
    assert [a["earned"]["upper_bonus"] for a in answers[:6]] == [0, 0, 0, 0, 35, 0]  # 75
    last = answers[-1]
    assert last["totals"]["total"] == 375 and last["game_over"] and last["turns_left"] == 0


def test_seed_004_1575_a_yahtzee_every_turn(client):
    """Seed 004: the YAHTZEE first, then twelve more at +100 each, the forced Joker sending
    each to its number box, then to the lower boxes at full value."""
    turns = [([1] * 5, 3, "five_of_a_kind")]
    turns += [([f] * 5, 3, b) for f, b in zip(range(1, 7), UPPER)]
    turns += [([6] * 5, 3, b) for b in ("three_of_a_kind", "four_of_a_kind", "full_house",
                                       "small_straight", "large_straight", "chance")]
    answers = play(client, "yahtzee", turns)
    assert [a["earned"]["five_of_a_kind_bonus"] for a in answers] == [0] + [100] * 12
    assert [a["earned"]["joker"] for a in answers[7:]] == [False, False, True, True, True,
                                                           False]
    assert answers[-1]["scorecard"]["five_of_a_kind_bonuses"] == 12
    assert answers[-1]["totals"]["total"] == 1575 and answers[-1]["game_over"]


def test_yatzy_maximum_374(client):
    """§5: Maximum 374."""
    turns = [([f] * 5, 3, b) for f, b in zip(range(1, 7), UPPER)]
    turns += [([6, 6, 1, 2, 3], 2, "one_pair"), ([6, 6, 5, 5, 1], 2, "two_pairs"),
              ([6, 6, 6, 1, 2], 2, "three_of_a_kind"), ([6, 6, 6, 6, 1], 2, "four_of_a_kind"),
              ([1, 2, 3, 4, 5], 2, "small_straight"), ([2, 3, 4, 5, 6], 2, "large_straight"),
              ([6, 6, 6, 5, 5], 2, "full_house"), ([6] * 5, 2, "chance"),
              ([6] * 5, 2, "five_of_a_kind")]
    answers = play(client, "yatzy", turns)
    assert [a["earned"]["upper_bonus"] for a in answers[:6]] == [0, 0, 0, 0, 50, 0]
    assert answers[-1]["totals"]["total"] == 374 and answers[-1]["game_over"]


def test_hasbro_joker_example(client):
    """Hasbro: YAHTZEE box scratched, Fours filled: 4-4-4-4-4 in Large Straight for 40,
    with no bonus (the YAHTZEE box holds 0)."""
    answers = play(client, "yahtzee", [([1, 2, 3, 4, 6], 2, "five_of_a_kind"),
                                       ([4, 4, 4, 1, 2], 2, "fours"),
                                       ([4, 4, 4, 4, 4], 3, "large_straight")])
    assert answers[-1]["earned"] == {"box": "large_straight", "column": None, "score": 40,
                                     "joker": True, "five_of_a_kind_bonus": 0,
                                     "upper_bonus": 0, "first_throw_bonus": 0,
                                     "wins_game": False, "points": 40}


def test_an_extra_kniffel(client):
    """§3: with the Kniffel box at 50, 2-2-2-2-2 goes into Twos: 10 and +50."""
    answers = play(client, "kniffel", [([5] * 5, 3, "five_of_a_kind"),
                                       ([2] * 5, 3, "twos")])
    assert answers[-1]["earned"]["score"] == 10
    assert answers[-1]["earned"]["five_of_a_kind_bonus"] == 50
    assert answers[-1]["totals"]["upper_subtotal"] == 10  # decision 17


def test_a_generala_servida_ends_the_game(client):
    """§9, seed 002: a Generala servida wins at once; the game is over."""
    answers = play(client, "generala", [([3, 4, 5, 6, 1], 1, "straight"),
                                        ([4, 4, 2, 2, 2], 1, "full_house"),
                                        ([6, 6, 6, 1, 2], 2, "sixes"),
                                        ([2, 2, 2, 2, 2], 1, "five_of_a_kind")])
    assert [a["earned"]["score"] for a in answers] == [25, 35, 18, 50]
    assert [a["earned"]["first_throw_bonus"] for a in answers] == [5, 5, 0, 0]
    last = answers[-1]
    assert last["won"] and last["game_over"] and last["earned"]["wins_game"]
    assert last["turns_left"] == 0
    after = dict(dice=[1, 1, 1, 2, 3], throw=2, box="ones", scorecard=last["scorecard"])
    resp = client.post("/v1/variants/generala/games/turn", json=after).get_json()
    assert resp["type"] == "/problems/illegal-move" and resp["code"] == "game_won"


def test_general_11_first_throw_scores(client):
    """Seed 003: Sequência, Full-hand and Quadra +5 on the first throw; General never."""
    answers = play(client, "general_11", [([1, 2, 3, 4, 5], 1, "straight"),
                                          ([2, 2, 2, 6, 6], 2, "full_house"),
                                          ([5, 5, 5, 5, 2], 1, "four_of_a_kind"),
                                          ([6] * 5, 1, "five_of_a_kind")])
    assert [a["earned"]["score"] for a in answers] == [25, 30, 45, 50]
    assert not answers[-1]["won"]


def test_maxi_yatzy_saved_throws_in_a_game(client):
    """§6: throws not used are saved and may be spent later."""
    answers = play(client, "maxi_yatzy", [([1, 2, 3, 4, 5, 6], 1, "full_straight"),
                                          ([6] * 6, 5, "six_of_a_kind"),
                                          ([1, 1, 2, 2, 3, 3], 2, "three_pairs")])
    assert [a["scorecard"]["saved_throws"] for a in answers] == [2, 0, 1]
    assert answers[-1]["totals"]["total"] == 21 + 100 + 12


def test_a_column_sheet_game(client):
    """§12: column 1 top to bottom, column 2 bottom to top, column 3 any order, column 4
    first-throw results only; each column its own upper bonus."""
    opts = {"columns": True}
    turns = [([1, 1, 1, 2, 3], 3, "ones", 1), ([4, 4, 4, 4, 4], 1, "five_of_a_kind", 4),
             ([2, 3, 4, 1, 6], 2, "chance", 2), ([6, 6, 6, 1, 2], 2, "sixes", 3),
             ([2, 2, 2, 5, 5], 2, "twos", 1)]
    answers = play(client, "yahtzee", turns, opts)
    assert [a["earned"]["score"] for a in answers] == [3, 50, 16, 18, 6]
    assert answers[-1]["turn"] == 5 and answers[-1]["turns_left"] == 47
    assert answers[-1]["totals"]["total"] == 93
