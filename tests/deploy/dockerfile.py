"""A small Dockerfile reader for the tests: stages, and each stage's instructions."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Instruction:
    keyword: str
    args: str

    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form CMD/ENTRYPOINT/HEALTHCHECK CMD."""
        text = self.args
        if self.keyword == "HEALTHCHECK":
            text = text[text.index("CMD") + 3 :]
        return json.loads(text.strip())

    def flags_and_words(self) -> tuple[dict[str, str], list[str]]:
        words = shlex.split(self.args)
        flags = {}
        while words and words[0].startswith("--"):
            key, _, value = words.pop(0)[2:].partition("=")
            flags[key] = value
        return flags, words


@dataclass
class Stage:
    name: str
    base: str
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def env(self) -> dict[str, str]:
        """The stage's ENV values (key=value form), later ones winning."""
        out: dict[str, str] = {}
        for ins in self.all("ENV"):
            for word in shlex.split(ins.args):
                key, _, value = word.partition("=")
                out[key] = value
        return out

    def workdir(self) -> str:
        dirs = self.all("WORKDIR")
        return dirs[-1].args.strip() if dirs else "/"


def parse(path: Path) -> list[Stage]:
    """Stages of a Dockerfile, with line continuations joined and comments dropped."""
    logical: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    stages: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", args.strip(), re.IGNORECASE)
            assert m, line
            stages.append(Stage(m.group(2) or str(len(stages)), m.group(1)))
        elif stages:
            stages[-1].instructions.append(Instruction(keyword, args.strip()))
    return stages
