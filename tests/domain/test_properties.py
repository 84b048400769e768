"""Properties over every hand: all 7,776 ordered five-dice hands, all 46,656 six-dice hands.

An independent reference scorer, written straight from RULES.md's tables without the data
model of `service.domain.boxes`, must agree with the service on every hand, box and throw.
"""

from __future__ import annotations

from collections import Counter
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.rules import effective_rules
from service.domain.scoring import parse_scorecard, score_hand, score_sheet
from service.domain.variants import VARIANT_IDS, VARIANTS

# --------------------------------------------------------------------------- reference


def _kind(c: Counter, n: int) -> int:
    """Face of the highest n-of-a-kind, or 0."""
    return max((f for f, k in c.items() if k >= n), default=0)


def _full(c: Counter) -> tuple[int, int] | None:
    """(triple face, pair face) of the best 3+2 on different faces."""
    best = None
    for t, kt in c.items():
        for p, kp in c.items():
            if t != p and kt >= 3 and kp >= 2 and (best is None or 3 * t + 2 * p > sum(best)):
                best = (t, p)
    return None if best is None else best


def _has(dice, run) -> bool:
    return set(run) <= set(dice)


ANY4 = ((1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6))
LOW, HIGH, WRAP = (1, 2, 3, 4, 5), (2, 3, 4, 5, 6), (3, 4, 5, 6, 1)


def reference(variant: str, dice: tuple[int, ...], first: bool) -> dict[str, int]:
    """Score of the hand in every box of the variant's default sheet, from RULES.md."""
    c = Counter(dice)
    s = sum(dice)
    out = {name: f * c[f] for f, name in enumerate(
        ("ones", "twos", "threes", "fours", "fives", "sixes"), start=1)}
    k3, k4, k5 = _kind(c, 3), _kind(c, 4), _kind(c, 5)
    full = _full(c)
    pairs = sorted((f for f, k in c.items() if k >= 2), reverse=True)
    straight5 = _has(dice, LOW) or _has(dice, HIGH)
    if variant in ("yahtzee", "yahtzee_basic", "kniffel", "yams"):
        exact = variant == "yams"
        out |= {"three_of_a_kind": s if k3 else 0, "four_of_a_kind": s if k4 else 0,
                "full_house": 25 if full else 0,
                "small_straight": 30 if (_has(dice, LOW) if exact else
                                         any(_has(dice, r) for r in ANY4)) else 0,
                "large_straight": 40 if (_has(dice, HIGH) if exact else straight5) else 0,
                "five_of_a_kind": 50 if k5 else 0, "chance": s}
    elif variant == "yatzy":
        out |= {"one_pair": 2 * pairs[0] if pairs else 0,
                "two_pairs": 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0,
                "three_of_a_kind": 3 * k3, "four_of_a_kind": 4 * k4,
                "small_straight": 15 if _has(dice, LOW) else 0,
                "large_straight": 20 if _has(dice, HIGH) else 0,
                "full_house": s if full else 0, "chance": s,
                "five_of_a_kind": 50 if k5 else 0}
    elif variant == "maxi_yatzy":
        villa = [f for f, k in c.items() if k >= 3]
        tower = [(a, b) for a in c for b in c if a != b and c[a] >= 4 and c[b] >= 2]
        out |= {"one_pair": 2 * pairs[0] if pairs else 0,
                "two_pairs": 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0,
                "three_pairs": 2 * sum(pairs[:3]) if len(pairs) >= 3 else 0,
                "three_of_a_kind": 3 * k3, "four_of_a_kind": 4 * k4,
                "five_of_a_kind": 5 * k5,
                "small_straight": 15 if _has(dice, LOW) else 0,
                "large_straight": 20 if _has(dice, HIGH) else 0,
                "full_straight": 21 if _has(dice, (1, 2, 3, 4, 5, 6)) else 0,
                "full_house": 3 * full[0] + 2 * full[1] if full else 0,
                "villa": 3 * sum(villa) if len(villa) == 2 else 0,
                "tower": max((4 * a + 2 * b for a, b in tower), default=0),
                "chance": s, "six_of_a_kind": 100 if _kind(c, 6) else 0}
    elif variant == "general":
        out |= {"three_of_a_kind": s if k3 else 0, "four_of_a_kind": s if k4 else 0,
                "full_house": 25 if full else 0,
                "large_straight": 30 if _has(dice, HIGH) else 0,
                "small_straight": 40 if _has(dice, LOW) else 0,
                "five_of_a_kind": 50 if k5 else 0, "chance": s}
    elif variant == "general_11":
        plus = 5 if first else 0
        out |= {"straight": 20 + plus if straight5 else 0,
                "full_house": 30 + plus if full else 0,
                "four_of_a_kind": 40 + plus if k4 else 0,
                "five_of_a_kind": 50 if k5 else 0, "chance": s}
    elif variant == "generala":
        plus = 5 if first else 0
        out |= {"straight": 20 + plus if straight5 or _has(dice, WRAP) else 0,
                "full_house": 30 + plus if full else 0,
                "four_of_a_kind": 40 + plus if k4 else 0,
                "five_of_a_kind": 50 if k5 else 0,
                "double_five_of_a_kind": 0}  # needs the Generala box at 50
    elif variant == "generala_spanish":
        out |= {"straight": 40 if straight5 or _has(dice, WRAP) else 0,
                "full_house": 60 if full else 0,
                "four_of_a_kind": (80 if c[1] >= 4 else 70) if k4 else 0,
                "five_of_a_kind": 100 if k5 else 0}
    elif variant == "bozo":
        plus = 5 if first else 0
        out |= {"full_house": 10 + plus if full else 0,
                "straight": 20 + plus if straight5 else 0,
                "four_of_a_kind": 30 + plus if k4 else 0,
                "five_of_a_kind": 40 if k5 else 0}
    elif variant == "yacht":
        out |= {"full_house": s if full else 0, "four_of_a_kind": 4 * k4,
                "small_straight": 30 if _has(dice, LOW) else 0,
                "large_straight": 30 if _has(dice, HIGH) else 0,
                "chance": s, "five_of_a_kind": 50 if k5 else 0}
    else:  # pragma: no cover
        raise AssertionError(variant)
    return out


