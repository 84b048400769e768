"""docs/deploy.md lists every environment variable the service reads."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_setting_is_in_the_env_table():
    read = set(re.findall(r'(?:_env_\w+|environ\.get)\(\s*"([A-Z][A-Z0-9_]+)"',
                          (ROOT / "service/config.py").read_text()))
    table = set(re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|", (ROOT / "docs/deploy.md").read_text(),
                           re.M))
    assert read, "no variables found in service/config.py"
    assert read <= table, f"not in docs/deploy.md: {sorted(read - table)}"
