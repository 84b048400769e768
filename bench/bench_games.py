"""Benchmark games/validate: whole games validated per second, against scoring their sheets.

    python bench/bench_games.py [--games 200] [--batch 50] [--rounds 5]

Generates random legal games (tests/domain/gamegen.py: 2-3 players, every turn's throws and
kept dice recorded, claimed points and totals) of a mix of variants, then, in one process
through the app's WSGI interface (no network; the HTTP benchmark is bench_http.py):

- sends them to games/validate in batches and reports games validated per second;
- as the baseline in the same run, sends the final sheets of the same games to
  scorecards/score in batches (one sheet per player) and reports sheets per second;
- the ratio: what validating a game costs against totalling its final sheets (a game of
  13 turns a player replays every throw and placement, so expect tens of times more);
- the domain alone (`validate_game`, no Flask): games per second.

Prints medians over --rounds. Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.config import Settings
from service.domain.games import validate_game
from service.web.app import create_app
from tests.domain.gamegen import final_scorecards, random_game

MIX = [("yahtzee", None), ("kniffel", None), ("yatzy", None), ("generala", None),
       ("maxi_yatzy", None), ("general", None), ("yahtzee", {"columns": True})]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=140, help="games per round (mixed variants)")
    ap.add_argument("--batch", type=int, default=20, help="games per request")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()

    app = create_app(Settings(advisor_warm="none", access_log=False, metrics_enabled=False))
    client = app.test_client()

    per_variant: dict[int, list] = {}  # index in MIX -> its games
    for i in range(args.games):
        variant, options = MIX[i % len(MIX)]
        gen = random_game(variant, seed=i, players=2 + i % 2, options=options)
        per_variant.setdefault(i % len(MIX), []).append(gen)
    turns = sum(len(p["turns"]) for gens in per_variant.values() for g in gens
                for p in g.body["players"])
    # as the server runs (gunicorn.conf.py's when_ready): what was made before the requests
    # (the app, the games) out of the collector's sight, so that a collection scans only
    # what the requests allocate
    gc.freeze()

    def validate_all() -> None:
        for m, gens in per_variant.items():
            variant = MIX[m][0]
            for k in range(0, len(gens), args.batch):
                resp = client.post(f"/v1/variants/{variant}/games/validate/batch",
                                   json=[g.body for g in gens[k:k + args.batch]])
                assert resp.status_code == 200 and all(r["valid"] for r in resp.get_json())

    sheets = {key: [c for g in gens
                    for c in final_scorecards(g)] for key, gens in per_variant.items()}
    n_sheets = sum(len(s) for s in sheets.values())

    def score_all() -> None:
        for m, cards in sheets.items():
            variant, opts = MIX[m]
            per_batch = args.batch * 2
            for k in range(0, len(cards), per_batch):
                body = [{**c, **({"options": opts} if opts else {}), "final": True}
                        for c in cards[k:k + per_batch]]
                resp = client.post(f"/v1/variants/{variant}/scorecards/score/batch", json=body)
                assert resp.status_code == 200

    def domain_all() -> None:
        for gens in per_variant.values():
            for g in gens:
                validate_game(g.rs, g.body)

    def median_time(fn) -> float:
        fn()  # warm-up
        times = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    t_val = median_time(validate_all)
    t_score = median_time(score_all)
    t_dom = median_time(domain_all)
    games = args.games
    print(f"{games} games ({turns} turns, {n_sheets} final sheets) of "
          f"{', '.join(sorted({v for v, _ in MIX}))} (column sheets included); "
          f"batches of {args.batch}; median of {args.rounds} rounds")
    print(f"games/validate:   {games / t_val:9.0f} games/s  ({turns / t_val:,.0f} turns/s)")
    print(f"scorecards/score: {n_sheets / t_score:9.0f} sheets/s (the games' final sheets)")
    print(f"ratio: validating a game costs {t_val / t_score:.1f}x totalling its final sheets")
    print(f"domain only (validate_game, no HTTP): {games / t_dom:.0f} games/s")


if __name__ == "__main__":
    main()
