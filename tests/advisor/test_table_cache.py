"""The one table cache (`tables.cache.TableCache`) and the store chain (`tables.store`): what
the value tables, moment tables and start distributions share, checked on plain arrays."""

from __future__ import annotations

import threading
import time

import numpy as np

from service.advisor.tables.cache import TableCache
from service.advisor.tables.store import StoreChain, TableStore, is_builtin
from service.domain.rules import effective_rules

BUILTIN = effective_rules("generala")


def house(value: int):
    return effective_rules("generala", {}, {"boxes": {"full_house": {"value": value}}})


def first(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0]


def test_the_chain_looks_beside_the_tables_then_in_the_build_directory(tmp_path):
    store, build = TableStore(tmp_path / "tables"), TableStore(tmp_path / "build")
    chain = StoreChain(store, build)
    assert is_builtin(BUILTIN) and not is_builtin(house(33))
    assert chain.stores(BUILTIN) == [store, build]
    assert chain.stores(house(33)) == [build]  # never beside the built-in tables
    assert StoreChain(store).stores(house(33)) == []
    build.save(BUILTIN, "x", np.arange(3.0))
    value, path = chain.load(BUILTIN, ["x"], first)
    assert list(value) == [0, 1, 2] and path == build.path(BUILTIN, "x")
    assert chain.load(BUILTIN, ["x", "y"], first) is None  # one store holds them all
    assert chain.load(BUILTIN, ["x"], lambda a: None) is None  # refused by `make`


def test_a_read_only_store_is_skipped_when_saving(tmp_path):
    class ReadOnly(TableStore):
        def save(self, rs, part, values):
            raise PermissionError(13, "Read-only file system")

    build = TableStore(tmp_path / "build")
    chain = StoreChain(ReadOnly(tmp_path / "tables"), build)
    saved = chain.save(BUILTIN, {"x": np.arange(2.0)})
    assert isinstance(saved[0], np.memmap) and build.has(BUILTIN, ["x"])
    assert StoreChain(ReadOnly(tmp_path / "t")).save(BUILTIN, {"x": np.arange(2.0)}) is None


def test_builtins_are_pinned_and_saved_the_others_kept_in_an_lru(tmp_path):
    cache: TableCache[np.ndarray] = TableCache(StoreChain(TableStore(tmp_path)), lru_size=2)

    def get(rs, build=lambda: np.arange(4.0)):
        return cache.get(rs, rs.fingerprint, build, files=lambda: ["t"], make=first,
                         arrays=lambda a: {"t": a})

    assert isinstance(get(BUILTIN), np.memmap)  # saved, mapped back from the file
    for v in (31, 32, 33):
        get(house(v))
    assert cache.lookup(BUILTIN.fingerprint) is not None  # pinned
    assert cache.lookup(house(31).fingerprint) is None  # least recently used: gone
    assert cache.lookup(house(33).fingerprint) is not None
    assert not TableStore(tmp_path).has(house(33), ["t"])  # house rules: memory only
    cache.clear()
    again = get(BUILTIN, build=lambda: (_ for _ in ()).throw(AssertionError("rebuilt")))
    assert list(again) == [0, 1, 2, 3]  # from the file
    assert cache.ready(BUILTIN, BUILTIN.fingerprint, lambda: ["t"])


def test_one_build_per_key_under_concurrency(tmp_path):
    cache: TableCache[list[int]] = TableCache(StoreChain(TableStore(tmp_path)), lru_size=4)
    calls = []

    def build() -> list[int]:
        calls.append(1)
        time.sleep(0.05)
        return [len(calls)]

    rs = house(40)
    results = []
    threads = [threading.Thread(target=lambda: results.append(
        cache.get(rs, "key", build))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and all(r is results[0] for r in results)


def test_elsewhere_is_asked_instead_of_building_here(tmp_path):
    store = TableStore(tmp_path)
    cache: TableCache[np.ndarray] = TableCache(StoreChain(store, store), lru_size=4)
    rs = house(41)

    def elsewhere(load):
        store.save(rs, "t", np.ones(2))  # the build process wrote it
        return load()

    found = cache.get(rs, "k", lambda: np.zeros(2), files=lambda: ["t"], make=first,
                      elsewhere=elsewhere)
    assert list(found) == [1, 1] and cache.lookup("k") is found
