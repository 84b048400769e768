"""A variant's rules compiled to flat arrays for the solver kernels.

The solver's game state between turns is ``(mask, ucode, flags)``:

- ``mask``: bit b set when box b (sheet order) is filled;
- ``ucode``: the upper-section total while the upper bonus can still be won, else ``T``
  (the threshold): totals that reached the bonus (paid on the placement that crossed it) and
  totals that can no longer reach it are one state, since the future no longer depends on them.
  Variants without an upper bonus have the single code 0;
- ``flags``: one bit per *tracked* box that later rules read: the five-of-a-kind box holding
  its score, not a scratch (YAHTZEE bonus, extra Kniffel), and the boxes a ``requires`` names
  (Doble Generala
  needs Generala = 50). A bit is 0 while its box is open.

Within a turn the solver works on *keeps*: multisets of 0..n dice, of which the hands are the
n-dice ones. Arrays here index keeps by ``keep id`` (sorted by size) and hands by the index of
``service.domain.dice.all_hands(n)`` (the RuleSet's ``hand_index``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations_with_replacement
from math import factorial

import numba as nb
import numpy as np

from ...domain.boxes import full_value, pattern_match
from ...domain.dice import FACES, all_hands, counts_of
from ...domain.rules import RuleSet
from ...domain.variants import UPPER_IDS

ORDER_CODES = {"free": 0, "down": 1, "up": 2, "first_throw": 3}
JOKER_CODES = {"none": 0, "forced": 1, "free": 2}
KIND_PLAIN, KIND_UPPER, KIND_TRACKED = 0, 1, 2


@dataclass(frozen=True)
class Keeps:
    """Every multiset of 0..n dice, sorted by size, with add/remove-one-die links."""

    n: int
    counts: np.ndarray  # [nk, 7] int64, index 0 unused
    size: np.ndarray  # [nk]
    add: np.ndarray  # [nk, 7]: keep id with one more die of face f (-1 when full)
    sub: np.ndarray  # [nk, 7]: keep id with one die of face f less (-1 when none)
    hand_keep: np.ndarray  # [nh]: keep id of each hand
    keep_hand: np.ndarray  # [nk]: hand index of a full keep, else -1
    index: dict[tuple[int, ...], int]  # sorted dice tuple -> keep id

    @property
    def nk(self) -> int:
        """How many keeps."""
        return len(self.size)


def make_keeps(n: int) -> Keeps:
    """Keeps of up to n dice, linked by one die added or removed."""
    tuples: list[tuple[int, ...]] = []
    for s in range(n + 1):
        tuples += list(combinations_with_replacement(FACES, s))
    index = {t: i for i, t in enumerate(tuples)}
    nk = len(tuples)
    counts = np.zeros((nk, 7), np.int64)
    size = np.zeros(nk, np.int64)
    add = -np.ones((nk, 7), np.int64)
    sub = -np.ones((nk, 7), np.int64)
    for i, t in enumerate(tuples):
        c = counts_of(t)
        counts[i] = c
        size[i] = len(t)
        for f in FACES:
            if len(t) < n:
                add[i, f] = index[tuple(sorted((*t, f)))]
            if c[f]:
                lst = list(t)
                lst.remove(f)
                sub[i, f] = index[tuple(lst)]
    hands = all_hands(n)
    hand_keep = np.array([index[h] for h in hands], np.int64)
    keep_hand = -np.ones(nk, np.int64)
    keep_hand[hand_keep] = np.arange(len(hands))
    return Keeps(n, counts, size, add, sub, hand_keep, keep_hand, index)


def hand_probabilities(n: int) -> np.ndarray:
    """Exact probability of each sorted hand of n dice (float64)."""
    out = []
    for h in all_hands(n):
        c = counts_of(h)
        ways = factorial(n)
        for f in FACES:
            ways //= factorial(c[f])
        out.append(ways / 6**n)
    return np.array(out, np.float64)


def instant_hands(rs: RuleSet) -> np.ndarray | None:
    """Per hand (the RuleSet's `hand_index`), whether it wins the game at once when thrown
    on a turn's first throw (Generala servida, General de boca: rule book decision 4, in
    whatever state the box is); None where no box of the rules does."""
    wins = np.array([any(row) for row in rs.wins_first], np.bool_)
    return wins if wins.any() else None


def instant_chance(rs: RuleSet) -> float:
    """The chance that a turn's first throw wins the game at once (0 where nothing does):
    the same every turn, whatever the sheet, since the first throw takes every die."""
    wins = instant_hands(rs)
    return 0.0 if wins is None else float(hand_probabilities(rs.variant.dice)[wins].sum())


@dataclass(frozen=True)
class Model:
    """The numeric description of one column's rules that the kernels read."""

    nb: int
    nd: int
    throws: int
    box_ids: tuple[str, ...]
    keeps: Keeps
    prob: np.ndarray  # [nh] float64
    reward: np.ndarray  # [2, nb, nh] float32: plain score later (0) / first throw (1)
    cls: np.ndarray  # [2, nb, nh] int64: outcome class (upper: count of the face; tracked:
    # score != 0)
    gives: np.ndarray  # [2, nb, nd + 2] bool: the outcome classes some hand of the throw gives
    # (a tracked box whose every score is 0 never gives 1: no state has its flag set)
    kind: np.ndarray  # [nb]: plain / upper / tracked
    face: np.ndarray  # [nb]: face of an upper box, else 0
    trk_bit: np.ndarray  # [nb]: flag bit a tracked box sets (when it holds a non-zero score)
    req_bit: np.ndarray  # [nb]: flag bit that must be set for the box to score, else -1
    is_lower: np.ndarray  # [nb] bool
    threshold: int  # upper bonus threshold (0 = none)
    amount: int  # upper bonus amount
    nu: int  # upper codes: threshold + 1, or 1
    nflags: int  # 2 ** tracked bits
    maxrem: np.ndarray  # [2**nb] int64: most the open upper boxes can still add
    order: int
    joker: int
    five_box: int  # -1 when the sheet has none or no Joker/bonus reads it
    five_hand: np.ndarray  # [7] hand index of n equal dice of face f
    up_box: np.ndarray  # [7] box index of the number box of face f, -1 if none
    joker_value: np.ndarray  # [nb, 7] float32 full value of a box for an n-of-a-kind Joker
    bonus_amount: int
    bonus_bit: int  # flag bit the five-of-a-kind bonus needs (-1: only the box filled)
    bonus_matching: bool  # bonus only when placed in the matching number box
    first_differs: bool  # whether any first-throw score differs from the later one

    @property
    def table_shape(self) -> tuple[int, int, int]:
        """Shape of the dense value table: masks x upper codes x flags."""
        return (1 << self.nb, self.nu, self.nflags)


