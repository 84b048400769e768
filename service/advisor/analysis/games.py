"""Game analysis: every decision of every player judged against the advisor's optimal play.

A game is a list of players, each a list of turns, each turn its throws (the dice of each
throw and, optionally, the dice kept from it) and the box written. For every decision (a keep
between throws when the kept dice are given, and every placement) the analysis reports the
position, the choice and the best choice, the expected final score of each with its standard
deviation (under the advisor's play afterwards), the regret (best minus chosen) and a class.

Skill and luck: the expected final score of the position moves at every chance event (a
throw) and every decision. A decision moves it by minus its regret (skill); a throw moves it
from the value of what was kept (or of the turn start) to the value of the dice that came up
(luck). Summed over the game these telescope: final total - expected final total at the start
= luck - total regret, exactly (to float rounding). When a turn's kept dice are not given,
its keeps are not judged and their effect is part of that turn's luck.

Values come from the float64 moment tables (`kernels/moments.py`), the same numbers for every
quantity, so that the split adds up; they equal the advisor's float32 values within 3.1e-5.
Approximate methods (column sheets, Maxi Yatzy) are analysed with their own values, and say
``exact: false``.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...domain.consistency import check_sheet
from ...domain.dice import normalise
from ...domain.errors import InvalidInput, Problem
from ...domain.rules import RuleSet
from ...domain.scoring import Placement, Sheet, max_throw, score_hand, score_sheet
from ..advice.moves import TIE
from ..solving.positions import Position
from .turn_view import TurnView

#: Regret thresholds of the classes (points of expected final score). A choice within TIE
#: of the best is "best" when no other option is that close, else "tie".
INACCURACY, MISTAKE = 1.0, 5.0
CLASSES = ("best", "tie", "inaccuracy", "mistake", "blunder")


def classify(regret: float, near_best: int) -> str:
    """The class of a choice with this regret; `near_best`: options within TIE of the best."""
    if regret <= TIE:
        return "best" if near_best <= 1 else "tie"
    if regret <= INACCURACY:
        return "inaccuracy"
    if regret <= MISTAKE:
        return "mistake"
    return "blunder"


@dataclass
class Throw:
    """One throw of a turn: the dice, and the dice kept from it for the next throw."""

    dice: list[int]
    kept: list[int] | None = None


@dataclass
class Turn:
    """One turn as played: its throws and the box written (None: an instant win)."""

    throws: list[Throw]
    box: str | None
    column: int | None = None


@dataclass
class PlayerGame:
    """One player's game: the sheet it starts from and the turns played."""

    sheet: Sheet
    turns: list[Turn]
    name: str | None = None


@dataclass
class Decision:
    """One judged decision."""

    turn: int
    throw: int
    dice: list[int]
    choice: dict[str, Any]
    best: dict[str, Any]
    value: float  # expected final score after the choice
    sd: float
    best_value: float
    best_sd: float
    regret: float
    cls: str

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the API."""
        return {"turn": self.turn, "throw": self.throw, "dice": self.dice,
                "choice": self.choice, "best": self.best,
                "expected_final_score": round(self.value, 6), "sd": round(self.sd, 6),
                "best_expected_final_score": round(self.best_value, 6),
                "best_sd": round(self.best_sd, 6), "regret": round(self.regret, 6),
                "class": self.cls}


@dataclass
class PlayerAnalysis:
    """Every decision of one player and the summary."""

    name: str | None
    start_expectation: float
    final_total: int
    finished: bool
    decisions: list[Decision] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    luck: float = 0.0
    end_value: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the API."""
        regrets = [d.regret for d in self.decisions]
        counts = dict.fromkeys(CLASSES, 0)
        for d in self.decisions:
            counts[d.cls] += 1
        total_regret = float(sum(regrets))
        skill = -total_regret
        return {
            "name": self.name,
            "final_total": self.final_total,
            "finished": self.finished,
            "start_expected_final_score": round(self.start_expectation, 6),
            "decisions": len(self.decisions),
            "total_regret": round(total_regret, 6),
            "mean_regret": round(total_regret / len(regrets), 6) if regrets else 0.0,
            "classes": counts,
            "skill": round(skill, 6),
            "luck": round(self.luck, 6),
            "difference": round(self.end_value - self.start_expectation, 6),
            "turns": self.turns,
        }


