"""HTTP/1.1 on the server side of one connection: request framing in, response framing out.

:class:`ServerWire` is the minimal, strict HTTP/1.1 (RFC 9112) an MCP endpoint
needs, written for the hot path of :class:`~mcp_proto.http.HTTPServerConnection`
instead of h11, whose framing cost five to six times this one's (``bench/http_wire.py``).  It reads
request heads, ``Content-Length`` and ``chunked`` bodies, and writes responses
with ``Content-Length``, ``chunked`` (HTTP/1.1) or close-delimited (HTTP/1.0)
bodies; one exchange at a time, keep-alive between them, and requests that
arrive early (pipelining) wait in the buffer until the response is done.

Everything the peer sends is checked; what cannot be read is a
:class:`WireError` with the status to answer (``400``, ``414`` for a request
line over ``max_head`` bytes, ``431`` for a head over ``max_head`` bytes or
``max_headers`` fields, ``501`` for a transfer coding other than ``chunked``,
``505`` for an HTTP version other than 1.0 or 1.1), after which the connection
closes and nothing more is read from it.  Decisions, following RFC 9112 where
it lets a server choose: a bare LF ends a line of the head as CRLF does (2.2),
but an empty line before a request line is refused rather than skipped (as h11
does), and the chunked body takes CRLF only (7.1), with at most 16 digits of
chunk size, no whitespace between the size and its extensions, a chunk line of
at most 1 KiB, and no ``Content-Length`` or ``Transfer-Encoding`` among the
trailer fields (RFC 9110 6.5.1); obs-fold, a request with both ``Content-Length`` and
``Transfer-Encoding``, differing ``Content-Length`` values, more than one
``Host`` and an HTTP/1.1 request without one are refused;
``Expect: 100-continue`` gets no interim response (clients send the body after
a short wait); an HTTP/1.0 client's connection closes after each response.
Memory is bounded by ``max_head`` plus what one ``receive_data`` brings;
the work is linear in the input.
"""

from __future__ import annotations

import re
from enum import Enum
from http import HTTPStatus
from typing import TypeAlias

from attrs import frozen

from .._errors import LocalProtocolError
from .._util import NEED_DATA, PAUSED, Sentinel
from ._headers import Headers

__all__ = ["END", "NEED_DATA", "PAUSED", "RequestHead", "ServerWire", "WireError"]

