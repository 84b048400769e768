"""The pages people look at, in a real headless browser (Playwright driving Debian's chromium):
the landing page, the API docs and the playground, whole games played through the page by
mouse and by keyboard alone, on a desktop and on a phone.

Every page must work without internet: each test records the hosts the page asks for and
fails on any other than the service's own. Every page (the landing page, the playground
during and after a game, the docs) goes through axe-core, pinned in `package.json` and
`package-lock.json` beside this file, installed by `npm ci` and injected into the page from
`node_modules` (never from another host): no serious or critical violation.

Screenshots are kept in `test-artifacts/` (or $TEST_ARTIFACTS); with UPDATE_SCREENSHOTS=1 the
phone and desktop layouts are also written to `docs/` (the committed ones were made so).
Where no browser (or, for axe-core, no npm) is present the tests skip and say why; under CI
(CI=true) that is a failure, since `.ci/run` installs them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from werkzeug.serving import make_server

from service.config import Settings
from service.web.app import create_app

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NPM = shutil.which("npm")
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "test-artifacts"))
IN_CI = os.environ.get("CI") == "true"
UPDATE_SCREENSHOTS = os.environ.get("UPDATE_SCREENSHOTS") == "1"
DESKTOP = {"width": 1400, "height": 1000}
PHONE = {"width": 375, "height": 812}

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
    if IN_CI:
        pytest.fail(f"browser tests cannot run in CI: {_missing()}", pytrace=False)
    pytest.skip(_missing(), allow_module_level=True)


# Bounds (not sleeps) for what the page waits on: the first advice builds the advisor's table
# (inline here; elsewhere the page waits out a 202's Retry-After), and the machine may be busy.
ADVICE_TIMEOUT = 120_000
TURN_TIMEOUT = 60_000


def _serve(settings: Settings) -> tuple[Any, str]:
    httpd = make_server("127.0.0.1", 0, create_app(settings), threaded=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_port}"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """The app on a loopback port, served by werkzeug in a thread."""
    httpd, url = _serve(Settings(advisor_table_dir=str(tmp_path_factory.mktemp("tables")),
                                 advisor_builds="inline", metrics_enabled=False))
    yield url
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def axe() -> Path:
    """axe-core's script, installed from the pinned lock file by `npm ci` (its cache in this
    folder, as tests/client keeps its own)."""
    if NPM is None:
        reason = "no npm on PATH (Debian: apt-get install npm; .ci/run does it)"
        if IN_CI:
            pytest.fail(f"axe-core cannot be installed in CI: {reason}", pytrace=False)
        pytest.skip(reason)
    env = {**os.environ, "npm_config_cache": str(HERE / ".npm-cache"),
           "npm_config_update_notifier": "false", "npm_config_fund": "false",
           "npm_config_audit": "false"}
    script = HERE / "node_modules" / "axe-core" / "axe.min.js"
    for attempt in range(3):
        done = subprocess.run([NPM, "ci", "--no-audit", "--no-fund"], cwd=HERE, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode == 0 and script.is_file():
            return script
        if attempt == 2:
            pytest.fail(f"npm ci failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        shutil.rmtree(HERE / "node_modules", ignore_errors=True)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _recording_page(browser: Browser, server: str, **context: Any) -> Iterator[Page]:
    """A fresh page that records every host it asks for, and refuses any but `server`'s."""
    ctx = browser.new_context(**{"viewport": DESKTOP, **context})
    page = ctx.new_page()
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
        ctx.close()


@pytest.fixture()
def page(browser: Browser, server: str) -> Iterator[Page]:
    """A fresh page of the server, which records every host it asks for, and refuses the
    others."""
    with _recording_page(browser, server) as p:
        yield p


def _offline_and_clean(page: Page) -> None:
    assert page.foreign_hosts == [], page.foreign_hosts  # type: ignore[attr-defined]
    assert page.js_errors == [], page.js_errors  # type: ignore[attr-defined]


def _post(server: str, path: str, body: Any) -> tuple[int, Any]:
    """The service's answer; asked again (a few times, after Retry-After) while the page's own
    requests in flight hold this client's share of the server (429 too-many-in-flight)."""
    for attempt in range(10):
        req = urllib.request.Request(server + path, method="POST",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req) as resp:
                return resp.status, json.load(resp)
        except urllib.error.HTTPError as err:
            answer = json.load(err)
            if (err.code != 429 or answer.get("type") != "/problems/too-many-in-flight"
                    or attempt == 9):
                return err.code, answer
            time.sleep(float(err.headers.get("Retry-After") or 1))
    raise AssertionError("unreachable")


def _no_serious_violation(page: Page, axe: Path, what: str) -> None:
    """axe-core over the page as it is now: no serious or critical violation."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(axe))
    violations = page.evaluate("""async () => {
        const result = await axe.run(document, { resultTypes: ["violations"] });
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 5).map((n) => [n.target.join(" "),
                                                    (n.any[0] || {}).data]) }));
    }""")
    serious = [v for v in violations if v["impact"] in ("serious", "critical")]
    assert serious == [], f"{what}: {json.dumps(serious, indent=1)}"


def _screenshot(page: Page, name: str, docs: bool = False, full_page: bool = True) -> None:
    """The page kept as a test artifact; `docs`: also in docs/ with UPDATE_SCREENSHOTS=1."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
    if docs and UPDATE_SCREENSHOTS:
        page.screenshot(path=str(ROOT / "docs" / name), full_page=full_page)


# --------------------------------------------------------------------------- the pages


def test_landing_page_links_everything(page: Page, server: str, axe: Path):
    page.goto(server + "/")
    assert "Yahtzee family scoring service" in page.title()
    hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
    assert {"/playground", "/docs", "/openapi.json", "/v1/variants"} <= set(hrefs)
    icon = urllib.request.urlopen(server + page.get_attribute("link[rel=icon]", "href"))
    assert icon.status == 200 and icon.headers["Content-Type"].startswith("image/")
    _no_serious_violation(page, axe, "landing page")
    _offline_and_clean(page)


def test_the_favicon_is_served(server: str):
    with urllib.request.urlopen(server + "/favicon.ico") as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "image/vnd.microsoft.icon"
        assert resp.read(4) == b"\x00\x00\x01\x00"  # an ICO file


