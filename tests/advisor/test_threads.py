"""The kernels' thread pool (`service.advisor.kernels.threads`): native threads, also
under gevent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from service.advisor.kernels.threads import cpu_workers, greenlet_threads, kernel_pool, release_pool

ROOT = Path(__file__).resolve().parents[2]


def test_one_pool_a_process_with_a_thread_a_cpu():
    assert not greenlet_threads()
    pool = kernel_pool()
    assert kernel_pool() is pool
    assert list(pool.map(lambda x: x * x, range(5))) == [0, 1, 4, 9, 16]
    cpus = os.cpu_count() or 1
    assert cpu_workers(0) == cpus and cpu_workers(1) == 1 and cpu_workers(10 * cpus) == cpus


# Under gevent's monkey-patching (the service's workers) `threading`'s threads are greenlets:
# a pool of them played every chunk of games queued before the request looked at its time
# budget again. The sampler must play no chunk past the budget there either.
GEVENT_SCRIPT = r"""
from gevent import monkey
monkey.patch_all()
import os, sys, tempfile
sys.path.insert(0, sys.argv[1])
import service.advisor.analysis.analyst as analyst_mod
from service.advisor import Advisor
from service.advisor.analysis.analyst import Analyst
from service.advisor.kernels.threads import greenlet_threads, kernel_pool
from service.domain.rules import effective_rules

played = []
real = analyst_mod.simulate
def counting(*args):
    played.append(args[2])
    return real(*args)
analyst_mod.simulate = counting
assert greenlet_threads()
assert type(kernel_pool()).__module__ == "gevent.threadpool"
rs = effective_rules("general", {"columns": True})
analyst = Analyst(Advisor(tempfile.mkdtemp()), samples_approximate=6400, sample_seconds=0.0)
d = analyst.position_value(rs, None, None, None).distribution
workers = min(os.cpu_count() or 1, 6400 // 100)
print(len(played), d.samples, workers)
"""


def test_under_gevent_the_sampler_plays_no_chunk_past_its_budget():
    out = subprocess.run([sys.executable, "-c", GEVENT_SCRIPT, str(ROOT)], capture_output=True,
                         text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    chunks, samples, workers = (int(x) for x in out.stdout.split()[-3:])
    # two waves of a chunk a thread (one thread when there is one CPU: two chunks), then
    # the budget (none) is spent: every chunk played is counted in the answer
    assert chunks == (2 * workers if workers > 1 else 2)
    assert samples == chunks * 100


def test_the_pool_released_before_a_fork_leaves_no_thread_and_comes_back():
    import threading

    pool = kernel_pool()
    assert list(pool.map(abs, [-1, -2])) == [1, 2]
    release_pool()
    assert not [t for t in threading.enumerate() if t.name.startswith("kernels")]
    again = kernel_pool()
    assert again is not pool and list(again.map(abs, [-3])) == [3]
