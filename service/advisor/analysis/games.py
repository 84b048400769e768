"""Game analysis: every decision of every player judged against the advisor's optimal play.

A game is recorded as games/validate takes it (players, each a list of turns: the dice of
each throw, optionally the dice kept after each throw but the last, the box written) and read
through the domain's replay (`domain.games.replay_game`, the only code that plays a recorded
game): a game that breaks a rule is refused with games/validate's problems before any table
is asked for, and the analysis judges the turns as the replay played them. For every decision
(a keep between throws when the kept dice are given, and every placement) the analysis
reports the position, the move played and the best move, the expected final score of each with
its standard deviation (under the advisor's play afterwards), the regret (best minus chosen)
and a class.

Skill and luck: the expected final score of the position moves at every chance event (a
throw) and every decision. A decision moves it by minus its regret (skill); a throw moves it
from the value of what was kept (or of the turn start) to the value of the dice that came up
(luck). Summed over the game these telescope: final total - expected final total at the start
= luck - total regret, exactly (to float rounding). When a turn's kept dice are not given,
its keeps are not judged and their effect is part of that turn's luck.

Instant wins (a Generala servida, Bozó's General de boca: docs/rules.md, decisions 4, 12,
20-22 and 26): the tables value every placement as if the game went on, so a placement that
wins the game at once is judged apart: it is the best move (the one played), with regret 0,
class "best", worth the final total it ends the game on (SD 0). What the objective's value
of the hand (the expected final score) and that total differ by is the turn's luck, as the
game's end is no decision of the player's. The game is then over for everyone: every player
is finished, on their final total, and what a player's expectation loses to another's
instant win is their luck (the player's, outside any turn of theirs).

Bozó's "em baixo": a throw announced em baixo is read by its bottom faces, kept dice included.
A recorded turn gives the dice as thrown and says only how its last throw was read
(`em_baixo`). The first throw, when it is not the last, is taken as read by its top faces; a
throw between them as announced the way that made the keep before it worth most (the
announcement is part of that keep: the move and the best keep say it, `em_baixo`). Every
hand is valued as it was read, so the split adds up in Bozó as in every other variant.

Values come from the float64 moment tables (`kernels/moments.py`), the same numbers for every
quantity, so that the split adds up; they equal the advisor's float32 values within 3.1e-5.
Approximate methods (column sheets, Maxi Yatzy) are analysed with their own values, and say
``exact: false``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...domain.counting import column_number, turn_number
from ...domain.dice import bottom_faces
from ...domain.errors import InvalidInput
from ...domain.games import TurnRecord, player_name, replay_game
from ...domain.moves import Keep, Move, ScoreBox
from ...domain.rules import RuleSet, UnderRules
from ...domain.scorecards import is_complete
from ...domain.scoring import Sheet, empty_sheet, score_sheet
from ...domain.turn import TurnOutcome
from ..advice.moves import TIE, sub_multisets
from ..solving.positions import Position
from .turn_view import TurnView

#: Regret thresholds of the classes (points of expected final score). A move within TIE
#: of the best is "best" when no other option is that close, else "tie".
INACCURACY, MISTAKE = 1.0, 5.0
CLASSES = ("best", "tie", "inaccuracy", "mistake", "blunder")


def classify(regret: float, near_best: int) -> str:
    """The class of a move with this regret; `near_best`: moves within TIE of the best."""
    if regret <= TIE:
        return "best" if near_best <= 1 else "tie"
    if regret <= INACCURACY:
        return "inaccuracy"
    if regret <= MISTAKE:
        return "mistake"
    return "blunder"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The regret thresholds of the classes (`ThresholdsSchema`)."""

    tie: float = TIE
    inaccuracy: float = INACCURACY
    mistake: float = MISTAKE


@dataclass(frozen=True, slots=True)
class ClassCounts:
    """How many decisions fell in each class (`CLASSES`, `ClassCountsSchema`)."""

    best: int = 0
    tie: int = 0
    inaccuracy: int = 0
    mistake: int = 0
    blunder: int = 0


@dataclass
class Decision:
    """One judged decision (the API's Decision): the position (the turn's number, 1 = first,
    the throw, the dice as thrown and as read), the move played and the best move (a keep,
    its `em_baixo` None outside Bozó; a placement, what it earned worked out for the one
    played only), the expected final score and SD after each, the regret and the class."""

    turn: int
    throw: int
    dice: list[int]
    scored_dice: list[int]
    move: Move
    best: Move
    expected_final_score: float  # after the move played
    sd: float
    best_expected_final_score: float
    best_sd: float
    regret: float
    class_: str  # (the API's `class`: `CLASSES`)


