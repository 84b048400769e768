"""Sheets too large to solve whole (Maxi Yatzy): upper and lower sections as two games."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ....domain.rules import RuleSet, build_rule_set
from ....domain.scoring import empty_sheet
from ..positions import part_state, part_value, terminals, turn_tables
from ..strategy import Method, PartPlan, Strategy

#: Largest sheet solved whole: the value table has 2^boxes rows.
MAX_EXACT_BOXES = 16

#: A saved throw is valued at this share of the first turn's gain from a fourth throw, a
#: factor learned by simulating the method's own play (Maxi Yatzy, 10,000 seeded games for
#: each factor, standard error 0.8): 0 -> 382.3, 0.5 -> 408.7, 0.6 -> 411.9, 0.65 -> 413.9,
#: 0.7 -> 413.4, 0.8 -> 408.7, 1 (the gain itself, the earlier value) -> 381.5,
#: 1.25 -> 329.2. The gain of one more throw falls as throws pile up, so the full
#: first-turn gain overvalues saving: the player stops rolling too soon.
SAVED_THROW_SHARE = 0.65


class Sections(Method):
    """Upper section (with its bonus) and lower section solved exactly as separate games; a
    saved throw is worth a constant: a share (`SAVED_THROW_SHARE`, learned from simulated
    play) of the first turn's gain from a fourth throw."""

    name = "sections"
    exact = False
    description = ("upper and lower sections solved independently as exact games; "
                   "a saved throw is worth a constant (0.65 of the first turn's gain "
                   "from a fourth throw, the share that plays best in simulated games)")

    def applies(self, rs: RuleSet) -> bool:
        """Sheets with saved throws, or more boxes than a table can hold."""
        return rs.variant.saved_throws or len(rs.variant.boxes) > MAX_EXACT_BOXES

    def plan(self, rs: RuleSet) -> list[PartPlan]:
        """The upper section without five-of-a-kind rules, the lower without the upper
        bonus; neither saves throws (their value is added by `saved_throw_value`)."""
        v = rs.variant
        upper = tuple(b for b in v.boxes if b.section == "upper")
        lower = tuple(b for b in v.boxes if b.section != "upper")
        out = []
        if upper:
            vu = replace(v, boxes=upper, five_of_a_kind_bonus=None, joker="none",
                         saved_throws=False)
            out.append(PartPlan("upper", 0, build_rule_set(vu, rs.options, rs.overrides)))
        if lower:
            vl = replace(v, boxes=lower, upper_bonus=None, saved_throws=False)
            if vl.box("five_of_a_kind") is None:
                vl = replace(vl, joker="none", five_of_a_kind_bonus=None)
            out.append(PartPlan("lower", 0, build_rule_set(vl, rs.options, rs.overrides)))
        return out

    def saved_throw_value(self, strategy: Strategy) -> float:
        """The value given to one saved throw: `SAVED_THROW_SHARE` of the gain of a fourth
        throw on the first turn."""
        if not strategy.rs.variant.saved_throws:
            return 0.0
        sheet = empty_sheet(strategy.rs)
        states = [part_state(p, sheet) for p in strategy.parts]
        base = [part_value(p, *s[:3]) for p, s in zip(strategy.parts, states, strict=True)]
        tf, tl = terminals(strategy, states, base)
        kd = strategy.parts[0].solution.kd
        prob = np.asarray(kd.prob)
        three = strategy.rs.variant.throws
        v3 = float(prob @ turn_tables(kd, tf, tl, 1, three)[1])
        v4 = float(prob @ turn_tables(kd, tf, tl, 1, three + 1)[1])
        return SAVED_THROW_SHARE * max(0.0, v4 - v3)
