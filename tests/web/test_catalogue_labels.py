"""The variant catalogue speaks six languages: `/v1/variants` names every variant, every
option and every option value, and says what each option changes, in en, pt, es, de, sv and
fr, so that every frontend (the playground among them) shows people words, never raw ids."""

from __future__ import annotations

import pytest

from service.domain.variants import LANGS, VARIANT_IDS


@pytest.fixture(scope="module")
def catalogue(app):
    r = app.test_client().get("/v1/variants")
    assert r.status_code == 200
    return r.get_json()["variants"]


def _six(texts: dict[str, str]) -> bool:
    return set(texts) == set(LANGS) and all(t.strip() for t in texts.values())


def test_every_variant_is_named_in_six_languages(catalogue):
    assert [v["id"] for v in catalogue] == list(VARIANT_IDS)
    for v in catalogue:
        assert _six(v["labels"]), v["id"]
        assert "seed" not in " ".join(v["labels"].values())  # a player's words, not sources
    names = {v["labels"]["en"] for v in catalogue}
    assert len(names) == len(catalogue)  # no two variants look alike in a menu


def test_every_option_its_values_and_its_help_in_six_languages(catalogue):
    for v in catalogue:
        for o in v["options"]:
            where = f"{v['id']}.{o['name']}"
            assert _six(o["labels"]) and _six(o["descriptions"]), where
            assert o["descriptions"]["en"] == o["description"], where
            assert len(o["choice_labels"]) == len(o["choices"]), where
            for lang in LANGS:
                shown = [c[lang] for c in o["choice_labels"]]
                assert all(shown) and len(set(shown)) == len(shown), (where, lang)
                assert o["labels"][lang] != o["name"], (where, lang)  # a name, not an id
            # the texts are translations, not copies of the English one
            assert len(set(o["descriptions"].values())) == len(LANGS), where


def test_effective_rules_carry_the_labels_too(client):
    r = client.post("/v1/variants/general/rules", json={"options": {"aleatoria": False}})
    assert r.status_code == 200
    definition = r.get_json()["definition"]
    assert definition["labels"]["pt"] == "General (Brasil, 13 jogadas)"
    trinca = next(o for o in definition["options"] if o["name"] == "trinca_quadra")
    assert trinca["choices"] == ["sum", "fixed", "matching"]
    assert [c["es"] for c in trinca["choice_labels"]] == [
        "Suma de todos los dados", "Fijos: 20 y 30", "Solo los dados repetidos"]
