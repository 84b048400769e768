"""The cluster's shared table store (service/advisor/tables/shared.py) on a real
redis-server: a table one pod's build process built, another pod's request fetches (or its
build process, for a job queued), checked file by file; a damaged entry is dropped; the store
is bounded; and losing it costs speed, not answers, nor a request's wait each time."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from service.advisor.tables.build_process import Builder, BuildQueue, BuildSettings
from service.advisor.tables.shared import SharedTables
from service.domain.rules import effective_rules
from tests.live.redis_server import RedisServer

# a table of new rules that builds in a fraction of a second
RULES = effective_rules("yahtzee_basic", None, {"boxes": {"chance": {"value": 12,
                                                                     "scoring": "fixed"}}})


@pytest.fixture(scope="module")
def redis():
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


def _pod(base: Path, url: str, mib: int = 64) -> Builder:
    """One pod's build process (its own build and table directories) on the shared store."""
    settings = BuildSettings(base / "build", base / "tables", shared_url=url, shared_mib=mib,
                             threads=1)
    return Builder(settings, idle_exit=0)


def _build(builder: Builder, rs=RULES, kind: str = "values", fetch: bool = True) -> bool:
    """Ask for a table as a request does: fetched from the store at once (`fetch`), or
    queued and taken by the build process. Whether the request fetched it."""
    if BuildQueue(builder.settings, autostart=False).submit(rs, "client", kind=kind,
                                                            fetch=fetch) == 0:
        assert builder.next_job() is None  # nothing was queued
        return True
    builder.build(builder.next_job())
    return False


def test_a_table_built_by_one_pod_is_fetched_by_another(tmp_path, redis, caplog):
    url = redis.url(1)
    first, second = _pod(tmp_path / "a", url), _pod(tmp_path / "b", url)
    caplog.set_level(logging.INFO)
    _build(first)
    built = sorted((tmp_path / "a" / "build").glob("*.npy"))
    assert built and "table built" in caplog.text
    caplog.clear()
    assert _build(second)  # the request fetched it: no build, no job
    fetched = sorted((tmp_path / "b" / "build").glob("*.npy"))
    assert "table fetched from the shared store" in caplog.text
    assert [p.name for p in fetched] == [p.name for p in built]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(built, fetched, strict=True))
    # a job queued all the same: the build process fetches it instead of building it
    third = _pod(tmp_path / "c", url)
    caplog.clear()
    assert not _build(third, fetch=False)
    assert "table fetched from the shared store" in caplog.text
    assert "table built" not in caplog.text
    assert [p.read_bytes() for p in sorted((tmp_path / "c" / "build").glob("*.npy"))] == [
        p.read_bytes() for p in built]
    # the analysis tables too (their own job), on top of the value tables
    _build(first, kind="moments")
    assert _build(second, kind="moments")
    names = sorted(p.name for p in (tmp_path / "b" / "build").glob("*.npy"))
    assert any(n.endswith("-m1-v1.npy") for n in names) and len(names) > len(fetched)


def test_a_damaged_entry_is_dropped_and_the_table_built_here(tmp_path, redis, caplog):
    url = redis.url(2)
    first, second = _pod(tmp_path / "a", url), _pod(tmp_path / "b", url)
    _build(first)
    shared = SharedTables(url)
    key = shared.prefix + RULES.fingerprint
    manifest = json.loads(shared.client.hget(key, "manifest"))
    name = manifest[0]["name"]
    data = bytearray(shared.client.hget(key, name))
    data[-1] ^= 1  # one bit flipped: same size, another digest
    shared.client.hset(key, name, bytes(data))
    caplog.set_level(logging.INFO)
    assert shared.fetch(RULES.fingerprint, tmp_path / "elsewhere") is None
    assert "does not match its manifest" in caplog.text and not shared.client.exists(key)
    caplog.clear()
    _build(second)
    assert "table built" in caplog.text  # built here, and stored again
    assert shared.client.exists(key)


def test_the_store_keeps_at_most_its_size_least_recently_used_out_first(tmp_path, redis):
    shared = SharedTables(redis.url(3), max_mib=1)
    files = []
    for i in range(3):
        path = tmp_path / f"t{i}.npy"
        path.write_bytes(bytes([i]) * 400_000)
        files.append(path)
    for i, path in enumerate(files):
        assert shared.put(f"job{i}", [path])
    assert shared.fetch("job0", tmp_path / "out") is None  # the oldest went
    assert shared.fetch("job2", tmp_path / "out") == ["t2.npy"]
    big = tmp_path / "big.npy"
    big.write_bytes(b"x" * (2 * 2**20))
    assert not shared.put("too-big", [big])  # more than it keeps at all


def test_losing_the_store_costs_speed_not_answers(tmp_path, caplog):
    server = RedisServer().start()
    url = server.url(0)
    pod = _pod(tmp_path / "a", url)
    server.kill()
    caplog.set_level(logging.INFO)
    assert not _build(pod)  # the store is gone: built here, one warning by each process
    assert "table built" in caplog.text
    assert caplog.text.count("shared table store unreachable") == 2  # request, builder
    assert sorted((tmp_path / "a" / "build").glob("*.npy"))
    # a request does not wait out the store's timeout again while it is down
    queue = BuildQueue(pod.settings, autostart=False)
    assert queue.shared is not None
    queue.shared.fetch("job", tmp_path / "x", quick=True)  # fails: marks it down
    began = time.monotonic()
    assert queue.shared.fetch("job", tmp_path / "x", quick=True) is None
    assert time.monotonic() - began < 0.1
    server.start()
    try:
        assert SharedTables(url).fetch(RULES.fingerprint, tmp_path / "x") is None  # empty
    finally:
        server.stop()
