"""Request bodies over the size limit are 413 however they are sent: with a Content-Length
or chunked (no length; the server ends the stream, `wsgi.input_terminated`). A number is a
number however it is written: 4.0 is the integer 4, as JSON Schema counts it."""

from __future__ import annotations

import io
import json

import pytest

from service.config import Settings
from service.web.app import create_app

URL = "/v1/variants/yatzy/hands/score"
ONE = {"dice": [1, 2, 3, 4, 5]}


@pytest.fixture(scope="module")
def small_client():
    return create_app(Settings(max_body_bytes=200, advisor_builds="inline")).test_client()


def chunked(client, data: bytes):
    """POST `data` as a server that decoded a chunked body presents it: no Content-Length."""
    return client.post(URL, input_stream=io.BytesIO(data),
                       headers={"Content-Type": "application/json",
                                "Transfer-Encoding": "chunked"},
                       environ_overrides={"wsgi.input_terminated": True})


def test_chunked_body_within_the_limit_is_read(small_client):
    r = chunked(small_client, json.dumps(ONE).encode())
    assert r.status_code == 200, r.get_data(as_text=True)


@pytest.mark.parametrize("extra", [1, 5000])
def test_chunked_body_over_the_limit_is_413(small_client, extra):
    # valid JSON up to the limit, padding after it: cut at the limit it would parse
    body = json.dumps(ONE).encode()
    data = body + b" " * (200 - len(body) + extra)
    r = chunked(small_client, data)
    assert r.status_code == 413 and r.mimetype == "application/problem+json"
    assert "200 bytes" in r.get_json()["detail"]


def test_chunked_body_exactly_at_the_limit_is_read(small_client):
    body = json.dumps(ONE).encode()
    r = chunked(small_client, body + b" " * (200 - len(body)))
    assert r.status_code == 200


def test_body_with_content_length_over_the_limit_is_413(small_client):
    r = small_client.post(URL, json=[ONE] * 50)
    assert r.status_code == 413


def _post(client, url: str, raw: bytes):
    return client.post(url, data=raw, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("written", [b"4.0", b"4e0", b"4.000", b"0.4e1", b"40E-1"])
def test_an_integer_written_as_a_float_is_that_integer(client, written):
    sheet = b'"scorecard": {"boxes": {"ones": 2.0, "fours": %s}, "five_of_a_kind_bonuses": 0.0}'
    body = b'{"dice": [6.0, 6, 6e0, 2, 2], "throw": 2.0, %s}' % (sheet % written)
    plain = {"dice": [6, 6, 6, 2, 2], "throw": 2,
             "scorecard": {"boxes": {"ones": 2, "fours": 4}, "five_of_a_kind_bonuses": 0}}
    got = _post(client, URL, body)
    assert got.status_code == 200, got.get_json()
    assert got.get_json() == client.post(URL, json=plain).get_json()
    assert _post(client, "/v1/variants/yatzy/moves/suggest", body).status_code == 200


@pytest.mark.parametrize("bad", [b"4.5", b'"4"', b"true", b"1e300", b"-1.0",
                                 b"-99999999999999999999"])
def test_a_number_that_is_not_an_integer_is_still_rejected(client, bad):
    got = _post(client, URL, b'{"dice": [%s, 1, 2, 3, 4]}' % bad)
    assert got.status_code == 422
    assert got.get_json()["errors"][0]["pointer"] == "/dice/0"


def test_deeply_nested_floats_are_no_server_error(client):
    raw = b'{"dice": [1, 2, 3, 4, 5], "rules": ' + b"[" * 500 + b"1.0" + b"]" * 500 + b"}"
    got = _post(client, URL, raw)
    assert got.status_code == 422 and got.get_json()["errors"][0]["pointer"] == "/rules"


# --------------------------------------------------------------------------- media types

POSTS = ["hands/validate", "hands/score", "scorecards/score", "moves/suggest", "rules",
         "games/turn", "games/validate", "games/analyze", "positions/value",
         "games/win-probability"]


@pytest.mark.parametrize("path", POSTS)
@pytest.mark.parametrize("media", ["text/plain", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "application/xml"])
def test_a_body_sent_as_another_media_type_is_415(client, path, media):
    r = client.post(f"/v1/variants/yahtzee/{path}", data=json.dumps(ONE),
                    headers={"Content-Type": media})
    assert r.status_code == 415 and r.mimetype == "application/problem+json"
    problem = r.get_json()
    assert problem["type"] == "/problems/unsupported-media-type"
    assert "application/json" in problem["detail"] and media.split(";")[0] in problem["detail"]


@pytest.mark.parametrize("media", [None, "application/json", "application/json; charset=utf-8",
                                   "Application/JSON", "application/merge-patch+json"])
def test_json_however_it_is_named_and_no_media_type_are_read(client, media):
    headers = {"Content-Type": media} if media else {}
    r = client.post(URL, data=json.dumps(ONE), headers=headers)
    assert r.status_code == 200, r.get_data(as_text=True)


def test_every_post_documents_415(client):
    spec = client.get("/openapi.json").get_json()
    posts = [op for item in spec["paths"].values() for m, op in item.items() if m == "post"]
    assert posts and all("415" in op["responses"] for op in posts)
