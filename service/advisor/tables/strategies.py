"""Building a strategy: the RuleSet's method says which parts to solve; each part is loaded
from the table store when it is there, else solved (and saved when a store is given)."""

from __future__ import annotations

from ...domain.rules import RuleSet
from ..kernels.moments import Moments
from ..solving import solver
from ..solving.methods import method_for
from ..solving.solver import solve_moments
from ..solving.strategy import Part, Strategy
from .store import TableStore


def part_names(rs: RuleSet) -> list[str]:
    """The names of the parts a RuleSet is solved as (its files in a store)."""
    return [plan.name for plan in method_for(rs).plan(rs)]


def load_strategy(rs: RuleSet, store: TableStore) -> Strategy | None:
    """The RuleSet's strategy from tables on disk (memory-mapped), or None when a part is
    missing or unreadable: never solves anything."""
    method = method_for(rs)
    parts = []
    for plan in method.plan(rs):
        values = store.load(rs, plan.name)
        if values is None:
            return None
        try:
            sol = solver.attach(plan.rules, values, plan.order)
        except ValueError:
            return None
        parts.append(Part(plan.name, plan.column, sol, plan.rules))
    strategy = Strategy(rs, parts, method)
    strategy.saved_throw_value = method.saved_throw_value(strategy)
    return strategy


def find_strategy(rs: RuleSet, stores: list[TableStore] | tuple[TableStore, ...]
                  ) -> Strategy | None:
    """The RuleSet's strategy from the first store holding all its tables, or None."""
    for store in stores:
        st = load_strategy(rs, store)
        if st is not None:
            return st
    return None


def build_analysis(rs: RuleSet, store: TableStore, threads: int = 0,
                   sources: list[TableStore] | tuple[TableStore, ...] = ()) -> Strategy:
    """Build and save into `store` the moment tables (float64 mean and second moment,
    `kernels/moments.py`) of every part of a RuleSet's strategy. The value tables come from the
    first of `sources` (then `store`) holding them, else are built into `store` too. What
    the build process runs for an analysis job."""
    st = find_strategy(rs, [*sources, store]) or build_strategy(rs, store, threads)
    for part in st.parts:
        save_moments(store, rs, part.name, solve_moments(part.solution, threads))
    return st


def build_strategy(rs: RuleSet, store: TableStore | None = None, threads: int = 0
                   ) -> Strategy:
    """Solve (or load from `store`) every part of the RuleSet's strategy.

    `threads` caps the solver's threads (0: every CPU). With a store, a part found there is
    memory-mapped instead of solved, and a solved part is written there.
    """
    method = method_for(rs)
    parts = []
    for plan in method.plan(rs):
        sol = None
        if store is not None:
            values = store.load(rs, plan.name)
            if values is not None:
                try:
                    sol = solver.attach(plan.rules, values, plan.order)
                except ValueError:
                    sol = None
        if sol is None:
            sol = solver.solve(plan.rules, plan.order, threads)
            if store is not None:
                sol = solver.attach(plan.rules, store.save(rs, plan.name, sol.values),
                                    plan.order)
        parts.append(Part(plan.name, plan.column, sol, plan.rules))
    strategy = Strategy(rs, parts, method)
    strategy.saved_throw_value = method.saved_throw_value(strategy)
    return strategy


def save_moments(store: object, rs: object, part: str, mo: Moments) -> Moments:
    """Write a part's moment tables (``<part>-m1``, ``<part>-m2``) into a `TableStore`;
    gives them back memory-mapped from the files. Raises OSError where the store is
    read-only."""
    return Moments(store.save(rs, f"{part}-m1", mo.m1), store.save(rs, f"{part}-m2", mo.m2))
