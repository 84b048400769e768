"""Helpers for the rule-book tests: a row of a rule table, a hand scored against a sheet.

Every expected value in the tables is worked out by hand from docs/rules.md or the
seed documents; the `source` of a row says where.
"""

from __future__ import annotations

from typing import Any

import pytest

from service.domain.rules import RuleSet, effective_rules
from service.domain.scoring import (
    HandScore,
    Placement,
    SheetTotals,
    parse_scorecard,
    score_hand,
    score_sheet,
)

UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")
YAHTZEE_LOWER = ("three_of_a_kind", "four_of_a_kind", "full_house", "small_straight",
                 "large_straight", "five_of_a_kind", "chance")


def row(variant: str, options: dict[str, Any] | None, dice: list[int], throw: int | None,
        sheet: dict[str, int | None] | None, box: str, expected: int, source: str) -> Any:
    """One line of a rule table, with a readable test id."""
    opts = "" if not options else "[" + ",".join(f"{k}={v}" for k, v in options.items()) + "]"
    state = "" if not sheet else "|" + ",".join(f"{k}={v}" for k, v in sheet.items())
    t = "" if throw is None else f"@t{throw}"
    dice_id = "".join(map(str, dice))
    return pytest.param(variant, options, dice, throw, sheet, box, expected, source,
                        id=f"{variant}{opts}-{dice_id}{t}{state}-{box}={expected}-{source}")


def rules(variant: str, options: dict[str, Any] | None = None,
          overrides: dict[str, Any] | None = None) -> RuleSet:
    """The effective rules of a table."""
    return effective_rules(variant, options, overrides)


def hand(variant: str, dice: list[int], *, options: dict[str, Any] | None = None,
         overrides: dict[str, Any] | None = None, throw: int | None = None,
         boxes: dict[str, int | None] | None = None, bonuses: int = 0, saved: int = 0,
         columns: list[dict[str, int | None]] | None = None,
         em_baixo: bool = False) -> HandScore:
    """Score `dice` against a sheet holding `boxes` (or four `columns`)."""
    rs = rules(variant, options, overrides)
    card: dict[str, Any]
    if columns is not None:
        card = {"columns": [{"boxes": c} for c in columns]}
    else:
        card = {"boxes": dict(boxes or {})}
        if bonuses:
            card["five_of_a_kind_bonuses"] = bonuses
    if saved:
        card["saved_throws"] = saved
    return score_hand(rs, dice, throw, parse_scorecard(rs, card), em_baixo)


def placement(result: HandScore, box: str, column: int | None = None) -> Placement:
    """The placement of the hand in one box (of one column on a column sheet)."""
    found = [p for p in result.boxes if p.box == box and p.column == column]
    assert len(found) == 1, f"box {box!r} (column {column}) not on the sheet"
    return found[0]


def legal(result: HandScore, column: int | None = None) -> set[str]:
    """The boxes the hand may legally be written in."""
    return {p.box for p in result.boxes if p.legal and p.column == column}


def box_ids(variant: str, options: dict[str, Any] | None = None,
            overrides: dict[str, Any] | None = None) -> tuple[str, ...]:
    """The sheet's boxes, in order."""
    return rules(variant, options, overrides).variant.box_ids


def totals(variant: str, boxes: dict[str, int | None], *,
           options: dict[str, Any] | None = None, overrides: dict[str, Any] | None = None,
           bonuses: int = 0, final: bool = False) -> SheetTotals:
    """Totals of a one-column sheet."""
    rs = rules(variant, options, overrides)
    card: dict[str, Any] = {"boxes": boxes}
    if bonuses:
        card["five_of_a_kind_bonuses"] = bonuses
    return score_sheet(rs, parse_scorecard(rs, card), final=final)


def filled_except(variant: str, open_boxes: tuple[str, ...] | list[str], value: int = 0,
                  options: dict[str, Any] | None = None) -> dict[str, int | None]:
    """Every box of the sheet filled with `value` except `open_boxes`."""
    return {b: value for b in box_ids(variant, options) if b not in open_boxes}


def upper_sheet(ones: int, twos: int, threes: int, fours: int, fives: int,
                sixes: int) -> dict[str, int]:
    """The six number boxes."""
    return dict(zip(UPPER, (ones, twos, threes, fours, fives, sixes)))
