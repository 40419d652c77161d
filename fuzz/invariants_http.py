"""The invariants of the HTTP harnesses: the server and (h11) client connections, and SSE.

Like ``fuzz/invariants.py``, each ``check_*`` takes the fuzzer's bytes and raises
``AssertionError`` (or lets an undocumented exception escape) when a promise breaks:

* ``check_http_server``: the bytes of one TCP connection to ``HTTPServerConnection``,
  answered as an adapter would (each ``Request`` with a result or an error, each ``Reply``
  as it is; a ``subscriptions/listen`` is held open until the end of input cancels it).
  Nothing escapes; the events and the bytes written are the same for one chunk, byte by
  byte and a split; every response parses as HTTP/1.1 (an ``h11`` client reads them
  back), one per request, and every JSON-RPC body or SSE ``data`` payload in it is valid
  against the schema; a notification POST gets no JSON-RPC response.  The same bytes
  read by the server's HTTP/1.1 reader, by h11 and by llhttp keep the differential's two
  properties (``fuzz/invariants_http1.py``): we never accept what both others refuse,
  nor frame a message as neither does.
* ``check_http_client``: fuzzed response bytes to ``HTTPClientConnection`` with four
  POSTs queued (the next one is sent when the connection is free, as the adapters do).
  Only ``LocalProtocolError`` escapes ``send`` (on a connection the server closes) and
  ``RemoteProtocolError`` ``next_event`` (an SSE event over ``max_message_size``, lost
  framing); each request ends at most once, exactly once unless the framing was lost;
  chunking changes nothing.
* ``check_sse``: ``SSEParser`` lets only ``RemoteProtocolError`` escape, gives the same
  events however the stream is cut, and reads back what ``sse_event``/``sse_message`` wrote.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import attrs
import h11
import orjson

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    KEEPALIVE,
    AuthenticationRequired,
    HTTPClient,
    HTTPClientConnection,
    HTTPServer,
    HTTPServerConnection,
    Reply,
    RequestLost,
    SessionTable,
    SSEParser,
    UnexpectedResponse,
    sse_event,
    sse_message,
)

from .invariants import (
    TERMINAL,
    _answer,
    _pieces,
    check_valid_output,
    new_dual_server,
    new_server,
)
from .invariants_http1 import differential

_LINES = re.compile(r"\r\n|\r|\n")
#: more events than this from one input means a loop that makes no progress
MAX_EVENTS = 2000


# -- the server: raw bytes of one TCP connection -----------------------------


#: open legacy sessions at most, in the harness's endpoint
MAX_SESSIONS = 4
#: the id of the first session the harness's endpoint opens
SESSION_ONE = (1).to_bytes(16, "big").hex()
_SESSION_ID = re.compile(rb"[0-9a-f]{32}")
_CHANGED = m.Notification(method="notifications/tools/list_changed")


def new_http_server() -> HTTPServer:
    """The harness's dual-era endpoint; its session ids count up from ``SESSION_ONE``."""
    counter = iter(range(1, 2**32))

    def token(size: int) -> bytes:
        return next(counter).to_bytes(size, "big")

    sessions = SessionTable(token=token, connection=new_dual_server, max_sessions=MAX_SESSIONS)
    return HTTPServer(connection=new_server, sessions=sessions, max_body_size=4096)


