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
- a game won at once (Generala servida, General de boca) is not modelled as ending the game:
  the advisor values it at its box score like any placement.

Given the distributions F_j, P(i alone on top) = sum_x P_i(x) prod_{j != i} F_j(x - 1), and the
tie terms come from the polynomial prod_{j != i} (F_j(x - 1) + P_j(x) z).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .distribution import Distribution

ASSUMPTIONS = (
    "Every player plays the advisor's strategy (maximising their own expected final score), "
    "so final totals are independent; each player's distribution is computed from their own "
    "sheet (and the current dice of the player to move); equal top totals share the win "
    "(share: a k-way tie counts 1/k, shares sum to 1); a game won at once is counted at its "
    "box score, not as ending the game.")


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


def _aligned(dists: list[Distribution]) -> tuple[int, np.ndarray]:
    """Every distribution on one range of totals: (lowest total, [player, total] probs)."""
    lo = min(d.lo for d in dists)
    hi = max(d.lo + len(d.probs) for d in dists)
    out = np.zeros((len(dists), hi - lo))
    for i, d in enumerate(dists):
        out[i, d.lo - lo:d.lo - lo + len(d.probs)] = d.probs / d.probs.sum()
    return lo, out


def utility(others: list[Distribution], lo: int, hi: int) -> np.ndarray:
    """Expected share of the win for each own final total lo..hi-1 against `others`."""
    if not others:
        return np.ones(hi - lo)
    olo, p = _aligned(others)
    width = p.shape[1]
    xs = np.arange(lo, hi) - olo
    below = np.concatenate([np.zeros((len(others), 1)), np.cumsum(p, axis=1)], axis=1)
    out = np.empty(hi - lo)
    for n, x in enumerate(xs):
        if x < 0:
            out[n] = 0.0
            continue
        if x >= width:
            out[n] = 1.0
            continue
        poly = np.ones(1)
        for j in range(len(others)):
            poly = np.convolve(poly, [below[j, x], p[j, x]])
        out[n] = float(poly @ (1.0 / (1.0 + np.arange(len(poly)))))
    return out


def chances(dists: list[Distribution]) -> list[Chances]:
    """Each player's chances of finishing first, the totals being independent."""
    lo, p = _aligned(dists)
    n, width = p.shape
    below = np.concatenate([np.zeros((n, 1)), np.cumsum(p, axis=1)[:, :-1]], axis=1)
    out = []
    for i in range(n):
        win = tie = share = 0.0
        others = [j for j in range(n) if j != i]
        for x in np.flatnonzero(p[i] > 0):
            poly = np.ones(1)
            for j in others:
                poly = np.convolve(poly, [below[j, x], p[j, x]])
            win += p[i, x] * poly[0]
            tie += p[i, x] * float(poly[1:].sum())
            share += p[i, x] * float(poly @ (1.0 / (1.0 + np.arange(len(poly)))))
        out.append(Chances(float(win), float(tie), float(share)))
    del lo, width
    return out
