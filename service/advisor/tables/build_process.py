"""Table builds outside the request workers: a bounded queue on disk and one build process
per pod, whose tables every worker memory-maps.

A request whose table is neither in memory nor on disk puts a job in the queue and waits a
little (`Advisor`); the build process takes jobs one at a time, fairly between clients,
at a lower CPU priority, each in a forked child (so a build's memory goes back to the system
when it ends), and writes the table as ``.npy`` files that every worker then maps: a table
is built once per pod, not once per worker. Everything is a file in the build directory:

    queue/<fingerprint>.json   a table waiting to be built: variant, options, overrides,
                               client, time queued. Created with O_EXCL: one job per table.
    queue/<fingerprint>-moments.json   the same for the analysis tables of those rules
                               (`kernels/moments.py`: the float64 mean and second moment of every
                               part, which position values and game analysis need)
    failed/<job>.json          its last build failed (the error); tried again after a while
    builder.lock               held (flock) by the live build process: one per directory
    builder.json               the build process's figures (mean seconds a build takes)
    <variant>-<fingerprint>-<part>-v<FORMAT>.npy   the tables (`TableStore`)

The server forks the build process from its master once the tables are loaded
(`fork_builder`, from gunicorn.conf.py), so it shares the master's memory (the interpreter,
numba's compiled kernels) instead of loading its own; it stays while the server runs. If it
is gone, the first worker that queues a job while no process holds the lock starts a fresh
one (``python -m service.advisor serve-builds``), which leaves after a minute without jobs.
Either leaves when the server that started it is gone.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import json
import logging
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import Gauge, Histogram

from ...caller import current_caller, wait_until
from ...caller import waiting as caller_waiting
from ...config import Settings
from ...domain.rules import RuleSet, effective_rules
from ...domain.variants import VARIANT_IDS
from ...logs import configure_logging
from .shared import SharedTables
from .store import FORMAT, StoreChain, TableStore, write_atomically
from .strategies import build_moments, build_start, build_strategy, warm_analysis

log = logging.getLogger(__name__)

#: Seconds a failed build is remembered (requests for it get an error, not a new build).
FAILED_TTL = 60.0
#: Seconds the build process lingers without jobs before it exits.
IDLE_EXIT = 60.0
#: The folder that holds the `service` package, which the build process a worker starts
#: (`BuildQueue.ensure_builder`) imports it from, wherever the server's working directory
#: is. Not the package's own folder: on the path, its modules would hide the standard
#: library's of the same name (`service/secrets.py` hid `secrets`, and numpy, which the
#: build process imports, failed there).
PACKAGE_ROOT = str(Path(__file__).resolve().parents[len((__package__ or "").split("."))])
#: Seconds one build may take before it is killed.
BUILD_TIMEOUT = 600.0
#: Seconds the server's warm-up may take in the build process (minutes from nothing on one
#: CPU) before it is killed.
WARM_TIMEOUT = 3600.0
#: Mean build seconds assumed before the build process has measured any, and of each kind
#: before it has measured one of that kind (two cores, the larger exact sheets' new rules:
#: bench/bench_new_rules.py; Yatzy's moments 2.8 s, YAHTZEE's 1.1 s).
DEFAULT_BUILD_SECONDS = 2.0
DEFAULT_KIND_SECONDS = {"values": 1.0, "start": 1.5, "moments": 2.0}
#: Seconds between the build process's looks at an empty queue, and between a waiting
#: request's looks for its table: a job is taken up, and its table answered, within them
#: (a look costs a directory listing or a few stats: some 0.1% of a CPU while idle)
QUEUE_POLL, WAIT_POLL = 0.02, 0.02
#: Most seconds a Retry-After names.
MAX_RETRY_AFTER = 120
#: What a job builds: the value tables of a table of rules, or one of its analysis tables:
#: the moment tables (game analysis, position values after the start), the start
#: distribution (position values at the start of a game). Each request waits for its own.
KINDS = ("values", "moments", "start")
#: What each kind is, in words (a 202's `building`).
KIND_WORDS = {"values": "table", "moments": "analysis table (moments)",
              "start": "analysis table (start distribution)"}

QUEUE_DEPTH = Gauge(
    "table_build_queue_depth",
    "Tables waiting to be built (or being built) in the pod's build queue, as last seen by a "
    "scrape of /metrics or by the build process; ADVISOR_BUILD_QUEUE is the most it takes.",
    multiprocess_mode="livemostrecent",
)
BUILD_SECONDS = Histogram(
    "table_build_seconds",
    "Seconds the build process took for a table, from taking its job to dropping it, by "
    "kind (values, moments) and outcome (built; shared: fetched from the cluster's shared "
    "table store; failed).",
    ["kind", "outcome"],
    buckets=(0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 600.0),
)


def current_client() -> str:
    """Who asks for builds here, when a call names no client: the request's caller
    (`service.caller`: its tenant, or without API keys its client address), the per-client
    limit's key and whose turn the build process takes; "" outside a request."""
    caller = current_caller()
    return caller.client if caller is not None else ""


