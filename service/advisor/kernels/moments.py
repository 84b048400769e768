"""Moments of the final score under the advisor's play: the mean and the exact second
moment of the points still to come from every state.

The solver's tables (`solver.Solution.values`, float32) hold the expected score still to come
from each state at the start of a turn; their choices (`policy.decisions_block`: the best box
of each hand, the best keep of each hand and throw, ties broken in a fixed order) are the
advisor's policy, the one the exact distributions (`distribution.py`) and the games of the
advisor's play follow. `moments_level` computes, in float64, the mean and second moment of
the points still to come under that same policy: at a placement the future is ``gain + X'``
so ``E[(gain + X')^2] = gain^2 + 2 gain E[X'] + E[X'^2]``; a rethrow averages both moments.
So a distribution's mean and SD and these moments are figures of one policy: they agree to
float rounding (before, a float64 re-solve made its own choices, and near-ties came out
apart: an SD 0.004 off the distribution's).

`score2` is the float64 score pass of one position's turn (`turn_view.TurnView`,
`positions.terminals64`): per hand the box of the best float64 value of the tables it is
given, with both moments, its next state, points and score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .policy import (
    box_targets,
    first_scored,
    five_choices,
    next_values,
    score32,
    score_passes,
)
from .steps import classes, keep_step_pick, load_block, rethrow_mean, unflat
from .values import LANES, five_arrays, five_placements, read_only

NEG = -1e30

#: Lanes (states) of a block of `moments_level`: four times the solver's, which spreads each
#: keep's and each sub-keep link's fixed costs (row views, the vectorised loops' set-up)
#: over more states. Yatzy with an upper bonus on one thread: 2.29 s at 64 lanes, 2.22 at 96,
#: 2.20 at 128 (wider rows fit the core's cache less well; at 32 lanes the table took 4.7 s
#: before the changes that came with this constant).
MOMENT_LANES = 4 * LANES

#: A placement's record in `policy_terminals`, per box, outcome class and lane: the upper
#: bonus X, the next state's E[X'] and E[X'^2], and rm (0 where the box's requirement is
#: unmet).
RECORD = 4


@dataclass
class Moments:
    """Float64 mean and second moment of the score still to come, per state of one part.

    ``m1[mask, ucode, flags]`` is the float64 re-solve of ``Solution.values``;
    ``m2`` the second moment under the same policy. NaN for unreachable states.
    """

    m1: np.ndarray
    m2: np.ndarray

    def __post_init__(self) -> None:
        self.m1, self.m2 = read_only(self.m1), read_only(self.m2)  # one numba type (solver)

    def at(self, mask: int, code: int, flags: int) -> tuple[float, float]:
        """(mean, second moment) of the score still to come from a state."""
        return float(self.m1[mask, code, flags]), float(self.m2[mask, code, flags])


# --------------------------------------------------------------------------- block kernels


@nb.njit(cache=True, error_model="numpy", inline="always")
def second_moment(g, m1, m2):
    """E[(g + X)^2] of points g gained now and a future X of mean m1 and second moment m2."""
    return g * g + 2.0 * g * m1 + m2


@nb.njit(cache=True, error_model="numpy", inline="always")
def scored_moments(reward, cls, fi, BB, X, rm, W1, W2, h, lane):
    """Scoring hand h in lane `lane` in its chosen box BB[h, lane]: (box, outcome class,
    points gained g with its bonuses, g + E[X'], E[(g + X')^2]), X' the next state's future
    (W1 / W2 by box and class). `reward` and `cls` are the kernel data's: passed as arrays,
    as a function that takes the kernel data counts a reference to each of its arrays."""
    b = int(BB[h, lane])
    c = cls[fi, b, h]
    g = np.float64(reward[fi, b, h]) * rm[b, lane] + X[b, c, lane]
    w1 = W1[b, c, lane]
    return b, c, g, g + w1, second_moment(g, w1, W2[b, c, lane])


@nb.njit(cache=True, error_model="numpy", inline="always")
def placed_moments(T1, T2, i, g):
    """(g + E[X'], E[(g + X')^2]) of a hand written for g points into the next state of flat
    index i (-1: no box may take it, g is 0 then), X' that state's future in T1 / T2: the
    five-of-a-kind hands that the Joker and bonus rules score apart (`policy.five_choices`)."""
    w1 = 0.0
    w2 = 0.0
    if i >= 0:
        m, u, f = unflat(i, T1.shape[1], T1.shape[2])
        w1 = T1[m, u, f]
        w2 = T2[m, u, f]
    return g + w1, second_moment(g, w1, w2)


@nb.njit(cache=True, error_model="numpy")
def score2(kd, T1, T2, bm, bu, bf, first, S1, S2, NX, GN, BX, SC):
    """For the states of the block's lanes: scoring hand h now.

    S1[h, l] = best (gain + E[X']) over legal boxes, S2 its second moment, NX the flat index
    of the next state, GN the points gained (box score and bonuses), BX the box (-1: none
    legal) and SC the box's score. Mirrors
    `values.score_pass` (same Joker and bonus rules), in float64. The best box of each hand
    is found first (a vectorised running maximum), its moments and next state after.
    """
    L = bm.shape[0]
    nd = kd.nd
    nbox = kd.nb
    fi = 1 if first else 0
    NU = T1.shape[1]
    NF = T1.shape[2]
    W1 = np.full((nbox, nd + 2, L), NEG)  # NEG where the box may not be filled
    W2 = np.zeros((nbox, nd + 2, L))
    X = np.empty((nbox, nd + 2, L))
    NI = np.empty((nbox, nd + 2, L), np.int64)
    rm = np.empty((nbox, L))
    BB = np.zeros((kd.nh, L))  # best box so far, as a float: blends vectorise, selects not
    for h in range(kd.nh):
        for lane in range(L):
            S1[h, lane] = NEG
    legal = box_targets(kd.order, kd.kind, kd.trk_bit, kd.face, kd.req_bit, kd.threshold,
                        kd.maxrem, kd.amount, nd, bm, bu, bf, first, NU, NF, NI, X, rm)
    next_values(T1, legal, kd.kind, nd, NI, W1)
    next_values(T2, legal, kd.kind, nd, NI, W2)
    for b in range(nbox):
        if not (legal >> b & 1):
            continue
        R = kd.reward[fi, b]
        C = kd.cls[fi, b]
        rmb = rm[b]
        for h in range(kd.nh):
            r = np.float64(R[h])
            c = C[h]
            w = W1[b, c]
            x = X[b, c]
            s = S1[h]
            bb = BB[h]
            for lane in range(L):
                v = r * rmb[lane] + x[lane] + w[lane]
                better = np.float64(v > s[lane])
                bb[lane] = better * b + (1.0 - better) * bb[lane]
                s[lane] = np.maximum(v, s[lane])
    for h in range(kd.nh):
        for lane in range(L):
            b, c, g, S1[h, lane], S2[h, lane] = scored_moments(kd.reward, kd.cls, fi, BB, X,
                                                               rm, W1, W2, h, lane)
            NX[h, lane] = NI[b, c, lane]
            GN[h, lane] = g
            BX[h, lane] = b if NI[b, c, lane] >= 0 else -1
            SC[h, lane] = np.float64(kd.reward[fi, b, h]) * rm[b, lane]
    if kd.five_box < 0:
        return
    # n equal dice on a sheet whose five-of-a-kind box is filled: Joker and bonus rules
    ints = np.full((2, 7, L), -2, np.int64)  # two allocations, not four: a score pass
    # of one state spends much of its time in them
    floats = np.empty((2, 7, L))
    ON, OB = ints[0], ints[1]
    OG, OS = floats[0], floats[1]
    five = five_arrays(kd, L)
    five_placements(kd, bm, bu, bf, first, five)
    five_choices(five, kd.five_box, kd.five_hand, T1, bm, S1, ON, OG, OB, OS)
    for f in range(1, 7):
        h = kd.five_hand[f]
        for lane in range(L):
            i = ON[f, lane]
            if i == -2:
                continue
            _, S2[h, lane] = placed_moments(T1, T2, i, OG[f, lane])
            NX[h, lane] = i
            GN[h, lane] = OG[f, lane]
            BX[h, lane] = OB[f, lane]
            SC[h, lane] = OS[f, lane]


@nb.njit(cache=True, error_model="numpy")
def hand_records(kd, L):
    """For `policy_terminals`, by [first throw, hand, box]: where the record of scoring the
    hand in the box starts (box and outcome class, `RECORD` values a lane, L lanes) and the
    box's points (float64). Once a level: the hands' loop then reads two values a box."""
    nf = kd.reward.shape[0]
    c = kd.nd + 2
    off = np.empty((nf, kd.nh, kd.nb), np.int64)
    pts = np.empty((nf, kd.nh, kd.nb))
    for fi in range(nf):
        for h in range(kd.nh):
            for b in range(kd.nb):
                off[fi, h, b] = (b * c + kd.cls[fi, b, h]) * L * RECORD
                pts[fi, h, b] = np.float64(kd.reward[fi, b, h])
    return off, pts


@nb.njit(cache=True, error_model="numpy")
def hand_moments(nh, nb, BB, off, pts, P, TM):
    """TM[h, lane] = g + E[X'] and TM[h, L + lane] = E[(g + X')^2] of each hand scored in
    its box BB[h, lane], from the records P (`policy_terminals`) and `hand_records`' off and
    pts (their rows for the throw, flat): g = points * rm + X, as `scored_moments` has it.

    A scalar loop: a vector pass per distinct box of a hand (two or three in a block) came
    out slower. Flat arrays and unsigned indices (numba wraps no negative index for them):
    the loop takes 2/3 of the time it took on the 3-D arrays. Its own function, with few
    arrays: written in the caller, the loop spilled registers."""
    L = BB.shape[1]
    uL = np.uint64(L)
    one = np.uint64(1)
    for h in range(nh):
        oh = np.uint64(h * nb)
        t = TM[h]
        bh = BB[h]
        for lane in range(L):
            ul = np.uint64(lane)
            b = np.uint64(bh[lane])
            o = np.uint64(off[oh + b]) + ul * np.uint64(RECORD)
            g = pts[oh + b] * P[o + np.uint64(3)] + P[o]
            w1 = P[o + one]
            t[ul] = g + w1
            t[uL + ul] = second_moment(g, w1, P[o + np.uint64(2)])


@nb.njit(cache=True, error_model="numpy")
def policy_terminals(kd, T1, T2, off, pts, first, sc, P, TM):
    """Moments of the points still to come when each hand is scored now as the policy's
    score pass `sc` (`policy.score32`, its box per hand) scores it: TM[h, lane] = g +
    E[X'] and TM[h, L + lane] its second moment, g the points of the box (bonuses included)
    and X' the future of the next state in tables T1 / T2 (`scored_moments`,
    `placed_moments`).

    The placements' records first (P, `RECORD` values a box, outcome class and lane: the
    tables read once a placement), then `hand_moments` reads each hand's from its box."""
    _S, BB, NI, X, rm, ON, OG, _OB, _OS = sc
    L = BB.shape[1]
    fi = 1 if first else 0
    nbox = kd.nb
    c = kd.nd + 2
    F1 = T1.reshape(T1.size)
    F2 = T2.reshape(T2.size)
    for b in range(nbox):
        # a hand's box is legal in its lane, or box 0 where no box is (its record is 0)
        used = b == 0
        for lane in range(L):
            if NI[b, 0, lane] >= 0:
                used = True
        if not used:
            continue
        for k in range(classes(kd.kind[b], kd.nd)):
            o = (b * c + k) * L * RECORD
            for lane in range(L):
                i = NI[b, k, lane]
                q = o + lane * RECORD
                P[q] = X[b, k, lane]
                P[q + 3] = rm[b, lane]
                if i >= 0:
                    P[q + 1] = F1[i]
                    P[q + 2] = F2[i]
                else:
                    P[q + 1] = 0.0
                    P[q + 2] = 0.0
    hand_moments(kd.nh, nbox, BB, off[fi].reshape(off[fi].size),
                 pts[fi].reshape(pts[fi].size), P, TM)
    if kd.five_box < 0:
        return
    for f in range(1, 7):
        h = kd.five_hand[f]
        for lane in range(L):
            i = ON[f, lane]
            if i != -2:
                TM[h, lane], TM[h, L + lane] = placed_moments(T1, T2, i, OG[f, lane])


