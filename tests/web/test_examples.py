"""The OpenAPI document's request examples (`service/web/examples.py`): every operation with a
body has one per variant, each matches its schema, and each, sent as it stands, answers 200
(what the docs page's *Try it out* sends)."""

from __future__ import annotations

import jsonschema
import pytest

from service.config import Settings
from service.domain.variants import VARIANT_IDS, VARIANTS
from service.web.app import create_app
from service.web.examples import examples
from service.web.spec import generate

JSON = "application/json"
SPEC = generate()
#: Every path and method with a request body: (path, method, its media type object)
BODIES = [(path, method, op["requestBody"]["content"][JSON])
          for path, item in SPEC["paths"].items() for method, op in item.items()
          if isinstance(op, dict) and "requestBody" in op]
TEMPLATED = [(path, method, media) for path, method, media in BODIES if "{variant}" in path]
CASES = [(path.replace("{variant}", vid), method) for path, method, _ in TEMPLATED
         for vid in VARIANT_IDS]


@pytest.fixture(scope="module")
def served():
    """The service as it runs: the built-in variants' tables from ADVISOR_TABLE_DIR (as the
    contract fuzz test takes them), so the advisor answers 200, not 202."""
    return create_app(Settings(advisor_builds="inline")).test_client()


def _validator(schema: dict) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**schema, "components": SPEC["components"]})


def test_every_body_has_its_examples():
    assert len(TEMPLATED) >= 15 and len(BODIES) == len(TEMPLATED) * (len(VARIANT_IDS) + 1)
    for path, method, media in BODIES:
        if "{variant}" in path:
            assert "example" not in media, path
            named = media["examples"]
            assert list(named) == list(VARIANT_IDS), path
            for vid, example in named.items():
                assert example["summary"] == VARIANTS[vid].labels["en"]
                concrete = SPEC["paths"][path.replace("{variant}", vid)][method]
                assert example["value"] == concrete["requestBody"]["content"][JSON][
                    "example"], (path, vid)
        else:
            assert "examples" not in media and "example" in media, path


@pytest.mark.parametrize(("path", "method", "media"), BODIES,
                         ids=[f"{path}-{method}" for path, method, _ in BODIES])
def test_every_example_matches_its_schema(path, method, media):
    validator = _validator(media["schema"])
    values = ([e["value"] for e in media["examples"].values()] if "examples" in media
              else [media["example"]])
    for value in values:
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]
        assert not errors, (path, errors[:3])


@pytest.mark.parametrize(("path", "method"), CASES)
def test_every_example_answers_200(served, path, method):
    body = SPEC["paths"][path][method]["requestBody"]["content"][JSON]["example"]
    r = served.open(path, method=method.upper(), json=body)
    assert r.status_code == 200, (path, r.status_code, r.get_data(as_text=True)[:500])
    if "/games/validate" in path:  # the example game is valid, not just read
        answers = r.get_json()
        assert all(a["valid"] for a in (answers if isinstance(answers, list) else [answers]))


def test_the_example_game_is_a_real_game():
    """Both players' two turns, the first with a re-roll: what games/validate answers valid."""
    for vid in VARIANT_IDS:
        game = examples(vid)["games/validate"]
        assert [len(p["turns"]) for p in game["players"]] == [2, 2]
        first = game["players"][0]["turns"][0]
        assert len(first["throws"]) == 2 and first["kept"] == [[3, 3]]
        assert all(len(t) == VARIANTS[vid].dice for p in game["players"]
                   for turn in p["turns"] for t in turn["throws"])
