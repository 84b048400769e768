"""Numba kernels of one turn from a position, in two moments: the values of every hand and
keep at every throw under the advisor's policy (`turn_tables2`, the float64 mirror of
`values.turn_keeps` with the second moment), and the probability of scoring each hand at
each throw when that policy is followed (`push_from`). `analysis.turn_view.TurnView` and the
games of the advisor's play (`analysis.simulate`) run them."""

from __future__ import annotations

import numba as nb
import numpy as np

from .steps import keep_step_pick, rethrow_mass, rethrow_mean


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
    # one state, its two moments side by side as two lanes ([item, 2] arrays)
    cur = np.empty((nh, 2))
    e = np.empty((nk, 2))
    m = np.empty((nk, 1))
    ma = np.empty((nk, 1))  # the keep chosen, as a float64 (`steps.keep_step_pick`)
    for t in range(last - 1, throw - 1, -1):
        for h in range(nh):
            cur[h, 0] = H1[t + 1, h]
            cur[h, 1] = H2[t + 1, h]
        rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur, e, 2)
        for k in range(nk):
            E1[t, k] = e[k, 0]
            E2[t, k] = e[k, 1]
        # the choice by the first moment (lane 0); the second is E's at the keep chosen
        keep_step_pick(kd.em_baixo, kd.mirror, kd.n_small, kd.pairs, e, m, ma, 1)
        c = tv * (last - t)
        for h in range(nh):
            s1 = t1f[h] if t == 1 else t1l[h]
            s2 = t2f[h] if t == 1 else t2l[h]
            s2 = s2 + 2.0 * c * s1 + c * c
            s1 = s1 + c
            kk = kd.hand_keep[h]
            if s1 >= m[kk, 0]:
                H1[t, h] = s1
                H2[t, h] = s2
                DEC[t, h] = -1
            else:
                a = int(ma[kk, 0])
                H1[t, h] = m[kk, 0]
                H2[t, h] = e[a, 1]
                DEC[t, h] = a
    return H1, H2, E1, E2, DEC


@nb.njit(cache=True, error_model="numpy")
def _roll(kd, kmass, mass, share):
    """Rethrow: mass on keeps becomes mass on hands (overwriting `mass`); kmass is used
    up; `share`: scratch of one element. One state: [item, 1] arrays (a reshape per
    rethrow cost more than the rethrow)."""
    rethrow_mass(kd.add, kd.hand_keep, kd.n_small, kmass, mass, share, True, 1)


@nb.njit(cache=True, error_model="numpy")
def push_from(kd, DEC, start_throw, last, kmass0, hmass0):
    """Probability of scoring each hand at each throw, following the policy DEC.

    Starts from mass on keeps rethrown into throw `start_throw` (kmass0) and on hands at
    that throw (hmass0). Returns S[t, h].
    """
    nh = kd.nh
    S = np.zeros((last + 1, nh))
    mass = np.empty((nh, 1))
    kmass = np.empty((kd.nk, 1))
    for k in range(kd.nk):
        kmass[k, 0] = kmass0[k]
    share = np.empty(1)
    _roll(kd, kmass, mass, share)
    for h in range(nh):
        mass[h, 0] += hmass0[h]
    t = start_throw
    while t < last:
        kmass[:, :] = 0.0
        for h in range(nh):
            m = mass[h, 0]
            if m == 0.0:
                continue
            d = DEC[t, h]
            if d < 0:
                S[t, h] += m
            else:
                kmass[d, 0] += m
        _roll(kd, kmass, mass, share)
        t += 1
    for h in range(nh):
        S[last, h] += mass[h, 0]
    return S