def build_model(rs: RuleSet, order: str | None = None) -> Model:
    """Compile a RuleSet (one column of it, with `order`) to the kernels' arrays."""
    v = rs.variant
    boxes = v.boxes
    nb, nd = len(boxes), v.dice
    hands = all_hands(nd)
    keeps = make_keeps(nd)
    five_box = v.box_ids.index("five_of_a_kind") if v.box("five_of_a_kind") else -1
    fb = v.five_of_a_kind_bonus
    # Tracked boxes: their flag is set while they hold a made (non-zero) score.
    tracked: list[int] = []
    if five_box >= 0 and fb is not None and fb.needs_made_box:
        tracked.append(five_box)
    req_bit = -np.ones(nb, np.int64)
    for i, b in enumerate(boxes):
        if len(b.requires) > 1:
            raise NotImplementedError("a box requiring more than one other box")
        for need in b.requires:
            bi = v.box_ids.index(need)
            if bi not in tracked:
                tracked.append(bi)
            req_bit[i] = tracked.index(bi)
    trk_bit = -np.ones(nb, np.int64)
    for bit, bi in enumerate(tracked):
        trk_bit[bi] = bit
        if req_bit[bi] >= 0:
            raise NotImplementedError("a tracked box that requires another box")
    kind = np.zeros(nb, np.int64)
    face = np.zeros(nb, np.int64)
    for i, b in enumerate(boxes):
        if b.pattern == "face":
            kind[i] = KIND_UPPER
            face[i] = b.face
            if trk_bit[i] >= 0 or req_bit[i] >= 0:
                raise NotImplementedError("a number box with a tracked value")
        elif trk_bit[i] >= 0:
            kind[i] = KIND_TRACKED
    reward = np.zeros((2, nb, len(hands)), np.float32)
    reward[0] = np.array(rs.score_later, np.float32)
    reward[1] = np.array(rs.score_first, np.float32)
    cls = np.zeros((2, nb, len(hands)), np.int64)
    for i in range(nb):
        if kind[i] == KIND_UPPER:
            cnt = np.array([counts_of(h)[face[i]] for h in hands])
            cls[0, i] = cls[1, i] = cnt
        elif kind[i] == KIND_TRACKED:
            cls[:, i] = reward[:, i] != 0
    gives = np.zeros((2, nb, nd + 2), np.bool_)
    for t in range(2):
        for i in range(nb):
            gives[t, i, np.unique(cls[t, i])] = True
    ub = v.upper_bonus
    threshold, amount = (ub.threshold, ub.amount) if ub else (0, 0)
    masks = np.arange(1 << nb)
    maxrem = np.zeros(1 << nb, np.int64)
    for i in range(nb):
        if kind[i] == KIND_UPPER:
            maxrem += np.where(masks & (1 << i), 0, face[i] * nd)
    five_hand = -np.ones(7, np.int64)
    up_box = -np.ones(7, np.int64)
    for f in FACES:
        five_hand[f] = rs.hand_index[(f,) * nd]
        if UPPER_IDS[f - 1] in v.box_ids:
            up_box[f] = v.box_ids.index(UPPER_IDS[f - 1])
    joker_value = np.zeros((nb, 7), np.float32)
    for i, b in enumerate(boxes):
        for f in FACES:
            c = counts_of((f,) * nd)
            joker_value[i, f] = full_value(b, c, pattern_match(b, c) or (5 * f, f))
    uses_five = five_box >= 0 and (v.joker != "none" or fb is not None)
    bonus_bit = -1
    if fb is not None and fb.needs_made_box:
        bonus_bit = tracked.index(five_box)
    return Model(
        nb=nb, nd=nd, throws=v.throws, box_ids=v.box_ids, keeps=keeps,
        prob=hand_probabilities(nd), reward=reward, cls=cls, gives=gives, kind=kind, face=face,
        trk_bit=trk_bit, req_bit=req_bit,
        is_lower=np.array([b.section == "lower" for b in boxes]),
        threshold=threshold, amount=amount, nu=threshold + 1 if threshold else 1,
        nflags=1 << len(tracked), maxrem=maxrem,
        order=ORDER_CODES[order or v.order], joker=JOKER_CODES[v.joker],
        five_box=five_box if uses_five else -1, five_hand=five_hand, up_box=up_box,
        joker_value=joker_value, bonus_amount=fb.amount if fb else 0, bonus_bit=bonus_bit,
        bonus_matching=bool(fb and fb.placement == "matching_upper"),
        first_differs=bool(np.any(reward[0] != reward[1])),
    )


