"""Analysis on top of the advisor: what a position is worth (mean, standard deviation, the
distribution of the final score), coaching for keeps, and the caches these need.

`Analyst(advisor)` adds to an `Advisor`, in the same kind of cache (`tables.cache.TableCache`)
and through the same stores: the float64 mean and second-moment tables of every part (made
on first use by the pod's build process, as the value tables are, and memory-mapped from
disk: `TableBuilding` meanwhile; built here by an advisor without a build queue), and exact
distributions from turn starts. Game analysis (`games.py`) and win probabilities
(`kernels/winprob.py`) use it too.

Where the distribution is exact and where it is sampled:

- one-part (exact-method) strategies: always exact, from any position, under any rules. The
  start of a game is computed once per table of rules (beside the moment tables, by the
  pod's build process; with the tables for a built-in variant); every turn start of the
  first turns is in a table made ahead for the built-in variants (`early_futures`:
  `distribution.futures`, the distributions of the points still to come, whose points so
  far only shift them), and a position in the middle of such a turn combines the turn's
  outcomes with it; any other position is a forward pass over the states reachable from it
  (`distribution.forward`: the reachable set shrinks fast as boxes fill). Mean and SD are
  the distribution's own: one policy behind every figure (`moments.py` follows it too);
- approximate methods (column sheets, Maxi Yatzy): games of the advisor's own play
  (`simulate.py`) seeded by the position, `samples_approximate` of them (default 400), on
  every CPU, with the sampling error of the mean stated.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...domain.consistency import check_sheet
from ...domain.errors import InvalidInput
from ...domain.games import apply_turn
from ...domain.rules import RuleSet, effective_rules
from ...domain.scoring import Sheet, empty_sheet, parse_scorecard, score_hand, score_sheet
from ..advice import moves as advice
from ..advice.advisor import Advisor
from ..advice.moves import Suggestion, suggest
from ..kernels import selfplay
from ..kernels.distribution import (
    EARLY_METHOD,
    EARLY_TURN_METHOD,
    START_METHOD,
    Distribution,
    Futures,
    early_depth,
    first_turn_records,
    forward,
    futures,
    gain_bits,
    successor_futures,
    turn_successors,
)
from ..kernels.model import instant_chance, instant_hands, reachable_states
from ..kernels.moments import Moments
from ..kernels.threads import cpu_workers, kernel_pool
from ..kernels.winprob import (
    ASSUMPTIONS,
    MAX_WIN_OPEN,
    Chances,
    WinTables,
    chances,
    gain_bounds,
    instant_times,
    normal_cdf,
    survival,
    utility,
    win_tables,
)
from ..solving.methods import method_for
from ..solving.positions import Position, part_value
from ..solving.solver import solve_moments
from ..solving.strategy import Part, Strategy
from ..tables.build_process import BuildQueueFull, await_build, current_client
from ..tables.cache import TableCache
from ..tables.store import is_builtin
from ..tables.strategies import (
    early_names,
    moment_arrays,
    moment_names,
    moments_of,
    part_names,
    start_name,
    start_state,
)
from .simulate import compile_play, simulate
from .turn_view import Tables, TurnView, start_moments

#: Percentiles every position value reports.
PERCENTILES = (5, 25, 50, 75, 95)


#: Seconds to compile `Analyst.compile_kernels`'s kernels when numba's cache does not hold
#: them (2-core machine, rounded up): the start-up log line's estimate.
ANALYSIS_COMPILE_SECONDS = 90.0


#: Seconds `Analyst.warm` takes for each built-in variant on a first start (2 shared cores,
#: rounded up): the start-up log line's estimate.
ANALYSIS_SECONDS = {"yahtzee": 25.0, "yahtzee_basic": 12.0, "kniffel": 22.0, "yams": 12.0,
                    "yatzy": 50.0, "maxi_yatzy": 4.0}


def analysis_kernels_cached() -> bool:
    """Whether numba's cache holds the analysis kernels (else they compile first)."""
    try:
        return Path(selfplay.play._cache._cache_file._index_path).exists()
    except AttributeError:  # numba's internals moved: assume the slow case
        return False


#: Time budget of a sampled distribution (approximate methods): games are played until the
#: sample size or this many seconds, whichever comes first (at least two chunks).
SAMPLE_SECONDS = 1.5

#: Time budget of all the sampled distributions of one win-probability request together
#: (approximate methods: 8 players must not take 8 budgets).
WIN_SAMPLE_SECONDS = 0.12

#: The table of distributions from the first turns' starts (`early_futures`) holds the
#: first levels whose turn starts lead to more than about `EARLY_REACH` reachable states
#: (`distribution.early_depth`: YAHTZEE, Kniffel and the basic sheet the first four turns,
#: Yatzy five), at most `EARLY_BYTES` (YAHTZEE 49 MB, Yatzy 70 MB, Kniffel 21 MB, the basic
#: sheet and Yam's 12 MB, the others under 1 MB): any later turn start is a forward pass
#: over some 10,000 states at most (about 0.1 s on 2 cores).
EARLY_REACH = 30_000
EARLY_BYTES = 96 << 20


@dataclass
class PositionValue:
    """What a position is worth under the advisor's play."""

    current_total: int
    mean: float
    sd: float
    exact: bool  # mean and sd exact (exact method)
    distribution: Distribution

    def as_dict(self, at_least: list[int], histogram: bool) -> dict[str, Any]:
        """Plain data for the API."""
        d = self.distribution
        out: dict[str, Any] = {
            "current_total": self.current_total,
            "expected_final_score": round(self.mean, 6),
            "sd": round(self.sd, 6),
            "exact": self.exact,
            "distribution": {
                "exact": d.exact, "method": d.method, "samples": d.samples,
                "standard_error": None if d.standard_error is None
                else round(d.standard_error, 6),
                "mean": round(d.mean, 6), "sd": round(d.sd, 6),
                "min": d.lo, "max": d.lo + len(d.probs) - 1,
                "percentiles": {str(q): d.percentile(q) for q in PERCENTILES},
                "at_least": [{"score": t, "probability": round(d.p_at_least(t), 12)}
                             for t in at_least],
            },
        }
        if histogram:
            out["distribution"]["histogram"] = [
                {"score": int(s), "probability": float(p)}
                for s, p in zip(d.totals, d.probs, strict=True) if p > 0]
        return out