def _serve(chunks: list[bytes]) -> tuple[list[Any], list[tuple[bytes, bytes]]]:
    """Drive a server connection as an adapter does.

    Returns its events and, per response, the request method it answers (for
    the framing of ``HEAD``) and the bytes written.
    """
    server = new_http_server()
    conn = HTTPServerConnection(server)
    events: list[Any] = []
    written: list[tuple[bytes, bytes]] = []
    for chunk in [*(c for c in chunks if c), b""]:
        conn.receive_data(chunk)
        while True:
            event = conn.next_event()
            if event is m.NEED_DATA:
                break
            events.append(event)
            assert len(events) < MAX_EVENTS, "next_event makes no progress"
            if isinstance(event, m.ConnectionClosed):
                return events, written
            ex = conn.exchange
            method = ex.method.encode("latin-1") if ex is not None else b"GET"
            assert server.sessions is not None and len(server.sessions) <= MAX_SESSIONS
            if isinstance(event, Reply) and event.stream and ex is not None and ex.following:
                written.append((method, conn.send(event) + conn.poll()))  # a resume (LEG-15)
                continue
            if isinstance(event, Reply) and event.stream:  # a session's GET stream: held
                head = conn.send(event)
                assert head.startswith(b"HTTP/1.1 200 ") and b"text/event-stream" in head
                conn.send(_CHANGED)  # gated by the session (its capabilities): bytes or none
                continue
            if isinstance(event, Reply | m.InvalidMessage):  # (Invalid: a legacy request's end)
                written.append((method, conn.send(event)))
            elif isinstance(event, m.Request) and event.method == "subscriptions/listen":
                continue  # held open, as a listen is, until the client goes away: Cancelled
            elif isinstance(event, m.Request):
                if ex is not None and ex.can_detach and _closes(event):  # test_reconnection
                    out = conn.detach()  # its answer is kept, for a GET with Last-Event-ID
                else:
                    out = conn.keepalive() if event.method == "tools/call" else b""
                written.append((method, out + conn.send(_answer(event))))
            if conn.must_close:
                return events, written  # write what was sent, then close
    raise AssertionError("end of input gave no ConnectionClosed")


def _requests(data: bytes) -> list[tuple[bytes | None, bool]]:
    """Each request h11 reads from ``data``: its body (``None`` when it cannot), and whether
    it is a legacy session's (``Mcp-Session-Id``, or an ``initialize``): its answers may
    follow the 2025-11-25 schema instead."""
    mirror = h11.Connection(h11.SERVER)
    mirror.receive_data(data)
    mirror.receive_data(b"")
    out: list[tuple[bytes | None, bool]] = []
    body, session = b"", False
    while len(out) < MAX_EVENTS:
        try:
            event = mirror.next_event()
        except h11.RemoteProtocolError:
            return [*out, (None, session)]
        if isinstance(event, h11.Request):
            session = any(name == b"mcp-session-id" for name, _ in event.headers)
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            out.append((body, session or b'"initialize"' in body))
            body = b""
            mirror.send(h11.Response(status_code=204, headers=[]))
            mirror.send(h11.EndOfMessage())
            if mirror.our_state is not h11.DONE or mirror.their_state is not h11.DONE:
                return out
            mirror.start_next_cycle()
        else:
            return out
    return out


def _read_response(reader: h11.Connection, method: bytes, out: bytes) -> tuple[Any, bytes]:
    """One response written by the server, as an HTTP/1.1 client reads it."""
    reader.send(h11.Request(method=method, target="/mcp", headers=[("host", "localhost")]))
    reader.send(h11.EndOfMessage())
    reader.receive_data(out)
    head: Any = None
    body = b""
    while True:
        event = reader.next_event()
        if event is h11.NEED_DATA:  # a body delimited by the end of the connection (HTTP/1.0)
            reader.receive_data(b"")
            continue
        if isinstance(event, h11.Response):
            assert head is None
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
        else:
            raise AssertionError(f"unexpected {event!r} in a response")
    assert head is not None and head.status_code >= 200
    for name, value in head.headers:
        if name == b"mcp-session-id":
            assert _SESSION_ID.fullmatch(value), value  # visible ASCII (LEG-16)
    return head, body


def _closes(request: m.Request) -> bool:
    """Whether the harness closes this request's stream before answering (LEG-12)."""
    return request.method == "tools/call" and getattr(request.params, "name", None) == "detach"


