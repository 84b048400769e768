#!/usr/bin/env python3
"""Draw the service's icon, a die showing five, as `service/web/static/favicon.ico`.

    python3 scripts/make_favicon.py

The icon holds 16, 32 and 48 pixel images, each a PNG drawn here pixel by pixel (no imaging
library: zlib and struct only), so the file can be made again on any machine.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "service" / "web" / "static" / "favicon.ico"
BLUE = (11, 87, 208, 255)  # the pages' accent colour
WHITE = (255, 255, 255, 255)
CLEAR = (0, 0, 0, 0)
PIPS = ((0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73))


def pixel(size: int, x: int, y: int) -> tuple[int, int, int, int]:
    """The colour of one pixel: a blue rounded square with five white pips."""
    u, v = (x + 0.5) / size, (y + 0.5) / size
    r = 0.2  # corner radius, as a share of the side
    cx, cy = min(max(u, r), 1 - r), min(max(v, r), 1 - r)
    if (u - cx) ** 2 + (v - cy) ** 2 > r * r:
        return CLEAR
    for px, py in PIPS:
        if (u - px) ** 2 + (v - py) ** 2 <= 0.1 ** 2:
            return WHITE
    return BLUE


def png(size: int) -> bytes:
    """A size x size RGBA PNG of the icon."""
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(size, x, y)) for x in range(size))
                    for y in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def ico(sizes: tuple[int, ...] = (16, 32, 48)) -> bytes:
    """An ICO file holding one PNG image per size."""
    images = [png(s) for s in sizes]
    out = struct.pack("<HHH", 0, 1, len(images))
    offset = 6 + 16 * len(images)
    for s, data in zip(sizes, images, strict=True):
        out += struct.pack("<BBBBHHII", s % 256, s % 256, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return out + b"".join(images)


if __name__ == "__main__":
    OUT.write_bytes(ico())
    print(f"wrote {OUT.name}: {OUT.stat().st_size} bytes")