@dataclass
class TurnAnalysis:
    """One turn judged (the API's TurnAnalysis): its decisions, its luck, the points it
    earned, the expected final score before and after it."""

    turn: int
    expected_final_score_at_start: float
    decisions: list[Decision] = field(default_factory=list)
    luck: float = 0.0
    points: int = 0
    expected_final_score_at_end: float = 0.0


@dataclass
class PlayerAnalysis:
    """Every decision of one player, by turn, and the summary (the API's PlayerAnalysis):
    skill (minus the regrets) and luck add up to the difference between where the analysed
    turns ended (`end_value`: the final total once finished) and the start's expectation.
    `finished`: the player's sheet is full, or the game is over (an instant win ended it)."""

    name: str
    start_expected_final_score: float
    final_total: int
    finished: bool
    decisions: list[Decision] = field(default_factory=list)
    turns: list[TurnAnalysis] = field(default_factory=list)
    luck: float = 0.0
    end_value: float = 0.0

    @property
    def decision_count(self) -> int:
        """How many decisions were judged."""
        return len(self.decisions)

    @property
    def total_regret(self) -> float:
        """The sum of every decision's regret."""
        return float(sum(d.regret for d in self.decisions))

    @property
    def mean_regret(self) -> float:
        """The mean regret per decision (0 without decisions)."""
        return self.total_regret / len(self.decisions) if self.decisions else 0.0

    @property
    def skill(self) -> float:
        """Minus the total regret."""
        return -self.total_regret

    @property
    def difference(self) -> float:
        """Where the analysed turns ended minus the start's expectation: skill + luck."""
        return self.end_value - self.start_expected_final_score

    @property
    def classes(self) -> ClassCounts:
        """How many decisions fell in each class."""
        counts = Counter(d.class_ for d in self.decisions)
        return ClassCounts(*(counts[c] for c in CLASSES))


@dataclass
class GameAnalysis(UnderRules):
    """Every player's analysis (the API's GameAnalysis), under the rules `rules`."""

    exact: bool
    method: str
    players: list[PlayerAnalysis]
    thresholds: Thresholds = field(default_factory=Thresholds)
    rules: RuleSet = field(kw_only=True, repr=False)


