"""The optimal move advisor: published optima, brute force, the score_hand oracle, tables."""

from __future__ import annotations

import random
import threading
import zlib
from functools import cache
from itertools import combinations

import numpy as np
import pytest

from service.advisor import Advisor
from service.advisor.advice import advisor as advisor_module
from service.advisor.advice import moves as advice
from service.advisor.advice.moves import RankedMove
from service.advisor.kernels import values as kernel
from service.advisor.solving.positions import part_state, part_value, terminals, turn_tables
from service.advisor.tables.strategies import build_strategy
from service.domain.dice import all_hands, hand_probability
from service.domain.errors import InvalidInput
from service.domain.moves import Keep, ScoreBox
from service.domain.rules import effective_rules
from service.domain.scoring import Column, Sheet, empty_sheet, parse_scorecard, score_hand
from service.domain.variants import VARIANT_IDS

ADVISOR = Advisor("")  # replaced by the fixture below, one per test module run


@pytest.fixture(scope="module", autouse=True)
def _advisor(tmp_path_factory):
    """An advisor of its own, writing its tables to a temporary directory."""
    global ADVISOR
    ADVISOR = Advisor(tmp_path_factory.mktemp("tables"))
    yield


def strategy(rs):
    """The test advisor's strategy for a RuleSet."""
    return ADVISOR.strategy(rs)


def suggest(rs, dice, throw, sheet=None, em_baixo=False):
    """The test advisor's suggestion for a position."""
    return ADVISOR.suggest(rs, dice, throw, sheet, em_baixo)


def start_value(vid: str, options: dict | None = None) -> float:
    st = strategy(effective_rules(vid, options))
    part = st.parts[0]
    mask, code, flags, _ = part_state(part, empty_sheet(st.rs))
    return part_value(part, mask, code, flags)


# --------------------------------------------------------------------------- published optima


def test_yahtzee_free_joker_optimum():
    assert start_value("yahtzee", {"joker": "free"}) == pytest.approx(254.5896, abs=1e-3)


def test_yahtzee_forced_joker_optimum():
    assert start_value("yahtzee") == pytest.approx(254.5877, abs=1e-3)


def test_yahtzee_basic_optimum():
    assert start_value("yahtzee_basic") == pytest.approx(245.8708, abs=1e-3)


@pytest.mark.slow
def test_yatzy_optimum():
    # 248.63 would mean a single pair counted as two pairs
    assert start_value("yatzy") == pytest.approx(248.4400, abs=1e-3)


def _play_one_game(rs, st, rng: random.Random) -> int:
    """One game of optimal play with seeded dice; returns the final total."""
    sheet = empty_sheet(rs)
    kd = st.parts[0].solution.kd
    index = st.parts[0].solution.model.keeps.index
    for _ in range(len(rs.variant.boxes)):
        states = [part_state(p, sheet) for p in st.parts]
        base = [part_value(p, *s[:3]) for p, s in zip(st.parts, states, strict=True)]
        tf, tl = terminals(st, states, base)
        keeps = {t: turn_tables(kd, tf, tl, t, 3)[0] for t in (1, 2)}
        dice = tuple(sorted(rng.randint(1, 6) for _ in range(5)))
        throw = 1
        while throw < 3:
            h = rs.hand_index[dice]
            now = (tf if throw == 1 else tl)[h]
            best_keep = max(advice.sub_multisets(dice), key=lambda k: keeps[throw][index[k]])
            if keeps[throw][index[best_keep]] <= now + 1e-9:
                break
            dice = tuple(sorted(best_keep + tuple(rng.randint(1, 6)
                                                  for _ in range(5 - len(best_keep)))))
            throw += 1
        best = suggest(rs, list(dice), throw, sheet).moves
        choice = next(a for a in best if a.move.action == "score")
        sheet.columns[0].boxes[choice.move.box] = choice.move.score
    from service.domain.scoring import score_sheet

    return int(score_sheet(rs, sheet, final=True).total)


@pytest.mark.slow
def test_yahtzee_basic_simulation_mean_and_sd():
    rs = effective_rules("yahtzee_basic")
    st = strategy(rs)
    rng = random.Random(20240601)
    games = np.array([_play_one_game(rs, st, rng) for _ in range(300)], float)
    mean, sd = games.mean(), games.std(ddof=1)
    se_mean = 39.82 / np.sqrt(len(games))
    se_sd = 39.82 / np.sqrt(2 * (len(games) - 1))
    assert abs(mean - 245.8708) < 4 * se_mean
    assert abs(sd - 39.82) < 4 * se_sd


