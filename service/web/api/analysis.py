"""/v1/variants/{variant}/games/analyze: how well a game was played."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask.views import MethodView

from ...advisor.analysis.analyst import win_probability
from ...advisor.analysis.games import PlayerGame, Throw, Turn, analyze
from ...domain.errors import InvalidInput
from ...domain.rules import get_variant
from ..analysis_schemas import GameAnalyzeRequestSchema, WinProbabilityRequestSchema
from ..body import json_response, load_items, rules_for, sheet_for
from ..busy import BUSY_DOC
from ..extensions import analyst_of
from ..openapi import ERRORS_DOC, body_doc, new_blueprint, response_doc

blp = new_blueprint("analysis", "Whole games: analysis of the decisions and win probabilities")

_analyze_schema = GameAnalyzeRequestSchema()
_win_schema = WinProbabilityRequestSchema()


def _players(rs: Any, item: dict[str, Any]) -> list[PlayerGame]:
    out = []
    for i, p in enumerate(item["players"]):
        sheet = sheet_for(rs, p, base=f"/players/{i}")
        turns = [Turn([Throw(th["dice"], th.get("kept")) for th in t["throws"]],
                      t.get("box"), t.get("column")) for t in p["turns"]]
        out.append(PlayerGame(sheet, turns, p.get("name")))
    return out


@blp.route("/<variant:variant>/games/analyze")
class GameAnalysis(MethodView):
    """Game analysis."""

    @blp.doc(operationId="analyzeGame",
             requestBody=body_doc("GameAnalyzeRequest",
                                  "Players, each a list of turns: throws (dice, kept) and box"),
             responses={"200": response_doc("GameAnalysis",
                                            "Every decision judged; per player regret, "
                                            "classes, skill and luck"),
                        **ERRORS_DOC, **BUSY_DOC})
    def post(self, variant: str) -> Response:
        """Analyse a game: every decision against the advisor's optimal play.

        A sibling of `games/validate` with its own request (the same shape: players → turns
        → throws `{dice, kept}` + `box`, `column`): it is the analysis, so it needs no
        `analysis: true`. For every keep (when `kept` is given) and every placement: the
        dice, the choice and the best choice, the expected final score of each with its
        standard deviation, the regret and a class: `best` (the unique best), `tie` (as
        good as the best, within 1e-4), `inaccuracy` (regret up to 1 point), `mistake` (up
        to 5), `blunder` (more). Per player: total and mean regret per decision, the
        count per class, and the difference between the final total and the expectation at
        the start split into skill (minus the regrets) and luck (the throws), which add up.
        Without `kept` a turn's keeps are not judged (their effect counts as luck).
        Approximate methods (column sheets, Maxi Yatzy) say `exact: false`. Every turn is
        checked against the rules before a table is asked for: a game that breaks a rule is
        refused at once, and a 202 (table being built) comes only for one that can be
        analysed.
        """
        get_variant(variant)
        items, _ = load_items(_analyze_schema, batch=False, variant=variant)
        item = items[0]
        rs = rules_for(variant, item)
        players = _players(rs, item)
        _check_round_order(item)
        result = analyze(analyst_of(current_app), rs, players)
        return json_response({"variant": variant, "rules": rs.describe(), **result})


def _check_round_order(item: dict[str, Any]) -> None:
    """Players play in the order listed, one turn per round: no player is ahead of an
    earlier one, and none is more than one turn behind the first (rule book decision 11)."""
    counts = [len(p["turns"]) for p in item["players"]]
    for i in range(1, len(counts)):
        if counts[i] > counts[i - 1] or counts[i] < counts[0] - 1:
            raise InvalidInput.one(f"/players/{i}/turns",
                                   f"{counts[i]} turns after a player with {counts[i - 1]}: "
                                   "players play in the order listed, one turn per round")


@blp.route("/<variant:variant>/games/win-probability")
class WinProbability(MethodView):
    """Win probabilities."""

    @blp.doc(operationId="winProbability",
             requestBody=body_doc("WinProbabilityRequest",
                                  "Every player's scorecard; the dice of the player to move"),
             responses={"200": response_doc("WinProbability",
                                            "Each player's chance of finishing first"),
                        **ERRORS_DOC, **BUSY_DOC})
    def post(self, variant: str) -> Response:
        """The probability that each player finishes first (a live win bar).

        Assumed: every player plays the advisor's strategy (maximising their own expected
        final score), so the final totals are independent; each player's final total has
        the distribution `positions/value` gives for their sheet (the player to move with
        their current dice, when given); equal top totals share the win (`share` counts a
        k-way tie as 1/k, and the shares sum to 1); a game won at once is counted at its
        box score. Exact when every distribution is (`exact`), else some are sampled:
        players on the same sheet share one distribution, the exact ones share one budget
        of 40,000 reachable states (a position beyond what is left is sampled), and the
        sampled ones one time budget of 0.12 s (each says how many games it was sampled
        from): the answer comes within about 200 ms at any point of a game.

        With `dice` (and `throw`) of the player to move, `move` gives the move that
        maximises that player's chance of winning against the others' distributions (a
        backward induction over their own states and totals; exact variants, up to four
        open boxes) beside the move that maximises the expected score, each with its
        expected final score and its share of the win.
        """
        get_variant(variant)
        items, _ = load_items(_win_schema, batch=False, variant=variant)
        item = items[0]
        rs = rules_for(variant, item)
        to_move = item.get("to_move", 0)
        players = item["players"]
        if to_move >= len(players):
            raise InvalidInput.one("/to_move", f"there are {len(players)} players")
        sheets = [sheet_for(rs, p, base=f"/players/{i}") for i, p in enumerate(players)]
        result = win_probability(analyst_of(current_app), rs, sheets, to_move,
                                 item.get("dice"), item.get("throw"),
                                 item.get("em_baixo", False))
        for p, out in zip(players, result["players"], strict=True):
            out["name"] = p.get("name")
        return json_response({"variant": variant, "rules": rs.describe(), "to_move": to_move,
                              **result})
