"""Boxes as data: a pattern, a scoring rule and a value.

Every box of every variant is a `Box`. How a hand scores in a box is decided here and only
here (`pattern_match`, `plain_score`); variants in `service.domain.variants` only choose the data.

Patterns:
- ``face``: the dice showing one face (the upper section).
- ``n_kind``: at least n dice of one face (three/four/five/six of a kind).
- ``pairs``: n pairs of different faces (a triple or more may serve as a pair).
- ``groups``: groups of given sizes on different faces (3+2 full house, 3+3 villa, 4+2 tower).
- ``straight``: the hand holds one of the listed runs of faces.
- ``chance``: any hand.

Scoring: ``sum`` of all dice, ``matching`` (only the dice forming the pattern), or ``fixed``
(the box's value, or ``value_by_face`` for the face of a kind, e.g. Póker de ases).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import permutations
from typing import Any

from .dice import FACES, Counts, all_hands, counts_of

PATTERNS = ("face", "n_kind", "pairs", "groups", "straight", "chance")
SCORINGS = ("sum", "matching", "fixed")


@dataclass(frozen=True)
class Box:
    """One row of a score sheet."""

    id: str
    section: str  # "upper" | "lower"
    pattern: str
    scoring: str
    value: int = 0  # the fixed score, when scoring == "fixed"
    face: int = 0  # for pattern "face"
    n: int = 0  # for "n_kind" (dice) and "pairs" (how many pairs)
    groups: tuple[int, ...] = ()  # for "groups", largest first
    runs: tuple[tuple[int, ...], ...] = ()  # for "straight"
    value_by_face: tuple[tuple[int, int], ...] = ()  # fixed value per face of the kind
    first_throw_bonus: int = 0  # added when made on the first throw (servida, de boca)
    first_throw_value: int | None = None  # replaces the score on the first throw
    wins_on_first_throw: bool = False  # made on the first throw, the game is won at once
    requires: tuple[str, ...] = ()  # boxes that must hold a made (non-zero) score first
    labels: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    rule: str = field(default="", compare=False, hash=False)

    def with_changes(self, **changes: Any) -> Box:
        """Return a copy with some fields changed (house rules, options)."""
        return replace(self, **changes)

    def as_data(self) -> dict[str, Any]:
        """The box's scoring definition as plain data: what the rules' fingerprint hashes
        (`rules.definition`), not an answer (the API's is `rules.BoxDefinition`)."""
        data: dict[str, Any] = {
            "id": self.id,
            "section": self.section,
            "pattern": self.pattern,
            "scoring": self.scoring,
        }
        if self.scoring == "fixed":
            data["value"] = self.value
        if self.pattern == "face":
            data["face"] = self.face
        if self.pattern in ("n_kind", "pairs"):
            data["n"] = self.n
        if self.groups:
            data["groups"] = list(self.groups)
        if self.runs:
            data["runs"] = [list(r) for r in self.runs]
        if self.value_by_face:
            data["value_by_face"] = {str(f): v for f, v in self.value_by_face}
        data["first_throw_bonus"] = self.first_throw_bonus
        data["first_throw_value"] = self.first_throw_value
        data["wins_on_first_throw"] = self.wins_on_first_throw
        data["requires"] = list(self.requires)
        return data


def pattern_match(box: Box, counts: Counts) -> tuple[int, int] | None:
    """Whether the hand forms the box's pattern.

    Returns (sum of the matching dice, face of the kind or 0), or None when it does not.
    For patterns that several groupings satisfy, the grouping with the highest matching sum.
    """
    p = box.pattern
    if p == "face":
        return box.face * counts[box.face], box.face
    if p == "chance":
        return sum(f * counts[f] for f in FACES), 0
    if p == "n_kind":
        for f in reversed(FACES):
            if counts[f] >= box.n:
                return box.n * f, f
        return None
    if p == "pairs":
        paired = [f for f in reversed(FACES) if counts[f] >= 2]
        if len(paired) < box.n:
            return None
        return 2 * sum(paired[: box.n]), paired[0]
    if p == "groups":
        best: tuple[int, int] | None = None
        for faces in permutations(FACES, len(box.groups)):
            if all(counts[f] >= g for f, g in zip(faces, box.groups)):
                total = sum(f * g for f, g in zip(faces, box.groups))
                if best is None or total > best[0]:
                    best = (total, faces[0])
        return best
    if p == "straight":
        for run in box.runs:
            if all(counts[f] >= 1 for f in run):
                return sum(run), 0
        return None
    raise ValueError(f"unknown pattern {p!r}")


def full_value(box: Box, counts: Counts, matched: tuple[int, int] | None) -> int:
    """The score of the box when its pattern counts as made (normally, or as a Joker)."""
    if box.scoring == "sum":
        return sum(f * counts[f] for f in FACES)
    if box.scoring == "fixed":
        face = matched[1] if matched else 0
        return dict(box.value_by_face).get(face, box.value)
    # matching: a Joker with no real match scores the dice it would have used; for the
    # families with a Joker every matching box is an n_kind, which a five of a kind matches.
    return matched[0] if matched else 0


@lru_cache(maxsize=256)
def match_table(pattern_key: tuple[Any, ...], n_dice: int) -> tuple[tuple[int, int] | None, ...]:
    """`pattern_match` of every hand of n dice (in `all_hands` order) for one pattern.

    Keyed by the pattern's fields only, so house rules that change values or scoring reuse
    it: building a table of rules costs the scoring, not the pattern matching.
    """
    pattern, face, n, groups, runs = pattern_key
    probe = Box(id="_", section="lower", pattern=pattern, scoring="sum", face=face, n=n,
                groups=groups, runs=runs)
    return tuple(pattern_match(probe, counts_of(h)) for h in all_hands(n_dice))


def pattern_key(box: Box) -> tuple[Any, ...]:
    """The fields that decide whether a hand forms the box's pattern."""
    return (box.pattern, box.face, box.n, box.groups, box.runs)


def plain_score(box: Box, counts: Counts, first_throw: bool = False) -> int:
    """Score of a hand in a box by the box's own rule, before Joker and sheet-state rules.

    `first_throw` applies the servida / de boca / na primeira bonus where the box has one.
    Boxes with `requires` are checked by the caller, which knows the sheet.
    """
    return score_from_match(box, counts, pattern_match(box, counts), first_throw)


def score_from_match(box: Box, counts: Counts, matched: tuple[int, int] | None,
                     first_throw: bool = False) -> int:
    """`plain_score` when the pattern match is already known."""
    if matched is None:
        return 0
    score = full_value(box, counts, matched)
    if first_throw and score > 0:
        if box.first_throw_value is not None:
            return box.first_throw_value
        score += box.first_throw_bonus
    return score


def _runs_text(runs: tuple[tuple[int, ...], ...]) -> str:
    def one(run: tuple[int, ...]) -> str:
        if run == (1, 3, 4, 5, 6):
            return "3-4-5-6-1"
        return "-".join(map(str, run))

    return " or ".join(one(r) for r in runs)


def describe(box: Box) -> str:
    """A one-line rule for the box, generated from its data (so it never drifts)."""
    p = box.pattern
    if p == "face":
        return f"Any dice; scores the sum of the {box.face}s."
    if p == "chance":
        what = "Any dice"
    elif p == "n_kind":
        what = f"At least {box.n} dice of one face"
    elif p == "pairs":
        what = ("A pair" if box.n == 1 else f"{box.n} pairs of different faces")
    elif p == "groups":
        what = "+".join(map(str, box.groups)) + " of different faces"
    else:
        what = _runs_text(box.runs)
    if box.scoring == "sum":
        how = "the sum of all dice"
    elif box.scoring == "matching":
        how = "the sum of the dice that form it"
    else:
        how = f"{box.value}"
        if box.value_by_face:
            how += "".join(f" ({v} with {f}s)" for f, v in box.value_by_face)
    text = f"{what}; scores {how}."
    if box.requires:
        text += " Only while " + ", ".join(box.requires) + " holds its score (not a scratch)."
    if box.first_throw_value is not None:
        text += f" {box.first_throw_value} on the first throw."
    elif box.first_throw_bonus:
        text += f" +{box.first_throw_bonus} on the first throw."
    if box.wins_on_first_throw:
        text += " Made on the first throw, it wins the game at once."
    return text
