"""Computer players at a chosen strength: the move a bot makes, drawn from the advisor's
ranked moves (`moves.suggest`), so that a bot plays every rule, option and house rule the
advisor knows.

A level plays like a person of that strength:

- it prefers better moves: each move's chance falls with its regret (the expected final
  score it gives up against the best move), as ``exp(-regret / temperature)``;
- it makes the mistakes people make: it overvalues points it can write now (`greed`: the
  points a box takes this turn count as if they were worth `1 + greed` times as much
  against a keep or a box scoring less), and it misjudges close calls (the temperature);
- it never makes a move no person would make. A move whose regret is above the level's
  `cap` is never chosen (writing 0 in the YAHTZEE box on the first turn gives up 10.4 points
  at the least: every level's cap is below it). Whatever its regret, no level but `expert`
  rethrows a hand that fills a box open for it with every die (a straight of all the dice,
  all the dice alike: a large straight, a YAHTZEE, a Generala), nor writes 0 in a box while
  throws remain in the turn. The best move is always a candidate;
- every level takes a win at once (Generala servida, General de boca) when its first throw
  makes one, `expert` included, even where the advisor's expected score would rethrow.

`expert` is the advisor's own move. With another objective than the expected score (the
registry of `objective.py`: "win", the moves ranked by the chance of finishing first against
the opponents' sheets; "target", by the chance of reaching a total) the levels draw the same
way from that ranking, a percentage point of the objective's probability counting as a
point of regret (`Objective.regret`); `expert` plays the objective's best move. The levels'
means are measured by `bench/bench_bots.py` (the README's table).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, fields

from ...domain.moves import Keep, ScoreBox
from ...domain.rules import RuleSet
from ...domain.scoring import Sheet, empty_sheet, max_throw, score_hand, score_sheet
from ...domain.turn import apply_turn
from ..solving.strategy import Strategy
from .moves import RankedMove, Suggestion, suggest
from .objective import objective_named


@dataclass(kw_only=True)
class BotMove(Suggestion):
    """The move a computer player makes in a position (moves/bot's answer,
    `BotMoveSchema`): the position's moves as they were ranked (`Suggestion`), the level
    and seed it played with, and the move it drew."""

    level: str
    seed: int
    move: RankedMove

    @property
    def best_expected_final_score(self) -> float:
        """The best move's expected final score (the move's regret is the difference)."""
        return self.expected_final_score

    @staticmethod
    def of(ranked: Suggestion, level: str, seed: int, move: RankedMove) -> BotMove:
        """The bot's move `move`, drawn at `level` with `seed` from the moves `ranked`."""
        return BotMove(**{f.name: getattr(ranked, f.name) for f in fields(Suggestion)},
                       level=level, seed=seed, move=move)


@dataclass(frozen=True)
class Level:
    """How a computer player of one strength chooses among the ranked moves."""

    name: str
    #: points of regret that make a move e (2.718...) times less likely to be chosen
    temperature: float
    #: extra weight on the points a box takes now, against what the move gives up later
    greed: float
    #: the largest regret of a move the level may choose (the best move always may)
    cap: float


LEVELS: dict[str, Level] = {lv.name: lv for lv in (
    Level("beginner", temperature=2.4, greed=0.2, cap=10.0),
    Level("casual", temperature=1.4, greed=0.1, cap=6.0),
    Level("strong", temperature=1.0, greed=0.03, cap=4.0),
    Level("expert", temperature=0.0, greed=0.0, cap=0.0),
)}

LEVEL_NAMES = tuple(LEVELS)


def position_rng(seed: int, variant_fingerprint: str, dice: list[int], throw: int,
                 sheet: Sheet, em_baixo: bool, level: str) -> random.Random:
    """The random source of one decision: the same request and seed give the same draw, and
    one seed used for a whole game gives each position a draw of its own (not the same one
    at every decision)."""
    key = repr((seed, variant_fingerprint, sorted(dice), throw, sheet, em_baixo, level))
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def _now(a: RankedMove) -> int:
    """The points a move writes this turn (a keep writes none)."""
    return a.move.points if isinstance(a.move, ScoreBox) else 0


def whole_hand_boxes(rs: RuleSet) -> frozenset[str]:
    """The boxes a hand fills with every die: a straight of all the dice, all the dice
    alike (a large straight, a YAHTZEE, a Generala). Nobody rethrows such a hand while its
    box is open."""
    n = rs.variant.dice
    return frozenset(b.id for b in rs.variant.boxes
                     if (b.pattern == "straight" and b.runs and all(len(r) == n for r in b.runs))
                     or (b.pattern == "n_kind" and b.n == n))


