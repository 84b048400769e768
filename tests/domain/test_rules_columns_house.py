"""RULES.md §12 (column sheets), House rules (overrides, errors, fingerprints) and Names."""

from __future__ import annotations

import pytest

from service.domain.errors import InvalidInput
from service.domain.rules import effective_rules
from service.domain.scoring import parse_scorecard, score_sheet

from .rulebook import UPPER, box_ids, hand, legal, placement, totals, upper_sheet

COLS = {"columns": True}
THIRTEEN = ("yahtzee", "yahtzee_basic", "kniffel", "yams", "general")
EMPTY4 = [{}, {}, {}, {}]


# --------------------------------------------------------------------------- §12 columns


@pytest.mark.parametrize("variant", THIRTEEN)
def test_column_order_on_an_empty_sheet(variant):
    """§12: column 1 top to bottom, column 2 bottom to top, column 3 any order."""
    ids = box_ids(variant)
    result = hand(variant, [2, 2, 2, 6, 6], throw=2, options=COLS, columns=EMPTY4)
    assert legal(result, 1) == {ids[0]}
    assert legal(result, 2) == {ids[-1]}
    assert legal(result, 3) == set(ids)
    assert legal(result, 4) == set(), "column 4 only takes first-throw results"


@pytest.mark.parametrize("variant", THIRTEEN)
@pytest.mark.parametrize("k", [1, 5, 12])
def test_column_order_part_filled(variant, k):
    """§12: the next box down in column 1, the next box up in column 2."""
    ids = box_ids(variant)
    down = {b: 0 for b in ids[:k]}
    up = {b: 0 for b in ids[-k:]}
    result = hand(variant, [1, 2, 3, 4, 6], throw=3, options=COLS,
                  columns=[down, up, {}, {}])
    assert legal(result, 1) == {ids[k]}
    assert legal(result, 2) == {ids[-k - 1]}


@pytest.mark.parametrize(("throw", "open4"), [(1, True), (2, False), (3, False)])
def test_column_four_first_throw_only(throw, open4):
    """§12: column 4 only with results of the first throw ("secos")."""
    result = hand("yahtzee", [2, 2, 2, 6, 6], throw=throw, options=COLS,
                  columns=[{}, {}, {}, {"chance": 10}])
    expected = (set(box_ids("yahtzee")) - {"chance"}) if open4 else set()
    assert legal(result, 4) == expected
    assert placement(result, "full_house", 4).score == 25


def test_each_column_scores_the_hand_by_the_same_boxes():
    result = hand("general", [2, 3, 4, 5, 6], throw=1, options=COLS, columns=EMPTY4)
    for col in (1, 2, 3, 4):
        assert placement(result, "large_straight", col).score == 30


@pytest.mark.parametrize(("variant", "amount"), [("yahtzee", 35), ("kniffel", 35),
                                                   ("yams", 35), ("general", 0)])
def test_each_column_has_its_own_upper_bonus(variant, amount):
    """§12: each column has its own upper bonus where the base variant has one."""
    rs = effective_rules(variant, COLS)
    cols = [upper_sheet(3, 6, 9, 12, 15, 18),  # 63
            upper_sheet(2, 6, 9, 12, 15, 18),  # 62
            upper_sheet(5, 10, 15, 20, 25, 30),  # 105
            {}]
    t = score_sheet(rs, parse_scorecard(rs, {"columns": [{"boxes": c} for c in cols]}))
    assert [c.upper_bonus for c in t.columns] == [amount, 0, amount, 0]
    assert t.upper_bonus == 2 * amount
    assert t.total == 63 + 62 + 105 + 2 * amount


# --------------------------------------------------------------------------- house rules

def test_house_rule_box_value():
    """House rules: a box's value (Full House 30 at this table)."""
    o = {"boxes": {"full_house": {"value": 30}}}
    assert placement(hand("yahtzee", [2, 2, 2, 6, 6], overrides=o), "full_house").score == 30
    joker = hand("yahtzee", [4, 4, 4, 4, 4], overrides=o,
                 boxes={"five_of_a_kind": 50, "fours": 12})
    assert placement(joker, "full_house").score == 30, "Joker: full value of the box"