Field: TypeAlias = tuple[str, str]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_HEAD_END = re.compile(rb"\n\r?\n")
_NOT_CRLF = re.compile(rb"[^\r\n]")
_REQUEST_LINE = re.compile(rf"({_TOKEN}) ([\x21-\x7e]+) HTTP/([0-9])\.([0-9])")
#: field lines joined by LF, control characters already refused: token ":" anything
_FIELDS = re.compile(rf"{_TOKEN}:[^\n]*(?:\n{_TOKEN}:[^\n]*)*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TOKEN_B = _TOKEN.encode()
#: RFC 9110 5.6.4 quoted-string: qdtext or quoted-pair, obs-text included
_QUOTED = rb'"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t \x21-\x7e\x80-\xff])*"'
#: RFC 9112 7.1: chunk-size [ chunk-ext ] CRLF, where chunk-ext is
#: *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ), less the BWS
#: before ";" that h11 and llhttp both refuse (a sender MUST NOT send BWS).  The
#: size has at most 16 digits, leading zeros counted; a chunk line is bounded by
#: _MAX_CHUNK_LINE, so the match is linear and short.
_CHUNK_LINE = re.compile(
    rb"([0-9A-Fa-f]{1,16})(?:;[ \t]*%s(?:[ \t]*=[ \t]*(?:%s|%s))?)*\r\n"
    % (_TOKEN_B, _TOKEN_B, _QUOTED)
)
_MAX_CHUNK_LINE = 1024
#: fields that frame the message: never in a trailer section (RFC 9110 6.5.1)
_FRAMING = ("content-length", "transfer-encoding")
_DIGITS = re.compile(r"[0-9]{1,18}")  # str.isdigit() would take "¹" (fuzzing found it)
_OWS = " \t"
_UNSAFE = re.compile(r"[\r\n\x00]")


class _Read(Enum):
    HEAD = "waiting for a request head"
    LENGTH = "reading a Content-Length body"
    CHUNK_SIZE = "reading a chunk-size line"
    CHUNK_DATA = "reading chunk data"
    CHUNK_END = "reading the CRLF after chunk data"
    TRAILERS = "reading the trailer section"
    DONE = "the request is complete"
    ERROR = "the request could not be read"


class _Write(Enum):
    IDLE = "no response started"
    BODY = "the response head is sent"
    DONE = "the response is complete"


class END(metaclass=Sentinel):
    """The request body is complete."""


@frozen(kw_only=True)
class RequestHead:
    """A request line and its header fields (names lowercase, values without OWS)."""

    method: str
    target: str
    headers: Headers
    http_version: str


@frozen(kw_only=True)
class WireError:
    """The request cannot be read: answer ``status`` with ``Connection: close``, then close."""

    status: int
    reason: str


_PHRASES = {s.value: s.phrase for s in HTTPStatus}


class ServerWire:
    """One connection's HTTP/1.1 framing, server side.  Bytes in, events and bytes out.

    :meth:`next_event` gives a :class:`RequestHead`, then body pieces
    (``bytes``), then :data:`END`; then :data:`PAUSED` until the response is
    complete, when the next request is read.  It gives :data:`NEED_DATA` when it
    needs more bytes, :class:`WireError` once for a request it cannot read, and
    :data:`NEED_DATA` forever after that or the end of input.  :meth:`respond`, :meth:`body` and
    :meth:`end` give the bytes of the response.
    """

    def __init__(self, *, max_head: int = 64 * 1024, max_headers: int = 128) -> None:
        self.max_head = max_head
        self.max_headers = max_headers
        self._buf = bytearray()
        self._scan = 0  # where the search for the end of the head resumes
        self._trailers = 0  # bytes of the trailer section so far
        self._read = _Read.HEAD
        self._write = _Write.IDLE
        self._left = 0  # bytes of the Content-Length body or of the chunk still to read
        self._keep_alive = True
        self._chunked_out = False
        self._head_only = False  # a HEAD request: the response has no body
        self._no_body = False  # the response being written has no body (HEAD, 204, 304)
        self.eof = False
        self._overflow = False  # more pipelined bytes than the bound: dropped, then closed
        self._held = False  # the response ended, its request did not (end(hold=True))
        #: the connection must close once the bytes given so far are written
        self.must_close = False

    @property
    def between_requests(self) -> bool:
        """Whether the last exchange is over and the next request head is awaited."""
        return self._read is _Read.HEAD and self._write is _Write.IDLE

    @property
    def can_respond(self) -> bool:
        """Whether no response to the current request has started."""
        return self._write is _Write.IDLE

    def receive_data(self, data: bytes) -> None:
        """Bytes from the client; ``b""`` at the end of its input.

        While a request is being answered, at most ``max_head`` bytes of what
        follows it are kept (pipelined requests); past that the rest is
        dropped and the connection closes once the response is complete.
        """
        if not data:
            self.eof = True
        elif not self.eof and not self._overflow:
            if self._read is _Read.DONE and len(self._buf) + len(data) > self.max_head:
                self._overflow = True
                self._keep_alive = False
                self._buf = bytearray()
                return
            self._buf += data

    # -- reading -------------------------------------------------------------

    def next_event(self) -> RequestHead | bytes | WireError | type[END | PAUSED | NEED_DATA]:
        read = self._read
        if read is _Read.HEAD:
            return self._next_head()
        if read is _Read.LENGTH:
            return self._length_body()
        if read is _Read.DONE:
            return PAUSED
        if read is _Read.ERROR:  # nothing more is read from this connection
            return NEED_DATA
        return self._chunked_body()

    def _fail(self, status: int, reason: str) -> WireError:
        self._read = _Read.ERROR
        self._keep_alive = False
        self._buf = bytearray()
        return WireError(status=status, reason=reason)

    def _body_done(self) -> type[END]:
        self._read = _Read.DONE
        if self._write is _Write.DONE and self._keep_alive and not self._held:  # answered early
            self._next_cycle()
        return END

    def _next_cycle(self) -> None:
        self._read, self._write, self._head_only = _Read.HEAD, _Write.IDLE, False

    def _next_head(self) -> RequestHead | WireError | type[NEED_DATA]:
        buf = self._buf
        if buf and buf[0] in b"\r\n":
            return self._empty_lines(buf)
        found = _HEAD_END.search(buf, self._scan)
        if found is not None:
            if found.end() > self.max_head:
                return self._too_large(buf)
            text = buf[: found.start()].decode("latin-1")
            del buf[: found.end()]
            self._scan = 0
            return self._parse_head(text.removesuffix("\r").replace("\r\n", "\n"))
        if len(buf) > self.max_head:
            return self._too_large(buf)
        if self.eof and buf:
            return self._fail(400, "the connection ended inside a request head")
        self._scan = max(0, len(buf) - 2)
        return NEED_DATA

    def _empty_lines(self, buf: bytearray) -> WireError | type[NEED_DATA]:
        """CR or LF where a request line should start: ``400`` once anything else follows.

        RFC 9112 2.2 lets a server skip empty lines before a request line; h11
        refuses them, and skipping them would read requests that h11 refuses for
        that and llhttp for another reason (an unregistered method, a bare LF in
        the head).  Only CR and LF, then the end of input, is a client that went
        away between requests.  ``_scan`` keeps the check linear.
        """
        if _NOT_CRLF.search(buf, self._scan) is not None or len(buf) > self.max_head:
            return self._fail(400, "an empty line before the request line")
        self._scan = len(buf)
        return NEED_DATA

    def _too_large(self, buf: bytearray) -> WireError:
        """``414`` when the request line alone passes ``max_head`` (RFC 9112 3), else ``431``."""
        if buf.find(b"\n", 0, self.max_head) < 0:
            return self._fail(414, "the request line is too long")
        return self._fail(431, "the request head is too large")

    def _parse_head(self, text: str) -> RequestHead | WireError:
        if _CONTROL.search(text) is not None:  # a bare CR, NUL...: nowhere in a head
            return self._fail(400, "a control character in the request head")
        line, _, block = text.partition("\n")
        match = _REQUEST_LINE.fullmatch(line)
        if match is None:
            return self._fail(400, "malformed request line")
        method, target, major, minor = match.groups()
        if major != "1" or minor not in ("0", "1"):
            return self._fail(505, f"HTTP/{major}.{minor} is not supported")
        fields: list[Field] = []
        by_name: dict[str, list[str]] = {}
        if block:
            if block.count("\n") >= self.max_headers:
                return self._fail(431, "the request has too many header fields")
            if _FIELDS.fullmatch(block) is None:  # one pass over every field line
                obs_fold = any(raw[:1] in (" ", "\t") for raw in block.split("\n"))
                return self._fail(400, "obs-fold" if obs_fold else "malformed header field")
            for raw in block.split("\n"):
                name, _, value = raw.partition(":")
                name, value = name.lower(), value.strip(_OWS)
                fields.append((name, value))
                if name in by_name:
                    by_name[name].append(value)
                else:
                    by_name[name] = [value]
        version = f"1.{minor}"
        problem = self._framing(by_name, version)
        if problem is not None:
            return problem
        self._head_only = method == "HEAD"
        headers = Headers.lowercase(fields, by_name)
        return RequestHead(method=method, target=target, headers=headers, http_version=version)

    def _framing(self, by_name: dict[str, list[str]], version: str) -> WireError | None:
        """Read the body framing and keep-alive from the fields; set the read state."""
        hosts = len(by_name.get("host", ()))
        if hosts > 1 or (hosts == 0 and version == "1.1"):  # RFC 9112 3.2, HTTP/1.0 too
            return self._fail(400, "more than one Host, or none in HTTP/1.1")
        connection = by_name.get("connection")
        tokens = (
            {t.strip(_OWS) for v in connection for t in v.lower().split(",")} if connection else ()
        )
        self._keep_alive = version == "1.1" and "close" not in tokens
        lengths = by_name.get("content-length")
        codings = by_name.get("transfer-encoding")
        if codings:
            if lengths:
                return self._fail(400, "both Content-Length and Transfer-Encoding")
            if version != "1.1":
                return self._fail(400, "Transfer-Encoding in an HTTP/1.0 request")
            listed = [t.strip(_OWS).lower() for v in codings for t in v.split(",")]
            if listed != ["chunked"]:
                return self._fail(501, f"transfer coding {', '.join(listed)!r} is not supported")
            self._read = _Read.CHUNK_SIZE
            return None
        if lengths:
            if len(set(lengths)) != 1 or _DIGITS.fullmatch(lengths[0]) is None:
                return self._fail(400, "malformed Content-Length")
            self._left = int(lengths[0])
            self._read = _Read.LENGTH
            return None
        self._left = 0  # a request with neither has no body (RFC 9112 6.3): END comes next
        self._read = _Read.LENGTH
        return None

    def _length_body(self) -> bytes | type[END] | WireError | type[NEED_DATA]:
        if self._left == 0:
            return self._body_done()
        buf = self._buf
        if not buf:
            if self.eof:
                return self._fail(400, "the connection ended inside a request body")
            return NEED_DATA
        take = min(self._left, len(buf))
        piece = bytes(buf[:take])
        del buf[:take]
        self._left -= take
        return piece

    def _chunked_body(self) -> bytes | type[END] | WireError | type[NEED_DATA]:
        """RFC 9112 7.1 exactly: every line of the chunked framing ends with CRLF."""
        buf = self._buf
        while True:
            read = self._read
            if read is _Read.CHUNK_DATA:
                if not buf:
                    break
                take = min(self._left, len(buf))
                piece = bytes(buf[:take])
                del buf[:take]
                self._left -= take
                if self._left == 0:
                    self._read = _Read.CHUNK_END
                return piece
            if read is _Read.CHUNK_END:  # the CRLF after chunk data, nothing else
                if len(buf) < 2:
                    if buf and buf[0] != 0x0D:
                        return self._fail(400, "chunk data is not followed by CRLF")
                    break
                if buf[0] != 0x0D or buf[1] != 0x0A:
                    return self._fail(400, "chunk data is not followed by CRLF")
                del buf[:2]
                self._read = _Read.CHUNK_SIZE
                continue
            newline = buf.find(b"\n", 0, _MAX_CHUNK_LINE)
            if newline < 0:
                if len(buf) >= _MAX_CHUNK_LINE:
                    return self._fail(400, "a chunk line is too long")
                break
            if newline == 0 or buf[newline - 1] != 0x0D:
                return self._fail(400, "a chunk line not ended by CRLF")
            line = bytes(buf[: newline + 1])
            del buf[: newline + 1]
            if read is _Read.CHUNK_SIZE:
                size = _CHUNK_LINE.fullmatch(line)
                if size is None:
                    return self._fail(400, "malformed chunk size or extension")
                self._left = int(size.group(1), 16)
                self._read = _Read.CHUNK_DATA if self._left else _Read.TRAILERS
                self._trailers = 0
            else:  # trailers: checked as header fields, then dropped; bounded like a head
                if line == b"\r\n":
                    return self._body_done()
                field = line[:-2].decode("latin-1")  # the head's rules
                if _FIELDS.fullmatch(field) is None or _CONTROL.search(field) is not None:
                    return self._fail(400, "malformed trailer field")
                if field.partition(":")[0].lower() in _FRAMING:  # RFC 9110 6.5.1
                    return self._fail(400, "a framing field in the trailer section")
                self._trailers += len(line)
                if self._trailers > self.max_head:
                    return self._fail(431, "the trailer section is too large")
        if self.eof:
            return self._fail(400, "the connection ended inside a request body")
        return NEED_DATA

    # -- writing -------------------------------------------------------------

    def respond(self, status: int, headers: tuple[Field, ...] | list[Field]) -> bytes:
        """The status line and header fields of the response to the current request.

        Without a ``content-length`` field the body is ``chunked`` (or, for an
        HTTP/1.0 client, ends with the connection).  ``connection: close`` is
        added when the connection will close: the client asked, the request
        could not be read.  A response may start before the request body is
        read; the body is then read and dropped before the next request.
        """
        if self._write is not _Write.IDLE:
            raise LocalProtocolError("a response has already started")
        lines = [f"HTTP/1.1 {status} {_PHRASES.get(status, '')}\r\n"]
        has_length = closing = False
        for name, value in headers:
            if _UNSAFE.search(name) or _UNSAFE.search(value):
                raise LocalProtocolError(f"header {name!r} holds CR, LF or NUL")
            if name == "content-length":
                has_length = True
            elif name == "connection" and "close" in value.lower():
                closing = True
            lines.append(f"{name}: {value}\r\n")
        self._no_body = no_body = self._head_only or status in (204, 304)
        self._chunked_out = not has_length and not no_body and self._keep_alive
        if self._chunked_out:
            lines.append("transfer-encoding: chunked\r\n")
        # (a body with neither length nor chunks ends with the connection: HTTP/1.0,
        # whose connections never stay open)
        if closing:
            self._keep_alive = False
        if not self._keep_alive and not closing:
            lines.append("connection: close\r\n")
        lines.append("\r\n")
        self._write = _Write.BODY
        return "".join(lines).encode("latin-1")

    def body(self, data: bytes) -> bytes:
        """The bytes of one piece of the response body."""
        if self._write is not _Write.BODY:
            raise LocalProtocolError("no response is being written")
        if self._no_body or not data:
            return b""  # RFC 9110 9.3.2, 15.3.5, 15.4.5: no content, whatever was given
        if self._chunked_out:
            return b"%x\r\n%s\r\n" % (len(data), data)
        return data

    def end(self, *, hold: bool = False) -> bytes:
        """The bytes that end the response; the next request is read from then on.

        With ``hold``, not before :meth:`release`: the request goes on after its
        response (a legacy stream closed mid-call, to be resumed on a ``GET``), and what
        the client pipelines meanwhile stays bounded as while a response is written.
        """
        if self._write is not _Write.BODY:
            raise LocalProtocolError("no response is being written")
        out = b"0\r\n\r\n" if self._chunked_out else b""
        self._write = _Write.DONE
        self._held = hold and self._keep_alive
        if not self._keep_alive:
            self.must_close = True
        elif self._read is _Read.DONE and not hold:
            self._next_cycle()
        return out

    def release(self) -> None:
        """The request held by ``end(hold=True)`` is over: read the next one."""
        held, self._held = self._held, False
        if held and self._read is _Read.DONE:  # (held only on a connection kept alive)
            self._next_cycle()