def _human(rs: RuleSet, suggestion: Suggestion, a: RankedMove) -> bool:
    """Whether a person could make move `a` at all (the module's last rule)."""
    if isinstance(a.move, Keep):
        made = whole_hand_boxes(rs)
        return not any(isinstance(m.move, ScoreBox) and m.move.box in made and _now(m) > 0
                       for m in suggestion.moves)
    return _now(a) > 0 or suggestion.throws_left == 0


def _regret(suggestion: Suggestion, a: RankedMove) -> float:
    """What a move gives up against the best under the suggestion's objective
    (`Objective.regret`: expected final score, or percentage points of a probability)."""
    return objective_named(suggestion.objective).regret(suggestion, a)


def candidates(rs: RuleSet, suggestion: Suggestion, level: Level
               ) -> list[tuple[RankedMove, float]]:
    """The moves the level may choose, each with its weight (not normalised). Dice that win
    the game at once are written, by every level, in the box the advisor ranks best."""
    boxes = [a for a in suggestion.moves if isinstance(a.move, ScoreBox)]
    if suggestion.wins_game and boxes:
        return [(boxes[0], 1.0)]
    if level.temperature <= 0.0:
        return [(suggestion.best, 1.0)]
    moves = [a for a in suggestion.moves if a is suggestion.best or (
        _regret(suggestion, a) <= level.cap and _human(rs, suggestion, a))]
    top = max(_now(a) for a in moves)
    out = []
    for a in moves:
        # points now overvalued: a move writing fewer points than the most it could looks
        # worse by `greed` times the difference
        felt = _regret(suggestion, a) + level.greed * (top - _now(a))
        out.append((a, math.exp(-felt / level.temperature)))
    return out


def bot_move(rs: RuleSet, suggestion: Suggestion, level: Level,
             rng: random.Random) -> RankedMove:
    """The move a computer player of `level` makes in a position the advisor ranked."""
    options = candidates(rs, suggestion, level)
    if len(options) == 1:
        return options[0][0]
    total = sum(w for _, w in options)
    x = rng.random() * total
    for a, w in options:
        x -= w
        if x < 0.0:
            return a
    return options[-1][0]


#: Ranks a position's moves another way than the advisor's expected score (for instance
#: an objective's `rank`, its other arguments bound): (the advisor's ranking, dice, throw,
#: sheet, em_baixo) -> ranking.
Ranker = Callable[[Suggestion, list[int], int, Sheet, bool], Suggestion]


def play_bot_turn(st: Strategy, sheet: Sheet, dice_rng: random.Random,
                  level: str = "expert", seed: int = 0, regrets: list[float] | None = None,
                  rank: Ranker | None = None) -> Sheet:
    """One turn of a bot at `level` through the domain's turn engine (`apply_turn`), the
    dice drawn from `dice_rng` and the bot's choices from `seed`: the sheet after it. The
    regret of every decision is added to `regrets`; `rank`, when given, ranks the moves
    the bot draws from."""
    rs = st.rs
    n = rs.variant.dice
    lv = LEVELS[level]
    dice = sorted(dice_rng.randint(1, 6) for _ in range(n))
    throw, em_baixo = 1, False
    while True:
        ranked = suggest(st, dice, throw, sheet, em_baixo)
        if rank is not None:
            ranked = rank(ranked, dice, throw, sheet, em_baixo)
        move = bot_move(rs, ranked, lv, position_rng(seed, rs.fingerprint, dice, throw,
                                                     sheet, em_baixo, level))
        if regrets is not None:
            regrets.append(move.regret)
        chosen = move.move
        if isinstance(chosen, Keep) and throw < max_throw(rs, sheet):
            kept = list(chosen.dice)
            dice = sorted(kept + [dice_rng.randint(1, 6) for _ in range(n - len(kept))])
            throw, em_baixo = throw + 1, chosen.announced
            continue
        assert isinstance(chosen, ScoreBox)  # the last throw's moves are placements
        hs = score_hand(rs, dice, throw, sheet, em_baixo)
        p = next(p for p in hs.boxes if p.box == chosen.box and p.legal
                 and (chosen.column is None or p.column == chosen.column))
        return apply_turn(rs, sheet, hs, p, throw).sheet


def play_game(st: Strategy, level: str, seed: int) -> tuple[int, list[float]]:
    """A seeded solitaire game of a bot at `level` (`play_bot_turn` after `play_bot_turn`): its
    final total and the regret of every decision. The dice are those of
    `random.Random(seed)` whatever the level (games of one seed at two levels throw the same
    dice as long as the two play alike), and the bot draws with the same seed.
    (`bench/bench_bots.py` calibrates the levels with it.)"""
    rs = st.rs
    dice_rng = random.Random(seed)
    sheet = empty_sheet(rs)
    regrets: list[float] = []
    while True:
        totals = score_sheet(rs, sheet)
        if sheet.won or totals.complete:
            return int(totals.total), regrets
        sheet = play_bot_turn(st, sheet, dice_rng, level, seed, regrets)
