"""The pages people look at, in a real headless browser (Playwright driving Debian's chromium):
the landing page, the API docs and the playground, a whole game played through the page.

Every page must work without internet: each test records the hosts the page asks for and
fails on any other than the service's own. The screenshot of a finished game is kept in
`test-artifacts/` (or $TEST_ARTIFACTS). Where no browser is present the tests skip and say
why; under CI (CI=true) a missing browser is a failure, since `.ci/run` installs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from werkzeug.serving import make_server

from service.config import Settings
from service.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "test-artifacts"))

try:
    from playwright.sync_api import Browser, Page, sync_playwright
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # pragma: no cover - a test dependency
    sync_playwright = None


def _missing() -> str | None:
    if sync_playwright is None:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if CHROMIUM is None:
        return "no chromium on PATH (Debian: apt-get install chromium; .ci/run does it)"
    return None


if _missing():
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run in CI: {_missing()}", pytrace=False)
    pytest.skip(_missing(), allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """The app on a loopback port, served by werkzeug in a thread."""
    app = create_app(Settings(advisor_table_dir=str(tmp_path_factory.mktemp("tables")),
                              advisor_builds="inline", metrics_enabled=False))
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


@contextlib.contextmanager
def _recording_page(browser: Browser, server: str) -> Iterator[Page]:
    """A fresh page that records every host it asks for, and refuses any but `server`'s."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.foreign_hosts = []  # type: ignore[attr-defined]
    own = urlparse(server).netloc

    def route(r):
        host = urlparse(r.request.url).netloc
        if host and host != own and not r.request.url.startswith("data:"):
            page.foreign_hosts.append(r.request.url)  # type: ignore[attr-defined]
            return r.abort()
        return r.continue_()

    page.route("**/*", route)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.js_errors = errors  # type: ignore[attr-defined]
    try:
        yield page
    finally:
        context.close()


@pytest.fixture()
def page(browser: Browser, server: str) -> Iterator[Page]:
    """A fresh page of the server, which records every host it asks for, and refuses the
    others."""
    with _recording_page(browser, server) as p:
        yield p


def _offline_and_clean(page: Page) -> None:
    assert page.foreign_hosts == [], page.foreign_hosts  # type: ignore[attr-defined]
    assert page.js_errors == [], page.js_errors  # type: ignore[attr-defined]


def test_landing_page_links_everything(page: Page, server: str):
    page.goto(server + "/")
    assert "Yahtzee family scoring service" in page.title()
    hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    assert {"/playground", "/docs", "/openapi.json", "/v1/variants"} <= set(hrefs)
    _offline_and_clean(page)


def test_api_clients_get_a_json_index(server: str):
    req = urllib.request.Request(server + "/", headers={"Accept": "application/json"})
    with urllib.request.urlopen(req) as resp:
        body = json.load(resp)
    assert body["links"]["openapi"]["href"] == "/openapi.json"


def test_docs_render_every_operation_offline(page: Page, server: str):
    """The docs page shows every endpoint of /openapi.json once, templated (the variant a
    parameter), and draws every one of them."""
    spec = json.load(urllib.request.urlopen(server + "/openapi.json"))
    shown = json.load(urllib.request.urlopen(server + "/docs/openapi.json"))
    methods = {"get", "post", "put", "patch", "delete"}
    templated = {p for p in spec["paths"] if "{variant}" in p}
    assert templated and templated <= set(shown["paths"])
    assert all(p.replace("{variant}", "yahtzee") in spec["paths"] for p in templated)
    operations = sum(1 for ops in shown["paths"].values() for m in ops if m in methods)
    page.goto(server + "/docs")
    # Swagger UI draws the operations a few at a time: wait for all of them, not the first
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function("n => document.querySelectorAll('.opblock').length >= n",
                               arg=operations, timeout=ADVICE_TIMEOUT)
    assert page.locator(".opblock").count() == operations
    _offline_and_clean(page)


def _wait_ready(page: Page) -> None:
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)


