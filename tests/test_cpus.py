"""How many CPUs the service may use (service/cpus.py): the CPU quota of its cgroup, read
from fake cgroup trees (v1 and v2), and a real one: a process started in a cgroup with a
quota of one CPU sizes its kernel thread pool and its gunicorn workers by it."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from service.cpus import (
    FALLBACK_CPU,
    PORTABLE_CPU,
    PORTABLE_FEATURES,
    apply_cpu_target,
    cgroup_quota,
    portable_cpu,
)

ROOT = Path(__file__).resolve().parents[1]


def tree(tmp_path: Path, files: dict[str, str], cgroup: str) -> tuple[Path, Path]:
    for name, text in files.items():
        path = tmp_path / "fs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "fs").mkdir(exist_ok=True)
    proc = tmp_path / "cgroup"
    proc.write_text(cgroup)
    return tmp_path / "fs", proc


@pytest.mark.parametrize(("files", "cgroup", "quota"), [
    ({"cpu.max": "max 100000\n"}, "0::/\n", None),
    ({"cpu.max": "150000 100000\n"}, "0::/\n", 1.5),
    ({"cpu.max": "max 100000\n", "pod/cpu.max": "50000 100000\n"}, "0::/pod\n", 0.5),
    # the tightest of the process's cgroup and its ancestors'
    ({"cpu.max": "100000 100000\n", "pod/cpu.max": "400000 100000\n"}, "0::/pod\n", 1.0),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
     "1:cpu:/\n0::/\n", None),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n",
      "cpu/k8s/pod/cpu.cfs_quota_us": "200000\n", "cpu/k8s/pod/cpu.cfs_period_us": "100000\n"},
     "4:cpu,cpuacct:/k8s/pod\n", 2.0),
    ({}, "garbage", None),
])
def test_the_quota_is_read_from_the_process_s_cgroup(tmp_path, files, cgroup, quota):
    root, proc = tree(tmp_path, files, cgroup)
    assert cgroup_quota(root, proc) == quota


def test_a_process_under_a_quota_of_one_cpu_uses_one(tmp_path):
    """A real cgroup (v1's cpu controller, or v2's cpu.max), a quota of one CPU: the kernel
    pool has one thread and gunicorn's default workers are 3 (2 x 1 + 1), whatever the
    machine's CPUs. Needs root and a writable cgroup filesystem, as CI has."""
    if os.geteuid() != 0:
        pytest.fail("needs root to make a cgroup (CI runs as root)")
    name = f"yahtzee-test-{uuid.uuid4().hex[:8]}"
    v1 = Path("/sys/fs/cgroup/cpu")
    if (v1 / "cpu.cfs_quota_us").exists():
        group = v1 / name
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text("100000")
        (group / "cpu.cfs_quota_us").write_text("100000")
    else:  # cgroup v2
        group = Path("/sys/fs/cgroup") / name
        group.mkdir()
        (group / "cpu.max").write_text("100000 100000")
    try:
        code = ("import os, sys\n"
                "from service.cpus import usable_cpus\n"
                "from service.config import default_workers\n"
                "from service.advisor.kernels.threads import cpu_workers, kernel_pool\n"
                "kernel_pool()\n"
                "print(usable_cpus(), cpu_workers(0), default_workers())\n")
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["1", "1", "3"], out.stdout
    finally:
        group.rmdir()


# --- the CPU the kernels are compiled for ---------------------------------------------------

def test_the_portable_cpu_is_the_baseline_the_cpu_has():
    every = dict.fromkeys(PORTABLE_FEATURES, True)
    assert portable_cpu("x86_64", every) == PORTABLE_CPU == "x86-64-v3"
    assert portable_cpu("x86_64", {**every, "extra": False}) == PORTABLE_CPU
    for missing in PORTABLE_FEATURES:  # an older x86-64 CPU: any CPU's code
        assert portable_cpu("x86_64", {**every, missing: False}) == FALLBACK_CPU == "generic"
    assert portable_cpu("aarch64", every) == FALLBACK_CPU


def test_apply_cpu_target_sets_numbas_documented_settings():
    env: dict[str, str] = {}
    assert apply_cpu_target("host", env) is None and env == {}  # numba's default
    name = apply_cpu_target("portable", env)
    assert name in (PORTABLE_CPU, FALLBACK_CPU)
    # the name alone, with the features it implies: nothing of this node's CPU in the key
    assert env == {"NUMBA_CPU_NAME": name, "NUMBA_CPU_FEATURES": ""}
    # an operator's own choice is kept
    mine = {"NUMBA_CPU_NAME": "skylake"}
    assert apply_cpu_target("portable", mine) == "skylake" and mine == {"NUMBA_CPU_NAME": "skylake"}
    with pytest.raises(ValueError, match="ADVISOR_CPU_TARGET"):
        apply_cpu_target("fastest", {})


def test_numba_compiles_for_the_portable_cpu_whatever_this_cpu_is():
    """A fresh process with ADVISOR_CPU_TARGET=portable applied before numba is imported
    (as gunicorn.conf.py does): numba's key of compiled code names the baseline, not this
    machine's CPU, so a cache made here serves a node with another CPU."""
    code = ("from service.cpus import apply_cpu_target; name = apply_cpu_target('portable'); "
            "from numba.core.registry import cpu_target; "
            "t = cpu_target.target_context.codegen().magic_tuple(); "
            "print(name, t[1], repr(t[2]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={k: v for k, v in os.environ.items()
                                          if not k.startswith("NUMBA_CPU")}).stdout.split()
    assert out[0] == out[1] and out[0] in (PORTABLE_CPU, FALLBACK_CPU)
    assert out[2] == "''"
