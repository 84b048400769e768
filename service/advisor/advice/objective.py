"""What a position's moves are ranked by: the registry of objectives.

An objective is one module of `service/advisor/objectives/` (`score`, `win`, `target`), which
registers an `Objective` here with its name, how it ranks a position's moves (`rank`), the
figure it gives each move (`measure`, an entry of `RankedMove.measures`), the fields it adds to
the answer (`answer`, kept in `Suggestion.extra`) and the request field it needs
(`request`, with the problem codes of a request without it or with it but another
objective). The web layer builds the request's `objective` enum, its fields and their
checks from the registry, and the bots draw their moves by `Objective.regret`: a new
objective is one module and one `register` call.

The registry lives in the advice layer, below the objectives that need the analysis (the
`win` objective ranks with the `Analyst`), so that the bots (`bots.py`) can look an
objective up; `service/advisor/__init__.py` imports every objective module, so the registry
is full whenever any part of the advisor is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .moves import RankedMove, Suggestion


@dataclass(frozen=True)
class Field:
    """A field an objective reads in the request or adds to the answer: its name, its JSON
    kind ("boolean", "integer", "number", "string", "scorecards": a list of scorecards) and
    what it means (the spec's description)."""

    name: str
    kind: str
    description: str
    minimum: int | None = None  # an integer's range
    maximum: int | None = None


class Objective:
    """An objective: its name, what it adds to the request and the answer, how it ranks.

    Subclasses set the class attributes and override `rank`; `regret` follows from
    `measure`."""

    #: the request's `objective` value
    name: str = ""
    #: what the moves are ranked by (the `objective` field's description lists them)
    description: str = ""
    #: each move's figure under the objective (`RankedMove.measures[measure.name]`); None: the
    #: expected final score itself
    measure: Field | None = None
    #: what the objective adds to the answer (`Suggestion.extra`)
    answer: tuple[Field, ...] = ()
    #: the request field the objective needs (None: none), refused with another objective
    request: Field | None = None
    #: the problem codes (`domain.errors.ALL_CODES`) of a request with this objective
    #: without `request`, and of one with `request` but another objective
    missing_code: str = ""
    stray_code: str = ""

    def rank(self, analyst: Any, rs: Any, sheet: Any, dice: list[int], throw: int,
             em_baixo: bool, sug: Suggestion, given: Any) -> Suggestion:
        """The moves of `sug` (the advisor's ranking by expected score, `moves.suggest`)
        ranked by this objective; `given`: the request's `request` field, read (None
        without one)."""
        return sug

    def regret(self, sug: Suggestion, a: RankedMove) -> float:
        """What move `a` gives up against the objective's best: the expected final score,
        or one point of regret a percentage point of the objective's probability (how the
        bots weigh the moves, `bots.candidates`)."""
        if self.measure is None:
            return a.regret
        key = self.measure.name
        return 100.0 * (sug.best.measures.get(key, 0.0) - a.measures.get(key, 0.0))


#: name -> the objective, in the order registered (the `score` objective first)
REGISTRY: dict[str, Objective] = {}


def register(objective: Objective) -> Objective:
    """Add an objective to the registry (its module calls it once, on import)."""
    if objective.name in REGISTRY:
        raise ValueError(f"objective {objective.name!r} registered twice")
    REGISTRY[objective.name] = objective
    return objective


def objective_named(name: str) -> Objective:
    """The registered objective of that name (KeyError: none is)."""
    return REGISTRY[name]


def objective_names() -> tuple[str, ...]:
    """The registered objectives' names, in the order registered."""
    return tuple(REGISTRY)