class TableBuilding(Exception):
    """The table is queued or being built; ask again in `retry_after` seconds. `detail`:
    why, in words, when it is not a build of these rules (the server's warm-up)."""

    def __init__(self, retry_after: int, waiting: int, kind: str = "values",
                 detail: str | None = None) -> None:
        super().__init__(f"table being built; retry after {retry_after} s")
        self.retry_after, self.waiting, self.kind = retry_after, waiting, kind
        self.detail = detail

    @property
    def what(self) -> str:
        """What is being built, in words."""
        return KIND_WORDS.get(self.kind, "table")


class BuildQueueFull(Exception):
    """No room for another build: the pod's queue is full (`per_client` False) or this
    client has as many tables waiting as it may (`per_client` True)."""

    def __init__(self, retry_after: int, limit: int, per_client: bool) -> None:
        who = "this client's" if per_client else "the"
        super().__init__(f"{who} build queue is full ({limit} tables)")
        self.retry_after, self.limit, self.per_client = retry_after, limit, per_client


class BuildFailed(RuntimeError):
    """The last build of this table failed (a bug: the build process logged it)."""


def await_build(queue: BuildQueue, rs: RuleSet, load: Callable[[], Any], *, kind: str = "values",
                builtin: bool = False, client: str = "", wait: float = 1.0) -> Any:
    """Have the build process make a table (`kind`) and wait up to `wait` seconds for it (a
    request's waits share one such budget, `caller.wait_until`):
    what `load` returns once it is on disk (polled; under gevent other requests run
    meanwhile). Raises `BuildFailed` when its last build failed, `BuildQueueFull` (also after
    the wait: a client ignoring Retry-After cannot ask faster) or `TableBuilding`. `client`
    (default: `current_client()`) is the per-client limit's key."""
    error = queue.failure(rs, kind)
    if error is not None:
        what = "table" if kind == "values" else "analysis tables"
        raise BuildFailed(f"the {what} of rules {rs.fingerprint} could not be built: {error}")
    deadline = wait_until(wait)  # the request's one budget for its waits
    try:
        waiting = queue.submit(rs, client or current_client(), builtin=builtin, kind=kind)
    except BuildQueueFull:
        with caller_waiting():
            time.sleep(max(0.0, deadline - time.monotonic()))
        raise
    if waiting == 0:  # fetched from the cluster's shared store
        found = load()
        if found is not None:
            return found
        # fetched, yet not a table here: built here, as without the store
        waiting = queue.submit(rs, client or current_client(), builtin=builtin, kind=kind,
                               fetch=False)
    with caller_waiting():  # the caller's other requests are answered meanwhile
        while time.monotonic() < deadline:
            time.sleep(WAIT_POLL)
            found = load()
            if found is not None:
                return found
    raise TableBuilding(queue.retry_after(waiting, kind, queue.job_name(rs, kind)), waiting,
                        kind)


