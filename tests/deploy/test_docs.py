"""docs/deploy.md lists every environment variable the service reads, and the README's
shorter table agrees with it."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from service.config import Settings

ROOT = Path(__file__).resolve().parents[2]
_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]+)` \| ([^|]+) \|", re.M)


def settings_read() -> set[str]:
    """The environment variables the service reads: one per field of `Settings`, named as
    the field in capitals (`Settings.from_env`)."""
    return {f.name.upper() for f in fields(Settings)}


def table(document: str) -> dict[str, str]:
    """A document's settings table: variable -> its default as written."""
    return {name: default.strip() for name, default in
            _ROW.findall((ROOT / document).read_text())}


def test_every_setting_is_in_the_env_table():
    read = settings_read()
    documented = set(table("docs/deploy.md"))
    assert read, "no variables found in service/config.py"
    assert read <= documented, f"not in docs/deploy.md: {sorted(read - documented)}"


def test_the_readme_table_agrees_with_the_full_one():
    """The README's table names settings the service reads, with docs/deploy.md's defaults
    (without the chart's or the image's, which the README's table does not give)."""
    full, short = table("docs/deploy.md"), table("README.md")
    assert len(short) >= 5, "the README's configuration table was not found"
    unread = set(short) - settings_read()
    assert not unread, f"the README names settings the service does not read: {sorted(unread)}"
    for name, default in short.items():
        assert re.sub(r"\s*\((chart|image)[^)]*\)", "", full[name]) == default, \
            f"{name}: README {default!r}, docs/deploy.md {full[name]!r}"