def _messages(head: Any, body: bytes, legacy: bool = False) -> list[Any]:
    """The JSON-RPC messages of one response body, each checked against the schema
    (``legacy``: the 2025-11-25 schema's, or this one's)."""
    ctype = dict(head.headers).get(b"content-type", b"").split(b";")[0].strip()
    if ctype == b"application/json":
        assert body, "an empty JSON body"
        return check_valid_output(body + b"\n", legacy=legacy)
    if ctype == b"text/event-stream":
        parser = SSEParser()
        frames = parser.feed(body) + parser.feed(b"")
        assert not parser.truncated, body[-200:]
        if legacy and frames and not frames[0].data:  # a legacy stream's priming event
            assert frames[0].id, "a priming event with no id (LEG-12)"
            frames = frames[1:]
        return [check_valid_output(f.data.encode() + b"\n", legacy=legacy)[0] for f in frames]
    assert not body, f"a body of type {ctype!r}"
    return []


def check_http_server(data: bytes) -> None:
    """One TCP connection's bytes to ``HTTPServerConnection``; see the module docstring."""
    differential(data)
    runs = [_serve(chunks) for chunks in _pieces(data)]
    for other in runs[1:]:
        assert other == runs[0], "events or output depend on how the bytes were chunked"
    events, written = runs[0]
    requests_ = _requests(data)
    bodies = [body for body, _legacy in requests_]
    assert len(written) <= len(bodies) + 1, "more responses than requests"
    reader = h11.Connection(h11.CLIENT)
    for n, (method, out) in enumerate(written):
        assert out, "a response with no bytes"
        head, body = _read_response(reader, method, out)
        legacy = n < len(requests_) and requests_[n][1]
        messages = _messages(head, body, legacy) if method != b"HEAD" else []  # headers only
        request = _json(bodies[n]) if n < len(bodies) else None
        answers = [msg for msg in messages if "method" not in msg]
        assert len(answers) <= 1, "more than one JSON-RPC response to one POST"
        if type(request) is dict and "method" in request and "id" not in request:
            assert all("id" not in msg for msg in answers), "a response to a notification"
        elif type(request) is dict and type(request.get("id")) in (str, int) and answers:
            assert answers[0].get("id") in (request["id"], None), (answers, request)
        if reader.our_state is h11.MUST_CLOSE or reader.their_state is h11.MUST_CLOSE:
            assert n == len(written) - 1, "bytes written after a response that closes"
        else:
            reader.start_next_cycle()
    requests = [e for e in events if isinstance(e, m.Request)]
    assert len({id(e) for e in requests}) == len(requests)


def _json(body: bytes | None) -> Any:
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


# -- the client: response bytes ----------------------------------------------

_ENDINGS = (*TERMINAL, RequestLost, UnexpectedResponse, AuthenticationRequired)


def client_requests(client: m.ClientConnection) -> list[m.Request]:
    """The four POSTs of the client harness (ids 1-4), the stream harness's requests."""
    flt = t.SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["file:///a"])
    meta = client.meta(progress_token="p1", log_level="debug")
    return [
        m.Request(id=1, method="tools/call", params=t.CallToolRequestParams(name="x", meta=meta)),
        m.Request(id=2, method="tools/list", params=t.PaginatedRequestParams()),
        m.Request(
            id=3,
            method="subscriptions/listen",
            params=t.SubscriptionsListenRequestParams(notifications=flt),
        ),
        m.Request(id=4, method="resources/read", params=t.ReadResourceRequestParams(uri="x:a")),
    ]


def _call(chunks: list[bytes]) -> tuple[list[Any], list[bytes]]:
    """A client connection fed ``chunks``; a queued POST goes out once the last one ended."""
    caps = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation())
    client = m.ClientConnection(capabilities=caps, max_rounds=2)
    conn = HTTPClientConnection(HTTPClient(client, max_message_size=1024), host="localhost")
    queue = client_requests(client)
    sent = [conn.send(queue.pop(0))]
    return drive(conn, chunks, queue, sent), sent


