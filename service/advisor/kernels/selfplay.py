"""Numba kernels of games played by the advisor's own policy with seeded dice: `play` (any
strategy, its parts' tables as tuples, saved throws included) and `play_lanes` (one part, 32
games side by side). `analysis.simulate` runs them from a position.

Both give the final totals; given a `trace` array with a row per game (else an empty one,
``(0, 0)``), they also write in it, turn by turn, the points each placement gave beyond its
box's score (the bonuses it earned)."""

from __future__ import annotations

import numba as nb
import numpy as np

from .moments import score2
from .policy import policy_block
from .steps import unflat
from .turn import turn_tables2
from .values import LANES


@nb.njit(cache=True, error_model="numpy")
def _draw(kd, size, keep_hand, k):
    """Rethrow the dice not in keep k: the hand that results (index)."""
    while size[k] < kd.nd:
        k = kd.add[k, np.random.randint(1, 7)]
    return keep_hand[k]


@nb.njit(cache=True, error_model="numpy")
def _terminals(kds, tabs, st, first, t1, choice):
    """Best value of scoring each hand now over the parts (relative to the parts' values),
    with the choice: part, next state (flat), points."""
    nh = kds[0].nh
    for h in range(nh):
        t1[h] = -1e300
    one_m = np.empty(1, np.int64)
    one_u = np.empty(1, np.int64)
    one_f = np.empty(1, np.int64)
    s1 = np.empty((nh, 1))
    s2 = np.empty((nh, 1))
    nx = np.empty((nh, 1), np.int64)
    gn = np.empty((nh, 1))
    bx = np.empty((nh, 1), np.int64)
    sc = np.empty((nh, 1))
    for p in range(len(kds)):
        kd = kds[p]
        tab = tabs[p]
        if st[p, 0] == (1 << kd.nb) - 1:
            continue
        one_m[0] = st[p, 0]
        one_u[0] = st[p, 1]
        one_f[0] = st[p, 2]
        score2(kd, tab, tab, one_m, one_u, one_f, first, s1, s2, nx, gn, bx, sc)
        base = np.float64(tab[st[p, 0], st[p, 1], st[p, 2]])
        for h in range(nh):
            v = s1[h, 0] - base
            if bx[h, 0] >= 0 and v > t1[h]:
                t1[h] = v
                choice[h, 0] = p
                choice[h, 1] = nx[h, 0]
                choice[h, 2] = int(np.rint(gn[h, 0]))
                choice[h, 3] = int(np.rint(sc[h, 0]))


@nb.njit(cache=True, error_model="numpy", inline="always")
def _turn_start(kd, resume, start_throw, start_hand, size, keep_hand):
    """The throw and the hand a turn starts from: the position's own when the game resumes
    in a turn already thrown (`resume`), else a first throw of every die."""
    if resume:
        return start_throw, start_hand
    return 1, _draw(kd, size, keep_hand, 0)