def test_api_clients_get_a_json_index(server: str):
    req = urllib.request.Request(server + "/", headers={"Accept": "application/json"})
    with urllib.request.urlopen(req) as resp:
        body = json.load(resp)
    assert body["links"]["openapi"]["href"] == "/openapi.json"


def test_docs_render_every_operation_offline(page: Page, server: str, axe: Path):
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
    _no_serious_violation(page, axe, "docs page")
    # an operation opened and tried: its parameters, body and answer shown
    page.locator("#operations-hands-scoreHand .opblock-summary-control").click()
    page.locator("#operations-hands-scoreHand .execute").click()
    page.locator("#operations-hands-scoreHand .live-responses-table").wait_for(
        timeout=30_000)
    page.wait_for_function("getComputedStyle(document.querySelector("
                           "'#operations-hands-scoreHand .execute')).opacity === '1'",
                           timeout=30_000)  # the request done: the button is itself again
    _no_serious_violation(page, axe, "docs page, an operation tried")
    _offline_and_clean(page)


def test_the_docs_body_example_follows_the_variant_chosen(page: Page, server: str):
    """A templated operation's body examples are one per variant, named by its id: generala
    chosen in the variant parameter picks generala's example (YAHTZEE's boxes, the body shown
    first, are a 409 for generala), and executed it answers 200; opened again, the operation
    keeps it. A body the user has edited stays theirs."""
    shown = json.load(urllib.request.urlopen(server + "/docs/openapi.json"))
    examples = shown["paths"]["/v1/variants/{variant}/hands/score"]["post"]["requestBody"][
        "content"]["application/json"]["examples"]
    status, _ = _post(server, "/v1/variants/generala/hands/score", examples["yahtzee"]["value"])
    assert status == 409  # why the example must follow
    op = "#operations-hands-scoreHand"
    variant = f'{op} tr[data-param-name="variant"] select'
    chosen = f"{op} .opblock-section-request-body select.examples-select-element"
    body = page.locator(f"{op} .opblock-section-request-body textarea")
    page.goto(server + "/docs")
    page.locator(f"{op} .opblock-summary-control").click()
    body.wait_for(timeout=30_000)
    assert json.loads(body.input_value()) == examples["yahtzee"]["value"]
    page.select_option(variant, "generala")
    page.wait_for_function("s => document.querySelector(s).value === 'generala'", arg=chosen,
                           timeout=10_000)
    assert json.loads(body.input_value()) == examples["generala"]["value"]
    page.locator(f"{op} .execute").click()
    page.locator(f"{op} .live-responses-table tr.response").wait_for(timeout=30_000)
    assert page.inner_text(f"{op} .live-responses-table tr.response .response-col_status") \
        .strip() == "200"
    assert "/v1/variants/generala/hands/score" in page.inner_text(f"{op} .request-url")
    # closed and opened again: Swagger UI draws the first example, the page follows again
    page.locator(f"{op} .opblock-summary-control").click()
    body.wait_for(state="detached", timeout=10_000)
    page.locator(f"{op} .opblock-summary-control").click()
    body.wait_for(timeout=30_000)
    page.wait_for_function("s => document.querySelector(s).value === 'generala'", arg=chosen,
                           timeout=10_000)
    assert page.input_value(variant) == "generala"
    assert json.loads(body.input_value()) == examples["generala"]["value"]
    # the user's own body is not overwritten by a variant chosen after it
    mine = '{"dice": [1, 1, 1, 1, 1], "throw": 1}'
    body.fill(mine)
    page.select_option(variant, "yatzy")
    page.wait_for_timeout(300)  # longer than the page takes to follow a variant
    assert body.input_value() == mine
    _offline_and_clean(page)


# --------------------------------------------------------------------------- the playground


def _wait_ready(page: Page) -> None:
    page.wait_for_selector("body[data-ready=true]", state="attached", timeout=ADVICE_TIMEOUT)


def _settings(page: Page) -> None:
    """Open the game settings (a phone shows them closed)."""
    if not page.evaluate("document.getElementById('settings').open"):
        page.click("#settings summary")


def _type_dice(page: Page, dice: str) -> None:
    if not page.evaluate("document.querySelector('details.typed').open"):
        page.click("details.typed summary")
    page.fill("[data-testid=typed]", dice)
    page.click("[data-testid=set-dice]")


def _number(text: str) -> int:
    """A whole number as the page shows it, in any of its languages (1,023 · 1.023 · 1 023)."""
    digits = re.sub(r"[\s,.\u00a0\u202f]", "", text)
    assert re.fullmatch(r"-?\d+", digits), text
    return int(digits)


def _new_game_settled(page: Page, condition: str = "true") -> None:
    page.wait_for_function(f"state.def && !state.busy && state.totals && ({condition})",
                           timeout=ADVICE_TIMEOUT)


def test_typed_dice_show_their_boxes_and_every_word_follows_the_language(page: Page,
                                                                          server: str):
    page.goto(server + "/playground")
    _wait_ready(page)
    _type_dice(page, "6 6 6 6 6")
    box = page.locator("[data-testid=place-five_of_a_kind]")
    box.wait_for(timeout=ADVICE_TIMEOUT)
    assert box.inner_text() == "50"
    assert box.get_attribute("aria-label") == "Write YAHTZEE: 50"
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    page.wait_for_selector("[data-testid=final-chart] rect", state="attached",
                           timeout=ADVICE_TIMEOUT)
    page.select_option("[data-testid=lang]", "pt")  # mid-game: every text follows
    assert page.locator("[data-testid=sheet-ones] th").inner_text() == "Jogada de 1"
    assert page.title().startswith("Mesa de jogo")
    assert page.locator("[data-testid=place-five_of_a_kind]").get_attribute("aria-label") \
        == "Marcar General: 50"
    assert page.inner_text("[data-testid=best-move]").startswith("Marcar General")
    assert page.inner_text("[data-testid=status]") == "Lance 1: 6 6 6 6 6"
    assert page.inner_text("[data-testid=totals-upper-bonus] th") == "Bônus de cima"
    assert page.inner_text("[data-testid=final-caption]").startswith("Média")
    assert page.inner_text("#advice thead").split() == ["Jogada", "Total", "final",
                                                        "esperado", "Perda"]
    page.select_option("[data-testid=lang]", "de")
    assert page.locator("[data-testid=sheet-three_of_a_kind] th").inner_text() == "Dreierpasch"
    # the rules' words come from the catalogue: names, values and help, never raw ids
    _settings(page)
    page.select_option("[data-testid=lang]", "es")
    variants = page.eval_on_selector_all("#variant option", "os => os.map(o => o.textContent)")
    assert "Generala (escala española)" in variants and "Bozó (Centro-Oeste de Brasil)" \
        in variants
    # the game has started (dice were thrown): a new variant waits for the next game
    page.select_option("[data-testid=variant]", "generala")
    assert "próxima partida" in page.inner_text("[data-testid=pending]")
    settings = page.inner_text("#settings")
    for raw in ("escalera_wraps", "doble_generala", "true", "false"):
        assert raw not in settings, raw
    assert "3-4-5-6-1 es escalera" in settings and "Doble Generala" in settings
    assert page.evaluate("state.def.id") == "yahtzee"  # this game goes on
    _offline_and_clean(page)


