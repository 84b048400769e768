"""Value tables: built, saved, memory-mapped, cached per rules fingerprint.

A *strategy* for a RuleSet is a list of parts, each an exactly solved sheet:

- exact variants (5 dice, one column, no saved throws): one part, the whole sheet;
- column sheets (option ``columns``): one part per column, each column solved exactly as a
  13-turn game with its own order rule; a state is valued at the sum of its columns' values;
- ``maxi_yatzy`` (6 dice, 20 boxes, saved throws) and any sheet of more than
  ``MAX_EXACT_BOXES`` boxes: the upper section (with its bonus) and the lower section solved
  exactly as two separate games; unused throws are valued at a constant per saved throw.

Tables of the built-in variants (default options) are files ``<variant>-<fingerprint>-<part>
.npy`` in ``$ADVISOR_TABLE_DIR`` (default ``.tables``), loaded with ``mmap_mode="r"`` so that
worker processes share their pages. Other rules (options, house rules) are built on first use
and kept in a bounded LRU keyed by the rules fingerprint; a lock per fingerprint makes
concurrent requests for the same rules build once.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..config import Settings
from ..rules import RuleSet, _build, effective_rules
from ..variants import VARIANT_IDS
from . import solver
from .solver import Solution

FORMAT = 1
MAX_EXACT_BOXES = 16
LRU_SIZE = Settings.from_env().advisor_cache_size


def table_dir() -> Path:
    """Where built-in tables are written and read (ADVISOR_TABLE_DIR, read each time so
    tests and the build command can point it elsewhere)."""
    return Path(Settings.from_env().advisor_table_dir)


@dataclass
class Part:
    """One exactly solved sub-sheet of a strategy."""

    name: str
    column: int  # index of the sheet column this part reads
    solution: Solution
    rs: RuleSet  # the sub-sheet's rules (the whole RuleSet for an exact strategy)


@dataclass
class Strategy:
    """How the advisor values states of one RuleSet."""

    rs: RuleSet
    parts: list[Part]
    exact: bool
    method: str
    throw_value: float = 0.0  # value of one saved throw (saved-throw variants)
    box_part: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)
    # (column, box id) -> (part index, box index within the part)

    def __post_init__(self) -> None:
        for pi, p in enumerate(self.parts):
            for bi, bid in enumerate(p.solution.model.box_ids):
                self.box_part[(p.column, bid)] = (pi, bi)


def plan(rs: RuleSet) -> list[tuple[str, int, RuleSet, str | None]]:
    """The parts a RuleSet is solved as: (name, column, sub-rules, order)."""
    v = rs.variant
    if v.columns:
        return [(f"col{i + 1}-{o}", i, rs, o) for i, o in enumerate(v.columns)]
    if v.saved_throws or len(v.boxes) > MAX_EXACT_BOXES:
        upper = tuple(b for b in v.boxes if b.section == "upper")
        lower = tuple(b for b in v.boxes if b.section != "upper")
        out = []
        if upper:
            vu = replace(v, boxes=upper, five_bonus=None, joker="none", saved_throws=False)
            out.append(("upper", 0, _build(vu, rs.options, rs.overrides), None))
        if lower:
            vl = replace(v, boxes=lower, upper_bonus=None, saved_throws=False)
            if vl.box("five_of_a_kind") is None:
                vl = replace(vl, joker="none", five_bonus=None)
            out.append(("lower", 0, _build(vl, rs.options, rs.overrides), None))
        return out
    return [("all", 0, rs, None)]


def method_of(rs: RuleSet) -> tuple[bool, str]:
    """Whether the strategy is exact, and how it values states."""
    v = rs.variant
    if v.columns:
        return False, ("columns solved independently: each column is an exact 13-turn game "
                       "with its order rule; a state is worth the sum of its columns")
    if v.saved_throws or len(v.boxes) > MAX_EXACT_BOXES:
        return False, ("upper and lower sections solved independently as exact games; "
                       "a saved throw is worth a constant (the first turn's gain from a "
                       "fourth throw)")
    return True, "exact backward induction over every reachable state"


def _file(rs: RuleSet, part: str) -> Path:
    return table_dir() / f"{rs.variant.id}-{rs.fingerprint}-{part}-v{FORMAT}.npy"


def _save(path: Path, values: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as fh:
        np.save(fh, values)
    os.replace(tmp, path)


def build_strategy(rs: RuleSet, use_disk: bool = False) -> Strategy:
    """Solve (or load from disk) every part of a RuleSet's strategy."""
    parts = []
    for name, column, sub, order in plan(rs):
        path = _file(rs, name)
        sol = None
        if use_disk and path.exists():
            try:
                sol = solver.attach(sub, np.load(path, mmap_mode="r"), order)
            except (ValueError, OSError):
                sol = None
        if sol is None:
            sol = solver.solve(sub, order)
            if use_disk:
                _save(path, sol.values)
                sol = solver.attach(sub, np.load(path, mmap_mode="r"), order)
        parts.append(Part(name, column, sol, sub))
    exact, method = method_of(rs)
    st = Strategy(rs, parts, exact, method)
    if rs.variant.saved_throws:
        from .advice import saved_throw_value

        st.throw_value = saved_throw_value(st)
    return st


