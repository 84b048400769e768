"""``python -m service.advisor build [variant ...]``: build the built-in value tables."""

from __future__ import annotations

import argparse
import sys

from ..variants import VARIANT_IDS
from .tables import table_dir, warm


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m service.advisor")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build the value tables of built-in variants")
    build.add_argument("variants", nargs="*", choices=[[], *VARIANT_IDS], default=[],
                       metavar="variant", help=f"variant ids (default: all of "
                                               f"{', '.join(VARIANT_IDS)})")
    args = parser.parse_args(argv)
    times = warm(args.variants or list(VARIANT_IDS))
    for vid, seconds in times.items():
        print(f"{vid:18s} {seconds:7.2f} s")
    print(f"tables in {table_dir().resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
