#!/usr/bin/env python3
"""Build the service's real container image and run it, with no Docker engine and no registry.

    python3 scripts/check_image.py [--report FILE] [--work DIR] [--fresh-base] [--reuse-image]

What it does (docs/deploy.md, "How CI builds and runs the image"):
  1. installs buildah, podman and debootstrap from Debian's packages when they are missing;
  2. makes, or reuses, a base image standing in for python:3.11-slim: a Debian root
     filesystem from `debootstrap --variant=minbase --include=python3,python3-venv,
     ca-certificates` off the machine's own apt source, `python` linked to `python3`,
     trimmed as Debian's slim images are (no package lists or downloaded packages, no
     documentation, manual pages or translations), imported with `podman import` as a local
     image (reused while its recipe is unchanged; --fresh-base makes it again);
  3. builds the Dockerfile unchanged with `buildah bud --isolation chroot --build-arg
     PYTHON_IMAGE=<base>`, the machine's pip configuration and CA bundle mounted read-only
     (`-v`) so the build's pip reaches the same package index as everything else here; a
     build that failed only on a busy resource in buildah or its storage (a transient failure,
     transient_build_failure) is run once more, and the report's "build" says so ("attempts",
     "retried": each failed run's exit status and the line that made it transient);
  4. runs the image's own command, as the image's own user, from a fresh container with
     `buildah run --isolation chroot` (which shares the host's network: the service is bound
     to 127.0.0.1 only), waits for /readyz, plays the short game in GAME below, checks
     /metrics and the image's HEALTHCHECK, stops it with SIGTERM (as `docker stop` and
     Kubernetes do) and checks that it exits cleanly;
  5. compares the container's files before and after the run: the service may write only
     under /tmp;
  6. runs it again as on nodes with other CPUs (OTHER_CPUS): one the image ships kernels for
     is ready as fast, compiling nothing; on one it does not, the port opens at once and the
     advisor warms up behind it.
`podman run` is not used: this sandbox refuses the rlimits and cgroups it sets.

It prints one JSON report (build seconds, image size, readiness seconds, ...) on stdout and
exits 0 when every check passed, 1 when one failed, and 77 when it cannot run here (not root,
or tools missing and no apt-get); the reason is printed on stderr.
tests/deploy/test_container_image.py runs it on every CI run.
"""

from __future__ import annotations

import argparse
import configparser
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
IMAGE = "localhost/yahtzee-scoring:check"
BASE_REPOSITORY = "localhost/yahtzee-base"
BASE_PACKAGES = ("python3", "python3-venv", "ca-certificates")
TOOLS = {"buildah": "buildah", "podman": "podman", "debootstrap": "debootstrap"}  # command: package
# Where Debian's openssl, and so Python's ssl module and pip, look for trusted CAs.
SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
# The base image's PATH (a Debian default, as python:3.11-slim has it).
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Work dirs and the lock live here: /var/tmp survives reboots, unlike /tmp on some machines.
STATE_DIR = Path(os.environ.get("IMAGE_CHECK_STATE_DIR", "/var/tmp/yahtzee-image-check"))
SKIP = 77
READY_TIMEOUT = 120.0
STOP_TIMEOUT = 60.0


class Skip(Exception):
    """This machine cannot build or run the image (not root, no apt-get): not a failure."""


class CheckFailed(Exception):
    """A step of the check failed; the message says which and why."""


# ================================================================================================
# The short game played through the running image. Request and response fields change with the
# API: this list is the one place to update (and the place to add the game endpoints once they
# exist). Each step is (what, method, path, body, status, check); `check` gets the decoded JSON
# (or the text, for non-JSON answers) and returns True when the answer is right.
# ================================================================================================
@dataclass(frozen=True)
class Step:
    """One request of the game and what its answer must be."""

    what: str
    method: str
    path: str
    body: Any
    status: int
    check: Callable[[Any], bool]
    # seconds to keep asking while the answer is the documented 202 (a table being built by
    # the pod's build process), as a client honouring Retry-After does
    wait_for_build: float = 0.0


YAHTZEE = "/v1/variants/yahtzee"


def _early_distribution(answer: dict[str, Any], mean: float, sd: float) -> bool:
    """A position value from the early distributions: exact, its mean and SD those of the
    unpacked tables (to 1e-5), its histogram summing to 1 (to 1e-8) with that mean."""
    dist = answer["distribution"]
    chances = dist["histogram"]
    return (answer["exact"] and "first turns" in dist["method"]
            and abs(answer["expected_final_score"] - mean) < 1e-5
            and abs(answer["sd"] - sd) < 1e-5
            and abs(sum(c["probability"] for c in chances) - 1) < 1e-8
            and abs(sum(c["score"] * c["probability"] for c in chances) - mean) < 1e-5)


