"""The advisor's methods, one module each: a new method is a new `Method` here, tried in
order by `method_for` (the first that applies values the RuleSet)."""

from __future__ import annotations

from ....domain.rules import RuleSet
from ..strategy import Method
from .columns import Columns
from .exact import Exact
from .sections import Sections

#: Tried in order; `Exact` takes whatever the approximations leave.
METHODS: tuple[Method, ...] = (Columns(), Sections(), Exact())


def method_for(rs: RuleSet) -> Method:
    """The method that values this RuleSet's states."""
    return next(m for m in METHODS if m.applies(rs))


__all__ = ["METHODS", "Method", "method_for"]
