"""Backward induction over the reachable states of one sheet (one column's rules)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ...domain.rules import RuleSet
from ..kernels.model import Model, build_model, canon, reachable_states
from ..kernels.moments import Moments, moments_level
from ..kernels.threads import cpu_workers
from ..kernels.values import SOLVE_LANES, KernelData, kernel_data, read_only, solve_level


@dataclass
class Solution:
    """A solved sheet: the model, its kernel data and the dense value table.

    ``values[mask, ucode, flags]`` is the expected score still to come from a state at the
    start of a turn under optimal play (NaN for unreachable states).
    """

    model: Model
    kd: KernelData
    values: np.ndarray

    def __post_init__(self) -> None:
        # Read-only like a table memory-mapped from disk: numba compiles one version of a
        # kernel per array type, and a writable table would need its own (half a minute).
        self.values = read_only(self.values)

    @property
    def start_value(self) -> float:
        """Expected final score of a fresh sheet."""
        return float(self.values[0, canon(self.model.threshold, self.model.maxrem, 0, 0), 0])


def prepare(rs: RuleSet, order: str | None = None) -> tuple[Model, KernelData]:
    """Model and kernel data of a RuleSet (optionally one column's order rule)."""
    m = build_model(rs, order)
    return m, kernel_data(m, em_baixo=rs.variant.em_baixo)


class Cancelled(Exception):
    """A build stopped because the process is exiting."""


CANCEL = threading.Event()  # set at interpreter exit: running builds stop between levels


def solve(rs: RuleSet, order: str | None = None, threads: int = 0) -> Solution:
    """Solve a sheet exactly: every reachable state's value, level by level, on `threads`
    threads (0: every CPU)."""
    m, kd = prepare(rs, order)
    values = empty_table(m, np.float32)
    by_levels(m, threads, lambda states: solve_level(kd, values, states), rs.variant.id)
    return Solution(m, kd, values)


def by_levels(m: Model, threads: int, step: Callable[[np.ndarray], object],
              what: str) -> None:
    """Run a kernel `step` on every reachable state of a sheet, level by level from the
    last (the fullest sheets) to the first, on `threads` threads (0: every CPU): the kernels
    release the GIL, so a level is split between threads in whole blocks of SOLVE_LANES
    states (the value kernel's blocks, and the moment kernel's: `moments.MOMENT_LANES`).
    Stops between levels with `Cancelled(what)` once `CANCEL` is set."""
    levels = reachable_states(m)
    workers = cpu_workers(threads)
    with ThreadPoolExecutor(workers) as pool:
        for level in range(m.nb - 1, -1, -1):
            if CANCEL.is_set():
                raise Cancelled(what)
            states = levels[level]
            per = -(-len(states) // (workers * SOLVE_LANES)) * SOLVE_LANES
            chunks = [states[i:i + per] for i in range(0, len(states), max(per, 1))]
            list(pool.map(step, chunks))


def attach(rs: RuleSet, values: np.ndarray, order: str | None = None) -> Solution:
    """A Solution from a value table loaded from disk."""
    m, kd = prepare(rs, order)
    if values.shape != m.table_shape:
        raise ValueError(f"table shape {values.shape} does not fit {m.table_shape}")
    return Solution(m, kd, values)


#: `moments_level`'s `out` when it makes the moments alone (writable, as a table being
#: made is: one numba type for both uses)
NO_VALUES = np.empty((0, 0, 0), np.float32)


def empty_table(m: Model, dtype: type = np.float64) -> np.ndarray:
    """A sheet's table before the levels are filled in: NaN (unreachable until filled), and
    0 once every box is filled (no points still to come)."""
    table = np.full(m.table_shape, np.nan, dtype)
    table[(1 << m.nb) - 1] = 0.0
    return table


def _moment_tables(m: Model) -> tuple[np.ndarray, np.ndarray]:
    """Empty moment tables of a sheet (`empty_table`, float64)."""
    return empty_table(m), empty_table(m)


def solve_moments(sol: Solution, threads: int = 0) -> Moments:
    """Float64 mean and second moment of the points still to come from every reachable
    state of a solved part, under its policy (`moments.moments_level`)."""
    m, kd = sol.model, sol.kd
    t1, t2 = _moment_tables(m)
    by_levels(m, threads,
              lambda states: moments_level(kd, sol.values, t1, t2, states, NO_VALUES),
              "moments")
    return Moments(t1, t2)


def solve_with_moments(rs: RuleSet, order: str | None = None, threads: int = 0
                       ) -> tuple[Solution, Moments]:
    """`solve` and `solve_moments` in one pass over the levels: the moments' kernel takes
    the policy's float32 steps, which are the solver's, so it writes each level's values
    as it goes (the same to the bit as `solve`'s) and the policy is not worked out twice.
    What a game analysis under new rules waits for (Yatzy with a new upper bonus on two
    threads: 0.84 + 1.4 s apart, docs/benchmarks.md)."""
    m, kd = prepare(rs, order)
    values = empty_table(m, np.float32)
    view = read_only(values.view())  # what the kernels read; `values` is what they write
    t1, t2 = _moment_tables(m)
    by_levels(m, threads, lambda states: moments_level(kd, view, t1, t2, states, values),
              rs.variant.id)
    return Solution(m, kd, values), Moments(t1, t2)