class Analyst:
    """Position values, distributions and coaching for an `Advisor`'s strategies."""

    def __init__(self, advisor: Advisor, lru_size: int = 8, threads: int = 0,
                 samples_approximate: int = 400,
                 sample_seconds: float = SAMPLE_SECONDS) -> None:
        self.advisor = advisor
        stores = advisor.stores
        #: (fingerprint, part name) -> the part's moment tables (4 parts to a column sheet)
        self.moment_cache: TableCache[Moments] = TableCache(stores, lru_size * 4)
        #: (fingerprint, part state) -> the exact distribution from that turn start
        self.dists: TableCache[Distribution] = TableCache(stores, 256)
        #: (fingerprint, part name) -> the distributions from the first turns' starts
        self.early: TableCache[Futures] = TableCache(stores, lru_size)
        #: (fingerprint, part state, instant) -> the distributions from every state one
        #: turn leads to (a position's moves, played to win; some 0.1-1 MB each)
        self.successors: TableCache[Futures] = TableCache(stores, 8)
        #: fingerprint -> a one-part strategy's reachable states, per level
        self._reach: TableCache[list[np.ndarray]] = TableCache(stores, 32)
        #: (fingerprint, own state, digest of the win shares of the final totals and of the
        #: instant wins' worth) -> `winprob.win_tables`: the same all through a turn (at
        #: most about 1 MB each: some 300 states by some 400 totals with four open boxes)
        self.win_cache: TableCache[WinTables] = TableCache(stores, 8)
        self.threads = threads
        self.samples_approximate = samples_approximate
        self.sample_seconds = sample_seconds

    # ----------------------------------------------------------------------- tables

    def strategy(self, rs: RuleSet) -> Strategy:
        """The advisor's strategy for the rules."""
        return self.advisor.strategy(rs)

    def moments(self, st: Strategy, here: bool = False) -> list[Moments]:
        """The moment tables of every part of a strategy: memory, disk, else built by the
        pod's build process (`TableBuilding` while it works) or, with `here` or without a
        build queue, in this process (and saved, for a built-in variant)."""
        rs, builds = st.rs, self.advisor.builds
        elsewhere = None
        if builds is not None and not here:  # the pod's build process makes them
            def elsewhere(load: Callable[[], Moments | None]) -> Moments:
                return await_build(builds, rs, load, kind="moments", builtin=is_builtin(rs),
                                   wait=self.advisor.build_wait)
        return [self._part_moments(rs, p, elsewhere) for p in st.parts]

    def _part_moments(self, rs: RuleSet, part: Part,
                      elsewhere: Callable[[Callable[[], Moments | None]], Moments] | None
                      ) -> Moments:
        return self.moment_cache.get(
            rs, (rs.fingerprint, part.name), lambda: solve_moments(part.solution, self.threads),
            files=lambda: moment_names(part.name), make=lambda a: moments_of(part, a),
            arrays=lambda mo: moment_arrays(part, mo), elsewhere=elsewhere)

    def tables(self, st: Strategy, kind: str = "moments") -> Callable[[int], Tables]:
        """Per-part tables for a `TurnView`: the moments, or the solver's values."""
        if kind == "values":
            return lambda i: (st.parts[i].solution.values, st.parts[i].solution.values)
        mos = self.moments(st)
        return lambda i: (mos[i].m1, mos[i].m2)

    def position(self, st: Strategy, sheet: Sheet) -> Position:
        """A checked sheet as a `Position` (raises when it cannot occur in a game)."""
        pos = Position.of(st, sheet)
        for p, s in zip(st.parts, pos.states, strict=True):
            part_value(p, *s[:3])
        return pos

    # ----------------------------------------------------------------------- coaching

    def coach(self, st: Strategy, sheet: Sheet, throw: int,
              keeps: list[tuple[tuple[int, ...], bool]]) -> list[dict[str, Any]]:
        """For each keep (scored faces, "em baixo"): where the turn ends, under the advisor's
        play of the rest of it: P(each box receives points), expected points of the turn."""
        pos = Position.of(st, sheet)
        view = TurnView(pos, self.tables(st, "values"), throw)
        index = st.parts[0].solution.model.keeps.index
        mirror = view.kd.mirror
        out = []
        for keep, em_baixo in keeps:
            k = index[keep]
            if em_baixo:
                k = int(mirror[k])
            out.append(self.turn_outlook(st, view, k, throw))
        return out

    def turn_outlook(self, st: Strategy, view: TurnView, k: int, throw: int
                     ) -> dict[str, Any]:
        """Where the turn ends after keeping k (effective keep id) after `throw`."""
        s = view.outcomes_of_keep(k, throw)
        _, _, ch = view.terms[False]
        mass = s[throw + 1:].sum(axis=0)  # every later throw scores with "later" rules
        expected = float(mass @ ch[3])
        boxes: dict[tuple[int, int], float] = {}
        for h in np.flatnonzero((mass > 0) & (ch[2] > 0)):
            key = (int(ch[0, h]), int(ch[1, h]))
            boxes[key] = boxes.get(key, 0.0) + float(mass[h])
        columns = bool(st.rs.variant.columns)
        listed = []
        for (pi, bi), p in sorted(boxes.items(), key=lambda kv: -kv[1]):
            part = st.parts[pi]
            listed.append({"box": part.solution.model.box_ids[bi],
                           "column": part.column + 1 if columns else None,
                           "probability": round(p, 9)})
        return {"expected_points": round(expected, 6), "boxes_with_points": listed}

    # ----------------------------------------------------------------------- values

    def position_value(self, rs: RuleSet, sheet: Sheet | None, dice: list[int] | None,
                       throw: int | None, em_baixo: bool = False,
                       sample_seconds: float | None = None,
                       instant: bool = False) -> PositionValue:
        """Mean, standard deviation and distribution of the final score from a position:
        a sheet at the start of a turn, or with `dice` after throw `throw` of the turn.
        Exact strategies: the exact distribution (see the module's docstring), whose mean
        and SD are the answer's. Approximate methods: sampled for at most `sample_seconds`
        (default: the analyst's). `instant`, where a first throw can win the game at once:
        the distribution of the totals of the games without such a win, P(total = t and
        none), which sums to the chance of none (`distribution.forward`); mean and sd stay
        those of every game (the moment tables')."""
        sheet = sheet or empty_sheet(rs)
        hand = check_position(rs, sheet, dice, throw, em_baixo)
        if hand < 0 and not instant and sheet.open_boxes == len(rs.variant.box_ids):
            self._queue_start(rs)
        st = self.strategy(rs)  # after the checks: a refused position builds no table
        pos = self.position(st, sheet)
        t = throw or 1
        if st.exact:
            wins = instant_hands(rs) if instant else None
            dist = self._exact(st, pos, hand, t, wins)
            if wins is None:
                return PositionValue(pos.total, dist.mean, dist.sd, True, dist)
            view = TurnView(pos, self.tables(st), t)
            if hand >= 0:
                m1, m2 = view.hand_value(hand, t)
            else:
                m1, m2 = view.mean_now, view.var_now + view.mean_now ** 2
            return PositionValue(pos.total, pos.total + m1,
                                 float(np.sqrt(max(0.0, m2 - m1 * m1))), True, dist)
        dist = self._sampled(st, pos, hand, t, sample_seconds)
        if instant and instant_hands(rs) is not None:
            return PositionValue(pos.total, dist.mean, dist.sd, False,
                                 _no_instant(dist, rs, pos, hand))
        return PositionValue(pos.total, dist.mean, dist.sd, False, dist)

    def _queue_start(self, rs: RuleSet) -> None:
        """The start of a game of rules whose value tables the build process has still to
        make: queue their analysis job (which makes the start distribution first) right
        behind them, so that the answer comes after one build queue, not two."""
        builds = self.advisor.builds
        if builds is None or not method_for(rs).exact or self.advisor.ready(rs):
            return
        with contextlib.suppress(BuildQueueFull):
            builds.submit(rs, current_client(), builtin=is_builtin(rs))
            builds.submit(rs, current_client(), builtin=is_builtin(rs), kind="moments")

    def reachable_levels(self, st: Strategy) -> list[np.ndarray]:
        """Every reachable state (mask, upper code, flags) of a one-part strategy, per number
        of filled boxes (`model.reachable_states`, kept: it takes tens of milliseconds)."""
        return self._reach.get(st.rs, st.rs.fingerprint,
                               lambda: reachable_states(st.parts[0].solution.model))

    def _exact(self, st: Strategy, pos: Position, hand: int, throw: int,
               instant: np.ndarray | None = None) -> Distribution:
        """The exact distribution of the final total from a position of a one-part
        strategy (with `hand` after `throw`, or at a turn start: hand -1): the start of a
        game's, a table's (`early_futures`), or a forward pass's (kept for a turn start).
        `instant`: of the games without a win at once (`distribution.forward`)."""
        state = tuple(int(x) for x in pos.states[0][:3])
        sol = st.parts[0].solution
        early = self.early_futures(st) if instant is None else None
        if hand < 0:
            if instant is None:
                found = None if early is None else early.get(flat_index(sol, state), pos.total)
                if found is not None:
                    found.method = EARLY_METHOD
                    return found
                if state == start_state(st):  # any rules (the build process makes it)
                    start = self.start_distribution(st)
                    if start is not None:
                        found = _shifted(start, pos.total, states=0)
                        found.method = START_METHOD
                        return found
            visited = []

            def compute() -> Distribution:
                dist = self.exact_distribution(st, state, instant=instant)
                visited.append(dist.states)
                return dist

            found = _shifted(self._distribution(st, state, compute, instant is not None),
                             pos.total, states=visited[0] if visited else 0)
            return found
        records = first_turn_records(sol.kd, sol.values, state, hand, throw)
        if early is not None:
            found = early.combine(*records, gain_bits(sol.kd), pos.total)
            if found is not None:
                found.method = EARLY_TURN_METHOD
                return found
        return _shifted(forward(sol.kd, sol.values, state, 0, records, self.threads, instant),
                        pos.total)

    def early_futures(self, st: Strategy, here: bool = False) -> Futures | None:
        """The distributions of the points still to come from every reachable turn start of
        a one-part strategy's first turns (`distribution.futures`, `EARLY_REACH`): from
        memory or disk; with `here`, computed (half a minute and some 800 MB for the
        largest sheets: `warm` makes them for the built-in variants) and kept (on disk
        for a built-in variant). None otherwise: other positions take a forward pass."""
        if len(st.parts) != 1:
            return None
        part = st.parts[0]
        key = (st.rs.fingerprint, part.name)
        files = lambda: early_names(part.name)  # noqa: E731
        if not here:
            return self.early.load(st.rs, key, files, Futures.of)
        sol = part.solution
        levels = self.reachable_levels(st)
        deepest = early_depth([len(lv) for lv in levels], EARLY_REACH)
        return self.early.get(
            st.rs, key, lambda: futures(sol.kd, sol.values, levels, EARLY_BYTES, self.threads,
                                        deepest=deepest),
            files=files, make=Futures.of,
            arrays=lambda f: dict(zip(early_names(part.name), f.arrays(), strict=True)))

    def successor_futures(self, st: Strategy, state: tuple[int, int, int],
                          instant: np.ndarray | None = None) -> Futures:
        """The distributions of the points still to come from every state one turn from a
        one-part strategy's `state` leads to (`distribution.turn_successors`): from the
        early table when it holds them all, else computed (`distribution.successor_futures`)
        and kept for the turn. `instant`: of the games without a win at once."""
        sol = st.parts[0].solution
        kd, values = sol.kd, sol.values
        nu, nf = values.shape[1], values.shape[2]
        sources = turn_successors(kd, nu, nf, *state)
        early = self.early_futures(st) if instant is None else None
        if early is not None and np.all(early.slots(sources) >= 0):
            return early
        key = (st.rs.fingerprint, state, instant is not None)
        return self.successors.get(
            st.rs, key, lambda: successor_futures(kd, values, sources, self.threads, instant))

    def _start_files(self, st: Strategy, state: tuple[int, int, int]) -> tuple[str, ...]:
        """The file a turn start's distribution is kept in: only the start of a game is
        (beside the value tables of a built-in variant, else in the build directory); any
        other lives in memory."""
        if len(st.parts) == 1 and state == start_state(st):
            return (start_name(st.parts[0].name),)
        return ()

    def _cached(self, st: Strategy, state: tuple[int, int, int]) -> Distribution | None:
        """A turn start's distribution from memory, or (the start of a game of a built-in
        variant) from the table directory."""
        return self.dists.load(st.rs, (st.rs.fingerprint, state),
                               lambda: self._start_files(st, state),
                               lambda a: Distribution.from_array(a[0]))

    def _distribution(self, st: Strategy, state: tuple[int, int, int],
                      compute: Callable[[], Distribution], instant: bool = False
                      ) -> Distribution:
        """A turn start's distribution: cached, else `compute()`d once and kept (on disk
        too, for the start of a game of a built-in variant; `instant`, the totals of the
        games without an instant win, in memory only)."""
        def files() -> tuple[str, ...]:
            return () if instant else self._start_files(st, state)

        key = (st.rs.fingerprint, state, "instant") if instant else (st.rs.fingerprint, state)
        return self.dists.get(st.rs, key, compute, files=files,
                              make=lambda a: Distribution.from_array(a[0]),
                              arrays=lambda d: dict.fromkeys(files(), d.to_array()))

    def start_distribution(self, st: Strategy, here: bool = False) -> Distribution | None:
        """The exact distribution of the final total from the start of a game (one-part
        strategies; None for the approximate methods), for any rules: cached, on disk, else
        made by the pod's build process with the moment tables (`TableBuilding` while it
        works) or, with `here` or without a build queue, computed here and kept (seconds for
        the larger sheets: `warm` runs it for the built-in variants)."""
        if len(st.parts) != 1:
            return None
        state = start_state(st)
        builds = self.advisor.builds
        if builds is not None and not here:
            found = self._cached(st, state)
            if found is not None:
                return found
            return await_build(builds, st.rs, lambda: self._cached(st, state), kind="moments",
                               builtin=is_builtin(st.rs), wait=self.advisor.build_wait)
        return self._distribution(st, state, lambda: self.exact_distribution(st, state))

    def warm(self, variants: list[str] | tuple[str, ...], moments: bool = True
             ) -> dict[str, float]:
        """Build the analysis tables of built-in variants here, each kept on disk beside
        the value tables: the distributions from the first turns' starts (`early_futures`,
        one-part strategies), the start distribution (taken from them) and (`moments`) the
        moment tables: what `python -m service.advisor build` and the server's start make,
        so that no request waits for them. Seconds each."""
        out = {}
        for vid in variants:
            began = time.perf_counter()
            st = self.strategy(effective_rules(vid))
            early = self.early_futures(st, here=True)
            if early is not None:
                state = start_state(st)
                flat = flat_index(st.parts[0].solution, state)
                self._distribution(st, state, lambda e=early, f=flat: e.get(f))
            if moments:
                self.moments(st, here=True)
            self.start_distribution(st, here=True)
            out[vid] = time.perf_counter() - began
        return out

    def analysis_missing(self, variants: list[str] | tuple[str, ...]) -> list[str]:
        """The built-in variants among `variants` whose analysis tables (`warm`) are not all
        on disk."""
        out = []
        for vid in variants:
            rs = effective_rules(vid)
            names = [n for p in part_names(rs) for n in moment_names(p)]
            if len(names) == 2:  # one part: the start and the first turns' distributions
                part = part_names(rs)[0]
                names += [start_name(part), *early_names(part)]
            if not self.advisor.stores.has(rs, names):
                out.append(vid)
        return out

    @staticmethod
    def analysis_estimate(variants: list[str] | tuple[str, ...]) -> float:
        """Rough seconds to build these built-in variants' analysis tables here (`warm`, 2
        cores; a log line's hint)."""
        return sum(ANALYSIS_SECONDS.get(v, 1.0) for v in variants)

    def compile_kernels(self, variants: list[str] | tuple[str, ...] = ()) -> float:
        """Run every analysis kernel once on small positions of a built-in variant solved
        exactly (the first of `variants` that is, else yahtzee_basic), so that numba
        compiles them, or loads them from its cache, now: the first compile takes about a
        minute, and a request must not wait for it (nor, in a gevent worker, every other
        connection of that worker). Run before the workers fork, the compiled code is
        theirs too. Returns the seconds it took."""
        began = time.perf_counter()
        # the first of `variants` solved exactly (their tables are warm), else the smallest
        st = next((st for st in (self.strategy(effective_rules(v)) for v in variants)
                   if st.exact), None) or self.strategy(effective_rules("yahtzee_basic"))
        rs = st.rs
        ids = rs.variant.box_ids
        late = parse_scorecard(rs, {"boxes": dict.fromkeys(ids[:-2], 0)})
        middle = parse_scorecard(rs, {"boxes": dict.fromkeys(ids[:-6], 0)})
        dice = [1, 2, 3, 4, 5, 6][:rs.variant.dice]
        self.moments(st, here=True)  # seconds, once: then on disk beside the tables
        self.position_value(rs, late, None, None)  # the exact forward pass
        self.position_value(rs, late, dice, 2)  # ... from a hand mid-turn
        win_probability(self, rs, [late, late], 0, dice, 2)  # chances, the winning move
        win_probability(self, rs, [middle, late], 0, dice, 2)  # moves' distributions
        self.coach(st, late, 2, [((), False)])
        compile_play(st)  # games of several parts (columns, sections)
        return time.perf_counter() - began

    def exact_distribution(self, st: Strategy, state: tuple[int, int, int], hand: int = -1,
                           throw: int = 1, instant: np.ndarray | None = None
                           ) -> Distribution:
        """Exact distribution of the points still to come from a part state (at the start of
        a turn, or at `hand` after throw `throw`); `instant`: of the games without an
        instant win (`distribution.forward`)."""
        sol = st.parts[0].solution
        first_turn = None
        if hand >= 0:
            first_turn = first_turn_records(sol.kd, sol.values, state, hand, throw)
        return forward(sol.kd, sol.values, state, 0, first_turn, self.threads, instant)

    def _sampled(self, st: Strategy, pos: Position, hand: int, throw: int,
                 seconds: float | None = None) -> Distribution:
        """Games of an approximate method's own play from the position (several parts,
        played one game at a time)."""
        seed = _seed(st.rs.fingerprint, pos, hand, throw)
        n = self.samples_approximate
        # Games are played in chunks on every CPU until `n` or the time budget (a request
        # must not hold its worker for long), at least two chunks a thread; the answer
        # states how many were played. Chunk k is seeded with seed + k and the chunks are
        # taken in order, so the games do not depend on the threads.
        chunk = max(1, n // 64)
        seconds = self.sample_seconds if seconds is None else seconds
        workers = cpu_workers(self.threads)
        started = time.perf_counter()
        runs: list[np.ndarray] = []
        starts = list(range(0, n, chunk))
        if workers < 2:
            for k in starts:
                runs.append(simulate(st, pos, min(chunk, n - k), seed + k, throw, hand))
                if len(runs) >= 2 and time.perf_counter() - started > seconds:
                    break
        else:
            # a chunk a thread at a time (`threads.kernel_pool`, shared by the process's
            # requests), the budget looked at between two waves
            pool = kernel_pool()
            for w in range(0, len(starts), workers):
                wave = [pool.submit(simulate, st, pos, min(chunk, n - k), seed + k, throw, hand)
                        for k in starts[w:w + workers]]
                runs.extend(fut.result() for fut in wave)
                if len(runs) >= 2 * workers and time.perf_counter() - started > seconds:
                    break
        finals = np.concatenate(runs)
        lo = int(finals.min())
        probs = np.bincount(finals - lo).astype(float) / len(finals)
        se = float(finals.std(ddof=1) / np.sqrt(len(finals)))
        return Distribution(lo=lo, probs=probs, exact=False,
                            method=f"{len(finals)} games of the advisor's own play from "
                                   f"this position (seeded); the standard error applies "
                                   f"to the mean, percentiles are sample percentiles",
                            samples=len(finals), standard_error=se)


def check_position(rs: RuleSet, sheet: Sheet, dice: list[int] | None, throw: int | None,
                   em_baixo: bool = False) -> int:
    """`moves.check_position` for a position to value: the hand's index (-1 without dice)."""
    hs, _ = advice.check_position(rs, dice, throw, sheet, em_baixo)
    return -1 if hs is None else rs.hand_index[hs.scored_dice]


def player_values(analyst: Analyst, rs: RuleSet, sheets: list[Sheet], to_move: int,
                  dice: list[int] | None, throw: int | None, em_baixo: bool,
                  where: Callable[[int], str]) -> list[PositionValue]:
    """Every player's position value (`Analyst.position_value`), where a first throw can win
    at once the totals of their games without one (`instant`). `where(i)`: the JSON pointer
    of player i's scorecard in the request, to name it in a problem.

    Players on the same position share one distribution; the sampled ones (approximate
    methods) share one time budget (`WIN_SAMPLE_SECONDS`): the request's time does not grow
    with the number of players."""
    def key(i: int) -> Any:
        if i == to_move and dice is not None:
            return i  # the player mid-turn: a position of their own
        sheet = sheets[i]
        return (sheet.saved_throws, sheet.won,
                tuple((tuple(sorted(c.boxes.items(), key=lambda kv: kv[0])),
                       c.five_of_a_kind_bonuses) for c in sheet.columns))

    keys = [key(i) for i in range(len(sheets))]
    distinct = list(dict.fromkeys(keys))

    def position(i: int) -> tuple[Sheet, list[int] | None, int | None, bool]:
        mine = i == to_move
        return (sheets[i], dice if mine else None, throw if mine else None,
                em_baixo if mine else False)

    def of_player(i: int, fn: Callable[[], Any]) -> Any:
        """fn(), a problem with player i's scorecard named as theirs."""
        try:
            return fn()
        except InvalidInput as err:
            raise InvalidInput([replace(p, pointer=p.pointer.replace(
                "/scorecard", where(i), 1)) for p in err.problems]) from None

    def finished(i: int) -> bool:
        """A player other than the one to move (-1: none is) whose sheet is full: their
        total is final (the last round of a game)."""
        return i != to_move and not sheets[i].won and _turns_left(sheets[i]) == 0

    # every position is checked before any table is fetched (or queued to be built); a
    # full sheet is its final total
    found: dict[Any, PositionValue] = {}
    for k in distinct:
        i = keys.index(k)
        if finished(i):
            total = of_player(i, lambda i=i: _final_total(rs, sheets[i]))
            found[k] = PositionValue(total, float(total), 0.0, True, Distribution(
                lo=total, probs=np.ones(1), method="the sheet is full: its total is final"))
        else:
            of_player(i, lambda i=i: check_position(rs, *position(i)))
    instant = instant_hands(rs) is not None
    deadline = time.perf_counter() + WIN_SAMPLE_SECONDS
    todo = [k for k in distinct if k not in found]
    for n, k in enumerate(todo):
        i = keys.index(k)
        seconds = max(0.0, deadline - time.perf_counter()) / (len(todo) - n)
        found[k] = of_player(i, lambda i=i, s=seconds: analyst.position_value(
            rs, *position(i), s, instant))
    return [found[k] for k in keys]


def _final_total(rs: RuleSet, sheet: Sheet) -> int:
    """The total of a full sheet, checked as every sheet is (`consistency.check_sheet`)."""
    check_sheet(rs, sheet)
    return int(score_sheet(rs, sheet)["total"])


def _instant_times(rs: RuleSet, sheets: list[Sheet], to_move: int, mid_turn: bool
                   ) -> list[np.ndarray] | None:
    """`winprob.instant_times` of the players (None where nothing wins at once)."""
    if instant_hands(rs) is None:
        return None
    return instant_times([_turns_left(sh) for sh in sheets], to_move, mid_turn,
                         instant_chance(rs))


def win_probability(analyst: Analyst, rs: RuleSet, sheets: list[Sheet], to_move: int = 0,
                    dice: list[int] | None = None, throw: int | None = None,
                    em_baixo: bool = False) -> dict[str, Any]:
    """Each player's chance of finishing first (see `winprob` for what is assumed), and
    with `dice` the winning move of the player to move (`win_move`)."""
    values = player_values(analyst, rs, sheets, to_move, dice, throw, em_baixo,
                           lambda i: f"/players/{i}/scorecard")
    times = _instant_times(rs, sheets, to_move, dice is not None)
    if dice is not None and _wins_now(rs, sheets[to_move], dice, throw, em_baixo):
        # the player to move stops and wins at once (decision 12)
        ch = [Chances(1.0, 0.0, 1.0) if i == to_move else Chances(0.0, 0.0, 0.0)
              for i in range(len(sheets))]
    else:
        ch = chances([v.distribution for v in values], times)
    exact = all(v.distribution.exact for v in values)
    move = None
    if dice is not None:
        others = [v.distribution for i, v in enumerate(values) if i != to_move]
        rest = None if times is None else [t for i, t in enumerate(times) if i != to_move]
        move = win_move(analyst, rs, sheets[to_move], dice, throw, em_baixo, others, rest)
    return {"exact": exact, "assumptions": ASSUMPTIONS, "move": move,
            "players": [{"expected_final_score": round(v.mean, 6), "sd": round(v.sd, 6),
                         "current_total": v.current_total,
                         "distribution_exact": v.distribution.exact,
                         "distribution_method": v.distribution.method,
                         "win": round(c.win, 9), "tie": round(c.tie, 9),
                         "first": round(c.first, 9), "share": round(c.share, 9)}
                        for v, c in zip(values, ch, strict=True)]}


def _turns_left(sheet: Sheet) -> int:
    """A player's turns left: one a box still open (0 once the game is won at once)."""
    if sheet.won:
        return 0
    return sheet.open_boxes


def _wins_now(rs: RuleSet, sheet: Sheet, dice: list[int], throw: int | None,
              em_baixo: bool) -> bool:
    """Whether the dice win the game at once if the player stops on them."""
    return (throw or 1) == 1 and score_hand(rs, dice, throw, sheet, em_baixo).wins_game


#: How `win_shares` values the moves, by whether it could do it exactly.
WIN_EXACT = ("exact: a backward induction over the player's own states and totals, the win "
             "share in place of points, against the others' distributions")
WIN_DISTRIBUTIONS = ("approximate (Pawlewicz's way): each move's exact distribution of the "
                     "final total with the advisor's expected-score play after it (the rest "
                     "of the turn, then the exact distributions from every state it leads "
                     "to), against the others' distributions; exact from {n} open boxes on "
                     "(one-column variants solved exactly)")
WIN_NORMAL = ("approximate: each move's final total taken as normal, with the mean and "
              "variance of the method's play after it (moment tables of its parts), against "
              "the others' distributions (column sheets, Maxi Yatzy)")


def win_shares(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int],
               throw: int | None, em_baixo: bool, sug: Suggestion,
               others: list[Distribution], instant: list[np.ndarray] | None = None,
               approximate: bool = False) -> tuple[list[float], bool, str]:
    """Each of `sug.alternatives`' expected share of the win against the others' final
    distributions, whether the shares are exact, and how they were made (`WIN_EXACT`,
    `WIN_DISTRIBUTIONS`, `WIN_NORMAL`).

    Exact (a backward induction over the player's own states and totals with the win share
    in place of points, the player maximising it from then on) for one-part strategies
    with at most `winprob.MAX_WIN_OPEN` open boxes. Before that, each move's exact
    distribution of the final total under the advisor's play after it
    (`_distribution_shares`); the approximate methods take it as normal
    (`_normal_shares`).

    `instant` (where a first throw can win at once): the others' `instant_times`, the
    player to move at slot 0; `others` are then the totals of their games without an
    instant win. A box written on dice that win at once wins (share 1); a later turn's
    first throw that wins at once is worth the chance that no one else has won before it.
    `approximate`: the distributions' shares wherever (to measure them against the exact
    ones)."""
    st = analyst.strategy(rs)
    pos = analyst.position(st, sheet)
    t = throw or 1
    now = sug.wins_game  # the suggestion scored the hand: stopping on it wins at once
    one_part = len(st.parts) == 1 and not rs.variant.saved_throws
    exact = one_part and pos.open_boxes <= MAX_WIN_OPEN and not approximate
    if one_part:
        kd = st.parts[0].solution.kd
        top = pos.total + gain_bounds(kd, pos.states[0][0])((1 << kd.nb) - 1) + 1
    else:
        top = pos.total + int(max(a.expected_final_score for a in sug.alternatives)
                              - pos.total) * 3 + 50
    if others:
        # an own total above every opponent's highest wins alone whatever comes next: one
        # column (the last, where higher totals are counted) holds them all
        top = max(pos.total + 1, min(top, max(d.lo + len(d.probs) for d in others) + 1))
    util = utility(others, pos.total, top, instant is not None)
    args = (analyst, st, pos, sheet, dice, t, em_baixo, sug, util, instant)
    if exact:
        shares, method = _exact_shares(*args), WIN_EXACT
    elif one_part:
        shares = _distribution_shares(*args)
        method = WIN_DISTRIBUTIONS.format(n=MAX_WIN_OPEN)
    else:
        shares, method = _normal_shares(*args), WIN_NORMAL
    if now:
        shares = [1.0 if a.action == "score" else v
                  for a, v in zip(sug.alternatives, shares, strict=True)]
    return shares, exact, method