def default_build_dir(table_dir: str | Path) -> Path:
    """Where background builds go when ADVISOR_BUILD_DIR is empty: ``house-rules`` inside
    the table directory when that is writable, else a directory in the temporary directory."""
    table_dir = Path(table_dir)
    probe = table_dir if table_dir.exists() else table_dir.parent
    if os.access(probe, os.W_OK):
        return table_dir / "house-rules"
    return Path(tempfile.gettempdir()) / f"yahtzee-advisor-tables-{os.getuid()}"


@dataclass(frozen=True)
class BuildSettings:
    """How the pod builds tables (from `service.config.Settings`)."""

    directory: Path  # the queue, the lock and the house-rules tables
    table_dir: Path  # built-in variants' tables (written there when missing, if writable)
    max_queue: int = 16
    per_client: int = 4
    keep: int = 8  # house-rules tables kept on disk (least recently used removed first)
    keep_mib: int = 128  # and at most this many MiB of them
    nice: int = 10
    threads: int = 0
    # built-in variants whose tables and kernels a build process started by a worker makes
    # ready first (`service.warmup`: the server's start, when it was deferred)
    warm: tuple[str, ...] = ()
    # the cluster's shared table store (`shared.SharedTables`): its redis:// URL ("": none),
    # and the most MiB of tables it keeps
    shared_url: str = field(default="", repr=False)
    shared_mib: int = 1024