# --------------------------------------------------------------------------- brute force

_ROLLS: dict[int, list[tuple[tuple[int, ...], float]]] = {
    n: [(h, hand_probability(h)) for h in all_hands(n)] if n else [((), 1.0)] for n in range(6)
}


def brute_force(rs) -> float:
    """Expected final score of a fresh sheet by plain recursive enumeration.

    States are whole sheets (box values), rewards come from score_hand, every keep is tried
    against every outcome of the rethrown dice: no shared code with the solver.
    """
    v = rs.variant
    ids = v.box_ids

    @cache
    def game(values: tuple) -> float:
        if all(x is not None for x in values):
            return 0.0
        sheet = Sheet([Column(dict(zip(ids, values, strict=True)))])
        upper_now = sum(x or 0 for b, x in zip(v.boxes, values, strict=True)
                        if b.section == "upper")

        @cache
        def score_now(hand: tuple, throw: int) -> float:
            best = -1e18
            for p in score_hand(rs, list(hand), throw, sheet).boxes:
                if not p.legal:
                    continue
                nxt = tuple(p.score if b == p.box else x
                            for b, x in zip(ids, values, strict=True))
                best = max(best, p.score + p.five_of_a_kind_bonus + p.upper_bonus + game(nxt))
            return best

        @cache
        def at(hand: tuple, throw: int) -> float:
            best = score_now(hand, throw)
            if throw < v.throws:
                for r in range(len(hand)):
                    for keep in set(combinations(hand, r)):
                        best = max(best, rethrow(keep, throw + 1))
            return best

        @cache
        def rethrow(keep: tuple, throw: int) -> float:
            return sum(p * at(tuple(sorted(keep + o)), throw)
                       for o, p in _ROLLS[v.dice - len(keep)])

        del upper_now
        return rethrow((), 1)

    return game(tuple(None for _ in ids))


SMALL_GAMES = [
    # (variant, options, overrides)
    ("yahtzee", {}, {"remove_boxes": ["ones", "twos", "threes", "fives", "sixes",
                                      "three_of_a_kind", "four_of_a_kind", "small_straight",
                                      "large_straight", "chance"],
                     "upper_bonus": {"threshold": 12, "amount": 35}}),
    ("generala", {}, {"remove_boxes": ["ones", "twos", "threes", "fours", "fives", "sixes",
                                       "straight", "full_house"]}),
    ("bozo", {}, {"remove_boxes": ["ones", "twos", "threes", "fours", "fives",
                                   "full_house", "straight"]}),
]


@pytest.mark.parametrize(("vid", "options", "overrides"), SMALL_GAMES)
def test_solver_matches_brute_force(vid, options, overrides):
    rs = effective_rules(vid, options, overrides)
    if rs.variant.em_baixo:
        # "em baixo" changes the keep set; the brute force knows plain keeps only
        from dataclasses import replace

        from service.domain.rules import build_rule_set

        rs = build_rule_set(replace(rs.variant, em_baixo=False), rs.options, rs.overrides)
    st = build_strategy(rs)
    part = st.parts[0]
    got = part_value(part, *part_state(part, empty_sheet(rs))[:3])
    assert got == pytest.approx(brute_force(rs), abs=2e-4)


# --------------------------------------------------------------------------- the oracle

ORACLE_RULES = [
    ("yahtzee", {}, {}), ("yahtzee", {"joker": "free"}, {}), ("kniffel", {}, {}),
    ("kniffel", {"extra_kniffel_needs_50": False}, {}), ("yatzy", {}, {}),
    ("generala", {}, {}), ("generala", {"obligada": True}, {}), ("general_11", {}, {}),
    ("bozo", {}, {}), ("generala_spanish", {"doble_generala": True}, {}), ("yacht", {}, {}),
    ("general", {"trinca_quadra": "matching", "general_de_mao": True}, {}),
    ("yahtzee", {"joker": "none"}, {"boxes": {"five_of_a_kind": {"value": 60}},
                                    "upper_bonus": {"threshold": 50, "amount": 20}}),
    ("generala", {}, {"boxes": {"five_of_a_kind": {"value": 60}}}),
]


def random_sheet(rs, rng: random.Random) -> Sheet:
    sheet = empty_sheet(rs)
    ids = rs.variant.box_ids
    n_filled = rng.randrange(len(ids))
    chosen = ids[:n_filled] if rs.variant.order == "down" else rng.sample(ids, n_filled)
    for b in chosen:
        i = ids.index(b)
        sheet.columns[0].boxes[b] = rng.choice(sorted(rs.achievable[i]))
    return sheet