def test_figures_are_written_as_the_language_writes_numbers(page: Page, server: str):
    """Every figure goes through Intl.NumberFormat in the page's language: an expected score
    is 245.32 in English, 245,32 in German and French; a share 0.1% in English, 0,1 % in
    German; the final score's mean and spread likewise."""
    page.goto(server + "/playground?seed=7")
    _wait_ready(page)
    page.wait_for_selector("[data-testid=final-table] tbody tr", state="attached",
                           timeout=ADVICE_TIMEOUT)
    page.click("[data-testid=roll]")
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    moves = page.evaluate("state.advice.moves")

    def figures() -> dict[str, str]:
        return {"expected": page.inner_text("[data-testid=expected-0]"),
                "regret": page.inner_text("[data-testid=regret-1]"),
                "share": page.text_content("[data-testid=final-table] tbody tr td >> nth=0"),
                "caption": page.inner_text("[data-testid=final-caption]")}

    en = figures()
    assert re.fullmatch(r"\d{1,3}\.\d\d", en["expected"]), en
    assert abs(float(en["expected"]) - moves[0]["expected_final_score"]) <= 0.005
    assert re.fullmatch(r"\d+\.\d\d", en["regret"]), en
    assert abs(float(en["regret"]) - moves[1]["regret"]) <= 0.005
    assert re.fullmatch(r"\d+\.\d%", en["share"]), en
    assert re.match(r"Mean \d+\.\d, standard deviation \d+\.\d;", en["caption"]), en
    page.select_option("[data-testid=lang]", "de")
    de = figures()
    assert de["expected"] == en["expected"].replace(".", ","), (en, de)
    assert de["regret"] == en["regret"].replace(".", ","), (en, de)
    assert re.fullmatch(r"\d+,\d\s%", de["share"]), de  # German: a space before %
    assert de["share"].split()[0] == en["share"][:-1].replace(".", ","), (en, de)
    assert re.match(r"Mittel \d+,\d, Standardabweichung \d+,\d;", de["caption"]), de
    page.select_option("[data-testid=lang]", "fr")
    assert page.inner_text("[data-testid=expected-0]") == de["expected"]
    page.select_option("[data-testid=lang]", "en")  # and back: the same figures as at first
    assert figures() == en
    _offline_and_clean(page)


# The spread of the final score in each language's words: named, not a bare ± (which in this
# project's own reports is a standard error as often as a deviation).
STANDARD_DEVIATION = {"en": "standard deviation", "pt": "desvio-padrão",
                      "es": "desviación estándar", "de": "Standardabweichung",
                      "sv": "standardavvikelse", "fr": "écart type"}


def test_every_advice_figure_says_what_it_is(page: Page, server: str):
    """In each of the page's six languages, every figure of the advice says what it is: a
    move's expected final score and regret by their columns' headings, a five-of-a-kind bonus
    by its name (in a move, and in the name of the box that would take it), the final score's
    mean, standard deviation and middle half by their words."""
    words = json.load(urllib.request.urlopen(server + "/static/playground/words.json"))
    assert set(words) == set(STANDARD_DEVIATION)
    page.goto(server + "/playground?seed=7")
    _wait_ready(page)
    _type_dice(page, "6 6 6 6 6")
    page.locator("[data-testid=place-five_of_a_kind]").click()  # YAHTZEE: 50
    page.wait_for_function("state.turn === 2 && !state.busy && state.value !== null",
                           timeout=TURN_TIMEOUT)
    _type_dice(page, "6 6 6 6 6")  # a second one: its writes earn the bonus
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    for lang, table in words.items():
        page.select_option("[data-testid=lang]", lang)
        # each figure of the moves' table under its column's heading
        headings = page.evaluate("""() => [...document.querySelectorAll(
            '#advice tbody td.num')].map(td => td.closest('table').tHead.rows[0]
            .cells[td.cellIndex].textContent)""")
        assert headings and set(headings) == {table["expected"], table["regret"]}, lang
        # the bonus named in every move that earns it, and in its box's name
        moves = page.eval_on_selector_all("#best button.move, #advice button.move",
                                          "bs => bs.map(b => b.textContent)")
        bonus = [m for m in moves if "+100" in m]
        assert bonus, (lang, moves)
        assert all(f"{table['fiveBonus']} +100" in m for m in bonus), (lang, bonus)
        box = page.get_attribute("[data-testid=place-sixes]", "aria-label")
        assert f"({table['fiveBonus']} +100" in box and "★" not in box, (lang, box)
        # the final score's summary: the template's words around the figures
        caption = page.inner_text("[data-testid=final-caption]")
        figure = r"[\d.,\s\u00a0\u202f]+?"
        summary = figure.join(re.escape(part) for part in re.split(r"\{\w+\}",
                                                                   table["finalSummary"]))
        assert re.match(summary, caption), (lang, caption)
        assert STANDARD_DEVIATION[lang] in caption and "±" not in caption, (lang, caption)
    _offline_and_clean(page)


def _finish_turn(page: Page, on_keep=None) -> None:
    """From a throw on, follow the advisor's best move: keep its dice and roll again, or
    write its box, which ends the turn. Each step waits for the advice of this throw (the
    page clears the old one when it rolls)."""
    best = page.locator("[data-testid=apply-best]")
    while True:
        best.wait_for(timeout=ADVICE_TIMEOUT)
        if best.get_attribute("data-action") == "keep":
            if on_keep:
                on_keep(page.evaluate("state.advice.best"))
            best.click()
            page.click("[data-testid=roll]")
            continue
        best.click()
        return


