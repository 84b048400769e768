"""Start the real service under gunicorn with the project's gunicorn.conf.py, on loopback."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = "service.web.app:create_app()"


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """gunicorn serving the app on 127.0.0.1:`port`, its output in `log_path`."""

    def __init__(self, env: dict[str, str] | None = None, args: tuple[str, ...] = (),
                 app: str = APP, table_dir: str | Path | None = None,
                 bind: bool = True) -> None:
        self.port = free_port()
        self.tmp = tempfile.TemporaryDirectory(prefix="live-")
        base = Path(self.tmp.name)
        self.log_path = base / "server.log"
        self.build_dir = base / "build"
        (base / "metrics").mkdir()
        self.env = {
            **os.environ,
            "PORT": str(self.port),
            "ADVISOR_WARM": "all",
            "ADVISOR_TABLE_DIR": str(table_dir or base / "tables"),
            "ADVISOR_BUILD_DIR": str(self.build_dir),
            "PROMETHEUS_MULTIPROC_DIR": str(base / "metrics"),
            "WEB_CONCURRENCY": "2",
            "LOG_FORMAT": "json",
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        }
        for key in [k for k, v in self.env.items() if v is None]:
            del self.env[key]  # env={"NAME": None} unsets NAME
        # bind: on 127.0.0.1:`port` (--bind); else gunicorn.conf.py's own listeners (PORT on
        # every interface, and METRICS_PORT when set)
        self.args, self.app = (("--bind", f"127.0.0.1:{self.port}") if bind else ()) + args, app
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 300.0, ready: str = "/readyz") -> Server:
        """Start gunicorn and wait until `ready` answers 200 (a bound, not a sleep: about 2 s
        with the tables built, more on a busy machine or when numba compiles)."""
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py", *self.args,
             self.app],
            cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited {self.proc.returncode}:\n{self.log()}")
            with contextlib.suppress(OSError), urllib.request.urlopen(
                    self.url(ready), timeout=2) as r:
                if r.status == 200:
                    return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"gunicorn not ready in {timeout} s:\n{self.log()}")

    def wait_warm(self, timeout: float = 600.0) -> Server:
        """Wait until /readyz says this worker's advisor is warm (the warm-up behind the open
        port is done: service/warmup.py), whatever the tables ADVISOR_WARM leaves out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url("/readyz"), timeout=5) as r:
                    body = r.read()
            except urllib.error.HTTPError as exc:
                body = exc.read()
            except OSError:
                body = b"{}"
            with contextlib.suppress(ValueError):
                if json.loads(body).get("warm"):
                    return self
            time.sleep(0.5)
        raise RuntimeError(f"not warm in {timeout} s:\n{self.log()[-3000:]}")

    def url(self, path: str) -> str:
        """The address of a path on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    def log(self) -> str:
        """Everything the server wrote so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_records(self) -> list[dict]:
        """The server's JSON log lines, parsed (other lines skipped)."""
        out = []
        for line in self.log().splitlines():
            with contextlib.suppress(ValueError):
                doc = json.loads(line)
                if isinstance(doc, dict):
                    out.append(doc)
        return out

    def children(self) -> list[int]:
        """The master's child processes now."""
        assert self.proc is not None
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    def builder(self) -> int | None:
        """The pid of the table build process the master forked (named table-builds)."""
        for pid in self.children():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/comm").read_text().strip() == "table-builds":
                    return pid
        return None

    def workers(self) -> list[int]:
        """The pids of the master's gunicorn workers (its children but the build process)."""
        return [p for p in self.children() if p != self.builder()]

    def signal(self, sig: int) -> None:
        """Send a signal to the master."""
        assert self.proc is not None
        os.kill(self.proc.pid, sig)

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM the master, wait (then SIGKILL the group); the exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        with contextlib.suppress(ProcessLookupError):  # anything left in the group
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._log.close()
        return self.proc.returncode

    def close(self) -> None:
        """Stop and remove the scratch directory."""
        self.stop()
        self.tmp.cleanup()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_until(condition: Callable[[], object], timeout: float,
               interval: float = 0.05) -> bool:
    """Poll `condition` until it is true or `timeout` seconds passed; whether it came true.
    Tests wait on what they need this way, with a generous bound, instead of sleeping for a
    time that holds only on an idle machine."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (workers, the build process and its children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def memory_kib(pid: int) -> dict[str, int]:
    """Pss, Rss, Private_Clean + Private_Dirty (Uss) and Anonymous of one process, KiB
    (0s when it is gone)."""
    out = {"Pss": 0, "Rss": 0, "Uss": 0, "Anonymous": 0}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("Pss", "Rss", "Anonymous"):
                out[key] += int(rest.split()[0])
            elif key in ("Private_Clean", "Private_Dirty"):
                out["Uss"] += int(rest.split()[0])
    return out


def command_of(pid: int) -> str:
    """A process's command line, for reports."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