class BuildQueue:
    """The workers' side of the queue: submit a job, see whether it is waiting, and start
    the build process when none is running (`autostart`; tests run a `Builder` themselves)."""

    def __init__(self, settings: BuildSettings, autostart: bool = True,
                 admit: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        #: asked before a new table is queued for a client; raises to refuse it (the web
        #: layer charges the client's tenant one build of its quota)
        self.admit = admit
        self.autostart = autostart
        self.directory = Path(settings.directory)
        self.queue_dir = self.directory / "queue"
        self.failed_dir = self.directory / "failed"
        self.store = TableStore(self.directory)
        self._last_spawn = 0.0
        self._spawn_lock = threading.Lock()
        self._shared: SharedTables | None = None

    @property
    def shared(self) -> SharedTables | None:
        """The cluster's shared table store (ADVISOR_SHARED_TABLES) as this process reaches
        it, made on first use (in the worker, after the fork); None without one."""
        if self._shared is None and self.settings.shared_url:
            self._shared = SharedTables(self.settings.shared_url, self.settings.shared_mib)
        return self._shared

    def evict(self) -> None:
        """Keep at most `keep` house-rules tables, of at most `keep_mib` MiB in all, on disk:
        remove the least recently used (workers touch a table's files when they map them and
        while they use them; they drop a table whose files are gone)."""
        builtin = _builtin_fingerprints()
        tables: dict[str, list[Path]] = {}
        for path in self.settings.directory.glob("*.npy"):
            parts = path.name.split("-")
            if len(parts) >= 3 and parts[1] not in builtin:
                tables.setdefault(parts[1], []).append(path)
        stats = {}
        for fp, paths in tables.items():
            with contextlib.suppress(FileNotFoundError):
                sts = [p.stat() for p in paths]
                stats[fp] = (max(st.st_mtime for st in sts), sum(st.st_size for st in sts))
        size = sum(nbytes for _, nbytes in stats.values())
        count = len(stats)
        for fp in sorted(stats, key=lambda f: stats[f][0]):  # least recently used first
            if count <= self.settings.keep and size <= self.settings.keep_mib * 2**20:
                break
            for p in tables[fp]:
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
            count -= 1
            size -= stats[fp][1]

    # --- jobs --------------------------------------------------------------------------
    @staticmethod
    def job_name(rs: RuleSet, kind: str = "values") -> str:
        """The name of a job's files (queue, failed): the fingerprint, then the kind unless
        it builds value tables."""
        return rs.fingerprint if kind == "values" else f"{rs.fingerprint}-{kind}"

    def _job_path(self, rs: RuleSet, kind: str = "values") -> Path:
        return self.queue_dir / f"{self.job_name(rs, kind)}.json"

    def jobs(self) -> list[dict[str, Any]]:
        """Every job waiting (or being built), oldest first."""
        out = []
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(self.queue_dir):
                if entry.name.endswith(".json"):
                    with contextlib.suppress(OSError, ValueError):
                        with open(entry.path, "rb") as fh:
                            job = json.loads(fh.read())
                        job["name"] = entry.name[:-5]
                        job.setdefault("fingerprint", job["name"])
                        out.append(job)
        return sorted(out, key=lambda j: j.get("queued", 0.0))

    def depth(self) -> int:
        """Jobs in the queue now (waiting or being built), also set in
        `table_build_queue_depth` (a scrape of /metrics asks it, so the gauge is what the
        queue holds now, with no traffic too)."""
        try:
            found = sum(1 for name in os.listdir(self.queue_dir) if name.endswith(".json"))
        except FileNotFoundError:
            found = 0
        QUEUE_DEPTH.set(found)
        return found

    def pending(self, rs: RuleSet, kind: str = "values") -> bool:
        """Whether a job for this table (`kind`: one of `KINDS`) is waiting or being built."""
        return self._job_path(rs, kind).exists()

    def failure(self, rs: RuleSet, kind: str = "values") -> str | None:
        """The error of this table's last build, when it failed less than a minute ago."""
        path = self.failed_dir / f"{self.job_name(rs, kind)}.json"
        try:
            if time.time() - path.stat().st_mtime > FAILED_TTL:
                return None
            return json.loads(path.read_bytes()).get("error", "build failed")
        except (OSError, ValueError):
            return None

    def submit(self, rs: RuleSet, client: str, builtin: bool = False,
               kind: str = "values", fetch: bool = True) -> int:
        """Queue a build of the table (`kind`: one of `KINDS`; once: a job already waiting
        is reused) and make sure a build process runs. Returns how many jobs wait; raises
        BuildQueueFull. Rules not built in: fetched from the cluster's shared store first when
        it holds them (unless not `fetch`; 0 jobs wait then, and nothing is queued or
        charged: no build)."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind of build {kind!r}")
        path = self._job_path(rs, kind)
        if fetch and not path.exists() and not builtin and self.shared is not None and (
                self.shared.fetch(self.job_name(rs, kind), self.directory, quick=True)):
            log.info("table fetched from the shared store", extra={
                "variant": rs.variant.id, "fingerprint": rs.fingerprint, "kind": kind,
                "by": "request"})
            self.evict()  # within the pod's bounds, as after a build
            return 0  # another pod built it: on disk now, nothing to build or wait for
        if not path.exists():
            jobs = self.jobs()
            s = self.settings
            if len(jobs) >= s.max_queue:
                raise BuildQueueFull(self.retry_after(len(jobs)), s.max_queue, False)
            mine = sum(1 for j in jobs if j.get("client") == client)
            if client and mine >= s.per_client:
                raise BuildQueueFull(self.retry_after(len(jobs)), s.per_client, True)
            if self.admit is not None:
                self.admit(client)
            job = {"variant": rs.variant.id, "options": rs.options, "overrides": rs.overrides,
                   "fingerprint": rs.fingerprint, "kind": kind, "client": client,
                   "builtin": builtin, "queued": time.time()}
            self.queue_dir.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                pass  # another worker queued it a moment ago
            else:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(json.dumps(job).encode())
        self.ensure_builder()
        return max(1, len(os.listdir(self.queue_dir)) if self.queue_dir.exists() else 1)

    def figures(self) -> dict[str, Any]:
        """What the build process wrote of itself (builder.json: its mean seconds, by kind
        too, and the job it is building); empty when there is none or it is damaged."""
        try:
            data = json.loads((self.directory / "builder.json").read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def mean_build_seconds(self, kind: str | None = None,
                           figures: dict[str, Any] | None = None) -> float:
        """The build process's mean build time, of builds of `kind` when it has measured
        one (else of all; a default before it measured any)."""
        data = self.figures() if figures is None else figures
        by_kind = data.get("kinds")
        measured = by_kind.get(kind) if isinstance(by_kind, dict) else None
        if measured is None:
            measured = DEFAULT_KIND_SECONDS.get(kind) if kind is not None else None
        if measured is None:
            measured = data.get("mean_seconds", DEFAULT_BUILD_SECONDS)
        try:
            return max(0.0, float(measured))
        except (TypeError, ValueError):  # a damaged file: the default
            return DEFAULT_BUILD_SECONDS

    def retry_after(self, waiting: int, kind: str | None = None, job: str | None = None) -> int:
        """Seconds until `waiting` queued builds, the last of `kind`, are likely done (1 to
        MAX_RETRY_AFTER); less what the build process has already spent on `job` when it is
        the one being built."""
        data = self.figures()
        first = self.mean_build_seconds(kind, data)
        current = data.get("current")
        if job is not None and isinstance(current, dict) and current.get("job") == job:
            with contextlib.suppress(TypeError, ValueError):
                first = max(0.0, first - (time.time() - float(current["started"])))
        seconds = first + self.mean_build_seconds(None, data) * (waiting - 1)
        return max(1, min(MAX_RETRY_AFTER, math.ceil(seconds)))

    # --- the build process ---------------------------------------------------------------
    def builder_running(self) -> bool:
        """Whether a build process holds this directory's lock."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / "builder.lock", "a+b") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False

    def ensure_builder(self) -> None:
        """Start the build process unless one runs (at most one start a second per worker;
        a second process that finds the lock taken exits at once)."""
        if not self.autostart:
            return
        with self._spawn_lock:
            now = time.monotonic()
            if now - self._last_spawn < 1.0 or self.builder_running():
                return
            self._last_spawn = now
            s = self.settings
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
            # Not a new session: the build process stays in the server's process group (a
            # Ctrl-C or a group kill stops it too) and in its CPU scheduling group, where its
            # lower priority counts against the workers.
            proc = subprocess.Popen(
                [sys.executable, "-m", "service.advisor", "serve-builds",
                 "--dir", str(s.directory), "--table-dir", str(s.table_dir),
                 "--keep", str(s.keep), "--keep-mib", str(s.keep_mib), "--nice", str(s.nice),
                 "--threads", str(s.threads), "--warm", ",".join(s.warm),
                 "--owner", str(os.getppid())],
                env=env, stdin=subprocess.DEVNULL, close_fds=True)
            # reap it when it exits (a greenlet under gevent, a thread otherwise)
            threading.Thread(target=proc.wait, daemon=True).start()
            log.info("started the table build process", extra={"pid": proc.pid})


# --- the build process ----------------------------------------------------------------------

def _alive(pid: int) -> bool:
    if pid <= 1:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Builder:
    """The build process: takes jobs from the queue, one at a time, fairly between clients."""

    def __init__(self, settings: BuildSettings, owner: int = 0,
                 idle_exit: float | None = IDLE_EXIT,
                 warm: Callable[[], object] | None = None) -> None:
        self.settings = settings
        #: run before the first job: the server's warm-up, when it was deferred to this
        #: process (`service.warmup`)
        self.warm = warm
        self.idle_exit = idle_exit
        self.queue = BuildQueue(settings, autostart=False)
        self.house = TableStore(settings.directory)
        self.builtin = TableStore(settings.table_dir)
        self.owner = owner
        self.served: dict[str, float] = {}  # client -> when its last job was taken
        self.mean_seconds = self.queue.mean_build_seconds()
        #: mean seconds of each kind of build (Retry-After's estimate for a job of that kind)
        self.kind_seconds: dict[str, float] = {}
        self.stopping = False
        #: the cluster's shared table store (ADVISOR_SHARED_TABLES), None without one
        self.shared = (SharedTables(settings.shared_url, settings.shared_mib)
                       if settings.shared_url else None)

    def next_job(self) -> dict[str, Any] | None:
        """The job of the client served longest ago (oldest job first among its own)."""
        jobs = self.queue.jobs()
        if not jobs:
            return None
        return min(jobs, key=lambda j: (self.served.get(j.get("client", ""), 0.0),
                                        j.get("queued", 0.0)))

    def run(self) -> int:
        """Serve jobs until idle for `idle_exit` seconds (None: never) or the owner is gone."""
        d = self.settings.directory
        d.mkdir(parents=True, exist_ok=True)
        lock = open(d / "builder.lock", "a+b")  # noqa: SIM115 - held for the process's life
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another build process serves this directory
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)
        set_process_name(PROCESS_NAME)
        with contextlib.suppress(OSError):
            os.nice(self.settings.nice)
        if self.warm is not None:
            # in a child, so that a server stopping meanwhile does not wait for minutes of
            # compiling; what it makes is on disk (tables, numba's cache, the marker)
            error = in_child(self.warm, WARM_TIMEOUT, self.abandoned).error
            if error is not None:  # /readyz stays 503; builds are still served
                log.error("warm-up failed", extra={"error": error})
            if self.abandoned():
                return 0
        _load_kernels()
        log.info("table build process ready", extra={"dir": str(d), "nice": os.nice(0)})
        idle_since = time.monotonic()
        while not self.stopping:
            if self.abandoned():
                log.info("server gone; table build process exits")
                break
            job = self.next_job()
            if job is None:
                if self.idle_exit is not None and time.monotonic() - idle_since > self.idle_exit:
                    break
                time.sleep(QUEUE_POLL)
                continue
            self.served[job.get("client", "")] = time.monotonic()
            self.build(job)
            idle_since = time.monotonic()
        return 0

    def _stop(self, _sig: int, _frame: Any) -> None:
        self.stopping = True

    def abandoned(self) -> bool:
        """Whether to stop what it does: told to stop, or the server that started it is
        gone."""
        return self.stopping or bool(self.owner and not _alive(self.owner))

    def build(self, job: dict[str, Any]) -> None:
        """Build one job's tables in a forked child, then drop the job."""
        fp = job["fingerprint"]
        name = job.get("name", fp)
        kind = job.get("kind", "values")
        started = time.monotonic()
        error = None
        try:
            rs = effective_rules(job["variant"], job.get("options"), job.get("overrides"))
            if rs.fingerprint != fp:
                raise ValueError(f"job {fp} describes rules {rs.fingerprint}")
            if kind not in KINDS:
                raise ValueError(f"unknown kind of build {kind!r}")
        except Exception as exc:  # a job this code cannot read: drop it, remember why
            rs, error = None, f"{type(exc).__name__}: {exc}"
        run = None
        fetched = False
        self._write_figures({"job": name, "started": time.time()})
        if rs is not None:
            builtin = bool(job.get("builtin"))
            store = self.builtin if builtin and _writable(self.builtin) else self.house
            # a built-in variant's tables are the image's: only new rules' are shared
            shared = self.shared if not builtin else None
            fetched = shared is not None and shared.fetch(name, store.directory) is not None
            if not fetched:
                before = _table_files(store, rs)
                run = _build_in_child(rs, store, self.settings.threads, kind,
                                      StoreChain(self.builtin, self.house),
                                      abandon=self.abandoned)
                error = run.error
                if error is None and shared is not None:
                    after = _table_files(store, rs)
                    shared.put(name, [p for p, stamp in after.items()
                                      if before.get(p) != stamp])
        seconds = time.monotonic() - started
        outcome = "failed" if error is not None else "shared" if fetched else "built"
        BUILD_SECONDS.labels(kind if kind in KINDS else "unknown", outcome).observe(seconds)
        if error is None and not fetched:
            self.mean_seconds = 0.7 * self.mean_seconds + 0.3 * seconds
            before = self.kind_seconds.get(kind)
            self.kind_seconds[kind] = round(
                seconds if before is None else 0.7 * before + 0.3 * seconds, 3)
        self._write_figures(None)  # done: no job being built
        if error is None:
            log.info("table fetched from the shared store" if fetched else "table built",
                     extra={"variant": job["variant"], "fingerprint": fp, "kind": kind,
                            "seconds": round(seconds, 2),
                            "memory_mib": round(run.peak_mib, 1) if run else 0.0,
                            "cpu_seconds": round(run.cpu_seconds, 2) if run else 0.0})
            self.queue.evict()
        else:
            log.error("table build failed", extra={"variant": job.get("variant"),
                                                   "fingerprint": fp, "kind": kind,
                                                   "error": error})
            self.queue.failed_dir.mkdir(parents=True, exist_ok=True)
            _write_json(self.queue.failed_dir / f"{name}.json", {"error": error})
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.queue.queue_dir / f"{name}.json")
        self.queue.depth()

    def _write_figures(self, current: dict[str, Any] | None) -> None:
        """builder.json: the mean seconds of a build (of each kind too) and the job being
        built now (`current`: its name and when it began), which Retry-After reads."""
        with contextlib.suppress(OSError):
            _write_json(self.settings.directory / "builder.json",
                        {"mean_seconds": round(self.mean_seconds, 3),
                         "kinds": self.kind_seconds, "current": current,
                         "pid": os.getpid()})


