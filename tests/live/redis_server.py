"""A real redis-server (Debian's package) for the live tests: on a free loopback port, in a
temporary directory, persisting nothing; it can be killed and started again on its port."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .server import free_port

#: What to install when redis-server is missing (.ci/run installs it).
PACKAGE = "redis-server"


def redis_server_command() -> str:
    """The path of redis-server; raises RuntimeError saying what to install when missing
    (the tests that need it fail, they do not skip: CI must run them)."""
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError(f"redis-server is not installed: the tenant tests run a real one "
                           f"(apt-get install {PACKAGE}; .ci/run installs it)")
    return found


class RedisServer:
    """redis-server on 127.0.0.1:`port` (`url()` for RATE_LIMIT_STORAGE), its output in
    `log_path`. `kill()` SIGKILLs it; `start()` starts it again on the same port, empty."""

    def __init__(self) -> None:
        self.command = redis_server_command()
        self.port = free_port()
        self.tmp = tempfile.TemporaryDirectory(prefix="live-redis-")
        self.log_path = Path(self.tmp.name) / "redis.log"
        self.proc: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        """The redis:// address of one of its databases."""
        return f"redis://127.0.0.1:{self.port}/{db}"

    def ping(self, timeout: float = 0.5) -> bool:
        """Whether it answers PING now."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self, timeout: float = 20.0) -> RedisServer:
        """Start it and wait until it answers PING."""
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child holds it; closed below
        try:
            self.proc = subprocess.Popen(
                [self.command, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", self.tmp.name,
                 "--daemonize", "no", "--loglevel", "warning"],
                cwd=self.tmp.name, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while not self.ping():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start:\n{self.log()}")
            time.sleep(0.05)
        return self

    def kill(self) -> None:
        """SIGKILL it (as a crash or an OOM kill would) and reap it."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()

    def log(self) -> str:
        """What redis-server wrote."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def close(self) -> None:
        """Stop it and remove its directory."""
        self.stop()
        self.tmp.cleanup()

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