def test_typed_dice_show_their_boxes_and_labels_follow_the_language(page: Page, server: str):
    page.goto(server + "/playground")
    _wait_ready(page)
    page.fill("[data-testid=typed]", "6 6 6 6 6")
    page.click("[data-testid=set-dice]")
    row = page.locator("[data-testid=place-five_of_a_kind]")
    row.wait_for(timeout=20_000)
    assert row.locator("td").nth(1).inner_text() == "50"
    page.select_option("[data-testid=lang]", "pt")
    assert page.locator("[data-testid=sheet-ones] td").first.inner_text() == "Jogada de 1"
    page.select_option("[data-testid=lang]", "de")
    assert page.locator("[data-testid=sheet-three_of_a_kind] td").first.inner_text() \
        == "Dreierpasch"
    _offline_and_clean(page)


# Bounds (not sleeps) for what the page waits on: the first advice builds the advisor's table
# (inline here; elsewhere the page waits out a 202's Retry-After), and the machine may be busy.
ADVICE_TIMEOUT = 120_000
TURN_TIMEOUT = 60_000


def _play_whole_game(page: Page, turns: int) -> None:
    """Each turn: roll, then follow the advisor's best move: keep its dice and roll again,
    or write its box, which ends the turn. Each step waits for the page to have taken the last
    one: the advice of this throw (the page clears the old one when it rolls), and after a
    write the service's answer (the next turn, or the game's end), so that a roll is never
    clicked while the turn is still being written."""
    best = page.locator("[data-testid=apply-best]")
    for turn in range(1, turns + 1):
        page.wait_for_function("turn => state.turn === turn && state.throw === 0 && "
                               "!state.over", arg=turn, timeout=TURN_TIMEOUT)
        page.click("[data-testid=roll]")
        while True:
            best.wait_for(timeout=ADVICE_TIMEOUT)
            if best.get_attribute("data-action") == "keep":
                best.click()
                page.click("[data-testid=roll]")
                continue
            best.click()
            break
        page.wait_for_function("turn => state.over || state.turn > turn", arg=turn,
                               timeout=TURN_TIMEOUT)
        if page.evaluate("state.over"):
            break
    page.wait_for_selector("[data-testid=game-over]", timeout=TURN_TIMEOUT)


