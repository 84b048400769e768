"""Playing a turn and validating a whole game (service/domain/turn.py and games.py): what a
turn earns, each illegal move's code, and the whole-game decisions 11-18 of docs/rules.md."""

from __future__ import annotations

from typing import Any

import pytest

from service.domain.consistency import sheet_problems
from service.domain.errors import IllegalMove, InvalidInput
from service.domain.rules import effective_rules
from service.domain.scorecards import sheet_totals
from service.domain.scoring import parse_scorecard
from service.domain.turn import play_turn

from .gamegen import earned_json, scorecard_json, validation_json
from .rulebook import UPPER, filled_except


def turn(variant: str, card: dict | None, dice: list[int], throw: int, box: str | None,
         column: int | None = None, options: dict | None = None, rules: dict | None = None,
         em_baixo: bool = False, scratch: bool = False):
    rs = effective_rules(variant, options, rules)
    return play_turn(rs, parse_scorecard(rs, card), dice, throw, box, column, em_baixo,
                     scratch=scratch)


def illegal(*args: Any, **kw: Any) -> tuple[str, str]:
    with pytest.raises(InvalidInput) as err:
        turn(*args, **kw)
    p = err.value.problems[0]
    return p.code, p.pointer


# --------------------------------------------------------------------------- one turn


def test_a_yahtzee_bonus_fills_the_chip_count():
    out = turn("yahtzee", {"boxes": {"five_of_a_kind": 50}}, [6, 6, 6, 6, 6], 3, "sixes")
    assert earned_json(out) == {"box": "sixes", "column": None, "score": 30, "joker": False,
                            "five_of_a_kind_bonus": 100, "upper_bonus": 0,
                            "first_throw_bonus": 0, "wins_game": False, "points": 130}
    assert out.sheet.columns[0].five_of_a_kind_bonuses == 1
    assert out.turn == 2 and out.turns_left == 11 and not out.game_over


def test_the_upper_bonus_is_earned_by_the_turn_that_reaches_63():
    card = {"boxes": {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15}}
    out = turn("yahtzee", card, [6, 6, 6, 1, 2], 2, "sixes")
    assert out.score == 18 and out.upper_bonus == 35 and out.points == 53


def test_first_throw_scores_are_reported():
    servida = turn("generala", None, [4, 4, 2, 2, 2], 1, "full_house")
    assert servida.score == 35 and servida.first_throw_bonus == 5
    armado = turn("generala", None, [4, 4, 2, 2, 2], 2, "full_house")
    assert armado.score == 30 and armado.first_throw_bonus == 0
    mao = turn("general", None, [3, 3, 3, 3, 3], 1, "five_of_a_kind",
               options={"general_de_mao": True})
    assert mao.score == 100 and mao.first_throw_bonus == 50


def test_an_instant_win_needs_no_box_and_ends_the_game():
    """Decisions 4 and 12: a Generala servida wins whatever the sheet holds."""
    out = turn("generala", {"boxes": {"five_of_a_kind": 0}}, [5, 5, 5, 5, 5], 1, None)
    assert out.wins_game and out.sheet.won and out.game_over and out.turns_left == 0
    assert out.box is None and out.points == 0
    written = turn("generala", None, [5, 5, 5, 5, 5], 1, "five_of_a_kind")
    assert written.score == 50 and written.sheet.won
    de_boca = turn("bozo", None, [2, 2, 2, 2, 2], 1, "twos", em_baixo=True)
    assert de_boca.scored_dice == (5, 5, 5, 5, 5) and de_boca.score == 0 and de_boca.sheet.won


def test_a_servida_thrown_again_is_no_win():
    """Decision 12: the win needs the player to stop on the first throw."""
    assert illegal("generala", None, [5, 5, 5, 5, 5], 2, None) == ("box_required", "/box")
    out = turn("generala", None, [5, 5, 5, 5, 5], 2, "five_of_a_kind")
    assert out.score == 50 and not out.sheet.won


def test_kniffel_extra_50_is_outside_the_upper_subtotal():
    """Decision 17."""
    out = turn("kniffel", {"boxes": {"five_of_a_kind": 50}}, [2, 2, 2, 2, 2], 3, "twos")
    assert out.score == 10 and out.five_of_a_kind_bonus == 50
    rs = effective_rules("kniffel")
    totals = sheet_totals(rs, out.sheet)
    assert totals.upper_subtotal == 10 and totals.five_of_a_kind_bonus == 50
    assert totals.total == 110