GAME: list[Step] = [
    Step("ready", "GET", "/readyz", None, 200, lambda r: r["status"] == "ready"),
    Step("variants", "GET", "/v1/variants", None, 200,
         lambda r: "yahtzee" in {v["id"] for v in r["variants"]}),
    Step("advice on the first throw", "POST", f"{YAHTZEE}/moves/suggest",
         {"dice": [1, 3, 3, 5, 6], "throw": 1}, 200,
         lambda r: r["best"]["action"] == "keep"),
    Step("score the third throw", "POST", f"{YAHTZEE}/hands/score",
         {"dice": [3, 3, 3, 5, 5], "throw": 3, "scorecard": {"boxes": {"ones": 3}}}, 200,
         lambda r: next(c for c in r["boxes"] if c["box"] == "full_house")["score"] == 25),
    Step("advice on the third throw", "POST", f"{YAHTZEE}/moves/suggest",
         {"dice": [3, 3, 3, 5, 5], "throw": 3, "scorecard": {"boxes": {"ones": 3}}}, 200,
         lambda r: r["best"]["action"] == "score" and r["best"]["box"] == "full_house"),
    Step("play the turn", "POST", f"{YAHTZEE}/games/turn",
         {"scorecard": {"boxes": {"ones": 3}}, "dice": [3, 3, 3, 5, 5], "throw": 3,
          "box": "full_house"}, 200,
         lambda r: r["scorecard"]["boxes"]["full_house"] == 25 and r["turn"] == 2),
    # The second turn's start, from the early distributions the image ships packed (kept
    # within 5.3e-10 a probability, service/advisor/tables/packing.py): the figures of the
    # tables built before packing, to 1e-5, and a whole distribution
    Step("value of a YAHTZEE position", "POST", f"{YAHTZEE}/positions/value",
         {"scorecard": {"boxes": {"ones": 3}}, "histogram": True}, 200,
         lambda r: _early_distribution(r, 245.324138, 56.240801), wait_for_build=120.0),
    Step("value of a Yatzy position", "POST", "/v1/variants/yatzy/positions/value",
         {"scorecard": {"boxes": {"ones": 3}}, "histogram": True}, 200,
         lambda r: _early_distribution(r, 243.448178, 37.873993), wait_for_build=120.0),
    Step("total the sheet", "POST", f"{YAHTZEE}/scorecards/score",
         {"boxes": {"ones": 3, "full_house": 25}}, 200, lambda r: r["total"] == 28),
    Step("a hand of six dice is a 409 problem in YAHTZEE", "POST", f"{YAHTZEE}/hands/score",
         {"dice": [3, 3, 3, 5, 5, 5]}, 409, lambda r: r["errors"][0]["pointer"] == "/dice"),
    Step("a malformed hand is a 422 problem", "POST", f"{YAHTZEE}/hands/score",
         {"dice": [3, 3, 3, 5, "x"]}, 422, lambda r: r["errors"][0]["pointer"] == "/dice/4"),
    Step("metrics", "GET", "/metrics", None, 200, lambda text: "http_requests_total" in text),
]
# ================================================================================================


def log(message: str) -> None:
    """Progress on stderr (stdout carries only the JSON report)."""
    print(f"[check_image] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], *, timeout: float = 600, check: bool = True,
        log_to: Path | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure raise CheckFailed with its output (or the log file's tail)."""
    if log_to is not None:
        with open(log_to, "a") as out:
            out.write(f"$ {' '.join(cmd)}\n")
            out.flush()
            result = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, text=True,
                                    timeout=timeout, check=False, **kwargs)
        output = "\n".join(log_to.read_text().splitlines()[-40:])
    else:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                check=False, **kwargs)
        output = (result.stdout or "") + (result.stderr or "")
    if check and result.returncode != 0:
        raise CheckFailed(f"{' '.join(cmd[:3])} ... exited {result.returncode}:\n{output}")
    return result


