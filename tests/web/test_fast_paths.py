"""The fast request checks agree with the marshmallow schemas they shortcut.

A fast check may only accept what the schema accepts, and must then give the same data;
whatever it declines goes through the schema.
"""

from __future__ import annotations

import marshmallow as ma
from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.variants import ALL_BOX_IDS
from service.web.schemas import HandScoreRequestSchema, ScorecardScoreRequestSchema

odd = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                st.integers(-3, 200))
ints = st.one_of(st.integers(-2, 45), odd)
boxes = st.dictionaries(st.one_of(st.sampled_from(ALL_BOX_IDS), st.text(max_size=4)),
                        st.one_of(st.none(), st.integers(-1, 10_001), odd), max_size=6)
scorecard = st.fixed_dictionaries({}, optional={
    "boxes": st.one_of(boxes, odd), "five_of_a_kind_bonuses": ints, "saved_throws": ints,
    "won": st.one_of(st.booleans(), odd), "columns": st.just([]), "extra": odd})
dice = st.one_of(st.lists(st.one_of(st.integers(0, 7), odd), min_size=4, max_size=7), odd)
hand_request = st.fixed_dictionaries({}, optional={
    "dice": dice, "throw": ints, "scorecard": st.one_of(scorecard, odd),
    "em_baixo": st.one_of(st.booleans(), odd), "options": st.just({}), "extra": odd})
card_request = st.one_of(scorecard, st.fixed_dictionaries({"final": st.one_of(st.booleans(),
                                                                           odd)}))


def check_agrees(schema: ma.Schema, data: dict) -> None:
    fast = schema.fast_load(data)
    if fast is None:
        return
    assert schema.load(data) == fast


@settings(max_examples=600, deadline=None)
@given(hand_request)
def test_fast_hand_check_agrees_with_the_schema(data):
    check_agrees(HandScoreRequestSchema(), data)


@settings(max_examples=400, deadline=None)
@given(card_request)
def test_fast_scorecard_check_agrees_with_the_schema(data):
    check_agrees(ScorecardScoreRequestSchema(), data)


def test_fast_path_takes_the_common_request():
    body = {"dice": [3, 3, 4, 5, 6], "throw": 2,
            "scorecard": {"boxes": {"ones": 2, "full_house": None}, "five_of_a_kind_bonuses": 1}}
    assert HandScoreRequestSchema.fast_load(body) is body
    assert HandScoreRequestSchema.fast_load({**body, "throw": True}) is None
    assert HandScoreRequestSchema.fast_load({**body, "dice": [1, 2, 3, 4, 7]}) is None