# every variant with its default rules, plus options and house rules that change placements
ORACLE_RULES += [(vid, {}, {}) for vid in VARIANT_IDS
                 if (vid, {}, {}) not in ORACLE_RULES]


@pytest.mark.parametrize(("vid", "options", "overrides"), ORACLE_RULES)
def test_placements_agree_with_score_hand(vid, options, overrides):
    """The kernels' copy of the placement rules (rewards, legality, Joker, bonuses) against
    score_hand, the one in the domain, on every part the advisor solves (the upper and lower
    sections of Maxi Yatzy each against its own sub-rules)."""
    whole = effective_rules(vid, options, overrides)
    for part in strategy(whole).parts:
        _check_part_against_score_hand(part, random.Random(zlib.crc32(f"{vid}{options}".encode())))


def _check_part_against_score_hand(part, rng: random.Random) -> None:
    rs = part.rs
    kd = part.solution.kd
    values = part.solution.values
    n = rs.variant.dice
    hands = all_hands(n)
    fives = [tuple([f] * n) for f in range(1, 7)]
    for _ in range(6):
        sheet = random_sheet(rs, rng)
        mask, code, flags, _ = part_state(part, sheet)
        if np.isnan(values[mask, code, flags]):
            continue  # a sheet no game reaches (e.g. Doble Generala filled before Generala)
        for first in (True, False):
            s = np.empty((kd.nh, 1), np.float32)
            kernel.score_pass(kd, values, np.array([mask]), np.array([code]),
                              np.array([flags]), first, s)
            for hand in fives + rng.sample(hands, 12):
                h = rs.hand_index[hand]
                oracle = score_hand(rs, list(hand), 1 if first else 2, sheet)
                best = -np.inf
                for b, p in enumerate(oracle.boxes):
                    legal, score, bonus, nm, nu, nf = kernel.placement(
                        kd, mask, code, flags, h, first, b)
                    assert legal == p.legal, (hand, p.box, first, sheet)
                    if legal:
                        assert score == p.score, (hand, p.box, first, sheet)
                        assert bonus == p.five_of_a_kind_bonus + p.upper_bonus, (hand, p.box, sheet)
                        best = max(best, score + bonus + values[nm, nu, nf])
                assert s[h, 0] == pytest.approx(best, abs=1e-3)


# --------------------------------------------------------------------------- positions


def enumerate_turn(rs, sheet, dice, throw) -> dict[tuple, float]:
    """Value of every keep of `dice` after throw 2 by direct enumeration of the rethrow.

    The last throw's hands are valued by their best box (score_hand + next-state tables).
    """
    assert throw == rs.variant.throws - 1
    current = suggest(rs, list(dice), rs.variant.throws, sheet).current_total

    @cache
    def score_best(hand: tuple) -> float:
        return max(a.expected_final_score - current
                   for a in suggest(rs, list(hand), rs.variant.throws, sheet).moves)

    return {keep: current + sum(p * score_best(tuple(sorted(keep + o)))
                                for o, p in _ROLLS[5 - len(keep)])
            for r in range(len(dice)) for keep in set(combinations(dice, r))}


@pytest.mark.slow
def test_fresh_yatzy_1_3_3_5_6_from_first_principles():
    rs = effective_rules("yatzy")
    sheet = empty_sheet(rs)
    sug = suggest(rs, [1, 3, 3, 5, 6], 2, sheet)  # one rethrow left: enumerable quickly
    direct = enumerate_turn(rs, sheet, (1, 3, 3, 5, 6), 2)
    keeps = {tuple(a.move.dice): a.expected_final_score for a in sug.moves
             if a.move.action == "keep"}
    assert keeps.keys() == direct.keys()
    for k, val in direct.items():
        assert keeps[k] == pytest.approx(val, abs=1e-3)
    # on the first throw the solver keeps the pair of threes
    first = suggest(rs, [1, 3, 3, 5, 6], 1, sheet)
    assert first.best.move.action == "keep" and first.best.move.dice == (3, 3)
    assert first.exact


def test_first_throw_values_average_to_the_table_value():
    rs = effective_rules("generala")
    st = strategy(rs)
    sheet = empty_sheet(rs)
    part = st.parts[0]
    table = part_value(part, *part_state(part, sheet)[:3])
    avg = sum(hand_probability(h) * suggest(rs, list(h), 1, sheet).expected_final_score
              for h in all_hands(5))
    assert avg == pytest.approx(table, abs=1e-3)


