"""The advisor as the web layer and the command line use it: settings in, suggestions out.

`Advisor` owns a table store and a strategy cache configured by the caller (the application
factory passes the service's settings; nothing is read from the environment here).
"""

from __future__ import annotations

import atexit
import time
from pathlib import Path

from ..domain.rules import RuleSet, effective_rules
from ..domain.scoring import Sheet
from ..domain.variants import VARIANT_IDS
from . import solver
from .advice import Suggestion, suggest
from .cache import StrategyCache
from .store import TableStore
from .strategy import Strategy


class Advisor:
    """Optimal-move advice for every variant, with tables cached per table of rules.

    `table_dir`: where the built-in variants' tables are written and memory-mapped from;
    `cache_size`: how many house-rules strategies stay in memory (LRU);
    `threads`: threads a table build uses (0: every CPU).
    """

    def __init__(self, table_dir: str | Path, cache_size: int = 8, threads: int = 0) -> None:
        self.store = TableStore(table_dir)
        self.cache = StrategyCache(self.store, cache_size, threads)

    def strategy(self, rs: RuleSet) -> Strategy:
        """The strategy of a table of rules: cached, loaded from disk, or built now."""
        return self.cache.get(rs)

    def suggest(self, rs: RuleSet, dice: list[int], throw: int, sheet: Sheet | None = None,
                em_baixo: bool = False) -> Suggestion:
        """The best action for a position and every alternative (see `advice.suggest`)."""
        return suggest(self.strategy(rs), dice, throw, sheet, em_baixo)

    def status(self) -> dict[str, bool]:
        """Built-in variant id -> whether its table is ready (in memory or on disk)."""
        return {vid: self.cache.ready(effective_rules(vid)) for vid in VARIANT_IDS}

    def warm(self, variants: list[str] | tuple[str, ...] | None = None) -> dict[str, float]:
        """Build or load the tables of built-in variants (all by default); seconds each.

        Also compiles (or loads from numba's cache) the query kernels, so that a process that
        warms up before forking workers answers its first suggestion at full speed.
        """
        out = {}
        ids = list(variants or VARIANT_IDS)
        for vid in ids:
            started = time.perf_counter()
            self.strategy(effective_rules(vid))
            out[vid] = time.perf_counter() - started
        if ids:
            rs = effective_rules(ids[0])
            self.suggest(rs, [1] * rs.variant.dice, 1)
        return out


@atexit.register
def _stop_builds() -> None:
    """Let a build still running at exit stop at its next level instead of mid-kernel."""
    solver.CANCEL.set()