# --- 1. tools ---------------------------------------------------------------------------------
def ensure_tools(work: Path) -> None:
    """Install buildah, podman and debootstrap with apt-get when any is missing (as root)."""
    missing = [pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise Skip(f"{', '.join(missing)} missing and no apt-get to install them with")
    log(f"installing {' '.join(missing)} from Debian's packages")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update"], env=env, log_to=work / "apt.log")
    run(["apt-get", "install", "-y", *missing], env=env, log_to=work / "apt.log")


# --- 2. base image ----------------------------------------------------------------------------
def os_codename() -> str:
    """This machine's Debian release name (bookworm), from /etc/os-release."""
    text = Path("/etc/os-release").read_text()
    m = re.search(r"^VERSION_CODENAME=\"?(\w+)\"?$", text, re.M)
    if not m:
        raise Skip("not a Debian machine: /etc/os-release names no VERSION_CODENAME")
    return m.group(1)


def apt_mirror(suite: str) -> str:
    """The machine's own Debian mirror: the first apt source serving `suite` main."""
    sources: list[tuple[str, list[str], list[str]]] = []  # (uri, suites, components)
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields = dict(re.findall(r"^([\w-]+):\s*(.*)$", stanza, re.M))
            if "deb" in fields.get("Types", "").split() and fields.get("Enabled", "yes") != "no":
                for uri in fields.get("URIs", "").split():
                    sources.append((uri, fields.get("Suites", "").split(),
                                    fields.get("Components", "").split()))
    for path in [Path("/etc/apt/sources.list"),
                 *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]:
        if path.exists():
            for line in path.read_text().splitlines():
                m = re.match(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$", line.strip())
                if m:
                    sources.append((m.group(1), [m.group(2)], m.group(3).split()))
    for uri, suites, components in sources:
        if suite in suites and "main" in components:
            return uri
    return "http://deb.debian.org/debian"


# What Debian's official "slim" images (and so python:3.11-slim) leave out of every package,
# as their /etc/dpkg/dpkg.cfg.d/docker-slim says; copyright files stay.
SLIM_EXCLUDES = ("usr/share/doc", "usr/share/groff", "usr/share/info", "usr/share/linda",
                 "usr/share/lintian/overrides", "usr/share/locale", "usr/share/man")


def slim(rootfs: Path) -> None:
    """Make a debootstrap root filesystem like python:3.11-slim's: no downloaded packages or
    package lists, no documentation, manual pages or translations (and a dpkg configuration
    that keeps them out of packages installed later), and `python` on PATH."""
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (rootfs / leftover).glob("*"):
            if path.is_file():
                path.unlink()

    def remove(path: Path) -> None:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()

    dpkg_cfg = ["# Like Debian's slim images: no documentation, manual pages or translations."]
    for excluded in SLIM_EXCLUDES:
        dpkg_cfg.append(f"path-exclude /{excluded}/*")
        for path in (rootfs / excluded).glob("*"):
            if excluded == "usr/share/doc" and path.is_dir() and not path.is_symlink():
                for item in path.iterdir():
                    if item.name != "copyright":
                        remove(item)
            else:
                remove(path)
    dpkg_cfg.append("path-include /usr/share/doc/*/copyright")
    (rootfs / "etc/dpkg/dpkg.cfg.d/docker-slim").write_text("\n".join(dpkg_cfg) + "\n")
    (rootfs / "usr/bin/python").unlink(missing_ok=True)
    (rootfs / "usr/bin/python").symlink_to("python3")


def image_exists(name: str) -> bool:
    """Whether the local image store holds `name`."""
    return run(["podman", "image", "exists", name], check=False).returncode == 0


def base_image(work: Path, fresh: bool) -> tuple[str, dict[str, Any]]:
    """The stand-in for python:3.11-slim: made once per recipe, then reused from the store."""
    suite = os_codename()
    mirror = apt_mirror(suite)
    recipe = json.dumps({"suite": suite, "mirror": mirror, "packages": BASE_PACKAGES,
                         "variant": "minbase", "slim": SLIM_EXCLUDES, "v": 2})
    name = f"{BASE_REPOSITORY}:{suite}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"
    info: dict[str, Any] = {"image": name, "suite": suite, "mirror": mirror}
    if image_exists(name) and not fresh:
        info["reused"] = True
        return name, info
    started = time.monotonic()
    replaced = image_id(name)  # with --fresh-base
    rootfs = Path(tempfile.mkdtemp(prefix="base-", dir=work)) / "rootfs"
    try:
        log(f"debootstrap {suite} from {mirror} (a minute or two)")
        run(["debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
             suite, str(rootfs), mirror], log_to=work / "debootstrap.log", timeout=1200)
        slim(rootfs)
        tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."],
                               stdout=subprocess.PIPE)
        try:
            run(["podman", "import",
                 "--change", f"ENV=PATH={BASE_PATH}",
                 "--change", "ENV=LANG=C.UTF-8",
                 "--change", 'CMD=["python3"]',
                 "--message", f"debootstrap {suite} minbase + {' '.join(BASE_PACKAGES)}",
                 "-", name], stdin=tar.stdout, timeout=600)
        finally:
            assert tar.stdout is not None
            tar.stdout.close()
            if tar.wait() != 0:
                raise CheckFailed("tar of the debootstrap root filesystem failed")
    finally:
        shutil.rmtree(rootfs.parent, ignore_errors=True)
    info.update(reused=False, seconds=round(time.monotonic() - started, 1))
    # Bases made by an earlier recipe, or replaced by this one, are of no further use.
    listed = run(["podman", "images", "--format", "{{.Repository}}:{{.Tag}}",
                  "--filter", f"reference={BASE_REPOSITORY}"], check=False).stdout.split()
    for old in [*(x for x in listed if x != name), *([replaced] if replaced else [])]:
        run(["podman", "rmi", old], check=False)
    return name, info


# --- 3. build ---------------------------------------------------------------------------------
def pip_config_files() -> list[Path]:
    """The pip configuration files this machine's pip reads (`pip config debug`)."""
    files: list[Path] = []
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    pip = [sys.executable, "-m", "pip"]
    result = subprocess.run([*pip, "config", "debug"], capture_output=True, text=True,
                            check=False)
    for m in re.finditer(r"^\s+(/\S+), exists: True$", result.stdout, re.M):
        files.append(Path(m.group(1)))
    return [f for f in dict.fromkeys(files) if f.is_file()]


def pip_mounts() -> tuple[list[str], list[str]]:
    """buildah `-v` mounts (read-only): the pip configuration files, the local files and
    directories they name (constraints, wheel directories, file:// indexes), and the CA bundle,
    which is mounted over the base's system bundle too. Also the names the mounts use."""
    paths: dict[str, str] = {}  # host path -> container path
    ca_bundle = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE") or ""
    for conf in pip_config_files():
        paths[str(conf)] = str(conf)
        parser = configparser.RawConfigParser()
        try:
            parser.read(conf)
        except configparser.Error:
            continue
        for section in parser.sections():
            for key, value in parser.items(section):
                for word in value.split():
                    local = word.removeprefix("file://")
                    if not local.startswith("/"):
                        continue
                    if word.startswith("file://") and key.endswith("index-url"):
                        # A local index (<dir>/simple) links to its files beside it (<dir>/files).
                        local = str(Path(local).parent)
                    if key == "cert":
                        ca_bundle = local
                    if Path(local).exists():
                        paths[local] = local
    if not ca_bundle and Path(SYSTEM_CA_BUNDLE).exists():
        ca_bundle = SYSTEM_CA_BUNDLE
    if ca_bundle and Path(ca_bundle).is_file():
        paths[ca_bundle] = ca_bundle
        mounts = [f"{ca_bundle}:{SYSTEM_CA_BUNDLE}:ro"] if ca_bundle != SYSTEM_CA_BUNDLE else []
    else:
        mounts = []
    # A directory already mounted covers what lies under it.
    tops = [p for p in sorted(paths) if not any(
        p != q and p.startswith(q.rstrip("/") + "/") for q in paths)]
    mounts += [f"{p}:{paths[p]}:ro" for p in tops]
    return mounts, tops


def image_id(name: str) -> str | None:
    """The id of the local image `name`, or None."""
    result = run(["podman", "image", "inspect", "--format", "{{.Id}}", name], check=False)
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


# A build that failed only because buildah or its storage met a busy resource (seen on a fresh
# clone: "Close_Fd sealing memfd copy: Device or resource busy" at the first RUN of the runtime
# stage; the same build run again passed) is run once more. Recognised narrowly: the memfd
# message anywhere, or "device or resource busy" in an error line of buildah's own (not in the
# output of a command the Dockerfile RUNs, whose failure is the build's).
BUILD_ATTEMPTS = 2
_MEMFD_BUSY = re.compile(r"sealing memfd copy: device or resource busy", re.I)
# buildah's own error lines (cobra's "Error: ", "error building at STEP", logrus's "ERRO[0001]"
# or level=error), case and all: pip's "ERROR: " inside a RUN is not one of them
_BUILDAH_ERROR_LINE = re.compile(
    r'^\s*(?:Error: |error |ERRO\[\d*\]|time="[^"]*" level=(?:error|fatal) )')
_BUSY = re.compile(r"device or resource busy|\bEBUSY\b", re.I)


def transient_build_failure(output: str) -> str | None:
    """The line of a failed `buildah bud`'s output that shows the failure was transient (a
    busy resource in buildah or its storage, not the Dockerfile's own steps), or None."""
    for line in output.splitlines():
        if _MEMFD_BUSY.search(line) or (_BUILDAH_ERROR_LINE.match(line) and _BUSY.search(line)):
            return line.strip()[-300:]
    return None


@dataclass(frozen=True)
class Attempt:
    """What one run of a command did: its exit status, its output, how long it took."""

    exit_status: int
    output: str
    seconds: float


def with_one_retry(attempt: Callable[[], Attempt],
                   transient: Callable[[str], str | None] = transient_build_failure,
                   attempts: int = BUILD_ATTEMPTS) -> tuple[Attempt, list[dict[str, Any]]]:
    """Run `attempt` until it succeeds, it fails for a reason `transient` does not recognise,
    or `attempts` runs were made: the last run, and one record per failed run retried
    (exit status, seconds, the line that made it transient) for the report."""
    retried: list[dict[str, Any]] = []
    while True:
        result = attempt()
        reason = None if result.exit_status == 0 else transient(result.output)
        if reason is None or len(retried) + 1 >= attempts:
            return result, retried
        log(f"transient failure (exit {result.exit_status}): {reason}; trying once more")
        retried.append({"exit_status": result.exit_status, "seconds": result.seconds,
                        "reason": reason})


def build(base: str, work: Path) -> dict[str, Any]:
    """Build the Dockerfile with buildah, tagged IMAGE, retrying once after a transient
    failure (transient_build_failure); drop the image it replaces."""
    mounts, mounted = pip_mounts()
    previous = image_id(IMAGE)
    cmd = ["buildah", "bud", "--isolation", "chroot", "--format", "docker", "--pull=never",
           "--build-arg", f"PYTHON_IMAGE={base}", "--tag", IMAGE,
           "--file", str(ROOT / "Dockerfile")]
    for mount in mounts:
        cmd += ["--volume", mount]
    build_log = work / "build.log"

    def containers() -> set[str]:
        listed = run(["buildah", "containers", "--quiet"], check=False)
        return set(listed.stdout.split()) if listed.returncode == 0 else set()

    def attempt() -> Attempt:
        before, offset = containers(), build_log.stat().st_size if build_log.exists() else 0
        log(f"buildah bud (about a minute); log: {build_log}")
        started = time.monotonic()
        result = run([*cmd, str(ROOT)], log_to=build_log, timeout=1800, check=False)
        seconds = round(time.monotonic() - started, 1)
        with open(build_log, errors="replace") as f:
            f.seek(offset)
            output = f.read()
        if result.returncode != 0:
            # the failed build's intermediate containers (buildah keeps them on failure)
            for leftover in containers() - before:
                run(["buildah", "rm", leftover], check=False)
        return Attempt(result.returncode, output, seconds)

    result, retried = with_one_retry(attempt)
    if result.exit_status != 0:
        tail_lines = "\n".join(result.output.splitlines()[-40:])
        raise CheckFailed(f"buildah bud exited {result.exit_status}"
                          f"{f' (after {len(retried)} transient failure)' if retried else ''}"
                          f":\n{tail_lines}")
    new = image_id(IMAGE)
    if previous and previous != new:
        run(["buildah", "rmi", previous], check=False)
    return {"seconds": result.seconds, "mounted": mounted, "log": str(build_log),
            "attempts": len(retried) + 1, "retried": retried}


def inspect(name: str) -> dict[str, Any]:
    """The image's size and Docker-format config (User, Cmd, Entrypoint, Healthcheck, ...)."""
    size = int(run(["podman", "image", "inspect", "--format", "{{.Size}}", name]).stdout)
    data = json.loads(run(["buildah", "inspect", "--type", "image", name]).stdout)
    config = (data.get("Docker") or {}).get("config") or data["OCIv1"]["config"]
    return {"size_bytes": size, "size_mib": round(size / 2**20), "config": config}


# --- 4. run -----------------------------------------------------------------------------------
def free_port() -> int:
    """A TCP port free on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(base: str, method: str, path: str, body: Any = None,
            timeout: float = 30) -> tuple[int, str, bytes]:
    """One HTTP request: (status, content type, body)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, parents before children."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    out += [int(child), *descendants(int(child))]
    return out


def cmdline(pid: int) -> list[str]:
    """A process's arguments ([] once it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def snapshot(root: Path) -> dict[str, tuple[int, int, int, int, int, str]]:
    """Every path of a container's root filesystem but /tmp and the kernel's mounts: mode,
    owner, size, modification time and link target."""
    out: dict[str, tuple[int, int, int, int, int, str]] = {}
    skip = {"/tmp", "/proc", "/sys", "/dev"}

    def walk(directory: Path, rel: str) -> None:
        with os.scandir(directory) as entries:
            for entry in entries:
                path = f"{rel}/{entry.name}"
                if path in skip:
                    continue
                st = entry.stat(follow_symlinks=False)
                target = os.readlink(entry.path) if entry.is_symlink() else ""
                out[path] = (st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns, target)
                if entry.is_dir(follow_symlinks=False):
                    walk(Path(entry.path), path)

    walk(root, "")
    return out


def changes(before: dict[str, tuple], after: dict[str, tuple],
            mount_points: set[str] = frozenset()) -> list[str]:
    """Paths added, removed or changed between two snapshots. `buildah run` makes a mount point
    for each file it mounts (/run/.containerenv, /etc/hosts, ...) and removes it afterwards:
    those, and the new modification time of the directories holding them, are not changes."""
    parents = {str(Path(m).parent) for m in mount_points}
    changed = []
    for path in before.keys() | after.keys():
        old, new = before.get(path), after.get(path)
        if old == new or path in mount_points:
            continue
        if path in parents and old and new and old[:4] + old[5:] == new[:4] + new[5:]:
            continue  # only the directory's modification time
        changed.append(path)
    return sorted(changed)


@contextlib.contextmanager
def container(image: str, suffix: str = "") -> Iterator[tuple[str, Path]]:
    """A fresh working container from `image` and its mounted root filesystem; removed after."""
    prefix = "yahtzee-image-check-"
    # Containers left by an earlier check that was killed (checks run one at a time: the lock).
    listed = run(["buildah", "containers", "--format", "{{.ContainerName}}"], check=False)
    for stale in listed.stdout.split():
        if stale.startswith(prefix):
            run(["buildah", "rm", stale], check=False)
    name = f"{prefix}{os.getpid()}{suffix}"
    run(["buildah", "from", "--pull=never", "--name", name, image])
    try:
        root = Path(run(["buildah", "mount", name]).stdout.strip())
        yield name, root
    finally:
        run(["buildah", "umount", name], check=False)
        run(["buildah", "rm", name], check=False)


def runtime_env(port: int) -> list[str]:
    """`-e` settings for the run: the port, two workers, and a bind to loopback only."""
    # GUNICORN_CMD_ARGS overrides gunicorn.conf.py's 0.0.0.0 bind: chroot isolation shares the
    # host's network, and this check must not listen beyond 127.0.0.1.
    return ["-e", f"PORT={port}", "-e", "WEB_CONCURRENCY=2",
            "-e", f"GUNICORN_CMD_ARGS=--bind=127.0.0.1:{port}"]


def play(base_url: str) -> list[dict[str, Any]]:
    """Play GAME against the running service; raise CheckFailed at the first wrong answer."""
    results = []
    for step in GAME:
        deadline = time.monotonic() + step.wait_for_build
        while True:
            status, ctype, body = request(base_url, step.method, step.path, step.body)
            if status != 202 or time.monotonic() > deadline:
                break
            time.sleep(1.0)
        text = body.decode(errors="replace")
        try:
            doc: Any = json.loads(text) if "json" in ctype else text
            ok = status == step.status and bool(step.check(doc))
        except (ValueError, KeyError, TypeError, StopIteration) as e:
            ok = False
            text = f"{text[:400]} ({type(e).__name__}: {e})"
        if not ok:
            raise CheckFailed(f"game step {step.what!r}: {step.method} {step.path} answered "
                              f"{status} (wanted {step.status}): {text[:600]}")
        results.append({"what": step.what, "status": status})
    return results


def mount_leftovers(root: Path, mounted: Sequence[str]) -> list[str]:
    """The build's mount points that buildah left in the image (those the base lacked: it makes
    an empty file or directory to mount on, in every stage that has a RUN). They must be empty:
    nothing of the machine's pip configuration may be in the image."""
    left = []
    for path in mounted:
        target = root / path.lstrip("/")
        if path == SYSTEM_CA_BUNDLE or not target.exists():
            continue
        if (target.is_file() and target.stat().st_size) or (
                target.is_dir() and any(target.iterdir())):
            raise CheckFailed(f"the image holds {path} from the build machine, not empty")
        left.append(path)
    return left


