"""The solver's model (service/advisor/kernels/model.py): the reachable states its kernel
lists are those its definition names, in the order the levels are solved."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from service.advisor.kernels.model import KIND_UPPER, Model, build_model, canon, reachable_states
from service.domain.rules import effective_rules

#: an upper bonus (totals and their canonical codes), flags (YAHTZEE's bonus box, Doble
#: Generala's requirement), a new threshold, and neither (Yacht)
CASES = [
    ("yahtzee", {}, {"upper_bonus": {"threshold": 60, "amount": 30}}),
    ("kniffel", {"extra_kniffel_needs_50": False}, {}),
    ("generala", {"obligada": True}, {}),
    ("general", {}, {}),
    ("yacht", {}, {}),
]


def defined_states(m: Model) -> list[list[tuple[int, int, int]]]:
    """The reachable states as the docstring of `reachable_states` defines them, written
    plainly: every upper total the filled number boxes can make (face x 0..n each, capped
    at the threshold), canonicalised; every set of flag bits whose boxes are filled and can
    hold a non-zero score. By level, each in (mask, ucode, flags) order."""
    upper = [i for i in range(m.nb) if m.kind[i] == KIND_UPPER]
    bits = m.nflags.bit_length() - 1
    box_of = [int(np.nonzero(m.trk_bit == b)[0][0]) for b in range(bits)]
    settable = [bool(m.gives[:, box_of[b], 1].any()) for b in range(bits)]
    levels: list[list[tuple[int, int, int]]] = [[] for _ in range(m.nb + 1)]
    totals_of: dict[tuple[int, ...], set[int]] = {}
    for mask in range(1 << m.nb):
        filled = tuple(i for i in upper if mask >> i & 1)
        if filled not in totals_of:
            sums = {sum(int(m.face[i]) * c for i, c in zip(filled, counts))
                    for counts in product(range(m.nd + 1), repeat=len(filled))}
            totals_of[filled] = {min(m.threshold, s) if m.threshold else 0 for s in sums}
        codes = sorted({canon(m.threshold, m.maxrem, t, mask) for t in totals_of[filled]})
        flags = [f for f in range(1 << bits)
                 if all(settable[b] and mask >> box_of[b] & 1
                        for b in range(bits) if f >> b & 1)]
        levels[bin(mask).count("1")] += [(mask, u, f) for u in codes for f in flags]
    return levels


@pytest.mark.parametrize(("vid", "options", "overrides"), CASES)
def test_reachable_states_are_their_definition(vid, options, overrides):
    m = build_model(effective_rules(vid, options, overrides))
    listed = reachable_states(m)
    assert len(listed) == m.nb + 1
    for level, (got, want) in enumerate(zip(listed, defined_states(m))):
        assert [tuple(int(x) for x in row) for row in got] == want, level
