"""Image type sniffing from magic numbers, with the dimensions and frame count of each format.

Only the headers are read (never the pixel data), in time linear in the input and with every
offset checked against its length, so a truncated or hostile file raises ``ValueError`` and
never an ``IndexError``. Formats: PNG (and APNG frames), JPEG, WebP (lossy, lossless,
extended, animated frames), SVG (by its root element; dimensions are not read).
"""

from __future__ import annotations

import struct

from attrs import frozen

__all__ = ["Sniffed", "sniff"]

_PNG = b"\x89PNG\r\n\x1a\n"
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


@frozen
class Sniffed:
    """What the bytes are: a MIME type, and the size and frames when the format says them."""

    mime_type: str
    width: int | None
    height: int | None
    frames: int


def _png(data: bytes) -> Sniffed:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ValueError("a PNG without an IHDR header")
    width, height = struct.unpack(">II", data[16:24])
    frames, pos = 1, 8
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"acTL" and pos + 12 <= len(data):
            (frames,) = struct.unpack(">I", data[pos + 8 : pos + 12])
        if kind in (b"IDAT", b"IEND"):
            break
        pos += 12 + length
    return Sniffed("image/png", width, height, frames)


def _jpeg(data: bytes) -> Sniffed:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            raise ValueError("a JPEG with a broken segment structure")
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        if marker in _SOF:
            if pos + 9 > len(data):
                break
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return Sniffed("image/jpeg", width, height, 1)
        if marker == 0xDA or length < 2:
            break
        pos += 2 + length
    raise ValueError("a JPEG without a frame header (SOF)")


def _webp(data: bytes) -> Sniffed:
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        frames = 1
        if data[20] & 0x02:  # animation flag: count the ANMF chunks
            frames, pos = 0, 12
            while pos + 8 <= len(data):
                size = int.from_bytes(data[pos + 4 : pos + 8], "little")
                frames += data[pos : pos + 4] == b"ANMF"
                pos += 8 + size + (size & 1)
        return Sniffed("image/webp", width, height, frames)
    if kind == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return Sniffed("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, 1)
    if kind == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return Sniffed("image/webp", width & 0x3FFF, height & 0x3FFF, 1)
    raise ValueError("a WebP file with an unknown or truncated first chunk")


def _looks_like_svg(data: bytes) -> bool:
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if not (head.startswith((b"<svg", b"<?xml", b"<!--", b"<!doctype svg"))):
        return False
    return b"<svg" in head


def sniff(data: bytes) -> Sniffed | None:
    """The format of ``data`` by its magic number; ``None`` when it is none of the known ones.

    Raises ``ValueError`` when the magic number is known but the header is broken.
    """
    if data.startswith(_PNG):
        return _png(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    if _looks_like_svg(data):
        return Sniffed("image/svg+xml", None, None, 1)
    return None