#: The build process's name (/proc/<pid>/comm, `ps -o comm`): tells it from the workers.
PROCESS_NAME = "table-builds"


def set_process_name(name: str) -> None:
    """Name this process as `ps` and /proc/<pid>/comm show it (Linux; 15 bytes at most)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, name.encode()[:15] + b"\0", 0, 0, 0)  # PR_SET_NAME


def fork_builder(settings: BuildSettings, close: list[Any] | tuple[Any, ...] = (),
                 warm: Callable[[], object] | None = None) -> int:
    """Fork the build process from this process (gunicorn's master, tables loaded): it
    shares this process's memory and compiled kernels. `close`: sockets the child must not
    keep open (the listening sockets: a process holding one keeps connections queued after
    the server stopped). `warm`: the server's warm-up, run by the child first (when the
    master deferred it). Returns the child's pid; the child never returns."""
    owner = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        for sock in close:
            with contextlib.suppress(OSError):
                sock.close()
        for sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
                    signal.SIGTTIN, signal.SIGTTOU, signal.SIGWINCH, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)  # the master's handlers are not ours
        set_process_name(PROCESS_NAME)
        Builder(settings, owner=owner, idle_exit=None, warm=warm).run()
    except BaseException:  # never return into the master's code
        code = 1
        with contextlib.suppress(Exception):
            log.exception("table build process failed")
    finally:
        os._exit(code)


