"""Bozó's "em baixo" end to end in the advisor: a keep names the dice to keep as thrown (a
sub-multiset of the dice sent, what a recorded game's `kept` takes) and whether the next throw
is announced em baixo; a game recorded as the answers give them replays without a problem;
and games/analyze's skill plus luck adds up to the difference, as in every other variant.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.advisor import Advisor
from service.advisor.advice import moves as advice
from service.advisor.analysis.analyst import Analyst
from service.advisor.analysis.games import analyze
from service.domain.dice import bottom_faces
from service.domain.games import replay_game
from service.domain.rules import effective_rules
from service.domain.scoring import empty_sheet
from service.domain.turn import play_turn

ANALYST: Analyst


@pytest.fixture(scope="module", autouse=True)
def _analyst(tmp_path_factory):
    """An advisor and analyst of their own, writing tables to a temporary directory."""
    global ANALYST
    ANALYST = Analyst(Advisor(tmp_path_factory.mktemp("tables")))
    yield


def _within(dice: list[int], part: list[int]) -> bool:
    return not Counter(part) - Counter(dice)


@pytest.mark.parametrize("em_baixo", [False, True])
def test_keeps_name_the_dice_as_thrown_and_the_next_announcement(em_baixo):
    rs = effective_rules("bozo")
    st = ANALYST.strategy(rs)
    sug = advice.suggest(st, [2, 2, 2, 5, 6], 2, empty_sheet(rs), em_baixo)
    assert sug.dice == [2, 2, 2, 5, 6]
    assert sug.scored_dice == ([1, 2, 5, 5, 5] if em_baixo else [2, 2, 2, 5, 6])
    keeps = [a for a in sug.moves if a.move.action == "keep"]
    assert keeps and all(_within(sug.dice, a.move.dice) for a in keeps)
    # each keep once: the dice to keep, with the better announcement of the next throw
    assert len({tuple(a.move.dice) for a in keeps}) == len(keeps)
    for a in keeps:
        # the keep the tables value: the kept dice as the next throw reads them
        assert a.move.read == (bottom_faces(a.move.dice) if a.move.em_baixo else a.move.dice)


def test_a_keep_is_worth_the_same_whichever_way_its_throw_was_read():
    """Keeping dice and announcing the next throw is a choice of the dice on the table: how
    the throw they were kept from was read changes only what stopping now scores."""
    rs = effective_rules("bozo")
    st = ANALYST.strategy(rs)
    rng = random.Random(7)
    for _ in range(20):
        dice = sorted(rng.randint(1, 6) for _ in range(5))
        top, bottom = (advice.suggest(st, dice, 2, empty_sheet(rs), eb) for eb in (False, True))
        keeps = [{tuple(a.move.dice): (a.move.em_baixo, a.expected_final_score)
                  for a in s.moves if a.move.action == "keep"} for s in (top, bottom)]
        assert keeps[0].keys() == keeps[1].keys()
        for kept, (_, value) in keeps[0].items():
            assert value == pytest.approx(keeps[1][kept][1], abs=1e-9)


def _bozo_game(rs, rng: random.Random, mistakes: float, record_kept: bool = True) -> dict:
    """One player's Bozó game that follows the advisor's answers as they are given: the dice
    kept as thrown (`dice`), the next throw read em baixo when the keep says so; with
    probability `mistakes` another move, or the other announcement. Recorded as games/validate
    takes it; an instant win (General de boca) ends it."""
    st = ANALYST.strategy(rs)
    sheet = empty_sheet(rs)
    turns = []
    for _ in range(rs.variant.turns):
        dice = sorted(rng.randint(1, 6) for _ in range(5))
        em_baixo = False
        throws, kept = [list(dice)], []
        for t in range(1, rs.variant.throws + 1):
            alts = advice.suggest(st, dice, t, sheet, em_baixo).moves
            a = alts[0] if rng.random() > mistakes else rng.choice(alts)
            if a.move.action == "keep":
                assert _within(dice, a.move.dice)  # a keep is dice on the table
                kept.append(list(a.move.dice))
                dice = sorted([*a.move.dice, *(rng.randint(1, 6)
                                               for _ in range(5 - len(a.move.dice)))])
                throws.append(list(dice))
                em_baixo = a.move.em_baixo != (rng.random() < mistakes)
                continue
            turn = {"throws": throws, "box": a.move.box}
            if record_kept:
                turn["kept"] = kept
            if em_baixo:
                turn["em_baixo"] = True
            turns.append(turn)
            outcome = play_turn(rs, sheet, dice, t, a.move.box, None, em_baixo)
            sheet = outcome.sheet
            break
        if sheet.won:
            break
    return {"turns": turns}


@pytest.mark.parametrize(("seed", "mistakes", "record_kept"),
                         [(1, 0.0, True), (2, 0.25, True), (3, 0.5, True), (4, 0.25, False),
                          (5, 0.1, True), (6, 0.4, True)])
def test_games_recorded_as_the_answers_give_them_replay_and_analyses_add_up(seed, mistakes,
                                                                             record_kept):
    rs = effective_rules("bozo")
    rng = random.Random(seed)
    games = [_bozo_game(rs, rng, mistakes, record_kept) for _ in range(3)]
    # three solitaire records, each checked on its own (a won game ends everyone's)
    for game in games:
        replay = replay_game(rs, {"players": [game]})
        assert replay.problems == [], replay.problems
        out = analyze(ANALYST, rs, {"players": [game]})
        [p] = out.players
        assert p.skill + p.luck == pytest.approx(p.difference, abs=1e-5)
        assert p.total_regret >= 0
        if p.finished:
            diff = p.final_total - p.start_expected_final_score
            assert p.difference == pytest.approx(diff, abs=1e-5)
        for turn in p.turns:
            for dec in turn.decisions:
                assert dec.regret == pytest.approx(
                    dec.best_expected_final_score - dec.expected_final_score, abs=3e-6)
                for move in (dec.move, dec.best):
                    if move.action == "keep":
                        assert _within(dec.dice, move.dice)
                        assert isinstance(move.em_baixo, bool)


def test_em_baixo_is_used_and_followed_in_those_games():
    """The games above do exercise em baixo: some turns end on a throw read by its bottom
    faces, and a perfect player's analysis finds no regret."""
    rs = effective_rules("bozo")
    rng = random.Random(11)
    games = [_bozo_game(rs, rng, 0.0) for _ in range(4)]
    assert any(t.get("em_baixo") for g in games for t in g["turns"])
    for game in games:
        [p] = analyze(ANALYST, rs, {"players": [game]}).players
        assert p.total_regret == pytest.approx(0.0, abs=1e-4)
        assert p.classes.inaccuracy + p.classes.mistake + p.classes.blunder == 0