def _own_instant(pos: Position, instant: list[np.ndarray] | None, later: int
                 ) -> np.ndarray | None:
    """Per turn from now (0 = this one), the chance that no one else has won at once before
    the player's turn: the worth of a win at once then (None where nothing wins at once).
    `later`: the turns looked at."""
    if instant is None:
        return None
    n = len(instant) + 1
    alive = np.ones(n * (later + 1))
    for times in instant:
        alive *= survival(times, len(alive))
    return alive[::n]  # the player to move's turns: slots 0, n, 2n, ...


def _exact_shares(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet,
                  dice: list[int], throw: int, em_baixo: bool, sug: Suggestion,
                  util: np.ndarray, instant: list[np.ndarray] | None) -> list[float]:
    """`win_shares` by the backward induction (`winprob.win_tables`)."""
    rs = st.rs
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    kd = st.parts[0].solution.kd
    model = st.parts[0].solution.model
    state = tuple(int(x) for x in pos.states[0][:3])
    iwh = instant_hands(rs)
    at_once = _own_instant(pos, instant, pos.open_boxes) if iwh is not None else None
    digest = hashlib.blake2b(util.tobytes(), digest_size=16)
    if at_once is not None:
        digest.update(at_once.tobytes())
    wins = analyst.win_cache.get(
        rs, (rs.fingerprint, state, len(util), digest.digest()),
        lambda: win_tables(st, state, util, analyst.reachable_levels(st),
                           iwh if at_once is not None else None, at_once))
    h = rs.hand_index[hs.scored_dice]
    options = wins.options(kd, state, throw, h)
    out = []
    for a in sug.alternatives:
        if a.action == "score":
            p = next(p for p in hs.boxes if p.legal and p.box == a.box)
            after = Position.of(st, apply_turn(rs, sheet, hs, p, throw).sheet)
            s2 = after.states[0]
            gain = after.total - pos.total
            full = s2[0] == (1 << model.nb) - 1
            row = util if full else wins.row(*s2[:3])
            out.append(float(row[min(gain, len(row) - 1)]))
        else:
            # the kept dice as the next throw reads them (Bozó "em baixo"): the model's keep
            out.append(float(options[1 + model.keeps.index[a.keep], 0]))
    return out


