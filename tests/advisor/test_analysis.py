"""Analysis: moments, exact distributions, simulation, coaching, game analysis and win
probabilities, checked against brute force, the published figures and each other."""

from __future__ import annotations

import os
import random
import zlib
from dataclasses import astuple
from functools import cache
from itertools import combinations

import numpy as np
import pytest

from service.advisor import Advisor
from service.advisor.advice import moves as advice
from service.advisor.advice.moves import TIE, RankedMove
from service.advisor.analysis.analyst import Analyst
from service.advisor.analysis.games import analyze
from service.advisor.analysis.simulate import simulate
from service.advisor.analysis.turn_view import TurnView
from service.advisor.kernels.distribution import Distribution
from service.advisor.kernels.winprob import chances
from service.advisor.objectives.win import win_probability
from service.advisor.solving.positions import Position
from service.advisor.solving.solver import solve_moments
from service.domain.dice import all_hands, hand_probability
from service.domain.moves import Keep, ScoreBox
from service.domain.rules import effective_rules
from service.domain.scoring import Column, Sheet, empty_sheet, parse_scorecard, score_hand

ANALYST: Analyst


@pytest.fixture(scope="module", autouse=True)
def _analyst(tmp_path_factory):
    """An advisor and analyst of their own, writing tables to a temporary directory."""
    global ANALYST
    ANALYST = Analyst(Advisor(tmp_path_factory.mktemp("tables")))
    yield


def start(vid: str, options: dict | None = None):
    rs = effective_rules(vid, options)
    st = ANALYST.strategy(rs)
    pos = Position.of(st, empty_sheet(rs))
    mo = ANALYST.moments(st)[0]
    s = pos.states[0]
    m1, m2 = mo.at(*s[:3])
    return st, m1, float(np.sqrt(m2 - m1 * m1))


# --------------------------------------------------------------------------- reference


@pytest.mark.slow
def test_basic_sheet_mean_and_sd_match_the_published_figures():
    st, mean, sd = start("yahtzee_basic")
    assert mean == pytest.approx(245.8708, abs=0.005)
    assert sd == pytest.approx(39.82, abs=0.01)
    # the float32 tables are within a third of the tie tolerance of the float64 re-solve
    values = np.asarray(st.parts[0].solution.values, np.float64)
    assert np.nanmax(np.abs(values - ANALYST.moments(st)[0].m1)) < TIE / 3


@pytest.mark.slow
def test_yahtzee_free_joker_mean_and_sd():
    _, mean, sd = start("yahtzee", {"joker": "free"})
    assert mean == pytest.approx(254.5896, abs=0.005)
    assert sd == pytest.approx(59.6, abs=0.05)


@pytest.mark.parametrize("vid", ["generala", "yacht", "bozo"])
def test_float64_resolve_agrees_with_the_tables(vid):
    st = ANALYST.strategy(effective_rules(vid))
    sol = st.parts[0].solution
    mo = solve_moments(sol)
    values = np.asarray(sol.values, np.float64)
    assert np.array_equal(np.isnan(values), np.isnan(mo.m1))
    assert np.nanmax(np.abs(values - mo.m1)) < TIE / 3
    assert np.all(mo.m2[~np.isnan(mo.m2)] >= mo.m1[~np.isnan(mo.m1)] ** 2 - 1e-6)


# --------------------------------------------------------------------------- brute force

_ROLLS = {n: [(h, hand_probability(h)) for h in all_hands(n)] if n else [((), 1.0)]
          for n in range(6)}


def brute_distribution(rs, sheet: Sheet) -> tuple[float, dict[int, float]]:
    """Optimal value and distribution of the points still to come, by enumeration: every
    placement through score_hand, every keep against every outcome of the rethrown dice.
    Where several choices are optimal they must give the same distribution (checked)."""
    ids = rs.variant.box_ids
    n_dice = rs.variant.dice
    size = 400

    def vec(points: dict[int, float]) -> np.ndarray:
        out = np.zeros(size)
        for k, p in points.items():
            out[k] += p
        return out

    @cache
    def game(values: tuple, bonuses: int) -> tuple[float, np.ndarray]:
        if all(x is not None for x in values):
            return 0.0, vec({0: 1.0})
        sh = Sheet([Column(dict(zip(ids, values, strict=True)), bonuses)])

        def best(options):
            top = max(v for v, _ in options)
            tied = [d for v, d in options if v >= top - 1e-9]
            for d in tied[1:]:
                assert np.allclose(d, tied[0], atol=1e-12), "ambiguous optimum"
            return top, tied[0]

        @cache
        def score_now(hand: tuple, throw: int):
            opts = []
            for p in score_hand(rs, list(hand), throw, sh).boxes:
                if not p.legal:
                    continue
                nxt = tuple(p.score if b == p.box else x for b, x in zip(ids, values,
                                                                         strict=True))
                v, d = game(nxt, bonuses + (1 if p.five_of_a_kind_bonus else 0))
                gain = p.score + p.five_of_a_kind_bonus + p.upper_bonus
                opts.append((gain + v, np.roll(d, gain)))
            return best(opts)

        @cache
        def at(hand: tuple, throw: int):
            opts = [score_now(hand, throw)]
            if throw < rs.variant.throws:
                for r in range(n_dice):
                    for keep in set(combinations(hand, r)):
                        opts.append(rethrow(keep, throw + 1))
            return best(opts)

        @cache
        def rethrow(keep: tuple, throw: int):
            v, d = 0.0, np.zeros(size)
            for o, p in _ROLLS[n_dice - len(keep)]:
                hv, hd = at(tuple(sorted(keep + o)), throw)
                v += p * hv
                d += p * hd
            return v, d

        return rethrow((), 1)

    col = sheet.columns[0]
    v, d = game(tuple(col.boxes[b] for b in ids), col.five_of_a_kind_bonuses)
    return v, {k: float(p) for k, p in enumerate(d) if p > 1e-15}


SMALL_SHEETS = [
    # one open box
    ("yacht", {b: 0 for b in effective_rules("yacht").variant.box_ids if b != "chance"}),
    # two open boxes, the upper bonus at stake (63 needs 18 more in sixes)
    ("yahtzee", {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15,
                 "three_of_a_kind": 20, "four_of_a_kind": 0, "full_house": 25,
                 "small_straight": 30, "large_straight": 0, "chance": 22}),
    # two open boxes with the YAHTZEE box made: Joker and bonus
    ("yahtzee", {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18,
                 "three_of_a_kind": 20, "full_house": 25, "small_straight": 30,
                 "large_straight": 0, "five_of_a_kind": 50}),
    ("generala", {b: 0 for b in effective_rules("generala").variant.box_ids
                  if b not in ("full_house", "five_of_a_kind")}),
]