def run_image(image: str, config: dict[str, Any], work: Path, report: dict[str, Any],
              mounted: Sequence[str] = ()) -> None:
    """Start the image's command as its user, play the game, stop it; what it did goes into
    `report` as it goes. `mounted`: the build's mount points, checked by mount_leftovers."""
    user = config.get("User") or ""
    if not user or user.split(":")[0] in ("0", "root"):
        raise CheckFailed(f"the image runs as {user or 'root'}, not as an unprivileged user")
    command = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    service_log = work / "service.log"
    report.update(user=user, command=command, port=port, log=str(service_log))
    with container(image) as (name, root):
        report["empty_build_mount_points"] = mount_leftovers(root, mounted)
        report["sbom"] = check_sbom(root)
        # A first run, of `cat /proc/self/mountinfo`, lets buildah make what it makes in every
        # container it runs, and tells where it mounts files (/etc/hosts, /run/.containerenv):
        # the comparison below leaves those out and sees only what the service wrote.
        mounts = {line.split()[4] for line in run(
            ["buildah", "run", "--isolation", "chroot", "--user", user, name, "--",
             "cat", "/proc/self/mountinfo"]).stdout.splitlines()}
        before = snapshot(root)
        started = time.monotonic()
        with open(service_log, "w") as out:
            proc = subprocess.Popen(
                ["buildah", "run", "--isolation", "chroot", "--user", user,
                 *runtime_env(port), name, "--", *command],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            report["ready_seconds"] = wait_for_ok(proc, base_url, "/readyz", started,
                                                  service_log)
            report["game"] = play(base_url)
            report["metrics"] = check_metrics(base_url, service_log)
            report["healthcheck"] = healthcheck(name, user, config, port)
            report["uids"] = sorted({uid_of(p) for p in service_processes(proc.pid)})
            if report["uids"] != [int(user.split(":")[0])]:
                raise CheckFailed(f"service processes run as uids {report['uids']}, not {user}")
            report["stop"] = stop(proc, service_log)
        finally:
            kill_left(proc)
        after = snapshot(root)
        written = changes(before, after, mounts)
        report["written_outside_tmp"] = written
        if written:
            raise CheckFailed("the running service wrote outside /tmp: " + "; ".join(
                f"{p} {before.get(p)} -> {after.get(p)}" for p in written[:20]))
        tmp = sorted(p.name for p in (root / "tmp").iterdir())
        report["tmp"] = tmp
        report["kernels_compiled_at_start"] = compiled_at_start(root, config)
        if "prometheus" not in tmp:
            raise CheckFailed(f"no metrics directory in the container's /tmp ({tmp}): was the "
                              "comparison looking at the container the service ran in?")


def wait_for_ok(proc: subprocess.Popen[bytes], base_url: str, path: str, started: float,
                service_log: Path, label: str = "") -> float:
    """Seconds from `started` until `path` answers 200 (within READY_TIMEOUT, while the
    service runs; else CheckFailed saying which, with the log's end)."""
    who = f"{label}: " if label else ""
    deadline = started + READY_TIMEOUT
    while True:
        if proc.poll() is not None:
            raise CheckFailed(f"{who}the service exited {proc.returncode} before {path} "
                              f"answered:\n{tail(service_log)}")
        with contextlib.suppress(OSError):
            if request(base_url, "GET", path, timeout=2)[0] == 200:
                return round(time.monotonic() - started, 1)
        if time.monotonic() > deadline:
            raise CheckFailed(f"{who}{path} not 200 in {READY_TIMEOUT:.0f} s:\n"
                              f"{tail(service_log)}")
        time.sleep(0.1)


def kill_left(proc: subprocess.Popen[bytes]) -> None:
    """Whatever of a run is still alive (a failed check): its processes, then buildah's."""
    if proc.poll() is None:
        for pid in reversed(descendants(proc.pid)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()


#: The image's SBOM (docker/build-sbom.sh) and the lock the image installs.
SBOM_PATH = "/app/sbom.cdx.json"
RUNTIME_LOCK = ROOT / "requirements" / "runtime.lock"


def check_sbom(root: Path) -> dict[str, Any]:
    """The image's SBOM: a CycloneDX document whose root component is the service and whose
    components hold every package of requirements/runtime.lock at its locked version (what
    trim-venv.sh removes aside); raise CheckFailed otherwise."""
    path = root / SBOM_PATH.lstrip("/")
    if not path.is_file():
        raise CheckFailed(f"the image has no SBOM at {SBOM_PATH}")
    sbom = json.loads(path.read_text())
    root_name = sbom.get("metadata", {}).get("component", {}).get("name")
    if sbom.get("bomFormat") != "CycloneDX" or root_name != "yahtzee-scoring-service":
        raise CheckFailed(f"{SBOM_PATH} is not the service's CycloneDX SBOM: {root_name!r}")
    norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()  # noqa: E731 (PEP 503)
    listed = {norm(c["name"]): c.get("version") for c in sbom.get("components", [])}
    trimmed = {"pip", "setuptools", "wheel"}
    locked = dict(re.findall(r"^([A-Za-z0-9._-]+)==(\S+)", RUNTIME_LOCK.read_text(), re.M))
    wrong = {name: (version, listed.get(norm(name))) for name, version in locked.items()
             if norm(name) not in trimmed and listed.get(norm(name)) != version}
    if wrong:
        raise CheckFailed(f"{SBOM_PATH} disagrees with {RUNTIME_LOCK.name} (locked, listed): "
                          f"{wrong}")
    return {"path": SBOM_PATH, "spec_version": sbom.get("specVersion"),
            "components": len(listed)}


def compiled_at_start(root: Path, config: dict[str, Any]) -> list[str] | None:
    """numba cache files the run wrote or rewrote: those in NUMBA_CACHE_DIR that are not, byte
    for byte, the ones the image ships in NUMBA_CACHE_SEED (an archive that gunicorn.conf.py
    extracts at start). Empty when every kernel came from the image; None when the image has
    no seed."""
    env = dict(item.split("=", 1) for item in config.get("Env") or [])
    if not env.get("NUMBA_CACHE_SEED") or not env.get("NUMBA_CACHE_DIR"):
        return None
    seed = root / env["NUMBA_CACHE_SEED"].lstrip("/")
    cache = root / env["NUMBA_CACHE_DIR"].lstrip("/")
    shipped: dict[str, bytes] = {}
    with tarfile.open(seed) as archive:
        for member in archive.getmembers():
            content = archive.extractfile(member) if member.isfile() else None
            if content is not None:
                shipped[os.path.normpath(member.name)] = content.read()
    written = []
    for path in sorted(cache.rglob("*")) if cache.is_dir() else []:
        if path.is_file():
            name = str(path.relative_to(cache))
            if shipped.get(name) != path.read_bytes():
                written.append(name)
    return written


def tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log file."""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def service_processes(buildah_pid: int) -> list[int]:
    """The service's own processes: what `buildah run` started, below its helpers."""
    return [p for p in descendants(buildah_pid)
            if cmdline(p) and not cmdline(p)[0].startswith("buildah")]


def uid_of(pid: int) -> int:
    """A process's real uid."""
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("Uid:")).split()[1])


