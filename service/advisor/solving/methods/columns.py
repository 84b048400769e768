"""Column sheets (option `columns`): each column solved exactly as its own game."""

from __future__ import annotations

from ....domain.rules import RuleSet
from ..strategy import Method, PartPlan


class Columns(Method):
    """Four columns of the same boxes, each with its order rule: a state is worth the sum of
    its columns, each an exact 13-turn game (the coupling between columns is ignored)."""

    name = "columns"
    exact = False
    description = ("columns solved independently: each column is an exact 13-turn game "
                   "with its order rule; a state is worth the sum of its columns")

    def applies(self, rs: RuleSet) -> bool:
        """Sheets played in columns."""
        return bool(rs.variant.columns)

    def plan(self, rs: RuleSet) -> list[PartPlan]:
        """One part per column, with that column's order rule."""
        return [PartPlan(f"col{i + 1}-{order}", i, rs, order)
                for i, order in enumerate(rs.variant.columns)]