@pytest.mark.parametrize(("vid", "boxes"), SMALL_SHEETS)
def test_exact_distribution_matches_brute_force(vid, boxes):
    rs = effective_rules(vid)
    sheet = parse_scorecard(rs, {"boxes": boxes})
    value, brute = brute_distribution(rs, sheet)
    pv = ANALYST.position_value(rs, sheet, None, None)
    total = pv.current_total
    d = pv.distribution
    assert d.exact
    got = {int(t) - total: float(p) for t, p in zip(d.totals, d.probs, strict=True) if p > 0}
    assert got.keys() == brute.keys()
    for k, p in brute.items():
        assert got[k] == pytest.approx(p, abs=1e-9)
    mean = sum(k * p for k, p in brute.items())
    var = sum(k * k * p for k, p in brute.items()) - mean * mean
    assert mean == pytest.approx(value, abs=1e-9)
    assert pv.mean - total == pytest.approx(mean, abs=1e-4)
    assert pv.sd == pytest.approx(np.sqrt(var), abs=1e-4)


def test_exact_distribution_is_the_same_on_one_thread_or_two():
    """The forward pass splits large levels between threads; the result does not move."""
    from service.advisor.kernels.distribution import PARALLEL_STATES, forward

    rs = effective_rules("yahtzee")
    st = ANALYST.strategy(rs)
    sheet = parse_scorecard(rs, {"boxes": {"ones": 2, "twos": 6, "fives": 15, "chance": 22,
                                           "small_straight": 30, "full_house": 0}})
    state = tuple(int(x) for x in Position.of(st, sheet).states[0][:3])
    sol = st.parts[0].solution
    one = forward(sol.kd, sol.values, state, 0, None, 1)
    two = forward(sol.kd, sol.values, state, 0, None, 2)
    assert one.states > 4 * PARALLEL_STATES  # levels big enough to split
    assert one.lo == two.lo and one.states == two.states
    np.testing.assert_array_equal(one.probs, two.probs)
    assert one.probs.sum() == pytest.approx(1.0, abs=1e-12)


def test_mid_turn_distribution_matches_brute_force():
    rs = effective_rules("yacht")
    boxes = {b: 0 for b in rs.variant.box_ids if b not in ("chance", "five_of_a_kind")}
    sheet = parse_scorecard(rs, {"boxes": boxes})
    pv = ANALYST.position_value(rs, sheet, [2, 2, 2, 5, 6], 2)
    assert pv.distribution.exact
    # keep the three 2s once (a five of a kind needs two more 2s) or score; by enumeration:
    # the position's mean is the best of every option, each valued by the table
    sug = ANALYST.advisor.suggest(rs, [2, 2, 2, 5, 6], 2, sheet)
    assert pv.mean == pytest.approx(sug.expected_final_score, abs=1e-4)
    assert pv.distribution.mean == pytest.approx(pv.mean, abs=1e-6)


@pytest.mark.slow
def test_the_start_of_a_game_is_exact_under_any_rules():
    """The issue's case: YAHTZEE with a free Joker (a non-default option: no table of it on
    disk) from the start of a game was sampled from 2,000 games; it is the exact forward
    distribution, with the published optimum as its mean."""
    rs = effective_rules("yahtzee", {"joker": "free"})
    d = ANALYST.position_value(rs, None, None, None).distribution
    assert d.exact and d.samples is None
    assert d.mean == pytest.approx(254.5896, abs=0.005)
    assert d.probs.sum() == pytest.approx(1.0, abs=1e-9)


def test_start_distribution_mean_and_sd_match_the_moments():
    rs = effective_rules("generala")
    pv = ANALYST.position_value(rs, None, None, None)
    assert pv.distribution.exact
    d = pv.distribution
    assert d.probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert d.mean == pytest.approx(pv.mean, abs=1e-6)
    assert d.sd == pytest.approx(pv.sd, abs=1e-3)
    pcts = [d.percentile(q) for q in (5, 25, 50, 75, 95)]
    assert pcts == sorted(pcts)
    assert d.p_at_least(d.lo) == 1.0 and d.p_at_least(d.lo + len(d.probs)) == 0.0


def test_simulated_games_agree_with_the_exact_distribution():
    rs = effective_rules("generala")
    st = ANALYST.strategy(rs)
    exact = ANALYST.position_value(rs, None, None, None).distribution
    n = 6000
    finals = simulate(st, Position.of(st, empty_sheet(rs)), n, seed=20240611)
    se = exact.sd / np.sqrt(n)
    assert abs(finals.mean() - exact.mean) < 4 * se
    # Dvoretzky-Kiefer-Wolfowitz: sup |F_n - F| <= eps with probability 1 - 2 exp(-2 n eps^2)
    eps = np.sqrt(np.log(2 / 1e-4) / (2 * n))
    cdf = np.cumsum(exact.probs)
    emp = np.searchsorted(np.sort(finals), exact.totals, side="right") / n
    assert np.max(np.abs(emp - cdf)) < eps


def test_sampled_distribution_states_its_sample():
    rs = effective_rules("general", {"columns": True})
    analyst = Analyst(ANALYST.advisor, samples_approximate=300, sample_seconds=600)
    pv = analyst.position_value(rs, None, None, None)
    d = pv.distribution
    assert not pv.exact and not d.exact
    assert d.samples == 300 and d.standard_error > 0
    assert d.standard_error == pytest.approx(d.sd / np.sqrt(d.samples - 1), rel=1e-9)