def test_maxi_yatzy_saves_and_spends_throws():
    """Decision 9 and §6: unused throws are saved for later turns."""
    one = turn("maxi_yatzy", None, [1, 2, 3, 4, 5, 6], 1, "full_straight")
    assert one.sheet.saved_throws == 2 and one.score == 21
    rs = effective_rules("maxi_yatzy")
    five = play_turn(rs, one.sheet, [6, 6, 6, 6, 6, 6], 5, "six_of_a_kind")
    assert five.sheet.saved_throws == 0 and five.score == 100
    assert illegal("maxi_yatzy", {"boxes": {"ones": 2}, "saved_throws": 1},
                   [1, 1, 1, 1, 1, 1], 5, "ones") == ("too_many_throws", "/throw")


def test_the_answer_scorecard_goes_back_unchanged():
    rs = effective_rules("yahtzee", {"columns": True})
    out = turn("yahtzee", None, [1, 1, 1, 2, 2], 2, "ones", column=1,
               options={"columns": True})
    data = scorecard_json(rs, out.sheet)
    assert data["columns"][0]["boxes"]["ones"] == 3
    assert parse_scorecard(rs, data) == out.sheet


ILLEGAL = [
    ("box_filled", "/box", ("yahtzee", {"boxes": {"ones": 3}}, [1, 1, 1, 2, 3], 2, "ones")),
    # decision 14: the forced Joker names Threes; 0 elsewhere is not allowed
    ("joker_forces_box", "/box", ("yahtzee", {"boxes": {"five_of_a_kind": 50}},
                                  [3, 3, 3, 3, 3], 2, "ones")),
    ("out_of_order", "/box", ("generala", {"boxes": {"ones": 1}}, [3, 3, 1, 2, 4], 2,
                              "threes", None, {"obligada": True})),
    ("out_of_order", "/box", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "twos", 1,
                              {"columns": True})),
    ("out_of_order", "/box", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "ones", 2,
                              {"columns": True})),
    # decision 15: column 4 only with first-throw results, 0 included
    ("first_throw_only", "/column", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "full_house", 4,
                                     {"columns": True})),
    ("box_required", "/box", ("yahtzee", None, [2, 2, 1, 1, 3], 2, None)),
    ("game_won", "", ("generala", {"won": True}, [2, 2, 1, 1, 3], 2, "ones")),
    ("game_over", "", ("yacht", {"boxes": filled_except("yacht", [])}, [2, 2, 1, 1, 3], 2,
                       "ones")),
    ("unknown_box", "/box", ("general", None, [2, 2, 1, 1, 3], 2, "chance", None,
                             {"aleatoria": False})),
    ("column_required", "/column", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "ones", None,
                                    {"columns": True})),
    ("no_columns", "/column", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "ones", 1)),
    ("dice_count", "/dice", ("yahtzee", None, [2, 2, 1, 1, 3, 4], 2, "ones")),
    ("too_many_throws", "/throw", ("yahtzee", None, [2, 2, 1, 1, 3], 4, "ones")),
    ("value_not_achievable", "/scorecard/boxes/ones", ("yahtzee", {"boxes": {"ones": 7}},
                                                       [2, 2, 1, 1, 3], 2, "twos")),
]


@pytest.mark.parametrize(("code", "pointer", "args"), ILLEGAL,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(ILLEGAL)])
def test_each_illegal_turn_has_its_code(code, pointer, args):
    assert illegal(*args) == (code, pointer)


def test_illegal_moves_are_their_own_error():
    with pytest.raises(IllegalMove) as err:
        turn("yahtzee", {"boxes": {"ones": 3}}, [1, 1, 1, 2, 3], 2, "ones")
    assert err.value.code == "box_filled"
    with pytest.raises(InvalidInput) as bad:
        turn("yahtzee", None, [1, 1, 1, 2, 3], 4, "ones")
    assert not isinstance(bad.value, IllegalMove)


