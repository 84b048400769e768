"""The turn being played from one player's position, with two moments.

`TurnView` holds, for a `solving.positions.Position`, what scoring each hand now is worth
(the best box of every part, its points and next state) and the value of every hand and keep
at every throw of the turn under the advisor's policy, as the mean and second moment of the
points still to come, and the policy itself (which keep, or score now).

Tables: a view is computed from per-part tables ``(T1, T2)``: the float64 moments
(`moments.Moments`, for values with standard deviations) or the solver's float32 values
(``(values, values)``: the means only, the second moment then meaningless). On a strategy
of several parts (column sheets, Maxi Yatzy's sections) the parts' futures are taken as
independent, as the method's values are their sum: the variance is the sum of the parts'.
A saved throw (Maxi Yatzy) adds a constant `throw_value` per throw left unused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..kernels.moments import score2
from ..kernels.turn import push_from, turn_tables2
from ..solving.positions import Position

Tables = tuple[np.ndarray, np.ndarray]


@dataclass
class Choice:
    """What scoring a hand now does: the part and box, its points and the next state."""

    part: int
    box: int  # index within the part's model, -1 when no box is legal
    score: float
    gain: float
    nx: int  # flat index of the part's next state


def start_moments(pos: Position, tables: list[Tables]) -> tuple[list[float], list[float]]:
    """Per part, the mean and second moment of the points still to come at the position's
    turn start (`tables`: each part's)."""
    base1, base2 = [], []
    for (t1, t2), s in zip(tables, pos.states, strict=True):
        base1.append(float(t1[s[0], s[1], s[2]]))
        base2.append(float(t2[s[0], s[1], s[2]]))
    return base1, base2


class TurnView:
    """The current turn of a position under the advisor's policy (see the module doc)."""

    def __init__(self, pos: Position, tables: Callable[[int], Tables], throw: int = 1
                 ) -> None:
        self.pos = pos
        st = pos.st
        self.kd = st.parts[0].solution.kd
        self.tables = [tables(i) for i in range(len(st.parts))]
        base1, base2 = start_moments(pos, self.tables)
        self.base1 = base1  # per part: mean of the points still to come
        self.base2 = base2
        self.mean_now = sum(base1)  # turn start value (points still to come)
        var = [b2 - b1 * b1 for b1, b2 in zip(base1, base2, strict=True)]
        self.var_now = sum(var)
        self.terms = {first: self._terminals(first, var) for first in (True, False)}
        (t1f, t2f, _), (t1l, t2l, _) = self.terms[True], self.terms[False]
        self.throw = throw
        self.H1, self.H2, self.E1, self.E2, self.DEC = turn_tables2(
            self.kd, t1f, t2f, t1l, t2l, throw, pos.last, float(pos.throw_value))

    def _terminals(self, first: bool, var: Sequence[float]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Moments of the points to come when each hand is scored now, and the choices
        (rows: part, box, score, gain, next state; box -1 when none is legal)."""
        st, pos = self.pos.st, self.pos
        nh = self.kd.nh
        best1 = np.full(nh, -np.inf)
        best2 = np.zeros(nh)
        choice = np.zeros((5, nh))
        choice[1] = -1
        total_mean = self.mean_now
        total_var = sum(var)
        for pi, (part, (t1, t2), s) in enumerate(zip(st.parts, self.tables, pos.states,
                                                     strict=True)):
            kd = part.solution.kd
            out = [np.empty((nh, 1)) for _ in range(2)]
            nx = np.empty((nh, 1), np.int64)
            gn = np.empty((nh, 1))
            bx = np.empty((nh, 1), np.int64)
            sc = np.empty((nh, 1))
            score2(kd, t1, t2, np.array([s[0]]), np.array([s[1]]), np.array([s[2]]), first,
                   out[0], out[1], nx, gn, bx, sc)
            s1, s2 = out[0][:, 0], out[1][:, 0]
            # the other parts' futures are unchanged: shift the mean, add their variance
            mean = s1 - self.base1[pi] + total_mean
            second = mean * mean + (s2 - s1 * s1) + (total_var - var[pi])
            better = mean > best1
            best1 = np.where(better, mean, best1)
            best2 = np.where(better, second, best2)
            new = np.stack([np.full(nh, pi), bx[:, 0], sc[:, 0], gn[:, 0], nx[:, 0]])
            choice = np.where(better, new, choice)
        return best1, best2, choice

    def hand_value(self, h: int, t: int) -> tuple[float, float]:
        """Moments of the points still to come at hand h, throw t, under the policy."""
        return float(self.H1[t, h]), float(self.H2[t, h])

    def keep_value(self, k: int, t: int) -> tuple[float, float]:
        """Moments of the points still to come after keeping k after throw t (no mirror)."""
        return float(self.E1[t, k]), float(self.E2[t, k])

    def choice(self, h: int, t: int) -> Choice | None:
        """The box the policy scores hand h in at throw t (None: no box is legal)."""
        row = self.terms[t == 1][2][:, h]
        if row[1] < 0:
            return None
        return Choice(int(row[0]), int(row[1]), float(row[2]), float(row[3]), int(row[4]))

    def outcomes_of_keep(self, k: int, t: int) -> np.ndarray:
        """S[t', h]: probability that the turn is scored with hand h at throw t' > t after
        keeping k (an effective keep id) after throw t."""
        kmass = np.zeros(self.kd.nk)
        kmass[k] = 1.0
        return push_from(self.kd, self.DEC, t + 1, self.pos.last, kmass,
                         np.zeros(self.kd.nh))

