"""Scoring hands and scorecards: the sheet-state rules on top of each box's own rule.

Here live the rules that depend on what is already on the sheet: which boxes are open, the
Joker (a five of a kind thrown while the five-of-a-kind box is filled), the five-of-a-kind
bonus, boxes that require another box's value (Doble Generala), the order a sheet or a
column must be filled in, first-throw scores, and games won at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .counting import column_number
from .dice import FACES, Hand, bottom_faces, counts_of, normalise, patterns_of
from .errors import InvalidInput, Problem, pointer
from .rules import RuleSet, UnderRules
from .variants import UPPER_IDS, unknown_box


@dataclass
class Column:
    """One column of a score sheet: each box's value (None while open) and how many
    five-of-a-kind bonuses were won in it."""

    boxes: dict[str, int | None]
    five_of_a_kind_bonuses: int = 0

    def filled(self, box_id: str) -> bool:
        """Whether the box has an entry (a scratch counts)."""
        return self.boxes.get(box_id) is not None

    def values_of(self, box_ids: tuple[str, ...]) -> Iterable[int | None]:
        """The values of the sheet's boxes `box_ids` (in sheet order), None for an open box.

        A column holds only its sheet's boxes, in their order (`parse_scorecard`,
        `empty_sheet`): as many values as ids are theirs, read as they are; a column made
        otherwise is read box by box."""
        boxes = self.boxes
        return boxes.values() if len(boxes) == len(box_ids) else map(boxes.get, box_ids)


@dataclass
class Sheet:
    """A player's whole sheet: one column, or four on a column sheet."""

    columns: list[Column]
    saved_throws: int = 0
    won: bool = False

    @property
    def open_boxes(self) -> int:
        """The boxes still empty, over every column: the player's turns left (unless the
        game is won at once)."""
        return sum(1 for c in self.columns for v in c.boxes.values() if v is None)


@dataclass(slots=True)
class Placement:
    """What filling one box with the hand would give (hands/score writes it with its schema,
    `PlacementSchema`)."""

    box: str
    score: int
    open: bool
    legal: bool
    joker: bool = False
    five_of_a_kind_bonus: int = 0
    upper_bonus: int = 0
    wins_game: bool = False
    column: int | None = None


@dataclass
class HandScore(UnderRules):
    """The result of scoring one hand against a sheet (hands/score's answer,
    `HandScoreSchema`): the dice sorted, the faces scored, the throw, every box's
    placement, whether the hand wins the game at once or is a Joker, its patterns."""

    dice: Hand
    scored_dice: Hand
    throw: int | None
    boxes: list[Placement]
    wins_game: bool
    joker: bool
    patterns: tuple[str, ...] = field(default=())
    rules: RuleSet = field(kw_only=True, repr=False)


@dataclass
class HandValidation(UnderRules):
    """Whether a hand is legal for the variant, and what it forms (hands/validate's answer,
    `HandValidationSchema`): every problem (pointer, detail); when every die is a face,
    the hand sorted, its face counts, sum and patterns (else None: not part of the
    answer)."""

    valid: bool
    dice_count: int
    problems: list[Problem]
    dice: list[int] | None = None
    counts: dict[str, int] | None = None
    sum: int | None = None
    patterns: list[str] | None = None
    rules: RuleSet = field(kw_only=True, repr=False)


@dataclass(slots=True)
class Totals:
    """A sheet's totals (`TotalsFields`: games/turn's and games/validate's `totals`)."""

    upper_subtotal: int
    upper_bonus: int
    lower_total: int
    five_of_a_kind_bonus: int
    total: int


@dataclass(slots=True)
class BoxCheck:
    """A box of a totalled sheet (`BoxCheckSchema`): its value (None: open; 0 for an open
    box of a final sheet), whether it has an entry, and whether a hand could have put that
    value there."""

    box: str
    score: int | None
    filled: bool
    achievable: bool


@dataclass(slots=True, kw_only=True)
class ColumnTotals(Totals):
    """The totals of one column of a column sheet (`ColumnTotalsSchema`): its number, its
    order rule, its boxes."""

    five_of_a_kind_bonuses: int
    column: int
    order: str
    complete: bool
    boxes: list[BoxCheck]


