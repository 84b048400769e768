"""A move: what a player does with a throw, one type wherever a move is named.

A move is a keep (`Keep`: keep some dice and throw the others) or the hand written in a box
(`ScoreBox`: the turn ends), `Move` either; `action` tells them apart ("keep", "score": the
API's discriminator). What a move is worth under an objective (its expected final score,
regret, rank, share of the win, probability of reaching a target) is not part of it: the
record that holds the move keeps those figures beside it (the advisor's suggestions, a game
analysis's decisions).

Not to be confused with `scoring.Placement`, a box's entry in a scored hand (legal or not,
what it would score), nor with `turn.Earned`, what a turn played added to the sheet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar, Literal

from .dice import Hand, bottom_faces
from .scoring import Placement


@dataclass(frozen=True, slots=True)
class Keep:
    """Keep these dice and throw the others.

    `dice`: the dice kept as thrown (their top faces), what a recorded game's `kept`
    takes. `em_baixo` (Bozó): the next throw is announced "em baixo" (it is read by its
    bottom faces, kept dice included) or not; None under rules without the announcement
    (every variant but Bozó)."""

    action: ClassVar[Literal["keep"]] = "keep"

    dice: Hand
    em_baixo: bool | None = None

    @property
    def announced(self) -> bool:
        """Whether the next throw is announced em baixo (False where no rule allows it)."""
        return self.em_baixo is True

    @property
    def read(self) -> Hand:
        """The kept dice as the next throw reads them: their bottom faces after an "em
        baixo" announcement, else as thrown."""
        return bottom_faces(self.dice) if self.em_baixo else self.dice


@dataclass(frozen=True, slots=True)
class ScoreBox:
    """Write the hand in a box: the box, its column (column number on a column sheet, else
    None) and the points the box receives (0: a scratch).

    What the placement earns besides (the five-of-a-kind bonus, the upper bonus it
    secures, whether it is scored as a Joker, whether it wins the game at once) is None
    where it was not worked out (a game analysis's best placement, known from the tables
    by its box and score alone)."""

    action: ClassVar[Literal["score"]] = "score"

    box: str
    column: int | None
    score: int
    five_of_a_kind_bonus: int | None = None
    upper_bonus: int | None = None
    joker: bool | None = None
    wins_game: bool | None = None

    @staticmethod
    def of(p: Placement) -> ScoreBox:
        """The move that writes a scored hand's entry `p` (`scoring.score_hand`), with
        everything it earns."""
        return _score_box(p.box, p.column, p.score, p.five_of_a_kind_bonus, p.upper_bonus,
                          p.joker, p.wins_game)

    @property
    def points(self) -> int:
        """The points the placement writes this turn: the box's and its bonuses (those
        worked out)."""
        return self.score + (self.five_of_a_kind_bonus or 0) + (self.upper_bonus or 0)


@lru_cache(maxsize=8192, typed=True)
def _score_box(box: str, column: int | None, score: int, five_of_a_kind_bonus: int,
               upper_bonus: int, joker: bool, wins_game: bool) -> ScoreBox:
    """One `ScoreBox` of these fields, made once: a move is a value, and a frozen
    dataclass costs four times a plain one to make (a position's suggestion makes one a
    box, `advice.moves.suggest`)."""
    return ScoreBox(box, column, score, five_of_a_kind_bonus, upper_bonus, joker, wins_game)


#: A move: a keep or a placement, told apart by `action` ("keep", "score").
Move = Keep | ScoreBox
