"""RULES.md §1 (`yahtzee`, Hasbro) and the shared mechanics, as tables of rule-book rows."""

from __future__ import annotations

import pytest

from service.domain.rules import effective_rules
from service.domain.scoring import five_of_a_kind_bonuses_possible, parse_scorecard

from .rulebook import (
    UPPER,
    YAHTZEE_LOWER,
    filled_except,
    hand,
    legal,
    placement,
    row,
    totals,
    upper_sheet,
)

Y = "yahtzee"

# --------------------------------------------------------------------------- box by box

BOX_ROWS = [
    row(Y, None, [1, 1, 1, 4, 5], None, None, "ones", 3, "seed000 jogada de 1"),
    row(Y, None, [3, 3, 4, 4, 5], None, None, "threes", 6, "seed000 jogada de 3"),
    row(Y, None, [3, 3, 4, 4, 5], None, None, "fours", 8, "seed000 jogada de 4"),
    row(Y, None, [3, 3, 4, 4, 5], None, None, "fives", 5, "seed000 jogada de 5"),
    row(Y, None, [3, 3, 4, 4, 5], None, None, "sixes", 0, "§1 sum of that face"),
    row(Y, None, [4, 4, 4, 1, 2], None, None, "fours", 12, "seed004 tres 4 dao 12"),
    row(Y, None, [4, 4, 4, 2, 6], None, None, "three_of_a_kind", 20, "seed004 trinca 20"),
    row(Y, None, [4, 4, 4, 5, 6], None, None, "three_of_a_kind", 23, "seed000 trinca 23"),
    row(Y, None, [1, 2, 3, 4, 5], None, None, "three_of_a_kind", 0, "§1 3K needs 3 equal"),
    row(Y, None, [4, 4, 5, 5, 6], None, None, "three_of_a_kind", 0, "§1 3K needs 3 equal"),
    row(Y, None, [6, 6, 6, 6, 6], None, None, "three_of_a_kind", 30, "§1 5K counts as 3K"),
    row(Y, None, [1, 5, 5, 5, 5], None, None, "four_of_a_kind", 21, "seed000 quadra 21"),
    row(Y, None, [4, 4, 4, 2, 6], None, None, "four_of_a_kind", 0, "§1 4K needs 4 equal"),
    row(Y, None, [2, 2, 2, 2, 2], None, None, "four_of_a_kind", 10, "§1 5K counts as 4K"),
    row(Y, None, [2, 2, 2, 6, 6], None, None, "full_house", 25, "seed000 full-hand 2-2-2-6-6"),
    row(Y, None, [5, 5, 1, 1, 1], None, None, "full_house", 25, "§1 FH 3+2 = 25"),
    row(Y, None, [2, 2, 3, 3, 4], None, None, "full_house", 0, "§1 two pairs not FH"),
    row(Y, None, [2, 2, 2, 2, 6], None, None, "full_house", 0, "§1 4+1 not FH"),
    row(Y, None, [3, 3, 3, 3, 3], None, None, "full_house", 0, "§1 5K not FH without Joker"),
    row(Y, None, [1, 2, 3, 4, 6], None, None, "small_straight", 30, "seed000 small 1-2-3-4-6"),
    row(Y, None, [2, 3, 4, 5, 5], None, None, "small_straight", 30, "§1 SS 2345"),
    row(Y, None, [1, 3, 4, 5, 6], None, None, "small_straight", 30, "seed004 SS 3-4-5-6"),
    row(Y, None, [1, 2, 3, 4, 5], None, None, "small_straight", 30, "§1 SS includes LS"),
    row(Y, None, [2, 3, 4, 5, 6], None, None, "small_straight", 30, "§1 SS includes LS"),
    row(Y, None, [1, 2, 4, 5, 6], None, None, "small_straight", 0, "§1 SS needs 4 in a row"),
    row(Y, None, [5, 5, 5, 5, 5], None, None, "small_straight", 0, "§1 5K not SS w/o Joker"),
    row(Y, None, [1, 2, 3, 4, 5], None, {"large_straight": 40}, "small_straight", 30,
        "seed004 LS in the SS box"),
    row(Y, None, [1, 2, 3, 4, 5], None, None, "large_straight", 40, "§1 LS 12345"),
    row(Y, None, [6, 5, 4, 3, 2], None, None, "large_straight", 40, "§1 LS 23456"),
    row(Y, None, [1, 2, 3, 4, 6], None, None, "large_straight", 0, "§1 LS needs 5 in a row"),
    row(Y, None, [1, 3, 4, 5, 6], None, None, "large_straight", 0, "§1 LS no wrap"),
    row(Y, None, [4, 4, 4, 4, 4], None, None, "large_straight", 0, "§1 5K not LS w/o Joker"),
    row(Y, None, [5, 5, 5, 5, 5], None, None, "five_of_a_kind", 50, "§1 YAHTZEE 50"),
    row(Y, None, [5, 5, 5, 5, 4], None, None, "five_of_a_kind", 0, "§1 YAHTZEE needs 5"),
    row(Y, None, [1, 4, 4, 5, 6], None, None, "chance", 20, "seed000 aleatoria 20"),
    row(Y, None, [6, 6, 6, 6, 6], None, None, "chance", 30, "§1 chance sum"),
]


