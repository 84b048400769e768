"""The advisor's policy for a block of states, in float32 like the solver: for every hand the
box it is scored in (next state, points) and for every throw the keep it is rethrown from.

This is `moments.turn2` without the second moment, on the solver's own float32 tables (the
values `moves.suggest` ranks moves by), at the float32 kernels' speed: the exact forward
distribution (`distribution.py`) and the games of the advisor's play (`selfplay.py`) follow
it. Ties break as in `moments.py`: scoring before rethrowing, a keep before its
sub-multisets, the earlier box before a later one.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .model import KIND_TRACKED, KIND_UPPER
from .steps import best_five, class_marks, classes, keep_step_pick, rethrow_mean
from .values import NEG, five_arrays, five_placements, order_ok


@nb.njit(cache=True, error_model="numpy")
def scored_arrays(kd, L):
    """Work arrays of `score32` for a block of L lanes, as one tuple (a "score pass"):

    - S [hand, lane] float32: the best value of scoring the hand now;
    - BB [hand, lane] float32: the box of that value;
    - NI [box, class, lane] int64: the next state's flat index (-1: box illegal);
    - X [box, class, lane] float32: the upper bonus won by that placement;
    - RM [box, lane] float32: 0 where the box's requirement is unmet (it scores 0);
    - ON, OG, OB, OS [face, lane]: the five-of-a-kind hands scored apart (Joker, bonus):
      next state (-2: not apart; int64), points (float64), box (int64), its score (float64).
    """
    nbox = kd.nb
    c = kd.nd + 2
    return (np.empty((kd.nh, L), np.float32), np.empty((kd.nh, L), np.float32),
            np.empty((nbox, c, L), np.int64), np.empty((nbox, c, L), np.float32),
            np.empty((nbox, L), np.float32), np.empty((7, L), np.int64),
            np.empty((7, L)), np.empty((7, L), np.int64), np.empty((7, L)))


@nb.njit(cache=True, error_model="numpy")
def score32(kd, V, bm, bu, bf, first, out):
    """For the block's states: the best value of scoring each hand now (points plus the next
    state's value) and its box, into `out` (`scored_arrays`). The logic of `values.score_pass`,
    with the argmax."""
    S, BB, NI, X, rm, ON, OG, OB, OS = out
    L = bm.shape[0]
    nd = kd.nd
    nbox = kd.nb
    fi = 1 if first else 0
    NU = V.shape[1]
    NF = V.shape[2]
    W = np.full((nbox, nd + 2, L), NEG, np.float32)  # NEG where the box may not be filled
    for h in range(kd.nh):
        for lane in range(L):
            S[h, lane] = NEG
            BB[h, lane] = 0.0
    legal = box_targets(kd.order, kd.kind, kd.trk_bit, kd.face, kd.req_bit, kd.threshold,
                        kd.maxrem, kd.amount, nd, bm, bu, bf, first, NU, NF, NI, X, rm)
    next_values(V, legal, kd.kind, nd, NI, W)
    W += X  # the upper bonus with the next state's value, in float32 as the solver adds them
    for b in range(nbox):
        if not (legal >> b & 1):
            continue
        R = kd.reward[fi, b]
        C = kd.cls[fi, b]
        rmb = rm[b]
        fb = np.float32(b)
        for h in range(kd.nh):
            r = R[h]
            w = W[b, C[h]]
            s = S[h]
            bb = BB[h]
            for lane in range(L):
                v = r * rmb[lane] + w[lane]
                sl = s[lane]
                bl = bb[lane]
                # a select of two loaded values compiles to a vector blend (half the time of
                # the arithmetic blend it replaced); only a strictly better box moves it
                bb[lane] = fb if v > sl else bl
                s[lane] = np.maximum(v, sl)
    ON[:, :] = -2
    if kd.five_box >= 0:
        # n equal dice on a sheet whose five-of-a-kind box is filled: Joker and bonus rules
        five = five_arrays(kd, L)
        five_placements(kd, bm, bu, bf, first, five)
        five_choices(five, kd.five_box, kd.five_hand, V, bm, S, ON, OG, OB, OS)


@nb.njit(cache=True, error_model="numpy", inline="always")
def box_targets(order, kind, trk_bit, face, req_bit, threshold, maxrem, amount, nd, bm, bu, bf,
                first, NU, NF, NI, X, rm):
    """What filling each box does, for the states of the block's lanes (the gathering step
    of a score pass, `score32`'s and `moments.score2`'s): per box, lane and outcome class
    (`steps.classes`), NI the next state's flat index in a table of NU ucodes and NF flag
    sets (-1: the box may not be filled) and X the upper bonus won; rm[box, lane] is 0 where
    the box's requirement is unmet (it scores 0). Returns the boxes legal in some lane (a bit
    mask). X and rm take the caller's float type. The kernel data's arrays are passed one
    by one: a call that takes the kernel data counts a reference to each of its arrays.

    A block (4 lanes or more) is taken box by box and class by class over its lanes, with
    `steps.class_marks` written out per kind of box so that the lane loops compile to SIMD:
    3.5 times faster than lane by lane at 128 lanes, 1.7 at 32 (through `class_marks` the
    loops stay scalar). One state (a turn view's, a game's) goes lane by lane, 20% faster
    there. Both ways give the same arrays (checked on every state of five variants and
    three order rules, at 1, 5, 7 and 128 lanes)."""
    L = bm.shape[0]
    nbox = kind.shape[0]
    X[:, :, :] = 0.0
    NI[:, :, :] = -1
    rm[:, :] = 0.0
    legal = 0
    if L < 4:
        for b in range(nbox):
            kb = kind[b]
            bit = trk_bit[b]
            fc = face[b]
            for lane in range(L):
                mask = bm[lane]
                if not order_ok(order, nbox, mask, b, first):
                    continue
                legal |= 1 << b
                u = bu[lane]
                fl = bf[lane]
                nmask = mask | (1 << b)
                rb = req_bit[b]
                rm[b, lane] = 0.0 if (rb >= 0 and not (fl >> rb & 1)) else 1.0
                for c in range(classes(kb, nd)):
                    bonus, nu, nfl = class_marks(threshold, maxrem, amount, kb, bit, fc, u, fl,
                                                 c, nmask)
                    X[b, c, lane] = bonus
                    NI[b, c, lane] = (nmask * NU + nu) * NF + nfl
        return legal
    lanes = np.empty((2, L), np.int64)
    ok = lanes[0]  # per lane: whether the box may be filled
    room = lanes[1]  # per lane: the next mask's maxrem (what the upper boxes can add)
    for b in range(nbox):
        kb = kind[b]
        bit = trk_bit[b]
        fc = face[b]
        rb = req_bit[b]
        box = 1 << b
        any_ok = False
        for lane in range(L):
            o = order_ok(order, nbox, bm[lane], b, first)
            ok[lane] = o
            any_ok |= o
        if not any_ok:
            continue
        legal |= box
        for lane in range(L):
            met = rb < 0 or (bf[lane] >> rb & 1) != 0
            rm[b, lane] = 1.0 if ok[lane] != 0 and met else 0.0
        if kb == KIND_UPPER and threshold > 0:
            for lane in range(L):
                room[lane] = maxrem[bm[lane] | box]
        for c in range(classes(kb, nd)):
            if kb == KIND_UPPER:  # `steps.next_marks` and `steps.canon` written out
                for lane in range(L):
                    u = bu[lane]
                    tot = u + fc * c
                    counts = threshold > 0 and u < threshold
                    bonus = amount if counts and tot >= threshold else 0
                    nu = u
                    if counts:
                        nu = threshold if tot >= threshold or tot + room[lane] < threshold else tot
                    good = ok[lane] != 0
                    X[b, c, lane] = bonus if good else 0.0
                    NI[b, c, lane] = ((bm[lane] | box) * NU + nu) * NF + bf[lane] if good else -1
            elif kb == KIND_TRACKED:
                for lane in range(L):
                    fl = bf[lane]
                    nfl = fl | (1 << bit) if c != 0 else fl & ~(1 << bit)
                    good = ok[lane] != 0
                    NI[b, c, lane] = ((bm[lane] | box) * NU + bu[lane]) * NF + nfl if good else -1
            else:
                for lane in range(L):
                    good = ok[lane] != 0
                    NI[b, c, lane] = (((bm[lane] | box) * NU + bu[lane]) * NF + bf[lane]
                                      if good else -1)
    return legal


@nb.njit(cache=True, error_model="numpy", inline="always")
def next_values(T, legal, kind, nd, NI, W):
    """W[box, class, lane]: table T (C-contiguous, as the solver's and the moments' tables
    are) at the next state of every placement `box_targets` found legal (its `legal` and
    flat indices NI); the rest of W is left as it is. Read by the flat index, class by class
    over the lanes: a block's reads took three times as long through the index's parts
    (mask, ucode, flags) lane by lane."""
    F = T.reshape(T.size)
    for b in range(kind.shape[0]):
        if not (legal >> b & 1):
            continue
        for c in range(classes(kind[b], nd)):
            for lane in range(NI.shape[2]):
                i = NI[b, c, lane]
                if i >= 0:
                    W[b, c, lane] = F[i]


@nb.njit(cache=True, error_model="numpy", inline="always")
def five_choices(five, five_box, five_hand, V, bm, S, ON, OG, OB, OS):
    """A score pass's step for five equal dice on a sheet whose five-of-a-kind box is filled
    (Joker and bonus rules): from the placements `values.five_placements` wrote into `five`,
    S[h, lane] for those hands by table V, and the placement chosen, per face and lane: ON
    the next state's flat index (-1: no box may take the hand), OG the points, OB the box,
    OS the box's score. Lanes whose five-of-a-kind box is open are left as they are (the
    callers set ON to -2 there: not scored apart). `score32`'s and `moments.score2`'s; the
    kernel data's arrays are passed one by one (see `box_targets`)."""
    NU5, NF5, G5, SC5 = five
    L = bm.shape[0]
    NU = V.shape[1]
    NF = V.shape[2]
    for lane in range(L):
        mask = bm[lane]
        if not (mask >> five_box & 1):
            continue
        for f in range(1, 7):
            bb = best_five(NU5, NF5, G5, V, mask, f, lane, S, five_hand[f])
            bx = -1
            bg = 0.0
            bs = 0.0
            if bb >= 0:
                bx = ((mask | (1 << bb)) * NU + NU5[f, bb, lane]) * NF + NF5[f, bb, lane]
                bg = G5[f, bb, lane]
                bs = SC5[f, bb, lane]
            ON[f, lane] = bx
            OG[f, lane] = bg
            OB[f, lane] = bb
            OS[f, lane] = bs


