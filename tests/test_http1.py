"""The server's own HTTP/1.1 (``mcp_proto.http.wire``), checked against h11 and RFC 9112.

Well-formed requests, cut anywhere, must read exactly as h11 reads them; every
response must read back through an h11 client; each refusal in the table gets
the status RFC 9112 asks for.
"""

from __future__ import annotations

from typing import Any

import h11
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import LocalProtocolError
from mcp_proto.http.wire import END, NEED_DATA, PAUSED, RequestHead, ServerWire, WireError

TCHAR = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~"
TOKEN = st.text(TCHAR, min_size=1, max_size=12)
VALUE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20).map(
    lambda v: v.replace(",", "")
)
RESERVED = {"host", "content-length", "transfer-encoding", "connection", "expect", "upgrade"}


@st.composite
def requests(draw: Any) -> tuple[bytes, dict[str, Any]]:
    """One well-formed HTTP/1.1 request and what it means."""
    method = draw(st.sampled_from(["POST", "GET", "DELETE", "OPTIONS", "PUT", "X-CUSTOM"]))
    target = draw(st.sampled_from(["/mcp", "/", "/mcp?x=1&y=%20", "*", "/a/b;c"]))
    fields = [("host", draw(st.sampled_from(["localhost", "127.0.0.1:8000"])))]
    for name, value in draw(st.lists(st.tuples(TOKEN, VALUE), max_size=6)):
        if name.lower() not in RESERVED:
            fields.append((name, value))
    body = draw(st.binary(max_size=300))
    framing = draw(st.sampled_from(["length", "chunked", "none"]))
    if framing == "none":
        body = b""
    if framing == "length":
        fields.append(("Content-Length", str(len(body))))
        payload = body
    elif framing == "chunked":
        fields.append(("Transfer-Encoding", draw(st.sampled_from(["chunked", "Chunked"]))))
        cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
        pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
        ext = draw(st.sampled_from(["", ";x=1", ";name"]))
        payload = b"".join(b"%x%s\r\n%s\r\n" % (len(p), ext.encode(), p) for p in pieces if p)
        trailer = draw(st.sampled_from([b"", b"X-Trailer: yes\r\n"]))
        payload += b"0\r\n" + trailer + b"\r\n"
    else:
        payload = b""
    ows = draw(st.sampled_from(["", " ", "  ", "\t"]))
    eol = draw(st.sampled_from(["\r\n", "\n"]))
    head = f"{method} {target} HTTP/1.1{eol}"
    head += "".join(f"{n}:{ows}{v}{ows}{eol}" for n, v in fields) + eol
    meaning = {
        "method": method,
        "target": target,
        "headers": [(n.lower(), v) for n, v in fields],
        "body": body,
    }
    return head.encode("latin-1") + payload, meaning


def read_with_h11(data: bytes) -> list[dict[str, Any]]:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(data)
    out: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    while True:
        event = conn.next_event()
        if isinstance(event, h11.Request):
            current = {
                "method": event.method.decode(),
                "target": event.target.decode(),
                "headers": [(n.decode(), v.decode("latin-1")) for n, v in event.headers],
                "body": b"",
            }
        elif isinstance(event, h11.Data):
            current["body"] += event.data
        elif isinstance(event, h11.EndOfMessage):
            out.append(current)
            conn.send(h11.Response(status_code=204, headers=[]))
            conn.send(h11.EndOfMessage())
            conn.start_next_cycle()
        else:
            return out


