"""The server's processes as Prometheus metrics: CPU, memory, open files and start time of
gunicorn's master, its workers and the build process together.

prometheus-client's own process metrics (`process_*`) describe the one process that answers
the scrape, and its multiprocess mode leaves them out altogether: a scrape of one worker
would say nothing of the others or of the build process. `ServerProcesses` reads the same
figures from /proc (Linux) for the whole process tree under the server's first process (the
one that loaded the app: gunicorn's master, which forks the others), and exports them under
the standard names, so the usual dashboards read them:

- `process_cpu_seconds_total`: user and system CPU of every process of the server, those that
  have exited included (a process's reaped children's time is in its own figures, `cutime`
  and `cstime`): it only grows, whatever workers are restarted;
- `process_resident_memory_bytes`: the sum of their proportional set sizes (PSS: a page shared
  by n processes counts 1/n to each), so the tables the workers share with the master count
  once, not once per worker (the resident size where PSS cannot be read);
- `process_open_fds`, summed; `process_start_time_seconds`, the first process's;
- `server_processes`: how many processes the server has now.

Without /proc (not Linux) it exports nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessFigures:
    """One process's figures from /proc/<pid>/stat: its parent, CPU seconds (its own and its
    reaped children's) and start time in seconds since boot."""

    pid: int
    parent: int
    cpu_seconds: float
    started: float


def read_stat(pid: int, proc: Path = PROC) -> ProcessFigures | None:
    """`pid`'s figures, or None when it is gone (or not ours to read)."""
    try:
        text = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last
    fields = text[text.rindex(")") + 2:].split()
    ticks = os.sysconf("SC_CLK_TCK")
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return ProcessFigures(pid=pid, parent=int(fields[1]),
                          cpu_seconds=(utime + stime + cutime + cstime) / ticks,
                          started=int(fields[19]) / ticks)


def descendants(root: int, proc: Path = PROC) -> list[ProcessFigures]:
    """`root` and every live process under it, by the parent each names."""
    figures: dict[int, ProcessFigures] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            found = read_stat(int(entry.name), proc)
            if found is not None:
                figures[found.pid] = found
    children: dict[int, list[int]] = {}
    for f in figures.values():
        children.setdefault(f.parent, []).append(f.pid)
    tree, todo = [], [root] if root in figures else []
    while todo:
        pid = todo.pop()
        tree.append(figures[pid])
        todo.extend(children.get(pid, ()))
    return tree


def memory_bytes(pid: int, proc: Path = PROC) -> int:
    """`pid`'s proportional set size (smaps_rollup's Pss), else its resident size; 0 when it
    is gone."""
    try:
        for line in (proc / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        resident_pages = int((proc / str(pid) / "statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def open_fds(pid: int, proc: Path = PROC) -> int:
    """How many files `pid` has open; 0 when that cannot be read."""
    try:
        return len(os.listdir(proc / str(pid) / "fd"))
    except OSError:
        return 0


def boot_time(proc: Path = PROC) -> float:
    """When the machine booted, in seconds since the epoch (/proc/stat's btime)."""
    for line in (proc / "stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise ValueError("no btime in /proc/stat")


class ServerProcesses:
    """A collector (prometheus-client's collector API: `collect`) of the process tree under
    `root`, the server's first process (module docstring)."""

    def __init__(self, root: int, proc: Path = PROC) -> None:
        self.root, self.proc = root, proc

    def collect(self) -> Iterator[Metric]:
        """The server's figures now; nothing without /proc or once `root` is gone."""
        if not (self.proc / "stat").exists():
            return
        tree = descendants(self.root, self.proc)
        if not tree:
            return
        cpu = CounterMetricFamily(
            "process_cpu_seconds_total",
            "User and system CPU seconds of the server's processes (gunicorn's master, its "
            "workers, the build process), those that have exited included.")
        cpu.add_metric([], sum(p.cpu_seconds for p in tree))
        yield cpu
        yield GaugeMetricFamily(
            "process_resident_memory_bytes",
            "Memory the server's processes hold: the sum of their proportional set sizes "
            "(pages they share counted once).",
            value=sum(memory_bytes(p.pid, self.proc) for p in tree))
        yield GaugeMetricFamily(
            "process_open_fds", "Files the server's processes have open.",
            value=sum(open_fds(p.pid, self.proc) for p in tree))
        yield GaugeMetricFamily(
            "process_start_time_seconds",
            "When the server's first process started, in seconds since the epoch.",
            value=boot_time(self.proc) + tree[0].started)
        yield GaugeMetricFamily(
            "server_processes", "How many processes the server has now.", value=len(tree))