class GameAnalyzer:
    """Judges the decisions of a game with an `Analyst`'s tables."""

    def __init__(self, analyst: Any, rs: RuleSet) -> None:
        self.analyst = analyst
        self.rs = rs
        # new rules: one job makes the values and the moments together (`build_moments`)
        self.st = analyst.strategy(rs, kind="moments")
        self.tables = analyst.tables(self.st)
        self.mos = analyst.moments(self.st)
        model = self.st.parts[0].solution.model
        self.keeps = model.keeps
        self.keep_dice = {i: list(t) for t, i in model.keeps.index.items()}

    # ------------------------------------------------------------------ helpers

    def _future(self, sheet: Sheet, where: str = "") -> tuple[float, float]:
        """Mean and variance of the points still to come from a sheet (turn start); `where`:
        the pointer of the turn that reached it, for an error."""
        pos = Position.of(self.st, sheet)
        mean = var = 0.0
        for mo, s in zip(self.mos, pos.states, strict=True):
            m1 = float(mo.m1[s[0], s[1], s[2]])
            m2 = float(mo.m2[s[0], s[1], s[2]])
            if np.isnan(m1):
                raise InvalidInput.one(where, "the advisor's tables hold no value for the "
                                              "sheet this reaches")
            mean += m1
            var += m2 - m1 * m1
        return mean, max(0.0, var)

    @staticmethod
    def _played_score(o: TurnOutcome) -> ScoreBox:
        """The placement a turn chose, with what it earned (a chosen 0: score 0)."""
        assert o.box is not None  # a turn that wrote a box
        return ScoreBox(o.box, o.column, o.score, o.five_of_a_kind_bonus, o.upper_bonus,
                        o.joker, o.wins_game)

    # ------------------------------------------------------------------ a player

    def player(self, name: str | None, played: list[TurnRecord],
               base: str = "", over: bool = False) -> PlayerAnalysis:
        """Judge one player's turns, as the domain's replay played them (`base`: the
        player's pointer; `over`: the game is over, so the player has finished, as after
        another player's instant win, with a sheet not full)."""
        rs = self.rs
        sheet = played[0].before if played else empty_sheet(rs)
        totals = score_sheet(rs, sheet)
        mean0, _ = self._future(sheet, base)
        total = int(totals.total)
        start = total + mean0
        out = PlayerAnalysis(name, start, total, False)
        value = start  # expected final score of the current position
        for turn in played:
            ti = turn.index
            pos = Position.of(self.st, turn.before)
            view = TurnView(pos, self.tables)
            turn_start = value
            turn_luck = 0.0
            entry = TurnAnalysis(turn.turn, turn_start)
            prev_value = value
            last = len(turn.throws)
            o = turn.outcome
            assert o is not None  # a turn played (`GameReplay.turns`)
            reading = self._readings(view, turn)
            for k, hand in enumerate(turn.throws):
                t = k + 1
                scored = bottom_faces(hand) if reading[k] else hand
                h = rs.hand_index[scored]
                now1, _ = view.hand_value(h, t)
                after_throw = pos.total + now1
                luck = after_throw - prev_value
                turn_luck += luck
                if t < last:
                    if turn.kept is None:
                        prev_value = after_throw
                        continue
                    kept = turn.kept[k]
                    c1, c2 = view.keep_value(self._keep_id(kept, reading[k + 1]), t)
                    move: Move = self._played_keep(kept, reading[k + 1])
                    dec = self._decision(view, pos, ti, t, h, hand, reading[k], move, c1,
                                         c2)
                    entry.decisions.append(dec)
                    out.decisions.append(dec)
                    prev_value = pos.total + c1
                    continue
                if o.box is None:  # an instant win without a box
                    value = float(pos.total)
                    turn_luck += value - after_throw
                    break
                fut1, fut2 = self._future_after(o.sheet, f"{base}/turns/{ti}")
                c1 = o.points + fut1 + view.pos.throw_value * (pos.last - t)
                if o.wins_game:  # the game ends here, on the sheet's total
                    c1 = float(score_sheet(rs, o.sheet).total - pos.total)
                c2 = c1 * c1 + fut2
                move = self._played_score(o)
                dec = self._decision(view, pos, ti, t, h, hand, reading[k], move, c1, c2,
                                     var=fut2, wins=o.wins_game)
                entry.decisions.append(dec)
                out.decisions.append(dec)
                value = pos.total + c1
                if o.wins_game:  # the hand's value (the game going on) to the final total
                    turn_luck += value - after_throw
            sheet = o.sheet
            entry.luck = turn_luck
            entry.points = o.points  # box, five-of-a-kind bonus, upper bonus
            entry.expected_final_score_at_end = value
            out.luck += turn_luck
            out.turns.append(entry)
        totals = score_sheet(rs, sheet)
        out.final_total = int(totals.total)
        out.finished = bool(totals.complete) or over
        if out.finished and not sheet.won:
            if not totals.complete:
                # another player's instant win ended the game: what the expectation loses
                # is the player's luck
                out.luck += out.final_total - value
            # the chain ends on the exact total: the last placement's value is its total
            value = float(out.final_total)
        out.end_value = value
        return out

    def _future_after(self, sheet: Sheet, where: str) -> tuple[float, float]:
        """`_future` after a placement: nothing more once the sheet is full or won."""
        if sheet.won or is_complete(sheet):
            return 0.0, 0.0
        return self._future(sheet, where)

    def _readings(self, view: TurnView, turn: TurnRecord) -> list[bool]:
        """Whether each throw of a turn was read by its bottom faces (Bozó "em baixo"): the
        last as recorded; the first, when it is not the last, by its top faces; one between
        them announced the way that made the keep before it worth most (as the throw before
        it on a tie; by its top faces when the turn records no kept dice: nothing is judged
        then, and its value only passes the turn's luck on)."""
        n = len(turn.throws)
        out = [False] * n
        if n:
            out[-1] = turn.em_baixo
        if not self.rs.variant.em_baixo or turn.kept is None:
            return out
        for t in range(1, n - 1):  # throw t + 1 (1-based), after the keep of throw t
            kept = turn.kept[t - 1]
            top = float(view.E1[t, self._keep_id(kept, False)])
            bottom = float(view.E1[t, self._keep_id(kept, True)])
            out[t] = bottom > top + TIE or (abs(bottom - top) <= TIE and out[t - 1])
        return out

    def _keep_id(self, kept: tuple[int, ...], em_baixo: bool) -> int:
        """The tables' keep of dice kept as thrown, when the next throw is read by its bottom
        faces (`em_baixo`) or its top faces."""
        return self.keeps.index[bottom_faces(kept) if em_baixo else tuple(kept)]

    def _played_keep(self, kept: tuple[int, ...] | list[int], em_baixo: bool) -> Keep:
        """A keep: the dice as thrown, and (Bozó; else None) whether the next throw is
        announced em baixo."""
        return Keep(tuple(kept), em_baixo if self.rs.variant.em_baixo else None)

    def _decision(self, view: TurnView, pos: Position, ti: int, t: int, h: int,
                  hand: tuple[int, ...], read_bottom: bool, move: Move,
                  c1: float, c2: float, var: float | None = None, wins: bool = False
                  ) -> Decision:
        """A decision at hand h (the dice `hand` as thrown, read by their bottom faces when
        `read_bottom`), throw t: the best option, the chosen one's values (`c1`, `c2`: the
        moments of the points still to come after it; `var`: their variance, when known).
        `wins`: the move, a placement, wins the game at once (`c1`: the points it ends the
        game on): the best move whatever the tables say (they value it as if the game went
        on), with regret 0."""
        scored = bottom_faces(hand) if read_bottom else tuple(hand)
        best: Move
        if wins:
            assert isinstance(move, ScoreBox)
            best = ScoreBox(move.box, move.column, move.score)  # without what it earned
            return Decision(turn_number(ti), t, list(hand), list(scored), move, best,
                            pos.total + c1, 0.0, pos.total + c1, 0.0, 0.0, "best")
        b1, b2 = view.hand_value(h, t)
        d = int(view.DEC[t, h]) if t < pos.last else -1
        if d >= 0 and d == int(self.keeps.hand_keep[h]):
            d = -1  # keeping every die: scoring now
        if d < 0:
            ch = view.choice(h, t)
            part = self.st.parts[ch.part]
            best = ScoreBox(part.solution.model.box_ids[ch.box],
                               column_number(part.column, bool(self.rs.variant.columns)),
                               round(ch.score))
        else:
            # the policy's keep as the next throw reads it: these dice of the hand read the
            # same way, or (em baixo) their other faces read the other way
            keep = tuple(self.keep_dice[d])
            flip = bool(Counter(keep) - Counter(scored))  # not dice of the hand as read
            as_read = bottom_faces(keep) if flip else keep
            best = self._played_keep(bottom_faces(as_read) if read_bottom else as_read,
                                     read_bottom != flip)
        if var is None:
            sd = float(np.sqrt(max(0.0, c2 - c1 * c1)))
        else:
            sd = float(np.sqrt(max(0.0, var)))
        regret = max(0.0, b1 - c1)
        near = self._near_best(view, pos, t, h, b1)
        return Decision(turn_number(ti), t, list(hand), list(scored), move, best,
                        pos.total + c1, sd, pos.total + b1,
                        float(np.sqrt(max(0.0, b2 - b1 * b1))), regret, classify(regret, near))

    def _near_best(self, view: TurnView, pos: Position, t: int, h: int, b1: float) -> int:
        """How many options (keeps, each with its better announcement in Bozó, and boxes)
        are within TIE of the best value."""
        n = 0
        if t < pos.last:
            hand = self.keep_dice[int(self.keeps.hand_keep[h])]
            mirror = view.kd.mirror
            for keep in sub_multisets(tuple(hand)):
                k = self.keeps.index[keep]
                value = view.E1[t, k]
                if view.kd.em_baixo:
                    value = max(value, view.E1[t, int(mirror[k])])
                if b1 - value <= TIE:
                    n += 1
        s1, _, _ = view.terms[t == 1]
        if b1 - (s1[h] + pos.throw_value * (pos.last - t)) <= TIE:
            n += 1
        return max(n, 1)


def analyze(analyst: Any, rs: RuleSet, game: dict[str, Any]) -> GameAnalysis:
    """Analyse every player's game, `game` as games/validate takes it. The game is replayed
    by the domain (`replay_game`) before a table is asked for: a game that breaks a rule is
    refused at once (InvalidInput with every problem games/validate reports, each with
    pointer and code), never told to wait for a table first. A game not over is analysed as
    far as it goes; once it is over (every sheet full, or an instant win), every player has
    finished, on their final total."""
    replayed = replay_game(rs, game)
    if replayed.problems:
        raise InvalidInput(replayed.problems)
    analyzer = GameAnalyzer(analyst, rs)
    return GameAnalysis(analyzer.st.exact, analyzer.st.description, [
        analyzer.player(player_name(data, i), turns, f"/players/{i}",
                        replayed.validation.game_over)
        for i, (data, turns) in enumerate(zip(game["players"], replayed.turns, strict=True))],
        rules=rs)