def reachable_states(m: Model) -> list[np.ndarray]:
    """Reachable states per number of filled boxes: arrays of (mask, ucode, flags) rows,
    each level's in the order of mask, then ucode, then flags.

    Upper totals are the sums the filled number boxes can make (face x 0..n each),
    canonicalised; a flag bit can be set only once its box is filled with a score that
    is non-zero on some hand. Listed by a kernel (`reachable_rows`): the build of new rules
    waits for it before its first level (numpy's version took 0.07-0.2 s for Yatzy, mostly
    in the page faults of its temporaries).
    """
    nb = m.nb
    upper = np.array([i for i in range(nb) if m.kind[i] == KIND_UPPER], np.int64)
    nbits = m.nflags.bit_length() - 1
    bit_ok = np.zeros(max(1, nbits), np.bool_)  # the bit's box gives a non-zero score
    bit_box = np.zeros(max(1, nbits), np.int64)
    for bit in range(nbits):
        box = int(np.nonzero(m.trk_bit == bit)[0][0])
        bit_box[bit] = box
        bit_ok[bit] = bool(m.gives[:, box, 1].any())
    rows, counts = reachable_rows(nb, m.nd, upper, np.ascontiguousarray(m.face[upper]),
                                  int(m.threshold), np.ascontiguousarray(m.maxrem), nbits,
                                  bit_box, bit_ok)
    return np.split(rows, np.cumsum(counts)[:nb])