def drive(
    conn: HTTPClientConnection,
    chunks: list[bytes],
    queue: list[Any],
    sent: list[bytes],
    ready: Any = lambda: True,
) -> list[Any]:
    """Feed ``chunks`` (then end of input) to ``conn``, POSTing the next of ``queue`` each
    time the connection is free and ``ready()``; the events, ending with the close (or
    the lost framing, as a tuple)."""
    events: list[Any] = []
    for chunk in [*(c for c in chunks if c), b""]:
        conn.receive_data(chunk)
        while True:
            try:
                event = conn.next_event()
            except m.RemoteProtocolError as e:  # an SSE event over max_message_size (documented)
                return [*events, ("lost framing", str(e))]
            if event is m.NEED_DATA and queue and not conn.busy and ready():
                try:
                    sent.append(conn.send(queue.pop(0)))
                except m.LocalProtocolError:  # the server closes: no more POSTs on this one
                    queue.clear()  # (whether it is seen before the close depends on chunks)
                continue
            if event is m.NEED_DATA:
                break
            if isinstance(event, RequestLost):  # h11's error text quotes the bytes at hand
                event = attrs.evolve(event, reason=event.reason.split(": ")[0])
            events.append(event)
            assert len(events) < MAX_EVENTS, "next_event makes no progress"
            if isinstance(event, m.ConnectionClosed):
                return events
    raise AssertionError("end of input gave no ConnectionClosed")


def check_http_client(data: bytes) -> None:
    """Response bytes to ``HTTPClientConnection``; see the module docstring."""
    runs = [_call(chunks) for chunks in _pieces(data)]
    for other in runs[1:]:
        assert other == runs[0], "events depend on how the bytes were chunked"
    events, sent = runs[0]
    ended = Counter(e.id for e in events if isinstance(e, _ENDINGS) and e.id is not None)
    assert set(ended) <= set(range(1, len(sent) + 1)), (ended, len(sent))
    assert all(n == 1 for n in ended.values()), ended
    if not (events and type(events[-1]) is tuple):  # the framing held: every POST ended
        assert len(ended) == len(sent), (ended, len(sent))
    for wire in sent:
        head, _, body = wire.partition(b"\r\n\r\n")
        assert head.startswith(b"POST /mcp HTTP/1.1\r\n")
        check_valid_output(body + b"\n")


# -- SSE ---------------------------------------------------------------------


def _parse(chunks: list[bytes], max_event_size: int) -> list[Any]:
    parser = SSEParser(max_event_size)
    events: list[Any] = []
    for chunk in [*(c for c in chunks if c), b""]:
        try:
            events += parser.feed(chunk)
        except m.RemoteProtocolError as e:
            # The events completed by the failing call are lost with it, so how many came
            # before depends on the chunks: compare the outcome only.
            return [("too large", str(e))]
    return [*events, ("truncated", parser.truncated)]


def check_sse(data: bytes) -> None:
    """``SSEParser`` on ``data`` as a stream, then on a stream written from ``data``."""
    for limit in (4 * 1024 * 1024, 256):
        runs = [_parse(chunks, limit) for chunks in _pieces(data)]
        for other in runs[1:]:
            assert other == runs[0], "events depend on how the bytes were chunked"
    # Round trip: pieces of ``data`` written as events, keep-alives and named events between.
    texts = [p.decode("utf-8", "replace") for p in data.split(b"\xff")]
    stream = b""
    expected = []
    for n, text in enumerate(texts):
        if n % 3 == 0:
            stream += sse_message(orjson.dumps(text))
            expected.append(("message", orjson.dumps(text).decode()))
        elif n % 3 == 1:
            stream += sse_event(text) + KEEPALIVE
            expected.append(("message", "\n".join(_LINES.split(text))))
        else:
            stream += sse_event(text, event="other")
            expected.append(("other", "\n".join(_LINES.split(text))))
    for chunks in _pieces(stream):
        parsed = _parse(chunks, 4 * 1024 * 1024)
        assert parsed[-1] == ("truncated", False), parsed[-1]
        got = [(e.event, e.data) for e in parsed[:-1]]
        assert got == expected, (got, expected)
