"""RULES.md §5 (`yatzy`), §6 (`maxi_yatzy`) and §13 (`yacht`) as rule-book rows."""

from __future__ import annotations

import pytest

from service.domain.errors import InvalidInput

from .rulebook import UPPER, box_ids, hand, legal, placement, row, totals, upper_sheet

YZ, MX, YT = "yatzy", "maxi_yatzy", "yacht"

YATZY_ROWS = [
    row(YZ, None, [3, 3, 5, 5, 6], None, None, "one_pair", 10, "§5 highest pair"),
    row(YZ, None, [1, 1, 6, 6, 6], None, None, "one_pair", 12, "§5 highest pair"),
    row(YZ, None, [1, 2, 3, 4, 6], None, None, "one_pair", 0, "§5 no pair"),
    row(YZ, None, [4, 4, 4, 4, 4], None, None, "one_pair", 8, "§5 pair of 5K"),
    row(YZ, None, [3, 3, 5, 5, 6], None, None, "two_pairs", 16, "§5 two pairs sum of 4"),
    row(YZ, None, [2, 2, 2, 5, 5], None, None, "two_pairs", 14, "§5 triple serves as pair"),
    row(YZ, None, [3, 3, 1, 2, 4], None, None, "two_pairs", 0, "§5 single pair not two"),
    row(YZ, None, [4, 4, 4, 4, 4], None, None, "two_pairs", 0, "§5 5K not two pairs"),
    row(YZ, None, [4, 4, 4, 4, 2], None, None, "two_pairs", 0, "§5 different faces"),
    row(YZ, None, [4, 4, 4, 2, 6], None, None, "three_of_a_kind", 12, "seed004 yatzy 12"),
    row(YZ, None, [4, 4, 4, 4, 4], None, None, "three_of_a_kind", 12, "§5 5K qualifies"),
    row(YZ, None, [4, 4, 5, 5, 6], None, None, "three_of_a_kind", 0, "§5 3K needs 3"),
    row(YZ, None, [1, 5, 5, 5, 5], None, None, "four_of_a_kind", 20, "§5 4K matching"),
    row(YZ, None, [4, 4, 4, 4, 4], None, None, "four_of_a_kind", 16, "§5 5K qualifies"),
    row(YZ, None, [4, 4, 4, 2, 6], None, None, "four_of_a_kind", 0, "§5 4K needs 4"),
    row(YZ, None, [1, 2, 3, 4, 5], None, None, "small_straight", 15, "§5 small 12345"),
    row(YZ, None, [2, 3, 4, 5, 6], None, None, "small_straight", 0, "§5 small exact"),
    row(YZ, None, [1, 2, 3, 4, 6], None, None, "small_straight", 0, "§5 small exact"),
    row(YZ, None, [2, 3, 4, 5, 6], None, None, "large_straight", 20, "§5 large 23456"),
    row(YZ, None, [1, 2, 3, 4, 5], None, None, "large_straight", 0, "§5 large exact"),
    row(YZ, None, [2, 2, 2, 6, 6], None, None, "full_house", 18, "§5 FH sum"),
    row(YZ, None, [6, 6, 6, 5, 5], None, None, "full_house", 28, "§5 FH sum"),
    row(YZ, None, [3, 3, 3, 3, 3], None, None, "full_house", 0, "§5 5K not FH"),
    row(YZ, None, [2, 2, 3, 3, 4], None, None, "full_house", 0, "§5 FH 3+2"),
    row(YZ, None, [1, 4, 4, 5, 6], None, None, "chance", 20, "§5 chance"),
    row(YZ, None, [2, 2, 2, 2, 2], None, None, "five_of_a_kind", 50, "§5 yatzy 50"),
    row(YZ, None, [3, 3, 4, 4, 5], None, None, "fours", 8, "§5 upper"),
]