@dataclass(slots=True, kw_only=True)
class SheetTotals(Totals):
    """A sheet's totals as `score_sheet` gives them (`SheetTotalsFields` and the totals of
    `ScorecardTotalsSchema`): the five-of-a-kind bonuses won, whether it is complete or
    won at once, whether empty boxes counted as 0 (`final`), and every box (a one-column
    sheet: `boxes`) or every column's totals (a column sheet: `columns`), the other None."""

    five_of_a_kind_bonuses: int
    complete: bool
    won: bool
    final: bool
    boxes: list[BoxCheck] | None = None
    columns: list[ColumnTotals] | None = None

    def totals(self) -> Totals:
        """The totals alone."""
        return Totals(self.upper_subtotal, self.upper_bonus, self.lower_total,
                      self.five_of_a_kind_bonus, self.total)


# --------------------------------------------------------------------------- scorecards


def empty_sheet(rs: RuleSet) -> Sheet:
    """A sheet with every box open."""
    n = max(1, len(rs.variant.columns))
    return Sheet(columns=[Column(rs.variant.blank_boxes()) for _ in range(n)])


def _parse_column(rs: RuleSet, data: dict[str, Any], base: str,
                  problems: list[Problem]) -> Column:
    v = rs.variant
    boxes = v.blank_boxes()
    given = data.get("boxes") or {}
    if type(given) is dict:
        boxes.update(given)  # given only the sheet's boxes (the common case), no key added
    if type(given) is not dict or len(boxes) != len(v.box_ids):  # else each box named
        boxes = v.blank_boxes()
        for box_id, value in given.items():
            if box_id not in boxes:
                problems.append(Problem(base + pointer("boxes", box_id),
                                        unknown_box(v, box_id), "unknown_box"))
                continue
            boxes[box_id] = value
    bonuses = data.get("five_of_a_kind_bonuses") or 0
    if bonuses and v.five_of_a_kind_bonus is None:
        problems.append(Problem(f"{base}/five_of_a_kind_bonuses",
                                f"variant {v.id!r} (with these rules) has no five-of-a-kind "
                                f"bonus"))
    return Column(boxes, bonuses)


def parse_scorecard(rs: RuleSet, data: dict[str, Any] | None,
                    base: str = "/scorecard") -> Sheet:
    """Turn a request's scorecard into a Sheet, or raise InvalidInput naming the field.

    Shape: ``{"boxes": {id: int|null}, "five_of_a_kind_bonuses": int, "saved_throws": int,
    "won": bool}``; with the `columns` option, ``{"columns": [four of {"boxes", ...}]}`` (left
    out: every column empty). `scorecards.Scorecard` is a Sheet as the API writes it back in
    this shape.
    """
    if data is None:
        return empty_sheet(rs)
    v = rs.variant
    problems: list[Problem] = []
    columns: list[Column] = []
    if v.columns:
        if "boxes" in data or "five_of_a_kind_bonuses" in data:
            problems.append(Problem(base, "with the columns option the scorecard is "
                                          "{\"columns\": [...]}, one entry per column"))
        cols = data.get("columns", [{} for _ in v.columns])  # none given: every column empty
        if not isinstance(cols, list) or len(cols) != len(v.columns):
            problems.append(Problem(f"{base}/columns",
                                    f"must list {len(v.columns)} columns "
                                    f"({', '.join(v.columns)})"))
        else:
            columns = [_parse_column(rs, c, f"{base}/columns/{i}", problems)
                       for i, c in enumerate(cols)]
    else:
        if "columns" in data:
            problems.append(Problem(f"{base}/columns",
                                    "a column sheet needs the option columns: true"))
        columns = [_parse_column(rs, data, base, problems)]
    saved = data.get("saved_throws") or 0
    if saved and not v.saved_throws:
        problems.append(Problem(f"{base}/saved_throws",
                                f"variant {v.id!r} does not save unused throws"))
    if problems:
        raise InvalidInput(problems)
    return Sheet(columns, saved, bool(data.get("won", False)))


# --------------------------------------------------------------------------- hands


def max_throw(rs: RuleSet, sheet: Sheet) -> int:
    """The highest throw number this turn may reach (saved throws included)."""
    return rs.variant.throws + (sheet.saved_throws if rs.variant.saved_throws else 0)


def dice_problems(rs: RuleSet, dice: Any, base: str = "/dice") -> list[Problem]:
    """Everything that keeps `dice` from being a legal hand of the variant, with the codes of
    docs/problems.md (bad_face, dice_count)."""
    n = rs.variant.dice
    if not isinstance(dice, list):
        return [Problem(base, f"must be a list of {n} dice", "dice_count")]
    problems = []
    for i, d in enumerate(dice):
        if isinstance(d, bool) or not isinstance(d, int):
            problems.append(Problem(f"{base}/{i}", "a die must be an integer from 1 to 6",
                                    "bad_face"))
        elif not 1 <= d <= 6:
            problems.append(Problem(f"{base}/{i}", f"{d} is not a face of a die (1 to 6)",
                                    "bad_face"))
    if len(dice) != n:
        problems.append(Problem(base, f"variant {rs.variant.id!r} is played with {n} dice, "
                                      f"got {len(dice)}", "dice_count"))
    return problems


