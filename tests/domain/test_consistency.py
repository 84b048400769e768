"""The one rule for what a sheet may hold (service/domain/consistency.py): each code on the
sheets that break it, and sheets the rules allow that must pass."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.domain.consistency import bonus_boxes, check_sheet, sheet_problems
from service.domain.errors import ALL_CODES, SHEET_CODES, InvalidInput
from service.domain.rules import effective_rules
from service.domain.scoring import parse_scorecard

from .rulebook import UPPER, box_ids, filled_except

DOCS = Path(__file__).resolve().parents[2] / "docs" / "problems.md"


def problems(variant, card, options=None, rules=None, base="/scorecard"):
    rs = effective_rules(variant, options, rules)
    return [(p.pointer, p.code) for p in sheet_problems(rs, parse_scorecard(rs, card), base)]


def columns(*cols, **extra):
    return {"columns": [{"boxes": c} for c in cols], **extra}


BAD = [
    # the sheets
    ("yahtzee", None, {"boxes": {"ones": 7}}, "/scorecard/boxes/ones", "value_not_achievable"),
    ("yahtzee", None, {"boxes": {"full_house": 24}}, "/scorecard/boxes/full_house",
     "value_not_achievable"),
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 50}, "five_of_a_kind_bonuses": 13},
     "/scorecard/five_of_a_kind_bonuses", "too_many_bonuses"),
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 0}, "five_of_a_kind_bonuses": 2},
     "/scorecard/five_of_a_kind_bonuses", "bonus_without_five_of_a_kind"),
    ("yahtzee", None, {"boxes": {"ones": 5}, "five_of_a_kind_bonuses": 1},
     "/scorecard/five_of_a_kind_bonuses", "bonus_without_five_of_a_kind"),
    # a YAHTZEE of sixes in Chance needs the Sixes box filled (forced Joker)
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 50, "chance": 30},
                       "five_of_a_kind_bonuses": 1},
     "/scorecard/five_of_a_kind_bonuses", "too_many_bonuses"),
    # a chosen 0 with the bonus (decision 23) needs a box the five of a kind may go in:
    # with every number box open the forced Joker sends it to its number box
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 50, "chance": 0},
                       "five_of_a_kind_bonuses": 1},
     "/scorecard/five_of_a_kind_bonuses", "too_many_bonuses"),
    # Kniffel's +50 is the roll scored in its number box: a 0 there took none
    ("kniffel", None, {"boxes": {"five_of_a_kind": 50, "fours": 0},
                       "five_of_a_kind_bonuses": 1},
     "/scorecard/five_of_a_kind_bonuses", "too_many_bonuses"),
    # Joker values only where there is a Joker: 25 in Full House needs 3+2 on the basic sheet
    ("yahtzee_basic", None, {"boxes": {"full_house": 30}}, "/scorecard/boxes/full_house",
     "value_not_achievable"),
    ("yatzy", None, {"boxes": {"one_pair": 13}}, "/scorecard/boxes/one_pair",
     "value_not_achievable"),
    # first-throw values only where the table has them
    ("general_11", None, {"boxes": {"straight": 30}}, "/scorecard/boxes/straight",
     "value_not_achievable"),
    ("generala", {"doble_generala": True}, {"boxes": {"five_of_a_kind": 0,
                                                       "double_five_of_a_kind": 100}},
     "/scorecard/boxes/double_five_of_a_kind", "requires_made_box"),
    ("generala", {"obligada": True}, {"boxes": {"ones": 3, "threes": 9}},
     "/scorecard/boxes/threes", "out_of_order"),
    # Kniffel's limit: each extra Kniffel is five of its face in its free number box
    ("kniffel", None, {"boxes": {"five_of_a_kind": 50, "twos": 10, "threes": 9},
                       "five_of_a_kind_bonuses": 2},
     "/scorecard/five_of_a_kind_bonuses", "too_many_bonuses"),
    ("kniffel", None, {"boxes": {"five_of_a_kind": 0, "twos": 10},
                       "five_of_a_kind_bonuses": 1},
     "/scorecard/five_of_a_kind_bonuses", "bonus_without_five_of_a_kind"),
    ("maxi_yatzy", None, {"boxes": {"ones": 2, "twos": 4}, "saved_throws": 5},
     "/scorecard/saved_throws", "too_many_saved_throws"),
    ("yatzy", None, {"won": True}, "/scorecard/won", "cannot_win"),
    # column sheets: column 1 top to bottom, column 2 bottom to top, column 4 first throw
    ("yahtzee", {"columns": True}, columns({"twos": 6}, {}, {}, {}),
     "/scorecard/columns/0/boxes/twos", "out_of_order"),
    ("yahtzee", {"columns": True}, columns({}, {"ones": 3}, {}, {}),
     "/scorecard/columns/1/boxes/ones", "out_of_order"),
    ("general", {"columns": True, "general_de_mao": True},
     columns({}, {}, {}, {"five_of_a_kind": 50}),
     "/scorecard/columns/3/boxes/five_of_a_kind", "first_throw_only"),
    ("general", {"columns": True}, columns({}, {}, {"ones": 9}, {}),
     "/scorecard/columns/2/boxes/ones", "value_not_achievable"),
    # decision 16: the bonus follows the five-of-a-kind box of its own column
    ("yahtzee", {"columns": True},
     {"columns": [{"boxes": {}}, {"boxes": {}},
                  {"boxes": {"sixes": 30}, "five_of_a_kind_bonuses": 1},
                  {"boxes": {"five_of_a_kind": 50}}]},
     "/scorecard/columns/2/five_of_a_kind_bonuses", "bonus_without_five_of_a_kind"),
]


@pytest.mark.parametrize(("variant", "options", "card", "pointer", "code"), BAD,
                         ids=[f"{b[0]}-{b[4]}-{i}" for i, b in enumerate(BAD)])
def test_each_impossible_sheet_is_named(variant, options, card, pointer, code):
    assert (pointer, code) in problems(variant, card, options)


GOOD = [
    ("yahtzee", None, {"boxes": {"ones": 5, "full_house": 25, "chance": 7}}),
    # Hasbro: a YAHTZEE of sixes in Sixes, then one of fives in Chance with Fives filled
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 50, "sixes": 30, "fives": 15,
                                 "chance": 25}, "five_of_a_kind_bonuses": 2}),
    # the 1575 sheet: a YAHTZEE on every turn
    ("yahtzee", None, {"boxes": {**{b: 5 * (i + 1) for i, b in enumerate(UPPER)},
                                 "three_of_a_kind": 30, "four_of_a_kind": 30, "full_house": 25,
                                 "small_straight": 30, "large_straight": 40,
                                 "five_of_a_kind": 50, "chance": 30},
                       "five_of_a_kind_bonuses": 12}),
    # the sheet: five 6s written as a chosen 0 in Small Straight keep the +100
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 50, "sixes": 18, "small_straight": 0},
                       "five_of_a_kind_bonuses": 1}),
    # five 1s as a chosen 0 in Ones (the forced Joker's box), +100
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 50, "ones": 0},
                       "five_of_a_kind_bonuses": 1}),
    # a YAHTZEE on every turn, each further one a chosen 0
    ("yahtzee", None, {"boxes": {b: 0 for b in box_ids("yahtzee")} | {"five_of_a_kind": 50},
                       "five_of_a_kind_bonuses": 12}),
    # column sheets: five 6s in Sixes, then five 6s as a chosen 0 in Chance, both +100
    ("yahtzee", {"columns": True},
     {"columns": [{"boxes": {}}, {"boxes": {}},
                  {"boxes": {"five_of_a_kind": 50, "sixes": 30, "chance": 0},
                   "five_of_a_kind_bonuses": 2}, {"boxes": {}}]}),
    # the Joker example: YAHTZEE box 0, fours filled, 4-4-4-4-4 in Large Straight (no bonus)
    ("yahtzee", None, {"boxes": {"five_of_a_kind": 0, "fours": 8, "large_straight": 40}}),
    # Kniffel: six extra Kniffels, each five of its face in its number box
    ("kniffel", None, {"boxes": {**{b: 5 * (i + 1) for i, b in enumerate(UPPER)},
                                 "five_of_a_kind": 50}, "five_of_a_kind_bonuses": 6}),
    ("kniffel", {"extra_kniffel_needs_50": False},
     {"boxes": {"five_of_a_kind": 0, "twos": 10}, "five_of_a_kind_bonuses": 1}),
    ("general_11", None, {"boxes": {"straight": 25, "full_house": 35}}),
    ("generala", None, {"boxes": {"five_of_a_kind": 50, "double_five_of_a_kind": 100}}),
    ("generala", None, {"won": True}),
    ("bozo", None, {"boxes": {"ones": 2}, "won": True}),
    ("generala", {"obligada": True}, {"boxes": {"ones": 3, "twos": 0}}),
    ("maxi_yatzy", None, {"boxes": {"ones": 2, "twos": 4}, "saved_throws": 4}),
    ("general", {"columns": True, "general_de_mao": True},
     columns({"ones": 3, "twos": 4}, {"chance": 20}, {"sixes": 12},
             {"five_of_a_kind": 100, "full_house": 0})),
    ("yahtzee", {"columns": True},
     {"columns": [{"boxes": {"ones": 5}}, {"boxes": {}},
                  {"boxes": {"five_of_a_kind": 50, "sixes": 30}, "five_of_a_kind_bonuses": 1},
                  {"boxes": {}}]}),
]


@pytest.mark.parametrize(("variant", "options", "card"), GOOD,
                         ids=[f"{g[0]}-{i}" for i, g in enumerate(GOOD)])
def test_sheets_a_game_can_produce_pass(variant, options, card):
    assert problems(variant, card, options) == []


def test_house_rules_change_what_a_box_may_hold():
    rules = {"boxes": {"full_house": {"value": 30}}}
    assert problems("yahtzee", {"boxes": {"full_house": 30}}, rules=rules) == []
    assert problems("yahtzee", {"boxes": {"full_house": 25}}, rules=rules) == [
        ("/scorecard/boxes/full_house", "value_not_achievable")]
    servida = {"boxes": {"full_house": {"first_throw_bonus": 0}}}
    assert problems("generala", {"boxes": {"full_house": 35}}, rules=servida) == [
        ("/scorecard/boxes/full_house", "value_not_achievable")]


def test_every_problem_is_reported_not_only_the_first():
    found = problems("yahtzee", {"boxes": {"ones": 7, "twos": 3, "full_house": 24},
                                 "five_of_a_kind_bonuses": 1})
    assert {c for _, c in found} == {"value_not_achievable", "bonus_without_five_of_a_kind"}
    assert len(found) == 4


def test_pointer_base_is_the_scorecard_in_the_request():
    assert problems("yahtzee", {"boxes": {"ones": 7}}, base="") == [
        ("/boxes/ones", "value_not_achievable")]
    rs = effective_rules("yahtzee")
    with pytest.raises(InvalidInput) as err:
        check_sheet(rs, parse_scorecard(rs, {"boxes": {"ones": 7}}))
    assert err.value.problems[0].code == "value_not_achievable"


def test_bonus_boxes_counts_where_a_further_five_of_a_kind_could_go():
    rs = effective_rules("yahtzee")
    full = {b: 0 for b in box_ids("yahtzee")} | {"five_of_a_kind": 50}
    # every box scratched: each of the twelve could have taken a YAHTZEE as a chosen 0 that
    # keeps its +100 (decision 23), wherever the forced Joker let it go
    sheet = parse_scorecard(rs, {"boxes": full})
    assert bonus_boxes(rs, sheet, 0) == 12
    # Ones open: five 1s must go there, but five 2s-6s may take any other box as a chosen 0
    almost = filled_except("yahtzee", ["ones"]) | {"five_of_a_kind": 50}
    assert bonus_boxes(rs, parse_scorecard(rs, {"boxes": almost}), 0) == 11
    # Kniffel's extra +50 is the roll scored in its number box: a 0 there never took one
    kn = effective_rules("kniffel")
    assert bonus_boxes(kn, parse_scorecard(kn, {"boxes": full}), 0) == 0


def test_every_code_is_documented():
    text = DOCS.read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))
    assert set(ALL_CODES) <= documented, set(ALL_CODES) - documented
    assert set(SHEET_CODES) <= set(ALL_CODES)
