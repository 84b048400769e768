"""The Schemathesis check both contract tests (in process, tests/web/test_openapi.py, and
against the live server, tests/live/test_contract_live.py) use in place of
`positive_data_acceptance`.

A request valid for the spec must be accepted, except where it breaks a rule no JSON Schema
can state (house rules that make no sense together, a value no hand can score in a box, a
sheet no game reaches, fields that contradict each other, a move the rules forbid): those
are answered 422 with their own types, `/problems/inconsistent-request` and
`/problems/illegal-move`, naming the field. Any other rejection of valid
data (a 422 `/problems/invalid-request`, a 400, a 404...) is still a failure: the schema and
the server disagree on the shape of a request.
"""

from __future__ import annotations

import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance

from service.web.problems import TYPE_ILLEGAL_MOVE, TYPE_INCONSISTENT

#: The answers to a request of the right shape that breaks a rule of the game
RULE_TYPES = (TYPE_INCONSISTENT, TYPE_ILLEGAL_MOVE)


@schemathesis.check
def positive_data_acceptance_but_rules(ctx, response, case):
    """`positive_data_acceptance`, with a 422 of the `RULE_TYPES` accepted."""
    if response.status_code == 422:
        try:
            kind = response.json().get("type")
        except ValueError:
            kind = None
        if kind in RULE_TYPES:
            return None
    return positive_data_acceptance(ctx, response, case)
