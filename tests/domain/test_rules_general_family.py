"""RULES.md §7 (`general`), §8 (`general_11`), §9 (`generala`), §10 (`generala_spanish`)
and §11 (`bozo`), with the worked examples of seeds 000, 001, 002 and 003."""

from __future__ import annotations

import pytest

from .rulebook import UPPER, box_ids, hand, legal, placement, row, totals, upper_sheet

G, G11, GA, GS, BZ = "general", "general_11", "generala", "generala_spanish", "bozo"
FIX, MAT = {"trinca_quadra": "fixed"}, {"trinca_quadra": "matching"}
MAO = {"general_de_mao": True}
NOWRAP, WRAP = {"escalera_wraps": False}, {"escalera_wraps": True}

GENERAL_ROWS = [
    row(G, None, [1, 1, 1, 4, 5], None, None, "ones", 3, "seed000 jogada de 1"),
    row(G, None, [3, 3, 4, 4, 5], None, None, "threes", 6, "seed000 jogada de 3"),
    row(G, None, [3, 3, 4, 4, 5], None, None, "fours", 8, "seed000 jogada de 4"),
    row(G, None, [3, 3, 4, 4, 5], None, None, "fives", 5, "seed001 jogada de 5"),
    row(G, None, [4, 4, 4, 5, 6], None, None, "three_of_a_kind", 23, "seed000 trinca 23"),
    row(G, None, [4, 4, 5, 5, 6], None, None, "three_of_a_kind", 0, "§7 trinca >=3"),
    row(G, None, [1, 5, 5, 5, 5], None, None, "four_of_a_kind", 21, "seed000 quadra 21"),
    row(G, None, [5, 5, 5, 5, 5], None, None, "four_of_a_kind", 25, "§7 quadra >=4"),
    row(G, None, [2, 2, 2, 6, 6], None, None, "full_house", 25, "seed000 full-hand"),
    row(G, None, [2, 2, 2, 6, 6], 1, None, "full_house", 25, "§7 no first-throw bonus"),
    row(G, None, [3, 3, 3, 3, 3], None, None, "full_house", 0, "§7 3+2 different"),
    row(G, None, [2, 3, 4, 5, 6], None, None, "large_straight", 30, "seed000 S+ 30"),
    row(G, None, [1, 2, 3, 4, 5], None, None, "large_straight", 0, "seed000 S+ 23456"),
    row(G, None, [1, 2, 3, 4, 5], None, None, "small_straight", 40, "seed000 S- 40"),
    row(G, None, [2, 3, 4, 5, 6], None, None, "small_straight", 0, "seed000 S- 12345"),
    row(G, None, [1, 2, 3, 4, 6], None, None, "small_straight", 0, "§7 S- exact"),
    row(G, None, [4, 4, 4, 4, 4], None, None, "five_of_a_kind", 50, "seed000 general 50"),
    row(G, None, [4, 4, 4, 4, 4], 1, None, "five_of_a_kind", 50, "§7 mao off by default"),
    row(G, None, [1, 4, 4, 5, 6], None, None, "chance", 20, "seed000 aleatoria 20"),
    row(G, FIX, [4, 4, 4, 5, 6], None, None, "three_of_a_kind", 20, "seed000 trinca 20"),
    row(G, FIX, [1, 5, 5, 5, 5], None, None, "four_of_a_kind", 30, "seed000 quadra 30"),
    row(G, FIX, [1, 2, 3, 4, 5], None, None, "three_of_a_kind", 0, "§7 fixed needs 3"),
    row(G, FIX, [4, 4, 4, 5, 6], None, None, "four_of_a_kind", 0, "§7 fixed needs 4"),
    row(G, MAT, [2, 2, 2, 6, 6], None, None, "three_of_a_kind", 6, "seed000 22266 -> 6"),
    row(G, MAT, [1, 1, 1, 1, 5], None, None, "four_of_a_kind", 4, "seed000 11115 -> 4"),
    row(G, MAO, [4, 4, 4, 4, 4], 1, None, "five_of_a_kind", 100, "seed000 general de mao"),
    row(G, MAO, [4, 4, 4, 4, 4], 2, None, "five_of_a_kind", 50, "§7 mao first throw only"),
]

