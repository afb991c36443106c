"""The PNG fast path: 8-bit grey and RGB PNGs read from their IHDR and decoded by libspng (`pyspng`).

PNG is lossless, so libspng gives the very pixels PIL gives (tests/test_sources_png.py checks it on grey, RGB,
interlaced, filtered and transparent-colour files); it decodes them in about 60 % of PIL's time, which is
what bounds a GPU's Inception extraction from PNG folders. Every other file (other formats, palettes,
alpha, 16-bit) and every PNG when pyspng is missing goes through PIL: the pixels never depend on
which path read them.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MODES = {0: "L", 2: "RGB"}  # PNG colour type -> PIL mode, at bit depth 8

try:  # a dependency of ganeval; absent only where no wheel exists for the platform
    import pyspng as _spng
except ImportError:  # pragma: no cover - PIL reads every file then
    _spng = None


def header(data: bytes) -> tuple[str, tuple[int, int]] | None:
    """(PIL mode, (width, height)) of an 8-bit grey or RGB PNG from its IHDR (checksum verified, as PIL's
    open does); None for anything else, which PIL's own header parsing then reads."""
    if len(data) < 33 or data[:8] != SIGNATURE or data[8:16] != b"\x00\x00\x00\x0dIHDR":
        return None
    w, h, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", data[16:29])
    if depth != 8 or colour not in MODES or not w or not h or compression or filtering or interlace > 1:
        return None
    if zlib.crc32(data[12:29]) != struct.unpack(">I", data[29:33])[0]:
        return None
    return MODES[colour], (w, h)


def intact(data: bytes) -> bool:
    """Whether every chunk's CRC matches and the file ends with IEND: libspng, as pyspng sets it up, ignores CRCs
    (PIL refuses a file whose CRC is wrong), so a file that fails here is left to PIL, which says what is wrong."""
    view, n, p = memoryview(data), len(data), 8
    while p + 12 <= n:
        (length,) = struct.unpack_from(">I", data, p)
        end = p + 12 + length
        if end > n or zlib.crc32(view[p + 4 : end - 4]) != struct.unpack_from(">I", data, end - 4)[0]:
            return False
        if data[p + 4 : p + 8] == b"IEND":
            return end == n
        p = end
    return False


def decode(data: bytes) -> np.ndarray | None:
    """H×W (grey) or H×W×3 (RGB) uint8 pixels of an intact 8-bit grey or RGB PNG, by libspng; None for anything
    else, or when pyspng is missing (the caller decodes with PIL). A deflate stream libspng cannot inflate raises
    RuntimeError. One difference from PIL is left: a zlib checksum (Adler-32) that is wrong in a file whose chunk
    CRCs are right (a faulty encoder: corruption after writing breaks a CRC) is not checked."""
    head = header(data) if _spng is not None else None
    if head is None or _spng is None or not intact(data):
        return None
    return _spng.load(data, format=head[0])


def available() -> bool:
    """Whether 8-bit grey/RGB PNGs take the libspng path (pyspng importable)."""
    return _spng is not None


def version() -> str | None:
    """pyspng's version (part of what a source's memoised content identity is a function of), or None."""
    return getattr(_spng, "__version__", None) if _spng is not None else None