def _five_bonus(p: Placement) -> int:
    """The placement's five-of-a-kind bonus points (named `bonus` before the rename)."""
    return int(p.five_of_a_kind_bonus)


def _scored(rs: RuleSet, dice: list[int], throw: int, sheet: Sheet, base: str) -> Any:
    """score_hand, with its error pointers moved under the throw's pointer."""
    try:
        return score_hand(rs, dice, throw, sheet)
    except InvalidInput as err:
        raise InvalidInput([Problem(base + (p.pointer if p.pointer.startswith("/dice")
                                            else ""), p.detail)
                            for p in err.problems]) from None


@dataclass
class PlayedThrow:
    """One throw as replayed: its number, the hand as scored, its dice (sorted), and the
    dice kept from it (None on the last throw, or when they were not given)."""

    t: int
    hs: Any
    hand: tuple[int, ...]
    kept: tuple[int, ...] | None


@dataclass
class PlayedTurn:
    """One turn as replayed: the sheet before it, its throws, the placement written (None:
    an instant win without a box) and the sheet after it."""

    sheet: Sheet
    throws: list[PlayedThrow]
    placement: Placement | None
    after: Sheet


def _placed(rs: RuleSet, sheet: Sheet, p: Placement, throws_used: int) -> Sheet:
    """The sheet after placement p, written after `throws_used` throws."""
    new = deepcopy(sheet)
    col = new.columns[(p.column or 1) - 1]
    col.boxes[p.box] = p.score
    if _five_bonus(p):
        col.five_of_a_kind_bonuses += 1
    if p.wins_game:
        new.won = True
    if rs.variant.saved_throws:
        new.saved_throws = sheet.saved_throws + rs.variant.throws - throws_used
    return new


def replay(rs: RuleSet, game: PlayerGame, base: str) -> list[PlayedTurn]:
    """One player's turns checked against the rules and played out, without the advisor's
    tables (so that a game that breaks a rule is refused before any table is asked for);
    pointers in errors start with `base`."""
    sheet = game.sheet
    check_sheet(rs, sheet, f"{base}/scorecard")
    out = []
    for ti, turn in enumerate(game.turns):
        tb = f"{base}/turns/{ti}"
        if sheet.won or score_sheet(rs, sheet)["complete"]:
            raise InvalidInput.one(tb, "the game is already over for this player")
        last = max_throw(rs, sheet)
        if not turn.throws:
            raise InvalidInput.one(f"{tb}/throws", "a turn has at least one throw")
        if len(turn.throws) > last:
            raise InvalidInput.one(f"{tb}/throws", f"at most {last} throws this turn")
        throws: list[PlayedThrow] = []
        kept_before: tuple[int, ...] | None = None
        placement = None
        after = sheet
        for k, th in enumerate(turn.throws):
            t = k + 1
            thb = f"{tb}/throws/{k}"
            hs = _scored(rs, th.dice, t, sheet, thb)
            hand = normalise(th.dice)
            if kept_before is not None:
                rest = list(hand)
                for d in kept_before:
                    if d not in rest:
                        raise InvalidInput.one(f"{thb}/dice", "the dice kept from the "
                                               "previous throw are not all here")
                    rest.remove(d)
            if t < len(turn.throws):
                kept_before = None
                if th.kept is not None:
                    kept_before = normalise(th.kept)
                    rest = list(hand)
                    for d in kept_before:
                        if d not in rest:
                            raise InvalidInput.one(f"{thb}/kept", "kept dice must be dice of "
                                                   "this throw")
                        rest.remove(d)
                    if len(kept_before) == len(hand):
                        raise InvalidInput.one(f"{thb}/kept", "keeping every die ends the "
                                               "throwing: write a box instead")
                throws.append(PlayedThrow(t, hs, hand, kept_before))
                continue
            # the last throw of the turn: the box written (or an instant win)
            throws.append(PlayedThrow(t, hs, hand, None))
            if turn.box is None:
                if not hs.wins_game:
                    raise InvalidInput.one(f"{tb}/box", "required: only a turn that wins "
                                           "the game at once may end without a box")
                after = deepcopy(sheet)
                after.won = True
                break
            col = turn.column if rs.variant.columns else None
            if rs.variant.columns and col is None:
                raise InvalidInput.one(f"{tb}/column", "required on a column sheet")
            placement = next((c for c in hs.boxes if c.box == turn.box and c.column == col),
                             None)
            if placement is None:
                raise InvalidInput.one(f"{tb}/box", f"variant {rs.variant.id!r} has no "
                                       f"box {turn.box!r}" + (f" in column {col}"
                                                              if col else ""))
            if not placement.legal:
                raise InvalidInput.one(f"{tb}/box", f"{turn.box} may not be written now "
                                       "(filled, or not allowed by the rules)")
            after = _placed(rs, sheet, placement, t)
        out.append(PlayedTurn(sheet, throws, placement, after))
        sheet = after
    return out


