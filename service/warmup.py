"""A server's start: the built-in variants' tables and the compiled kernels made ready,
without keeping the port closed while they are made.

`Warmup.run` is the one warm-up: the value tables (built when missing, else mapped), the
analysis tables, every kernel compiled or loaded from numba's cache, then the marker below
written. `python -m service.advisor build` (the image's build), gunicorn's master and the pod's
build process all run it. gunicorn.conf.py chooses where, at start:

- **at once** (`Warmup.quick`): every table is on disk and the marker says numba's cache holds
  the kernels compiled for this CPU and these sources. The master runs the warm-up before
  forking the workers (about a second: loads only), and they share what it loaded. The
  image's start.
- **in the background** (a fresh clone, a node whose CPU the cache was not made for, edited
  kernels): the port opens at once and the pod's build process runs the warm-up (minutes:
  builds and compiles). Meanwhile scoring, validation and games are answered; a request that
  needs the advisor waits up to ADVISOR_BUILD_WAIT seconds (`ensure`), then gets the
  documented 202 with Retry-After, and /readyz answers 503 (`ready`). Once the marker is
  there, each worker runs the warm-up itself, from disk and numba's cache (about a second),
  at its next /readyz or request that needs it.

The marker is a file in numba's cache directory of the kernels, named by and holding numba's
own key of compiled code (its code generator's target triple, CPU name and CPU features),
numba's and Python's versions, a stamp of the kernels' sources (each file's size and
modification time, as numba checks its cache entries against), and the variants warmed. A
cache made for another CPU, another numba or other sources has no marker of this key: a cache
miss told by numba's key, not by one of numba's files being there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .advisor.advice.advisor import COMPILE_SECONDS, Advisor
from .advisor.analysis.analyst import ANALYSIS_COMPILE_SECONDS, Analyst
from .advisor.tables.build_process import MAX_RETRY_AFTER, TableBuilding
from .advisor.tables.store import write_atomically
from .caller import wait_until
from .caller import waiting as caller_waiting

log = logging.getLogger(__name__)

#: The marker's file name, before its key's digest.
MARKER_PREFIX = "warm-"
#: Seconds between looks at the marker while a request waits for the warm-up.
POLL = 0.2


#: Where every compiled kernel of the service is written (numba checks each cache entry
#: against its kernel's own file): a change elsewhere leaves numba's cache valid.
KERNELS = Path(__file__).resolve().parent / "advisor" / "kernels"


def sources_stamp(root: Path = KERNELS) -> str:
    """A digest of the kernels' Python files (each one's path, size and modification time
    in whole seconds, as image layers keep them): what numba's cache entries are checked
    against, for the kernels and the helpers they inline."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        st = path.stat()
        digest.update(f"{path.relative_to(root)}\0{st.st_size}\0{int(st.st_mtime)}\n".encode())
    return digest.hexdigest()[:32]


def kernel_key() -> dict[str, Any]:
    """numba's key of the code it compiles here (target triple, CPU name and features: its
    code generator's `magic_tuple`, which its cache is keyed by), numba's and Python's
    versions and the sources' stamp."""
    import numba
    from numba.core.registry import cpu_target

    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
    return {"numba": numba.__version__, "python": list(sys.version_info[:2]),
            "triple": triple, "cpu": cpu, "features": features, "sources": sources_stamp()}


def kernel_cache_dir() -> Path:
    """numba's cache directory of the advisor's kernels (NUMBA_CACHE_DIR's copy of the
    kernels' folder, else their __pycache__): the dispatcher's `stats.cache_path`."""
    from .advisor.kernels.values import solve_level

    return Path(solve_level.stats.cache_path)


