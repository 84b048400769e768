"""House rules at their extremes: every score the service answers fits the bounds its own
request schemas take, so a sheet it answers can be sent back as it is. House rules under
which a box could score more than a box holds are refused (409 `box_value_too_large`), not
answered with a box no request may carry (docs/problems.md)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.config import Settings
from service.domain.rules import MAX_VALUE
from service.domain.variants import VARIANTS
from service.web.app import create_app

#: Variants with boxes of a fixed value (the overrides reach them) and a first throw.
VARIANTS_DRAWN = ("yahtzee", "generala", "general", "bozo", "yatzy", "kniffel")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = create_app(Settings(advisor_table_dir=str(tmp_path_factory.mktemp("tables")),
                              advisor_builds="inline", quota_scoring="unlimited"))
    return app.test_client()


@st.composite
def extreme_rules(draw):
    variant = draw(st.sampled_from(VARIANTS_DRAWN))
    boxes = [b for b in VARIANTS[variant].boxes if b.scoring == "fixed"]
    box = draw(st.sampled_from(boxes))
    change = {"value": draw(st.sampled_from([0, 1, 9990, 9996, 9999, MAX_VALUE]))}
    if draw(st.booleans()):
        change["first_throw_bonus"] = draw(st.sampled_from([0, 5, 9999, MAX_VALUE]))
    dice = draw(st.lists(st.integers(1, 6), min_size=5, max_size=5))
    return variant, box.id, change, dice, draw(st.sampled_from([1, 2, 3]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extreme_rules())
def test_extreme_house_rules_answer_within_the_bounds_or_are_refused(client, drawn):
    variant, box, change, dice, throw = drawn
    rules = {"boxes": {box: change}}
    r = client.post(f"/v1/variants/{variant}/hands/score",
                    json={"dice": dice, "rules": rules, "throw": throw})
    if r.status_code == 409:
        codes = {e.get("code") for e in r.json["errors"]}
        assert codes == {"box_value_too_large"}, r.json
        assert all(e["pointer"].startswith("/rules/boxes/") for e in r.json["errors"])
        return
    assert r.status_code == 200, r.json
    for entry in r.json["boxes"]:
        assert 0 <= entry["score"] <= MAX_VALUE, entry
        if entry["legal"] and entry["column"] is None:
            # the sheet with that box written, sent back: never refused for its shape
            card = {"boxes": {entry["box"]: entry["score"]}, "rules": rules}
            back = client.post(f"/v1/variants/{variant}/scorecards/score", json=card)
            assert back.status_code in (200, 409), back.json
            if back.status_code == 409:  # a rule of the sheet, never the box's bound
                assert "box_value_too_large" not in str(back.json)
