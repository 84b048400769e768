"""Answers for requests the advisor cannot serve yet: its table is being built (202
Accepted: the build was started for this request, ask again) or the pod's build queue has no
room (429, an RFC 9457 problem), both with Retry-After.

`register_busy_handlers(app)` installs them (the application factory calls it); `BUSY_DOC`
is what the OpenAPI document says of the 202 on the endpoints that use the advisor (the 429,
which quotas share, is on every operation: `openapi.TENANCY_DOC`).

A table being built is a 202 and not a 503: the service is up and has accepted the work (the
build runs in the pod's build process, once for every worker); the request is answered in
full when asked again after Retry-After seconds. It is the asynchronous request-reply
pattern, with the request itself as the address to ask again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import marshmallow as ma
from flask import Flask, Response

from ..advisor.tables.build_process import (
    KIND_WORDS,
    BuildFailed,
    BuildQueueFull,
    TableBuilding,
)
from .body import json_response
from .openapi import RETRY_AFTER_HEADER
from .problems import TYPE_BUILD_QUEUE_FULL, TYPE_TABLE_BUILD_FAILED, problem_response
from .schemas.common import compiled_dump

log = logging.getLogger(__name__)


class TableBuildingSchema(ma.Schema):
    """Not yet: the table of these rules is being built; the same request, asked again after
    Retry-After seconds, is answered in full."""

    status = ma.fields.String(required=True, validate=ma.validate.OneOf(["building"]),
                              metadata={"description": "Always `building`"})
    building = ma.fields.String(required=True, validate=ma.validate.OneOf(
        list(KIND_WORDS.values())), metadata={
        "description": "What is being built: the advisor's `table` of these rules, the "
                       "`analysis table (moments)` that game analysis, win probabilities and "
                       "position values after the start also need, or the `analysis table "
                       "(start distribution)` a position value at the start of a game needs"})
    waiting = ma.fields.Integer(required=True, validate=ma.validate.Range(min=0), metadata={
        "description": "Tables waiting to be built in this server, this one included"})
    retry_after = ma.fields.Integer(required=True, validate=ma.validate.Range(min=1), metadata={
        "description": "Seconds to wait before asking again (also the Retry-After header)"})
    detail = ma.fields.String(required=True, metadata={"description": "The same, in words"})


@dataclass(frozen=True, slots=True)
class Building:
    """The answer of a request whose table is being built (the 202, `TableBuildingSchema`):
    what is being built, how many tables wait, when to ask again, and why in words."""

    building: str
    waiting: int
    retry_after: int
    detail: str
    status: str = "building"

    @staticmethod
    def of(err: TableBuilding) -> Building:
        """The answer to a request that met `err`."""
        why = err.detail or (f"The advisor's {err.what} for these rules is being built "
                             f"({err.waiting} table(s) waiting in this server)")
        return Building(err.what, err.waiting, err.retry_after,
                        f"{why}; ask again in {err.retry_after} s")


#: The 202's dump (`@blp.response` does not write it: the advisor's error does)
_dump_building = compiled_dump(TableBuildingSchema)


BUSY_DOC: dict[str, Any] = {
    "202": {"description": (
        "Accepted, not answered yet: the table of these rules (options and house rules) is "
        "being built, in the background, once per pod (for game analysis, win probabilities "
        "and position values also an analysis table: the mean and second moment of every "
        "state, or the distribution from the start of a game; seconds of work once per table "
        "of rules), or the server has just started and is making its tables ready; it was "
        "not ready within the wait. Ask again after Retry-After seconds: the same request "
        "then answers at once"),
        "headers": {"Retry-After": RETRY_AFTER_HEADER},
        "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/TableBuilding"}}}},
}


def register_busy_handlers(app: Flask) -> None:
    """Turn the advisor's "not yet" errors into 202 (building) and 429 (queue full) answers
    with Retry-After. (The client a build is queued for, the per-client limit's key, is
    named by the ops middleware: `ops.OpsMiddleware`.)"""

    @app.errorhandler(TableBuilding)
    def _building(err: TableBuilding) -> Response:
        return json_response(_dump_building(Building.of(err)), 202,
                             {"Retry-After": str(err.retry_after)})

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
