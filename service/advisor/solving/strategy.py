"""A strategy: how the advisor values the states of one RuleSet, as solved parts, and
what a method is.

A strategy is a list of *parts*, each an exactly solved sheet (`solver.Solution`) that reads
one column of the player's sheet. Which parts a RuleSet is solved as, and how exact the result
is, is decided by its `Method` (one module each in `methods/`);
`tables.strategies.build_strategy` solves them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from ...domain.rules import RuleSet
from .solver import Solution


@dataclass(frozen=True)
class PartPlan:
    """One sub-sheet to solve: its name (in file names), the sheet column it reads, its rules
    and the order rule its boxes are filled in (None: the rules' own)."""

    name: str
    column: int
    rules: RuleSet
    order: str | None = None


@dataclass
class Part:
    """One exactly solved sub-sheet of a strategy."""

    name: str
    column: int  # index of the sheet column this part reads
    solution: Solution
    rs: RuleSet  # the sub-sheet's rules (the whole RuleSet for an exact strategy)


@dataclass
class Strategy:
    """How the advisor values states of one RuleSet: its solved parts and its method."""

    rs: RuleSet
    parts: list[Part]
    method: Method
    saved_throw_value: float = 0.0  # value of one saved throw (saved-throw variants)
    box_part: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)
    # (column, box id) -> (part index, box index within the part)

    def __post_init__(self) -> None:
        for pi, p in enumerate(self.parts):
            for bi, bid in enumerate(p.solution.model.box_ids):
                self.box_part[(p.column, bid)] = (pi, bi)

    @property
    def exact(self) -> bool:
        """Whether the values are the exact optimum (else a documented approximation)."""
        return self.method.exact

    @property
    def description(self) -> str:
        """How the values are computed, in a sentence (the API's `method`)."""
        return self.method.description


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
