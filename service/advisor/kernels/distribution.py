"""The distribution of the final score under the advisor's optimal play, exactly.

A forward pass over the game states reachable from a position, level by level (one level =
one more box filled), carrying for each state the distribution of the points accumulated so
far. For every state the policy of its turn comes from `policy.decisions_block` (the
advisor's own: best box per hand, best keep per hand and throw); the turn's outcome
distribution (which next state, how many points) follows by pushing the probability of the
dice through the throws of the turn (`push_block`) and merging the hands that end alike
(`merge_block`), and each state's histogram is shifted by the points and added into its
successor's. Histograms are dense over each state's own range of totals. Nothing is
sampled or truncated: the result is exact up to float64 rounding (the probabilities sum to 1
within 1e-12).

The same turn outcomes serve a pass the other way (`futures`, `successor_futures`): the
distribution of the points still to come from a turn start depends on the state alone (the
points so far only shift it), so it is computed once per state, from the full sheets back;
`Futures` holds such distributions (the first turns of a built-in variant, made ahead; the
states a position's moves lead to, for playing to win).

Only one-part (exact-method) strategies are handled; the approximate methods are measured by
simulation (`selfplay.py`).
"""

from __future__ import annotations

import math
from concurrent.futures import Executor
from dataclasses import dataclass

import numba as nb
import numpy as np

from .policy import box_targets, decisions_block, first_scored, level_arrays, score_passes
from .steps import load_block, rethrow_keeps, rethrow_mass
from .threads import cpu_workers, kernel_pool
from .values import LANES, five_arrays, five_placements


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
    def mass(self) -> float:
        """The probabilities' sum: 1, or where the games won at once are left out
        (`forward(..., instant=...)`) the chance of none (0 when every game is)."""
        return float(self.probs.sum())

    @property
    def mean(self) -> float:
        """Mean final total (NaN when no game is counted: `mass` 0)."""
        mass = self.mass
        return float(self.totals @ self.probs / mass) if mass > 0 else float("nan")

    @property
    def sd(self) -> float:
        """Standard deviation of the final total (NaN when no game is counted)."""
        mass = self.mass
        if mass <= 0:
            return float("nan")
        t = self.totals - self.mean
        return float(np.sqrt(max(0.0, (t * t) @ self.probs / mass)))

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
    nh = kd.nh
    # one state: its hands and keeps as one lane ([item, 1] arrays: a reshape per rethrow
    # cost more than the rethrow)
    mass = np.empty((nh, 1))
    kmass = np.empty((kd.nk, 1))
    share = np.empty(1)
    for h in range(nh):
        mass[h, 0] = mass0[h]
        stop_first[h] = 0.0
        stop_later[h] = 0.0
    for t in range(start_throw, kd.throws):
        kmass[:, :] = 0.0
        for h in range(nh):
            m = mass[h, 0]
            if m == 0.0:
                continue
            d = DEC[t, h, lane]
            if d < 0:
                if t == 1:
                    stop_first[h] += m
                else:
                    stop_later[h] += m
            else:
                kmass[d, 0] += m
        rethrow_mass(kd.add, kd.hand_keep, kd.n_small, kmass, mass, share, True, 1)
    for h in range(nh):
        m = mass[h, 0]
        if m != 0.0:
            if kd.throws == 1 and start_throw == 1:
                stop_first[h] += m
            else:
                stop_later[h] += m


@nb.njit(cache=True, error_model="numpy")
def push_block(kd, DEC, mass0, SF, SL, K0, K1):
    """`push_turn` from the first throw for every lane of a block at once (the lanes' hand
    probabilities side by side, so the rethrows run over contiguous rows): on return
    SF[h, lane] / SL[h, lane] hold the probability that the lane's turn is scored with hand h
    on the first throw / on a later one (SF and SL may be one array, which then holds
    both). K0 and K1 (keeps x lanes) are scratch, zero on entry and left zero: each throw's
    keeps fill one while the hands are read out of the other (a hand's probability is its
    own keep's), and a row is cleared where it is read last. Rows are taken as views, and
    the lane count is read from an array, not the constant LANES: with a trip count known
    at compile time LLVM unrolls the lane loops into scalar code before its loop vectorizer
    runs (3x slower here).

    The rethrow is `rethrow_keeps` (which leaves the smaller keeps' rows zero); what this
    saves against `rethrow_mass` is memory traffic: no keep table zeroed per throw (the
    rows are cleared as they are read, in cache), no copy of the hands out of the keeps,
    and the first throw's hands read from `mass0` (the same in every lane): 0.49 -> 0.42 s
    over the states of Yatzy's forward pass (upper bonus 60/30, one thread), the same
    bits."""
    nh = kd.nh
    L = K0.shape[1]
    add = kd.add
    hand_keep = kd.hand_keep
    n_small = kd.n_small
    share = np.empty(L)
    for h in range(nh):
        sf = SF[h]
        sl = SL[h]
        for lane in range(L):
            sf[lane] = 0.0
            sl[lane] = 0.0
    prev = K1  # the keeps the hands are read from (none before the first throw)
    for t in range(1, kd.throws):
        kmass = K0 if t % 2 == 1 else K1
        stop = SF if t == 1 else SL
        dt = DEC[t]
        for h in range(nh):
            dr = dt[h]
            sr = stop[h]
            if t == 1:
                m0 = mass0[h]
                for lane in range(L):
                    d = dr[lane]
                    if d < 0:
                        sr[lane] += m0
                    else:
                        kmass[d, lane] += m0
            else:
                mr = prev[hand_keep[h]]
                for lane in range(L):
                    d = dr[lane]
                    m = mr[lane]
                    mr[lane] = 0.0
                    if d < 0:
                        sr[lane] += m
                    else:
                        kmass[d, lane] += m
        # a sixth multiplied: a vector division takes several times longer
        rethrow_keeps(add, n_small, kmass, share, False, L)
        prev = kmass
    last = SF if kd.throws == 1 else SL
    for h in range(nh):
        lr = last[h]
        if kd.throws == 1:
            m0 = mass0[h]
            for lane in range(L):
                lr[lane] += m0
        else:
            mr = prev[hand_keep[h]]
            for lane in range(L):
                lr[lane] += mr[lane]
                mr[lane] = 0.0