@nb.njit(cache=True, error_model="numpy")
def choices32(kd, first, sc, NX, GN, BX, SC):
    """Every hand's placement from a score pass `sc`: NX the next state's flat index, GN the
    points, BX the box (-1: none legal), SC the box's score."""
    _S, BB, NI, X, rm, ON, OG, OB, OS = sc
    L = BB.shape[1]
    fi = 1 if first else 0
    for h in range(kd.nh):
        for lane in range(L):
            b = int(BB[h, lane])
            c = kd.cls[fi, b, h]
            score = np.float64(kd.reward[fi, b, h]) * rm[b, lane]
            NX[h, lane] = NI[b, c, lane]
            GN[h, lane] = score + X[b, c, lane]
            BX[h, lane] = b if NI[b, c, lane] >= 0 else -1
            SC[h, lane] = score
    if kd.five_box >= 0:
        for f in range(1, 7):
            h = kd.five_hand[f]
            for lane in range(L):
                if ON[f, lane] != -2:
                    NX[h, lane] = ON[f, lane]
                    GN[h, lane] = OG[f, lane]
                    BX[h, lane] = OB[f, lane]
                    SC[h, lane] = OS[f, lane]


@nb.njit(cache=True, error_model="numpy")
def keeps32(kd, cur, E, M, MA):
    """Keep values E (before "em baixo") and the best keep among each keep's sub-multisets:
    M its value, MA which keep (an effective keep id, in MA's type: int16 for `decide32`,
    `steps.keep_step_pick`)."""
    L = cur.shape[1]
    rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur, E, L)
    keep_step_pick(kd.em_baixo, kd.mirror, kd.n_small, kd.pairs, E, M, MA, L)


