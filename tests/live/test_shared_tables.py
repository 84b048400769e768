"""Two instances on one real store (ADVISOR_SHARED_TABLES, a real redis-server): a table of
new rules the first built is answered by the second at its first request, fetched from the
store instead of built again; with the store gone, new rules are still answered (built
there). service/advisor/tables/shared.py says how; tests/advisor/test_shared_tables.py
checks the store itself."""

from __future__ import annotations

import json
import time

from .hostile import post
from .redis_server import RedisServer
from .server import Server, wait_until

SUGGEST = "/v1/variants/yahtzee/moves/suggest"


def _house(value: int) -> dict:
    """A suggestion under a house rule of the chance box: a table of new rules."""
    return {"dice": [1, 2, 3, 4, 5], "throw": 1,
            "rules": {"boxes": {"chance": {"scoring": "fixed", "value": value}}}}


def _answered(srv: Server, body: dict, within: float = 300.0) -> dict:
    """The suggestion, asking again after Retry-After while the table is built."""
    deadline = time.monotonic() + within
    while True:
        status, headers, answer = post(srv.port, SUGGEST, body, timeout=30)
        if status == 200:
            return json.loads(answer)
        assert status == 202 and time.monotonic() < deadline, (status, answer[:300])
        time.sleep(min(float(headers.get("retry-after", "1")), 2.0))


def test_the_second_instance_answers_rules_the_first_built(tables):
    store = RedisServer().start()
    env = {"WEB_CONCURRENCY": "1", "ADVISOR_WARM": "yahtzee",
           "ADVISOR_SHARED_TABLES": store.url()}
    try:
        with Server(table_dir=tables, env=env) as first, \
                Server(table_dir=tables, env=env) as second:
            before = first.log().count("table built")
            built = _answered(first, _house(17))
            # the workers answer as soon as the build's child wrote the table; the build
            # process puts it in the store after reaping the child, then logs the build
            assert wait_until(lambda: first.log().count("table built") > before, 30.0)
            began = time.monotonic()
            status, _, answer = post(second.port, SUGGEST, _house(17), timeout=30)
            took = time.monotonic() - began
            print(f"the second instance answered rules the first built in {took:.3f} s")
            assert status == 200, answer[:300]  # no 202: fetched within its wait
            assert json.loads(answer)["best"] == built["best"]
            # the build process logs the fetch just after the table is in place
            assert wait_until(lambda: "table fetched from the shared store" in second.log(), 10.0)
            assert "table built" not in second.log()

            # the store lost: new rules are built where they are asked, and answered
            store.kill()
            assert _answered(second, _house(18))["best"]
            assert wait_until(lambda: "shared table store unreachable" in second.log(), 10.0)
    finally:
        store.stop()
