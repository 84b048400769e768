"""``python -m service.advisor build [variant ...]``: build the built-in value tables into
``$ADVISOR_TABLE_DIR`` (the service's settings, `service/config.py`), with the exact
distribution of the final score from the start of a game of each; with ``--analysis`` also
the moment tables beside them (which the service's build process otherwise makes on first
use).

``python -m service.advisor serve-builds ...`` is the pod's table build process; the
service's workers start it when they need it (`tables/build_process.py`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..compose import make_advisor, make_analyst
from ..config import Settings
from ..domain.variants import VARIANT_IDS
from .tables.build_process import main as serve_builds


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve-builds"]:
        return serve_builds(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m service.advisor")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the value tables of built-in variants")
    sub.add_parser("serve-builds", help="the table build process (started by the service)")
    build.add_argument("variants", nargs="*", choices=[[], *VARIANT_IDS], default=[],
                       metavar="variant", help=f"variant ids (default: all of "
                                               f"{', '.join(VARIANT_IDS)})")
    build.add_argument("--analysis", action="store_true",
                       help="also build the moment tables (float64 mean and second moment "
                            "of every state, 4x a value table; otherwise the service's "
                            "build process makes them on first use): half a minute more")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    advisor = make_advisor(settings, background=False)  # this process is the builder
    ids = args.variants or list(VARIANT_IDS)
    times = advisor.warm(ids)
    for vid, seconds in times.items():
        print(f"{vid:18s} {seconds:7.2f} s")
    # numba's cache then holds the analysis kernels too (the image ships that cache)
    analyst = make_analyst(settings, advisor)
    seconds = analyst.compile_kernels(ids)
    print(f"{'analysis kernels':18s} {seconds:7.2f} s")
    if args.analysis:
        for vid, seconds in analyst.warm(ids).items():
            print(f"{vid:18s} {seconds:7.2f} s  analysis (moments, start distribution)")
    else:
        # the exact distribution from the start of a game: a few KiB a variant, seconds to
        # compute for the larger sheets (a request would sample it instead)
        for vid, seconds in analyst.warm(ids, moments=False).items():
            print(f"{vid:18s} {seconds:7.2f} s  start distribution")
    print(f"tables in {Path(settings.advisor_table_dir).resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
