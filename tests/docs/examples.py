"""The examples of the README and docs/, read as a newcomer reads them.

The convention (the README's "Examples in these docs are tested" says it to readers):

- Every `curl` command in a fenced code block is an example. Its method is `-X`'s, else POST
  when it sends a body (`-d`), else GET; its path is the URL's (the host is left out); its
  headers are its `-H`s; its body is `-d`'s, as written. A shell variable (`$KEY`) stands for
  a value the reader has (`VARIABLES` in tests/docs/test_examples.py gives the test's); the
  examples of a code block that uses `$KEY`, an API key, are sent to the service with
  `AUTH=keys` (`Example.keyed`).
  Anything after a `|` (`| head`) only shapes the output and is not run.
- The answer follows it on comment lines: `# -> ` then, optionally, the status (200 when
  left out), then a JSON fragment of the answer, continued on the comment lines below that
  are indented (`#    ...`). The fragment names the fields it shows: an object lists some of
  the answer's members (the others are left out), a list lists all its items unless a `...`
  item stands for those left out, `...` as a value or `"..."` as a string stands for any
  value, and a number shown with decimals is the answer's rounded to them. A fragment that
  starts with a member (`"valid": true, ...`) is the answer object's members.
- A curl command without `# ->` must answer 2xx.
- Every `json` block is JSON (a tenants file, a problem document shown alone).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The documents whose examples are run: the README and every page of docs/.
DOCUMENTS = ("README.md", "CHANGELOG.md", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)[^\n]*$")
_ANSWER = re.compile(r"^\s*#\s*->\s?(.*)$")
_CONTINUED = re.compile(r"^\s*#\s{2,}(.*)$")
_STATUS = re.compile(r"^(\d{3})\b\s*(.*)$", re.S)


@dataclass(frozen=True)
class Block:
    """A fenced code block: its document, the line of its opening fence, its info string's
    language and its text."""

    document: str
    line: int
    language: str
    text: str


@dataclass
class Example:
    """One curl command and the answer its document shows (None: none shown)."""

    document: str
    line: int
    command: str
    method: str = "GET"
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    variables: tuple[str, ...] = ()
    keyed: bool = False
    status: int | None = None
    answer: str | None = None

    @property
    def where(self) -> str:
        """`document:line`, for test ids and messages."""
        return f"{self.document}:{self.line}"


def blocks(document: str) -> list[Block]:
    """Every fenced code block of a document, in order."""
    found: list[Block] = []
    lines = (ROOT / document).read_text().splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, language = opening.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence))
                                      and lines[j].strip().strip(fence[0]) == ""):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        found.append(Block(document, i + 1, language.lower(), "\n".join(body)))
        i = j + 1
    return found


def _shell_state(text: str) -> tuple[bool, int | None]:
    """Whether a quote is still open at the end of `text`, and where the comment of its last
    line starts (a `#` after whitespace outside quotes; None: no comment)."""
    quote: str | None = None
    comment: int | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if comment is not None:
            if char == "\n":
                comment = None
        elif quote:
            if char == quote:
                quote = None
            elif char == "\\" and quote == '"':
                i += 1
        elif char in "'\"":
            quote = char
        elif char == "\\":
            i += 1
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            comment = i
        i += 1
    return quote is not None, comment


def _command_end(lines: list[str], start: int) -> int:
    """The index of the last line of the shell command starting at `start`: it goes on while
    a quote is open or a line ends with a backslash."""
    for i in range(start, len(lines)):
        still_quoted, comment = _shell_state("\n".join(lines[start:i + 1]))
        if not still_quoted and (comment is not None or not lines[i].rstrip().endswith("\\")):
            return i
    raise ValueError(f"unterminated command from {lines[start]!r}")


def examples(document: str) -> list[Example]:
    """Every curl example of a document with the answer it shows."""
    found: list[Example] = []
    for block in blocks(document):
        keyed = False
        lines = block.text.splitlines()
        i = 0
        while i < len(lines):
            if not re.match(r"^\s*curl\s", lines[i]):
                i += 1
                continue
            end = _command_end(lines, i)
            command = "\n".join(lines[i:end + 1])
            example = parse_curl(command, block.document, block.line + 1 + i)
            keyed = example.keyed = keyed or "KEY" in example.variables
            answer: list[str] = []
            _, comment = _shell_state(command)
            trailing = _ANSWER.match(command[comment:]) if comment is not None else None
            if trailing:
                answer.append(trailing.group(1))
            j = end + 1
            if not answer and j < len(lines) and _ANSWER.match(lines[j]):
                answer.append(_ANSWER.match(lines[j]).group(1))  # type: ignore[union-attr]
                j += 1
                while j < len(lines) and _CONTINUED.match(lines[j]):
                    answer.append(_CONTINUED.match(lines[j]).group(1))  # type: ignore[union-attr]
                    j += 1
            if answer:
                status = _STATUS.match(" ".join(answer).strip())
                if status:
                    example.status = int(status.group(1))
                    rest = status.group(2).strip()
                else:
                    example.status, rest = 200, " ".join(answer).strip()
                example.answer = rest or None
            found.append(example)
            i = j
    return found


def parse_curl(command: str, document: str = "", line: int = 0) -> Example:
    """The request a curl command makes (method, path, headers, body)."""
    text = command.replace("\\\n", " ")
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|;&")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words: list[str] = []
    for word in lexer:
        if word in ("|", ";", "&", "&&", "||"):
            break
        words.append(word)
    assert words and words[0] == "curl", command
    example = Example(document, line, command)
    example.variables = tuple(sorted(set(re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", text))))
    args = iter(words[1:])
    method = None
    for word in args:
        if word in ("-X", "--request"):
            method = next(args)
        elif word in ("-H", "--header"):
            name, _, value = next(args).partition(":")
            example.headers[name.strip()] = value.strip()
        elif word in ("-d", "--data", "--data-raw", "--data-binary"):
            example.body = next(args)
        elif word.startswith("-"):
            continue  # -s, -i, -v: how curl shows the answer, not what it asks
        else:
            example.path = re.sub(r"^(https?://)?[^/]*", "", word) or "/"
    example.method = method or ("POST" if example.body is not None else "GET")
    return example


# --- the answer fragments ------------------------------------------------------------------

class _Any:
    """`...` as a value, or the string "...": any value."""

    def __repr__(self) -> str:
        return "..."


ANY = _Any()
#: `...` as a list item: the items left out.
MORE = object()


@dataclass(frozen=True)
class Shown:
    """A number shown with `decimals` digits after the point: the answer's, rounded."""

    value: float
    decimals: int


