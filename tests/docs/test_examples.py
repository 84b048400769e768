"""Every example of the README and docs/ runs as written and answers what the text shows.

The examples are read as tests/docs/examples.py says (the convention is in its docstring and
in the README's "Examples in these docs are tested"): each curl command is sent to the app
from the factory with Flask's test client, and its answer is checked against the status and
the fields the `# ->` comment shows. An example with an API key (`$KEY`) is sent to the app
with `AUTH=keys` and a tenant holding that key, as docs/deploy.md sets one up.
"""

from __future__ import annotations

import json

import pytest

from service.config import Settings
from service.web.app import create_app
from service.web.auth import hash_key, new_key
from service.web.extensions import advisor_of

from .examples import (
    ANY,
    DOCUMENTS,
    MORE,
    Shown,
    blocks,
    examples,
    fragment,
    mismatches,
    parse_curl,
)

KEY_ID, KEY = new_key()
#: What the reader is assumed to have, by the name the examples give it.
VARIABLES = {"KEY": KEY}
TENANTS = {"tenants": [{"name": "docs", "keys": [{"id": KEY_ID, "hash": hash_key(KEY)}]}]}

EXAMPLES = [example for document in DOCUMENTS for example in examples(document)]
JSON_BLOCKS = [block for document in DOCUMENTS for block in blocks(document)
               if block.language == "json"]


@pytest.fixture(scope="module")
def keyed_app(app):
    """The service with `AUTH=keys` and one tenant holding KEY (the app's own tables)."""
    directory = str(advisor_of(app).store.directory)
    return create_app(Settings(advisor_table_dir=directory, advisor_builds="inline",
                               auth="keys", api_keys=json.dumps(TENANTS)))


def _substituted(text: str) -> str:
    for name, value in VARIABLES.items():
        text = text.replace("${" + name + "}", value).replace("$" + name, value)
    return text


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda example: example.where)
def test_the_example_answers_what_the_text_shows(example, app, keyed_app):
    unknown = set(example.variables) - set(VARIABLES)
    assert not unknown, f"{example.where}: no value for ${', $'.join(sorted(unknown))}"
    served = keyed_app if example.keyed else app
    if example.path == "/readyz":
        # the image's start loads every table before the workers fork: so does this app
        advisor_of(app).warm()
    headers = {name: _substituted(value) for name, value in example.headers.items()}
    answer = served.test_client().open(example.path, method=example.method, headers=headers,
                                       data=example.body)
    said = f"{example.where}: {example.method} {example.path}"
    if example.status is None:
        assert 200 <= answer.status_code < 300, \
            f"{said} answered {answer.status_code}: {answer.get_data(as_text=True)[:500]}"
        return
    assert answer.status_code == example.status, \
        f"{said} answered {answer.status_code}, the text shows {example.status}: " \
        f"{answer.get_data(as_text=True)[:500]}"
    if example.answer:
        body = answer.get_json(silent=True)
        assert body is not None, f"{said} answered no JSON"
        wrong = mismatches(fragment(example.answer), body)
        assert not wrong, f"{said} answers otherwise than the text shows:\n  " + \
            "\n  ".join(wrong) + f"\nthe answer: {json.dumps(body)[:1500]}"


@pytest.mark.parametrize("block", JSON_BLOCKS, ids=lambda block: f"{block.document}:{block.line}")
def test_a_json_block_is_json(block):
    json.loads(block.text)


def test_the_readme_has_its_examples():
    """The reader's path: the README's examples are found, and most show their answer."""
    readme = [example for example in EXAMPLES if example.document == "README.md"]
    assert len(readme) >= 15
    assert sum(example.answer is not None for example in readme) >= len(readme) * 3 // 4


# --- the reading of examples itself -------------------------------------------------------

def test_a_curl_command_is_read_as_the_request_it_sends():
    example = parse_curl("curl -s localhost:8000/v1/variants/yahtzee/hands/score \\\n"
                         "  -H 'Content-Type: application/json' -H \"X-API-Key: $KEY\" \\\n"
                         "  -d '{\"dice\": [1, 2, 3, 4, 5]}'   # a comment | not a pipe")
    assert (example.method, example.path, example.body) == (
        "POST", "/v1/variants/yahtzee/hands/score", '{"dice": [1, 2, 3, 4, 5]}')
    assert example.headers == {"Content-Type": "application/json", "X-API-Key": "$KEY"}
    assert example.variables == ("KEY",)
    assert parse_curl("curl -s http://127.0.0.1:8000/metrics | head").path == "/metrics"
    assert parse_curl("curl -X DELETE localhost:8000/v1/x").method == "DELETE"


def test_a_fragment_reads_members_lists_and_gaps():
    assert fragment('"a": 1, "b": {"c": [1, ..., 3], ...}, "d": "...", "e": 0.25') == {
        "a": 1, "b": {"c": [1, MORE, 3]}, "d": ANY, "e": Shown(0.25, 2)}
    assert fragment("[{...}, ...]") == [{}, MORE]


@pytest.mark.parametrize(("shown", "answer"), [
    ('"a": 1', {"a": 2}),
    ('"a": 1', {"b": 1}),
    ('"a": [1, 2]', {"a": [1, 2, 3]}),
    ('"a": [1, ..., 4]', {"a": [1, 2, 3]}),
    ('"a": 0.25', {"a": 0.26}),
    ('"a": true', {"a": 1}),
    ('"a": 1', {"a": True}),
    ('"a": null', {"a": 0}),
    ('"a": {"b": "x"}', {"a": "x"}),
])
def test_a_fragment_finds_what_the_answer_does_not_have(shown, answer):
    assert mismatches(fragment(shown), answer)


@pytest.mark.parametrize(("shown", "answer"), [
    ('"a": 1', {"a": 1, "b": 2}),
    ('"a": [1, ..., 4]', {"a": [1, 2, 3, 4]}),
    ('"a": [..., 4]', {"a": [4]}),
    ('"a": 0.25', {"a": 0.2504}),
    ('"a": "...", "b": ...', {"a": [1], "b": None}),
])
def test_a_fragment_agrees_with_an_answer_that_has_it(shown, answer):
    assert not mismatches(fragment(shown), answer)