def _own_later_instant(rs: RuleSet, pos: Position, instant: list[np.ndarray] | None
                       ) -> float:
    """The player's chance of a win at once on a later turn (after this one), each worth
    the chance that no one else has won at once before it (0 where nothing wins at
    once)."""
    if instant is None:
        return 0.0
    q = instant_chance(rs)
    later = pos.open_boxes - 1  # turns after this one
    alive = _own_instant(pos, instant, later)
    return float(sum(q * (1 - q) ** (k - 1) * alive[k] for k in range(1, later + 1)))


def _move_outcome(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet, hs: Any,
                  a: Any, throw: int) -> Position:
    """The position a box move (`a`, scored on the hand `hs`) leads to."""
    rs = st.rs
    p = next(p for p in hs.boxes if p.legal and p.box == a.box
             and (a.column is None or p.column == a.column))
    return Position.of(st, apply_turn(rs, sheet, hs, p, throw).sheet)


def _distribution_shares(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet,
                         dice: list[int], throw: int, em_baixo: bool, sug: Suggestion,
                         util: np.ndarray, instant: list[np.ndarray] | None) -> list[float]:
    """`win_shares` from each move's exact distribution of the final total (Pawlewicz's
    way): a box's is the distribution from the state it leads to, a keep's the rest of the
    turn under the advisor's play (`first_turn_records`) followed by those distributions,
    every one from `Analyst.successor_futures`. Its share is E[util(final)]; where a first
    throw can win at once, the distributions are of the games without such a win and the
    player's own later wins at once are added (`_own_later_instant`)."""
    rs = st.rs
    sol = st.parts[0].solution
    kd, model = sol.kd, sol.model
    state = tuple(int(x) for x in pos.states[0][:3])
    wins = instant_hands(rs) if instant is not None else None
    futures_ = analyst.successor_futures(st, state, wins)
    gbits = gain_bits(kd)
    own = _own_later_instant(rs, pos, instant)
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    full = (1 << model.nb) - 1

    def share(d: Distribution) -> float:
        at = np.minimum(d.totals - pos.total, len(util) - 1)
        return float(d.probs @ util[at]) + own

    out = []
    for a in sug.alternatives:
        if a.action == "score":
            after = _move_outcome(analyst, st, pos, sheet, hs, a, throw)
            s2 = tuple(int(x) for x in after.states[0][:3])
            if s2[0] == full:
                d = Distribution(lo=after.total, probs=np.ones(1))
            else:
                d = (futures_.get(flat_index(sol, s2), after.total)
                     or analyst._exact(st, after, -1, 1, wins))
        else:
            # in Bozó "em baixo", the bottom faces of the dice kept: the keep the model plays
            keep = tuple(sorted(7 - d for d in a.dice)) if a.em_baixo else tuple(a.dice)
            rk, rp = first_turn_records(kd, sol.values, state, -1, throw,
                                        model.keeps.index[keep])
            d = futures_.combine(rk, rp, gbits, pos.total) or _shifted(
                forward(kd, sol.values, state, 0, (rk, rp), analyst.threads, wins), pos.total)
        out.append(share(d))
    return out


