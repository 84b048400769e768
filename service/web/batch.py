"""The batch form of the scoring endpoints: one item or a list of items, answered in order.

A domain error in a batch names its item: its pointers are prefixed with the item's index
(`/3/dice/0`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma
from flask import Response, current_app

from ..domain.errors import InvalidInput, Problem
from ..domain.rules import canonical, get_variant
from .body import json_response, load_items
from .problems import TYPE_INCONSISTENT, RequestProblem, status_of


def answer_one_or_many(variant: str, schema: ma.Schema, answer: Callable[..., dict[str, Any]],
                       limit_key: str = "MAX_BATCH_ITEMS", with_base: bool = False
                       ) -> Response:
    """The batch-capable endpoints: check the variant, read one item or a list, answer each.

    A domain error in a batch names its item (`/3/dice/0`). With `with_base`, `answer` also
    takes the item's JSON pointer ("" or "/3"), for answers that report problems themselves.
    `limit_key` names the app setting that bounds a batch's length.
    """
    get_variant(variant)
    items, is_list = load_items(schema, batch=True, limit_key=limit_key)

    def one(item: dict[str, Any], base: str) -> dict[str, Any]:
        return answer(variant, item, base) if with_base else answer(variant, item)

    if not is_list:
        return json_response(one(items[0], ""))
    tables = {(canonical(it.get("options")), canonical(it.get("rules"))) for it in items
              if it.get("options") or it.get("rules")}
    limit = current_app.config["MAX_BATCH_RULE_SETS"]
    if len(tables) > limit:
        raise RequestProblem(status_of(TYPE_INCONSISTENT), "Inconsistent request",
                             f"A batch may use at most {limit} different tables of rules "
                             f"(options and house rules); this one uses {len(tables)}",
                             [Problem("", f"more than {limit} different tables of rules")],
                             TYPE_INCONSISTENT)
    return json_response([prefixed(f"/{i}", lambda it=it, i=i: one(it, f"/{i}"))
                          for i, it in enumerate(items)])


def prefixed(prefix: str, fn: Callable[[], Any]) -> Any:
    """Run `fn`; domain errors get their pointers prefixed (the item's place in a batch)."""
    if not prefix:
        return fn()
    try:
        return fn()
    except InvalidInput as err:
        raise err.prefixed(prefix) from None
