"""/v1/variants/{variant}/games/analyze: how well a game was played."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask.views import MethodView

from ...advisor.analysis import games
from ...advisor.analysis.games import analyze
from ...advisor.objectives import win
from ...advisor.objectives.win import win_probability
from ...domain.errors import InvalidInput
from ...domain.games import player_name
from ..body import rules_for, sheet_for
from ..busy import BUSY_DOC
from ..extensions import analyst_of
from ..openapi import ERRORS_DOC, new_blueprint
from ..schemas.analysis import GameAnalysisSchema, WinProbabilityRequestSchema, WinProbabilitySchema
from ..schemas.games import GameSchema

blp = new_blueprint("analysis", "Whole games: analysis of the decisions and win probabilities",
                    operation_class="analysis")


def _analyze_one(variant: str, item: dict[str, Any]) -> games.GameAnalysis:
    """The games/analyze answer to one loaded game."""
    return analyze(analyst_of(current_app), rules_for(variant, item), item)


def _win_one(variant: str, item: dict[str, Any]) -> win.WinProbability:
    """The games/win-probability answer to one loaded request."""
    rs = rules_for(variant, item)
    to_move = item.get("to_move", 0)
    players = item["players"]
    if to_move >= len(players):
        raise InvalidInput.one("/to_move", f"there are {len(players)} players")
    sheets = [sheet_for(rs, p, base=f"/players/{i}") for i, p in enumerate(players)]
    result = win_probability(analyst_of(current_app), rs, sheets, to_move,
                             item.get("dice"), item.get("throw"),
                             item.get("em_baixo", False))
    for i, (p, chances) in enumerate(zip(players, result.players, strict=True)):
        chances.name = player_name(p, i)
    return result


@blp.route("/<variant:variant>/games/analyze")
class GameAnalysis(MethodView):
    """Game analysis."""

    @blp.arguments(GameSchema, description="The game as it was played (as games/validate "
                                            "takes it)")
    @blp.response(200, GameAnalysisSchema, description=(
        "Every decision judged; per player regret, classes, skill and luck"))
    @blp.doc(operationId="analyzeGame", responses={**ERRORS_DOC, **BUSY_DOC})
    def post(self, item: dict[str, Any], variant: str) -> games.GameAnalysis:
        """Analyse a game: every decision against the advisor's optimal play.

        Takes the game exactly as `games/validate` does (the `Game` shape: players → turns
        → `throws` (the dice of each throw), `kept` (the dice kept after each throw but the
        last), `box`, `column`, `scratch`...; every game starts from empty sheets). For every
        keep (when `kept` is given) and every placement: the
        dice, the choice and the best choice, the expected final score of each with its
        standard deviation, the regret and a class: `best` (the unique best), `tie` (as
        good as the best, within 1e-4), `inaccuracy` (regret up to 1 point), `mistake` (up
        to 5), `blunder` (more). Per player: total and mean regret per decision, the
        count per class, and the difference between the final total and the expectation at
        the start split into skill (minus the regrets) and luck (the throws), which add up.
        Without `kept` a turn's keeps are not judged (their effect counts as luck).
        Approximate methods (column sheets, Maxi Yatzy) say `exact: false`. The game is
        replayed as `games/validate` replays it before a table is asked for: a game that
        breaks a rule (claims included) is refused at once with a 409
        `/problems/inconsistent-request` listing every problem `games/validate` reports
        (pointer, code, detail), and a 202 (table being built) comes only for one that can
        be analysed. A game not yet over is analysed as far as it goes.
        """
        return _analyze_one(variant, item)


@blp.route("/<variant:variant>/games/win-probability")
class WinProbability(MethodView):
    """Win probabilities."""

    @blp.arguments(WinProbabilityRequestSchema,
                   description="Every player's scorecard; the dice of the player to move")
    @blp.response(200, WinProbabilitySchema,
                  description="Each player's chance of finishing first")
    @blp.doc(operationId="winProbability", responses={**ERRORS_DOC, **BUSY_DOC})
    def post(self, item: dict[str, Any], variant: str) -> win.WinProbability:
        """The probability that each player finishes first (a live win bar).

        Assumed: every player plays the advisor's strategy (maximising their own expected
        final score), so the final totals are independent; each player's final total has
        the distribution `positions/value` gives for their sheet (the player to move with
        their current dice, when given); equal top totals share the win (`share` counts a
        k-way tie as 1/k, and the shares sum to 1); a game won at once is counted at its
        box score. Every distribution is exact for the exact variants (`exact`); the
        approximate methods' are sampled, within one time budget of 0.12 s for all
        players (each says how many games it was sampled from); players on the same sheet
        share one distribution.

        With `dice` (and `throw`) of the player to move, `move` gives the move that
        maximises that player's chance of winning against the others' distributions (a
        backward induction over their own states and totals; exact variants, up to four
        open boxes; before that each move's exact distribution of the final total against
        the others', and `method` says so) beside the move that maximises the expected
        score, each with its expected final score and its share of the win.
        """
        return _win_one(variant, item)
