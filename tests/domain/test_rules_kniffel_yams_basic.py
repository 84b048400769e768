"""RULES.md §2 (`yahtzee_basic`), §3 (`kniffel`) and §4 (`yams`) as rule-book rows."""

from __future__ import annotations

import pytest

from .rulebook import (
    UPPER,
    YAHTZEE_LOWER,
    box_ids,
    filled_except,
    hand,
    legal,
    placement,
    row,
    totals,
    upper_sheet,
)

# --------------------------------------------------------------------------- same boxes

SAME_AS_YAHTZEE = [
    ([4, 4, 4, 2, 6], "three_of_a_kind", 20),
    ([1, 5, 5, 5, 5], "four_of_a_kind", 21),
    ([2, 2, 2, 6, 6], "full_house", 25),
    ([3, 3, 3, 3, 3], "full_house", 0),
    ([1, 2, 3, 4, 6], "small_straight", 30),
    ([1, 3, 4, 5, 6], "small_straight", 30),
    ([1, 2, 3, 4, 5], "large_straight", 40),
    ([2, 3, 4, 5, 6], "large_straight", 40),
    ([6, 6, 6, 6, 6], "five_of_a_kind", 50),
    ([1, 4, 4, 5, 6], "chance", 20),
    ([4, 4, 4, 1, 2], "fours", 12),
]
ROWS = [row(v, None, d, None, None, b, e, f"§{s} as yahtzee")
        for v, s in (("yahtzee_basic", 2), ("kniffel", 3))
        for d, b, e in SAME_AS_YAHTZEE]

YAMS_ROWS = [
    row("yams", None, [1, 2, 3, 4, 5], None, None, "small_straight", 30, "§4 petite 12345"),
    row("yams", None, [2, 3, 4, 5, 6], None, None, "small_straight", 0, "§4 petite exact"),
    row("yams", None, [1, 2, 3, 4, 6], None, None, "small_straight", 0, "§4 petite exact"),
    row("yams", None, [1, 3, 4, 5, 6], None, None, "small_straight", 0, "§4 petite exact"),
    row("yams", None, [2, 3, 4, 5, 6], None, None, "large_straight", 40, "§4 grande 23456"),
    row("yams", None, [1, 2, 3, 4, 5], None, None, "large_straight", 0, "seed004 yam exact"),
    row("yams", None, [4, 4, 4, 2, 6], None, None, "three_of_a_kind", 20, "§4 brelan sum"),
    row("yams", None, [1, 5, 5, 5, 5], None, None, "four_of_a_kind", 21, "§4 carre sum"),
    row("yams", None, [2, 2, 2, 6, 6], None, None, "full_house", 25, "§4 full 25"),
    row("yams", None, [2, 2, 2, 2, 2], None, None, "five_of_a_kind", 50, "§4 yams 50"),
    row("yams", None, [1, 4, 4, 5, 6], None, None, "chance", 20, "§4 chance"),
    row("yams", None, [3, 3, 4, 4, 5], None, None, "fours", 8, "§4 upper"),
]


@pytest.mark.parametrize(("variant", "options", "dice", "throw", "sheet", "box", "expected",
                          "source"), ROWS + YAMS_ROWS)
def test_box_scores(variant, options, dice, throw, sheet, box, expected, source):
    p = placement(hand(variant, dice, options=options, throw=throw, boxes=sheet), box)
    assert p.score == expected
    assert p.legal


@pytest.mark.parametrize("variant", ["yahtzee_basic", "kniffel", "yams"])
def test_thirteen_boxes_of_yahtzee(variant):
    assert set(box_ids(variant)) == set(UPPER + YAHTZEE_LOWER)


@pytest.mark.parametrize("variant", ["yahtzee_basic", "kniffel", "yams"])
@pytest.mark.parametrize(("upper", "bonus"), [
    (upper_sheet(3, 6, 9, 12, 15, 18), 35), (upper_sheet(3, 6, 9, 12, 15, 17), 0)])
def test_upper_bonus_35_at_63(variant, upper, bonus):
    """§2, §3, §4: bonus 35 at >= 63 (seed 004: "63 exatos ja bastam", Kniffel too)."""
    assert totals(variant, upper).upper_bonus == bonus


# --------------------------------------------------------------------------- no Joker

@pytest.mark.parametrize("variant", ["yahtzee_basic", "yams"])
@pytest.mark.parametrize(("box", "expected"), [
    ("four_of_a_kind", 25), ("chance", 25), ("three_of_a_kind", 25), ("fives", 25),
    ("full_house", 0), ("small_straight", 0), ("large_straight", 0), ("ones", 0),
])
def test_second_five_of_a_kind_normal_value_no_bonus(variant, box, expected):
    """§2 (and §4 "as yahtzee_basic"): no bonus and no Joker; a second Yahtzee goes into
    another open box at that box's normal value (4K or Chance, say)."""
    result = hand(variant, [5, 5, 5, 5, 5], boxes={"five_of_a_kind": 50})
    assert legal(result) == set(box_ids(variant)) - {"five_of_a_kind"}
    p = placement(result, box)
    assert p.score == expected
    assert p.five_of_a_kind_bonus == 0


# --------------------------------------------------------------------------- Kniffel

K = "kniffel"
THREES = [3, 3, 3, 3, 3]


def test_extra_kniffel_goes_to_the_free_number_box_plus_50():
    """§3: Kniffel box has an entry and the matching number box is free: +50 there."""
    result = hand(K, THREES, boxes={"five_of_a_kind": 50})
    assert legal(result) == {"threes"}
    assert placement(result, "threes").score == 15
    assert placement(result, "threes").five_of_a_kind_bonus == 50


def test_extra_kniffel_plus_50_needs_50_by_default():
    """§3 option extra_kniffel_needs_50 (default true): +50 only when the box holds 50."""
    result = hand(K, THREES, boxes={"five_of_a_kind": 0})
    assert placement(result, "threes").five_of_a_kind_bonus == 0


def test_extra_kniffel_plus_50_on_any_entry_when_option_off():
    """§3: Schmidt's text says only "has an entry" (a 0 is an entry)."""
    result = hand(K, THREES, options={"extra_kniffel_needs_50": False},
                  boxes={"five_of_a_kind": 0})
    assert placement(result, "threes").five_of_a_kind_bonus == 50


@pytest.mark.parametrize("needs_50", [True, False])
def test_extra_kniffel_is_a_lower_joker_without_bonus_when_number_box_filled(needs_50):
    """§3: number box filled: Joker for any lower box at full value, without bonus."""
    result = hand(K, THREES, options={"extra_kniffel_needs_50": needs_50},
                  boxes={"five_of_a_kind": 50, "threes": 9})
    expected = {"three_of_a_kind": 15, "four_of_a_kind": 15, "full_house": 25,
                "small_straight": 30, "large_straight": 40, "chance": 15}
    assert legal(result) == set(expected)
    for box, value in expected.items():
        assert placement(result, box).score == value, box
        assert placement(result, box).five_of_a_kind_bonus == 0, box


def test_extra_kniffel_strikes_an_upper_box_when_lower_is_full():
    """§3: when all lower boxes are full, an upper box is struck (0)."""
    boxes = filled_except(K, ["ones", "sixes"], value=0)
    boxes.update({"five_of_a_kind": 50, "threes": 9})
    result = hand(K, THREES, boxes=boxes)
    assert legal(result) == {"ones", "sixes"}
    for box in ("ones", "sixes"):
        assert placement(result, box).score == 0
        assert placement(result, box).five_of_a_kind_bonus == 0
