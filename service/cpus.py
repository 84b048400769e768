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


# --- The CPU the kernels are compiled for ---------------------------------------------------
# numba compiles the advisor's kernels for the CPU it runs on, by default, and keys its cache
# of compiled kernels by that CPU's name and features: a cache made on one node is not used
# on a node with another CPU, which compiles every kernel again (about 90 s on two cores).
# ADVISOR_CPU_TARGET=portable (the image's) compiles for a fixed baseline instead, through
# numba's documented settings NUMBA_CPU_NAME and NUMBA_CPU_FEATURES, so that the cache the
# image ships serves every node of the architecture. Measured on the README's machine (a
# table build of yahtzee and yatzy, docs/benchmarks.md): x86-64-v3 as fast as the host's own
# CPU (1.02x the time), x86-64-v2 1.37x, generic 1.67x.

#: The baseline of ADVISOR_CPU_TARGET=portable on x86-64, where the CPU has its features:
#: AVX2, FMA, BMI1/2 and the rest (every x86-64 server CPU since 2013-2015).
PORTABLE_CPU = "x86-64-v3"
#: What an x86-64 CPU needs for PORTABLE_CPU (LLVM's names of the features).
PORTABLE_FEATURES = ("sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cx16", "sahf", "avx",
                     "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
#: The baseline elsewhere: any CPU of the architecture.
FALLBACK_CPU = "generic"
#: ADVISOR_CPU_TARGET's values.
CPU_TARGETS = ("host", "portable")


def portable_cpu(machine: str, features: dict[str, bool]) -> str:
    """The CPU name numba compiles for with ADVISOR_CPU_TARGET=portable, on a `machine`
    (`platform.machine()`) whose CPU has `features` (LLVM's names)."""
    if machine in ("x86_64", "AMD64") and all(features.get(f, False)
                                              for f in PORTABLE_FEATURES):
        return PORTABLE_CPU
    return FALLBACK_CPU


def apply_cpu_target(target: str, environ: dict[str, str] | None = None) -> str | None:
    """Set numba's CPU settings in `environ` (default: this process's environment, inherited
    by what it starts) for ADVISOR_CPU_TARGET=`target`, before numba is imported: "host"
    leaves numba's default (the CPU it runs on); "portable" compiles for `portable_cpu`, with
    the features its name implies. A NUMBA_CPU_NAME set already is kept (an operator's
    choice). Returns the CPU name numba compiles for (None: the host's)."""
    env = os.environ if environ is None else environ
    if target not in CPU_TARGETS:
        raise ValueError(f"ADVISOR_CPU_TARGET={target!r}: use one of {', '.join(CPU_TARGETS)}")
    if env.get("NUMBA_CPU_NAME"):
        return env["NUMBA_CPU_NAME"]
    if target == "host":
        return None
    import platform

    import llvmlite.binding as llvm  # LLVM's view of this CPU; does not import numba

    name = portable_cpu(platform.machine(), dict(llvm.get_host_cpu_features()))
    env["NUMBA_CPU_NAME"] = name
    env["NUMBA_CPU_FEATURES"] = ""  # the features the name implies, none of the host's
    return name