G11_ROWS = [
    row(G11, None, [1, 1, 1, 4, 5], None, None, "ones", 3, "seed003 jogada do 1"),
    row(G11, None, [3, 3, 4, 4, 5], None, None, "threes", 6, "seed003 jogada do 3"),
    row(G11, None, [3, 3, 4, 4, 5], None, None, "fours", 8, "seed003 jogada do 4"),
    row(G11, None, [3, 3, 4, 4, 5], None, None, "fives", 5, "seed003 jogada do 5"),
    row(G11, None, [1, 2, 3, 4, 5], 2, None, "straight", 20, "seed003 sequencia 20"),
    row(G11, None, [2, 3, 4, 5, 6], 3, None, "straight", 20, "seed003 sequencia 20"),
    row(G11, None, [1, 3, 4, 5, 6], 2, None, "straight", 0, "seed003 3-4-5-6-1 no"),
    row(G11, None, [1, 3, 4, 5, 6], 1, None, "straight", 0, "seed003 3-4-5-6-1 no"),
    row(G11, None, [1, 2, 3, 4, 6], 2, None, "straight", 0, "§8 five in a row"),
    row(G11, None, [1, 2, 3, 4, 5], 1, None, "straight", 25, "seed003 primeira +5"),
    row(G11, None, [2, 2, 2, 6, 6], 2, None, "full_house", 30, "seed003 full-hand 30"),
    row(G11, None, [2, 2, 2, 6, 6], 1, None, "full_house", 35, "seed003 primeira +5"),
    row(G11, None, [1, 5, 5, 5, 5], 2, None, "four_of_a_kind", 40, "seed003 quadra 40"),
    row(G11, None, [1, 5, 5, 5, 5], 1, None, "four_of_a_kind", 45, "seed003 primeira +5"),
    row(G11, None, [4, 4, 4, 5, 6], 2, None, "four_of_a_kind", 0, "seed003 quadra 4"),
    row(G11, None, [6, 6, 6, 6, 6], 2, None, "five_of_a_kind", 50, "seed003 general 50"),
    row(G11, None, [6, 6, 6, 6, 6], 1, None, "five_of_a_kind", 50, "seed003 general sem +5"),
    row(G11, None, [1, 4, 4, 5, 5], 2, None, "chance", 19, "seed003 aleatoria 19"),
]