#: Lanes (states) of a block of `level_records`: four times the solver's, as
#: `moments.MOMENT_LANES` (each keep's and each hand's fixed costs spread over more states;
#: a lane's outcomes do not depend on the block it is in).
RECORD_LANES = 4 * LANES
#: Levels with fewer states run on one thread (a thread's start costs more than they do).
PARALLEL_STATES = 8 * LANES
#: Pieces of a large level per thread: the pool hands them out as threads come free (one is
#: adding the last level's histograms while the others start on this level's turns).
CHUNKS = 8

@nb.njit(cache=True, error_model="numpy")
def _grow(a, need):
    """`a`, or a copy at least twice as long when it is shorter than `need`."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@nb.njit(cache=True, error_model="numpy")
def five_faces(kd):
    """Per hand: its face when it is a five-of-a-kind hand that may be scored apart (Joker,
    bonus: a sheet with the five-of-a-kind box filled), else 0."""
    apart = np.zeros(kd.nh, np.int64)
    if kd.five_box >= 0:
        for f in range(1, 7):
            apart[kd.five_hand[f]] = f
    return apart


@nb.njit(cache=True, error_model="numpy")
def local_keys(kd):
    """A hand's outcome entry: per (pass, box, hand) its (pass, box, outcome class, score)
    as bit fields (score lowest); with the widths of the score and class fields and the
    number of such keys (`outcome_keys` numbers the entries that occur)."""
    top = 0
    for x in kd.reward.ravel():
        top = max(top, int(x))
    rbits = 1
    while (1 << rbits) <= top:
        rbits += 1
    cbits = 1
    while (1 << cbits) < kd.nd + 2:
        cbits += 1
    lkt = np.empty((2, kd.nb, kd.nh), np.int64)
    for part in range(2):
        for b in range(kd.nb):
            for h in range(kd.nh):
                lkt[part, b, h] = ((((part * kd.nb + b) << cbits) | kd.cls[part, b, h]) << rbits
                                   | int(kd.reward[part, b, h]))
    return lkt, rbits, cbits, (2 * kd.nb) << (cbits + rbits)


@nb.njit(cache=True, error_model="numpy")
def outcome_keys(kd):
    """The outcome entries of `merge_block`, numbered densely: per (pass, hand, box) the id
    of the hand's `local_keys` entry when scored in the box (ids in the order of the
    entries' bit fields), and per id its box (+ nb for the first throw's pass), outcome
    class and score."""
    lkt, rbits, cbits, size = local_keys(kd)
    idx = np.full(size, -1, np.int64)
    for x in lkt.ravel():
        idx[x] = 0
    ne = 0
    for i in range(size):
        if idx[i] >= 0:
            idx[i] = ne
            ne += 1
    ent = np.empty((2, kd.nh, kd.nb), np.int64)
    for part in range(2):
        for b in range(kd.nb):
            for h in range(kd.nh):
                ent[part, h, b] = idx[lkt[part, b, h]]
    ebox = np.empty(ne, np.int64)
    ecls = np.empty(ne, np.int64)
    erew = np.empty(ne, np.int64)
    for i in range(size):
        e = idx[i]
        if e >= 0:
            erew[e] = i & ((1 << rbits) - 1)
            ecls[e] = (i >> rbits) & ((1 << cbits) - 1)
            ebox[e] = i >> (rbits + cbits)
    return ent, ebox, ecls, erew


@nb.njit(cache=True, error_model="numpy")
def merge_arrays(kd, L):
    """Work arrays of `merge_block` for a block of L lanes, as one tuple: the entries
    (`outcome_keys`), their accumulator [entry, lane] (zero between calls), per lane the
    entries in the order first touched and their count, the five-of-a-kind records scored
    apart (keys, probabilities) and their count, and `five_faces`."""
    keys = outcome_keys(kd)
    nh = kd.nh
    return (keys, np.zeros((keys[1].shape[0], L)), np.empty((L, 2 * nh), np.int64),
            np.empty(L, np.int64), np.empty((L, 14), np.int64), np.empty((L, 14)),
            np.empty(L, np.int64), five_faces(kd))


@nb.njit(cache=True, error_model="numpy")
def merge_block(kd, scf, scl, lanes, SF, SL, gbits, work, rk, rp, used, off):
    """Append the turn outcomes of a block's first `lanes` lanes to rk (key: next state's
    flat index << gbits | points) and rp (probability) from position `used`, each lane's
    end in off[lane + 1]; returns the new end. rk and rp have room for 2 x hands records a
    lane. `work`: `merge_arrays` of the block's lane count.

    SF[h, lane] / SL[h, lane]: the probability that the lane's turn is scored with hand h on
    the first throw / on a later one (`push_block`); where the first throw is not scored
    apart (`first_scored`) both are in SL (`push_block` given the same array twice). A hand
    goes to its outcome entry (`outcome_keys`: box, outcome class and score), by the box of
    the score pass (scf: the first throw's, scl: later); hands that land on the same entry
    are merged, in hand order. The five-of-a-kind hands scored apart (Joker, bonus) are
    records as they are. A lane's records: those scored apart in hand order, then the
    merged entries in the order first touched. One outcome may appear in more than one
    record (the next level adds them).

    The hands are taken one by one over every lane (rows of SF, SL and the boxes read
    whole; per lane its own accumulator column and list of entries), not lane by lane
    over the hands (columns read with a stride of a row, each hand's entry a dependent
    add): the merge 1.2 -> 0.8 s over Yatzy's states, the same records. One call a block:
    a call that takes the kernel data counts a reference to each of its arrays
    (`first_scored` is inlined, so it costs none)."""
    keys, acc, seen, cnt, ak, ap, na, apart = work
    ent, ebox, ecls, erew = keys
    nbox = kd.nb
    nh = kd.nh
    L = SL.shape[1]
    split = first_scored(kd)
    for lane in range(L):
        cnt[lane] = 0
        na[lane] = 0
    for part in range(2 if split else 1):
        first = part == 1
        S = SF if first else SL
        sc = scf if first else scl
        BB, ON, OG = sc[1], sc[5], sc[6]
        E = ent[part]
        for h in range(nh):
            f = apart[h]
            sh = S[h]
            bh = BB[h]
            eh = E[h]
            for lane in range(L):
                p = sh[lane]
                if p == 0.0:
                    continue
                if f > 0:
                    on = ON[f, lane]
                    if on != -2:
                        q = na[lane]
                        ak[lane, q] = on << gbits | int(np.rint(OG[f, lane]))
                        ap[lane, q] = p
                        na[lane] = q + 1
                        continue
                e = eh[int(bh[lane])]
                ar = acc[e]
                a = ar[lane]
                n = cnt[lane]
                seen[lane, n] = e
                cnt[lane] = n + (a == 0.0)  # no branch: a first visit keeps its place
                ar[lane] = a + p
    NIl, Xl, RMl = scl[2], scl[3], scl[4]
    NIf, Xf, RMf = scf[2], scf[3], scf[4]
    for lane in range(lanes):
        for q in range(na[lane]):
            rk[used] = ak[lane, q]
            rp[used] = ap[lane, q]
            used += 1
        for i in range(cnt[lane]):
            e = seen[lane, i]
            r = erew[e]
            c = ecls[e]
            b = ebox[e]
            if b < nbox:
                rk[used] = NIl[b, c, lane] << gbits | int(np.rint(r * RMl[b, lane]
                                                                  + Xl[b, c, lane]))
            else:
                b -= nbox
                rk[used] = NIf[b, c, lane] << gbits | int(np.rint(r * RMf[b, lane]
                                                                  + Xf[b, c, lane]))
            rp[used] = acc[e, lane]
            acc[e, lane] = 0.0
            used += 1
        off[lane + 1] = used
    for lane in range(lanes, L):  # a last block's spare lanes: their sums cleared
        for i in range(cnt[lane]):
            acc[seen[lane, i], lane] = 0.0
    return used


def first_turn_records(kd: object, values: np.ndarray, state: tuple[int, int, int], hand: int,
                       throw: int, keep: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The outcomes of the rest of a turn (keys, probabilities, as a level's records), under
    the policy: from `hand` after `throw`, or (`keep` >= 0, an effective keep id) from
    rethrowing all but that keep after `throw`. What `forward` takes for a position in the
    middle of a turn, and a keep's outcomes for its distribution (`Futures.combine`)."""
    nh = kd.nh
    scf, scl = score_passes(kd, 1)
    dec = np.zeros((kd.throws + 1, nh, 1), np.int16)
    one = np.ones(1, np.int64)
    decisions_block(kd, values, one * state[0], one * state[1], one * state[2], scf, scl, dec)
    mass0 = np.zeros(nh)
    start = throw
    if keep >= 0:
        kmass = np.zeros((kd.nk, 1))
        kmass[keep, 0] = 1.0
        spread = np.empty((nh, 1))
        rethrow_mass(kd.add, kd.hand_keep, kd.n_small, kmass, spread, np.empty(1), True, 1)
        mass0[:] = spread[:, 0]
        start = throw + 1
    else:
        mass0[hand] = 1.0
    sf, sl = np.empty((nh, 1)), np.empty((nh, 1))
    push_turn(kd, dec, 0, start, mass0, sf[:, 0], sl[:, 0])
    if not first_scored(kd):
        sl += sf  # one pass scores every throw: merge_block reads SL alone
    rk, rp = np.empty(2 * nh, np.int64), np.empty(2 * nh)
    n = merge_block(kd, scf, scl, 1, sf, sl, gain_bits(kd), merge_arrays(kd, 1), rk, rp, 0,
                    np.zeros(2, np.int64))
    return rk[:n], rp[:n]


@nb.njit(cache=True, error_model="numpy", nogil=True)
def level_records(kd, V, states, gbits, mass0):
    """Outcomes of one turn from each state of a level: per state a run of (key, p) with
    key = next state's flat index << gbits | points (`merge_block`). `mass0`: the
    probability of each hand on the first throw (`kd.prob`; the hands that win the game at
    once left out for `forward(..., instant=...)`). In blocks of `RECORD_LANES` states
    (Yatzy's states, one thread: 4.07 s at 32 lanes before the merge and the int16 keeps,
    3.15 s now)."""
    off, rk, rp, used = records_into(kd, V, states, gbits, mass0, np.empty(0, np.int64),
                                     np.empty(0))
    return off, rk[:used], rp[:used]


@nb.njit(cache=True, error_model="numpy", nogil=True)
def records_into(kd, V, states, gbits, mass0, rk, rp):
    """`level_records` written into rk and rp (keys, probabilities) when they have room,
    else into new arrays: returns the offsets, the arrays written and the records' count
    (the arrays' first `used` entries). Arrays of a level whose histograms are added serve
    a later one (`_Room`): new ones cost a page fault every few kilobytes."""
    n = states.shape[0]
    L = RECORD_LANES
    nh = kd.nh
    scf, scl, DEC, bm, bu, bf = level_arrays(kd, L)
    off = np.zeros(n + 1, np.int64)
    cap = n * 40 + 2 * L * nh  # some 30-40 outcomes a state; grown when more
    if rk.shape[0] < cap:
        rk = np.empty(cap, np.int64)
    if rp.shape[0] < cap:
        rp = np.empty(cap)
    SLb = np.empty((nh, L))
    # where one score pass serves every throw, the first throw's stops go with the rest
    SFb = np.empty((nh, L)) if first_scored(kd) else SLb
    work = merge_arrays(kd, L)
    K0 = np.zeros((kd.nk, L))  # `push_block`'s keeps: zero, and left zero by each call
    K1 = np.zeros((kd.nk, L))
    used = 0
    for bi in range((n + L - 1) // L):
        load_block(states, bi, bm, bu, bf)
        decisions_block(kd, V, bm, bu, bf, scf, scl, DEC)
        push_block(kd, DEC, mass0, SFb, SLb, K0, K1)
        lanes = min(L, n - bi * L)
        rk = _grow(rk, used + lanes * 2 * nh)
        rp = _grow(rp, used + lanes * 2 * nh)
        used = merge_block(kd, scf, scl, lanes, SFb, SLb, gbits, work, rk, rp, used,
                           off[bi * L:])
    return off, rk, rp, used


@nb.njit(cache=True, error_model="numpy", nogil=True)
def index_run(lo, hoff, base, off, rk, gbits, slot_of, flat, m, tlo, thi):
    """Take one run of a level's records (its states `base` onwards; `level_records`) into
    the next level's index: a next state seen for the first time gets the next position
    (slot_of[state] = m, flat[m] = state), and the range of totals it can be reached with,
    tlo / thi (by flat state index), widens to cover this run's. Returns the new count m.

    Each record's key is rewritten in place to name its next state by that position (slot
    << gbits | points): `advance_add` then reads the slot from the key, not from slot_of (a
    table of every flat index, some 8 MB for Yatzy: a cache miss a record)."""
    gmask = (1 << gbits) - 1
    for i in range(off.shape[0] - 1):
        g = base + i
        low = lo[g]
        w1 = hoff[g + 1] - hoff[g] - 1
        for r in range(off[i], off[i + 1]):
            key = rk[r]
            nx = key >> gbits
            a = low + (key & gmask)
            s = slot_of[nx]
            if s < 0:
                s = m
                slot_of[nx] = m
                flat[m] = nx
                m += 1
                tlo[nx] = a  # set when first seen: tlo and thi need no filling
                thi[nx] = a + w1
            else:
                tlo[nx] = min(tlo[nx], a)
                thi[nx] = max(thi[nx], a + w1)
            rk[r] = np.int64(s) << gbits | (key & gmask)
    return m


@nb.njit(cache=True, error_model="numpy", nogil=True)
def index_close(flat, m, tlo, thi):
    """The next level once every run is indexed: its states (flat indices), the lowest
    total of each and the offsets of their histograms."""
    states = flat[:m].copy()
    low = np.empty(m, np.int64)
    thoff = np.zeros(m + 1, np.int64)
    for t in range(m):
        nx = states[t]
        low[t] = tlo[nx]
        thoff[t + 1] = thoff[t] + thi[nx] - tlo[nx] + 1
    return states, low, thoff


@nb.njit(cache=True, error_model="numpy", nogil=True)
def clear(a):
    """Zero an array (a memset, with the GIL released)."""
    for i in range(a.shape[0]):
        a[i] = 0.0


@nb.njit(cache=True, error_model="numpy", nogil=True)
def advance_add(lo, hoff, hist, base, off, rk, rp, gbits, tlo, thoff, th):
    """Add the histograms of one run's states (this level's `base` onwards), shifted by
    their turns' points and weighted by their probabilities, into the next level's
    histograms `th` (laid out by `index_close`; the records' keys name the next states by
    their slots there: `index_run`)."""
    gmask = (1 << gbits) - 1
    for i in range(off.shape[0] - 1):
        g = base + i
        w = hoff[g + 1] - hoff[g]
        src = hist[hoff[g]:hoff[g + 1]]
        low = lo[g]
        for r in range(off[i], off[i + 1]):
            t = rk[r] >> gbits
            p = rp[r]
            at = thoff[t] + low + (rk[r] & gmask) - tlo[t]
            # slices, not th[at + j]: the loop then compiles to SIMD (5x faster)
            dst = th[at:at + w]
            for j in range(w):
                dst[j] += p * src[j]


# --------------------------------------------------------------------------- driver


def gain_bits(kd: object) -> int:
    """Bits of the points in an outcome's key: 1 << gain_bits is more than the most points
    one turn can give (box score plus every bonus). A power of two, so that a key is split
    by a shift and a mask, not a division."""
    top = float(np.max(kd.reward)) + float(np.max(kd.joker_value))
    return (int(top) + int(kd.bonus_amount) + int(kd.amount) + 1).bit_length()


class _Index:
    """The next level's index, built run by run as a level's records come in (`index_run`),
    on the thread that waits for them: work that would otherwise run alone between two
    levels. Its arrays span every flat state index and serve every level of a pass: a level's
    states and the next one's differ in their number of filled boxes, so they never share an
    entry."""

    def __init__(self, size: int) -> None:
        # only slot_of is filled: flat, tlo and thi are written before they are read (a
        # state's tlo and thi when it is first seen), so their untouched pages cost nothing
        # (filling three of them took a sixth of a late-game pass)
        self.slot_of = np.full(size, -1, np.int32)
        self.flat = np.empty(size, np.int64)
        self.tlo = np.empty(size, np.int32)
        self.thi = np.empty(size, np.int32)
        self.m = 0

    def take(self, lo: np.ndarray, hoff: np.ndarray, run: tuple, gbits: int) -> None:
        """Index one run (base, off, rk, rp) of the level whose totals are lo / hoff; its
        keys are rewritten to name the next states by slot (`index_run`)."""
        base, off, rk, _ = run
        self.m = index_run(lo, hoff, base, off, rk, gbits, self.slot_of, self.flat, self.m,
                           self.tlo, self.thi)

    def close(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(states, lowest totals, histogram offsets) of the next level; starts the next."""
        out = index_close(self.flat, self.m, self.tlo, self.thi)
        self.m = 0
        return out


class _Room:
    """The arrays a forward pass's records are written into (`records_into`), used again:
    those of a level whose histograms are added serve the level after the next (new arrays
    cost a page fault every few kilobytes, and the records of a Yatzy pass take some
    230 MB)."""

    def __init__(self) -> None:
        self.free: list[tuple[np.ndarray, np.ndarray]] = []
        self.held: list[tuple[np.ndarray, np.ndarray]] = []  # the current level's

    def records(self, kd: object, values: np.ndarray, states: np.ndarray, gbits: int,
                mass0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`level_records`, into free arrays when there are (on any thread: a list's pop
        and append are atomic, and an empty list's pop raises)."""
        try:  # pop, not a test then a pop: two threads may ask for the last free pair
            rk, rp = self.free.pop()
        except IndexError:
            rk, rp = np.empty(0, np.int64), np.empty(0)
        off, rk, rp, used = records_into(kd, values, states, gbits, mass0, rk, rp)
        self.held.append((rk, rp))
        return off, rk[:used], rp[:used]

    def level(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The arrays of the level whose records were made last (free again once its
        histograms are added); the next level's are held apart."""
        held, self.held = self.held, []
        return held


def _level_runs(kd: object, values: np.ndarray, states: np.ndarray, lo: np.ndarray | None,
                hoff: np.ndarray | None, gbits: int, pool: Executor | None, workers: int,
                index: _Index | None, mass0: np.ndarray, room: _Room | None = None
                ) -> list[tuple]:
    """`level_records` of a level as runs (first state, offsets, keys, probabilities), split
    in whole blocks between `workers` threads of the pool when the level is large enough;
    each run taken into `index` (when given) as it comes, in the states' order. With
    `room`, the records are written into its arrays."""
    make = level_records if room is None else room.records
    n = len(states)
    if pool is None or workers < 2 or n < PARALLEL_STATES:
        runs = [(0, *make(kd, values, states, gbits, mass0))]
    else:
        per = -(-n // (CHUNKS * workers * RECORD_LANES)) * RECORD_LANES
        starts = range(0, n, per)
        futures = [pool.submit(make, kd, values, states[a:a + per], gbits, mass0)
                   for a in starts]
        runs = []
        for a, fut in zip(starts, futures):
            runs.append((a, *fut.result()))
            if index is not None:
                index.take(lo, hoff, runs[-1], gbits)
        return runs
    if index is not None:
        index.take(lo, hoff, runs[0], gbits)
    return runs


def _add_runs(lo: np.ndarray, hoff: np.ndarray, hist: np.ndarray, runs: list[tuple],
              gbits: int, tlo: np.ndarray, thoff: np.ndarray, th: np.ndarray) -> None:
    """`advance_add` of every run of a level (indexed: `_Index.take`), into `th` (zeroed
    here first: on the thread that adds, while the others make the next level's
    records)."""
    clear(th)
    for base, off, rk, rp in runs:
        advance_add(lo, hoff, hist, base, off, rk, rp, gbits, tlo, thoff, th)


def forward(kd: object, values: np.ndarray, start: tuple[int, int, int], total: int,
            first_turn: tuple[np.ndarray, np.ndarray] | None = None, threads: int = 1,
            instant: np.ndarray | None = None) -> Distribution:
    """Exact distribution of the final total from a state at the start of a turn, under the
    policy of the solver's table `values`.

    `total`: points already on the sheet. `first_turn`, when given, replaces the first
    turn's outcomes: (keys, probabilities) as `first_turn_records` gives them (a position in the
    middle of a turn). `threads`: how many threads share a large level (0: every CPU), as
    the solver's build does; the result does not depend on it.

    `instant`: per hand, whether it wins the game at once on a turn's first throw (the
    player then stops and wins: rule book decisions 4 and 12). Those hands' probability
    leaves the pass at the first throw of every turn after the position's, so the result is
    P(final total = t and no such win): it sums to (1 - q) ** turns, q being the chance of
    such a hand (`instant_chance`).
    """
    mass0 = np.array(kd.prob, dtype=np.float64)
    if instant is not None:
        mass0[instant] = 0.0
    workers = cpu_workers(threads)
    if workers < 2:
        return _forward(kd, values, start, total, first_turn, None, 1, mass0)
    # the process's native threads, one a CPU (`threads.kernel_pool`): a level's histograms
    # are added on one while the next level's turns start on the others
    return _forward(kd, values, start, total, first_turn, kernel_pool(), workers, mass0)


def _check_level(lowest: int, levels: int, nb: int, where: str) -> None:
    """Refuse a pass's next level that is a defect: each turn fills a box, so a level whose
    lowest state (or flat index) is negative names no state of the table, and a level past
    the `nb`-th is past the last box. Raises RuntimeError (a 500, not a loop)."""
    if lowest < 0 or levels > nb:
        raise RuntimeError(f"{where}: a turn led to no state of the table")


def _forward(kd: object, values: np.ndarray, start: tuple[int, int, int], total: int,
             first_turn: tuple[np.ndarray, np.ndarray] | None,
             pool: Executor | None, workers: int, mass0: np.ndarray) -> Distribution:
    shape = values.shape
    full = (1 << kd.nb) - 1
    gbits = gain_bits(kd)
    nu, nf = shape[1], shape[2]
    lo = np.array([total], np.int64)
    hoff = np.array([0, 1], np.int64)
    hist = np.array([1.0])
    states = np.array([start], np.int64)
    visited = levels = 0
    if states[0, 0] == full:
        return Distribution(lo=total, probs=hist)
    index = _Index(int(np.prod(shape)))
    room = _Room()
    # two levels' histograms at a time, in two arrays used in turn (grown when short): new
    # ones cost a page fault every few kilobytes
    spare = [np.empty(0), np.empty(0)]
    if first_turn is not None:
        # a copy of the keys: indexing rewrites them (`index_run`)
        runs = [(0, np.array([0, len(first_turn[0])], np.int64), first_turn[0].copy(),
                 first_turn[1])]
        index.take(lo, hoff, runs[0], gbits)
    else:
        runs = _level_runs(kd, values, states, lo, hoff, gbits, pool, workers, index, mass0,
                           room)
    while True:
        visited += len(states)
        # the next level: its states (known from the outcomes alone) and their histograms
        flat, tlo, thoff = index.close()
        states = _rows(flat, nu, nf)
        last = not len(states) or states[0, 0] == full
        levels += 1
        if len(states):
            _check_level(int(states[:, 0].min()), levels, kd.nb, "forward")
        size = int(thoff[-1])
        if len(spare[levels % 2]) < size:
            spare[levels % 2] = np.empty(max(size, 2 * len(spare[levels % 2])))
        th = spare[levels % 2][:size]  # zeroed by `_add_runs`
        held = room.level()  # this level's records, free once its histograms are added
        args = (lo, hoff, hist, runs, gbits, tlo, thoff, th)
        if pool is not None and not last and len(states) >= PARALLEL_STATES:
            # this level's histograms are added on one thread while the next level's turns
            # start on the others
            adding = pool.submit(_add_runs, *args)
            runs = _level_runs(kd, values, states, tlo, thoff, gbits, pool, workers, index,
                               mass0, room)
            adding.result()
        else:
            _add_runs(*args)
            if not last:
                runs = _level_runs(kd, values, states, tlo, thoff, gbits, pool, workers,
                                   index, mass0, room)
        room.free.extend(held)
        index.slot_of[flat] = -1
        lo, hoff, hist = tlo, thoff, th
        if last:
            break
    if not len(lo):
        # no game gets this far: every first throw of a later turn wins at once (the hands
        # that do are left out of `mass0`), so no total is reached without such a win
        return Distribution(lo=total, probs=np.zeros(1), states=visited)
    # every state of the last level is a full sheet: add their histograms
    top = int(max(lo[i] + hoff[i + 1] - hoff[i] for i in range(len(lo))))
    low = int(lo.min())
    probs = np.zeros(top - low)
    for i in range(len(lo)):
        a = int(lo[i] - low)
        probs[a:a + hoff[i + 1] - hoff[i]] += hist[hoff[i]:hoff[i + 1]]
    nz = np.flatnonzero(probs)
    if not len(nz):
        return Distribution(lo=total, probs=np.zeros(1), states=visited)
    probs = probs[nz[0]:nz[-1] + 1]
    return Distribution(lo=low + int(nz[0]), probs=probs, states=visited)


# --------------------------------------------------------------------------- futures
#
# The distribution of the points still to come from a turn start depends on the state alone
# (the points so far only shift it): D(s) = sum over the turn's outcomes (s', g, p) of
# p * D(s') shifted by g, from the full sheets (D = 1 at 0) back. Computed once, a state's D
# serves every position that reaches it; the forward pass above instead carries the points
# so far of one position, which is cheaper for that one position alone.


#: How the distribution from the start of a game was made.
START_METHOD = ("exact: the distribution from the start of a game, computed once per table "
                "of rules over every reachable state")
#: How a distribution read from the table of the first turns' starts was made.
EARLY_METHOD = ("exact: the distributions from every turn start of the first turns, "
                "computed ahead backward from the full sheets over every reachable state")
#: ... and one in the middle of such a turn: its outcomes, then that table.
EARLY_TURN_METHOD = ("exact: the rest of the turn under the advisor's play, then the "
                     "distributions from the turn starts it leads to (computed ahead "
                     "backward from the full sheets over every reachable state)")


@dataclass
class Futures:
    """Exact distributions of the points still to come from turn starts: for the state at
    flat index flat[i] (sorted; the flat index of a [mask, ucode, flags] table),
    P(points to come = lo[i] + j) = data[off[i] + j]. An empty range (off[i] == off[i + 1])
    is a state from which no game goes on (every later first throw won at once, with the
    hands that do left out)."""

    flat: np.ndarray
    lo: np.ndarray
    off: np.ndarray
    data: np.ndarray

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return sum(a.nbytes for a in (self.flat, self.lo, self.off, self.data))

    def slots(self, index: np.ndarray) -> np.ndarray:
        """Each flat state index's position in `flat` (-1 where the state is not held)."""
        if not len(self.flat):
            return np.full(len(index), -1, np.int64)
        at = np.minimum(np.searchsorted(self.flat, index), len(self.flat) - 1)
        return np.where(self.flat[at] == index, at, -1)

    def get(self, index: int, total: int = 0) -> Distribution | None:
        """The distribution of the final total from the state at flat `index` with `total`
        points on the sheet; None when the state is not held."""
        i = int(self.slots(np.array([index]))[0])
        if i < 0:
            return None
        a, b = int(self.off[i]), int(self.off[i + 1])
        if a == b:
            return Distribution(lo=total, probs=np.zeros(1))
        return Distribution(lo=total + int(self.lo[i]), probs=np.array(self.data[a:b]))

    def combine(self, rk: np.ndarray, rp: np.ndarray, gbits: int, total: int = 0
                ) -> Distribution | None:
        """The distribution of the final total after a turn's outcomes (records: keys of
        next state and points, probabilities; `first_turn_records`), every next state's
        future taken from here; None when one is not held."""
        slots = self.slots(rk >> gbits)
        if np.any(slots < 0):
            return None
        gains = rk & ((1 << gbits) - 1)
        off = np.array([0, len(rk)], np.int64)
        lo, width = np.zeros(1, np.int64), np.zeros(1, np.int64)
        future_bounds(off, slots, gains, self.lo, self.off, lo, width)
        if width[0] == 0:
            return Distribution(lo=total, probs=np.zeros(1))
        data = np.zeros(int(width[0]))
        future_add(off, slots, gains, rp, self.lo, self.off, self.data, lo,
                   np.array([0, width[0]], np.int64), data)
        return Distribution(lo=total + int(lo[0]), probs=data)

    def arrays(self) -> list[np.ndarray]:
        """The arrays in the order `of` reads them (how a store keeps them)."""
        return [self.flat, self.lo, self.off, self.data]

    @classmethod
    def of(cls, arrays: list[np.ndarray]) -> Futures | None:
        """Futures from `arrays`' arrays; None when they do not fit together."""
        flat, lo, off, data = arrays
        if not (len(flat) == len(lo) == len(off) - 1 and off[-1] == len(data)):
            return None
        return cls(flat, lo, off, data)


@nb.njit(cache=True, error_model="numpy", nogil=True)
def future_bounds(off, slots, gains, nlo, noff, lo, width):
    """Per state of a run of records (off: each state's records; slots: each record's next
    state in the next level, gains: its points), the range of its points still to come:
    from lo[i], width[i] of them (0: no record leads anywhere)."""
    for i in range(off.shape[0] - 1):
        a = 1 << 60
        b = -(1 << 60)
        for r in range(off[i], off[i + 1]):
            t = slots[r]
            w = noff[t + 1] - noff[t]
            if w == 0:
                continue
            x = nlo[t] + gains[r]
            a = min(a, x)
            b = max(b, x + w)
        if b < a:
            lo[i] = 0
            width[i] = 0
        else:
            lo[i] = a
            width[i] = b - a


@nb.njit(cache=True, error_model="numpy", nogil=True)
def future_add(off, slots, gains, rp, nlo, noff, ndata, lo, doff, data):
    """D(s) = sum of p * D(s') shifted by g over each state's records, into data[doff[i]:
    doff[i + 1]] (zero on entry; `future_bounds` laid the ranges out), the records in
    order."""
    for i in range(off.shape[0] - 1):
        base = doff[i] - lo[i]
        for r in range(off[i], off[i + 1]):
            t = slots[r]
            a = noff[t]
            w = noff[t + 1] - a
            at = base + nlo[t] + gains[r]
            p = rp[r]
            # slices: the loop compiles to SIMD
            dst = data[at:at + w]
            src = ndata[a:a + w]
            for j in range(w):
                dst[j] += p * src[j]


@nb.njit(cache=True, error_model="numpy")
def turn_successors(kd, nu, nf, mask, u, fl):
    """Flat indices (in a table of nu ucodes and nf flag sets) of every state one turn from
    the state (mask, u, fl) can lead to, whatever is thrown and chosen: each box the order
    rule lets the first throw or a later one fill, with each outcome class some hand of that
    throw gives (a tracked box whose every score is 0 never sets its flag: that state is
    not in the tables), and each box a five of a kind scored apart (Joker, bonus) may take.
    The sources of `successor_futures` for a position's moves."""
    c = kd.nd + 2
    one_m = np.full(1, mask, np.int64)
    one_u = np.full(1, u, np.int64)
    one_f = np.full(1, fl, np.int64)
    NI = np.empty((kd.nb, c, 1), np.int64)
    X = np.empty((kd.nb, c, 1), np.float32)
    rm = np.empty((kd.nb, 1), np.float32)
    out = np.empty(2 * kd.nb * (c + 7), np.int64)
    n = 0
    five = five_arrays(kd, 1)
    for fi in range(2):
        first = fi == 1
        box_targets(kd.order, kd.kind, kd.trk_bit, kd.face, kd.req_bit, kd.threshold,
                    kd.maxrem, kd.amount, kd.nd, one_m, one_u, one_f, first, nu, nf, NI, X,
                    rm)
        for b in range(kd.nb):
            for k in range(c):
                if NI[b, k, 0] >= 0 and kd.gives[fi, b, k]:
                    out[n] = NI[b, k, 0]
                    n += 1
        if kd.five_box >= 0 and mask >> kd.five_box & 1:
            five_placements(kd, one_m, one_u, one_f, first, five)
            for f in range(1, 7):
                for b in range(kd.nb):
                    code = five[0][f, b, 0]
                    if code >= 0:
                        out[n] = ((mask | (1 << b)) * nu + code) * nf + five[1][f, b, 0]
                        n += 1
    return np.unique(out[:n])


def _future_level(runs: list[tuple], n: int, gbits: int, slot_of: np.ndarray,
                  nxt: tuple[np.ndarray, np.ndarray, np.ndarray], pool: Executor | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The futures (lo, off, data) of a level's n states from their records (`_level_runs`'
    runs) and the next level's futures `nxt` (lo, off, data), whose states `slot_of`
    numbers (by flat index). Runs are added side by side on the pool's threads."""
    nlo, noff, ndata = nxt
    gmask = (1 << gbits) - 1
    parts = [(base, off, slot_of[rk >> gbits].astype(np.int64), rk & gmask, rp)
             for base, off, rk, rp in runs]
    lo = np.zeros(n, np.int64)
    width = np.zeros(n, np.int64)
    for base, off, slots, gains, _ in parts:
        k = len(off) - 1
        future_bounds(off, slots, gains, nlo, noff, lo[base:base + k], width[base:base + k])
    doff = np.zeros(n + 1, np.int64)
    np.cumsum(width, out=doff[1:])
    data = np.zeros(int(doff[-1]))

    def add(part: tuple) -> None:
        base, off, slots, gains, rp = part
        k = len(off) - 1
        future_add(off, slots, gains, rp, nlo, noff, ndata, lo[base:base + k],
                   doff[base:base + k + 1], data)

    if pool is None or len(parts) < 2:
        for part in parts:
            add(part)
    else:
        for fut in [pool.submit(add, part) for part in parts]:
            fut.result()
    return lo, doff, data


def _flat(states: np.ndarray, nu: int, nf: int) -> np.ndarray:
    """Flat table indices of (mask, ucode, flags) rows."""
    return (states[:, 0] * nu + states[:, 1]) * nf + states[:, 2]


@nb.njit(cache=True, error_model="numpy", nogil=True)
def _rows(flat, nu, nf):
    """(mask, ucode, flags) rows of flat table indices (a kernel: between two levels of a
    forward pass it runs alone, and numpy's three divisions and a stack took 2-3% of it)."""
    rows = np.empty((flat.shape[0], 3), np.int64)
    for i in range(flat.shape[0]):
        x = flat[i]
        rows[i, 0] = x // (nu * nf)
        rows[i, 1] = (x // nf) % nu
        rows[i, 2] = x % nf
    return rows


def _pool(threads: int) -> tuple[Executor | None, int]:
    workers = cpu_workers(threads)
    return (kernel_pool() if workers > 1 else None), workers


def _mass0(kd: object, instant: np.ndarray | None) -> np.ndarray:
    mass0 = np.array(kd.prob, dtype=np.float64)
    if instant is not None:
        mass0[instant] = 0.0
    return mass0


def reach_estimate(sizes: list[int], level: int) -> float:
    """About how many states a turn start with `level` boxes filled can lead to, from the
    number of reachable states per level (`sizes`, index = boxes filled): of a deeper
    level's states, the share whose boxes include a given set of `level` (the share of its
    masks that do)."""
    nb = len(sizes) - 1
    return sum(sizes[j] * math.comb(nb - level, j - level) / math.comb(nb, j)
               for j in range(level + 1, nb + 1))


def early_depth(sizes: list[int], reach: int) -> int:
    """The deepest level a table of futures should hold (`futures`'s `deepest`) so that a
    turn start beyond it leads to at most about `reach` reachable states (its forward pass,
    which visits a third to a half of them, stays within interactive time): YAHTZEE 3 (a
    fifth turn's start leads to some 24,000), Yatzy 4."""
    level = 0
    while level + 1 < len(sizes) - 1 and reach_estimate(sizes, level + 1) > reach:
        level += 1
    return level


def futures(kd: object, values: np.ndarray, levels: list[np.ndarray], budget: int,
            threads: int = 1, instant: np.ndarray | None = None,
            deepest: int = 4) -> Futures:
    """The futures of every reachable turn start of the first levels (0 = the empty
    sheet) under the policy of table `values`: a backward pass over every reachable state
    (`levels`: `model.reachable_states`), each level's futures from the next one's, keeping
    the first levels whose futures together take at most `budget` bytes (at most levels 0
    to `deepest`). Memory: two whole levels at a time (some 800 MB for YAHTZEE's middle
    levels), so it is made ahead (`python -m service.advisor build`), not for a request."""
    nu, nf = values.shape[1], values.shape[2]
    gbits = gain_bits(kd)
    pool, workers = _pool(threads)
    mass0 = _mass0(kd, instant)
    slot_of = np.full(values.size, -1, np.int32)
    full = np.sort(_flat(levels[-1], nu, nf))
    nflat = full
    nxt = (np.zeros(len(full), np.int64), np.arange(len(full) + 1, dtype=np.int64),
           np.ones(len(full)))
    kept: dict[int, tuple] = {}
    for level in range(len(levels) - 2, -1, -1):
        flat = np.sort(_flat(levels[level], nu, nf))
        runs = _level_runs(kd, values, _rows(flat, nu, nf), None, None, gbits, pool,
                           workers, None, mass0)
        slot_of[nflat] = np.arange(len(nflat))
        cur = _future_level(runs, len(flat), gbits, slot_of, nxt, pool)
        slot_of[nflat] = -1
        if level <= deepest:
            kept[level] = (flat, *cur)
        nflat, nxt = flat, cur
    size = 0
    chosen = []
    for level in sorted(kept):
        size += sum(a.nbytes for a in kept[level])
        if size > budget and chosen:
            break
        chosen.append(kept[level])
    return _merge(chosen)


def _merge(parts: list[tuple]) -> Futures:
    """One `Futures` of several sets of states (flat, lo, off, data), sorted by flat index."""
    flat = np.concatenate([p[0] for p in parts])
    lo = np.concatenate([p[1] for p in parts])
    width = np.concatenate([np.diff(p[2]) for p in parts])
    data = np.concatenate([p[3] for p in parts])
    start = np.concatenate([p[2][:-1] + sum(len(q[3]) for q in parts[:i])
                            for i, p in enumerate(parts)])
    order = np.argsort(flat, kind="stable")
    off = np.zeros(len(flat) + 1, np.int64)
    np.cumsum(width[order], out=off[1:])
    # each state's block, in the new order
    src = np.repeat(start[order] - off[:-1], width[order]) + np.arange(off[-1])
    return Futures(flat[order], lo[order], off, data[src])


def successor_futures(kd: object, values: np.ndarray, sources: np.ndarray, threads: int = 1,
                      instant: np.ndarray | None = None) -> Futures:
    """The futures of the turn starts `sources` (flat indices, one level: the states a turn
    from a position can lead to) under the policy of table `values`: the states they lead
    to, level by level (each level's records kept), then back from the full sheets. Only the
    states the policy reaches are visited; the sources' futures are kept. `instant`: the
    first-throw hands that win at once, left out (`forward`)."""
    nu, nf = values.shape[1], values.shape[2]
    full = (1 << kd.nb) - 1
    gbits = gain_bits(kd)
    pool, workers = _pool(threads)
    mass0 = _mass0(kd, instant)
    flats = [np.unique(np.asarray(sources, np.int64))]
    runs_of = []
    while len(flats[-1]) and flats[-1][0] // (nu * nf) != full:
        _check_level(int(flats[-1][0]), len(flats), kd.nb, "successor_futures")
        runs = _level_runs(kd, values, _rows(flats[-1], nu, nf), None, None, gbits, pool,
                           workers, None, mass0)
        runs_of.append(runs)
        flats.append(np.unique(np.concatenate([rk >> gbits for _, _, rk, _ in runs])))
    last = flats[-1]
    nxt = (np.zeros(len(last), np.int64), np.arange(len(last) + 1, dtype=np.int64),
           np.ones(len(last)))
    slot_of = np.full(values.size, -1, np.int32)
    for level in range(len(runs_of) - 1, -1, -1):
        nflat = flats[level + 1]
        slot_of[nflat] = np.arange(len(nflat))
        nxt = _future_level(runs_of[level], len(flats[level]), gbits, slot_of, nxt, pool)
        slot_of[nflat] = -1
    return Futures(flats[0], *nxt)