class Warmup:
    """The start of one process's advisor and analyst for the built-in `variants` (module
    docstring). `done` once this process ran it (or inherited it from gunicorn's master).
    `cache_dir` and `kernel_key` say where the marker goes and what numba's key is
    (`kernel_cache_dir`, `kernel_key`)."""

    def __init__(self, advisor: Advisor, analyst: Analyst, variants: tuple[str, ...] | list[str],
                 cache_dir: Callable[[], Path] = kernel_cache_dir,
                 kernel_key: Callable[[], dict[str, Any]] = kernel_key) -> None:
        self.advisor, self.analyst = advisor, analyst
        self.variants = tuple(variants)
        self.cache_dir, self.kernel_key = cache_dir, kernel_key
        self.done = not self.variants
        self.running = False
        self.deferred = False
        self.began = time.monotonic()
        self._key: dict[str, Any] | None = None
        self._estimate: float | None = None

    # --- the marker ------------------------------------------------------------------------
    def key(self) -> dict[str, Any]:
        """`kernel_key()`, once a process (neither numba's target nor the sources change
        under a running server)."""
        if self._key is None:
            self._key = self.kernel_key()
        return self._key

    def marker(self) -> Path:
        """The marker's path for this process's key."""
        text = json.dumps(self.key(), sort_keys=True).encode()
        return self.cache_dir() / f"{MARKER_PREFIX}{hashlib.sha256(text).hexdigest()[:24]}.json"

    def kernels_compiled(self) -> bool:
        """Whether numba's cache holds every kernel compiled for this key and `variants`: a
        warm-up with this key wrote the marker."""
        try:
            data = json.loads(self.marker().read_bytes())
        except (OSError, ValueError):
            return False
        return data.get("key") == self.key() and set(self.variants) <= set(
            data.get("variants", ()))

    def mark(self) -> None:
        """Write the marker (atomically: a reader sees all of it or none)."""
        path = self.marker()
        previous: set[str] = set()
        with contextlib.suppress(OSError, ValueError):
            previous = set(json.loads(path.read_bytes()).get("variants", ()))
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"key": self.key(), "variants": sorted(previous | set(self.variants))})
        write_atomically(path, lambda fh: fh.write(text.encode()))

    # --- what is missing -------------------------------------------------------------------
    def tables_missing(self) -> list[str]:
        """The variants among `variants` whose value or analysis tables are not on disk."""
        status = self.advisor.status()
        missing = set(self.analyst.analysis_missing(self.variants))
        return [v for v in self.variants if not status.get(v, False) or v in missing]

    def quick(self) -> bool:
        """Whether the warm-up only loads (every table on disk, every kernel in numba's
        cache for this CPU and these sources): about a second, not minutes."""
        return self.kernels_compiled() and not self.tables_missing()

    def estimate(self) -> float:
        """Rough seconds of a warm-up from here (the log lines' and Retry-After's figure)."""
        missing = self.tables_missing()
        seconds = self.advisor.build_estimate(missing) + self.analyst.analysis_estimate(missing)
        if not self.kernels_compiled():
            seconds += COMPILE_SECONDS + ANALYSIS_COMPILE_SECONDS
        return seconds

    # --- running it ------------------------------------------------------------------------
    def run(self, analysis: bool = True) -> dict[str, float]:
        """The warm-up, here: tables loaded or built (the analysis tables too unless not
        `analysis`), kernels compiled or loaded, then the marker written (after a whole
        warm-up only). Seconds of each step, by name. (Requests of this process that ask
        meanwhile pass: `running`.)"""
        from .advisor.kernels.threads import release_pool

        began = time.perf_counter()
        self.running = True
        try:
            if not self.quick():
                log.info(f"warming up: tables and kernels for {len(self.variants)} "
                         f"variant(s), about {self.estimate():.0f} s",
                         extra={"variants": list(self.variants),
                                "missing": self.tables_missing(),
                                "kernels_compiled": self.kernels_compiled(),
                                "cpu": self.key()["cpu"]})
            times = dict(self.advisor.warm(self.variants))
            if analysis:
                times.update((f"{vid} analysis", seconds)
                             for vid, seconds in self.analyst.warm(self.variants).items())
            times["kernels"] = self.analyst.compile_kernels(self.variants)
            if analysis:
                self.mark()
                self.done = True
        finally:
            self.running = False
            # no thread of the kernels' pool is alive when this process forks
            release_pool()
        log.info("warm: tables and kernels ready", extra={
            "seconds": round(time.perf_counter() - began, 2), "variants": list(self.variants)})
        return times

    def defer(self) -> None:
        """The warm-up runs elsewhere (the pod's build process): from now on the advisor
        asks `ensure` before it uses a table, and `ready` says whether this process is warm."""
        self.deferred = True
        self.advisor.gate = self.ensure

    def ready(self) -> bool:
        """Whether this process answers every built-in variant without a 202; runs the
        warm-up here when it only loads (the build process has made everything)."""
        if self.done:
            return True
        if self.running or not self.quick():
            return False
        self.run()
        return True

    def ensure(self, wait: float) -> None:
        """Before a table is used: return at once when warm (or warming in this very call
        chain); else wait up to `wait` seconds for the build process's warm-up (then run it
        here from disk and return), else raise `TableBuilding` with the seconds left."""
        if self.done or self.running:
            return
        deadline = wait_until(wait)  # the request's one budget for its waits
        with caller_waiting():  # the caller's other requests are answered meanwhile
            while True:
                if self.ready():
                    return
                if time.monotonic() >= deadline:
                    break
                time.sleep(POLL)
        if self._estimate is None:
            self._estimate = self.estimate()
        left = self._estimate - (time.monotonic() - self.began)
        raise TableBuilding(max(2, min(MAX_RETRY_AFTER, int(left) + 1)), 1,
                            detail="The server is starting: the advisor's tables and kernels "
                                   "are being made ready")
