"""A typed TypeScript client of the live service (tests/client): one generic function serves
every variant.

`npm ci` installs the pinned packages (package-lock.json); openapi-typescript generates the
types from the committed openapi/openapi.json; `tsc --strict` checks the client; then the
compiled client (node) plays a whole two-player game of every variant of the catalogue
against the service under gunicorn (API keys required: it sends its tenant's), turn by turn
(`games/turn`, following `moves/suggest`), each through the same
`playGame<V extends Variant>`. It records each game as the answers give them (the kept dice
as a keep names them; in Bozó the next throw announced em baixo when a keep says so), has
it checked by `games/validate` and analysed by `games/analyze`, compares the totals, and
checks that every player's skill plus luck is the difference. Nothing is fetched but the
packages `npm ci` installs; its cache stays in the client's ignored folders.

Without node and npm the tests skip, saying why, except in CI (CI=true), where `.ci/run`
installs Debian's nodejs and npm and a missing node fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.domain.variants import VARIANT_IDS, VARIANTS
from service.web.auth import derive_key, derive_secret, hash_key, new_key
from tests.live.server import Server

CLIENT = Path(__file__).resolve().parent
ROOT = CLIENT.parents[1]
SPEC = ROOT / "openapi" / "openapi.json"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
NODE, NPM = shutil.which("node"), shutil.which("npm")
#: The packages' own scripts, run with node (not the node_modules/.bin links: one fresh-clone
#: run found `tsc`'s link missing right after a successful `npm ci`)
MODULES = CLIENT / "node_modules"
TSC = [str(NODE), str(MODULES / "typescript" / "bin" / "tsc")]
OPENAPI_TS = [str(NODE), str(MODULES / "openapi-typescript" / "bin" / "cli.js")]
PLAYED = list(VARIANT_IDS)

if NODE is None or NPM is None:
    _reason = f"no {'node' if NODE is None else 'npm'} on PATH (Debian: apt-get install " \
              "nodejs npm; .ci/run does it)"
    if IN_CI:
        pytest.fail(f"the TypeScript client must run in CI, but: {_reason}", pytrace=False)
    pytest.skip(_reason, allow_module_level=True)


def _run(cmd: list[str], timeout: float,
         extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A command in the client's folder, its own npm cache there too; fails with its output."""
    env = {**os.environ, **(extra_env or {}), "npm_config_cache": str(CLIENT / ".npm-cache"),
           "npm_config_update_notifier": "false", "npm_config_fund": "false",
           "npm_config_audit": "false"}
    done = subprocess.run(cmd, cwd=CLIENT, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    assert done.returncode == 0, (f"{' '.join(cmd)} exited {done.returncode}:\n"
                                  f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


#: Loads every package the test runs, as the test runs them: openapi-typescript (and through it
#: @redocly/openapi-core), openapi-fetch, and tsc's own entry script.
SMOKE = ("Promise.all([import('openapi-typescript'), import('openapi-fetch')])"
         ".then(() => { process.argv = ['node', 'tsc', '--version'];"
         " require('typescript/lib/_tsc.js'); })"
         ".catch((e) => { console.error(String(e)); process.exit(1); })")


def _install() -> None:
    """`npm ci`, then a check that what it installed loads."""
    _run([NPM, "ci", "--no-audit", "--no-fund"], timeout=600)
    _run([str(NODE), "--input-type=commonjs", "-e", SMOKE], timeout=120)


@pytest.fixture(scope="module")
def project() -> Path:
    """The client with its packages installed (npm ci, once a run) and the types generated
    from the committed spec.

    An install that fails, or that does not load, is made again from scratch, up to twice.
    Fresh-clone runs have seen npm find a downloaded tarball "corrupted" and trip over its own
    half-made node_modules (ENOENT), and twice a successful `npm ci` leave a file out
    (`node_modules/.bin/tsc`; `@redocly/openapi-core/lib/index.js`), which the next install
    did not."""
    for attempt in range(3):
        try:
            _install()
            break
        except AssertionError as failed:
            if attempt == 2:
                raise
            print(f"npm install incomplete, installing again from scratch:\n{str(failed)[-2000:]}")
            shutil.rmtree(MODULES, ignore_errors=True)
            shutil.rmtree(CLIENT / ".npm-cache" / "_cacache", ignore_errors=True)
    _run([*OPENAPI_TS, str(SPEC), "--output",
          str(CLIENT / "generated" / "openapi.d.ts")], timeout=300)
    return CLIENT


KEY_ID, KEY = new_key()
TENANTS = {"tenants": [{"name": "ts-client", "keys": [
    {"id": KEY_ID, "hash": hash_key(KEY), "derive": derive_secret(KEY)}]}]}


def derived_key() -> str:
    """What the client holds: not the tenant's key but a short-lived one derived from it
    (as a page or a mobile app would be given by the tenant's server), for one end user."""
    return derive_key(KEY, int(time.time()) + 3600, user="ts-client-test",
                      quotas={"scoring": "100000/minute"})


@pytest.fixture(scope="module")
def service() -> Iterator[Server]:
    """The service under gunicorn, every played variant's tables built before the client
    plays, with API keys required (the client sends its tenant's)."""
    srv = Server(env={"ADVISOR_WARM": ",".join(PLAYED), "WEB_CONCURRENCY": "1",
                      "AUTH": "keys", "API_KEYS": json.dumps(TENANTS)})
    try:
        # the port opens at once; the tables of PLAYED are built behind it (minutes when
        # numba compiles first)
        yield srv.start(ready="/healthz", timeout=120).wait_warm(600)
    finally:
        srv.close()


def test_the_client_has_no_any_and_no_casts():
    """The types do the work: no `any`, no `as` but `as const` (and `import ... as`)."""
    for path in sorted((CLIENT / "src").glob("*.ts")):
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", path.read_text(), flags=re.S)
        assert not re.search(r"\bany\b", code), f"{path.name} uses any"
        casts = [m for m in re.findall(r"\bas\s+[\w{(\[]+", code) if m.split()[1] != "const"]
        assert casts == [], f"{path.name} casts: {casts}"


def test_the_client_type_checks_strictly(project: Path):
    began = time.monotonic()
    _run([*TSC, "-p", ".", "--strict", "--noEmit"], timeout=300)
    types = project / "generated" / "openapi.d.ts"
    print(f"tsc --strict: {time.monotonic() - began:.1f} s, over generated types of "
          f"{types.stat().st_size / 1e6:.2f} MB from a spec of {SPEC.stat().st_size / 1e6:.2f} MB")


def test_one_generic_function_plays_validates_and_analyses_every_variant(project: Path,
                                                                         service: Server):
    _run([*TSC, "-p", ".", "--strict"], timeout=300)
    # `npm run play` as the README says: the package's own script runs the compiled client
    done = _run([NPM, "run", "--silent", "play", "--", service.url("")], timeout=1200,
                extra_env={"YAHTZEE_API_KEY": derived_key()})
    games = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    print("\n".join(done.stdout.splitlines()))
    assert [g["variant"] for g in games] == PLAYED  # the catalogue, in its order
    for game in games:
        assert game["players"] == 2 and game["valid"] is True
        assert game["totals"] == game["validatedTotals"] and len(game["totals"]) == 2
        if game["instantWin"]:
            assert game["endedBy"] == "instant_win"
        else:
            assert game["endedBy"] == "sheets_full"
            assert game["turns"] == 2 * VARIANTS[game["variant"]].turns
        best = max(game["totals"])
        assert game["winners"] == [i for i, t in enumerate(game["totals"]) if t == best]
        assert len(game["analysis"]) == 2
        for p in game["analysis"]:
            assert p["decisions"] > 0
            assert abs(p["skill"] + p["luck"] - p["difference"]) <= 1e-5, (game["variant"], p)
        if game["variant"] != "bozo":
            assert game["emBaixoKeeps"] == game["emBaixoTurns"] == 0
    # Bozó's advice announced em baixo, and the game recorded as the answers gave it was valid
    bozo = next(g for g in games if g["variant"] == "bozo")
    assert bozo["emBaixoKeeps"] > 0, bozo