@pytest.mark.parametrize(("variant", "options", "dice", "throw", "sheet", "box", "expected",
                          "source"), BOX_ROWS)
def test_box_scores(variant, options, dice, throw, sheet, box, expected, source):
    result = hand(variant, dice, options=options, throw=throw, boxes=sheet)
    p = placement(result, box)
    assert p.score == expected
    assert p.legal, "on an open sheet every box is open"
    assert p.five_of_a_kind_bonus == 0, "no YAHTZEE bonus while the YAHTZEE box is open"


def test_a_yahtzee_on_an_open_sheet_is_no_joker():
    """§1: a Joker needs the YAHTZEE box filled; with it open every box is a normal choice."""
    result = hand(Y, [3, 3, 3, 3, 3])
    assert legal(result) == set(UPPER + YAHTZEE_LOWER)
    assert placement(result, "five_of_a_kind").score == 50


def test_a_filled_box_is_not_legal_again():
    """Shared mechanics: a box is filled once."""
    result = hand(Y, [2, 2, 2, 6, 6], boxes={"full_house": 25, "twos": 6})
    assert not placement(result, "full_house").legal
    assert not placement(result, "twos").legal
    assert placement(result, "three_of_a_kind").legal


def test_a_hand_fitting_no_open_box_is_scratched_anywhere():
    """Shared mechanics: 0 in an open box of the player's choice."""
    result = hand(Y, [1, 2, 4, 5, 6], boxes=filled_except(Y, ["full_house", "sixes"]))
    assert legal(result) == {"full_house", "sixes"}
    assert placement(result, "full_house").score == 0


# --------------------------------------------------------------------------- the Joker

FIVE_FOURS = [4, 4, 4, 4, 4]
JOKER_LOWER = {"three_of_a_kind": 20, "four_of_a_kind": 20, "full_house": 25,
               "small_straight": 30, "large_straight": 40, "chance": 20}


@pytest.mark.parametrize(("joker", "held", "bonus"), [
    ("forced", 50, 100), ("forced", 0, 0), ("free", 50, 100), ("free", 0, 0),
    ("none", 50, 100), ("none", 0, 0),
])
def test_yahtzee_bonus_only_when_the_box_holds_50(joker, held, bonus):
    """§1: each further Yahtzee scores +100 only if the YAHTZEE box holds 50 (not 0)."""
    result = hand(Y, FIVE_FOURS, options={"joker": joker},
                  boxes={"five_of_a_kind": held})
    assert legal(result)
    for box in legal(result):
        assert placement(result, box).five_of_a_kind_bonus == bonus, box