GA_ROWS = [
    row(GA, None, [6, 6, 6, 1, 2], None, None, "sixes", 18, "seed002 6+6+6=18"),
    row(GA, None, [1, 1, 1, 2, 3], None, None, "ones", 3, "seed002 tres 1 -> 3"),
    row(GA, None, [6, 6, 1, 2, 3], None, None, "sixes", 12, "seed002 dos 6 -> 12"),
    row(GA, None, [1, 2, 3, 4, 5], 2, None, "straight", 20, "seed002 escalera menor"),
    row(GA, None, [2, 3, 4, 5, 6], 2, None, "straight", 20, "seed002 escalera mayor"),
    row(GA, None, [1, 3, 4, 5, 6], 2, None, "straight", 20, "seed002 3-4-5-6-1"),
    row(GA, None, [1, 3, 4, 5, 6], 1, None, "straight", 25, "seed002 servida 25"),
    row(GA, None, [1, 2, 3, 4, 5], 1, None, "straight", 25, "seed002 servida 25"),
    row(GA, None, [1, 2, 3, 4, 6], 2, None, "straight", 0, "§9 escalera"),
    row(GA, NOWRAP, [1, 3, 4, 5, 6], 2, None, "straight", 0, "§9 escalera_wraps off"),
    row(GA, NOWRAP, [2, 3, 4, 5, 6], 2, None, "straight", 20, "§9 escalera_wraps off"),
    row(GA, None, [2, 2, 2, 6, 6], 2, None, "full_house", 30, "seed002 full armado"),
    row(GA, None, [2, 2, 2, 6, 6], 1, None, "full_house", 35, "seed002 full servido"),
    row(GA, None, [2, 2, 2, 6, 6], 3, None, "full_house", 30, "§9 bonus first throw only"),
    row(GA, None, [1, 5, 5, 5, 5], 2, None, "four_of_a_kind", 40, "seed002 poker armado"),
    row(GA, None, [1, 5, 5, 5, 5], 1, None, "four_of_a_kind", 45, "seed002 poker servido"),
    row(GA, None, [3, 3, 3, 3, 3], 2, None, "five_of_a_kind", 50, "seed002 generala 50"),
    row(GA, None, [3, 3, 3, 3, 3], 3, None, "five_of_a_kind", 50, "seed002 generala 50"),
    row(GA, None, [3, 3, 3, 3, 3], 2, {"five_of_a_kind": 50}, "double_five_of_a_kind", 100,
        "§9 doble when generala holds 50"),
    row(GA, None, [3, 3, 3, 3, 3], 2, {"five_of_a_kind": 0}, "double_five_of_a_kind", 0,
        "§9 doble only when generala holds 50"),
    row(GA, None, [3, 3, 3, 3, 3], 2, None, "double_five_of_a_kind", 0,
        "§9 doble is a second generala"),
    row(GA, None, [3, 3, 3, 3, 3], 1, None, "double_five_of_a_kind", 0,
        "§9 Decision not 100 for first throw"),
    row(GA, None, [2, 2, 2, 4, 4], 2, {"full_house": 30}, "fours", 8, "seed002 44222 al 4"),
    row(GA, None, [2, 2, 2, 4, 4], 2, {"full_house": 30}, "twos", 6, "seed002 44222 al 2"),
]

GS_ROWS = [
    row(GS, None, [1, 2, 3, 4, 5], 2, None, "straight", 40, "seed000 escalera 40"),
    row(GS, None, [2, 3, 4, 5, 6], 2, None, "straight", 40, "seed000 escalera 40"),
    row(GS, None, [1, 3, 4, 5, 6], 2, None, "straight", 40, "§10 as generala wraps"),
    row(GS, None, [1, 2, 3, 4, 5], 1, None, "straight", 40, "§10 no servida bonus"),
    row(GS, None, [2, 2, 2, 6, 6], 2, None, "full_house", 60, "seed000 full 60"),
    row(GS, None, [2, 2, 2, 6, 6], 1, None, "full_house", 60, "§10 no servida bonus"),
    row(GS, None, [2, 2, 2, 2, 5], 2, None, "four_of_a_kind", 70, "seed000 poker de resto"),
    row(GS, None, [6, 6, 6, 6, 1], 2, None, "four_of_a_kind", 70, "seed000 poker de resto"),
    row(GS, None, [1, 6, 6, 6, 6], 1, None, "four_of_a_kind", 70, "§10 no servida bonus"),
    row(GS, None, [1, 1, 1, 1, 5], 2, None, "four_of_a_kind", 80, "seed000 poker de ases"),
    row(GS, None, [1, 1, 1, 5, 5], 2, None, "four_of_a_kind", 0, "§10 poker four equal"),
    row(GS, None, [4, 4, 4, 4, 4], 2, None, "five_of_a_kind", 100, "seed000 generala 100"),
    row(GS, None, [6, 6, 6, 2, 3], 2, None, "sixes", 18, "§10 as generala upper"),
]

