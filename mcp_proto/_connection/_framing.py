"""Newline-delimited framing for byte streams (stdio, TCP, Unix sockets, pipes).

One message per line, lines end with ``\\n``; a trailing ``\\r`` is tolerated and
blank lines are skipped.  The buffer never rescans bytes it has already
searched, so feeding a message one byte at a time costs time linear in its
size.  The size bound applies to complete lines, however the bytes were
chunked: a line longer than ``max_message_size`` is lost framing.
"""

from __future__ import annotations

from typing import Final

from .._errors import RemoteProtocolError

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "LineBuffer"]

#: Default bound on one message (one line, without its newline): 16 MiB.
DEFAULT_MAX_MESSAGE_SIZE: Final = 16 * 1024 * 1024


class LineBuffer:
    """Accumulates bytes and hands out complete lines.

    ``feed(b"")`` marks the end of input; feeding after it raises
    ``RuntimeError``.  :meth:`next_line` returns a line without its ending, or
    ``None`` when more bytes are needed (or the input ended cleanly).  It raises
    :class:`RemoteProtocolError` for a line over the size bound and for input
    that ends mid-line.
    """

    __slots__ = ("_buf", "_eof", "_max", "_scanned")

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no newline
        self._eof = False
        self._max = max_message_size

    @property
    def eof(self) -> bool:
        """Whether the end of input has been fed."""
        return self._eof

    def __len__(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        """Append bytes from the peer; ``b""`` means the peer closed its side."""
        if self._eof:
            raise RuntimeError("received data after the end of input")
        if data:
            self._buf += data
        else:
            self._eof = True

    def next_line(self) -> bytearray | None:
        """The next non-blank line, or ``None`` if none is complete yet."""
        buf = self._buf
        while True:
            end = buf.find(b"\n", self._scanned)
            if end < 0:
                self._scanned = len(buf)
                if len(buf) > self._max + 1:  # + 1: room for a "\r" before the "\n"
                    raise RemoteProtocolError(
                        f"message longer than the limit of {self._max} bytes"
                    )
                if self._eof and buf:
                    raise RemoteProtocolError("input ended in the middle of a message")
                return None
            stop = end - 1 if end and buf[end - 1] == 0x0D else end
            if stop > self._max:
                raise RemoteProtocolError(f"message longer than the limit of {self._max} bytes")
            line = buf[:stop]
            del buf[: end + 1]  # CPython trims the front of a bytearray in O(1)
            self._scanned = 0
            if line.strip(b" \t"):
                return line
