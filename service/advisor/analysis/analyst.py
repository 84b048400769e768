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

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple

import numpy as np

from ...domain.counting import column_number
from ...domain.rules import RuleSet, UnderRules, effective_rules
from ...domain.scoring import Sheet, empty_sheet, parse_scorecard
from ..advice import moves as advice
from ..advice.advisor import Advisor
from ..advice.moves import BoxChance, TurnOutlook
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
    WinTables,
)
from ..solving.methods import method_for
from ..solving.positions import Position, part_value
from ..solving.solver import solve_moments
from ..solving.strategy import Part, Strategy
from ..tables.build_process import await_build
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
from .turn_view import Tables, TurnView

#: Percentiles every position value reports.
PERCENTILES = (5, 25, 50, 75, 95)


#: Seconds to compile `Analyst.compile_kernels`'s kernels when numba's cache does not hold
#: them (2-core machine, rounded up): the start-up log line's estimate.
ANALYSIS_COMPILE_SECONDS = 90.0


#: Seconds `Analyst.warm` takes for each built-in variant on a first start (2 shared cores,
#: rounded up): the start-up log line's estimate.
ANALYSIS_SECONDS = {"yahtzee": 25.0, "yahtzee_basic": 12.0, "kniffel": 22.0, "yams": 12.0,
                    "yatzy": 50.0, "maxi_yatzy": 4.0}


#: Time budget of a sampled distribution (approximate methods): games are played until the
#: sample size or this many seconds, whichever comes first (at least two chunks).
SAMPLE_SECONDS = 1.5

#: The table of distributions from the first turns' starts (`early_futures`) holds the
#: first levels whose turn starts lead to more than about `EARLY_REACH` reachable states
#: (`distribution.early_depth`: YAHTZEE, Kniffel and the basic sheet the first four turns,
#: Yatzy five), at most `EARLY_BYTES` (YAHTZEE 49 MB, Yatzy 70 MB, Kniffel 21 MB, the basic
#: sheet and Yam's 12 MB, the others under 1 MB): any later turn start is a forward pass
#: over some 10,000 states at most (about 0.1 s on 2 cores).
EARLY_REACH = 30_000
EARLY_BYTES = 96 << 20


class ScoreChance(NamedTuple):
    """A final total and a probability: P(final >= score) (a threshold asked for), or
    P(final = score) (a histogram's entry)."""

    score: int
    probability: float


@dataclass(frozen=True, slots=True)
class Percentiles:
    """Percentiles of the final total (`PERCENTILES`): the smallest t with P(final <= t)
    >= q % (`PercentilesSchema`)."""

    p5: int
    p25: int
    p50: int
    p75: int
    p95: int


@dataclass
class DistributionReport(Distribution):
    """The distribution of a position's final total as positions/value reports it (the
    API's Distribution): the distribution, P(final >= t) for each total t asked
    (`thresholds`, sorted, each once) and, when asked for (`with_histogram`), every total's
    probability."""

    thresholds: list[int] = field(default_factory=list)
    with_histogram: bool = False

    @classmethod
    def of(cls, d: Distribution, at_least: Iterable[int], histogram: bool
           ) -> DistributionReport:
        """`d` with the figures a request asks for: P(final >= t) for each t of `at_least`,
        and the histogram if `histogram`."""
        return cls(**{f.name: getattr(d, f.name) for f in fields(Distribution) if f.init},
                   thresholds=sorted(set(at_least)), with_histogram=histogram)

    @property
    def hi(self) -> int:
        """The highest final total the distribution holds."""
        return self.lo + len(self.probs) - 1

    @property
    def percentiles(self) -> Percentiles:
        """Each of `PERCENTILES` and its total."""
        return Percentiles(*(self.percentile(q) for q in PERCENTILES))

    @property
    def at_least(self) -> list[ScoreChance]:
        """P(final >= t) for each total asked, to 12 decimals: each is a sum of the
        distribution's probabilities, whose digits beyond are noise. (Rounded here, not by
        the answer's schema: the spec has one object, ScoreChance, for these and for the
        histogram's entries, which are written unrounded.)"""
        return [ScoreChance(t, round(self.p_at_least(t), 12)) for t in self.thresholds]

    @property
    def histogram(self) -> list[ScoreChance] | None:
        """Every total with a non-zero probability, asked for only (else None: not part of
        the answer)."""
        if not self.with_histogram:
            return None
        return [ScoreChance(int(s), float(p))
                for s, p in zip(self.totals, self.probs, strict=True) if p > 0]


