"""Answers for requests the advisor cannot serve yet: its table is being built (503) or the
pod's build queue has no room (429), both with Retry-After, as RFC 9457 problems.

`register_busy_handlers(app)` installs them (the application factory calls it); `BUSY_DOC`
is what the OpenAPI document says of them on the endpoints that use the advisor.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response

from ..advisor.background import BuildFailed, BuildQueueFull, TableBuilding
from .openapi import problem_doc
from .problems import (
    TYPE_BUILD_QUEUE_FULL,
    TYPE_TABLE_BUILD_FAILED,
    TYPE_TABLE_BUILDING,
    problem_response,
)

log = logging.getLogger(__name__)


_RETRY_AFTER = {"Retry-After": {
    "description": "Seconds to wait before asking again", "schema": {"type": "integer",
                                                                   "minimum": 1}}}

BUSY_DOC: dict[str, Any] = {
    "429": {**problem_doc(
        "Too many tables waiting to be built: the pod's build queue is full, or this client "
        "already has as many tables waiting as it may (`ADVISOR_BUILD_QUEUE`, "
        f"`ADVISOR_BUILD_QUEUE_PER_CLIENT`). Problem type `{TYPE_BUILD_QUEUE_FULL}`; ask "
        "again after Retry-After seconds"), "headers": _RETRY_AFTER},
    "503": {**problem_doc(
        "The table of these rules (options and house rules) is being built, in the "
        "background, once per pod (for position values, game analysis and win "
        "probabilities also its analysis tables: the mean and second moment of every "
        "state, seconds of work once per table of rules, built-in variants included); it "
        "was not ready within a second. Problem type "
        f"`{TYPE_TABLE_BUILDING}`; ask again after Retry-After seconds (the same request "
        "then answers at once)"), "headers": _RETRY_AFTER},
}


def register_busy_handlers(app: Flask) -> None:
    """Turn the advisor's "not yet" errors into 503/429 problems with Retry-After. (The
    client a build is queued for, the per-client limit's key, is named by the ops
    middleware: `ops.OpsMiddleware`.)"""

    @app.errorhandler(TableBuilding)
    def _building(err: TableBuilding) -> Response:
        return problem_response(
            503, "Table being built",
            f"The advisor's {err.what} for these rules is being built ({err.waiting} table(s) "
            f"waiting in this server); ask again in {err.retry_after} s",
            TYPE_TABLE_BUILDING, headers={"Retry-After": str(err.retry_after)})

    @app.errorhandler(BuildQueueFull)
    def _full(err: BuildQueueFull) -> Response:
        detail = (f"This client already has {err.limit} tables of rules waiting to be built"
                  if err.per_client else
                  f"{err.limit} tables of rules are waiting to be built in this server")
        return problem_response(
            429, "Too many tables being built",
            f"{detail}; ask again in {err.retry_after} s", TYPE_BUILD_QUEUE_FULL,
            headers={"Retry-After": str(err.retry_after)})

    @app.errorhandler(BuildFailed)
    def _failed(err: BuildFailed) -> Response:
        log.error("advisor table build failed", extra={"error": str(err)})
        return problem_response(500, "Table build failed", str(err), TYPE_TABLE_BUILD_FAILED)