def test_sampling_stops_at_its_time_budget_and_says_how_many_games():
    rs = effective_rules("general", {"columns": True})
    analyst = Analyst(ANALYST.advisor, samples_approximate=6400, sample_seconds=0.0)
    d = analyst.position_value(rs, None, None, None).distribution
    # two chunks on each sampling thread (one a CPU), then the budget is spent
    assert d.samples == min(6400, 2 * (os.cpu_count() or 1) * (6400 // 64))
    assert f"{d.samples} games" in d.method


# --------------------------------------------------------------------------- coaching


def test_coach_probability_of_yacht_after_keeping_three_threes():
    rs = effective_rules("yacht")
    boxes = {b: 0 for b in rs.variant.box_ids if b != "five_of_a_kind"}
    sheet = parse_scorecard(rs, {"boxes": boxes})
    st = ANALYST.strategy(rs)
    [outlook] = ANALYST.coach(st, sheet, 1, [((3, 3, 3), False)])
    # two dice to turn into 3s in two throws: 1/36 + 10/36 * 1/6 + 25/36 * 1/36
    p = 1 / 36 + 10 / 36 / 6 + 25 / 36 / 36
    [chance] = outlook.boxes_with_points
    assert (chance.box, chance.column) == ("five_of_a_kind", None)
    assert chance.probability == pytest.approx(p, abs=1e-9)
    assert outlook.expected_points == pytest.approx(50 * p, abs=1e-6)


def test_coach_probabilities_add_up_within_one_turn():
    rs = effective_rules("generala")
    st = ANALYST.strategy(rs)
    sheet = empty_sheet(rs)
    keeps = [((3, 3), False), ((1, 2, 3, 4), False), ((), False)]
    for out in ANALYST.coach(st, sheet, 1, keeps):
        total = sum(b.probability for b in out.boxes_with_points)
        assert 0 < total <= 1 + 1e-9
        assert out.expected_points > 0


def test_keep_values_are_means_of_the_next_throw_in_one_precision():
    """A keep's value is the mean, over the rethrown dice, of the best value at the next
    throw, to float64 precision (the tie tolerance only absorbs the tables' float32 error)."""
    rs = effective_rules("generala")
    sheet = parse_scorecard(rs, {"boxes": {"ones": 2, "full_house": 30}})
    sug = advice.suggest(ANALYST.strategy(rs), [2, 3, 3, 5, 6], 2, sheet)
    keep = next(a for a in sug.moves if a.move.action == "keep" and a.move.dice == (3, 3))
    mean = 0.0
    for o, p in _ROLLS[3]:
        nxt = advice.suggest(ANALYST.strategy(rs), sorted([3, 3, *o]), 3, sheet)
        mean += p * nxt.expected_final_score
    assert keep.expected_final_score == pytest.approx(mean, abs=1e-9)


def test_ties_are_decided_at_the_tables_precision():
    rs = effective_rules("generala")
    acts = [RankedMove(Keep((1,)), 100.0),
            RankedMove(ScoreBox("chance", None, 0), 100.0 - 3e-5),
            RankedMove(ScoreBox("straight", None, 0), 100.0 - 2e-4)]
    ranked = advice._ranked(ANALYST.strategy(rs), acts, 0, 2, 3)
    assert [a.rank for a in ranked.moves] == [1, 1, 3]
    assert [a.tie for a in ranked.moves] == [True, True, False]


# --------------------------------------------------------------------------- analysis


def _played_game(rs, rng: random.Random, mistakes: float) -> dict | None:
    """A game of the advisor's play with random deviations, recorded with its keeps (one
    player of games/validate's `Game` shape); None when a placement won the game at once (a
    Generala servida: no turn of anyone may follow it)."""
    sheet = empty_sheet(rs)
    turns = []
    st = ANALYST.strategy(rs)
    n = rs.variant.dice
    while True:
        from service.domain.scoring import score_sheet

        if score_sheet(rs, sheet).complete:
            break
        dice = sorted(rng.randint(1, 6) for _ in range(n))
        throws, kept = [], []
        for t in range(1, rs.variant.throws + 1):
            alts = advice.suggest(st, dice, t, sheet).moves
            a = alts[0] if rng.random() > mistakes else rng.choice(alts)
            if a.move.action == "keep":
                throws.append(list(dice))
                kept.append(list(a.move.dice))
                dice = sorted([*a.move.dice, *(rng.randint(1, 6)
                                               for _ in range(n - len(a.move.dice)))])
                continue
            throws.append(list(dice))
            if a.move.wins_game:
                return None
            turns.append({"throws": throws, "kept": kept, "box": a.move.box})
            sheet.columns[0].boxes[a.move.box] = a.move.score
            if a.move.five_of_a_kind_bonus:
                sheet.columns[0].five_of_a_kind_bonuses += 1
            break
    return {"turns": turns}


@pytest.mark.parametrize("vid", ["generala", "yacht", "general_11"])
def test_skill_and_luck_add_up_to_the_difference(vid):
    rs = effective_rules(vid)
    rng = random.Random(zlib.crc32(vid.encode()))  # not hash(): salted per process

    def finished_game(mistakes: float) -> dict:
        while (game := _played_game(rs, rng, mistakes)) is None:
            pass
        return game

    games = [finished_game(m) for m in (0.0, 0.3)]
    out = analyze(ANALYST, rs, {"players": games})
    for game, p in zip(games, out.players, strict=True):
        assert p.finished
        diff = p.final_total - p.start_expected_final_score
        assert p.skill + p.luck == pytest.approx(diff, abs=1e-5)
        assert p.difference == pytest.approx(diff, abs=1e-5)
        assert p.decision_count == sum(len(t["throws"]) for t in game["turns"])
        assert sum(astuple(p.classes)) == p.decision_count
        assert p.mean_regret == pytest.approx(p.total_regret / p.decision_count, abs=1e-6)
    perfect = out.players[0]
    assert perfect.total_regret == pytest.approx(0.0, abs=1e-4)
    assert perfect.classes.inaccuracy + perfect.classes.mistake + \
        perfect.classes.blunder == 0


def test_a_bad_placement_is_a_blunder_and_keeps_without_kept_dice_are_not_judged():
    rs = effective_rules("generala")
    game = {"players": [{"turns": [{"throws": [[6, 6, 6, 6, 2], [6, 6, 6, 6, 3]],
                                    "box": "ones"}]}]}
    out = analyze(ANALYST, rs, game).players[0]
    assert out.decision_count == 1  # the keep was not given: only the placement is judged
    [dec] = out.turns[0].decisions
    assert dec.move.box == "ones" and dec.class_ == "blunder"
    assert dec.best.action in ("keep", "score") and dec.regret > 5
    assert out.skill + out.luck == pytest.approx(out.difference, abs=1e-6)


def _servida_game(face: int, box: str | None, em_baixo: bool) -> dict:
    """Three players: the first plays a turn (its keep given), the second throws five
    `face`s and stops (read em baixo or not), writing `box` (None: no box), which wins at
    once; the third never plays."""
    win: dict = {"throws": [[face] * 5], "em_baixo": em_baixo}
    if box is not None:
        win["box"] = box
    return {"players": [
        {"name": "ana", "turns": [{"throws": [[2, 3, 3, 5, 6], [3, 3, 3, 1, 4]],
                                   "kept": [[3, 3]], "box": "threes"}]},
        {"name": "bia", "turns": [win]},
        {"name": "caio", "turns": []}]}


@pytest.mark.parametrize(("vid", "face", "box", "em_baixo"), [
    ("generala", 6, "five_of_a_kind", False), ("generala", 6, "sixes", False),
    ("generala", 2, "ones", False), ("generala", 4, None, False),
    ("generala_spanish", 6, "five_of_a_kind", False), ("generala_spanish", 1, "ones", False),
    ("bozo", 6, "five_of_a_kind", False), ("bozo", 1, "five_of_a_kind", True),
    ("bozo", 5, "fives", False)])
def test_an_instant_win_is_the_best_move_and_ends_every_players_game(vid, face, box,
                                                                     em_baixo):
    """A Generala servida (Bozó: General de boca, em baixo too), in whatever box or none:
    the tables value a placement as if the game went on, so before this fix the servida
    was a blunder worth 166.79 points of regret in Generala. It is the best move, regret 0,
    worth the final total; skill plus luck is still the difference, and the game is over
    for every player (docs/rules.md, decision 26), each on their final total."""
    rs = effective_rules(vid)
    game = _servida_game(face, box, em_baixo)
    from service.domain.games import validate_game

    replay = validate_game(rs, game)
    assert replay.valid and replay.game_over and replay.ended_by == "instant_win"
    out = analyze(ANALYST, rs, game)
    for p, res in zip(out.players, replay.players, strict=True):
        assert p.finished and p.final_total == res.total and p.end_value == res.total
        assert p.difference == pytest.approx(res.total - p.start_expected_final_score,
                                             abs=1e-9)
        assert p.skill + p.luck == pytest.approx(p.difference, abs=1e-6)
    winner = out.players[1]
    assert winner.skill == 0.0 and winner.luck == pytest.approx(winner.difference, abs=1e-9)
    assert winner.turns[0].expected_final_score_at_end == winner.final_total
    if box is None:
        assert winner.decisions == []  # stopping without a box is not judged
        return
    [dec] = winner.decisions
    assert dec.move.box == box and dec.regret == 0.0 and dec.class_ == "best"
    assert dec.best == ScoreBox(dec.move.box, dec.move.column, dec.move.score)
    assert dec.expected_final_score == dec.best_expected_final_score == winner.final_total
    assert dec.sd == dec.best_sd == 0.0
    assert winner.classes.best == 1 and winner.total_regret == 0.0
    # the tables' value of the hand (the game going on) is above the total it ends on
    pos = Position.of(ANALYST.strategy(rs), empty_sheet(rs))
    view = TurnView(pos, ANALYST.tables(ANALYST.strategy(rs)))
    assert view.hand_value(rs.hand_index[(7 - face if em_baixo else face,) * 5], 1)[0] > \
        winner.final_total + 5


# --------------------------------------------------------------------------- win probability


def test_symmetric_positions_have_equal_chances_that_sum_to_one():
    rs = effective_rules("generala")
    boxes = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18}
    sheets = [parse_scorecard(rs, {"boxes": boxes}) for _ in range(3)]
    plain = effective_rules("generala", overrides={"boxes": {
        "five_of_a_kind": {"wins_on_first_throw": False}}})
    out = win_probability(ANALYST, plain, [parse_scorecard(plain, {"boxes": boxes})] * 3)
    shares = [p.chances.share for p in out.players]
    assert shares == pytest.approx([1 / 3] * 3, abs=1e-9)
    firsts = [p.chances.first for p in out.players]
    assert firsts[0] == pytest.approx(firsts[1], abs=1e-12) == pytest.approx(firsts[2])
    assert out.exact
    # where a servida wins at once, the order of play tells: the first to throw may make
    # one before the others do
    out = win_probability(ANALYST, rs, sheets)
    shares = [p.chances.share for p in out.players]
    assert sum(shares) == pytest.approx(1.0, abs=3e-9)  # each rounded to 1e-9
    assert shares[0] > shares[1] > shares[2] and shares[0] - shares[2] < 1e-4


def test_players_on_one_position_share_its_value_and_sampling_shares_one_budget(monkeypatch):
    """The time of a win-probability request does not grow with its players: equal sheets
    are valued once, and the sampled distributions (an approximate method) split one
    budget."""
    import service.advisor.objectives.win as analyst_mod

    rs = effective_rules("maxi_yatzy")
    ids = rs.variant.box_ids
    empty = empty_sheet(rs)
    sheets = [empty, parse_scorecard(rs, {"boxes": {ids[0]: 0}}), empty_sheet(rs),
              parse_scorecard(rs, {"boxes": {ids[1]: 0}}), parse_scorecard(rs, {})]
    asked = []
    real = Analyst.position_value

    def spy(self, *args):
        asked.append(args[5])  # sample_seconds
        return real(self, *args)

    monkeypatch.setattr(Analyst, "position_value", spy)
    monkeypatch.setattr(analyst_mod, "WIN_SAMPLE_SECONDS", 0.3)
    analyst = Analyst(ANALYST.advisor, samples_approximate=6400)
    out = win_probability(analyst, rs, sheets)
    assert len(asked) == 3  # three distinct positions among five players
    assert sum(asked) <= 0.3 + 1e-9
    players = out.players
    assert players[0].value is players[2].value is players[4].value
    assert players[0].chances.share == pytest.approx(players[2].chances.share)
    # each sampled with its share of the budget: far fewer games than asked for
    assert all(int(p.value.distribution.method.split()[0]) < 6400 for p in players)


def test_every_player_of_an_exact_variant_is_exact_at_every_turn():
    """Four mid-game YAHTZEE positions, eight to nine boxes from the end (sampled before,
    beyond a budget of states): every distribution is exact, and the shares sum to 1."""
    rs = effective_rules("yahtzee")
    ids = rs.variant.box_ids
    sheets = [parse_scorecard(rs, {"boxes": dict.fromkeys(ids[k:k + 4 + k % 2], 0)})
              for k in range(4)]
    out = win_probability(ANALYST, rs, sheets)
    assert out.exact and all(p.value.distribution.exact for p in out.players)
    assert sum(p.chances.share for p in out.players) == pytest.approx(1, abs=4e-9)


def test_chances_against_enumeration():
    a = Distribution(lo=10, probs=np.array([0.5, 0.5]))  # 10 or 11
    b = Distribution(lo=11, probs=np.array([0.25, 0.75]))  # 11 or 12
    ca, cb = chances([a, b])
    # a wins: never; tie at 11: 0.5 * 0.25
    assert ca.win == pytest.approx(0.0) and ca.tie == pytest.approx(0.125)
    assert cb.win == pytest.approx(0.875) and cb.tie == pytest.approx(0.125)
    assert ca.share + cb.share == pytest.approx(1.0)
    assert ca.share == pytest.approx(0.0625)


def test_winning_move_on_the_last_box_is_the_exact_chance():
    """One open box, last throw: scoring is the only move; its share of the win is the
    opponent's distribution below (plus half the tie) the total it makes."""
    rs = effective_rules("generala")
    boxes = dict.fromkeys(rs.variant.box_ids, 0)
    boxes.pop("sixes")
    me = parse_scorecard(rs, {"boxes": dict(boxes, ones=5)})
    them = parse_scorecard(rs, {"boxes": dict(boxes, ones=3)})
    out = win_probability(ANALYST, rs, [me, them], 0, [6, 6, 6, 2, 1], 3)
    move = out.move
    assert move.exact and not move.differs
    # the opponent's last turn: a Generala servida wins it at once (q = 6 / 6^5), else the
    # totals decide (their games without one: P(total and no servida), summing to 1 - q)
    opp = ANALYST.position_value(rs, them, None, None, instant=True).distribution
    assert opp.probs.sum() == pytest.approx(1 - 6 / 7776, abs=1e-12)
    mine = 5 + 18
    expected = sum(p * (1.0 if t < mine else 0.5 if t == mine else 0.0)
                   for t, p in zip(opp.totals, opp.probs, strict=True))
    assert move.max_win.win_share == pytest.approx(expected, abs=1e-9)


# the two players of a Generala: only their number boxes left, the second 105 points ahead
# with them: the first can win only at once (a servida), before the second does
_UPPER = ("ones", "twos", "threes", "fours", "fives")


def _far_apart(rs):
    ids = rs.variant.box_ids
    behind = {b: 0 for b in ids if b not in _UPPER}
    ahead = dict(behind, straight=25, full_house=35, four_of_a_kind=45)
    return [parse_scorecard(rs, {"boxes": behind}), parse_scorecard(rs, {"boxes": ahead})]


@pytest.mark.parametrize("to_move", [0, 1])
def test_a_servida_wins_the_game_in_the_win_probabilities(to_move):
    """Decisions 4, 12 and 22: each of five turns of each player wins at once with chance
    q = 6/7776, in playing order. The first player, unable to catch up, wins exactly when
    their servida comes before the other's: sum over k of q (1 - q)^k times the chance that
    the other made none in their turns before it (k of them, or k + 1 when they move
    first)."""
    rs = effective_rules("generala")
    out = win_probability(ANALYST, rs, _far_apart(rs), to_move)
    q = 6 / 7776
    before = 0 if to_move == 0 else 1
    expected = sum(q * (1 - q) ** k * (1 - q) ** (k + before) for k in range(5))
    behind, ahead = out.players
    assert out.exact
    assert behind.chances.win == pytest.approx(expected, abs=1e-9)
    assert behind.chances.share == pytest.approx(expected, abs=1e-9) and behind.chances.tie == 0
    assert ahead.chances.share == pytest.approx(1 - expected, abs=1e-9)


@pytest.mark.parametrize("to_move", [0, 1])
def test_when_every_first_throw_wins_at_once_the_first_turn_to_come_wins(to_move):
    """The live fuzzer's 500 (Schemathesis case cTYa9O): a house rule under which Chance
    wins on the first throw makes every first throw a win at once, so no game reaches a
    total without one; the exact distributions of those totals are empty (mass 0), not an
    error. The player to move (far ahead) is past their first throw: the next player's
    first throw wins."""
    rs = effective_rules("kniffel", None, {"boxes": {"chance": {"wins_on_first_throw": True}}})
    ids = rs.variant.box_ids
    ahead = {**dict.fromkeys(ids[:-3], 0), "full_house": 25, "large_straight": 40}
    sheets = [parse_scorecard(rs, {"boxes": dict.fromkeys(ids[:-2], 0)}),
              parse_scorecard(rs, {"boxes": ahead})]
    if to_move == 1:
        sheets.reverse()
    out = win_probability(ANALYST, rs, sheets, to_move, [1, 1, 2, 3, 4], 2)
    shares = [p.chances.share for p in out.players]
    assert shares[1 - to_move] == pytest.approx(1.0, abs=1e-12)
    assert shares[to_move] == pytest.approx(0.0, abs=1e-12)
    assert out.exact
    # on the first throw the dice win at once for the player to move
    first = win_probability(ANALYST, rs, sheets, to_move, [1, 1, 2, 3, 4], 1)
    assert first.players[to_move].chances.share == 1.0


def test_a_servida_on_the_first_throw_wins_and_is_the_winning_move():
    """Five alike on the first throw: the player to move stops and wins (share 1), and every
    box written on them wins; the same dice on a second throw are only points."""
    rs = effective_rules("generala")
    sheets = _far_apart(rs)
    out = win_probability(ANALYST, rs, sheets, 0, [4, 4, 4, 4, 4], 1)
    assert [p.chances.share for p in out.players] == [1.0, 0.0]
    move = out.move
    assert move.max_win.move.action == "score"
    assert move.max_win.win_share == 1.0
    later = win_probability(ANALYST, rs, sheets, 0, [4, 4, 4, 4, 4], 2)
    assert later.players[0].chances.share < 0.01


def test_the_winning_move_counts_later_servidas_as_wins():
    """With two number boxes left and far behind, the winning move's shares count the
    servidas of the player's later turn (and the opponent's before it): a keep is worth at
    least the chance of a servida next turn before the opponent's."""
    rs = effective_rules("generala")
    ids = rs.variant.box_ids
    behind = parse_scorecard(rs, {"boxes": {b: 0 for b in ids if b not in ("ones", "twos")}})
    ahead = parse_scorecard(rs, {"boxes": {**{b: 0 for b in ids if b not in ("ones", "twos")},
                                           "straight": 25}})
    move = win_probability(ANALYST, rs, [behind, ahead], 0, [1, 2, 3, 5, 6], 1).move
    q = 6 / 7776
    assert move.exact
    # this turn cannot catch up (at most 5 + 10 points); the next turn's servida can win,
    # if the opponent made none in their turn between: q (1 - q), never more than that
    # plus the opponent's own failure to score (they need no more than their 25)
    assert move.max_win.win_share == pytest.approx(q * (1 - q), abs=1e-9)


@pytest.mark.parametrize("mine", [
    # the upper bonus still to win, the five-of-a-kind box open
    {"fours": 12, "fives": 15, "sixes": 18, "three_of_a_kind": 20, "four_of_a_kind": 0,
     "full_house": 25, "small_straight": 30, "large_straight": 40, "chance": 22},
    # the five-of-a-kind box made (bonuses to come), the upper bonus still to win
    {"fours": 12, "fives": 15, "sixes": 18, "three_of_a_kind": 20, "five_of_a_kind": 50,
     "full_house": 25, "small_straight": 30, "large_straight": 40, "chance": 22},
    # the five-of-a-kind box scratched, the upper bonus out of reach
    {"ones": 1, "twos": 2, "sixes": 12, "three_of_a_kind": 20, "five_of_a_kind": 0,
     "full_house": 25, "small_straight": 30, "large_straight": 40, "chance": 22},
])
def test_winning_move_computed_over_reachable_totals_only_is_unchanged(monkeypatch, mine):
    """Each state's win row is computed only for the states the position can lead to
    (`winprob.reachable_from`) and over the own totals it can have been reached with
    (`winprob.gain_bounds`, which reads the state's upper total and flags); for every state
    with the position's boxes filled, over every total, the shares are the same."""
    from service.advisor.kernels import winprob

    rs = effective_rules("yahtzee")
    me = parse_scorecard(rs, {"boxes": mine})
    them = parse_scorecard(rs, {"boxes": {"ones": 3, "twos": 6, "fours": 12, "fives": 15,
                                          "sixes": 24, "three_of_a_kind": 25,
                                          "five_of_a_kind": 50, "full_house": 25,
                                          "small_straight": 30, "large_straight": 40}})
    dice, throw = [2, 3, 3, 5, 5], 2
    ANALYST.dists.clear()
    fast = win_probability(ANALYST, rs, [me, them], 0, dice, throw).move
    monkeypatch.setattr(winprob, "gain_bounds",
                        lambda kd, mask0, u0=None: lambda mask, u=None, fl=None: 10**6)
    monkeypatch.setattr(winprob, "reachable_from", lambda levels, state: [
        lv[((lv[:, 0] & state[0]) == state[0]) & (lv[:, 0] != state[0])] for lv in levels])
    ANALYST.dists.clear()
    ANALYST.win_cache.clear()
    full = win_probability(ANALYST, rs, [me, them], 0, dice, throw).move
    assert fast.exact and fast == full


def test_winning_move_can_differ_from_the_expected_score_move():
    """Far behind, a player must gamble: the move for winning is not the move for points,
    and it is worth more to winning and less in points."""
    rs = effective_rules("yahtzee")
    me = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18,
          "three_of_a_kind": 20, "full_house": 25, "chance": 22}
    them = dict(me, large_straight=40, small_straight=30, four_of_a_kind=24,
                five_of_a_kind=50)
    them.pop("chance")
    sheets = [parse_scorecard(rs, {"boxes": me}), parse_scorecard(rs, {"boxes": them})]
    move = win_probability(ANALYST, rs, sheets, 0, [2, 3, 4, 5, 5], 1).move
    assert move.exact and move.differs
    a, b = move.max_expected_score, move.max_win
    assert b.win_share > a.win_share
    assert b.expected_final_score < a.expected_final_score


