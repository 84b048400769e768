"""The per-request metrics, counted in memory shared by the pod's processes and exported by a
Prometheus collector (`Tally`, prometheus-client's public `Collector` interface).

Why not prometheus-client's own metrics: in multiprocess mode each write of a counter, gauge
or histogram takes a lock, asks the process id and packs a float into the worker's mmap'd
file, about 1 us a write (2 for a histogram's observe); a request made seven of them. Here a
write is an addition to a cell of shared memory under the process's thread lock, about 0.2 us.

The memory is an anonymous file mapped shared, made when this module is imported: in the
process that loads the app (gunicorn's master, the app preloaded), before it forks the
workers, which all map it. It has `SLOTS` slots, one per live process: a process takes the
first free one at its first write and holds a POSIX record lock on the slot's byte for its
life; the kernel releases it when the process dies, however it dies. Each slot holds rows,
one per metric and label values that process wrote (labels kept as JSON in the slot's own
arena), written only by its process, so no lock is shared between processes. A slot freed by
a dead process is taken again by a later one, which goes on adding to its rows: counters and
histograms keep what a killed worker counted (as prometheus-client's files do), gauges
(`TallyGauge`: requests in progress, livesum) start again from zero and count only the live
processes (a scrape checks each slot's lock). A scrape of any process reads every slot:
exact at the moment it reads, every worker's requests included.

Exported as prometheus-client's multiprocess collector exports the same metrics (names,
labels, values; labels sorted and no `_created` samples in multiprocess mode, labels in
declared order with `_created` in a single process): in multiprocess mode /metrics adds
`TALLY` to the registry it scrapes (`ops.metrics`); in one process it is registered in
prometheus-client's default `REGISTRY` on import.
"""

from __future__ import annotations

import bisect
import fcntl
import json
import logging
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any

from gevent import monkey
from prometheus_client import REGISTRY
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from .shared import shared_cells

log = logging.getLogger(__name__)

#: Processes counting at once (workers, the master, the build process; a dead one's slot is
#: taken again).
SLOTS = 64
#: Rows (a metric's label values) a slot holds.
ROWS = 8192
#: Bytes of label values (JSON) a slot holds.
ARENA = 1 << 19
#: Cells of a row: metric, labels' offset and length, created (a double), then its values
#: (a counter's or gauge's one; a histogram's buckets, +Inf included, then its sum).
_META = 4
ROW_CELLS = 20
#: Cells at the start of a slot: rows used, arena bytes used.
_HEAD = 2
_SLOT_CELLS = _HEAD + ROWS * ROW_CELLS + ARENA // 8
#: Rows at the end of the memory that no scrape reads: where a process writes when it has no
#: slot or row (more processes or label values than the memory holds: logged, not counted).
_SPARE_ROWS = 1

_COUNTER, _GAUGE, _HISTOGRAM = "counter", "gauge", "histogram"


def _new_lock() -> Any:
    # an OS lock even under gevent: held only around an addition, never across a switch
    return monkey.get_original("_thread", "allocate_lock")()


class _Child:
    """One metric's cells for one set of label values, in this process's slot."""

    __slots__ = ("base", "family", "key", "lock", "tally")

    def __init__(self, tally: Tally, family: _Family, key: bytes) -> None:
        self.tally, self.family, self.key = tally, family, key
        self.base = -1  # its first value cell; placed at the first write in each process
        self.lock = tally.lock

    def inc(self, amount: int = 1) -> None:
        """Add `amount` (a whole number) to the counter or gauge."""
        base = self.base
        if base < 0:
            base = self.tally.place(self)
        with self.lock:
            self.tally.cells[base] += amount

    def dec(self, amount: int = 1) -> None:
        """Take `amount` from the gauge."""
        self.inc(-amount)

    def observe(self, value: float) -> None:
        """Count `value` in the histogram: its bucket (the first bound at least `value`) and
        its sum."""
        base = self.base
        if base < 0:
            base = self.tally.place(self)
        bucket = bisect.bisect_left(self.family.bounds, value)
        tally = self.tally
        with self.lock:
            tally.cells[base + bucket] += 1
            tally.floats[base + self.family.sum_cell] += value


class _Family:
    """A metric: its name, help, type and label names (`Tally.counter` and the others)."""

    def __init__(self, tally: Tally, index: int, kind: str, name: str, documentation: str,
                 labelnames: Sequence[str], bounds: Sequence[float] = ()) -> None:
        self.tally, self.index, self.kind = tally, index, kind
        self.name, self.documentation = name, documentation
        self.labelnames = tuple(labelnames)
        self.bounds = tuple(bounds)
        self.sum_cell = len(self.bounds) + 1  # after the buckets, +Inf included
        #: the histogram whose count this counter exports (`Tally.counter_of`), if any
        self.source: _Family | None = None
        self._children: dict[tuple[str, ...], _Child] = {}

    def labels(self, *values: str) -> _Child:
        """The metric's cells for these label values (one object per values, for good)."""
        child = self._children.get(values)
        if child is None:
            if self.source is not None:
                raise TypeError(f"{self.name} counts what {self.source.name} observes")
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: labels {self.labelnames}, given {values}")
            key = json.dumps([self.index, [str(v) for v in values]]).encode()
            child = self.tally.child(self, key)
            self._children[values] = child
        return child

    def inc(self, amount: int = 1) -> None:
        """`inc` of the metric without labels."""
        self.labels().inc(amount)

    def dec(self, amount: int = 1) -> None:
        """`dec` of the metric without labels."""
        self.labels().dec(amount)


