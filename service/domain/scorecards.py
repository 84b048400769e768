"""A sheet as the API writes it: the scorecard object (`scorecard_data`, what
`scoring.parse_scorecard` reads back), its totals in the API's words, and how far it is
filled."""

from __future__ import annotations

from typing import Any

from .rules import RuleSet
from .scoring import Column, Sheet, score_sheet


def scorecard_data(rs: RuleSet, sheet: Sheet) -> dict[str, Any]:
    """A sheet as the API's scorecard object: every box (null = open), the five-of-a-kind
    bonuses, saved throws and won; valid to send back unchanged in the next request."""
    ids = rs.variant.box_ids

    def column(c: Column) -> dict[str, Any]:
        # a sheet holds only its variant's boxes (`parse_scorecard`, `empty_sheet`), in their
        # order: as many is every box; a sheet made otherwise gets the missing ones as open
        boxes = dict(c.boxes) if len(c.boxes) == len(ids) else {b: c.boxes.get(b) for b in ids}
        return {"boxes": boxes, "five_of_a_kind_bonuses": c.five_of_a_kind_bonuses}

    if rs.variant.columns:
        data: dict[str, Any] = {"columns": [column(c) for c in sheet.columns]}
    else:
        data = column(sheet.columns[0])
    data["saved_throws"] = sheet.saved_throws
    data["won"] = sheet.won
    return data


def sheet_totals(rs: RuleSet, sheet: Sheet) -> dict[str, int]:
    """The sheet's totals (`score_sheet`), in the API's words."""
    t = score_sheet(rs, sheet)
    upper, upper_bonus, lower, total = (t["upper_subtotal"], t["upper_bonus"],
                                        t["lower_total"], t["total"])
    return {"upper_subtotal": upper, "upper_bonus": upper_bonus, "lower_total": lower,
            "five_of_a_kind_bonus": total - upper - upper_bonus - lower, "total": total}


def filled_count(sheet: Sheet) -> int:
    """How many boxes are filled (one per turn that wrote a box)."""
    return sum(1 for c in sheet.columns for v in c.boxes.values() if v is not None)


def is_complete(sheet: Sheet) -> bool:
    """Every box of every column filled."""
    return all(v is not None for c in sheet.columns for v in c.boxes.values())
