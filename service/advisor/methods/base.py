"""What an advisor method is: which RuleSets it takes, the parts it solves them as, and the
value it gives a saved throw."""

from __future__ import annotations

from abc import ABC, abstractmethod

from ...domain.rules import RuleSet
from ..strategy import PartPlan, Strategy


class Method(ABC):
    """A way of valuing the states of a RuleSet from exactly solved parts."""

    #: short machine name (logs, benchmarks)
    name: str
    #: whether the values are the exact optimum
    exact: bool
    #: how the values are computed, as the API's `method` says it
    description: str

    @abstractmethod
    def applies(self, rs: RuleSet) -> bool:
        """Whether this method values this RuleSet."""

    @abstractmethod
    def plan(self, rs: RuleSet) -> list[PartPlan]:
        """The sub-sheets the RuleSet is solved as."""

    def saved_throw_value(self, strategy: Strategy) -> float:
        """Value of one throw saved for a later turn (0 where throws are not saved)."""
        return 0.0