def test_forced_joker_matching_upper_box_first():
    """§1 forced: the matching upper box must be used if open."""
    result = hand(Y, FIVE_FOURS, boxes={"five_of_a_kind": 50})
    assert legal(result) == {"fours"}
    assert placement(result, "fours").score == 20
    assert placement(result, "fours").five_of_a_kind_bonus == 100


@pytest.mark.parametrize("held", [50, 0])
def test_forced_joker_any_open_lower_box_at_full_value(held):
    """§1 forced: else any open lower box at full value (FH 25, SS 30, LS 40, sums)."""
    result = hand(Y, FIVE_FOURS, boxes={"five_of_a_kind": held, "fours": 12})
    assert legal(result) == set(JOKER_LOWER)
    for box, value in JOKER_LOWER.items():
        assert placement(result, box).score == value, box


def test_forced_joker_follows_hasbro_not_seed_004_order():
    """§1 Decision: Hasbro allows any open lower box (not 3K/4K before the rest)."""
    result = hand(Y, FIVE_FOURS, boxes={"five_of_a_kind": 50, "fours": 12})
    assert {"full_house", "small_straight", "large_straight", "chance",
            "three_of_a_kind", "four_of_a_kind"} <= legal(result)
    assert placement(result, "full_house").score == 25


def test_forced_joker_zero_in_an_upper_box_when_lower_is_full():
    """§1 forced: else 0 in any open upper box; the +100 still counts ("a forced zero")."""
    boxes = filled_except(Y, ["twos", "sixes"], value=0)
    boxes.update({"five_of_a_kind": 50, "fours": 12})
    result = hand(Y, FIVE_FOURS, boxes=boxes)
    assert legal(result) == {"twos", "sixes"}
    for box in ("twos", "sixes"):
        assert placement(result, box).score == 0
        assert placement(result, box).five_of_a_kind_bonus == 100


@pytest.mark.parametrize(("box", "upper_open", "upper_filled"), [
    ("full_house", 0, 25), ("small_straight", 0, 30), ("large_straight", 0, 40),
    ("three_of_a_kind", 20, 20), ("four_of_a_kind", 20, 20), ("chance", 20, 20),
])
@pytest.mark.parametrize("held", [50, 0])
def test_free_joker_fixed_boxes_need_the_matching_upper_box_filled(box, upper_open,
                                                                   upper_filled, held):
    """§1 free: FH/SS/LS score their Joker values only if the matching upper box is filled
    (a Joker whether the YAHTZEE box holds 50 or 0)."""
    opened = hand(Y, FIVE_FOURS, options={"joker": "free"}, boxes={"five_of_a_kind": held})
    assert placement(opened, box).score == upper_open
    assert placement(opened, box).legal
    closed = hand(Y, FIVE_FOURS, options={"joker": "free"},
                  boxes={"five_of_a_kind": held, "fours": 12})
    assert placement(closed, box).score == upper_filled
    assert placement(closed, box).legal


def test_free_joker_any_open_box():
    """§1 free: any open box (the matching upper box is not forced)."""
    result = hand(Y, FIVE_FOURS, options={"joker": "free"}, boxes={"five_of_a_kind": 50})
    assert legal(result) == set(UPPER) | set(JOKER_LOWER)
    assert placement(result, "fours").score == 20
    assert placement(result, "ones").score == 0


@pytest.mark.parametrize("fours", [None, 12])
def test_no_joker_fixed_boxes_score_by_the_normal_rule(fours):
    """§1 none: no Joker at all; five of a kind is not a FH or a straight."""
    boxes = {"five_of_a_kind": 50} | ({"fours": fours} if fours else {})
    result = hand(Y, FIVE_FOURS, options={"joker": "none"}, boxes=boxes)
    for box in ("full_house", "small_straight", "large_straight"):
        assert placement(result, box).score == 0, box
        assert placement(result, box).legal, box
    assert placement(result, "three_of_a_kind").score == 20
    assert placement(result, "ones").legal


# --------------------------------------------------------------------------- sheets