@nb.njit(cache=True, error_model="numpy")
def decide32(kd, Sf, Sl, DEC):
    """The keeps of the turn from the values of scoring each hand (Sf on the first throw, Sl
    later): DEC[t, h, lane] for t = 1 .. throws-1 (-1: score now; else the keep rethrown
    from). Returns the hand values at throw 1 (float32).

    The keeps are picked as int16 ids (`steps.keep_step_pick`), DEC's own type: less memory
    moved than float32 ids and no conversion when DEC is written."""
    L = Sl.shape[1]
    nh = kd.nh
    E = np.empty((kd.nk, L), np.float32)
    M = np.empty((kd.nk, L), np.float32)
    MA = np.empty((kd.nk, L), np.int16)
    cur = np.empty((nh, L), np.float32)
    cur[:, :] = Sl
    for t in range(kd.throws - 1, 0, -1):
        keeps32(kd, cur, E, M, MA)
        for h in range(nh):
            k = kd.hand_keep[h]
            mk = M[k]
            ak = MA[k]
            ch = cur[h]
            dh = DEC[t, h]
            for lane in range(L):
                ch[lane] = mk[lane]
                dh[lane] = ak[lane]
    for h in range(nh):
        for lane in range(L):
            if Sf[h, lane] >= cur[h, lane]:
                cur[h, lane] = Sf[h, lane]
                if kd.throws > 1:
                    DEC[1, h, lane] = -1
    return cur