def throw_problems(rs: RuleSet, throw: Any, sheet: Sheet, base: str = "/throw") -> list[Problem]:
    """Whether the throw number is possible this turn (saved throws pay for extra throws);
    a throw too many has the code too_many_throws."""
    if throw is None:
        return []
    if isinstance(throw, bool) or not isinstance(throw, int) or throw < 1:
        return [Problem(base, "must be a positive integer (1 = first throw)")]
    limit = max_throw(rs, sheet)
    if throw <= limit:
        return []
    if rs.variant.saved_throws:
        return [Problem(base, f"throw {throw} needs {throw - rs.variant.throws} saved "
                              f"throws; the scorecard has {sheet.saved_throws}",
                        "too_many_throws")]
    return [Problem(base, f"a turn has at most {rs.variant.throws} throws", "too_many_throws")]


def em_baixo_problems(rs: RuleSet, em_baixo: Any, base: str = "/em_baixo") -> list[Problem]:
    """Whether the dice may be counted by their bottom faces (Bozó only); code
    em_baixo_not_allowed."""
    if em_baixo and not rs.variant.em_baixo:
        return [Problem(base, f"variant {rs.variant.id!r} has no 'em baixo' scoring",
                        "em_baixo_not_allowed")]
    return []


def _order_allowed(order: str, open_ids: list[str], first_throw: bool) -> list[str]:
    if order == "down":
        return open_ids[:1]
    if order == "up":
        return open_ids[-1:]
    if order == "first_throw":
        return open_ids if first_throw else []
    return open_ids


def _column_placements(rs: RuleSet, h: int, five_face: int, first: bool, wins: bool,
                       column: Column, order: str, col_no: int | None,
                       out: list[Placement]) -> bool:
    """Append the placements of hand `h` (`five_face`: its face when it is a five of a kind,
    else 0) in every box of the column to `out`, each saying `wins` (the hand wins at once);
    whether one of them is a Joker."""
    v = rs.variant
    values = column.boxes
    get = values.get
    row = rs.scores_of(h, first)
    # allowed: the boxes the order lets the hand into; None: every open box (the common case)
    allowed: set[str] | None = None
    if order != "free" and not (order == "first_throw" and first):
        allowed = set(_order_allowed(order, [b for b in v.box_ids if get(b) is None], first))

    five_filled = five_face and "five_of_a_kind" in v.box_ids and get("five_of_a_kind") is not None
    match_up = UPPER_IDS[five_face - 1] if five_face else ""
    joker_boxes: set[str] | frozenset[str] = frozenset()  # lower boxes a Joker scores in
    if five_filled and v.joker != "none":
        if allowed is None:
            allowed = {b for b in v.box_ids if get(b) is None}
        lower_allowed = [b for b in v.lower_ids if b in allowed]
        if v.joker == "forced":
            if match_up in allowed:
                allowed = {match_up}
            elif lower_allowed:
                allowed = set(lower_allowed)
                joker_boxes = set(lower_allowed)
        elif v.joker == "free" and (match_up not in v.box_ids or get(match_up) is not None):
            joker_boxes = set(lower_allowed)

    bonus_amount = 0
    fb = v.five_of_a_kind_bonus
    if fb and five_filled and (not fb.needs_made_box or values["five_of_a_kind"] != 0):
        bonus_amount = fb.amount
    bonus_any = bool(fb) and fb.placement == "any"

    ub = v.upper_bonus
    upper_now = threshold = 0
    if ub:
        for b in v.upper_ids:
            upper_now += values[b] or 0
        threshold = ub.threshold
    amount = ub.amount if ub else 0
    # for every box of every scored hand: plain locals, no helpers
    joker_seen = False
    for i, (bid, value, score, upper, requires) in enumerate(zip(
            v.box_ids, column.values_of(v.box_ids), row, v.in_upper, v.box_requires)):
        if requires and any(not get(req) for req in requires):
            score = 0
        joker = False
        if joker_boxes and bid in joker_boxes:
            jv = rs.joker_score[i][five_face]
            joker = jv != score
            joker_seen = joker_seen or joker
            score = jv
        if value is not None:  # filled
            out.append(Placement(bid, score, False, False, joker, 0, 0, wins, col_no))
        elif allowed is None or bid in allowed:  # open and legal
            out.append(Placement(
                bid, score, True, True, joker,
                bonus_amount if bonus_amount and (bonus_any or bid == match_up) else 0,
                amount if upper and upper_now < threshold <= upper_now + score else 0,
                wins, col_no))
        else:
            out.append(Placement(bid, score, True, False, joker, 0, 0, wins, col_no))
    return joker_seen


