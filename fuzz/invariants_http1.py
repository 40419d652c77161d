"""The server's HTTP/1.1 reader against h11 and llhttp: the differential; the ``http1`` harness.

The same bytes -- one TCP connection's worth of pipelined requests -- go to three readers:
ours (``mcp_proto.http.wire.ServerWire``), h11 (``h11.Connection(h11.SERVER)``) and llhttp
(``httptools.HttpRequestParser``, the parser behind uvicorn).  Each answers every complete
request at once with an empty ``404`` (so the next pipelined request is read; ``404``
rather than ``200`` so that h11 does not take a ``CONNECT`` as switching protocols) and
stops at the first refusal, at the end of the input, or where the connection closes
(``Connection: close``, HTTP/1.0, an upgrade).  What each reader gives is a
:class:`Reading`: the complete messages, in order, each as ``(method, target, body)``
(the decoded body: chunk framing removed), and how it stopped.

Let ``O``, ``H`` and ``L`` be the messages of ours, h11 and llhttp.  A reader that stops
early -- by refusing, closing or upgrading -- simply has fewer messages: it gives no
opinion past its last one, and nothing it might have read later counts.

* **(a) never accept what both refuse**: ``len(O) <= max(len(H), len(L))``.  When both
  others stop before our ``k``-th message, we stop there too; stopping earlier than both
  (being stricter) is allowed.
* **(b) never find a boundary both place elsewhere**: for every ``i < len(O)``,
  ``O[i] == H[i]`` (where ``i < len(H)``) or ``O[i] == L[i]`` (where ``i < len(L)``).
  Each message we complete is, at the same position, the same method, target and body
  as one of the others completes.  A request-smuggling shape -- a proxy in front
  framing the bytes as one parser does and we as neither -- breaks this.

(b) implies (a); both are checked so a failure names the kind of disagreement.  When our
messages are a prefix of llhttp's both hold, so :func:`differential` reads with h11 only
when ours and llhttp disagree (h11 is the slowest of the three by far).

``check_http1`` is the ``http1`` fuzz harness: the differential above, and our reader
fed the same bytes at once and byte by byte (inputs up to 2 KiB; with small bounds,
``max_head=512`` and ``max_headers=8``, so that the ``414``/``431`` paths are cut too)
gives the same events -- request heads, body bytes (consecutive pieces joined),
``END``, ``WireError`` -- and never raises.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any, NamedTuple

import h11
import httptools

from mcp_proto.http import wire as _http1

from .invariants import BYTEWISE_LIMIT

#: one complete request: method, target, decoded body
Message = tuple[bytes, bytes, bytes]
#: the empty response every reader sends to each complete request
_NOT_FOUND = 404
_ANSWER = [("content-length", "0")]
#: the bounds of the chunking check (small, so that byte-by-byte inputs reach them)
SMALL = {"max_head": 512, "max_headers": 8}


class Head(NamedTuple):
    """A ``RequestHead`` as a value (``Headers`` compares by identity)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    http_version: str


class Refused(NamedTuple):
    """A ``WireError`` as a value."""

    status: int
    reason: str


class Reading(NamedTuple):
    """What one reader made of the bytes: its complete messages and how it stopped."""

    messages: list[Message]
    #: ``"end"`` (input exhausted), ``"close"``, ``"upgrade"`` or ``"refused: <why>"``
    stop: str


# -- ours ----------------------------------------------------------------------


def wire_events(chunks: list[bytes], reader: ModuleType = _http1, **bounds: int) -> list[Any]:
    """``reader.ServerWire``'s events for ``chunks`` then end of input, each request answered.

    The events are plain values, the same whichever copy of the module ``reader`` is
    (see :func:`after_instrumentation`): a :class:`Head` for each ``RequestHead``, body
    bytes (consecutive pieces joined, so the list does not depend on the chunking),
    ``"end"`` for ``END``; the list ends with a :class:`Refused` for a ``WireError``, or
    with ``"close"`` where the connection closes.
    """
    wire = reader.ServerWire(**bounds)
    end, paused, head = reader.END, reader.PAUSED, reader.RequestHead
    events: list[Any] = []
    for chunk in [*chunks, b""]:
        wire.receive_data(chunk)
        while (event := wire.next_event()) is not _http1.NEED_DATA:
            if event is paused:
                wire.respond(_NOT_FOUND, _ANSWER)
                wire.end()
                if wire.must_close:
                    return [*events, "close"]
            elif type(event) is bytes:
                if events and type(events[-1]) is bytes:
                    events[-1] += event
                else:
                    events.append(event)
            elif event is end:
                events.append("end")
            elif type(event) is head:
                headers = tuple(event.headers)
                events.append(Head(event.method, event.target, headers, event.http_version))
            else:
                return [*events, Refused(event.status, event.reason)]
    return events


def reading_of(events: list[Any]) -> Reading:
    """The :class:`Reading` that :func:`wire_events` describes."""
    messages: list[Message] = []
    method = target = body = b""
    for event in events:
        if type(event) is Head:
            method, target = event.method.encode(), event.target.encode("latin-1")
            body = b""
        elif type(event) is bytes:
            body = event
        elif event == "end":
            messages.append((method, target, body))
        elif type(event) is Refused:
            return Reading(messages, f"refused: {event.status} {event.reason}")
        else:
            return Reading(messages, "close")
    return Reading(messages, "end")