BZ_ROWS = [
    row(BZ, None, [3, 3, 4, 4, 5], 2, None, "fours", 8, "seed000 bozo numericas"),
    row(BZ, None, [2, 2, 2, 6, 6], 2, None, "full_house", 10, "seed000 full 10"),
    row(BZ, None, [2, 2, 2, 6, 6], 1, None, "full_house", 15, "seed000 de boca +5"),
    row(BZ, None, [1, 2, 3, 4, 5], 2, None, "straight", 20, "seed000 sequencia menor"),
    row(BZ, None, [2, 3, 4, 5, 6], 3, None, "straight", 20, "seed000 sequencia maior"),
    row(BZ, None, [2, 3, 4, 5, 6], 1, None, "straight", 25, "seed000 de boca +5"),
    row(BZ, None, [1, 3, 4, 5, 6], 2, None, "straight", 0, "§11 menor or maior only"),
    row(BZ, None, [1, 5, 5, 5, 5], 2, None, "four_of_a_kind", 30, "seed000 quadra 30"),
    row(BZ, None, [1, 5, 5, 5, 5], 1, None, "four_of_a_kind", 35, "seed000 de boca +5"),
    row(BZ, None, [4, 4, 4, 4, 4], 2, None, "five_of_a_kind", 40, "seed000 general 40"),
]


@pytest.mark.parametrize(("variant", "options", "dice", "throw", "sheet", "box", "expected",
                          "source"), GENERAL_ROWS + G11_ROWS + GA_ROWS + GS_ROWS + BZ_ROWS)
def test_box_scores(variant, options, dice, throw, sheet, box, expected, source):
    p = placement(hand(variant, dice, options=options, throw=throw, boxes=sheet), box)
    assert p.score == expected
    assert p.legal


# --------------------------------------------------------------------------- sheets

@pytest.mark.parametrize(("variant", "options", "boxes"), [
    (G, None, UPPER + ("three_of_a_kind", "four_of_a_kind", "full_house", "large_straight",
                       "small_straight", "five_of_a_kind", "chance")),
    (G, {"aleatoria": False}, UPPER + ("three_of_a_kind", "four_of_a_kind", "full_house",
                                       "large_straight", "small_straight", "five_of_a_kind")),
    (G11, None, UPPER + ("straight", "full_house", "four_of_a_kind", "five_of_a_kind",
                         "chance")),
    (GA, None, UPPER + ("straight", "full_house", "four_of_a_kind", "five_of_a_kind",
                        "double_five_of_a_kind")),
    (GA, {"doble_generala": False}, UPPER + ("straight", "full_house", "four_of_a_kind",
                                             "five_of_a_kind")),
    (BZ, None, UPPER + ("full_house", "straight", "four_of_a_kind", "five_of_a_kind")),
])
def test_sheet_boxes(variant, options, boxes):
    """§7 13 boxes (X optional), §8 11, §9 11 (10 without Doble), §11 Bozó's ten."""
    assert set(box_ids(variant, options)) == set(boxes)
    assert len(box_ids(variant, options)) == len(boxes)


@pytest.mark.parametrize("variant", [G, G11, GA, GS, BZ])
def test_no_upper_bonus(variant):
    """§7 "No upper bonus"; §8-§11 state none."""
    t = totals(variant, upper_sheet(5, 10, 15, 20, 25, 30))
    assert t.upper_bonus == 0
    assert t.total == 105


def test_general_11_defaults_to_no_wrap():
    """§9: option escalera_wraps false in general_11."""
    assert placement(hand(G11, [1, 3, 4, 5, 6], throw=2), "straight").score == 0


# --------------------------------------------------------------------------- generala

@pytest.mark.parametrize(("variant", "throw", "wins"), [
    (GA, 1, True), (GA, 2, False), (GA, 3, False), (BZ, 1, True), (BZ, 2, False),
])
def test_five_equal_on_the_first_throw_wins_at_once(variant, throw, wins):
    """§9 Generala servida wins the game at once; §11 General de boca too."""
    assert hand(variant, [2, 2, 2, 2, 2], throw=throw).wins_game is wins


