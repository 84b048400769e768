"""The exact method: the whole sheet as one game, solved by backward induction."""

from __future__ import annotations

from ....domain.rules import RuleSet
from ..strategy import Method, PartPlan


class Exact(Method):
    """Every 5-dice, one-column sheet without saved throws: one part, the whole sheet."""

    name = "exact"
    exact = True
    description = "exact backward induction over every reachable state"

    def applies(self, rs: RuleSet) -> bool:
        """Any RuleSet no approximation claims (the methods are tried in order)."""
        return True

    def plan(self, rs: RuleSet) -> list[PartPlan]:
        """One part: the whole sheet."""
        return [PartPlan("all", 0, rs)]