def test_warm_keeps_moments_and_start_distributions_beside_the_tables(tmp_path):
    advisor = Advisor(tmp_path)
    Analyst(advisor).warm(["generala"])
    names = sorted(p.name for p in tmp_path.glob("generala-*.npy"))
    assert any(n.endswith("-all-m1-v1.npy") for n in names)
    assert any(n.endswith("-all-m2-v1.npy") for n in names)
    assert any(n.endswith("-all-start-v1.npy") for n in names)
    assert any(n.endswith("-all-early-data-v1.npy") for n in names)
    fresh = Analyst(Advisor(tmp_path))  # nothing computed: read from disk
    rs = effective_rules("generala")
    pv = fresh.position_value(rs, None, None, None)
    assert pv.distribution.exact and pv.distribution.states == 0  # no pass: from disk
    assert pv.distribution.mean == pytest.approx(pv.mean, abs=1e-6)
    assert fresh.early_futures(fresh.strategy(rs)) is not None


# --------------------------------------------------------------------------- compiling


def _compiled_versions() -> dict[str, int]:
    """How many versions numba has compiled (or loaded) of every advisor kernel."""
    import numba

    from service.advisor.kernels import (
        distribution,
        moments,
        policy,
        selfplay,
        turn,
        values,
        winprob,
    )

    return {f"{m.__name__}.{name}": len(f.signatures)
            for m in (distribution, moments, policy, selfplay, turn, values, winprob)
            for name, f in vars(m).items() if isinstance(f, numba.core.registry.CPUDispatcher)}


