"""The client's bound on a response body that is not an event stream (``max_message_size``).

The pure binding (:class:`ClientExchange`) and the h11 connection over it: a
``Content-Length`` over the bound is refused with the head, before any body byte; a
chunked or close-delimited body is refused by the very byte that passes the bound; a
body exactly at the bound is read; fed byte by byte, every case ends the same way.
The attack over real sockets is ``tests/test_http_client_attack.py``.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import orjson
import pytest

import mcp_proto as m
import mcp_proto_asyncio
import mcp_proto_sync
import mcp_proto_trio
from mcp_proto import types as t
from mcp_proto.http import (
    Era,
    HTTPClient,
    HTTPClientConnection,
    HTTPPost,
    UnexpectedResponse,
    sse_message,
)

from .test_http_h11 import drain

LIMIT = 1000
JSON = ("content-type", "application/json")


def body_of(size: int, id: int = 1) -> bytes:
    """A JSON-RPC result for request ``id``, padded with whitespace to exactly ``size`` bytes."""
    base = orjson.dumps({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
    assert len(base) <= size
    return base + b" " * (size - len(base))


def request(id: int) -> m.Request:
    return m.Request(id=id, method="tools/call", params=t.CallToolRequestParams(name="x"))


def call(client: HTTPClient) -> HTTPPost:
    return client.send(request(client.connection.next_id()))


def summary(events: list[Any]) -> list[tuple[str, str]]:
    return [(type(e).__name__, getattr(e, "reason", "")) for e in events]


# -- the pure binding ---------------------------------------------------------


def test_the_default_bound_is_the_stream_connections_and_the_adapters_pass_theirs() -> None:
    assert HTTPClient().max_message_size == m.DEFAULT_MAX_MESSAGE_SIZE == 16 * 1024 * 1024
    url = "http://127.0.0.1:9/mcp"  # nothing connects before a call
    adapters = [mcp_proto_sync, mcp_proto_asyncio, mcp_proto_trio]
    for session in (adapter.HTTPClientSession for adapter in adapters):
        assert session(url).http.max_message_size == m.DEFAULT_MAX_MESSAGE_SIZE
        assert session(url, max_message_size=LIMIT).http.max_message_size == LIMIT


@pytest.mark.parametrize("announced", [str(LIMIT + 1), "0" * 50 + str(LIMIT + 1), "9" * 5000])
def test_a_content_length_over_the_limit_is_refused_with_the_head(announced: str) -> None:
    client = HTTPClient(max_message_size=LIMIT)
    post = call(client)
    ex = client.response(post, 200, [JSON, ("content-length", announced)])
    (event,) = drain(ex)  # before a single byte of the body
    assert isinstance(event, UnexpectedResponse) and event.id == 1 and event.era is Era.MODERN
    assert event.reason == (
        f"Content-Length {announced.lstrip('0')} is over the {LIMIT}-byte limit (max_message_size)"
    )
    assert ex.must_close and ex.complete and client.connection.in_flight() == ()
    ex.receive_data(body_of(LIMIT + 1))
    ex.receive_data(b"")
    assert drain(ex) == []


@pytest.mark.parametrize("announced", [None, str(LIMIT), "0" * 50 + str(LIMIT), "1, 2", "x"])
def test_a_content_length_within_the_limit_or_unreadable_refuses_nothing(
    announced: str | None,
) -> None:
    client = HTTPClient(max_message_size=LIMIT)
    headers = [JSON] if announced is None else [JSON, ("content-length", announced)]
    ex = client.response(call(client), 200, headers)
    assert drain(ex) == [] and not ex.must_close
    ex.receive_data(body_of(LIMIT))
    ex.receive_data(b"")
    (event,) = drain(ex)
    assert isinstance(event, m.Result) and not ex.must_close


@pytest.mark.parametrize(
    ("status", "ctype"),
    [(200, "application/json"), (500, "text/html"), (400, "application/json"), (202, None)],
)
def test_a_body_growing_past_the_limit_is_refused_by_the_piece_that_passes_it(
    status: int, ctype: str | None
) -> None:
    client = HTTPClient(max_message_size=LIMIT)
    ex = client.response(call(client), status, [("content-type", ctype)] if ctype else [])
    body = body_of(LIMIT + 1)
    ex.receive_data(body[:LIMIT])
    assert drain(ex) == [] and not ex.must_close  # at the limit: still reading
    ex.receive_data(body[LIMIT:])  # the byte past it
    (event,) = drain(ex)
    assert isinstance(event, UnexpectedResponse)
    assert event.reason == f"the body grew past the {LIMIT}-byte limit (max_message_size)"
    assert ex.must_close and client.connection.in_flight() == ()
    ex.receive_data(body)
    ex.receive_data(b"")
    assert drain(ex) == []


def test_the_refused_body_is_not_kept() -> None:
    """Traced memory while 4 MiB arrive against a 256 KiB bound stays near the bound."""
    limit, piece = 256 * 1024, b"x" * 65536
    client = HTTPClient(max_message_size=limit)
    ex = client.response(call(client), 200, [JSON])
    tracemalloc.start()
    try:
        for _ in range(64):
            ex.receive_data(piece)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ex.must_close
    assert peak < 2 * limit  # the 4 MiB fed would be 16 times the bound


def test_an_event_stream_is_bounded_per_event_not_as_a_whole() -> None:
    client = HTTPClient(max_message_size=LIMIT)
    post = call(client)
    ex = client.response(post, 200, [("content-type", "text/event-stream")])
    log = orjson.dumps(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
    )
    for _ in range(3 * LIMIT // len(log)):
        ex.receive_data(b": keep-alive\n\n" + sse_message(log))
    ex.receive_data(sse_message(body_of(LIMIT - 20).strip()))
    events = drain(ex)
    assert isinstance(events[-1], m.Result) and not ex.must_close


@pytest.mark.parametrize("size", [LIMIT, LIMIT + 1])
@pytest.mark.parametrize("announce", [True, False])
def test_the_binding_fed_byte_by_byte_ends_the_same(size: int, announce: bool) -> None:
    def run(step: int) -> list[tuple[str, str]]:
        client = HTTPClient(max_message_size=LIMIT)
        length = [("content-length", str(size))] if announce else []
        ex = client.response(call(client), 200, [JSON, *length])
        body = body_of(size)
        for i in range(0, len(body), step):
            ex.receive_data(body[i : i + step])
        ex.receive_data(b"")
        return summary(drain(ex))

    whole = run(len(body_of(size)))
    assert run(1) == whole
    assert whole[0][0] == ("Result" if size == LIMIT else "UnexpectedResponse")


# -- over h11 -----------------------------------------------------------------

HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"


def wire(size: int, framing: str) -> tuple[bytes, int]:
    """A response with a ``size``-byte body, and the offset of the byte that completes its
    head: where the body starts."""
    body = body_of(size)
    if framing == "length":
        head = HEAD + b"content-length: %d\r\n\r\n" % size
        return head + body, len(head)
    if framing == "chunked":
        head = HEAD + b"transfer-encoding: chunked\r\n\r\n"
        return head + b"%x\r\n" % size + body + b"\r\n0\r\n\r\n", len(head) + len(b"%x\r\n" % size)
    head = HEAD + b"connection: close\r\n\r\n"  # the body ends when the connection closes
    return head + body, len(head)


def h11_run(
    data: bytes, step: int, eof: bool = True
) -> tuple[list[Any], int | None, HTTPClientConnection]:
    """Feed ``data`` (then the end of input, if ``eof``) ``step`` bytes at a time after one
    POST: the events, how many bytes were fed when the request ended, and the connection."""
    conn = HTTPClientConnection(HTTPClient(max_message_size=LIMIT), host="localhost")
    conn.send(request(1))
    events: list[Any] = []
    ended = None
    for i in [*range(0, len(data), step), *([len(data)] if eof else [])]:
        conn.receive_data(data[i : i + step])  # b"" last: the server closed
        events += drain(conn)
        if ended is None and any(isinstance(e, (m.Result, UnexpectedResponse)) for e in events):
            ended = min(i + step, len(data))
        if events and isinstance(events[-1], m.ConnectionClosed):
            break
    return events, ended, conn


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_h11_a_body_over_the_limit_ends_the_request_and_the_connection(framing: str) -> None:
    data, start = wire(LIMIT + 1, framing)
    events, ended, conn = h11_run(data, 1)
    # refused with the head when announced, else by the byte past the limit; never at the end
    assert ended == (start if framing == "length" else start + LIMIT + 1)
    assert summary(events)[0][0] == "UnexpectedResponse" and "1000-byte limit" in events[0].reason
    assert isinstance(events[1], m.ConnectionClosed) and len(events) == 2
    assert conn.busy and conn.client.connection.in_flight() == ()
    with pytest.raises(m.LocalProtocolError, match="closed"):
        conn.send(request(2))
    conn.receive_data(b"HTTP/1.1 200 OK\r\n")  # nothing more is read
    assert isinstance(conn.next_event(), m.ConnectionClosed)
    assert conn.close() is None  # the request was over already


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
def test_h11_a_body_exactly_at_the_limit_is_read(framing: str) -> None:
    data, _ = wire(LIMIT, framing)
    kept_alive = framing != "close"
    events, _, conn = h11_run(data, len(data), eof=not kept_alive)
    assert isinstance(events[0], m.Result)
    if kept_alive:  # the next POST goes out on the same connection
        assert len(events) == 1 and not conn.busy
        assert conn.send(request(2)).startswith(b"POST /mcp HTTP/1.1\r\n")


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
@pytest.mark.parametrize("size", [LIMIT, LIMIT + 1])
def test_h11_fed_byte_by_byte_ends_the_same(framing: str, size: int) -> None:
    data, _ = wire(size, framing)
    assert summary(h11_run(data, 1)[0]) == summary(h11_run(data, len(data))[0])
