"""Tables in memory: one cache for every kind of table (a RuleSet's value tables, a part's
moment tables, a start distribution, ...): a built-in variant's tables kept on disk are
pinned, the others kept in a bounded LRU (an `OrderedDict`: entries carry the file they are
mapped from, see below); missing ones are loaded through the store chain
(`store.StoreChain`) or built, once per key however many threads ask at once.

A table mapped from the build directory (built by the pod's build process) is checked
against its file at most once a second: when the build process removed it (it keeps
ADVISOR_CACHE_SIZE tables), the worker drops its mapping too, so a pod holds about as many
tables as it keeps on disk; while a table is used its file's time is refreshed, so the build
process removes the least recently used.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np

from ...domain.rules import RuleSet
from .store import StoreChain, is_builtin

#: Seconds between checks that a mapped table's file is still there.
RECHECK_SECONDS = 1.0
#: Seconds between refreshes of a used table's modification time (its "last used").
TOUCH_SECONDS = 10.0

V = TypeVar("V")


@dataclass
class _Entry(Generic[V]):
    """A table in the LRU, with the file it is mapped from when the build process may remove
    it (None: in memory only) and when that file was last checked and touched."""

    value: V
    path: Path | None = None
    checked: float = 0.0
    touched: float = 0.0


class TableCache(Generic[V]):
    """Tables of one kind in memory, keyed by what names them (a rules fingerprint, with a
    part or a state): pinned when a built-in variant's table kept on disk, else in an LRU
    of `lru_size`. `stores` is where tables are looked for and built-in ones saved."""

    def __init__(self, stores: StoreChain, lru_size: int = 8) -> None:
        self.stores = stores
        self.lru_size = lru_size
        self.lock = threading.Lock()
        self.pinned: dict[Hashable, V] = {}
        self.lru: OrderedDict[Hashable, _Entry[V]] = OrderedDict()  # least recent first
        self._building: dict[Hashable, threading.Lock] = {}

    def lookup(self, key: Hashable) -> V | None:
        """The table if it is in memory (and its file, if the build process may remove it,
        is still there)."""
        found = self.pinned.get(key)
        if found is not None:
            return found
        with self.lock:
            entry = self.lru.get(key)
            if entry is not None:
                self.lru.move_to_end(key)
        if entry is None or (entry.path is not None and not self._still_there(key, entry)):
            return None
        return entry.value

    def load(self, rs: RuleSet, key: Hashable, files: Callable[[], Sequence[str]],
             make: Callable[[list[np.ndarray]], V | None]) -> V | None:
        """The table from memory, else made (`make`) from the arrays `files()` names in the
        first store of the chain holding them all; never builds."""
        found = self.lookup(key)
        if found is not None:
            return found
        hit = self.stores.load(rs, files(), make)
        if hit is None:
            return None
        value, path = hit
        builtin = is_builtin(rs)
        return self._keep(key, value, builtin, None if builtin else path)

    def get(self, rs: RuleSet, key: Hashable, build: Callable[[], V],
            files: Callable[[], Sequence[str]] = tuple,
            make: Callable[[list[np.ndarray]], V | None] | None = None,
            arrays: Callable[[V], dict[str, np.ndarray]] | None = None,
            elsewhere: Callable[[Callable[[], V | None]], V] | None = None) -> V:
        """The table from memory or the stores (`load`); else from `elsewhere(load)` when
        given (the pod's build process: it raises `TableBuilding` while it works); else
        built here by `build()`, once per key: a built-in variant's table is saved into the
        first store that takes it (`arrays` gives its files) and mapped back from there."""
        found = self.load(rs, key, files, make) if make is not None else self.lookup(key)
        if found is not None:
            return found
        if elsewhere is not None:
            return elsewhere(lambda: self.load(rs, key, files, make))
        with self.lock:
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            found = self.lookup(key)
            if found is None:
                found = build()
                names = files()
                on_disk = is_builtin(rs) and bool(names)
                if on_disk and arrays is not None and make is not None:
                    saved = self.stores.save(rs, arrays(found))
                    mapped = make(saved) if saved is not None else None
                    found = found if mapped is None else mapped
                self._keep(key, found, on_disk, None)
            with self.lock:
                self._building.pop(key, None)
        return found

    def ready(self, rs: RuleSet, key: Hashable, files: Callable[[], Sequence[str]]) -> bool:
        """Whether the table is pinned in memory or on disk (no build needed)."""
        return key in self.pinned or self.stores.has(rs, files())

    def clear(self) -> None:
        """Forget every table in memory (files on disk stay)."""
        with self.lock:
            self.pinned.clear()
            self.lru.clear()

    def _keep(self, key: Hashable, value: V, pinned: bool, path: Path | None) -> V:
        with self.lock:
            if pinned:
                self.pinned[key] = value
                return value
            now = time.monotonic()
            if path is not None:
                # a table new on disk: the build process may have removed older ones
                for other in [k for k, e in self.lru.items()
                              if e.path is not None and not e.path.exists()]:
                    self.lru.pop(other, None)
            self.lru[key] = _Entry(value, path, now, now)
            self.lru.move_to_end(key)
            while len(self.lru) > self.lru_size:
                self.lru.popitem(last=False)
        if path is not None:
            # used now: the build process removes the least recently used
            with contextlib.suppress(OSError):
                os.utime(path)
        return value

    def _still_there(self, key: Hashable, entry: _Entry[V]) -> bool:
        now = time.monotonic()
        if now - entry.checked < RECHECK_SECONDS:
            return True
        entry.checked = now
        if not entry.path.exists():
            with self.lock:
                self.lru.pop(key, None)
            return False
        if now - entry.touched > TOUCH_SECONDS:
            entry.touched = now
            with contextlib.suppress(OSError):
                os.utime(entry.path)
        return True