class GameAnalyzer:
    """Judges the decisions of a game with an `Analyst`'s tables."""

    def __init__(self, analyst: Any, rs: RuleSet) -> None:
        self.analyst = analyst
        self.rs = rs
        self.st = analyst.strategy(rs)
        self.tables = analyst.tables(self.st)
        self.mos = analyst.moments(self.st)
        model = self.st.parts[0].solution.model
        self.keeps = model.keeps
        self.keep_dice = {i: list(t) for t, i in model.keeps.index.items()}

    # ------------------------------------------------------------------ helpers

    def _future(self, sheet: Sheet) -> tuple[float, float]:
        """Mean and variance of the points still to come from a sheet (turn start)."""
        pos = Position.of(self.st, sheet)
        mean = var = 0.0
        for mo, s in zip(self.mos, pos.states, strict=True):
            m1 = float(mo.m1[s[0], s[1], s[2]])
            m2 = float(mo.m2[s[0], s[1], s[2]])
            if np.isnan(m1):
                raise InvalidInput.one("/scorecard", "this scorecard cannot occur in a game")
            mean += m1
            var += m2 - m1 * m1
        return mean, max(0.0, var)

    def _box_dict(self, p: Placement) -> dict[str, Any]:
        return {"action": "score", "box": p.box, "column": p.column, "score": p.score,
                "five_of_a_kind_bonus": _five_bonus(p), "upper_bonus": p.upper_bonus}

    # ------------------------------------------------------------------ a player

    def player(self, game: PlayerGame, played: list[PlayedTurn]) -> PlayerAnalysis:
        """Judge one player's turns, as `replay` played them out."""
        rs = self.rs
        sheet = game.sheet
        totals = score_sheet(rs, sheet)
        mean0, _ = self._future(sheet)
        total = int(totals["total"])
        start = total + mean0
        out = PlayerAnalysis(game.name, start, total, False)
        value = start  # expected final score of the current position
        for ti, turn in enumerate(played):
            pos = Position.of(self.st, turn.sheet)
            view = TurnView(pos, self.tables)
            turn_start = value
            turn_luck = 0.0
            entry: dict[str, Any] = {"turn": ti + 1, "expected_final_score_at_start":
                                     round(turn_start, 6), "decisions": []}
            prev_value = value
            for th in turn.throws:
                t = th.t
                h = rs.hand_index[th.hs.scored_dice]
                now1, _ = view.hand_value(h, t)
                after_throw = pos.total + now1
                luck = after_throw - prev_value
                turn_luck += luck
                if t < len(turn.throws):
                    if th.kept is None:
                        prev_value = after_throw
                        continue
                    c1, c2 = view.keep_value(self.keeps.index[th.kept], t)
                    choice = {"action": "keep", "dice": list(th.kept)}
                    dec = self._decision(view, pos, ti, t, h, th.hand, choice, c1, c2)
                    entry["decisions"].append(dec.as_dict())
                    out.decisions.append(dec)
                    prev_value = pos.total + c1
                    continue
                p = turn.placement
                if p is None:  # an instant win without a box
                    value = float(pos.total)
                    turn_luck += value - after_throw
                    break
                fut1, fut2 = self._future_after(turn.after)
                gain = p.score + _five_bonus(p) + p.upper_bonus
                c1 = gain + fut1 + view.pos.throw_value * (pos.last - t)
                c2 = c1 * c1 + fut2
                choice = self._box_dict(p)
                dec = self._decision(view, pos, ti, t, h, th.hand, choice, c1, c2, var=fut2)
                entry["decisions"].append(dec.as_dict())
                out.decisions.append(dec)
                value = pos.total + c1
                if p.wins_game:
                    value = float(score_sheet(rs, turn.after)["total"])
                    turn_luck += value - (pos.total + c1)
            sheet = turn.after
            entry["luck"] = round(turn_luck, 6)
            entry["points"] = int(score_sheet(rs, sheet)["total"]) - pos.total
            entry["expected_final_score_at_end"] = round(value, 6)
            out.luck += turn_luck
            out.turns.append(entry)
        totals = score_sheet(rs, sheet)
        out.final_total = int(totals["total"])
        out.finished = bool(totals["complete"])
        if out.finished and not sheet.won:
            # the chain ends on the exact total: the last placement's value is its total
            value = float(out.final_total)
        out.end_value = value
        return out

    def _future_after(self, sheet: Sheet) -> tuple[float, float]:
        totals = score_sheet(self.rs, sheet)
        if totals["complete"]:
            return 0.0, 0.0
        return self._future(sheet)

    def _decision(self, view: TurnView, pos: Position, ti: int, t: int, h: int,
                  hand: tuple[int, ...], choice: dict[str, Any], c1: float, c2: float,
                  var: float | None = None) -> Decision:
        """A decision at hand h, throw t: the best option, the chosen one's values."""
        b1, b2 = view.hand_value(h, t)
        d = int(view.DEC[t, h]) if t < pos.last else -1
        if d >= 0 and d == int(self.keeps.hand_keep[h]):
            d = -1  # keeping every die: scoring now
        if d < 0:
            ch = view.choice(h, t)
            part = self.st.parts[ch.part]
            best = {"action": "score", "box": part.solution.model.box_ids[ch.box],
                    "column": part.column + 1 if self.rs.variant.columns else None,
                    "score": round(ch.score)}
        else:
            best = {"action": "keep", "dice": self.keep_dice[d]}
        if var is None:
            sd = float(np.sqrt(max(0.0, c2 - c1 * c1)))
        else:
            sd = float(np.sqrt(max(0.0, var)))
        regret = max(0.0, b1 - c1)
        near = self._near_best(view, pos, t, h, b1)
        return Decision(ti + 1, t, list(hand), choice, best, pos.total + c1, sd,
                        pos.total + b1, float(np.sqrt(max(0.0, b2 - b1 * b1))), regret,
                        classify(regret, near))

    def _near_best(self, view: TurnView, pos: Position, t: int, h: int, b1: float) -> int:
        """How many options (keeps and boxes) are within TIE of the best value."""
        n = 0
        if t < pos.last:
            hand = self.keep_dice[int(self.keeps.hand_keep[h])]
            from ..advice.moves import _sub_multisets

            for keep in _sub_multisets(tuple(hand)):
                if b1 - view.E1[t, self.keeps.index[keep]] <= TIE:
                    n += 1
        s1, _, _ = view.terms[t == 1]
        if b1 - (s1[h] + pos.throw_value * (pos.last - t)) <= TIE:
            n += 1
        return max(n, 1)