def _plain_hand(n: int, dice: Any) -> Hand | None:
    """The sorted hand when `dice` is a list of `n` ints 1..6 (the common case, which has no
    problem to report), else None."""
    if type(dice) is not list or len(dice) != n:
        return None
    for d in dice:
        if type(d) is not int or not 0 < d < 7:
            return None
    return tuple(sorted(dice))


def score_hand(rs: RuleSet, dice: list[int], throw: int | None = None,
               sheet: Sheet | None = None, em_baixo: bool = False) -> HandScore:
    """Score a hand in every box of the sheet: score, open, legal, Joker, bonuses, win."""
    sheet = sheet or empty_sheet(rs)
    v = rs.variant
    hand = _plain_hand(v.dice, dice)
    if (hand is None or (throw is not None and not (type(throw) is int
                                                   and 0 < throw <= v.throws))
            or (em_baixo and not v.em_baixo)):
        problems = (dice_problems(rs, dice) + throw_problems(rs, throw, sheet)
                    + em_baixo_problems(rs, em_baixo))
        if problems:
            raise InvalidInput(problems)
        hand = normalise(dice)
    scored = bottom_faces(hand) if em_baixo else hand
    h = rs.hand_index[scored]
    five_face = scored[0] if scored[0] == scored[-1] else 0  # every die one face
    first = throw == 1
    # a hand that wins at once wins in whatever box it is written (rules decision 4: a
    # Generala servida wins with the Generala box filled, scratched or not next); later
    # throws win nothing at once
    wins = first and any(rs.wins_first[h])
    boxes: list[Placement] = []
    if v.columns:
        joker = False
        for c, (column, order) in enumerate(zip(sheet.columns, v.columns)):
            joker = _column_placements(rs, h, five_face, first, wins, column, order,
                                       column_number(c), boxes) or joker
    else:
        joker = _column_placements(rs, h, five_face, first, wins, sheet.columns[0], v.order,
                                   None, boxes)
    if sheet.won:  # the game was won at once: nothing more may be entered
        for p in boxes:
            p.legal = False
            p.five_of_a_kind_bonus = p.upper_bonus = 0
    return HandScore(hand, scored, throw, boxes, wins, joker, patterns_of(scored), rules=rs)


def validate_hand(rs: RuleSet, dice: Any, throw: Any = None,
                  sheet: Sheet | None = None) -> HandValidation:
    """Whether `dice` is a legal hand of the variant, with what it forms when it is."""
    sheet = sheet or empty_sheet(rs)
    problems = dice_problems(rs, dice) + throw_problems(rs, throw, sheet)
    faces_ok = isinstance(dice, list) and all(
        isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6 for d in dice)
    if not faces_ok:
        return HandValidation(not problems, rs.variant.dice, problems, rules=rs)
    hand = normalise(dice)
    c = counts_of(hand)
    return HandValidation(not problems, rs.variant.dice, problems, list(hand),
                          {str(f): c[f] for f in FACES}, sum(hand),
                          list(patterns_of(hand)) if len(hand) == rs.variant.dice else [],
                          rules=rs)


# --------------------------------------------------------------------------- totals


def _column_sums(rs: RuleSet, column: Column, final: bool, check_boxes: bool = True
                 ) -> tuple[int, int, int, int, bool, list[BoxCheck]]:
    """A column's upper subtotal, upper bonus, lower total, five-of-a-kind bonus points,
    whether it is complete, and its boxes checked (empty boxes as 0 when `final`; without
    `check_boxes`, every box's `achievable` left True for the caller to set)."""
    v = rs.variant
    values = column.boxes  # read only: a final sheet's open boxes as 0, a copy
    if final and None in values.values():
        values = {b: (0 if val is None else val) for b, val in values.items()}
    upper = 0
    for b in v.upper_ids:
        upper += values[b] or 0
    lower = 0
    for b in v.lower_ids:
        lower += values[b] or 0
    upper_bonus = v.upper_bonus.amount if v.upper_bonus and upper >= v.upper_bonus.threshold \
        else 0
    fb = v.five_of_a_kind_bonus
    bonus = column.five_of_a_kind_bonuses * fb.amount if fb else 0
    boxes = []
    append = boxes.append
    requires = v.has_requires
    if not check_boxes:
        for bid in v.box_ids:
            val = values[bid]
            append(BoxCheck(bid, val, val is not None, True))
        return upper, upper_bonus, lower, bonus, None not in values.values(), boxes
    for b, bid, can in zip(v.boxes, v.box_ids, rs.achievable):
        val = values[bid]
        if val is None:
            append(BoxCheck(bid, None, False, True))
        elif requires and val and b.requires and any(not values.get(req) for req in b.requires):
            # made only after the required box was made: it cannot be empty or 0
            append(BoxCheck(bid, val, True, False))
        else:
            append(BoxCheck(bid, val, True, val in can))
    return upper, upper_bonus, lower, bonus, None not in values.values(), boxes


