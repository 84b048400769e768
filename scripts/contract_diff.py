#!/usr/bin/env python3
"""The breaking changes between two OpenAPI 3.1 documents: what a client written against the
old one would stop being able to do, or would be told that it did not expect.

    python3 scripts/contract_diff.py openapi/releases/3.0.0.json openapi/openapi.json

Prints one line per breaking change and exits 1 when there is one (0 when there is none).
tests/web/test_contract_release.py runs it on every CI run: the committed spec against the
latest release in openapi/releases/, which may differ only compatibly until the next major
version (docs/releases.md).

Why a script of our own: the tools that do this (oasdiff, openapi-diff, optic) were tried.
oasdiff is a Go binary (not installable from the machine's package indexes); openapi-diff
reads OpenAPI 3.0 only; optic took 4 min 46 s on this 2.7 MB document and failed on its
`allOf`. The rules below are the ones those tools call breaking, for what this document uses:

- an operation, a documented status or a parameter removed; a required parameter added;
- a request accepts less: a type, an enum value or a property (where no other is allowed)
  taken away, a property made required, a bound tightened;
- an answer promises less or says more than a client expects: a property taken away or no
  longer required, a type or an enum value added, an item's schema changed that way;
- an object made a union of several (`oneOf`): a typed client must narrow it first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

Schema = dict[str, Any]
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
#: bounds that may only widen for a request: (keyword, True when a larger value is looser)
BOUNDS = (("minimum", False), ("exclusiveMinimum", False), ("maximum", True),
          ("exclusiveMaximum", True), ("minLength", False), ("maxLength", True),
          ("minItems", False), ("maxItems", True), ("minProperties", False),
          ("maxProperties", True))


class Diff:
    """The comparison of an old and a new document (`breaking()` lists what breaks)."""

    def __init__(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.old, self.new = old, new
        self.found: list[str] = []
        self._seen: set[tuple[int, int, str]] = set()

    # --- schemas ---------------------------------------------------------------------------
    @staticmethod
    def _resolve(doc: dict[str, Any], node: Any) -> Any:
        while isinstance(node, dict) and "$ref" in node:
            target: Any = doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    @staticmethod
    def _types(node: Schema) -> set[str] | None:
        t = node.get("type")
        if t is None:
            return None
        return {t} if isinstance(t, str) else set(t)

    def schema(self, old: Any, new: Any, where: str, side: str) -> None:
        """Compare a request (`side` "request": the new must accept all the old did) or a
        response schema (`side` "response": the new must promise all the old did)."""
        old, new = self._resolve(self.old, old), self._resolve(self.new, new)
        if not isinstance(old, dict) or not isinstance(new, dict):
            return
        key = (id(old), id(new), side)
        if key in self._seen:
            return
        self._seen.add(key)
        if "properties" in old and "properties" not in new and "oneOf" in new:
            # one object made a union of several (a move: a keep or a placement): the same
            # JSON may come, but a typed client must narrow it before reading a member's field
            self.add(where, "an object is now a union (oneOf): a typed client narrows it")
            return
        loose, tight = (old, new) if side == "request" else (new, old)
        ot, nt = self._types(loose), self._types(tight)
        widened = ot is not None and nt is not None and not ot <= nt and not (
            "number" in nt and ot <= {"integer", "number"})
        if widened:
            self.add(where, f"type {sorted(ot)} answered, documented {sorted(nt)} before"
                     if side == "response" else
                     f"type {sorted(ot)} no longer accepted (now {sorted(nt)})")
        if "enum" in tight:
            extra = [v for v in loose.get("enum", ()) if v not in tight["enum"]]
            if "enum" not in loose and "const" not in loose:
                if side == "request":
                    self.add(where, f"accepts only {tight['enum']} now")
            elif extra:
                self.add(where, f"enum values {extra} " + (
                    "no longer accepted" if side == "request"
                    else "answered, not documented before"))
        if side == "request":
            for word, larger_is_looser in BOUNDS:
                if word in new and (word not in old or (
                        new[word] < old[word] if larger_is_looser else new[word] > old[word])):
                    self.add(where, f"{word} {old.get(word)} -> {new[word]}")
        self.properties(old, new, where, side)
        if "items" in old and "items" in new:
            self.schema(old["items"], new["items"], f"{where}[]", side)
        for word in ("oneOf", "anyOf", "allOf"):
            a, b = old.get(word), new.get(word)
            if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                for i, (x, y) in enumerate(zip(a, b, strict=True)):
                    self.schema(x, y, f"{where}/{word}/{i}", side)

    def properties(self, old: Schema, new: Schema, where: str, side: str) -> None:
        """Properties and required ones, on `side`."""
        op, np_ = old.get("properties", {}), new.get("properties", {})
        oreq, nreq = set(old.get("required", ())), set(new.get("required", ()))
        for name, sub in op.items():
            at = f"{where}.{name}"
            if name not in np_:
                if side == "response" or new.get("additionalProperties") is False:
                    self.add(at, "removed")
                continue
            self.schema(sub, np_[name], at, side)
        if side == "request":
            for name in sorted(nreq - oreq):
                self.add(f"{where}.{name}", "now required")
        else:
            for name in sorted(oreq - nreq):
                if name in np_:
                    self.add(f"{where}.{name}", "no longer always answered")

    # --- operations ------------------------------------------------------------------------
    def add(self, where: str, what: str) -> None:
        """Record one breaking change."""
        self.found.append(f"{where}: {what}")

    def operation(self, path: str, method: str, old: Schema, new: Schema) -> None:
        """One operation's parameters, body and answers."""
        at = f"{method.upper()} {path}"
        params = {(p["in"], p["name"]): p for p in (self._resolve(self.new, p)
                                                    for p in new.get("parameters", []))}
        old_params = {(p["in"], p["name"]): p for p in (self._resolve(self.old, p)
                                                        for p in old.get("parameters", []))}
        for key, p in old_params.items():
            if key not in params:
                self.add(f"{at} {key[0]} parameter {key[1]}", "removed")
            else:
                self.schema(p.get("schema"), params[key].get("schema"),
                            f"{at} {key[0]} parameter {key[1]}", "request")
        for key, p in params.items():
            if p.get("required") and not old_params.get(key, {}).get("required"):
                self.add(f"{at} {key[0]} parameter {key[1]}", "now required")
        ob = self._resolve(self.old, old.get("requestBody", {})).get("content", {})
        nb = self._resolve(self.new, new.get("requestBody", {})).get("content", {})
        for media, content in ob.items():
            if media not in nb:
                self.add(f"{at} body {media}", "no longer accepted")
            else:
                self.schema(content.get("schema"), nb[media].get("schema"), f"{at} body",
                            "request")
        for status, answer in old.get("responses", {}).items():
            if status not in new.get("responses", {}):
                self.add(f"{at} {status}", "no longer documented")
                continue
            oc = self._resolve(self.old, answer).get("content", {})
            nc = self._resolve(self.new, new["responses"][status]).get("content", {})
            for media, content in oc.items():
                if media in nc:
                    self.schema(content.get("schema"), nc[media].get("schema"),
                                f"{at} {status}", "response")
                else:
                    self.add(f"{at} {status} {media}", "no longer answered")

    def breaking(self) -> list[str]:
        """Every breaking change, one line each."""
        for path, item in self.old.get("paths", {}).items():
            for method in METHODS:
                if method not in item:
                    continue
                if method not in self.new.get("paths", {}).get(path, {}):
                    self.add(f"{method.upper()} {path}", "removed")
                    continue
                self.operation(path, method, item[method], self.new["paths"][path][method])
        return self.found


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What breaks between two documents (module docstring)."""
    return Diff(old, new).breaking()


def main(argv: list[str]) -> int:
    """Command line: the two documents' paths; prints the breaking changes."""
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    old, new = (json.loads(Path(p).read_text()) for p in argv)
    found = breaking_changes(old, new)
    for line in found:
        print(line)
    print(f"{len(found)} breaking change(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