@nb.njit(cache=True, error_model="numpy", nogil=True)
def moments_level(kd, V, T1, T2, states, out):
    """Fill T1/T2 (float64) for every state of one level (same number of filled boxes), in
    blocks of `MOMENT_LANES`: the mean and second moment of the points still to come under
    the policy of the solver's table V (that of `policy.decisions_block`, the choices the
    exact distribution and the games of the advisor's play follow). The hands' moments at
    the last throw are those of scoring them (`policy_terminals`); a throw before, a hand
    kept whole or in part takes the mean of both moments over the rethrow of the keep the
    policy picks, and a hand the policy scores on the first throw those of scoring it then.

    With a table `out` (a writable V, whose read-only view is V; empty: none), the level's
    values too, as `values.solve_level` makes them: the policy's float32 steps are the
    solver's (a hand's value at the first throw the greater of scoring it and its best
    keep; summed in float64 in hand order, then rounded), so one pass makes both tables,
    the same to the bit as the solver's (`solver.solve_with_moments`).

    The policy's keeps are `policy.decide32`'s, taken throw by throw beside the moments
    (the same float32 steps: rethrow, `steps.keep_step_pick`, scoring on the first throw
    where that is at least the best keep's value), with the keeps as int16 and no DEC
    table. The moments sit in E's hand rows, both side by side (one rethrow for both); a
    hand's keep is read into its row in place (a hand's keep is itself or a smaller one,
    except a mirrored one with em baixo: then through `cur`), and the first throw's are
    summed as they are read. The sums run in the order they ran with DEC: the tables are
    the same to the bit (4.7 s to 2.2 for Yatzy with an upper bonus on one thread)."""
    n = states.shape[0]
    L = MOMENT_LANES
    nh = kd.nh
    nk = kd.nk
    ns = kd.n_small
    scf, scl = score_passes(kd, L)
    bm = np.empty(L, np.int64)
    bu = np.empty(L, np.int64)
    bf = np.empty(L, np.int64)
    off, pts = hand_records(kd, L)
    P = np.zeros(kd.nb * (kd.nd + 2) * L * RECORD)
    E = np.empty((nk, 2 * L))  # the two moments side by side: one rethrow for both
    direct = True  # the hands' keeps are the last keeps, in hand order (`model.make_keeps`)
    for h in range(nh):
        direct &= kd.hand_keep[h] == ns + h
    # the last throw's moments are written into E's hand rows (else copied there); the first
    # throw's are the same where that throw scores as the others: a hand the policy scores
    # on the first throw is then one it would score after the last, keeping every die on the
    # way (its value at no throw is above its score), so its rows are unchanged on that lane
    tl = E[ns:ns + nh] if direct else np.empty((nh, 2 * L))
    tf = np.empty((nh, 2 * L)) if first_scored(kd) else tl
    cur = np.empty((nh, 2 * L)) if kd.em_baixo else tl
    E32 = np.empty((nk, L), np.float32)
    M32 = np.empty((nk, L), np.float32)
    A = np.empty((nk, L), np.int16)
    acc = np.empty(2 * L)
    values = out.shape[0] > 0
    acc32 = np.empty(L)  # the level's values, with `out`
    hands = kd.hand_keep
    none = hands[:0]  # a rethrow of E whose hand rows are already in place
    for bi in range((n + L - 1) // L):
        load_block(states, bi, bm, bu, bf)
        later = bm[0] < 0  # False, typed as a plain bool
        score32(kd, V, bm, bu, bf, later, scl)
        policy_terminals(kd, T1, T2, off, pts, later, scl, P, tl)
        if first_scored(kd):
            score32(kd, V, bm, bu, bf, not later, scf)
            policy_terminals(kd, T1, T2, off, pts, not later, scf, P, tf)
        for lane in range(2 * L):
            acc[lane] = 0.0
        for lane in range(L):
            acc32[lane] = 0.0
        if kd.throws == 1:
            for h in range(nh):
                p = kd.prob[h]
                fh = tf[h]
                for lane in range(2 * L):
                    acc[lane] += p * fh[lane]
            if values:
                for h in range(nh):
                    p = kd.prob[h]
                    sl = scl[0][h]
                    sf = scf[0][h]
                    for lane in range(L):
                        acc32[lane] += p * np.float64(np.maximum(sf[lane], sl[lane]))
        else:
            Sl = scl[0]
            Sf = scf[0]
            for h in range(nh):
                e32 = E32[hands[h]]
                for lane in range(L):
                    e32[lane] = Sl[h, lane]
                if not direct:
                    e = E[hands[h]]
                    for lane in range(2 * L):
                        e[lane] = tl[h, lane]
            for t in range(kd.throws - 1, 0, -1):
                rethrow_mean(kd.add, none, ns, E32, E32, L)
                keep_step_pick(kd.em_baixo, kd.mirror, ns, kd.pairs, E32, M32, A, L)
                rethrow_mean(kd.add, none, ns, E, E, 2 * L)
                if t > 1:
                    for h in range(nh):
                        k = hands[h]
                        mk = M32[k]
                        e32 = E32[k]
                        for lane in range(L):
                            e32[lane] = mk[lane]
                        ak = A[k]
                        ch = cur[h] if kd.em_baixo else E[k]
                        for lane in range(L):
                            ul = np.uint64(lane)
                            ea = E[np.uint64(ak[lane])]
                            ch[ul] = ea[ul]
                            ch[np.uint64(L) + ul] = ea[np.uint64(L) + ul]
                    if kd.em_baixo:
                        for h in range(nh):
                            e = E[hands[h]]
                            for lane in range(2 * L):
                                e[lane] = cur[h, lane]
                else:
                    for h in range(nh):
                        k = hands[h]
                        p = kd.prob[h]
                        mk = M32[k]
                        ak = A[k]
                        sf = Sf[h]
                        fh = tf[h]
                        for lane in range(L):
                            ul = np.uint64(lane)
                            ea = E[np.uint64(ak[lane])]
                            now = sf[lane] >= mk[lane]  # scored on the first throw
                            v1 = fh[ul] if now else ea[ul]
                            v2 = fh[np.uint64(L) + ul] if now else ea[np.uint64(L) + ul]
                            acc[ul] += p * v1
                            acc[np.uint64(L) + ul] += p * v2
                    if values:
                        for h in range(nh):
                            p = kd.prob[h]
                            mk = M32[hands[h]]
                            sf = Sf[h]
                            for lane in range(L):
                                acc32[lane] += p * np.float64(np.maximum(sf[lane], mk[lane]))
        for lane in range(L):
            if bi * L + lane < n:
                T1[bm[lane], bu[lane], bf[lane]] = acc[lane]
                T2[bm[lane], bu[lane], bf[lane]] = acc[L + lane]
                if values:
                    out[bm[lane], bu[lane], bf[lane]] = np.float32(acc32[lane])
