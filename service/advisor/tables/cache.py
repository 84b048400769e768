"""Strategies in memory: the built-in variants' pinned, the others in a bounded LRU.

Keyed by the rules fingerprint. `lookup` only looks in memory, `load` also maps tables found
on disk, `get` also builds (inline builds: the master's warm-up, tests, the command line). A
lock per key makes concurrent `get`s for the same rules wait for one build.

Strategies mapped from the build directory (tables built by the pod's build process) are
checked against their files at most once a second: when the build process removed a table
(it keeps ADVISOR_CACHE_SIZE of them), the worker drops its mapping too, so a pod holds about
as many tables as it keeps on disk; while a table is used its files' time is refreshed, so
the build process removes the least recently used.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ...domain.rules import RuleSet, effective_rules
from ..kernels.moments import Moments
from ..solving.solver import solve_moments
from ..solving.strategy import Strategy
from .store import TableStore
from .strategies import build_strategy, load_strategy, part_names, save_moments

#: Seconds between checks that a mapped table's files are still there.
RECHECK_SECONDS = 1.0
#: Seconds between refreshes of a used table's modification time (its "last used").
TOUCH_SECONDS = 10.0


def is_builtin(rs: RuleSet) -> bool:
    """Whether the rules are a built-in variant with its default options and no house rules
    (those tables are kept on disk and pinned in memory)."""
    return rs.fingerprint == effective_rules(rs.variant.id).fingerprint


class StrategyCache:
    """Built-in strategies (pinned, on disk) and an LRU of the others.

    `store`: the built-in variants' tables; `house_store`: where the build process writes
    the others (None: house-rules strategies are built in memory and never saved).
    """

    def __init__(self, store: TableStore, lru_size: int = 8, threads: int = 0,
                 house_store: TableStore | None = None) -> None:
        self.store = store
        self.house_store = house_store
        self.lru_size = lru_size
        self.threads = threads
        self.lock = threading.Lock()
        self.pinned: dict[str, Strategy] = {}
        self.lru: OrderedDict[str, Strategy] = OrderedDict()
        # key -> [first file of the table, when it was last checked, when last touched]
        self.backing: dict[str, list] = {}
        self.building: dict[str, threading.Lock] = {}
        self._part_names: dict[str, list[str]] = {}

    def lookup(self, rs: RuleSet) -> Strategy | None:
        """The RuleSet's strategy if it is in memory (and its files, if any, still exist)."""
        key = rs.fingerprint
        st = self.pinned.get(key)
        if st is not None:
            return st
        with self.lock:
            st = self.lru.get(key)
            if st is None:
                return None
            self.lru.move_to_end(key)
            backing = self.backing.get(key)
        if backing is not None and not self._still_there(key, backing):
            return None
        return st

    def _still_there(self, key: str, backing: list) -> bool:
        now = time.monotonic()
        if now - backing[1] < RECHECK_SECONDS:
            return True
        backing[1] = now
        path: Path = backing[0]
        if not path.exists():
            with self.lock:
                self.lru.pop(key, None)
                self.backing.pop(key, None)
            return False
        if now - backing[2] > TOUCH_SECONDS:
            backing[2] = now
            with contextlib.suppress(OSError):
                os.utime(path)
        return True

    def load(self, rs: RuleSet) -> Strategy | None:
        """The RuleSet's strategy from memory or from tables on disk; never builds."""
        st = self.lookup(rs)
        if st is not None:
            return st
        builtin = is_builtin(rs)
        stores = ([self.store] if builtin else []) + (
            [self.house_store] if self.house_store is not None else [])
        for store in stores:
            st = load_strategy(rs, store)
            if st is not None:
                path = None if builtin else store.path(rs, st.parts[0].name)
                self._keep(rs, st, builtin, path)
                return st
        return None

    def _keep(self, rs: RuleSet, st: Strategy, builtin: bool, path: Path | None) -> None:
        key = rs.fingerprint
        with self.lock:
            if builtin:
                self.pinned[key] = st
                return
            self.lru[key] = st
            self.lru.move_to_end(key)
            if path is not None:
                now = time.monotonic()
                self.backing[key] = [path, now, now]
                # a new table was built: the build process may have removed older ones
                for other, (other_path, _, _) in list(self.backing.items()):
                    if other != key and not other_path.exists():
                        self.lru.pop(other, None)
                        self.backing.pop(other, None)
            while len(self.lru) > self.lru_size:
                old, _ = self.lru.popitem(last=False)
                self.backing.pop(old, None)
        if path is not None:
            # used now: the build process removes the least recently used
            with contextlib.suppress(OSError):
                os.utime(path)

    def get(self, rs: RuleSet) -> Strategy:
        """The RuleSet's strategy: from memory, from disk, or built now (in this process)."""
        st = self.load(rs)
        if st is not None:
            return st
        key = rs.fingerprint
        with self.lock:
            build_lock = self.building.setdefault(key, threading.Lock())
        with build_lock:
            st = self.lookup(rs)
            if st is None:
                builtin = is_builtin(rs)
                st = build_strategy(rs, self.store if builtin else None, self.threads)
                self._keep(rs, st, builtin, None)
            with self.lock:
                self.building.pop(key, None)
        return st

    def ready(self, rs: RuleSet) -> bool:
        """Whether the RuleSet's tables are in memory or on disk (no build needed)."""
        if rs.fingerprint in self.pinned:
            return True
        with self.lock:
            names = self._part_names.get(rs.fingerprint)
        if names is None:
            names = part_names(rs)
            with self.lock:
                self._part_names[rs.fingerprint] = names
        return self.store.has(rs, names) or (
            self.house_store is not None and self.house_store.has(rs, names))

    def clear(self) -> None:
        """Forget every strategy in memory (files on disk stay)."""
        with self.lock:
            self.pinned.clear()
            self.lru.clear()
            self.backing.clear()


