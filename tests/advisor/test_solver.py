"""The solver's passes (service/advisor/solving/solver.py): the values and the moments made
in one pass are the tables the two passes make apart, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from service.advisor.solving import solver
from service.advisor.solving.methods import method_for
from service.advisor.tables.store import StoreChain, TableStore
from service.advisor.tables.strategies import build_moments, moment_names, part_names
from service.domain.rules import effective_rules

#: Rules that take every branch of the kernels: five-of-a-kind bonuses and Jokers (YAHTZEE,
#: Kniffel without its extra rule), em baixo (Bozó), a first throw that scores apart
#: (Generala's servida, obligada), order rules (the column sheet's parts), a new upper bonus
CASES = [
    ("yahtzee", {}, {"upper_bonus": {"threshold": 60, "amount": 30}}),
    ("kniffel", {"extra_kniffel_needs_50": False}, {}),
    ("bozo", {}, {}),
    ("generala", {"obligada": True}, {}),
    ("general", {"columns": True}, {}),
    ("yacht", {}, {}),
]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize(("vid", "options", "overrides"), CASES)
def test_one_pass_makes_the_tables_of_the_two(vid, options, overrides):
    rs = effective_rules(vid, options, overrides)
    for plan in method_for(rs).plan(rs):
        apart = solver.solve(plan.rules, plan.order, 2)
        moments = solver.solve_moments(apart, 2)
        together, fused = solver.solve_with_moments(plan.rules, plan.order, 2)
        assert same_bits(together.values, apart.values), plan.name
        assert same_bits(fused.m1, moments.m1), plan.name
        assert same_bits(fused.m2, moments.m2), plan.name
        assert not together.values.flags.writeable  # as `solve` leaves it


def test_a_moments_job_without_values_saves_both(tmp_path):
    """The build process's `moments` job for rules with no value tables yet (what game
    analysis queues): the values and the moments saved, as the passes apart make them."""
    rs = effective_rules("generala", {"obligada": True})
    store = TableStore(tmp_path)
    st = build_moments(rs, store, 1, StoreChain(store))
    (part,) = st.parts
    assert store.has(rs, [*part_names(rs), *moment_names(part.name)])
    apart = solver.solve(rs, None, 1)
    moments = solver.solve_moments(apart, 1)
    m1, m2 = (store.load(rs, name) for name in moment_names(part.name))
    assert same_bits(np.asarray(store.load(rs, part.name)), apart.values)
    assert same_bits(np.asarray(m1), moments.m1) and same_bits(np.asarray(m2), moments.m2)
