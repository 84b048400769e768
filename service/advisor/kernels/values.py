"""Numba kernels of the solver: one turn of play, for a block of states side by side.

A block holds up to ``SOLVE_LANES`` states with the same number of filled boxes; every work
array is ``[item, lane]`` so the inner loops run over lanes and compile to SIMD. For each
state:

1. score pass: ``S[h]`` = best over legal boxes of (score + bonuses + value of the next
   state), for later throws and, where scores differ, for the first throw;
2. keep passes, from the last throw back to the first: ``E[k]`` (expected value of keeping
   the multiset k and rethrowing the rest) is the mean over one more die of ``E[k + f]``,
   down from the hands; the best keep of a hand is a running maximum over "the keep minus
   one die" (``M[k] = max(E[k], M[k - f])``);
3. the state's value is the exact-probability weighted sum of the first-throw values
   (float64 accumulation).

The five-of-a-kind hands on a sheet whose five-of-a-kind box is filled (Joker, YAHTZEE bonus,
extra Kniffel) are rescored by `five_placements`, a block at a time; `placement`, the scalar
mirror of `service.domain.scoring.score_hand`, is what the tests check against it.
"""

from __future__ import annotations

from collections import namedtuple

import numba as nb
import numpy as np

from .model import KIND_TRACKED, KIND_UPPER, Model
from .steps import canon, keep_step, load_block, next_marks, rethrow_mean

LANES = 32
#: States of a block of `solve_level`: four times `LANES`, as the moment tables' and the
#: forward pass's blocks (`moments.MOMENT_LANES`, `distribution.RECORD_LANES`)
SOLVE_LANES = 4 * LANES
NEG = np.float32(-1e30)


def read_only(a: np.ndarray) -> np.ndarray:
    """The array, made read-only (as `np.load(..., mmap_mode="r")` gives it) so that every
    table has one numba type: numba compiles one version of a kernel per array type."""
    if a.flags.writeable:
        a.setflags(write=False)
    return a

KernelData = namedtuple("KernelData", [
    "nb", "nd", "throws", "nh", "nk", "n_small", "prob", "reward", "cls", "gives", "kind", "face",
    "trk_bit", "req_bit", "is_lower", "threshold", "amount", "maxrem", "order",
    "joker", "five_box", "five_hand", "up_box", "joker_value", "bonus_amount", "bonus_bit",
    "bonus_matching", "first_differs", "add", "hand_keep", "em_baixo", "mirror", "pairs",
])


def kernel_data(m: Model, em_baixo: bool = False) -> KernelData:
    """Pack a Model for the kernels (plain ints, bools and contiguous arrays)."""
    k = m.keeps
    n_small = int(np.sum(k.size < m.nd))
    # the sub-keep links as the kernels read them (`steps.keep_step`): (keep, keep with one
    # die less) pairs, in keep order
    pairs = np.array([(i, k.sub[i, f]) for i in range(k.nk) for f in range(1, 7)
                      if k.sub[i, f] >= 0], np.int64).reshape(-1, 2)
    mirror = np.arange(k.nk, dtype=np.int64)
    if em_baixo:
        for t, i in k.index.items():
            mirror[i] = k.index[tuple(sorted(7 - d for d in t))]
    return KernelData(
        int(m.nb), int(m.nd), int(m.throws), len(m.prob), int(k.nk), n_small,
        np.ascontiguousarray(m.prob), np.ascontiguousarray(m.reward),
        np.ascontiguousarray(m.cls), np.ascontiguousarray(m.gives), m.kind, m.face,
        m.trk_bit, m.req_bit, m.is_lower, int(m.threshold), int(m.amount), m.maxrem,
        int(m.order), int(m.joker),
        int(m.five_box), m.five_hand, m.up_box, np.ascontiguousarray(m.joker_value),
        int(m.bonus_amount), int(m.bonus_bit), bool(m.bonus_matching),
        bool(m.first_differs), np.ascontiguousarray(k.add), k.hand_keep, bool(em_baixo),
        mirror, pairs)