class Tally(Collector):
    """The shared memory of the per-request metrics, and their collector (module docstring)."""

    def __init__(self, slots: int = SLOTS) -> None:
        self.slots = slots
        self.fd, self._map, self.cells = shared_cells(
            slots * _SLOT_CELLS + _SPARE_ROWS * ROW_CELLS, "metrics-tally")
        self.floats = memoryview(self._map).cast("d")
        self.bytes = memoryview(self._map)
        self.families: list[_Family] = []
        self.children: list[_Child] = []
        self.lock = _new_lock()
        self.slot = -1  # this process's, once it writes
        self._rows: dict[bytes, int] = {}  # this process's rows by key: their first cell
        os.register_at_fork(after_in_child=self._forked)

    # --- metrics ------------------------------------------------------------------------------
    def _family(self, kind: str, name: str, documentation: str, labelnames: Sequence[str],
                bounds: Sequence[float] = ()) -> _Family:
        family = _Family(self, len(self.families), kind, name, documentation, labelnames,
                         bounds)
        if family.sum_cell + 1 > ROW_CELLS - _META:
            raise ValueError(f"{name}: at most {ROW_CELLS - _META - 2} buckets")
        self.families.append(family)
        return family

    def counter(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> _Family:
        """A counter (`name` without `_total`, as prometheus-client's Counter takes it)."""
        return self._family(_COUNTER, name, documentation, labelnames)

    def counter_of(self, histogram: _Family, name: str, documentation: str) -> _Family:
        """A counter of what `histogram` observes, by its labels: its `_count`, exported
        under another name (no write of its own: a request counted and timed is one)."""
        family = self._family(_COUNTER, name, documentation, histogram.labelnames)
        family.source = histogram
        return family

    def gauge(self, name: str, documentation: str, labelnames: Sequence[str] = ()) -> _Family:
        """A gauge summed over the live processes (prometheus-client's `livesum`)."""
        return self._family(_GAUGE, name, documentation, labelnames)

    def histogram(self, name: str, documentation: str, labelnames: Sequence[str],
                  buckets: Sequence[float]) -> _Family:
        """A histogram with these bucket bounds (+Inf added)."""
        return self._family(_HISTOGRAM, name, documentation, labelnames, sorted(buckets))

    def child(self, family: _Family, key: bytes) -> _Child:
        """A new child of `family` (`_Family.labels`)."""
        child = _Child(self, family, key)
        with self.lock:
            self.children.append(child)
        return child

    # --- this process's slot ------------------------------------------------------------------
    def _forked(self) -> None:
        """In a new process: no slot yet (record locks are not inherited), nothing placed."""
        self.lock = _new_lock()
        self.slot = -1
        self._rows = {}
        for child in self.children:
            child.base, child.lock = -1, self.lock

    def _claim(self) -> None:
        """Take the first slot no live process holds; a slot a dead process left keeps its
        rows (counters go on from them) but its gauges start from zero."""
        for slot in range(self.slots):
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, slot)
            except OSError:
                continue
            self.slot = slot
            start = slot * _SLOT_CELLS
            cells = self.cells
            for row in range(cells[start]):
                base = start + _HEAD + row * ROW_CELLS
                key = bytes(self._label_bytes(slot, base))
                self._rows[key] = base
                if self.families[cells[base]].kind == _GAUGE:
                    cells[base + _META] = 0
            return
        raise RuntimeError(f"metrics: all {self.slots} slots are held by live processes")

    def place(self, child: _Child) -> int:
        """The first value cell of `child` in this process's slot (its row made when new)."""
        failed = None
        with self.lock:
            if child.base >= 0:
                return child.base
            try:
                if self.slot < 0:
                    self._claim()
                base = self._rows.get(child.key)
                if base is None:
                    base = self._new_row(child.key, child.family.index)
            except RuntimeError as exc:  # a metric never fails a request
                failed, base = exc, self.slots * _SLOT_CELLS
            child.base = base + _META
        if failed is not None:  # logged without the lock (a write may switch greenlets)
            log.error("metric not counted: %s", failed)
        return base + _META

    def _new_row(self, key: bytes, family: int) -> int:
        cells, start = self.cells, self.slot * _SLOT_CELLS
        rows, used = cells[start], cells[start + 1]
        if rows >= ROWS or used + len(key) > ARENA:
            raise RuntimeError(f"metrics: slot full ({rows} rows, {used} bytes of labels)")
        arena = (start + _HEAD + ROWS * ROW_CELLS) * 8
        self.bytes[arena + used:arena + used + len(key)] = key
        base = start + _HEAD + rows * ROW_CELLS
        cells[base:base + ROW_CELLS] = memoryview(bytes(ROW_CELLS * 8)).cast("q")
        cells[base], cells[base + 1], cells[base + 2] = family, used, len(key)
        self.floats[base + 3] = time.time()
        cells[start + 1] = used + len(key)
        cells[start] = rows + 1  # last: a scrape reads only whole rows
        self._rows[key] = base
        return base

    def _label_bytes(self, slot: int, base: int) -> memoryview:
        arena = (slot * _SLOT_CELLS + _HEAD + ROWS * ROW_CELLS) * 8
        offset, length = self.cells[base + 1], self.cells[base + 2]
        return self.bytes[arena + offset:arena + offset + length]

    def _live(self, slot: int) -> bool:
        """Whether a live process holds `slot` (its record lock)."""
        if slot == self.slot:
            return True
        try:
            fcntl.lockf(self.fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, slot)
        except OSError:
            return True
        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, slot)
        return False

    # --- the collector ------------------------------------------------------------------------
    def describe(self) -> Iterable[Metric]:
        """The metrics' names, without samples (the registry's check for duplicates)."""
        return [Metric(f.name, f.documentation, f.kind) for f in self.families]

    def collect(self) -> Iterable[Metric]:
        """Every metric's samples, summed over every slot (gauges: the live processes')."""
        cells, floats = self.cells, self.floats
        totals: dict[bytes, list[float]] = {}
        created: dict[bytes, float] = {}
        for slot in range(self.slots):
            start = slot * _SLOT_CELLS
            rows = cells[start]
            live: bool | None = None
            for row in range(min(rows, ROWS)):
                base = start + _HEAD + row * ROW_CELLS
                if not 0 <= cells[base] < len(self.families):  # not one this code writes
                    continue
                family = self.families[cells[base]]
                if family.kind == _GAUGE:
                    if live is None:
                        live = self._live(slot)
                    if not live:
                        continue
                key = bytes(self._label_bytes(slot, base))
                values = [float(cells[base + _META + i]) for i in range(family.sum_cell)]
                if family.kind == _HISTOGRAM:
                    values.append(floats[base + _META + family.sum_cell])
                total = totals.get(key)
                if total is None:
                    totals[key] = values
                    created[key] = floats[base + 3]
                else:
                    totals[key] = [a + b for a, b in zip(total, values)]
                    created[key] = min(created[key], floats[base + 3])
        return self._metrics(totals, created, bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR")))

    def _metrics(self, totals: dict[bytes, list[float]], created: dict[bytes, float],
                 multiprocess: bool) -> list[Metric]:
        metrics = [Metric(f.name, f.documentation, f.kind) for f in self.families]
        for f in self.families:  # a metric without labels shows from the start, as a 0
            if not f.labelnames and f.kind != _HISTOGRAM and f.source is None:
                key = json.dumps([f.index, []]).encode()
                totals.setdefault(key, [0.0])
                created.setdefault(key, time.time())
        counts = [f for f in self.families if f.source is not None]
        for key, values in sorted(totals.items()):
            try:
                index, labelvalues = json.loads(key)
            except ValueError:  # a row being written (labels not whole yet): none of it
                continue
            family, metric = self.families[index], metrics[index]
            for counter in counts:  # the counters of this histogram's count
                if counter.source is family:
                    self._add(counter, metrics[counter.index], labelvalues,
                              [sum(values[:family.sum_cell])], created[key], multiprocess)
            self._add(family, metric, labelvalues, values, created[key], multiprocess)
        return metrics

    @classmethod
    def _add(cls, family: _Family, metric: Metric, labelvalues: list[str],
             values: list[float], created: float, multiprocess: bool) -> None:
        """The samples of `family` for one set of label values."""
        pairs = list(zip(family.labelnames, labelvalues))
        if multiprocess:
            pairs.sort()
        labels = dict(pairs)
        when = None if multiprocess else created
        if family.kind == _COUNTER:
            metric.add_sample(family.name + "_total", labels, values[0])
            if when is not None:
                metric.add_sample(family.name + "_created", labels, when)
        elif family.kind == _GAUGE:
            metric.add_sample(family.name, labels, values[0])
        else:
            cls._histogram(metric, family, labels, values, when)

    @staticmethod
    def _histogram(metric: Metric, family: _Family, labels: dict[str, str],
                   values: list[float], when: float | None) -> None:
        cumulative = 0.0
        for bound, count in zip((*family.bounds, float("inf")), values):
            cumulative += count
            bucket = {**labels, "le": floatToGoString(bound)}
            if when is None:  # multiprocess: labels sorted, as prometheus-client's files have them
                bucket = dict(sorted(bucket.items()))
            metric.add_sample(family.name + "_bucket", bucket, cumulative)
        metric.add_sample(family.name + "_count", labels, cumulative)
        metric.add_sample(family.name + "_sum", labels, values[family.sum_cell])
        if when is not None:
            metric.add_sample(family.name + "_created", labels, when)


#: The pod's tally (made on import: before gunicorn forks the workers).
TALLY = Tally()
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # one process: the default registry's
    REGISTRY.register(TALLY)
