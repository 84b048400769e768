"""The image's build and run steps, run as plain shell steps (no Docker engine here).

The test reads the Dockerfile and does what `docker build` and `docker run` would:
  1. copies what the build stage COPYs into a scratch build context;
  2. runs the build stage's RUN commands (docker/build-venv.sh, docker/build-tables.sh)
     with the stage's ENV, every absolute path moved under a scratch root;
  3. copies what the runtime stage COPYs, and starts its CMD (gunicorn with
     gunicorn.conf.py) with the runtime ENV, then hits /healthz, /readyz and /metrics
     and runs the HEALTHCHECK command.

Two shortcuts keep it fast (~10 s) and offline, and are the only differences from the image:
  - the fresh virtualenv is made `--without-pip`, and `pip install --no-deps
    --no-build-isolation` installs only this project into it; its dependencies (flask,
    gunicorn, ...) and pip itself come from the test virtualenv through PYTHONPATH, instead of
    being downloaded again. The service package itself is imported from the fresh venv.
  - gunicorn runs as `<venv>/bin/python -m gunicorn`, since the fresh venv has no gunicorn
    script of its own.
While `service.web.app` (the app factory) is not on the branch, the CMD's app is replaced by a
stand-in that builds a Flask app with `init_ops`; the table step is skipped while
`service.advisor` is not on the branch.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from service.cpus import portable_cpu

from .dockerfile import Stage, parse

ROOT = Path(__file__).resolve().parents[2]
HAS_ADVISOR = importlib.util.find_spec("service.advisor") is not None
# The app module the image's CMD names (service.app:create_app() or wherever it moves).
_APP_MODULE = parse(ROOT / "Dockerfile")[-1].all("CMD")[-1].exec_form()[-1].partition(":")[0]
HAS_APP = importlib.util.find_spec(_APP_MODULE) is not None

STAND_IN_APP = '''\
"""Stand-in for service.web.app until the app factory lands: a Flask app with init_ops only."""
from flask import Flask

from service.config import Settings
from service.web.frontdoor import Router
from service.web.ops import OpsMiddleware, init_ops


def create_app():
    app = Flask("stand-in")
    settings = Settings.from_env()
    init_ops(app, settings)
    app.wsgi_app = OpsMiddleware(app.wsgi_app, settings, Router(app))
    return app
'''


class Image:
    """The scratch 'filesystem' the steps ran in."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "root"  # absolute paths of the image live under here
        self.context = base / "context"  # the build context, as COPY'd
        self.stages = parse(ROOT / "Dockerfile")
        self.table_step = "not run"

    def path(self, image_path: str) -> Path:
        return self.root / image_path.lstrip("/")

    def env(self, stage: Stage) -> dict[str, str]:
        """os.environ plus the stage's ENV, absolute paths moved under the scratch root."""
        env = dict(os.environ)
        for key, value in stage.env().items():
            if key == "PATH":
                value = value.replace("$PATH", os.environ["PATH"])
                value = ":".join(
                    str(self.path(p)) if p.startswith("/opt/") else p for p in value.split(":")
                )
            elif value.startswith("/"):
                value = str(self.path(value))
            env[key] = value
        # Offline and fast: see the module docstring.
        env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]
        return env

    def copy(self, src: Path, dest: Path) -> None:
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)

    def do_copies(self, stage: Stage, workdir: Path) -> None:
        for ins in stage.all("COPY"):
            flags, words = ins.flags_and_words()
            *sources, dest = words
            for source in sources:
                src = self.path(source) if "from" in flags else ROOT / source
                if not src.exists():
                    raise AssertionError(f"COPY {source}: not in the project")
                target = self.path(dest) if dest.startswith("/") else workdir / dest
                if dest.endswith("/") and not src.is_dir():
                    target = target / src.name
                if target.resolve() == src.resolve():
                    continue  # COPY --from=build /x /x: both stages share the scratch root
                self.copy(src, target)

    def build(self) -> None:
        build = self.stages[0]
        self.context.mkdir(parents=True)
        self.do_copies(build, self.context)
        env = self.env(build)
        env["VENV_ARGS"] = "--without-pip"
        env["PIP_ARGS"] = "--no-deps --no-build-isolation --no-index"
        env["LOCK"] = ""  # the dependencies come from the test virtualenv (docstring)
        # the SBOM tool too: the test virtualenv's, not one installed from the index
        env["SBOM_TOOL"] = str(Path(sys.executable).parent / "cyclonedx-py")
        # the kernels compiled for one CPU baseline, not two (the real image's build does both:
        # tests/deploy/test_container_image.py)
        env["CPU_BASELINES"] = portable_cpu(platform.machine(),
                                            dict(llvm.get_host_cpu_features()))
        for run in build.all("RUN"):
            for command in run.args.split("&&"):
                command = command.strip()
                if "build-tables.sh" in command and not HAS_ADVISOR:
                    self.table_step = "skipped: service.advisor is not on this branch yet"
                    continue
                result = subprocess.run(
                    shlex.split(command), cwd=self.context, env=env,
                    capture_output=True, text=True, timeout=300, check=False,
                )
                assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
                if "build-tables.sh" in command:
                    self.table_step = "ran"
        runtime = self.stages[-1]
        self.workdir = self.path(runtime.workdir())
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.path(build.env()["ADVISOR_TABLE_DIR"]).mkdir(parents=True, exist_ok=True)
        self.do_copies(runtime, self.workdir)
        self.venv = self.path(build.env()["VENV"])


