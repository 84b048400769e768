"""API keys kept out of what the service writes: `redact` takes anything that looks like a key
out of a text (a log line's path, query or user agent, a problem document's `instance`) and
`holds_key` says whether a text has one (a key in a URL is refused: `service.web.auth`).

A key looks like ``yz_<id>_<secret>`` (a tenant's key) or ``yzd_<payload>.<mac>`` (a derived
key), matched loosely: the prefix in either case, any of its characters percent-encoded
(``yz%5F...``, ``%79%7A_...``), then the key's characters (``[A-Za-z0-9_.-]``, each also
percent-encoded) as far as they go. A piece of a key after its prefix is taken out too.

This module imports nothing of the service, so that logs and web code may both use it.
"""

from __future__ import annotations

import re

#: A key's characters, as they are or percent-encoded (%2D %2E, digits, letters, %5F).
_CHAR = r"(?:[A-Za-z0-9_.\-]|%(?:2[DE]|3[0-9]|[46][1-9A-F]|[57][0-9A]|5F))"
_KEYISH = re.compile(
    rf"(?:y|%79)(?:z|%7A)(?P<derived>d|%64)?(?:_|%5F){_CHAR}+", re.IGNORECASE | re.ASCII)


def _may_hold_key(text: str) -> bool:
    """False for a text that holds no key: no "yz", nor the start of one percent-encoded (a
    substring search, cheaper than the expression; every access line asks)."""
    low = text.lower()
    return "yz" in low or "%79" in low or "%7a" in low


def _marker(match: re.Match[str]) -> str:
    return "yzd_[redacted]" if match.group("derived") else "yz_[redacted]"


def redact(text: str) -> str:
    """`text` with every key-like run (module docstring) replaced by ``yz_[redacted]`` or
    ``yzd_[redacted]``; `text` itself when it has none (the common case, told cheaply)."""
    if not _may_hold_key(text):
        return text
    return _KEYISH.sub(_marker, text)


def holds_key(text: str) -> bool:
    """Whether `text` has anything that looks like a key (what `redact` would take out)."""
    return _may_hold_key(text) and _KEYISH.search(text) is not None
