"""The advisor's tables as files: a strategy's value tables (one per part: the RuleSet's
method says which parts), a part's moment tables, what each is named in a store and how it
is made from the arrays there; and the builds the build process runs: a part is loaded from
the store when it is there, else solved (and saved when a store is given)."""

from __future__ import annotations

import numpy as np

from ...domain.rules import RuleSet
from ...domain.scoring import empty_sheet
from ..kernels.distribution import forward
from ..kernels.moments import Moments
from ..solving import solver
from ..solving.methods import method_for
from ..solving.positions import part_state
from ..solving.solver import solve_moments
from ..solving.strategy import Part, Strategy
from .store import StoreChain, TableStore


def part_names(rs: RuleSet) -> list[str]:
    """The names of the parts a RuleSet is solved as (its value tables' files in a store)."""
    return [plan.name for plan in method_for(rs).plan(rs)]


def strategy_of(rs: RuleSet, values: list[np.ndarray]) -> Strategy | None:
    """The RuleSet's strategy from its parts' value tables (in `part_names` order), or None
    when one does not fit its part."""
    method = method_for(rs)
    parts = []
    for plan, table in zip(method.plan(rs), values, strict=True):
        try:
            sol = solver.attach(plan.rules, table, plan.order)
        except ValueError:
            return None
        parts.append(Part(plan.name, plan.column, sol, plan.rules))
    return _strategy(rs, parts)


def strategy_arrays(st: Strategy) -> dict[str, np.ndarray]:
    """A strategy's value tables by file name (what `strategy_of` reads back)."""
    return {p.name: p.solution.values for p in st.parts}


def moment_names(part: str) -> tuple[str, str]:
    """The file names of a part's moment tables: mean and second moment."""
    return f"{part}-m1", f"{part}-m2"


def start_name(part: str) -> str:
    """The file name of a one-part strategy's final-score distribution from the start of a
    game (`Distribution.to_array`)."""
    return f"{part}-start"


def early_names(part: str) -> tuple[str, str, str, str]:
    """The file names of a one-part strategy's distributions from the first turns' starts
    (`distribution.Futures.arrays`: states, lowest points, offsets, probabilities)."""
    return tuple(f"{part}-early-{x}" for x in ("states", "lo", "off", "data"))


#: The step the early distributions' running sums are kept to in a packed table directory
#: (the image's, `packing`): each probability, and each cumulative probability, within 5.3e-10.
PROBABILITY_STEP = 2.0**-31


def pack_step(table: str) -> float:
    """The step a table file (its name without suffix) is packed to: `PROBABILITY_STEP` for
    the early distributions' probabilities (`early_names`' "data"), 0 (bit for bit) for
    every other table."""
    return PROBABILITY_STEP if "-early-data-" in f"{table}-" else 0.0


def start_state(st: Strategy) -> tuple[int, int, int]:
    """The state (mask, upper code, flags) of a one-part strategy's empty sheet."""
    mask, code, flags, _ = part_state(st.parts[0], empty_sheet(st.rs))
    return int(mask), int(code), int(flags)


def moments_of(part: Part, arrays: list[np.ndarray]) -> Moments | None:
    """A part's moment tables from their arrays (`moment_names` order), or None when they
    do not fit the part."""
    shape = part.solution.model.table_shape
    m1, m2 = arrays
    return Moments(m1, m2) if m1.shape == shape == m2.shape else None


def moment_arrays(part: Part, mo: Moments) -> dict[str, np.ndarray]:
    """A part's moment tables by file name (what `moments_of` reads back)."""
    return dict(zip(moment_names(part.name), (mo.m1, mo.m2), strict=True))


def build_strategy(rs: RuleSet, store: TableStore | None = None, threads: int = 0,
                   moments: dict[str, Moments] | None = None) -> Strategy:
    """Solve (or load from `store`) every part of the RuleSet's strategy.

    `threads` caps the solver's threads (0: every CPU). With a store, a part found there is
    memory-mapped instead of solved, and a solved part is written there. With `moments` (a
    dict), a part solved here is solved with its moment tables in the same pass
    (`solver.solve_with_moments`), which go into `moments` by part name.
    """
    parts = []
    for plan in method_for(rs).plan(rs):
        sol = None
        if store is not None:
            values = store.load(rs, plan.name)
            if values is not None:
                try:
                    sol = solver.attach(plan.rules, values, plan.order)
                except ValueError:
                    sol = None
        if sol is None:
            if moments is None:
                sol = solver.solve(plan.rules, plan.order, threads)
            else:
                sol, moments[plan.name] = solver.solve_with_moments(plan.rules, plan.order,
                                                                    threads)
            if store is not None:
                sol = solver.attach(plan.rules, store.save(rs, plan.name, sol.values),
                                    plan.order)
        parts.append(Part(plan.name, plan.column, sol, plan.rules))
    return _strategy(rs, parts)


def _value_tables(rs: RuleSet, store: TableStore, threads: int,
                  sources: StoreChain | None,
                  moments: dict[str, Moments] | None = None) -> Strategy:
    """The RuleSet's strategy from `sources` when it holds the value tables, else built
    into `store` (with `moments`, each part's moment tables in the same pass:
    `build_strategy`)."""
    found = sources.load(rs, part_names(rs), lambda a: strategy_of(rs, a)) if sources else None
    return found[0] if found is not None else build_strategy(rs, store, threads, moments)


def build_start(rs: RuleSet, store: TableStore, threads: int = 0,
                sources: StoreChain | None = None) -> Strategy:
    """Build and save into `store`, for a one-part (exact) strategy, the exact distribution
    of the final total from the start of a game (`forward`, `start_name`): all that
    positions/value waits for at the start of a game. The value tables come from `sources`
    when it holds them, else are built into `store` too. What the build process runs for a
    `start` job."""
    st = _value_tables(rs, store, threads, sources)
    if len(st.parts) == 1:
        sol = st.parts[0].solution
        dist = forward(sol.kd, sol.values, start_state(st), 0, None, threads)
        store.save(rs, start_name(st.parts[0].name), dist.to_array())
    return st


def build_moments(rs: RuleSet, store: TableStore, threads: int = 0,
                  sources: StoreChain | None = None) -> Strategy:
    """Build and save into `store` the moment tables (float64 mean and second moment,
    `kernels/moments.py`) of every part of a RuleSet's strategy: what game analysis and
    position values after the start wait for. The value tables as `build_start`, but a
    part whose values are built here gets its moments in the same pass (the policy worked
    out once: Yatzy with a new upper bonus 1.4 s instead of 0.84 + 1.4 on two threads).
    What the build process runs for a `moments` job (game analysis asks for it first, so
    that it waits for one pass, not two)."""
    made: dict[str, Moments] = {}
    st = _value_tables(rs, store, threads, sources, made)
    for part in st.parts:
        mo = made.get(part.name) or solve_moments(part.solution, threads)
        for name, table in moment_arrays(part, mo).items():
            store.save(rs, name, table)
    return st


def warm_analysis(st: Strategy) -> None:
    """Run the analysis builds' kernels (`build_start`, `build_moments`) once on a one-part
    strategy,
    saving nothing: numba compiles them, or loads them from its cache, now."""
    sol = st.parts[0].solution
    forward(sol.kd, sol.values, start_state(st), 0, None, 1)
    solve_moments(sol, 1)


def _strategy(rs: RuleSet, parts: list[Part]) -> Strategy:
    method = method_for(rs)
    strategy = Strategy(rs, parts, method)
    strategy.saved_throw_value = method.saved_throw_value(strategy)
    return strategy