MAXI_ROWS = [
    row(MX, None, [1, 1, 2, 3, 4, 5], None, None, "ones", 2, "§6 upper"),
    row(MX, None, [6, 6, 6, 6, 6, 6], None, None, "sixes", 36, "§6 upper six dice"),
    row(MX, None, [1, 1, 2, 2, 6, 6], None, None, "one_pair", 12, "§6 pair"),
    row(MX, None, [1, 2, 3, 4, 5, 6], None, None, "one_pair", 0, "§6 no pair"),
    row(MX, None, [2, 2, 5, 5, 1, 3], None, None, "two_pairs", 14, "§6 two pairs"),
    row(MX, None, [3, 3, 3, 3, 1, 2], None, None, "two_pairs", 0, "§6 different faces"),
    row(MX, None, [4, 4, 4, 4, 4, 4], None, None, "two_pairs", 0, "§6 different faces"),
    row(MX, None, [1, 1, 2, 2, 6, 6], None, None, "three_pairs", 18, "§6 three pairs"),
    row(MX, None, [3, 3, 3, 3, 5, 5], None, None, "three_pairs", 0, "§6 different faces"),
    row(MX, None, [2, 2, 2, 5, 5, 1], None, None, "three_pairs", 0, "§6 three pairs"),
    row(MX, None, [4, 4, 4, 1, 2, 6], None, None, "three_of_a_kind", 12, "§6 3K matching"),
    row(MX, None, [4, 4, 4, 4, 4, 1], None, None, "three_of_a_kind", 12, "§6 3K matching"),
    row(MX, None, [5, 5, 5, 5, 1, 2], None, None, "four_of_a_kind", 20, "§6 4K matching"),
    row(MX, None, [5, 5, 5, 5, 5, 2], None, None, "five_of_a_kind", 25, "§6 5K matching"),
    row(MX, None, [5, 5, 5, 5, 1, 2], None, None, "five_of_a_kind", 0, "§6 5K needs 5"),
    row(MX, None, [1, 2, 3, 4, 5, 5], None, None, "small_straight", 15, "§6 small"),
    row(MX, None, [2, 3, 4, 5, 6, 6], None, None, "small_straight", 0, "§6 small exact"),
    row(MX, None, [2, 3, 4, 5, 6, 6], None, None, "large_straight", 20, "§6 large"),
    row(MX, None, [1, 2, 3, 4, 5, 5], None, None, "large_straight", 0, "§6 large exact"),
    row(MX, None, [1, 2, 3, 4, 5, 6], None, None, "full_straight", 21, "§6 full straight"),
    row(MX, None, [1, 2, 3, 4, 5, 5], None, None, "full_straight", 0, "§6 full straight"),
    row(MX, None, [2, 2, 2, 6, 6, 1], None, None, "full_house", 18, "§6 FH sum of five"),
    row(MX, None, [5, 5, 5, 5, 5, 5], None, None, "full_house", 0, "§6 FH different faces"),
    row(MX, None, [2, 2, 2, 6, 6, 6], None, None, "villa", 24, "§6 villa 3+3"),
    row(MX, None, [2, 2, 2, 6, 6, 1], None, None, "villa", 0, "§6 villa 3+3"),
    row(MX, None, [3, 3, 3, 3, 5, 5], None, None, "tower", 22, "§6 tower 4+2"),
    row(MX, None, [3, 3, 3, 5, 5, 5], None, None, "tower", 0, "§6 tower 4+2"),
    row(MX, None, [1, 2, 3, 4, 5, 6], None, None, "chance", 21, "§6 chance of six"),
    row(MX, None, [6, 6, 6, 6, 6, 6], None, None, "six_of_a_kind", 100, "§6 maxi yatzy"),
    row(MX, None, [6, 6, 6, 6, 6, 5], None, None, "six_of_a_kind", 0, "§6 six equal"),
]

YACHT_ROWS = [
    row(YT, None, [2, 2, 2, 6, 6], None, None, "full_house", 18, "§13 FH sum"),
    row(YT, None, [3, 3, 3, 3, 3], None, None, "full_house", 0, "§13 FH 3+2"),
    row(YT, None, [2, 2, 3, 3, 4], None, None, "full_house", 0, "§13 FH 3+2"),
    row(YT, None, [2, 2, 2, 2, 5], None, None, "four_of_a_kind", 8, "§13 4K four dice"),
    row(YT, None, [5, 5, 5, 5, 5], None, None, "four_of_a_kind", 20, "§13 5K qualifies"),
    row(YT, None, [2, 2, 2, 5, 5], None, None, "four_of_a_kind", 0, "§13 4K needs 4"),
    row(YT, None, [1, 2, 3, 4, 5], None, None, "small_straight", 30, "§13 little"),
    row(YT, None, [2, 3, 4, 5, 6], None, None, "small_straight", 0, "§13 little exact"),
    row(YT, None, [1, 2, 3, 4, 6], None, None, "small_straight", 0, "§13 little exact"),
    row(YT, None, [2, 3, 4, 5, 6], None, None, "large_straight", 30, "§13 big"),
    row(YT, None, [1, 2, 3, 4, 5], None, None, "large_straight", 0, "§13 big exact"),
    row(YT, None, [1, 4, 4, 5, 6], None, None, "chance", 20, "§13 choice"),
    row(YT, None, [4, 4, 4, 4, 4], None, None, "five_of_a_kind", 50, "§13 yacht"),
    row(YT, None, [4, 4, 4, 4, 3], None, None, "five_of_a_kind", 0, "§13 yacht"),
    row(YT, None, [3, 3, 4, 4, 5], None, None, "threes", 6, "§13 upper"),
]