@pytest.mark.parametrize(("throw", "expected"), [(1, 30), (2, 25)])
def test_house_rule_first_throw_bonus(throw, expected):
    o = {"boxes": {"full_house": {"first_throw_bonus": 5}}}
    result = hand("yahtzee", [2, 2, 2, 6, 6], throw=throw, overrides=o)
    assert placement(result, "full_house").score == expected


def test_house_rule_remove_box():
    o = {"remove_boxes": ["chance"]}
    assert "chance" not in box_ids("yahtzee", overrides=o)
    assert len(box_ids("yahtzee", overrides=o)) == 12


@pytest.mark.parametrize(("upper", "bonus"), [
    (upper_sheet(0, 6, 9, 12, 15, 18), 30),  # 60
    (upper_sheet(0, 6, 9, 12, 15, 17), 0),  # 59
])
def test_house_rule_upper_bonus_threshold(upper, bonus):
    o = {"upper_bonus": {"threshold": 60, "amount": 30}}
    assert totals("yahtzee", upper, overrides=o).upper_bonus == bonus


def test_house_rule_no_upper_bonus():
    t = totals("yahtzee", upper_sheet(5, 10, 15, 20, 25, 30), overrides={"upper_bonus": None})
    assert t.upper_bonus == 0


def test_house_rule_five_of_a_kind_bonus():
    o = {"five_of_a_kind_bonus": {"amount": 50}}
    result = hand("yahtzee", [4, 4, 4, 4, 4], overrides=o, boxes={"five_of_a_kind": 50})
    assert placement(result, "fours").five_of_a_kind_bonus == 50
    t = totals("yahtzee", {"five_of_a_kind": 50}, overrides=o, bonuses=2)
    assert t.five_of_a_kind_bonus == 100


BAD_OVERRIDES = [
    ("yahtzee", None, {"boxes": {"villa": {"value": 3}}}, "/rules/boxes/villa"),
    ("yahtzee", None, {"boxes": {"full_house": {"value": "abc"}}},
     "/rules/boxes/full_house/value"),
    ("yahtzee", None, {"boxes": {"full_house": {"value": -5}}},
     "/rules/boxes/full_house/value"),
    ("yahtzee", None, {"remove_boxes": ["villa"]}, "/rules/remove_boxes/0"),
    ("yahtzee", None, {"upper_bonus": {"threshold": 200, "amount": 35}},
     "/rules/upper_bonus/threshold"),
    ("yahtzee", None, {"upper_bonus": {"threshold": 63, "amount": "x"}},
     "/rules/upper_bonus/amount"),
    ("yatzy", None, {"five_of_a_kind_bonus": {"amount": 50}}, "/rules/five_of_a_kind_bonus"),
    ("yahtzee", None, {"colour": "red"}, "/rules/colour"),
    ("yahtzee", {"joker": "maybe"}, None, "/options/joker"),
    ("yahtzee", {"wobble": True}, None, "/options/wobble"),
    ("general", {"trinca_quadra": "double"}, None, "/options/trinca_quadra"),
    ("generala", {"obligada": "yes"}, None, "/options/obligada"),
    ("yahtzee", None, {"remove_boxes": ["chance", "chance"]}, "/rules/remove_boxes/1"),
    # a number box scores its face's dice on every throw
    ("yahtzee", None, {"boxes": {"ones": {"first_throw_bonus": 5}}},
     "/rules/boxes/ones/first_throw_bonus"),
    ("general", None, {"boxes": {"sixes": {"first_throw_value": 40}}},
     "/rules/boxes/sixes/first_throw_value"),
    ("yahtzee", None, {"boxes": {"chance": {"value": 20}}}, "/rules/boxes/chance/value"),
]


def test_neutral_first_throw_fields_on_a_number_box_are_accepted():
    rs = effective_rules("yahtzee", None, {"boxes": {"ones": {
        "first_throw_bonus": 0, "first_throw_value": None, "wins_on_first_throw": False}}})
    assert rs.variant.box("ones").first_throw_bonus == 0


def test_a_column_sheet_without_columns_is_empty():
    rs = effective_rules("yahtzee", {"columns": True})
    assert parse_scorecard(rs, {}) == parse_scorecard(rs, None)
    with pytest.raises(InvalidInput) as err:
        parse_scorecard(rs, {"columns": [{}]})
    assert [p.pointer for p in err.value.problems] == ["/scorecard/columns"]


