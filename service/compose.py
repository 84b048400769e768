"""The advisor and the analyst that a service's settings describe.

The app factory (`service.web.app.create_app`) and the command line (`python -m
service.advisor`) build them here, from the same `Settings`, so that both serve the same
tables with the same cache sizes, threads and build process.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .advisor import Advisor
from .advisor.analysis.analyst import Analyst
from .advisor.kernels.threads import cpu_workers
from .advisor.tables.build_process import BuildQueue, BuildSettings, default_build_dir
from .advisor.tables.packing import is_packed, unpack
from .config import Settings, warm_variants
from .warmup import Warmup


def build_dir(settings: Settings) -> Path:
    """The pod's writable table directory: ADVISOR_BUILD_DIR, else `default_build_dir`."""
    return (Path(settings.advisor_build_dir) if settings.advisor_build_dir
            else default_build_dir(settings.advisor_table_dir))


def table_dir(settings: Settings) -> Path:
    """Where the built-in variants' tables are read: ADVISOR_TABLE_DIR, or, when that is
    packed (the image's, `advisor.tables.packing`), ``builtin`` in the build directory,
    where they are unpacked first (0.7 s on two CPUs, once a pod: a later start, or the build
    process, finds them unpacked), on ADVISOR_THREADS threads."""
    source = Path(settings.advisor_table_dir)
    if not is_packed(source):
        return source
    target = build_dir(settings) / "builtin"
    unpack(source, target, cpu_workers(settings.advisor_threads))
    return target


def make_advisor(settings: Settings, background: bool = True,
                 admit_build: Callable[[str], None] | None = None) -> Advisor:
    """The advisor the settings describe: its tables, cache and builds (in the pod's build
    process when `ADVISOR_BUILDS=background` and `background`; else in the caller).
    `admit_build(client)` is asked before a new table is queued (raising refuses it)."""
    builtin = table_dir(settings)
    builds = None
    if background and settings.advisor_builds == "background":
        builds = BuildQueue(BuildSettings(
            directory=build_dir(settings), table_dir=builtin,
            max_queue=settings.advisor_build_queue,
            per_client=settings.advisor_build_queue_per_client,
            keep=settings.advisor_cache_size, keep_mib=settings.advisor_cache_mib,
            nice=settings.advisor_build_nice,
            threads=settings.advisor_threads,
            warm=warm_variants(settings.advisor_warm),
            shared_url=settings.advisor_shared_tables,
            shared_mib=settings.advisor_shared_tables_mib), admit=admit_build)
    return Advisor(builtin, settings.advisor_cache_size,
                   settings.advisor_threads, builds, settings.advisor_build_wait)


def make_analyst(settings: Settings, advisor: Advisor) -> Analyst:
    """The analyst (position values, game analysis, win probabilities) around `advisor`,
    with the settings' kernel threads."""
    return Analyst(advisor, threads=settings.advisor_threads)


def make_warmup(settings: Settings, advisor: Advisor, analyst: Analyst) -> Warmup:
    """The start of the advisor and analyst for ADVISOR_WARM's variants (run by gunicorn's
    master, or deferred to the build process: `service.warmup`)."""
    return Warmup(advisor, analyst, warm_variants(settings.advisor_warm))