class _Cache:
    """Built-in strategies (pinned) and an LRU of the others, with per-key build locks."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pinned: dict[str, Strategy] = {}
        self.lru: OrderedDict[str, Strategy] = OrderedDict()
        self.building: dict[str, threading.Lock] = {}

    def get(self, rs: RuleSet) -> Strategy:
        key = rs.fingerprint
        builtin = _is_builtin(rs)
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
                st = build_strategy(rs, use_disk=builtin)
                with self.lock:
                    if builtin:
                        self.pinned[key] = st
                    else:
                        self.lru[key] = st
                        while len(self.lru) > LRU_SIZE:
                            self.lru.popitem(last=False)
            with self.lock:
                self.building.pop(key, None)
        return st

    def cached(self, rs: RuleSet) -> Strategy | None:
        with self.lock:
            st = self.pinned.get(rs.fingerprint) or self.lru.get(rs.fingerprint)
            if st is not None and rs.fingerprint in self.lru:
                self.lru.move_to_end(rs.fingerprint)
            return st

    def ready(self, rs: RuleSet) -> bool:
        with self.lock:
            if rs.fingerprint in self.pinned:
                return True
        return all(_file(rs, name).exists() for name in _part_names(rs))


_CACHE = _Cache()
_PART_NAMES: dict[str, list[str]] = {}


def _part_names(rs: RuleSet) -> list[str]:
    names = _PART_NAMES.get(rs.fingerprint)
    if names is None:
        names = _PART_NAMES[rs.fingerprint] = [name for name, *_ in plan(rs)]
    return names


@atexit.register
def _stop_builds() -> None:
    """Let a build still running at exit stop at its next level instead of mid-kernel."""
    solver.CANCEL.set()


def _is_builtin(rs: RuleSet) -> bool:
    return rs.fingerprint == effective_rules(rs.variant.id).fingerprint


def strategy(rs: RuleSet) -> Strategy:
    """The strategy of a RuleSet: cached, loaded from disk, or built now."""
    return _CACHE.get(rs)


def status() -> dict[str, bool]:
    """Built-in variant id -> whether its table is ready (in memory or on disk)."""
    return {vid: _CACHE.ready(effective_rules(vid)) for vid in VARIANT_IDS}


def warm(variants: list[str] | tuple[str, ...] | None = None) -> dict[str, float]:
    """Build or load the tables of built-in variants (all by default); seconds per variant."""
    import time

    out = {}
    ids = list(variants or VARIANT_IDS)
    for vid in ids:
        t = time.perf_counter()
        strategy(effective_rules(vid))
        out[vid] = time.perf_counter() - t
    if ids:
        # compile (or load from the numba cache) the query kernels too, so that a process
        # that warms up before forking workers answers its first suggestion at full speed
        from .advice import suggest

        rs = effective_rules(ids[0])
        suggest(rs, [1] * rs.variant.dice, 1)
    return out


def clear_cache() -> None:
    """Forget every in-memory strategy (tests)."""
    with _CACHE.lock:
        _CACHE.pinned.clear()
        _CACHE.lru.clear()
