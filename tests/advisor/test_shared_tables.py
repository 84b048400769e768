"""The cluster's shared table store (service/advisor/tables/shared.py) on a real
redis-server: a table one pod's build process built, another's fetches, checked file by file;
a damaged entry is dropped; the store is bounded; and losing it costs speed, not answers."""

from __future__ import annotations

import json
import logging
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


def _build(builder: Builder, rs=RULES, kind: str = "values") -> None:
    """Queue one job and let the build process take it."""
    BuildQueue(builder.settings, autostart=False).submit(rs, "client", kind=kind)
    builder.build(builder.next_job())


def test_a_table_built_by_one_pod_is_fetched_by_another(tmp_path, redis, caplog):
    url = redis.url(1)
    first, second = _pod(tmp_path / "a", url), _pod(tmp_path / "b", url)
    caplog.set_level(logging.INFO)
    _build(first)
    built = sorted((tmp_path / "a" / "build").glob("*.npy"))
    assert built and "table built" in caplog.text
    caplog.clear()
    _build(second)
    fetched = sorted((tmp_path / "b" / "build").glob("*.npy"))
    assert "table fetched from the shared store" in caplog.text
    assert [p.name for p in fetched] == [p.name for p in built]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(built, fetched, strict=True))
    # the analysis tables too (their own job), on top of the value tables
    _build(first, kind="moments")
    _build(second, kind="moments")
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
    _build(pod)  # the store is gone: built here, with one warning
    assert "table built" in caplog.text
    assert caplog.text.count("shared table store unreachable") == 1
    assert sorted((tmp_path / "a" / "build").glob("*.npy"))
    server.start()
    try:
        assert SharedTables(url).fetch(RULES.fingerprint, tmp_path / "x") is None  # empty
    finally:
        server.stop()
