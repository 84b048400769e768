"""Moments of the final score under optimal play: the mean and the exact second moment.

The solver's tables (`solver.Solution.values`, float32) hold the expected score still to come
from each state at the start of a turn. This module re-solves the same game in float64 and,
in the same pass, computes the second moment of the score still to come under the policy the
values define: at a placement the future is ``gain + X'`` so ``E[(gain + X')^2] = gain^2 +
2 gain E[X'] + E[X'^2]``; within a turn every choice (a box, a keep, "em baixo") is made by
the float64 mean and the second moment follows the choice; rethrows average both moments.

Ties between choices of equal mean are broken in a fixed order, which fixes the policy (and
so the variance) where the mean alone does not: scoring now (or keeping every die) before
rethrowing, a keep before its sub-multisets (the running maximum over "keep minus one die"
moves only on a strictly larger mean), the box earlier on the sheet before a later one.

The block kernels here mirror `values.score_pass` / `values.keep_pass` / `values.turn_pass`
(lanes of states side by side); `score2` also records, per hand, the box chosen (its next
state's flat index, the points gained, the box and its score), which `turn_view.TurnView` reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .policy import box_targets, five_choices, next_values
from .steps import rethrow_mean
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
            b = int(BB[h, lane])
            c = kd.cls[fi, b, h]
            g = np.float64(kd.reward[fi, b, h]) * rm[b, lane] + X[b, c, lane]
            w1 = W1[b, c, lane]
            S1[h, lane] = g + w1
            S2[h, lane] = g * g + 2.0 * g * w1 + W2[b, c, lane]
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
            b2 = 0.0
            if i >= 0:
                g = OG[f, lane]
                bb = OB[f, lane]
                nmask = bm[lane] | (1 << bb)
                nu = five[0][f, bb, lane]
                nfl = five[1][f, bb, lane]
                b2 = g * g + 2.0 * g * T1[nmask, nu, nfl] + T2[nmask, nu, nfl]
            S2[h, lane] = b2
            NX[h, lane] = i
            GN[h, lane] = OG[f, lane]
            BX[h, lane] = OB[f, lane]
            SC[h, lane] = OS[f, lane]


@nb.njit(cache=True, error_model="numpy")
def keeps2(kd, cur1, cur2, E1, E2, M1, M2):
    """From hand values at throw t+1 (cur1, cur2): keep values after throw t.

    E1/E2[k]: moments of keeping k and rethrowing the rest ("em baixo" applied: a keep takes
    its mirror image's moments when that is worth more); M1/M2[k]: the best keep among k and
    its sub-multisets.
    """
    L = cur1.shape[1]
    # each moment is an average over the rethrow of its own
    rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur1, E1, L)
    rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur2, E2, L)
    if kd.em_baixo:
        for k in range(kd.n_small):
            mk = kd.mirror[k]
            if mk > k:
                for lane in range(L):
                    if E1[mk, lane] > E1[k, lane]:
                        E1[k, lane] = E1[mk, lane]
                        E2[k, lane] = E2[mk, lane]
                    elif E1[k, lane] > E1[mk, lane]:
                        E1[mk, lane] = E1[k, lane]
                        E2[mk, lane] = E2[k, lane]
    for k in range(kd.nk):
        for lane in range(L):
            M1[k, lane] = E1[k, lane]
            M2[k, lane] = E2[k, lane]
    for p in range(kd.pairs.shape[0]):
        k = kd.pairs[p, 0]
        s = kd.pairs[p, 1]
        for lane in range(L):
            # arithmetic blends: they vectorise where conditional selects do not
            a = M1[s, lane]
            c = M1[k, lane]
            w = np.float64(a > c)
            M2[k, lane] = w * M2[s, lane] + (1.0 - w) * M2[k, lane]
            M1[k, lane] = np.maximum(a, c)


@nb.njit(cache=True, error_model="numpy")
def turn2(kd, T1, T2, bm, bu, bf, S1f, S2f, NXf, GNf, S1l, S2l, NXl, GNl, cur1, cur2):
    """One turn for the block's states: the moments of the hands at throw 1 in cur1/cur2."""
    L = bm.shape[0]
    later = bm[0] < 0  # False, typed as a plain bool
    BX = np.empty((kd.nh, L), np.int64)
    SC = np.empty((kd.nh, L))
    score2(kd, T1, T2, bm, bu, bf, later, S1l, S2l, NXl, GNl, BX, SC)
    if kd.first_differs or kd.order == 3:
        score2(kd, T1, T2, bm, bu, bf, not later, S1f, S2f, NXf, GNf, BX, SC)
    else:
        S1f[:, :] = S1l
        S2f[:, :] = S2l
    E1 = np.empty((kd.nk, L))
    E2 = np.empty((kd.nk, L))
    M1 = np.empty((kd.nk, L))
    M2 = np.empty((kd.nk, L))
    for h in range(kd.nh):
        for lane in range(L):
            cur1[h, lane] = S1l[h, lane]
            cur2[h, lane] = S2l[h, lane]
    for _ in range(kd.throws - 1):
        keeps2(kd, cur1, cur2, E1, E2, M1, M2)
        for h in range(kd.nh):
            k = kd.hand_keep[h]
            for lane in range(L):
                cur1[h, lane] = M1[k, lane]
                cur2[h, lane] = M2[k, lane]
    for h in range(kd.nh):
        for lane in range(L):
            w = np.float64(S1f[h, lane] >= cur1[h, lane])
            cur2[h, lane] = w * S2f[h, lane] + (1.0 - w) * cur2[h, lane]
            cur1[h, lane] = w * S1f[h, lane] + (1.0 - w) * cur1[h, lane]


@nb.njit(cache=True, error_model="numpy", nogil=True)
def moments_level(kd, T1, T2, states):
    """Fill T1/T2 for every state of one level (same number of filled boxes), in blocks."""
    n = states.shape[0]
    L = LANES
    nh = kd.nh
    nblocks = (n + L - 1) // L
    S1f = np.empty((nh, L))
    S2f = np.empty((nh, L))
    S1l = np.empty((nh, L))
    S2l = np.empty((nh, L))
    NXf = np.empty((nh, L), np.int64)
    NXl = np.empty((nh, L), np.int64)
    GNf = np.empty((nh, L))
    GNl = np.empty((nh, L))
    cur1 = np.empty((nh, L))
    cur2 = np.empty((nh, L))
    bm = np.empty(L, np.int64)
    bu = np.empty(L, np.int64)
    bf = np.empty(L, np.int64)
    for bi in range(nblocks):
        for lane in range(L):
            i = min(bi * L + lane, n - 1)
            bm[lane] = states[i, 0]
            bu[lane] = states[i, 1]
            bf[lane] = states[i, 2]
        turn2(kd, T1, T2, bm, bu, bf, S1f, S2f, NXf, GNf, S1l, S2l, NXl, GNl, cur1, cur2)
        for lane in range(L):
            if bi * L + lane < n:
                a1 = 0.0
                a2 = 0.0
                for h in range(nh):
                    p = kd.prob[h]
                    a1 += p * cur1[h, lane]
                    a2 += p * cur2[h, lane]
                T1[bm[lane], bu[lane], bf[lane]] = a1
                T2[bm[lane], bu[lane], bf[lane]] = a2
