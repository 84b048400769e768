"""The first answer under rules a table chooses: how long a client following Retry-After waits
for its first `positions/value`, `moves/suggest` and `games/analyze` under new options or
house rules, from nothing (a fresh server, its build directory empty), and where the time
goes (the build process's own figures for each table it built).

    python bench/bench_new_rules.py [--repeat 1]

Cases (issue 45's): a new upper bonus on YAHTZEE and on Yatzy, Kniffel with its extra rule
off, Generala with obligada; and two sheets of the approximate methods, Yam's column sheet and
Maxi Yatzy with a new upper bonus. Each (case, operation) runs on a server of its own, so each is
a first request. Target: 2 s each on a quiet two-core machine. Not a test: it prints.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.live.hostile import post  # noqa: E402
from tests.live.server import Server  # noqa: E402

CASES = {
    "yahtzee upper bonus 60/30": ("yahtzee", {}, {"upper_bonus": {"threshold": 60,
                                                                  "amount": 30}}),
    "yatzy upper bonus 60/30": ("yatzy", {}, {"upper_bonus": {"threshold": 60,
                                                              "amount": 30}}),
    "kniffel extra rule off": ("kniffel", {"extra_kniffel_needs_50": False}, {}),
    "generala obligada": ("generala", {"obligada": True}, {}),
    # approximate methods (each part solved apart, then sampled): answered within 2 s too
    "yams column sheet": ("yams", {"columns": True}, {}),
    "maxi yatzy upper bonus 90/100": ("maxi_yatzy", {}, {"upper_bonus": {"threshold": 90,
                                                                         "amount": 100}}),
}
OPERATIONS = {
    "positions/value": {"scorecard": {"boxes": {}}},
    "moves/suggest": {"dice": [1, 2, 3, 4, 5], "throw": 1},
    "games/analyze": {"players": [{"turns": [{"throws": [[1, 2, 3, 4, 5]], "box": "ones"}]}]},
}


def fitted(body: dict, vid: str, options: dict) -> dict:
    """An operation's body for the variant: six dice for Maxi Yatzy, and a column for a
    turn on a column sheet."""
    text = json.dumps(body)
    if vid == "maxi_yatzy":
        text = text.replace("[1, 2, 3, 4, 5]", "[1, 2, 3, 4, 5, 6]")
    out = json.loads(text)
    if options.get("columns"):
        if "scorecard" in out:
            out["scorecard"] = {"columns": [{"boxes": {}} for _ in range(4)]}
        for player in out.get("players", []):
            for turn in player["turns"]:
                turn["column"] = 1
    return out


def first_answer(srv: Server, path: str, body: dict) -> tuple[float, int, int]:
    """(seconds to the first 200, 202s seen, status) following Retry-After."""
    began = time.monotonic()
    waits = 0
    while True:
        status, headers, _ = post(srv.port, path, body, timeout=120)
        if status != 202 or time.monotonic() - began > 600:
            return time.monotonic() - began, waits, status
        waits += 1
        time.sleep(float(headers.get("retry-after", "1")))


def build_figures(srv: Server, settle: float = 5.0) -> list[str]:
    """What the build process logged for each table it built: kind and seconds. The log
    line of a build comes once its job is done, which may be a moment after the answer
    its table allowed: looked for again for up to `settle` seconds."""
    deadline = time.monotonic() + settle
    while True:
        out = [f"{record['kind']} {record['seconds']:.2f} s" for record in srv.log_records()
               if record.get("message") in ("table built",
                                            "table fetched from the shared store")]
        if out or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tables", default=str(ROOT / ".tables"),
                    help="built-in tables (make run's; the servers start warm on them)")
    ap.add_argument("--cases", nargs="*", choices=sorted(CASES), default=sorted(CASES),
                    help="only these cases")
    args = ap.parse_args()
    rows = []
    for case, (vid, options, rules) in CASES.items():
        if case not in args.cases:
            continue
        for operation, body in OPERATIONS.items():
            times = []
            for _ in range(args.repeat):
                payload = {**fitted(body, vid, options), **({"options": options} if options
                                                            else {}),
                           **({"rules": rules} if rules else {})}
                with Server(table_dir=args.tables,
                            env={"WEB_CONCURRENCY": "1", "ADVISOR_WARM": vid}) as srv:
                    seconds, waits, status = first_answer(
                        srv, f"/v1/variants/{vid}/{operation}", payload)
                    built = build_figures(srv)
                if status != 200:
                    print(f"{case} {operation}: answered {status}", file=sys.stderr)
                times.append(seconds)
            rows.append((case, operation, statistics.median(times), waits, built))
            print(f"{case:28s} {operation:16s} {statistics.median(times):6.2f} s "
                  f"({waits} x 202; built: {', '.join(built) or 'nothing'})", flush=True)
    worst = max(r[2] for r in rows)
    print(json.dumps({"worst_seconds": round(worst, 2), "target_seconds": 2.0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
