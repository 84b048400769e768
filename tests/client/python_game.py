"""A typed game loop over the Python client that openapi-python-client generates from the
committed spec, as a new user writes it: no cast, nothing untyped, checked by mypy --strict
(tests/client/test_python_client.py generates the client with the settings the README
recommends, type-checks this file with it, then runs it against the service).

    python python_game.py BASE_URL KEY SEED VARIANT...

For each variant: a game of two players, each throw's move chosen by the service's bot
(`moves/bot`), each turn written with `games/turn`, the game checked by `games/validate` and
analysed by `games/analyze`. Prints one line per game; exits 1 at the first disagreement.
"""

from __future__ import annotations

import random
import sys
import time

from yahtzee_client import AuthenticatedClient
from yahtzee_client.api.analysis import analyze_game
from yahtzee_client.api.games import play_turn, validate_game
from yahtzee_client.api.moves import bot_move
from yahtzee_client.api.variants import get_variant
from yahtzee_client.models import (
    BotMove,
    BotMoveRequest,
    Game,
    GameAnalysis,
    GameValidation,
    KeepMove,
    Player,
    Problem,
    RecordedTurn,
    Scorecard,
    ScoreMove,
    TableBuilding,
    TurnRequest,
    TurnResult,
    VariantDefinition,
)
from yahtzee_client.models.bot_move_variant import BotMoveVariant, check_bot_move_variant


class Disagreement(Exception):
    """An answer that is not what the game so far says it must be."""


def bot(client: AuthenticatedClient, variant: BotMoveVariant, body: BotMoveRequest) -> (
        KeepMove | ScoreMove):
    """The bot's move, asking again after Retry-After while its table is being built."""
    for _ in range(120):
        answer = bot_move.sync(variant, client=client, body=body)
        if isinstance(answer, TableBuilding):
            time.sleep(1)
            continue
        if not isinstance(answer, BotMove):
            raise Disagreement(f"moves/bot: {answer!r}")
        return answer.move
    raise Disagreement("moves/bot: still building after two minutes")


def play_turn_of(client: AuthenticatedClient, variant: BotMoveVariant, sheet: Scorecard,
                 dice_count: int, rng: random.Random, seed: int
                 ) -> tuple[RecordedTurn, TurnResult]:
    """One turn: throw, ask the bot, keep or score, until a box is chosen."""
    dice = sorted(rng.randint(1, 6) for _ in range(dice_count))
    throws, kept = [list(dice)], []
    throw = 1
    while True:
        move = bot(client, variant, BotMoveRequest(dice=dice, throw=throw, level="expert",
                                                   scorecard=sheet, seed=seed))
        if isinstance(move, KeepMove):
            keep = list(move.dice)
            dice = sorted(keep + [rng.randint(1, 6) for _ in range(dice_count - len(keep))])
            kept.append(keep)
            throws.append(list(dice))
            throw += 1
            continue
        result = play_turn.sync(variant, client=client, body=TurnRequest(
            dice=dice, throw=throw, scorecard=sheet, box=move.box, column=move.column))
        if not isinstance(result, TurnResult):
            raise Disagreement(f"games/turn: {result!r}")
        if result.scorecard.to_dict() == sheet.to_dict():
            raise Disagreement("games/turn: the sheet did not change")
        return RecordedTurn(throws=throws, kept=kept, box=move.box, column=move.column), result


def play_game(client: AuthenticatedClient, variant: BotMoveVariant, seed: int) -> str:
    """A whole game of two players; what it came to, in one line."""
    definition = get_variant.sync(variant, client=client)
    if not isinstance(definition, VariantDefinition):
        raise Disagreement(f"variants/{variant}: {definition!r}")
    rng = random.Random(seed)
    sheets = [Scorecard(), Scorecard()]
    turns: list[list[RecordedTurn]] = [[], []]
    totals = [0, 0]
    over = False
    while not over:
        for player in (0, 1):
            turn, result = play_turn_of(client, variant, sheets[player], definition.dice,
                                        rng, seed)
            sheets[player] = result.scorecard
            turns[player].append(turn)
            totals[player] = result.totals.total
            if result.won:  # an instant win ends the game for everyone
                over = True
                break
            over = result.game_over and player == 1
    game = Game(players=[Player(turns=turns[0], name="ann"), Player(turns=turns[1], name="bob")])
    checked = validate_game.sync(variant, client=client, body=game)
    if not isinstance(checked, GameValidation) or not checked.valid:
        raise Disagreement(f"games/validate: {checked!r}")
    if [p.total for p in checked.players] != totals:
        raise Disagreement(f"games/validate totals {[p.total for p in checked.players]}, "
                           f"games/turn {totals}")
    analysis = analyze_game.sync(variant, client=client, body=game)
    if isinstance(analysis, Problem | TableBuilding | None):
        raise Disagreement(f"games/analyze: {analysis!r}")
    check_analysis(analysis, totals)
    return f"{variant}: {totals} in {len(turns[0])} turns, winners {checked.winners}"


def check_analysis(analysis: GameAnalysis, totals: list[int]) -> None:
    """The analysis names the same players and totals as the game, each finished, with skill
    and luck adding up to the difference to the start's expectation."""
    names = [p.name for p in analysis.players]
    if names != ["ann", "bob"]:
        raise Disagreement(f"games/analyze names {names}")
    finals = [p.final_total for p in analysis.players]
    if finals != totals:
        raise Disagreement(f"games/analyze totals {finals}, games/turn {totals}")
    for p in analysis.players:
        if not p.finished or abs(p.skill + p.luck - p.difference) > 1e-6:
            raise Disagreement(f"games/analyze {p.name}: finished {p.finished}, skill "
                               f"{p.skill} + luck {p.luck} != difference {p.difference}")


def main(argv: list[str]) -> int:
    """Play a game of each variant named."""
    base_url, key, seed, *variants = argv
    client = AuthenticatedClient(base_url=base_url, token=key, timeout=None)
    try:
        for name in variants:
            print(play_game(client, check_bot_move_variant(name), int(seed)), flush=True)
    except Disagreement as e:
        print(f"disagreement: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