@nb.njit(cache=True, error_model="numpy")
def reachable_rows(nbox, nd, upper, faces, threshold, maxrem, nbits, bit_box, bit_ok):
    """`reachable_states`' rows, level after level (the number of filled boxes), and the
    number of each level's."""
    nup = len(upper)
    width = threshold + 1 if threshold else 1
    # the upper totals each subset of the number boxes can make (capped at the threshold)
    made = np.zeros((1 << nup, width), np.bool_)
    made[0, 0] = True
    for sub in range(1, 1 << nup):
        j = 0
        while not (sub >> j) & 1:
            j += 1
        prev = sub & (sub - 1)
        for s in range(width):
            if made[prev, s]:
                for c in range(nd + 1):
                    made[sub, min(threshold, s + faces[j] * c) if threshold else 0] = True
    nmask = 1 << nbox
    counts = np.zeros(nbox + 1, np.int64)
    seen = np.zeros(width, np.bool_)
    for sweep in range(2):  # count each level's rows, then write them in place
        if sweep == 1:
            rows = np.empty((counts.sum(), 3), np.int64)
            at = np.zeros(nbox + 1, np.int64)
            for lv in range(1, nbox + 1):
                at[lv] = at[lv - 1] + counts[lv - 1]
        for mask in range(nmask):
            usub = 0
            for j in range(nup):
                usub |= ((mask >> upper[j]) & 1) << j
            seen[:] = False
            for s in range(width):
                if made[usub, s]:
                    t = s
                    if threshold and (t >= threshold or t + maxrem[mask] < threshold):
                        t = threshold
                    seen[t] = True
            allowed = 0  # the flag bits this mask may hold
            for bit in range(nbits):
                if bit_ok[bit] and (mask >> bit_box[bit]) & 1:
                    allowed |= 1 << bit
            level = 0
            x = mask
            while x:
                x &= x - 1
                level += 1
            for t in range(width):
                if not seen[t]:
                    continue
                for flags in range(1 << nbits):
                    if flags & ~allowed:
                        continue
                    if sweep == 0:
                        counts[level] += 1
                    else:
                        i = at[level]
                        rows[i, 0] = mask
                        rows[i, 1] = t
                        rows[i, 2] = flags
                        at[level] = i + 1
    return rows, counts


def canon(t: int, maxrem: np.ndarray, total: int, mask: int) -> int:
    """The upper code of an upper total with the boxes `mask` filled, for upper-bonus
    threshold t (0: no bonus) and `maxrem` (a model's: the most the open upper boxes can
    still add). Plain Python, written once: the kernels run it compiled (`steps.canon`)."""
    if t == 0:
        return 0
    if total >= t or total + maxrem[mask] < t:
        return t
    return total
