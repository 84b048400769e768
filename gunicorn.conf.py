"""gunicorn settings for the service, all from environment variables (see service/config.py
and docs/deploy.md). Start it as the container does:

    gunicorn --config gunicorn.conf.py 'service.web.app:create_app()'
"""

from __future__ import annotations

import atexit
import gc
import glob
import os
import shutil
import signal
import tarfile
import tempfile

from service.config import Settings

_settings = Settings.from_env()

# --- Prometheus multiprocess mode ---------------------------------------------------------
# Each worker writes its metrics to files in PROMETHEUS_MULTIPROC_DIR and /metrics adds them
# up, so a scrape sees every worker, not just the one that answered. prometheus-client reads
# the variable when it is first imported, so it is set here, before the app is loaded.
# Metric files (*.db) left by an earlier run would be counted again, so they are removed;
# nothing else in the directory is touched. Unset: a fresh private temporary directory, in
# memory (/dev/shm) where it can be: every request writes to these files.
# A directory made here is removed when gunicorn exits (on_exit, or at exit of the master).
_shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
_metrics_dir = _settings.prometheus_multiproc_dir or tempfile.mkdtemp(prefix="prometheus-",
                                                                      dir=_shm)
_own_metrics_dir = not _settings.prometheus_multiproc_dir
os.makedirs(_metrics_dir, exist_ok=True)
for _stale in glob.glob(os.path.join(_metrics_dir, "*.db")):
    os.unlink(_stale)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_dir
# The CPU the advisor's kernels are compiled for (ADVISOR_CPU_TARGET; numba reads it when it
# is first imported, so it is set here, before the app is loaded; what this process starts
# inherits it): "portable" in the image, so that the kernels it ships serve every node.
from service.cpus import apply_cpu_target  # noqa: E402

apply_cpu_target(_settings.advisor_cpu_target)

# Compiled advisor kernels shipped read-only in the image (NUMBA_CACHE_SEED: an archive of
# numba's cache directory, docker/build-tables.sh) are extracted into the writable cache
# directory before the app loads, so no process compiles them again. Extracted beside it,
# then renamed: a start cut short leaves no half cache behind.
_numba_seed = os.environ.get("NUMBA_CACHE_SEED", "")
_numba_cache = os.environ.get("NUMBA_CACHE_DIR", "")
if _numba_seed and _numba_cache and os.path.isfile(_numba_seed) and not os.path.exists(
        _numba_cache):
    _parent = os.path.dirname(os.path.abspath(_numba_cache))
    os.makedirs(_parent, exist_ok=True)
    _unpacked = tempfile.mkdtemp(prefix=".numba-cache-", dir=_parent)
    with tarfile.open(_numba_seed) as _archive:
        # the "data" filter where this Python has it (3.11.4+; the documented test for it)
        _archive.extractall(_unpacked, **({"filter": "data"} if hasattr(
            tarfile, "data_filter") else {}))
    try:
        os.replace(_unpacked, _numba_cache)
    except OSError:  # another server beside this one extracted it first
        shutil.rmtree(_unpacked, ignore_errors=True)

# --- Server -------------------------------------------------------------------------------
bind = [f"0.0.0.0:{_settings.port}"]
if _settings.metrics_port:  # /metrics alone, on a port of its own (service/web/ops.py)
    bind.append(f"0.0.0.0:{_settings.metrics_port}")
workers = _settings.workers
# gevent: one greenlet per connection, so slow or idle clients hold a greenlet, not a worker
# (service/web/worker.py and docs/deploy.md say why, with the measurements).
worker_class = "service.web.worker.ServiceWorker"
worker_connections = _settings.gunicorn_worker_connections
timeout = _settings.gunicorn_timeout
# SIGTERM (Kubernetes, `docker stop`): /readyz fails, workers keep accepting while connections
# arrive (up to GUNICORN_DRAIN_SECONDS), then stop accepting and finish what they accepted,
# all within the graceful timeout.
graceful_timeout = _settings.gunicorn_graceful_timeout
# Also the time a client has to send a request's headers (gevent worker).
keepalive = _settings.gunicorn_keepalive
max_requests = _settings.gunicorn_max_requests
max_requests_jitter = max(_settings.gunicorn_max_requests // 10, 0)
# Load the app (and the advisor's tables) once in the master: workers share its memory.
preload_app = True
# Worker heartbeat files: /dev/shm is memory, and writable on a read-only root filesystem.
worker_tmp_dir = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
# Forwarded headers are trusted from FORWARDED_ALLOW_IPS (gunicorn reads it itself).
# No control socket (gunicorn 25+): it would be created under $HOME, which the container
# user does not have, and Kubernetes scales by replicas, not by gunicornc.
control_socket_disable = True

# --- Logging: one JSON object per line on stdout --------------------------------------------
accesslog = "-" if _settings.access_log else None
errorlog = "-"
# gunicorn's logger, making only the atoms of an access record that the formatters below
# read (service/logs.py says why)
logger_class = "service.logs.AccessAtomsLogger"
loglevel = _settings.log_level.lower()
_formatter = "json" if _settings.log_format == "json" else "text"
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "service.logs.JsonFormatter"},
        "text": {"()": "service.logs.TextFormatter"},
    },
    "filters": {"request_id": {"()": "service.logs.RequestIdFilter"}},
    "handlers": {
        # Same name as the handler service.logs.configure_logging installs, which
        # replaces this one on the root logger instead of adding a second.
        "service-json-stdout": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": _formatter,
            "filters": ["request_id"],
        }
    },
    "root": {"level": _settings.log_level, "handlers": ["service-json-stdout"]},
    "loggers": {
        "gunicorn.error": {
            "level": _settings.log_level,
            "handlers": ["service-json-stdout"],
            "propagate": False,
            "qualname": "gunicorn.error",
        },
        "gunicorn.access": {
            "level": "INFO" if _settings.access_log else "WARNING",
            "handlers": ["service-json-stdout"],
            "propagate": False,
            "qualname": "gunicorn.access",
        },
    },
}


