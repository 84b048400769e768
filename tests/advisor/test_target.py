"""The `target` objective: each move's probability that the final total reaches a target,
against an independent computation (a brute-force recursion over the last turn's dice late
in a game; games of the advisor's play from mid-game, with their error bar)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from service.advisor import Advisor
from service.advisor.analysis.analyst import Analyst
from service.advisor.analysis.simulate import simulate
from service.advisor.objectives import objective_named, objective_names
from service.advisor.objectives.target import rank_to_target
from service.advisor.solving.positions import Position
from service.domain.dice import all_hands, hand_probability
from service.domain.rules import effective_rules
from service.domain.scoring import parse_scorecard, score_hand
from service.domain.turn import apply_turn

ANALYST: Analyst


@pytest.fixture(scope="module", autouse=True)
def _analyst(tmp_path_factory):
    global ANALYST
    ANALYST = Analyst(Advisor(tmp_path_factory.mktemp("target-tables")))
    yield


def test_the_registry_holds_every_objective():
    assert set(objective_names()) == {"score", "win", "target"}
    target = objective_named("target")
    assert target.measure.name == "target_probability"
    assert target.request.name == "target" and target.missing_code == "target_required"


def _last_box_sheet(rs, open_box: str):
    ids = rs.variant.box_ids
    boxes = dict.fromkeys(ids, 0) | {"ones": 3, "twos": 6, "threes": 9, "fours": 12}
    del boxes[open_box]
    return parse_scorecard(rs, {"boxes": boxes})


def _brute_force(rs, sheet, target: int, total: int):
    """P(final >= target) from each hand and throw of the last turn, playing to reach it,
    by a recursion over the dice in plain Python (no kernel, no table)."""
    n = rs.variant.dice
    hands = all_hands(n)

    def reached(hand, throw) -> float:
        hs = score_hand(rs, list(hand), throw, sheet)
        return max((1.0 if total + p.score + p.five_of_a_kind_bonus + p.upper_bonus >= target
                    else 0.0) for p in hs.boxes if p.legal)

    @cache
    def value(hand: tuple[int, ...], throw: int) -> float:
        best = reached(hand, throw)
        if throw < 3:
            best = max(best, *(keep_value(k, throw) for k in _keeps(hand)))
        return best

    @cache
    def keep_value(kept: tuple[int, ...], throw: int) -> float:
        rest = n - len(kept)
        return sum(hand_probability(r) * value(tuple(sorted(kept + r)), throw + 1)
                   for r in all_hands(rest)) if rest else value(kept, throw + 1)

    return value, keep_value, hands


def _keeps(hand):
    from itertools import combinations
    return sorted({k for r in range(len(hand)) for k in combinations(hand, r)})


@pytest.mark.parametrize(("open_box", "dice", "throw", "above"), [
    ("chance", [1, 2, 3, 5, 6], 1, 24),
    ("large_straight", [1, 2, 3, 4, 6], 2, 30),
    ("full_house", [2, 2, 5, 5, 6], 1, 10),
])
def test_the_target_probability_of_every_move_matches_a_brute_force_last_turn(
        open_box, dice, throw, above):
    rs = effective_rules("yahtzee")
    sheet = _last_box_sheet(rs, open_box)
    sug = ANALYST.advisor.suggest(rs, dice, throw, sheet)
    target = sug.current_total + above
    ranked = rank_to_target(ANALYST, rs, sheet, dice, throw, False, target, sug)
    assert ranked.objective == "target" and ranked.extra.target_exact is True
    value, keep_value, _ = _brute_force(rs, sheet, target, sug.current_total)
    assert ranked.best.measures["target_probability"] == pytest.approx(
        value(tuple(sorted(dice)), throw), abs=1e-9)
    for a in ranked.moves:
        want = (keep_value(tuple(a.move.dice), throw) if a.move.action == "keep"
                else (1.0 if sug.current_total + a.move.score >= target else 0.0))
        assert a.measures["target_probability"] == pytest.approx(want, abs=1e-9), a
    probs = [round(a.measures["target_probability"], 9) for a in ranked.moves]
    assert probs == sorted(probs, reverse=True)


def test_a_target_reached_already_is_1_and_one_out_of_reach_is_0():
    rs = effective_rules("yahtzee")
    for sheet in (_last_box_sheet(rs, "chance"),
                  parse_scorecard(rs, {"boxes": {"ones": 3, "chance": 22}})):
        sug = ANALYST.advisor.suggest(rs, [1, 2, 3, 5, 6], 1, sheet)
        low = rank_to_target(ANALYST, rs, sheet, [1, 2, 3, 5, 6], 1, False,
                             sug.current_total, sug)
        assert all(a.measures["target_probability"] == 1.0 for a in low.moves)
        # ties by expected score: the expected-score best is the best
        assert low.best.expected_final_score == sug.best.expected_final_score
        high = rank_to_target(ANALYST, rs, sheet, [1, 2, 3, 5, 6], 1, False, 5000, sug)
        assert all(a.measures["target_probability"] == 0.0 for a in high.moves)


def test_mid_game_a_box_moves_probability_matches_games_of_the_advisors_play():
    """Before the exact range, each move's probability is that of the advisor's
    expected-score play after it: games of that play from the box move's outcome agree
    within four standard errors."""
    rs = effective_rules("yahtzee")
    sheet = parse_scorecard(rs, {"boxes": {"ones": 3, "twos": 6, "threes": 9, "fours": 12,
                                           "chance": 22, "full_house": 25}})
    dice, throw = [2, 2, 3, 5, 6], 3
    sug = ANALYST.advisor.suggest(rs, dice, throw, sheet)
    target = int(sug.expected_final_score) + 20
    ranked = rank_to_target(ANALYST, rs, sheet, dice, throw, False, target, sug)
    assert ranked.extra.target_exact is False
    st = ANALYST.strategy(rs)
    hs = score_hand(rs, dice, throw, sheet)
    a = ranked.best
    assert a.move.action == "score"
    p = next(p for p in hs.boxes if p.legal and p.box == a.move.box)
    after = Position.of(st, apply_turn(rs, sheet, hs, p, throw).sheet)
    finals = simulate(st, after, 20_000, 11)
    hit = float(np.mean(finals >= target))
    se = np.sqrt(hit * (1 - hit) / len(finals))
    assert abs(a.measures["target_probability"] - hit) < 4 * se + 1e-3