@pytest.fixture(scope="module")
def image(tmp_path_factory, worker_id):
    """Build once, even with pytest-xdist: the first worker builds, the others wait and reuse."""
    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent
    base = shared / "container-steps"
    with open(shared / "container-steps.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        img = Image(base)
        done = base / "built.json"
        if done.exists():
            img.table_step = json.loads(done.read_text())["table_step"]
            img.workdir = img.path(img.stages[-1].workdir())
            img.venv = img.path(img.stages[0].env()["VENV"])
        else:
            shutil.rmtree(base, ignore_errors=True)
            started = time.monotonic()
            img.build()
            done.write_text(
                json.dumps({"table_step": img.table_step, "seconds": time.monotonic() - started})
            )
    return img


def test_build_stage_installs_the_service_into_the_fresh_venv(image):
    env = image.env(image.stages[-1])
    out = subprocess.run(
        [str(image.venv / "bin/python"), "-c", "import service; print(service.__file__)"],
        cwd=image.workdir, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert Path(out).is_relative_to(image.venv), out
    assert (image.workdir / "gunicorn.conf.py").exists()


def test_table_build_step(image):
    if not HAS_ADVISOR:
        pytest.skip("table build step: service.advisor is not on this branch yet")
    assert image.table_step == "ran"
    tables = image.path(image.stages[0].env()["ADVISOR_TABLE_DIR"])
    assert any(tables.iterdir()), "python -m service.advisor build wrote nothing"


def test_the_sbom_lists_what_the_venv_holds(image):
    """docker/build-sbom.sh: a CycloneDX document of the image's virtualenv, the service as
    its root component, every other installed distribution a component at its version."""
    sbom = json.loads(image.path(image.stages[0].env()["SBOM"]).read_text())
    assert sbom["bomFormat"] == "CycloneDX"
    assert sbom["metadata"]["component"]["name"] == "yahtzee-scoring-service"
    listed = {c["name"].lower(): c["version"]
              for c in [*sbom["components"], sbom["metadata"]["component"]]}
    venv = subprocess.run([str(image.venv / "bin/python"), "-c",
                           "import importlib.metadata as m, json; print(json.dumps("
                           "{d.metadata['Name'].lower(): d.version for d in m.distributions()}))"],
                          capture_output=True, text=True, check=True).stdout
    assert json.loads(venv).items() <= listed.items()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def _metric(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(f"{name}{{{want}}} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _workers(master: int) -> list[int]:
    """The master's children but the advisor's table build process (named table-builds)."""
    def name(pid: str) -> str:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:  # gone meanwhile
            return ""

    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(c) for c in children if name(c) != "table-builds"]


@contextlib.contextmanager
def _gunicorn(image: Image, port: int):
    runtime = image.stages[-1]
    cmd = runtime.all("CMD")[-1].exec_form()
    assert cmd[0] == "gunicorn"
    cmd = [str(image.venv / "bin/python"), "-m", "gunicorn", *cmd[1:]]
    if not HAS_APP:
        (image.workdir / "stand_in_app.py").write_text(STAND_IN_APP)
        cmd[-1] = "stand_in_app:create_app()"
    env = image.env(runtime)
    # As the image's user: no home directory, so nothing may be written there.
    env.update(PORT=str(port), WEB_CONCURRENCY="2", HOME="/nonexistent")
    log = open(image.base / f"gunicorn-{port}.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(cmd, cwd=image.workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, Path(log.name).read_text()
            try:
                if _get(f"http://127.0.0.1:{port}/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "gunicorn did not answer /healthz in 30 s"
            time.sleep(0.2)
        yield proc, env, Path(log.name)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def test_runtime_cmd_serves_health_metrics_and_logs(image):
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    with _gunicorn(image, port) as (proc, env, log):
        startup = time.monotonic() - started
        status, headers, body = _get(f"{base}/healthz", {"X-Request-ID": "step-test-1"})
        assert status == 200 and json.loads(body)["status"] == "ok"
        assert headers["X-Request-ID"] == "step-test-1"
        status, _, body = _get(f"{base}/readyz")
        assert status == 200, body

        # HEALTHCHECK, as Docker would run it (python is the venv's).
        check = image.stages[-1].all("HEALTHCHECK")[0].exec_form()
        assert check[0] == "python"
        hc = subprocess.run(
            [str(image.venv / "bin/python"), *check[1:]], env=env, timeout=10, check=False
        )
        assert hc.returncode == 0

        # Metrics add up over both workers, and survive a worker dying (child_exit hook).
        assert len(_workers(proc.pid)) == 2
        _, _, text = _get(f"{base}/metrics")
        before = _metric(text.decode(), "http_requests_total",
                         endpoint="/healthz", method="GET", status="200")
        for _ in range(30):
            assert _get(f"{base}/healthz")[0] == 200
        _, _, text = _get(f"{base}/metrics")
        after = _metric(text.decode(), "http_requests_total",
                        endpoint="/healthz", method="GET", status="200")
        assert after == before + 30
        metric_dir = Path(env["PROMETHEUS_MULTIPROC_DIR"])
        pids_with_files = {p.stem.rsplit("_", 1)[1] for p in metric_dir.glob("*.db")}
        assert pids_with_files & {str(w) for w in _workers(proc.pid)}

        # Kill a worker that has served requests: its counts stay (the per-request ones in
        # the memory the pod's processes share, service/web/tally.py; the others in its
        # files), its live gauges go (the tally's with its slot's lock, prometheus-client's
        # live-gauge files by the child_exit hook).
        served = [w for w in _workers(proc.pid) if str(w) in pids_with_files]
        victim = served[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while victim in _workers(proc.pid) or len(_workers(proc.pid)) < 2:
            assert time.monotonic() < deadline, "gunicorn did not replace the killed worker"
            time.sleep(0.1)
        _, _, text = _get(f"{base}/metrics")
        assert _metric(text.decode(), "http_requests_total",
                       endpoint="/healthz", method="GET", status="200") == after
        in_progress = re.search(r"^http_requests_in_progress (\S+)$", text.decode(), re.M)
        assert in_progress and float(in_progress[1]) == 1.0  # the scrape itself
        assert not list(metric_dir.glob(f"gauge_live*_{victim}.db")), "child_exit not called"

        # Graceful stop on SIGTERM, as Kubernetes and `docker stop` send it.
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        stopped = time.monotonic()

    lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
    docs = [json.loads(ln) for ln in lines]  # every line is one JSON object
    access = [d for d in docs if d["logger"] == "gunicorn.access"]
    first = next(d for d in access if d["request_id"] == "step-test-1")
    assert (first["method"], first["path"], first["status"]) == ("GET", "/healthz", 200)
    assert isinstance(first["duration_ms"], int)
    assert all(d["request_id"] and len(d["request_id"]) >= 1 for d in access)
    assert {"time", "level", "logger", "message"} <= set(docs[0])
    assert "request_id" not in docs[0]  # a start-up line: no request
    assert not any("Control socket" in d["message"] for d in docs)
    assert not Path("/nonexistent").exists()
    print(f"gunicorn startup {startup:.2f}s, whole run {stopped - started:.2f}s")
    assert sys.executable  # the test venv supplied the dependencies (module docstring)
