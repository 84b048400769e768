"""How many CPUs this process may use: the fewest of the CPUs it may run on (its affinity)
and its CPU quota (its cgroup's, as /proc/self/cgroup names it, and its ancestors': v2
`cpu.max`, or v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us`; in a container, the
container's), rounded up. A pod with a CPU limit of 1 on a 32-CPU node may use 1:
thread pools and worker counts sized from the node's CPUs would be throttled by the kernel's
CFS quota instead, with probes and scoring waiting behind them.

Read once a process (a quota does not change under a running container), and imports nothing
of the service: every layer may ask it.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path

#: Where cgroups are mounted, and where a process's own are named.
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def _ancestors(top: Path, own: str) -> list[Path]:
    """`top`/`own` and each of its parents up to `top` (a quota anywhere above binds too)."""
    out = [top]
    here = top
    for part in [p for p in own.split("/") if p and p != ".."]:
        here = here / part
        out.append(here)
    return out


def _v2_quota(directory: Path) -> float | None:
    try:
        quota, _, period = (directory / "cpu.max").read_text().strip().partition(" ")
    except OSError:
        return None
    if quota == "max":
        return None
    try:
        return int(quota) / int(period or 100000)
    except ValueError:
        return None


def _v1_quota(directory: Path) -> float | None:
    try:
        quota_us = int((directory / "cpu.cfs_quota_us").read_text())
        period_us = int((directory / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def cgroup_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """CPUs the process's CPU quota allows (a fraction: 1.5 for `150000 100000`): the
    tightest of its cgroup's and its ancestors', cgroup v2 (`cpu.max`) or v1
    (`cpu.cfs_quota_us` / `cpu.cfs_period_us`); None when there is none or it cannot be
    read."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        lines = []
    found: list[float] = []
    for line in lines:
        _, controllers, own = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers == "":  # v2's unified hierarchy
            dirs = _ancestors(root, own)
            dirs += _ancestors(root / "unified", own) if (root / "unified").is_dir() else []
            found += [q for d in dirs if (q := _v2_quota(d)) is not None]
        elif "cpu" in controllers.split(","):
            for name in (controllers, "cpu", "cpu,cpuacct"):
                if (root / name).is_dir():
                    found += [q for d in _ancestors(root / name, own)
                              if (q := _v1_quota(d)) is not None]
                    break
    return min(found) if found else None


@functools.cache
def usable_cpus() -> int:
    """CPUs this process may keep busy (module docstring), at least 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    quota = cgroup_quota()
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(1, cpus)
