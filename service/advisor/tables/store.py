"""Tables on disk: one ``.npy`` file per array (a solved part's values, its moments, a start
distribution), loaded memory-mapped; and the chain of stores a service looks in.

Files are ``<variant>-<fingerprint>-<part>-v<FORMAT>.npy`` in the store's directory. Loading
with ``mmap_mode="r"`` lets every process that opens a file (gunicorn's workers) share its
pages. Writes go to a temporary file renamed into place, so a reader never sees half a table.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, TypeVar

import numpy as np

from ...domain.rules import RuleSet, effective_rules

#: Bumped when the layout of a table changes, so old files are not read as new ones.
FORMAT = 1

V = TypeVar("V")


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file through `write(fh)` into a temporary file beside it, then rename it into
    place: a reader (another process) sees all of it or none of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as fh:
        write(fh)
    os.replace(tmp, path)


class TableStore:
    """A directory of value tables."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, rs: RuleSet, part: str) -> Path:
        """The file of one part of a RuleSet's strategy."""
        return self.directory / f"{rs.variant.id}-{rs.fingerprint}-{part}-v{FORMAT}.npy"

    def has(self, rs: RuleSet, parts: list[str]) -> bool:
        """Whether every named part of the RuleSet is on disk."""
        return all(self.path(rs, part).exists() for part in parts)

    def load(self, rs: RuleSet, part: str) -> np.ndarray | None:
        """The part's table, memory-mapped read-only; None when it is missing or unreadable."""
        path = self.path(rs, part)
        if not path.exists():
            return None
        try:
            return np.load(path, mmap_mode="r")
        except (ValueError, OSError):
            return None

    def save(self, rs: RuleSet, part: str, values: np.ndarray) -> np.ndarray:
        """Write the part's table atomically and give it back memory-mapped from the file."""
        path = self.path(rs, part)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda fh: np.save(fh, values))
        return np.load(path, mmap_mode="r")


def is_builtin(rs: RuleSet) -> bool:
    """Whether the rules are a built-in variant with its default options and no house rules
    (those tables are kept on disk and pinned in memory)."""
    return rs.fingerprint == effective_rules(rs.variant.id).fingerprint


class StoreChain:
    """The table stores of a service, tried in order: a built-in variant's tables beside
    the service's (`store`, ADVISOR_TABLE_DIR) and then in the build directory (`house`,
    where the pod's build process writes; also a built-in's when `store` is read-only);
    any other table in `house` only (None: nowhere, such tables live in memory)."""

    def __init__(self, store: TableStore, house: TableStore | None = None) -> None:
        self.store = store
        self.house = house

    def stores(self, rs: RuleSet) -> list[TableStore]:
        """Where the RuleSet's tables are looked for, in order."""
        first = self.store if is_builtin(rs) else None
        return [s for s in (first, self.house) if s is not None]

    def load(self, rs: RuleSet, names: Sequence[str],
             make: Callable[[list[np.ndarray]], V | None]) -> tuple[V, Path] | None:
        """`make` of the arrays named `names`, memory-mapped from the first store holding
        all of them (and giving a table: `make` may refuse arrays of another shape), with
        the path of the first; None when no store does."""
        if not names:
            return None
        for store in self.stores(rs):
            arrays = []
            for name in names:
                array = store.load(rs, name)
                if array is None:
                    break
                arrays.append(array)
            else:
                value = make(arrays)
                if value is not None:
                    return value, store.path(rs, names[0])
        return None

    def save(self, rs: RuleSet, arrays: dict[str, np.ndarray]) -> list[np.ndarray] | None:
        """Write the named arrays into the first store that takes them (a read-only
        directory is skipped); they come back memory-mapped. None when no store did."""
        for store in self.stores(rs):
            try:
                return [store.save(rs, name, a) for name, a in arrays.items()]
            except OSError:  # a read-only directory: the next one, else memory only
                continue
        return None

    def has(self, rs: RuleSet, names: Sequence[str]) -> bool:
        """Whether one store holds every named array of the RuleSet."""
        return any(store.has(rs, list(names)) for store in self.stores(rs))