def _follow_advice(page: Page, turns: int, start: int = 1, on_keep=None,
                   on_turn=None) -> None:
    """Each turn: roll, then follow the advice (`_finish_turn`); after a write, wait for the
    service's answer (the next turn, or the game's end), so that a roll is never clicked
    while the turn is still being written or the computers play."""
    for turn in range(start, turns + 1):
        page.wait_for_function("turn => (state.turn === turn && state.throw === 0 && "
                               "!state.busy) || state.over", arg=turn, timeout=TURN_TIMEOUT)
        if page.evaluate("state.over"):
            break
        if on_turn:
            on_turn(turn)
        page.click("[data-testid=roll]")
        _finish_turn(page, on_keep)
        page.wait_for_function("turn => state.over || state.turn > turn", arg=turn,
                               timeout=TURN_TIMEOUT)
        if page.evaluate("state.over"):
            break
    page.wait_for_function("state.over", timeout=TURN_TIMEOUT)


def test_a_refused_request_is_asked_again_after_retry_after(page: Page, server: str):
    """A 429 /problems/too-many-in-flight (the page's own requests hold its fair share of
    the server) is not the end of the advice: the page waits Retry-After and asks again."""
    refused: list[str] = []

    def once_too_many(route) -> None:
        if refused:
            route.continue_()
            return
        refused.append(route.request.url)
        route.fulfill(status=429, headers={"Retry-After": "1"},
                      content_type="application/problem+json",
                      body=json.dumps({"type": "/problems/too-many-in-flight", "status": 429,
                                       "title": "Too Many Requests",
                                       "detail": "one request in flight"}))

    page.route("**/moves/suggest", once_too_many)
    page.goto(server + "/playground")
    _wait_ready(page)
    page.click("[data-testid=roll]")
    page.locator("[data-testid=apply-best]").wait_for(timeout=ADVICE_TIMEOUT)
    assert len(refused) == 1
    assert "one request in flight" not in page.inner_text("#message")


def test_a_whole_game_through_the_playground(page: Page, server: str):
    turns_played = []
    page.on("request", lambda r: turns_played.append(r.url) if "/games/turn" in r.url else None)
    page.goto(server + "/playground")
    _wait_ready(page)
    _follow_advice(page, turns=13)
    assert len(turns_played) == 13  # the service plays every turn: the page keeps no score
    assert page.locator("[data-testid=game-over]").is_visible()
    assert page.get_attribute("[data-testid=game-over]", "role") == "status"
    for row in ("upper", "upper-bonus", "five-bonus", "lower"):  # YAHTZEE has them all
        assert page.locator(f"[data-testid=totals-{row}]").count() == 1
    shown = _number(page.inner_text("[data-testid=total]"))
    scorecard = page.evaluate("state.scorecard")
    assert all(v is not None for v in scorecard["boxes"].values())
    # the page's total is the service's total of the page's scorecard
    status, totals = _post(server, "/v1/variants/yahtzee/scorecards/score", scorecard)
    assert status == 200 and totals["total"] == shown
    # the game the page recorded is the game it played
    status, checked = _post(server, "/v1/variants/yahtzee/games/validate",
                            {"players": [{"turns": page.evaluate("state.record")}]})
    assert status == 200 and checked["valid"] and checked["players"][0]["total"] == shown
    _screenshot(page, "playground-finished-game.png")
    _offline_and_clean(page)


def _tab_to(page: Page, selector: str, limit: int = 120, back: bool = False) -> None:
    """Press Tab (Shift+Tab: `back`) until the element `selector` has the focus."""
    for _ in range(limit):
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"Tab never reached {selector}")


def _focused(page: Page) -> str:
    return page.evaluate("document.activeElement === document.body ? 'body' : "
                         "(document.activeElement.dataset.testid || document.activeElement.id)")


def test_a_whole_game_by_keyboard_alone(page: Page, server: str):
    """Tab, Enter and Space only: roll, keep a die, follow the advice, write boxes from the
    advice and from the scorecard itself. The focus is never lost to the page's body: after a
    keep it is on Roll, after the last throw on the advice, after a write on the next turn's
    Roll, at the end on the result."""
    page.goto(server + "/playground?seed=7")
    _wait_ready(page)
    for turn in range(1, 14):
        page.wait_for_function("t => state.turn === t && state.throw === 0 && !state.busy",
                               arg=turn, timeout=TURN_TIMEOUT)
        if turn > 1:
            assert _focused(page) == "roll"  # the write left the focus on the next Roll
        _tab_to(page, "[data-testid=roll]")
        page.keyboard.press("Enter")
        if turn == 1:
            # a die toggled by Space keeps the focus, and says it is kept
            _tab_to(page, "[data-testid=die-0]", back=True)
            page.keyboard.press("Space")
            assert _focused(page) == "die-0"
            assert page.get_attribute("[data-testid=die-0]", "aria-pressed") == "true"
            page.keyboard.press("Space")
            assert page.get_attribute("[data-testid=die-0]", "aria-pressed") == "false"
        while True:
            page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
            assert _focused(page) != "body"
            best = page.evaluate("state.advice.best")
            if best["action"] == "keep":
                _tab_to(page, "[data-testid=best-move]")
                page.keyboard.press("Enter")
                assert _focused(page) == "roll"
                page.keyboard.press("Enter")
                continue
            # write: from the advice on odd turns, from the scorecard's box on even turns
            target = "[data-testid=best-move]" if turn % 2 else \
                f"#sheet button[data-box={best['box']}]"
            _tab_to(page, target)
            page.keyboard.press("Enter")
            break
        page.wait_for_function("t => state.over || (state.turn > t && !state.busy)", arg=turn,
                               timeout=TURN_TIMEOUT)
        assert _focused(page) != "body"
        # the live region says what the turn wrote
        assert page.inner_text("[data-testid=status]").startswith("You wrote ")
    page.wait_for_function("state.over", timeout=TURN_TIMEOUT)
    assert _focused(page) == "game-over"
    assert "points" in page.inner_text("[data-testid=game-over]")
    status, checked = _post(server, "/v1/variants/yahtzee/games/validate",
                            {"players": [{"turns": page.evaluate("state.record")}]})
    assert status == 200 and checked["valid"], checked["problems"]
    _offline_and_clean(page)