def _builtin_fingerprints() -> set[str]:
    return {effective_rules(v).fingerprint for v in VARIANT_IDS}


def _writable(store: TableStore) -> bool:
    d = store.directory
    return os.access(d if d.exists() else d.parent, os.W_OK)


def _table_files(store: TableStore, rs: RuleSet) -> dict[Path, tuple[int, int]]:
    """The files of a table of rules in a store, each with its modification time and size
    (what a build wrote is what changed)."""
    out = {}
    for path in store.directory.glob(f"{rs.variant.id}-{rs.fingerprint}-*-v{FORMAT}.npy"):
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            out[path] = (st.st_mtime_ns, st.st_size)
    return out


def _write_json(path: Path, data: dict[str, Any]) -> None:
    write_atomically(path, lambda fh: fh.write(json.dumps(data).encode()))


def _load_kernels() -> None:
    """Compile (or load from numba's cache) the solver's and the analysis build's kernels
    once, before forking, so each build's child starts with them (loading them from the
    cache in every child took seconds a job)."""
    rs = effective_rules("bozo")
    warm_analysis(build_strategy(rs, None, 1))


def _status_kib(field: str) -> int:
    """A field of /proc/self/status in KiB (VmRSS, VmHWM); 0 where there is none."""
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


@dataclass(frozen=True)
class ChildRun:
    """How a job run in a forked child went (`in_child`): None when it worked, else the
    error; the memory it added to the child (MiB: its peak resident size less what it had
    from the parent at the fork); the seconds from the fork to the child's end, and the
    CPU seconds the child used (all its threads)."""

    error: str | None
    peak_mib: float
    seconds: float
    cpu_seconds: float