def _normal_shares(analyst: Analyst, st: Strategy, pos: Position, sheet: Sheet,
                   dice: list[int], throw: int, em_baixo: bool, sug: Suggestion,
                   util: np.ndarray, instant: list[np.ndarray] | None) -> list[float]:
    """`win_shares` with each move's final total taken as normal (its exact mean and
    variance under the advisor's play after it); where a first throw wins at once, the
    player's own later wins at once are added, each worth the chance that no one else has
    won before it, and the totals count only the games without one."""
    rs = st.rs
    hs = score_hand(rs, dice, throw, sheet, em_baixo)
    tables = analyst.tables(st)
    view = TurnView(pos, tables, throw)
    model = st.parts[0].solution.model
    parts = [tables(i) for i in range(len(st.parts))]
    q = instant_chance(rs) if instant is not None else 0.0
    own = _own_later_instant(rs, pos, instant)
    none = (1 - q) ** (pos.open_boxes - 1)

    def share(mean: float, var: float) -> float:
        probs = _normal_probs(pos.total, len(util), mean, float(np.sqrt(max(var, 0.0))))
        return none * float(probs @ util) + own

    out = []
    for a in sug.alternatives:
        if a.action == "score":
            after = _move_outcome(analyst, st, pos, sheet, hs, a, throw)
            m1, m2 = start_moments(after, parts)
            var = sum(b2 - b1 * b1 for b1, b2 in zip(m1, m2, strict=True))
        else:
            e1, e2 = view.keep_value(model.keeps.index[a.keep], throw)
            var = e2 - e1 * e1
        out.append(share(a.expected_final_score, var))
    return out