def test_a_new_game_puts_the_focus_on_roll(page: Page, server: str):
    """New game by the keyboard: once the new game can be played the focus is on Roll, both
    when it starts at once (nothing played yet) and after the question (a game under way)."""
    page.goto(server + "/playground?seed=7")
    _wait_ready(page)
    game = page.evaluate("state.game")
    _tab_to(page, "[data-testid=new-game]")
    page.keyboard.press("Enter")  # nothing thrown yet: no question
    _new_game_settled(page, f"state.game > {game}")
    page.wait_for_function("document.activeElement.id === 'roll'", timeout=5_000)
    assert _focused(page) == "roll"
    page.keyboard.press("Enter")  # Roll
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    game = page.evaluate("state.game")
    _tab_to(page, "[data-testid=new-game]", back=True)
    page.keyboard.press("Enter")
    page.locator("[data-testid=confirm]").wait_for(timeout=5_000)
    assert _focused(page) == "confirm-no"
    _tab_to(page, "[data-testid=confirm-yes]", back=True)
    page.keyboard.press("Enter")
    _new_game_settled(page, f"state.game > {game} && state.throw === 0")
    page.wait_for_function("document.activeElement.id === 'roll'", timeout=5_000)
    assert _focused(page) == "roll"
    page.keyboard.press("Enter")  # and Enter rolls the new game's first throw
    page.wait_for_function("state.throw === 1", timeout=TURN_TIMEOUT)
    _offline_and_clean(page)


def test_bozo_em_baixo_advice_is_followed_by_its_button(page: Page, server: str):
    """2 2 2 5 6 thrown em baixo is read 1 2 5 5 5: the advice names the dice on the table
    (keep 2-2-2), its button keeps the three 2s and ticks em baixo as the keep says; the tick
    does not stay into the next turn; a whole game that follows the advice, em baixo
    included, is valid in games/validate and its analysis adds up."""
    page.goto(server + "/playground?seed=5")
    _wait_ready(page)
    _settings(page)
    page.select_option("[data-testid=variant]", "bozo")
    _new_game_settled(page, "state.def.id === 'bozo'")
    page.check("[data-testid=em-baixo]")  # announced before the throw
    _type_dice(page, "2 2 2 5 6")
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    assert "1 2 5 5 5" in page.inner_text("[data-testid=read-as]")
    best = page.evaluate("state.advice.best")
    assert best["action"] == "keep" and best["dice"] == [2, 2, 2] and best["em_baixo"]
    button = page.locator("[data-testid=best-move]")
    assert button.inner_text().startswith("Keep 2-2-2") and "em baixo" in button.inner_text()
    button.click()
    kept = page.evaluate("state.dice.filter((d, i) => state.kept[i])")
    assert kept == [2, 2, 2]
    assert page.is_checked("[data-testid=em-baixo]")
    # a keep that says "no em baixo" unticks it
    page.uncheck("[data-testid=em-baixo]")
    page.click("[data-testid=roll]")
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    # this game was typed: start one of thrown dice (it asks first: this one is not over)
    page.click("[data-testid=new-game]")
    page.locator("[data-testid=confirm]").wait_for(timeout=5_000)
    page.click("[data-testid=confirm-yes]")
    _new_game_settled(page, "state.def.id === 'bozo' && state.record.length === 0")

    announced = []

    def keep(best: dict) -> None:
        assert set(best["dice"]) <= set(page.evaluate("state.dice"))
        announced.append(best["em_baixo"])

    def turn_starts(_: int) -> None:
        assert not page.is_checked("[data-testid=em-baixo]")  # the tick stays in its turn

    # only the rows Bozó has: no upper bonus, no five-of-a-kind bonus
    assert page.locator("[data-testid=totals] tr").count() == 1
    _follow_advice(page, turns=10, on_keep=keep, on_turn=turn_starts)
    assert any(announced), "the advice never announced em baixo in this game"
    record = page.evaluate("state.record")
    assert any(t.get("em_baixo") for t in record)
    status, checked = _post(server, "/v1/variants/bozo/games/validate",
                            {"players": [{"turns": record}]})
    assert status == 200 and checked["valid"] and checked["problems"] == [], checked
    assert checked["players"][0]["total"] == _number(page.inner_text("[data-testid=total]"))
    status, analysis = _post(server, "/v1/variants/bozo/games/analyze",
                             {"players": [{"turns": record}]})
    assert status == 200, analysis
    p = analysis["players"][0]
    assert abs(p["skill"] + p["luck"] - p["difference"]) < 1e-5
    _offline_and_clean(page)