def check_metrics(base_url: str, service_log: Path) -> dict[str, Any]:
    """/metrics counts the game's requests, in Prometheus text format (else CheckFailed,
    with the service log's end)."""
    status, ctype, body = request(base_url, "GET", "/metrics")
    text = body.decode()
    counted = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                  if line.startswith("http_requests_total{"))
    if status != 200 or not ctype.startswith("text/plain") or counted < len(GAME):
        raise CheckFailed(f"/metrics: {status} {ctype}, {counted} requests counted, wanted at "
                          f"least {len(GAME)}:\n{text[:600]}\n{tail(service_log)}")
    return {"http_requests_total": counted}


def healthcheck(name: str, user: str, config: dict[str, Any], port: int) -> str:
    """Run the image's HEALTHCHECK command in the container, as Docker would."""
    test = (config.get("Healthcheck") or {}).get("Test") or []
    if not test:
        return "none in the image"
    if test[0] == "CMD-SHELL":
        argv = ["/bin/sh", "-c", test[1]]
    elif test[0] == "CMD":
        argv = test[1:]
    else:
        return f"not run: {test[0]}"
    result = run(["buildah", "run", "--isolation", "chroot", "--user", user,
                  "-e", f"PORT={port}", name, "--", *argv], check=False, timeout=30)
    if result.returncode != 0:
        raise CheckFailed(f"HEALTHCHECK failed ({result.returncode}): {result.stderr[-600:]}")
    return "passed"