def test_the_joker_follows_the_column_being_written():
    """Decision 16: column 3's YAHTZEE box is filled, column 1's is open."""
    card = {"columns": [{"boxes": {}}, {"boxes": {}},
                        {"boxes": {"five_of_a_kind": 50}}, {"boxes": {}}]}
    opts = {"columns": True}
    assert illegal("yahtzee", card, [4, 4, 4, 4, 4], 2, "chance", 3,
                   options=opts) == ("joker_forces_box", "/box")
    in_three = turn("yahtzee", card, [4, 4, 4, 4, 4], 2, "fours", 3, options=opts)
    assert in_three.five_of_a_kind_bonus == 100
    in_one = turn("yahtzee", card, [4, 4, 4, 4, 4], 2, "ones", 1, options=opts)
    assert in_one.score == 0 and in_one.five_of_a_kind_bonus == 0


# --------------------------------------------------------------------------- chosen zeros


def test_a_chosen_zero_keeps_the_yahtzee_bonus():
    """The client's case: five 6s with the YAHTZEE box at 50 and Sixes filled, written as a
    chosen 0 in Small Straight (decision 3; the bonus "wherever that Yahtzee is then
    placed"): 0 in the box, +100, and the sheet it leaves passes the sheet check."""
    card = {"boxes": {"five_of_a_kind": 50, "sixes": 18}}
    out = turn("yahtzee", card, [6, 6, 6, 6, 6], 2, "small_straight", scratch=True)
    assert earned_json(out) == {"box": "small_straight", "column": None, "score": 0,
                            "joker": False, "five_of_a_kind_bonus": 100, "upper_bonus": 0,
                            "first_throw_bonus": 0, "wins_game": False, "points": 100}
    assert out.sheet.columns[0].boxes["small_straight"] == 0
    assert out.sheet.columns[0].five_of_a_kind_bonuses == 1
    rs = effective_rules("yahtzee")
    assert sheet_problems(rs, out.sheet) == []
    # the Joker's 30 when written as the dice score
    assert turn("yahtzee", card, [6, 6, 6, 6, 6], 2, "small_straight").points == 130


def test_a_chosen_zero_reaches_no_upper_bonus_and_no_first_throw_score():
    card = {"boxes": {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15}}
    out = turn("yahtzee", card, [6, 6, 6, 1, 2], 2, "sixes", scratch=True)
    assert (out.score, out.upper_bonus, out.points) == (0, 0, 0)
    servida = turn("generala", None, [4, 4, 2, 2, 2], 1, "full_house", scratch=True)
    assert (servida.score, servida.first_throw_bonus) == (0, 0)


def test_a_chosen_zero_where_the_hand_scores_nothing_is_simply_a_zero():
    plain = turn("yahtzee", None, [1, 2, 3, 5, 5], 3, "full_house")
    chosen = turn("yahtzee", None, [1, 2, 3, 5, 5], 3, "full_house", scratch=True)
    assert earned_json(chosen) == earned_json(plain) and chosen.sheet == plain.sheet
    assert not chosen.scratch


def test_a_chosen_zero_in_kniffels_number_box_scores_no_extra_kniffel():
    """Kniffel's +50 is the roll scored in its number box (decision 23): a 0 there is not."""
    card = {"boxes": {"five_of_a_kind": 50}}
    out = turn("kniffel", card, [4, 4, 4, 4, 4], 2, "fours", scratch=True)
    assert (out.score, out.five_of_a_kind_bonus) == (0, 0)
    assert out.sheet.columns[0].five_of_a_kind_bonuses == 0
    assert turn("kniffel", card, [4, 4, 4, 4, 4], 2, "fours").five_of_a_kind_bonus == 50


def test_an_instant_win_with_a_chosen_zero_still_wins():
    """Decisions 4 and 12: the winning turn may write a legal box; a chosen 0 is one."""
    out = turn("generala", None, [6, 6, 6, 6, 6], 1, "ones", options={"obligada": True},
               scratch=True)
    assert out.wins_game and out.sheet.won and out.game_over
    assert out.sheet.columns[0].boxes["ones"] == 0 and out.score == 0
    assert illegal("generala", None, [6, 6, 6, 6, 6], 1, "twos",
                   options={"obligada": True}, scratch=True) == ("out_of_order", "/box")


