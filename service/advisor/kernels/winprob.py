"""Who is likely to win: each player's chance of finishing first.

Assumptions, stated in every answer:

- every player plays the advisor's strategy (maximising their own expected final score), so
  the players' final totals are independent: no player's dice or choices change another's;
- each player's final total has the distribution of `Analyst.position_value` from their
  sheet (and, for the player to move, the dice of the current throw): exact where that is,
  else sampled (the answer then says `exact: false`);
- equal top totals share the win (rule book decision 13): `win` is the probability of being
  the only one with the top total, `tie` of sharing it, `share` the expected share of the
  win (a k-way tie counts 1/k), so the shares of all players sum to 1;
- a game won at once (Generala servida, General de boca: a hand that wins on a turn's first
  throw) ends it (rule book decisions 4, 12, 22): every player takes such a win when the
  first throw of a turn makes it, which happens with the same chance q on every turn
  whatever the sheet. Each player's totals are then counted on the games without one
  (`distribution.forward(..., instant=...)`: P(total = t and no instant win), summing to
  (1 - q) ** turns), and the players' turns are laid out in playing order from the player
  to move (`instant_times`): a player's instant win at a time slot wins if no other player
  has made one at an earlier slot.

The winning move (`win_tables`, `state_win`, used by `objectives/win.py` and
`objectives/target.py` through `objectives/utility.py`): with the others'
final distributions fixed (they play the advisor's strategy, independently), the share of
the win of each own final total x is u(x); a backward induction over the player's own states
and own totals (the within-turn recursion with u in place of points) gives the move that
maximises E[u(final)], the chance of winning, and what each move is worth under it. Done
exactly for one-part strategies with at most `MAX_WIN_OPEN` open boxes.

Given the distributions F_j, P(i alone on top) = sum_x P_i(x) prod_{j != i} F_j(x - 1), and the
tie terms come from the polynomial prod_{j != i} (F_j(x - 1) + P_j(x) z).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numba as nb
import numpy as np

from .distribution import Distribution
from .model import KIND_TRACKED, KIND_UPPER
from .policy import first_scored
from .steps import keep_step, next_marks, rethrow_mean
from .values import five_arrays, five_placements, order_ok

ASSUMPTIONS = (
    "Every player plays the advisor's strategy (maximising their own expected final score), "
    "so final totals are independent; each player's distribution is computed from their own "
    "sheet (and the current dice of the player to move); equal top totals share the win "
    "(share: a k-way tie counts 1/k, shares sum to 1); where a first throw can win the game "
    "at once (Generala servida, General de boca), every player takes that win when it comes, "
    "and it ends the game.")


@dataclass
class Chances:
    """One player's chances of finishing first."""

    win: float  # alone on top
    tie: float  # sharing the top total
    share: float  # expected share of the win

    @property
    def first(self) -> float:
        """Finishing first, ties counted."""
        return self.win + self.tie


def _aligned(dists: list[Distribution], defective: bool = False) -> tuple[int, np.ndarray]:
    """Every distribution on one range of totals: (lowest total, [player, total] probs),
    each normalised unless `defective` (the totals of the games without an instant win,
    whose probabilities sum to the chance of none)."""
    lo = min(d.lo for d in dists)
    hi = max(d.lo + len(d.probs) for d in dists)
    out = np.zeros((len(dists), hi - lo))
    for i, d in enumerate(dists):
        out[i, d.lo - lo:d.lo - lo + len(d.probs)] = (
            d.probs if defective else d.probs / d.probs.sum())
    return lo, out


def instant_times(turns: list[int], to_move: int, started: bool, q: float
                  ) -> list[np.ndarray]:
    """When each player would win the game at once: [player][time slot] the probability
    that the player's first instant win comes at that slot. The players' turns are laid out
    in playing order from the player to move: player i's k-th turn from now is at slot
    k * n + (i - to_move) mod n. `turns[i]`: the player's turns left; `started`: the player
    to move is past the first throw of their turn, which can then no longer win at once."""
    n = len(turns)
    out = []
    for i, left in enumerate(turns):
        offset = (i - to_move) % n
        times = np.zeros(n * max(left, 1))
        alive = 1.0
        for k in range(left):
            if k == 0 and i == to_move and started:
                continue
            times[k * n + offset] = alive * q
            alive *= 1.0 - q
        out.append(times)
    return out


