"""/v1/variants/{variant}/moves: the optimal move advisor over HTTP (`moves/suggest`), and
computer players at a chosen strength (`moves/bot`)."""

from __future__ import annotations

import secrets
from typing import Any

from flask import current_app
from flask.views import MethodView

from ...advisor.advice import bots
from ...advisor.advice.moves import Suggestion
from ...advisor.objectives import REGISTRY, Objective, objective_named
from ...domain.errors import ALL_CODES, InvalidInput
from ...domain.moves import Keep
from ...domain.rules import RuleSet
from ...domain.scoring import Sheet
from ..body import rules_for, sheet_for
from ..busy import BUSY_DOC
from ..extensions import advisor_of, analyst_of
from ..openapi import ERRORS_DOC, new_blueprint
from ..schemas.moves import (
    MAX_SEED,
    BotMoveRequestSchema,
    BotMoveSchema,
    MoveSuggestionSchema,
    MoveSuggestRequestSchema,
)

blp = new_blueprint("moves", "Optimal move advice (expected-score maximising solitaire play)",
                    operation_class="advice")


def _opponents(rs: RuleSet, data: list[Any]) -> list[Sheet]:
    """The opponents' scorecards of a position played to win, each checked as a sheet a game
    reaches, none of a game already won at once."""
    sheets = []
    for i, card in enumerate(data):
        sheet = sheet_for(rs, card, key=None, base=f"/opponents/{i}")
        if sheet.won:
            raise InvalidInput.one(f"/opponents/{i}/won", "this player won the game at once: "
                                                          "it is over", "game_won")
        sheets.append(sheet)
    return sheets


#: How a request field an objective needs is read (`Objective.request`'s kind): as sent
#: unless named here.
READERS = {"scorecards": _opponents}


def _objective(rs: RuleSet, item: dict[str, Any]) -> tuple[Objective, Any]:
    """The request's objective (`advice.objective.REGISTRY`) and the request field it needs,
    read; a field an objective needs is refused (409, the objective's `stray_code`) with
    another objective, and required (its `missing_code`) with its own."""
    chosen = objective_named(item.get("objective", "score"))
    for objective in REGISTRY.values():
        field = objective.request
        if field is None:
            continue
        pointer = f"/{field.name}"
        if objective is chosen and item.get(field.name) in (None, []):
            code = objective.missing_code
            raise InvalidInput.one(pointer, ALL_CODES[code], code)
        if objective is not chosen and field.name in item:
            code = objective.stray_code
            raise InvalidInput.one(pointer, ALL_CODES[code], code)
    field = chosen.request
    if field is None:
        return chosen, None
    given = item[field.name]
    return chosen, READERS[field.kind](rs, given) if field.kind in READERS else given


def _ranked(rs: RuleSet, sheet: Sheet, item: dict[str, Any]) -> Suggestion:
    """The position's moves ranked by the request's objective (`Objective.rank`): the
    expected final score, the chance of finishing first against the opponents (`win`), of
    reaching a total (`target`)."""
    objective, given = _objective(rs, item)
    # Built-in tables are loaded at start-up; a house-rules table is built once per pod by
    # the build process while this waits up to a second, else 202 + Retry-After (busy.py),
    # queued for the request's caller (`service.caller`, as every other build).
    ranked = advisor_of(current_app).suggest(rs, item["dice"], item["throw"], sheet,
                                             item.get("em_baixo", False))
    return objective.rank(analyst_of(current_app), rs, sheet, item["dice"], item["throw"],
                          item.get("em_baixo", False), ranked, given)


def _advise(variant: str, item: dict[str, Any]) -> Suggestion:
    """The moves/suggest answer to one loaded position."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    throw = item["throw"]
    result = _ranked(rs, sheet, item)
    if "limit" in item:  # the best few: coached, dumped and sent, the rest not
        result.moves = result.moves[:item["limit"]]
    if item.get("coach"):
        analyst = analyst_of(current_app)
        keeps = [a for a in result.moves if isinstance(a.move, Keep)]
        outlooks = analyst.coach(analyst.strategy(rs), sheet, throw,
                                 [(a.move.read, False) for a in keeps])
        for move, outlook in zip(keeps, outlooks, strict=True):
            move.outlook = outlook
    return result


def _bot(variant: str, item: dict[str, Any]) -> bots.BotMove:
    """The moves/bot answer to one loaded position."""
    rs = rules_for(variant, item)
    sheet = sheet_for(rs, item)
    seed = item["seed"] if "seed" in item else secrets.randbelow(MAX_SEED + 1)
    ranked = _ranked(rs, sheet, item)
    move = advisor_of(current_app).bot(rs, ranked, item["dice"], item["throw"], sheet,
                                       item.get("em_baixo", False), item["level"], seed)
    return bots.BotMove.of(ranked, item["level"], seed, move)


@blp.route("/<variant:variant>/moves/suggest")
class MoveSuggestion(MethodView):
    """Move advice."""

    @blp.arguments(MoveSuggestRequestSchema,
                   description="The dice, the throw they stand on and the scorecard")
    @blp.response(200, MoveSuggestionSchema, description=(
        "The best keep or box, and every move with its expected final "
        "score and regret"))
    @blp.doc(operationId="suggestMove", responses={**ERRORS_DOC, **BUSY_DOC})
    def post(self, item: dict[str, Any], variant: str) -> Suggestion:
        """Suggest the move that maximises the expected final score.

        `throw` is the throw the dice stand on (1 = first; required). With throws left the
        moves are every keep (the dice to keep, fewer than all) and every legal box;
        on the last throw only boxes. Values are expected final totals under optimal play,
        points already on the sheet included. Exact for every 5-dice one-column variant;
        column sheets and Maxi Yatzy are approximations (`exact: false`, see `method`).
        The table of new rules (house rules, non-default options) is built once per server,
        in the background, the first time it is asked for: the request waits up to a second,
        then gets 202 with Retry-After (429 when too many tables are waiting); asked again
        later, it answers at once.

        With `coach: true` every keep also says where the turn is likely to end under the
        advisor's play of the rest of it: the probability that the turn ends with points in
        each box (e.g. P(YAHTZEE this turn | keep 3-3-3)) and the expected points of the turn.
        """
        return _advise(variant, item)


@blp.route("/<variant:variant>/moves/bot")
class BotMove(MethodView):
    """A computer player's move."""

    @blp.arguments(BotMoveRequestSchema,
                   description="The dice, the throw, the scorecard and the bot's level")
    @blp.response(200, BotMoveSchema, description=(
        "The bot's move (a keep or a box) with its expected final score and regret"))
    @blp.doc(operationId="botMove", responses={**ERRORS_DOC, **BUSY_DOC})
    def post(self, item: dict[str, Any], variant: str) -> bots.BotMove:
        """The move a computer player of a chosen strength makes.

        The position is read as `moves/suggest` reads it. The move is drawn from the
        advisor's ranking of every move: `expert` plays the best one; `strong`, `casual`
        and `beginner` prefer better moves, overvalue points they can write now, misjudge
        close calls, and never make a move no person would: none gives up more than 4, 6
        or 10 points of expected final score in one move (so none scratches the YAHTZEE box
        on the first turn), rethrows a hand that fills an open box with every die (a large
        straight, a YAHTZEE, a Generala) or writes 0 while throws remain. Their mean scores
        are in the README. The same request with the same `seed` gives the same move; each
        position draws its own number from the seed, so one seed may serve a whole game.
        Without a seed the service draws one and answers it.
        """
        return _bot(variant, item)
