"""Tables shared by the pods of a cluster: a table of new rules (house rules, a non-default
option) built by one pod's build process is fetched by the others' instead of built again.

The store is Redis (ADVISOR_SHARED_TABLES, a redis:// URL): the one the chart's pods already
reach for their quotas, so no new service to run, secure or back up; a table is a few MiB
(27 at most), which Redis holds and hands over in milliseconds. docs/deploy.md ("Tables shared
by the pods") says why not an object store.

Layout, every key under ``yahtzee:tables:v<FORMAT>:`` (a new table format is a new space):

    <job>          a hash: ``manifest`` (JSON: each file's name, size and SHA-256), and each
                   file's bytes under its name. <job> is the build queue's job name: the
                   rules' fingerprint, then ``-moments`` for the analysis tables.
    lru            a sorted set: each job by when it was last stored or fetched
    sizes          a hash: each job's bytes

A worker asked for a table it does not have fetches it from the store itself, before it queues
a build (no build, no wait for the build process); the build process fetches too, before it
builds a job. Every file is checked on read (its size and digest against the manifest); an
entry that does not match is dropped and the table built here. Stored tables are bounded
(`max_mib`): the least recently used are removed first. Losing the store costs speed, not
answers: every call has a short timeout, a failed one means "build it here" (logged once per
outage), and a request does not try the store again for RETRY_DOWN seconds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path

import redis

from .store import FORMAT, write_atomically

log = logging.getLogger(__name__)

#: Seconds a call to the store may take (connecting included) before the table is built here.
TIMEOUT = 2.0
#: Seconds a fetch is not tried after the store failed to answer (`fetch(..., quick=True)`,
#: a request's): during an outage a request does not wait out TIMEOUT each time.
RETRY_DOWN = 30.0


class SharedTables:
    """The cluster's shared table store in Redis (module docstring)."""

    def __init__(self, url: str, max_mib: int = 1024, timeout: float = TIMEOUT) -> None:
        self.client = redis.Redis.from_url(url, socket_timeout=timeout,
                                           socket_connect_timeout=timeout)
        self.prefix = f"yahtzee:tables:v{FORMAT}:"
        self.max_bytes = max_mib * 2**20
        self._down = False
        self._down_since = 0.0

    def _failed(self, what: str, exc: Exception) -> None:
        if not self._down:
            log.warning("shared table store unreachable: tables are built here meanwhile",
                        extra={"doing": what, "error": f"{type(exc).__name__}: {exc}"})
        self._down = True
        self._down_since = time.monotonic()

    def _up(self) -> None:
        if self._down:
            log.info("shared table store reachable again")
        self._down = False

    def fetch(self, job: str, directory: Path, quick: bool = False) -> list[str] | None:
        """Write the job's files into `directory` when the store holds them, each checked
        against its manifest: their names, or None (not stored, not matching, or the store
        unreachable). `quick` (a request asking): not tried for RETRY_DOWN seconds after the
        store failed to answer."""
        if quick and self._down and time.monotonic() - self._down_since < RETRY_DOWN:
            return None
        key = self.prefix + job
        try:
            entry = self.client.hgetall(key)
        except (redis.RedisError, OSError) as exc:
            self._failed("fetch", exc)
            return None
        self._up()
        if not entry:
            return None
        try:
            manifest = json.loads(entry[b"manifest"])
            files = {f["name"]: entry[f["name"].encode()] for f in manifest}
            for f in manifest:
                data = files[f["name"]]
                if len(data) != f["size"] or hashlib.sha256(data).hexdigest() != f["sha256"]:
                    raise ValueError(f"{f['name']} does not match its manifest")
                if "/" in f["name"] or f["name"].startswith("."):
                    raise ValueError(f"{f['name']!r} is not a table's file name")
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("shared table dropped: it does not match its manifest",
                        extra={"job": job, "error": str(exc)})
            self.drop(job)
            return None
        directory.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            write_atomically(directory / name, lambda fh, data=data: fh.write(data))
        try:
            self.client.zadd(self.prefix + "lru", {job: time.time()})
        except (redis.RedisError, OSError) as exc:
            self._failed("touch", exc)
        return sorted(files)

    def put(self, job: str, paths: list[Path]) -> bool:
        """Store the files a build of `job` wrote (then evict beyond `max_mib`); whether it
        was stored."""
        files = {p.name: p.read_bytes() for p in paths}
        size = sum(len(d) for d in files.values())
        if not files or size > self.max_bytes:
            return False
        manifest = [{"name": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
                    for n, d in sorted(files.items())]
        key = self.prefix + job
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.delete(key)
            pipe.hset(key, mapping={"manifest": json.dumps(manifest), **files})
            pipe.zadd(self.prefix + "lru", {job: time.time()})
            pipe.hset(self.prefix + "sizes", job, size)
            pipe.execute()
            self.evict()
        except (redis.RedisError, OSError) as exc:
            self._failed("store", exc)
            return False
        self._up()
        return True

    def drop(self, job: str) -> None:
        """Remove a job's entry (a damaged one, or the least recently used)."""
        try:
            pipe = self.client.pipeline(transaction=True)
            pipe.delete(self.prefix + job)
            pipe.zrem(self.prefix + "lru", job)
            pipe.hdel(self.prefix + "sizes", job)
            pipe.execute()
        except (redis.RedisError, OSError) as exc:
            self._failed("drop", exc)

    def evict(self) -> None:
        """Remove the least recently used entries while they hold more than `max_mib`."""
        sizes = {k.decode(): int(v) for k, v in self.client.hgetall(
            self.prefix + "sizes").items()}
        total = sum(sizes.values())
        if total <= self.max_bytes:
            return
        for job in self.client.zrange(self.prefix + "lru", 0, -1):
            if total <= self.max_bytes:
                break
            name = job.decode()
            self.drop(name)
            total -= sizes.get(name, 0)
