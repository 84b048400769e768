"""Single and batch operations of the same endpoint, answered by one function of one item.

`hands/score`, `scorecards/score`, `games/turn` and `games/validate` take one object and
answer one object; their `/batch` operation (`hands/score/batch`, ...) takes a list and
answers the list of results in the same order. Both read the body with the same schema
(`@blp.arguments`, the batch with `many=True`) and answer each item with the same function,
so an item means the same in either. A domain error in a batch names its item: its pointers
are prefixed with the item's index (`/3/dice/0`).

A batch is charged one unit of its caller's quota an item (`quotas.charge_batch`, when its
body is read), and takes the worker in slices as that many single requests would: between
two items, answering and dumping them, it takes a turn among the worker's connections when
one is due (`fairshare.take_turn`). Its answer is the list of the items' answers, each
dumped by the answer schema (`@blp.response` documents it; the view writes the list
itself, item by item, with the schema compiled as the scoring fast path writes a single
answer, so that the dump too takes turns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import marshmallow as ma
import orjson
from flask import Response, current_app
from flask.views import MethodView
from flask_smorest import Blueprint

from ..domain.errors import InvalidInput, Problem
from ..domain.rules import canonical
from .body import JSON
from .fairshare import take_turn
from .openapi import batch_body_doc
from .problems import TYPE_INCONSISTENT, RequestProblem, status_of
from .schemas.common import compiled_dump

#: The answer of one loaded item: (variant, item) or, for answers that report problems
#: themselves, (variant, item, the item's JSON pointer: "" or "/3").
Answer = Callable[..., Any]


def answer_items(variant: str, items: list[dict[str, Any]], answer: Answer,
                 with_base: bool = False) -> list[Any]:
    """A batch's answers, in order: at most MAX_BATCH_RULE_SETS tables of rules, each item
    answered as the single operation answers it, its errors naming the item."""
    tables = {(canonical(it.get("options")), canonical(it.get("rules"))) for it in items
              if it.get("options") or it.get("rules")}
    limit = current_app.config["MAX_BATCH_RULE_SETS"]
    if len(tables) > limit:
        raise RequestProblem(status_of(TYPE_INCONSISTENT), "Inconsistent request",
                             f"A batch may use at most {limit} different tables of rules "
                             f"(options and house rules); this one uses {len(tables)}",
                             [Problem("", f"more than {limit} different tables of rules")],
                             TYPE_INCONSISTENT)

    def one(item: dict[str, Any], base: str) -> Any:
        return answer(variant, item, base) if with_base else answer(variant, item)

    out = []
    for i, it in enumerate(items):
        out.append(prefixed(f"/{i}", lambda it=it, i=i: one(it, f"/{i}")))
        take_turn()
    return out


def dumped(results: list[Any], dump: Callable[[Any], Any]) -> Response:
    """A batch's answer: each result dumped by `dump` (one item's schema compiled, as the
    scoring fast path dumps a single answer: `schemas.common.compiled_dump`) and written as
    JSON, in turns, joined as one JSON list: the bytes `@blp.response` with the schema
    `many=True` writes (orjson writes a list as its items joined by commas), without a write
    of the whole list at once (some 5 ms for a thousand hands, in one piece)."""
    out = []
    for result in results:
        out.append(orjson.dumps(dump(result)))
        take_turn()
    return Response(b"[" + b",".join(out) + b"]", mimetype=JSON)


def prefixed(prefix: str, fn: Callable[[], Any]) -> Any:
    """Run `fn`; domain errors get their pointers prefixed (the item's place in a batch)."""
    if not prefix:
        return fn()
    try:
        return fn()
    except InvalidInput as err:
        raise err.prefixed(prefix) from None


def add_batch_operation(blp: Blueprint, rule: str, operation_id: str,
                        request: type[ma.Schema], answer: Answer, response: type[ma.Schema],
                        docs: tuple[str, str, str], errors: dict[str, Any],
                        limit_key: str = "MAX_BATCH_ITEMS", with_base: bool = False) -> None:
    """Register the `/batch` operation of a single operation at `rule` + "/batch": a list
    of `request` items, each answered by `answer` and dumped by `response`.

    `docs`: the operation's docstring, the request body's and the answer's descriptions;
    `errors`: the documented error answers; `limit_key`: the setting bounding the list.
    """
    schema = request(many=True)
    schema.BATCH_LIMIT = limit_key  # type: ignore[attr-defined]  # parser.check_form
    name = request.__name__.removesuffix("Schema")

    item_dump = compiled_dump(response)

    class BatchOperation(MethodView):
        def post(self, items: list[dict[str, Any]], variant: str) -> Response:
            return dumped(answer_items(variant, items, answer, with_base), item_dump)

    BatchOperation.post.__doc__ = docs[0]
    BatchOperation.__name__ = BatchOperation.__qualname__ = f"{operation_id[0].upper()}" \
                                                            f"{operation_id[1:]}"
    BatchOperation.post = blp.arguments(schema)(  # type: ignore[method-assign]
        blp.response(200, response(many=True), description=docs[2])(blp.doc(
            operationId=operation_id, requestBody=batch_body_doc(name, docs[1], limit_key),
            responses=errors)(BatchOperation.post)))
    blp.route(f"{rule}/batch", endpoint=operation_id)(BatchOperation)
