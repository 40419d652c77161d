"""Server-Sent Events: a writer and an incremental parser (HTTP-SSE-1..4).

The writer frames one JSON-RPC message per event, on ``data:`` lines ended by
a blank line, with no ``event:`` and no ``id:`` (streams are not resumable in
2026-07-28).  :data:`KEEPALIVE` is a comment frame an adapter may write on a
quiet stream.

The parser follows the WHATWG event-stream algorithm: lines end with CRLF, LF
or a lone CR (also when the CR and LF arrive in different chunks); a leading
BOM is skipped; comment lines (``:...``) are ignored; several ``data:`` lines
are joined with ``\\n``; one space after the colon is dropped; ``id``, ``retry``
and unknown fields are read or ignored, never an error; an event still open at
the end of the stream is discarded.  It never rescans bytes, so feeding a
stream one byte at a time costs linear time, and it bounds memory: a line or an
event's data over ``max_event_size`` raises :class:`RemoteProtocolError`.
"""

from __future__ import annotations

import re
from typing import Final

from attrs import frozen

from .._connection import DEFAULT_MAX_MESSAGE_SIZE
from .._errors import RemoteProtocolError

__all__ = ["KEEPALIVE", "SSEEvent", "SSEParser", "sse_event", "sse_message"]

#: A comment frame: keeps intermediaries from timing out a quiet stream (HTTP-SSE-2).
KEEPALIVE: Final = b": keep-alive\n\n"

_EOL = re.compile(rb"[\r\n]")
_SPLIT = re.compile(r"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


@frozen(kw_only=True)
class SSEEvent:
    """One dispatched event: its type (``"message"`` by default), data and last id."""

    data: str
    event: str = "message"
    id: str | None = None


def sse_event(data: str, *, event: str | None = None) -> bytes:
    """One SSE frame carrying ``data`` (split over several ``data:`` lines if needed)."""
    lines = [f"event: {event}"] if event is not None else []
    lines += [f"data: {line}" for line in _SPLIT.split(data)]
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def sse_message(json_bytes: bytes) -> bytes:
    """The frame for one encoded JSON-RPC message (compact JSON holds no line break)."""
    if b"\n" in json_bytes or b"\r" in json_bytes:
        return sse_event(json_bytes.decode("utf-8"))
    return b"data: " + json_bytes + b"\n\n"


class SSEParser:
    """Turns the bytes of an event stream into :class:`SSEEvent` values, incrementally.

    :meth:`feed` returns the events completed by the new bytes; ``feed(b"")``
    ends the stream (a partial event is dropped, :attr:`truncated` says so).
    """

    __slots__ = (
        "_buf",
        "_data",
        "_eof",
        "_event",
        "_id",
        "_max",
        "_scanned",
        "_size",
        "_started",
        "retry",
        "truncated",
    )

    def __init__(self, max_event_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self._buf = bytearray()
        self._scanned = 0
        self._started = False
        self._eof = False
        self._max = max_event_size
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._id: str | None = None
        #: whether the stream ended inside an event (data was read but never dispatched)
        self.truncated = False
        #: the last ``retry`` field: milliseconds to wait before reconnecting (LEG-12)
        self.retry: int | None = None

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Add bytes; ``b""`` means the end of the stream.  Returns completed events."""
        if self._eof:
            raise RuntimeError("received data after the end of the stream")
        if data:
            self._buf += data
        else:
            self._eof = True
        out: list[SSEEvent] = []
        buf = self._buf
        if not self._started:
            if len(buf) < len(_BOM) and _BOM.startswith(bytes(buf)) and not self._eof:
                return out
            if buf.startswith(_BOM):
                del buf[: len(_BOM)]
            self._started = True
        while True:
            match = _EOL.search(buf, self._scanned)
            if match is None:
                self._scanned = len(buf)
                if len(buf) > self._max:
                    raise RemoteProtocolError(f"SSE line longer than {self._max} bytes")
                break
            end = match.start()
            if end > self._max:  # the same bound whether the line ending arrived yet or not
                raise RemoteProtocolError(f"SSE line longer than {self._max} bytes")
            if buf[end] == 0x0D and end + 1 == len(buf) and not self._eof:
                self._scanned = end  # a CR at the edge: wait to see whether LF follows
                break
            skip = 2 if buf[end : end + 2] == b"\r\n" else 1
            line = bytes(buf[:end])
            del buf[: end + skip]
            self._scanned = 0
            event = self._line(line)
            if event is not None:
                out.append(event)
        if self._eof:
            self.truncated = bool(self._data or buf)
            buf.clear()
        return out

    def _line(self, line: bytes) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == 0x3A:  # ":" -- a comment
            return None
        text = line.decode("utf-8", "replace")
        field, colon, value = text.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._size += len(line)
            if self._size > self._max:
                raise RemoteProtocolError(f"SSE event data longer than {self._max} bytes")
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        elif field == "retry" and value.isascii() and value.isdigit() and len(value) <= 9:
            self.retry = int(value)  # (digits only, as the standard says; at most ~11 days)
        return None  # unknown fields are ignored

    @property
    def last_id(self) -> str | None:
        """The last event id seen (the ``Last-Event-ID`` of a reconnection)."""
        return self._id

    def _dispatch(self) -> SSEEvent | None:
        data, event = self._data, self._event
        self._data, self._size, self._event = [], 0, ""
        if not data:
            return None
        return SSEEvent(data="\n".join(data), event=event or "message", id=self._id)