def test_generala_servida_is_scored_and_wins():
    rs = effective_rules("generala")
    sug = suggest(rs, [4, 4, 4, 4, 4], 1)
    assert sug.best.move.action == "score" and sug.best.move.box == "five_of_a_kind"
    assert sug.best.move.wins_game and sug.best.move.score == 50


def test_yahtzee_bonus_and_forced_joker_position():
    rs = effective_rules("yahtzee")
    sheet = parse_scorecard(rs, {"boxes": {"five_of_a_kind": 50, "sixes": 18}})
    sug = suggest(rs, [6, 6, 6, 6, 6], 3, sheet)
    assert all(a.move.action == "score" for a in sug.moves)
    assert {a.move.box for a in sug.moves} == {"three_of_a_kind", "four_of_a_kind",
                                                  "full_house", "small_straight",
                                                  "large_straight", "chance"}
    assert all(a.move.five_of_a_kind_bonus == 100 for a in sug.moves)
    ls = next(a for a in sug.moves if a.move.box == "large_straight")
    assert ls.move.score == 40 and ls.move.joker


def test_ranking_regret_and_ties():
    rs = effective_rules("yahtzee")
    sug = suggest(rs, [2, 3, 4, 5, 5], 2)
    values = [a.expected_final_score for a in sug.moves]
    assert values == sorted(values, reverse=True)
    assert sug.best is sug.moves[0]
    assert sug.expected_final_score == values[0]
    for a in sug.moves:
        assert a.regret == pytest.approx(values[0] - a.expected_final_score)
    acts = [RankedMove(Keep((1,)), 10.0), RankedMove(Keep((2,)), 10.0 + 1e-8),
            RankedMove(ScoreBox("chance", None, 0), 9.0)]
    ranked = advice._ranked(strategy(rs), acts, 0, 1, 3)
    assert [a.rank for a in ranked.moves] == [1, 1, 3]
    assert [a.tie for a in ranked.moves] == [True, True, False]
    kinds = {a.move.action for a in sug.moves}
    assert kinds == {"keep", "score"}
    assert all(len(a.move.dice) < 5 for a in sug.moves if a.move.action == "keep")


def test_invalid_positions():
    rs = effective_rules("yahtzee")
    with pytest.raises(InvalidInput):
        suggest(rs, [1, 2, 3, 4, 5], 4)
    with pytest.raises(InvalidInput):
        suggest(rs, [1, 2, 3, 4], 1)
    full = parse_scorecard(rs, {"boxes": dict.fromkeys(rs.variant.box_ids, 0)})
    with pytest.raises(InvalidInput):
        suggest(rs, [1, 2, 3, 4, 5], 1, full)
    odd = parse_scorecard(rs, {"boxes": {"sixes": 7}})
    with pytest.raises(InvalidInput):
        suggest(rs, [1, 2, 3, 4, 5], 1, odd)


# --------------------------------------------------------------------------- approximations


def test_maxi_yatzy_is_approximate_and_uses_saved_throws():
    rs = effective_rules("maxi_yatzy")
    sheet = parse_scorecard(rs, {"boxes": {"ones": 3}, "saved_throws": 2})
    sug = suggest(rs, [1, 2, 3, 4, 5, 6], 4, sheet)
    assert not sug.exact and sug.throws_left == 1
    assert sug.best.move.action == "score"
    later = suggest(rs, [1, 2, 3, 4, 5, 6], 5, sheet)
    assert later.throws_left == 0
    assert all(a.move.action == "score" for a in later.moves)


def test_a_complete_part_offers_no_box_and_takes_nothing_from_the_others():
    """Maxi Yatzy's upper section filled (a part with no open box): its score pass says
    "no box" for every hand, so the advice ranks the lower section's boxes and keeps as it
    would with the upper section left out (a stale work array once gave its boxes values,
    and the rethrows vanished from the advice)."""
    rs = effective_rules("maxi_yatzy")
    upper = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18}
    sheet = parse_scorecard(rs, {"boxes": upper})
    st = strategy(rs)
    part = st.parts[0]
    mask = part_state(part, sheet)[0]
    assert mask == (1 << part.solution.kd.nb) - 1  # the upper part is complete
    sug = suggest(rs, [1, 2, 2, 3, 3, 4], 1, sheet)
    assert any(a.move.action == "keep" for a in sug.moves)
    assert {a.move.box for a in sug.moves if a.move.action == "score"}.isdisjoint(upper)
    top = max(a.expected_final_score for a in sug.moves if a.move.action == "keep")
    assert sug.best.expected_final_score == top  # scoring 0 in a lower box is no better