@nb.njit(cache=True, error_model="numpy", inline="always")
def first_scored(kd):
    """Whether scoring on the first throw is a pass of its own (other scores or boxes)."""
    return kd.first_differs or kd.order == 3


@nb.njit(cache=True, error_model="numpy")
def score_passes(kd, L):
    """The score passes (`scored_arrays`) of the policy for a block of L lanes: the first
    throw's and the later throws' (one and the same where the first throw scores as the
    others, `first_scored`)."""
    scl = scored_arrays(kd, L)
    scf = scored_arrays(kd, L) if first_scored(kd) else scl
    return scf, scl


@nb.njit(cache=True, error_model="numpy")
def level_arrays(kd, L):
    """Work arrays of a level walked in blocks of L lanes under the policy: the score passes
    (`score_passes`), the decisions DEC[throw, hand, lane] (`decisions_block`) and the
    block's states, mask, ucode and flags per lane (`steps.load_block`)."""
    scf, scl = score_passes(kd, L)
    DEC = np.zeros((kd.throws + 1, kd.nh, L), np.int16)
    return (scf, scl, DEC, np.empty(L, np.int64), np.empty(L, np.int64),
            np.empty(L, np.int64))


@nb.njit(cache=True, error_model="numpy")
def decisions_block(kd, V, bm, bu, bf, scf, scl, DEC):
    """The turn's policy for the block's states, as score passes (`scl` for later throws;
    `scf` for the first, filled only when `first_scored`) and keeps (`decide32`'s DEC)."""
    later = bm[0] < 0
    score32(kd, V, bm, bu, bf, later, scl)
    if first_scored(kd):
        score32(kd, V, bm, bu, bf, not later, scf)
        decide32(kd, scf[0], scl[0], DEC)
    else:
        decide32(kd, scl[0], scl[0], DEC)


@nb.njit(cache=True, error_model="numpy")
def policy_block(kd, V, bm, bu, bf, NXf, GNf, BXf, SCf, NXl, GNl, BXl, SCl, DEC):
    """The turn's policy for the block's states: scoring choices for first and later throws,
    and DEC[t, h, lane] for t = 1 .. throws-1 (-1: score now; else the keep rethrown from)."""
    scf, scl = score_passes(kd, bm.shape[0])
    decisions_block(kd, V, bm, bu, bf, scf, scl, DEC)
    later = bm[0] < 0
    choices32(kd, later, scl, NXl, GNl, BXl, SCl)
    choices32(kd, not later, scf, NXf, GNf, BXf, SCf)