def read_with_wire(chunks: list[bytes]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Feed ``chunks`` one at a time; answer each request with an empty 204."""
    wire = ServerWire()
    out: list[dict[str, Any]] = []
    other: list[Any] = []
    current: dict[str, Any] = {}
    for chunk in chunks:
        wire.receive_data(chunk)
        while True:
            event = wire.next_event()
            if event is NEED_DATA:
                break
            if isinstance(event, RequestHead):
                assert event.http_version == "1.1"
                current = {
                    "method": event.method,
                    "target": event.target,
                    "headers": list(event.headers),
                    "body": b"",
                }
            elif isinstance(event, bytes):
                current["body"] += event
            elif event is END:
                out.append(current)
            elif event is PAUSED:
                wire.respond(204, [])
                wire.end()
            else:
                other.append(event)
                break
    return out, other


def cut(data: bytes, points: list[int]) -> list[bytes]:
    points = sorted({p % (len(data) + 1) for p in points})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    return [p for p in pieces if p]  # b"" would be the end of input


@settings(max_examples=300, deadline=None)
@given(st.lists(requests(), min_size=1, max_size=3), st.lists(st.integers(0, 5000), max_size=6))
def test_well_formed_requests_read_as_h11_reads_them(
    reqs: list[tuple[bytes, dict[str, Any]]], points: list[int]
) -> None:
    data = b"".join(r for r, _ in reqs)
    mine, other = read_with_wire(cut(data, points))
    assert other == []
    assert mine == [meaning for _, meaning in reqs]
    assert lower_values(mine) == lower_values(read_with_h11(data))  # h11 lowercases some values


def lower_values(reqs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "headers": [(n, v.lower()) for n, v in r["headers"]]} for r in reqs]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(0, 500), max_size=4))
def test_any_bytes_give_events_and_the_same_events_however_cut(
    data: bytes, points: list[int]
) -> None:
    prefix = b"POST /mcp HTTP/1.1\r\nHost: x\r\n"
    whole = read_with_wire([prefix + data, b""])
    assert read_with_wire([*cut(prefix + data, points), b""]) == whole


def one_error(data: bytes, **options: Any) -> Any:
    wire = ServerWire(**options)
    wire.receive_data(data)
    while True:
        event = wire.next_event()
        if event is NEED_DATA or isinstance(event, WireError):
            return event
        if event is PAUSED:
            return event


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"POST /mcp HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        (b"POST /mcp HTTP/1.1\r\n\r\n", 400),  # no Host (RFC 9112 3.2)
        (b"POST /mcp HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        (b"GET /mcp HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400),  # any request (RFC 9112 3.2)
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),  # obs-fold
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\n\r\n", 400),
        (b"POST  /mcp HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n", 400),
        # a digit to str.isdigit(), not to int() (found by fuzzing)
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: \xb9\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999999999999999\r\n\r\n", 400),
        # request smuggling: both framings (RFC 9112 6.1 lets a server refuse it)
        (
            b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n",
            400,
        ),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        (b"POST /mcp HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", 400),
        # a trailer section holds header fields only (found by fuzzing: a request there)
        (
            b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"0\r\nHEAD /mcp HTTP/1.1\r\n\r\n",
            400,
        ),
        (
            b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1" * 2000,
            400,
        ),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000 + b"\r\n\r\n", 431),
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000, 431),  # still incomplete
        (b"POST /mcp HTTP/1.1\r\nHost: x\r\n" + b"X: 1\r\n" * 129 + b"\r\n", 431),
    ],
)
def test_unreadable_requests_get_their_status(data: bytes, status: int) -> None:
    event = one_error(data)
    assert isinstance(event, WireError) and event.status == status, event


CHUNKED_HEAD = b"POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"5\nhello\r\n0\r\n\r\n", id="bare-LF-ends-chunk-size"),
        pytest.param(b"5\r\nhello\n0\r\n\r\n", id="bare-LF-after-chunk-data"),
        pytest.param(b"5\r\nhello\r\n0\n\n", id="bare-LF-ends-last-chunk-and-trailers"),
        pytest.param(b"5\r\nhello\r\n0\n\r\n", id="last-chunk-LF-then-CRLF"),
        pytest.param(b"5 ; a\r\nhello\r\n0\r\n\r\n", id="space-before-extension"),
        pytest.param(b"5;a\nb\r\nhello\r\n0\r\n\r\n", id="bare-LF-in-extension"),
        pytest.param(b"5\t;a\r\nhello\r\n0\r\n\r\n", id="tab-before-extension"),
        pytest.param(b"5\r\nhello\r\n0\r\nx: 1\n\r\n", id="bare-LF-ends-trailer-field"),
        pytest.param(b"5\r\nhello\r\r\n0\r\n\r\n", id="CR-CRLF-after-chunk-data"),
        pytest.param(b"5 \r\nhello\r\n0\r\n\r\n", id="space-after-chunk-size"),
        pytest.param(b"5;\r\nhello\r\n0\r\n\r\n", id="empty-extension"),
        pytest.param(b"0x5\r\nhello\r\n0\r\n\r\n", id="0x-chunk-size"),
        pytest.param(b"0" * 17 + b"5\r\nhello\r\n0\r\n\r\n", id="18-digit-chunk-size"),
        pytest.param(b"5;a=" + b"x" * 2000 + b"\r\nhello\r\n0\r\n\r\n", id="2-KB-extension"),
        # RFC 9110 6.5.1: framing is no trailer's business; h11 checks the value, llhttp refuses
        pytest.param(b"5\r\nhello\r\n0\r\nContent-Length:: 5\r\n\r\n", id="length-trailer"),
        pytest.param(b"5\r\nhello\r\n0\r\ntransfer-encoding: x\r\n\r\n", id="coding-trailer"),
    ],
)
def test_chunked_framing_is_exactly_rfc_9112_7_1_or_400_and_closed(body: bytes) -> None:
    """A chunked body takes CRLF only, 1-16 hex digits and strict extensions (RFC 9112 7.1).

    Each case once let our reader accept what h11 and llhttp both refuse, or see a
    second request in the same bytes: the shape of request smuggling behind a proxy
    that frames otherwise.  Cut anywhere, the answer is one ``400`` and nothing more
    is read: the request hidden after it is never seen.
    """
    data = CHUNKED_HEAD + body + SMUGGLED
    for pieces in ([data], [bytes([b]) for b in data]):
        wire = ServerWire()
        events: list[Any] = []
        for piece in pieces:
            wire.receive_data(piece)
            while (event := wire.next_event()) is not NEED_DATA:
                events.append(event)
                if isinstance(event, WireError):
                    break
        assert isinstance(events[0], RequestHead)
        assert END not in events and PAUSED not in events
        assert isinstance(events[-1], WireError) and events[-1].status == 400, events[-1]
        assert sum(isinstance(e, RequestHead) for e in events) == 1  # never /smuggled
        wire.receive_data(SMUGGLED)
        assert wire.next_event() is NEED_DATA  # the connection reads nothing more
        wire.respond(400, [("connection", "close"), ("content-length", "0")])
        wire.end()
        assert wire.must_close


@pytest.mark.parametrize(
    "body",
    [
        b"5\r\nhello\r\n0\r\n\r\n",
        b"5; a\r\nhello\r\n0\r\n\r\n",  # BWS after ";" and around "=" (RFC 9112 7.1.1)
        b"5;a = b\r\nhello\r\n0\r\n\r\n",
        b'5;a="x;\\"y";b\r\nhello\r\n0;last\r\n\r\n',
        b"0000000000000005\r\nhello\r\n000\r\nx-t: 1\r\ny-t:\r\n\r\n",
    ],
)
def test_valid_chunked_framing_is_read(body: bytes) -> None:
    wire = ServerWire()
    wire.receive_data(CHUNKED_HEAD + body)
    events = []
    while (event := wire.next_event()) is not PAUSED:
        assert event is not None and not isinstance(event, WireError), event
        events.append(event)
    assert b"".join(e for e in events if isinstance(e, bytes)) == b"hello"


def test_a_request_line_over_the_bound_is_414_and_a_head_431() -> None:
    """RFC 9112 3: a request-target longer than the server parses MUST get 414."""
    line = b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    for data in (line, line[:66000]):
        event = one_error(data)
        assert isinstance(event, WireError) and event.status == 414, event
    event = one_error(b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 70000 + b"\r\n\r\n")
    assert isinstance(event, WireError) and event.status == 431, event


@pytest.mark.parametrize(
    "data",
    [
        b"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\n\nOST / HTTP/1.1\r\nHost: x\r\n\r\n",  # h11 refuses the LF, llhttp the method
        b"\r\rGET / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"\r\n" * 40_000,  # bounded: no waiting for a request line forever
    ],
)
def test_an_empty_line_before_a_request_line_is_400_however_cut(data: bytes) -> None:
    """RFC 9112 2.2 lets a server skip it; h11 refuses it, and so do we: skipping it read
    requests that h11 refused for it and llhttp for another reason (differential test)."""
    first = b"GET /first HTTP/1.1\r\nHost: x\r\n\r\n"
    for prefix in (b"", first):
        whole = read_with_wire([prefix + data, b""])
        bytewise = read_with_wire([bytes([b]) for b in prefix + data])
        assert whole == bytewise
        mine, (error,) = whole
        assert len(mine) == len(prefix) // len(first)
        assert isinstance(error, WireError) and error.status == 400, error


def test_after_an_error_nothing_more_is_read_and_the_connection_closes() -> None:
    wire = ServerWire()
    wire.receive_data(b"POST /mcp HTTP/9.9\r\n\r\nPOST /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
    assert isinstance(wire.next_event(), WireError)
    assert wire.next_event() is NEED_DATA and wire.can_respond
    head = wire.respond(505, [("connection", "close"), ("content-length", "0")])
    assert head.startswith(b"HTTP/1.1 505 HTTP Version Not Supported\r\n")
    assert wire.end() == b"" and wire.must_close


def test_end_of_input_inside_a_head_or_a_body_is_an_error_between_requests_is_not() -> None:
    body_cut = b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nab"
    for data in (b"POST /mcp HTT", body_cut):
        wire = ServerWire()
        wire.receive_data(data)
        wire.receive_data(b"")
        events = [wire.next_event() for _ in range(3)]
        assert any(isinstance(e, WireError) and e.status == 400 for e in events), events
    wire = ServerWire()
    wire.receive_data(b"\r\n")
    wire.receive_data(b"")
    assert wire.next_event() is NEED_DATA and wire.eof


def test_a_pipelined_request_waits_for_the_response() -> None:
    wire = ServerWire()
    one = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
    wire.receive_data(one + one.replace(b"/a", b"/b"))
    assert isinstance(head := wire.next_event(), RequestHead) and head.target == "/a"
    assert wire.next_event() == b"hi" and wire.next_event() is END
    assert wire.next_event() is PAUSED and wire.next_event() is PAUSED
    wire.respond(200, [("content-length", "0")])
    assert not wire.between_requests
    wire.end()
    assert wire.between_requests
    assert isinstance(head := wire.next_event(), RequestHead) and head.target == "/b"


def test_an_early_response_reads_and_drops_the_body_then_keeps_the_connection() -> None:
    wire = ServerWire()
    wire.receive_data(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
    assert isinstance(wire.next_event(), RequestHead)
    wire.respond(415, [("content-length", "0")])
    wire.end()
    assert not wire.must_close and not wire.between_requests
    assert wire.next_event() == b"ab"
    wire.receive_data(b"cdGET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert wire.next_event() == b"cd" and wire.next_event() is END
    assert isinstance(wire.next_event(), RequestHead)


def response_through_h11(
    request: bytes, status: int, headers: list[tuple[str, str]], pieces: list[bytes]
) -> tuple[Any, bytes, bool]:
    wire = ServerWire()
    wire.receive_data(request)
    while not isinstance(event := wire.next_event(), RequestHead):
        assert event is not None
    while wire.next_event() is not PAUSED:
        pass
    out = wire.respond(status, headers) + b"".join(wire.body(p) for p in pieces) + wire.end()
    client = h11.Connection(h11.CLIENT)
    method = event.method.encode()
    client.send(h11.Request(method=method, target="/", headers=[("host", "x")]))
    client.send(h11.EndOfMessage())
    client.receive_data(out)
    if wire.must_close:
        client.receive_data(b"")
    head, body = None, b""
    while not isinstance(e := client.next_event(), h11.EndOfMessage):
        assert e is not h11.NEED_DATA, out
        if isinstance(e, h11.Response):
            head = e
        elif isinstance(e, h11.Data):
            body += e.data
    return head, body, wire.must_close


@pytest.mark.parametrize("version", ["1.1", "1.0"])
@pytest.mark.parametrize("length", [True, False])
@pytest.mark.parametrize("method", ["POST", "HEAD"])
def test_responses_read_back_through_h11(version: str, length: bool, method: str) -> None:
    request = f"{method} /mcp HTTP/{version}\r\nHost: x\r\n\r\n".encode()
    pieces = [b"data: 1\n\n", b"", b"data: 2\n\n"]
    headers = [("content-type", "text/event-stream")]
    if length:
        headers.append(("content-length", str(sum(map(len, pieces)))))
    head, body, closes = response_through_h11(request, 200, headers, pieces)
    assert head is not None and head.status_code == 200 and head.reason == b"OK"
    assert body == (b"" if method == "HEAD" else b"".join(pieces))
    assert closes == (version == "1.0")  # HTTP/1.0: one exchange per connection


def test_connection_close_from_the_client_is_honoured() -> None:
    request = b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n"
    head, _, closes = response_through_h11(request, 204, [], [])
    assert closes and (b"connection", b"close") in head.headers


def test_header_injection_and_out_of_order_writes_are_refused() -> None:
    wire = ServerWire()
    wire.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    wire.next_event()
    with pytest.raises(LocalProtocolError, match="no response"):
        wire.body(b"x")
    with pytest.raises(LocalProtocolError, match="CR, LF"):
        wire.respond(200, [("x-a", "1\r\nSet-Cookie: evil")])
    wire.respond(200, [("content-length", "0")])
    with pytest.raises(LocalProtocolError, match="already"):
        wire.respond(200, [])
    wire.end()
    with pytest.raises(LocalProtocolError, match="no response"):
        wire.end()


def test_pipelined_bytes_past_the_bound_are_dropped_and_the_connection_closes() -> None:
    wire = ServerWire(max_head=1000)
    wire.receive_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert isinstance(wire.next_event(), RequestHead) and wire.next_event() is END
    wire.receive_data(b"GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")  # a pipelined request: kept
    for _ in range(100):  # then a flood while the response is pending: bounded
        wire.receive_data(b"x" * 100)
    assert len(wire._buf) <= 1000
    wire.respond(200, [("content-length", "0")])
    assert wire.end() == b"" and wire.must_close


@pytest.mark.parametrize("status", [204, 304])
def test_no_content_statuses_carry_no_body_even_when_given_one(status: int) -> None:
    wire = ServerWire()
    wire.receive_data(b"POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n")
    assert isinstance(wire.next_event(), RequestHead) and wire.next_event() is END
    head = wire.respond(status, [])
    assert b"transfer-encoding" not in head and wire.body(b"stray") == b"" and wire.end() == b""
    assert not wire.must_close and wire.between_requests


def test_wire_markers_are_distinct_values_that_print_their_name() -> None:
    assert (repr(END), repr(PAUSED)) == ("END", "PAUSED")
    assert END is not PAUSED and type(END) is not type
