"""Single and batch operations of the same endpoint, answered by one function of one item.

`hands/score`, `scorecards/score`, `games/turn` and `games/validate` take one object and
answer one object; their `/batch` operation (`hands/score/batch`, ...) takes a list and
answers the list of results in the same order. Both read the body with the same schema and
answer each item with the same function, so an item means the same in either. A domain error
in a batch names its item: its pointers are prefixed with the item's index (`/3/dice/0`).
`answer_one` also answers the operations that have no batch form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma
from flask import Response, current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from ..domain.errors import InvalidInput, Problem
from ..domain.rules import canonical, get_variant
from .body import json_response, load_items
from .openapi import batch_body_doc
from .problems import TYPE_INCONSISTENT, RequestProblem, status_of

#: The answer of one loaded item: (variant, item) or, for answers that report problems
#: themselves, (variant, item, the item's JSON pointer: "" or "/3").
Answer = Callable[..., dict[str, Any]]


def answer_one(variant: str, schema: ma.Schema, answer: Answer, with_base: bool = False
               ) -> Response:
    """A single operation: check the variant, read one object, answer it."""
    get_variant(variant)
    items = load_items(schema, batch=False, variant=variant)
    return json_response(answer(variant, items[0], "") if with_base
                         else answer(variant, items[0]))


def answer_batch(variant: str, schema: ma.Schema, answer: Answer, limit_key: str,
                 with_base: bool = False) -> Response:
    """A batch operation: check the variant, read a list of at most `app.config[limit_key]`
    objects using at most MAX_BATCH_RULE_SETS tables of rules, answer each in order."""
    get_variant(variant)
    items = load_items(schema, batch=True, limit_key=limit_key, variant=variant)
    tables = {(canonical(it.get("options")), canonical(it.get("rules"))) for it in items
              if it.get("options") or it.get("rules")}
    limit = current_app.config["MAX_BATCH_RULE_SETS"]
    if len(tables) > limit:
        raise RequestProblem(status_of(TYPE_INCONSISTENT), "Inconsistent request",
                             f"A batch may use at most {limit} different tables of rules "
                             f"(options and house rules); this one uses {len(tables)}",
                             [Problem("", f"more than {limit} different tables of rules")],
                             TYPE_INCONSISTENT)

    def one(item: dict[str, Any], base: str) -> dict[str, Any]:
        return answer(variant, item, base) if with_base else answer(variant, item)

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


def add_batch_operation(blp: Blueprint, rule: str, operation_id: str, schema: ma.Schema,
                        answer: Answer, names: tuple[str, type[ma.Schema]],
                        docs: tuple[str, str, str], errors: dict[str, Any],
                        limit_key: str = "MAX_BATCH_ITEMS", with_base: bool = False) -> None:
    """Register the `/batch` operation of a single operation at `rule` + "/batch".

    `names`: the request's component and the schema of one item's answer; `docs`: the
    operation's docstring, the request body's and the answer's descriptions; `errors`: the
    documented error answers.
    """

    class BatchOperation(MethodView):
        def post(self, variant: str) -> Response:
            return answer_batch(variant, schema, answer, limit_key, with_base)

    BatchOperation.post.__doc__ = docs[0]
    BatchOperation.__name__ = BatchOperation.__qualname__ = f"{operation_id[0].upper()}" \
                                                            f"{operation_id[1:]}"
    BatchOperation.post = blp.response(  # type: ignore[method-assign]
        200, names[1](many=True), description=docs[2])(blp.doc(
            operationId=operation_id, requestBody=batch_body_doc(names[0], docs[1], limit_key),
            responses=errors)(BatchOperation.post))
    blp.route(f"{rule}/batch", endpoint=operation_id)(BatchOperation)