def rank_to_win(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int], throw: int,
                em_baixo: bool, opponents: list[Sheet], sug: Suggestion) -> Suggestion:
    """The suggestion's moves ranked by the chance of finishing first against `opponents`
    (their scorecards, in playing order after the player to move), ties shared as rule
    book decision 13 says: each move's `win_share`, the best first. `regret` stays the
    expected final score given up against the expected-score best."""
    # the opponents' values only (no player to move among them: -1); the position itself
    # was checked by the suggestion
    values = player_values(analyst, rs, opponents, -1, None, None, False,
                           lambda i: f"/opponents/{i}")
    times = _instant_times(rs, [sheet, *opponents], 0, True)
    shares, exact, method = win_shares(analyst, rs, sheet, dice, throw, em_baixo, sug,
                                       [v.distribution for v in values],
                                       None if times is None else times[1:])
    for a, v in zip(sug.alternatives, shares, strict=True):
        a.win_share = v
    order = sorted(sug.alternatives, key=lambda a: (-round(a.win_share or 0.0, 9),
                                                    -a.expected_final_score))
    rounded = [round(a.win_share or 0.0, 9) for a in order]
    equal = Counter(rounded)
    rank = 1
    for i, (a, here) in enumerate(zip(order, rounded, strict=True)):
        if i and here < rounded[i - 1]:
            rank = i + 1
        a.rank = rank
        a.tie = equal[here] > 1
    others_exact = all(v.distribution.exact for v in values)
    return replace(sug, best=order[0], alternatives=order, objective="win",
                   win_exact=exact and others_exact,
                   win_method=method + ("" if others_exact else
                                        "; the opponents' distributions sampled"))


