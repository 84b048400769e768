"""The objectives a position's moves may be ranked by, one module each, each registering
itself (`advice.objective.register`) when imported: `score` (the expected final score, the
default), `win` (the chance of finishing first against the opponents' sheets), `target` (the
chance of reaching a final total). `utility` values the moves under any utility of the final
total (exactly late in a game); `service/advisor/__init__.py` imports this package, so the
registry is full whenever the advisor is imported.

A new objective: a module here with an `Objective` subclass registered, imported below."""

from ..advice.objective import REGISTRY, Objective, objective_named, objective_names
from . import score, target, win  # noqa: F401  (registered on import)

__all__ = ["REGISTRY", "Objective", "objective_named", "objective_names"]