def test_compile_kernels_leaves_nothing_for_a_request_to_compile():
    """After `compile_kernels` (run before the workers fork), analysing a column sheet, Maxi
    Yatzy and house rules compiles no new kernel version: a compile holds a worker for up to
    a minute. (Tables built in memory are read-only like those loaded from disk, so both
    share one version; building a table compiles the solver, in the build process.)"""
    ANALYST.compile_kernels(["yahtzee"])
    sheet = {"boxes": {"ones": 3, "twos": 6}}
    cases = []
    for vid, options, rules in (("yahtzee", {"columns": True}, None),
                                ("maxi_yatzy", None, None),
                                ("kniffel", None, {"upper_bonus": {"threshold": 60,
                                                                   "amount": 40}})):
        rs = effective_rules(vid, options, rules)
        ANALYST.strategy(rs)  # the table, built here as the build process would
        cases.append((rs, parse_scorecard(rs, {"columns": [sheet, {}, {}, {}]} if options
                                          else sheet), [2, 2, 2, 5, 6, 1][:rs.variant.dice]))
    before = _compiled_versions()
    for rs, card, dice in cases:
        ANALYST.position_value(rs, card, dice, 2)
        ANALYST.position_value(rs, card, None, None)
        win_probability(ANALYST, rs, [card, card], 0, dice, 1)
    after = _compiled_versions()
    assert {k: v for k, v in after.items() if v != before.get(k)} == {}


