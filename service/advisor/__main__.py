"""``python -m service.advisor build [variant ...]``: build the built-in variants' tables into
``$ADVISOR_TABLE_DIR`` (the service's settings, `service/config.py`): the value tables and
every table the analysis reads (the distributions from the first turns' starts, the start
distribution, the moment tables), so that a server starting on them answers every request
of a built-in variant at once (the image runs it; gunicorn's start makes what is missing).
``--values-only``: the value tables alone (the service then makes the rest at its start).

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
    build = sub.add_parser("build", help="build the tables of built-in variants")
    sub.add_parser("serve-builds", help="the table build process (started by the service)")
    build.add_argument("variants", nargs="*", choices=[[], *VARIANT_IDS], default=[],
                       metavar="variant", help=f"variant ids (default: all of "
                                               f"{', '.join(VARIANT_IDS)})")
    build.add_argument("--values-only", action="store_true",
                       help="only the value tables (the analysis tables take a few minutes "
                            "more for all variants; gunicorn's start makes them otherwise)")
    build.add_argument("--analysis", action="store_true",
                       help="the analysis tables too (the default; kept for scripts)")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    advisor = make_advisor(settings, background=False)  # this process is the builder
    ids = args.variants or list(VARIANT_IDS)
    times = advisor.warm(ids)
    for vid, seconds in times.items():
        print(f"{vid:18s} {seconds:7.2f} s")
    # numba's cache then holds the analysis kernels too (the image ships that cache)
    analyst = make_analyst(settings, advisor)
    if not args.values_only:
        for vid, seconds in analyst.warm(ids).items():
            print(f"{vid:18s} {seconds:7.2f} s  analysis (first turns' distributions, start "
                  f"distribution, moments)")
    seconds = analyst.compile_kernels(ids)
    print(f"{'analysis kernels':18s} {seconds:7.2f} s")
    print(f"tables in {Path(settings.advisor_table_dir).resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