def in_child(work: Callable[[], object], timeout: float = BUILD_TIMEOUT,
             abandon: Callable[[], bool] = lambda: False) -> ChildRun:
    """Run `work` in a forked child and wait for it (what a build costs, where its memory
    starts cold: bench/bench_forward.py times its jobs this way too). The child is killed
    after `timeout` seconds, or as soon as `abandon()` says so (the server is gone or
    stopping)."""
    began = time.monotonic()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: work, report, exit without running the parent's cleanup
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.close(read_fd)
        code, report = 0, ""
        start_kib = _status_kib("VmRSS")
        try:
            work()
            report = f"ok {(_status_kib('VmHWM') - start_kib) / 1024:.1f}"
        except BaseException as exc:
            code, report = 1, f"{type(exc).__name__}: {exc}"[:2000]
        with contextlib.suppress(OSError):
            os.write(write_fd, report.encode())
        os._exit(code)
    os.close(write_fd)
    deadline = began + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        over = time.monotonic() > deadline
        if over or abandon():
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
            os.close(read_fd)
            return ChildRun(f"took more than {timeout:.0f} s" if over else "abandoned", 0.0,
                            time.monotonic() - began, usage.ru_utime + usage.ru_stime)
        time.sleep(0.02)
    seconds, cpu = time.monotonic() - began, usage.ru_utime + usage.ru_stime
    with os.fdopen(read_fd, "rb") as fh:
        report = fh.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) == 0 and report.startswith("ok "):
        return ChildRun(None, float(report[3:]), seconds, cpu)
    return ChildRun(report or f"process ended with status {status}", 0.0, seconds, cpu)


