"""The rule book's rows over HTTP: the same rules as `tests/domain/test_rules_*.py`, checked
through the endpoints (status codes, pointers, documents)."""

from __future__ import annotations

import pytest

from service.web.app import create_app

from ..domain.test_rules_columns_house import (
    BAD_OVERRIDES,
    COLS,
    THIRTEEN,
    VARIANTS,
    effective_rules,
    upper_sheet,
)
from ..domain.test_rules_general_family import G11, GA, G
from ..domain.test_rules_yahtzee import FIVE_FOURS, MAX_SHEET
from ..domain.test_rules_yatzy_maxi_yacht import MX, YT, YZ
from .refusals import refused


@pytest.mark.parametrize("variant", THIRTEEN)
def test_column_sheet_has_52_rounds(variant, client):
    """§12: 4 columns of the same 13 boxes, 52 rounds."""
    r = client.post(f"/v1/variants/{variant}/rules", json={"options": COLS})
    assert r.status_code == 200
    doc = r.get_json()
    assert doc.get("definition", doc)["turns"] == 52


def test_column_sheet_http(client):
    body = {"options": COLS,
            "columns": [{"boxes": upper_sheet(3, 6, 9, 12, 15, 18)}, {"boxes": {}},
                        {"boxes": {}}, {"boxes": {}}]}
    r = client.post("/v1/variants/yahtzee/scorecards/score", json=body)
    assert r.status_code == 200
    assert r.get_json()["upper_bonus"] == 35


def test_column_order_http(client):
    body = {"dice": [2, 2, 2, 6, 6], "throw": 2, "options": COLS,
            "scorecard": {"columns": [{"boxes": {"ones": 0}}, {"boxes": {}}, {"boxes": {}},
                                      {"boxes": {}}]}}
    r = client.post("/v1/variants/yahtzee/hands/score", json=body)
    assert r.status_code == 200
    by_col: dict[int, set[str]] = {1: set(), 2: set(), 3: set(), 4: set()}
    for c in r.get_json()["boxes"]:
        if c["legal"]:
            by_col[c["column"]].add(c["box"])
    assert by_col[1] == {"twos"}
    assert by_col[2] == {"chance"}
    assert len(by_col[3]) == 13
    assert by_col[4] == set()


@pytest.mark.parametrize(("variant", "options", "overrides", "ptr"), BAD_OVERRIDES[:6])
def test_override_error_is_refused_over_http(client, variant, options, overrides, ptr):
    body = {"dice": [1, 2, 3, 4, 5], "rules": overrides}
    r = client.post(f"/v1/variants/{variant}/hands/score", json=body)
    assert refused(r), r.get_json()
    assert ptr in [e["pointer"] for e in r.get_json()["errors"]]


def test_fingerprint_is_stable_across_requests(client):
    body = {"options": {"joker": "free"}, "rules": {"boxes": {"full_house": {"value": 30}}}}
    first = client.post("/v1/variants/yahtzee/rules", json=body).get_json()["rules"]
    again = client.post("/v1/variants/yahtzee/rules", json=body).get_json()["rules"]
    assert first["fingerprint"] == again["fingerprint"]
    direct = effective_rules("yahtzee", body["options"], body["rules"]).fingerprint
    assert first["fingerprint"] == direct


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_box_has_labels_in_six_languages(client, variant):
    """Names: human labels per language (en, pt, es, de, sv, fr at least)."""
    doc = client.get(f"/v1/variants/{variant}").get_json()
    for box in doc["boxes"]:
        for lang in ("en", "pt", "es", "de", "sv", "fr"):
            assert box["labels"].get(lang), (box["id"], lang)


@pytest.mark.parametrize(("variant", "box", "lang", "word"), [
    ("general", "three_of_a_kind", "pt", "Trinca"),
    ("general", "four_of_a_kind", "pt", "Quadra"),
    ("general", "full_house", "pt", "Full-hand"),
    ("general", "large_straight", "pt", "Seqüência alta"),
    ("general", "small_straight", "pt", "Seqüência baixa"),
    ("generala", "straight", "es", "Escalera"),
    ("generala", "four_of_a_kind", "es", "Póker"),
    ("kniffel", "three_of_a_kind", "de", "Dreierpasch"),
    ("kniffel", "four_of_a_kind", "de", "Viererpasch"),
    ("kniffel", "small_straight", "de", "Kleine Straße"),
    ("kniffel", "large_straight", "de", "Große Straße"),
    ("kniffel", "ones", "de", "Einer"),
    ("yams", "three_of_a_kind", "fr", "Brelan"),
    ("yams", "four_of_a_kind", "fr", "Carré"),
    ("yams", "small_straight", "fr", "Petite suite"),
    ("yams", "large_straight", "fr", "Grande suite"),
])
def test_labels_use_the_local_games_words(client, variant, box, lang, word):
    doc = client.get(f"/v1/variants/{variant}").get_json()
    labels = {b["id"]: b["labels"] for b in doc["boxes"]}
    assert word in labels[box][lang]


@pytest.mark.parametrize(("variant", "turns"), [
    ("yahtzee", 13), ("yahtzee_basic", 13), ("kniffel", 13), ("yams", 13), ("yatzy", 15),
    ("maxi_yatzy", 20), ("general", 13), ("general_11", 11), ("generala", 11),
    ("bozo", 10), ("yacht", 12),
])
def test_one_box_per_turn(client, variant, turns):
    """Shared mechanics: as many turns as boxes (§5 15, §6 20, §8 11, §9 11, §13 12)."""
    doc = client.get(f"/v1/variants/{variant}").get_json()
    assert doc["turns"] == turns
    assert len(doc["boxes"]) == turns


