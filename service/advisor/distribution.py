"""The distribution of the final score under the advisor's optimal play, exactly.

A forward pass over the game states reachable from a position, level by level (one level =
one more box filled), carrying for each state the distribution of the points accumulated so
far. For every state the policy of its turn comes from `policy.policy_block` (the advisor's
own: best box per hand, best keep per hand and throw); the turn's outcome distribution
(which next state, how many points) follows by pushing the probability of the dice through
the throws of the turn, and each state's histogram is shifted by the points and added into
its successor's. Histograms are dense over each state's own range of totals. Nothing is
sampled or truncated: the result is exact up to float64 rounding (the probabilities sum to 1
within 1e-12).

Only one-part (exact-method) strategies are handled; the approximate methods are measured by
simulation (`simulate.py`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .policy import LANES, policy_block


@dataclass
class Distribution:
    """Probabilities of every final total from `lo` up (index i = total lo + i)."""

    lo: int
    probs: np.ndarray
    exact: bool = True
    method: str = "exact forward pass over every reachable state"
    samples: int | None = None
    standard_error: float | None = None  # of the mean, for a sampled distribution
    states: int = 0  # states the exact pass visited
    extra: dict = field(default_factory=dict)

    def to_array(self) -> np.ndarray:
        """As one float64 array (`lo`, then the probabilities): how a store keeps it."""
        return np.concatenate([[float(self.lo)], self.probs])

    @classmethod
    def from_array(cls, data: np.ndarray) -> Distribution | None:
        """The distribution `to_array` wrote; None for an array too short to be one."""
        if data is None or len(data) < 2:
            return None
        return cls(lo=int(data[0]), probs=np.array(data[1:], dtype=np.float64))

    @property
    def totals(self) -> np.ndarray:
        """The final totals the probabilities belong to."""
        return np.arange(self.lo, self.lo + len(self.probs))

    @property
    def mean(self) -> float:
        """Mean final total."""
        return float(self.totals @ self.probs / self.probs.sum())

    @property
    def sd(self) -> float:
        """Standard deviation of the final total."""
        t = self.totals - self.mean
        return float(np.sqrt(max(0.0, (t * t) @ self.probs / self.probs.sum())))

    def percentile(self, q: float) -> int:
        """Smallest total t with P(final <= t) >= q / 100."""
        cdf = np.cumsum(self.probs) / self.probs.sum()
        i = int(np.searchsorted(cdf, q / 100.0 - 1e-12))
        return self.lo + min(i, len(self.probs) - 1)

    def p_at_least(self, t: int) -> float:
        """P(final total >= t)."""
        i = t - self.lo
        if i <= 0:
            return 1.0
        if i >= len(self.probs):
            return 0.0
        return float(min(1.0, max(0.0, self.probs[i:].sum() / self.probs.sum())))


# --------------------------------------------------------------------------- kernels


@nb.njit(cache=True, error_model="numpy")
def push_turn(kd, DEC, lane, start_throw, mass0, stop_first, stop_later):
    """Push hand probabilities at `start_throw` through the rest of the turn's policy.

    On return stop_first[h] / stop_later[h] hold the probability that the turn is scored
    with hand h on the first throw / on a later one.
    """
    push_turn_into(kd, DEC, lane, start_throw, mass0, stop_first, stop_later,
                   np.empty(kd.nh), np.empty(kd.nk))


@nb.njit(cache=True, error_model="numpy")
def push_turn_into(kd, DEC, lane, start_throw, mass0, stop_first, stop_later, mass, kmass):
    """`push_turn` with scratch arrays `mass` (hands) and `kmass` (keeps)."""
    nh = kd.nh
    mass[:] = mass0
    for h in range(nh):
        stop_first[h] = 0.0
        stop_later[h] = 0.0
    for t in range(start_throw, kd.throws):
        kmass[:] = 0.0
        for h in range(nh):
            m = mass[h]
            if m == 0.0:
                continue
            d = DEC[t, h, lane]
            if d < 0:
                if t == 1:
                    stop_first[h] += m
                else:
                    stop_later[h] += m
            else:
                kmass[d] += m
        # keep ids are sorted by size: one more die always leads to a later id
        for k in range(kd.n_small):
            m = kmass[k]
            if m != 0.0:
                m6 = m / 6.0
                for f in range(1, 7):
                    kmass[kd.add[k, f]] += m6
        for h in range(nh):
            mass[h] = kmass[kd.hand_keep[h]]
    for h in range(nh):
        if mass[h] != 0.0:
            if kd.throws == 1 and start_throw == 1:
                stop_first[h] += mass[h]
            else:
                stop_later[h] += mass[h]


@nb.njit(cache=True, error_model="numpy")
def push_block(kd, DEC, mass0, SF, SL, mass, kmass):
    """`push_turn` from the first throw for every lane of a block at once (the lanes' hand
    probabilities side by side, so the rethrows run over contiguous rows): on return
    SF[h, lane] / SL[h, lane] hold the probability that the lane's turn is scored with hand h
    on the first throw / on a later one. `mass` (hands x lanes) and `kmass` (keeps x lanes)
    are scratch. Rows are taken as views: indexed loops over them compile to SIMD."""
    nh = kd.nh
    L = LANES
    m6 = np.empty(L)
    for h in range(nh):
        mr = mass[h]
        sf = SF[h]
        sl = SL[h]
        m0 = mass0[h]
        for lane in range(L):
            mr[lane] = m0
            sf[lane] = 0.0
            sl[lane] = 0.0
    for t in range(1, kd.throws):
        for k in range(kd.nk):
            kr = kmass[k]
            for lane in range(L):
                kr[lane] = 0.0
        stop = SF if t == 1 else SL
        dt = DEC[t]
        for h in range(nh):
            mr = mass[h]
            dr = dt[h]
            sr = stop[h]
            for lane in range(L):
                d = dr[lane]
                if d < 0:
                    sr[lane] += mr[lane]
                else:
                    kmass[d, lane] += mr[lane]
        # keep ids are sorted by size: one more die always leads to a later id
        for k in range(kd.n_small):
            row = kmass[k]
            live = False
            for lane in range(L):
                if row[lane] != 0.0:
                    live = True
                    break
            if not live:
                continue
            for lane in range(L):
                m6[lane] = row[lane] / 6.0
            for f in range(1, 7):
                dst = kmass[kd.add[k, f]]
                for lane in range(L):
                    dst[lane] += m6[lane]
        for h in range(nh):
            src = kmass[kd.hand_keep[h]]
            mr = mass[h]
            for lane in range(L):
                mr[lane] = src[lane]
    last = SF if kd.throws == 1 else SL
    for h in range(nh):
        lr = last[h]
        mr = mass[h]
        for lane in range(L):
            lr[lane] += mr[lane]


#: Levels with fewer states run on one thread (a thread's start costs more than they do).
PARALLEL_STATES = 8 * LANES

HASH = 2048  # open-addressing table of a turn's outcomes (at most 2 x 462 hands)


@nb.njit(cache=True, error_model="numpy")
def merge_into(NXf, GNf, NXl, GNl, lane, stop_first, stop_later, gmax, hk, hp, used):
    """The turn's outcomes (next state, points) with their probabilities, equal outcomes
    merged in the hash table hk/hp (keys -1 when free); `used` receives the slots taken.
    Returns how many."""
    nh = stop_first.shape[0]
    n = 0
    for h in range(2 * nh):
        if h < nh:
            p = stop_first[h]
            if p == 0.0:
                continue
            key = NXf[h, lane] * gmax + int(np.rint(GNf[h, lane]))
        else:
            p = stop_later[h - nh]
            if p == 0.0:
                continue
            key = NXl[h - nh, lane] * gmax + int(np.rint(GNl[h - nh, lane]))
        slot = (key * 2654435761) & (HASH - 1)
        while hk[slot] != -1 and hk[slot] != key:
            slot = (slot + 1) & (HASH - 1)
        if hk[slot] == -1:
            hk[slot] = key
            hp[slot] = p
            used[n] = slot
            n += 1
        else:
            hp[slot] += p
    return n


@nb.njit(cache=True, error_model="numpy")
def merge_records(NXf, GNf, NXl, GNl, lane, stop_first, stop_later, gmax):
    """The turn's outcomes as arrays (keys: next state * gmax + points, probabilities)."""
    hk = -np.ones(HASH, np.int64)
    hp = np.zeros(HASH)
    used = np.empty(HASH, np.int64)
    n = merge_into(NXf, GNf, NXl, GNl, lane, stop_first, stop_later, gmax, hk, hp, used)
    ks = np.empty(n, np.int64)
    ps = np.empty(n)
    for i in range(n):
        ks[i] = hk[used[i]]
        ps[i] = hp[used[i]]
    return ks, ps