_TOKEN = re.compile(r"""\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
                        |(?P<word>true|false|null)|(?P<more>\.\.\.)|(?P<punct>[{}\[\]:,]))""",
                    re.X)


def fragment(text: str) -> Any:
    """The pattern a JSON fragment with `...` stands for (see the module's docstring)."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"not a JSON fragment at {text[pos:pos + 30]!r}")
        kind = match.lastgroup
        assert kind
        tokens.append((kind, match.group(kind)))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if len(tokens) > 1 and tokens[0][0] == "str" and tokens[1] == ("punct", ":"):
        tokens = [("punct", "{"), *tokens, ("punct", "}")]
    value, end = _value(tokens, 0)
    if end != len(tokens):
        raise ValueError(f"text after the fragment's end: {tokens[end:][:5]}")
    return value


def _value(tokens: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    kind, token = tokens[i]
    if kind == "str":
        string = json.loads(token)
        return (ANY if string == "..." else string), i + 1
    if kind == "num":
        if re.fullmatch(r"-?\d+", token):
            return int(token), i + 1
        decimals = len(token.split(".")[1]) if "." in token and "e" not in token.lower() else 0
        return (Shown(float(token), decimals) if decimals else float(token)), i + 1
    if kind == "word":
        return {"true": True, "false": False, "null": None}[token], i + 1
    if kind == "more":
        return ANY, i + 1
    if token == "{":
        members: dict[str, Any] = {}
        i += 1
        while tokens[i] != ("punct", "}"):
            if tokens[i][0] == "more":
                i += 1
            else:
                key = json.loads(tokens[i][1])
                if tokens[i + 1] != ("punct", ":"):
                    raise ValueError(f"':' expected after {key!r}")
                members[key], i = _value(tokens, i + 2)
            if tokens[i] == ("punct", ","):
                i += 1
        return members, i + 1
    if token == "[":
        items: list[Any] = []
        i += 1
        while tokens[i] != ("punct", "]"):
            if tokens[i][0] == "more":
                items.append(MORE)
                i += 1
            else:
                item, i = _value(tokens, i)
                items.append(item)
            if tokens[i] == ("punct", ","):
                i += 1
        return items, i + 1
    raise ValueError(f"unexpected {token!r}")


def mismatches(pattern: Any, actual: Any, where: str = "") -> list[str]:
    """Where `actual` differs from what the fragment `pattern` shows (empty: it agrees)."""
    if pattern is ANY:
        return []
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return [f"{where or '/'}: an object expected, got {actual!r}"]
        found = []
        for key, value in pattern.items():
            if key not in actual:
                found.append(f"{where}/{key}: missing")
            else:
                found += mismatches(value, actual[key], f"{where}/{key}")
        return found
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            return [f"{where or '/'}: a list expected, got {actual!r}"]
        if not _list_matches(pattern, actual, where):
            shown = [item for item in pattern if item is not MORE]
            if MORE not in pattern and len(pattern) != len(actual):
                return [f"{where or '/'}: {len(pattern)} items shown, {len(actual)} answered"]
            for k, item in enumerate(shown[:len(actual)]):
                if mismatches(item, actual[k], f"{where}/{k}"):
                    return mismatches(item, actual[k], f"{where}/{k}")
            return [f"{where or '/'}: {actual!r} does not have the items shown"]
        return []
    if isinstance(pattern, Shown):
        if isinstance(actual, bool) or not isinstance(actual, int | float) or \
                round(actual, pattern.decimals) != round(pattern.value, pattern.decimals):
            return [f"{where}: {pattern.value} shown, {actual!r} answered"]
        return []
    if isinstance(pattern, bool) or pattern is None or isinstance(pattern, str):
        return [] if actual is pattern or (type(actual) is type(pattern) and actual == pattern) \
            else [f"{where}: {pattern!r} shown, {actual!r} answered"]
    if isinstance(actual, bool) or actual != pattern:
        return [f"{where}: {pattern!r} shown, {actual!r} answered"]
    return []


def _list_matches(pattern: list[Any], actual: list[Any], where: str) -> bool:
    if not pattern:
        return not actual
    head, rest = pattern[0], pattern[1:]
    if head is MORE:
        return any(_list_matches(rest, actual[k:], where) for k in range(len(actual) + 1))
    return bool(actual) and not mismatches(head, actual[0], where) and \
        _list_matches(rest, actual[1:], where)