@nb.njit(cache=True, error_model="numpy", inline="always")
def order_ok(order, nbox, mask, b, first):
    """Whether box b may be filled on this sheet by the order rule (open included)."""
    if mask >> b & 1:
        return False
    if order == 0:
        return True
    if order == 1:
        for i in range(b):
            if not mask >> i & 1:
                return False
        return True
    if order == 2:
        for i in range(b + 1, nbox):
            if not mask >> i & 1:
                return False
        return True
    return first


@nb.njit(cache=True, error_model="numpy")
def five_arrays(kd, L):
    """Work arrays of `five_placements` for a block of L lanes: (NU, NF, G, SC), each
    [face, box, lane]."""
    shape = (7, kd.nb, L)
    return (np.empty(shape, np.int64), np.empty(shape, np.int64), np.empty(shape),
            np.empty(shape))


@nb.njit(cache=True, error_model="numpy")
def five_placements(kd, bm, bu, bf, first, out):
    """A further five of a kind on a sheet whose five-of-a-kind box is filled, by the Joker
    and five-of-a-kind bonus rules: for every lane, face f and box b, into `out`
    (`five_arrays`) the next ucode NU[f, b, lane] (-1: the box may not take it, and in every
    lane whose five-of-a-kind box is open), the next flags NF, the points G (the score plus
    the bonuses) and the box's score SC; the next mask is the lane's with box b set.

    The one place these rules are written for the kernels (`score_pass`, `policy.score32`,
    `moments.score2`, `placement`, `winprob`): once a block, since every call that takes the
    kernel data counts a reference to each of its arrays (a call per lane and box made the
    table build six times slower)."""
    NU, NF, G, SC = out
    L = bm.shape[0]
    nbox = kd.nb
    order = kd.order
    fi = 1 if first else 0
    NU[:, :, :] = -1
    for lane in range(L):
        mask = bm[lane]
        if not (mask >> kd.five_box & 1):
            continue
        u = bu[lane]
        fl = bf[lane]
        any_lower = False
        for i in range(nbox):
            if kd.is_lower[i] and order_ok(order, nbox, mask, i, first):
                any_lower = True
        bonus5 = 0.0
        if kd.bonus_amount > 0 and (kd.bonus_bit < 0 or (fl >> kd.bonus_bit & 1)):
            bonus5 = kd.bonus_amount
        for f in range(1, 7):
            h = kd.five_hand[f]
            mu = kd.up_box[f]
            mu_ok = mu >= 0 and order_ok(order, nbox, mask, mu, first)
            mu_filled = mu < 0 or (mask >> mu & 1)
            for b in range(nbox):
                if not order_ok(order, nbox, mask, b, first):
                    continue
                joker_box = False
                if kd.joker == 1:  # forced: the matching upper box, else a lower box
                    if mu_ok:
                        if b != mu:
                            continue
                    elif any_lower:
                        if not kd.is_lower[b]:
                            continue
                        joker_box = True
                elif kd.joker == 2 and mu_filled:  # free
                    joker_box = kd.is_lower[b]
                score = kd.reward[fi, b, h]
                rb = kd.req_bit[b]
                if rb >= 0 and not (fl >> rb & 1):
                    score = np.float32(0.0)
                if joker_box:
                    score = kd.joker_value[b, f]
                g = np.float64(score)
                if (not kd.bonus_matching) or b == mu:
                    g += bonus5
                nmask = mask | (1 << b)
                up, nu, nfl = next_marks(kd.threshold, kd.maxrem, kd.amount, kd.kind[b],
                                         kd.trk_bit[b], u, fl, score, nmask)
                g += up
                NU[f, b, lane] = nu
                NF[f, b, lane] = nfl
                G[f, b, lane] = g
                SC[f, b, lane] = score