SCRATCH_ILLEGAL = [
    # decision 14: the forced Joker names Threes; a chosen 0 elsewhere is not allowed
    ("joker_forces_box", "/box", ("yahtzee", {"boxes": {"five_of_a_kind": 50}},
                                  [3, 3, 3, 3, 3], 2, "chance")),
    ("out_of_order", "/box", ("generala", {"boxes": {"ones": 1}}, [3, 3, 1, 2, 4], 2,
                              "threes", None, {"obligada": True})),
    ("out_of_order", "/box", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "ones", 2,
                              {"columns": True})),
    ("first_throw_only", "/column", ("yahtzee", None, [2, 2, 1, 1, 3], 2, "full_house", 4,
                                     {"columns": True})),
    ("box_filled", "/box", ("yahtzee", {"boxes": {"ones": 3}}, [1, 1, 1, 2, 3], 2, "ones")),
    # a chosen 0 names its box, even on a throw that wins at once
    ("box_required", "/box", ("generala", None, [6, 6, 6, 6, 6], 1, None)),
]


@pytest.mark.parametrize(("code", "pointer", "args"), SCRATCH_ILLEGAL,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(SCRATCH_ILLEGAL)])
def test_a_chosen_zero_keeps_the_order_and_joker_rules(code, pointer, args):
    assert illegal(*args, scratch=True) == (code, pointer)


def test_a_recorded_game_holds_chosen_zeros():
    players = [[T([5, 5, 5, 5, 5], box="five_of_a_kind", points=50),
                T([5, 5, 5, 5, 1], box="fives", points=20),
                T([5, 5, 5, 5, 5], box="chance", scratch=True, points=0),
                T([6, 6, 6, 6, 6], box="sixes", scratch=True, points=30)]]
    r = check("yahtzee", players)
    assert codes(r) == [("/players/0/turns/3/points", "points_mismatch")]
    turns = r["players"][0]["turns"]
    earned = [t["earned"] for t in turns]
    assert [(e["score"], e["five_of_a_kind_bonus"], e["points"]) for e in earned] == [
        (50, 0, 50), (20, 0, 20), (0, 100, 100), (0, 100, 100)]
    card = r["players"][0]["scorecard"]
    assert (card["boxes"]["chance"], card["boxes"]["sixes"]) == (0, 0)
    assert card["five_of_a_kind_bonuses"] == 2 and r["players"][0]["total"] == 270
    players[0][3]["points"] = 0
    assert check("yahtzee", players)["valid"]
    # a chosen 0 the forced Joker does not allow is illegal, and written as played
    bad = check("yahtzee", [[T([5, 5, 5, 5, 5], box="five_of_a_kind"),
                             T([5, 5, 5, 5, 5], box="chance", scratch=True)]])
    assert codes(bad) == [("/players/0/turns/1/box", "joker_forces_box")]
    assert bad["players"][0]["scorecard"]["boxes"]["chance"] == 0


# --------------------------------------------------------------------------- whole games


def T(*throws: list[int], box: str | None = None, **kw: Any) -> dict[str, Any]:  # noqa: N802
    """A recorded turn."""
    t: dict[str, Any] = {"throws": list(throws)}
    if box is not None:
        t["box"] = box
    t.update(kw)
    return t


def codes(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(p["pointer"], p["code"]) for p in result["problems"]]


def check(variant: str, players: list[list[dict]], options: dict | None = None,
          **extra: Any) -> dict[str, Any]:
    game = {"players": [{"turns": t} for t in players], **extra}
    return validation_json(effective_rules(variant, options), game)


def test_a_partial_game_is_valid_so_far():
    r = check("yatzy", [[T([1, 1, 1, 2, 3], box="ones", points=3)],
                        [T([6, 6, 2, 3, 4], box="one_pair", points=12)]])
    assert r["valid"] and not r["game_over"] and r["winners"] == []
    assert [s["player"] for s in r["standings"]] == [1, 0]
    assert r["players"][1]["turns"][0]["running_total"] == 12