def survival(times: np.ndarray, width: int) -> np.ndarray:
    """P(no instant win before slot t) for t = 0..width-1."""
    grown = np.zeros(width)
    grown[:len(times)] = times[:width]
    return 1.0 - np.concatenate([[0.0], np.cumsum(grown)[:-1]])


def instant_share(times: list[np.ndarray], i: int) -> float:
    """Player i's chance of winning at once before anyone else does."""
    width = max(len(t) for t in times)
    alive = np.ones(width)
    for j, t in enumerate(times):
        if j != i:
            alive *= survival(t, width)
    mine = np.zeros(width)
    mine[:len(times[i])] = times[i]
    return float(mine @ alive)


@nb.vectorize(["float64(float64)"], cache=True)
def normal_cdf(z):
    """The standard normal distribution function at each z."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _ties(below: np.ndarray, p: np.ndarray) -> np.ndarray:
    """For each column x (a total), the coefficients of prod_j (below[j, x] + p[j, x] z):
    out[k, x] the probability that exactly k of the players j have total x and the others
    less (below: P(total < x), p: P(total = x))."""
    out = np.ones((1, below.shape[1]))
    for j in range(below.shape[0]):
        grown = np.zeros((out.shape[0] + 1, out.shape[1]))
        grown[:-1] += out * below[j]
        grown[1:] += out * p[j]
        out = grown
    return out


def _shared(ties: np.ndarray) -> np.ndarray:
    """Expected share of the win per column of `_ties`: a (k + 1)-way tie on top counts
    1 / (k + 1)."""
    return (1.0 / (1.0 + np.arange(ties.shape[0]))) @ ties


def utility(others: list[Distribution], lo: int, hi: int,
            defective: bool = False) -> np.ndarray:
    """Expected share of the win for each own final total lo..hi-1 against `others`
    (`defective`: their totals of the games without an instant win, `_aligned`)."""
    if not others:
        return np.ones(hi - lo)
    olo, p = _aligned(others, defective)
    width = p.shape[1]
    xs = np.arange(lo, hi) - olo
    below = np.concatenate([np.zeros((len(others), 1)), np.cumsum(p, axis=1)], axis=1)
    at = np.clip(xs, 0, width - 1)
    out = _shared(_ties(below[:, at], p[:, at]))
    out[xs < 0] = 0.0
    out[xs >= width] = 1.0
    return out


def chances(dists: list[Distribution], instant: list[np.ndarray] | None = None
            ) -> list[Chances]:
    """Each player's chances of finishing first, the totals being independent. With
    `instant` (`instant_times`), `dists` are the totals of the games without an instant win
    (`_aligned`'s defective), and a player's instant win, before anyone else's, is a win."""
    _, p = _aligned(dists, instant is not None)
    n = p.shape[0]
    below = np.concatenate([np.zeros((n, 1)), np.cumsum(p, axis=1)[:, :-1]], axis=1)
    out = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        ties = _ties(below[others], p[others])
        win = float(p[i] @ ties[0])
        tie = float(p[i] @ ties[1:].sum(axis=0))
        share = float(p[i] @ _shared(ties))
        if instant is not None:
            at_once = instant_share(instant, i)
            win += at_once
            share += at_once
        out.append(Chances(win, tie, share))
    return out


# --------------------------------------------------------------------------- the winning move

#: Most open boxes for which the move that maximises the chance of winning is computed.
MAX_WIN_OPEN = 4


@nb.njit(cache=True, error_model="numpy", inline="always")
def _fold(oh, nxt, g, width):
    """oh[a] = max(oh[a], nxt[a + g]) for every own total a of oh, nxt's last column (every
    higher total) where a + g is past it. A slice's loop compiles to SIMD,
    nxt[min(a + g, width - 1)] to scalar code."""
    need = oh.shape[0]
    inside = max(0, min(need, width - g))
    src = nxt[g:g + inside]
    for a in range(inside):
        oh[a] = np.maximum(oh[a], src[a])
    top = nxt[width - 1]
    for a in range(inside, need):
        oh[a] = np.maximum(oh[a], top)


@nb.njit(cache=True, error_model="numpy")
def _turn_win(kd, W, mask_at, slot_of, mask, u, fl, width, out_first, out_later):
    """Terminal win values of one state's turn: out_*[h, a] = best over legal boxes of
    W[next state][a + points] (a: own total minus the position's, up to the outputs' width;
    `width`: W's, whose last column holds every higher total); -1 where none is legal.
    A state's row of W is W[slot_of[mask_at[mask], code, flags]] (`WinTables`).

    Box by box, with what depends on the box alone worked out once: the five-of-a-kind
    hands on a sheet whose five-of-a-kind box is filled (Joker, bonus) are placed by
    `values.five_placements`, once a throw; every other hand is placed as
    `values.placement` places it without those rules (its requirement, the upper bonus, a
    tracked box's flag). Calling `placement` for every hand cost more than the rest: each
    call that takes the kernel data counts a reference to each of its arrays."""
    nh = kd.nh
    nbox = kd.nb
    same = not first_scored(kd)
    apart = np.zeros(nh, np.bool_)
    has_five = kd.five_box >= 0 and (mask >> kd.five_box & 1) != 0
    if has_five:
        for f in range(1, 7):
            apart[kd.five_hand[f]] = True
    five = five_arrays(kd, 1)
    one = np.ones(1, np.int64)
    maxrem = kd.maxrem
    threshold = kd.threshold
    amount = kd.amount
    for fi in range(2):
        first = fi == 1
        out = out_first if first else out_later
        if first and same:
            out[:, :] = out_later
            break
        out[:, :] = -1.0
        for b in range(nbox):
            if not order_ok(kd.order, nbox, mask, b, first):
                continue
            nmask = mask | (1 << b)
            rb = kd.req_bit[b]
            met = np.float32(0.0 if (rb >= 0 and not (fl >> rb & 1)) else 1.0)
            kb = kd.kind[b]
            bit = kd.trk_bit[b]
            R = kd.reward[fi, b]
            for h in range(nh):
                if apart[h]:
                    continue
                score = R[h] * met
                bonus, nu, nfl = next_marks(threshold, maxrem, amount, kb, bit, u, fl,
                                                   score, nmask)
                g = int(np.rint(np.float64(score) + bonus))
                _fold(out[h], W[slot_of[mask_at[nmask], nu, nfl]], g, width)
        if has_five:
            five_placements(kd, one * mask, one * u, one * fl, first, five)
            NU5, NF5, G5, _ = five
            for f in range(1, 7):
                o = out[kd.five_hand[f]]
                for b in range(nbox):
                    nu = NU5[f, b, 0]
                    if nu >= 0:
                        _fold(o, W[slot_of[mask_at[mask | (1 << b)], nu, NF5[f, b, 0]]],
                              int(np.rint(G5[f, b, 0])), width)


@nb.njit(cache=True, error_model="numpy")
def _keeps_win(kd, cur, E, M):
    """Keep values over the lanes (own totals): E[k] mean over one more die, M best sub-keep
    (`steps.keep_step`)."""
    width = cur.shape[1]
    rethrow_mean(kd.add, kd.hand_keep, kd.n_small, cur, E, width)
    keep_step(kd.em_baixo, kd.mirror, kd.n_small, kd.pairs, E, M, width)


@nb.njit(cache=True, error_model="numpy")
def state_win(kd, W, mask_at, slot_of, mask, u, fl, width, throw, hand, need, iw, iwh):
    """Win values of a state's turn for own totals a < `need` (of W's `width`). hand < 0: at
    the turn start, one row over own totals; else the options at `hand` after `throw`: row 0
    scoring now (the best box for winning), row 1 + k keeping k (-1 on the last throw).
    `iw` >= 0: at the turn start, a first-throw hand h with iwh[h] wins the game at once,
    worth `iw` (the chance that no one else has won at once before this turn)."""
    nh = kd.nh
    hand_keep = kd.hand_keep
    tf = np.empty((nh, need))
    tl = np.empty((nh, need))
    _turn_win(kd, W, mask_at, slot_of, mask, u, fl, width, tf, tl)
    cur = tl.copy()
    E = np.empty((kd.nk, need))
    M = np.empty((kd.nk, need))
    start = 1 if hand < 0 else throw
    options = -np.ones((kd.nk + 1 if hand >= 0 else 0, need))
    if hand >= 0:
        options[0, :] = tf[hand] if throw == 1 else tl[hand]
    for t in range(kd.throws - 1, start - 1, -1):
        _keeps_win(kd, cur, E, M)
        if hand >= 0 and t == start:
            options[1:, :] = E
            return options
        for h in range(nh):
            now = tf[h] if t == 1 else tl[h]
            mk = M[hand_keep[h]]
            ch = cur[h]
            for a in range(need):
                ch[a] = max(now[a], mk[a])
    if hand >= 0:
        return options
    res = np.zeros((1, need))
    prob = kd.prob
    last = cur if kd.throws > 1 else tf
    if iw >= 0.0:
        for h in range(nh):
            if iwh[h]:
                last[h, :] = iw
    r = res[0]
    for h in range(nh):
        p = prob[h]
        lh = last[h]
        for a in range(need):
            r[a] += p * lh[a]
    return res


def gain_bounds(kd: object, mask0: int, u0: int | None = None
                ) -> Callable[..., int]:
    """For a state reached from the position (`mask0`, upper code `u0`), at least the most
    points the boxes filled since can have given; for the full sheet, all the points still
    to come. `bound(mask)` counts each new box at its best score (Joker values included),
    the five-of-a-kind bonus on every other new box once the five-of-a-kind box is filled,
    and the upper bonus once; `bound(mask, u, fl)` also reads the state's upper code and
    flags: while the upper bonus can still be won (u below the threshold) the upper boxes
    gave exactly u - u0 and no bonus yet, a bonus already settled at the position (u0 at
    the threshold) gives nothing more, a tracked box (five of a kind, a box another one
    needs) whose flag is clear was scratched, and the five-of-a-kind bonus needs the box made
    where the rules say so (its flag)."""
    top = [int(np.ceil(max(float(kd.reward[:, b].max()), float(kd.joker_value[b].max()))))
           for b in range(kd.nb)]
    upper = [int(kd.kind[b]) == KIND_UPPER for b in range(kd.nb)]
    tracked = [int(kd.trk_bit[b]) if int(kd.kind[b]) == KIND_TRACKED else -1
               for b in range(kd.nb)]
    threshold = int(kd.threshold)

    def bound(mask: int, u: int | None = None, fl: int | None = None) -> int:
        new = mask & ~mask0
        boxes = [b for b in range(kd.nb) if new >> b & 1]
        # a tracked box whose flag is clear was scratched (`values.placement`)
        total = sum(top[b] for b in boxes if not upper[b] and not (
            fl is not None and tracked[b] >= 0 and not fl >> tracked[b] & 1))
        ups = [b for b in boxes if upper[b]]
        if threshold > 0 and u is not None and u0 is not None and u < threshold:
            total += u - u0  # the upper total itself: no bonus yet
        else:
            total += sum(top[b] for b in ups)
            settled = u0 is not None and u0 >= threshold
            if threshold > 0 and ups and not settled:
                total += int(kd.amount)
        if kd.five_box >= 0 and mask >> kd.five_box & 1 and (
                fl is None or kd.bonus_bit < 0 or fl >> kd.bonus_bit & 1):
            total += int(kd.bonus_amount) * sum(1 for b in boxes if b != kd.five_box)
        return total

    return bound


def reachable_from(levels: list[np.ndarray], state: tuple[int, int, int]
                   ) -> list[np.ndarray]:
    """The states of `levels` (per number of filled boxes) a one-part state can lead to,
    itself left out: its boxes filled and more, an upper code no lower (totals only grow;
    the threshold's code stands for both reached and out of reach), its flags still set (a
    box, once filled, keeps its score). Per level from the state's own."""
    mask0, u0, fl0 = state
    return [lv[((lv[:, 0] & mask0) == mask0) & (lv[:, 0] != mask0) & (lv[:, 1] >= u0)
               & ((lv[:, 2] & fl0) == fl0)] for lv in levels[bin(mask0).count("1"):]]


@dataclass
class WinTables:
    """The win values of `win_tables`: the row of a state (mask, upper code, flags) is
    W[slot_of[mask_at[mask], code, flags]], one column an own total from the position's.
    `mask_at` numbers the masks reachable from the position, so that `slot_of` spans those
    alone (a whole table's shape was 8-16 MB a position)."""

    W: np.ndarray
    mask_at: np.ndarray
    slot_of: np.ndarray

    def row(self, mask: int, u: int, fl: int) -> np.ndarray:
        """A state's win values, per own total."""
        return self.W[self.slot_of[self.mask_at[mask], u, fl]]

    def options(self, kd: object, state: tuple[int, int, int], throw: int, hand: int
                ) -> np.ndarray:
        """The moves at `hand` after `throw` from the position (`state_win`'s options) at
        the position's own total."""
        return state_win(kd, self.W, self.mask_at, self.slot_of, *state, self.W.shape[1],
                         throw, hand, 1, -1.0, np.zeros(kd.nh, np.bool_))


def win_tables(st: object, state: tuple[int, int, int], util: np.ndarray,
               levels: list[np.ndarray], instant: np.ndarray | None = None,
               at_once: np.ndarray | None = None) -> WinTables:
    """Expected share of the win at the start of every turn of the states reachable from a
    one-part state (its boxes filled and more), over own totals from the position's
    (util[a]: the share when the final total is the position's plus a). `levels`: the
    strategy's reachable states per number of filled boxes (`model.reachable_states`).
    `instant` (`model.instant_hands`): the first-throw hands that win at once, each worth
    at_once[k] on the turn k turns after the position's."""
    sol = st.parts[0].solution
    kd, m = sol.kd, sol.model
    width = len(util)
    gains = gain_bounds(kd, state[0], state[1])
    todo = reachable_from(levels, state)
    masks = np.unique(np.concatenate([lv[:, 0] for lv in todo]))
    mask_at = np.zeros(1 << m.nb, np.int64)  # unreached masks are never read
    mask_at[masks] = np.arange(len(masks))
    slot_of = -np.ones((len(masks), *m.table_shape[1:]), np.int64)
    W = np.zeros((sum(len(x) for x in todo) + 1, width))
    slot = 0
    full = (1 << m.nb) - 1
    iwh = np.zeros(kd.nh, np.bool_) if instant is None else instant
    filled0 = bin(state[0]).count("1")
    for lv in reversed(todo):
        for s in lv:
            mask, u, fl = (int(x) for x in s)
            if mask == full:
                W[slot] = util
            else:
                # only the own totals this state can have been reached with: the rest of
                # its row is never read by a reachable one (it stays 0)
                need = min(width, gains(mask, u, fl) + 1)
                iw = -1.0 if at_once is None else float(
                    at_once[bin(mask).count("1") - filled0])
                W[slot, :need] = state_win(kd, W, mask_at, slot_of, mask, u, fl, width, 1,
                                           -1, need, iw, iwh)[0]
            slot_of[mask_at[mask], u, fl] = slot
            slot += 1
    return WinTables(W, mask_at, slot_of)