@pytest.mark.parametrize(("variant", "options", "overrides", "ptr"), BAD_OVERRIDES)
def test_override_that_makes_no_sense_is_an_error(variant, options, overrides, ptr):
    """House rules: "a clear error when an override makes no sense"."""
    with pytest.raises(InvalidInput) as err:
        effective_rules(variant, options, overrides)
    assert ptr in [p.pointer for p in err.value.problems]
    assert all(p.detail for p in err.value.problems)


SAME = [
    (("yahtzee", None, None), ("yahtzee", {"joker": "forced"}, None)),
    (("yahtzee", None, None), ("yahtzee", None, {"boxes": {"full_house": {"value": 25}}})),
    (("yahtzee", None, None),
     ("yahtzee", None, {"upper_bonus": {"threshold": 63, "amount": 35}})),
    (("yahtzee", None, {"upper_bonus": {"threshold": 60, "amount": 30}}),
     ("yahtzee", None, {"upper_bonus": {"amount": 30, "threshold": 60}})),
    (("general", {"aleatoria": False}, None),
     ("general", None, {"remove_boxes": ["chance"]})),
    (("general", {"trinca_quadra": "fixed"}, None),
     ("general", None, {"boxes": {"three_of_a_kind": {"scoring": "fixed", "value": 20},
                                  "four_of_a_kind": {"scoring": "fixed", "value": 30}}})),
    (("generala", None, None), ("generala", {"escalera_wraps": True, "obligada": False}, None)),
    (("yahtzee", None, None), ("yahtzee", None, {"remove_boxes": [], "boxes": {}})),
    (("yahtzee", None, {"remove_boxes": ["five_of_a_kind"]}),
     ("yahtzee", {"joker": "none"}, {"remove_boxes": ["five_of_a_kind"]})),
]
DIFFERENT = [
    (("yahtzee", None, None), ("yahtzee", {"joker": "free"}, None)),
    (("yahtzee", {"joker": "free"}, None), ("yahtzee", {"joker": "none"}, None)),
    (("yahtzee", None, None), ("yahtzee", None, {"boxes": {"full_house": {"value": 30}}})),
    (("yahtzee", None, None), ("yahtzee", None, {"remove_boxes": ["chance"]})),
    (("yahtzee", None, None), ("yahtzee", None, {"upper_bonus": {"threshold": 60}})),
    (("yahtzee", None, None), ("yahtzee", None, {"five_of_a_kind_bonus": {"amount": 50}})),
    (("yahtzee", None, None), ("yahtzee_basic", None, None)),
    (("yahtzee", None, None), ("yahtzee", COLS, None)),
    (("general", None, None), ("general", {"trinca_quadra": "matching"}, None)),
    (("general", None, None), ("general", {"general_de_mao": True}, None)),
    (("generala", None, None), ("generala", {"escalera_wraps": False}, None)),
    (("generala", None, None), ("generala", {"doble_generala": False}, None)),
    (("generala", None, None), ("generala", {"obligada": True}, None)),
    (("kniffel", None, None), ("kniffel", {"extra_kniffel_needs_50": False}, None)),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_same_effective_rules_same_fingerprint(a, b):
    assert effective_rules(*a).fingerprint == effective_rules(*b).fingerprint


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_rules_different_fingerprint(a, b):
    assert effective_rules(*a).fingerprint != effective_rules(*b).fingerprint


# --------------------------------------------------------------------------- Names

VARIANTS = ("yahtzee", "yahtzee_basic", "kniffel", "yams", "yatzy", "maxi_yatzy", "general",
            "general_11", "generala", "generala_spanish", "bozo", "yacht")


def test_upper_ids_are_stable():
    for variant in VARIANTS:
        assert box_ids(variant)[:6] == UPPER


# --------------------------------------------------------------------------- validation


def test_a_value_override_replaces_the_whole_scale():
    rs = effective_rules("generala_spanish", None,
                         {"boxes": {"four_of_a_kind": {"value": 50}}})
    i = rs.box_index("four_of_a_kind")
    assert rs.score_later[i][rs.hand_index[(1, 1, 1, 1, 3)]] == 50
    assert rs.max_score[i] == 50