def test_an_instant_win_ends_the_game_for_everyone():
    """Decision 12: the players after the winner in that round do not play."""
    players = [
        [T([1, 2, 3, 4, 6], box="ones"), T([2, 2, 3, 4, 6], box="twos")],
        [T([1, 1, 3, 4, 6], box="ones"), T([4, 4, 4, 4, 4])],  # Generala servida
        [T([1, 3, 3, 4, 6], box="ones"), T([6, 6, 6, 5, 5], box="full_house")],
    ]
    r = check("generala", players)
    assert codes(r) == [("/players/2/turns/1", "game_won")]
    assert r["game_over"] and r["ended_by"] == "instant_win" and r["winners"] == [1]
    assert r["standings"][0] == {"rank": 1, "player": 1, "name": "Player 2", "total": 2,
                                 "winner": True}
    assert r["players"][2]["turns"][1]["status"] == "after_end"
    del players[2][1]
    assert check("generala", players)["valid"]


def test_a_servida_needs_the_player_to_stop():
    players = [[T([4, 4, 4, 4, 4], [4, 4, 4, 4, 4], kept=[[4, 4, 4, 4]])]]
    r = check("generala", players)
    assert codes(r) == [("/players/0/turns/0/box", "box_required")]
    assert not r["game_over"]


def test_ties_share_the_win():
    """Decision 13."""
    one = [T([1, 1, 1, 1, 2], box="ones")] + [T([2, 3, 4, 5, 6], box=b) for b in
                                              ("twos", "threes", "fours", "fives", "sixes")]
    r = check("bozo", [one, one, [*one[:-1], T([1, 1, 2, 3, 4], box="sixes")]])
    assert r["valid"] and r["game_over"] is False
    full = filled_except("bozo", [])
    assert len(full) == 10  # Bozó has 10 boxes: finish the game with the lower ones
    lower = [T([2, 2, 3, 3, 3], box="full_house"), T([1, 2, 3, 4, 6], box="straight"),
             T([1, 1, 2, 2, 3], box="four_of_a_kind"), T([1, 1, 2, 2, 3], box="five_of_a_kind")]
    r = check("bozo", [one + lower, one + lower, one[:-1] + [T([1, 1, 2, 3, 4], box="sixes")]
                       + lower], winners=[0, 1])
    assert r["valid"] and r["game_over"] and r["ended_by"] == "sheets_full"
    assert r["winners"] == [0, 1]
    assert [(s["rank"], s["winner"]) for s in r["standings"]] == [(1, True), (1, True),
                                                                   (3, False)]


def test_turn_order_is_checked():
    """Decision 11: players in order, one turn each per round."""
    r = check("yacht", [[T([1, 1, 1, 2, 3], box="ones"), T([2, 2, 1, 3, 4], box="twos")], []])
    assert codes(r) == [("/players/0/turns/1", "out_of_turn")]  # turn 1 came first
    r = check("yacht", [[T([1, 1, 1, 2, 3], box="ones")],
                        [T([1, 1, 1, 2, 3], box="ones"), T([2, 2, 1, 3, 4], box="twos")]])
    assert codes(r) == [("/players/1/turns/1", "out_of_turn")]


def test_kept_dice_are_checked():
    r = check("yahtzee", [[T([1, 2, 3, 4, 6], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5],
                             kept=[[1, 2, 3, 4], [1, 2, 3, 4, 5]], box="large_straight",
                             points=40)]])
    assert codes(r) == [("/players/0/turns/0/kept/1", "kept_all_dice")]
    r = check("yahtzee", [[T([1, 2, 3, 4, 6], [1, 2, 3, 4, 5], kept=[[1, 2, 5]],
                             box="large_straight")]])
    assert codes(r) == [("/players/0/turns/0/kept/0", "kept_not_in_throw")]
    r = check("yahtzee", [[T([1, 2, 3, 4, 6], [1, 2, 3, 5, 5], kept=[[1, 2, 3, 4]],
                             box="chance")]])
    assert codes(r) == [("/players/0/turns/0/kept/0", "kept_not_in_next_throw")]
    r = check("yahtzee", [[T([1, 2, 3, 4, 6], [1, 2, 3, 4, 5], kept=[],
                             box="large_straight")]])
    assert codes(r) == [("/players/0/turns/0/kept", "kept_count")]