class MomentCache:
    """Moment tables per solved part, keyed by (rules fingerprint, part name).

    Found in memory, else on disk: a built-in variant's beside its value tables (`store`),
    any other's, or a built-in's whose table directory is read-only, in the build
    directory (`house_store`); memory-mapped, so workers share them. Built-in tables are
    pinned; house-rules tables stay in an LRU of `lru_size` strategies' parts.

    Missing tables: `elsewhere(rs, load, builtin)` has them built elsewhere and returns what
    `load` finds once they are on disk (the Analyst passes the pod's build process:
    `build_process.await_build`, which raises `TableBuilding`, a 202 with Retry-After, while it
    works); without it, or with ``here=True`` (the master's warm-up, the command line,
    tests), they are built in this process and saved where they would be found (built-ins)
    or kept in memory.
    """

    def __init__(self, store: object | None = None, lru_size: int = 8, threads: int = 0,
                 house_store: object | None = None,
                 elsewhere: Callable[[object, Callable[[], Moments | None], bool], Moments]
                 | None = None) -> None:
        self.store = store
        self.house_store = house_store
        self.elsewhere = elsewhere
        self.lru_size = lru_size
        self.threads = threads
        self.lock = threading.Lock()
        self.pinned: dict[tuple[str, str], Moments] = {}
        self.lru: OrderedDict[tuple[str, str], Moments] = OrderedDict()
        self.building: dict[tuple[str, str], threading.Lock] = {}

    def get(self, rs: object, part: object, builtin: bool, here: bool = False) -> Moments:
        """The moments of one part of a strategy for rules `rs`: memory, disk, or built
        (by the build process, or in this process: see the class)."""
        key = (rs.fingerprint, part.name)
        found = self._memory(key)
        if found is not None:
            return found
        found = self._load(rs, part, builtin)
        if found is None and self.elsewhere is not None and not here:
            found = self.elsewhere(rs, lambda: self._load(rs, part, builtin), builtin)
        if found is None:
            with self.lock:
                build_lock = self.building.setdefault(key, threading.Lock())
            with build_lock:
                found = self._memory(key) or self._build(rs, part, builtin)
                with self.lock:
                    self.building.pop(key, None)
        self._keep(key, found, builtin)
        return found

    def _memory(self, key: tuple[str, str]) -> Moments | None:
        with self.lock:
            found = self.pinned.get(key) or self.lru.get(key)
            if found is not None and key in self.lru:
                self.lru.move_to_end(key)
            return found

    def _keep(self, key: tuple[str, str], mo: Moments, builtin: bool) -> None:
        with self.lock:
            if builtin:
                self.pinned[key] = mo
            else:
                self.lru[key] = mo
                self.lru.move_to_end(key)
                while len(self.lru) > self.lru_size * 4:
                    self.lru.popitem(last=False)

    def _stores(self, builtin: bool) -> list:
        return [s for s in ((self.store if builtin else None), self.house_store)
                if s is not None]

    def _load(self, rs: object, part: object, builtin: bool) -> Moments | None:
        shape = part.solution.model.table_shape
        for store in self._stores(builtin):
            m1 = store.load(rs, f"{part.name}-m1")
            m2 = store.load(rs, f"{part.name}-m2")
            if m1 is not None and m2 is not None and m1.shape == shape == m2.shape:
                return Moments(m1, m2)
        return None

    def _build(self, rs: object, part: object, builtin: bool) -> Moments:
        """Solve the moments here; a built-in's are saved beside its value tables (or in the
        build directory when those are read-only), where the workers find them."""
        mo = solve_moments(part.solution, self.threads)
        if builtin:
            for store in self._stores(True):
                try:
                    return save_moments(store, rs, part.name, mo)
                except OSError:  # a read-only directory: the next one, else memory only
                    continue
        return mo
