"""The server's process figures (service/web/processes.py): the whole tree under the first
process, CPU that only grows when a child exits, memory with shared pages counted once."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from service.web.processes import ServerProcesses, descendants, read_stat

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux /proc only")

#: A child that spends about 0.4 s of CPU, says so, and waits to be told to exit.
BUSY_CHILD = ("import sys, time\n"
              "end = time.process_time() + 0.4\n"
              "while time.process_time() < end: pass\n"
              "print('done', flush=True)\n"
              "sys.stdin.read()\n")


def figures(root: int) -> dict[str, float]:
    return {m.name: m.samples[0].value for m in ServerProcesses(root).collect()}


def test_cpu_of_a_child_stays_counted_after_it_exits():
    """While the child runs its CPU is its own; once it exits and is reaped it is in its
    parent's `cutime`, so the server's total does not fall back (a counter must not)."""
    child = subprocess.Popen([sys.executable, "-c", BUSY_CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "done\n"
        assert child.pid in {p.pid for p in descendants(os.getpid())}
        own = read_stat(child.pid)
        assert own is not None and own.parent == os.getpid() and own.cpu_seconds >= 0.3
        alive = figures(os.getpid())
        assert alive["server_processes"] >= 2
        assert alive["process_cpu_seconds"] >= own.cpu_seconds
    finally:
        child.communicate("")
    assert child.returncode == 0
    gone = figures(os.getpid())  # reaped by communicate
    assert gone["process_cpu_seconds"] >= alive["process_cpu_seconds"]
    assert gone["server_processes"] == alive["server_processes"] - 1


def test_memory_counts_shared_pages_once_and_the_rest_is_sane():
    """Proportional sizes: a forked child sharing this process's pages adds less than its
    resident size; open files and the start time are this process's and its children's."""
    before = figures(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        time.sleep(0.3)
        with_child = figures(os.getpid())
    finally:
        child.communicate(b"")
    assert with_child["process_resident_memory_bytes"] > before["process_resident_memory_bytes"]
    assert with_child["process_open_fds"] >= 3
    started = with_child["process_start_time_seconds"]
    assert time.time() - 7 * 86400 < started <= time.time()


def test_a_command_name_with_spaces_and_parentheses_is_read(tmp_path):
    stat = tmp_path / "4242" / "stat"
    stat.parent.mkdir()
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    # utime stime cutime cstime priority nice threads itrealvalue starttime ...
    stat.write_text("4242 (gunicorn: (worker) x) S 17 1 1 0 -1 0 0 0 0 0 "
                    "300 100 50 50 20 0 1 0 1000 0 0\n")
    found = read_stat(4242, tmp_path)
    ticks = os.sysconf("SC_CLK_TCK")
    assert found is not None and found.parent == 17
    assert found.cpu_seconds == pytest.approx(500 / ticks)
    assert found.started == pytest.approx(1000 / ticks)
    assert read_stat(4243, tmp_path) is None


def test_nothing_without_proc_or_once_the_root_is_gone(tmp_path):
    assert list(ServerProcesses(os.getpid(), tmp_path).collect()) == []
    assert list(ServerProcesses(2**22 + 1).collect()) == []
