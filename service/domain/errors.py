"""Domain errors. The HTTP layer turns them into RFC 9457 problem documents."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (a JSON pointer into the request) and what."""

    pointer: str
    detail: str


class DomainError(Exception):
    """Base of the errors the core raises on purpose."""


class UnknownVariant(DomainError):
    """The variant id names no variant."""

    def __init__(self, variant: str) -> None:
        super().__init__(f"unknown variant {variant!r}")
        self.variant = variant


class InvalidInput(DomainError):
    """The request is well-formed JSON but breaks a rule of the game or of the variant."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.pointer}: {p.detail}" for p in problems))
        self.problems = problems

    @classmethod
    def one(cls, pointer: str, detail: str) -> InvalidInput:
        """An error with a single problem."""
        return cls([Problem(pointer, detail)])


def escape_pointer_token(token: object) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: object) -> str:
    """Build a JSON pointer from reference tokens."""
    return "".join("/" + escape_pointer_token(t) for t in tokens)
