"""The contract holds still between releases (docs/releases.md): the committed document
against the latest release's in openapi/releases/, compared by scripts/contract_diff.py; a
breaking change needs a new major version."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from service import __version__

from ..docs.test_changelog import versions

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ROOT / "openapi" / "releases"
SPEC = json.loads((ROOT / "openapi" / "openapi.json").read_text())


def _load_diff():
    spec = importlib.util.spec_from_file_location("contract_diff",
                                                  ROOT / "scripts" / "contract_diff.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


breaking_changes = _load_diff().breaking_changes


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _releases() -> dict[tuple[int, ...], dict]:
    return {_version(p.stem): json.loads(p.read_text()) for p in RELEASES.glob("*.json")}


def test_each_release_is_kept_under_its_own_version_and_in_the_changelog():
    released = _releases()
    assert released, "no release kept in openapi/releases"
    changelog = {v for v, _ in versions()}
    for version, document in released.items():
        assert _version(document["info"]["version"]) == version
        assert version in changelog, f"release {version} is not in the CHANGELOG"


def test_no_breaking_change_since_the_last_release_without_a_new_major_version():
    latest = max(_releases())
    current = _version(__version__)
    assert current >= latest and _version(SPEC["info"]["version"]) == current
    found = breaking_changes(_releases()[latest], SPEC)
    if current[0] == latest[0]:
        assert not found, (
            f"breaking changes since {'.'.join(map(str, latest))} under the same major "
            f"version ({len(found)}; docs/releases.md says what to do):\n" + "\n".join(found[:40]))
    if current == latest:  # released: the kept document is the one served
        assert _releases()[latest] == SPEC or not found


def test_the_check_finds_the_renames_of_3_0_0():
    found = breaking_changes(_releases()[(2, 0, 0)], _releases()[(3, 0, 0)])
    text = "\n".join(found)
    assert "moves/suggest 200.alternatives: removed" in text
    assert "decisions[].choice: removed" in text
    assert "objective: enum values ['target'] answered, not documented before" in text


OP = ("/v1/variants/yahtzee/hands/score", "post")


def _edited(edit) -> dict:
    new = copy.deepcopy(SPEC)
    edit(new, new["paths"][OP[0]][OP[1]])
    return new


def _schema(doc: dict, node: dict) -> dict:
    while "$ref" in node:
        node = doc["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _body(doc: dict, op: dict) -> dict:
    return _schema(doc, op["requestBody"]["content"]["application/json"]["schema"])


def _answer(doc: dict, op: dict) -> dict:
    return _schema(doc, op["responses"]["200"]["content"]["application/json"]["schema"])


@pytest.mark.parametrize("what, edit", [
    ("operation removed", lambda d, op: d["paths"][OP[0]].pop("post")),
    ("field made required", lambda d, op: _body(d, op).setdefault("required", []).append(
        "throw")),
    ("answer field removed", lambda d, op: _answer(d, op)["properties"].pop("patterns")),
    ("answer field no longer always there",
     lambda d, op: _answer(d, op)["required"].remove("patterns")),
    ("status removed", lambda d, op: op["responses"].pop("200")),
    ("request bound tightened", lambda d, op: _schema(
        d, _body(d, op)["properties"]["throw"]).update(maximum=2)),
])
def test_the_check_finds_each_kind_of_break(what, edit):
    assert breaking_changes(SPEC, _edited(edit)), what


def test_additions_are_not_breaking():
    def add(doc: dict, op: dict) -> None:
        _body(doc, op)["properties"]["note"] = {"type": "string"}  # an optional field
        _answer(doc, op)["properties"]["extra"] = {"type": "string"}
        doc["paths"]["/v1/new"] = {"get": {"responses": {"200": {"description": "new"}}}}

    assert breaking_changes(SPEC, _edited(add)) == []
    assert breaking_changes(SPEC, SPEC) == []
