"""One rule for what a sheet may hold: the consistency check every endpoint runs on a sheet.

A sheet is consistent when some game played by the rules of this table (variant, options and
house rules) could have produced it. `sheet_problems` lists every way a sheet fails that, each
with a JSON pointer, a code (`errors.SHEET_CODES`, documented in docs/problems.md) and a
detail:

- each filled box holds a value the box can score (Joker values included where the table has
  a Joker); on a column that takes first-throw results only, a value a first throw gives;
- a box that needs another box made (Doble Generala) holds a made score only while that box
  holds one;
- the boxes filled keep the sheet's order (Generala obligada) or the column's (column sheets:
  top to bottom, bottom to top);
- five-of-a-kind bonuses only while the five-of-a-kind box is filled (and made, where the
  rules require it), and no more of them than boxes that could have taken a further five of
  a kind (Kniffel: number boxes holding five of their face; YAHTZEE: a box holding 0 too,
  written as a chosen 0 that keeps the bonus), following the forced Joker;
- saved throws (Maxi Yatzy) no more than the turns played could have saved;
- `won` only on a table where a box wins the game at once.

The check reads the sheet as it stands; it does not rebuild the order in which the boxes were
filled, so it finds every sheet that no order of play could produce box by box, and passes a
sheet whose boxes could each have been filled (games/validate, which replays the turns,
checks the order too). Scoring endpoints answer 422 for an inconsistent sheet;
`scorecards/score`, which audits sheets, reports the problems with the totals.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .counting import column_number
from .errors import InvalidInput, Problem, escape_pointer_token
from .rules import RuleSet, UnderRules, joker_values
from .scorecards import Scorecard, scorecard_of
from .scoring import (
    Column,
    HandScore,
    Placement,
    Sheet,
    SheetTotals,
    score_hand,
    totals_fields,
)

_FIRST_SETS: dict[str, tuple[frozenset[int], ...]] = {}


def _first_throw_sets(rs: RuleSet) -> tuple[frozenset[int], ...]:
    """Per box, the values a first throw can give (plain first-throw scores, Joker values,
    0): what a first-throw-only column may hold. Cached by the rules' fingerprint."""
    sets = _FIRST_SETS.get(rs.fingerprint)
    if sets is None:
        v = rs.variant
        sets = tuple(frozenset({0, *rs.score_first[i], *joker_values(v, b)})
                     for i, b in enumerate(v.boxes))
        if len(_FIRST_SETS) > 1024:
            _FIRST_SETS.clear()
        _FIRST_SETS[rs.fingerprint] = sets
    return sets


def plural(n: int, word: str) -> str:
    """"1 turn", "2 turns"."""
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('s') else 's'}"


def _values_text(values: Iterable[int]) -> str:
    vals = sorted(values)
    if len(vals) <= 12:
        return ", ".join(map(str, vals))
    return f"{', '.join(map(str, vals[:6]))}, ... {vals[-1]}"


def column_pointer(rs: RuleSet, base: str, index: int) -> str:
    """Where a column's fields are in a request: the scorecard itself on a one-column sheet,
    `columns/<i>` on a column sheet."""
    return f"{base}/columns/{index}" if rs.variant.columns else base


def sheet_problems(rs: RuleSet, sheet: Sheet, base: str = "/scorecard") -> list[Problem]:
    """Every way the sheet breaks the rules of what a sheet may hold (empty: consistent).

    `base` is the scorecard's JSON pointer in the request ("" when the body is the scorecard).
    """
    v = rs.variant
    problems: list[Problem] = []
    orders = v.columns or (v.order,)
    for c, (column, order) in enumerate(zip(sheet.columns, orders)):
        where = column_pointer(rs, base, c)
        _box_problems(rs, column, order, where, problems)
        if order in ("down", "up"):
            _order_problems(rs, column, order, where, problems)
        if column.five_of_a_kind_bonuses:
            _bonus_problems(rs, sheet, c, where, problems)
    if v.saved_throws and sheet.saved_throws:
        played = sum(1 for col in sheet.columns for val in col.boxes.values() if val is not None)
        most = (v.throws - 1) * played
        if sheet.saved_throws > most:
            problems.append(Problem(
                f"{base}/saved_throws",
                f"{plural(sheet.saved_throws, 'saved throw')}, but "
                f"{plural(played, 'turn')} played could have saved at most {most} "
                f"({v.throws - 1} a turn)", "too_many_saved_throws"))
    if sheet.won and not any(b.wins_on_first_throw for b in v.boxes):
        problems.append(Problem(f"{base}/won", f"no box of this {v.id!r} table wins the game "
                                               f"at once", "cannot_win"))
    return problems


def check_sheet(rs: RuleSet, sheet: Sheet, base: str = "/scorecard") -> None:
    """Raise InvalidInput (with codes) when the sheet is not consistent."""
    problems = sheet_problems(rs, sheet, base)
    if problems:
        raise InvalidInput(problems)