def win_move(analyst: Analyst, rs: RuleSet, sheet: Sheet, dice: list[int], throw: int | None,
             em_baixo: bool, others: list[Distribution],
             instant: list[np.ndarray] | None = None) -> dict[str, Any]:
    """The move that maximises the player's expected share of the win against the others'
    final distributions (`win_shares`), beside the move that maximises the expected score,
    each with both figures."""
    st = analyst.strategy(rs)
    sug = suggest(st, dice, throw or 1, sheet, em_baixo)
    shares, exact, method = win_shares(analyst, rs, sheet, dice, throw, em_baixo, sug,
                                       others, instant)

    def describe(i: int) -> dict[str, Any]:
        a = sug.alternatives[i]
        out = {"action": a.action, "expected_final_score": round(a.expected_final_score, 6),
               "win_share": round(shares[i], 9)}
        out.update({"box": a.box, "score": a.score} if a.action == "score"
                   else {"dice": a.dice, "em_baixo": a.em_baixo})
        return out

    by_share = max(range(len(shares)), key=lambda i: (round(shares[i], 12),
                                                      sug.alternatives[i].expected_final_score))
    mine, theirs = describe(0), describe(by_share)
    differs = theirs["win_share"] > mine["win_share"] + 1e-9
    return {"exact": exact, "method": method, "max_expected_score": mine,
            "max_win": theirs if differs else mine, "differs": differs}