@dataclass
class PositionValue:
    """What a position is worth under the advisor's play (the API's PositionValue, less
    what the request names, the variant, rules, dice and throw, and the advisor's method)."""

    current_total: int
    mean: float
    sd: float
    exact: bool  # mean and sd exact (exact method)
    distribution: Distribution

    def reported(self, rs: RuleSet, method: str, dice: list[int] | None,
                 throw: int | None, at_least: Iterable[int], histogram: bool
                 ) -> PositionReport:
        """The value as positions/value reports it (`PositionReport`) of the position of
        `dice` (sorted; None at the start of a turn) on `throw`, under the rules `rs` and
        the advisor's `method`, its distribution a `DistributionReport` (P(final >= t) for
        each t of `at_least`, the histogram if `histogram`)."""
        return PositionReport(
            self.current_total, self.mean, self.sd, self.exact,
            DistributionReport.of(self.distribution, at_least, histogram), rules=rs,
            method=method, dice=sorted(dice) if dice else None, throw=throw if dice else None)


@dataclass(kw_only=True)
class PositionReport(UnderRules, PositionValue):
    """What a position is worth as positions/value reports it (the API's PositionValue,
    `PositionValueSchema`): the value, its distribution a `DistributionReport`, the
    advisor's method, and the position's dice (sorted) and throw (None at the start of a
    turn), under the rules `rules`."""

    rules: RuleSet = field(repr=False)
    method: str
    dice: list[int] | None
    throw: int | None


class Analyst:
    """Position values, distributions and coaching for an `Advisor`'s strategies."""

    #: What `compile_kernels` runs besides, each (analyst, rules, a sheet late in a game, one
    #: in the middle, dice): the objectives that rank moves with the analyst's kernels
    #: (`service/advisor/objectives/`) add theirs when they are imported
    compilers: list[Callable[[Analyst, RuleSet, Sheet, Sheet, list[int]], None]] = []

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

    def strategy(self, rs: RuleSet, kind: str = "values") -> Strategy:
        """The advisor's strategy for the rules (`kind`: the build job to queue when its
        tables are still to make, `Advisor.strategy`)."""
        return self.advisor.strategy(rs, kind=kind)

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
              keeps: list[tuple[tuple[int, ...], bool]]) -> list[TurnOutlook]:
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
                     ) -> TurnOutlook:
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
            listed.append(BoxChance(part.solution.model.box_ids[bi],
                                    column_number(part.column, columns), round(p, 9)))
        return TurnOutlook(round(expected, 6), listed)

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
        hand = hand_index_checked(rs, sheet, dice, throw, em_baixo)
        # the start of a game under rules whose tables are still to make: one job makes the
        # value tables and then the start distribution (`strategies.build_start`), so the
        # answer waits for one build, not two
        start = (hand < 0 and not instant and sheet.open_boxes == len(rs.variant.box_ids)
                 and method_for(rs).exact)
        # after the checks: a refused position builds no table
        st = self.strategy(rs, kind="start" if start else "values")
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
        made by the pod's build process, a job of its own (`TableBuilding` while it
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
            return await_build(builds, st.rs, lambda: self._cached(st, state), kind="start",
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
        for compile_ in self.compilers:  # the objectives' (the winning move, the target)
            compile_(self, rs, late, middle, dice)
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


def hand_index_checked(rs: RuleSet, sheet: Sheet, dice: list[int] | None, throw: int | None,
                       em_baixo: bool = False) -> int:
    """`moves.check_position` for a position to value: the hand's index (-1 without dice)."""
    hs, _ = advice.check_position(rs, dice, throw, sheet, em_baixo)
    return -1 if hs is None else rs.hand_index[hs.scored_dice]


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