def _box_problems(rs: RuleSet, column: Column, order: str, where: str,
                  problems: list[Problem]) -> None:
    v = rs.variant
    values = column.boxes
    achievable = rs.achievable
    first_sets = _first_throw_sets(rs) if order == "first_throw" else None
    for i, val in enumerate(column.values_of(v.box_ids)):
        if val is None:
            continue
        b = v.boxes[i]
        if val in achievable[i] and first_sets is None and not (val and b.requires):
            continue  # an achievable value, and no other rule for it to break
        ptr = f"{where}/boxes/{escape_pointer_token(b.id)}"
        if val not in rs.achievable[i]:
            problems.append(Problem(ptr, f"{val} cannot be scored in box {b.id!r} with these "
                                         f"rules (it can hold "
                                         f"{_values_text(rs.achievable[i])})",
                                    "value_not_achievable"))
        elif first_sets is not None and val not in first_sets[i]:
            problems.append(Problem(ptr, f"{val} in box {b.id!r} needs a later throw, but this "
                                         f"column takes first-throw results only (it can hold "
                                         f"{_values_text(first_sets[i])})", "first_throw_only"))
        elif val and any(not values.get(req) for req in b.requires):
            needed = ", ".join(repr(r) for r in b.requires)
            problems.append(Problem(ptr, f"box {b.id!r} holds a made score, which needs "
                                         f"{needed} made first; it is open or scratched",
                                    "requires_made_box"))


def _order_problems(rs: RuleSet, column: Column, order: str, where: str,
                    problems: list[Problem]) -> None:
    if order not in ("down", "up"):
        return
    ids = list(rs.variant.box_ids)
    if order == "up":
        ids.reverse()
    first_open = None
    for bid in ids:
        if column.boxes.get(bid) is None:
            if first_open is None:
                first_open = bid
        elif first_open is not None:
            way = "top to bottom" if order == "down" else "bottom to top"
            problems.append(Problem(f"{where}/boxes/{escape_pointer_token(bid)}",
                                    f"box {bid!r} is filled while {first_open!r}, before it "
                                    f"in the order ({way}), is open", "out_of_order"))
            return


def _bonus_problems(rs: RuleSet, sheet: Sheet, c: int, where: str,
                    problems: list[Problem]) -> None:
    column = sheet.columns[c]
    count = column.five_of_a_kind_bonuses
    fb = rs.variant.five_of_a_kind_bonus
    if not count or fb is None:  # a count on a table without the bonus fails parsing
        return
    ptr = f"{where}/five_of_a_kind_bonuses"
    five = column.boxes.get("five_of_a_kind")
    if five is None or (fb.needs_made_box and five == 0):
        state = "open" if five is None else "scratched"
        problems.append(Problem(ptr, f"{plural(count, 'five-of-a-kind bonus')}, but the "
                                     f"five-of-a-kind box is {state}",
                                "bonus_without_five_of_a_kind"))
        return
    possible = bonus_boxes(rs, sheet, c, stop_at=count)
    if count > possible:
        where_to = ("number boxes holding five of their face" if fb.placement ==
                    "matching_upper" else "filled boxes a further five of a kind could have "
                                          "been written in")
        problems.append(Problem(ptr, f"{plural(count, 'five-of-a-kind bonus')}, but only "
                                     f"{possible} {where_to}", "too_many_bonuses"))


def bonus_boxes(rs: RuleSet, sheet: Sheet, c: int, stop_at: int | None = None) -> int:
    """How many filled boxes of column `c` could have taken a further five of a kind that
    earned the bonus, with the value they hold (counting stops at `stop_at`).

    A box counts when, with it open again and the rest of the column as it is, some five of
    a kind may legally be written there (`score_hand`: Joker, order and first-throw rules)
    for the value it holds with a bonus: its score there, or 0 as a chosen 0 where that
    keeps the bonus (`scratch_keeps_bonus`). The rest of the sheet as it is now is the most a
    forced Joker could have seen filled, so a sheet that passes is possible box by box.
    """
    column = sheet.columns[c]
    return _bonus_boxes(rs, c, tuple(column.values_of(rs.variant.box_ids)),
                        column.five_of_a_kind_bonuses, stop_at)


_BONUS_BOXES: dict[tuple[Any, ...], int] = {}


def _bonus_boxes(rs: RuleSet, c: int, values: tuple[int | None, ...], chips: int,
                 stop_at: int | None) -> int:
    key = (rs.fingerprint, c, values, chips, stop_at)
    hit = _BONUS_BOXES.get(key)
    if hit is not None:
        return hit
    v = rs.variant
    ids = v.box_ids
    col_no = column_number(c, bool(v.columns))
    first_only = v.columns and v.columns[c] == "first_throw"
    faces_for = _five_faces(rs)
    # boxes whose value only a five of a kind gives are tried first, scratches last
    candidates = sorted((i for i, val in enumerate(values)
                         if val is not None and ids[i] != "five_of_a_kind"
                         and val in faces_for[i]), key=lambda i: values[i] == 0)
    found = 0
    for i in candidates:
        val = values[i]
        opened = Column({b: (None if k == i else values[k]) for k, b in enumerate(ids)}, chips)
        columns = [opened if k == c else Column({b: None for b in ids})
                   for k in range(max(1, len(v.columns)))]
        trial = Sheet(columns, saved_throws=0, won=False)
        throws: tuple[int | None, ...] = (1,) if first_only else (None, 1)
        if any(_bonus_placement(rs, trial, [face] * v.dice, throw, ids[i], col_no, val)
               for face in faces_for[i][val] for throw in throws):
            found += 1
            if stop_at is not None and found >= stop_at:
                break
    if len(_BONUS_BOXES) > 4096:
        _BONUS_BOXES.clear()
    _BONUS_BOXES[key] = found
    return found