def read_ours(data: bytes) -> Reading:
    return reading_of(wire_events([data]))


# -- h11 -----------------------------------------------------------------------


def read_h11(data: bytes) -> Reading:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    conn.receive_data(b"")
    messages: list[Message] = []
    method = target = body = b""
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as e:
            return Reading(messages, f"refused: {e}")
        if type(event) is h11.Request:
            method, target, body = event.method, event.target, b""
        elif type(event) is h11.Data:
            body += event.data
        elif type(event) is h11.EndOfMessage:
            messages.append((method, target, body))
            if conn.their_state is h11.MUST_CLOSE:  # HTTP/1.0, Connection: close
                return Reading(messages, "close")
        elif event is h11.PAUSED and conn.our_state is h11.SEND_RESPONSE:
            conn.send(h11.Response(status_code=_NOT_FOUND, headers=_ANSWER))
            conn.send(h11.EndOfMessage())
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return Reading(messages, "close")
            conn.start_next_cycle()
        elif event is h11.PAUSED:
            return Reading(messages, "close")
        else:  # NEED_DATA after the end of input, ConnectionClosed
            return Reading(messages, "end")


# -- llhttp --------------------------------------------------------------------


class _Collect:
    """httptools' callbacks: gather each message's target and body."""

    def __init__(self) -> None:
        self.parser: Any = None
        self.messages: list[Message] = []
        self.target = self.body = b""

    def on_message_begin(self) -> None:
        self.target = self.body = b""

    def on_url(self, url: bytes) -> None:
        self.target += url

    def on_body(self, body: bytes) -> None:
        self.body += body

    def on_message_complete(self) -> None:
        self.messages.append((self.parser.get_method(), self.target, self.body))


def read_llhttp(data: bytes) -> Reading:
    """llhttp with its default (strict) settings, as uvicorn runs it; it has no end of input."""
    sink = _Collect()
    sink.parser = parser = httptools.HttpRequestParser(sink)
    try:
        parser.feed_data(data)
    except httptools.HttpParserUpgrade:
        return Reading(sink.messages, "upgrade")
    except httptools.HttpParserCallbackError:  # our callbacks failed: not llhttp's verdict
        raise
    except httptools.HttpParserError as e:
        stop = "close" if "after `Connection: close`" in str(e) else f"refused: {e}"
        return Reading(sink.messages, stop)
    return Reading(sink.messages, "end")


# -- the properties ------------------------------------------------------------


def violation(ours: Reading, h11_: Reading, llhttp: Reading) -> str | None:
    """Which of (a) and (b) ``ours`` breaks against the other two (see the module), or None."""
    mine, theirs = ours.messages, (h11_.messages, llhttp.messages)
    most = max(len(h11_.messages), len(llhttp.messages))
    if len(mine) > most:
        return f"(a) we complete {len(mine)} messages, the others at most {most}"
    for i, message in enumerate(mine):
        if not any(i < len(other) and other[i] == message for other in theirs):
            return f"(b) message {i} {message!r:.200} is neither h11's nor llhttp's"
    return None


def differential(data: bytes) -> tuple[Reading, Reading | None, Reading]:
    """Read ``data`` with all three and assert (a) and (b); h11 only when it is needed.

    Returns the readings (``None`` for h11 when it was not consulted).
    """
    ours, llhttp = read_ours(data), read_llhttp(data)
    if llhttp.messages[: len(ours.messages)] == ours.messages:
        return ours, None, llhttp
    h11_ = read_h11(data)
    problem = violation(ours, h11_, llhttp)
    assert problem is None, f"{problem}\n ours {ours}\n h11 {h11_}\n llhttp {llhttp}"
    return ours, h11_, llhttp


#: the reader the byte-by-byte run uses: ``mcp_proto.http.wire``, or under the fuzzer a copy
#: it does not instrument (:func:`after_instrumentation`)
BYTEWISE: dict[str, ModuleType] = {"reader": _http1}


def after_instrumentation() -> None:
    """Under the fuzzer: feed byte by byte to an uninstrumented copy of the reader.

    Instrumented, the byte-by-byte run cost nine tenths of each execution; the copy is
    the same source, loaded afresh once the instrumenting import hook is gone.  The
    runs at once, whose coverage guides the fuzzer, still use the instrumented module.
    """
    spec = importlib.util.spec_from_file_location(f"{_http1.__name__}_plain", _http1.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    BYTEWISE["reader"] = module


def check_http1(data: bytes) -> None:
    """The ``http1`` harness; see the module docstring."""
    differential(data)
    if len(data) <= BYTEWISE_LIMIT:
        whole = wire_events([data], **SMALL)
        pieces = [data[i : i + 1] for i in range(len(data))]
        bytewise = wire_events(pieces, BYTEWISE["reader"], **SMALL)
        assert bytewise == whole, "events depend on how the bytes were chunked"
