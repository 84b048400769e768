"""The `target` objective: the moves ranked by the chance that the final total reaches a
target T given in the request (Glenn's and Verhoeff's "probability of beating a score"),
each move's `target_probability`, the best by it, ties by expected final score.

It is a utility of the final total, 1[final >= T], maximised (`utility.move_utilities`):
exact by backward induction over the player's own states and totals late in a game (at
most `winprob.MAX_WIN_OPEN` open boxes, one-column variants solved exactly), the player
then playing to reach T. Before that, each move's exact P(final >= T) with the advisor's
expected-score play after it (the exact distributions from every state the turn leads to,
`Analyst.successor_futures`): exact for that play, not for the best play to reach T, of
which it is a lower bound, so `target_exact` is false. Column sheets and Maxi Yatzy take
each move's final total as normal (`target_exact: false`, `target_method` says so). A target
at or below the points on the sheet is reached whatever happens (1 for every move); one
above the highest total the position can reach is never reached (0). A game won at once
(Generala servida) counts as the placement it is, as the expected score counts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...domain.rules import RuleSet
from ...domain.scoring import Sheet
from ..advice.moves import Suggestion
from ..advice.objective import Field, Objective, register
from ..analysis.analyst import Analyst
from ..kernels.winprob import MAX_WIN_OPEN
from .utility import DISTRIBUTIONS, EXACT, move_utilities, ranked_by

#: The highest target a request may set (above the highest total of every built-in sheet).
MAX_TARGET = 10_000

#: How `target_probabilities` values the moves (`target_method`).
TARGET_EXACT = ("exact: a backward induction over the player's own states and totals, 1 for "
                "a final total reaching the target and 0 below it in place of points, the "
                "player playing on to reach it")
TARGET_DISTRIBUTIONS = ("approximate: each move's exact probability of reaching the target "
                        "with the advisor's expected-score play after it (the exact "
                        "distributions from every state the turn leads to), a lower bound "
                        "of the best play's; exact from {n} open boxes on (one-column "
                        "variants solved exactly)")
TARGET_REACHED = "exact: the points on the sheet reach the target already"
TARGET_NORMAL = ("approximate: each move's final total taken as normal, with the mean and "
                 "variance of the method's play after it (moment tables of its parts) "
                 "(column sheets, Maxi Yatzy)")


def target_utility(target: int, total: int, top: int) -> np.ndarray:
    """1[final >= target] over the final totals total, total + 1, ... (the last entry
    counting every higher total); `top`: above the highest total the position reaches."""
    if target <= total:
        return np.ones(1)  # reached already
    if target >= top:
        return np.zeros(1)  # out of reach
    util = np.zeros(target - total + 1)
    util[-1] = 1.0
    return util


@dataclass(frozen=True, slots=True)
class TargetFigures:
    """What objective `target` adds to a position's answer (`Target.answer`, a
    `Suggestion`'s `extra`): the target as sent, whether the probabilities are exact, and
    how they were computed."""

    target: int
    target_exact: bool
    target_method: str


def target_probabilities(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int],
                         throw: int | None, em_baixo: bool, sug: Suggestion, target: int,
                         approximate: bool = False) -> tuple[list[float], bool, str]:
    """Each of `sug.moves`' probability that the final total reaches `target`,
    whether they are exact, and how they were made (`TARGET_EXACT`, ...). `approximate`:
    with the expected-score play after each move wherever (to measure it)."""
    if target <= sug.current_total:
        return [1.0] * len(sug.moves), True, TARGET_REACHED
    probs, how = move_utilities(analyst, rs, sheet, dice, throw, sug, em_baixo,
                                lambda total, top: target_utility(target, total, top),
                                None, approximate)
    method = {EXACT: TARGET_EXACT, DISTRIBUTIONS: TARGET_DISTRIBUTIONS.format(n=MAX_WIN_OPEN)
              }.get(how, TARGET_NORMAL)
    return [min(1.0, max(0.0, p)) for p in probs], how == EXACT, method


def rank_to_target(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int], throw: int,
                   em_baixo: bool, target: int, sug: Suggestion) -> Suggestion:
    """The suggestion's moves ranked by the probability of reaching `target`: each move's
    `target_probability`, the best first, ties by expected final score. `regret` stays the
    expected final score given up against the expected-score best."""
    probs, exact, method = target_probabilities(analyst, rs, sheet, dice, throw, em_baixo,
                                                sug, target)
    return ranked_by(sug, TARGET.name, "target_probability", probs,
                     TargetFigures(target, exact, method))


class Target(Objective):
    """Play to reach a final total."""

    name = "target"
    description = ("`target`, the chance that the final total reaches `target` (the "
                   "probability of beating a score): each move then has its "
                   "`target_probability`, exact late in a game and approximated before "
                   "(`target_method` says which)")
    measure = Field("target_probability", "number",
                    "With objective target: the probability that the final total reaches "
                    "the target after this move, playing on to reach it")
    answer = (Field("target", "integer", "With objective target: the target, as sent"),
              Field("target_exact", "boolean",
                    "With objective target: the target probabilities are exact"),
              Field("target_method", "string",
                    "With objective target: how the target probabilities are computed"))
    request = Field("target", "integer",
                    "With objective `target` (needed then, and read only then: else a 409): "
                    "the final total to reach (points on the sheet and bonuses included)",
                    0, MAX_TARGET)
    missing_code = "target_required"
    stray_code = "target_without_objective"

    def rank(self, analyst: Any, rs: Any, sheet: Any, dice: list[int], throw: int,
             em_baixo: bool, sug: Suggestion, given: Any) -> Suggestion:
        return rank_to_target(analyst, rs, sheet, dice, throw, em_baixo, int(given), sug)


TARGET = register(Target())


def _compile(analyst: Analyst, rs: RuleSet, late: Sheet, middle: Sheet,
             dice: list[int]) -> None:
    """Run the target's paths once (`Analyst.compile_kernels`): the kernels are the win
    objective's, with a utility of another width."""
    for sheet in (late, middle):
        sug = analyst.advisor.suggest(rs, dice, 2, sheet)
        rank_to_target(analyst, rs, sheet, dice, 2, False, sug.current_total + 20, sug)


Analyst.compilers.append(_compile)
