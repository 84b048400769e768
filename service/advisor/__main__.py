"""``python -m service.advisor build [variant ...]``: build the built-in variants' tables into
``$ADVISOR_TABLE_DIR`` (the service's settings, `service/config.py`): the value tables and
every table the analysis reads (the distributions from the first turns' starts, the start
distribution, the moment tables), so that a server starting on them answers every request
of a built-in variant at once (the image runs it; gunicorn's start makes what is missing).
``--values-only``: the value tables alone (the service then makes the rest at its start).

``python -m service.advisor pack``: pack the tables of ``$ADVISOR_TABLE_DIR`` in place for
shipping (the image's build, after `build`; `tables/packing.py`): a server unpacks them at
its start.

``python -m service.advisor serve-builds ...`` is the pod's table build process; the
service's workers start it when they need it (`tables/build_process.py`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..compose import make_advisor, make_analyst, make_warmup
from ..config import Settings
from ..domain.variants import VARIANT_IDS
from .tables.build_process import main as serve_builds
from .tables.packing import pack
from .tables.strategies import pack_step


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve-builds"]:
        return serve_builds(argv[1:], warmup=_build_process_warmup)
    parser = argparse.ArgumentParser(prog="python -m service.advisor")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the tables of built-in variants")
    sub.add_parser("serve-builds", help="the table build process (started by the service)")
    sub.add_parser("pack", help="pack $ADVISOR_TABLE_DIR's tables for shipping (the image's)")
    build.add_argument("variants", nargs="*", choices=[[], *VARIANT_IDS], default=[],
                       metavar="variant", help=f"variant ids (default: all of "
                                               f"{', '.join(VARIANT_IDS)})")
    build.add_argument("--values-only", action="store_true",
                       help="only the value tables (the analysis tables take a few minutes "
                            "more for all variants; gunicorn's start makes them otherwise)")
    build.add_argument("--analysis", action="store_true",
                       help="the analysis tables too (the default; kept for scripts)")
    args = parser.parse_args(argv)
    if args.command == "pack":
        directory = Settings.from_env().advisor_table_dir
        before, after = pack(directory, pack_step)
        print(f"packed the tables in {Path(directory).resolve()}: "
              f"{before / 2**20:.1f} MiB -> {after / 2**20:.1f} MiB")
        return 0
    ids = args.variants or list(VARIANT_IDS)
    settings = replace(Settings.from_env(), advisor_warm=",".join(ids))
    advisor = make_advisor(settings, background=False)  # this process is the builder
    warmup = make_warmup(settings, advisor, make_analyst(settings, advisor))
    # the one warm-up of a server's start: numba's cache then holds every kernel, and the
    # marker says so (the image ships both)
    for name, seconds in warmup.run(analysis=not args.values_only).items():
        print(f"{name:27s} {seconds:7.2f} s")
    print(f"tables in {Path(settings.advisor_table_dir).resolve()}")
    return 0


def _build_process_warmup(variants: tuple[str, ...]) -> Callable[[], object]:
    """The warm-up a build process started by a worker runs first: the server's, when it is
    not done (the build process its master forked to run it is gone); else nothing."""
    settings = replace(Settings.from_env(), advisor_warm=",".join(variants))
    advisor = make_advisor(settings, background=False)  # this process is the builder
    warmup = make_warmup(settings, advisor, make_analyst(settings, advisor))
    return lambda: None if warmup.quick() else warmup.run()


if __name__ == "__main__":
    sys.exit(main())