def stop(proc: subprocess.Popen[bytes], service_log: Path) -> dict[str, Any]:
    """SIGTERM to the container's main process, as `docker stop` and Kubernetes send it; it
    must exit 0 within STOP_TIMEOUT, and so must `buildah run`."""
    main = service_processes(proc.pid)
    if not main:
        raise CheckFailed("no service process found under buildah run")
    started = time.monotonic()
    os.kill(main[0], signal.SIGTERM)
    try:
        code = proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise CheckFailed(f"still running {STOP_TIMEOUT:.0f} s after SIGTERM:\n"
                          f"{tail(service_log)}") from e
    if code != 0:
        raise CheckFailed(f"exit status {code} after SIGTERM:\n{tail(service_log)}")
    return {"exit_status": code, "seconds": round(time.monotonic() - started, 1)}


# A node with another CPU than the build machine's, as numba sees it (NUMBA_CPU_NAME names the
# CPU it compiles for; the image's ADVISOR_CPU_TARGET=portable keeps an operator's choice):
#   - "generic": the baseline the image also ships kernels for (an x86-64 node older than
#     x86-64-v3): ready as quickly as on the build machine, nothing compiled;
#   - "x86-64-v2": a CPU no shipped kernel was compiled for: the port still opens at once,
#     scoring is answered, the advisor answers 202 and /readyz 503 while the build process
#     compiles behind the open port (the run is stopped there, without waiting the minutes).
OTHER_CPUS = {"generic": "ready", "x86-64-v2": "warming"}