@nb.njit(cache=True, error_model="numpy", nogil=True)
def play(kds, tabs, st0, total0, saved0, base_throws, saves, throw_value, n_games, seed,
         start_throw, start_hand, size, keep_hand, trace):
    """Final totals of `n_games` games from a position (seeded); `trace`: see the module.

    st0[p] = (mask, upper code, flags) of each part; `start_hand` >= 0: the first turn is
    already at throw `start_throw` with that hand.
    """
    np.random.seed(seed)
    nparts = len(kds)
    kd0 = kds[0]
    nh = kd0.nh
    out = np.empty(n_games, np.int64)
    tracing = trace.shape[0] > 0
    t1f = np.empty(nh)
    t1l = np.empty(nh)
    cf = np.zeros((nh, 4), np.int64)
    cl = np.zeros((nh, 4), np.int64)
    for g in range(n_games):
        st = st0.copy()
        total = total0
        saved = saved0
        turn = 0
        first_turn = True
        while True:
            open_boxes = 0
            for p in range(nparts):
                for b in range(kds[p].nb):
                    if not (st[p, 0] >> b & 1):
                        open_boxes += 1
            if open_boxes == 0:
                break
            last = base_throws + (saved if saves else 0)
            tv = throw_value if open_boxes > 1 else 0.0
            _terminals(kds, tabs, st, True, t1f, cf)
            _terminals(kds, tabs, st, False, t1l, cl)
            t0 = start_throw if (first_turn and start_hand >= 0) else 1
            _, _, _, _, dec = turn_tables2(kd0, t1f, t1f, t1l, t1l, t0, last, tv)
            t, h = _turn_start(kd0, first_turn and start_hand >= 0, start_throw, start_hand,
                               size, keep_hand)
            first_turn = False
            while t < last and dec[t, h] >= 0:
                h = _draw(kd0, size, keep_hand, dec[t, h])
                t += 1
            c = cf[h] if t == 1 else cl[h]
            p = c[0]
            nu = tabs[p].shape[1]
            nf = tabs[p].shape[2]
            st[p, 0], st[p, 1], st[p, 2] = unflat(c[1], nu, nf)
            total += c[2]
            if tracing:
                trace[g, turn] = c[2] - c[3]
            turn += 1
            if saves:
                saved += base_throws - t
        out[g] = total
    return out


@nb.njit(cache=True, error_model="numpy", nogil=True)
def play_lanes(kd, V, st0, total0, n_games, seed, start_throw, start_hand, size, keep_hand,
               trace):
    """`play` for a one-part strategy without saved throws, 32 games side by side (the
    policy of a block of states at a time, `policy.policy_block`)."""
    np.random.seed(seed)
    L = LANES
    nh = kd.nh
    full = (1 << kd.nb) - 1
    NU = V.shape[1]
    NF = V.shape[2]
    out = np.empty(n_games, np.int64)
    tracing = trace.shape[0] > 0
    NXf = np.empty((nh, L), np.int64)
    NXl = np.empty((nh, L), np.int64)
    BXf = np.empty((nh, L), np.int64)
    BXl = np.empty((nh, L), np.int64)
    GNf = np.empty((nh, L))
    GNl = np.empty((nh, L))
    SCf = np.empty((nh, L))
    SCl = np.empty((nh, L))
    DEC = np.zeros((kd.throws + 1, nh, L), np.int64)
    bm = np.empty(L, np.int64)
    bu = np.empty(L, np.int64)
    bf = np.empty(L, np.int64)
    tot = np.empty(L, np.int64)
    for g0 in range(0, n_games, L):
        for lane in range(L):
            bm[lane] = st0[0]
            bu[lane] = st0[1]
            bf[lane] = st0[2]
            tot[lane] = total0
        first_turn = True
        turn = 0
        while bm[0] != full:
            policy_block(kd, V, bm, bu, bf, NXf, GNf, BXf, SCf, NXl, GNl, BXl, SCl, DEC)
            for lane in range(L):
                t, h = _turn_start(kd, first_turn and start_hand >= 0, start_throw, start_hand,
                                   size, keep_hand)
                while t < kd.throws and DEC[t, h, lane] >= 0:
                    h = _draw(kd, size, keep_hand, DEC[t, h, lane])
                    t += 1
                if t == 1:
                    nx = NXf[h, lane]
                    gain = int(np.rint(GNf[h, lane]))
                    score = SCf[h, lane]
                else:
                    nx = NXl[h, lane]
                    gain = int(np.rint(GNl[h, lane]))
                    score = SCl[h, lane]
                tot[lane] += gain
                if tracing and g0 + lane < n_games:
                    trace[g0 + lane, turn] = gain - int(np.rint(score))
                bm[lane], bu[lane], bf[lane] = unflat(nx, NU, NF)
            first_turn = False
            turn += 1
        for lane in range(L):
            if g0 + lane < n_games:
                out[g0 + lane] = tot[lane]
    return out