# --- Hooks -------------------------------------------------------------------------------
def on_starting(server):
    """Before the port is opened: the advisor's warm-up (ADVISOR_WARM's tables and kernels,
    service/warmup.py). When it only loads (everything on disk and compiled for this
    CPU: the image), it runs here, about a second, and every worker (forked later) shares
    what it loaded. Else (a fresh clone, a node the kernels were not compiled for) the port
    opens at once and the build process runs it: scoring is answered meanwhile, the advisor
    answers 202, /readyz 503."""
    warmup = getattr(server.app.wsgi(), "extensions", {}).get("warmup")  # none in bench apps
    if warmup is None or not warmup.variants:
        return
    if warmup.quick() or warmup.advisor.builds is None:  # ADVISOR_BUILDS=inline: no builder
        warmup.run()
        return
    warmup.defer()
    server.log.info(f"the port opens now; the build process makes the advisor ready, about "
                    f"{warmup.estimate():.0f} s (/readyz answers 503 until then)",
                    extra={"variants": list(warmup.variants),
                           "missing": warmup.tables_missing(),
                           "kernels_compiled": warmup.kernels_compiled(),
                           "cpu": warmup.key()["cpu"]})


def when_ready(server):
    """The port is open, workers are about to fork."""
    # Everything loaded so far (the app, numba's compiled kernels, the tables) lives as long
    # as the process: move it out of the garbage collector's sight, so that collections in
    # the workers scan only what requests allocate, and forked pages stay shared.
    gc.freeze()
    # The master answers no request: the live gauges' files it wrote when the app was loaded
    # (0 for every labelless gauge) would count in the live workers' minimum and sum, so a
    # healthy pod would say rate_limit_storage_up 0. Each worker writes its own.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(os.getpid())
    # The pod's table build process, forked from here so that it shares this memory (workers
    # start another if it is ever gone; service/advisor/tables/build_process.py).
    extensions = getattr(server.app.wsgi(), "extensions", {})  # none in bench apps
    advisor, warmup = extensions.get("advisor"), extensions.get("warmup")
    builds = advisor.builds if advisor is not None else None
    if builds is not None:
        from service.advisor.tables.build_process import fork_builder

        deferred = warmup is not None and warmup.deferred
        pid = fork_builder(builds.settings, close=server.LISTENERS,
                           warm=warmup.run if deferred else None)
        server.log.info("table build process started", extra={"pid": pid})
    server.log.info("listening", extra={
        "bind": [str(listener) for listener in server.LISTENERS], "workers": server.num_workers,
        "worker_connections": worker_connections, "metrics_dir": _metrics_dir})


# The stop signals a worker must not lose while it starts. From just before its fork until
# post_fork has installed a handler that remembers them, the new worker has the master's
# handlers, which do nothing for it; under load the child can wait long before it runs at all,
# so a SIGTERM the master passes on then (a stop just after a worker was (re)started) was lost
# and the worker killed at the graceful timeout. They are blocked (held pending by the kernel,
# not lost) from pre_fork on: the master unblocks them right after the fork, the worker once
# post_fork can catch them.
_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGQUIT}
_forking_worker = False


def pre_fork(server, worker):
    """Just before a worker is forked: hold the stop signals (see _STOP_SIGNALS)."""
    global _forking_worker
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    _forking_worker = True


def _after_fork_in_master() -> None:
    """Right after a fork, in the master: take the stop signals again (held ones arrive now).
    Forks other than a worker's (the table build process) are left alone."""
    global _forking_worker
    if _forking_worker:
        _forking_worker = False
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


os.register_at_fork(after_in_parent=_after_fork_in_master)


def post_fork(server, worker):
    """In the new worker: catch a stop signal that comes before its handlers are installed
    (one sent since the fork was held: see _STOP_SIGNALS), and pass the settings the worker
    class reads (service.web.worker.ServiceWorker)."""
    global _forking_worker
    _forking_worker = False
    if hasattr(worker, "catch_early_signals"):
        worker.catch_early_signals()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    worker.drain_seconds = _settings.gunicorn_drain_seconds


def post_worker_init(worker):
    """In the worker, once gevent has patched it and the app is loaded: find out where its
    quotas are counted (a ping of Redis, made on a patched socket), so that
    `rate_limit_storage_up` is right in every worker from the start."""
    quotas = worker.wsgi.extensions.get("quotas") if hasattr(worker.wsgi, "extensions") else None
    if quotas is not None:
        quotas.worker_started()


def child_exit(server, worker):
    """A worker is gone: drop its live gauges, keep its counters (prometheus multiprocess)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


_master_pid = os.getpid()


def _remove_metrics_dir() -> None:
    if _own_metrics_dir and os.getpid() == _master_pid:
        shutil.rmtree(_metrics_dir, ignore_errors=True)


def on_exit(server):
    """gunicorn stops: remove the metrics directory it made (an explicit one stays)."""
    _remove_metrics_dir()


# also when the master ends without on_exit (an error at start-up, Ctrl-C while warming)
atexit.register(_remove_metrics_dir)
