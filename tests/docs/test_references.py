"""What the README and docs/ point at exists: the files and sections they link to, the paths
of the repository they name, and, in the rule book and the problems page, the names of the
contract they quote (a box id, an option, a field, a code)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from .examples import DOCUMENTS, ROOT, blocks

#: The folders of the repository a document may name a path in.
TOP_FOLDERS = ("service/", "tests/", "docs/", "bench/", "scripts/", "helm/", "docker/",
               "openapi/", ".ci/")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`\n]+)`")


def text_of(document: str) -> str:
    """The document without its fenced code blocks (examples are tested elsewhere)."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", (ROOT / document).read_text(), flags=re.M | re.S)


def anchors(document: Path) -> set[str]:
    """The anchors GitHub gives a Markdown document's headings: lower case, punctuation
    dropped, spaces as hyphens, a repeated one numbered."""
    found: set[str] = set()
    text = re.sub(r"^```.*?^```", "", document.read_text(), flags=re.M | re.S)
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M):
        heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def tracked_files() -> list[str]:
    """The files of the repository (git's index; the tree when git is not there)."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):  # pragma: no cover - an export
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]


def ignored(path: str) -> bool:
    """Whether git ignores the path (a cache or an output the tests make, named as such)."""
    try:
        return any(subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT).returncode == 0
                   for name in (path, path + "/"))
    except OSError:  # pragma: no cover
        return False


@pytest.mark.parametrize("document", DOCUMENTS)
def test_links_reach_a_file_and_a_section(document):
    base = (ROOT / document).parent
    broken = []
    for target in _LINK.findall(text_of(document)):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not followed here
        path, _, anchor = target.partition("#")
        file = (base / path).resolve() if path else ROOT / document
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no such section")
    assert not broken, f"{document}: {broken}"


@pytest.mark.parametrize("document", DOCUMENTS)
def test_paths_it_names_exist(document):
    """`service/web/app.py`, `tests/deploy/`: a path in one of the repository's folders
    exists (or is one git ignores: a cache the tests make); a module named alone
    (`distribution.py`) is some file's name."""
    names = {Path(f).name for f in tracked_files()}
    missing = []
    for code in _CODE.findall(text_of(document)):
        path = code.split(":")[0].rstrip("/.,")
        if any(char in path for char in "<>*{} $"):
            continue  # a pattern or a placeholder, not a path
        if path.startswith(TOP_FOLDERS):
            if not (ROOT / path).exists() and not ignored(path):
                missing.append(code)
        elif re.fullmatch(r"[\w-]+\.py", path) and path not in names:
            missing.append(code)
    assert not missing, f"{document} names what the repository does not have: {missing}"


def contract_names() -> set[str]:
    """Every name the contract has (the spec's keys, strings and enum values) and every name
    of the tenants file docs/deploy.md shows."""
    names: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            names.update(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            names.add(value)

    walk(json.loads((ROOT / "openapi/openapi.json").read_text()))
    for block in blocks("docs/deploy.md"):
        if block.language == "json":
            walk(json.loads(block.text))
    return names


@pytest.mark.parametrize("document", ["docs/rules.md", "docs/problems.md"])
def test_names_it_quotes_are_the_contracts(document):
    """The rule book and the problems page quote ids as a client sends or reads them: every
    `snake_case` name in them is a box id, variant, option, value, field or code the service
    knows (the rule book once gave `sequencia_alta`, which no variant has)."""
    known = contract_names()
    quoted = set(re.findall(r"`([a-z][a-z0-9_]*)`", text_of(document)))
    assert quoted, document
    assert quoted <= known, f"{document} quotes names the service does not know: " \
        f"{sorted(quoted - known)}"


def test_github_anchors():
    """The anchors are GitHub's: the README's contents link to them."""
    readme = anchors(ROOT / "README.md")
    assert {"quick-start", "a-first-call", "games-play-turns-validate-whole-games",
            "api-keys-and-quotas"} <= readme


def test_the_readme_lists_every_variant_and_box_id():
    """The README's Variants section: its table has a row per variant, and its list of box
    ids is every box id the service knows."""
    from service.domain.variants import ALL_BOX_IDS, VARIANT_IDS

    section = text_of("README.md").split("\n## Variants\n")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([a-z_0-9]+)` \|", section, re.M)
    assert rows == list(VARIANT_IDS)
    listed = section.split("Box ids are")[1].split(").")[0]
    assert set(re.findall(r"`([a-z_]+)`", listed)) | {"ones", "twos", "threes", "fours",
                                                         "fives", "sixes"} == set(ALL_BOX_IDS)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_problem_types_it_names_exist_with_their_status(document):
    """A problem type the text names is one the service answers, and a status written with it
    (`409 /problems/illegal-move`, a table's status column) is the status it has."""
    from service.web.problems import PROBLEM_TYPES

    text = text_of(document)
    named = set(re.findall(r"(/problems/[a-z-]+)", text))
    unknown = named - set(PROBLEM_TYPES)
    assert not unknown, f"{document}: the service has no problem type {sorted(unknown)}"
    pairs = re.findall(r"\b([1-5]\d\d)\)?[ (]*`(/problems/[a-z-]+)`", text) + [
        (status, type_) for type_, status in
        re.findall(r"^\| `(/problems/[a-z-]+)` \| (\d{3}) \|", text, re.M)]
    wrong = [(status, type_) for status, type_ in pairs
             if int(status) != PROBLEM_TYPES[type_][0]]
    assert not wrong, f"{document}: statuses the service does not give: {wrong}"


def test_every_problem_type_is_in_the_problems_table_and_no_other():
    """docs/problems.md's table of problem types lists exactly the service's
    (`service.web.problems.PROBLEM_TYPES`), each with its status."""
    import re

    from service.web.problems import PROBLEM_TYPES

    text = (ROOT / "docs" / "problems.md").read_text()
    table = text.split("## Problem types", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([^`]+)` \| (\d+)", table, re.M))
    assert set(rows) == set(PROBLEM_TYPES), set(rows) ^ set(PROBLEM_TYPES)
    for type_, (status, _) in PROBLEM_TYPES.items():
        assert int(rows[type_]) == status, type_