def test_a_game_against_two_computers_its_charts_and_axe(page: Page, server: str, axe: Path):
    """Two computer opponents (beginner and expert) play their turns after each of yours,
    through moves/bot and games/turn; after every round the page draws each player's chance
    to win and your final score's distribution; at the end both charts show the final state
    and the page names the winner. A computer removed takes its chances with it."""
    calls: dict[str, int] = {}

    def count(r) -> None:
        for path in ("/moves/bot", "/games/turn", "/games/win-probability",
                     "/positions/value"):
            if path in r.url:
                calls[path] = calls.get(path, 0) + 1

    page.on("request", count)
    page.goto(server + "/playground?pause=0&seed=11")
    _wait_ready(page)
    _settings(page)
    page.select_option("[data-testid=bot-1]", "beginner")
    page.select_option("[data-testid=bot-2]", "expert")
    page.click("#settings summary")  # closed again: the game in sight
    _new_game_settled(page, "state.bots.length === 2")
    page.wait_for_selector("[data-testid=chance-2]", state="attached", timeout=ADVICE_TIMEOUT)
    assert page.inner_text("[data-testid=settings-now]") == ": YAHTZEE (Hasbro) · Computers: 2"
    assert page.locator("[data-testid=final-chart] rect").count() > 10  # a game's start
    page.select_option("[data-testid=lang]", "pt")  # the computers' words follow the language
    assert page.inner_text("[data-testid=player-1] th") == "Computador 1"
    assert page.inner_text("[data-testid=player-1] td >> nth=0") == "iniciante"
    assert "Computador 2" in page.inner_text("[data-testid=chances-caption]")
    page.select_option("[data-testid=lang]", "en")
    page.click("[data-testid=roll]")
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    _screenshot(page, "playground-desktop.png", docs=True)
    _no_serious_violation(page, axe, "playground during a game")
    _finish_turn(page)
    _follow_advice(page, turns=13, start=2)
    assert calls["/games/turn"] == 3 * 13  # every player's every turn is the service's
    assert calls["/moves/bot"] >= 2 * 13
    assert calls["/games/win-probability"] >= 12 and calls["/positions/value"] >= 12
    bots = page.evaluate("state.bots")
    assert [b["level"] for b in bots] == ["beginner", "expert"]
    totals = [_number(page.inner_text("[data-testid=total]"))]
    for i, bot in enumerate(bots, start=1):
        assert all(v is not None for v in bot["scorecard"]["boxes"].values())
        _, scored = _post(server, "/v1/variants/yahtzee/scorecards/score", bot["scorecard"])
        assert scored["total"] == bot["total"]
        assert _number(page.inner_text(f"[data-testid=player-total-{i}]")) == scored["total"]
        totals.append(scored["total"])
    over = page.inner_text("[data-testid=game-over]")
    top = max(totals)
    winners = [i for i, t in enumerate(totals) if t == top]
    assert f"{top:,}" in over and ("win" in over or "Tie" in over), over

    # the charts at the end: the result, not the last round's estimate
    assert page.inner_text("[data-testid=chances-caption]").startswith("Final result")
    widths = [float(page.get_attribute(f"[data-testid=chance-{i}]", "width")) for i in range(3)]
    assert all((w > 1) == (i in winners) for i, w in enumerate(widths)), (widths, winners)
    rows = page.eval_on_selector_all("[data-testid=chances-table] tbody tr td",
                                     "cells => cells.map(c => c.textContent)")
    # shares as English writes a percentage (Intl.NumberFormat's): 100.0%, 50.0%, 0.0%
    assert rows == [f"{(i in winners) / len(winners):.1%}" for i in range(3)]
    assert page.locator("[data-testid=final-chart] rect").count() == 1
    assert page.inner_text("[data-testid=final-caption]") == f"Final score: {totals[0]:,}"
    _no_serious_violation(page, axe, "playground after a game")
    _screenshot(page, "playground-against-computers.png")

    # a computer removed: the next game has two players, and not a bar of the third remains
    _settings(page)
    page.select_option("[data-testid=bot-2]", "")
    assert page.inner_text("[data-testid=pending]")  # the finished game stays on screen
    assert len(page.evaluate("state.bots")) == 2
    page.click("[data-testid=new-game]")  # the game is over: no question
    assert page.locator("[data-testid=chance-2]").count() == 0
    _new_game_settled(page, "state.bots.length === 1 && state.chances !== null")
    assert page.locator("[data-testid=chance-1]").count() == 1
    assert page.locator("[data-testid=chance-2]").count() == 0
    assert page.locator("[data-testid=chances-table] tbody tr").count() == 2
    _offline_and_clean(page)


def test_changes_mid_game_wait_and_a_new_game_asks_first(page: Page, server: str):
    """Arrow keys in the variant's select do not restart a game in progress: the change waits
    for the next game. New game asks before it throws a game away, and a new game pressed
    while the computers play starts clean at turn 1, their answers for the old game
    dropped."""
    page.goto(server + "/playground?pause=300&seed=3")
    _wait_ready(page)
    _settings(page)
    page.select_option("[data-testid=bot-1]", "casual")
    _new_game_settled(page, "state.bots.length === 1")
    page.click("[data-testid=roll]")
    page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
    page.focus("[data-testid=variant]")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.wait_for_timeout(600)  # longer than the page waits before it applies a change
    assert page.evaluate("state.def.id") == "yahtzee" and page.evaluate("state.throw") == 1
    assert page.inner_text("[data-testid=pending]")
    # New game now would lose this game: it asks, and "keep playing" keeps it
    game = page.evaluate("state.game")
    page.click("[data-testid=new-game]")
    page.locator("[data-testid=confirm]").wait_for(timeout=5_000)
    page.click("[data-testid=confirm-no]")
    assert page.evaluate("state.throw") == 1 and page.evaluate("state.game") == game
    # write a box: the computer plays (0.3 s a step); New game in the middle of its turn
    page.locator("#sheet button.write").first.click()
    page.wait_for_function("state.moving !== null", timeout=TURN_TIMEOUT)
    page.click("[data-testid=new-game]")
    page.locator("[data-testid=confirm]").wait_for(timeout=5_000)
    page.click("[data-testid=confirm-yes]")
    _new_game_settled(page, "state.record.length === 0")
    variant = page.evaluate("state.def.id")
    assert variant != "yahtzee"  # the settings chosen meanwhile apply now
    page.wait_for_timeout(1500)  # the old computer's turn would have gone on by now
    assert page.evaluate("state.turn") == 1 and page.inner_text("[data-testid=turn-no]") == "1"
    bot = page.evaluate("state.bots[0]")
    assert all(v is None for v in bot["scorecard"]["boxes"].values())
    assert page.evaluate("state.moving") is None and not page.inner_text("[data-testid=watch]")
    _offline_and_clean(page)


def test_the_histogram_follows_the_range_and_says_when_it_is_sampled(page: Page, server: str):
    page.goto(server + "/playground")
    _wait_ready(page)
    page.wait_for_selector("[data-testid=final-chart] rect", state="attached",
                           timeout=ADVICE_TIMEOUT)
    chart = page.evaluate("""() => {
        const svg = document.getElementById('final-chart');
        const width = Number(svg.getAttribute('width'));
        const rects = [...svg.querySelectorAll('rect')].map(r => [Number(r.getAttribute('x')),
            Number(r.getAttribute('width'))]);
        return { width, rects, shown: svg.getBoundingClientRect().width,
                 labels: [...svg.querySelectorAll('text')].map(t => t.textContent) };
    }""")
    # YAHTZEE's scores span 12..1575: at most 40 bars, all inside the chart, drawn at scale 1
    assert 10 < len(chart["rects"]) <= 40
    assert all(x >= 0 and x + w <= chart["width"] for x, w in chart["rects"])
    assert abs(chart["shown"] - chart["width"]) < 1
    assert chart["labels"][0].startswith("≤") and chart["labels"][-1].startswith("≥")
    assert "(exact)" in page.inner_text("[data-testid=final-caption]")
    assert page.locator("[data-testid=final-table] tbody tr").count() == len(chart["rects"])
    # Maxi Yatzy's distribution is sampled: the chart says so
    _settings(page)
    page.select_option("[data-testid=variant]", "maxi_yatzy")
    _new_game_settled(page, "state.def.id === 'maxi_yatzy' && state.value !== null")
    caption = page.inner_text("[data-testid=final-caption]")
    assert "sampled from" in caption, caption
    assert page.get_attribute("[data-testid=final-chart]", "data-sampled") == "true"
    _offline_and_clean(page)