@nb.njit(cache=True, error_model="numpy")
def _grow(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@nb.njit(cache=True, error_model="numpy", nogil=True)
def level_records(kd, V, states, gmax):
    """Outcomes of one turn from each state of a level: per state a run of (key, p) with
    key = next state's flat index * gmax + points."""
    n = states.shape[0]
    L = LANES
    nh = kd.nh
    NXf = np.empty((nh, L), np.int64)
    NXl = np.empty((nh, L), np.int64)
    GNf = np.empty((nh, L))
    GNl = np.empty((nh, L))
    BXf = np.empty((nh, L), np.int64)
    BXl = np.empty((nh, L), np.int64)
    SCf = np.empty((nh, L))
    SCl = np.empty((nh, L))
    DEC = np.zeros((kd.throws + 1, nh, L), np.int64)
    bm = np.empty(L, np.int64)
    bu = np.empty(L, np.int64)
    bf = np.empty(L, np.int64)
    off = np.zeros(n + 1, np.int64)
    rk = np.empty(max(16, n * 32), np.int64)
    rp = np.empty(max(16, n * 32))
    SFb = np.empty((nh, L))
    SLb = np.empty((nh, L))
    mass0 = kd.prob.copy()
    hk = -np.ones(HASH, np.int64)
    hp = np.zeros(HASH)
    slots = np.empty(HASH, np.int64)
    pmass = np.empty((nh, L))
    kmass = np.empty((kd.nk, L))
    used = 0
    for bi in range((n + L - 1) // L):
        for lane in range(L):
            i = min(bi * L + lane, n - 1)
            bm[lane] = states[i, 0]
            bu[lane] = states[i, 1]
            bf[lane] = states[i, 2]
        policy_block(kd, V, bm, bu, bf, NXf, GNf, BXf, SCf, NXl, GNl, BXl, SCl, DEC)
        push_block(kd, DEC, mass0, SFb, SLb, pmass, kmass)
        for lane in range(L):
            i = bi * L + lane
            if i >= n:
                break
            m = merge_into(NXf, GNf, NXl, GNl, lane, SFb[:, lane], SLb[:, lane], gmax, hk, hp,
                           slots)
            rk = _grow(rk, used + m)
            rp = _grow(rp, used + m)
            for j in range(m):
                rk[used + j] = hk[slots[j]]
                rp[used + j] = hp[slots[j]]
                hk[slots[j]] = -1
            used += m
            off[i + 1] = used
    return off, rk[:used], rp[:used]


@nb.njit(cache=True, error_model="numpy", nogil=True)
def advance_index(lo, hoff, off, rk, gmax, slot_of):
    """The next level's states and the range of totals of each: (flat state indices, lo,
    offsets of the histograms). `slot_of` (one entry per flat state index, -1 when unused)
    receives each next state's position; the caller (`_forward`) resets it."""
    n = lo.shape[0]
    m = 0
    flat = np.empty(max(16, rk.shape[0]), np.int64)
    for r in range(rk.shape[0]):
        nx = rk[r] // gmax
        if slot_of[nx] < 0:
            slot_of[nx] = m
            flat[m] = nx
            m += 1
    tlo = np.full(m, np.iinfo(np.int64).max)
    thi = np.full(m, np.iinfo(np.int64).min)
    for i in range(n):
        w = hoff[i + 1] - hoff[i]
        for r in range(off[i], off[i + 1]):
            t = slot_of[rk[r] // gmax]
            g = rk[r] % gmax
            tlo[t] = min(tlo[t], lo[i] + g)
            thi[t] = max(thi[t], lo[i] + g + w - 1)
    thoff = np.zeros(m + 1, np.int64)
    for t in range(m):
        thoff[t + 1] = thoff[t] + thi[t] - tlo[t] + 1
    return flat[:m], tlo, thoff


@nb.njit(cache=True, error_model="numpy", nogil=True)
def advance_add(lo, hoff, hist, off, rk, rp, gmax, slot_of, tlo, thoff, th, first, stop):
    """Add the histograms of this level's states `first` .. `stop` - 1, shifted by their
    turns' points and weighted by their probabilities, into the next level's histograms
    `th` (laid out by `advance_index`)."""
    for i in range(first, stop):
        w = hoff[i + 1] - hoff[i]
        src = hist[hoff[i]:hoff[i + 1]]
        for r in range(off[i], off[i + 1]):
            t = slot_of[rk[r] // gmax]
            p = rp[r]
            base = thoff[t] + lo[i] + rk[r] % gmax - tlo[t]
            # slices, not th[base + j]: the loop then compiles to SIMD (5x faster)
            dst = th[base:base + w]
            for j in range(w):
                dst[j] += p * src[j]


# --------------------------------------------------------------------------- driver


def gain_bound(kd: object) -> int:
    """More than the most points one turn can give (box score plus every bonus)."""
    top = float(np.max(kd.reward)) + float(np.max(kd.joker_value))
    return int(top) + int(kd.bonus_amount) + int(kd.amount) + 2


def _level_records(kd: object, values: np.ndarray, states: np.ndarray, gmax: int,
                   pool: ThreadPoolExecutor | None, workers: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`level_records` of a level, split in whole blocks between `workers` threads of the
    pool when the level is large enough; the runs joined in the states' order."""
    n = len(states)
    if pool is None or workers < 2 or n < PARALLEL_STATES:
        return level_records(kd, values, states, gmax)
    per = -(-n // (workers * LANES)) * LANES
    runs = list(pool.map(lambda a: level_records(kd, values, states[a:a + per], gmax),
                         range(0, n, per)))
    offs, base = [np.zeros(1, np.int64)], 0
    for off, _, _ in runs:
        offs.append(off[1:] + base)
        base += int(off[-1])
    return (np.concatenate(offs), np.concatenate([r[1] for r in runs]),
            np.concatenate([r[2] for r in runs]))


def forward(kd: object, values: np.ndarray, start: tuple[int, int, int], total: int,
            first_turn: tuple[np.ndarray, np.ndarray] | None = None, threads: int = 1
            ) -> Distribution:
    """Exact distribution of the final total from a state at the start of a turn, under the
    policy of the solver's table `values`.

    `total`: points already on the sheet. `first_turn`, when given, replaces the first
    turn's outcomes: (keys, probabilities) as `merge_records` gives them (a position in the
    middle of a turn). `threads`: how many threads share a large level (0: every CPU), as
    the solver's build does; the result does not depend on it.
    """
    cpus = os.cpu_count() or 1
    workers = max(1, min(threads or cpus, cpus))
    if workers < 2:
        return _forward(kd, values, start, total, first_turn, None, 1)
    # as many threads as CPUs, never more (the machine is shared with the service's workers):
    # a level's histograms are added on one while the next level's turns start on the others
    with ThreadPoolExecutor(workers) as pool:
        return _forward(kd, values, start, total, first_turn, pool, workers)


def _forward(kd: object, values: np.ndarray, start: tuple[int, int, int], total: int,
             first_turn: tuple[np.ndarray, np.ndarray] | None,
             pool: ThreadPoolExecutor | None, workers: int) -> Distribution:
    shape = values.shape
    full = (1 << kd.nb) - 1
    gmax = gain_bound(kd)
    nu, nf = shape[1], shape[2]
    slot_of = -np.ones(int(np.prod(shape)), np.int64)
    lo = np.array([total], np.int64)
    hoff = np.array([0, 1], np.int64)
    hist = np.array([1.0])
    states = np.array([start], np.int64)
    visited = 0
    if states[0, 0] == full:
        return Distribution(lo=total, probs=hist)
    if first_turn is not None:
        off = np.array([0, len(first_turn[0])], np.int64)
        rk, rp = first_turn
    else:
        off, rk, rp = _level_records(kd, values, states, gmax, pool, workers)
    while True:
        visited += len(states)
        # the next level: its states (known from the outcomes alone) and their histograms
        flat, tlo, thoff = advance_index(lo, hoff, off, rk, gmax, slot_of)
        states = np.stack([flat // (nu * nf), (flat // nf) % nu, flat % nf], axis=1)
        last = not len(states) or states[0, 0] == full
        th = np.zeros(int(thoff[-1]))
        args = (lo, hoff, hist, off, rk, rp, gmax, slot_of, tlo, thoff, th, 0, len(lo))
        if pool is not None and not last and len(states) >= PARALLEL_STATES:
            adding = pool.submit(advance_add, *args)
            off, rk, rp = _level_records(kd, values, states, gmax, pool, workers)
            adding.result()
        else:
            advance_add(*args)
            if not last:
                off, rk, rp = _level_records(kd, values, states, gmax, pool, workers)
        slot_of[flat] = -1
        lo, hoff, hist = tlo, thoff, th
        if last:
            break
    # every state of the last level is a full sheet: add their histograms
    top = int(max(lo[i] + hoff[i + 1] - hoff[i] for i in range(len(lo))))
    low = int(lo.min())
    probs = np.zeros(top - low)
    for i in range(len(lo)):
        a = int(lo[i] - low)
        probs[a:a + hoff[i + 1] - hoff[i]] += hist[hoff[i]:hoff[i + 1]]
    nz = np.flatnonzero(probs)
    probs = probs[nz[0]:nz[-1] + 1]
    return Distribution(lo=low + int(nz[0]), probs=probs, states=visited)