_FIVE_FACES: dict[str, tuple[dict[int, tuple[int, ...]], ...]] = {}


def _five_faces(rs: RuleSet) -> tuple[dict[int, tuple[int, ...]], ...]:
    """Per box, each value a five of a kind can leave there (its plain score on a later or
    the first throw, a Joker's value, 0) and the faces that can: which placements
    `bonus_boxes` needs to try. Cached by the rules' fingerprint."""
    table = _FIVE_FACES.get(rs.fingerprint)
    if table is None:
        v = rs.variant
        out = []
        for i, b in enumerate(v.boxes):
            by_value: dict[int, list[int]] = {}
            jokers = joker_values(v, b)
            for face in range(1, 7):
                h = rs.hand_index[(face,) * v.dice]
                for value in {0, rs.score_later[i][h], rs.score_first[i][h], *jokers}:
                    by_value.setdefault(value, []).append(face)
            out.append({val: tuple(fs) for val, fs in by_value.items()})
        table = tuple(out)
        if len(_FIVE_FACES) > 1024:
            _FIVE_FACES.clear()
        _FIVE_FACES[rs.fingerprint] = table
    return table


def _bonus_placement(rs: RuleSet, sheet: Sheet, dice: list[int], throw: int | None,
                     box: str, col_no: int | None, value: int) -> bool:
    """Whether the five of a kind may be written in the box for `value` with its bonus: its
    score there, or a chosen 0 where a chosen 0 keeps the bonus (`scratch_keeps_bonus`)."""
    for p in placements_of(score_hand(rs, dice, throw, sheet)):
        if p.box == box and p.column == col_no:
            return p.legal and bonus_points(p) > 0 and (
                p.score == value or (value == 0 and scratch_keeps_bonus(rs)))
    return False


def placements_of(hs: HandScore) -> list[Placement]:
    """Every placement `score_hand` found (per box, per column)."""
    return hs.boxes


def bonus_points(p: Placement) -> int:
    """The five-of-a-kind bonus points a placement earns."""
    return p.five_of_a_kind_bonus


def scratch_keeps_bonus(rs: RuleSet) -> bool:
    """Whether a five of a kind written as a chosen 0 (decision 3, `scratch`) keeps the
    five-of-a-kind bonus it would earn in that box (docs/rules.md, decision 23).

    Yes where the bonus is earned wherever the roll is placed (`placement: any`, the YAHTZEE
    bonus: "wherever that Yahtzee is then placed, a forced zero included"); no where it is
    earned by scoring the roll in the number box of its face (`matching_upper`, Kniffel's
    extra +50: a 0 there does not score the roll).
    """
    fb = rs.variant.five_of_a_kind_bonus
    return fb is not None and fb.placement == "any"


#: Codes that say a box's value is impossible (the audit's per-box `achievable: false`).
VALUE_CODES = ("value_not_achievable", "first_throw_only", "requires_made_box")


@dataclass(slots=True, kw_only=True)
class ScorecardTotals(UnderRules, SheetTotals):
    """A scorecard totalled and audited (scorecards/score's answer,
    `ScorecardTotalsSchema`): its totals (`SheetTotals`), the scorecard as read (every box
    listed), and whether some game by these rules could produce it (`valid`), with every
    reason it could not (`problems`: pointer, code, detail)."""

    rules: RuleSet = field(repr=False)
    scorecard: Scorecard
    valid: bool
    problems: list[Problem]


def audit(rs: RuleSet, sheet: Sheet, final: bool = False, base: str = "") -> ScorecardTotals:
    """The sheet's totals (`score_sheet`, empty boxes as 0 when `final`) with its audit:
    `valid` and `problems` (pointer, code, detail), and the per-box `achievable` flags set
    from the same problems, so the answer states one rule. `base`: the sheet's pointer in
    the request."""
    totals = totals_fields(rs, sheet, final, check_boxes=False)  # every box achievable
    problems = sheet_problems(rs, sheet, base)
    by_pointer = {p.pointer for p in problems if p.code in VALUE_CODES}
    if by_pointer:  # but those whose value is impossible
        columns = totals.get("columns")
        boxes = [col.boxes for col in columns] if columns else [totals.get("boxes") or []]
        for c, checks in enumerate(boxes):
            where = column_pointer(rs, base, c)
            for b in checks:
                b.achievable = f"{where}/boxes/{escape_pointer_token(b.box)}" not in by_pointer
    return ScorecardTotals(**totals, rules=rs, scorecard=scorecard_of(rs, sheet),
                           valid=not problems, problems=problems)
