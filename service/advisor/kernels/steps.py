"""The steps of a turn that several kernels take, each written once: small numba helpers
inlined where they are called (``inline="always"``), over plain arrays and scalars. None
takes the kernel data: a function that takes it counts a reference to each of its arrays,
even inlined (the callers read the arrays they need out of it).

- `rethrow_mean`: the value of every keep, the mean of the hands' values over the outcomes
  of rethrowing the dice not kept (`values`, `policy`, `moments`, `turn`, `winprob`);
- `next_marks` and `class_marks`: what filling a box does to the sheet's marks (upper bonus,
  upper code, flags), for a score (`values`, `winprob`) or for a hand's outcome class
  (`policy`, `moments`; the solver's `values.score_pass` writes it out, see there);
- `rethrow_mass`: probability on keeps pushed through a rethrow onto the hands (`turn`,
  `distribution`);
- `unflat`: a state's (mask, ucode, flags) from its flat index in a table (`policy`,
  `moments`, `selfplay`);
- `best_five`: the best placement of a five of a kind scored apart (Joker, five-of-a-kind
  bonus) among those `values.five_placements` gives (`policy`, `moments`; written out in
  `values.score_pass`).

Each works on rows of lanes (``[item, lane]``: states of a block side by side, or a
player's own totals); a kernel of one state keeps its vectors as one lane, in ``[item, 1]``
arrays of its own (a reshape per call cost more than the rethrow of one state; the two
moments of `turn.turn_tables2` are two lanes). The arithmetic is the callers' own, in the
arrays' own type (numba compiles a version per type): float32 tables stay float32, float64
ones float64.

numba's on-disk cache of a kernel is keyed by the kernel's own file, not by the helpers
inlined into it: after editing this file, remove the cached kernels (`make clean`), or the
other modules' kernels keep the old steps.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from . import model
from .model import KIND_TRACKED, KIND_UPPER

#: `model.canon` compiled for the kernels (inlined where it is called).
canon = nb.njit(cache=True, error_model="numpy", inline="always")(model.canon)


@nb.njit(cache=True, error_model="numpy", inline="always")
def rethrow_mean(add: np.ndarray, hand_keep: np.ndarray, n_small: int, cur: np.ndarray,
                 E: np.ndarray, width: int) -> None:
    """The average over a rethrow: E[k, :width], for every keep k, the expected value of
    the hand values `cur` ([hand, lane]) when the dice not in k are rethrown.

    A hand's own keep takes its value; a smaller keep the mean over one more die (faces 1
    to 6, by `add`) of the keeps it grows into, from the larger keeps down (keep ids are
    sorted by size, `n_small` of them below a hand's size). The sum and the division are
    in E's type (float32 tables keep float32 arithmetic, the SIMD width of the solver).
    `width` is the lanes to fill: the solver passes the constant `values.LANES`, a trip
    count the compiler unrolls into SIMD."""
    six = E.dtype.type(6.0)
    for h in range(hand_keep.shape[0]):
        k = hand_keep[h]
        for lane in range(width):
            E[k, lane] = cur[h, lane]
    for k in range(n_small - 1, -1, -1):
        a1 = add[k, 1]
        a2 = add[k, 2]
        a3 = add[k, 3]
        a4 = add[k, 4]
        a5 = add[k, 5]
        a6 = add[k, 6]
        for lane in range(width):
            E[k, lane] = (E[a1, lane] + E[a2, lane] + E[a3, lane] + E[a4, lane]
                          + E[a5, lane] + E[a6, lane]) / six


@nb.njit(cache=True, error_model="numpy", inline="always")
def next_marks(threshold: int, maxrem: np.ndarray, amount: int, kind: int, bit: int, u: int,
               fl: int, score: float, nmask: int) -> tuple[float, int, int]:
    """What filling a box with `score` does to the marks of the sheet: (upper bonus won,
    next ucode, next flags). `kind` and `bit`: the box's kind and tracked-flag bit. Scalars
    and one array, not the kernel data: a function that takes the kernel data counts a
    reference to each of its arrays, even inlined."""
    bonus = 0.0
    nu = u
    nfl = fl
    if kind == KIND_UPPER:
        if threshold > 0 and u < threshold:
            tot = u + int(score)
            if tot >= threshold:
                bonus = amount
            nu = canon(threshold, maxrem, tot, nmask)
    elif kind == KIND_TRACKED:
        if score != 0:
            nfl = fl | (1 << bit)
        else:
            nfl = fl & ~(1 << bit)
    return bonus, nu, nfl


@nb.njit(cache=True, error_model="numpy", inline="always")
def classes(kind: int, nd: int) -> int:
    """How many outcome classes a box of `kind` sorts hands into (the model's `cls`): an
    upper box by the count of its face (0..nd), a tracked box by a zero or non-zero score,
    any other box one class."""
    if kind == KIND_UPPER:
        return nd + 1
    if kind == KIND_TRACKED:
        return 2
    return 1


@nb.njit(cache=True, error_model="numpy", inline="always")
def class_marks(threshold: int, maxrem: np.ndarray, amount: int, kind: int, bit: int,
                face: int, u: int, fl: int, c: int, nmask: int) -> tuple[float, int, int]:
    """`next_marks` of filling a box of `kind` (its `face`, tracked `bit`) with a hand of
    outcome class c (`classes`): all a score pass needs to know of the next state, since
    every hand of a class leads to the same one. An upper box's score is its face times
    the count c; a tracked box's class is whether its score is non-zero."""
    score = face * c if kind == KIND_UPPER else c
    return next_marks(threshold, maxrem, amount, kind, bit, u, fl, score, nmask)


@nb.njit(cache=True, error_model="numpy", inline="always")
def rethrow_keeps(add: np.ndarray, n_small: int, kmass: np.ndarray, share: np.ndarray,
                  divide: bool, width: int) -> None:
    """The rethrow on keeps: each keep smaller than a hand passes a sixth of the probability
    on it, kmass[keep, lane], to each keep with one more die, from the smaller keeps up (keep
    ids are sorted by size), and its row is left zero; a row with no probability in any lane
    is skipped. After it a hand's probability is its own keep's row
    (kmass[hand_keep[h]]). `share` is scratch of one row. `width`: the lanes, as in
    `rethrow_mean` (a kernel of one state passes the constant 1, which makes its lane loops
    scalar code: read from an array it cost a turn view's push three times as much; a block
    passes its lane count as read from an array, see `distribution.push_block`).

    `divide`: a sixth is taken as m / 6 (the turn views' pushes) or as m * (1 / 6), which
    a vector unit does several times faster (the exact forward pass); the two round apart
    in the last bit, and each keeps its own results."""
    L = width
    sixth = 1.0 / 6.0
    for k in range(n_small):
        row = kmass[k]
        live = False
        for lane in range(L):
            if row[lane] != 0.0:
                live = True
                break
        if not live:
            continue
        if divide:
            for lane in range(L):
                share[lane] = row[lane] / 6.0
                row[lane] = 0.0
        else:
            for lane in range(L):
                share[lane] = row[lane] * sixth
                row[lane] = 0.0
        for f in range(1, 7):
            dst = kmass[add[k, f]]
            for lane in range(L):
                dst[lane] += share[lane]


@nb.njit(cache=True, error_model="numpy", inline="always")
def rethrow_mass(add: np.ndarray, hand_keep: np.ndarray, n_small: int, kmass: np.ndarray,
                 mass: np.ndarray, share: np.ndarray, divide: bool, width: int) -> None:
    """Pushing probability through a rethrow (`rethrow_keeps`), the hands' probabilities
    copied out into mass[hand, lane] (overwritten); kmass is used up."""
    rethrow_keeps(add, n_small, kmass, share, divide, width)
    L = width
    for h in range(hand_keep.shape[0]):
        src = kmass[hand_keep[h]]
        mr = mass[h]
        for lane in range(L):
            mr[lane] = src[lane]


@nb.njit(cache=True, error_model="numpy", inline="always")
def best_five(NU5: np.ndarray, NF5: np.ndarray, G5: np.ndarray, V: np.ndarray, mask: int,
              f: int, lane: int, S: np.ndarray, h: int) -> int:
    """Choosing the best placement of the five of a kind of face f (hand h) in a lane whose
    sheet has the boxes `mask` filled, among those `values.five_placements` gives (NU5,
    NF5, G5: next ucode, next flags, points): S[h, lane] receives the best of the points
    plus the next state's value in table V (-1e30 when no box may take the hand), and the
    box is returned (-1: none). Values are compared as S stores them, rounded to its type
    (a float32 score pass ranks float32 sums, a float64 one float64 sums of the same
    table), and a later box must be strictly better: ties go to the earlier box."""
    best = S.dtype.type(-1e30)
    bb = -1
    for b in range(NU5.shape[1]):
        nu = NU5[f, b, lane]
        if nu < 0:
            continue
        v = S.dtype.type(G5[f, b, lane] + V[mask | (1 << b), nu, NF5[f, b, lane]])
        if v > best:
            best = v
            bb = b
    S[h, lane] = best
    return bb


@nb.njit(cache=True, error_model="numpy", inline="always")
def unflat(i: int, nu: int, nf: int) -> tuple[int, int, int]:
    """The state (mask, ucode, flags) at flat index `i` of a [mask, ucode, flags] table of
    `nu` ucodes and `nf` flag sets: the inverse of ``(mask * nu + ucode) * nf + flags``."""
    return i // (nu * nf), i // nf % nu, i % nf


@nb.njit(cache=True, error_model="numpy", inline="always")
def keep_step(em_baixo: bool, mirror: np.ndarray, n_small: int, pairs: np.ndarray,
              E: np.ndarray, M: np.ndarray, width: int) -> None:
    """The keep step of a throw, from the keeps' values E[keep, lane] (`rethrow_mean`'s):
    M[k, :width] the value of the best keep among k's sub-multisets (k itself included).

    With `em_baixo` (Bozó: announced before a throw, the kept dice count by their bottom
    faces, so keeping k is worth as much as keeping its mirror 7 - k, `mirror[k]`), E[k]
    and E[mirror[k]] first both take the larger of the two, in E itself. The best sub-keep
    is then a running maximum over the (keep, keep minus one die) `pairs`, in keep order
    (keep ids are sorted by size: a sub-keep's maximum is final before its keep reads it).

    Speed (measured against the five copies this replaced): np.maximum on scalars compiles
    to a vector max (`a if a > b else b` does not); rows are taken as views, so the lane
    loops compile to SIMD without aliasing checks; one lane (a single state) is done as
    scalars (30% faster there than the lane loops)."""
    if width == 1:  # one state: the same steps on one lane, as scalars
        if em_baixo:  # each keep in turn takes its mirror's value where that is larger
            for k in range(n_small):
                mk = mirror[k]
                if E[mk, 0] > E[k, 0]:
                    E[k, 0] = E[mk, 0]
        for k in range(E.shape[0]):
            M[k, 0] = E[k, 0]
        for p in range(pairs.shape[0]):
            k = pairs[p, 0]
            M[k, 0] = np.maximum(M[pairs[p, 1], 0], M[k, 0])
        return
    if em_baixo:
        for k in range(n_small):
            mk = mirror[k]
            if mk > k:
                for lane in range(width):
                    v = np.maximum(E[mk, lane], E[k, lane])
                    E[k, lane] = v
                    E[mk, lane] = v
    for k in range(E.shape[0]):
        ek = E[k]
        mk = M[k]
        for lane in range(width):
            mk[lane] = ek[lane]
    for p in range(pairs.shape[0]):
        mk = M[pairs[p, 0]]
        ms = M[pairs[p, 1]]
        for lane in range(width):
            mk[lane] = np.maximum(ms[lane], mk[lane])


@nb.njit(cache=True, error_model="numpy", inline="always")
def keep_step_pick(em_baixo: bool, mirror: np.ndarray, n_small: int, pairs: np.ndarray,
                   E: np.ndarray, M: np.ndarray, A: np.ndarray, width: int) -> None:
    """`keep_step` with the choice (the policy's): M[k, :width] the value of the best keep
    among k's sub-multisets and A[k, :width] which keep it is (an effective keep id: with
    `em_baixo`, a keep's mirror where that is strictly better), in A's own type (a float
    for `policy.decide32` and `turn.turn_tables2`, int16 for `moments.moments_level`). E is
    left as it is. Ties keep the keep itself: a keep before its mirror and before its
    sub-multisets (only a strictly better one moves the choice).

    Another value that follows the choice (the second moment of `turn.turn_tables2`) is
    that of E at the keep chosen: read it there, by A, after this step.

    Speed: the choice is a select of the two ids loaded first, which compiles to a vector
    blend whatever A's type (as fast as the arithmetic blend it replaced on float32 ids,
    which only floats could take; int16 ids move less memory: the step 18-30% faster than
    on float32 ids at 64-128 lanes), over row views as in `keep_step`; one lane (a single
    state) is picked by a conditional."""
    for k in range(E.shape[0]):
        ik = A.dtype.type(k)
        ek = E[k]
        mk = M[k]
        ak = A[k]
        for lane in range(width):
            mk[lane] = ek[lane]
            ak[lane] = ik
    if em_baixo:
        for k in range(n_small):
            mk = mirror[k]
            if mk > k:
                for lane in range(width):
                    if E[mk, lane] > E[k, lane]:
                        M[k, lane] = E[mk, lane]
                        A[k, lane] = mk
                    elif E[k, lane] > E[mk, lane]:
                        M[mk, lane] = E[k, lane]
                        A[mk, lane] = k
    if width == 1:
        for p in range(pairs.shape[0]):
            k = pairs[p, 0]
            s = pairs[p, 1]
            if M[s, 0] > M[k, 0]:
                M[k, 0] = M[s, 0]
                A[k, 0] = A[s, 0]
        return
    for p in range(pairs.shape[0]):
        ms = M[pairs[p, 1]]
        mk = M[pairs[p, 0]]
        as_ = A[pairs[p, 1]]
        ak = A[pairs[p, 0]]
        for lane in range(width):
            a = ms[lane]
            c = mk[lane]
            sub = as_[lane]
            own = ak[lane]
            ak[lane] = sub if a > c else own  # only a strictly better sub-keep moves it
            mk[lane] = np.maximum(a, c)


@nb.njit(cache=True, error_model="numpy", inline="always")
def load_block(states: np.ndarray, bi: int, bm: np.ndarray, bu: np.ndarray,
               bf: np.ndarray) -> None:
    """Lane block `bi` of a level's `states` (rows mask, ucode, flags) into the lanes bm, bu,
    bf; a last block that is not full repeats the level's last state in its spare lanes."""
    n = states.shape[0]
    L = bm.shape[0]
    for lane in range(L):
        i = min(bi * L + lane, n - 1)
        bm[lane] = states[i, 0]
        bu[lane] = states[i, 1]
        bf[lane] = states[i, 2]
