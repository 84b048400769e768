"""Domain errors. The HTTP layer turns them into RFC 9457 problem documents."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input: where (a JSON pointer into the request), what, and
    (where a machine-readable reason applies) a code documented in docs/problems.md."""

    pointer: str
    detail: str
    code: str | None = None


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
    def one(cls, pointer: str, detail: str, code: str | None = None) -> InvalidInput:
        """An error with a single problem."""
        return cls([Problem(pointer, detail, code)])

    def prefixed(self, prefix: str) -> InvalidInput:
        """The same error (same class, same code) with every pointer under `prefix` (the
        item's place in a batch)."""
        moved = Exception.__new__(type(self))  # without __init__: subclasses take others
        moved.__dict__.update(self.__dict__)
        moved.problems = [replace(p, pointer=prefix + p.pointer) for p in self.problems]
        moved.args = ("; ".join(f"{p.pointer}: {p.detail}" for p in moved.problems),)
        return moved


class IllegalMove(InvalidInput):
    """A turn the rules do not allow on this sheet (box filled, Joker forces another box,
    column order, game over...): `code` says which rule, as in docs/problems.md."""

    def __init__(self, code: str, pointer: str, detail: str) -> None:
        super().__init__([Problem(pointer, detail, code)])
        self.code = code


def escape_pointer_token(token: object) -> str:
    """Escape one JSON pointer reference token (RFC 6901)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: object) -> str:
    """Build a JSON pointer from reference tokens."""
    return "".join("/" + escape_pointer_token(t) for t in tokens)
