"""Strategies in memory: the built-in variants' pinned, the others in a bounded LRU.

Keyed by the rules fingerprint. A lock per key makes concurrent requests for the same rules
wait for one build instead of each building the table.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..domain.rules import RuleSet, effective_rules
from .builder import build_strategy, part_names
from .store import TableStore
from .strategy import Strategy


def is_builtin(rs: RuleSet) -> bool:
    """Whether the rules are a built-in variant with its default options and no house rules
    (those tables are kept on disk and pinned in memory)."""
    return rs.fingerprint == effective_rules(rs.variant.id).fingerprint


class StrategyCache:
    """Built-in strategies (pinned, on disk) and an LRU of the others (memory only)."""

    def __init__(self, store: TableStore, lru_size: int = 8, threads: int = 0) -> None:
        self.store = store
        self.lru_size = lru_size
        self.threads = threads
        self.lock = threading.Lock()
        self.pinned: dict[str, Strategy] = {}
        self.lru: OrderedDict[str, Strategy] = OrderedDict()
        self.building: dict[str, threading.Lock] = {}
        self._part_names: dict[str, list[str]] = {}

    def get(self, rs: RuleSet) -> Strategy:
        """The RuleSet's strategy: from memory, from the store, or built now."""
        key = rs.fingerprint
        with self.lock:
            st = self.pinned.get(key) or self.lru.get(key)
            if st is not None:
                if key in self.lru:
                    self.lru.move_to_end(key)
                return st
            build_lock = self.building.setdefault(key, threading.Lock())
        with build_lock:
            with self.lock:
                st = self.pinned.get(key) or self.lru.get(key)
            if st is None:
                builtin = is_builtin(rs)
                st = build_strategy(rs, self.store if builtin else None, self.threads)
                with self.lock:
                    if builtin:
                        self.pinned[key] = st
                    else:
                        self.lru[key] = st
                        while len(self.lru) > self.lru_size:
                            self.lru.popitem(last=False)
            with self.lock:
                self.building.pop(key, None)
        return st

    def ready(self, rs: RuleSet) -> bool:
        """Whether the RuleSet's tables are in memory or on disk (no build needed)."""
        with self.lock:
            if rs.fingerprint in self.pinned:
                return True
            names = self._part_names.get(rs.fingerprint)
        if names is None:
            names = part_names(rs)
            with self.lock:
                self._part_names[rs.fingerprint] = names
        return self.store.has(rs, names)

    def clear(self) -> None:
        """Forget every strategy in memory (files on disk stay)."""
        with self.lock:
            self.pinned.clear()
            self.lru.clear()
