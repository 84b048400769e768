"""The advisor as the web layer and the command line use it: settings in, suggestions out.

`Advisor` owns the table stores and the strategies' cache, configured by the caller (the application
factory passes the service's settings; nothing is read from the environment here), and, for
background builds, the pod's build queue (`tables/build_process.py`).
"""

from __future__ import annotations

import atexit
import time
from collections.abc import Callable
from pathlib import Path

from ...domain.rules import RuleSet, effective_rules
from ...domain.scoring import Sheet, empty_sheet
from ...domain.variants import VARIANT_IDS
from ..kernels.threads import cpu_workers
from ..solving import solver
from ..solving.strategy import Strategy
from ..tables.build_process import BuildQueue, await_build
from ..tables.cache import TableCache
from ..tables.store import StoreChain, TableStore, is_builtin
from ..tables.strategies import build_strategy, part_names, strategy_arrays, strategy_of
from .bots import LEVELS, bot_move, position_rng
from .moves import RankedMove, Suggestion, check_position, suggest

#: Seconds to build each built-in variant's table with one thread (2-core machine of the
#: README's benchmarks, rounded up), and to compile the solver's kernels when numba's cache
#: does not hold them: the start-up log line's estimate (`service.warmup`).
BUILD_SECONDS = {"yahtzee": 1.0, "yahtzee_basic": 0.6, "kniffel": 1.0, "yams": 0.6,
                 "yatzy": 2.5, "maxi_yatzy": 2.0}
COMPILE_SECONDS = 15.0


class Advisor:
    """Optimal-move advice for every variant, with tables cached per table of rules.

    `table_dir`: where the built-in variants' tables are written and memory-mapped from;
    `cache_size`: how many house-rules strategies stay in memory (LRU);
    `threads`: threads a table build uses (0: every CPU);
    `builds`: the pod's build queue: a table not on disk is built by the build process
    while the request waits up to `build_wait` seconds (then `TableBuilding`). None: built
    inside the call.
    `gate(wait)`, when set, is called before any table is used: while the server warms up
    in the background it waits up to `wait` seconds, then raises `TableBuilding`
    (`service.warmup.Warmup.ensure`).
    """

    def __init__(self, table_dir: str | Path, cache_size: int = 8, threads: int = 0,
                 builds: BuildQueue | None = None, build_wait: float = 1.0) -> None:
        self.stores = StoreChain(TableStore(table_dir),
                                 builds.store if builds is not None else None)
        self.builds = builds
        self.build_wait = build_wait
        self.threads = threads
        self.cache: TableCache[Strategy] = TableCache(self.stores, cache_size)
        self.gate: Callable[[float], None] | None = None

    @property
    def store(self) -> TableStore:
        """The built-in variants' table directory."""
        return self.stores.store

    def strategy(self, rs: RuleSet, client: str = "", kind: str = "values") -> Strategy:
        """The strategy of a table of rules: cached, loaded from disk, or built.

        With background builds, a table not on disk is queued for the build process
        (`client` names who asked, for the per-client limit) and this waits up to
        `build_wait` seconds for it; then raises `TableBuilding`, or `BuildQueueFull` (also
        after `build_wait`) when the queue has no room, or `BuildFailed`. Without, it is
        built now, in this process. `kind` is the job queued: "moments" for a caller that
        needs the moment tables next (`strategies.build_moments` makes both in one pass).
        """
        if self.gate is not None:
            self.gate(self.build_wait)
        builds = self.builds
        if builds is None:
            return self._strategy(rs)
        return self._strategy(rs, lambda load: await_build(
            builds, rs, load, kind=kind, builtin=is_builtin(rs), client=client,
            wait=self.build_wait))

    def _strategy(self, rs: RuleSet,
                  elsewhere: Callable[[Callable[[], Strategy | None]], Strategy] | None = None
                  ) -> Strategy:
        """The strategy from the cache, the stores, `elsewhere` (the build process) or built
        here (`TableCache.get`)."""
        return self.cache.get(rs, rs.fingerprint, lambda: build_strategy(rs, None, self.threads),
                              files=lambda: part_names(rs), make=lambda a: strategy_of(rs, a),
                              arrays=strategy_arrays, elsewhere=elsewhere)

    def suggest(self, rs: RuleSet, dice: list[int], throw: int, sheet: Sheet | None = None,
                em_baixo: bool = False, client: str = "") -> Suggestion:
        """The best move for a position and every move (see `moves.suggest`).

        The position is checked first: a request with no move to suggest is refused before
        its table is fetched, or queued to be built."""
        sheet = sheet or empty_sheet(rs)
        checked = check_position(rs, dice, throw, sheet, em_baixo)
        return suggest(self.strategy(rs, client), dice, throw, sheet, em_baixo, checked)

    def bot(self, rs: RuleSet, ranked: Suggestion, dice: list[int], throw: int,
            sheet: Sheet | None = None, em_baixo: bool = False, level: str = "expert",
            seed: int = 0) -> RankedMove:
        """The move a computer player of `level` (`bots.LEVELS`) makes in a position whose
        moves are `ranked` (`suggest`, or an objective's `rank`), drawn with `seed` (the
        same position and seed, the same move)."""
        rng = position_rng(seed, rs.fingerprint, dice, throw, sheet or empty_sheet(rs),
                           em_baixo, level)
        return bot_move(rs, ranked, LEVELS[level], rng)

    def ready(self, rs: RuleSet) -> bool:
        """Whether the strategy of a table of rules is in memory or on disk (no build)."""
        return self.cache.ready(rs, rs.fingerprint, lambda: part_names(rs))

    def status(self) -> dict[str, bool]:
        """Built-in variant id -> whether its table is ready (in memory or on disk)."""
        return {vid: self.ready(effective_rules(vid)) for vid in VARIANT_IDS}

    def build_estimate(self, variants: list[str]) -> float:
        """Rough seconds to build these built-in variants' tables here (a log line's hint)."""
        threads = cpu_workers(self.threads)
        return sum(BUILD_SECONDS.get(v, 0.1) for v in variants) / threads

    def warm(self, variants: list[str] | tuple[str, ...] | None = None) -> dict[str, float]:
        """Build or load the tables of built-in variants (all by default); seconds each.

        Also compiles (or loads from numba's cache) the query kernels, so that a process that
        warms up before forking workers answers its first suggestion at full speed.
        """
        out = {}
        ids = list(variants or VARIANT_IDS)
        for vid in ids:
            started = time.perf_counter()
            self._strategy(effective_rules(vid))  # built here, whatever `builds` says
            out[vid] = time.perf_counter() - started
        if ids:
            rs = effective_rules(ids[0])
            suggest(self._strategy(rs), [1] * rs.variant.dice, 1)
        return out


@atexit.register
def _stop_builds() -> None:
    """Let a build still running at exit stop at its next level instead of mid-kernel."""
    solver.CANCEL.set()