@pytest.mark.slow
def test_maxi_yatzy_saved_throw_share_plays_better_than_the_whole_gain():
    """The share of a fourth throw's gain given to a saved throw was learned by simulation
    (docs in methods/sections.py): seeded games of the advisor's own play score more with
    it than with the whole gain, far beyond the sampling error (about 2 points)."""
    from service.advisor.analysis.simulate import simulate
    from service.advisor.solving.methods.sections import SAVED_THROW_SHARE
    from service.advisor.solving.positions import Position

    rs = effective_rules("maxi_yatzy")
    st = ADVISOR.strategy(rs)
    learned = st.saved_throw_value
    assert learned == pytest.approx(st.method.saved_throw_value(st)) and learned > 0
    means = {}
    try:
        for share in (SAVED_THROW_SHARE, 1.0):
            st.saved_throw_value = learned / SAVED_THROW_SHARE * share
            finals = simulate(st, Position.of(st, empty_sheet(rs)), 1500, 20241202)
            means[share] = finals.mean()
    finally:
        st.saved_throw_value = learned
    assert means[SAVED_THROW_SHARE] > means[1.0] + 15


def test_column_sheet_is_approximate():
    rs = effective_rules("general", {"columns": True})
    sug = suggest(rs, [2, 3, 4, 5, 6], 1)
    assert not sug.exact
    assert sug.best.move.action == "score"
    cols = {a.move.column for a in sug.moves if a.move.action == "score"}
    assert cols == {1, 2, 3, 4}  # first-throw column open on throw 1, down/up their ends
    later = suggest(rs, [2, 3, 4, 5, 6], 2)
    assert 4 not in {a.move.column for a in later.moves if a.move.action == "score"}


# --------------------------------------------------------------------------- tables


def test_tables_are_written_memory_mapped_and_reported():
    rs = effective_rules("generala")
    st = strategy(rs)
    assert isinstance(st.parts[0].solution.values, np.memmap)
    assert ADVISOR.status()["generala"] is True
    files = list(ADVISOR.store.directory.glob("generala-*.npy"))
    assert len(files) == 1
    ADVISOR.cache.clear()
    again = strategy(rs)  # loaded from disk, not rebuilt
    assert np.array_equal(np.asarray(again.parts[0].solution.values),
                          np.asarray(st.parts[0].solution.values), equal_nan=True)


def test_house_rules_build_once_under_concurrency(monkeypatch):
    rs = effective_rules("generala", {}, {"boxes": {"full_house": {"value": 33}}})
    calls = []
    real = advisor_module.build_strategy

    def counting(r, store=None, threads=0):
        calls.append(r.fingerprint)
        return real(r, store, threads)

    monkeypatch.setattr(advisor_module, "build_strategy", counting)
    results = []
    threads = [threading.Thread(target=lambda: results.append(strategy(rs))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(r is results[0] for r in results)
    assert not isinstance(results[0].parts[0].solution.values, np.memmap)  # LRU, not disk



def test_em_baixo_keeps_are_worth_their_mirror_image():
    rs = effective_rules("bozo")
    sug = suggest(rs, [1, 1, 2, 3, 6], 2)
    keeps = {tuple(a.move.dice): a for a in sug.moves if a.move.action == "keep"}
    # keeping the two 1s and announcing "em baixo" is keeping two 6s
    kd = strategy(rs).parts[0].solution.kd
    assert kd.em_baixo
    assert keeps[(1, 1)].expected_final_score >= keeps[(6,)].expected_final_score - 1e-9
    plain = build_strategy(_without_em_baixo(rs))
    with_em = strategy(rs)
    assert with_em.parts[0].solution.start_value >= plain.parts[0].solution.start_value - 1e-4


def _without_em_baixo(rs):
    from dataclasses import replace

    from service.domain.rules import build_rule_set

    return build_rule_set(replace(rs.variant, em_baixo=False), rs.options, rs.overrides)


def test_single_yacht_box_matches_the_exact_probability_of_five_of_a_kind():
    """A sheet with only the Yacht box: the optimum is 50 x P(five of a kind in three throws),
    and that probability is known exactly: 2,783,176 / 6**10 (keep the most common face)."""
    from fractions import Fraction

    others = [b for b in effective_rules("yacht").variant.box_ids if b != "five_of_a_kind"]
    rs = effective_rules("yacht", None, {"remove_boxes": others})
    st = build_strategy(rs)
    part = st.parts[0]
    got = part_value(part, *part_state(part, empty_sheet(rs))[:3])
    exact = 50 * Fraction(2_783_176, 6**10)
    assert got == pytest.approx(float(exact), abs=1e-4)
