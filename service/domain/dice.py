"""Dice hands: normal form, face counts, and the patterns a hand forms.

A hand is kept as a sorted tuple of faces 1..6. Everything else in the core works on that
normal form, so scoring is order-independent by construction.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement

FACES = (1, 2, 3, 4, 5, 6)

Hand = tuple[int, ...]
Counts = tuple[int, ...]  # index 0 unused, index f = how many dice show face f


def normalise(dice: list[int] | tuple[int, ...]) -> Hand:
    """Return the hand as a sorted tuple (the form every scoring function takes)."""
    return tuple(sorted(int(d) for d in dice))


def counts_of(hand: Hand) -> Counts:
    """Return how many dice show each face, as a 7-tuple indexed by face."""
    c = [0] * 7
    for d in hand:
        c[d] += 1
    return tuple(c)


def bottom_faces(hand: Hand) -> Hand:
    """Return the faces turned to the table ("em baixo"): 7 - top on a standard die."""
    return normalise([7 - d for d in hand])


@lru_cache(maxsize=8)
def all_hands(n_dice: int) -> tuple[Hand, ...]:
    """Every distinct sorted hand of n dice (252 for five dice, 462 for six)."""
    return tuple(combinations_with_replacement(FACES, n_dice))


def hand_probability(hand: Hand) -> float:
    """Probability that n fair dice show this multiset (multinomial count / 6**n)."""
    from math import factorial

    c = counts_of(hand)
    ways = factorial(len(hand))
    for f in FACES:
        ways //= factorial(c[f])
    return ways / 6 ** len(hand)


def _has_run(faces: set[int], length: int) -> bool:
    return any(set(range(s, s + length)) <= faces for s in range(1, 8 - length))


#: Every name `patterns_of` can give, in the order it gives them.
HAND_PATTERNS = ("pair", "two_pairs", "three_pairs", "three_of_a_kind", "four_of_a_kind",
                 "five_of_a_kind", "six_of_a_kind", "full_house", "villa", "tower",
                 "small_straight", "large_straight", "wrapped_straight", "full_straight")


@lru_cache(maxsize=1024)
def patterns_of(hand: Hand) -> tuple[str, ...]:
    """Names of the patterns the hand forms, independent of any variant's boxes.

    Used by hand validation to tell a client what it has (pair, full house, straight...).
    """
    c = counts_of(hand)
    groups = sorted((c[f] for f in FACES if c[f]), reverse=True)
    faces = {f for f in FACES if c[f]}
    found: list[str] = []
    pairs = sum(1 for f in FACES if c[f] >= 2)
    if pairs >= 1:
        found.append("pair")
    if pairs >= 2:
        found.append("two_pairs")
    if pairs >= 3:
        found.append("three_pairs")
    top = groups[0] if groups else 0
    for n, name in ((3, "three_of_a_kind"), (4, "four_of_a_kind"),
                    (5, "five_of_a_kind"), (6, "six_of_a_kind")):
        if top >= n:
            found.append(name)
    if len(groups) >= 2 and groups[0] >= 3 and groups[1] >= 2:
        found.append("full_house")
    if len(groups) >= 2 and groups[0] >= 3 and groups[1] >= 3:
        found.append("villa")
    if len(groups) >= 2 and groups[0] >= 4 and groups[1] >= 2:
        found.append("tower")
    if _has_run(faces, 4):
        found.append("small_straight")
    if _has_run(faces, 5):
        found.append("large_straight")
    if {1, 3, 4, 5, 6} <= faces:
        found.append("wrapped_straight")
    if _has_run(faces, 6):
        found.append("full_straight")
    return tuple(found)