def test_the_analysis_reads_a_game_only_through_the_domains_replay():
    """One replay engine: the game analysis judges the turns `domain.games.replay_game`
    played; it scores no hand, writes no placement and checks no rule of its own."""
    import ast
    from pathlib import Path

    import service.advisor.analysis.games as games

    tree = ast.parse(Path(games.__file__).read_text())
    imported = {(node.module, a.name) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for a in node.names}
    assert ("domain.games", "replay_game") in imported
    names = {a for _, a in imported}
    assert not names & {"score_hand", "apply_turn", "play_turn", "max_throw", "check_sheet",
                        "validate_game"}
    defined = {n.name for n in ast.walk(tree)
               if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert not defined & {"replay", "PlayedTurn", "PlayedThrow", "_placed", "_scored",
                          "_five_bonus"}


def test_a_game_that_breaks_a_rule_is_refused_with_the_problems_validate_reports():
    """Every problem games/validate reports, with its pointer and code, before a table is
    asked for; a game valid so far is analysed as far as it goes."""
    from service.domain.errors import InvalidInput
    from service.domain.games import validate_game

    rs = effective_rules("yacht")
    game = {"players": [
        {"turns": [{"throws": [[1, 2, 3, 4, 5], [1, 2, 3, 4, 6]], "kept": [[1, 2, 3, 5]],
                    "box": "ones", "points": 2}]},
        {"turns": [{"throws": [[6, 6, 6, 6, 6]], "box": "sixes"},
                   {"throws": [[6, 6, 6, 6, 6]], "box": "sixes"}]}]}

    class NoTables:
        def strategy(self, rs, kind="values"):
            raise AssertionError("a table was asked for")

    with pytest.raises(InvalidInput) as err:
        analyze(NoTables(), rs, game)
    got = [(p.pointer, p.code, p.detail) for p in err.value.problems]
    want = [(p.pointer, p.code, p.detail) for p in validate_game(rs, game).problems]
    assert got == want
    assert {(p, c) for p, c, _ in got} >= {
        ("/players/0/turns/0/kept/0", "kept_not_in_next_throw"),
        ("/players/0/turns/0/points", "points_mismatch"),
        ("/players/1/turns/1", "out_of_turn"), ("/players/1/turns/1/box", "box_filled")}
    del game["players"][1]["turns"][1]
    game["players"][0]["turns"][0].update(kept=[[1, 2, 3, 4]], points=1)
    out = analyze(ANALYST, rs, game)
    assert [p.decision_count for p in out.players] == [2, 1]
    assert not any(p.finished for p in out.players)


def test_a_full_sheet_in_the_last_round_is_a_final_total():
    """The last round: the first player has finished; the second, to move, plays their last
    box. The finished player's distribution is their total; the shares still sum to 1."""
    rs = effective_rules("yahtzee")
    ids = rs.variant.box_ids
    done = parse_scorecard(rs, {"boxes": dict.fromkeys(ids, 0) | {"chance": 20}})
    last = parse_scorecard(rs, {"boxes": {b: 0 for b in ids if b != "chance"}})
    out = win_probability(ANALYST, rs, [done, last], 1, [6, 6, 5, 4, 1], 3)
    first, second = out.players
    assert first.value.current_total == 20 and first.value.sd == 0.0
    assert first.value.distribution.exact and out.exact
    # 6-6-5-4-1 in chance: 22 > 20, the last player wins
    assert second.chances.share == pytest.approx(1.0) and first.chances.share == pytest.approx(0.0)
    assert out.move.max_win.move.box == "chance"


def test_playing_to_win_takes_a_servida_and_ranks_every_move():
    from service.advisor.objectives.win import rank_to_win

    rs = effective_rules("generala")
    me, them = _far_apart(rs)
    sug = ANALYST.advisor.suggest(rs, [3, 3, 3, 3, 3], 1, me)
    ranked = rank_to_win(ANALYST, rs, me, [3, 3, 3, 3, 3], 1, False, [them], sug)
    assert ranked.objective == "win" and ranked.best.move.action == "score"
    assert ranked.best.win_share == 1.0 and ranked.best.rank == 1
    shares = [a.win_share for a in ranked.moves]
    assert shares == sorted(shares, reverse=True)
    # far behind with nothing that wins at once: the approximation's shares stay small
    sug = ANALYST.advisor.suggest(rs, [1, 2, 3, 5, 6], 1, me)
    ranked = rank_to_win(ANALYST, rs, me, [1, 2, 3, 5, 6], 1, False, [them], sug)
    assert all(0.0 <= a.win_share < 0.01 for a in ranked.moves)


def test_the_turns_decisions_share_one_win_table_and_it_matches_a_fresh_one():
    """The win tables of a position (`winprob.win_tables`) are kept for the rest of its turn
    (`Analyst.win_cache`): the second throw's ranking reads them, and gives the shares a
    fresh backward induction gives."""
    from service.advisor.objectives.win import rank_to_win

    rs = effective_rules("yahtzee")
    me = parse_scorecard(rs, {"boxes": {"ones": 3, "twos": 6, "threes": 9, "fours": 12,
                                        "fives": 15, "sixes": 18, "three_of_a_kind": 20,
                                        "full_house": 25, "chance": 22}})
    them = parse_scorecard(rs, {"boxes": {"ones": 2, "twos": 6, "fours": 12, "fives": 15,
                                          "sixes": 24, "three_of_a_kind": 25,
                                          "small_straight": 30}})
    ANALYST.win_cache.clear()

    def shares(dice: list[int], throw: int) -> list[float]:
        sug = ANALYST.advisor.suggest(rs, dice, throw, me)
        ranked = rank_to_win(ANALYST, rs, me, dice, throw, False, [them], sug)
        assert ranked.win_exact
        return [a.win_share for a in ranked.moves]

    first = shares([2, 3, 4, 5, 5], 1)
    second = shares([1, 3, 4, 5, 6], 2)
    assert len(ANALYST.win_cache.lru) == 1
    ANALYST.win_cache.clear()
    assert shares([1, 3, 4, 5, 6], 2) == second
    assert max(first) > 0.0


def test_win_shares_of_totals_and_chances_against_enumeration_of_three_opponents():
    """`winprob.utility` (an own total's share of the win) and `chances` against every
    combination of the opponents' totals, ties shared."""
    from itertools import product

    from service.advisor.kernels.winprob import utility

    rng = np.random.default_rng(7)
    dists = [Distribution(lo=int(rng.integers(5, 9)), probs=rng.random(int(rng.integers(2, 6))))
             for _ in range(3)]
    norm = [d.probs / d.probs.sum() for d in dists]

    def share(x: int, others: list[int]) -> float:
        top = max([x, *others])
        return 0.0 if x < top else 1.0 / (1 + sum(o == top for o in others))

    lo, hi = 3, 16
    got = utility(dists, lo, hi)
    for x in range(lo, hi):
        want = sum(np.prod([norm[j][t[j] - d.lo] for j, d in enumerate(dists)])
                   * share(x, list(t))
                   for t in product(*[range(d.lo, d.lo + len(d.probs)) for d in dists]))
        assert got[x - lo] == pytest.approx(want, abs=1e-12)
    ch = chances(dists)
    assert sum(c.share for c in ch) == pytest.approx(1.0, abs=1e-12)
    for i, d in enumerate(dists):
        others = [e for j, e in enumerate(dists) if j != i]
        mine = utility(others, d.lo, d.lo + len(d.probs))
        assert ch[i].share == pytest.approx(float(norm[i] @ mine), abs=1e-12)



# --------------------------------------------------------------------------- futures


def _flat(sol, state) -> int:
    nu, nf = sol.values.shape[1], sol.values.shape[2]
    return (int(state[0]) * nu + int(state[1])) * nf + int(state[2])


@pytest.mark.parametrize("vid", ["generala", "yacht", "bozo"])
def test_the_first_turns_table_matches_forward_passes_and_the_moment_tables(vid):
    """The table of the first turns' distributions (computed backward from the full sheets)
    against two independent computations: the forward pass from each of its turn starts,
    and the moment tables' mean and SD (their own kernel, the same policy)."""
    from service.advisor.kernels.distribution import forward, futures

    st = ANALYST.strategy(effective_rules(vid))
    sol = st.parts[0].solution
    levels = ANALYST.reachable_levels(st)
    table = futures(sol.kd, sol.values, levels, 1 << 30, 2, deepest=2)
    mo = ANALYST.moments(st)[0]
    states = np.concatenate(levels[:3])
    assert len(table.flat) == len(states)
    rng = random.Random(vid)
    for row in rng.sample(list(states), 40) + [states[0]]:
        state = tuple(int(x) for x in row)
        got = table.get(_flat(sol, state))
        want = forward(sol.kd, sol.values, state, 0, None, 1)
        assert got.lo == want.lo
        np.testing.assert_allclose(got.probs, want.probs, rtol=0, atol=1e-14)
        m1, m2 = mo.at(*state)
        assert got.mean == pytest.approx(m1, abs=1e-9)
        assert got.sd == pytest.approx(np.sqrt(m2 - m1 * m1), abs=1e-7)


def test_moves_distributions_match_forward_passes():
    """Playing to win before the last four boxes: every move's exact distribution (a box's
    from the state it leads to, a keep's the rest of the turn then those states', all from
    `successor_futures`, computed backward) equals a forward pass's from the same
    outcomes."""
    from service.advisor.kernels.distribution import first_turn_records, forward, gain_bits

    rs = effective_rules("yahtzee")
    st = ANALYST.strategy(rs)
    sol = st.parts[0].solution
    ids = rs.variant.box_ids
    sheet = parse_scorecard(rs, {"boxes": {**dict.fromkeys(ids[:6], 0), "chance": 21,
                                           "full_house": 25}})
    state = tuple(int(x) for x in Position.of(st, sheet).states[0][:3])
    fut = ANALYST.successor_futures(st, state)
    keeps = sol.model.keeps
    for keep in [(), (5,), (2, 3, 4), (6, 6, 6), (1, 1, 2, 2)]:
        for throw in (1, 2):
            records = first_turn_records(sol.kd, sol.values, state, -1, throw,
                                         keeps.index[keep])
            got = fut.combine(*records, gain_bits(sol.kd), 10)
            want = forward(sol.kd, sol.values, state, 10, records, 1)
            assert got.lo == want.lo
            np.testing.assert_allclose(got.probs, want.probs, rtol=0, atol=1e-14)
    for flat in fut.flat[::7]:
        nu, nf = sol.values.shape[1], sol.values.shape[2]
        s2 = (int(flat) // (nu * nf), int(flat) // nf % nu, int(flat) % nf)
        want = forward(sol.kd, sol.values, s2, 0, None, 1)
        got = fut.get(int(flat))
        assert got.lo == want.lo
        np.testing.assert_allclose(got.probs, want.probs, rtol=0, atol=1e-14)


def test_a_mid_turn_distribution_agrees_with_the_moments_and_simulated_games():
    """Mid-turn, eight boxes from the end of a YAHTZEE game: the exact distribution's mean
    and SD against the moment tables' (the turn's hand values, `TurnView`), and its CDF
    against 4,000 simulated games of the advisor's play (DKW bound)."""
    rs = effective_rules("yahtzee")
    st = ANALYST.strategy(rs)
    sheet = parse_scorecard(rs, {"boxes": {"ones": 2, "twos": 6, "fives": 15, "chance": 23,
                                           "full_house": 25}})
    dice, throw = [2, 3, 5, 5, 6], 1
    pv = ANALYST.position_value(rs, sheet, dice, throw)
    d = pv.distribution
    assert d.exact and d.probs.sum() == pytest.approx(1.0, abs=1e-12)
    pos = Position.of(st, sheet)
    view = TurnView(pos, ANALYST.tables(st), throw)
    h = rs.hand_index[tuple(dice)]
    m1, m2 = view.hand_value(h, throw)
    assert pv.mean == pytest.approx(pos.total + m1, abs=1e-6)
    assert pv.sd == pytest.approx(np.sqrt(m2 - m1 * m1), abs=1e-6)
    n = 4000
    finals = simulate(st, pos, n, seed=33, throw=throw, hand=h)
    assert abs(finals.mean() - d.mean) < 4 * d.sd / np.sqrt(n)
    eps = np.sqrt(np.log(2 / 1e-4) / (2 * n))
    emp = np.searchsorted(np.sort(finals), d.totals, side="right") / n
    assert np.max(np.abs(emp - np.cumsum(d.probs))) < eps


def test_a_turn_leads_only_to_states_the_tables_hold_and_a_pass_never_loops():
    """House rules under which the Generala box never holds a made score (every score of it
    0, a servida still winning): its flag, which the Doble Generala box reads, is never set,
    and no table state has it. A turn's successors (the sources of every move's
    distribution) leave it out; a forward pass or successor pass from such a state, which
    reads no legal box there, stops with an error at once instead of looping (a request once
    held its worker until the worker was killed)."""
    from service.advisor.kernels.distribution import forward, successor_futures, turn_successors

    rs = effective_rules("generala", {"escalera_wraps": False}, {
        "boxes": {"five_of_a_kind": {"scoring": "fixed", "value": 0, "first_throw_value": 0,
                                     "first_throw_bonus": 0, "wins_on_first_throw": True}},
        "upper_bonus": {"threshold": 1, "amount": 1}})
    st = ANALYST.strategy(rs)
    sol = st.parts[0].solution
    kd, values = sol.kd, sol.values
    nu, nf = values.shape[1], values.shape[2]
    assert nf == 2  # one tracked box: the Generala box, whose flag no hand sets
    held = {_flat(sol, tuple(int(x) for x in row))
            for level in ANALYST.reachable_levels(st) for row in level}
    five = rs.variant.box_ids.index("five_of_a_kind")
    mask = sum(1 << rs.variant.box_ids.index(b) for b in ("ones", "threes", "sixes"))
    sources = turn_successors(kd, nu, nf, mask, 1, 0)
    assert len(sources) and all(int(f) % nf == 0 for f in sources)
    assert set(int(f) for f in sources) <= held
    unheld = (mask | 1 << five, 1, 1)
    assert _flat(sol, unheld) not in held
    with pytest.raises(RuntimeError, match="no state of the table"):
        forward(kd, values, unheld, 0, None, 1)
    with pytest.raises(RuntimeError, match="no state of the table"):
        successor_futures(kd, values, np.array([_flat(sol, unheld)]), 1)
