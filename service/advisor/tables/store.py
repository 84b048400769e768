"""Value tables on disk: one ``.npy`` file per solved part, loaded memory-mapped.

Files are ``<variant>-<fingerprint>-<part>-v<FORMAT>.npy`` in the store's directory. Loading
with ``mmap_mode="r"`` lets every process that opens a file (gunicorn's workers) share its
pages. Writes go to a temporary file renamed into place, so a reader never sees half a table.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from ...domain.rules import RuleSet

#: Bumped when the layout of a table changes, so old files are not read as new ones.
FORMAT = 1


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
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as fh:
            np.save(fh, values)
        os.replace(tmp, path)
        return np.load(path, mmap_mode="r")
