"""How much memory a pod needs: the formula behind the Helm chart's requests and limits.

Measured on the service as it ships (Python 3.11, numpy 2.4, numba 0.68; 2 cores, loopback
traffic), as the sum of PSS over gunicorn's master, its workers and the table build process
(PSS counts a page shared by n processes as 1/n in each, so the sum is the real total), plus
the house-rules tables on disk (their page cache is charged to the pod):

- base: master and the idle build process after loading every built-in table (PSS
  235 MiB with light traffic), plus those tables resident in full (21 MiB);
- per worker: 15 MiB after light traffic (total PSS 249, 263, 292 MiB with 1, 2, 4
  workers), plus a full cache of validated rules (128 of about 100 KiB each, 13 MiB);
- per house-rules table a worker maps: its model and kernel data (about 0.4 MiB a part,
  4 parts on a column sheet); the table itself is a file shared by the whole pod;
- house-rules tables on disk: at most ADVISOR_CACHE_MIB (the build process removes the least
  recently used beyond it, and beyond ADVISOR_CACHE_SIZE tables);
- the built-in variants' analysis tables (moment tables: float64 mean and second moment,
  made on first use by the build process), resident in full once all are used (81 MiB);
- one build in progress: its own memory, in a child that exits when the build is done: at
  most 146 MiB measured (the moment tables of Yatzy; value tables: 116 MiB for Yatzy house
  rules, column sheets 58 MiB);
- slack: 10 % for the allocator and what the figures above do not catch.

docs/deploy.md shows the formula; tests/deploy/test_helm_chart.py checks the chart's limit
against it and tests/live/test_memory.py checks a pod's memory after a flood of house rules.
"""

from __future__ import annotations

import math

BASE_MIB = 256.0
WORKER_MIB = 30.0
TABLE_PER_WORKER_MIB = 1.5
ANALYSIS_MIB = 81.0
BUILD_MIB = 150.0
SLACK = 0.10


def memory_limit_mib(workers: int, cache_size: int, cache_mib: int) -> int:
    """MiB a pod may use at most: every worker's rules cache full, `cache_size` house-rules
    tables mapped by every worker, `cache_mib` of them on disk, the built-in analysis tables
    used, one build running."""
    total = (BASE_MIB + workers * (WORKER_MIB + TABLE_PER_WORKER_MIB * cache_size)
             + cache_mib + ANALYSIS_MIB + BUILD_MIB)
    return math.ceil(total * (1 + SLACK))


def memory_request_mib(workers: int) -> int:
    """MiB a pod uses in steady state without house rules: base and workers."""
    return math.ceil(BASE_MIB + workers * 15.0)