def _column_totals(rs: RuleSet, column: Column, final: bool, number: int,
                   order: str, check_boxes: bool = True) -> ColumnTotals:
    """The totals of column `number` of a column sheet, filled in `order`."""
    upper, upper_bonus, lower, bonus, complete, boxes = _column_sums(rs, column, final,
                                                                     check_boxes)
    return ColumnTotals(upper_subtotal=upper, upper_bonus=upper_bonus, lower_total=lower,
                        five_of_a_kind_bonus=bonus, total=upper + upper_bonus + lower + bonus,
                        five_of_a_kind_bonuses=column.five_of_a_kind_bonuses, column=number,
                        order=order, complete=complete, boxes=boxes)


def five_of_a_kind_bonuses_possible(rs: RuleSet, column: Column) -> bool:
    """Whether a game can have won the column's count of five-of-a-kind bonuses: one per
    further five of a kind (Kniffel's only into its free number box), and only once the
    five-of-a-kind box holds its made score where the rules require it."""
    if not column.five_of_a_kind_bonuses:
        return True
    v = rs.variant
    fb = v.five_of_a_kind_bonus
    five = column.boxes.get("five_of_a_kind")
    most = (sum(1 for b in v.boxes if b.section == "upper")
            if fb and fb.placement == "matching_upper" else len(v.boxes) - 1)
    return column.five_of_a_kind_bonuses <= most and (
        five is not None and (not fb or not fb.needs_made_box or five != 0))


def score_sheet(rs: RuleSet, sheet: Sheet, final: bool = False) -> SheetTotals:
    """Totals of a sheet: upper subtotal and bonus, lower total, bonuses, total, complete.

    With `final`, boxes still empty count as scratches (0). A column sheet gives the
    totals of each column and their sums.
    """
    return SheetTotals(**totals_fields(rs, sheet, final))


def totals_fields(rs: RuleSet, sheet: Sheet, final: bool = False,
                  check_boxes: bool = True) -> dict[str, Any]:
    """The fields of the sheet's `SheetTotals` (`score_sheet`) by name: what an answer that
    extends them (`consistency.ScorecardTotals`) is made of, without a SheetTotals between.
    Without `check_boxes` every box's `achievable` is left True (`consistency.audit` sets
    them from its problems)."""
    if not rs.variant.columns:
        column = sheet.columns[0]
        upper, upper_bonus, lower, bonus, complete, boxes = _column_sums(rs, column, final,
                                                                         check_boxes)
        return {"upper_subtotal": upper, "upper_bonus": upper_bonus, "lower_total": lower,
                "five_of_a_kind_bonus": bonus, "total": upper + upper_bonus + lower + bonus,
                "five_of_a_kind_bonuses": column.five_of_a_kind_bonuses,
                "complete": complete or sheet.won, "won": sheet.won, "final": final,
                "boxes": boxes}
    cols = []
    for i, (c, o) in enumerate(zip(sheet.columns, rs.variant.columns)):
        number = column_number(i)
        assert number is not None  # the columns of a column sheet are numbered
        cols.append(_column_totals(rs, c, final, number, o, check_boxes))
    return {"upper_subtotal": sum(c.upper_subtotal for c in cols),
            "upper_bonus": sum(c.upper_bonus for c in cols),
            "lower_total": sum(c.lower_total for c in cols),
            "five_of_a_kind_bonus": sum(c.five_of_a_kind_bonus for c in cols),
            "total": sum(c.total for c in cols),
            "five_of_a_kind_bonuses": sum(c.five_of_a_kind_bonuses for c in cols),
            "complete": all(c.complete for c in cols) or sheet.won, "won": sheet.won,
            "final": final, "columns": cols}
