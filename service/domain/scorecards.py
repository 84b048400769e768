"""A sheet as the API writes it: the scorecard object (`Scorecard`, what
`scoring.parse_scorecard` reads back), its totals in the API's words, and how far it is
filled."""

from __future__ import annotations

from dataclasses import dataclass

from .rules import RuleSet
from .scoring import Column, Sheet, Totals, score_sheet


@dataclass(frozen=True, slots=True)
class ColumnCard:
    """One column of a scorecard as the API writes it (`ColumnSchema`): every box (None =
    open) and the five-of-a-kind bonuses won in it."""

    boxes: dict[str, int | None]
    five_of_a_kind_bonuses: int


@dataclass(frozen=True, slots=True)
class Scorecard:
    """A sheet as the API's scorecard object (`ScorecardSchema`), valid to send back
    unchanged in the next request: a one-column sheet's boxes and five-of-a-kind bonuses,
    or a column sheet's `columns` (the other fields None: not part of the answer), the
    saved throws and whether the game was won at once."""

    saved_throws: int
    won: bool
    boxes: dict[str, int | None] | None = None
    five_of_a_kind_bonuses: int | None = None
    columns: list[ColumnCard] | None = None


def scorecard_of(rs: RuleSet, sheet: Sheet) -> Scorecard:
    """A sheet as the API's scorecard object: every box (None = open), the five-of-a-kind
    bonuses, saved throws and won."""
    ids = rs.variant.box_ids

    def boxes_of(c: Column) -> dict[str, int | None]:
        # a sheet holds only its variant's boxes (`parse_scorecard`, `empty_sheet`), in their
        # order: as many is every box; a sheet made otherwise gets the missing ones as open
        return dict(c.boxes) if len(c.boxes) == len(ids) else {b: c.boxes.get(b) for b in ids}

    if rs.variant.columns:
        return Scorecard(sheet.saved_throws, sheet.won,
                         columns=[ColumnCard(boxes_of(c), c.five_of_a_kind_bonuses)
                                  for c in sheet.columns])
    one = sheet.columns[0]
    return Scorecard(sheet.saved_throws, sheet.won, boxes_of(one), one.five_of_a_kind_bonuses)


def sheet_totals(rs: RuleSet, sheet: Sheet) -> Totals:
    """The sheet's totals (`score_sheet`), in the API's words."""
    return score_sheet(rs, sheet).totals()


def filled_count(sheet: Sheet) -> int:
    """How many boxes are filled (one per turn that wrote a box)."""
    return sum(1 for c in sheet.columns for v in c.boxes.values() if v is not None)


def is_complete(sheet: Sheet) -> bool:
    """Every box of every column filled."""
    return all(v is not None for c in sheet.columns for v in c.boxes.values())