def _build_in_child(rs: RuleSet, store: TableStore, threads: int, kind: str = "values",
                    sources: StoreChain | None = None,
                    abandon: Callable[[], bool] = lambda: False) -> ChildRun:
    """Build and save the tables (`kind`) into `store` in a forked child (`in_child`). An
    analysis build reads the value tables from `sources` when it holds them (else builds
    them into `store` too)."""
    if kind == "values":
        return in_child(lambda: build_strategy(rs, store, threads), abandon=abandon)
    build = build_start if kind == "start" else build_moments
    return in_child(lambda: build(rs, store, threads, sources), abandon=abandon)


def main(argv: list[str] | None = None,
         warmup: Callable[[tuple[str, ...]], Callable[[], object]] | None = None) -> int:
    """``python -m service.advisor serve-builds``: the build process (started by workers).
    `warmup(variants)`: the warm-up of `--warm`'s variants, run first."""
    ap = argparse.ArgumentParser(prog="python -m service.advisor serve-builds")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--table-dir", required=True)
    ap.add_argument("--keep", type=int, default=8)
    ap.add_argument("--keep-mib", type=int, default=128)
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--warm", default="", help="built-in variants to make ready first")
    ap.add_argument("--owner", type=int, default=0, help="exit when this pid is gone")
    args = ap.parse_args(argv)
    warm_ids = tuple(v for v in args.warm.split(",") if v)
    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)
    builder = Builder(BuildSettings(Path(args.dir), Path(args.table_dir), keep=args.keep,
                                    keep_mib=args.keep_mib, nice=args.nice,
                                    threads=args.threads, warm=warm_ids,
                                    shared_url=settings.advisor_shared_tables,
                                    shared_mib=settings.advisor_shared_tables_mib),
                      owner=args.owner,
                      warm=warmup(warm_ids) if warmup is not None and warm_ids else None)
    return builder.run()