def test_claimed_points_and_totals_are_checked():
    r = check("generala", [[T([4, 4, 2, 2, 1], [4, 4, 2, 2, 2], box="full_house", points=35),
                            T([1, 1, 1, 2, 3], box="ones", points=4)]])
    assert codes(r) == [("/players/0/turns/0/points", "first_throw_bonus_on_later_throw"),
                        ("/players/0/turns/1/points", "points_mismatch")]
    game = {"players": [{"turns": [T([1, 1, 1, 2, 3], box="ones")], "total": 4}],
            "winners": [0]}
    r = validation_json(effective_rules("generala"), game)
    assert codes(r) == [("/players/0/total", "total_mismatch"),
                        ("/winners", "winners_before_end")]
    game["winners"] = [3]
    assert ("/winners/0", "unknown_player") in codes(
        validation_json(effective_rules("generala"), game))


def test_claimed_winners_of_a_finished_game():
    win = [[T([1, 1, 1, 2, 3], box="ones")], [T([6, 6, 6, 6, 6])]]
    assert codes(check("bozo", win, winners=[0])) == [("/winners", "winners_mismatch")]
    assert check("bozo", win, winners=[1])["valid"]


def test_throw_limits_and_maxi_saved_throws():
    """Decision 9: a throw beyond 3 + saved throws is an error."""
    dice = [1, 2, 3, 4, 5, 6]
    players = [[T(dice, box="full_straight"),                       # saves 2
                T(dice, dice, dice, dice, dice, box="chance"),     # spends 2
                T(dice, dice, dice, dice, box="ones")]]            # none left
    r = check("maxi_yatzy", players)
    assert codes(r) == [("/players/0/turns/2/throws/3", "too_many_throws")]
    turns = r["players"][0]["turns"]
    assert [t["status"] for t in turns] == ["ok", "ok", "illegal"]
    assert r["players"][0]["scorecard"]["saved_throws"] == 0


def test_column_four_takes_first_throws_only():
    """Decision 15."""
    r = check("yahtzee", [[T([1, 1, 2, 3, 4], [1, 1, 1, 3, 4], box="chance", column=4)]],
              options={"columns": True})
    assert codes(r) == [("/players/0/turns/0/column", "first_throw_only")]
    assert r["players"][0]["turns"][0]["status"] == "illegal"
    r = check("yahtzee", [[T([1, 1, 2, 3, 4], box="chance", column=4)]],
              options={"columns": True})
    assert r["valid"]


def test_unreadable_dice_are_reported_and_the_game_goes_on():
    r = check("yacht", [[T([1, 1, 7, 2, 3], box="ones", points=2),
                         T([1, 1, 1, 2], box="twos"),
                         T([2, 2, 2, 3, 3], box="ones", points=2)]])
    assert codes(r) == [("/players/0/turns/0/throws/0/2", "bad_face"),
                        ("/players/0/turns/1/throws/0", "dice_count"),
                        ("/players/0/turns/2/box", "box_filled")]
    turns = r["players"][0]["turns"]
    assert [t["status"] for t in turns] == ["not_scored", "not_scored", "illegal"]
    assert r["players"][0]["scorecard"]["boxes"]["ones"] == 2  # as the players kept it


def test_the_joker_and_bonus_in_a_replayed_game():
    players = [[T([5, 5, 5, 5, 5], box="five_of_a_kind", points=50),
                T([5, 5, 5, 5, 5], box="chance"),
                T([5, 5, 5, 5, 5], box="fives", points=25)]]
    r = check("yahtzee", players)
    assert codes(r) == [("/players/0/turns/1/box", "joker_forces_box")]
    turns = r["players"][0]["turns"]
    # the illegal turn earns no bonus
    assert [t["earned"]["points"] for t in turns] == [50, 25, 125]
    assert r["players"][0]["total"] == turns[-1]["running_total"] == 200


def test_a_whole_game_totals_match_the_sheet():
    names = UPPER + ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight",
                     "large_straight", "five_of_a_kind", "chance")
    turns = [T([i + 1] * 5 if i < 6 else [6, 6, 6, 6, 6], box=b) for i, b in enumerate(names)]
    r = check("yahtzee_basic", [turns])
    assert r["game_over"] and r["winners"] == [0]
    rs = effective_rules("yahtzee_basic")
    final = parse_scorecard(rs, r["players"][0]["scorecard"])
    assert r["players"][0]["total"] == sheet_totals(rs, final).total
    assert r["players"][0]["turns"][-1]["running_total"] == r["players"][0]["total"]