def run_other_cpu(image: str, config: dict[str, Any], work: Path, cpu: str,
                  expect: str) -> dict[str, Any]:
    """Start the image's command with numba compiling for `cpu`; seconds to the port opening
    (/healthz) and, when `expect` is "ready", to /readyz 200 with no kernel compiled; when
    "warming", the answers while the advisor warms up behind the open port."""
    user = config.get("User") or ""
    command = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    service_log = work / f"service-{cpu}.log"
    out: dict[str, Any] = {"cpu": cpu, "log": str(service_log)}
    with container(image, f"-{cpu}") as (name, root), open(service_log, "w") as log_file:
        started = time.monotonic()
        proc = subprocess.Popen(
            ["buildah", "run", "--isolation", "chroot", "--user", user, *runtime_env(port),
             "-e", f"NUMBA_CPU_NAME={cpu}", "-e", "NUMBA_CPU_FEATURES=", name, "--",
             *command], stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out["port_open_seconds"] = wait_for_ok(proc, base_url, "/healthz", started,
                                                   service_log, cpu)
            if expect == "ready":
                out["ready_seconds"] = wait_for_ok(proc, base_url, "/readyz", started,
                                                   service_log, cpu)
                out["game"] = play(base_url)
            else:
                score = request(base_url, "POST", f"{YAHTZEE}/hands/score",
                                {"dice": [3, 3, 3, 5, 5]})
                suggest = request(base_url, "POST", f"{YAHTZEE}/moves/suggest",
                                  {"dice": [3, 3, 3, 5, 5], "throw": 1})
                ready = request(base_url, "GET", "/readyz")
                out["answers"] = {"hands/score": score[0], "moves/suggest": suggest[0],
                                  "readyz": ready[0]}
                if (score[0], suggest[0], ready[0]) != (200, 202, 503) or json.loads(
                        ready[2])["warm"] is not False:
                    raise CheckFailed(f"{cpu}: while warming up, answers {out['answers']} "
                                      f"(wanted 200, 202, 503):\n{tail(service_log)}")
            out["stop"] = stop(proc, service_log)
        finally:
            kill_left(proc)
        if expect == "ready":
            out["kernels_compiled_at_start"] = compiled_at_start(root, config)
            if out["kernels_compiled_at_start"]:
                raise CheckFailed(f"{cpu}: kernels compiled at start: "
                                  f"{out['kernels_compiled_at_start'][:10]}")
    return out


# --- main -------------------------------------------------------------------------------------
def check(report: dict[str, Any], work: Path | None, fresh_base: bool,
          reuse_image: bool) -> None:
    """Every step, in order; what each measured goes into `report` as it goes. Logs go to
    `work` (default: STATE_DIR/last-run, emptied first)."""
    if os.geteuid() != 0:
        raise Skip("not root: debootstrap and buildah's chroot isolation need root")
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    with open(STATE_DIR / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one check at a time on a machine
        if work is None:
            work = STATE_DIR / "last-run"
            shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        report["work"] = str(work)
        ensure_tools(work)
        os.environ.setdefault("BUILDAH_ISOLATION", "chroot")
        base, report["base"] = base_image(work, fresh_base)
        if reuse_image and image_exists(IMAGE):
            report["build"] = {"reused": IMAGE}
        else:
            report["build"] = build(base, work)
        image = inspect(IMAGE)
        report["image"] = {"name": IMAGE, "size_bytes": image["size_bytes"],
                           "size_mib": image["size_mib"], "base": base,
                           "base_size_mib": inspect(base)["size_mib"]}
        report["run"] = {}
        run_image(IMAGE, image["config"], work, report["run"], pip_mounts()[1])
        report["other_cpus"] = [run_other_cpu(IMAGE, image["config"], work, cpu, expect)
                                for cpu, expect in OTHER_CPUS.items()]


def main(argv: list[str] | None = None) -> int:
    """Command line: run the check, print the JSON report, exit 0, 1 or 77 (skipped)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", type=Path, help="also write the JSON report here")
    parser.add_argument("--fresh-base", action="store_true",
                        help="debootstrap the base again even if the image store has it")
    parser.add_argument("--work", type=Path,
                        help=f"directory for the logs (default {STATE_DIR}/last-run)")
    parser.add_argument("--reuse-image", action="store_true",
                        help=f"run {IMAGE} as built last time instead of building it again")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    try:
        check(report, args.work, args.fresh_base, args.reuse_image)
        code = 0
    except Skip as e:
        log(f"skipped: {e}")
        report["skipped"], code = str(e), SKIP
    except CheckFailed as e:
        log(f"FAILED: {e}")
        report["failed"], code = str(e), 1
    text = json.dumps(report, indent=2)
    print(text)
    if args.report:
        args.report.write_text(text + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
