"""Positions: a sheet read as each part's table state (`Position`), its value, and the
values of the hands and keeps of the turn being played (the within-turn recursion of the
kernel)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...domain.errors import InvalidInput, Problem
from ...domain.scoring import Sheet, max_throw, score_sheet
from ..kernels.model import KIND_UPPER, canon
from ..kernels.moments import score2
from ..kernels.values import KernelData, score_pass, turn_keeps
from .strategy import Part, Strategy


def part_state(part: Part, sheet: Sheet) -> tuple[int, int, int, int]:
    """(mask, upper code, flags, actual upper total) of a part's sub-sheet."""
    m = part.solution.model
    column = sheet.columns[part.column]
    mask = 0
    upper = 0
    flags = 0
    for i, bid in enumerate(m.box_ids):
        val = column.boxes.get(bid)
        if val is None:
            continue
        mask |= 1 << i
        if m.kind[i] == KIND_UPPER:
            upper += val
        if m.trk_bit[i] >= 0 and val != 0:
            flags |= 1 << int(m.trk_bit[i])
    return mask, canon(m.threshold, m.maxrem, upper, mask), flags, upper


def part_value(part: Part, mask: int, code: int, flags: int) -> float:
    """Table value of a part's state (raises when the state is unreachable)."""
    v = float(part.solution.values[mask, code, flags])
    if np.isnan(v):
        raise InvalidInput([Problem("/scorecard", "this scorecard cannot occur in a game "
                                                  "(some box holds a value no hand gives)")])
    return v


def terminals(st: Strategy, states: list[tuple[int, int, int, int]],
               base: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """Best value of scoring each hand now (first throw, later throws), relative to now."""
    out = []
    for first in (True, False):
        best = None
        for part, (mask, code, flags, _), b in zip(st.parts, states, base, strict=True):
            sol = part.solution
            s = np.empty((sol.kd.nh, 1), np.float32)
            score_pass(sol.kd, sol.values, np.array([mask], np.int64),
                              np.array([code], np.int64), np.array([flags], np.int64),
                              first, s)
            rel = s[:, 0].astype(np.float64) - b
            best = rel if best is None else np.maximum(best, rel)
        out.append(best)
    return out[0], out[1]


def terminals64(st: Strategy, states: list[tuple[int, int, int, int]],
                 base: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """`terminals` in float64: each placement's points plus the next state's table value,
    added in float64 (`moments.score2` reading the float32 tables), so that a box and a keep
    of equal value come out equal (the float32 sums of `values.score_pass` round them
    apart by up to half a float32 unit, 8e-6 at 250 points)."""
    out = []
    for first in (True, False):
        best = None
        for part, (mask, code, flags, _), b in zip(st.parts, states, base, strict=True):
            sol = part.solution
            nh = sol.kd.nh
            s1, s2, gn, sc = (np.empty((nh, 1)) for _ in range(4))
            nx, bx = np.empty((nh, 1), np.int64), np.empty((nh, 1), np.int64)
            score2(sol.kd, sol.values, sol.values, np.array([mask], np.int64),
                   np.array([code], np.int64), np.array([flags], np.int64), first,
                   s1, s2, nx, gn, bx, sc)
            rel = s1[:, 0] - b
            best = rel if best is None else np.maximum(best, rel)
        out.append(best)
    return out[0], out[1]


def turn_tables(kd: KernelData, term_first: np.ndarray, term_later: np.ndarray,
                throw: int, last: int, throw_value: float = 0.0
                ) -> tuple[np.ndarray, np.ndarray]:
    """Keep values after throw `throw` and hand values at it (see `values.turn_keeps`)."""
    return turn_keeps(kd, term_first, term_later, throw, last, float(throw_value))


@dataclass
class Position:
    """A sheet as the strategy sees it at the start of (or during) a turn."""

    st: Strategy
    sheet: Sheet
    states: list[tuple[int, int, int, int]]  # per part: mask, upper code, flags, upper total
    total: int  # points on the sheet now (bonuses included)
    last: int  # the highest throw number this turn may reach
    throw_value: float  # value of one throw left unused (saved for later turns)
    open_boxes: int

    @classmethod
    def of(cls, st: Strategy, sheet: Sheet) -> Position:
        """Read a sheet (validated by the caller) as part states."""
        rs = st.rs
        states = [part_state(p, sheet) for p in st.parts]
        open_boxes = sheet.open_boxes
        tv = st.saved_throw_value if open_boxes - 1 > 0 else 0.0
        return cls(st, sheet, states, int(score_sheet(rs, sheet).total),
                   max_throw(rs, sheet), tv, open_boxes)
