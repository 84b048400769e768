"""Every setting of the service, read from environment variables, with defaults in one place.

Each field of `Settings` is one environment variable (named in the comment above it and in
`docs/deploy.md`). `Settings.from_env()` reads them; tests build `Settings(...)` directly.
gunicorn's own settings (`gunicorn.conf.py`) are read through this class too, so there is one
list of every variable the service understands.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from .cpus import CPU_TARGETS, usable_cpus

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return default if raw in (None, "") else int(raw)


def _env_str(name: str, default: str) -> str:
    raw = os.environ.get(name)
    return default if raw in (None, "") else raw


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return default if raw in (None, "") else float(raw)


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    low = raw.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use true/false)")


def _env_list(name: str, default: str) -> tuple[str, ...]:
    raw = os.environ.get(name, default)
    return tuple(s.strip() for s in raw.split(",") if s.strip())


def default_workers() -> int:
    """gunicorn workers when WEB_CONCURRENCY is unset: 2 x usable CPUs + 1, at most 8 (the
    CPUs the container's quota allows: `cpus.usable_cpus`)."""
    return min(2 * usable_cpus() + 1, 8)


def warm_variants(spec: str) -> tuple[str, ...]:
    """The variant ids an ADVISOR_WARM value names ("all", "none", or a list)."""
    from .domain.variants import VARIANT_IDS

    spec = spec.strip().lower()
    if spec in ("", "none"):
        return ()
    if spec == "all":
        return VARIANT_IDS
    ids = tuple(s.strip() for s in spec.split(",") if s.strip())
    unknown = [v for v in ids if v not in VARIANT_IDS]
    if unknown:
        raise ValueError(f"ADVISOR_WARM names unknown variants: {', '.join(unknown)}")
    return ids


@dataclass(frozen=True)
class Settings:
    """Service settings. `from_env()` reads them; tests build them directly."""

    # --- API -------------------------------------------------------------------------------
    # MAX_BODY_BYTES: largest request body accepted, in bytes; larger bodies get 413.
    max_body_bytes: int = 1_048_576
    # MAX_BATCH_ITEMS: most items in one batch request to hands/score or scorecards/score.
    max_batch_items: int = 1000
    # MAX_BATCH_GAMES: most games in one batch request to games/validate (each game is
    # replayed turn by turn, so a game costs about as much as a few dozen scored hands).
    max_batch_games: int = 100
    # MAX_BATCH_RULE_SETS: most different tables of rules (options + house rules) in one batch;
    # each new table is built once (milliseconds), so this bounds a batch's work.
    max_batch_rule_sets: int = 32
    # CORS_ORIGINS: browser origins allowed by CORS, comma-separated ("*" for any; empty for
    # none).
    cors_origins: tuple[str, ...] = field(default=("*",))
    # CORS_MAX_AGE: seconds a browser may cache a preflight answer (Access-Control-Max-Age).
    cors_max_age: int = 600

    # --- Tenants: API keys and quotas (service/web/auth.py, service/web/quotas.py) ----------
    # AUTH: "off" (every request is the anonymous tenant, its quotas counted per client
    # address) or "keys" (every /v1/ request needs a tenant's API key: 401 without one).
    auth: str = "off"
    # API_KEYS_FILE: path of the tenants file (JSON: names, salted key hashes, origins,
    # quotas; docs/deploy.md). API_KEYS: the same JSON inline (the file wins when both are set).
    api_keys_file: str = ""
    api_keys: str = ""
    # RATE_LIMIT_STORAGE: where quotas are counted: "memory://" (each pod alone) or
    # "redis://[:password@]host:port/db" ("rediss://" for TLS), shared by every pod.
    rate_limit_storage: str = "memory://"
    # RATE_LIMIT_REDIS_TIMEOUT: seconds one Redis call may take; beyond it (or when Redis
    # refuses), quotas are counted per pod until Redis answers again.
    rate_limit_redis_timeout: float = 0.25
    # RATE_LIMIT_REDIS_RETRY: seconds between attempts to reach Redis again after it failed.
    rate_limit_redis_retry: float = 5.0
    # QUOTA_SCORING, QUOTA_ADVICE, QUOTA_ANALYSIS, QUOTA_BUILDS: default quotas per operation
    # class (the anonymous tenant's, and a tenant's where its entry sets none), in the
    # notation of the `limits` library: "6000/minute", "20/second;600/minute", "unlimited".
    quota_scoring: str = "600000/minute"
    quota_advice: str = "120000/minute"
    quota_analysis: str = "12000/minute"
    quota_builds: str = "120/minute"
    # FORWARDED_ALLOW_IPS: proxies (addresses or networks, comma-separated; "*" for any)
    # whose X-Forwarded-For names the client (the anonymous tenant's quota key and build
    # queue key). A forged header from any other peer is ignored.
    forwarded_allow_ips: tuple[str, ...] = field(default=("127.0.0.1", "::1"))
    # TENANT_IN_FLIGHT: most requests of one tenant (without keys: one client address) being
    # answered at once in a pod, shared out between its workers (each admits
    # max(1, TENANT_IN_FLIGHT // workers)); 0: one per worker. A tenant's further requests
    # wait their turn (service/web/fairshare.py).
    tenant_in_flight: int = 0
    # TENANT_IN_FLIGHT_WAIT: seconds such a request waits for its turn before its 429
    # (/problems/too-many-in-flight, Retry-After: 1).
    tenant_in_flight_wait: float = 1.0

    # --- Advisor ---------------------------------------------------------------------------
    # ADVISOR_TABLE_DIR: directory of the advisor's precomputed tables (`python -m
    # service.advisor build` writes them there; the container image builds them in).
    advisor_table_dir: str = ".tables"
    # ADVISOR_CACHE_SIZE: how many house-rules tables (built on first use) a pod keeps: on
    # disk in ADVISOR_BUILD_DIR (least recently used removed first) and mapped per worker.
    advisor_cache_size: int = 8
    # ADVISOR_CACHE_MIB: and at most this many MiB of them on disk (a table is 0.01-27 MiB).
    advisor_cache_mib: int = 128
    # ADVISOR_WARM: built-in variants whose tables and kernels are made ready at start:
    # "all", "none", or a comma-separated list of variant ids. gunicorn's master loads them
    # before forking workers when they are on disk and compiled for this CPU (about a
    # second); else the port opens at once and the build process makes them, /readyz saying
    # ready when they are (service/warmup.py).
    advisor_warm: str = "all"
    # ADVISOR_CPU_TARGET: the CPU the kernels are compiled for (numba's cache is keyed by
    # it): "host" (this machine's, fastest) or "portable" (a fixed baseline, so a cache made
    # on one node serves every node: the image's; service/cpus.py).
    advisor_cpu_target: str = "host"
    # ADVISOR_THREADS: threads that build a table (0 = every CPU the container may use: its
    # affinity and its CPU quota, service/cpus.py).
    advisor_threads: int = 0
    # ADVISOR_BUILDS: where a table that is not on disk yet gets built. "background": by the
    # pod's build process (one build at a time, at a lower CPU priority, shared by every
    # worker through ADVISOR_BUILD_DIR); the request waits up to ADVISOR_BUILD_WAIT seconds,
    # then gets 202 with Retry-After. "inline": inside the request (tests, one local user).
    advisor_builds: str = "background"
    # ADVISOR_BUILD_DIR: writable directory of the build queue and of the tables built in the
    # background. Empty: "house-rules" inside ADVISOR_TABLE_DIR when that is writable, else
    # a directory in the system's temporary directory.
    advisor_build_dir: str = ""
    # ADVISOR_BUILD_WAIT: seconds a request waits for a table being built before its 202:
    # long enough for most tables of new rules (YAHTZEE's values and moments 1.5 s on two
    # cores: bench/bench_new_rules.py), so that the first request is answered in full.
    advisor_build_wait: float = 2.5
    # ADVISOR_BUILD_QUEUE: most tables waiting to be built in a pod; beyond it, 429.
    advisor_build_queue: int = 16
    # ADVISOR_BUILD_QUEUE_PER_CLIENT: most tables one client (a tenant; without keys, a client
    # address) may have waiting; 429.
    advisor_build_queue_per_client: int = 4
    # ADVISOR_BUILD_NICE: how much lower the build process's CPU priority is (nice, 0-19).
    advisor_build_nice: int = 10
    # ADVISOR_SHARED_TABLES: redis:// URL of the cluster's shared table store: a table of new
    # rules one pod built, the others fetch instead of building it again (the chart sets the
    # quotas' Redis). Empty: each pod builds its own (service/advisor/tables/shared.py).
    advisor_shared_tables: str = ""
    # ADVISOR_SHARED_TABLES_MIB: most MiB of tables the shared store keeps (least recently
    # used removed first).
    advisor_shared_tables_mib: int = 1024

    # --- Logging and metrics ---------------------------------------------------------------
    # LOG_LEVEL: lowest level logged (DEBUG, INFO, WARNING, ERROR).
    log_level: str = "INFO"
    # LOG_FORMAT: "json" (one JSON object per line, for log shippers) or "text" (for humans).
    log_format: str = "json"
    # ACCESS_LOG: log one line per request (method, path, status, duration_ms).
    access_log: bool = True
    # METRICS_ENABLED: serve Prometheus metrics on /metrics and count requests.
    metrics_enabled: bool = True
    # METRICS_PORT: a second TCP port for /metrics alone (0: /metrics on PORT). Set, gunicorn
    # listens on it too and /metrics is answered only there (404 on PORT), so a Service or an
    # Ingress that publishes PORT never shows it (the chart sets 9464).
    metrics_port: int = 0
    # PROMETHEUS_MULTIPROC_DIR: directory where each gunicorn worker writes its metric
    # files, so /metrics adds up every worker (read by prometheus-client itself). Empty:
    # single-process metrics. gunicorn.conf.py creates and empties it at start.
    prometheus_multiproc_dir: str = ""

    # --- gunicorn (read by gunicorn.conf.py) -----------------------------------------------
    # PORT: TCP port to listen on (all interfaces).
    port: int = 8000
    # WEB_CONCURRENCY: worker processes; 0 means 2 x usable CPUs + 1, at most 8.
    web_concurrency: int = 0
    # GUNICORN_WORKER_CONNECTIONS: connections one worker holds open at once (gevent worker:
    # one greenlet each); beyond it new connections wait in the accept queue.
    gunicorn_worker_connections: int = 1000
    # GUNICORN_TIMEOUT: seconds a worker may be silent on a request before it is restarted.
    gunicorn_timeout: int = 30
    # GUNICORN_GRACEFUL_TIMEOUT: seconds workers get to finish requests after SIGTERM.
    gunicorn_graceful_timeout: int = 25
    # GUNICORN_KEEPALIVE: seconds to hold an idle keep-alive connection, and seconds a client
    # has to send a request's headers (keep it above the load balancer's idle timeout if it
    # pools connections; below it otherwise).
    gunicorn_keepalive: int = 5
    # GUNICORN_DRAIN_SECONDS: after SIGTERM, workers answer /readyz with 503 and keep
    # accepting connections while they still arrive (until none came for a second), for at
    # most this long; then they stop accepting and finish what they accepted.
    gunicorn_drain_seconds: int = 10
    # GUNICORN_MAX_REQUESTS: restart a worker after this many requests (0: never); jittered.
    gunicorn_max_requests: int = 0

    def __post_init__(self) -> None:
        if self.advisor_cpu_target not in CPU_TARGETS:
            raise ValueError(f"ADVISOR_CPU_TARGET={self.advisor_cpu_target!r}: use "
                             f"{' or '.join(CPU_TARGETS)}")
        if self.advisor_builds not in ("background", "inline"):
            raise ValueError(f"ADVISOR_BUILDS={self.advisor_builds!r}: use background or inline")
        if self.tenant_in_flight < 0 or self.tenant_in_flight_wait < 0:
            raise ValueError("TENANT_IN_FLIGHT and TENANT_IN_FLIGHT_WAIT are 0 or more")
        if self.auth not in ("off", "keys"):
            raise ValueError(f"AUTH={self.auth!r}: use off or keys")
        if self.metrics_port and (not 0 < self.metrics_port < 65536
                                  or self.metrics_port == self.port):
            raise ValueError(f"METRICS_PORT={self.metrics_port}: a TCP port other than PORT "
                             f"({self.port}), or 0 for /metrics on PORT")
        if self.advisor_shared_tables and not self.advisor_shared_tables.startswith(
                ("redis://", "rediss://")):
            raise ValueError("ADVISOR_SHARED_TABLES: use redis://host:port/db (rediss:// for "
                             "TLS), or leave it empty")
        if self.advisor_shared_tables_mib < 1:
            raise ValueError(f"ADVISOR_SHARED_TABLES_MIB={self.advisor_shared_tables_mib}: "
                             f"at least 1")
        if not self.rate_limit_storage.startswith(("memory://", "redis://", "rediss://")):
            raise ValueError(f"RATE_LIMIT_STORAGE={self.rate_limit_storage!r}: use memory:// "
                             f"or redis://host:port/db")

    @property
    def workers(self) -> int:
        """Worker processes: WEB_CONCURRENCY when set, else from the CPU count."""
        return self.web_concurrency if self.web_concurrency > 0 else default_workers()

    @property
    def in_flight_per_worker(self) -> int:
        """Requests of one tenant a worker answers at once (TENANT_IN_FLIGHT shared out)."""
        if self.tenant_in_flight <= 0:
            return 1
        return max(1, self.tenant_in_flight // self.workers)

    @property
    def default_quotas(self) -> dict[str, str]:
        """The default quota of each operation class (QUOTA_*), by class name."""
        return {"scoring": self.quota_scoring, "advice": self.quota_advice,
                "analysis": self.quota_analysis, "builds": self.quota_builds}

    @classmethod
    def from_env(cls) -> Settings:
        """Settings from the environment: each field from the variable of its name in capitals
        (docs/deploy.md's table), read as the type of its default; unset or empty, the
        default (a list set empty is empty). Some are put in one case (`_NORMALISE`)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = f.name.upper()
            default = f.default
            if isinstance(default, tuple):  # a comma-separated list
                value: Any = _env_list(name, ",".join(default))
            else:
                value = _READ[type(default)](name, default)
            normalise = _NORMALISE.get(f.name)
            values[f.name] = normalise(value) if normalise else value
        return cls(**values)


#: How a variable is read, by the type of its field's default.
_READ: dict[type, Callable[[str, Any], Any]] = {
    int: _env_int, float: _env_float, bool: _env_bool, str: _env_str}
#: Values put in one case as they are read.
_NORMALISE: dict[str, Callable[[str], str]] = {
    "auth": lambda s: s.strip().lower(), "advisor_builds": str.lower,
    "advisor_cpu_target": lambda s: s.strip().lower(), "log_level": str.upper,
    "log_format": str.lower}