def test_a_column_sheet_shows_each_columns_totals(page: Page, server: str, axe: Path):
    """Yam's with its column sheet (4 columns): under each column its upper section, upper
    bonus, lower section and total, and under the sheet the grand total, each as the service
    gives them for the page's scorecard (scorecards/score), after every turn."""
    page.goto(server + "/playground?seed=4")
    _wait_ready(page)
    _settings(page)
    page.select_option("[data-testid=variant]", "yams")
    page.check("[data-testid=option-columns]")
    _new_game_settled(page, "state.def.id === 'yams' && state.def.columns.length === 4 "
                            "&& state.totals.columns")
    rows = {"upper": "upper_subtotal", "upper-bonus": "upper_bonus", "lower": "lower_total",
            "total": "total"}
    assert page.locator("[data-testid=sheet-totals-five-bonus]").count() == 0  # Yam's has none
    options = page.evaluate("state.options")
    for turn in range(1, 5):
        page.wait_for_function("t => state.turn === t && state.throw === 0 && !state.busy",
                               arg=turn, timeout=TURN_TIMEOUT)
        page.click("[data-testid=roll]")
        _finish_turn(page)
        page.wait_for_function("t => state.turn > t && !state.busy", arg=turn,
                               timeout=TURN_TIMEOUT)
        status, scored = _post(server, "/v1/variants/yams/scorecards/score",
                               {**page.evaluate("state.scorecard"), "options": options})
        assert status == 200 and len(scored["columns"]) == 4, scored
        for column in scored["columns"]:
            n = column["column"]
            shown = {row: _number(page.inner_text(f"[data-testid=column-{row}-{n}]"))
                     for row in rows}
            assert shown == {row: column[field] for row, field in rows.items()}, (turn, n)
        assert _number(page.inner_text("[data-testid=total]")) == scored["total"]
        assert scored["total"] == sum(c["total"] for c in scored["columns"])
    assert scored["total"] > 0 and page.inner_text("[data-testid=totals] th") == "Grand total"
    assert page.evaluate("state.record.length") == 4
    _no_serious_violation(page, axe, "a column sheet")
    _offline_and_clean(page)


def test_the_phone_layout(browser: Browser, server: str, axe: Path):
    """375 x 812: the dice, your boxes and the players fit with little scrolling, nothing is
    wider than the screen, the chart text is 12 px or more, and a computer's turn shows in the
    turn's panel, which stays in sight while the sheet scrolls."""
    with _recording_page(browser, server, viewport=PHONE, is_mobile=True, has_touch=True,
                         device_scale_factor=2) as page:
        page.goto(server + "/playground?pause=400&seed=21")
        _wait_ready(page)
        _settings(page)
        page.select_option("[data-testid=bot-1]", "strong")
        page.select_option("[data-testid=bot-2]", "beginner")
        page.click("#settings summary")  # closed again
        _new_game_settled(page, "state.bots.length === 2 && state.chances !== null")
        page.click("[data-testid=roll]")
        page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
        box = page.evaluate("""() => {
            const r = (s) => document.querySelector(s).getBoundingClientRect();
            const rows = document.querySelectorAll('#sheet tbody tr');
            return { scroll: document.documentElement.scrollWidth,
                     dice: r('#dice').bottom, players: r('#players').bottom,
                     first: rows[0].getBoundingClientRect().top,
                     last: rows[rows.length - 1].getBoundingClientRect().bottom,
                     page: document.documentElement.scrollHeight };
        }""")
        assert box["scroll"] <= PHONE["width"], box
        assert box["dice"] < 0.4 * PHONE["height"], box
        assert box["players"] < PHONE["height"], box  # the players on the first screen
        assert box["first"] < PHONE["height"], box  # and the first boxes
        assert box["last"] < 1.6 * PHONE["height"], box  # little scrolling to the last
        sizes = page.eval_on_selector_all(".chart text", "ts => ts.map(t => "
                                          "t.getBoundingClientRect().height)")
        fonts = page.eval_on_selector_all(".chart text", "ts => ts.map(t => "
                                          "parseFloat(getComputedStyle(t).fontSize))")
        assert sizes and min(fonts) >= 12 and min(sizes) >= 11, (fonts, sizes)
        _screenshot(page, "playground-phone.png", docs=True, full_page=False)
        _no_serious_violation(page, axe, "playground on a phone")
        # the player scrolls down to the sheet and writes a box: the computers' turns show
        # in the turn's panel, on screen
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        _finish_turn(page)
        page.wait_for_function("document.getElementById('watch').textContent.length > 0",
                               timeout=TURN_TIMEOUT)
        watch = page.evaluate("document.getElementById('watch').getBoundingClientRect()."
                              "toJSON()")
        assert watch["top"] >= 0 and watch["bottom"] <= PHONE["height"], watch
        assert "Computer 1" in page.inner_text("[data-testid=watch]")
        page.wait_for_function("state.turn === 2 && !state.busy", timeout=TURN_TIMEOUT)
        _offline_and_clean(page)


# Where a box of the sheet is: its row's top and bottom in the window, and whether what is
# drawn at the box's centre and at its row's name is the box and its row (not an element
# pinned over them, like the turn's panel on a phone).
_SIGHT = """(selector) => {
    const box = document.querySelector(selector);
    const row = box.closest('tr');
    const at = (el) => { const r = el.getBoundingClientRect();
                         return document.elementFromPoint(r.left + r.width / 2,
                                                          r.top + r.height / 2); };
    const rect = row.getBoundingClientRect();
    const hit = at(box);
    const name = at(row.querySelector('th'));
    const s = { top: rect.top, bottom: rect.bottom, height: innerHeight,
                onBox: !!hit && box.contains(hit), onRow: !!name && row.contains(name),
                hit: hit && (hit.dataset.testid || hit.className || hit.tagName) };
    s.ok = s.top >= 0 && s.bottom <= s.height && s.onBox && s.onRow;
    return s;
}"""