@pytest.mark.parametrize("variant", VARIANTS)
def test_published_fingerprint_is_the_default_rules_fingerprint(client, variant):
    doc = client.get(f"/v1/variants/{variant}").get_json()
    assert doc["fingerprint"] == effective_rules(variant).fingerprint


@pytest.mark.parametrize(("variant", "dice", "valid"), [
    ("yahtzee", [1, 2, 3, 4, 5], True),
    ("yahtzee", [1, 2, 3, 4, 5, 6], False),
    ("yahtzee", [1, 2, 3, 4, 7], False),
    ("maxi_yatzy", [1, 2, 3, 4, 5, 6], True),
    ("maxi_yatzy", [1, 2, 3, 4, 5], False),
])
def test_validate_dice_count_http(client, variant, dice, valid):
    """Shared mechanics: 5 six-sided dice (Maxi Yatzy: 6)."""
    r = client.post(f"/v1/variants/{variant}/hands/validate", json={"dice": dice})
    assert r.status_code == 200
    assert r.get_json()["valid"] is valid


@pytest.mark.parametrize(("variant", "options", "turns"), [
    (G, None, 13), (G11, None, 11), (GA, None, 11), (GA, {"doble_generala": False}, 10),
])
def test_rounds_http(variant, options, turns):
    """§7 13 rounds; §8 11 rounds; §9 without Doble: 10 boxes and 10 rounds."""
    c = create_app().test_client()
    if options is None:
        r = c.get(f"/v1/variants/{variant}")
    else:
        r = c.post(f"/v1/variants/{variant}/rules", json={"options": options})
    assert r.status_code == 200
    doc = r.get_json()
    assert doc.get("definition", doc)["turns"] == turns


def test_em_baixo_http():
    r = create_app().test_client().post(
        "/v1/variants/bozo/hands/score",
        json={"dice": [1, 1, 1, 2, 2], "throw": 2, "em_baixo": True})
    assert r.status_code == 200
    cats = {c["box"]: c["score"] for c in r.get_json()["boxes"]}
    assert cats["sixes"] == 18
    assert cats["ones"] == 0


def test_generala_servida_http():
    r = create_app().test_client().post(
        "/v1/variants/generala/hands/score", json={"dice": [5, 5, 5, 5, 5], "throw": 1})
    assert r.status_code == 200
    assert r.get_json()["wins_game"] is True


def test_generala_spanish_poker_de_ases_http():
    r = create_app().test_client().post(
        "/v1/variants/generala_spanish/hands/score", json={"dice": [1, 1, 1, 1, 4], "throw": 2})
    cats = {c["box"]: c["score"] for c in r.get_json()["boxes"]}
    assert cats["four_of_a_kind"] == 80


def test_obligada_http():
    r = create_app().test_client().post(
        "/v1/variants/generala/hands/score",
        json={"dice": [2, 2, 2, 6, 6], "throw": 2, "options": {"obligada": True},
              "scorecard": {"boxes": {"ones": 0, "twos": 6}}})
    assert r.status_code == 200
    assert [c["box"] for c in r.get_json()["boxes"] if c["legal"]] == ["threes"]


def test_http_forced_joker_full_house(client):
    body = {"dice": FIVE_FOURS, "scorecard": {"boxes": {"five_of_a_kind": 50, "fours": 12}}}
    r = client.post("/v1/variants/yahtzee/hands/score", json=body)
    assert r.status_code == 200
    cats = {c["box"]: c for c in r.get_json()["boxes"]}
    assert cats["full_house"]["score"] == 25
    assert cats["full_house"]["legal"]
    assert cats["full_house"]["five_of_a_kind_bonus"] == 100
    assert not cats["ones"]["legal"]


def test_http_maximum_sheet(client):
    r = client.post("/v1/variants/yahtzee/scorecards/score",
                    json={"boxes": MAX_SHEET, "five_of_a_kind_bonuses": 12})
    assert r.status_code == 200
    assert r.get_json()["total"] == 1575


def test_http_free_joker_option(client):
    body = {"dice": FIVE_FOURS, "options": {"joker": "free"},
            "scorecard": {"boxes": {"five_of_a_kind": 50}}}
    r = client.post("/v1/variants/yahtzee/hands/score", json=body)
    cats = {c["box"]: c for c in r.get_json()["boxes"]}
    assert cats["full_house"]["score"] == 0
    assert cats["chance"]["legal"]


@pytest.mark.parametrize(("variant", "turns"), [(YZ, 15), (MX, 20), (YT, 12)])
def test_turns_http(variant, turns):
    """§5 "15 boxes, 15 turns" (Decision: not seed 000's 13 rounds); one box per turn."""
    r = create_app().test_client().get(f"/v1/variants/{variant}")
    assert r.status_code == 200
    assert r.get_json()["turns"] == turns


def test_maxi_six_dice_http():
    """§6: 6 dice; five dice are not a Maxi Yatzy hand."""
    c = create_app().test_client()
    r = c.post("/v1/variants/maxi_yatzy/hands/score", json={"dice": [2, 2, 2, 6, 6, 6]})
    assert r.status_code == 200
    cats = {x["box"]: x["score"] for x in r.get_json()["boxes"]}
    assert cats["villa"] == 24
    assert cats["chance"] == 24
    r = c.post("/v1/variants/maxi_yatzy/hands/score", json={"dice": [2, 2, 2, 6, 6]})
    assert r.status_code == 409