def _under_player(err: InvalidInput, i: int) -> InvalidInput:
    """The error with its pointers under /players/{i} (a starting scorecard's name
    /scorecard)."""
    return InvalidInput([Problem(p.pointer if p.pointer.startswith("/players")
                                 else f"/players/{i}{p.pointer}", p.detail)
                         for p in err.problems])


def analyze(analyst: Any, rs: RuleSet, players: list[PlayerGame]) -> dict[str, Any]:
    """Analyse every player's game; pointers of errors start with /players/{i}. Every game
    is replayed against the rules before a table is asked for: a game that breaks a rule is
    refused at once, never told to wait for a table first."""
    played = []
    for i, game in enumerate(players):
        try:
            played.append(replay(rs, game, f"/players/{i}"))
        except InvalidInput as err:
            raise _under_player(err, i) from None
    analyzer = GameAnalyzer(analyst, rs)
    out = []
    for i, (game, turns) in enumerate(zip(players, played, strict=True)):
        try:
            out.append(analyzer.player(game, turns).as_dict())
        except InvalidInput as err:  # the starting scorecard's errors name /scorecard
            raise _under_player(err, i) from None
    return {"exact": analyzer.st.exact, "method": analyzer.st.description,
            "thresholds": {"tie": TIE, "inaccuracy": INACCURACY, "mistake": MISTAKE},
            "players": out}
