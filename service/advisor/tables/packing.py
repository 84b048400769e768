"""Tables packed for shipping: the image keeps its table directory compressed (`pack`, at its
build) and a server unpacks it at its start (`unpack`) into a writable directory, where the
tables are memory-mapped ``.npy`` files as ever (`store.TableStore`).

A packed directory holds one ``<table>.npz`` per ``<table>.npy`` and ``packed.json``, the
manifest: each table's dtype, shape, order, size on disk and `step`. Each table is cut into
blocks of `BLOCK` elements, each block's bytes regrouped by their place in an element (all
first bytes, then all second bytes, ...: the exponents and high bytes of neighbouring floats
are alike, so zlib finds them), each block a member of the ``.npz`` (numpy's zip, deflated).

- A table with `step` 0 is unpacked bit for bit (value tables, moment tables, start
  distributions).
- A table of probabilities with a `step` (the early distributions,
  `strategies.PROBABILITY_STEP`, 2**-31) keeps its running sum to that step: entry j is
  unpacked as (C[j] - C[j-1]) * step, where C[j] is the sum of entries 0..j, in units of
  2**-44 (exact integer sums), rounded to the step. So every sum of consecutive entries (any
  cumulative probability of a distribution in it) is within step + (entries) * 2**-45 of the
  true sum: 4.7e-10 for one probability, 5.3e-10 for a distribution of 2,000 points (YAHTZEE's
  widest has 1,564). The
  entries are then small integers, and such a table packs to a fifth of its size instead of
  four fifths.

Unpacking writes each table atomically (`write_atomically`), the manifest last: a directory
whose manifest equals the source's is complete, and a second start unpacks nothing.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from .store import write_atomically

log = logging.getLogger(__name__)

#: The manifest's file name in a packed directory (and in one unpacked from it).
MANIFEST = "packed.json"
#: Bumped when the packed layout changes.
PACK_FORMAT = 1
#: Elements per block: what unpacking holds in memory at once (8 MiB of float64).
BLOCK = 1 << 20


def is_packed(directory: str | Path) -> bool:
    """Whether `directory` is a packed table directory (it has a manifest)."""
    return (Path(directory) / MANIFEST).is_file()


def pack(directory: str | Path, step_of: Callable[[str], float]) -> tuple[int, int]:
    """Pack every ``.npy`` table of `directory` in place: its ``.npz`` written, the ``.npy``
    removed, the manifest written last. `step_of(table name)` is the table's step (0: bit for
    bit). Bytes before and after."""
    directory = Path(directory)
    tables: dict[str, Any] = {}
    before = after = 0
    for path in sorted(directory.glob("*.npy")):
        array = np.load(path, mmap_mode="r")
        fortran = bool(array.flags.f_contiguous and not array.flags.c_contiguous)
        step = float(step_of(path.stem))
        flat = array.ravel(order="F" if fortran else "C")
        if step:
            flat = _steps(np.asarray(flat, np.float64), step)
        blocks = {f"b{i}": _regroup(np.asarray(flat[at:at + BLOCK]))
                  for i, at in enumerate(range(0, len(flat), BLOCK))}
        target = path.with_suffix(".npz")
        write_atomically(target, lambda fh, blocks=blocks: np.savez_compressed(fh, **blocks))
        tables[path.name] = {"dtype": np.lib.format.dtype_to_descr(array.dtype),
                             "shape": list(array.shape), "fortran_order": fortran,
                             "bytes": path.stat().st_size, "step": step,
                             "stored": np.lib.format.dtype_to_descr(flat.dtype),
                             "blocks": len(blocks)}
        before += path.stat().st_size
        after += target.stat().st_size
        del array, flat
        path.unlink()
    text = json.dumps({"format": PACK_FORMAT, "tables": tables}, indent=1, sort_keys=True)
    write_atomically(directory / MANIFEST, lambda fh: fh.write(text.encode()))
    return before, after


def unpack(source: str | Path, target: str | Path, threads: int = 1) -> int:
    """Unpack the packed directory `source` into `target` (made if missing): every table
    not there yet, on up to `threads` threads, then the manifest. Nothing to do when
    `target`'s manifest is the source's. How many tables it wrote."""
    source, target = Path(source), Path(target)
    manifest = (source / MANIFEST).read_bytes()
    done = target / MANIFEST
    if done.is_file() and done.read_bytes() == manifest:
        return 0
    info = json.loads(manifest)
    if info.get("format") != PACK_FORMAT:
        raise ValueError(f"{source}: packed tables of format {info.get('format')}, "
                         f"this service reads {PACK_FORMAT}")
    began = time.perf_counter()
    target.mkdir(parents=True, exist_ok=True)
    todo = [(name, table) for name, table in info["tables"].items()
            if not ((target / name).is_file()  # unpacked by an earlier start (or beside)
                    and (target / name).stat().st_size == table["bytes"])]

    def one(item: tuple[str, dict[str, Any]]) -> None:
        name, table = item
        write_atomically(target / name, lambda fh: _write_table(
            fh, source / Path(name).with_suffix(".npz"), table))

    # zlib and numpy's copies let go of the GIL: a thread per CPU, the largest tables first
    with ThreadPoolExecutor(max(1, min(threads, len(todo)))) as pool:
        list(pool.map(one, sorted(todo, key=lambda item: -item[1]["bytes"])))
    written = len(todo)
    write_atomically(done, lambda fh: fh.write(manifest))
    log.info("tables unpacked", extra={"tables": written, "directory": str(target),
                                       "seconds": round(time.perf_counter() - began, 2)})
    return written


#: The units a table of probabilities is summed in before its running sum is rounded to
#: its step (exact integer sums: at most 2**19 in all, 2**63 units).
FINE = 2.0**-44


def _steps(flat: np.ndarray, step: float) -> np.ndarray:
    """A table of probabilities (finite, in [0, 1]) as whole steps: its running sum, summed
    exactly in units of `FINE`, rounded to `step`, then differenced (module docstring).
    Unsigned integers, 32-bit when they fit."""
    if not np.all((flat >= 0) & (flat <= 1)) or flat.sum() >= 2.0**19:
        raise ValueError("only probabilities (in [0, 1], under 2**19 in all) are kept to a "
                         "step")
    ratio = round(step / FINE)
    if ratio * FINE != step or ratio & (ratio - 1):
        raise ValueError(f"a step is a power of two from {FINE} up, not {step}")
    running = np.cumsum(np.rint(flat / FINE).astype(np.int64))
    steps = np.diff((running + ratio // 2) // ratio, prepend=0)
    return steps.astype(np.uint32 if steps.max(initial=0) < 2**32 else np.uint64)


def _regroup(block: np.ndarray) -> np.ndarray:
    """A block's bytes regrouped by their place in an element (itemsize rows, module
    docstring)."""
    return np.ascontiguousarray(block.view(np.uint8).reshape(-1, block.dtype.itemsize).T)


def _write_table(fh: BinaryIO, packed: Path, table: dict[str, Any]) -> None:
    """Write one table as a ``.npy`` file: its header, then each block decoded."""
    dtype = np.lib.format.descr_to_dtype(table["dtype"])
    stored = np.lib.format.descr_to_dtype(table["stored"])
    np.lib.format.write_array_header_1_0(fh, {
        "descr": table["dtype"], "fortran_order": table["fortran_order"],
        "shape": tuple(table["shape"])})
    with np.load(packed) as blocks:
        for i in range(table["blocks"]):
            raw = np.ascontiguousarray(blocks[f"b{i}"].T).reshape(-1).view(stored)
            if table["step"]:
                raw = (raw.astype(np.float64) * table["step"]).astype(dtype)
            fh.write(raw.tobytes())
