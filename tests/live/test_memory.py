"""A pod's memory after a flood of distinct house rules stays within the documented bound
(service/capacity.py, docs/deploy.md), with the chart's 2 workers and every table warm."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from service.capacity import memory_limit_mib
from service.domain.variants import VARIANTS

from .hostile import Normal, post
from .server import Server, memory_kib, process_tree

CACHE_SIZE, CACHE_MIB, WORKERS = 2, 128, 2


def pod_mib(srv: Server) -> float:
    """Sum of PSS over the server's processes plus the house-rules tables on disk."""
    pss = sum(memory_kib(p)["Pss"] for p in process_tree(srv.proc.pid)) / 1024
    disk = sum(_size(p) for p in Path(srv.build_dir).glob("*.npy")) / 2**20
    return pss + disk


def _size(path: Path) -> int:
    """A table's size on disk; 0 once the build process has removed it (the pod keeps
    CACHE_SIZE tables: one listed may be gone before it is measured)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def test_memory_after_a_flood_of_house_rules_stays_within_the_bound(tables):
    env = {"WEB_CONCURRENCY": str(WORKERS), "ADVISOR_CACHE_SIZE": str(CACHE_SIZE),
           "ADVISOR_CACHE_MIB": str(CACHE_MIB), "ADVISOR_BUILD_QUEUE_PER_CLIENT": "16"}
    bound = memory_limit_mib(WORKERS, CACHE_SIZE, CACHE_MIB)
    with Server(table_dir=tables, env=env) as srv:
        for vid, variant in VARIANTS.items():  # every built-in table used, by both workers
            dice = [1, 2, 3, 4, 5, 6][:variant.dice]
            for _ in range(4):
                assert post(srv.port, f"/v1/variants/{vid}/moves/suggest",
                            {"dice": dice, "throw": 1})[0] == 200
        with Normal(srv.port, 2):
            time.sleep(1)
        start = pod_mib(srv)

        # 300 distinct house rules scored: every worker's cache of rules fills up
        def score(offset: int) -> None:
            for n in range(offset, 300, 3):
                body = {"dice": [2, 2, 3, 5, 5], "rules": {"boxes": {"full_house": {
                    "value": 100 + n}}}}
                assert post(srv.port, "/v1/variants/yahtzee/hands/score", body)[0] == 200

        threads = [threading.Thread(target=score, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)

        # then advice under 4 new tables of the largest kinds (column sheets, Yatzy): more
        # than the pod keeps, so older ones are removed
        wanted = [("yahtzee", {"columns": True}, {"boxes": {"full_house": {"value": 26 + i}}})
                  for i in range(2)]
        wanted += [("kniffel", {"columns": True}, {"boxes": {"full_house": {"value": 26}}})]
        wanted += [("yatzy", None, {"boxes": {"chance": {"scoring": "fixed", "value": 31}}})]
        peak, deadline = start, time.monotonic() + 240
        while wanted and time.monotonic() < deadline:
            for item in list(wanted):
                vid, options, rules = item
                body = {"dice": [1, 2, 3, 4, 5], "throw": 1, "rules": rules,
                        **({"options": options} if options else {})}
                status, _, _ = post(srv.port, f"/v1/variants/{vid}/moves/suggest", body)
                assert status in (200, 202, 429)
                if status == 200:
                    wanted.remove(item)
                    # the table used; the pod keeps CACHE_SIZE tables, so a build finishing
                    # meanwhile may remove it (least recently used by the build process's
                    # clock), and the rules get the documented 202 again
                    for dice in ([1, 1, 1, 1, 1], [2, 3, 4, 5, 6], [6, 6, 5, 5, 1]):
                        for throw in (1, 2, 3):
                            assert post(srv.port, f"/v1/variants/{vid}/moves/suggest",
                                        {**body, "dice": dice, "throw": throw}
                                        )[0] in (200, 202)
                peak = max(peak, pod_mib(srv))
            time.sleep(0.3)
        assert not wanted, f"not built in time: {wanted}"
        end = pod_mib(srv)
        kept = {p.name.split("-")[1] for p in Path(srv.build_dir).glob("*.npy")}
    print(f"pod memory (PSS of every process + tables on disk): {start:.0f} MiB after "
          f"warm-up, peak {peak:.0f} MiB during the flood, {end:.0f} MiB after; bound for "
          f"{WORKERS} workers, {CACHE_SIZE} tables, {CACHE_MIB} MiB: {bound} MiB")
    assert len(kept) <= CACHE_SIZE
    assert peak <= bound
