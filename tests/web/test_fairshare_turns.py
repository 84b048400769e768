"""The fair share's turns under gevent (`service.web.fairshare`): between two polls of the
event loop a caller starts its first request at once and its others after the next poll,
while other callers' requests came lately; a caller alone in its worker starts requests at
once for `SOLO_SLICE`. Run in a child process patched by gevent, as a worker is (the test
process is not patched: there the fair share takes no turns)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCENARIOS = r"""
from gevent import monkey
monkey.patch_all()
import json, sys
import gevent
from service.web import fairshare
from service.web.fairshare import LOOP_POLLS, FairShare

def run(fair, clients):
    '''Requests of `clients` made runnable together (one round): each one's poll count
    when it started, in the order they started.'''
    log = []
    def request(client):
        fair.admit(client, client)
        log.append([client, LOOP_POLLS.count()])
        fair.release(client)
    gevent.joinall([gevent.spawn(request, c) for c in clients])
    gevent.sleep(0.001)  # the loop polls before the next scenario
    return log

LOOP_POLLS.count()
gevent.sleep(0.001)
out = {}
fair = FairShare(per_worker=1, wait=1.0)
run(fair, ["b"])  # another caller went lately
out["mixed"] = run(fair, ["a", "a", "b", "a"])
out["alone"] = run(FairShare(per_worker=1, wait=1.0), ["a", "a", "a"])
fairshare.SOLO_SLICE = 0.0  # the slice is over at once
fair = FairShare(per_worker=1, wait=1.0)
out["alone, slice over"] = run(fair, ["a", "a", "a"])
out["in flight after"] = fair.in_flight("a")
print(json.dumps(out))
"""


def scenarios() -> dict:
    done = subprocess.run([sys.executable, "-c", SCENARIOS], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_turns_go_by_caller_between_two_polls():
    out = scenarios()
    # other callers came lately: a's first and b's start in the round, a's others after
    # the loop polled again, one a round
    mixed = out["mixed"]
    assert [c for c, _ in mixed] == ["a", "b", "a", "a"]
    polls = [p for _, p in mixed]
    assert polls[0] == polls[1] < polls[2] < polls[3]
    # a caller alone starts them at once within its slice, and takes turns after it
    alone = out["alone"]
    assert [c for c, _ in alone] == ["a", "a", "a"] and len({p for _, p in alone}) == 1
    over = [p for _, p in out["alone, slice over"]]
    assert over[0] < over[1] and over[1] <= over[2]
    assert out["in flight after"] == 0
