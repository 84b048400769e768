"""Worked examples from rule books (tests/data/vectors.jsonl), scored by the core.

Each line names its source; the boxes are named in the source's words and are mapped here to our
box ids. docs/rules.md decides where a source's semantics differ.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from service.domain.rules import effective_rules
from service.domain.scoring import parse_scorecard, score_hand

VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors.jsonl"

# Words of the sources → box ids (after lower-casing and stripping punctuation).
NAMES = {
    "ones": "ones", "aces": "ones", "jogada de 1": "ones", "jogada do 1": "ones", "1": "ones",
    "twos": "twos", "jogada de 2": "twos", "2": "twos",
    "threes": "threes", "jogada de 3": "threes", "jogada do 3": "threes", "3": "threes",
    "fours": "fours", "jogada de 4": "fours", "jogada do 4": "fours", "4": "fours",
    "fives": "fives", "jogada de 5": "fives", "jogada do 5": "fives", "5": "fives",
    "sixes": "sixes", "6": "sixes",
    "pair": "one_pair", "one pair": "one_pair",
    "two pairs": "two_pairs", "two pair": "two_pairs", "three pairs": "three_pairs",
    "3 of a kind": "three_of_a_kind", "three of a kind": "three_of_a_kind",
    "trinca t": "three_of_a_kind", "trinca 3 of a kind": "three_of_a_kind",
    "trinca só repetidos": "three_of_a_kind",
    "4 of a kind": "four_of_a_kind", "four of a kind": "four_of_a_kind",
    "quadra q": "four_of_a_kind", "quadra só repetidos": "four_of_a_kind",
    "5 of a kind": "five_of_a_kind",
    "full house": "full_house", "full hand f": "full_house", "full": "full_house",
    "full house 23": "full_house", "villa 33": "villa", "tower 24": "tower",
    "small straight": "small_straight", "little straight": "small_straight",
    "large straight": "large_straight", "big straight": "large_straight",
    "full straight": "full_straight",
    "seqüência alta s": "large_straight", "seqüência baixa s": "small_straight",
    "sequência s": "straight", "escalera": "straight",
    "yahtzee": "five_of_a_kind", "yatzy": "five_of_a_kind", "yacht": "five_of_a_kind",
    "general g": "five_of_a_kind", "maxiyatzy": "six_of_a_kind",
    "chance": "chance", "choice": "chance", "jogada aleatória x": "chance",
}


def box_id(category: str) -> str:
    """Map a source's category name to our box id."""
    key = re.sub(r"[^\w ]", "", category.lower().replace("-", " ")).strip()
    key = re.sub(r"\s+", " ", key)
    return NAMES[key]


def options_for(row: dict) -> dict:
    """Options a row's note or category implies (e.g. Trinca counting only repeated dice)."""
    if "só repetidos" in row["category"]:
        return {"trinca_quadra": "matching"}
    ctx = row.get("context") or {}
    if ctx.get("joker") == "hasbro_forced":
        return {"joker": "forced"}
    return {}


def scorecard_for(row: dict) -> dict | None:
    """The sheet state a row's context describes."""
    ctx = row.get("context")
    if not ctx:
        return None
    boxes = {box_id(b): 0 for b in ctx.get("filled", [])}
    if "yahtzee_box" in ctx:
        boxes["five_of_a_kind"] = ctx["yahtzee_box"]
    return {"boxes": boxes}


ROWS = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]


def test_every_vector_is_mapped():
    assert len(ROWS) >= 100
    for row in ROWS:
        box_id(row["category"])


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['variant']}-{r['category']}-{r['dice']}"
                                           for r in ROWS])
def test_vector(row):
    rs = effective_rules(row["variant"], options_for(row))
    sheet = parse_scorecard(rs, scorecard_for(row))
    result = score_hand(rs, row["dice"], row.get("roll"), sheet)
    box = box_id(row["category"])
    entry = next(c for c in result.boxes if c.box == box)
    assert entry.score == row["expected"], row
    if row.get("context"):
        assert entry.legal, row
