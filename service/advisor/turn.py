"""One position of one player, and the turn being played from it, with two moments.

`Position` reads a sheet as the strategy's part states (as `advice.suggest` does); `TurnView`
holds, for that position, what scoring each hand now is worth (the best box of every part,
its points and next state) and the value of every hand and keep at every throw of the turn
under the advisor's policy, as the mean and second moment of the points still to come, and
the policy itself (which keep, or score now).

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

import numba as nb
import numpy as np

from ..domain.scoring import Sheet, max_throw, score_sheet
from .moments import score2
from .positions import part_state
from .strategy import Strategy

Tables = tuple[np.ndarray, np.ndarray]


@dataclass
class Position:
    """A sheet as the strategy sees it at the start of (or during) a turn."""

    st: Strategy
    sheet: Sheet
    states: list[tuple[int, int, int, int]]  # per part: mask, upper code, flags, upper total
    total: int  # points on the sheet now (bonuses included)
    last: int  # the highest throw number this turn may reach
    throw_value: float  # value of one throw left unused (saved for later turns)
    open_boxes: int

    @classmethod
    def of(cls, st: Strategy, sheet: Sheet) -> Position:
        """Read a sheet (validated by the caller) as part states."""
        rs = st.rs
        states = [part_state(p, sheet) for p in st.parts]
        open_boxes = sum(1 for c in sheet.columns for v in c.boxes.values() if v is None)
        tv = st.saved_throw_value if open_boxes - 1 > 0 else 0.0
        return cls(st, sheet, states, int(score_sheet(rs, sheet)["total"]),
                   max_throw(rs, sheet), tv, open_boxes)


@dataclass
class Choice:
    """What scoring a hand now does: the part and box, its points and the next state."""

    part: int
    box: int  # index within the part's model, -1 when no box is legal
    score: float
    gain: float
    nx: int  # flat index of the part's next state


@nb.njit(cache=True, error_model="numpy")
def turn_tables2(kd, t1f, t2f, t1l, t2l, throw, last, tv):
    """Values of the rest of a turn from throw `throw`, two moments, with the policy.

    t1*/t2*: moments of the points still to come when hand h is scored now (first throw /
    later throw). Returns (H1, H2, E1, E2, DEC): H*[t, h] the value of hand h at throw t,
    E*[t, k] the value of keeping k after throw t and rethrowing (before "em baixo"
    mirroring), DEC[t, h] the policy at throw t: -1 score now, else the effective keep id.
    A throw left unused is worth `tv` (saved throws), added to the points.
    """
    nh = kd.nh
    nk = kd.nk
    H1 = np.zeros((last + 1, nh))
    H2 = np.zeros((last + 1, nh))
    E1 = np.zeros((last + 1, nk))
    E2 = np.zeros((last + 1, nk))
    DEC = -np.ones((last + 1, nh), np.int64)
    for h in range(nh):
        H1[last, h] = t1f[h] if last == 1 else t1l[h]
        H2[last, h] = t2f[h] if last == 1 else t2l[h]
    e1 = np.empty(nk)
    e2 = np.empty(nk)
    ea = np.empty(nk, np.int64)
    m1 = np.empty(nk)
    m2 = np.empty(nk)
    ma = np.empty(nk, np.int64)
    for t in range(last - 1, throw - 1, -1):
        for h in range(nh):
            k = kd.hand_keep[h]
            e1[k] = H1[t + 1, h]
            e2[k] = H2[t + 1, h]
        for k in range(kd.n_small - 1, -1, -1):
            a1 = 0.0
            a2 = 0.0
            for f in range(1, 7):
                a1 += e1[kd.add[k, f]]
                a2 += e2[kd.add[k, f]]
            e1[k] = a1 / 6.0
            e2[k] = a2 / 6.0
        E1[t, :] = e1
        E2[t, :] = e2
        for k in range(nk):
            ea[k] = k
        if kd.em_baixo:
            for k in range(kd.n_small):
                mk = kd.mirror[k]
                if mk > k:
                    if e1[mk] > e1[k]:
                        e1[k] = e1[mk]
                        e2[k] = e2[mk]
                        ea[k] = mk
                    elif e1[k] > e1[mk]:
                        e1[mk] = e1[k]
                        e2[mk] = e2[k]
                        ea[mk] = k
        for k in range(nk):
            m1[k] = e1[k]
            m2[k] = e2[k]
            ma[k] = ea[k]
        for p in range(kd.pairs.shape[0]):
            k = kd.pairs[p, 0]
            s = kd.pairs[p, 1]
            if m1[s] > m1[k]:
                m1[k] = m1[s]
                m2[k] = m2[s]
                ma[k] = ma[s]
        c = tv * (last - t)
        for h in range(nh):
            s1 = t1f[h] if t == 1 else t1l[h]
            s2 = t2f[h] if t == 1 else t2l[h]
            s2 = s2 + 2.0 * c * s1 + c * c
            s1 = s1 + c
            kk = kd.hand_keep[h]
            if s1 >= m1[kk]:
                H1[t, h] = s1
                H2[t, h] = s2
                DEC[t, h] = -1
            else:
                H1[t, h] = m1[kk]
                H2[t, h] = m2[kk]
                DEC[t, h] = ma[kk]
    return H1, H2, E1, E2, DEC


@nb.njit(cache=True, error_model="numpy")
def _roll(kd, kmass, mass):
    """Rethrow: mass on keeps becomes mass on hands (added to `mass`); kmass is consumed."""
    for k in range(kd.n_small):  # keep ids are sorted by size
        m = kmass[k]
        if m != 0.0:
            m6 = m / 6.0
            for f in range(1, 7):
                kmass[kd.add[k, f]] += m6
    for h in range(kd.nh):
        mass[h] += kmass[kd.hand_keep[h]]


@nb.njit(cache=True, error_model="numpy")
def push_from(kd, DEC, start_throw, last, kmass0, hmass0):
    """Probability of scoring each hand at each throw, following the policy DEC.

    Starts from mass on keeps rethrown into throw `start_throw` (kmass0) and on hands at
    that throw (hmass0). Returns S[t, h].
    """
    nh = kd.nh
    S = np.zeros((last + 1, nh))
    mass = hmass0.copy()
    kmass = kmass0.copy()
    _roll(kd, kmass, mass)
    t = start_throw
    while t < last:
        kmass[:] = 0.0
        for h in range(nh):
            m = mass[h]
            if m == 0.0:
                continue
            d = DEC[t, h]
            if d < 0:
                S[t, h] += m
            else:
                kmass[d] += m
        mass[:] = 0.0
        _roll(kd, kmass, mass)
        t += 1
    for h in range(nh):
        S[last, h] += mass[h]
    return S


class TurnView:
    """The current turn of a position under the advisor's policy (see the module doc)."""

    def __init__(self, pos: Position, tables: Callable[[int], Tables], throw: int = 1
                 ) -> None:
        self.pos = pos
        st = pos.st
        self.kd = st.parts[0].solution.kd
        self.tables = [tables(i) for i in range(len(st.parts))]
        base1, base2 = [], []
        for (t1, t2), s in zip(self.tables, pos.states, strict=True):
            base1.append(float(t1[s[0], s[1], s[2]]))
            base2.append(float(t2[s[0], s[1], s[2]]))
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

    def stop_value(self, h: int, t: int) -> tuple[float, float]:
        """Moments when hand h is scored in its best box at throw t (saved throws counted)."""
        s1, s2, _ = self.terms[t == 1]
        c = self.pos.throw_value * (self.pos.last - t)
        return float(s1[h] + c), float(s2[h] + 2 * c * s1[h] + c * c)

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