def test_a_whole_game_through_the_playground(page: Page, server: str):
    turns_played = []
    page.on("request", lambda r: turns_played.append(r.url) if "/games/turn" in r.url else None)
    page.goto(server + "/playground")
    _wait_ready(page)
    _play_whole_game(page, turns=13)
    assert len(turns_played) == 13  # the service plays every turn: the page keeps no score
    over = page.locator("[data-testid=game-over]")
    assert over.is_visible()
    shown = int(page.inner_text("[data-testid=total]"))
    scorecard = page.evaluate("state.scorecard")
    assert all(v is not None for v in scorecard["boxes"].values())
    # the page's total is the service's total of the page's scorecard
    req = urllib.request.Request(
        server + "/v1/variants/yahtzee/scorecards/score", method="POST",
        data=json.dumps(scorecard).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        assert json.load(resp)["total"] == shown
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-finished-game.png"), full_page=True)
    _offline_and_clean(page)


def test_a_whole_game_against_two_computers(page: Page, server: str):
    """Two computer opponents (beginner and expert) play their turns after each of yours,
    through moves/bot and games/turn; after every round the page draws each player's chance
    to win and your final score's distribution with its own SVG; at the end it names the
    winner. The screenshot is kept as a test artifact."""
    calls: dict[str, int] = {}

    def count(r) -> None:
        for path in ("/moves/bot", "/games/turn", "/games/win-probability",
                     "/positions/value"):
            if path in r.url:
                calls[path] = calls.get(path, 0) + 1

    page.on("request", count)
    page.goto(server + "/playground?pause=0")
    _wait_ready(page)
    page.select_option("[data-testid=bot-1]", "beginner")
    page.select_option("[data-testid=bot-2]", "expert")
    page.wait_for_function("state.bots.length === 2 && !state.busy && state.turn === 1",
                           timeout=TURN_TIMEOUT)
    page.wait_for_selector("[data-testid=chance-2]", state="attached", timeout=ADVICE_TIMEOUT)
    assert page.locator("[data-testid=final-chart] rect").count() > 50  # a game's start
    page.select_option("[data-testid=lang]", "pt")  # the computers' words follow the language
    assert page.inner_text("[data-testid=player-1] td >> nth=0") == "Computador 1"
    assert page.inner_text("[data-testid=player-1] td >> nth=1") == "iniciante"
    page.select_option("[data-testid=lang]", "en")
    _play_whole_game(page, turns=13)
    assert calls["/games/turn"] == 3 * 13  # every player's every turn is the service's
    assert calls["/moves/bot"] >= 2 * 13
    assert calls["/games/win-probability"] >= 12 and calls["/positions/value"] >= 12
    bots = page.evaluate("state.bots")
    assert [b["level"] for b in bots] == ["beginner", "expert"]
    for i, bot in enumerate(bots, start=1):
        assert all(v is not None for v in bot["scorecard"]["boxes"].values())
        req = urllib.request.Request(
            server + "/v1/variants/yahtzee/scorecards/score", method="POST",
            data=json.dumps(bot["scorecard"]).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as resp:
            total = json.load(resp)["total"]
        assert total == bot["total"]
        assert int(page.inner_text(f"[data-testid=player-total-{i}]")) == total
    over = page.inner_text("[data-testid=game-over]")
    totals = [int(page.inner_text("[data-testid=total]"))] + [b["total"] for b in bots]
    top = max(totals)
    assert str(top) in over and ("win" in over or "Tie" in over), over
    assert page.locator("[data-testid=final-chart] rect").count() >= 1  # the last round's
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-against-computers.png"), full_page=True)
    _offline_and_clean(page)


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """The app with AUTH=keys (one tenant, no browser origins but the service's own pages):
    its address and the tenant's key."""
    from service.web.auth import hash_key, new_key

    key_id, key = new_key()
    tenants = {"tenants": [{"name": "page", "keys": [{"id": key_id, "hash": hash_key(key)}]}]}
    app = create_app(Settings(advisor_table_dir=str(tmp_path_factory.mktemp("tables")),
                              advisor_builds="inline", metrics_enabled=False, auth="keys",
                              api_keys=json.dumps(tenants)))
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}", key
    httpd.shutdown()


@pytest.fixture()
def keyed_page(browser: Browser, keyed_server) -> Iterator[Page]:
    """A fresh page of the keyed server (as `page`)."""
    with _recording_page(browser, keyed_server[0]) as p:
        yield p


def test_the_playground_says_how_to_send_a_key_and_sends_it(keyed_page: Page, keyed_server):
    server, key = keyed_server
    page = keyed_page
    page.goto(server + "/playground")
    message = page.locator("#message")
    message.wait_for(timeout=30_000)
    page.wait_for_function("() => document.getElementById('message').textContent.length > 0")
    assert "Authorization: Bearer" in message.inner_text()
    sent = []
    page.on("request", lambda r: sent.append(r.headers.get("authorization")))
    page.fill("[data-testid=api-key]", key)
    page.dispatch_event("[data-testid=api-key]", "change")
    _wait_ready(page)
    page.fill("[data-testid=typed]", "6 6 6 6 6")
    page.click("[data-testid=set-dice]")
    page.locator("[data-testid=place-five_of_a_kind]").wait_for(timeout=20_000)
    assert f"Bearer {key}" in sent
    # the key is the tab's: a reload keeps it
    page.reload()
    _wait_ready(page)
    _offline_and_clean(page)


def test_the_docs_page_offers_to_authorize(keyed_page: Page, keyed_server):
    server, page = keyed_server[0], keyed_page
    page.goto(server + "/docs")
    page.locator(".btn.authorize").wait_for(timeout=30_000)
    page.click(".btn.authorize")
    dialog = page.locator(".dialog-ux")
    dialog.wait_for(timeout=10_000)
    text = dialog.inner_text()
    assert "ApiKeyBearer" in text and "X-API-Key" in text
    _offline_and_clean(page)
