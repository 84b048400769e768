"""What every refused request looks like, for tests whose cases mix the two kinds."""

from __future__ import annotations

from service.web.problems import (
    PROBLEM_MEDIA_TYPE,
    TYPE_ILLEGAL_MOVE,
    TYPE_INCONSISTENT,
    TYPE_INVALID,
    status_of,
)


def refused(resp) -> bool:
    """Whether `resp` refuses the request as a problem document: 422 for a body that breaks
    the shape every variant shares, 409 for one that breaks a rule of the variant or game
    (the status always the one of the document's type)."""
    if resp.mimetype != PROBLEM_MEDIA_TYPE:
        return False
    body = resp.get_json()
    return (body["type"] in (TYPE_INVALID, TYPE_INCONSISTENT, TYPE_ILLEGAL_MOVE)
            and resp.status_code == body["status"] == status_of(body["type"]))
