"""Domain errors and the catalogue of their codes. The HTTP layer turns the errors into RFC
9457 problem documents; the codes (`ALL_CODES`) are the spec's enums and docs/problems.md's
tables."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (a JSON pointer into the request), what, and
    (where a machine-readable reason applies) a code documented in docs/problems.md."""

    pointer: str
    detail: str
    code: str | None = None


# --------------------------------------------------------------------------- the codes
# Each code a `Problem` may carry, with its meaning: the spec's enums are made from these
# tables, and tests/domain/test_consistency.py holds docs/problems.md to them.

#: Every code `consistency.sheet_problems` gives, with what it means.
SHEET_CODES: dict[str, str] = {
    "value_not_achievable": "The box holds a value no hand can score in it with these rules "
                            "(options, house rules and Joker values applied).",
    "first_throw_only": "A column that takes first-throw results only holds a value only a "
                        "later throw gives.",
    "requires_made_box": "The box holds a made score while the box it needs made first "
                         "(Doble Generala needs Generala) is open or scratched.",
    "out_of_order": "A box is filled while a box before it in the sheet's or column's order "
                    "is still open (Generala obligada; column sheets' columns 1 and 2).",
    "bonus_without_five_of_a_kind": "Five-of-a-kind bonuses while the five-of-a-kind box is "
                                    "open, or scratched where the bonus needs it made.",
    "too_many_bonuses": "More five-of-a-kind bonuses than boxes that could have taken a "
                        "further five of a kind (Kniffel: number boxes holding five of "
                        "their face).",
    "too_many_saved_throws": "More saved throws than the turns played could have saved "
                             "(at most 2 a turn).",
    "cannot_win": "`won` on a table where no box wins the game at once.",
}

#: Why a turn may not be played (problem type /problems/illegal-move).
MOVE_CODES: dict[str, str] = {
    "game_won": "The game was won at once (Generala servida, General de boca): no more turns.",
    "game_over": "Every box of the sheet is filled: no more turns.",
    "box_required": "The turn names no box; only an instant win may end a turn without one "
                    "(and a chosen 0, `scratch`, names the box it goes in).",
    "box_filled": "The box is already filled.",
    "out_of_order": "The sheet or column is filled in a fixed order and this box is not the "
                    "next one (Generala obligada; column sheets' columns 1 and 2).",
    "first_throw_only": "The column takes first-throw results only and the dice stand on a "
                        "later throw.",
    "joker_forces_box": "The forced Joker names other boxes for this five of a kind (the "
                        "matching number box, else the lower section).",
}

#: What is wrong with a turn's input for this table (problem type /problems/inconsistent-request).
INPUT_CODES: dict[str, str] = {
    "unknown_box": "The table's sheet has no such box.",
    "column_required": "A column sheet needs the column the box is in.",
    "no_columns": "A column was named on a one-column sheet.",
    "dice_count": "Not as many dice as the variant is played with.",
    "bad_face": "A die that is not a face from 1 to 6.",
    "too_many_throws": "More throws than the turn has (3, plus saved throws in Maxi Yatzy).",
    "em_baixo_not_allowed": "'Em baixo' on a variant other than Bozó.",
}

#: What only a whole game can get wrong (games/validate).
GAME_CODES: dict[str, str] = {
    "kept_count": "`kept` must list the dice kept after each throw but the last "
                  "(one entry fewer than `throws`).",
    "kept_not_in_throw": "Kept dice that the throw they were kept from does not show.",
    "kept_not_in_next_throw": "Kept dice missing from the next throw.",
    "kept_all_dice": "All dice kept and thrown again: keeping every die ends the throwing.",
    "points_mismatch": "The claimed points of a turn differ from what it wrote in its box "
                       "(what its dice score there; 0 for a chosen 0, `scratch`).",
    "first_throw_bonus_on_later_throw": "The claimed points include a first-throw score "
                                        "(servida, de boca, secos) the turn made on a later "
                                        "throw.",
    "total_mismatch": "A player's claimed total differs from the sheet's total.",
    "out_of_turn": "A turn played out of order: players play in the order listed, one turn "
                   "each per round.",
    "winners_mismatch": "The claimed winners are not the players with the top total (or the "
                        "instant winner).",
    "winners_before_end": "Winners claimed for a game that is not over.",
    "unknown_player": "A claimed winner that is not a player of the game.",
}

#: Problems of a position played to win (`objective: "win"`: the other players' sheets).
WIN_CODES: dict[str, str] = {
    "opponents_required": "Playing to win needs the opponents' scorecards: there is no one to "
                          "beat.",
    "opponents_without_win": "Opponents' scorecards are read only when playing to win.",
}

#: Problems of a position played to reach a total (`objective: "target"`).
TARGET_CODES: dict[str, str] = {
    "target_required": "Playing to reach a total needs the total: `target`.",
    "target_without_objective": "A target is read only when playing to reach it "
                                "(objective target).",
}

#: What is wrong with a table's house rules taken together (`rules.check_box_bounds`).
RULE_CODES: dict[str, str] = {
    "box_value_too_large": "Under these house rules the box could score more than a box "
                           "holds (10,000): its value, first-throw bonus or value and Joker "
                           "together.",
}

#: Every code a problem of the API may carry, with its meaning (docs/problems.md, the spec).
ALL_CODES: dict[str, str] = {**SHEET_CODES, **MOVE_CODES, **INPUT_CODES, **GAME_CODES,
                             **WIN_CODES, **TARGET_CODES, **RULE_CODES}


class DomainError(Exception):
    """Base of the errors the core raises on purpose."""


class UnknownVariant(DomainError):
    """The variant id names no variant."""

    def __init__(self, variant: str) -> None:
        super().__init__(f"unknown variant {variant!r}")
        self.variant = variant


class InvalidInput(DomainError):
    """The request is well-formed JSON but breaks a rule of the game or of the variant."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.pointer}: {p.detail}" for p in problems))
        self.problems = problems

    @classmethod
    def one(cls, pointer: str, detail: str, code: str | None = None) -> InvalidInput:
        """An error with a single problem."""
        return cls([Problem(pointer, detail, code)])

    def prefixed(self, prefix: str) -> InvalidInput:
        """The same error (same class, same code) with every pointer under `prefix` (the
        item's place in a batch)."""
        moved = Exception.__new__(type(self))  # without __init__: subclasses take others
        moved.__dict__.update(self.__dict__)
        moved.problems = [replace(p, pointer=prefix + p.pointer) for p in self.problems]
        moved.args = ("; ".join(f"{p.pointer}: {p.detail}" for p in moved.problems),)
        return moved


class IllegalMove(InvalidInput):
    """A turn the rules do not allow on this sheet (box filled, Joker forces another box,
    column order, game over...): `code` says which rule, as in docs/problems.md."""

    def __init__(self, code: str, pointer: str, detail: str) -> None:
        super().__init__([Problem(pointer, detail, code)])
        self.code = code


def escape_pointer_token(token: object) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: object) -> str:
    """Build a JSON pointer from reference tokens."""
    return "".join("/" + escape_pointer_token(t) for t in tokens)
