"""/v1/variants/{variant}/games: play a turn, and validate a whole game."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from ...domain import games
from ...domain.errors import MOVE_CODES
from ...domain.games import validate_game
from ...domain.turn import TurnResult, play_turn
from ..batch import add_batch_operation
from ..body import rules_for, sheet_for
from ..openapi import ERRORS_DOC, new_blueprint, problem_doc
from ..schemas.games import GameSchema, GameValidationSchema, TurnRequestSchema, TurnResultSchema

blp = new_blueprint("games", "Play turns and validate whole games")

TURN_ERRORS_DOC = {
    **ERRORS_DOC,
    "409": problem_doc("The body matches the schema but not the rules "
                       "(`/problems/inconsistent-request`: a sheet no game could produce, dice "
                       "or throw not possible, a box the sheet lacks), or the move is illegal "
                       f"(`/problems/illegal-move`, with `code`: {', '.join(MOVE_CODES)})"),
}


def _turn_one(variant: str, item: dict[str, Any]) -> TurnResult:
    """The games/turn answer to one loaded turn."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    outcome = play_turn(rs, sheet, item["dice"], item["throw"], item.get("box"),
                        item.get("column"), item.get("em_baixo", False),
                        scratch=item.get("scratch", False))
    return TurnResult.of(rs, outcome)


def _validate_one(variant: str, item: dict[str, Any], base: str) -> games.GameValidation:
    """The games/validate answer to one loaded game, its problems' pointers under `base`."""
    return validate_game(rules_for(variant, item), item, base)


@blp.route("/<variant:variant>/games/turn")
class GameTurn(MethodView):
    """Play a turn."""

    @blp.arguments(TurnRequestSchema, description="The sheet, the dice the turn ended on "
                                                   "and the box to write")
    @blp.response(200, TurnResultSchema,
                  description="The sheet after the turn and what it earned")
    @blp.doc(operationId="playTurn", responses=TURN_ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> TurnResult:
        """Play one turn: write the dice in the chosen box and get the new sheet back.

        Send the sheet (absent: empty), the dice the turn ended on, the throw they stand on
        (1 = first) and the box (with its column on a column sheet); `scratch: true` writes
        0 in that box instead of what the dice score (a chosen 0). The answer's
        `scorecard` is the sheet to send with the next turn: boxes, five-of-a-kind bonuses,
        saved throws (Maxi Yatzy) and `won` filled in by the service. `earned` says what the
        turn added; `totals`, `turn`, `turns_left`, `game_over` and `won` where the game
        stands. A placement the rules forbid is a 409 `/problems/illegal-move` whose `code`
        names the rule. To play many turns (of different sheets) in one request, send them
        to `games/turn/batch`.
        """
        return _turn_one(variant, item)


add_batch_operation(
    blp, "/<variant:variant>/games/turn", "playTurnBatch", TurnRequestSchema, _turn_one,
    TurnResultSchema,
    ("Play many turns, of different sheets: each item as `games/turn` takes it.\n\n"
     "The answer is the list of `games/turn` answers, in the order of the items. An item "
     "that breaks a rule refuses the whole batch, naming the item in every pointer; at most "
     "`MAX_BATCH_ITEMS` items and `MAX_BATCH_RULE_SETS` tables of rules a batch.",
     "A list of turns, each as `games/turn` takes it",
     "Each turn's answer, in the order of the items"),
    TURN_ERRORS_DOC)


@blp.route("/<variant:variant>/games/validate")
class GameValidation(MethodView):
    """Validate a game."""

    @blp.arguments(GameSchema, description="The game as it was played")
    @blp.response(200, GameValidationSchema, description=(
        "valid, every problem, each turn's points, final totals and standings"))
    @blp.doc(operationId="validateGame", responses=ERRORS_DOC)
    def post(self, item: dict[str, Any], variant: str) -> games.GameValidation:
        """Replay a game and check every move in it.

        Players are listed in playing order, each with the turns they played: the dice of
        each throw, optionally the dice kept between throws, the box written (`scratch: true`
        when it took a chosen 0), and optionally the points claimed; optionally each
        player's claimed total and the claimed winners.
        The answer lists every problem found (pointer, code, detail), not only the first;
        a game that breaks no rule is `valid: true`, a game not yet over is valid so far.
        Each turn comes back with its points and running total, each player with the final
        sheet and totals, and the standings. To validate many games in one request, send
        them to `games/validate/batch`.
        """
        return _validate_one(variant, item, "")


add_batch_operation(
    blp, "/<variant:variant>/games/validate", "validateGameBatch", GameSchema,
    _validate_one, GameValidationSchema,
    ("Validate many games: each item as `games/validate` takes it, answered in order.\n\n"
     "The answer is the list of `games/validate` answers, in the order of the items; each "
     "game's problems point into the batch (`/3/players/0/...`). At most `MAX_BATCH_GAMES` "
     "games and `MAX_BATCH_RULE_SETS` tables of rules a batch.",
     "A list of games, each as `games/validate` takes it",
     "Each game's validation, in the order of the items"),
    ERRORS_DOC, limit_key="MAX_BATCH_GAMES", with_base=True)
