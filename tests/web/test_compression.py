"""Large JSON answers gzip-compressed for a client that accepts it (service/web/compression.py),
with an ETag per representation and its 304; small and streamed answers as they are."""

from __future__ import annotations

import gzip

import pytest

from service.web.compression import MIN_BYTES


@pytest.fixture()
def plain(client):
    answer = client.get("/v1/variants")
    assert answer.status_code == 200 and len(answer.data) > MIN_BYTES
    return answer


def test_a_large_answer_is_compressed_for_a_client_that_accepts_gzip(client, plain):
    zipped = client.get("/v1/variants", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.data) == plain.data
    assert len(zipped.data) < len(plain.data) / 5
    assert all("Accept-Encoding" in r.headers["Vary"] for r in (plain, zipped))
    assert "Content-Encoding" not in plain.headers
    # two representations, two tags; each one's holder gets its 304
    assert zipped.headers["ETag"] == plain.headers["ETag"][:-1] + '-gzip"'
    again = client.get("/v1/variants", headers={"Accept-Encoding": "gzip",
                                                "If-None-Match": zipped.headers["ETag"]})
    assert again.status_code == 304 and not again.data
    assert again.headers["ETag"] == zipped.headers["ETag"]
    assert client.get("/v1/variants", headers={
        "If-None-Match": plain.headers["ETag"]}).status_code == 304
    # a client that refuses gzip, or holds a tag of other data, gets the whole answer
    refused = client.get("/v1/variants", headers={"Accept-Encoding": "gzip;q=0"})
    assert refused.data == plain.data and "Content-Encoding" not in refused.headers
    stale = client.get("/v1/variants", headers={"Accept-Encoding": "gzip",
                                                "If-None-Match": '"stale-gzip"'})
    assert stale.status_code == 200 and gzip.decompress(stale.data) == plain.data


def test_small_answers_go_as_they_are(client):
    answer = client.post("/v1/variants/yacht/hands/score", json={"dice": [1, 2, 3, 4, 5]},
                         headers={"Accept-Encoding": "gzip"})
    assert answer.status_code == 200 and "Content-Encoding" not in answer.headers
    assert len(answer.data) < MIN_BYTES


def test_a_large_batch_is_compressed_to_the_same_json(client):
    items = [{"dice": [1, 2, 3, 4, 5]}] * 200
    plain = client.post("/v1/variants/yacht/hands/score/batch", json=items)
    zipped = client.post("/v1/variants/yacht/hands/score/batch", json=items,
                         headers={"Accept-Encoding": "gzip"})
    assert plain.status_code == zipped.status_code == 200
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.data) == plain.data
