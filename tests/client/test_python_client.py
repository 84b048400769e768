"""A client generated from the committed spec (openapi-python-client, with the settings the
README recommends) plays against the app: the spec is precise enough for a typed client
(per-variant models, the move union narrowed on `action`), a scorecard the service returns is
sent back as it is, and a game loop over every variant (python_game.py) passes mypy --strict
with no cast, then plays a game of each."""

from __future__ import annotations

import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from service.config import Settings
from service.domain.variants import VARIANT_IDS
from service.web.app import create_app
from service.web.auth import hash_key, new_key

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "openapi" / "openapi.json"
GAME = Path(__file__).with_name("python_game.py")
BIN = Path(sys.executable).parent
GENERATOR = shutil.which("openapi-python-client",
                         path=os.pathsep.join([str(BIN), os.environ.get("PATH", "")]))
#: The generator's settings the README recommends: literal enums (one `Literal` type per set
#: of values, not a class each) and no formatter run afterwards.
CONFIG = "literal_enums: true\npost_hooks: []\n"

pytestmark = pytest.mark.skipif(GENERATOR is None,
                                reason="openapi-python-client is not installed (.[test])")


@pytest.fixture(scope="module")
def generated_dir(tmp_path_factory) -> Path:
    """The directory holding the client package generated from openapi/openapi.json."""
    out = tmp_path_factory.mktemp("client")
    config = out / "config.yaml"
    config.write_text(CONFIG)
    env = {**os.environ, "PATH": os.pathsep.join([str(BIN), os.environ.get("PATH", "")])}
    began = time.monotonic()
    done = subprocess.run([GENERATOR, "generate", "--path", str(SPEC), "--meta", "none",
                           "--config", str(config), "--output-path",
                           str(out / "yahtzee_client")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "Error" not in done.stdout, done.stdout + done.stderr
    files = sum(1 for _ in (out / "yahtzee_client").rglob("*.py"))
    print(f"openapi-python-client: {files} files in {time.monotonic() - began:.1f} s")
    return out


@pytest.fixture(scope="module")
def generated(generated_dir) -> Iterator[object]:
    """The generated client package, imported."""
    sys.path.insert(0, str(generated_dir))
    try:
        yield importlib.import_module("yahtzee_client")
    finally:
        sys.path.remove(str(generated_dir))


KEY_ID, KEY = new_key()
TENANTS = {"tenants": [{"name": "py-client", "keys": [{"id": KEY_ID, "hash": hash_key(KEY)}]}]}


@pytest.fixture(scope="module")
def base_url(tmp_path_factory) -> Iterator[str]:
    """The app with API keys required, on a loopback port."""
    app = create_app(Settings(advisor_table_dir=str(tmp_path_factory.mktemp("tables")),
                              advisor_builds="inline", auth="keys",
                              api_keys=json.dumps(TENANTS)))
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


def test_a_generated_client_sends_its_key_and_is_refused_without(generated, base_url):
    """The spec's security schemes give the generated client an AuthenticatedClient, which
    sends the key as `Authorization: Bearer`; the plain client is answered 401."""
    variants = importlib.import_module("yahtzee_client.api.variants.list_variants")
    keyed = generated.AuthenticatedClient(base_url=base_url, token=KEY)
    assert variants.sync_detailed(client=keyed).status_code == 200
    bare = generated.Client(base_url=base_url)
    assert variants.sync_detailed(client=bare).status_code == 401


def test_a_generated_client_plays_a_game(generated, base_url):
    client = generated.AuthenticatedClient(base_url=base_url, token=KEY,
                                           raise_on_unexpected_status=True)
    moves = importlib.import_module("yahtzee_client.api.moves.suggest_move_yahtzee")
    hands = importlib.import_module("yahtzee_client.api.hands.score_hand_yahtzee")
    cards = importlib.import_module("yahtzee_client.api.scorecards.score_scorecard_yahtzee")
    models = importlib.import_module("yahtzee_client.models")
    rng = random.Random(7)
    scorecard: dict = {"boxes": {}}
    points = 0
    for _ in range(4):
        dice = [rng.randint(1, 6) for _ in range(5)]
        body = {"dice": dice, "throw": 3, "scorecard": scorecard}
        advice = moves.sync(client=client,
                            body=models.MoveSuggestRequestYahtzee.from_dict(body))
        # the answer is the variant's own (its box ids narrowed), as the request is
        assert isinstance(advice, models.MoveSuggestionYahtzee), advice
        best = advice.best
        assert isinstance(best, models.ScoreMoveYahtzee)  # the last throw: only boxes
        hand = hands.sync_detailed(client=client,
                                   body=models.HandScoreRequestYahtzee.from_dict(body)).parsed
        placement = next(p for p in hand.boxes if p.box == best.box)
        assert placement.legal and placement.score == best.score
        scorecard["boxes"][best.box] = best.score
        points += best.score + best.five_of_a_kind_bonus + best.upper_bonus
    totals = cards.sync(client=client,
                        body=models.ScorecardScoreRequestYahtzee.from_dict(scorecard))
    assert totals.total == points
    # the scorecard in the answer goes back unchanged as the next request's
    again = cards.sync(client=client, body=models.ScorecardScoreRequestYahtzee.from_dict(
        totals.scorecard.to_dict()))
    assert again.total == points and again.scorecard.to_dict() == totals.scorecard.to_dict()


def test_a_typed_game_loop_passes_mypy_strict_and_plays_every_variant(generated_dir,
                                                                      base_url):
    env = {**os.environ, "MYPYPATH": str(generated_dir), "PYTHONPATH": str(generated_dir)}
    began = time.monotonic()
    checked = subprocess.run([str(BIN / "mypy"), "--strict", "--no-incremental",
                              "--cache-dir", os.devnull, str(GAME)],
                             capture_output=True, text=True, env=env, timeout=600)
    print(f"mypy --strict: {time.monotonic() - began:.1f} s: {checked.stdout.strip()}")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    source = GAME.read_text()
    assert "cast(" not in source and "Any" not in source and "type: ignore" not in source
    began = time.monotonic()
    played = subprocess.run([sys.executable, str(GAME), base_url, KEY, "7", *VARIANT_IDS],
                            capture_output=True, text=True, env=env, timeout=900)
    print(played.stdout + f"every variant played in {time.monotonic() - began:.1f} s")
    assert played.returncode == 0, played.stdout + played.stderr
    assert [line.split(":")[0] for line in played.stdout.splitlines()] == list(VARIANT_IDS)