MAX_SHEET = {**upper_sheet(5, 10, 15, 20, 25, 30), "three_of_a_kind": 30,
             "four_of_a_kind": 30, "full_house": 25, "small_straight": 30,
             "large_straight": 40, "five_of_a_kind": 50, "chance": 30}


def test_maximum_without_bonus_yahtzees_is_375():
    """§1 / seed 004: 105 + 35 + 30*3 + 25 + 30 + 40 + 50 = 375."""
    t = totals(Y, MAX_SHEET)
    assert t.upper_subtotal == 105
    assert t.upper_bonus == 35
    assert t.total == 375
    assert t.complete
    assert all(b.achievable for b in t.boxes)


def test_maximum_with_a_yahtzee_every_turn_is_1575():
    """§1 / seed 004: twelve further Yahtzees at +100 each: 375 + 1200."""
    t = totals(Y, MAX_SHEET, bonuses=12)
    assert t.five_of_a_kind_bonus == 1200
    assert t.total == 1575


@pytest.mark.parametrize(("upper", "bonus"), [
    (upper_sheet(3, 6, 9, 12, 15, 18), 35),  # 63 exactly: "63 exatos ja bastam"
    (upper_sheet(2, 6, 9, 12, 15, 18), 0),  # 62
    (upper_sheet(0, 0, 12, 16, 20, 24), 35),  # 72
])
def test_upper_bonus_35_at_63_or_more(upper, bonus):
    """§1: +35 when the upper total is >= 63 (63 itself qualifies; seed 004)."""
    t = totals(Y, upper)
    assert t.upper_bonus == bonus
    assert t.total == sum(upper.values()) + bonus


def test_an_empty_box_of_a_finished_game_counts_as_a_scratch():
    """Shared mechanics / seed 004: "uma casa sem marcar" is a 0."""
    sheet = {k: v for k, v in MAX_SHEET.items() if k != "chance"}
    t = totals(Y, sheet, final=True)
    assert t.total == 375 - 30


def test_game_has_13_turns():
    """Shared mechanics: as many turns as boxes."""
    assert len(filled_except(Y, [])) == 13


# --------------------------------------------------------------------------- HTTP


# --------------------------------------------------------------------------- more sheet rules


def test_yahtzee_bonus_is_unlimited():
    """§1: Unlimited: the sixth further Yahtzee still scores +100."""
    result = hand(Y, FIVE_FOURS, boxes={"five_of_a_kind": 50}, bonuses=5)
    assert placement(result, "fours").five_of_a_kind_bonus == 100


@pytest.mark.parametrize(("variant", "options", "held"), [
    pytest.param(Y, None, None, id="yahtzee-box_open"),
    pytest.param(Y, None, 0, id="yahtzee-box_0"),
    pytest.param("kniffel", None, None, id="kniffel-box_open"),
    pytest.param("kniffel", None, 0, id="kniffel-box_0"),
    pytest.param("kniffel", {"extra_kniffel_needs_50": False}, None,
                 id="kniffel[extra_kniffel_needs_50=False]-box_open"),
])
def test_bonus_chips_without_50_in_the_box_are_not_scored_silently(variant, options, held):
    """§1: +100 "only if the YAHTZEE box holds 50 (not 0)"; §3 likewise (+50; with the option
    off, only once the Kniffel box "has an entry"). A sheet claiming bonuses while the box is
    empty or scratched cannot have earned them: either no bonus, or the claim is flagged."""
    boxes = {} if held is None else {"five_of_a_kind": held}
    rs = effective_rules(variant, options)
    column = parse_scorecard(rs, {"boxes": boxes, "five_of_a_kind_bonuses": 1}).columns[0]
    assert not five_of_a_kind_bonuses_possible(rs, column)


def test_upper_and_lower_sections():
    """Shared mechanics: upper = the six number boxes, lower = the rest."""
    t = totals(Y, {"ones": 3, "sixes": 18, "chance": 20, "full_house": 25})
    assert t.upper_subtotal == 21
    assert t.lower_total == 45
    assert t.total == 66
