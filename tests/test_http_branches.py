"""Branches of the HTTP binding that the rest of the suite left untaken.

Each test drives one of them through the public API (``mcp_proto.http``, its
``wire`` module and the sans-I/O connections, fed bytes in memory) and asserts
the answer the spec or the RFC gives: ``WWW-Authenticate`` parsing that finds
nothing, interim ``1xx`` responses, SSE events that are not ``message``, a
response closed after its request was retired, ``Accept`` values long or with
parameters, a ``Mcp-Name`` whose body value is not a string, a request head
given as bytes, a refusal after the answer, a listen refused ``406`` whose
client went away, a broken body after an early answer, a trailer section
over the head bound, and peers that are not IP addresses.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.http import (
    AuthenticationRequired,
    Headers,
    HTTPClient,
    HTTPClientConnection,
    HTTPPost,
    HTTPServerConnection,
    Reply,
    RequestLost,
    SSEParser,
    parse_www_authenticate,
    sse_event,
    sse_message,
    tool_header_problem,
)
from mcp_proto.http.wire import NEED_DATA, ServerWire, WireError

from ._http_helpers import SQL_TOOL, body, headers, make_server, parts_of, post, reply_of

# -- helpers ----------------------------------------------------------------------------------


def drain(source: Any) -> list[Any]:
    out = []
    while (event := source.next_event()) is not m.NEED_DATA:
        out.append(event)
    return out


def tools_call(client: HTTPClient) -> m.Request:
    params = t.CallToolRequestParams(name="execute_sql", arguments={"region": "eu", "query": "q"})
    return m.Request(id=client.connection.next_id(), method="tools/call", params=params)


def result(id: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": {"content": []}})


def http_request(
    data: bytes, hdrs: list[tuple[str, str]], *, target: str = "/mcp", length: bool = True
) -> bytes:
    head = f"POST {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs)
    if length:
        head += f"content-length: {len(data)}\r\n"
    return (head + "\r\n").encode("latin-1") + data


def call_request() -> tuple[bytes, list[tuple[str, str]]]:
    params = {"name": "execute_sql", "arguments": {"region": "us", "query": "q"}}
    return body("tools/call", params), headers("tools/call", "execute_sql", mcp_param_region="us")


def with_accept(hdrs: list[tuple[str, str]], accept: str) -> list[tuple[str, str]]:
    return [*((k, v) for k, v in hdrs if k != "accept"), ("accept", accept)]


# -- _auth: parse_www_authenticate --------------------------------------------------------------


@pytest.mark.parametrize("value", ["   ", '"Bearer"', "=realm", ", ,", '\t"x", Bearer realm="y"'])
def test_auth_www_authenticate_that_starts_unreadable_has_no_challenge(value: str) -> None:
    """RFC 9110 11.6.1: a challenge starts with an auth-scheme token; without one nothing
    can be read, so the parse ends with no challenge (never a guessed one)."""
    assert parse_www_authenticate(value) == []


def test_auth_401_with_an_unreadable_challenge_still_requires_authentication() -> None:
    """AUTH: a 401 ends the request with AuthenticationRequired even when its
    WWW-Authenticate cannot be read; there is then no Bearer challenge to follow."""
    client = HTTPClient()
    request = tools_call(client)
    ex = client.response(client.send(request), 401, [("www-authenticate", '"???"')])
    (event,) = drain(ex)
    assert isinstance(event, AuthenticationRequired)
    assert (event.id, event.status, event.challenges, event.bearer) == (request.id, 401, (), None)
    assert ex.complete and client.connection.in_flight() == ()


# -- _client: HTTPClient and ClientExchange ------------------------------------------------


def test_tools_call_without_its_params_type_is_refused_by_the_connection() -> None:
    """A ``tools/call`` whose params carry no ``name`` gets no ``Mcp-Name`` (nothing to
    mirror, HTTP-20) and is refused as the stream connection refuses it, not crashed on."""
    client = HTTPClient()
    client.tools["execute_sql"] = SQL_TOOL
    request = m.Request(id=1, method="tools/call", params=t.RequestParams())
    with pytest.raises(m.LocalProtocolError, match="tools/call takes CallToolRequestParams"):
        client.send(request)
    assert client.connection.in_flight() == ()


def test_http_sse_3_end_of_stream_after_the_response_loses_nothing() -> None:
    """HTTP-13/HTTP-SSE-3: the final response ends the request; the stream ending (or the
    connection breaking) after it is no lost request."""
    client = HTTPClient()
    request = tools_call(client)
    ex = client.response(client.send(request), 200, [("content-type", "text/event-stream")])
    ex.receive_data(sse_message(result(request.id)))
    ex.receive_data(b"")
    ex.connection_lost("reset by peer")
    events = drain(ex)
    assert [type(e) for e in events] == [m.Result]
    assert events[0].id == request.id and ex.complete


def test_http_sse_4_other_event_types_and_frames_after_the_response_are_ignored() -> None:
    """HTTP-SSE-4: only ``message`` events carry JSON-RPC (others are ignored); edge 108:
    a message after the final response, even in the same read, is ignored."""
    client = HTTPClient()
    request = tools_call(client)
    ex = client.response(client.send(request), 200, [("content-type", "text/event-stream")])
    late = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
    other = {"jsonrpc": "2.0", "id": request.id, "result": {"content": [], "isError": True}}
    ex.receive_data(
        sse_event(orjson.dumps(other).decode(), event="ping")  # not a message: ignored
        + sse_message(result(request.id))
        + sse_message(late)
    )
    events = drain(ex)
    assert [type(e) for e in events] == [m.Result] and events[0].id == request.id
    assert not events[0].result.is_error  # the answer is the message event's, not the ping's
    assert ex.complete
    ex.receive_data(b"")
    assert drain(ex) == []


def test_http_sse_5_closing_a_response_whose_request_was_retired_does_not_cancel_twice() -> None:
    """HTTP-SSE-5: closing the response cancels the request; if the application retired the
    id on the connection already, close still ends the exchange with RequestLost and cancels
    nothing more (a second cancel of the id would be refused, CANCEL-08)."""
    client = HTTPClient()
    request = tools_call(client)
    ex = client.response(client.send(request), 200, [("content-type", "text/event-stream")])
    client.connection.cancel(request.id)
    assert client.connection.in_flight() == ()
    lost = ex.close()
    assert lost == RequestLost(id=request.id, request=request, reason="cancelled by the client")
    assert ex.complete and ex.close() is None


def test_http10_a_notification_post_whose_connection_breaks_loses_no_request() -> None:
    """HTTP-10: a notification has no response, so a connection broken before its ``202``
    leaves nothing to re-issue (HTTP-SSE-3 is about requests): no RequestLost, no event."""
    client = HTTPClient(m.ClientConnection(extensions=[]))
    post = HTTPPost(target="/mcp", headers=(), body=b"{}")
    ex = client.response(post, 0, ())
    ex.connection_lost("reset by peer")
    assert drain(ex) == [] and not ex.must_close
    with pytest.raises(RuntimeError, match="after the end"):
        ex.receive_data(b"x")


# -- _client_connection: HTTPClientConnection ------------------------------------------------


@pytest.mark.parametrize(
    "interim",
    [b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n"],
)
def test_rfc9110_interim_1xx_responses_are_skipped(interim: bytes) -> None:
    """RFC 9110 15.2: a client MUST be able to parse 1xx responses before the final one;
    they carry no MCP message, and the final 200 is read as usual (HTTP-11)."""
    conn = HTTPClientConnection(HTTPClient())
    request = tools_call(conn.client)
    conn.send(request)
    payload = result(request.id)
    final = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        + b"content-length: %d\r\n\r\n" % len(payload)
        + payload
    )
    conn.receive_data(interim + final)
    events = drain(conn)
    assert [type(e) for e in events] == [m.Result] and events[0].id == request.id
    assert not conn.busy and conn.exchange is not None and conn.exchange.status == 200


def test_http_sse_5_closing_before_the_head_after_the_id_was_retired() -> None:
    """HTTP-SSE-5: closing the connection before the response head cancels the request;
    an id the application already retired is not cancelled again, and is still lost."""
    conn = HTTPClientConnection(HTTPClient())
    request = tools_call(conn.client)
    conn.send(request)
    conn.client.connection.cancel(request.id)
    lost = conn.close()
    assert lost == RequestLost(id=request.id, request=request, reason="cancelled")
    assert conn.client.connection.in_flight() == () and not conn.busy
    with pytest.raises(m.LocalProtocolError, match="closed"):
        conn.send(tools_call(conn.client))


# -- _headers --------------------------------------------------------------------------------


def test_headers_lowercase_builds_its_own_index() -> None:
    """HTTP-22: the names are matched case-insensitively; repeated fields keep their order."""
    items = [("accept", "application/json"), ("x-a", " 1 "), ("x-a", "2")]
    h = Headers.lowercase(items)
    assert list(h) == items and len(h) == 3
    assert h.get_all("X-A") == ["1", "2"]
    assert h.get("x-a") == "1, 2"  # RFC 9110 5.3: one list, in order
    assert h.get("Accept") == "application/json" and h.get("missing") is None


def test_http27_tool_header_problem_is_none_for_a_usable_tool() -> None:
    """HTTP-23..27: valid ``x-mcp-header`` annotations (or none) are no reason to drop a tool."""
    assert tool_header_problem(SQL_TOOL) is None
    assert tool_header_problem({"name": "t", "inputSchema": {"type": "object"}}) is None
    bad = {"type": "object", "properties": {"q": {"type": "object", "x-mcp-header": "Q"}}}
    assert tool_header_problem({"name": "t", "inputSchema": bad}) is not None


# -- _server: HTTPServer and ServerExchange ------------------------------------------------


def test_http05_request_head_given_as_bytes_reads_as_text() -> None:
    """HTTP-05: a host may pass the method and target as they came off the wire (bytes)."""
    data, hdrs = call_request()
    server = make_server()
    ex = server.exchange(b"POST", b"/mcp", hdrs)
    assert (ex.method, ex.target) == ("POST", "/mcp")
    ex.receive_body(data)
    ex.end_of_body()
    event = ex.next_event()
    assert isinstance(event, m.Request) and event.method == "tools/call"
    other = server.exchange(b"GET", b"/mcp", hdrs)  # HTTP-44: only POST at the endpoint
    status, reply_headers, _ = reply_of(other, other.next_event())
    assert (status, reply_headers["allow"]) == (405, "POST")


def test_refuse_after_the_answer_changes_nothing() -> None:
    """An exchange answered from its head (404, unknown path) keeps that answer; a later
    ``refuse`` from the host is ignored, as the body is no longer wanted."""
    data, hdrs = call_request()
    ex = make_server().exchange("POST", "/elsewhere", hdrs)
    assert not ex.wants_body
    ex.refuse(Reply(status=503))
    status, _, _ = reply_of(ex, ex.next_event())
    assert status == 404
    data, hdrs = call_request()
    ex = make_server().handle("POST", "/mcp", hdrs, data)
    request = ex.next_event()
    assert isinstance(request, m.Request)
    ex.refuse(Reply(status=503))  # the application owns the request now
    assert ex.next_event() is m.NEED_DATA
    answer = m.Result(id=request.id, result=t.CallToolResult(content=[]))
    assert parts_of(ex, answer)[0] == 200


# -- _validate: Accept and Mcp-Name ------------------------------------------------------------


def test_http06_long_accept_is_read_like_a_short_one() -> None:
    """HTTP-06: an Accept value of any length is read the same way (long ones uncached)."""
    padding = ", ".join(f"application/x-pad{i}" for i in range(40))
    data, hdrs = call_request()
    long_ok = with_accept(hdrs, f"{padding}, application/json, text/event-stream")
    assert len(dict(long_ok)["accept"]) > 256
    _, event = post(make_server(), data, long_ok)
    assert isinstance(event, m.Request)
    long_no = with_accept(hdrs, f"{padding}, text/html")
    ex, event = post(make_server(), data, long_no)
    assert reply_of(ex, event)[0] == 406


def test_http06_accept_parameters_other_than_q_do_not_weigh() -> None:
    """RFC 9110 12.5.1: only ``q`` is a weight; ``level=0`` or ``charset`` is a media-type
    parameter and does not refuse the type, while ``q=0`` does."""
    data, hdrs = call_request()
    accept = "application/json;level=0;charset=utf-8, text/event-stream;x=0"
    _, event = post(make_server(), data, with_accept(hdrs, accept))
    assert isinstance(event, m.Request)
    ex, event = post(
        make_server(), data, with_accept(hdrs, "application/json;q=0, text/event-stream; Q=0")
    )
    assert reply_of(ex, event)[0] == 406


@pytest.mark.parametrize("name", [42, ["execute_sql"], {"n": 1}])
def test_http39_mcp_name_against_a_body_name_that_is_not_a_string(name: Any) -> None:
    """HTTP-35/39: a body whose ``name`` is not a string is the body's own fault: the core
    answers ``-32602`` (400), not a header mismatch (``-32020``)."""
    data = body("tools/call", {"name": name, "arguments": {}})
    ex, event = post(make_server(), data, headers("tools/call", "execute_sql"))
    status, _, message = reply_of(ex, event)
    assert status == 400
    assert message["error"]["code"] == m.INVALID_PARAMS and message["id"] == 1
    assert "/params/name" in message["error"]["message"]


# -- _server_connection: HTTPServerConnection ------------------------------------------------


def test_http14_listen_refused_406_then_the_client_goes_away() -> None:
    """HTTP-14: a listen needs an event stream; without ``text/event-stream`` in Accept it
    is refused ``406`` and never reaches the application, so the client closing before the
    reply is written is no Cancelled for it (HTTP-SSE-5): the reply, then ConnectionClosed."""
    conn = HTTPServerConnection(make_server())
    data = body("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    hdrs = with_accept(headers("subscriptions/listen"), "application/json")
    conn.receive_data(http_request(data, hdrs))
    conn.receive_data(b"")
    events = drain_until_closed(conn)
    assert [type(e) for e in events] == [Reply, m.ConnectionClosed]
    assert events[0].status == 406


def drain_until_closed(conn: HTTPServerConnection) -> list[Any]:
    out: list[Any] = []
    for _ in range(10):
        event = conn.next_event()
        if event is m.NEED_DATA:
            break
        out.append(event)
        if isinstance(event, m.ConnectionClosed):
            break
    return out


def test_rfc9112_broken_body_after_an_early_answer_closes_without_a_second_response() -> None:
    """RFC 9112 7.1/9.6: a request answered from its head (404) still has its chunked body
    read and dropped; if that body cannot be read the connection closes, as one response
    was written already and a second (400) cannot follow it."""
    conn = HTTPServerConnection(make_server())
    hdrs = [*headers("tools/call"), ("transfer-encoding", "chunked")]
    conn.receive_data(http_request(b"", hdrs, target="/nope", length=False))
    reply = conn.next_event()
    assert isinstance(reply, Reply) and reply.status == 404
    written = conn.send(reply)
    assert written.startswith(b"HTTP/1.1 404 ")
    conn.receive_data(b"zz\r\n")  # not a chunk size
    assert isinstance(conn.next_event(), m.ConnectionClosed)
    assert isinstance(conn.next_event(), m.ConnectionClosed)  # and it stays closed


def test_rfc6585_trailer_section_over_the_head_bound_is_431() -> None:
    """RFC 9112 7.1.2 / RFC 6585 5: trailers are bounded like a head; past the bound the
    request is answered ``431`` and the connection closed."""
    conn = HTTPServerConnection(make_server(), max_incomplete_event_size=512)
    data, hdrs = call_request()
    chunked = b"%x\r\n%s\r\n0\r\n" % (len(data), data)
    trailers = b"".join(b"x-t%d: %s\r\n" % (i, b"v" * 40) for i in range(20))
    conn.receive_data(
        http_request(b"", [*hdrs, ("transfer-encoding", "chunked")], length=False)
        + chunked
        + trailers
    )
    reply = conn.next_event()
    assert isinstance(reply, Reply) and reply.status == 431
    assert ("connection", "close") in reply.headers
    assert conn.send(reply).startswith(b"HTTP/1.1 431 ")
    assert conn.must_close and isinstance(conn.next_event(), m.ConnectionClosed)


def test_wire_trailer_bound_counts_every_trailer_line() -> None:
    """The same bound straight on the wire: the trailer lines together, not one by one."""
    wire = ServerWire(max_head=100)
    wire.receive_data(
        b"POST /mcp HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n"
        + b"a: %s\r\nb: %s\r\n" % (b"1" * 40, b"2" * 40)
    )
    events = [wire.next_event() for _ in range(3)]
    assert events[1:] == [b"x", NEED_DATA]  # two lines of 45 bytes: within 100
    wire.receive_data(b"c: " + b"3" * 40 + b"\r\n")  # a third passes it
    error = wire.next_event()
    assert isinstance(error, WireError) and error.status == 431
    assert wire.next_event() is NEED_DATA


# -- _sse ------------------------------------------------------------------------------------


def test_http_sse_4_data_lines_are_bounded_together() -> None:
    """HTTP-SSE-4: the ``data`` lines of one event are joined; the bound is on the whole
    event, so lines that each fit but together pass it are refused."""
    parser = SSEParser(20)
    assert parser.feed(b"data: 0123456789\n") == []
    with pytest.raises(m.RemoteProtocolError, match="event data longer than 20 bytes"):
        parser.feed(b"data: 0123456789\n")
    ok = SSEParser(40)
    (event,) = ok.feed(b"data: 0123456789\ndata: 0123456789\n\n")
    assert event.data == "0123456789\n0123456789" and event.event == "message"


# -- limits: client_key ------------------------------------------------------------------------


def test_peer_that_is_not_an_ip_address_is_its_own_client() -> None:
    """A peer that is no IP address (a Unix socket path, a pipe name) is keyed as given, so
    per-client budgets still tell such peers apart."""
    conn = HTTPServerConnection(make_server())
    assert conn.client("/run/mcp.sock") == ("peer", "/run/mcp.sock")
    assert conn.client("/run/mcp.sock") == conn.client("/run/mcp.sock")
    assert conn.client("/run/mcp.sock") != conn.client("/run/other.sock")
    assert conn.client("") == ("peer", "")
    assert conn.client("10.0.0.1") == ("peer", "10.0.0.1")