def _normal_probs(lo: int, n: int, mean: float, sd: float) -> np.ndarray:
    """A normal distribution of `mean` and `sd` on the n whole totals from `lo`, each the
    probability of its unit interval; what lies below or above goes to the first or the
    last (where `winprob.utility`'s last column counts every higher total)."""
    if sd < 1e-9:
        out = np.zeros(n)
        out[int(np.clip(np.rint(mean) - lo, 0, n - 1))] = 1.0
        return out
    edges = np.arange(lo, lo + n + 1, dtype=np.float64) - 0.5
    cdf = normal_cdf((edges - mean) / sd)
    probs = np.diff(cdf)
    probs[0] += cdf[0]
    probs[-1] += 1.0 - cdf[-1]
    return probs


def _no_instant(dist: Distribution, rs: RuleSet, pos: Position, hand: int) -> Distribution:
    """A sampled distribution as the totals of the games without an instant win: the games
    played go on after one, so their totals are scaled by the chance of none, as if the two
    were independent (approximate, and said so)."""
    turns = pos.open_boxes - (1 if hand >= 0 else 0)
    return replace(dist, probs=dist.probs * (1.0 - instant_chance(rs)) ** turns,
                   method=dist.method + "; scaled by the chance of no instant win (taken as "
                                        "independent of the totals)")


def _shifted(d: Distribution, total: int, states: int | None = None) -> Distribution:
    """`d` of the points still to come as a distribution of the final total, `total` points
    being on the sheet; `states`: the states visited for this answer (default `d`'s)."""
    return Distribution(lo=d.lo + total, probs=d.probs, exact=d.exact, method=d.method,
                        samples=d.samples, standard_error=d.standard_error,
                        states=d.states if states is None else states)


def flat_index(sol: Any, state: tuple[int, int, int]) -> int:
    """A part state's flat index in its tables (`distribution.Futures`' keys)."""
    nu, nf = sol.values.shape[1], sol.values.shape[2]
    return (int(state[0]) * nu + int(state[1])) * nf + int(state[2])


def _seed(fingerprint: str, pos: Position, hand: int, throw: int) -> int:
    """A seed fixed by the position: the same question gets the same sample."""
    text = f"{fingerprint}|{pos.states}|{pos.total}|{pos.sheet.saved_throws}|{hand}|{throw}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
