"""Request bodies over the size limit are 413 however they are sent: with a Content-Length
or chunked (no length; the server ends the stream, `wsgi.input_terminated`)."""

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