def _in_sight(page: Page, selector: str) -> None:
    """The box `selector` and its row are whole in the window, covered by nothing."""
    with contextlib.suppress(PlaywrightTimeout):  # the page scrolls in the next frame
        page.wait_for_function(f"s => ({_SIGHT})(s).ok", arg=selector, timeout=5_000)
    sight = page.evaluate(_SIGHT, selector)
    assert sight["top"] >= 0 and sight["bottom"] <= sight["height"], (selector, sight)
    assert sight["onBox"] and sight["onRow"], (selector, sight)


def test_on_a_phone_the_box_to_write_is_never_hidden(browser: Browser, server: str):
    """375 x 812, where the turn's panel stays pinned over the top of the page: a box chosen
    by the keyboard low in the sheet, a box focused while it is under the panel, and the box
    the advice marks best are each scrolled whole into the window, clear of the panel."""
    with _recording_page(browser, server, viewport=PHONE, is_mobile=True, has_touch=True,
                         device_scale_factor=2) as page:
        page.goto(server + "/playground?seed=21")
        _wait_ready(page)
        page.click("[data-testid=roll]")
        page.wait_for_selector("[data-testid=best-move]", timeout=ADVICE_TIMEOUT)
        boxes = page.eval_on_selector_all("#sheet button.write",
                                          "bs => bs.map(b => b.dataset.testid)")
        assert len(boxes) >= 3, boxes
        # the page at its top, the lowest box below the window: Tab to it
        page.evaluate("window.scrollTo(0, 0)")
        page.focus("[data-testid=roll]")
        low = f"[data-testid={boxes[-1]}]"
        _tab_to(page, low)
        _in_sight(page, low)
        # a box under the pinned panel (the page scrolled so), focused: it comes out from under
        under = f"[data-testid={boxes[1]}]"
        page.evaluate("""(s) => {
            const panel = document.querySelector('.turn').getBoundingClientRect();
            const row = document.querySelector(s).closest('tr').getBoundingClientRect();
            window.scrollBy(0, row.top - panel.height / 2);
        }""", under)
        covered = page.evaluate(_SIGHT, under)
        assert not covered["onBox"], covered  # the panel is over it
        page.focus(under)
        _in_sight(page, under)
        # the advice marks a box best (a YAHTZEE typed, the page at its top): it is in sight
        page.evaluate("window.scrollTo(0, 0)")
        _type_dice(page, "6 6 6 6 6")
        page.wait_for_selector("[data-testid=place-five_of_a_kind].best", timeout=ADVICE_TIMEOUT)
        _in_sight(page, "[data-testid=place-five_of_a_kind]")
        _offline_and_clean(page)


# --------------------------------------------------------------------------- with API keys


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """The app with AUTH=keys (one tenant, no browser origins but the service's own pages):
    its address and the tenant's key."""
    from service.web.auth import derive_secret, hash_key, new_key

    key_id, key = new_key()
    tenants = {"tenants": [{"name": "page", "keys": [
        {"id": key_id, "hash": hash_key(key), "derive": derive_secret(key)}]}]}
    httpd, url = _serve(Settings(advisor_table_dir=str(tmp_path_factory.mktemp("tables")),
                                 advisor_builds="inline", metrics_enabled=False, auth="keys",
                                 api_keys=json.dumps(tenants)))
    yield url, key
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
    page.wait_for_function("() => document.getElementById('message').textContent.length > 0",
                           timeout=30_000)
    assert "Authorization: Bearer" in message.inner_text()
    sent = []
    page.on("request", lambda r: sent.append(r.headers.get("authorization")))
    _settings(page)
    page.fill("[data-testid=api-key]", key)
    page.dispatch_event("[data-testid=api-key]", "change")
    _wait_ready(page)
    _type_dice(page, "6 6 6 6 6")
    page.locator("[data-testid=place-five_of_a_kind]").wait_for(timeout=ADVICE_TIMEOUT)
    assert f"Bearer {key}" in sent
    # the key is the tab's: a reload keeps it
    page.reload()
    _wait_ready(page)
    _offline_and_clean(page)


def test_the_playground_plays_with_a_key_derived_for_the_page(keyed_page: Page, keyed_server):
    """What a tenant gives a page instead of its key: a short-lived key derived from it, for
    one end user and the operations the page needs. The playground plays with it; one derived
    without `advice` gets its advice refused (403), and the page says so."""
    from service.web.auth import derive_key

    server, key = keyed_server
    page = keyed_page
    soon = int(time.time()) + 600
    derived = derive_key(key, soon, operations=["scoring", "advice", "analysis"], user="p1")
    statuses: dict[str, list[int]] = {}
    page.on("response", lambda r: statuses.setdefault(r.url.rsplit("/v1/", 1)[-1], [])
            .append(r.status))
    sent = []
    page.on("request", lambda r: sent.append(r.headers.get("authorization")))
    page.goto(server + "/playground")
    page.wait_for_function("() => document.getElementById('message').textContent.length > 0",
                           timeout=30_000)  # it has asked without a key, and says so
    _settings(page)
    page.fill("[data-testid=api-key]", derived)
    page.dispatch_event("[data-testid=api-key]", "change")
    _wait_ready(page)
    _type_dice(page, "6 6 6 6 6")  # the key field loses focus: its change fires again
    page.locator("[data-testid=place-five_of_a_kind]").wait_for(timeout=ADVICE_TIMEOUT)
    assert f"Bearer {derived}" in sent and f"Bearer {key}" not in sent
    assert statuses.get("variants/yahtzee/moves/suggest") == [200], statuses
    # one start with the key, however often its field says it changed
    assert statuses.get("variants") == [401, 200], statuses

    scoring_only = derive_key(key, soon, operations=["scoring"], user="p2")
    page.fill("[data-testid=api-key]", scoring_only)
    page.dispatch_event("[data-testid=api-key]", "change")
    _wait_ready(page)  # the page starts again with this key (its charts' advice refused)
    with page.expect_response(lambda r: r.url.endswith("/moves/suggest"),
                              timeout=ADVICE_TIMEOUT) as suggested:
        _type_dice(page, "1 2 3 4 5")
    assert suggested.value.status == 403
    page.wait_for_function(
        "() => /operation|allowed|403/i.test(document.getElementById('message').textContent)",
        timeout=ADVICE_TIMEOUT)
    assert 403 in statuses.get("variants/yahtzee/moves/suggest", []), statuses
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
