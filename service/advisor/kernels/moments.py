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
    decisions_block,
    first_scored,
    five_choices,
    level_arrays,
    next_values,
)
from .steps import load_block, rethrow_mean, unflat
from .values import LANES, five_arrays, five_placements, read_only

NEG = -1e30


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
    legal, NUC, NFC = box_targets(kd.order, kd.kind, kd.trk_bit, kd.face, kd.req_bit,
                                  kd.threshold, kd.maxrem, kd.amount, nd, bm, bu, bf, first,
                                  NU, NF, NI, X, rm)
    next_values(T1, legal, kd.kind, nd, bm, NI, NUC, NFC, W1)
    next_values(T2, legal, kd.kind, nd, bm, NI, NUC, NFC, W2)
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
    ints = np.full((2, 7, L), -2, np.int64)  # two allocations, not four (see box_targets)
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
def policy_terminals(kd, T1, T2, first, sc, t1, t2):
    """Moments of the points still to come when each hand is scored now as the policy's
    score pass `sc` (`policy.score32`, its box per hand) scores it: t1[h, lane] = g +
    E[X'] and t2 its second moment, g the points of the box (bonuses included) and X' the
    future of the next state in tables T1 / T2."""
    _S, BB, NI, X, rm, ON, OG, _OB, _OS = sc
    L = BB.shape[1]
    fi = 1 if first else 0
    nbox = kd.nb
    nu = T1.shape[1]
    nf = T1.shape[2]
    c = kd.nd + 2
    W1 = np.zeros((nbox, c, L))
    W2 = np.zeros((nbox, c, L))
    for b in range(nbox):
        for k in range(c):
            for lane in range(L):
                i = NI[b, k, lane]
                if i >= 0:
                    m, u, f = unflat(i, nu, nf)
                    W1[b, k, lane] = T1[m, u, f]
                    W2[b, k, lane] = T2[m, u, f]
    for h in range(kd.nh):
        for lane in range(L):
            _, _, _, t1[h, lane], t2[h, lane] = scored_moments(kd.reward, kd.cls, fi, BB, X,
                                                               rm, W1, W2, h, lane)
    if kd.five_box < 0:
        return
    for f in range(1, 7):
        h = kd.five_hand[f]
        for lane in range(L):
            i = ON[f, lane]
            if i != -2:
                t1[h, lane], t2[h, lane] = placed_moments(T1, T2, i, OG[f, lane])


@nb.njit(cache=True, error_model="numpy", nogil=True)
def moments_level(kd, V, T1, T2, states):
    """Fill T1/T2 (float64) for every state of one level (same number of filled boxes), in
    blocks: the mean and second moment of the points still to come under the policy of the
    solver's table V (`policy.decisions_block`, the choices the exact distribution and the
    games of the advisor's play follow). The hands' moments at the last throw are those of
    scoring them (`policy_terminals`); a throw before, a hand kept whole or in part takes
    the mean of both moments over the rethrow of the keep the policy picks, and a hand the
    policy scores on the first throw those of scoring it then."""
    n = states.shape[0]
    L = LANES
    nh = kd.nh
    scf, scl, DEC, bm, bu, bf = level_arrays(kd, L)
    t1l = np.empty((nh, L))
    t2l = np.empty((nh, L))
    t1f = np.empty((nh, L))
    t2f = np.empty((nh, L))
    cur = np.empty((nh, 2 * L))  # the two moments side by side: one rethrow for both
    E = np.empty((kd.nk, 2 * L))
    for bi in range((n + L - 1) // L):
        load_block(states, bi, bm, bu, bf)
        decisions_block(kd, V, bm, bu, bf, scf, scl, DEC)
        later = bm[0] < 0  # False, typed as a plain bool
        policy_terminals(kd, T1, T2, later, scl, t1l, t2l)
        if first_scored(kd):
            policy_terminals(kd, T1, T2, not later, scf, t1f, t2f)
        else:
            t1f[:, :] = t1l
            t2f[:, :] = t2l
        last_f = kd.throws == 1
        for h in range(nh):
            for lane in range(L):
                cur[h, lane] = t1f[h, lane] if last_f else t1l[h, lane]
                cur[h, L + lane] = t2f[h, lane] if last_f else t2l[h, lane]
        for t in range(kd.throws - 1, 0, -1):
            rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur, E, 2 * L)
            for h in range(nh):
                for lane in range(L):
                    d = DEC[t, h, lane]
                    if d < 0:
                        cur[h, lane] = t1f[h, lane]
                        cur[h, L + lane] = t2f[h, lane]
                    else:
                        cur[h, lane] = E[d, lane]
                        cur[h, L + lane] = E[d, L + lane]
        for lane in range(L):
            if bi * L + lane < n:
                a1 = 0.0
                a2 = 0.0
                for h in range(nh):
                    p = kd.prob[h]
                    a1 += p * cur[h, lane]
                    a2 += p * cur[h, L + lane]
                T1[bm[lane], bu[lane], bf[lane]] = a1
                T2[bm[lane], bu[lane], bf[lane]] = a2