@nb.njit(cache=True, error_model="numpy")
def placement(kd, mask, u, fl, h, first, b):
    """Filling box b with hand h: (legal, score, bonuses, next mask, next ucode, next flags).

    `score` is what the box receives (Joker and `requires` applied); bonuses are the
    five-of-a-kind bonus plus the upper bonus when this placement crosses the threshold.
    The scalar mirror of `service.domain.scoring.score_hand` that the tests check against it
    (five of a kind on a sheet whose five-of-a-kind box is filled: `five_placements`).
    """
    nmask = mask | (1 << b)
    if kd.five_box >= 0 and (mask >> kd.five_box & 1):
        for f in range(1, 7):
            if kd.five_hand[f] == h:
                out = five_arrays(kd, 1)
                five_placements(kd, np.array([mask]), np.array([u]), np.array([fl]), first,
                                out)
                nu5, nf5, g5, sc5 = out
                nu = nu5[f, b, 0]
                if nu < 0:
                    return False, np.float32(0.0), 0.0, nmask, u, fl
                score = np.float32(sc5[f, b, 0])
                return True, score, g5[f, b, 0] - sc5[f, b, 0], nmask, nu, nf5[f, b, 0]
    fi = 1 if first else 0
    legal = order_ok(kd.order, kd.nb, mask, b, first)
    score = kd.reward[fi, b, h]
    rb = kd.req_bit[b]
    if rb >= 0 and not (fl >> rb & 1):
        score = np.float32(0.0)
    bonus, nu, nfl = next_marks(kd.threshold, kd.maxrem, kd.amount, kd.kind[b], kd.trk_bit[b],
                                u, fl, score, nmask)
    return legal, score, bonus, nmask, nu, nfl


@nb.njit(cache=True, error_model="numpy")
def score_pass(kd, V, bm, bu, bf, first, S):
    """S[h, l] = best value of scoring hand h now, for the states of the block's lanes."""
    L = bm.shape[0]
    nd = kd.nd
    fi = 1 if first else 0
    S[:, :] = NEG
    W = np.empty((nd + 2, L), np.float32)
    rm = np.empty(L, np.float32)
    for b in range(kd.nb):
        any_legal = False
        for lane in range(L):
            if order_ok(kd.order, kd.nb, bm[lane], b, first):
                any_legal = True
        if not any_legal:
            continue
        kb = kd.kind[b]
        for lane in range(L):
            mask = bm[lane]
            u = bu[lane]
            fl = bf[lane]
            nmask = mask | (1 << b)
            if not order_ok(kd.order, kd.nb, mask, b, first):
                for c in range(nd + 2):
                    W[c, lane] = NEG
                rm[lane] = 0.0
                continue
            rb = kd.req_bit[b]
            rm[lane] = 0.0 if (rb >= 0 and not (fl >> rb & 1)) else 1.0
            # `steps.class_marks` written out: through it this pass (the solver's own, the
            # table build's hot loop) took 5-7% longer to build a table
            if kb == KIND_UPPER:
                fc = kd.face[b]
                for c in range(nd + 1):
                    if kd.threshold > 0 and u < kd.threshold:
                        tot = u + fc * c
                        extra = kd.amount if tot >= kd.threshold else 0
                        code = canon(kd.threshold, kd.maxrem, tot, nmask)
                        W[c, lane] = V[nmask, code, fl] + extra
                    else:
                        W[c, lane] = V[nmask, u, fl]
            elif kb == KIND_TRACKED:
                bit = kd.trk_bit[b]
                W[0, lane] = V[nmask, u, fl & ~(1 << bit)]
                W[1, lane] = V[nmask, u, fl | (1 << bit)]
            else:
                W[0, lane] = V[nmask, u, fl]
        R = kd.reward[fi, b]
        C = kd.cls[fi, b]
        for h in range(kd.nh):
            r = R[h]
            w = W[C[h]]
            s = S[h]
            for lane in range(L):
                s[lane] = np.maximum(r * rm[lane] + w[lane], s[lane])
    if kd.five_box >= 0:
        # n equal dice on a sheet whose five-of-a-kind box is filled: Joker and bonus rules
        five = five_arrays(kd, L)
        five_placements(kd, bm, bu, bf, first, five)
        NU5, NF5, G5, _ = five
        for lane in range(L):
            mask = bm[lane]
            if not (mask >> kd.five_box & 1):
                continue
            # `steps.best_five` without the box, written out for the same reason
            for f in range(1, 7):
                best = NEG
                for b in range(kd.nb):
                    nu = NU5[f, b, lane]
                    if nu >= 0:
                        v = G5[f, b, lane] + V[mask | (1 << b), nu, NF5[f, b, lane]]
                        if v > best:
                            best = v
                S[kd.five_hand[f], lane] = best


