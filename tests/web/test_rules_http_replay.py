"""Every box-by-box rule-book row of the family modules, replayed through the HTTP API."""

from __future__ import annotations

import pytest

from ..domain import test_rules_general_family as general
from ..domain import test_rules_kniffel_yams_basic as kniffel
from ..domain import test_rules_yahtzee as yahtzee
from ..domain import test_rules_yatzy_maxi_yacht as yatzy

ROWS = (yahtzee.BOX_ROWS + kniffel.ROWS + kniffel.YAMS_ROWS + yatzy.YATZY_ROWS
        + yatzy.MAXI_ROWS + yatzy.YACHT_ROWS + general.GENERAL_ROWS + general.G11_ROWS
        + general.GA_ROWS + general.GS_ROWS + general.BZ_ROWS)


@pytest.mark.parametrize(("variant", "options", "dice", "throw", "sheet", "box", "expected",
                          "source"), ROWS)
def test_box_scores_http(client, variant, options, dice, throw, sheet, box, expected, source):
    body: dict = {"dice": dice}
    if options:
        body["options"] = options
    if throw is not None:
        body["throw"] = throw
    if sheet:
        body["scorecard"] = {"boxes": sheet}
    r = client.post(f"/v1/variants/{variant}/hands/score", json=body)
    assert r.status_code == 200, r.get_json()
    cats = {c["box"]: c for c in r.get_json()["boxes"]}
    assert cats[box]["score"] == expected
    assert cats[box]["legal"]