@pytest.mark.parametrize(("variant", "dice"), [
    (GA, [2, 2, 2, 6, 6]), (GA, [1, 2, 3, 4, 5]), (GA, [1, 5, 5, 5, 5]),
    (BZ, [2, 2, 2, 6, 6]), (BZ, [1, 5, 5, 5, 5]),
])
def test_other_first_throw_hands_do_not_win(variant, dice):
    """Only the five-equal servida / de boca wins at once."""
    assert hand(variant, dice, throw=1).wins_game is False


OBLIGADA_ORDER = UPPER + ("straight", "full_house", "four_of_a_kind", "five_of_a_kind",
                          "double_five_of_a_kind")


@pytest.mark.parametrize("k", range(len(OBLIGADA_ORDER)))
def test_obligada_fills_in_fixed_order(k):
    """§9 obligada: 1, 2, ..., 6, Escalera, Full, Póker, Generala, Doble."""
    boxes = {b: 0 for b in OBLIGADA_ORDER[:k]}
    if k > OBLIGADA_ORDER.index("five_of_a_kind"):
        boxes["five_of_a_kind"] = 50
    result = hand(GA, [3, 3, 3, 3, 3], throw=2, options={"obligada": True}, boxes=boxes)
    assert legal(result) == {OBLIGADA_ORDER[k]}


def test_without_obligada_any_open_box():
    result = hand(GA, [3, 3, 3, 3, 3], throw=2, boxes={"ones": 1})
    assert legal(result) == set(OBLIGADA_ORDER) - {"ones"}


# --------------------------------------------------------------------------- bozó em baixo

@pytest.mark.parametrize(("top", "box", "expected"), [
    ([1, 1, 1, 2, 2], "sixes", 18),  # bottom 6-6-6-5-5
    ([1, 1, 1, 2, 2], "fives", 10),
    ([1, 1, 1, 2, 2], "ones", 0),
    ([1, 1, 1, 2, 2], "full_house", 10),
    ([6, 6, 6, 6, 1], "ones", 4),  # bottom 1-1-1-1-6
    ([6, 6, 6, 6, 1], "sixes", 6),
    ([6, 6, 6, 6, 1], "four_of_a_kind", 30),
    ([3, 3, 3, 3, 3], "fours", 20),  # bottom 4-4-4-4-4
])
def test_em_baixo_scores_the_faces_turned_to_the_table(top, box, expected):
    """§11: "em baixo" scores the bottom faces, 7 - top on a standard die."""
    result = hand(BZ, top, throw=2, em_baixo=True)
    assert sorted(result.scored_dice) == sorted(7 - d for d in top)
    assert placement(result, box).score == expected




@pytest.mark.parametrize(("variant", "win_box"), [("generala", "five_of_a_kind"),
                                                   ("generala_spanish", "five_of_a_kind"),
                                                   ("bozo", "five_of_a_kind")])
@pytest.mark.parametrize("state", [None, 0, "made"])
def test_an_instant_win_wins_in_whatever_box_it_is_written(variant, win_box, state):
    """Rules decision 4: a Generala servida (Bozó's General de boca) wins the game at once
    whatever the state of its box (open, scratched, filled with its value): every box the
    hand may go in says so, as the hand does."""
    from service.domain.rules import effective_rules
    from service.domain.scoring import parse_scorecard, score_hand

    rs = effective_rules(variant)
    boxes = {} if state is None else {
        win_box: 0 if state == 0 else rs.variant.box(win_box).value}
    sheet = parse_scorecard(rs, {"boxes": boxes})
    result = score_hand(rs, [6, 6, 6, 6, 6], 1, sheet)
    assert result.wins_game
    legal = [p for p in result.boxes if p.legal]
    assert legal and all(p.wins_game for p in legal), [(p.box, p.wins_game) for p in legal]
    later = score_hand(rs, [6, 6, 6, 6, 6], 2, sheet)
    assert not later.wins_game and not any(p.wins_game for p in later.boxes)