@nb.njit(cache=True, error_model="numpy")
def keep_pass(kd, cur, E, M, store, t):
    """From hand values `cur` at throw t+1: E[k] (keep k, rethrow) and M[k] (best sub-keep,
    `steps.keep_step`).

    When `store` has rows, store[t] receives E before the "em baixo" mirroring. Blocks are
    always SOLVE_LANES wide here (a constant trip count the compiler unrolls into SIMD).
    """
    L = SOLVE_LANES
    rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur, E, L)
    if store.shape[0] > 0:
        store[t, :, :] = E
    keep_step(kd.em_baixo, kd.mirror, kd.n_small, kd.pairs, E, M, L)


@nb.njit(cache=True, error_model="numpy")
def turn_pass(kd, Sf, Sl, E, M, cur, store):
    """Values of every hand at throw 1 of the turn (in `cur`); keep values per throw in store.

    store[t] (when store has rows) receives E for a keep made after throw t (t = 1..throws-1).
    """
    L = cur.shape[1]
    for h in range(kd.nh):
        for lane in range(L):
            cur[h, lane] = Sl[h, lane]
    for t in range(kd.throws - 1, 0, -1):
        keep_pass(kd, cur, E, M, store, t)
        for h in range(kd.nh):
            mh = M[kd.hand_keep[h]]
            ch = cur[h]
            for lane in range(L):
                ch[lane] = mh[lane]
    for h in range(kd.nh):
        c = cur[h]
        sf = Sf[h]
        for lane in range(L):
            c[lane] = np.maximum(sf[lane], c[lane])


@nb.njit(cache=True, error_model="numpy", nogil=True)
def solve_level(kd, V, states):
    """Fill V for every state of one level (same number of filled boxes), in lane blocks."""
    n = states.shape[0]
    L = SOLVE_LANES
    nblocks = (n + L - 1) // L
    for bi in range(nblocks):
        bm = np.empty(L, np.int64)
        bu = np.empty(L, np.int64)
        bf = np.empty(L, np.int64)
        load_block(states, bi, bm, bu, bf)
        later = bm[0] < 0  # False, typed as a plain bool (no literal specialisation)
        Sl = np.empty((kd.nh, L), np.float32)
        score_pass(kd, V, bm, bu, bf, later, Sl)
        if kd.first_differs or kd.order == 3:
            Sf = np.empty((kd.nh, L), np.float32)
            score_pass(kd, V, bm, bu, bf, not later, Sf)
        else:
            Sf = Sl
        E = np.empty((kd.nk, L), np.float32)
        M = np.empty((kd.nk, L), np.float32)
        cur = np.empty((kd.nh, L), np.float32)
        store = np.empty((0, 0, 0), np.float32)
        turn_pass(kd, Sf, Sl, E, M, cur, store)
        acc = np.zeros(L, np.float64)
        for h in range(kd.nh):
            p = kd.prob[h]
            for lane in range(L):
                acc[lane] += p * np.float64(cur[h, lane])
        for lane in range(L):
            if bi * L + lane < n:
                V[bm[lane], bu[lane], bf[lane]] = np.float32(acc[lane])


@nb.njit(cache=True, error_model="numpy")
def turn_keeps(kd, term_first, term_later, throw, last, throw_value):
    """Keep values (float64, before "em baixo" mirroring) after throw `throw` of a turn.

    term_*: value of scoring each hand now; stopping at throw t saves last - t throws, each
    worth `throw_value`. Returns (E after `throw`, hand values at `throw`).
    """
    nk = kd.nk
    nh = kd.nh
    # one state: its hands and keeps as one lane ([item, 1] arrays: a reshape per rethrow
    # cost more than the rethrow)
    v = np.empty((nh, 1))
    for h in range(nh):
        v[h, 0] = term_later[h]
    e = np.zeros((nk, 1))
    m = np.zeros((nk, 1))
    raw = np.zeros(nk)
    for t in range(last - 1, throw - 1, -1):
        rethrow_mean(kd.add, kd.hand_keep, kd.n_small, v, e, 1)
        for k in range(nk):
            raw[k] = e[k, 0]
        keep_step(kd.em_baixo, kd.mirror, kd.n_small, kd.pairs, e, m, 1)
        for h in range(nh):
            now = (term_first[h] if t == 1 else term_later[h]) + throw_value * (last - t)
            v[h, 0] = max(m[kd.hand_keep[h], 0], now)
    return raw, v[:, 0].copy()
