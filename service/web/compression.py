"""Large JSON answers gzip-compressed for a client that accepts it: `/v1/variants` (85 KB,
every variant's definition, to 8.5 KB), a whole game's analysis, a large batch. Small
answers (a hand's scores, a suggestion) go as they are: compressing them would cost more
CPU than the bytes it saves. The OpenAPI documents compress their own, once (`pages`).

An answer's two representations have two ETags (RFC 9110 8.8.3): the compressed one's is the
plain one's with `-gzip` added, as Apache's mod_deflate does, and a client that sends that tag
back in If-None-Match gets its 304. A streamed answer (none of the API's today) would go as
it is made, uncompressed.
"""

from __future__ import annotations

import gzip

from flask import Flask, Response, request

#: Answers of fewer bytes are sent as they are.
MIN_BYTES = 16 * 1024
#: gzip's level: 5 compresses `/v1/variants` to 6 % in about a millisecond.
LEVEL = 5
#: What is compressed.
MEDIA_TYPES = ("application/json", "application/problem+json")
GZIP_TAG = "-gzip"


def compress(response: Response) -> Response:
    """The answer, gzip-compressed when it is large JSON and the client accepts gzip (its 304
    when the client holds the compressed representation already)."""
    if (response.status_code != 200 or response.is_streamed or response.direct_passthrough
            or response.mimetype not in MEDIA_TYPES
            or "Content-Encoding" in response.headers
            or response.calculate_content_length() < MIN_BYTES):
        return response
    response.vary.add("Accept-Encoding")
    if request.accept_encodings["gzip"] <= 0:
        return response
    tag, weak = response.get_etag()
    if tag is not None:
        tag += GZIP_TAG
        if request.if_none_match.contains_weak(tag):
            not_modified = Response(status=304, headers={"Vary": response.headers["Vary"]})
            not_modified.set_etag(tag, weak)
            return not_modified
    response.set_data(gzip.compress(response.get_data(), LEVEL))
    response.content_encoding = "gzip"
    if tag is not None:
        response.set_etag(tag, weak)
    return response


def register_compression(app: Flask) -> None:
    """Compress the app's large JSON answers (`compress`)."""
    app.after_request(compress)
