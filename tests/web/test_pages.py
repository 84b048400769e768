"""The pages for people over HTTP (the browser tests in tests/browser render them): the landing
page or a JSON index by content negotiation, Swagger UI from the service's own files."""

from __future__ import annotations

import re

import pytest

from service.web.pages import SWAGGER_UI_DIR


def test_browsers_get_the_landing_page(client):
    r = client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert r.status_code == 200 and r.mimetype == "text/html"
    assert b'href="/playground"' in r.data and b'href="/docs"' in r.data


@pytest.mark.parametrize("accept", ["application/json", "*/*", None])
def test_api_clients_get_an_index_of_links(client, accept):
    r = client.get("/", headers={"Accept": accept} if accept else {})
    assert r.status_code == 200 and r.is_json
    links = r.get_json()["links"]
    for name in ("variants", "openapi", "docs", "playground"):
        assert client.get(links[name]["href"]).status_code == 200
    assert "Accept" in r.headers["Vary"]


@pytest.mark.parametrize("path", ["/", "/docs", "/playground"])
def test_pages_load_nothing_from_other_hosts(client, path):
    html = client.get(path, headers={"Accept": "text/html"}).get_data(as_text=True)
    for url in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert url.startswith("/"), url
    # what the page itself loads (scripts, styles, icons) is served
    for url in re.findall(r'(?:src="|<link[^>]*href=")([^"]+)"', html):
        assert client.get(url).status_code == 200, url


def test_swagger_ui_comes_from_the_pinned_package(client):
    assert (SWAGGER_UI_DIR / "VERSION").read_text().strip().startswith("v5.")
    r = client.get("/docs/static/swagger-ui-bundle.js")
    assert r.status_code == 200 and len(r.data) > 100_000
    js = client.get("/static/docs-init.js").get_data(as_text=True)
    assert "validatorUrl: null" in js and 'url: "/docs/openapi.json"' in js


def test_unknown_path_is_a_problem_of_the_services_own_type(client):
    r = client.get("/no/such/thing")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"
    assert r.get_json()["type"] == "/problems/not-found"
    r = client.delete("/v1/variants")
    assert r.status_code == 405 and r.get_json()["type"] == "/problems/method-not-allowed"


def test_the_playgrounds_words_are_in_every_language(client):
    """The playground's own words (static/playground/words.json, served beside its script):
    every language has every word English has, and every word the page or its script asks
    for (`t("...")`, `data-i18n`, `data-i18n-label`) is there."""
    words = client.get("/static/playground/words.json").get_json()
    assert list(words) == ["en", "pt", "es", "de", "sv", "fr"]
    for lang, table in words.items():
        assert set(table) == set(words["en"]), lang
        assert all(isinstance(v, str) and v for v in table.values()), lang
    script = client.get("/static/playground/playground.js").get_data(as_text=True)
    page = client.get("/static/playground/index.html").get_data(as_text=True)
    asked = set(re.findall(r'\bt\("([A-Za-z]+)"', script))
    asked |= set(re.findall(r'data-i18n(?:-label)?="([A-Za-z]+)"', page))
    assert len(asked) > 50
    assert asked <= set(words["en"]), asked - set(words["en"])