@pytest.mark.parametrize(("variant", "options", "dice", "throw", "sheet", "box", "expected",
                          "source"), YATZY_ROWS + MAXI_ROWS + YACHT_ROWS)
def test_box_scores(variant, options, dice, throw, sheet, box, expected, source):
    p = placement(hand(variant, dice, options=options, throw=throw, boxes=sheet), box)
    assert p.score == expected
    assert p.legal


@pytest.mark.parametrize(("variant", "boxes"), [
    (YZ, UPPER + ("one_pair", "two_pairs", "three_of_a_kind", "four_of_a_kind",
                  "small_straight", "large_straight", "full_house", "chance",
                  "five_of_a_kind")),
    (MX, UPPER + ("one_pair", "two_pairs", "three_pairs", "three_of_a_kind",
                  "four_of_a_kind", "five_of_a_kind", "small_straight", "large_straight",
                  "full_straight", "full_house", "villa", "tower", "chance",
                  "six_of_a_kind")),
    (YT, UPPER + ("full_house", "four_of_a_kind", "small_straight", "large_straight",
                  "chance", "five_of_a_kind")),
])
def test_sheet_boxes(variant, boxes):
    """§5: 15 boxes; §6: 20 boxes; §13: 12 boxes."""
    assert set(box_ids(variant)) == set(boxes)
    assert len(box_ids(variant)) == len(boxes)


def test_second_yatzy_no_bonus_no_joker():
    """§5: no Yatzy bonus, no Joker."""
    result = hand(YZ, [5, 5, 5, 5, 5], boxes={"five_of_a_kind": 50})
    assert legal(result) == set(box_ids(YZ)) - {"five_of_a_kind"}
    assert all(p.five_of_a_kind_bonus == 0 for p in result.boxes)
    assert placement(result, "full_house").score == 0
    assert placement(result, "large_straight").score == 0


@pytest.mark.parametrize(("variant", "upper", "bonus"), [
    (YZ, upper_sheet(3, 6, 9, 12, 15, 18), 50),
    (YZ, upper_sheet(3, 6, 9, 12, 15, 17), 0),
    (MX, upper_sheet(4, 8, 12, 16, 20, 24), 100),
    (MX, upper_sheet(3, 8, 12, 16, 20, 24), 0),
    (YT, upper_sheet(5, 10, 15, 20, 25, 30), 0),
])
def test_upper_bonus(variant, upper, bonus):
    """§5 bonus 50 at >= 63; §6 +100 at >= 84; §13 no bonus."""
    t = totals(variant, upper)
    assert t.upper_bonus == bonus
    assert t.total == sum(upper.values()) + bonus


def test_yatzy_maximum_is_374():
    """§5: Maximum 374."""
    sheet = {**upper_sheet(5, 10, 15, 20, 25, 30), "one_pair": 12, "two_pairs": 22,
             "three_of_a_kind": 18, "four_of_a_kind": 24, "small_straight": 15,
             "large_straight": 20, "full_house": 28, "chance": 30, "five_of_a_kind": 50}
    t = totals(YZ, sheet)
    assert t.total == 374
    assert all(b.achievable for b in t.boxes)


@pytest.mark.parametrize(("throw", "saved", "ok"), [
    (3, 0, True), (4, 0, False), (4, 1, True), (5, 1, False), (5, 2, True),
])
def test_maxi_saved_throws(throw, saved, ok):
    """§6: throws not used in a turn are saved and may be spent in later turns."""
    dice = [1, 2, 3, 4, 5, 6]
    if ok:
        assert hand(MX, dice, throw=throw, saved=saved).throw == throw
    else:
        with pytest.raises(InvalidInput) as err:
            hand(MX, dice, throw=throw, saved=saved)
        assert [p.pointer for p in err.value.problems] == ["/throw"]


@pytest.mark.parametrize("variant", [YZ, YT])
def test_no_fourth_throw_without_saved_throws(variant):
    """Shared mechanics: a turn has up to 3 throws."""
    with pytest.raises(InvalidInput) as err:
        hand(variant, [1, 2, 3, 4, 5], throw=4)
    assert [p.pointer for p in err.value.problems] == ["/throw"]