# --------------------------------------------------------------------------- exhaustive


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_every_hand_matches_the_reference(variant):
    """All ordered hands (7,776 or 46,656), first and later throw, every box."""
    rs = effective_rules(variant)
    v = rs.variant
    max_score = dict(zip(v.box_ids, rs.max_score))
    seen_sorted: dict[tuple[int, ...], list] = {}
    for dice in product(range(1, 7), repeat=v.dice):
        key = tuple(sorted(dice))
        for throw in (1, 2):
            got = score_hand(rs, list(dice), throw)
            scores = {c.box: c.score for c in got.boxes}
            if (key, throw) in seen_sorted:
                # order-independence: every permutation scores the same
                assert scores == seen_sorted[(key, throw)]
                continue
            seen_sorted[(key, throw)] = scores
            assert scores == reference(variant, dice, throw == 1), (dice, throw)
            assert all(c.legal and c.open for c in got.boxes)
            for box, score in scores.items():
                assert 0 <= score <= max_score[box]


@pytest.mark.parametrize("variant", VARIANT_IDS)
def test_stated_max_is_reached(variant):
    """Every box's stated maximum is the score of some hand."""
    rs = effective_rules(variant)
    from service.domain.dice import all_hands

    for i, _box in enumerate(rs.variant.boxes):
        best = max(max(rs.score_first[i]), max(rs.score_later[i]))
        joker_only = rs.variant.joker != "none"
        assert best == rs.max_score[i] or joker_only
    assert len(all_hands(rs.variant.dice)) == (252 if rs.variant.dice == 5 else 462)


# --------------------------------------------------------------------------- random sheets

five_dice = st.lists(st.integers(1, 6), min_size=5, max_size=5)


@st.composite
def sheet_states(draw, variant: str):
    """A random partly filled sheet (values from the box's achievable set)."""
    rs = effective_rules(variant)
    boxes = {}
    for i, b in enumerate(rs.variant.box_ids):
        if draw(st.booleans()):
            boxes[b] = draw(st.sampled_from(sorted(rs.achievable[i])))
    return boxes


JOKER_VARIANTS = ("yahtzee", "kniffel")


@pytest.mark.parametrize("variant", [v for v in VARIANT_IDS if VARIANTS[v].dice == 5])
@pytest.mark.parametrize("joker", ["forced", "free", "none", None])
@settings(max_examples=150, deadline=None)
@given(data=st.data(), dice=five_dice, throw=st.sampled_from([None, 1, 2, 3]))
def test_some_box_is_always_legal(variant, joker, data, dice, throw):
    """Whatever the sheet, a hand can go somewhere while a box is open (Joker included);
    a filled box is never legal, and a legal box's score never goes negative."""
    if joker is not None and variant != "yahtzee":
        return
    rs = effective_rules(variant, {"joker": joker} if joker else None)
    boxes = data.draw(sheet_states(variant))
    sheet = parse_scorecard(rs, {"boxes": boxes})
    result = score_hand(rs, dice, throw, sheet)
    open_boxes = [c for c in result.boxes if c.open]
    if open_boxes:
        assert any(c.legal for c in open_boxes)
    for c in result.boxes:
        assert not (c.legal and not c.open)
        assert c.score >= 0 and c.five_of_a_kind_bonus >= 0


@settings(max_examples=200, deadline=None)
@given(data=st.data(), dice=five_dice)
def test_yahtzee_forced_joker_never_leaves_the_matching_upper_box(data, dice):
    """Forced Joker: with the YAHTZEE box filled and the number box open, only it is legal."""
    rs = effective_rules("yahtzee")
    boxes = data.draw(sheet_states("yahtzee"))
    dice = [dice[0]] * 5
    boxes["five_of_a_kind"] = data.draw(st.sampled_from([0, 50]))
    upper = ("ones", "twos", "threes", "fours", "fives", "sixes")[dice[0] - 1]
    boxes.pop(upper, None)
    result = score_hand(rs, dice, 2, parse_scorecard(rs, {"boxes": boxes}))
    legal = [c.box for c in result.boxes if c.legal]
    assert legal == [upper]
    expected = 100 if boxes["five_of_a_kind"] == 50 else 0
    assert result.boxes[dice[0] - 1].five_of_a_kind_bonus == expected


@pytest.mark.parametrize("variant", VARIANT_IDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_sheet_total_is_the_sum_of_its_parts(variant, data):
    """total = upper + upper bonus + lower + bonus, and the upper bonus follows the threshold."""
    rs = effective_rules(variant)
    boxes = data.draw(sheet_states(variant))
    final = data.draw(st.booleans())
    t = score_sheet(rs, parse_scorecard(rs, {"boxes": boxes}), final=final)
    assert t.total == (t.upper_subtotal + t.upper_bonus + t.lower_total
                       + t.five_of_a_kind_bonus)
    ub = rs.variant.upper_bonus
    assert t.upper_bonus == (ub.amount if ub and t.upper_subtotal >= ub.threshold else 0)
    assert t.complete == (final or len(boxes) == len(rs.variant.boxes))
    requires = {b.id for b in rs.variant.boxes if b.requires}
    assert all(b.achievable for b in t.boxes if b.box not in requires)
